#include "geolake/core/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <system_error>

namespace geolake {
namespace {

// Which pool (if any) the current thread works for; lets Wait() help instead of blocking.
// Per-thread, so not shared mutable state.
thread_local const ThreadPool* tls_current_pool = nullptr;  // NOLINT(*-non-const-global-variables)

// The one place a task's exception is caught: it becomes kInternal, so nothing unwinds
// through a worker (which would call std::terminate).
Status RunGuarded(const ThreadPool::Task& task) {
  try {
    return task();
  } catch (const std::exception& e) {
    return Status::Internal(std::string("task threw an exception: ") + e.what());
  } catch (...) {
    return Status::Internal("task threw a non-standard exception");
  }
}

constexpr int kMaxThreads = 4096;

}  // namespace

Result<std::unique_ptr<ThreadPool>> ThreadPool::Make(int num_threads) {
  if (num_threads < 0 || num_threads > kMaxThreads) {
    return Status::InvalidArgument("thread pool: invalid thread count " +
                                   std::to_string(num_threads) + " (use 1.." +
                                   std::to_string(kMaxThreads) + ", or 0 for one per core)");
  }
  if (num_threads == 0) {
    num_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  auto pool = std::make_unique<ThreadPool>(PrivateTag{});
  try {
    pool->workers_.reserve(static_cast<std::size_t>(num_threads));
    for (int thread_idx = 0; thread_idx < num_threads; ++thread_idx) {
      pool->workers_.emplace_back(
          [p = pool.get()](const std::stop_token& stop) { p->WorkerLoop(stop); });
    }
  } catch (const std::system_error& e) {
    // The destructor joins the workers that did start.
    return Status::Internal(std::string("thread pool: cannot start a thread: ") + e.what());
  }
  return pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    accepting_ = false;
  }
  // Ask every worker to stop first, then join: each drains the queue before it exits.
  for (std::jthread& worker : workers_) worker.request_stop();
  work_available_.notify_all();
  for (std::jthread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

bool ThreadPool::OnWorkerThread() const { return tls_current_pool == this; }

bool ThreadPool::Enqueue(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (!accepting_) return false;
    queue_.push_back(std::move(job));
  }
  work_available_.notify_one();
  return true;
}

bool ThreadPool::RunOne() {
  std::function<void()> job;
  {
    std::lock_guard lock(mu_);
    if (queue_.empty()) return false;
    job = std::move(queue_.front());
    queue_.pop_front();
  }
  job();
  return true;
}

void ThreadPool::WorkerLoop(const std::stop_token& stop) {
  tls_current_pool = this;
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      work_available_.wait(lock, stop, [&] { return !queue_.empty(); });
      if (queue_.empty()) break;  // stop requested and nothing left to run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();  // jobs never throw: every job is wrapped by RunGuarded
  }
  tls_current_pool = nullptr;
}

Result<std::future<Status>> ThreadPool::Submit(Task task) {
  // std::function needs a copyable callable, hence the shared promise.
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> future = promise->get_future();
  const bool queued =
      Enqueue([promise, task = std::move(task)] { promise->set_value(RunGuarded(task)); });
  if (!queued) return Status::Cancelled("thread pool is shutting down");
  return future;
}

Status ThreadPool::ParallelFor(std::int64_t n, const std::function<Status(std::int64_t)>& fn,
                               std::stop_token stop) {
  if (n < 0) return Status::InvalidArgument("parallel for: negative count " + std::to_string(n));
  if (n == 0) return Status::OK();
  // About four chunks per worker balances uneven items without paying a queue round trip per
  // index (items here are row groups or files: milliseconds each, not nanoseconds).
  const std::int64_t num_chunks = std::min<std::int64_t>(n, 4 * static_cast<std::int64_t>(size()));
  const std::int64_t chunk_size = (n + num_chunks - 1) / num_chunks;
  TaskGroup group(this, std::move(stop));
  const std::stop_token group_stop = group.stop_token();
  for (std::int64_t begin = 0; begin < n; begin += chunk_size) {
    const std::int64_t end = std::min(n, begin + chunk_size);
    group.Spawn([&fn, group_stop, begin, end]() -> Status {
      for (std::int64_t item_idx = begin; item_idx < end; ++item_idx) {
        if (group_stop.stop_requested()) return Status::Cancelled("parallel for stopped");
        GEOLAKE_RETURN_NOT_OK(fn(item_idx));
      }
      return Status::OK();
    });
  }
  return group.Wait();
}

TaskGroup::TaskGroup(ThreadPool* pool, std::stop_token parent)
    : pool_(pool),
      parent_callback_(std::move(parent), std::function<void()>([this] { stop_.request_stop(); })) {
}

TaskGroup::~TaskGroup() {
  // Tasks hold `this`; never let them outlive the group.
  Status ignored = Wait();
  (void)ignored;
}

void TaskGroup::Spawn(ThreadPool::Task task) {
  {
    std::lock_guard lock(mu_);
    ++pending_;
  }
  const bool queued = pool_->Enqueue([this, task = std::move(task)] {
    if (stop_.stop_requested()) {
      Finish(Status::Cancelled("task group stopped before the task started"));
      return;
    }
    Finish(RunGuarded(task));
  });
  if (!queued) Finish(Status::Cancelled("thread pool is shutting down"));
}

void TaskGroup::Finish(Status status) {
  if (!status.ok()) {
    bool first = false;
    {
      std::lock_guard lock(mu_);
      if (first_error_.ok()) {
        first_error_ = std::move(status);
        first = true;
      }
    }
    // Outside the lock: stop callbacks run synchronously and may call back into the group.
    // pending_ still counts this task, so the group cannot be destroyed meanwhile.
    if (first) stop_.request_stop();
  }
  std::lock_guard lock(mu_);
  // Notify while holding the lock: once pending_ reaches 0 the waiter may destroy the group,
  // so nothing here may touch a member after the lock is released.
  if (--pending_ == 0) done_.notify_all();
}

Status TaskGroup::Wait() {
  std::unique_lock lock(mu_);
  const bool helper = pool_->OnWorkerThread();
  while (pending_ > 0) {
    if (helper) {
      // A worker waiting on its own pool would hold a thread hostage (and with nested groups
      // every worker could end up waiting): run queued tasks instead.
      lock.unlock();
      const bool ran = pool_->RunOne();
      lock.lock();
      if (ran) continue;
      // Nothing queued now; our tasks run elsewhere. Re-check the queue now and then, as a
      // running task may spawn more.
      done_.wait_for(lock, std::chrono::milliseconds(2), [&] { return pending_ == 0; });
    } else {
      done_.wait(lock, [&] { return pending_ == 0; });
    }
  }
  return first_error_;
}

}  // namespace geolake
