/// \file
/// Metrics: what a run counts. Counters (monotonic int64), gauges (a current value and its
/// peak, e.g. bytes in flight) and per-stage statistics (rows and bytes in and out, wall and
/// busy time, and free-form counters such as commit attempts and conflicts). Updates are
/// single atomic operations so workers can count on hot paths; a Snapshot() is a plain struct
/// that renders as an aligned text table or as JSON (--metrics-json) and parses back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake {

/// \brief A monotonic 64-bit counter. Thread-safe; Add is one relaxed atomic add.
class Counter {
 public:
  void Add(std::int64_t delta = 1) { value_.fetch_add(delta, std::memory_order_relaxed); }
  std::int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

/// \brief A value that goes up and down, with the highest value it ever had.
///
/// Thread-safe; Set/Add are an atomic store/add plus a compare-exchange loop that only runs
/// while the peak actually grows.
class Gauge {
 public:
  void Set(std::int64_t value) {
    value_.store(value, std::memory_order_relaxed);
    RaisePeak(value);
  }
  void Add(std::int64_t delta) {
    RaisePeak(value_.fetch_add(delta, std::memory_order_relaxed) + delta);
  }
  std::int64_t value() const { return value_.load(std::memory_order_relaxed); }
  std::int64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  void RaisePeak(std::int64_t candidate) {
    std::int64_t peak = peak_.load(std::memory_order_relaxed);
    while (candidate > peak &&
           !peak_.compare_exchange_weak(peak, candidate, std::memory_order_relaxed)) {
    }
  }
  std::atomic<std::int64_t> value_{0};
  std::atomic<std::int64_t> peak_{0};
};

/// \brief Statistics of one pipeline stage (discover, transform, write, commit, ...).
///
/// Wall time spans from the first Start() (or timer) to the last Finish() (or timer end);
/// while running it extends to now. Busy time sums what timers measured on every thread, so
/// busy / wall is the stage's average parallelism.
///
/// Thread-safety: all methods are safe to call concurrently. counter() takes a lock; keep the
/// returned pointer (valid as long as the registry) instead of looking it up per row.
class StageMetrics {
 public:
  void AddRowsIn(std::int64_t n) { rows_in_.Add(n); }
  void AddRowsOut(std::int64_t n) { rows_out_.Add(n); }
  void AddBytesIn(std::int64_t n) { bytes_in_.Add(n); }
  void AddBytesOut(std::int64_t n) { bytes_out_.Add(n); }

  /// \brief Mark the stage as started (the first call wins).
  void Start();
  /// \brief Mark the stage as finished now (the latest call wins).
  void Finish();
  /// \brief Add time a thread spent working in this stage.
  void AddBusyTime(std::chrono::nanoseconds busy);

  /// \brief A free-form counter of this stage ("commit_attempts"), created on first use.
  Counter* counter(std::string_view name);

  /// \brief Times one unit of work: Start() on creation; on destruction Finish() and the
  /// elapsed time added to busy time.
  class Timer {
   public:
    explicit Timer(StageMetrics* stage);
    ~Timer();
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

   private:
    StageMetrics* stage_;
    std::chrono::steady_clock::time_point start_;
  };
  Timer Time() { return Timer(this); }

 private:
  friend class Metrics;

  Counter rows_in_;
  Counter rows_out_;
  Counter bytes_in_;
  Counter bytes_out_;
  std::atomic<std::int64_t> start_ns_{0};  // steady-clock ns; 0 = not started
  std::atomic<std::int64_t> end_ns_{0};    // steady-clock ns; 0 = not finished
  std::atomic<std::int64_t> busy_ns_{0};
  std::mutex mu_;  // guards counters_ and counter_order_ (not the counters' values)
  std::map<std::string, std::unique_ptr<Counter>, std::less<>> counters_;
  std::vector<std::pair<std::string, Counter*>> counter_order_;
};

/// \brief A point-in-time copy of a Metrics registry, in registration order.
struct MetricsSnapshot {
  struct CounterValue {
    std::string name;
    std::int64_t value = 0;
    bool operator==(const CounterValue&) const = default;
  };
  struct GaugeValue {
    std::string name;
    std::int64_t value = 0;
    std::int64_t peak = 0;
    bool operator==(const GaugeValue&) const = default;
  };
  struct StageValue {
    std::string name;
    std::int64_t rows_in = 0;
    std::int64_t rows_out = 0;
    std::int64_t bytes_in = 0;
    std::int64_t bytes_out = 0;
    std::int64_t wall_ms = 0;
    std::int64_t busy_ms = 0;
    std::vector<CounterValue> counters;
    bool operator==(const StageValue&) const = default;
  };

  std::int64_t elapsed_ms = 0;  // since the registry was created
  std::vector<StageValue> stages;
  std::vector<CounterValue> counters;
  std::vector<GaugeValue> gauges;

  bool operator==(const MetricsSnapshot&) const = default;

  /// \brief Aligned text: one row per stage (sizes and durations human-readable), then the
  /// counters and gauges.
  std::string ToTable() const;

  /// \brief JSON: {"elapsed_ms", "stages": [{"name", "rows_in", ..., "counters": {}}],
  /// "counters": {name: value}, "gauges": {name: {"value", "peak"}}}.
  std::string ToJson() const;

  /// \brief Parse what ToJson() wrote (e.g. to merge the reports of sharded runs).
  ///
  /// Errors: kInvalidArgument naming what is malformed or missing.
  static Result<MetricsSnapshot> FromJson(std::string_view json);
};

/// \brief The registry of one run.
///
/// Thread-safety: all methods are safe to call concurrently. Lookups by name take a lock and
/// return pointers that stay valid for the registry's lifetime: look up once, then update
/// through the pointer (one atomic operation, no lock).
class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  Counter* counter(std::string_view name);
  Gauge* gauge(std::string_view name);
  StageMetrics* stage(std::string_view name);

  MetricsSnapshot Snapshot() const;

 private:
  template <typename T>
  struct Family {
    std::map<std::string, std::unique_ptr<T>, std::less<>> by_name;
    std::vector<std::pair<std::string, T*>> order;
    T* Get(std::string_view name);
  };

  const std::chrono::steady_clock::time_point created_;
  mutable std::mutex mu_;  // guards counters_, gauges_, stages_ (the maps, not the values)
  Family<Counter> counters_;
  Family<Gauge> gauges_;
  Family<StageMetrics> stages_;
};

}  // namespace geolake
