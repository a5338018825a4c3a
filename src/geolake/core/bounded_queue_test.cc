#include "geolake/core/bounded_queue.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <thread>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using namespace std::chrono_literals;

// Wait until `pred` holds or 5 s pass; returns pred().
template <typename Pred>
bool Eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(BoundedQueueTest, FifoAndByteAccounting) {
  BoundedQueue<int> queue(100);
  ASSERT_OK(queue.Push(1, 10));
  ASSERT_OK(queue.Push(2, 30));
  EXPECT_EQ(queue.bytes(), 40);
  EXPECT_EQ(queue.size(), 2u);
  ASSERT_OK_AND_ASSIGN(std::optional<int> item, queue.Pop());
  EXPECT_EQ(item, 1);
  EXPECT_EQ(queue.bytes(), 30);
  EXPECT_EQ(queue.peak_bytes(), 40);
  queue.Close();
  ASSERT_OK_AND_ASSIGN(item, queue.Pop());
  EXPECT_EQ(item, 2);
  ASSERT_OK_AND_ASSIGN(item, queue.Pop());
  EXPECT_FALSE(item.has_value());
  ASSERT_OK_AND_ASSIGN(item, queue.Pop());  // the end stays the end
  EXPECT_FALSE(item.has_value());
  EXPECT_TRUE(queue.closed());
}

TEST(BoundedQueueTest, MoveOnlyItems) {
  BoundedQueue<std::unique_ptr<int>> queue(8);
  ASSERT_OK(queue.Push(std::make_unique<int>(7), 4));
  ASSERT_OK_AND_ASSIGN(std::optional<std::unique_ptr<int>> item, queue.Pop());
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(**item, 7);
}

TEST(BoundedQueueTest, PushBlocksUntilBytesAreFreed) {
  BoundedQueue<int> queue(100);
  ASSERT_OK(queue.Push(1, 60));
  std::atomic<bool> pushed{false};
  std::jthread producer([&] {
    EXPECT_OK(queue.Push(2, 50));
    pushed = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(pushed.load());  // 60 + 50 > 100
  ASSERT_OK_AND_ASSIGN(std::optional<int> item, queue.Pop());
  EXPECT_EQ(item, 1);
  EXPECT_TRUE(Eventually([&] { return pushed.load(); }));
  EXPECT_EQ(queue.peak_bytes(), 60);
}

TEST(BoundedQueueTest, OversizeItemPassesWhenEmpty) {
  BoundedQueue<int> queue(100);
  ASSERT_OK(queue.Push(1, 1000));  // empty queue: admitted although 1000 > 100
  EXPECT_EQ(queue.bytes(), 1000);
  std::atomic<bool> pushed{false};
  std::jthread producer([&] {
    EXPECT_OK(queue.Push(2, 1));    // even a tiny item waits while the queue is over capacity
    EXPECT_OK(queue.Push(3, 500));  // oversize again: waits for the queue to empty
    pushed = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(queue.size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::optional<int> item, queue.Pop());
  EXPECT_EQ(item, 1);
  ASSERT_OK_AND_ASSIGN(item, queue.Pop());
  EXPECT_EQ(item, 2);
  ASSERT_OK_AND_ASSIGN(item, queue.Pop());
  EXPECT_EQ(item, 3);
  EXPECT_TRUE(Eventually([&] { return pushed.load(); }));
  EXPECT_EQ(queue.peak_bytes(), 1000);
}

TEST(BoundedQueueTest, StopTokenUnblocksProducerPromptly) {
  BoundedQueue<int> queue(10);
  ASSERT_OK(queue.Push(1, 10));
  std::stop_source stop;
  Status result;
  std::jthread producer([&] { result = queue.Push(2, 5, stop.get_token()); });
  std::this_thread::sleep_for(20ms);
  const auto start = std::chrono::steady_clock::now();
  stop.request_stop();
  producer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_THAT(result, IsError(ErrorCode::kCancelled));
  EXPECT_EQ(queue.size(), 1u);  // the cancelled item was not queued
  EXPECT_EQ(queue.bytes(), 10);
}

TEST(BoundedQueueTest, StopTokenUnblocksConsumerPromptly) {
  BoundedQueue<int> queue(10);
  std::stop_source stop;
  Status result;
  std::jthread consumer([&] { result = queue.Pop(stop.get_token()).status(); });
  std::this_thread::sleep_for(20ms);
  stop.request_stop();
  consumer.join();
  EXPECT_THAT(result, IsErrorWith(ErrorCode::kCancelled, "pop"));
}

TEST(BoundedQueueTest, AlreadyRequestedStopFailsWithoutBlocking) {
  BoundedQueue<int> queue(10);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_THAT(queue.Pop(stop.get_token()), IsError(ErrorCode::kCancelled));
  ASSERT_OK(queue.Push(1, 10));
  EXPECT_THAT(queue.Push(2, 1, stop.get_token()), IsError(ErrorCode::kCancelled));
}

TEST(BoundedQueueTest, CancelUnblocksEveryoneAndDropsItems) {
  BoundedQueue<int> queue(10);
  ASSERT_OK(queue.Push(1, 10));
  std::vector<Status> producer_results(3);
  {
    std::vector<std::jthread> producers;
    producers.reserve(8);
    for (int i = 0; i < 3; ++i) {
      producers.emplace_back([&, i] { producer_results[i] = queue.Push(i, 5); });
    }
    std::this_thread::sleep_for(20ms);
    queue.Cancel();
  }
  for (const Status& st : producer_results) EXPECT_THAT(st, IsError(ErrorCode::kCancelled));
  EXPECT_EQ(queue.bytes(), 0);
  EXPECT_THAT(queue.Pop(), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(queue.Push(9, 1), IsError(ErrorCode::kCancelled));

  BoundedQueue<int> empty(10);
  Status consumer_result;
  std::jthread consumer([&] { consumer_result = empty.Pop().status(); });
  std::this_thread::sleep_for(20ms);
  empty.Cancel();
  consumer.join();
  EXPECT_THAT(consumer_result, IsError(ErrorCode::kCancelled));
}

TEST(BoundedQueueTest, CloseWakesBlockedConsumers) {
  BoundedQueue<int> queue(10);
  std::atomic<int> ends{0};
  {
    std::vector<std::jthread> consumers;
    consumers.reserve(8);
    for (int i = 0; i < 3; ++i) {
      consumers.emplace_back([&] {
        Result<std::optional<int>> r = queue.Pop();
        if (r.ok() && !r->has_value()) ++ends;
      });
    }
    std::this_thread::sleep_for(20ms);
    queue.Close();
  }
  EXPECT_EQ(ends.load(), 3);
}

TEST(BoundedQueueTest, RejectsNegativeCostAndPushAfterClose) {
  BoundedQueue<int> queue(10);
  EXPECT_THAT(queue.Push(1, -1), IsErrorWith(ErrorCode::kInvalidArgument, "negative"));
  queue.Close();
  EXPECT_THAT(queue.Push(1, 1), IsErrorWith(ErrorCode::kInvalidArgument, "after close"));
}

// 4 producers x 4 consumers move 100k items through a small queue: each item arrives exactly
// once and the queue never holds more than its capacity.
TEST(BoundedQueueTest, ContentionDeliversEveryItemExactlyOnce) {
  constexpr int kProducers = 4;
  constexpr int kConsumers = 4;
  constexpr int kItems = 100'000;
  constexpr std::int64_t kCapacity = 4096;
  BoundedQueue<int> queue(kCapacity);
  std::vector<std::atomic<int>> seen(kItems);
  std::atomic<std::int64_t> max_observed{0};
  std::atomic<int> errors{0};
  std::atomic<int> producers_left{kProducers};
  {
    std::vector<std::jthread> threads;
    threads.reserve(8);
    for (int consumer_idx = 0; consumer_idx < kConsumers; ++consumer_idx) {
      threads.emplace_back([&] {
        while (true) {
          Result<std::optional<int>> r = queue.Pop();
          if (!r.ok()) {
            ++errors;
            return;
          }
          if (!r->has_value()) return;
          seen[**r].fetch_add(1);
          std::int64_t now = queue.bytes();
          std::int64_t prev = max_observed.load();
          while (now > prev && !max_observed.compare_exchange_weak(prev, now)) {
          }
        }
      });
    }
    for (int producer_idx = 0; producer_idx < kProducers; ++producer_idx) {
      threads.emplace_back([&, producer_idx] {
        for (int item = producer_idx; item < kItems; item += kProducers) {
          // Costs 1..256 bytes, so many items fit but the queue fills often.
          if (!queue.Push(item, 1 + item % 256).ok()) ++errors;
        }
        if (--producers_left == 0) queue.Close();
      });
    }
  }
  EXPECT_EQ(errors.load(), 0);
  int missing = 0;
  int duplicated = 0;
  for (const std::atomic<int>& count : seen) {
    if (count.load() == 0) ++missing;
    if (count.load() > 1) ++duplicated;
  }
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(duplicated, 0);
  EXPECT_LE(queue.peak_bytes(), kCapacity);
  EXPECT_LE(max_observed.load(), kCapacity);
  EXPECT_GT(queue.peak_bytes(), kCapacity / 2);  // the queue really filled up
  EXPECT_EQ(queue.bytes(), 0);
}

}  // namespace
}  // namespace geolake
