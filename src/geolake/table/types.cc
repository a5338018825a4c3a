#include "geolake/table/types.h"

#include <cctype>
#include <charconv>

namespace geolake::table {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view s, int* out) {
  s = Trim(s);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Splits "name(args)" or "name[args]" into name and args; false when there are no brackets.
bool SplitParams(std::string_view text, char open, char close, std::string_view* name,
                 std::string_view* args) {
  const auto pos = text.find(open);
  if (pos == std::string_view::npos || text.back() != close) return false;
  *name = Trim(text.substr(0, pos));
  *args = text.substr(pos + 1, text.size() - pos - 2);
  return true;
}

Result<EdgeAlgorithm> ParseAlgorithm(std::string_view s) {
  std::string lower;
  for (char c : Trim(s))
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "spherical") return EdgeAlgorithm::kSpherical;
  if (lower == "vincenty") return EdgeAlgorithm::kVincenty;
  if (lower == "thomas") return EdgeAlgorithm::kThomas;
  if (lower == "andoyer") return EdgeAlgorithm::kAndoyer;
  if (lower == "karney") return EdgeAlgorithm::kKarney;
  return Status::CorruptData("unknown geography edge algorithm '" + std::string(s) + "'");
}

}  // namespace

std::string_view EdgeAlgorithmName(EdgeAlgorithm algorithm) {
  switch (algorithm) {
    case EdgeAlgorithm::kSpherical:
      return "spherical";
    case EdgeAlgorithm::kVincenty:
      return "vincenty";
    case EdgeAlgorithm::kThomas:
      return "thomas";
    case EdgeAlgorithm::kAndoyer:
      return "andoyer";
    case EdgeAlgorithm::kKarney:
      return "karney";
  }
  return "spherical";
}

NestedField NestedField::Required(std::int32_t id, std::string name, TypePtr type,
                                  std::string doc) {
  NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.required = true;
  f.type = std::move(type);
  f.doc = std::move(doc);
  return f;
}

NestedField NestedField::Optional(std::int32_t id, std::string name, TypePtr type,
                                  std::string doc) {
  NestedField f = Required(id, std::move(name), std::move(type), std::move(doc));
  f.required = false;
  return f;
}

bool operator==(const NestedField& a, const NestedField& b) {
  if (a.id != b.id || a.name != b.name || a.required != b.required || a.doc != b.doc ||
      a.initial_default_json != b.initial_default_json ||
      a.write_default_json != b.write_default_json) {
    return false;
  }
  if (!a.type || !b.type) return a.type == b.type;
  return a.type->Equals(*b.type);
}

#define GEOLAKE_SIMPLE_TYPE(Name, Id)                                                  \
  TypePtr Type::Name() {                                                               \
    static const TypePtr kInstance = std::make_shared<Type>(PrivateTag{}, TypeId::Id); \
    return kInstance;                                                                  \
  }
GEOLAKE_SIMPLE_TYPE(Boolean, kBoolean)
GEOLAKE_SIMPLE_TYPE(Int, kInt)
GEOLAKE_SIMPLE_TYPE(Long, kLong)
GEOLAKE_SIMPLE_TYPE(Float, kFloat)
GEOLAKE_SIMPLE_TYPE(Double, kDouble)
GEOLAKE_SIMPLE_TYPE(Date, kDate)
GEOLAKE_SIMPLE_TYPE(Time, kTime)
GEOLAKE_SIMPLE_TYPE(Timestamp, kTimestamp)
GEOLAKE_SIMPLE_TYPE(TimestampTz, kTimestampTz)
GEOLAKE_SIMPLE_TYPE(TimestampNs, kTimestampNs)
GEOLAKE_SIMPLE_TYPE(TimestampTzNs, kTimestampTzNs)
GEOLAKE_SIMPLE_TYPE(String, kString)
GEOLAKE_SIMPLE_TYPE(Uuid, kUuid)
GEOLAKE_SIMPLE_TYPE(Binary, kBinary)
GEOLAKE_SIMPLE_TYPE(Unknown, kUnknown)
GEOLAKE_SIMPLE_TYPE(Variant, kVariant)
#undef GEOLAKE_SIMPLE_TYPE

Result<TypePtr> Type::Decimal(int precision, int scale) {
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
    return Status::InvalidArgument("decimal(" + std::to_string(precision) + ", " +
                                   std::to_string(scale) +
                                   "): precision must be 1..38 and "
                                   "scale 0..precision");
  }
  auto t = std::make_shared<Type>(PrivateTag{}, TypeId::kDecimal);
  t->precision_ = precision;
  t->scale_ = scale;
  return TypePtr(std::move(t));
}

Result<TypePtr> Type::Fixed(int length) {
  if (length < 1) {
    return Status::InvalidArgument("fixed[" + std::to_string(length) + "]: length must be >= 1");
  }
  auto t = std::make_shared<Type>(PrivateTag{}, TypeId::kFixed);
  t->length_ = length;
  return TypePtr(std::move(t));
}

TypePtr Type::Geometry(std::string crs) {
  auto t = std::make_shared<Type>(PrivateTag{}, TypeId::kGeometry);
  t->crs_ = std::move(crs);
  return t;
}

TypePtr Type::Geography(std::string crs, EdgeAlgorithm algorithm) {
  auto t = std::make_shared<Type>(PrivateTag{}, TypeId::kGeography);
  t->crs_ = std::move(crs);
  t->algorithm_ = algorithm;
  return t;
}

TypePtr Type::Struct(std::vector<NestedField> fields) {
  auto t = std::make_shared<Type>(PrivateTag{}, TypeId::kStruct);
  t->fields_ = std::move(fields);
  return t;
}

TypePtr Type::List(std::int32_t element_id, bool element_required, TypePtr element) {
  auto t = std::make_shared<Type>(PrivateTag{}, TypeId::kList);
  NestedField f;
  f.id = element_id;
  f.name = "element";
  f.required = element_required;
  f.type = std::move(element);
  t->fields_.push_back(std::move(f));
  return t;
}

TypePtr Type::Map(std::int32_t key_id, TypePtr key, std::int32_t value_id, bool value_required,
                  TypePtr value) {
  auto t = std::make_shared<Type>(PrivateTag{}, TypeId::kMap);
  t->fields_.push_back(NestedField::Required(key_id, "key", std::move(key)));
  NestedField v;
  v.id = value_id;
  v.name = "value";
  v.required = value_required;
  v.type = std::move(value);
  t->fields_.push_back(std::move(v));
  return t;
}

Result<TypePtr> Type::FromPrimitiveString(std::string_view text) {
  const std::string_view s = Trim(text);
  struct Simple {
    std::string_view name;
    TypePtr (*make)();
  };
  static constexpr Simple kSimple[] = {
      {"boolean", &Type::Boolean},
      {"int", &Type::Int},
      {"long", &Type::Long},
      {"float", &Type::Float},
      {"double", &Type::Double},
      {"date", &Type::Date},
      {"time", &Type::Time},
      {"timestamp", &Type::Timestamp},
      {"timestamptz", &Type::TimestampTz},
      {"timestamp_ns", &Type::TimestampNs},
      {"timestamptz_ns", &Type::TimestampTzNs},
      {"string", &Type::String},
      {"uuid", &Type::Uuid},
      {"binary", &Type::Binary},
      {"unknown", &Type::Unknown},
      {"variant", &Type::Variant},
  };
  for (const auto& simple : kSimple) {
    if (s == simple.name) return simple.make();
  }
  if (s == "geometry") return Geometry();
  if (s == "geography") return Geography();

  std::string_view name, args;
  if (SplitParams(s, '[', ']', &name, &args) && name == "fixed") {
    int length = 0;
    if (!ParseInt(args, &length)) {
      return Status::CorruptData("malformed type '" + std::string(s) + "'");
    }
    return Fixed(length).WithContext("type '" + std::string(s) + "'");
  }
  if (SplitParams(s, '(', ')', &name, &args)) {
    const auto comma = args.find(',');
    if (name == "decimal" && comma != std::string_view::npos) {
      int precision = 0, scale = 0;
      if (!ParseInt(args.substr(0, comma), &precision) ||
          !ParseInt(args.substr(comma + 1), &scale)) {
        return Status::CorruptData("malformed type '" + std::string(s) + "'");
      }
      auto r = Decimal(precision, scale);
      if (!r.ok()) return Status::CorruptData(r.status().message());
      return r;
    }
    if (name == "geometry") {
      const std::string_view crs = Trim(args);
      if (crs.empty() || crs.front() == '{') {
        // Inline PROJJSON is forbidden by the spec (it must be a `projjson:<property>` ref).
        return Status::CorruptData("malformed type '" + std::string(s) + "'");
      }
      return Geometry(std::string(crs));
    }
    if (name == "geography") {
      std::string_view crs = Trim(args);
      EdgeAlgorithm algorithm = EdgeAlgorithm::kSpherical;
      if (comma != std::string_view::npos) {
        crs = Trim(args.substr(0, comma));
        GEOLAKE_ASSIGN_OR_RETURN(algorithm, ParseAlgorithm(args.substr(comma + 1)));
      }
      if (crs.empty() || crs.front() == '{') {
        return Status::CorruptData("malformed type '" + std::string(s) + "'");
      }
      return Geography(std::string(crs), algorithm);
    }
  }
  return Status::CorruptData("unknown type '" + std::string(s) + "'");
}

std::string Type::ToString() const {
  switch (id_) {
    case TypeId::kBoolean:
      return "boolean";
    case TypeId::kInt:
      return "int";
    case TypeId::kLong:
      return "long";
    case TypeId::kFloat:
      return "float";
    case TypeId::kDouble:
      return "double";
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(precision_) + ", " + std::to_string(scale_) + ")";
    case TypeId::kDate:
      return "date";
    case TypeId::kTime:
      return "time";
    case TypeId::kTimestamp:
      return "timestamp";
    case TypeId::kTimestampTz:
      return "timestamptz";
    case TypeId::kTimestampNs:
      return "timestamp_ns";
    case TypeId::kTimestampTzNs:
      return "timestamptz_ns";
    case TypeId::kString:
      return "string";
    case TypeId::kUuid:
      return "uuid";
    case TypeId::kFixed:
      return "fixed[" + std::to_string(length_) + "]";
    case TypeId::kBinary:
      return "binary";
    case TypeId::kUnknown:
      return "unknown";
    case TypeId::kVariant:
      return "variant";
    case TypeId::kGeometry:
      return crs_.empty() ? "geometry" : "geometry(" + crs_ + ")";
    case TypeId::kGeography:
      if (crs_.empty() && algorithm_ == EdgeAlgorithm::kSpherical) return "geography";
      return "geography(" + (crs_.empty() ? std::string("OGC:CRS84") : crs_) + ", " +
             std::string(EdgeAlgorithmName(algorithm_)) + ")";
    case TypeId::kStruct:
      return "struct";
    case TypeId::kList:
      return "list";
    case TypeId::kMap:
      return "map";
  }
  return "unknown";
}

const NestedField* Type::FindChild(std::int32_t field_id) const {
  for (const auto& f : fields_) {
    if (f.id == field_id) return &f;
  }
  return nullptr;
}

bool Type::Equals(const Type& other) const {
  if (id_ != other.id_) return false;
  switch (id_) {
    case TypeId::kDecimal:
      return precision_ == other.precision_ && scale_ == other.scale_;
    case TypeId::kFixed:
      return length_ == other.length_;
    case TypeId::kGeometry:
    case TypeId::kGeography: {
      // The empty CRS is the default OGC:CRS84; both spellings mean the same type.
      auto norm = [](const std::string& c) { return c.empty() ? std::string("OGC:CRS84") : c; };
      return norm(crs_) == norm(other.crs_) && algorithm_ == other.algorithm_;
    }
    case TypeId::kStruct:
    case TypeId::kList:
    case TypeId::kMap:
      return fields_ == other.fields_;
    default:
      return true;
  }
}

}  // namespace geolake::table
