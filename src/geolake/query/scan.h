/// \file
/// The query scan: one snapshot of an Iceberg table of GeoParquet files, filtered by a box,
/// an exact intersection geometry and a `--where` expression, with pruning at every level
/// (docs/table-layout.md): partitions (the geo_cell's extent grown by the largest row extent
/// the manifests allow), data files (manifest lower/upper bounds of bbox.* and the --where
/// columns), row groups (Parquet footer statistics) and pages (ColumnIndex/OffsetIndex). The
/// rows that survive are tested exactly: bbox overlap, then the expression, then GEOS prepared
/// intersection. Pages of a bbox column whose statistics prove its box predicate for every row
/// are not read at all, and the other output columns are read only for pages holding matches.
///
/// Row groups are decoded in parallel on the caller's executor (QueryOptions::executor; none:
/// on the calling thread), a window of them at a time sized by the memory budget; results reach
/// the RowSink in table order (manifest file order, then row order) whatever the number of
/// workers. Every byte read from data files is counted, so Explain's
/// bytes_read is what the scan really read (footers and page indexes included).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/geo/envelope.h"
#include "geolake/io/file_io.h"
#include "geolake/table/table_metadata.h"

namespace geolake {
class ThreadPool;
}  // namespace geolake

namespace geolake::query {

struct QueryOptions {
  /// Rows whose bbox overlaps this box (table CRS; x = lon, y = lat).
  std::optional<geo::Envelope> bbox;
  /// Rows whose geometry intersects this WKT geometry exactly.
  std::string intersects_wkt;
  /// The same as ISO WKB (ReadGeometryFileUnion); used instead of intersects_wkt when set.
  std::string intersects_wkb;
  /// A --where expression (expr.h); empty = none.
  std::string where;
  /// Time travel (table::ResolveSnapshot): a snapshot id, or the latest snapshot at or before a
  /// time (ms since epoch; table::ParseTimestampMillis reads the forms a user gives).
  std::optional<std::int64_t> snapshot_id;
  std::optional<std::int64_t> as_of_ms;
  /// Output attribute columns; empty = every top-level attribute except the layout's bbox,
  /// geo_cell and geo_hilbert. The geometry is always returned.
  std::vector<std::string> columns;
  /// Stop after this many rows (< 0: all).
  std::int64_t limit = -1;
  /// The engine's executor the scan runs its footer reads and row-group decodes on
  /// (non-owning; it must outlive RunQuery). nullptr: everything runs on the calling thread.
  ThreadPool* executor = nullptr;
  /// Decoded row groups in flight are kept under this (approximately: a row group's
  /// uncompressed size counts twice).
  std::int64_t memory_bytes = std::int64_t{512} << 20;
  /// Use page indexes (off: every page of a kept row group is read).
  bool page_pruning = true;
  /// Called on the calling thread for every row group that survives pruning, before any of it
  /// is read; false skips it (not counted as pruned). For operations that resume or shard by
  /// input unit (ops/runner.h). Unset: every surviving row group is read.
  std::function<bool(const std::string& file_path, int row_group)> row_group_filter;
};

/// \brief Considered / pruned counts of one planning level.
struct LevelCounts {
  std::int64_t considered = 0;
  std::int64_t pruned = 0;
  std::int64_t kept() const { return considered - pruned; }
};

/// \brief What a query did (--explain).
struct QueryExplain {
  std::int64_t snapshot_id = 0;
  std::string filter;          // the bound filter expression, as text
  std::string partition_note;  // how partitions were pruned, or why not
  LevelCounts partitions;
  LevelCounts files;
  /// Of `files`: those whose manifest carries lower/upper bounds of the geometry column (v3
  /// tables), and those pruned by them (counted in files.pruned too).
  std::int64_t files_with_geometry_bounds = 0;
  std::int64_t files_pruned_by_geometry_bounds = 0;
  LevelCounts row_groups;
  LevelCounts pages;              // data pages of every column chunk read
  std::int64_t rows_decoded = 0;  // rows whose filter columns were decoded
  std::int64_t rows_matched = 0;  // rows passing every filter (before --limit)
  std::int64_t rows_returned = 0;
  std::int64_t bytes_read = 0;   // from data files
  std::int64_t table_bytes = 0;  // Σ file_size_in_bytes of the snapshot's data files
  double seconds = 0;            // wall time of the query
  double cpu_seconds = 0;        // CPU time of the process (all threads) during the query

  /// \brief Multi-line text for --explain.
  std::string ToText() const;
  /// \brief One JSON object for --explain --json.
  std::string ToJson() const;
};

/// \brief The output fields of a query and the table's CRS.
struct OutputLayout {
  std::vector<geoparquet::FieldDef> fields;
  std::string crs;  // the table's geolake.crs property, e.g. "EPSG:4326" (may be empty)
  std::string layer_name;
};

/// \brief Receives the result rows, in order.
///
/// Thread-safety: called from one thread at a time.
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual Status Begin(const OutputLayout& layout) = 0;
  /// \brief Rows of one data file (feature_index = row position in that file).
  virtual Status Write(std::string_view file_path, const geoparquet::FeatureBatch& rows) = 0;
  /// \brief The matching rows of one row group, called for every row group read (in table
  /// order), also when none of its rows matched; the sink may move the rows out. The default
  /// passes non-empty batches to Write(); a sink that tracks input units (ops/runner.h)
  /// overrides it.
  virtual Status WriteRowGroup(std::string_view file_path, int row_group,
                               geoparquet::FeatureBatch& rows) {
    (void)row_group;
    return rows.num_rows() == 0 ? Status::OK() : Write(file_path, rows);
  }
  virtual Status Finish() = 0;
};

/// \brief Run a query. `sink` may be null (explain only: the scan still runs so that bytes are
/// real, but rows are dropped). Errors: kInvalidArgument for a bad expression, column or
/// geometry; kNotFound for an unknown snapshot; kNotImplemented for tables with delete files;
/// kCancelled when `stop` fires; read errors name the file.
Result<QueryExplain> RunQuery(const io::FileIO& io, const table::TableMetadata& metadata,
                              const QueryOptions& options, RowSink* sink,
                              std::stop_token stop = {});

/// \brief The paths of the data files a query with these options would read, in table order:
/// the snapshot's live files that partition pruning and the manifest bounds of the filter
/// columns keep (no data file is opened, so a file kept here may still hold no matching row).
/// Compaction selects the files of `--where` / `--bbox` with it. Errors: as RunQuery.
Result<std::vector<std::string>> SelectDataFiles(const io::FileIO& io,
                                                 const table::TableMetadata& metadata,
                                                 const QueryOptions& options);

}  // namespace geolake::query
