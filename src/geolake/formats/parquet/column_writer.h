/// \file
/// ColumnChunkWriter: turns the values and levels of one leaf column, for one row group, into a
/// finished column chunk (an optional dictionary page followed by data pages v1, each page a
/// Thrift PageHeader plus a compressed body), together with its ColumnMetaData, its
/// ColumnIndex/OffsetIndex entries and its statistics. The chunk is built in memory and handed
/// to the FileWriter, which writes it and drops it, so memory is bounded by one row group.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/core/thread_pool.h"
#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/compression.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"
#include "geolake/formats/parquet/statistics.h"

namespace geolake::parquet {

/// \brief How one column chunk is encoded.
struct ColumnWriteOptions {
  /// Value encoding when no dictionary is used (or after falling back from it): PLAIN,
  /// DELTA_BINARY_PACKED (INT32/INT64), BYTE_STREAM_SPLIT (FLOAT/DOUBLE/INT32/INT64),
  /// DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY (BYTE_ARRAY).
  Encoding encoding = Encoding::kPlain;
  /// With encoding PLAIN on INT32/INT64: a page whose values are sorted (ascending or
  /// descending) is written DELTA_BINARY_PACKED when that is at most half of PLAIN's size.
  bool delta_for_sorted_integers = true;
  /// Try RLE_DICTIONARY first (not for BOOLEAN); fall back to `encoding` when the dictionary
  /// page would exceed dictionary_page_size_limit.
  bool dictionary = true;
  std::int64_t dictionary_page_size_limit = 1 << 20;
  /// Rows a chunk is expected to hold (FileWriter sets its row_group_rows; 0 = unknown). The
  /// writer gives up the dictionary as soon as it holds more entries than half of this.
  std::int64_t expected_chunk_rows = 0;
  std::int64_t data_page_size = 1 << 20;  // uncompressed bytes per data page, about
  /// Pages are cut by bytes only unless this is lowered. zstd compresses one page at a time,
  /// and on bench/parquet's columns 20000-row pages (parquet-mr's default) made the file 35%
  /// larger than one page per 64k-row chunk; lower it for finer page-index pruning.
  std::int64_t max_rows_per_page = std::numeric_limits<std::int32_t>::max();
  /// Write DATA_PAGE_V2 pages (levels uncompressed, num_rows/num_nulls in the header) instead
  /// of the default v1 pages that every reader supports.
  bool data_page_v2 = false;
  CompressionCodec codec = CompressionCodec::kZstd;
  CompressionOptions compression;
  bool write_statistics = true;
  bool write_page_index = true;
  /// Binary min/max longer than this are truncated (the bound stays valid).
  std::size_t max_statistics_bytes = 64;
  /// For GEOMETRY/GEOGRAPHY columns: compute GeospatialStatistics from the WKB values.
  bool write_geospatial_statistics = true;
};

/// \brief True if `encoding` can encode values of `type` in this writer.
bool WriterSupportsEncoding(PhysicalType type, Encoding encoding);

/// \brief A finished column chunk: its bytes and metadata with offsets relative to its start.
struct FinishedChunk {
  /// The chunk's bytes, in order: pieces to write one after the other (a page's header and
  /// its stored bytes are separate pieces, so the chunk is never copied into one buffer).
  std::vector<std::string> pieces;  // metadata.total_compressed_size bytes in all
  ColumnMetaData metadata;          // data_page_offset etc. relative to the chunk start
  std::vector<PageLocation> pages;  // offsets relative to the chunk start
  std::optional<ColumnIndex> column_index;
  std::int64_t num_rows = 0;
  StatisticsAccumulator statistics;  // untruncated chunk statistics
};

/// \brief Builds one column chunk.
///
/// With an executor of more than one thread, each page of at least kMinParallelPageBytes is
/// compressed by a task on the executor while the writer goes on cutting the next ones; at most
/// kMaxPendingPages pages (and about kMaxPendingBytes of them, uncompressed) wait to be
/// compressed or assembled, and Finish waits for them (a writer running on a worker of the
/// executor compresses its own waiting pages meanwhile). The chunk's bytes are the same as
/// without the executor.
/// Thread-safety: none; different columns may be written by different threads.
class ColumnChunkWriter {
 public:
  /// Smaller pages are compressed on the writer's thread: queueing a task and waking a thread
  /// costs microseconds, while zstd (level 3, a few hundred MB/s) takes ~0.1 ms on 32 KiB.
  static constexpr std::int64_t kMinParallelPageBytes = std::int64_t{32} << 10;
  static constexpr std::size_t kMaxPendingPages = 8;
  static constexpr std::int64_t kMaxPendingBytes = std::int64_t{4} << 20;

  /// \brief A writer for `leaf`. `executor` (borrowed, may be null: every page is compressed
  /// on the writer's thread) must outlive the writer.
  /// kNotImplemented for repeated columns, INT96 or a codec that cannot be written;
  /// kInvalidArgument for an encoding the type cannot use or non-positive page limits.
  static Result<std::unique_ptr<ColumnChunkWriter>> Make(const LeafColumn& leaf,
                                                         ColumnWriteOptions options,
                                                         ThreadPool* executor = nullptr);
  ~ColumnChunkWriter();

  /// \brief Append the level entries [level_begin, level_end) of `column`, whose first
  /// non-null value is `value_begin`. The column must be non-repeated. Returns the number of
  /// values consumed.
  Result<std::int64_t> Append(const ColumnData& column, std::int64_t level_begin,
                              std::int64_t level_end, std::int64_t value_begin);

  /// \brief Bytes held: finished pages plus the open page's buffers. A page still being
  /// compressed counts as the most its codec can make of it, so this is an upper bound, exact
  /// when no page is pending (after Settle).
  std::int64_t buffered_bytes() const;

  /// \brief Wait for the pages being compressed and append them to the chunk. Returns the
  /// first error of their compression (the writer is then unusable).
  Status Settle();
  std::int64_t num_rows() const { return num_rows_; }

  /// \brief Close the last page and assemble the chunk. The writer is reset for a new chunk.
  Result<FinishedChunk> Finish();

 private:
  class Impl;
  explicit ColumnChunkWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::int64_t num_rows_ = 0;
};

}  // namespace geolake::parquet
