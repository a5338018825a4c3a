/// \file
/// Cancellation for a whole run: one std::stop_source that SIGINT, SIGTERM, a deadline or an
/// explicit request sets. Workers watch its std::stop_token between units and inside long
/// loops; the CLI turns the recorded reason into the exit code (128 + signal: 130 for SIGINT,
/// 143 for SIGTERM).
///
/// Signals are handled with the self-pipe pattern: the handler only writes the signal number
/// to a pipe (write(2) is async-signal-safe; std::stop_source::request_stop is not, since it
/// may lock), and a watcher thread reads the pipe and requests the stop. That works whatever
/// thread the signal lands on, including raise() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>

#include "geolake/core/result.h"

namespace geolake {

/// Why a run was stopped.
enum class StopReason : std::uint8_t { kNone = 0, kSignal, kDeadline, kRequested };

struct StopOptions {
  /// Catch SIGINT and SIGTERM. Only one controller per process may do so at a time.
  bool handle_signals = true;
  /// A second SIGINT/SIGTERM after the first exits the process at once with 128 + signal
  /// (the user insists; nothing uncommitted becomes visible because commits are atomic).
  bool exit_on_second_signal = true;
  /// Stop after this long (measured from Make()).
  std::optional<std::chrono::milliseconds> timeout;
};

/// \brief Owns the run's stop source and the signal/deadline watcher.
///
/// While it lives, SIGINT and SIGTERM (if handled) request a stop instead of killing the
/// process; the destructor restores the previous signal dispositions.
///
/// Thread-safety: all methods are safe to call concurrently.
class StopController {
 public:
  /// \brief Install the handlers (if asked) and start the watcher thread, which exists only
  /// when there is something to watch (signals or a timeout): without either, no thread runs.
  ///
  /// Errors: kAlreadyExists if another StopController handles signals; kIOError if the pipe,
  /// sigaction or the thread cannot be set up; kInvalidArgument for a negative timeout.
  static Result<std::unique_ptr<StopController>> Make(const StopOptions& options = {});

  ~StopController();
  StopController(const StopController&) = delete;
  StopController& operator=(const StopController&) = delete;

  /// \brief The token every worker watches.
  std::stop_token token() const { return source_.get_token(); }

  bool stop_requested() const { return source_.stop_requested(); }

  /// \brief Stop now (reason kRequested unless a stop was already recorded).
  void RequestStop();

  /// \brief Why the stop happened; kNone while running.
  StopReason reason() const { return reason_.load(); }

  /// \brief The signal that stopped the run (SIGINT, SIGTERM), or 0.
  int signal_number() const { return signal_number_.load(); }

  /// \brief Signals received so far (SIGINT and SIGTERM), including the first.
  int signal_count() const;

  /// \brief 128 + signal_number() if a signal stopped the run, else 0.
  int SignalExitCode() const;

  /// \brief A kCancelled status saying why ("interrupted by SIGINT", "deadline of 30s
  /// passed", "stop requested"), or OK while not stopped.
  Status StopStatus() const;

  /// Only Make() can create the tag, so only Make() constructs a controller.
  class PrivateTag {
   private:
    friend class StopController;
    PrivateTag() = default;
  };
  StopController(PrivateTag /*tag*/, const StopOptions& options);

 private:
  void Watch();
  void Stop(StopReason reason, int signal_number);

  StopOptions options_;
  std::chrono::steady_clock::time_point deadline_;
  std::stop_source source_;
  std::atomic<StopReason> reason_{StopReason::kNone};
  std::atomic<int> signal_number_{0};
  int pipe_read_ = -1;   // owned; the watcher reads signal numbers from it
  int pipe_write_ = -1;  // owned; the handler writes to it (and the destructor, to wake)
  bool handlers_installed_ = false;
  std::thread watcher_;
};

}  // namespace geolake
