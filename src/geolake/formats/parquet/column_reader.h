/// \file
/// ColumnChunkDecoder: turns the pages of one column chunk into ColumnData (levels plus the
/// non-null values). It handles dictionary pages, data pages v1 and v2, every value encoding of
/// encoding.h, RLE and legacy BIT_PACKED levels, and decompression through compression.h.
/// Pages may be fed in file order or, for page skipping, any subset of the data pages after the
/// dictionary page.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/page_reader.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"

namespace geolake::parquet {

/// \brief Decodes the pages of one column chunk.
///
/// Thread-safety: none (holds the dictionary and a scratch buffer); use one per chunk read.
class ColumnChunkDecoder {
 public:
  /// `buffers` (optional, borrowed) are reused scratch space; without them the decoder has its
  /// own.
  ColumnChunkDecoder(const LeafColumn& leaf, CompressionCodec codec, const ReaderOptions& options,
                     DecodeBuffers* buffers = nullptr);

  /// \brief Decode the page at `buffer[*pos]` and advance past it. A dictionary page is kept for
  /// the data pages that follow; a data page appends its levels and values to `*out`; index and
  /// unknown page types are skipped. `buffer_file_offset` is the file offset of buffer[0].
  ///
  /// kCorruptData (naming the page's file offset) for malformed pages, a second dictionary, an
  /// index beyond the dictionary, levels above the maximum, or output past
  /// ReaderOptions::max_decoded_bytes; kNotImplemented for unsupported encodings.
  Status DecodePage(std::string_view buffer, std::size_t* pos, std::uint64_t buffer_file_offset,
                    ColumnData* out);

  /// \brief Level entries (values incl. nulls) appended by data pages so far.
  std::int64_t levels_decoded() const { return levels_decoded_; }
  /// \brief Data pages decoded so far.
  std::int64_t data_pages_decoded() const { return data_pages_; }

 private:
  Status DecodeDictionaryPage(const RawPage& page);
  Status DecodeDataPage(const RawPage& page, ColumnData* out);
  Status DecodeValues(Encoding encoding, std::string_view data, std::size_t count, ColumnData* out);
  Status AppendFromDictionary(std::string_view data, std::size_t count, ColumnData* out);
  Status Reserve(std::int64_t bytes);

  LeafColumn leaf_;
  CompressionCodec codec_;
  ReaderOptions options_;
  bool has_dictionary_ = false;
  ColumnData dictionary_;
  std::unique_ptr<DecodeBuffers> own_buffers_;
  DecodeBuffers* buffers_;
  std::int64_t levels_decoded_ = 0;
  std::int64_t data_pages_ = 0;
  std::int64_t decoded_bytes_ = 0;  // charged against options_.max_decoded_bytes
};

}  // namespace geolake::parquet
