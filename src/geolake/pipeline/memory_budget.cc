#include "geolake/pipeline/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace geolake::pipeline {

MemoryBudget::MemoryBudget(std::int64_t capacity_bytes, Gauge* gauge)
    : capacity_bytes_(std::max<std::int64_t>(capacity_bytes, 1)), gauge_(gauge) {}

void MemoryBudget::Add(std::int64_t bytes) {
  reserved_ += bytes;
  peak_ = std::max(peak_, reserved_);
  if (gauge_ != nullptr) gauge_->Add(bytes);
}

bool MemoryBudget::TryReserve(std::int64_t bytes) {
  std::lock_guard lock(mu_);
  if (!Fits(bytes)) return false;
  Add(bytes);
  return true;
}

Status MemoryBudget::Reserve(std::int64_t bytes, std::stop_token stop) {
  std::unique_lock lock(mu_);
  if (!released_.wait(lock, stop, [&] { return Fits(bytes); })) {
    return Status::Cancelled("memory budget: stopped while waiting for " + std::to_string(bytes) +
                             " bytes");
  }
  Add(bytes);
  return Status::OK();
}

void MemoryBudget::Release(std::int64_t bytes) {
  if (bytes == 0) return;
  {
    std::lock_guard lock(mu_);
    reserved_ -= bytes;
    if (gauge_ != nullptr) gauge_->Add(-bytes);
  }
  released_.notify_all();
}

std::int64_t MemoryBudget::reserved_bytes() const {
  std::lock_guard lock(mu_);
  return reserved_;
}

std::int64_t MemoryBudget::peak_bytes() const {
  std::lock_guard lock(mu_);
  return peak_;
}

Reservation::Reservation(Reservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Reset();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void Reservation::Reset() {
  if (budget_ != nullptr && bytes_ != 0) budget_->Release(bytes_);
  bytes_ = 0;
}

std::int64_t DefaultMemoryBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  constexpr std::int64_t kFloor = std::int64_t{64} << 20;
  if (pages <= 0 || page_size <= 0) return std::int64_t{1} << 30;
  return std::max(kFloor, static_cast<std::int64_t>(pages) * page_size / 4);
}

}  // namespace geolake::pipeline
