#include "geolake/core/stop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "geolake/core/units.h"

namespace geolake {
namespace {

// A signal handler can reach nothing but globals, so the handler's state lives here. They are
// lock-free atomics (async-signal-safe to read and write), set before the handler is installed
// and reset after it is removed; only one StopController may own them at a time (g_owned).
// NOLINTBEGIN(cppcoreguidelines-avoid-non-const-global-variables)
constinit std::atomic<int> g_signal_pipe{-1};
constinit std::atomic<int> g_signal_count{0};
constinit std::atomic<bool> g_exit_on_second{false};
constinit std::atomic<bool> g_owned{false};
// Previous dispositions, restored by the owner's destructor; touched only by the owner.
struct sigaction g_old_sigint;
struct sigaction g_old_sigterm;
// NOLINTEND(cppcoreguidelines-avoid-non-const-global-variables)

static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

// Byte the destructor writes to wake the watcher; signal numbers are never 0.
constexpr unsigned char kShutdownByte = 0;

extern "C" void HandleStopSignal(int signal_number) {
  const int saved_errno = errno;
  const int count = g_signal_count.fetch_add(1) + 1;
  if (count > 1 && g_exit_on_second.load()) {
    _exit(128 + signal_number);  // async-signal-safe, unlike exit()
  }
  const int fd = g_signal_pipe.load();
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signal_number);
    // Non-blocking: a full pipe already holds a pending stop, so dropping the byte is fine.
    const ssize_t ignored = ::write(fd, &byte, 1);
    (void)ignored;
  }
  errno = saved_errno;
}

std::string SignalName(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

Status ErrnoError(std::string_view what) {
  return Status::IOError(std::string("stop controller: ") + std::string(what) + ": " +
                         std::generic_category().message(errno));
}

}  // namespace

StopController::StopController(PrivateTag /*tag*/, const StopOptions& options)
    : options_(options),
      deadline_(std::chrono::steady_clock::now() +
                options.timeout.value_or(std::chrono::milliseconds(0))) {}

Result<std::unique_ptr<StopController>> StopController::Make(const StopOptions& options) {
  if (options.timeout && options.timeout->count() < 0) {
    return Status::InvalidArgument("stop controller: negative timeout");
  }
  auto controller = std::make_unique<StopController>(PrivateTag{}, options);
  std::array<int, 2> fds{-1, -1};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return ErrnoError("pipe");
  controller->pipe_read_ = fds[0];
  controller->pipe_write_ = fds[1];
  if (::fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) return ErrnoError("fcntl");

  if (options.handle_signals) {
    bool expected = false;
    if (!g_owned.compare_exchange_strong(expected, true)) {
      return Status::AlreadyExists("stop controller: another one already handles signals");
    }
    g_signal_count.store(0);
    g_exit_on_second.store(options.exit_on_second_signal);
    g_signal_pipe.store(fds[1]);
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = HandleStopSignal;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    // SA_RESTART: other threads' blocking calls are not disturbed by the signal.
    action.sa_flags = SA_RESTART;
    if (::sigaction(SIGINT, &action, &g_old_sigint) != 0) {
      g_signal_pipe.store(-1);
      g_owned.store(false);
      return ErrnoError("sigaction(SIGINT)");
    }
    if (::sigaction(SIGTERM, &action, &g_old_sigterm) != 0) {
      ::sigaction(SIGINT, &g_old_sigint, nullptr);
      g_signal_pipe.store(-1);
      g_owned.store(false);
      return ErrnoError("sigaction(SIGTERM)");
    }
    controller->handlers_installed_ = true;
  }

  // Nothing to watch: no thread. A stop then only comes from RequestStop.
  if (!options.handle_signals && !options.timeout) return controller;
  try {
    controller->watcher_ = std::thread([c = controller.get()] { c->Watch(); });
  } catch (const std::system_error& e) {
    return Status::IOError(std::string("stop controller: cannot start the watcher: ") + e.what());
  }
  return controller;
}

StopController::~StopController() {
  if (handlers_installed_) {
    // Restore first, so that no new handler call can see our pipe once it closes.
    ::sigaction(SIGINT, &g_old_sigint, nullptr);
    ::sigaction(SIGTERM, &g_old_sigterm, nullptr);
    g_signal_pipe.store(-1);
    g_exit_on_second.store(false);
    g_owned.store(false);
  }
  if (watcher_.joinable()) {
    const unsigned char byte = kShutdownByte;
    while (::write(pipe_write_, &byte, 1) < 0 && errno == EINTR) {
    }
    watcher_.join();
  }
  if (pipe_read_ >= 0) ::close(pipe_read_);
  if (pipe_write_ >= 0) ::close(pipe_write_);
}

void StopController::Watch() {
  while (true) {
    int timeout_ms = -1;
    if (options_.timeout && !source_.stop_requested()) {
      const auto remaining = std::chrono::ceil<std::chrono::milliseconds>(
          deadline_ - std::chrono::steady_clock::now());
      timeout_ms = static_cast<int>(std::clamp<std::int64_t>(remaining.count(), 0, 1 << 30));
    }
    struct pollfd pfd = {pipe_read_, POLLIN, 0};
    const int rc = ::poll(&pfd, 1, timeout_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return;  // cannot happen with a valid fd; nothing to report to
    }
    if (rc == 0) {
      if (std::chrono::steady_clock::now() >= deadline_) Stop(StopReason::kDeadline, 0);
      continue;
    }
    std::array<unsigned char, 16> bytes;
    const ssize_t n = ::read(pipe_read_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (n == 0) return;
    for (ssize_t byte_idx = 0; byte_idx < n; ++byte_idx) {
      if (bytes[byte_idx] == kShutdownByte) return;
      Stop(StopReason::kSignal, bytes[byte_idx]);
    }
  }
}

void StopController::Stop(StopReason reason, int signal_number) {
  StopReason expected = StopReason::kNone;
  if (reason_.compare_exchange_strong(expected, reason) && signal_number != 0) {
    signal_number_.store(signal_number);
  }
  source_.request_stop();
}

void StopController::RequestStop() { Stop(StopReason::kRequested, 0); }

int StopController::signal_count() const { return handlers_installed_ ? g_signal_count.load() : 0; }

int StopController::SignalExitCode() const {
  const int sig = signal_number_.load();
  return sig == 0 ? 0 : 128 + sig;
}

Status StopController::StopStatus() const {
  switch (reason_.load()) {
    case StopReason::kNone:
      return Status::OK();
    case StopReason::kSignal:
      return Status::Cancelled("interrupted by " + SignalName(signal_number_.load()));
    case StopReason::kDeadline:
      return Status::Cancelled(
          "deadline of " + FormatDuration(options_.timeout.value_or(std::chrono::milliseconds(0))) +
          " passed");
    case StopReason::kRequested:
      return Status::Cancelled("stop requested");
  }
  return Status::Cancelled("stopped");
}

}  // namespace geolake
