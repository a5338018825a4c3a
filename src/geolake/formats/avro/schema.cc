#include "geolake/formats/avro/schema.h"

#include <charconv>
#include <exception>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "geolake/core/hex.h"
#include "geolake/core/utf8.h"

namespace geolake::avro {

namespace {

// ordered_json keeps keys in document order, which is what lets attributes (and the JSON
// values inside them) be written back exactly as read.
using Json = nlohmann::ordered_json;

// Avro levels cost about three JSON levels each (type object, "fields" array, field object).
constexpr int kMaxSchemaDepth = 64;
constexpr int kMaxJsonDepth = 3 * kMaxSchemaDepth + 8;

std::string DumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Reject deeply nested JSON before handing it to a recursive walker: a few hundred kilobytes of
// '[' would otherwise exhaust the stack. Iterative, ignores brackets inside strings.
Status CheckJsonDepth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        return Status::InvalidArgument("avro schema: JSON nested deeper than " +
                                       std::to_string(kMaxJsonDepth) + " levels at offset " +
                                       std::to_string(i));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Status::OK();
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          AppendHexByte(c, out);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

std::optional<Type> PrimitiveType(std::string_view name) {
  if (name == "null") return Type::kNull;
  if (name == "boolean") return Type::kBoolean;
  if (name == "int") return Type::kInt;
  if (name == "long") return Type::kLong;
  if (name == "float") return Type::kFloat;
  if (name == "double") return Type::kDouble;
  if (name == "bytes") return Type::kBytes;
  if (name == "string") return Type::kString;
  return std::nullopt;
}

std::optional<std::int64_t> ParseInt(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

class Parser {
 public:
  explicit Parser(Schema* schema) : schema_(schema) {}

  Result<const Node*> ParseNode(const Json& j, const std::string& enclosing_ns, int depth) {
    if (depth > kMaxSchemaDepth) {
      return Status::InvalidArgument("avro schema nested deeper than " +
                                     std::to_string(kMaxSchemaDepth) + " levels");
    }
    if (j.is_string()) return ParseName(j.get_ref<const std::string&>(), enclosing_ns);
    if (j.is_array()) return ParseUnion(j, enclosing_ns, depth);
    if (!j.is_object()) {
      return Status::InvalidArgument("avro schema: expected a string, array or object, got " +
                                     DumpJson(j));
    }
    auto type_it = j.find("type");
    if (type_it == j.end()) {
      return Status::InvalidArgument("avro schema: object without \"type\"");
    }
    if (!type_it->is_string()) {
      // {"type": {...}} or {"type": [...]}: the wrapper adds nothing we can keep.
      return ParseNode(*type_it, enclosing_ns, depth + 1);
    }
    const std::string& type_name = type_it->get_ref<const std::string&>();
    if (type_name == "record" || type_name == "error") return ParseRecord(j, enclosing_ns, depth);
    if (type_name == "enum") return ParseEnum(j, enclosing_ns);
    if (type_name == "fixed") return ParseFixed(j, enclosing_ns);
    if (type_name == "array" || type_name == "map") {
      const bool is_array = type_name == "array";
      const char* child_key = is_array ? "items" : "values";
      auto child_it = j.find(child_key);
      if (child_it == j.end()) {
        return Status::InvalidArgument("avro schema: " + type_name + " without \"" + child_key +
                                       "\"");
      }
      GEOLAKE_ASSIGN_OR_RETURN(const Node* child, ParseNode(*child_it, enclosing_ns, depth + 1));
      Node* node = schema_->Add(Node{});
      node->type = is_array ? Type::kArray : Type::kMap;
      (is_array ? node->items : node->values) = child;
      KeepAttributes(j, {"type", child_key}, &node->attributes);
      return node;
    }
    if (auto prim = PrimitiveType(type_name)) {
      Node* node = schema_->Add(Node{});
      node->type = *prim;
      KeepAttributes(j, {"type"}, &node->attributes);
      return node;
    }
    // {"type": "SomeNamedType"}: a reference in object form.
    return ParseName(type_name, enclosing_ns);
  }

 private:
  static void KeepAttributes(const Json& j, std::initializer_list<std::string_view> structural,
                             Attributes* out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool skip = false;
      for (std::string_view key : structural) skip = skip || it.key() == key;
      if (!skip) out->SetJson(it.key(), DumpJson(it.value()));
    }
  }

  Result<const Node*> ParseName(const std::string& name, const std::string& enclosing_ns) {
    if (auto prim = PrimitiveType(name)) return schema_->AddPrimitive(*prim);
    if (name.find('.') == std::string::npos && !enclosing_ns.empty()) {
      auto it = named_.find(enclosing_ns + "." + name);
      if (it != named_.end()) return it->second;
    }
    auto it = named_.find(name);
    if (it != named_.end()) return it->second;
    return Status::InvalidArgument("avro schema: unknown type '" + name + "'");
  }

  Result<const Node*> ParseUnion(const Json& j, const std::string& enclosing_ns, int depth) {
    std::vector<const Node*> branches;
    for (const Json& branch_json : j) {
      GEOLAKE_ASSIGN_OR_RETURN(const Node* branch, ParseNode(branch_json, enclosing_ns, depth + 1));
      if (branch->type == Type::kUnion) {
        return Status::InvalidArgument("avro schema: a union may not directly contain a union");
      }
      branches.push_back(branch);
    }
    Node* node = schema_->Add(Node{});
    node->type = Type::kUnion;
    node->branches = std::move(branches);
    return node;
  }

  // Fill name, namespace, full name, doc and aliases of a named type and register it. Returns
  // the namespace that nested definitions inherit.
  Result<std::string> StartNamed(const Json& j, const std::string& enclosing_ns, Node* node) {
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string() ||
        name_it->get_ref<const std::string&>().empty()) {
      return Status::InvalidArgument("avro schema: " + std::string(TypeName(node->type)) +
                                     " without a \"name\"");
    }
    node->name = name_it->get<std::string>();
    auto ns_it = j.find("namespace");
    if (ns_it != j.end() && ns_it->is_string()) node->name_space = ns_it->get<std::string>();
    std::string ns;
    const auto dot = node->name.rfind('.');
    if (dot != std::string::npos) {
      ns = node->name.substr(0, dot);
      node->full_name = node->name;
    } else {
      ns = node->name_space ? *node->name_space : enclosing_ns;
      node->full_name = ns.empty() ? node->name : ns + "." + node->name;
    }
    if (auto doc_it = j.find("doc"); doc_it != j.end() && doc_it->is_string()) {
      node->doc = doc_it->get<std::string>();
    }
    GEOLAKE_RETURN_NOT_OK(ParseAliases(j, &node->aliases));
    if (PrimitiveType(node->full_name)) {
      return Status::InvalidArgument("avro schema: named type may not be called '" +
                                     node->full_name + "'");
    }
    if (!named_.emplace(node->full_name, node).second) {
      return Status::InvalidArgument("avro schema: type '" + node->full_name +
                                     "' is defined twice");
    }
    return ns;
  }

  static Status ParseAliases(const Json& j, std::vector<std::string>* out) {
    auto it = j.find("aliases");
    if (it == j.end()) return Status::OK();
    if (!it->is_array()) return Status::InvalidArgument("avro schema: \"aliases\" is not an array");
    for (const Json& alias : *it) {
      if (!alias.is_string()) return Status::InvalidArgument("avro schema: alias is not a string");
      out->push_back(alias.get<std::string>());
    }
    return Status::OK();
  }

  Result<const Node*> ParseRecord(const Json& j, const std::string& enclosing_ns, int depth) {
    Node* node = schema_->Add(Node{});
    node->type = Type::kRecord;
    GEOLAKE_ASSIGN_OR_RETURN(std::string ns, StartNamed(j, enclosing_ns, node));
    auto fields_it = j.find("fields");
    if (fields_it == j.end() || !fields_it->is_array()) {
      return Status::InvalidArgument("avro schema: record '" + node->full_name +
                                     "' without a \"fields\" array");
    }
    for (const Json& fj : *fields_it) {
      Field field;
      auto name_it = fj.is_object() ? fj.find("name") : fj.end();
      if (!fj.is_object() || name_it == fj.end() || !name_it->is_string()) {
        return Status::InvalidArgument("avro schema: record '" + node->full_name +
                                       "' has a field without a \"name\"");
      }
      field.name = name_it->get<std::string>();
      auto type_it = fj.find("type");
      if (type_it == fj.end()) {
        return Status::InvalidArgument("avro schema: field '" + node->full_name + "." + field.name +
                                       "' without a \"type\"");
      }
      auto type = ParseNode(*type_it, ns, depth + 1);
      if (!type.ok()) {
        return std::move(type).status().WithContext("field '" + node->full_name + "." + field.name +
                                                    "'");
      }
      field.type = *type;
      if (auto doc_it = fj.find("doc"); doc_it != fj.end() && doc_it->is_string()) {
        field.doc = doc_it->get<std::string>();
      }
      if (auto def_it = fj.find("default"); def_it != fj.end()) {
        field.default_json = DumpJson(*def_it);
      }
      GEOLAKE_RETURN_NOT_OK(ParseAliases(fj, &field.aliases));
      KeepAttributes(fj, {"name", "type", "doc", "default", "aliases"}, &field.attributes);
      node->fields.push_back(std::move(field));
    }
    KeepAttributes(j, {"type", "name", "namespace", "doc", "aliases", "fields"}, &node->attributes);
    return node;
  }

  Result<const Node*> ParseEnum(const Json& j, const std::string& enclosing_ns) {
    Node* node = schema_->Add(Node{});
    node->type = Type::kEnum;
    GEOLAKE_RETURN_NOT_OK(StartNamed(j, enclosing_ns, node));
    auto symbols_it = j.find("symbols");
    if (symbols_it == j.end() || !symbols_it->is_array()) {
      return Status::InvalidArgument("avro schema: enum '" + node->full_name +
                                     "' without a \"symbols\" array");
    }
    for (const Json& symbol : *symbols_it) {
      if (!symbol.is_string()) {
        return Status::InvalidArgument("avro schema: enum '" + node->full_name +
                                       "' has a symbol that is not a string");
      }
      node->symbols.push_back(symbol.get<std::string>());
    }
    if (auto def_it = j.find("default"); def_it != j.end() && def_it->is_string()) {
      node->enum_default = def_it->get<std::string>();
    }
    KeepAttributes(j, {"type", "name", "namespace", "doc", "aliases", "symbols", "default"},
                   &node->attributes);
    return node;
  }

  Result<const Node*> ParseFixed(const Json& j, const std::string& enclosing_ns) {
    Node* node = schema_->Add(Node{});
    node->type = Type::kFixed;
    GEOLAKE_RETURN_NOT_OK(StartNamed(j, enclosing_ns, node));
    auto size_it = j.find("size");
    if (size_it == j.end() || !size_it->is_number_integer() || size_it->get<std::int64_t>() < 0) {
      return Status::InvalidArgument("avro schema: fixed '" + node->full_name +
                                     "' needs a non-negative integer \"size\"");
    }
    node->fixed_size = size_it->get<std::int64_t>();
    KeepAttributes(j, {"type", "name", "namespace", "doc", "aliases", "size"}, &node->attributes);
    return node;
  }

  Schema* schema_;
  std::unordered_map<std::string, const Node*> named_;
};

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  void WriteNode(const Node& node) {
    if (node.is_named()) {
      if (!written_.insert(&node).second) {
        AppendJsonString(node.full_name.empty() ? node.name : node.full_name, out_);
        return;
      }
    }
    switch (node.type) {
      case Type::kUnion: {
        out_->push_back('[');
        for (std::size_t i = 0; i < node.branches.size(); ++i) {
          if (i > 0) out_->push_back(',');
          WriteNode(*node.branches[i]);
        }
        out_->push_back(']');
        return;
      }
      case Type::kRecord:
      case Type::kEnum:
      case Type::kFixed:
        WriteNamed(node);
        return;
      case Type::kArray:
      case Type::kMap: {
        const bool is_array = node.type == Type::kArray;
        out_->append(is_array ? "{\"type\":\"array\",\"items\":" : "{\"type\":\"map\",\"values\":");
        WriteNode(is_array ? *node.items : *node.values);
        WriteAttributes(node.attributes);
        out_->push_back('}');
        return;
      }
      default:
        if (node.attributes.empty()) {
          AppendJsonString(TypeName(node.type), out_);
        } else {
          out_->append("{\"type\":");
          AppendJsonString(TypeName(node.type), out_);
          WriteAttributes(node.attributes);
          out_->push_back('}');
        }
        return;
    }
  }

 private:
  void Key(std::string_view key) {
    out_->push_back(',');
    AppendJsonString(key, out_);
    out_->push_back(':');
  }

  void WriteAttributes(const Attributes& attributes) {
    for (const Attribute& attribute : attributes.items()) {
      Key(attribute.key);
      out_->append(attribute.json);
    }
  }

  void WriteAliases(const std::vector<std::string>& aliases) {
    if (aliases.empty()) return;
    Key("aliases");
    out_->push_back('[');
    for (std::size_t i = 0; i < aliases.size(); ++i) {
      if (i > 0) out_->push_back(',');
      AppendJsonString(aliases[i], out_);
    }
    out_->push_back(']');
  }

  void WriteNamed(const Node& node) {
    out_->append("{\"type\":");
    AppendJsonString(node.type == Type::kRecord ? "record" : TypeName(node.type), out_);
    Key("name");
    AppendJsonString(node.name, out_);
    if (node.name_space) {
      Key("namespace");
      AppendJsonString(*node.name_space, out_);
    }
    if (!node.doc.empty()) {
      Key("doc");
      AppendJsonString(node.doc, out_);
    }
    WriteAliases(node.aliases);
    if (node.type == Type::kRecord) {
      Key("fields");
      out_->push_back('[');
      for (std::size_t i = 0; i < node.fields.size(); ++i) {
        if (i > 0) out_->push_back(',');
        WriteField(node.fields[i]);
      }
      out_->push_back(']');
    } else if (node.type == Type::kEnum) {
      Key("symbols");
      out_->push_back('[');
      for (std::size_t i = 0; i < node.symbols.size(); ++i) {
        if (i > 0) out_->push_back(',');
        AppendJsonString(node.symbols[i], out_);
      }
      out_->push_back(']');
      if (node.enum_default) {
        Key("default");
        AppendJsonString(*node.enum_default, out_);
      }
    } else {
      Key("size");
      out_->append(std::to_string(node.fixed_size));
    }
    WriteAttributes(node.attributes);
    out_->push_back('}');
  }

  void WriteField(const Field& field) {
    out_->append("{\"name\":");
    AppendJsonString(field.name, out_);
    Key("type");
    if (field.type == nullptr) {
      out_->append("\"null\"");
    } else {
      WriteNode(*field.type);
    }
    if (!field.doc.empty()) {
      Key("doc");
      AppendJsonString(field.doc, out_);
    }
    if (field.default_json) {
      Key("default");
      out_->append(*field.default_json);
    }
    WriteAliases(field.aliases);
    WriteAttributes(field.attributes);
    out_->push_back('}');
  }

  std::string* out_;
  std::unordered_set<const Node*> written_;
};

}  // namespace

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kNull:
      return "null";
    case Type::kBoolean:
      return "boolean";
    case Type::kInt:
      return "int";
    case Type::kLong:
      return "long";
    case Type::kFloat:
      return "float";
    case Type::kDouble:
      return "double";
    case Type::kBytes:
      return "bytes";
    case Type::kString:
      return "string";
    case Type::kFixed:
      return "fixed";
    case Type::kEnum:
      return "enum";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kRecord:
      return "record";
    case Type::kUnion:
      return "union";
  }
  return "unknown";
}

std::optional<std::string_view> Attributes::Get(std::string_view key) const {
  for (const Attribute& attribute : items_) {
    if (attribute.key == key) return std::string_view(attribute.json);
  }
  return std::nullopt;
}

std::optional<std::string> Attributes::GetString(std::string_view key) const {
  auto raw = Get(key);
  if (!raw || raw->size() < 2 || raw->front() != '"') return std::nullopt;
  if (raw->find('\\') == std::string_view::npos) {
    return std::string(raw->substr(1, raw->size() - 2));
  }
  // Escaped content: let the JSON parser undo the escapes.
  try {
    Json value = Json::parse(*raw);
    if (value.is_string()) return value.get<std::string>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<std::int64_t> Attributes::GetInt(std::string_view key) const {
  auto raw = Get(key);
  if (!raw) return std::nullopt;
  std::string_view text = *raw;
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  return ParseInt(text);
}

void Attributes::SetJson(std::string_view key, std::string json) {
  for (Attribute& attribute : items_) {
    if (attribute.key == key) {
      attribute.json = std::move(json);
      return;
    }
  }
  items_.push_back(Attribute{std::string(key), std::move(json)});
}

void Attributes::SetString(std::string_view key, std::string_view value) {
  std::string json;
  AppendJsonString(value, &json);
  SetJson(key, std::move(json));
}

void Attributes::SetInt(std::string_view key, std::int64_t value) {
  SetJson(key, std::to_string(value));
}

bool Attributes::Remove(std::string_view key) {
  for (auto it = items_.begin(); it != items_.end(); ++it) {
    if (it->key == key) {
      items_.erase(it);
      return true;
    }
  }
  return false;
}

std::optional<std::int32_t> Field::field_id() const {
  auto id = attributes.GetInt("field-id");
  if (!id || *id < INT32_MIN || *id > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(*id);
}

std::string Node::logical_type() const {
  return attributes.GetString("logicalType").value_or(std::string());
}

std::optional<std::size_t> Node::FieldIndex(std::string_view field_name) const {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> Node::FieldIndexById(std::int32_t field_id) const {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].field_id() == field_id) return i;
  }
  return std::nullopt;
}

const Node* Node::NonNullBranch() const {
  if (type != Type::kUnion || branches.size() != 2) return nullptr;
  if (branches[0]->type == Type::kNull && branches[1]->type != Type::kNull) return branches[1];
  if (branches[1]->type == Type::kNull && branches[0]->type != Type::kNull) return branches[0];
  return nullptr;
}

Result<Schema> Schema::Parse(std::string_view json) {
  GEOLAKE_RETURN_NOT_OK(CheckJsonDepth(json));
  Json document;
  try {
    document = Json::parse(json);
  } catch (const std::exception& e) {
    // The parser quotes the bytes it last read, which may be anything in a damaged file.
    return Status::InvalidArgument("avro schema: invalid JSON: " + EscapeForMessage(e.what()));
  }
  Schema schema;
  Parser parser(&schema);
  GEOLAKE_ASSIGN_OR_RETURN(const Node* root, parser.ParseNode(document, "", 0));
  schema.root_ = root;
  return schema;
}

std::string Schema::ToJson() const {
  std::string out;
  if (root_ == nullptr) return "null";
  Writer writer(&out);
  writer.WriteNode(*root_);
  return out;
}

Node* Schema::Add(Node node) {
  if (node.is_named() && node.full_name.empty()) {
    node.full_name = node.name_space && !node.name_space->empty()
                         ? *node.name_space + "." + node.name
                         : node.name;
  }
  nodes_.push_back(std::make_unique<Node>(std::move(node)));
  return nodes_.back().get();
}

const Node* Schema::AddPrimitive(Type type) {
  Node node;
  node.type = type;
  return Add(std::move(node));
}

const Node* Schema::AddOptional(const Node* type) {
  Node node;
  node.type = Type::kUnion;
  node.branches = {AddPrimitive(Type::kNull), type};
  return Add(std::move(node));
}

}  // namespace geolake::avro
