/// \file
/// RowSinks that write query results: CSV with WKT geometry (our own writer), GeoParquet
/// through geoparquet::GeoParquetFileWriter, and GeoJSON, GeoJSON text sequences, FlatGeobuf and
/// GeoPackage through GDAL's vector drivers (sources::GdalWriter). Text formats go to stdout when
/// no path is given; file outputs appear only when complete (written under a temporary name,
/// renamed at Finish, removed on failure).
#pragma once

#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/query/scan.h"

namespace geolake::query {

enum class OutputFormat : std::uint8_t {
  kGeoJson,
  kGeoJsonSeq,
  kCsv,
  kParquet,
  kFlatGeobuf,
  kGpkg
};

/// \brief "geojson", "geojsonseq", "csv", "parquet", "fgb", "gpkg". kInvalidArgument otherwise.
Result<OutputFormat> ParseOutputFormat(std::string_view text);

/// \brief A sink writing `format` to `path` (empty = stdout, text formats only; the binary
/// formats need a path: kInvalidArgument).
///
/// Thread-safety: one thread at a time (as RowSink). Errors of the sinks: kIOError naming the
/// path (GDAL's message included), kInvalidArgument for columns the format cannot hold;
/// kCancelled from a GeoJSON, GeoJSONSeq, FlatGeobuf or GeoPackage sink's Write once `stop` is
/// requested (checked every 1024 rows: one row group of GeoJSON takes seconds to write).
Result<std::unique_ptr<RowSink>> MakeOutputSink(OutputFormat format, const std::string& path,
                                                const io::FileIO& io,
                                                const std::stop_token& stop = {});

}  // namespace geolake::query
