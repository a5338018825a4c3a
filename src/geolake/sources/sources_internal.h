/// \file
/// What the GDAL reader and the native GeoPackage reader share so that they give the same
/// values for the same file: how OGR's date and date-time values become FeatureBatch values,
/// and SQL identifier quoting.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

namespace geolake::sources::internal {

/// \brief Days since 1970-01-01 of a proleptic Gregorian date (day 29..31 past a month's end
/// counts on into the next month, as the civil-days arithmetic does).
inline std::int64_t DaysSinceEpoch(int year, int month, int day) {
  using namespace std::chrono;
  const sys_days days{std::chrono::year{year} / std::chrono::month{static_cast<unsigned>(month)} /
                      std::chrono::day{static_cast<unsigned>(day)}};
  return days.time_since_epoch().count();
}

/// \brief Microseconds since the epoch of an OGR date-time. `second` is a float because that
/// is what OGR keeps (so milliseconds carry float rounding, the same in both readers);
/// `tz_flag` is OGR's: 0 unknown, 1 local, 100 UTC, 100 +/- n an offset of n quarter hours.
inline std::int64_t TimestampMicros(int year, int month, int day, int hour, int minute,
                                    float second, int tz_flag) {
  double seconds = static_cast<double>(DaysSinceEpoch(year, month, day)) * 86400.0 + hour * 3600.0 +
                   minute * 60.0 + second;
  if (tz_flag > 1) seconds -= (tz_flag - 100) * 900.0;
  return static_cast<std::int64_t>(std::llround(seconds * 1e6));
}

/// \brief `name` as a double-quoted SQL identifier (embedded quotes doubled).
inline std::string QuoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

}  // namespace geolake::sources::internal
