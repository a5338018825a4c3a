/// \file
/// MemoryBudget: the in-flight byte budget of one ingest (`--memory`). Every stage that holds
/// data reserves its bytes here first (rows held for Hilbert sorting, encoded batches); the
/// total never exceeds the capacity except for one oversized reservation admitted while
/// nothing else is reserved, so a single huge batch cannot deadlock the run. A full budget
/// makes producers wait (backpressure) or, for a writer that holds rows itself, flush a file
/// early; it never grows.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <utility>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"

namespace geolake::pipeline {

/// \brief A byte semaphore with a peak gauge.
///
/// Thread-safety: every method is safe to call concurrently; one mutex guards reserved_.
class MemoryBudget {
 public:
  /// \brief A budget of `capacity_bytes` (at least 1). `gauge` (optional, not owned) follows
  /// the reserved bytes; its peak is the run's peak in-flight bytes.
  explicit MemoryBudget(std::int64_t capacity_bytes, Gauge* gauge = nullptr);

  /// \brief Reserve `bytes` if they fit now (or nothing is reserved). True when reserved.
  bool TryReserve(std::int64_t bytes);

  /// \brief Reserve `bytes`, waiting while they do not fit. Only call this while holding no
  /// other reservation that could be released to make room (else two waiters deadlock).
  /// Errors: kCancelled when `stop` fires first.
  Status Reserve(std::int64_t bytes, std::stop_token stop = {});

  /// \brief Give back `bytes` reserved earlier.
  void Release(std::int64_t bytes);

  std::int64_t capacity_bytes() const { return capacity_bytes_; }
  std::int64_t reserved_bytes() const;
  std::int64_t peak_bytes() const;

 private:
  bool Fits(std::int64_t bytes) const {
    return reserved_ == 0 || bytes <= capacity_bytes_ - reserved_;
  }
  void Add(std::int64_t bytes);

  const std::int64_t capacity_bytes_;
  Gauge* gauge_;
  mutable std::mutex mu_;  // guards reserved_, peak_
  std::condition_variable_any released_;
  std::int64_t reserved_ = 0;
  std::int64_t peak_ = 0;
};

/// \brief Holds a reservation and gives it back on destruction (moves transfer it).
class Reservation {
 public:
  Reservation() = default;
  Reservation(MemoryBudget* budget, std::int64_t bytes) : budget_(budget), bytes_(bytes) {}
  Reservation(Reservation&& other) noexcept;
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation() { Reset(); }

  /// \brief Add `bytes` already reserved on the same budget.
  void Grow(std::int64_t bytes) { bytes_ += bytes; }
  /// \brief Give up ownership of the bytes without releasing them (to Grow another).
  std::int64_t Take() { return std::exchange(bytes_, 0); }
  std::int64_t bytes() const { return bytes_; }
  /// \brief Release now.
  void Reset();

 private:
  MemoryBudget* budget_ = nullptr;
  std::int64_t bytes_ = 0;
};

/// \brief The default budget: a quarter of physical RAM (at least 64 MiB).
std::int64_t DefaultMemoryBudget();

}  // namespace geolake::pipeline
