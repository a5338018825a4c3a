#include "geolake/table/partition_spec.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <set>

#include "geolake/core/little_endian.h"
#include "geolake/table/json_internal.h"

namespace geolake::table {

namespace {

constexpr std::int64_t kMicrosPerHour = 3'600'000'000LL;
constexpr std::int64_t kMicrosPerDay = 86'400'000'000LL;

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Days since 1970-01-01 to (year, month 1..12), proleptic Gregorian (H. Hinnant's algorithm).
void YearMonthFromDays(std::int64_t days, std::int64_t* y, unsigned* m) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<std::int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

std::uint32_t Rotl32(std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// MurmurHash3 x86 32-bit, seed 0 (Iceberg spec Appendix B).
std::int32_t Murmur3(std::string_view data) {
  constexpr std::uint32_t kC1 = 0xcc9e2d51, kC2 = 0x1b873593;
  std::uint32_t h = 0;
  const std::size_t blocks = data.size() / 4;
  for (std::size_t i = 0; i < blocks; ++i) {
    auto k = LoadLE<std::uint32_t>(data.data() + i * 4);
    k *= kC1;
    k = Rotl32(k, 15);
    k *= kC2;
    h ^= k;
    h = Rotl32(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  const std::size_t tail_len = data.size() & 3;
  if (tail_len != 0) {
    std::uint32_t k = 0;
    const auto* tail = reinterpret_cast<const std::uint8_t*>(data.data() + blocks * 4);
    for (std::size_t i = 0; i < tail_len; ++i) k |= static_cast<std::uint32_t>(tail[i]) << (8 * i);
    k *= kC1;
    k = Rotl32(k, 15);
    k *= kC2;
    h ^= k;
  }
  h ^= static_cast<std::uint32_t>(data.size());
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return static_cast<std::int32_t>(h);
}

std::string Long8(std::int64_t v) {
  std::string out;
  AppendLE(v, &out);
  return out;
}

bool IsTimestamp(TypeId id) {
  return id == TypeId::kTimestamp || id == TypeId::kTimestampTz || id == TypeId::kTimestampNs ||
         id == TypeId::kTimestampTzNs;
}
bool IsNanos(TypeId id) { return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs; }

Status CannotTransform(const Transform& t, const Type& source) {
  return Status::InvalidArgument("transform '" + t.ToString() + "' cannot be applied to " +
                                 source.ToString());
}

// Floor of v to a multiple of w (Iceberg truncate on integers).
template <typename T>
T TruncateInt(T v, T w) {
  return v - (((v % w) + w) % w);
}

}  // namespace

Transform Transform::Bucket(std::int32_t num_buckets) {
  return Transform(TransformKind::kBucket, num_buckets,
                   "bucket[" + std::to_string(num_buckets) + "]");
}

Transform Transform::Truncate(std::int32_t width) {
  return Transform(TransformKind::kTruncate, width, "truncate[" + std::to_string(width) + "]");
}

Transform Transform::Parse(std::string_view text) {
  std::string lower;
  for (char c : text)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "identity") return Identity();
  if (lower == "void" || lower == "alwaysnull") return Void();
  if (lower == "year") return Year();
  if (lower == "month") return Month();
  if (lower == "day") return Day();
  if (lower == "hour") return Hour();
  auto parse_param = [&](std::string_view prefix, std::int32_t* out) {
    if (lower.size() <= prefix.size() + 1 || lower.compare(0, prefix.size(), prefix) != 0 ||
        lower[prefix.size()] != '[' || lower.back() != ']') {
      return false;
    }
    const char* begin = lower.data() + prefix.size() + 1;
    const char* end = lower.data() + lower.size() - 1;
    auto [ptr, ec] = std::from_chars(begin, end, *out);
    return ec == std::errc() && ptr == end && *out > 0;
  };
  std::int32_t param = 0;
  if (parse_param("bucket", &param)) return Bucket(param);
  if (parse_param("truncate", &param)) return Truncate(param);
  return Transform(TransformKind::kUnknown, 0, std::string(text));
}

Result<TypePtr> Transform::ResultType(const TypePtr& source_ptr) const {
  const Type& source = *source_ptr;
  const TypeId id = source.id();
  const bool geo_or_nested = source.is_nested() || id == TypeId::kGeometry ||
                             id == TypeId::kGeography || id == TypeId::kVariant;
  switch (kind_) {
    case TransformKind::kIdentity:
      if (geo_or_nested) return CannotTransform(*this, source);
      return source_ptr;
    case TransformKind::kVoid:
      return source_ptr;
    case TransformKind::kBucket:
      switch (id) {
        case TypeId::kInt:
        case TypeId::kLong:
        case TypeId::kDecimal:
        case TypeId::kDate:
        case TypeId::kTime:
        case TypeId::kTimestamp:
        case TypeId::kTimestampTz:
        case TypeId::kTimestampNs:
        case TypeId::kTimestampTzNs:
        case TypeId::kString:
        case TypeId::kUuid:
        case TypeId::kFixed:
        case TypeId::kBinary:
          return Type::Int();
        default:
          return CannotTransform(*this, source);
      }
    case TransformKind::kTruncate:
      switch (id) {
        case TypeId::kInt:
        case TypeId::kLong:
        case TypeId::kDecimal:
        case TypeId::kString:
        case TypeId::kBinary:
          return source_ptr;
        default:
          return CannotTransform(*this, source);
      }
    case TransformKind::kYear:
    case TransformKind::kMonth:
      if (id == TypeId::kDate || IsTimestamp(id)) return Type::Int();
      return CannotTransform(*this, source);
    case TransformKind::kDay:
      if (id == TypeId::kDate || IsTimestamp(id)) return Type::Date();
      return CannotTransform(*this, source);
    case TransformKind::kHour:
      if (IsTimestamp(id)) return Type::Int();
      return CannotTransform(*this, source);
    case TransformKind::kUnknown:
      return Status::NotImplemented("unknown transform '" + text_ + "'");
  }
  return CannotTransform(*this, source);
}

Result<std::int32_t> BucketHash(const Type& source, const Value& value) {
  GEOLAKE_RETURN_NOT_OK(CheckValueType(source, value));
  switch (source.id()) {
    case TypeId::kInt:
    case TypeId::kDate:
      // Java hashes ints as longs, so int and long columns bucket identically.
      return Murmur3(Long8(std::get<std::int32_t>(value)));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return Murmur3(Long8(std::get<std::int64_t>(value)));
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return Murmur3(Long8(FloorDiv(std::get<std::int64_t>(value), 1000)));
    case TypeId::kString:
      return Murmur3(std::get<std::string>(value));
    case TypeId::kBinary:
    case TypeId::kFixed: {
      const Bytes& b = std::get<Bytes>(value);
      return Murmur3(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
    }
    case TypeId::kUuid: {
      const auto& b = std::get<UuidValue>(value).bytes;
      return Murmur3(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
    }
    case TypeId::kDecimal: {
      // Minimal big-endian two's complement of the unscaled value, as in a bound.
      GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, SerializeValue(source, value));
      return Murmur3(bytes);
    }
    default:
      return Status::InvalidArgument("bucket cannot hash " + source.ToString());
  }
}

Result<Value> Transform::Apply(const TypePtr& source_ptr, const Value& value) const {
  const Type& source = *source_ptr;
  GEOLAKE_RETURN_NOT_OK(ResultType(source_ptr).status());
  GEOLAKE_RETURN_NOT_OK(CheckValueType(source, value));
  if (IsNull(value) || kind_ == TransformKind::kVoid) return Value();
  const TypeId id = source.id();
  switch (kind_) {
    case TransformKind::kIdentity:
      return value;
    case TransformKind::kBucket: {
      GEOLAKE_ASSIGN_OR_RETURN(std::int32_t hash, BucketHash(source, value));
      return Value(static_cast<std::int32_t>((hash & 0x7FFFFFFF) % param_));
    }
    case TransformKind::kTruncate:
      switch (id) {
        case TypeId::kInt:
          return Value(TruncateInt<std::int32_t>(std::get<std::int32_t>(value), param_));
        case TypeId::kLong:
          return Value(TruncateInt<std::int64_t>(std::get<std::int64_t>(value), param_));
        case TypeId::kDecimal:
          return Value(
              DecimalValue{TruncateInt<Int128>(std::get<DecimalValue>(value).unscaled, param_)});
        case TypeId::kString: {
          // First W code points: count UTF-8 lead bytes (anything but 10xxxxxx).
          const std::string& s = std::get<std::string>(value);
          std::size_t pos = 0;
          std::int32_t code_points = 0;
          while (pos < s.size()) {
            if ((static_cast<unsigned char>(s[pos]) & 0xC0) != 0x80) {
              if (code_points == param_) break;
              ++code_points;
            }
            ++pos;
          }
          return Value(s.substr(0, pos));
        }
        case TypeId::kBinary: {
          const Bytes& b = std::get<Bytes>(value);
          return Value(Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(
                                                        std::min<std::size_t>(b.size(), param_))));
        }
        default:
          break;
      }
      break;
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kDay:
    case TransformKind::kHour: {
      std::int64_t micros = 0;
      std::int64_t days = 0;
      if (id == TypeId::kDate) {
        days = std::get<std::int32_t>(value);
      } else {
        micros = std::get<std::int64_t>(value);
        if (IsNanos(id)) micros = FloorDiv(micros, 1000);
        days = FloorDiv(micros, kMicrosPerDay);
      }
      if (kind_ == TransformKind::kHour) {
        return Value(static_cast<std::int32_t>(FloorDiv(micros, kMicrosPerHour)));
      }
      if (kind_ == TransformKind::kDay) return Value(static_cast<std::int32_t>(days));
      std::int64_t year;
      unsigned month;
      YearMonthFromDays(days, &year, &month);
      if (kind_ == TransformKind::kYear) return Value(static_cast<std::int32_t>(year - 1970));
      return Value(static_cast<std::int32_t>((year - 1970) * 12 + (month - 1)));
    }
    default:
      break;
  }
  return CannotTransform(*this, source);
}

std::shared_ptr<const PartitionSpec> PartitionSpec::Unpartitioned() {
  static const auto kSpec = std::make_shared<const PartitionSpec>(0, std::vector<PartitionField>{});
  return kSpec;
}

bool PartitionSpec::is_unpartitioned() const {
  return std::all_of(fields_.begin(), fields_.end(), [](const PartitionField& f) {
    return f.transform.kind() == TransformKind::kVoid;
  });
}

std::int32_t PartitionSpec::LastAssignedFieldId() const {
  std::int32_t last = kFirstPartitionFieldId - 1;
  for (const auto& f : fields_) last = std::max(last, f.field_id);
  return last;
}

Result<TypePtr> PartitionSpec::PartitionType(const Schema& schema) const {
  std::vector<NestedField> fields;
  for (const auto& f : fields_) {
    const NestedField* source = schema.FindField(f.source_id);
    if (source == nullptr) {
      return Status::InvalidArgument("partition field '" + f.name + "': source field id " +
                                     std::to_string(f.source_id) + " not in schema");
    }
    auto type = f.transform.ResultType(source->type);
    if (!type.ok()) return std::move(type).status().WithContext("partition field '" + f.name + "'");
    fields.push_back(NestedField::Optional(f.field_id, f.name, *type));
  }
  return Type::Struct(std::move(fields));
}

Status PartitionSpec::Validate(const Schema& schema) const {
  std::set<std::string> names;
  std::set<std::int32_t> ids;
  for (const auto& f : fields_) {
    if (f.field_id < kFirstPartitionFieldId) {
      return Status::InvalidArgument("partition field '" + f.name + "': field id " +
                                     std::to_string(f.field_id) + " is below 1000");
    }
    if (!names.insert(f.name).second || !ids.insert(f.field_id).second) {
      return Status::InvalidArgument("partition field '" + f.name + "' is duplicated");
    }
    if (f.transform.kind() == TransformKind::kUnknown) {
      return Status::InvalidArgument("partition field '" + f.name + "': unknown transform '" +
                                     f.transform.ToString() + "'");
    }
  }
  return PartitionType(schema).status();
}

std::string PartitionSpec::ToJson() const { return internal::PartitionSpecToJson(*this).dump(); }

Result<std::shared_ptr<const PartitionSpec>> PartitionSpec::FromJson(std::string_view json) {
  GEOLAKE_ASSIGN_OR_RETURN(auto parsed, internal::ParseJson(json, "partition spec"));
  return internal::PartitionSpecFromJson(parsed);
}

namespace internal {

Result<std::vector<PartitionField>> PartitionFieldsFromJson(const Json& json) {
  if (!json.is_array()) return Status::CorruptData("partition spec: 'fields' is not an array");
  std::vector<PartitionField> fields;
  // v1 specs may omit field-id; Java then numbers them from 1000 in order.
  std::int32_t next_id = kFirstPartitionFieldId;
  for (const auto& fj : json) {
    PartitionField f;
    GEOLAKE_ASSIGN_OR_RETURN(f.name, GetString(fj, "name", "partition field"));
    const std::string what = "partition field '" + f.name + "'";
    GEOLAKE_ASSIGN_OR_RETURN(std::string transform, GetString(fj, "transform", what));
    f.transform = Transform::Parse(transform);
    if (const Json* ids = Find(fj, "source-ids"); ids != nullptr && ids->is_array()) {
      for (const auto& id : *ids) {
        GEOLAKE_ASSIGN_OR_RETURN(std::int64_t v, AsInt64(id, what + " 'source-ids'"));
        f.source_ids.push_back(static_cast<std::int32_t>(v));
      }
      if (f.source_ids.empty()) return Status::CorruptData(what + ": empty 'source-ids'");
      f.source_id = f.source_ids.front();
      if (f.source_ids.size() == 1) f.source_ids.clear();
    } else {
      GEOLAKE_ASSIGN_OR_RETURN(f.source_id, GetInt32(fj, "source-id", what));
    }
    GEOLAKE_ASSIGN_OR_RETURN(auto field_id, GetOptInt32(fj, "field-id", what));
    f.field_id = field_id.value_or(next_id);
    next_id = std::max(next_id, f.field_id) + 1;
    fields.push_back(std::move(f));
  }
  return fields;
}

Result<std::shared_ptr<const PartitionSpec>> PartitionSpecFromJson(const Json& json) {
  GEOLAKE_ASSIGN_OR_RETURN(std::int32_t spec_id, GetInt32(json, "spec-id", "partition spec"));
  GEOLAKE_ASSIGN_OR_RETURN(const Json* fields_json, Require(json, "fields", "partition spec"));
  auto fields = PartitionFieldsFromJson(*fields_json);
  if (!fields.ok()) {
    return std::move(fields).status().WithContext("partition spec " + std::to_string(spec_id));
  }
  return std::make_shared<const PartitionSpec>(spec_id, std::move(*fields));
}

Json PartitionFieldsToJson(const PartitionSpec& spec) {
  Json fields = Json::array();
  for (const auto& f : spec.fields()) {
    Json fj = Json::object();
    fj["name"] = f.name;
    fj["transform"] = f.transform.ToString();
    if (f.source_ids.size() > 1) {
      fj["source-ids"] = f.source_ids;
    } else {
      fj["source-id"] = f.source_id;
    }
    fj["field-id"] = f.field_id;
    fields.push_back(std::move(fj));
  }
  return fields;
}

Json PartitionSpecToJson(const PartitionSpec& spec) {
  Json j = Json::object();
  j["spec-id"] = spec.spec_id();
  j["fields"] = PartitionFieldsToJson(spec);
  return j;
}

}  // namespace internal

}  // namespace geolake::table
