#include "geolake/core/thread_pool.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using namespace std::chrono_literals;

std::unique_ptr<ThreadPool> MakePool(int n) {
  Result<std::unique_ptr<ThreadPool>> pool = ThreadPool::Make(n);
  EXPECT_TRUE(pool.ok()) << pool.status().ToString();
  return std::move(pool).value();
}

TEST(ThreadPoolTest, MakeValidatesThreadCount) {
  EXPECT_THAT(ThreadPool::Make(-1), IsErrorWith(ErrorCode::kInvalidArgument, "-1"));
  EXPECT_THAT(ThreadPool::Make(100000), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(0));
  EXPECT_GE(pool->size(), 1);
  EXPECT_EQ(MakePool(3)->size(), 3);
}

TEST(ThreadPoolTest, SubmitRunsOnWorkersAndReturnsStatus) {
  auto pool = MakePool(2);
  std::atomic<bool> on_worker{false};
  ASSERT_OK_AND_ASSIGN(std::future<Status> ok_future, pool->Submit([&] {
    on_worker = pool->OnWorkerThread();
    return Status::OK();
  }));
  ASSERT_OK_AND_ASSIGN(std::future<Status> err_future,
                       pool->Submit([] { return Status::NotFound("no such table 'x'"); }));
  EXPECT_OK(ok_future.get());
  EXPECT_THAT(err_future.get(), IsErrorWith(ErrorCode::kNotFound, "'x'"));
  EXPECT_TRUE(on_worker.load());
  EXPECT_FALSE(pool->OnWorkerThread());
}

TEST(ThreadPoolTest, ExceptionsBecomeInternalErrors) {
  auto pool = MakePool(2);
  ASSERT_OK_AND_ASSIGN(std::future<Status> f1,
                       pool->Submit([]() -> Status { throw std::runtime_error("boom"); }));
  ASSERT_OK_AND_ASSIGN(std::future<Status> f2, pool->Submit([]() -> Status { throw 42; }));
  EXPECT_THAT(f1.get(), IsErrorWith(ErrorCode::kInternal, "boom"));
  EXPECT_THAT(f2.get(), IsErrorWith(ErrorCode::kInternal, "non-standard"));
  // The workers survived.
  ASSERT_OK_AND_ASSIGN(std::future<Status> f3, pool->Submit([] { return Status::OK(); }));
  EXPECT_OK(f3.get());
}

TEST(ThreadPoolTest, DestructorRunsEveryQueuedTask) {
  std::atomic<int> ran{0};
  {
    auto pool = MakePool(2);
    for (int i = 0; i < 1000; ++i) {
      ASSERT_OK(pool->Submit([&] {
                      ++ran;
                      return Status::OK();
                    })
                    .status());
    }
  }
  EXPECT_EQ(ran.load(), 1000);
}

TEST(ThreadPoolTest, SubmitAndSpawnDuringShutdownAreCancelled) {
  auto pool = MakePool(1);
  std::atomic<bool> destroying{false};
  Status submit_status;
  Status group_status;
  ThreadPool* raw = pool.get();  // `pool` itself is null while reset() runs the destructor
  ASSERT_OK(pool->Submit([&, raw] {
                  while (!destroying.load()) std::this_thread::sleep_for(1ms);
                  // The destructor stops accepting work before it joins this worker.
                  std::this_thread::sleep_for(50ms);
                  submit_status = raw->Submit([] { return Status::OK(); }).status();
                  TaskGroup group(raw);
                  group.Spawn([] { return Status::OK(); });
                  group_status = group.Wait();
                  return Status::OK();
                })
                .status());
  destroying = true;
  pool.reset();
  EXPECT_THAT(submit_status, IsErrorWith(ErrorCode::kCancelled, "shutting down"));
  EXPECT_THAT(group_status, IsErrorWith(ErrorCode::kCancelled, "shutting down"));
}

TEST(TaskGroupTest, WaitsForAllAndReturnsOk) {
  auto pool = MakePool(4);
  std::atomic<int> sum{0};
  TaskGroup group(pool.get());
  for (int i = 1; i <= 100; ++i) {
    group.Spawn([&sum, i] {
      sum += i;
      return Status::OK();
    });
  }
  EXPECT_OK(group.Wait());
  EXPECT_EQ(sum.load(), 5050);
}

TEST(TaskGroupTest, FirstErrorWinsAndStopsTheRest) {
  auto pool = MakePool(2);
  std::atomic<int> started{0};
  TaskGroup group(pool.get());
  group.Spawn([] { return Status::CorruptData("bad footer in 'a.parquet'"); });
  // Let the failing task run before the rest are queued behind it.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!group.stop_token().stop_requested() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  for (int i = 0; i < 100; ++i) {
    group.Spawn([&] {
      ++started;
      return Status::IOError("later error");
    });
  }
  EXPECT_THAT(group.Wait(), IsErrorWith(ErrorCode::kCorruptData, "a.parquet"));
  EXPECT_EQ(started.load(), 0);  // the group was stopped before they began
  EXPECT_TRUE(group.stop_token().stop_requested());
}

TEST(TaskGroupTest, RunningTasksSeeTheGroupStop) {
  auto pool = MakePool(2);
  TaskGroup group(pool.get());
  std::stop_token token = group.stop_token();
  std::atomic<bool> saw_stop{false};
  group.Spawn([&] {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!token.stop_requested() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    saw_stop = token.stop_requested();
    return Status::Cancelled("stopped");
  });
  group.Spawn([] {
    std::this_thread::sleep_for(10ms);
    return Status::GeometryError("self-intersection");
  });
  EXPECT_THAT(group.Wait(), IsError(ErrorCode::kGeometryError));
  EXPECT_TRUE(saw_stop.load());
}

TEST(TaskGroupTest, ParentStopCancelsUnstartedTasks) {
  auto pool = MakePool(1);
  std::stop_source parent;
  TaskGroup group(pool.get(), parent.get_token());
  std::atomic<int> ran{0};
  group.Spawn([&] {
    parent.request_stop();
    ++ran;
    return Status::OK();
  });
  for (int i = 0; i < 10; ++i) {
    group.Spawn([&] {
      ++ran;
      return Status::OK();
    });
  }
  EXPECT_THAT(group.Wait(), IsError(ErrorCode::kCancelled));
  EXPECT_EQ(ran.load(), 1);  // one worker: the rest were still queued when the stop came
}

TEST(ParallelForTest, VisitsEveryIndexOnce) {
  auto pool = MakePool(4);
  constexpr std::int64_t kN = 10'007;
  std::vector<std::atomic<int>> hits(kN);
  ASSERT_OK(pool->ParallelFor(kN, [&](std::int64_t i) {
    hits[i].fetch_add(1);
    return Status::OK();
  }));
  for (std::int64_t i = 0; i < kN; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
  EXPECT_OK(pool->ParallelFor(0, [](std::int64_t) { return Status::Internal("never"); }));
}

TEST(ParallelForTest, PropagatesTheFirstErrorAndStopsEarly) {
  auto pool = MakePool(4);
  std::atomic<std::int64_t> visited{0};
  Status st = pool->ParallelFor(1'000'000, [&](std::int64_t i) {
    ++visited;
    if (i == 10) return Status::InvalidArgument("bad row 10");
    return Status::OK();
  });
  EXPECT_THAT(st, IsErrorWith(ErrorCode::kInvalidArgument, "bad row 10"));
  EXPECT_LT(visited.load(), 1'000'000);
}

TEST(ParallelForTest, ExceptionInBodyBecomesInternal) {
  auto pool = MakePool(2);
  Status st = pool->ParallelFor(100, [](std::int64_t i) -> Status {
    if (i == 50) throw std::out_of_range("index 50");
    return Status::OK();
  });
  EXPECT_THAT(st, IsErrorWith(ErrorCode::kInternal, "index 50"));
}

TEST(ParallelForTest, RejectsNegativeCountAndHonoursStop) {
  auto pool = MakePool(2);
  EXPECT_THAT(pool->ParallelFor(-1, [](std::int64_t) { return Status::OK(); }),
              IsError(ErrorCode::kInvalidArgument));
  std::stop_source stop;
  stop.request_stop();
  std::atomic<int> ran{0};
  EXPECT_THAT(pool->ParallelFor(
                  100,
                  [&](std::int64_t) {
                    ++ran;
                    return Status::OK();
                  },
                  stop.get_token()),
              IsError(ErrorCode::kCancelled));
  EXPECT_EQ(ran.load(), 0);
}

TEST(ParallelForTest, NestedParallelForDoesNotDeadlock) {
  auto pool = MakePool(2);  // fewer workers than outer chunks: waiting workers must help
  std::atomic<int> inner_calls{0};
  ASSERT_OK(pool->ParallelFor(16, [&](std::int64_t) {
    return pool->ParallelFor(16, [&](std::int64_t) {
      ++inner_calls;
      return Status::OK();
    });
  }));
  EXPECT_EQ(inner_calls.load(), 256);
}

// A worker waiting for its group runs the group's own tasks, never an unrelated queued one:
// that one may wait for what the waiter is about to do (here: set `released` after the wait).
// Before, the waiter ran the oldest queued job and this never finished (it hung for 5 s, then
// failed the expectations below).
TEST(TaskGroupTest, AWaitingWorkerRunsOnlyItsOwnTasks) {
  auto pool = MakePool(1);
  std::atomic<bool> released{false};
  std::atomic<bool> unrelated_timed_out{false};
  std::atomic<bool> own_ran{false};
  ThreadPool* raw = pool.get();
  auto outer = pool->Submit([&, raw]() -> Status {
    // Queued first, on the only worker's pool: waits for `released`.
    auto unrelated = raw->Submit([&]() -> Status {
      const auto until = std::chrono::steady_clock::now() + 5s;
      while (!released.load()) {
        if (std::chrono::steady_clock::now() > until) {
          unrelated_timed_out = true;
          break;
        }
        std::this_thread::sleep_for(1ms);
      }
      return Status::OK();
    });
    GEOLAKE_RETURN_NOT_OK(unrelated.status());
    TaskGroup group(raw);
    group.Spawn([&] {
      own_ran = true;
      return Status::OK();
    });
    GEOLAKE_RETURN_NOT_OK(group.Wait());
    released = true;
    return Status::OK();
  });
  ASSERT_OK(outer.status());
  EXPECT_OK(outer->get());
  pool.reset();  // runs the unrelated task to its end
  EXPECT_TRUE(own_ran.load());
  EXPECT_FALSE(unrelated_timed_out.load());
}

// A task of the group may spawn more while a worker waits for the group: the waiter runs them.
TEST(TaskGroupTest, AWaitingWorkerRunsTasksSpawnedWhileItWaits) {
  auto pool = MakePool(1);
  std::atomic<int> ran{0};
  ThreadPool* raw = pool.get();
  auto outer = pool->Submit([&, raw]() -> Status {
    TaskGroup group(raw);
    group.Spawn([&] {
      ++ran;
      for (int i = 0; i < 10; ++i) {
        group.Spawn([&] {
          ++ran;
          return Status::OK();
        });
      }
      return Status::OK();
    });
    return group.Wait();
  });
  ASSERT_OK(outer.status());
  EXPECT_OK(outer->get());
  EXPECT_EQ(ran.load(), 11);
}

TEST(ThreadPoolTest, RunQueuedTaskRunsTheOldestQueuedTask) {
  auto pool = MakePool(1);
  std::atomic<bool> release{false};
  std::atomic<bool> blocking{false};
  // Occupy the only worker, then queue two tasks and run them from this thread.
  auto blocker = pool->Submit([&] {
    blocking = true;
    while (!release.load()) std::this_thread::sleep_for(1ms);
    return Status::OK();
  });
  ASSERT_OK(blocker.status());
  while (!blocking.load()) std::this_thread::sleep_for(1ms);
  std::vector<int> order;
  std::mutex mu;
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK(pool->Submit([&, i] {
                    std::lock_guard lock(mu);
                    order.push_back(i);
                    return Status::OK();
                  })
                  .status());
  }
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard lock(mu);
      if (order.size() == 2) break;
    }
    if (!pool->RunQueuedTask()) std::this_thread::sleep_for(1ms);
  }
  release = true;
  EXPECT_OK(blocker->get());
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  EXPECT_FALSE(pool->RunQueuedTask());  // nothing left
}

TEST(ThreadPoolTest, UsesSeveralThreads) {
  auto pool = MakePool(4);
  std::mutex mu;
  std::set<std::thread::id> ids;
  ASSERT_OK(pool->ParallelFor(64, [&](std::int64_t) {
    std::this_thread::sleep_for(2ms);
    std::lock_guard lock(mu);
    ids.insert(std::this_thread::get_id());
    return Status::OK();
  }));
  EXPECT_GT(ids.size(), 1u);
}

}  // namespace
}  // namespace geolake
