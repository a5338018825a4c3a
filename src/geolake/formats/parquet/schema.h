/// \file
/// Schema: the tree of fields of a Parquet file (name, repetition, physical and logical type,
/// field id, children for groups) and its flattened forms: the depth-first SchemaElement list
/// stored in the footer, and the list of leaf columns (path, max definition/repetition level)
/// that column data, writers and readers are indexed by.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/parquet_types.h"

namespace geolake::parquet {

/// \brief One node of a schema: a leaf (physical_type set, no children) or a group.
struct Field {
  std::string name;
  Repetition repetition = Repetition::kOptional;
  std::optional<PhysicalType> physical_type;  // leaves only
  std::optional<LogicalType> logical_type;
  std::optional<std::int32_t> field_id;
  std::int32_t type_length = 0;  // FIXED_LEN_BYTE_ARRAY width
  /// Legacy annotation read from a file, kept only when no LogicalType expresses it
  /// (MAP_KEY_VALUE, INTERVAL). ToElements derives ConvertedType from logical_type otherwise.
  std::optional<ConvertedType> converted_type;
  std::vector<Field> children;

  bool is_group() const { return !physical_type.has_value(); }
  bool operator==(const Field&) const = default;

  /// \brief A leaf column.
  static Field Leaf(std::string name, PhysicalType type, Repetition repetition,
                    std::optional<std::int32_t> field_id,
                    std::optional<LogicalType> logical_type = std::nullopt);
  /// \brief A group (struct) column.
  static Field Group(std::string name, Repetition repetition, std::optional<std::int32_t> field_id,
                     std::vector<Field> children);
};

/// \brief A leaf column of the flattened schema.
struct LeafColumn {
  std::vector<std::string> path;  // from the root's child down to the leaf
  PhysicalType physical_type = PhysicalType::kBoolean;
  std::optional<LogicalType> logical_type;
  std::optional<ConvertedType> converted_type;
  std::optional<std::int32_t> field_id;
  std::int32_t type_length = 0;
  Repetition repetition = Repetition::kRequired;  // the leaf's own repetition
  std::int16_t max_definition_level = 0;
  std::int16_t max_repetition_level = 0;
  std::int32_t top_level_field = 0;  // index into Schema::fields()

  /// \brief "a.b.c"
  std::string dotted_path() const;
};

/// \brief An immutable Parquet schema.
///
/// Thread-safety: immutable after construction; safe to share.
class Schema {
 public:
  Schema() = default;

  /// \brief Validate and flatten a tree of fields (the root is implicit, named "schema").
  ///
  /// kInvalidArgument for an empty name, a group without children, a leaf with children, or a
  /// FIXED_LEN_BYTE_ARRAY leaf without a positive type_length.
  static Result<Schema> Make(std::vector<Field> fields, std::string root_name = "schema");

  /// \brief Rebuild the tree from a footer's depth-first element list (tolerant: a root with a
  /// repetition, leaves with only a ConvertedType). kCorruptData when the num_children counts do
  /// not match the list.
  static Result<Schema> FromElements(const std::vector<SchemaElement>& elements);

  /// \brief The depth-first element list for the footer, with LogicalType plus the matching
  /// ConvertedType (and scale/precision for decimals).
  std::vector<SchemaElement> ToElements() const;

  const std::vector<Field>& fields() const { return fields_; }
  const std::vector<LeafColumn>& leaves() const { return leaves_; }
  int num_leaves() const { return static_cast<int>(leaves_.size()); }
  const std::string& root_name() const { return root_name_; }

  /// \brief Index of the leaf whose dotted path is `dotted_path`, or -1.
  int LeafIndex(const std::string& dotted_path) const;

  bool operator==(const Schema& other) const {
    return fields_ == other.fields_ && root_name_ == other.root_name_;
  }

 private:
  std::vector<Field> fields_;
  std::vector<LeafColumn> leaves_;
  std::string root_name_ = "schema";
};

/// \brief The legacy ConvertedType that goes with a LogicalType on a physical type, if any.
std::optional<ConvertedType> ConvertedTypeFor(const LogicalType& logical_type);

/// \brief The LogicalType implied by a legacy ConvertedType (for files without LogicalType).
std::optional<LogicalType> LogicalTypeFromConverted(ConvertedType converted, std::int32_t scale,
                                                    std::int32_t precision);

}  // namespace geolake::parquet
