/// \file
/// ProgressDisplay: what a long job shows while it runs, computed from its Metrics. On a
/// terminal (`--progress on`, or `auto` when stderr is a tty) one status line is redrawn four
/// times a second: rows read and rows/s, rows per stage, files, in-flight bytes against the
/// budget; log lines clear and redraw it (core/logging.h StatusLine). Otherwise (`auto` without
/// a tty) a plain log line every 10 seconds; `off` shows nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "geolake/core/logging.h"
#include "geolake/core/metrics.h"
#include "geolake/core/result.h"

namespace geolake::pipeline {

/// \brief The progress of one run. Thread-safety: the StatusLine methods are called by the
/// logger under its lock; everything else belongs to the creating thread.
class ProgressDisplay final : public StatusLine {
 public:
  /// \brief Start showing progress (`mode` auto|on|off). `budget_bytes` is shown next to the
  /// in-flight gauge. Errors: kInvalidArgument for another mode.
  static Result<std::unique_ptr<ProgressDisplay>> Start(std::string_view mode,
                                                        const Metrics* metrics,
                                                        std::int64_t budget_bytes);
  ~ProgressDisplay() override;
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  /// \brief Stop the display and erase the status line (idempotent).
  void Stop();

  std::string ClearText() override;
  std::string RedrawText() override;

  /// \brief The line for a metrics snapshot (exposed for tests).
  static std::string Line(const MetricsSnapshot& snapshot, std::int64_t budget_bytes);

 private:
  ProgressDisplay(const Metrics* metrics, std::int64_t budget_bytes, bool terminal);
  void Run();

  const Metrics* metrics_;
  const std::int64_t budget_bytes_;
  const bool terminal_;
  std::mutex mu_;  // guards line_, stopping_
  std::condition_variable wake_;
  std::string line_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace geolake::pipeline
