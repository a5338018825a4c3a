/// \file
/// ThreadPool: the engine's fixed set of worker threads, plus TaskGroup (run a set of tasks,
/// wait for all, keep the first error) and ParallelFor. Tasks return Status; an exception that
/// escapes a task is caught on the worker and becomes kInternal, so nothing ever unwinds
/// through a worker thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "geolake/core/result.h"

namespace geolake {

/// \brief A fixed pool of std::jthread workers that run tasks in FIFO order.
///
/// Destruction stops accepting tasks, lets the workers finish every task already queued, and
/// joins them, so each accepted task runs exactly once. Tasks that must end early watch a
/// stop token of their own (see TaskGroup).
///
/// Thread-safety: all methods are safe to call concurrently, including from tasks.
class ThreadPool {
 public:
  using Task = std::function<Status()>;

  /// \brief Start `num_threads` workers; 0 means one per hardware thread.
  ///
  /// Errors: kInvalidArgument for a negative count or more than 4096 threads; kInternal if the
  /// OS refuses to start a thread.
  static Result<std::unique_ptr<ThreadPool>> Make(int num_threads = 0);

  /// Only Make() can create the tag, so only Make() constructs a pool.
  class PrivateTag {
   private:
    friend class ThreadPool;
    PrivateTag() = default;
  };
  explicit ThreadPool(PrivateTag /*tag*/) {}

  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// \brief Number of worker threads.
  int size() const { return static_cast<int>(workers_.size()); }

  /// \brief Queue `task`; its Status arrives through the future.
  ///
  /// Errors: kCancelled if the pool is shutting down (the task is not run).
  Result<std::future<Status>> Submit(Task task);

  /// \brief Run `fn(i)` for every i in [0, n) on the pool and wait; returns the first error.
  ///
  /// The range is cut into contiguous chunks (about four per worker). After the first error,
  /// or once `stop` is requested, chunks not yet started are skipped and chunks in progress
  /// stop before their next index; a stop without an error returns kCancelled. Called from a
  /// worker of this pool, the caller helps run queued tasks while it waits, so nested
  /// ParallelFor does not deadlock.
  Status ParallelFor(std::int64_t n, const std::function<Status(std::int64_t)>& fn,
                     std::stop_token stop = {});

  /// \brief True when called from one of this pool's workers.
  bool OnWorkerThread() const;

 private:
  friend class TaskGroup;

  // Queue a wrapped task; false when shutting down.
  bool Enqueue(std::function<void()> job);
  // Run one queued job on the calling thread, if any; true if one ran.
  bool RunOne();
  void WorkerLoop(const std::stop_token& stop);

  mutable std::mutex mu_;  // guards queue_ and accepting_
  std::condition_variable_any work_available_;
  std::deque<std::function<void()>> queue_;
  bool accepting_ = true;
  std::vector<std::jthread> workers_;
};

/// \brief A set of tasks run on a pool, awaited together; the first error wins.
///
/// After the first failure (or once the optional parent stop token is requested) the group's
/// stop token is requested: tasks not yet started are skipped, and running tasks that watch
/// stop_token() can quit early. Wait() returns the first error, kCancelled if only the parent
/// token stopped the group, or OK.
///
/// Thread-safety: Spawn, Wait and stop_token may be called concurrently, also from tasks of
/// the group. The destructor waits for every spawned task.
class TaskGroup {
 public:
  explicit TaskGroup(ThreadPool* pool, std::stop_token parent = {});
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  /// \brief Run `task` on the pool as part of this group. If the pool is shutting down the
  /// group records kCancelled.
  void Spawn(ThreadPool::Task task);

  /// \brief Wait for every spawned task; returns the first error or OK.
  Status Wait();

  /// \brief Requested when the group fails or its parent token is requested.
  std::stop_token stop_token() const { return stop_.get_token(); }

 private:
  void Finish(Status status);
  void RecordError(Status status);

  ThreadPool* pool_;
  std::stop_source stop_;
  std::stop_callback<std::function<void()>> parent_callback_;
  std::mutex mu_;  // guards pending_ and first_error_
  std::condition_variable done_;
  std::int64_t pending_ = 0;
  Status first_error_;
};

}  // namespace geolake
