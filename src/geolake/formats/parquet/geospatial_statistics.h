/// \file
/// Parquet GeospatialStatistics (format 2.11) for GEOMETRY/GEOGRAPHY columns: the bounding box
/// over all coordinates (x/y, and z/m when present; NaN coordinates skipped per dimension) and
/// the set of ISO WKB geometry type codes, computed by scanning the WKB values. The scanner
/// is self-contained (no GEOS) and checks every length against the value size.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/parquet_types.h"

namespace geolake::parquet {

/// \brief Accumulates GeospatialStatistics over WKB values.
///
/// Thread-safety: none (a value type).
class GeospatialStatisticsAccumulator {
 public:
  /// \brief Fold in one WKB value (ISO or EWKB flags; either byte order). kCorruptData for a
  /// malformed value; the accumulator is then marked invalid and ToThrift returns nothing.
  Status Update(std::string_view wkb);
  void Merge(const GeospatialStatisticsAccumulator& other);
  void Reset();

  /// \brief The statistics, or nullopt when a value was invalid. The bbox is omitted when no
  /// x or y value was seen; z/m ranges only when seen.
  std::optional<GeospatialStatistics> ToThrift() const;

 private:
  struct Range {
    double lo = 0;
    double hi = 0;
    bool seen = false;
    void Add(double v);
    void Merge(const Range& other);
  };

  bool valid_ = true;
  Range x_, y_, z_, m_;
  std::set<std::int32_t> types_;
};

}  // namespace geolake::parquet
