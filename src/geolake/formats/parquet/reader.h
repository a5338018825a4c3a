/// \file
/// FileReader: reads a Parquet file through a RandomAccessFile. Open() checks the magic bytes
/// and footer length, decodes the FileMetaData and rebuilds the Schema; the caller then picks
/// row groups (by their statistics if it likes) and leaf columns (projection) and reads them
/// into ColumnData / Batch, optionally only the pages whose rows intersect given row ranges
/// (using the OffsetIndex). Every allocation is bounded by the file size or by ReaderOptions, so
/// a hostile file yields kCorruptData naming the file and offset, never a crash.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/page_reader.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"
#include "geolake/io/file_io.h"

namespace geolake::parquet {

/// \brief A half-open range of rows [begin, end) within a row group.
struct RowRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  bool operator==(const RowRange&) const = default;
};

/// \brief The pages of one column chunk read for a set of row ranges.
struct PageSelection {
  /// Levels and values of the pages read, in order (whole pages, so usually a superset of the
  /// requested rows).
  ColumnData data;
  /// The row ranges `data` covers (sorted, disjoint, adjacent ranges merged).
  std::vector<RowRange> rows;
  /// Data pages read and skipped.
  std::int64_t pages_read = 0;
  std::int64_t pages_skipped = 0;
};

/// \brief Reads one Parquet file.
///
/// Thread-safety: all methods are const and safe to call concurrently (reads are positional).
class FileReader {
 public:
  /// \brief Open a file the reader shares ownership of.
  ///
  /// kCorruptData (naming the path) for a file shorter than 12 bytes, wrong magic, a footer
  /// length past the file start, an undecodable footer or schema, or row groups whose column
  /// count differs from the schema; kNotImplemented for encrypted footers ("PARE").
  static Result<std::unique_ptr<FileReader>> Open(std::shared_ptr<const io::RandomAccessFile> file,
                                                  const ReaderOptions& options = {});
  /// \brief Open a file the caller keeps alive for the reader's lifetime.
  static Result<std::unique_ptr<FileReader>> Open(const io::RandomAccessFile* file,
                                                  const ReaderOptions& options = {});

  const FileMetaData& metadata() const { return metadata_; }
  const Schema& schema() const { return schema_; }
  std::int64_t num_rows() const { return metadata_.num_rows; }
  int num_row_groups() const { return static_cast<int>(metadata_.row_groups.size()); }
  const RowGroup& row_group(int index) const { return metadata_.row_groups[index]; }
  const std::string& path() const { return file_->path(); }

  /// \brief The footer statistics of one column chunk, or nullptr. Interpret the bounds with
  /// statistics.h (SortOrderOf, CompareEncodedValues) to select row groups by predicate.
  const Statistics* column_statistics(int row_group, int leaf) const;

  /// \brief Read every page of one column chunk.
  ///
  /// kInvalidArgument for indices out of range; kCorruptData (naming file, row group, column and
  /// page offset) for anything malformed; kNotImplemented for encrypted columns, LZO or
  /// unknown encodings.
  Result<ColumnData> ReadColumn(int row_group, int leaf) const;

  /// \brief Read the given leaf columns (all when `leaves` is empty) of one row group. The
  /// batch's columns follow the order of `leaves`.
  Result<Batch> ReadRowGroup(int row_group, const std::vector<int>& leaves = {}) const;

  /// \brief Like ReadColumn, into `*out` (replaced, its buffers' capacity reused) with scratch
  /// space from `*buffers`. For loops over many row groups: reusing both avoids allocating and
  /// faulting in fresh memory for every chunk. `*out` is unspecified after an error.
  Status ReadColumnInto(int row_group, int leaf, ColumnData* out, DecodeBuffers* buffers) const;
  /// \brief Like ReadRowGroup, into `*out` (its columns reused), with ReadColumnInto.
  Status ReadRowGroupInto(int row_group, const std::vector<int>& leaves, Batch* out,
                          DecodeBuffers* buffers) const;

  /// \brief The OffsetIndex / ColumnIndex of a column chunk; nullopt when the file has none.
  Result<std::optional<OffsetIndex>> ReadOffsetIndex(int row_group, int leaf) const;
  Result<std::optional<ColumnIndex>> ReadColumnIndex(int row_group, int leaf) const;

  /// \brief Read only the data pages of a column chunk whose rows intersect `ranges` (sorted,
  /// disjoint row ranges of the row group), plus the dictionary page. Without an OffsetIndex
  /// every page is read.
  Result<PageSelection> ReadColumnPages(int row_group, int leaf,
                                        const std::vector<RowRange>& ranges) const;

 private:
  FileReader(std::shared_ptr<const io::RandomAccessFile> owned, const io::RandomAccessFile* file,
             const ReaderOptions& options)
      : owned_(std::move(owned)), file_(file), options_(options) {}

  Status Init();
  Status CheckIndices(int row_group, int leaf) const;
  /// The chunk's metadata and its byte range [*begin, *begin + *length) in the file.
  Status ChunkRange(int row_group, int leaf, const ColumnMetaData** meta, std::uint64_t* begin,
                    std::uint64_t* length) const;
  std::string Where(int row_group, int leaf) const;

  std::shared_ptr<const io::RandomAccessFile> owned_;
  const io::RandomAccessFile* file_;
  ReaderOptions options_;
  FileMetaData metadata_;
  Schema schema_;
  bool needs_chunk_padding_ = false;  // old parquet-mr: chunk sizes omit a page header
};

}  // namespace geolake::parquet
