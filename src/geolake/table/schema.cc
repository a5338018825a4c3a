#include "geolake/table/schema.h"

#include <algorithm>
#include <functional>
#include <set>

#include "geolake/table/json_internal.h"

namespace geolake::table {

Schema::Schema(std::int32_t schema_id, std::vector<NestedField> fields,
               std::vector<std::int32_t> identifier_field_ids)
    : schema_id_(schema_id),
      struct_(Type::Struct(std::move(fields))),
      identifier_field_ids_(std::move(identifier_field_ids)) {
  for (const auto& f : struct_->fields()) Index(f, "");
}

void Schema::Index(const NestedField& field, const std::string& prefix) {
  std::string name = prefix.empty() ? field.name : prefix + "." + field.name;
  if (!by_id_.emplace(field.id, &field).second) duplicate_ids_ = true;
  by_name_.emplace(name, &field);
  names_.emplace(field.id, name);
  highest_field_id_ = std::max(highest_field_id_, field.id);
  if (field.type && field.type->is_nested()) {
    for (const auto& child : field.type->fields()) Index(child, name);
  }
}

const NestedField* Schema::FindField(std::int32_t field_id) const {
  auto it = by_id_.find(field_id);
  return it == by_id_.end() ? nullptr : it->second;
}

const NestedField* Schema::FindField(std::string_view dotted_name) const {
  auto it = by_name_.find(std::string(dotted_name));
  return it == by_name_.end() ? nullptr : it->second;
}

std::string Schema::FindColumnName(std::int32_t field_id) const {
  auto it = names_.find(field_id);
  return it == names_.end() ? std::string() : it->second;
}

Status Schema::Validate() const {
  if (duplicate_ids_) return Status::InvalidArgument("schema: duplicate field ids");
  for (const auto& [id, field] : by_id_) {
    if (id <= 0) {
      return Status::InvalidArgument("schema: field '" + FindColumnName(id) +
                                     "' has non-positive id " + std::to_string(id));
    }
    if (!field->type) {
      return Status::InvalidArgument("schema: field '" + FindColumnName(id) + "' has no type");
    }
  }
  for (std::int32_t id : identifier_field_ids_) {
    const NestedField* f = FindField(id);
    if (f == nullptr) {
      return Status::InvalidArgument("schema: identifier field id " + std::to_string(id) +
                                     " does not exist");
    }
    if (!f->required || !f->type->is_primitive()) {
      return Status::InvalidArgument("schema: identifier field '" + FindColumnName(id) +
                                     "' must be a required primitive");
    }
  }
  return Status::OK();
}

bool Schema::SameFields(const Schema& other) const {
  return struct_->Equals(*other.struct_) && identifier_field_ids_ == other.identifier_field_ids_;
}

std::shared_ptr<const Schema> Schema::WithSchemaId(std::int32_t schema_id) const {
  return std::make_shared<const Schema>(schema_id, fields(), identifier_field_ids_);
}

std::string Schema::ToJson() const { return internal::SchemaToJson(*this).dump(); }

Result<std::shared_ptr<const Schema>> Schema::FromJson(std::string_view json) {
  GEOLAKE_ASSIGN_OR_RETURN(auto parsed, internal::ParseJson(json, "schema"));
  return internal::SchemaFromJson(parsed);
}

namespace {

// Depth-first renumbering in Java's order: all fields of a struct first, then their children.
TypePtr Renumber(const Type& type, std::int32_t* next_id,
                 std::unordered_map<std::int32_t, std::int32_t>* old_to_new) {
  if (type.is_primitive()) return nullptr;  // caller keeps the original pointer
  std::vector<NestedField> fields = type.fields();
  for (auto& f : fields) {
    const std::int32_t new_id = ++*next_id;
    old_to_new->emplace(f.id, new_id);
    f.id = new_id;
  }
  for (auto& f : fields) {
    if (f.type && f.type->is_nested()) f.type = Renumber(*f.type, next_id, old_to_new);
  }
  switch (type.id()) {
    case TypeId::kList:
      return Type::List(fields[0].id, fields[0].required, fields[0].type);
    case TypeId::kMap:
      return Type::Map(fields[0].id, fields[0].type, fields[1].id, fields[1].required,
                       fields[1].type);
    default:
      return Type::Struct(std::move(fields));
  }
}

}  // namespace

FreshIds AssignFreshIds(const Schema& schema, std::int32_t schema_id) {
  FreshIds out;
  std::int32_t next_id = 0;
  TypePtr renumbered = Renumber(*schema.as_struct(), &next_id, &out.old_to_new);
  std::vector<std::int32_t> identifiers;
  for (std::int32_t id : schema.identifier_field_ids()) {
    auto it = out.old_to_new.find(id);
    identifiers.push_back(it == out.old_to_new.end() ? id : it->second);
  }
  out.schema = std::make_shared<const Schema>(schema_id, renumbered->fields(), identifiers);
  out.last_column_id = next_id;
  return out;
}

namespace internal {

Result<TypePtr> TypeFromJson(const Json& json) {
  if (json.is_string()) return Type::FromPrimitiveString(json.get<std::string>());
  if (!json.is_object()) return Status::CorruptData("type: neither a string nor an object");
  GEOLAKE_ASSIGN_OR_RETURN(std::string kind, GetString(json, "type", "type"));
  if (kind == "struct") {
    GEOLAKE_ASSIGN_OR_RETURN(const Json* fields_json, Require(json, "fields", "struct"));
    if (!fields_json->is_array()) return Status::CorruptData("struct: 'fields' is not an array");
    std::vector<NestedField> fields;
    for (const auto& fj : *fields_json) {
      NestedField f;
      GEOLAKE_ASSIGN_OR_RETURN(f.id, GetInt32(fj, "id", "struct field"));
      const std::string what = "field " + std::to_string(f.id);
      GEOLAKE_ASSIGN_OR_RETURN(f.name, GetString(fj, "name", what));
      GEOLAKE_ASSIGN_OR_RETURN(f.required, GetBool(fj, "required", what));
      GEOLAKE_ASSIGN_OR_RETURN(const Json* tj, Require(fj, "type", what));
      auto type = TypeFromJson(*tj);
      if (!type.ok()) return std::move(type).status().WithContext(what + " '" + f.name + "'");
      f.type = *type;
      if (const Json* doc = Find(fj, "doc"); doc != nullptr && doc->is_string()) {
        f.doc = doc->get<std::string>();
      }
      if (auto it = fj.find("initial-default"); it != fj.end()) f.initial_default_json = it->dump();
      if (auto it = fj.find("write-default"); it != fj.end()) f.write_default_json = it->dump();
      fields.push_back(std::move(f));
    }
    return Type::Struct(std::move(fields));
  }
  if (kind == "list") {
    GEOLAKE_ASSIGN_OR_RETURN(std::int32_t element_id, GetInt32(json, "element-id", "list"));
    GEOLAKE_ASSIGN_OR_RETURN(bool element_required, GetBool(json, "element-required", "list"));
    GEOLAKE_ASSIGN_OR_RETURN(const Json* ej, Require(json, "element", "list"));
    GEOLAKE_ASSIGN_OR_RETURN(TypePtr element, TypeFromJson(*ej));
    return Type::List(element_id, element_required, std::move(element));
  }
  if (kind == "map") {
    GEOLAKE_ASSIGN_OR_RETURN(std::int32_t key_id, GetInt32(json, "key-id", "map"));
    GEOLAKE_ASSIGN_OR_RETURN(std::int32_t value_id, GetInt32(json, "value-id", "map"));
    GEOLAKE_ASSIGN_OR_RETURN(bool value_required, GetBool(json, "value-required", "map"));
    GEOLAKE_ASSIGN_OR_RETURN(const Json* kj, Require(json, "key", "map"));
    GEOLAKE_ASSIGN_OR_RETURN(const Json* vj, Require(json, "value", "map"));
    GEOLAKE_ASSIGN_OR_RETURN(TypePtr key, TypeFromJson(*kj));
    GEOLAKE_ASSIGN_OR_RETURN(TypePtr value, TypeFromJson(*vj));
    return Type::Map(key_id, std::move(key), value_id, value_required, std::move(value));
  }
  return Status::CorruptData("unknown nested type '" + kind + "'");
}

Json TypeToJson(const Type& type) {
  switch (type.id()) {
    case TypeId::kStruct: {
      Json j = Json::object();
      j["type"] = "struct";
      Json fields = Json::array();
      for (const auto& f : type.fields()) {
        Json fj = Json::object();
        fj["id"] = f.id;
        fj["name"] = f.name;
        fj["required"] = f.required;
        fj["type"] = TypeToJson(*f.type);
        if (!f.doc.empty()) fj["doc"] = f.doc;
        // Defaults are carried as JSON text; text that does not parse is dropped, not thrown.
        if (f.initial_default_json) {
          Json d = Json::parse(*f.initial_default_json, nullptr, false);
          if (!d.is_discarded()) fj["initial-default"] = std::move(d);
        }
        if (f.write_default_json) {
          Json d = Json::parse(*f.write_default_json, nullptr, false);
          if (!d.is_discarded()) fj["write-default"] = std::move(d);
        }
        fields.push_back(std::move(fj));
      }
      j["fields"] = std::move(fields);
      return j;
    }
    case TypeId::kList: {
      Json j = Json::object();
      j["type"] = "list";
      j["element-id"] = type.element().id;
      j["element"] = TypeToJson(*type.element().type);
      j["element-required"] = type.element().required;
      return j;
    }
    case TypeId::kMap: {
      Json j = Json::object();
      j["type"] = "map";
      j["key-id"] = type.key().id;
      j["key"] = TypeToJson(*type.key().type);
      j["value-id"] = type.value().id;
      j["value"] = TypeToJson(*type.value().type);
      j["value-required"] = type.value().required;
      return j;
    }
    default:
      return type.ToString();
  }
}

Result<std::shared_ptr<const Schema>> SchemaFromJson(const Json& json) {
  if (!json.is_object()) return Status::CorruptData("schema: not a JSON object");
  // v1 schemas may lack schema-id; 0 is what Java assumes.
  GEOLAKE_ASSIGN_OR_RETURN(auto schema_id, GetOptInt32(json, "schema-id", "schema"));
  GEOLAKE_ASSIGN_OR_RETURN(TypePtr type, TypeFromJson(json));
  if (type->id() != TypeId::kStruct) return Status::CorruptData("schema: type is not 'struct'");
  std::vector<std::int32_t> identifiers;
  if (const Json* ids = Find(json, "identifier-field-ids")) {
    if (!ids->is_array()) {
      return Status::CorruptData("schema: key 'identifier-field-ids' is not an array");
    }
    for (const auto& id : *ids) {
      GEOLAKE_ASSIGN_OR_RETURN(std::int64_t v, AsInt64(id, "schema 'identifier-field-ids'"));
      identifiers.push_back(static_cast<std::int32_t>(v));
    }
  }
  return std::make_shared<const Schema>(schema_id.value_or(0), type->fields(),
                                        std::move(identifiers));
}

Json SchemaToJson(const Schema& schema) {
  Json j = Json::object();
  j["type"] = "struct";
  j["schema-id"] = schema.schema_id();
  if (!schema.identifier_field_ids().empty()) {
    j["identifier-field-ids"] = schema.identifier_field_ids();
  }
  j["fields"] = TypeToJson(*schema.as_struct())["fields"];
  return j;
}

}  // namespace internal

}  // namespace geolake::table
