/// \file
/// GeoParquetSource: reads GeoParquet files (ours and other writers', e.g. DuckDB, GDAL,
/// GeoPandas) through geolake's own Parquet reader into FeatureBatches. The geometry column is
/// the "geo" metadata's primary_column (WKB, passed through unchanged); the other root columns
/// that map to a FieldType become attributes (nested columns such as the bbox covering struct
/// are left out, they are derived data, and so are the `geo_cell` and `geo_hilbert` columns of
/// the files geolake writes: geoparquet::IsRecomputedLayoutField).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"

namespace geolake::sources {

/// \brief One open GeoParquet file.
///
/// Thread-safety: const methods are safe to call concurrently; ReadRows / ReadBatch are not
/// (one reader per thread; readers over different row groups of one file are independent).
class GeoParquetSource {
 public:
  ~GeoParquetSource();
  GeoParquetSource(const GeoParquetSource&) = delete;
  GeoParquetSource& operator=(const GeoParquetSource&) = delete;

  /// \brief Open `path` and read its footer and "geo" metadata.
  ///
  /// Errors: kNotFound for a missing file; kCorruptData for a broken Parquet file;
  /// kInvalidArgument for a Parquet file without "geo" metadata or whose primary column is
  /// missing or not WKB.
  static Result<std::unique_ptr<GeoParquetSource>> Open(const std::string& path);

  const std::string& path() const;
  const std::vector<geoparquet::FieldDef>& fields() const;
  const std::string& crs_projjson() const;   // empty = OGC:CRS84 default or unknown
  const std::string& crs_authority() const;  // "OGC:CRS84" when omitted, "EPSG:n" when stated
  std::int64_t num_rows() const;
  int num_row_groups() const;
  std::int64_t row_group_rows(int row_group) const;

  /// \brief Read rows from row index `first_row` (a row group boundary or not) on.
  Status Seek(std::int64_t first_row);

  /// \brief Read up to `max_rows` rows into `batch` (cleared first), fewer when the batch
  /// reaches `max_wkb_bytes` of geometry first (0 = no byte limit); 0 at the end of the file.
  /// feature_index is the row's index in the file.
  Result<std::int64_t> ReadBatch(std::int64_t max_rows, geoparquet::FeatureBatch* batch,
                                 std::int64_t max_wkb_bytes = 0);

 private:
  struct Impl;
  explicit GeoParquetSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace geolake::sources
