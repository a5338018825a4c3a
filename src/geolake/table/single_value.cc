#include "geolake/table/single_value.h"

#include <bit>
#include <cstring>

#include "geolake/core/hex.h"
#include "geolake/core/little_endian.h"

namespace geolake::table {

namespace {

static_assert(std::endian::native == std::endian::little,
              "single-value serialization below assumes a little-endian host");

template <typename T>
std::string LittleEndian(T v) {
  std::string out;
  AppendLE(v, &out);
  return out;
}

// Callers check the width first.
template <typename T>
T ReadLittleEndian(std::string_view bytes) {
  return LoadLE<T>(bytes.data());
}

constexpr std::int64_t kMicrosPerDay = 86'400'000'000LL;

// Days since 1970-01-01 to a civil date (proleptic Gregorian); H. Hinnant's algorithm.
void CivilFromDays(std::int64_t days, std::int64_t* y, unsigned* m, unsigned* d) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<std::int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::string Pad(std::int64_t v, int width) {
  std::string s = std::to_string(v < 0 ? -v : v);
  if (static_cast<int>(s.size()) < width) s.insert(0, width - s.size(), '0');
  return v < 0 ? "-" + s : s;
}

std::string DateString(std::int64_t days) {
  std::int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  return Pad(y, 4) + "-" + Pad(m, 2) + "-" + Pad(d, 2);
}

std::string TimeOfDayString(std::int64_t sub_units, int digits, std::int64_t units_per_second) {
  const std::int64_t secs = sub_units / units_per_second;
  const std::int64_t frac = sub_units % units_per_second;
  return Pad(secs / 3600, 2) + ":" + Pad((secs / 60) % 60, 2) + ":" + Pad(secs % 60, 2) + "." +
         Pad(frac, digits);
}

std::string TimestampString(std::int64_t v, std::int64_t units_per_second, int digits) {
  const std::int64_t units_per_day = units_per_second * 86400;
  const std::int64_t days = FloorDiv(v, units_per_day);
  return DateString(days) + "T" +
         TimeOfDayString(v - days * units_per_day, digits, units_per_second);
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  // Work on the unsigned magnitude so that the minimum value does not overflow.
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v)  // NOLINT
                                 : static_cast<unsigned __int128>(v);  // NOLINT
  std::string s;
  while (u != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (negative) s.push_back('-');
  return {s.rbegin(), s.rend()};
}

Status Mismatch(const Type& type) {
  return Status::InvalidArgument("value does not match type " + type.ToString());
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Iceberg float order: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < NaN. Sign-aware NaN
// ordering is not needed for bounds (NaN is never a bound); NaN sorts last.
template <typename F>
int CmpFloat(F a, F b) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  if (a == b) {
    const bool sa = std::signbit(a), sb = std::signbit(b);
    return sa == sb ? 0 : (sa ? -1 : 1);
  }
  return a < b ? -1 : 1;
}

}  // namespace

bool BoundPoint::operator==(const BoundPoint& o) const {
  auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  return same(x, o.x) && same(y, o.y) && same(z, o.z) && same(m, o.m);
}

std::string UuidValue::ToString() const {
  return UuidText(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Result<UuidValue> UuidValue::FromString(std::string_view text) {
  UuidValue out;
  std::size_t n = 0;
  if (text.size() != 36)
    return Status::InvalidArgument("malformed uuid '" + std::string(text) + "'");
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-')
        return Status::InvalidArgument("malformed uuid '" + std::string(text) + "'");
      continue;
    }
    const int v = HexDigitValue(text[i]);
    if (v < 0) return Status::InvalidArgument("malformed uuid '" + std::string(text) + "'");
    if (n % 2 == 0) {
      out.bytes[n / 2] = static_cast<std::uint8_t>(v << 4);
    } else {
      out.bytes[n / 2] |= static_cast<std::uint8_t>(v);
    }
    ++n;
  }
  return out;
}

Status CheckValueType(const Type& type, const Value& value) {
  if (IsNull(value)) return Status::OK();
  const bool ok = VisitValueAlternative(type.id(), [&](auto alternative) {
    using T = typename decltype(alternative)::type;
    if constexpr (std::is_void_v<T>) {
      return false;
    } else if constexpr (std::is_same_v<T, Bytes>) {
      return std::holds_alternative<Bytes>(value) &&
             (type.id() != TypeId::kFixed ||
              std::get<Bytes>(value).size() == static_cast<std::size_t>(type.length()));
    } else {
      return std::holds_alternative<T>(value);
    }
  });
  return ok ? Status::OK() : Mismatch(type);
}

Result<std::string> SerializeValue(const Type& type, const Value& value) {
  if (IsNull(value)) {
    return Status::InvalidArgument("cannot serialize a null " + type.ToString());
  }
  GEOLAKE_RETURN_NOT_OK(CheckValueType(type, value));
  return VisitValueAlternative(type.id(), [&](auto alternative) -> Result<std::string> {
    using T = typename decltype(alternative)::type;
    if constexpr (std::is_void_v<T>) {
      return Status::InvalidArgument("type " + type.ToString() +
                                     " has no single-value serialization");
    } else if constexpr (std::is_same_v<T, bool>) {
      return std::string(1, std::get<bool>(value) ? '\x01' : '\x00');
    } else if constexpr (std::is_arithmetic_v<T>) {
      return LittleEndian(std::get<T>(value));
    } else if constexpr (std::is_same_v<T, std::string>) {
      return std::get<std::string>(value);
    } else if constexpr (std::is_same_v<T, Bytes>) {
      const Bytes& b = std::get<Bytes>(value);
      return std::string(b.begin(), b.end());
    } else if constexpr (std::is_same_v<T, UuidValue>) {
      const auto& b = std::get<UuidValue>(value).bytes;
      return std::string(b.begin(), b.end());
    } else if constexpr (std::is_same_v<T, DecimalValue>) {
      const Int128 v = std::get<DecimalValue>(value).unscaled;
      std::string be(16, '\0');
      for (int i = 0; i < 16; ++i) {
        be[15 - i] = static_cast<char>(static_cast<std::uint8_t>(v >> (8 * i)));
      }
      // Drop leading bytes that only repeat the sign: 0x00 before a byte whose top bit is 0,
      // 0xFF before one whose top bit is 1. At least one byte remains (0 -> 00).
      std::size_t start = 0;
      while (start < 15) {
        const auto b0 = static_cast<std::uint8_t>(be[start]);
        const auto b1 = static_cast<std::uint8_t>(be[start + 1]);
        if ((b0 == 0x00 && (b1 & 0x80) == 0) || (b0 == 0xFF && (b1 & 0x80) != 0)) {
          ++start;
        } else {
          break;
        }
      }
      return be.substr(start);
    } else {
      static_assert(std::is_same_v<T, BoundPoint>);
      const BoundPoint& p = std::get<BoundPoint>(value);
      const bool has_z = !std::isnan(p.z), has_m = !std::isnan(p.m);
      std::string out = LittleEndian(p.x) + LittleEndian(p.y);
      // x:y:NaN:m when there is an m but no z, so that m always sits in the 4th slot.
      if (has_z || has_m) out += LittleEndian(p.z);
      if (has_m) out += LittleEndian(p.m);
      return out;
    }
  });
}

Result<Value> DeserializeValue(const Type& type, std::string_view bytes) {
  auto wrong_length = [&]() {
    return Status::CorruptData(type.ToString() + " bound has " + std::to_string(bytes.size()) +
                               " bytes");
  };
  switch (type.id()) {
    case TypeId::kBoolean:
      if (bytes.size() != 1) return wrong_length();
      return Value(bytes[0] != 0);
    case TypeId::kInt:
    case TypeId::kDate:
      if (bytes.size() != 4) return wrong_length();
      return Value(ReadLittleEndian<std::int32_t>(bytes));
    case TypeId::kLong:
    case TypeId::kTime:
      if (bytes.size() == 4 && type.id() == TypeId::kLong) {
        return Value(static_cast<std::int64_t>(ReadLittleEndian<std::int32_t>(bytes)));
      }
      if (bytes.size() != 8) return wrong_length();
      return Value(ReadLittleEndian<std::int64_t>(bytes));
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (bytes.size() == 4) {  // promoted from date: days since epoch
        const std::int64_t days = ReadLittleEndian<std::int32_t>(bytes);
        const bool nanos = type.id() == TypeId::kTimestampNs || type.id() == TypeId::kTimestampTzNs;
        return Value(days * kMicrosPerDay * (nanos ? 1000 : 1));
      }
      if (bytes.size() != 8) return wrong_length();
      return Value(ReadLittleEndian<std::int64_t>(bytes));
    case TypeId::kFloat:
      if (bytes.size() != 4) return wrong_length();
      return Value(ReadLittleEndian<float>(bytes));
    case TypeId::kDouble:
      if (bytes.size() == 4) return Value(static_cast<double>(ReadLittleEndian<float>(bytes)));
      if (bytes.size() != 8) return wrong_length();
      return Value(ReadLittleEndian<double>(bytes));
    case TypeId::kString:
      return Value(std::string(bytes));
    case TypeId::kBinary:
      return Value(Bytes(bytes.begin(), bytes.end()));
    case TypeId::kFixed:
      if (bytes.size() != static_cast<std::size_t>(type.length())) return wrong_length();
      return Value(Bytes(bytes.begin(), bytes.end()));
    case TypeId::kUuid: {
      if (bytes.size() != 16) return wrong_length();
      UuidValue u;
      std::memcpy(u.bytes.data(), bytes.data(), 16);
      return Value(u);
    }
    case TypeId::kDecimal: {
      if (bytes.empty() || bytes.size() > 16) return wrong_length();
      // Sign-extend from the first byte, then shift in the rest big-endian.
      Int128 v = static_cast<std::uint8_t>(bytes[0]);
      if (v >= 128) v -= 256;
      for (std::size_t i = 1; i < bytes.size(); ++i) {
        v = static_cast<Int128>(static_cast<unsigned __int128>(v) << 8) |  // NOLINT
            static_cast<std::uint8_t>(bytes[i]);
      }
      return Value(DecimalValue{v});
    }
    case TypeId::kGeometry:
    case TypeId::kGeography: {
      if (bytes.size() != 16 && bytes.size() != 24 && bytes.size() != 32) return wrong_length();
      BoundPoint p;
      p.x = ReadLittleEndian<double>(bytes);
      p.y = ReadLittleEndian<double>(bytes.substr(8));
      if (bytes.size() >= 24) p.z = ReadLittleEndian<double>(bytes.substr(16));
      if (bytes.size() == 32) p.m = ReadLittleEndian<double>(bytes.substr(24));
      return Value(p);
    }
    default:
      return Status::InvalidArgument("type " + type.ToString() +
                                     " has no single-value serialization");
  }
}

std::string ValueToString(const Type& type, const Value& value) {
  if (IsNull(value)) return "null";
  if (!CheckValueType(type, value).ok()) return "<mismatched " + type.ToString() + ">";
  switch (type.id()) {
    case TypeId::kBoolean:
      return std::get<bool>(value) ? "true" : "false";
    case TypeId::kInt:
      return std::to_string(std::get<std::int32_t>(value));
    case TypeId::kDate:
      return DateString(std::get<std::int32_t>(value));
    case TypeId::kLong:
      return std::to_string(std::get<std::int64_t>(value));
    case TypeId::kTime:
      return TimeOfDayString(std::get<std::int64_t>(value), 6, 1'000'000);
    case TypeId::kTimestamp:
      return TimestampString(std::get<std::int64_t>(value), 1'000'000, 6);
    case TypeId::kTimestampTz:
      return TimestampString(std::get<std::int64_t>(value), 1'000'000, 6) + "+00:00";
    case TypeId::kTimestampNs:
      return TimestampString(std::get<std::int64_t>(value), 1'000'000'000, 9);
    case TypeId::kTimestampTzNs:
      return TimestampString(std::get<std::int64_t>(value), 1'000'000'000, 9) + "+00:00";
    case TypeId::kFloat: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(std::get<float>(value)));
      return buf;
    }
    case TypeId::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", std::get<double>(value));
      return buf;
    }
    case TypeId::kString:
      return std::get<std::string>(value);
    case TypeId::kBinary:
    case TypeId::kFixed: {
      const Bytes& b = std::get<Bytes>(value);
      return HexEncode(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
    }
    case TypeId::kUuid:
      return std::get<UuidValue>(value).ToString();
    case TypeId::kDecimal: {
      const Int128 v = std::get<DecimalValue>(value).unscaled;
      std::string digits = Int128ToString(v < 0 ? -v : v);
      const auto scale = static_cast<std::size_t>(type.scale());
      if (scale > 0) {
        if (digits.size() <= scale) digits.insert(0, scale - digits.size() + 1, '0');
        digits.insert(digits.size() - scale, ".");
      }
      return v < 0 ? "-" + digits : digits;
    }
    case TypeId::kGeometry:
    case TypeId::kGeography: {
      const BoundPoint& p = std::get<BoundPoint>(value);
      char buf[128];
      std::snprintf(buf, sizeof(buf), "%.17g:%.17g:%.17g:%.17g", p.x, p.y, p.z, p.m);
      return buf;
    }
    default:
      return "<" + type.ToString() + ">";
  }
}

Result<int> CompareValues(const Type& type, const Value& a, const Value& b) {
  if (IsNull(a) || IsNull(b) || a.index() != b.index()) {
    return Status::InvalidArgument("cannot compare values of " + type.ToString());
  }
  GEOLAKE_RETURN_NOT_OK(CheckValueType(type, a));
  return VisitValueAlternative(type.id(), [&](auto alternative) -> Result<int> {
    using T = typename decltype(alternative)::type;
    if constexpr (std::is_void_v<T> || std::is_same_v<T, BoundPoint>) {
      return Status::InvalidArgument("type " + type.ToString() + " has no value order");
    } else if constexpr (std::is_floating_point_v<T>) {
      return CmpFloat(std::get<T>(a), std::get<T>(b));
    } else if constexpr (std::is_same_v<T, std::string>) {
      // Unsigned byte order of UTF-8 equals code point order.
      const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    } else if constexpr (std::is_same_v<T, UuidValue>) {
      return Cmp(std::get<UuidValue>(a).bytes, std::get<UuidValue>(b).bytes);
    } else if constexpr (std::is_same_v<T, DecimalValue>) {
      return Cmp(std::get<DecimalValue>(a).unscaled, std::get<DecimalValue>(b).unscaled);
    } else {
      return Cmp(std::get<T>(a), std::get<T>(b));
    }
  });
}

}  // namespace geolake::table
