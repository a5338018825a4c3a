/// \file
/// DataFileReader: reads the rows of one data file of a geolake table the way the table sees
/// them, for rewriting (compaction): the table's attribute columns matched by Iceberg field id
/// (a column the file lacks reads as nulls, so files written before a schema change still
/// read), then the geometry; bbox, geo_cell and geo_hilbert are not read, because the writer
/// derives them from each geometry again. Every geometry is validated and summarized (type and
/// envelope) once here, which is what GeoParquetFileWriter::AddNormalized takes and what the
/// Hilbert key is computed from.
///
/// Rows come one row group at a time (a row group is the smallest unit Parquet decodes in
/// one piece), so a reader holds about its largest row group's decoded size
/// (max_row_group_bytes()) and nothing else.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/wkb.h"
#include "geolake/io/file_io.h"

namespace geolake::maintenance {

/// \brief The columns a rewrite reads: the table's attribute columns (their field ids and the
/// types the writer takes) and the geometry's field id.
struct ReadColumns {
  std::vector<std::int32_t> attribute_ids;
  std::vector<geoparquet::FieldDef> fields;  // same order as attribute_ids
  std::int32_t geometry_id = 0;
};

/// \brief Rows of a data file, in file order, with one WKB summary per row (meaningless for
/// rows without a geometry).
struct RowBatch {
  geoparquet::FeatureBatch rows;
  std::vector<geo::WkbSummary> summaries;

  std::int64_t num_rows() const { return rows.num_rows(); }
  /// \brief Bytes held by the buffers (what a memory budget counts).
  std::int64_t ByteSize() const;
  /// \brief An empty batch with the fields of `columns`.
  static RowBatch Empty(const ReadColumns& columns);
};

/// \brief Copy row `row` of `from` to the end of `to` (same fields).
void AppendRow(const RowBatch& from, std::size_t row, RowBatch* to);

/// \brief The pages of one row group as decoded, before Next() converts them to rows: needed only
/// while Next() runs, so readers used one after another on one thread (the runs of a k-way
/// merge) can share one and hold a single row group's pages between them instead of one each.
struct DecodeScratch {
  parquet::Batch decoded;
  parquet::DecodeBuffers buffers;
};

/// \brief Reads one data file, a row group at a time.
///
/// Thread-safety: none; one reader per thread.
class DataFileReader {
 public:
  /// \brief Open `path` and read its footer. Errors: kNotFound for a missing file;
  /// kCorruptData naming the file for a broken footer, a geometry column that is not BYTE_ARRAY,
  /// or no geometry column; kNotImplemented naming the column for a stored type the table type
  /// cannot take (e.g. a nested column where the table has a string).
  static Result<std::unique_ptr<DataFileReader>> Open(const io::FileIO& io, const std::string& path,
                                                      const ReadColumns& columns);

  /// \brief Read the next row group into `*out` (replaced). Returns the rows read, 0 at the
  /// end. Errors: kCorruptData naming the file, row group and row for undecodable pages or a
  /// geometry that is not valid WKB.
  Result<std::int64_t> Next(RowBatch* out) { return Next(out, &scratch_); }
  /// \brief The same, decoding into `*scratch` (not used by any other thread meanwhile) instead
  /// of the reader's own.
  Result<std::int64_t> Next(RowBatch* out, DecodeScratch* scratch);

  const std::string& path() const { return path_; }
  std::int64_t num_rows() const { return reader_->num_rows(); }
  std::int64_t rows_read() const { return rows_read_; }
  /// \brief The largest decoded size (Parquet's uncompressed size of the columns read, twice:
  /// the decoded pages and the rows converted from them) of any row group. Readers that share
  /// a DecodeScratch hold less: the pages of one row group between them.
  std::int64_t max_row_group_bytes() const { return max_row_group_bytes_; }
  /// \brief True when the footer says the rows are sorted by `geo_hilbert` ascending in every
  /// row group (what geolake's writers record), so the file is one Hilbert-sorted run.
  bool hilbert_sorted() const { return hilbert_sorted_; }

 private:
  DataFileReader() = default;

  std::string path_;
  ReadColumns columns_;
  std::unique_ptr<parquet::FileReader> reader_;
  std::vector<int> leaves_;       // per attribute: the file's leaf (-1: absent), then geometry
  std::vector<int> read_leaves_;  // the leaves present, in the order they are read
  std::vector<int> slot_;         // per entry of leaves_: its index in read_leaves_ (or -1)
  int next_group_ = 0;
  std::int64_t rows_read_ = 0;
  std::int64_t max_row_group_bytes_ = 0;
  bool hilbert_sorted_ = false;
  DecodeScratch scratch_;  // used when Next() is given none
};

}  // namespace geolake::maintenance
