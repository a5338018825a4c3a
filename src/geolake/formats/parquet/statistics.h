/// \file
/// Column statistics: min/max/null counts computed with the ordering rules of parquet.thrift's
/// ColumnOrder (signed or unsigned integers, unsigned bytewise for binary and strings,
/// false < true, floats over non-NaN values only with -0.0 as a zero minimum and +0.0 as a zero
/// maximum), bounds PLAIN-encoded as Parquet stores them, long binary bounds truncated to a
/// valid lower bound / rounded-up upper bound (UTF-8 kept valid for strings), and a comparator
/// over encoded bounds that the page index and the query layer share.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"

namespace geolake::parquet {

/// \brief How the values of a leaf column are ordered for min/max (TYPE_ORDER).
enum class SortOrder : std::uint8_t {
  kSigned,     // INT32/INT64 (incl. DATE, TIMESTAMP, DECIMAL), FLOAT/DOUBLE, BOOLEAN
  kUnsigned,   // UINT_*, BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY (bytewise)
  kUndefined,  // no min/max: GEOMETRY, GEOGRAPHY, INT96, INTERVAL, binary DECIMAL
};

/// \brief The sort order of a leaf under TYPE_ORDER.
SortOrder SortOrderOf(PhysicalType type, const std::optional<LogicalType>& logical_type,
                      const std::optional<ConvertedType>& converted_type = std::nullopt);
inline SortOrder SortOrderOf(const LeafColumn& leaf) {
  return SortOrderOf(leaf.physical_type, leaf.logical_type, leaf.converted_type);
}

/// \brief Compare two PLAIN-encoded bounds of a column (<0, 0, >0). Bounds of the wrong size
/// for a fixed-width type compare as bytes. Not meaningful for kUndefined.
int CompareEncodedValues(PhysicalType type, SortOrder order, std::string_view a,
                         std::string_view b);

/// \brief The longest prefix of `value` with at most `max_bytes` bytes (on a UTF-8 boundary
/// if `is_utf8`): a valid lower bound.
std::string TruncateLowerBound(std::string_view value, std::size_t max_bytes, bool is_utf8);

/// \brief A value of at most `max_bytes` bytes that is >= `value` and >= every string with its
/// truncated prefix (bytewise: increment the last byte below 0xFF; UTF-8: increment the last
/// code point). nullopt when none exists (e.g. all bytes 0xFF).
std::optional<std::string> TruncateUpperBound(std::string_view value, std::size_t max_bytes,
                                              bool is_utf8);

/// \brief Accumulates min, max and null count of one leaf column (a page or a chunk).
///
/// Thread-safety: none (a value type).
class StatisticsAccumulator {
 public:
  explicit StatisticsAccumulator(const LeafColumn& leaf);

  /// \brief Fold in the non-null values [value_begin, value_end) of `column`.
  void UpdateValues(const ColumnData& column, std::int64_t value_begin, std::int64_t value_end);
  void AddNulls(std::int64_t count) { null_count_ += count; }
  /// \brief Fold in another accumulator of the same column.
  void Merge(const StatisticsAccumulator& other);
  void Reset();

  std::int64_t null_count() const { return null_count_; }
  std::int64_t nan_count() const { return nan_count_; }
  std::int64_t num_values() const { return num_values_; }
  /// \brief True when min/max exist (some non-NaN value seen and the order is defined).
  bool has_min_max() const { return has_min_max_; }
  /// \brief Untruncated PLAIN-encoded bounds (valid when has_min_max()).
  const std::string& min() const { return min_; }
  const std::string& max() const { return max_; }
  SortOrder order() const { return order_; }

  /// \brief Chunk statistics for the footer: null_count always; min_value/max_value when
  /// defined, binary bounds truncated to `max_binary_bytes` with is_*_exact set accordingly.
  Statistics ToThrift(std::size_t max_binary_bytes) const;

  /// \brief Bounds for the page index, truncated like ToThrift's (exactness is not recorded
  /// there). Returns false when there are none (no non-NaN value, or an undefined order).
  bool IndexBounds(std::size_t max_binary_bytes, std::string* min_out, std::string* max_out) const;

 private:
  void MergeBounds(std::string_view lo, std::string_view hi);

  PhysicalType type_;
  SortOrder order_;
  bool is_utf8_ = false;
  std::int64_t null_count_ = 0;
  std::int64_t nan_count_ = 0;
  std::int64_t num_values_ = 0;
  bool has_min_max_ = false;
  std::string min_;
  std::string max_;
};

}  // namespace geolake::parquet
