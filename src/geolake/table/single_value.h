/// \file
/// Values of Iceberg primitive types and their binary single-value serialization (Iceberg spec
/// Appendix D), which manifests use for lower/upper bounds and partition
/// summaries. A Value alone does not say its Iceberg type; the Type passed alongside does
/// (an int32 may be an int or a date, an int64 a long, time or timestamp).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/table/types.h"

namespace geolake::table {

/// Signed 128-bit integer: the unscaled value of a decimal (precision <= 38 fits).
using Int128 = __int128;  // NOLINT: GCC/Clang extension, used only as a value type.

/// \brief A decimal's unscaled value; the scale comes from the decimal type.
struct DecimalValue {
  Int128 unscaled = 0;
  bool operator==(const DecimalValue&) const = default;
};

/// \brief A UUID as its 16 bytes in big-endian (RFC 4122 text) order.
struct UuidValue {
  std::array<std::uint8_t, 16> bytes{};
  bool operator==(const UuidValue&) const = default;
  /// \brief Lower-case "8-4-4-4-12" text.
  std::string ToString() const;
  /// \brief Parse "8-4-4-4-12" hex text (either case); kInvalidArgument otherwise.
  static Result<UuidValue> FromString(std::string_view text);
};

/// \brief A geometry/geography bound (v3): one point x:y[:z][:m]; z or m NaN = absent.
struct BoundPoint {
  double x = 0;
  double y = 0;
  double z = std::numeric_limits<double>::quiet_NaN();
  double m = std::numeric_limits<double>::quiet_NaN();
  bool operator==(const BoundPoint& o) const;
};

/// \brief Raw bytes of binary and fixed values.
using Bytes = std::vector<std::uint8_t>;

/// \brief One value of a primitive type, or null (monostate).
///
/// Alternatives by Iceberg type: boolean → bool; int, date (days) → int32_t; long, time (µs),
/// timestamp/timestamptz (µs), timestamp_ns/timestamptz_ns (ns) → int64_t; float; double;
/// string (UTF-8) → std::string; binary, fixed → Bytes; decimal → DecimalValue; uuid →
/// UuidValue; geometry/geography bounds → BoundPoint.
using Value = std::variant<std::monostate, bool, std::int32_t, std::int64_t, float, double,
                           std::string, Bytes, DecimalValue, UuidValue, BoundPoint>;

inline bool IsNull(const Value& v) { return std::holds_alternative<std::monostate>(v); }

/// \brief Call `fn(std::type_identity<T>{})` with T the Value alternative of type `id` (the
/// mapping above), or with std::type_identity<void> for a type without single values
/// (unknown, variant, struct, list, map); return what `fn` returns (the same type for every T).
/// The one switch from TypeId to storage: code that handles values by their alternative visits
/// instead of repeating the grouping of ids.
template <typename Fn>
decltype(auto) VisitValueAlternative(TypeId id, Fn&& fn) {
  switch (id) {
    case TypeId::kBoolean:
      return fn(std::type_identity<bool>{});
    case TypeId::kInt:
    case TypeId::kDate:
      return fn(std::type_identity<std::int32_t>{});
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return fn(std::type_identity<std::int64_t>{});
    case TypeId::kFloat:
      return fn(std::type_identity<float>{});
    case TypeId::kDouble:
      return fn(std::type_identity<double>{});
    case TypeId::kString:
      return fn(std::type_identity<std::string>{});
    case TypeId::kBinary:
    case TypeId::kFixed:
      return fn(std::type_identity<Bytes>{});
    case TypeId::kDecimal:
      return fn(std::type_identity<DecimalValue>{});
    case TypeId::kUuid:
      return fn(std::type_identity<UuidValue>{});
    case TypeId::kGeometry:
    case TypeId::kGeography:
      return fn(std::type_identity<BoundPoint>{});
    default:
      return fn(std::type_identity<void>{});
  }
}

/// \brief Check that `value` holds the alternative `type` uses (null is always accepted).
Status CheckValueType(const Type& type, const Value& value);

/// \brief Serialize a non-null value per Appendix D: ints/floats little-endian, strings UTF-8
/// without length, uuid 16 bytes big-endian, decimal as the minimal big-endian two's
/// complement of the unscaled value, bound points as 2-4 little-endian doubles.
/// kInvalidArgument for null, a mismatched alternative, or a nested/variant/unknown type.
Result<std::string> SerializeValue(const Type& type, const Value& value);

/// \brief Decode single-value bytes of `type`. Bounds written before a type promotion are
/// accepted by length: 4 bytes for a long (was int), a double (was float) or a timestamp (was
/// a date, converted to µs or ns). kCorruptData for a wrong length.
Result<Value> DeserializeValue(const Type& type, std::string_view bytes);

/// \brief A readable rendering for logs and tests: "42", "2017-11-16", "12.34", hex for bytes.
std::string ValueToString(const Type& type, const Value& value);

/// \brief Compare two non-null values of the same type (-1, 0, 1) in Iceberg's order: signed
/// numbers, −0.0 before +0.0 with NaN last, strings and bytes unsigned lexicographically.
/// kInvalidArgument when the alternatives differ or the type has no order (geo, nested).
Result<int> CompareValues(const Type& type, const Value& a, const Value& b);

}  // namespace geolake::table
