/// \file
/// BoundedQueue<T>: the queue between pipeline stages, bounded in BYTES rather than items, so
/// that the memory budget holds whether a batch is 1 KiB or 100 MiB. A full queue blocks its
/// producers (backpressure); it never grows.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>

#include "geolake/core/result.h"

namespace geolake {

/// \brief A multi-producer, multi-consumer FIFO whose capacity is a number of bytes.
///
/// Each Push states the item's cost in bytes; the queue holds at most `capacity_bytes` of cost
/// in total. One exception keeps the pipeline from deadlocking: an item costing more than the
/// whole capacity is admitted when the queue is empty (so the peak may then equal that item's
/// cost). Producers call Close() when they are done; consumers drain what is left and then see
/// the end (nullopt). Cancel() aborts: blocked and later calls return kCancelled and queued
/// items are dropped. A requested std::stop_token makes a blocked Push or Pop return kCancelled
/// promptly.
///
/// Thread-safety: every method is safe to call concurrently. One mutex guards all state.
template <typename T>
class BoundedQueue {
 public:
  /// \brief A queue holding at most `capacity_bytes` (at least 1) of item cost.
  explicit BoundedQueue(std::int64_t capacity_bytes)
      : capacity_bytes_(std::max<std::int64_t>(capacity_bytes, 1)) {}

  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  /// \brief Append `item`, blocking while it does not fit.
  ///
  /// Errors: kCancelled if `stop` is requested or Cancel() is called before the item is
  /// admitted (the item is then dropped); kInvalidArgument for a negative cost or a Push
  /// after Close() (a producer bug).
  Status Push(T item, std::int64_t cost_bytes, std::stop_token stop = {}) {
    if (cost_bytes < 0) {
      return Status::InvalidArgument("queue push: negative cost " + std::to_string(cost_bytes));
    }
    std::unique_lock lock(mu_);
    const bool admitted = not_full_.wait(lock, stop, [&] {
      return cancelled_ || closed_ || bytes_ == 0 || cost_bytes <= capacity_bytes_ - bytes_;
    });
    if (cancelled_ || !admitted) return Status::Cancelled("queue push cancelled");
    if (closed_) return Status::InvalidArgument("queue push after close");
    items_.push_back(Entry{std::move(item), cost_bytes});
    bytes_ += cost_bytes;
    peak_bytes_ = std::max(peak_bytes_, bytes_);
    lock.unlock();
    not_empty_.notify_one();
    return Status::OK();
  }

  /// \brief Take the oldest item, blocking while the queue is empty and open.
  ///
  /// Returns nullopt once the queue is closed and drained. Errors: kCancelled if `stop` is
  /// requested while waiting or the queue was cancelled.
  Result<std::optional<T>> Pop(std::stop_token stop = {}) {
    std::unique_lock lock(mu_);
    const bool ready =
        not_empty_.wait(lock, stop, [&] { return cancelled_ || closed_ || !items_.empty(); });
    if (cancelled_ || !ready) return Status::Cancelled("queue pop cancelled");
    if (items_.empty()) return std::optional<T>();  // closed and drained
    Entry entry = std::move(items_.front());
    items_.pop_front();
    bytes_ -= entry.cost_bytes;
    lock.unlock();
    // Every waiting producer re-checks: the freed bytes may admit several small items, and
    // notify_one could wake one whose item still does not fit while another's would.
    not_full_.notify_all();
    return std::optional<T>(std::move(entry.item));
  }

  /// \brief Producers are done: Pop drains what is queued and then returns nullopt. Idempotent.
  void Close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  /// \brief Abort: drop queued items; every blocked and later Push/Pop returns kCancelled.
  void Cancel() {
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      items_.clear();
      bytes_ = 0;
    }
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  std::int64_t capacity_bytes() const { return capacity_bytes_; }

  /// \brief Cost of the items queued now.
  std::int64_t bytes() const {
    std::lock_guard lock(mu_);
    return bytes_;
  }

  /// \brief The highest bytes() ever reached.
  std::int64_t peak_bytes() const {
    std::lock_guard lock(mu_);
    return peak_bytes_;
  }

  /// \brief Number of items queued now.
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }

  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }

 private:
  struct Entry {
    T item;
    std::int64_t cost_bytes;
  };

  const std::int64_t capacity_bytes_;
  mutable std::mutex mu_;  // guards items_, bytes_, peak_bytes_, closed_, cancelled_
  std::condition_variable_any not_full_;
  std::condition_variable_any not_empty_;
  std::deque<Entry> items_;
  std::int64_t bytes_ = 0;
  std::int64_t peak_bytes_ = 0;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace geolake
