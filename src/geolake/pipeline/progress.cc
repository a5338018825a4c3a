#include "geolake/pipeline/progress.h"

#include <unistd.h>

#include <cstdio>

#include "geolake/core/units.h"

namespace geolake::pipeline {

Result<std::unique_ptr<ProgressDisplay>> ProgressDisplay::Start(std::string_view mode,
                                                                const Metrics* metrics,
                                                                std::int64_t budget_bytes) {
  bool terminal = false;
  if (mode == "on") {
    terminal = true;
  } else if (mode == "auto") {
    terminal = isatty(STDERR_FILENO) != 0;
  } else if (mode == "off") {
    return std::unique_ptr<ProgressDisplay>();
  } else {
    return Status::InvalidArgument("--progress '" + std::string(mode) +
                                   "': expected auto, on or off");
  }
  auto display =
      std::unique_ptr<ProgressDisplay>(new ProgressDisplay(metrics, budget_bytes, terminal));
  if (terminal) SetStatusLine(display.get());
  display->thread_ = std::thread([raw = display.get()] { raw->Run(); });
  return display;
}

ProgressDisplay::ProgressDisplay(const Metrics* metrics, std::int64_t budget_bytes, bool terminal)
    : metrics_(metrics), budget_bytes_(budget_bytes), terminal_(terminal) {}

ProgressDisplay::~ProgressDisplay() { Stop(); }

void ProgressDisplay::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (terminal_) {
    SetStatusLine(nullptr);
    WriteStderr("\r\x1b[K");
  }
}

std::string ProgressDisplay::Line(const MetricsSnapshot& snapshot, std::int64_t budget_bytes) {
  std::int64_t read = 0;
  std::int64_t written = 0;
  std::int64_t committed = 0;
  std::int64_t files = 0;
  std::int64_t rejected = 0;
  for (const auto& stage : snapshot.stages) {
    if (stage.name == "read") read = stage.rows_out;
    if (stage.name == "write") written = stage.rows_out;
    if (stage.name == "commit") committed = stage.rows_out;
    for (const auto& counter : stage.counters) {
      if (stage.name == "write" && counter.name == "files") files = counter.value;
      // Ingest's transform stage, or an operation's (ops/runner.h).
      if ((stage.name == "transform" || stage.name == "op") && counter.name == "rejected") {
        rejected = counter.value;
      }
    }
  }
  std::int64_t inflight = 0;
  for (const auto& gauge : snapshot.gauges) {
    if (gauge.name == "inflight_bytes") inflight = gauge.value;
  }
  const double seconds = static_cast<double>(snapshot.elapsed_ms) / 1000.0;
  char text[256];
  std::snprintf(text, sizeof(text),
                "%lld rows read (%.0f/s), %lld written in %lld files, %lld committed, %lld "
                "rejected, in flight %s / %s",
                static_cast<long long>(read),
                seconds > 0 ? static_cast<double>(read) / seconds : 0.0,
                static_cast<long long>(written), static_cast<long long>(files),
                static_cast<long long>(committed), static_cast<long long>(rejected),
                FormatSize(inflight).c_str(), FormatSize(budget_bytes).c_str());
  return text;
}

void ProgressDisplay::Run() {
  const auto period = terminal_ ? std::chrono::milliseconds(250) : std::chrono::seconds(10);
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, period, [&] { return stopping_; })) {
    std::string line = Line(metrics_->Snapshot(), budget_bytes_);
    if (terminal_) {
      line_ = line;
      lock.unlock();
      WriteStderr("\r\x1b[K" + line);
      lock.lock();
    } else {
      lock.unlock();
      Log(LogLevel::kInfo, "{}", line);
      lock.lock();
    }
  }
}

std::string ProgressDisplay::ClearText() { return "\r\x1b[K"; }

std::string ProgressDisplay::RedrawText() {
  std::lock_guard lock(mu_);
  return line_;
}

}  // namespace geolake::pipeline
