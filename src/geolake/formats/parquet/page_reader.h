/// \file
/// Page framing for the Parquet reader: split a buffer holding column-chunk bytes into pages
/// (Thrift PageHeader + stored body), check every declared size against the bytes present and
/// the reader's limits, and decompress a page body with the chunk codec.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/compression.h"
#include "geolake/formats/parquet/parquet_types.h"

namespace geolake::parquet {

/// \brief Limits that bound what a reader allocates for one file, whatever its metadata claims.
struct ReaderOptions {
  /// Largest uncompressed page body accepted (a larger declared size is kCorruptData).
  std::int64_t max_page_bytes = std::int64_t{1} << 30;
  /// Largest decoded column (levels + values) produced by one read; reads that would exceed it
  /// fail with kCorruptData instead of allocating (e.g. a 5-byte RLE run claiming 2^31 nulls).
  std::int64_t max_decoded_bytes = std::int64_t{4} << 30;
  /// Largest footer (FileMetaData) accepted.
  std::int64_t max_footer_bytes = std::int64_t{256} << 20;
  /// Check each page that carries a CRC (PageHeader.crc: CRC-32 of the page's bytes as stored,
  /// after the header) and refuse a mismatch as kCorruptData. Every page geolake writes has
  /// one; turn this off only for foreign files known to carry wrong CRCs.
  bool verify_page_crc = true;
};

/// \brief One page as stored: its header and a view of its stored (possibly compressed) body.
struct RawPage {
  PageHeader header;
  std::string_view stored_body;
  std::uint64_t file_offset = 0;  // of the page header, for messages
  std::size_t header_size = 0;
};

/// \brief Read the page starting at `buffer[*pos]` and advance `*pos` past its body.
///
/// `buffer_file_offset` is the file offset of `buffer[0]` (for messages). kCorruptData when the
/// header does not decode, a size is negative, the body runs past the buffer, the
/// uncompressed size exceeds `options.max_page_bytes`, or (with `options.verify_page_crc`) the
/// header's CRC differs from the CRC-32 of the stored body.
Status ReadRawPage(std::string_view buffer, std::size_t* pos, std::uint64_t buffer_file_offset,
                   const ReaderOptions& options, RawPage* page);

/// \brief Decompress `stored` into exactly `uncompressed_size` bytes. For UNCOMPRESSED the result
/// views `stored` (which must then hold exactly that many bytes); otherwise it views `*scratch`.
/// A `decompressor` (optional) keeps codec state between pages.
Status DecompressPageBody(CompressionCodec codec, std::string_view stored,
                          std::int64_t uncompressed_size, const ReaderOptions& options,
                          std::string* scratch, std::string_view* body,
                          PageDecompressor* decompressor = nullptr);

/// \brief Buffers that column chunk reads reuse, so that reading row group after row group
/// allocates (and the kernel zeroes) fresh pages only when a chunk is larger than any before.
/// Before this, a third of the time reading bench/parquet's file went to page faults.
///
/// Thread-safety: none; one per reading thread.
struct DecodeBuffers {
  std::string chunk;                   // the stored bytes of a column chunk
  std::string page;                    // one decompressed page
  std::vector<std::uint32_t> indices;  // dictionary indices of one page
  PageDecompressor decompressor;
};

}  // namespace geolake::parquet
