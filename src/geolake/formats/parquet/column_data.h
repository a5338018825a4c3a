/// \file
/// ColumnData and Batch: the in-memory columnar form that the Parquet writer consumes and the
/// reader produces (and that the ingest pipeline fills). Per leaf column, one typed value
/// buffer holding only the non-null values (BYTE_ARRAY: one contiguous byte buffer plus offsets),
/// plus the Parquet definition levels (one per entry, only when the leaf is nullable) and
/// repetition levels (only for repeated leaves). This is exactly Parquet's own model, so
/// writing and reading are copies of whole buffers, never per-value heap objects.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"

namespace geolake::parquet {

/// \brief The values and levels of one leaf column for some number of rows.
///
/// Invariants (checked by Validate):
/// - exactly one value buffer matching `type` is used: BOOLEAN -> bool_values (0/1),
///   INT32 -> int32_values, INT64 -> int64_values, FLOAT -> float_values, DOUBLE ->
///   double_values, BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY / INT96 -> byte_data + byte_offsets
///   (offsets has num_values()+1 entries, starting at 0, non-decreasing);
/// - if max_definition_level > 0, def_levels has one entry per level entry, each in
///   [0, max_definition_level], and the number equal to the max is num_values(); otherwise
///   def_levels is empty and every entry is a value;
/// - if max_repetition_level > 0, rep_levels has as many entries as def_levels.
/// Thread-safety: a value type.
struct ColumnData {
  PhysicalType type = PhysicalType::kInt32;
  std::int16_t max_definition_level = 0;
  std::int16_t max_repetition_level = 0;

  std::vector<std::uint8_t> bool_values;
  std::vector<std::int32_t> int32_values;
  std::vector<std::int64_t> int64_values;
  std::vector<float> float_values;
  std::vector<double> double_values;
  std::string byte_data;
  std::vector<std::int64_t> byte_offsets{0};

  std::vector<std::int16_t> def_levels;
  std::vector<std::int16_t> rep_levels;

  /// \brief An empty column for `leaf` (type and max levels copied).
  static ColumnData ForLeaf(const LeafColumn& leaf);

  /// \brief Number of non-null values stored.
  std::int64_t num_values() const;
  /// \brief Number of level entries (= rows for a non-repeated column).
  std::int64_t num_levels() const {
    return max_definition_level > 0 ? static_cast<std::int64_t>(def_levels.size()) : num_values();
  }
  /// \brief Number of level entries below the max definition level.
  std::int64_t null_count() const;

  /// \brief The i-th stored byte string (BYTE_ARRAY etc.).
  std::string_view bytes_at(std::int64_t i) const {
    return std::string_view(byte_data).substr(byte_offsets[i],
                                              byte_offsets[i + 1] - byte_offsets[i]);
  }

  // Appending one entry to a non-repeated column. Each Append* also records a definition level
  // of max_definition_level when the column is nullable.
  void AppendBool(bool v);
  void AppendInt32(std::int32_t v);
  void AppendInt64(std::int64_t v);
  void AppendFloat(float v);
  void AppendDouble(double v);
  void AppendBytes(std::string_view v);
  /// \brief Append a null at `def_level` (< max_definition_level; 0 = the outermost
  /// optional ancestor is null). DCHECKs that the column is nullable.
  void AppendNull(std::int16_t def_level = 0);

  void Clear();
  /// \brief Approximate memory held by the buffers, in bytes.
  std::int64_t ByteSize() const;

  /// \brief Check the invariants above; kInvalidArgument naming what is wrong.
  Status Validate() const;

 private:
  void AppendDefined();
};

/// \brief A number of rows of every leaf column of a schema, in leaf order.
struct Batch {
  std::int64_t num_rows = 0;
  std::vector<ColumnData> columns;

  /// \brief An empty batch with one column per leaf of `schema`.
  static Batch ForSchema(const Schema& schema);

  /// \brief Check that the batch matches `schema` (one column per leaf, types and max levels
  /// equal, every column holding num_rows rows). Only non-repeated leaves are supported by the
  /// row count check; repeated leaves are checked by their level-0 repetition entries.
  Status Validate(const Schema& schema) const;
};

}  // namespace geolake::parquet
