#include "geolake/formats/parquet/schema.h"

#include <string>
#include <utility>

namespace geolake::parquet {

Field Field::Leaf(std::string name, PhysicalType type, Repetition repetition,
                  std::optional<std::int32_t> field_id, std::optional<LogicalType> logical_type) {
  Field f;
  f.name = std::move(name);
  f.physical_type = type;
  f.repetition = repetition;
  f.field_id = field_id;
  f.logical_type = std::move(logical_type);
  return f;
}

Field Field::Group(std::string name, Repetition repetition, std::optional<std::int32_t> field_id,
                   std::vector<Field> children) {
  Field f;
  f.name = std::move(name);
  f.repetition = repetition;
  f.field_id = field_id;
  f.children = std::move(children);
  return f;
}

std::string LeafColumn::dotted_path() const {
  std::string out;
  for (const auto& part : path) {
    if (!out.empty()) out.push_back('.');
    out += part;
  }
  return out;
}

namespace {

Status ValidateField(const Field& field, const std::string& parent) {
  const std::string where = parent.empty() ? field.name : parent + "." + field.name;
  if (field.name.empty())
    return Status::InvalidArgument("schema: empty field name under '" + parent + "'");
  if (field.is_group()) {
    if (field.children.empty()) {
      return Status::InvalidArgument("schema: group '" + where + "' has no children");
    }
    for (const auto& child : field.children) GEOLAKE_RETURN_NOT_OK(ValidateField(child, where));
  } else {
    if (!field.children.empty()) {
      return Status::InvalidArgument("schema: leaf '" + where + "' has children");
    }
    if (*field.physical_type == PhysicalType::kFixedLenByteArray && field.type_length <= 0) {
      return Status::InvalidArgument("schema: FIXED_LEN_BYTE_ARRAY '" + where +
                                     "' needs a positive type_length");
    }
  }
  return Status::OK();
}

void Flatten(const Field& field, std::vector<std::string>& path, std::int16_t def, std::int16_t rep,
             std::int32_t top, std::vector<LeafColumn>& out) {
  path.push_back(field.name);
  if (field.repetition != Repetition::kRequired) ++def;
  if (field.repetition == Repetition::kRepeated) ++rep;
  if (field.is_group()) {
    for (const auto& child : field.children) Flatten(child, path, def, rep, top, out);
  } else {
    LeafColumn leaf;
    leaf.path = path;
    leaf.physical_type = *field.physical_type;
    leaf.logical_type = field.logical_type;
    leaf.converted_type = field.converted_type;
    leaf.field_id = field.field_id;
    leaf.type_length = field.type_length;
    leaf.repetition = field.repetition;
    leaf.max_definition_level = def;
    leaf.max_repetition_level = rep;
    leaf.top_level_field = top;
    out.push_back(std::move(leaf));
  }
  path.pop_back();
}

void AppendElements(const Field& field, std::vector<SchemaElement>& out) {
  SchemaElement e;
  e.name = field.name;
  e.repetition_type = field.repetition;
  e.field_id = field.field_id;
  if (field.is_group()) {
    e.num_children = static_cast<std::int32_t>(field.children.size());
  } else {
    e.type = field.physical_type;
    if (*field.physical_type == PhysicalType::kFixedLenByteArray) e.type_length = field.type_length;
  }
  if (field.logical_type.has_value() &&
      field.logical_type->kind != LogicalType::Kind::kUnrecognized) {
    e.logical_type = field.logical_type;
    e.converted_type = ConvertedTypeFor(*field.logical_type);
    if (field.logical_type->kind == LogicalType::Kind::kDecimal) {
      e.scale = field.logical_type->scale;
      e.precision = field.logical_type->precision;
    }
  } else if (field.converted_type.has_value()) {
    e.converted_type = field.converted_type;
  }
  out.push_back(std::move(e));
  for (const auto& child : field.children) AppendElements(child, out);
}

Result<Field> FieldFromElements(const std::vector<SchemaElement>& elements, std::size_t* pos,
                                int depth) {
  if (depth > 64) return Status::CorruptData("schema: nesting deeper than 64 levels");
  if (*pos >= elements.size()) {
    return Status::CorruptData("schema: num_children promises more elements than the " +
                               std::to_string(elements.size()) + " present");
  }
  const SchemaElement& e = elements[(*pos)++];
  Field f;
  f.name = e.name;
  f.repetition = e.repetition_type.value_or(Repetition::kOptional);
  f.field_id = e.field_id;
  if (e.logical_type.has_value() && e.logical_type->kind != LogicalType::Kind::kUnrecognized) {
    f.logical_type = e.logical_type;
  } else if (e.converted_type.has_value()) {
    f.logical_type =
        LogicalTypeFromConverted(*e.converted_type, e.scale.value_or(0), e.precision.value_or(0));
  }
  // The legacy annotation is kept only when no LogicalType expresses it (MAP_KEY_VALUE,
  // INTERVAL), so that a schema written and read back compares equal.
  if (!f.logical_type.has_value()) f.converted_type = e.converted_type;
  const std::int32_t num_children = e.num_children.value_or(0);
  if (num_children > 0 || !e.type.has_value()) {
    if (num_children <= 0) {
      return Status::CorruptData("schema: element '" + e.name +
                                 "' has neither a type nor children");
    }
    if (static_cast<std::size_t>(num_children) > elements.size() - *pos) {
      return Status::CorruptData("schema: group '" + e.name + "' claims " +
                                 std::to_string(num_children) + " children, more than remain");
    }
    f.children.reserve(num_children);
    for (std::int32_t i = 0; i < num_children; ++i) {
      GEOLAKE_ASSIGN_OR_RETURN(Field child, FieldFromElements(elements, pos, depth + 1));
      f.children.push_back(std::move(child));
    }
  } else {
    f.physical_type = e.type;
    f.type_length = e.type_length.value_or(0);
  }
  return f;
}

}  // namespace

Result<Schema> Schema::Make(std::vector<Field> fields, std::string root_name) {
  for (const auto& f : fields) GEOLAKE_RETURN_NOT_OK(ValidateField(f, ""));
  Schema schema;
  schema.fields_ = std::move(fields);
  schema.root_name_ = std::move(root_name);
  std::vector<std::string> path;
  for (std::size_t i = 0; i < schema.fields_.size(); ++i) {
    Flatten(schema.fields_[i], path, 0, 0, static_cast<std::int32_t>(i), schema.leaves_);
  }
  return schema;
}

Result<Schema> Schema::FromElements(const std::vector<SchemaElement>& elements) {
  if (elements.empty()) return Status::CorruptData("schema: no elements");
  const SchemaElement& root = elements[0];
  const std::int32_t num_children = root.num_children.value_or(0);
  if (num_children < 0 || static_cast<std::size_t>(num_children) > elements.size() - 1) {
    return Status::CorruptData("schema: root claims " + std::to_string(num_children) +
                               " children, more than the elements present");
  }
  std::size_t pos = 1;
  std::vector<Field> fields;
  for (std::int32_t i = 0; i < num_children; ++i) {
    GEOLAKE_ASSIGN_OR_RETURN(Field f, FieldFromElements(elements, &pos, 1));
    fields.push_back(std::move(f));
  }
  if (pos != elements.size()) {
    return Status::CorruptData("schema: " + std::to_string(elements.size() - pos) +
                               " elements beyond the tree described by num_children");
  }
  Schema schema;
  schema.fields_ = std::move(fields);
  schema.root_name_ = root.name;
  std::vector<std::string> path;
  for (std::size_t i = 0; i < schema.fields_.size(); ++i) {
    Flatten(schema.fields_[i], path, 0, 0, static_cast<std::int32_t>(i), schema.leaves_);
  }
  return schema;
}

std::vector<SchemaElement> Schema::ToElements() const {
  std::vector<SchemaElement> out;
  SchemaElement root;
  root.name = root_name_;
  root.num_children = static_cast<std::int32_t>(fields_.size());
  out.push_back(std::move(root));
  for (const auto& f : fields_) AppendElements(f, out);
  return out;
}

int Schema::LeafIndex(const std::string& dotted_path) const {
  for (std::size_t i = 0; i < leaves_.size(); ++i) {
    if (leaves_[i].dotted_path() == dotted_path) return static_cast<int>(i);
  }
  return -1;
}

std::optional<ConvertedType> ConvertedTypeFor(const LogicalType& t) {
  using K = LogicalType::Kind;
  switch (t.kind) {
    case K::kString:
      return ConvertedType::kUtf8;
    case K::kMap:
      return ConvertedType::kMap;
    case K::kList:
      return ConvertedType::kList;
    case K::kEnum:
      return ConvertedType::kEnum;
    case K::kDecimal:
      return ConvertedType::kDecimal;
    case K::kDate:
      return ConvertedType::kDate;
    case K::kJson:
      return ConvertedType::kJson;
    case K::kBson:
      return ConvertedType::kBson;
    case K::kTime:
      if (t.unit == TimeUnit::kMillis) return ConvertedType::kTimeMillis;
      if (t.unit == TimeUnit::kMicros) return ConvertedType::kTimeMicros;
      return std::nullopt;
    case K::kTimestamp:
      if (t.unit == TimeUnit::kMillis) return ConvertedType::kTimestampMillis;
      if (t.unit == TimeUnit::kMicros) return ConvertedType::kTimestampMicros;
      return std::nullopt;
    case K::kInteger:
      switch (t.bit_width) {
        case 8:
          return t.is_signed ? ConvertedType::kInt8 : ConvertedType::kUint8;
        case 16:
          return t.is_signed ? ConvertedType::kInt16 : ConvertedType::kUint16;
        case 32:
          return t.is_signed ? ConvertedType::kInt32 : ConvertedType::kUint32;
        case 64:
          return t.is_signed ? ConvertedType::kInt64 : ConvertedType::kUint64;
        default:
          return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

std::optional<LogicalType> LogicalTypeFromConverted(ConvertedType converted, std::int32_t scale,
                                                    std::int32_t precision) {
  using K = LogicalType::Kind;
  switch (converted) {
    case ConvertedType::kUtf8:
      return LogicalType::String();
    case ConvertedType::kMap:
      return LogicalType::Simple(K::kMap);
    case ConvertedType::kList:
      return LogicalType::Simple(K::kList);
    case ConvertedType::kEnum:
      return LogicalType::Simple(K::kEnum);
    case ConvertedType::kDecimal:
      return LogicalType::Decimal(precision, scale);
    case ConvertedType::kDate:
      return LogicalType::Date();
    // Legacy TIME/TIMESTAMP annotations were UTC-normalized.
    case ConvertedType::kTimeMillis:
      return LogicalType::Time(true, TimeUnit::kMillis);
    case ConvertedType::kTimeMicros:
      return LogicalType::Time(true, TimeUnit::kMicros);
    case ConvertedType::kTimestampMillis:
      return LogicalType::Timestamp(true, TimeUnit::kMillis);
    case ConvertedType::kTimestampMicros:
      return LogicalType::Timestamp(true, TimeUnit::kMicros);
    case ConvertedType::kUint8:
      return LogicalType::Integer(8, false);
    case ConvertedType::kUint16:
      return LogicalType::Integer(16, false);
    case ConvertedType::kUint32:
      return LogicalType::Integer(32, false);
    case ConvertedType::kUint64:
      return LogicalType::Integer(64, false);
    case ConvertedType::kInt8:
      return LogicalType::Integer(8, true);
    case ConvertedType::kInt16:
      return LogicalType::Integer(16, true);
    case ConvertedType::kInt32:
      return LogicalType::Integer(32, true);
    case ConvertedType::kInt64:
      return LogicalType::Integer(64, true);
    case ConvertedType::kJson:
      return LogicalType::Json();
    case ConvertedType::kBson:
      return LogicalType::Simple(K::kBson);
    default:
      return std::nullopt;
  }
}

}  // namespace geolake::parquet
