/// \file
/// Build the manifest description of a Parquet data file (DataFile with its Iceberg metrics)
/// from the footer the Parquet writer returned, the way Java's ParquetMetrics does
/// (Iceberg spec, Appendix D): column sizes for every leaf with a field id; value, null and NaN
/// counts and lower/upper bounds for leaves outside lists and maps; bounds truncated to 16
/// characters or bytes (`write.metadata.metrics.default` = truncate(16)); split offsets from
/// row-group starts. Geometry and geography columns get counts but no bounds, as in Java.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/table/manifest.h"
#include "geolake/table/schema.h"

namespace geolake::table {

struct ParquetMetricsOptions {
  /// Strings keep at most this many code points in a bound, binary this many bytes; the upper
  /// bound is then incremented so it still bounds the data (dropped if that is impossible).
  int truncate_length = 16;
  /// NaN counts per field id, counted by the writer (Parquet statistics may lack them).
  std::map<std::int32_t, std::int64_t> nan_value_counts;
  /// Give geometry/geography columns v3 bounds (x:y[:z][:m] points) from the Parquet
  /// GeospatialStatistics bbox of every row group. Off by default: Java writes none, and only
  /// v3 tables may carry them. A bbox with xmin > xmax (antimeridian wrap) drops the bounds.
  bool geometry_bounds = false;
};

/// \brief Describe one written Parquet file for a manifest.
///
/// `table_schema` gives each field id its Iceberg type (how to read the Parquet statistics);
/// leaves without a field id, or whose id is not in the schema, are skipped. `partition` is the
/// file's partition tuple in spec order. kCorruptData if the footer's schema is malformed or a
/// statistic does not decode as its column's type.
Result<DataFile> DataFileFromParquet(const parquet::FileMetaData& footer, std::string path,
                                     std::int64_t file_size_in_bytes, const Schema& table_schema,
                                     std::vector<Value> partition,
                                     const ParquetMetricsOptions& options = {});

/// \brief Truncate a string lower bound to `length` code points (valid UTF-8 kept).
std::string TruncateLowerString(const std::string& value, int length);
/// \brief Truncate a string upper bound to `length` code points and increment the last code
/// point that can be incremented; nullopt when none can (the bound must then be dropped).
std::optional<std::string> TruncateUpperString(const std::string& value, int length);
/// \brief The same for binary: keep `length` bytes; the upper bound increments the last byte
/// below 0xFF and drops what follows it.
std::string TruncateLowerBinary(const std::string& value, int length);
std::optional<std::string> TruncateUpperBinary(const std::string& value, int length);

}  // namespace geolake::table
