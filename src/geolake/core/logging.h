/// \file
/// Logging: one line per message on stderr, "geolake: warn: dropped 3 rows", written whole
/// even when many threads log at once. Messages are formatted with fmt:
///
///     GEOLAKE_LOG_WARN("dropped {} rows from '{}'", n, path);
///     Log(LogLevel::kInfo, "committed snapshot {}", id);
///
/// The threshold (--log-level) is the one process-wide setting geolake keeps outside an
/// Options struct. It lives in a function-local static atomic because stderr itself is a
/// process-wide resource: every library layer, including code far from any Options (a GEOS
/// notice handler, a tolerant reader counting a defect), must agree on it, and threading a
/// logger handle through every call would buy nothing. Reads are relaxed atomic loads, so a
/// disabled debug line costs one load and a compare.
///
/// A progress display that owns the terminal's last line registers a StatusLine; every log
/// line is then written as "clear the status line + the log line + redraw it" in one write, so
/// the two never interleave.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "geolake/core/result.h"

namespace geolake {

/// Severity, in increasing order. kOff disables all output.
enum class LogLevel : std::uint8_t { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

/// \brief "debug", "info", "warn", "error" or "off".
std::string_view LogLevelName(LogLevel level);

/// \brief Parse a --log-level value (case-insensitive; "warning" is accepted for "warn").
///
/// Errors: kInvalidArgument naming the text and the accepted values.
Result<LogLevel> ParseLogLevel(std::string_view text);

/// \brief Set the process-wide threshold; messages below it are dropped. Default kInfo.
/// Thread-safe.
void SetLogLevel(LogLevel level);

/// \brief The current threshold. Thread-safe.
LogLevel GetLogLevel();

/// \brief True if a message at `level` would be written. Thread-safe; one relaxed load.
bool LogEnabled(LogLevel level);

/// \brief Whatever owns the terminal's last line (a progress display).
///
/// Both methods are called with the stderr lock held, so they must not log or call
/// WriteStderr themselves; they only return the bytes to write.
class StatusLine {
 public:
  virtual ~StatusLine() = default;
  /// \brief Bytes that erase the status line, e.g. "\r\x1b[K"; empty if nothing is shown.
  virtual std::string ClearText() = 0;
  /// \brief Bytes that draw the status line again after a log line.
  virtual std::string RedrawText() = 0;
};

/// \brief Register the status line (not owned; nullptr detaches it). The caller keeps it alive
/// until it is detached. Thread-safe.
void SetStatusLine(StatusLine* line);

/// \brief Write raw bytes to stderr under the same lock as log lines (for the progress
/// display's own redraws). Thread-safe.
void WriteStderr(std::string_view text);

/// \brief Write one already formatted message at `level` (if enabled): "geolake: <level>: <msg>".
/// Thread-safe.
void LogMessage(LogLevel level, std::string_view message);

/// \brief Format and write one message if `level` is enabled. Thread-safe; never throws
/// (a formatting failure, e.g. out of memory, is reported in place of the message).
template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (!LogEnabled(level)) return;
  try {
    LogMessage(level, fmt::format(format, std::forward<Args>(args)...));
  } catch (const std::exception& e) {
    LogMessage(level, std::string("<log message could not be formatted: ") + e.what() + ">");
  }
}

}  // namespace geolake

/// Log at a fixed level; arguments are not evaluated when the level is disabled.
#define GEOLAKE_LOG(level, ...)                                           \
  do {                                                                    \
    if (::geolake::LogEnabled(level)) ::geolake::Log(level, __VA_ARGS__); \
  } while (false)
#define GEOLAKE_LOG_DEBUG(...) GEOLAKE_LOG(::geolake::LogLevel::kDebug, __VA_ARGS__)
#define GEOLAKE_LOG_INFO(...) GEOLAKE_LOG(::geolake::LogLevel::kInfo, __VA_ARGS__)
#define GEOLAKE_LOG_WARN(...) GEOLAKE_LOG(::geolake::LogLevel::kWarn, __VA_ARGS__)
#define GEOLAKE_LOG_ERROR(...) GEOLAKE_LOG(::geolake::LogLevel::kError, __VA_ARGS__)
