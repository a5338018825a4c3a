#include "geolake/pipeline/memory_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "geolake/testing/testing.h"

namespace geolake::pipeline {
namespace {

using ::geolake::testing::IsError;

TEST(MemoryBudgetTest, TryReserveRefusesWhatDoesNotFitAndNeverGrows) {
  Gauge gauge;
  MemoryBudget budget(100, &gauge);
  EXPECT_TRUE(budget.TryReserve(60));
  EXPECT_FALSE(budget.TryReserve(50));
  EXPECT_TRUE(budget.TryReserve(40));
  EXPECT_EQ(budget.reserved_bytes(), 100);
  budget.Release(100);
  EXPECT_EQ(gauge.value(), 0);
  EXPECT_EQ(gauge.peak(), 100);
  EXPECT_EQ(budget.peak_bytes(), 100);
}

TEST(MemoryBudgetTest, OversizedReservationIsAdmittedOnlyWhenEmpty) {
  MemoryBudget budget(100);
  EXPECT_TRUE(budget.TryReserve(10));
  EXPECT_FALSE(budget.TryReserve(500));
  budget.Release(10);
  EXPECT_TRUE(budget.TryReserve(500));
  EXPECT_EQ(budget.peak_bytes(), 500);
}

TEST(MemoryBudgetTest, ReserveWaitsForReleaseAndStopsOnRequest) {
  MemoryBudget budget(100);
  ASSERT_TRUE(budget.TryReserve(80));
  std::atomic<bool> reserved{false};
  std::thread waiter([&] {
    EXPECT_OK(budget.Reserve(50));
    reserved = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(reserved.load());
  budget.Release(80);
  waiter.join();
  EXPECT_TRUE(reserved.load());

  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.request_stop();
  });
  EXPECT_THAT(budget.Reserve(80, stop.get_token()), IsError(ErrorCode::kCancelled));
  stopper.join();
}

TEST(MemoryBudgetTest, ReservationReleasesOnDestruction) {
  MemoryBudget budget(100);
  {
    ASSERT_TRUE(budget.TryReserve(30));
    Reservation held(&budget, 30);
    Reservation moved = std::move(held);
    EXPECT_EQ(budget.reserved_bytes(), 30);
  }
  EXPECT_EQ(budget.reserved_bytes(), 0);
  EXPECT_GT(DefaultMemoryBudget(), 0);
}

}  // namespace
}  // namespace geolake::pipeline
