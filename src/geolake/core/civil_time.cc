#include "geolake/core/civil_time.h"

#include <fmt/format.h>

namespace geolake {

// Days to civil date by eras of 400 years (146097 days), counted from 0000-03-01 so that the
// leap day ends a year.
std::string CivilDateText(std::int64_t days) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t year = yoe + era * 400 + (m <= 2 ? 1 : 0);
  // ISO 8601: at least four year digits after the sign, astronomical numbering (1 BC is 0000,
  // 2 BC is -0001). fmt's {:04d} would count the sign as a digit ("-001").
  return fmt::format("{}{:04d}-{:02d}-{:02d}", year < 0 ? "-" : "", year < 0 ? -year : year, m, d);
}

std::string TimestampMicrosText(std::int64_t micros) {
  std::int64_t days = micros / 86400000000LL;
  std::int64_t rem = micros % 86400000000LL;
  if (rem < 0) {
    rem += 86400000000LL;
    --days;
  }
  const std::int64_t s = rem / 1000000;
  return fmt::format("{}T{:02d}:{:02d}:{:02d}.{:06d}Z", CivilDateText(days), s / 3600, s / 60 % 60,
                     s % 60, rem % 1000000);
}

}  // namespace geolake
