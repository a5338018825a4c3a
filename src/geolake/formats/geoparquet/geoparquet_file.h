/// \file
/// GeoParquetFileWriter: turns geoparquet::FeatureBatch rows into one GeoParquet 1.1 file laid out
/// as docs/table-layout.md describes it: the source attributes, `geometry` (ISO WKB,
/// little-endian), `bbox` (struct of double xmin, ymin, xmax, ymax, declared as the GeoParquet
/// bbox covering) and, when the rows are Hilbert-ordered, `geo_hilbert` (int64 sort key). Every
/// column carries a field id (numbered as Iceberg assigns fresh ids) and the file carries
/// the "geo" metadata: PROJJSON CRS from the source, exact geometry types, file bbox.
///
/// Row order: with RowOrder::kNone rows are streamed through as they arrive (memory bounded by
/// one row group). With RowOrder::kHilbert the Hilbert key of each row's bbox centre over the
/// extent of the whole file is needed before the first row can be written, so the batches are
/// kept in memory (plus one 16-byte (key, position) pair per row) until Finish(). This is the
/// plain sequential version; the ingest pipeline will shard and parallelize it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/core/thread_pool.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/formats/geoparquet/geo_column_stats.h"
#include "geolake/formats/geoparquet/layout_columns.h"
#include "geolake/formats/parquet/compression.h"
#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/hilbert.h"
#include "geolake/geo/wkb.h"
#include "geolake/io/file_io.h"

namespace geolake::geoparquet {

/// \brief The order of the rows inside a file.
enum class RowOrder : std::uint8_t {
  kNone = 0,     ///< as the source delivers them (streamed)
  kHilbert = 1,  ///< by the Hilbert key of the bbox centre; null/empty geometries last
  /// As the rows arrive (streamed, like kNone), with the `geo_hilbert` column still written:
  /// each row's key over `hilbert_extent`, which must be given. For rewriters whose rows are
  /// already in their final order (compaction merging sorted runs, maintenance/compact.h).
  kAsGiven = 2,
};

/// \brief Parse "hilbert" or "none". Errors: kInvalidArgument naming the text.
Result<RowOrder> ParseRowOrder(std::string_view text);

/// \brief A page codec and its level.
struct Compression {
  parquet::CompressionCodec codec = parquet::CompressionCodec::kZstd;
  parquet::CompressionOptions options;

  /// \brief "zstd:3", "snappy", "gzip:6", "none".
  std::string ToString() const;
};

/// \brief Parse `zstd[:LEVEL]` (LEVEL 1..22), `snappy`, `gzip[:LEVEL]` (LEVEL 1..9) or `none`
/// (also `uncompressed`). Errors: kInvalidArgument naming the text and what is accepted.
Result<Compression> ParseCompression(std::string_view text);

/// \brief How a GeoParquetFileWriter lays out the file.
struct GeoParquetOptions {
  RowOrder order = RowOrder::kHilbert;
  /// Write the `geo_hilbert` column (only with RowOrder::kHilbert, whose key it is).
  bool hilbert_column = true;
  /// Hilbert grid order: 2^order cells per side of the data's extent.
  int hilbert_order = 16;
  std::int64_t row_group_rows = 65536;
  /// Also close a row group when its encoded bytes reach this (bounds the writer's memory).
  std::int64_t row_group_bytes = std::int64_t{128} << 20;
  /// Rows per data page at most (pages are also cut at about 1 MiB). Bytes alone would give
  /// the fixed-width columns (bbox.*, geo_hilbert) one page per row group, and the query's
  /// page-index pruning nothing to skip. 4096 rows keeps pages of those columns at 32 KiB: a
  /// box of 1% of a uniform 1M-row table then reads ~2.5% of its bytes instead of ~5-7% with
  /// 16384 (bench/query/coverage.sh), for tables ~1% larger (0.8% between the
  /// 16k and 4k tables of that bench).
  std::int64_t max_rows_per_page = 4096;
  Compression compression;
  /// Borrowed, may be null: compress large pages as tasks on this executor
  /// (parquet::WriterOptions::executor).
  ThreadPool* executor = nullptr;
  /// Also give `geometry` the Parquet GEOMETRY logical type with geospatial statistics.
  bool geometry_logical_type = false;
  /// The extent the Hilbert key spans (a table's `geolake.hilbert.extent`); when absent, the
  /// file's own extent. Keys outside the extent clamp to its edge.
  std::optional<geo::Envelope> hilbert_extent;
  /// With kAsGiven: the rows arrive in ascending Hilbert key order (null keys last), so the
  /// file records `geo_hilbert` as its sorting column; a row whose key is below the previous
  /// row's fails Add with kInvalidArgument (the caller's merge is wrong, the file is unusable).
  bool hilbert_sorted_input = false;
  /// The Parquet schema to write, derived from a table schema (its field ids). It must hold
  /// the layout's attribute leaves in order, then `geometry`, the four `bbox` leaves, an
  /// optional `geo_cell` string and, with `hilbert_column`, `geo_hilbert`. When absent,
  /// GeoParquetSchema(layout.fields) is used (no `geo_cell`).
  std::optional<parquet::Schema> schema;
  /// The value of the `geo_cell` column (the file's partition); nullopt writes nulls. Only
  /// used when `schema` has that column.
  std::optional<std::string> cell_value;
};

/// \brief What the writer needs to know about the source before the first row.
struct SourceLayout {
  std::vector<geoparquet::FieldDef> fields;
  /// PROJJSON of the source CRS; empty when the source has none (the file then says
  /// `"crs": null`, CRS unknown).
  std::string crs_projjson;
  /// "EPSG:4326" etc. when known. EPSG:4326 and OGC:CRS84 are written by omitting `crs` (the
  /// GeoParquet default, OGC:CRS84: geolake's WKB is always x = lon, y = lat).
  std::string crs_authority;
};

/// \brief What Finish() wrote.
struct GeoParquetFileSummary {
  std::int64_t rows = 0;
  std::int64_t null_geometries = 0;
  /// Non-null geometries without any coordinate (their bbox is null, their key sorts last).
  std::int64_t empty_geometries = 0;
  std::int64_t row_groups = 0;
  /// Bytes written to the stream (the whole file).
  std::int64_t file_bytes = 0;
  geo::Envelope bbox;
  std::vector<std::string> geometry_types;
  /// The "geo" JSON as written.
  std::string geo_json;
  parquet::FileMetaData metadata;
};

/// \brief The Parquet schema of the layout: optional attribute columns (bool -> BOOLEAN, int64
/// -> INT64, double -> DOUBLE, string -> BYTE_ARRAY STRING, binary -> BYTE_ARRAY, date -> INT32
/// DATE, timestamp -> INT64 TIMESTAMP(micros, UTC)), then optional `geometry` BYTE_ARRAY,
/// optional `bbox` group of four required DOUBLEs, and with `hilbert_column` optional
/// `geo_hilbert` INT64. Field ids from 1 in Iceberg's fresh-id order: the top-level columns first,
/// then the `bbox` children.
///
/// Errors: kInvalidArgument when a source field is named `geometry` or `bbox`, or `geo_hilbert`
/// with `hilbert_column` (without it, a `geo_hilbert` field is an attribute like any other), or
/// two fields share a name.
Result<parquet::Schema> GeoParquetSchema(const std::vector<geoparquet::FieldDef>& fields,
                                         bool hilbert_column);

/// \brief Writes one GeoParquet file from FeatureBatches.
///
/// Usage: Open -> Add* -> Finish. The stream is borrowed: the caller closes (publishes) it
/// after Finish succeeds and aborts it otherwise. After an error the writer is unusable.
/// Thread-safety: none.
class GeoParquetFileWriter {
 public:
  /// \brief Start a file. Errors: as GeoParquetSchema; kInvalidArgument for a non-positive
  /// row group size or a Hilbert order outside [1, 31]; kIOError from the stream.
  static Result<std::unique_ptr<GeoParquetFileWriter>> Open(io::OutputStream* sink,
                                                            SourceLayout layout,
                                                            GeoParquetOptions options = {});
  ~GeoParquetFileWriter();

  /// \brief Take the rows of `batch`. Each geometry is validated and rewritten as ISO WKB
  /// (NormalizeWkb). Errors: kInvalidArgument when the batch's fields differ from the layout;
  /// kCorruptData naming the feature index for a geometry that is not valid WKB.
  Status Add(geoparquet::FeatureBatch batch);

  /// \brief Take rows whose geometries are already ISO little-endian WKB and summarized
  /// (NormalizeWkb's `summary`, one per row; ignored for null geometries), so no value is
  /// read again. Errors: kInvalidArgument when the batch's fields differ from the layout or
  /// the summaries do not match the rows.
  Status AddNormalized(geoparquet::FeatureBatch batch, std::vector<geo::WkbSummary> summaries);

  /// \brief Sort (if asked), write every row, the "geo" metadata and the footer.
  /// Errors: kInvalidArgument if the geometry types or bbox cannot be stated (should not
  /// happen for normalized input); the writer's and stream's errors.
  Result<GeoParquetFileSummary> Finish();

  const parquet::Schema& schema() const { return schema_; }
  /// \brief Rows accepted so far.
  std::int64_t rows() const { return rows_; }
  /// \brief Bytes of the batches held for sorting plus the open row group.
  std::int64_t buffered_bytes() const;
  /// \brief The size the file has so far: bytes written to the stream plus the open row
  /// group's encoded pages (rows held for sorting not counted). Rewriters cut files at a target
  /// size with it.
  std::int64_t file_bytes_so_far() const;
  /// \brief Close the open row group now (streamed orders only; a no-op when it is empty), so
  /// file_bytes_so_far() is exact: open pages count at their uncompressed size until then.
  Status FlushRowGroup();

 private:
  struct Held;
  struct RowRef;
  GeoParquetFileWriter(SourceLayout layout, GeoParquetOptions options, parquet::Schema schema);
  Status Fail(Status st);
  Status CheckFields(const geoparquet::FeatureBatch& batch) const;
  // Append the held rows `rows`, whose geometries hold `geometry_bytes` bytes, to `out`, a
  // column at a time.
  void AppendRows(std::span<const RowRef> rows, std::size_t geometry_bytes,
                  parquet::Batch* out) const;
  Status WriteSorted();
  Status FlushOut(parquet::Batch* out);

  SourceLayout layout_;
  GeoParquetOptions options_;
  parquet::Schema schema_;
  std::unique_ptr<parquet::FileWriter> writer_;
  std::vector<Held> held_;
  std::int64_t held_bytes_ = 0;
  geoparquet::GeoColumnStats stats_;
  std::int64_t rows_ = 0;
  std::int64_t empty_geometries_ = 0;
  // Leaf positions after the attributes: the `geo_cell` leaf (-1: none) and `geo_hilbert`.
  int cell_leaf_ = -1;
  int hilbert_leaf_ = -1;
  // kAsGiven: the curve each row's key is computed on, and the last key written (-1: none yet;
  // INT64_MAX after a null key, which sorts last).
  std::optional<geo::HilbertCurve> curve_;
  std::int64_t last_key_ = -1;
  Status error_;
  bool finished_ = false;
};

}  // namespace geolake::geoparquet
