/// \file
/// Schema: the columns of an Iceberg table at one point of its history, with a schema id,
/// the identifier-field-ids, and an index from field id and dotted name to each (nested) field.
/// JSON serialization follows the Iceberg spec (Appendix C) exactly; fresh ids for a new table are
/// assigned here as well.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/table/types.h"

namespace geolake::table {

/// \brief The columns of a table, with schema id and identifier fields.
///
/// Thread-safety: immutable after construction; share as std::shared_ptr<const Schema>.
class Schema {
 public:
  Schema(std::int32_t schema_id, std::vector<NestedField> fields,
         std::vector<std::int32_t> identifier_field_ids = {});

  std::int32_t schema_id() const { return schema_id_; }
  const std::vector<NestedField>& fields() const { return struct_->fields(); }
  /// \brief The schema as a struct type.
  const TypePtr& as_struct() const { return struct_; }
  const std::vector<std::int32_t>& identifier_field_ids() const { return identifier_field_ids_; }

  /// \brief The field with this id at any depth, or nullptr.
  const NestedField* FindField(std::int32_t field_id) const;
  /// \brief The field with this dotted name ("bbox.xmin", "tags.element"), or nullptr.
  const NestedField* FindField(std::string_view dotted_name) const;
  /// \brief The dotted name of a field id, or empty.
  std::string FindColumnName(std::int32_t field_id) const;

  /// \brief The highest field id used at any depth (0 for an empty schema).
  std::int32_t HighestFieldId() const { return highest_field_id_; }

  /// \brief Check that ids are positive and unique and identifier fields exist (kInvalidArgument).
  Status Validate() const;

  /// \brief Same fields and identifier fields; the schema id is ignored.
  bool SameFields(const Schema& other) const;

  /// \brief A copy with another schema id.
  std::shared_ptr<const Schema> WithSchemaId(std::int32_t schema_id) const;

  /// \brief The schema JSON object (Iceberg spec, Appendix C), e.g.
  /// {"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":true,"type":"long"}]}.
  std::string ToJson() const;
  /// \brief Parse a schema JSON object. kCorruptData naming the first missing/malformed key.
  static Result<std::shared_ptr<const Schema>> FromJson(std::string_view json);

 private:
  void Index(const NestedField& field, const std::string& prefix);

  std::int32_t schema_id_;
  TypePtr struct_;
  std::vector<std::int32_t> identifier_field_ids_;
  std::int32_t highest_field_id_ = 0;
  // Pointers into struct_, which is immutable and owned here, so they stay valid.
  std::unordered_map<std::int32_t, const NestedField*> by_id_;
  std::unordered_map<std::string, const NestedField*> by_name_;
  std::unordered_map<std::int32_t, std::string> names_;
  bool duplicate_ids_ = false;
};

using SchemaPtr = std::shared_ptr<const Schema>;

/// \brief The result of AssignFreshIds: the new schema and how old ids map to new ones.
struct FreshIds {
  SchemaPtr schema;
  std::unordered_map<std::int32_t, std::int32_t> old_to_new;
  std::int32_t last_column_id = 0;
};

/// \brief Renumber every field of `schema` from 1 the way Iceberg does for a new table: the
/// fields of a struct get consecutive ids first, then their children, depth first.
/// Identifier field ids are remapped. Old ids need not be unique (e.g. all 0) unless they are
/// used as identifier fields or by a partition spec / sort order that must be remapped.
FreshIds AssignFreshIds(const Schema& schema, std::int32_t schema_id = 0);

}  // namespace geolake::table
