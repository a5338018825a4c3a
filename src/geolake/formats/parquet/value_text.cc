#include "geolake/formats/parquet/value_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "geolake/core/civil_time.h"
#include "geolake/core/hex.h"
#include "geolake/core/little_endian.h"

namespace geolake::parquet {
namespace {

using parquet::ConvertedType;
using parquet::LogicalType;
using parquet::PhysicalType;
using parquet::TimeUnit;
using Kind = LogicalType::Kind;

Kind KindOf(const parquet::LeafColumn& leaf) {
  return leaf.logical_type ? leaf.logical_type->kind : Kind::kUnrecognized;
}

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Dates are core/civil_time.h's text, the one query's CSV prints too.
std::string DateText(std::int64_t days) { return CivilDateText(days); }

// Time of day from a count of `per_second` units, with the fraction only when non-zero.
std::string TimeOfDayText(std::int64_t units_of_day, std::int64_t per_second, int digits) {
  const std::int64_t secs = units_of_day / per_second;
  const std::int64_t frac = units_of_day % per_second;
  char buf[48];
  int n =
      std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld", static_cast<long long>(secs / 3600),
                    static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  if (frac != 0) {
    std::snprintf(buf + n, sizeof(buf) - static_cast<std::size_t>(n), ".%0*lld", digits,
                  static_cast<long long>(frac));
  }
  return buf;
}

std::string TimestampText(std::int64_t value, TimeUnit unit, bool utc) {
  const std::int64_t per_second = unit == TimeUnit::kMillis   ? 1000
                                  : unit == TimeUnit::kMicros ? 1000000
                                                              : 1000000000;
  const int digits = unit == TimeUnit::kMillis ? 3 : unit == TimeUnit::kMicros ? 6 : 9;
  const std::int64_t per_day = per_second * 86400;
  const std::int64_t days = FloorDiv(value, per_day);
  const std::int64_t of_day = value - days * per_day;
  return DateText(days) + "T" + TimeOfDayText(of_day, per_second, digits) + (utc ? "Z" : "");
}

std::string NumberText(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

ValueText FloatingText(double v) {
  if (!std::isfinite(v)) return {"null", false};
  return {NumberText(v), false};
}

// An unscaled integer with `scale` digits after the point.
std::string ScaledText(__int128 unscaled, int scale) {
  const bool negative = unscaled < 0;
  unsigned __int128 magnitude =
      negative ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1 : unscaled;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) {
      digits.insert(0, static_cast<std::size_t>(scale) + 1 - digits.size(), '0');
    }
    digits.insert(digits.size() - static_cast<std::size_t>(scale), ".");
  }
  return negative ? "-" + digits : digits;
}

// Big-endian two's complement bytes (DECIMAL on BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY).
bool BigEndianToInt128(std::string_view bytes, __int128* out) {
  if (bytes.empty() || bytes.size() > 16) return false;
  __int128 v = (static_cast<unsigned char>(bytes[0]) & 0x80) != 0 ? -1 : 0;
  for (char c : bytes) v = (v << 8) | static_cast<unsigned char>(c);
  *out = v;
  return true;
}

ValueText IntegerText(const parquet::LeafColumn& leaf, std::int64_t v, bool is_int32) {
  const Kind kind = KindOf(leaf);
  const LogicalType* lt = leaf.logical_type ? &*leaf.logical_type : nullptr;
  switch (kind) {
    case Kind::kDate:
      return {DateText(v), true};
    case Kind::kTimestamp:
      return {TimestampText(v, lt->unit, lt->is_adjusted_to_utc), true};
    case Kind::kTime: {
      const std::int64_t per_second = lt->unit == TimeUnit::kMillis   ? 1000
                                      : lt->unit == TimeUnit::kMicros ? 1000000
                                                                      : 1000000000;
      const int digits = lt->unit == TimeUnit::kMillis ? 3 : lt->unit == TimeUnit::kMicros ? 6 : 9;
      return {TimeOfDayText(v, per_second, digits), true};
    }
    case Kind::kDecimal:
      return {ScaledText(v, lt->scale), false};
    case Kind::kInteger:
      if (!lt->is_signed) {
        const std::uint64_t u =
            is_int32 ? static_cast<std::uint32_t>(v) : static_cast<std::uint64_t>(v);
        return {std::to_string(u), false};
      }
      break;
    default:
      break;
  }
  return {std::to_string(v), false};
}

ValueText BytesText(const parquet::LeafColumn& leaf, std::string_view bytes) {
  const Kind kind = KindOf(leaf);
  if (kind == Kind::kDecimal) {
    __int128 unscaled = 0;
    if (BigEndianToInt128(bytes, &unscaled)) {
      return {ScaledText(unscaled, leaf.logical_type->scale), false};
    }
  }
  if (kind == Kind::kUuid && bytes.size() == 16) {
    return {UuidText(bytes), true};
  }
  if (IsTextLeaf(leaf)) return {std::string(bytes), true};
  return {HexEncode(bytes), true};
}

// INT96: nanoseconds of the day (8 bytes LE) then the Julian day (4 bytes LE).
ValueText Int96Text(std::string_view bytes) {
  if (bytes.size() != 12) return {HexEncode(bytes), true};
  const auto nanos = LoadLE<std::int64_t>(bytes.data());
  const auto julian = LoadLE<std::int32_t>(bytes.data() + 8);
  constexpr std::int64_t kUnixEpochJulianDay = 2440588;
  constexpr std::int64_t kNanosPerDay = 86400LL * 1000000000LL;
  // Writers may store nanoseconds outside [0, one day), negative ones included: the instant is
  // day + nanoseconds, so carry whole days over before printing.
  const std::int64_t days =
      static_cast<std::int64_t>(julian) - kUnixEpochJulianDay + FloorDiv(nanos, kNanosPerDay);
  const std::int64_t of_day = nanos - FloorDiv(nanos, kNanosPerDay) * kNanosPerDay;
  return {DateText(days) + "T" + TimeOfDayText(of_day, 1000000000, 9), true};
}

}  // namespace

bool IsTextLeaf(const parquet::LeafColumn& leaf) {
  const Kind kind = KindOf(leaf);
  if (kind == Kind::kString || kind == Kind::kEnum || kind == Kind::kJson) return true;
  return !leaf.logical_type && leaf.converted_type &&
         (*leaf.converted_type == ConvertedType::kUtf8 ||
          *leaf.converted_type == ConvertedType::kEnum ||
          *leaf.converted_type == ConvertedType::kJson);
}

ValueText LeafValueText(const parquet::LeafColumn& leaf, const parquet::ColumnData& column,
                        std::int64_t value_idx) {
  const auto i = static_cast<std::size_t>(value_idx);
  switch (column.type) {
    case PhysicalType::kBoolean:
      return {column.bool_values[i] != 0 ? "true" : "false", false};
    case PhysicalType::kInt32:
      return IntegerText(leaf, column.int32_values[i], /*is_int32=*/true);
    case PhysicalType::kInt64:
      return IntegerText(leaf, column.int64_values[i], /*is_int32=*/false);
    case PhysicalType::kFloat:
      return FloatingText(column.float_values[i]);
    case PhysicalType::kDouble:
      return FloatingText(column.double_values[i]);
    case PhysicalType::kInt96:
      return Int96Text(column.bytes_at(value_idx));
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      return BytesText(leaf, column.bytes_at(value_idx));
  }
  return {"null", false};
}

ValueText PlainValueText(const parquet::LeafColumn& leaf, std::string_view plain) {
  const auto fixed = [&](std::size_t width) { return plain.size() == width; };
  switch (leaf.physical_type) {
    case PhysicalType::kBoolean:
      if (fixed(1)) return {plain[0] != 0 ? "true" : "false", false};
      break;
    case PhysicalType::kInt32:
      if (fixed(4)) {
        const auto v = LoadLE<std::int32_t>(plain.data());
        return IntegerText(leaf, v, /*is_int32=*/true);
      }
      break;
    case PhysicalType::kInt64:
      if (fixed(8)) {
        const auto v = LoadLE<std::int64_t>(plain.data());
        return IntegerText(leaf, v, /*is_int32=*/false);
      }
      break;
    case PhysicalType::kFloat:
      if (fixed(4)) {
        const auto v = LoadLE<float>(plain.data());
        return FloatingText(v);
      }
      break;
    case PhysicalType::kDouble:
      if (fixed(8)) {
        const auto v = LoadLE<double>(plain.data());
        return FloatingText(v);
      }
      break;
    case PhysicalType::kInt96:
      return Int96Text(plain);
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      return BytesText(leaf, plain);
  }
  return {HexEncode(plain), true};
}

std::string JsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: copied when well-formed (no overlongs, surrogates or > U+10FFFF).
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (ok) {
      ok = !(len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) &&
           !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF));
    }
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace geolake::parquet
