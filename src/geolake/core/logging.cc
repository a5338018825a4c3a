#include "geolake/core/logging.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <mutex>

namespace geolake {
namespace {

// See the header for why the level is process-wide. Function-local statics avoid any
// initialisation-order problem for code that logs during static initialisation.
std::atomic<LogLevel>& LevelSlot() {
  static std::atomic<LogLevel> level{LogLevel::kInfo};
  return level;
}

// Guards writes to file descriptor 2 and `StderrState::status_line`.
struct StderrState {
  std::mutex mu;
  StatusLine* status_line = nullptr;  // guarded by mu
};

StderrState& Stderr() {
  static StderrState state;
  return state;
}

// One write(2) per call where the kernel allows: stderr is unbuffered, and fwrite would split
// a line into several writes that other processes' output could interleave with.
void WriteAllToFd2(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere left to report a failure to write to stderr
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "unknown";
}

Result<LogLevel> ParseLogLevel(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "debug") return LogLevel::kDebug;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "warn" || lower == "warning") return LogLevel::kWarn;
  if (lower == "error") return LogLevel::kError;
  if (lower == "off" || lower == "none") return LogLevel::kOff;
  return Status::InvalidArgument("invalid log level '" + std::string(text) +
                                 "': use debug, info, warn, error or off");
}

void SetLogLevel(LogLevel level) { LevelSlot().store(level, std::memory_order_relaxed); }

LogLevel GetLogLevel() { return LevelSlot().load(std::memory_order_relaxed); }

bool LogEnabled(LogLevel level) {
  return level != LogLevel::kOff &&
         static_cast<std::uint8_t>(level) >= static_cast<std::uint8_t>(GetLogLevel());
}

void SetStatusLine(StatusLine* line) {
  StderrState& state = Stderr();
  std::lock_guard lock(state.mu);
  state.status_line = line;
}

void WriteStderr(std::string_view text) {
  StderrState& state = Stderr();
  std::lock_guard lock(state.mu);
  WriteAllToFd2(text);
}

void LogMessage(LogLevel level, std::string_view message) {
  if (!LogEnabled(level)) return;
  std::string line;
  line.reserve(message.size() + 24);
  line.append("geolake: ").append(LogLevelName(level)).append(": ").append(message);
  // A message must stay one line: a multi-line GEOS or PROJ message would break log parsers.
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line.push_back('\n');

  StderrState& state = Stderr();
  std::lock_guard lock(state.mu);
  if (state.status_line != nullptr) {
    std::string framed = state.status_line->ClearText();
    framed.append(line);
    framed.append(state.status_line->RedrawText());
    WriteAllToFd2(framed);
  } else {
    WriteAllToFd2(line);
  }
}

}  // namespace geolake
