/// \file
/// FileWriter: writes a Parquet file from Batches through an io::OutputStream, streaming. Rows
/// are buffered, encoded and compressed in the open row group only; when the row group reaches
/// its row or byte limit its column chunks are written to the stream and dropped. Close()
/// writes the page index (all ColumnIndex, then all OffsetIndex) and the footer, and returns
/// the FileMetaData, which carries what the Iceberg layer needs per column: sizes, value and
/// null counts, min/max bounds.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/column_writer.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"
#include "geolake/io/file_io.h"

namespace geolake::parquet {

/// \brief The created_by string geolake writes: "geolake version 0.1.0 (build <build>)".
std::string GeolakeCreatedBy(std::string_view build = "dev");

/// \brief Options of a FileWriter. The defaults are the table layout of docs/table-layout.md.
struct WriterOptions {
  std::int64_t row_group_rows = 65536;
  /// Also close a row group when its buffered (encoded, compressed) bytes reach this.
  std::int64_t row_group_bytes = std::int64_t{128} << 20;
  /// Options for every column; `column_options` overrides them per dotted leaf path.
  ColumnWriteOptions column;
  std::map<std::string, ColumnWriteOptions> column_options;
  /// File key-value metadata (more can be added with AddKeyValueMetadata before Close).
  std::vector<KeyValue> key_value_metadata;
  std::string created_by = GeolakeCreatedBy();
  /// Sorting columns recorded in every row group (the writer does not sort).
  std::vector<SortingColumn> sorting_columns;
  /// If set, this top-level BYTE_ARRAY column (WKB) gets the Parquet GEOMETRY logical type
  /// with this crs (nullopt = OGC:CRS84 default) and GeospatialStatistics. Off by default:
  /// GeoParquet 1.1 needs no logical type and pre-2.11 readers may not know it.
  std::optional<std::string> geometry_logical_type_column;
  std::optional<std::string> geometry_crs;
  /// Borrowed, may be null: compress the large pages of every column as tasks on this executor
  /// (see ColumnChunkWriter); null or one thread: on the writer's thread. The file's bytes are
  /// the same either way.
  ThreadPool* executor = nullptr;
};

/// \brief Writes one Parquet file.
///
/// Usage: Open -> WriteBatch* -> [AddKeyValueMetadata] -> Close. The stream is borrowed: it
/// must outlive the writer, and the caller closes (publishes) it after Close() succeeds or
/// aborts it on failure. After any error the writer is unusable (further calls fail).
/// Thread-safety: none.
class FileWriter {
 public:
  /// \brief Start a file: validates schema and options and writes the magic.
  ///
  /// kInvalidArgument for options that do not fit the schema (unknown column in
  /// column_options, an encoding a column's type cannot use, non-positive limits);
  /// kNotImplemented for repeated (list) columns or INT96; kIOError from the stream.
  static Result<std::unique_ptr<FileWriter>> Open(io::OutputStream* sink, Schema schema,
                                                  WriterOptions options = {});
  ~FileWriter();

  /// \brief Append rows. kInvalidArgument if the batch does not match the schema.
  Status WriteBatch(const Batch& batch);

  /// \brief Close the open row group now (no-op when it is empty).
  Status FlushRowGroup();

  /// \brief Add (or replace) a file key-value entry, e.g. GeoParquet's "geo".
  void AddKeyValueMetadata(std::string key, std::string value);

  /// \brief Flush, write page indexes and footer. Returns the footer as written.
  Result<FileMetaData> Close();

  /// \brief The schema as written (with the geometry logical type applied, if asked for).
  const Schema& schema() const { return schema_; }
  std::int64_t rows_written() const { return rows_written_; }
  /// \brief Bytes held by the open row group (pages being compressed on the executor count as
  /// the most their codec can make of them).
  std::int64_t buffered_bytes() const;
  /// \brief Bytes already written to the stream.
  std::int64_t bytes_written() const;

 private:
  FileWriter(io::OutputStream* sink, Schema schema, WriterOptions options);
  Status WriteRows(const Batch& batch, std::int64_t row_begin, std::int64_t row_end,
                   std::vector<std::int64_t>& value_cursor);
  Status Fail(Status st);
  // Wait for every column's pages being compressed (see ColumnChunkWriter::Settle).
  Status SettleColumns();

  io::OutputStream* sink_;
  Schema schema_;
  WriterOptions options_;
  std::vector<std::unique_ptr<ColumnChunkWriter>> columns_;
  std::int64_t rows_in_group_ = 0;
  std::int64_t rows_written_ = 0;
  std::vector<RowGroup> row_groups_;
  // Page index per row group and column, written at Close.
  std::vector<std::vector<std::optional<ColumnIndex>>> column_indexes_;
  std::vector<std::vector<OffsetIndex>> offset_indexes_;
  Status error_;
  bool closed_ = false;
};

}  // namespace geolake::parquet
