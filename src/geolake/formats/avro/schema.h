/// \file
/// The Avro schema model: every Avro type (null, boolean, int, long, float, double, bytes,
/// string, fixed, enum, array, map, record, union), parsed from and written back to JSON.
/// Besides the structural keys, every other JSON key of a type or a record field is kept as an
/// ordered attribute (logicalType, precision, Iceberg's "field-id", "element-id", "key-id",
/// "value-id", "iceberg-field-name", ...), so that a schema read from an Iceberg manifest header
/// is written back byte for byte. Named types may be referenced by name, including
/// recursively; a Schema owns all of its nodes and nodes point at each other.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake::avro {

/// The Avro types. kUnion never describes a value, only a schema node.
enum class Type : std::uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kFixed,
  kEnum,
  kArray,
  kMap,
  kRecord,
  kUnion,
};

/// \brief The Avro name of a type: "null", "int", "record", "union", ...
std::string_view TypeName(Type type);

/// One JSON key of a type or field that is not structural, with its value as compact JSON text
/// (a string value keeps its quotes: key "logicalType", json "\"map\"").
struct Attribute {
  std::string key;
  std::string json;

  bool operator==(const Attribute& other) const = default;
};

/// Ordered attributes with typed look-ups. Order is the order read from JSON (or of Set calls).
class Attributes {
 public:
  /// \brief The raw JSON text of `key`, or nullopt.
  std::optional<std::string_view> Get(std::string_view key) const;
  /// \brief The value of `key` if it is a JSON string; nullopt otherwise.
  std::optional<std::string> GetString(std::string_view key) const;
  /// \brief The value of `key` if it is a JSON integer (or a string holding one, read
  /// tolerantly); nullopt otherwise.
  std::optional<std::int64_t> GetInt(std::string_view key) const;

  /// \brief Set `key` to raw JSON text, replacing an existing value in place or appending.
  void SetJson(std::string_view key, std::string json);
  void SetString(std::string_view key, std::string_view value);
  void SetInt(std::string_view key, std::int64_t value);
  /// \brief Remove `key`; returns whether it was present.
  bool Remove(std::string_view key);

  const std::vector<Attribute>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  bool operator==(const Attributes& other) const = default;

 private:
  std::vector<Attribute> items_;
};

struct Node;

/// A record field. `type` points into the owning Schema.
struct Field {
  std::string name;
  const Node* type = nullptr;
  std::string doc;                          ///< empty = absent
  std::optional<std::string> default_json;  ///< the "default" value as JSON text
  std::vector<std::string> aliases;
  Attributes attributes;  ///< field-id, iceberg-field-name, order, ...

  /// \brief Iceberg's "field-id" attribute, if present and an integer.
  std::optional<std::int32_t> field_id() const;
};

/// \brief One schema node. Built by Schema::Parse or by hand through Schema::Add.
///
/// Named types (record, enum, fixed) have a name; `name_space` is the "namespace" key as
/// written (nullopt = absent) and `full_name` the resolved full name. Primitive types with no
/// attributes are written as a bare JSON string.
struct Node {
  Type type = Type::kNull;
  std::string name;                       ///< record/enum/fixed: the "name" key as written
  std::optional<std::string> name_space;  ///< record/enum/fixed: the "namespace" key
  std::string full_name;                  ///< record/enum/fixed: namespace-qualified name
  std::string doc;
  std::vector<std::string> aliases;
  std::vector<Field> fields;                ///< record
  std::vector<std::string> symbols;         ///< enum
  std::optional<std::string> enum_default;  ///< enum "default"
  std::int64_t fixed_size = 0;              ///< fixed
  const Node* items = nullptr;              ///< array
  const Node* values = nullptr;             ///< map
  std::vector<const Node*> branches;        ///< union
  Attributes attributes;                    ///< logicalType, element-id, key-id, value-id, ...

  bool is_named() const {
    return type == Type::kRecord || type == Type::kEnum || type == Type::kFixed;
  }
  /// \brief The "logicalType" attribute, or empty.
  std::string logical_type() const;

  /// \brief Index of the record field called `name`.
  std::optional<std::size_t> FieldIndex(std::string_view field_name) const;
  /// \brief Index of the record field whose "field-id" is `field_id`. Iceberg readers resolve
  /// fields this way, since foreign writers may order or name fields differently. Linear in
  /// the number of fields: resolve once per file, then index.
  std::optional<std::size_t> FieldIndexById(std::int32_t field_id) const;

  /// \brief For a union of null and one other type (Iceberg's optional), that other type;
  /// otherwise nullptr.
  const Node* NonNullBranch() const;
};

/// \brief A complete Avro schema: a root node and every node it reaches.
///
/// Nodes are heap-allocated and never move, so `const Node*` stay valid when the Schema is
/// moved. Not copyable. Thread-safety: const methods are safe to call concurrently; share a
/// finished schema as std::shared_ptr<const Schema>.
class Schema {
 public:
  Schema() = default;
  Schema(Schema&&) = default;
  Schema& operator=(Schema&&) = default;
  Schema(const Schema&) = delete;
  Schema& operator=(const Schema&) = delete;

  /// \brief Parse a schema from JSON text.
  ///
  /// Errors: kInvalidArgument for malformed JSON, unknown types, unresolved or duplicate
  /// names, bad fixed sizes, nested unions or nesting deeper than 64 levels.
  static Result<Schema> Parse(std::string_view json);

  /// \brief Write compact JSON: keys in the order Java's Avro writes them (type, name,
  /// namespace, doc, aliases, fields/symbols/size/items/values, then attributes in their own
  /// order); a named type written a second time is written as its full name.
  std::string ToJson() const;

  /// \brief Take ownership of a node and return a stable pointer to it, for building a
  /// schema by hand. Compute `full_name` yourself (or leave it empty to use `name`).
  Node* Add(Node node);
  /// \brief Convenience: add a primitive node.
  const Node* AddPrimitive(Type type);
  /// \brief Convenience: add the union ["null", type].
  const Node* AddOptional(const Node* type);

  void set_root(const Node* root) { root_ = root; }
  /// \brief The root node; a default-constructed Schema has none (check has_root()).
  const Node& root() const { return *root_; }
  bool has_root() const { return root_ != nullptr; }

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  const Node* root_ = nullptr;
};

}  // namespace geolake::avro
