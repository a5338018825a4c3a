/// \file
/// FeatureBatch: the columnar form in which sources hand features to the rest of geolake.
/// Attributes are typed column buffers with a validity byte per row; geometries are ISO WKB
/// (little-endian) in one contiguous buffer with offsets. No per-feature heap objects.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace geolake::geoparquet {

/// \brief Attribute types a source can deliver. Every id, count and label is int64.
enum class FieldType : std::uint8_t {
  kBool,
  kInt64,
  kDouble,
  kString,
  kBinary,
  kDate,       // days since 1970-01-01
  kTimestamp,  // microseconds since 1970-01-01T00:00:00, UTC when the source says so
};

/// \brief "bool", "int64", ... for messages and schema listings.
std::string_view FieldTypeName(FieldType type);

struct FieldDef {
  std::string name;
  FieldType type = FieldType::kString;
};

/// \brief One attribute column. Exactly one of the value vectors is used, chosen by the type:
/// ints (kBool, kInt64, kDate, kTimestamp), doubles (kDouble), or bytes + offsets (kString,
/// kBinary; value i is bytes[offsets[i], offsets[i+1])).
struct Column {
  FieldType type = FieldType::kString;
  std::vector<std::uint8_t> valid;  // 1 = value present, 0 = null
  std::vector<std::int64_t> ints;
  std::vector<double> doubles;
  std::string bytes;
  std::vector<std::int64_t> offsets{0};

  std::size_t size() const { return valid.size(); }
  std::string_view StringAt(std::size_t row) const {
    return std::string_view(bytes).substr(offsets[row], offsets[row + 1] - offsets[row]);
  }
  void Clear();
};

/// \brief A row the source could not decode (a GeoJSONSeq record that is not JSON): it has null
/// attributes and no geometry, and ingest rejects it whatever --on-invalid says.
struct UnreadableRow {
  std::int64_t row = 0;  // index in the batch
  std::string reason;    // with the record's place, e.g. "line 12: not JSON: ..."
};

/// \brief A batch of features: attribute columns in schema order plus one geometry column.
///
/// Thread-safety: a plain value; one thread fills it, then it may be handed to another.
struct FeatureBatch {
  std::vector<FieldDef> fields;
  std::vector<Column> columns;
  std::string wkb;  // concatenated ISO WKB, little-endian
  std::vector<std::int64_t> wkb_offsets{0};
  std::vector<std::uint8_t> geometry_valid;  // 0 = the feature had no geometry
  std::vector<std::int64_t> feature_index;   // position of the feature in its source
  std::vector<UnreadableRow> unreadable;     // ascending rows; usually empty

  std::int64_t num_rows() const { return static_cast<std::int64_t>(feature_index.size()); }
  std::span<const std::uint8_t> GeometryAt(std::size_t row) const {
    return {reinterpret_cast<const std::uint8_t*>(wkb.data()) + wkb_offsets[row],
            static_cast<std::size_t>(wkb_offsets[row + 1] - wkb_offsets[row])};
  }
  /// \brief Bytes held by the batch's buffers (what the memory budget counts).
  std::int64_t ByteSize() const;
  /// \brief Empty the batch, keeping the schema and the buffers' capacity.
  void Clear();
  /// \brief Clear, and give the batch the schema `schema` unless it has it already (same
  /// names and types; the readers' "cleared first, schema set" step).
  void Reset(const std::vector<FieldDef>& schema);
};

}  // namespace geolake::geoparquet
