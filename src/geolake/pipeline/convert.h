/// \file
/// ConvertToGeoParquet: one vector source (anything GDAL reads) to one GeoParquet file, read
/// and written sequentially on the calling thread. The output appears atomically: it is
/// written to a temporary file and published on success only, so a failure or a stop leaves no
/// partial file behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/geoparquet_file.h"

namespace geolake::pipeline {

struct ConvertOptions {
  /// Layer to read; the first when empty.
  std::string layer;
  geoparquet::GeoParquetOptions file;
  /// Features per source read.
  std::int64_t read_batch_rows = 8192;
};

struct ConvertSummary {
  std::string source_driver;
  std::int64_t rows_read = 0;
  /// String values written with their invalid UTF-8 bytes replaced by U+FFFD.
  std::int64_t values_utf8_replaced = 0;
  geoparquet::GeoParquetFileSummary file;
  std::chrono::nanoseconds elapsed{0};
};

/// \brief Convert `source` to a GeoParquet file at `output` (replaced if it exists).
///
/// Metrics (when `metrics` is given): stage "read" (rows and WKB/attribute bytes from the
/// source) and stage "write" (rows and file bytes out), counter "null_geometries".
/// Errors: kNotFound when GDAL cannot open the source or layer; kInvalidArgument for bad
/// options or a source whose field names collide with geolake's columns; kCorruptData for a
/// feature GDAL or the WKB reader refuses; kIOError when the output cannot be written;
/// kCancelled when `stop` is requested (checked between batches).
Result<ConvertSummary> ConvertToGeoParquet(const std::string& source, const std::string& output,
                                           const ConvertOptions& options,
                                           Metrics* metrics = nullptr, std::stop_token stop = {});

}  // namespace geolake::pipeline
