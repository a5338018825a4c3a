/// \file
/// GroupWriter: the output side of rewriting one file group. Rows arrive in their final order
/// (a rewrite's strategy has already ordered them) and are streamed through the table's
/// GeoParquet writer (formats/geoparquet/geoparquet_file.h, RowOrder::kAsGiven: statistics,
/// page index, `geo_hilbert` of every row over the table's extent, the partition's `geo_cell`),
/// into files of the table's layout (pipeline/table_writer.h: schema, CRS, compression, data
/// file paths, manifest description), each cut once it reaches the group's split size. The
/// same writer writes the temporary sorted runs a sort spills (a folder of its own, one file).
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/io/file_io.h"
#include "geolake/maintenance/data_file_reader.h"
#include "geolake/pipeline/table_writer.h"

namespace geolake::maintenance {

struct GroupWriterOptions {
  /// The table's write options (schema, layout, CRS, compression). Borrowed.
  const pipeline::TableWriteOptions* table = nullptr;
  /// The partition of every row (`geo_cell` value; nullopt = null cell or unpartitioned).
  std::optional<std::string> cell;
  /// Cut a file once its size (file_bytes_so_far) reaches this; <= 0: one file.
  std::int64_t split_bytes = 0;
  /// Rows arrive in ascending Hilbert key order: declared in the files and checked.
  bool hilbert_sorted = false;
  /// The sort order the rows follow (DataFile::sort_order_id), when it is a table order.
  std::optional<std::int32_t> sort_order_id;
  /// Write into this folder (`<dir>/<uuid>.parquet`) instead of the table's data folder
  /// (spilled runs).
  std::string folder;
  /// Row group limits of the files written (the open row group is what the writer holds).
  std::int64_t row_group_rows = 65536;
  std::int64_t row_group_bytes = std::int64_t{128} << 20;
  /// Overrides the table's compression (spilled runs are written with a fast level).
  std::optional<geoparquet::Compression> compression;
  StageMetrics* stage = nullptr;  // rows/bytes out, busy time; may be null
};

/// \brief Writes rows in the order given into one or more files.
///
/// Thread-safety: none; one per group. Abort (or the destructor) deletes every file it wrote
/// unless Release was called: until a commit references them they are nobody's.
class GroupWriter {
 public:
  GroupWriter(GroupWriterOptions options, const io::FileIO* io);
  ~GroupWriter();
  GroupWriter(const GroupWriter&) = delete;
  GroupWriter& operator=(const GroupWriter&) = delete;

  /// \brief Write `batch` (its rows in their final order). Errors: the writer's and FileIO's.
  Status Add(RowBatch batch);
  /// \brief Finish the open file. After this, files() is complete.
  Status Finish();
  /// \brief Stop writing and delete every file written so far.
  void Abort();
  /// \brief Forget the files (they are now referenced by a commit, or the caller owns them).
  std::vector<pipeline::WrittenFile> Release();

  const std::vector<pipeline::WrittenFile>& files() const { return files_; }
  std::int64_t rows_written() const { return rows_written_; }
  std::int64_t bytes_written() const;

 private:
  Status OpenFile();
  Status FinishFile();

  GroupWriterOptions options_;
  const io::FileIO* io_;
  std::string path_;
  std::unique_ptr<io::OutputStream> stream_;
  std::unique_ptr<geoparquet::GeoParquetFileWriter> writer_;
  std::vector<pipeline::WrittenFile> files_;
  std::int64_t rows_written_ = 0;
};

}  // namespace geolake::maintenance
