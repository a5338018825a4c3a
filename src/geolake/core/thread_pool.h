/// \file
/// ThreadPool: the engine's fixed set of worker threads (the one executor that every operation
/// runs on, docs/api.md), plus TaskGroup (run a set of tasks, wait for all, keep the first
/// error) and ParallelFor. Tasks return Status; an exception that escapes a task is caught on
/// the worker and becomes kInternal, so nothing ever unwinds through a worker thread.
///
/// Waiting never holds a worker hostage: a worker that waits for a TaskGroup runs the group's
/// own tasks that no other worker has started yet, so groups nest (a ParallelFor inside a task,
/// page compression inside a writer that runs as a task) without deadlock, whatever else is
/// queued. It runs only its own group's tasks, never an unrelated queued one: that one could
/// be long, or wait for something the waiter itself holds.
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
  /// worker of this pool, the caller runs chunks itself while it waits, so nested ParallelFor
  /// does not deadlock.
  Status ParallelFor(std::int64_t n, const std::function<Status(std::int64_t)>& fn,
                     std::stop_token stop = {});

  /// \brief True when called from one of this pool's workers.
  bool OnWorkerThread() const;

  /// \brief Run the oldest queued task on the calling thread, if there is one; true if one
  /// ran. For a worker that has nothing to do until something changes (an idle ingest worker
  /// waiting for a unit), so that it helps instead of sleeping. The caller must hold nothing
  /// that the task could wait for (no lock, no role); TaskGroup::Wait instead runs only its
  /// own group's tasks.
  bool RunQueuedTask();

 private:
  friend class TaskGroup;

  // Queue a wrapped task; false when shutting down.
  bool Enqueue(std::function<void()> job);
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
/// token stopped the group, or OK. A worker of the pool that waits runs the group's tasks that
/// have not started yet (see the file comment); another thread just waits.
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
  std::stop_token stop_token() const;

 private:
  // Shared with the jobs the group queued on the pool, which may run (and find nothing left to
  // do) after the group is gone.
  struct State;

  ThreadPool* pool_;
  std::shared_ptr<State> state_;
  std::stop_callback<std::function<void()>> parent_callback_;
};

}  // namespace geolake
