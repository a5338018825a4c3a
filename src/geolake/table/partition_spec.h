/// \file
/// Partition transforms, partition specs (Iceberg spec, "Partition Transforms") and the partition
/// struct type that manifests store per data file. Transforms parse and print their JSON names;
/// identity, void, bucket[N], truncate[W] and the year/month/day/hour transforms can be applied to
/// values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/table/schema.h"
#include "geolake/table/single_value.h"
#include "geolake/table/types.h"

namespace geolake::table {

enum class TransformKind : std::uint8_t {
  kIdentity,
  kBucket,
  kTruncate,
  kYear,
  kMonth,
  kDay,
  kHour,
  kVoid,
  kUnknown,  // kept verbatim; readers ignore it, writers must not commit it
};

/// \brief A partition or sort transform such as "identity", "bucket[16]", "truncate[4]", "day".
///
/// Thread-safety: a value type.
class Transform {
 public:
  Transform() = default;
  static Transform Identity() { return Transform(TransformKind::kIdentity, 0, "identity"); }
  static Transform Void() { return Transform(TransformKind::kVoid, 0, "void"); }
  static Transform Year() { return Transform(TransformKind::kYear, 0, "year"); }
  static Transform Month() { return Transform(TransformKind::kMonth, 0, "month"); }
  static Transform Day() { return Transform(TransformKind::kDay, 0, "day"); }
  static Transform Hour() { return Transform(TransformKind::kHour, 0, "hour"); }
  static Transform Bucket(std::int32_t num_buckets);
  static Transform Truncate(std::int32_t width);

  /// \brief Parse a transform name. Never fails: an unrecognised name is kUnknown and keeps its
  /// text, because readers must tolerate transforms newer than they are.
  static Transform Parse(std::string_view text);

  TransformKind kind() const { return kind_; }
  /// \brief N of bucket[N], W of truncate[W]; 0 otherwise.
  std::int32_t param() const { return param_; }
  /// \brief The JSON name ("bucket[16]").
  const std::string& ToString() const { return text_; }

  /// \brief The type of the transform's result for a source type (identity: the source type,
  /// bucket/year/month/hour: int, day: date, void: the source type). kInvalidArgument when the
  /// source type cannot be transformed (e.g. identity on geometry, bucket on double).
  Result<TypePtr> ResultType(const TypePtr& source) const;

  /// \brief Apply the transform to a value of `source`. Null maps to null.
  Result<Value> Apply(const TypePtr& source, const Value& value) const;

  bool operator==(const Transform& o) const { return kind_ == o.kind_ && text_ == o.text_; }

 private:
  Transform(TransformKind kind, std::int32_t param, std::string text)
      : kind_(kind), param_(param), text_(std::move(text)) {}

  TransformKind kind_ = TransformKind::kIdentity;
  std::int32_t param_ = 0;
  std::string text_ = "identity";
};

/// \brief Murmur3 x86 32-bit hash of Iceberg's bucket input bytes for a value (Appendix B),
/// as a signed int. Exposed for tests and for callers that bucket many values.
Result<std::int32_t> BucketHash(const Type& source, const Value& value);

/// \brief One field of a partition spec.
struct PartitionField {
  std::int32_t source_id = 0;
  /// v3 multi-argument transforms list all sources here (source_id = the first).
  std::vector<std::int32_t> source_ids;
  std::int32_t field_id = 0;  // partition field ids start at 1000
  std::string name;
  Transform transform;

  bool operator==(const PartitionField&) const = default;
};

/// \brief The first partition field id; ids below it never name partition fields.
inline constexpr std::int32_t kFirstPartitionFieldId = 1000;

/// \brief How a table's rows map to partitions: a spec id and its fields.
///
/// Thread-safety: immutable; share as std::shared_ptr<const PartitionSpec>.
class PartitionSpec {
 public:
  PartitionSpec(std::int32_t spec_id, std::vector<PartitionField> fields)
      : spec_id_(spec_id), fields_(std::move(fields)) {}

  /// \brief The unpartitioned spec with id 0.
  static std::shared_ptr<const PartitionSpec> Unpartitioned();

  std::int32_t spec_id() const { return spec_id_; }
  const std::vector<PartitionField>& fields() const { return fields_; }
  bool is_unpartitioned() const;

  /// \brief The highest partition field id, or kFirstPartitionFieldId - 1 (999) when none.
  std::int32_t LastAssignedFieldId() const;

  /// \brief The partition struct type (data_file field 102): one optional field per partition
  /// field, with the partition field's id and name and the transform's result type.
  /// kInvalidArgument when a source field is missing from `schema` or cannot be transformed.
  Result<TypePtr> PartitionType(const Schema& schema) const;

  /// \brief Check the spec against a schema: sources exist and are transformable, names and
  /// field ids unique, ids >= 1000. kInvalidArgument otherwise.
  Status Validate(const Schema& schema) const;

  /// \brief Same fields (the spec id is ignored).
  bool SameFields(const PartitionSpec& other) const { return fields_ == other.fields_; }

  /// \brief The spec JSON object: {"spec-id":0,"fields":[{"name":..,"transform":..,
  /// "source-id":..,"field-id":..}]}.
  std::string ToJson() const;
  static Result<std::shared_ptr<const PartitionSpec>> FromJson(std::string_view json);

 private:
  std::int32_t spec_id_;
  std::vector<PartitionField> fields_;
};

using PartitionSpecPtr = std::shared_ptr<const PartitionSpec>;

}  // namespace geolake::table
