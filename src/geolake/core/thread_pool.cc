#include "geolake/core/thread_pool.h"

#include <algorithm>
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

bool ThreadPool::RunQueuedTask() {
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

// A group's tasks wait in the group's own queue; each Spawn also queues one job on the pool
// that runs the oldest task still waiting there, if any (a waiting worker may have run it
// already). So every task runs exactly once, on a worker or on the thread that waits.
struct TaskGroup::State {
  std::stop_source stop;
  std::mutex mu;                       // guards tasks, pending and first_error
  std::condition_variable changed;     // a task finished, or a new one is waiting
  std::deque<ThreadPool::Task> tasks;  // spawned, not started
  std::int64_t pending = 0;            // spawned, not finished
  Status first_error;

  // Run the oldest waiting task on this thread; false when none is waiting.
  bool RunNext() {
    ThreadPool::Task task;
    {
      std::lock_guard lock(mu);
      if (tasks.empty()) return false;
      task = std::move(tasks.front());
      tasks.pop_front();
    }
    if (stop.stop_requested()) {
      Finish(Status::Cancelled("task group stopped before the task started"));
    } else {
      Finish(RunGuarded(task));
    }
    return true;
  }

  void Finish(Status status) {
    if (!status.ok()) {
      bool first = false;
      {
        std::lock_guard lock(mu);
        if (first_error.ok()) {
          first_error = std::move(status);
          first = true;
        }
      }
      // Outside the lock: stop callbacks run synchronously and may call back into the group.
      if (first) stop.request_stop();
    }
    std::lock_guard lock(mu);
    --pending;
    changed.notify_all();
  }
};

TaskGroup::TaskGroup(ThreadPool* pool, std::stop_token parent)
    : pool_(pool),
      state_(std::make_shared<State>()),
      parent_callback_(std::move(parent),
                       std::function<void()>([state = state_] { state->stop.request_stop(); })) {}

TaskGroup::~TaskGroup() {
  // Tasks refer to what the group's owner keeps alive until it is destroyed: wait for them.
  Status ignored = Wait();
  (void)ignored;
}

std::stop_token TaskGroup::stop_token() const { return state_->stop.get_token(); }

void TaskGroup::Spawn(ThreadPool::Task task) {
  {
    std::lock_guard lock(state_->mu);
    state_->tasks.push_back(std::move(task));
    ++state_->pending;
  }
  state_->changed.notify_all();  // a waiting worker may run it
  if (pool_->Enqueue([state = state_] { state->RunNext(); })) return;
  // The pool is shutting down: one waiting task will not run (unless a waiter took it, in
  // which case it ran and nothing is owed).
  bool dropped = false;
  {
    std::lock_guard lock(state_->mu);
    if (!state_->tasks.empty()) {
      state_->tasks.pop_back();
      dropped = true;
    }
  }
  if (dropped) state_->Finish(Status::Cancelled("thread pool is shutting down"));
}

Status TaskGroup::Wait() {
  const bool helper = pool_->OnWorkerThread();
  std::unique_lock lock(state_->mu);
  while (state_->pending > 0) {
    if (helper && !state_->tasks.empty()) {
      // A worker waiting on its own pool would hold a thread hostage (and with nested groups
      // every worker could end up waiting): it runs the group's waiting tasks instead.
      lock.unlock();
      state_->RunNext();
      lock.lock();
      continue;
    }
    // Every task of the group has started elsewhere (or, off the pool, will): wait for one to
    // finish, or for a running task to spawn another.
    state_->changed.wait(
        lock, [&] { return state_->pending == 0 || (helper && !state_->tasks.empty()); });
  }
  return state_->first_error;
}

}  // namespace geolake
