/// \file
/// Private to ops/: the per-task helpers the tree-reduce operations (dissolve, eliminate)
/// share: a pool of GEOS contexts for tasks on the executor, and each executor thread's busy
/// time for the report ("uses both workers" is shown by these numbers).
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/geo_context.h"

namespace geolake::ops::internal {

/// \brief GeoContexts for executor tasks, one per executor thread at most (a task takes one
/// and gives it back), reused across tasks so a task does not pay for a new GEOS handle.
///
/// Thread-safety: Acquire and Release may be called concurrently.
class ContextPool {
 public:
  explicit ContextPool(std::stop_token stop) : stop_(std::move(stop)) {}
  /// \brief A free context, or a new one whose GEOS calls stop with `stop`.
  Result<std::unique_ptr<geo::GeoContext>> Acquire() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        std::unique_ptr<geo::GeoContext> ctx = std::move(free_.back());
        free_.pop_back();
        return ctx;
      }
    }
    return geo::GeoContext::Make(stop_);
  }
  void Release(std::unique_ptr<geo::GeoContext> ctx) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(ctx));
  }

 private:
  std::stop_token stop_;
  std::mutex mu_;  // guards free_
  std::vector<std::unique_ptr<geo::GeoContext>> free_;
};

/// \brief Busy time per executor thread, in order of each thread's first task.
///
/// Thread-safety: all methods may be called concurrently.
class BusyClock {
 public:
  void Add(std::chrono::nanoseconds busy) {
    std::lock_guard lock(mu_);
    const auto me = std::this_thread::get_id();
    auto it = std::find(ids_.begin(), ids_.end(), me);
    if (it == ids_.end()) {
      ids_.push_back(me);
      busy_.emplace_back(0);
      it = ids_.end() - 1;
    }
    busy_[static_cast<std::size_t>(it - ids_.begin())] += busy;
  }
  /// \brief Seconds busy per thread, at least `workers` entries (idle threads show 0).
  std::vector<double> Seconds(int workers) const {
    std::lock_guard lock(mu_);
    std::vector<double> out(std::max<std::size_t>(busy_.size(), static_cast<std::size_t>(workers)),
                            0.0);
    for (std::size_t i = 0; i < busy_.size(); ++i) {
      out[i] = std::chrono::duration<double>(busy_[i]).count();
    }
    return out;
  }

 private:
  mutable std::mutex mu_;  // guards ids_ and busy_
  std::vector<std::thread::id> ids_;
  std::vector<std::chrono::nanoseconds> busy_;
};

}  // namespace geolake::ops::internal
