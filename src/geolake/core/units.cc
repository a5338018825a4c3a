#include "geolake/core/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <optional>

namespace geolake {
namespace {

// Exact decimal arithmetic: "1.5GB" must be 1500000000, not 1499999999.9 rounded. The value
// is int_part + frac_num / frac_den with frac_den a power of ten; products are taken in 128
// bits (at most 2^64 * 2^50), so nothing overflows before the final range check.
struct Decimal {
  unsigned __int128 int_part = 0;
  unsigned __int128 frac_num = 0;
  unsigned __int128 frac_den = 1;
};

constexpr unsigned __int128 kInt64Max = std::numeric_limits<std::int64_t>::max();

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parse [0-9]+(.[0-9]+)? at the front of `text`, advancing it. Up to 18 fraction digits are
// kept (more cannot change a result in bytes or milliseconds).
std::optional<Decimal> ParseDecimal(std::string_view* text) {
  Decimal d;
  std::size_t pos = 0;
  const std::string_view t = *text;
  while (pos < t.size() && IsDigit(t[pos])) {
    // Saturate just above INT64_MAX so that Scale() reports "too large" for huge numbers.
    d.int_part = std::min(d.int_part * 10 + static_cast<unsigned>(t[pos] - '0'), kInt64Max + 1);
    ++pos;
  }
  if (pos == 0) return std::nullopt;
  if (pos < t.size() && t[pos] == '.') {
    ++pos;
    const std::size_t frac_start = pos;
    while (pos < t.size() && IsDigit(t[pos])) {
      if (pos - frac_start < 18) {
        d.frac_num = d.frac_num * 10 + static_cast<unsigned>(t[pos] - '0');
        d.frac_den *= 10;
      }
      ++pos;
    }
    if (pos == frac_start) return std::nullopt;  // "1." is not a number
  }
  text->remove_prefix(pos);
  return d;
}

// value * multiplier, rounded to nearest; nullopt above INT64_MAX.
std::optional<std::int64_t> Scale(const Decimal& d, std::uint64_t multiplier) {
  const unsigned __int128 whole = d.int_part * multiplier;
  const unsigned __int128 frac = (d.frac_num * multiplier + d.frac_den / 2) / d.frac_den;
  const unsigned __int128 total = whole + frac;
  if (total > kInt64Max) return std::nullopt;
  return static_cast<std::int64_t>(total);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::uint64_t> SizeMultiplier(std::string_view suffix) {
  const std::string s = Lower(suffix);
  constexpr std::uint64_t kKi = 1024;
  constexpr std::uint64_t kK = 1000;
  if (s.empty() || s == "b") return 1;
  if (s == "k" || s == "ki" || s == "kib") return kKi;
  if (s == "m" || s == "mi" || s == "mib") return kKi * kKi;
  if (s == "g" || s == "gi" || s == "gib") return kKi * kKi * kKi;
  if (s == "t" || s == "ti" || s == "tib") return kKi * kKi * kKi * kKi;
  if (s == "kb") return kK;
  if (s == "mb") return kK * kK;
  if (s == "gb") return kK * kK * kK;
  if (s == "tb") return kK * kK * kK * kK;
  return std::nullopt;
}

Status BadSize(std::string_view text, std::string_view why) {
  return Status::InvalidArgument(fmt::format("invalid size '{}': {}", text, why));
}

Status BadDuration(std::string_view text, std::string_view why) {
  return Status::InvalidArgument(fmt::format("invalid duration '{}': {}", text, why));
}

}  // namespace

Result<std::int64_t> ParseSize(std::string_view text) {
  std::string_view rest = TrimSpaces(text);
  if (rest.empty()) return BadSize(text, "empty");
  if (rest.front() == '-') return BadSize(text, "negative");
  if (rest.front() == '+') rest.remove_prefix(1);
  std::optional<Decimal> number = ParseDecimal(&rest);
  if (!number) return BadSize(text, "expected a number such as 128MiB, 1.5GB or 4096");
  const std::string_view suffix = TrimSpaces(rest);
  std::optional<std::uint64_t> multiplier = SizeMultiplier(suffix);
  if (!multiplier) {
    return BadSize(text, fmt::format("unknown unit '{}' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, "
                                     "TB, or k, M, G, T for binary units)",
                                     suffix));
  }
  std::optional<std::int64_t> bytes = Scale(*number, *multiplier);
  if (!bytes) return BadSize(text, "too large");
  return *bytes;
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string_view rest = TrimSpaces(text);
  if (rest.empty()) return BadDuration(text, "empty");
  if (rest.front() == '-') return BadDuration(text, "negative");
  if (rest == "0") return std::chrono::milliseconds(0);
  std::int64_t total_ms = 0;
  while (!rest.empty()) {
    std::optional<Decimal> number = ParseDecimal(&rest);
    if (!number) return BadDuration(text, "expected <number><unit> parts such as 1h30m or 90s");
    std::size_t unit_len = 0;
    while (unit_len < rest.size() && std::isalpha(static_cast<unsigned char>(rest[unit_len]))) {
      ++unit_len;
    }
    const std::string unit = Lower(rest.substr(0, unit_len));
    rest.remove_prefix(unit_len);
    std::uint64_t ms_per_unit = 0;
    if (unit == "ms") {
      ms_per_unit = 1;
    } else if (unit == "s") {
      ms_per_unit = 1000;
    } else if (unit == "m") {
      ms_per_unit = 60'000;
    } else if (unit == "h") {
      ms_per_unit = 3'600'000;
    } else if (unit == "d") {
      ms_per_unit = 86'400'000;
    } else if (unit == "w") {
      ms_per_unit = 7 * 86'400'000ull;
    } else if (unit.empty()) {
      return BadDuration(text, "missing unit (ms, s, m, h, d or w)");
    } else {
      return BadDuration(text, fmt::format("unknown unit '{}' (use ms, s, m, h, d or w)", unit));
    }
    std::optional<std::int64_t> part_ms = Scale(*number, ms_per_unit);
    if (!part_ms || *part_ms > std::numeric_limits<std::int64_t>::max() - total_ms) {
      return BadDuration(text, "too large");
    }
    total_ms += *part_ms;
  }
  return std::chrono::milliseconds(total_ms);
}

std::string FormatSize(std::int64_t bytes) {
  if (bytes < 0) {
    // -INT64_MIN overflows; the magnitude of INT64_MIN is printed via unsigned arithmetic.
    const std::uint64_t magnitude = ~static_cast<std::uint64_t>(bytes) + 1;
    if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return "-8.0 EiB";
    }
    // fmt rather than "-" + string: g++ 12 -O3 raises a false -Wrestrict on the latter.
    return fmt::format("-{}", FormatSize(static_cast<std::int64_t>(magnitude)));
  }
  static constexpr std::array<const char*, 7> kUnits = {"B",   "KiB", "MiB", "GiB",
                                                        "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  std::size_t unit_idx = 0;
  while (value >= 1024.0 && unit_idx + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit_idx;
  }
  // Rounding 1023.96 KiB to "1024 KiB" would read oddly; promote to the next unit.
  if (value >= 1023.95 && unit_idx + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit_idx;
  }
  if (value >= 100.0) return fmt::format("{:.0f} {}", value, kUnits[unit_idx]);
  return fmt::format("{:.1f} {}", value, kUnits[unit_idx]);
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  std::int64_t ms = duration.count();
  if (ms < 0) {
    if (ms == std::numeric_limits<std::int64_t>::min()) ++ms;  // keep the negation defined
    return fmt::format("-{}", FormatDuration(std::chrono::milliseconds(-ms)));
  }
  if (ms < 1000) return fmt::format("{}ms", ms);
  if (ms < 60'000) {
    std::string out = fmt::format("{}.{:03}", ms / 1000, ms % 1000);
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
    return out + "s";
  }
  const std::int64_t total_s = ms / 1000;
  const std::int64_t days = total_s / 86'400;
  const std::int64_t hours = total_s / 3600 % 24;
  const std::int64_t minutes = total_s / 60 % 60;
  const std::int64_t seconds = total_s % 60;
  if (days > 0) return fmt::format("{}d{:02}h", days, hours);
  if (hours > 0) return fmt::format("{}h{:02}m", hours, minutes);
  return fmt::format("{}m{:02}s", minutes, seconds);
}

}  // namespace geolake
