/// \file
/// UnitReader: reads one unit that discover cut (discover.h SourceUnit) in FeatureBatches,
/// with the reader that suits its source (GpkgSource, GdalSource or GeoParquetSource).
#pragma once

#include <cstdint>
#include <memory>
#include <stop_token>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/sources/discover.h"

namespace geolake::sources {

/// \brief Reads one unit's features in batches; one reader per thread.
///
/// Thread-safety: none; each thread opens its own reader (readers of different units of one
/// file are independent).
class UnitReader {
 public:
  /// \brief Open the unit's source and position it at the unit's first row.
  ///
  /// A unit of a GeoPackage table is read by GpkgSource (native SQLite; GdalSource when it
  /// refuses the table). Errors: as GdalSource::Open / GpkgSource::Open / the Parquet reader
  /// (kNotFound, kCorruptData, ...).
  static Result<std::unique_ptr<UnitReader>> Open(const SourceUnit& unit);
  virtual ~UnitReader() = default;
  /// \brief Fill `batch` (cleared first) with up to max_rows features, stopping early once
  /// the batch holds `max_wkb_bytes` or more of geometry (0 = no byte limit; a batch always
  /// takes at least one feature); returns rows read, 0 at the end of the unit.
  /// FeatureBatch::feature_index holds the feature's index within the source.
  virtual Result<std::int64_t> ReadBatch(std::int64_t max_rows, std::int64_t max_wkb_bytes,
                                         geoparquet::FeatureBatch* batch) = 0;
  /// \brief ReadBatch with no byte limit.
  Result<std::int64_t> ReadBatch(std::int64_t max_rows, geoparquet::FeatureBatch* batch) {
    return ReadBatch(max_rows, 0, batch);
  }
  /// \brief The attribute fields every batch carries.
  virtual const std::vector<geoparquet::FieldDef>& fields() const = 0;
  /// \brief A stop that ReadBatch watches inside one long record (a GeoJSON geometry of
  /// millions of positions takes seconds to parse): ReadBatch then fails with kCancelled.
  /// Readers whose records are quick to read ignore it.
  virtual void SetStop(const std::stop_token& stop) { (void)stop; }
};

}  // namespace geolake::sources
