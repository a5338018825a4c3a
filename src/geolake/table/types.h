/// \file
/// Iceberg data types: the primitive types of format v1-v3 (boolean through the v3 geometry and
/// geography types), and the nested struct, list and map types whose children carry field ids.
/// A Type is immutable and shared (TypePtr); nested types own their children. The JSON form of
/// a type (Iceberg spec, Appendix C) is produced and parsed in schema.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake::table {

/// \brief Every Iceberg type, primitive and nested.
enum class TypeId : std::uint8_t {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kTimestampNs,
  kTimestampTzNs,
  kString,
  kUuid,
  kFixed,
  kBinary,
  kUnknown,    // v3
  kVariant,    // v3
  kGeometry,   // v3
  kGeography,  // v3
  kStruct,
  kList,
  kMap,
};

/// \brief The edge interpolation of a geography column (v3); spherical is the default.
enum class EdgeAlgorithm : std::uint8_t { kSpherical, kVincenty, kThomas, kAndoyer, kKarney };

/// \brief The JSON name of an edge algorithm ("spherical", ...).
std::string_view EdgeAlgorithmName(EdgeAlgorithm algorithm);

class Type;
using TypePtr = std::shared_ptr<const Type>;

/// \brief One field of a struct (also a schema column): id, name, required flag, type, doc.
///
/// Field defaults (v3 `initial-default` / `write-default`) are kept as their JSON text, since
/// they are only carried through, never interpreted, by this layer.
struct NestedField {
  std::int32_t id = 0;
  std::string name;
  bool required = false;
  TypePtr type;
  std::string doc;  // empty = none
  std::optional<std::string> initial_default_json;
  std::optional<std::string> write_default_json;

  static NestedField Required(std::int32_t id, std::string name, TypePtr type,
                              std::string doc = {});
  static NestedField Optional(std::int32_t id, std::string name, TypePtr type,
                              std::string doc = {});
};

/// \brief An Iceberg type. Immutable; build with the static factories.
///
/// Thread-safety: immutable, safe to share between threads.
class Type {
 public:
  static TypePtr Boolean();
  static TypePtr Int();
  static TypePtr Long();
  static TypePtr Float();
  static TypePtr Double();
  static TypePtr Date();
  static TypePtr Time();
  static TypePtr Timestamp();
  static TypePtr TimestampTz();
  static TypePtr TimestampNs();
  static TypePtr TimestampTzNs();
  static TypePtr String();
  static TypePtr Uuid();
  static TypePtr Binary();
  static TypePtr Unknown();
  static TypePtr Variant();
  /// \brief decimal(P, S); P must be 1..38 and 0 <= S <= P (checked by Make).
  static Result<TypePtr> Decimal(int precision, int scale);
  /// \brief fixed[L] with L >= 1.
  static Result<TypePtr> Fixed(int length);
  /// \brief geometry(C). An empty `crs` means the default OGC:CRS84, written as bare "geometry".
  static TypePtr Geometry(std::string crs = {});
  /// \brief geography(C, A). An empty `crs` means the default OGC:CRS84.
  static TypePtr Geography(std::string crs = {},
                           EdgeAlgorithm algorithm = EdgeAlgorithm::kSpherical);
  static TypePtr Struct(std::vector<NestedField> fields);
  static TypePtr List(std::int32_t element_id, bool element_required, TypePtr element);
  static TypePtr Map(std::int32_t key_id, TypePtr key, std::int32_t value_id, bool value_required,
                     TypePtr value);

  /// \brief Parse a primitive type string: "long", "decimal(9, 2)", "fixed[16]",
  /// "geometry(EPSG:4326)", "geography(OGC:CRS84, karney)". Whitespace around parameters is
  /// accepted. kCorruptData for an unknown or malformed name.
  static Result<TypePtr> FromPrimitiveString(std::string_view text);

  TypeId id() const { return id_; }
  bool is_primitive() const { return id_ < TypeId::kStruct; }
  bool is_nested() const { return !is_primitive(); }

  /// \brief The type string of a primitive ("decimal(10, 2)"), or "struct"/"list"/"map".
  std::string ToString() const;

  // decimal
  int precision() const { return precision_; }
  int scale() const { return scale_; }
  // fixed
  int length() const { return length_; }
  // geometry / geography: the CRS as written, empty for the default.
  const std::string& crs() const { return crs_; }
  EdgeAlgorithm algorithm() const { return algorithm_; }
  // struct
  const std::vector<NestedField>& fields() const { return fields_; }
  /// \brief The direct child with this id, or nullptr.
  const NestedField* FindChild(std::int32_t field_id) const;
  // list: fields()[0] is the element; map: fields()[0] key, fields()[1] value.
  const NestedField& element() const { return fields_[0]; }
  const NestedField& key() const { return fields_[0]; }
  const NestedField& value() const { return fields_[1]; }

  /// \brief Structural equality, including field ids, names, required flags and docs.
  bool Equals(const Type& other) const;

 private:
  struct PrivateTag {};

 public:
  // Public only for std::make_shared; PrivateTag keeps it unusable outside this class.
  Type(PrivateTag /*tag*/, TypeId id) : id_(id) {}

 private:
  TypeId id_;
  int precision_ = 0;
  int scale_ = 0;
  int length_ = 0;
  std::string crs_;
  EdgeAlgorithm algorithm_ = EdgeAlgorithm::kSpherical;
  std::vector<NestedField> fields_;
};

bool operator==(const NestedField& a, const NestedField& b);

}  // namespace geolake::table
