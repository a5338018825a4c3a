/// \file
/// Civil dates and times as text, for every writer of text output (query CSV, GDAL outputs):
/// a day count since 1970-01-01 as "YYYY-MM-DD" and a microsecond count since
/// 1970-01-01T00:00:00Z as "YYYY-MM-DDTHH:MM:SS.ffffffZ" (proleptic Gregorian calendar, UTC).
#pragma once

#include <cstdint>
#include <string>

namespace geolake {

/// \brief "YYYY-MM-DD" of `days` since 1970-01-01 (negative: before it), for any int64 day
/// count: ISO 8601 with at least four year digits after a sign, astronomical year numbering
/// (1 BC is "0000", 2 BC is "-0001"). The one date text of every writer (`query`, `cat`, GDAL
/// outputs), so they agree.
std::string CivilDateText(std::int64_t days);

/// \brief "YYYY-MM-DDTHH:MM:SS.ffffffZ" of `micros` since 1970-01-01T00:00:00Z.
std::string TimestampMicrosText(std::int64_t micros);

}  // namespace geolake
