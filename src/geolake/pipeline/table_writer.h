/// \file
/// The write stage of ingest (docs/architecture.md, stage 3 of every job): transformed rows
/// become Parquet data files in the table's layout. The Parquet schema is derived from the
/// table's Iceberg schema (its field ids on every column); each file is a GeoParquet 1.1 file
/// written by GeoParquetFileWriter (geo metadata, bbox covering, Hilbert order over the table's
/// extent). One writer serves one unit of work and keeps one open file per partition value,
/// rolled at the target file size or flushed early when the memory budget is short, and
/// describes each finished file for a manifest (table::DataFile with its partition).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/core/thread_pool.h"
#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/formats/parquet/schema.h"
#include "geolake/io/file_io.h"
#include "geolake/layout/table_layout.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/transform.h"
#include "geolake/table/manifest.h"
#include "geolake/table/table_metadata.h"

namespace geolake::pipeline {

/// \brief The Parquet schema of a table's data files: one column per Iceberg field with its
/// field id (boolean, int, long, float, double, date, timestamp(tz), string, binary, structs,
/// and the v3 geometry type as BYTE_ARRAY with the Parquet GEOMETRY logical type, its crs from
/// layout::ParquetCrsOf with the table's `properties`).
/// Errors: kNotImplemented for other types (lists, maps, decimals, ...); those of ParquetCrsOf.
Result<parquet::Schema> ParquetSchemaForTable(
    const table::Schema& schema, const std::map<std::string, std::string>& properties = {});

/// \brief Everything a writer needs to know about the table, shared by all writers.
struct TableWriteOptions {
  std::string table_location;
  table::SchemaPtr schema;
  parquet::Schema parquet_schema;
  /// The attribute columns (the table's first columns) as source field types.
  std::vector<geoparquet::FieldDef> fields;
  layout::TableLayout layout;
  /// The table CRS as PROJJSON and as "AUTH:CODE" (for the "geo" metadata).
  std::string crs_projjson;
  std::string crs_authority;
  std::int64_t target_file_size_bytes = std::int64_t{128} << 20;
  std::int64_t row_group_rows = 65536;
  std::int64_t row_group_bytes = std::int64_t{128} << 20;
  geoparquet::Compression compression;
  /// Give geometry columns manifest lower/upper bounds (format version 3 and later;
  /// table::ParquetMetricsOptions::geometry_bounds).
  bool geometry_bounds = false;
  /// Borrowed, may be null: the executor every file writer compresses large pages on (the
  /// ingest's own executor).
  ThreadPool* executor = nullptr;
};

/// \brief Read TableWriteOptions from a table's metadata (layout, schema, write properties).
/// Errors: those of ReadTableLayout and ParquetSchemaForTable; kInvalidArgument for an unknown
/// CRS or compression codec.
Result<TableWriteOptions> TableWriteOptionsFor(const table::TableMetadata& metadata);

/// \brief One finished data file.
struct WrittenFile {
  std::string path;
  table::DataFile data_file;
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
};

/// \brief Writes the rows of one unit of work: one open file per partition value.
///
/// Rows are held (for Hilbert sorting) under a reservation on the memory budget; a file is
/// finished when its held bytes reach the target file size (uncompressed bytes, so files come
/// out smaller than the target), and the largest open file is finished early when the budget
/// cannot take the next batch or this writer holds more than `share_bytes`.
/// Thread-safety: none; one per worker. Options, FileIO, budget and stage must outlive it.
class PartitionedWriter {
 public:
  PartitionedWriter(const TableWriteOptions* options, const io::FileIO* io, MemoryBudget* budget,
                    std::int64_t share_bytes, StageMetrics* stage = nullptr,
                    std::stop_token stop = {});
  ~PartitionedWriter();
  PartitionedWriter(const PartitionedWriter&) = delete;
  PartitionedWriter& operator=(const PartitionedWriter&) = delete;

  /// \brief Add rows of partition `cell` (nullopt = null cell or unpartitioned). Errors:
  /// kCancelled while waiting for budget; the file writer's and FileIO's errors.
  Status Add(const std::optional<std::string>& cell, geoparquet::FeatureBatch batch,
             std::vector<geo::WkbSummary> summaries);

  /// \brief Finish every open file.
  Status FinishAll();

  /// \brief The files finished so far (and forget them).
  std::vector<WrittenFile> TakeWritten();

  /// \brief Drop every open file (nothing is published) and release the budget.
  void Abort();

  std::int64_t held_bytes() const { return held_bytes_; }

 private:
  struct OpenFile;
  Status Finish(const std::optional<std::string>& which);
  Status FinishLargest();
  Result<OpenFile*> FileFor(const std::optional<std::string>& cell);

  const TableWriteOptions* options_;
  const io::FileIO* io_;
  MemoryBudget* budget_;
  std::int64_t share_bytes_;
  StageMetrics* stage_;
  std::stop_token stop_;
  std::map<std::optional<std::string>, std::unique_ptr<OpenFile>> open_;
  std::int64_t held_bytes_ = 0;
  std::vector<WrittenFile> written_;
};

/// \brief Split a transformed batch by partition cell and add each part to `writer` (the rows
/// are moved out). Errors: those of PartitionedWriter::Add.
Status WriteTransformedBatch(TransformedBatch* transformed, PartitionedWriter* writer);

/// \brief The path of a new data file: `<location>/data/geo_cell=<cell>/<uuid>.parquet`
/// (`geo_cell=null` for the null cell), or `<location>/data/<uuid>.parquet` unpartitioned.
std::string DataFilePath(const std::string& table_location, bool partitioned,
                         const std::optional<std::string>& cell);

}  // namespace geolake::pipeline
