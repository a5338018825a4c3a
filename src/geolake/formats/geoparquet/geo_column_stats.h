/// \file
/// GeoColumnStats: what a writer learns about one geometry column while it encodes values, in
/// the form the "geo" metadata needs: the exact set of geometry types (with dimensions) and the
/// 2D bbox. One accumulator per writer thread or row group; Merge() joins them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/geometry_type.h"
#include "geolake/geo/wkb.h"

namespace geolake::geoparquet {

/// \brief Accumulates geometry types and bbox over WKB values.
///
/// Thread-safety: not synchronized; give each thread its own and Merge() them. Merging is
/// associative and commutative, so the order of row groups or threads does not matter.
class GeoColumnStats {
 public:
  /// \brief Account for one WKB value (ISO or EWKB, either byte order).
  ///
  /// Errors: kCorruptData from the WKB reader; the stats are then unchanged.
  Status Add(std::span<const std::uint8_t> wkb);

  /// \brief Account for one value already summarized (NormalizeWkb's or SummarizeWkb's
  /// output), without reading it again.
  void Add(const geo::WkbSummary& summary);

  /// \brief Account for one null value.
  void AddNull() { ++num_nulls_; }

  /// \brief Fold `other` into this.
  void Merge(const GeoColumnStats& other);

  /// \brief The types seen, ordered by WKB code (Point before LineString; XY before Z).
  std::vector<geo::TypedDimensions> types() const;

  /// \brief The types seen as GeoParquet names ("Polygon", "MultiPolygon Z", "Point M"...).
  std::vector<std::string> GeoParquetTypeNames() const;

  /// \brief True when some value had an M (or ZM) type, which GeoParquet 1.1 cannot list.
  bool has_m() const;

  /// \brief The 2D bbox of all non-empty values; empty when there were none.
  const geo::Envelope& envelope() const { return envelope_; }

  std::int64_t num_values() const { return num_values_; }
  std::int64_t num_nulls() const { return num_nulls_; }

  /// \brief Set `column`'s geometry_types and bbox from these stats (the bbox is cleared when
  /// the envelope is empty). Other fields are left as they are.
  void FillColumn(GeoColumnMetadata* column) const;

 private:
  // Bit (type - 1) * 4 + dims: 7 types x 4 layouts = 28 bits.
  std::uint32_t type_mask_ = 0;
  geo::Envelope envelope_;
  std::int64_t num_values_ = 0;
  std::int64_t num_nulls_ = 0;
};

}  // namespace geolake::geoparquet
