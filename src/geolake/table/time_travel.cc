#include "geolake/table/time_travel.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <string>

namespace geolake::table {

Result<std::optional<std::int64_t>> ResolveSnapshot(const TableMetadata& metadata,
                                                    std::optional<std::int64_t> snapshot_id,
                                                    std::optional<std::int64_t> as_of_ms) {
  if (snapshot_id) {
    if (metadata.SnapshotById(*snapshot_id) == nullptr) {
      return Status::NotFound(fmt::format("snapshot {} not found", *snapshot_id));
    }
    return std::optional<std::int64_t>(*snapshot_id);
  }
  if (as_of_ms) {
    std::optional<std::int64_t> best;
    std::int64_t best_ms = 0;
    for (const SnapshotLogEntry& e : metadata.snapshot_log) {
      if (e.timestamp_ms <= *as_of_ms && (!best || e.timestamp_ms >= best_ms)) {
        best = e.snapshot_id;
        best_ms = e.timestamp_ms;
      }
    }
    if (!best) {
      return Status::NotFound(fmt::format("no snapshot at or before {} ms", *as_of_ms));
    }
    return best;
  }
  return metadata.current_snapshot_id;
}

Result<std::int64_t> ParseTimestampMillis(std::string_view text) {
  const std::string s(text);
  const auto bad = [&]() {
    return Status::InvalidArgument("time '" + s +
                                   "': expected ISO 8601 (2026-01-02T03:04:05Z) or epoch ms");
  };
  if (s.empty()) return bad();
  if (s.find_first_not_of("0123456789") == std::string::npos) {
    if (s.size() > 18) return bad();
    return static_cast<std::int64_t>(std::stoll(s));
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &consumed) != 3 || consumed != 10) {
    return bad();
  }
  std::size_t pos = 10;
  std::int64_t millis = 0;
  std::int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'T' || s[pos] == ' ')) {
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d:%2d%n", &h, &mi, &sec, &consumed) != 3 ||
        consumed != 8) {
      return bad();
    }
    pos += 9;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      int digits = 0;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        if (digits < 3) millis = millis * 10 + (s[pos] - '0');
        ++digits;
        ++pos;
      }
      for (; digits < 3; ++digits) millis *= 10;
    }
    if (pos < s.size() && s[pos] == 'Z') {
      ++pos;
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
      int oh = 0, om = 0;
      if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d%n", &oh, &om, &consumed) != 2 ||
          consumed != 5) {
        return bad();
      }
      offset_s = (s[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      pos += 6;
    }
  }
  if (pos != s.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) {
    return bad();
  }
  // Days from the civil date (proleptic Gregorian), independent of the local time zone.
  const int yy = y - (mo <= 2 ? 1 : 0);
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = static_cast<std::int64_t>(era) * 146097 + doe - 719468;
  const std::int64_t seconds = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
  return seconds * 1000 + millis;
}

}  // namespace geolake::table
