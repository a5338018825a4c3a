#include "geolake/core/stop.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using namespace std::chrono_literals;

bool WaitForStop(const StopController& controller, std::chrono::milliseconds limit = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!controller.stop_requested()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(StopControllerTest, RaiseSigtermStopsAndRecordsTheSignal) {
  StopOptions options;
  options.exit_on_second_signal = false;
  ASSERT_OK_AND_ASSIGN(auto controller, StopController::Make(options));
  std::stop_token token = controller->token();
  EXPECT_FALSE(token.stop_requested());
  EXPECT_EQ(controller->reason(), StopReason::kNone);
  EXPECT_OK(controller->StopStatus());
  EXPECT_EQ(controller->SignalExitCode(), 0);

  ASSERT_EQ(::raise(SIGTERM), 0);
  ASSERT_TRUE(WaitForStop(*controller));
  EXPECT_TRUE(token.stop_requested());
  EXPECT_EQ(controller->reason(), StopReason::kSignal);
  EXPECT_EQ(controller->signal_number(), SIGTERM);
  EXPECT_EQ(controller->SignalExitCode(), 143);
  EXPECT_THAT(controller->StopStatus(), IsErrorWith(ErrorCode::kCancelled, "SIGTERM"));

  // A second signal is counted but, with exit_on_second_signal off, changes nothing.
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(controller->signal_count(), 2);
  EXPECT_EQ(controller->signal_number(), SIGTERM);
}

TEST(StopControllerTest, SigintFromAnotherThreadGives130) {
  StopOptions options;
  options.exit_on_second_signal = false;
  ASSERT_OK_AND_ASSIGN(auto controller, StopController::Make(options));
  std::thread([] { ::kill(::getpid(), SIGINT); }).join();
  ASSERT_TRUE(WaitForStop(*controller));
  EXPECT_EQ(controller->signal_number(), SIGINT);
  EXPECT_EQ(controller->SignalExitCode(), 130);
  EXPECT_THAT(controller->StopStatus(), IsErrorWith(ErrorCode::kCancelled, "SIGINT"));
}

TEST(StopControllerTest, DestructorRestoresPreviousHandlers) {
  struct sigaction before;
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &before), 0);
  {
    ASSERT_OK_AND_ASSIGN(auto controller, StopController::Make());
    struct sigaction during;
    ASSERT_EQ(::sigaction(SIGTERM, nullptr, &during), 0);
    EXPECT_NE(during.sa_handler, before.sa_handler);
  }
  struct sigaction after;
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(StopControllerTest, OnlyOneControllerHandlesSignals) {
  ASSERT_OK_AND_ASSIGN(auto first, StopController::Make());
  EXPECT_THAT(StopController::Make(), IsErrorWith(ErrorCode::kAlreadyExists, "signals"));
  StopOptions no_signals;
  no_signals.handle_signals = false;
  ASSERT_OK_AND_ASSIGN(auto second, StopController::Make(no_signals));
  EXPECT_EQ(second->signal_count(), 0);
  first.reset();
  ASSERT_OK_AND_ASSIGN(auto third, StopController::Make());  // free again
}

TEST(StopControllerTest, DeadlineStops) {
  StopOptions options;
  options.handle_signals = false;
  options.timeout = 30ms;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(auto controller, StopController::Make(options));
  ASSERT_TRUE(WaitForStop(*controller));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  EXPECT_EQ(controller->reason(), StopReason::kDeadline);
  EXPECT_EQ(controller->SignalExitCode(), 0);
  EXPECT_THAT(controller->StopStatus(), IsErrorWith(ErrorCode::kCancelled, "deadline of 30ms"));
}

TEST(StopControllerTest, RequestStopAndFirstReasonWins) {
  StopOptions options;
  options.handle_signals = false;
  // The deadline is far enough away that the request surely comes first, even on a loaded
  // machine (with 10 ms, a scheduler pause between Make and RequestStop let the deadline win).
  options.timeout = 250ms;
  ASSERT_OK_AND_ASSIGN(auto controller, StopController::Make(options));
  controller->RequestStop();
  EXPECT_TRUE(controller->stop_requested());
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(controller->reason(), StopReason::kRequested);  // the deadline came second
  EXPECT_THAT(controller->StopStatus(), IsErrorWith(ErrorCode::kCancelled, "requested"));
}

TEST(StopControllerTest, RejectsNegativeTimeout) {
  StopOptions options;
  options.handle_signals = false;
  options.timeout = std::chrono::milliseconds(-1);
  EXPECT_THAT(StopController::Make(options), IsError(ErrorCode::kInvalidArgument));
}

// Threads of this process, as the kernel lists them.
int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

// A controller with nothing to watch (no signals, no deadline) starts no thread: a library
// that embeds geolake gets no service thread it did not ask for.
TEST(StopControllerTest, NoWatcherThreadWithoutSignalsOrDeadline) {
  const int before = ThreadCount();
  StopOptions options;
  options.handle_signals = false;
  ASSERT_OK_AND_ASSIGN(auto controller, StopController::Make(options));
  EXPECT_EQ(ThreadCount(), before);
  controller->RequestStop();
  EXPECT_TRUE(controller->stop_requested());
  EXPECT_THAT(controller->StopStatus(), IsErrorWith(ErrorCode::kCancelled, "stop requested"));
  // With a deadline there is one.
  options.timeout = 10s;
  ASSERT_OK_AND_ASSIGN(auto timed, StopController::Make(options));
  EXPECT_EQ(ThreadCount(), before + 1);
}

TEST(StopControllerDeathTest, SecondSigintExitsImmediatelyWith130) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto controller = StopController::Make();
        if (!controller.ok()) std::_Exit(1);
        ::raise(SIGINT);
        ::raise(SIGINT);
        std::this_thread::sleep_for(5s);
        std::_Exit(2);
      },
      ::testing::ExitedWithCode(130), "");
}

}  // namespace
}  // namespace geolake
