/// \file
/// Page compression for Parquet (Compression.md): UNCOMPRESSED, SNAPPY (raw block), GZIP
/// (RFC 1952 stream), ZSTD, LZ4_RAW (LZ4 block) and BROTLI both ways; the deprecated LZ4 codec
/// (Hadoop framing, falling back to a raw LZ4 block) for reading only. Decompression always
/// produces exactly the size a page header declares, never more: a stream that would decode to
/// more (a "bomb") or to less is kCorruptData.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/parquet_types.h"

namespace geolake::parquet {

/// \brief Codec tuning for compression.
struct CompressionOptions {
  int zstd_level = 3;      // 1..22; GeoParquet distribution advice is 11..16
  int gzip_level = 6;      // 1..9
  int brotli_quality = 5;  // 0..11
};

/// \brief The largest uncompressed page Decompress accepts by default (1 GiB).
inline constexpr std::int64_t kMaxDecompressedBytes = std::int64_t{1} << 30;

/// \brief True if Compress supports `codec` (LZ4 and LZO are never written).
bool CanCompress(CompressionCodec codec);
/// \brief True if Decompress supports `codec` (everything but LZO).
bool CanDecompress(CompressionCodec codec);

/// \brief An upper bound on the size Compress() gives `input_bytes` bytes with `codec`.
std::int64_t MaxCompressedSize(CompressionCodec codec, std::int64_t input_bytes);

/// \brief Compress `input` with `codec`, replacing the contents of `*out`.
///
/// kNotImplemented for LZ4 (Hadoop), LZO and unknown codecs; kInternal if a library fails.
Status Compress(CompressionCodec codec, std::string_view input, std::string* out,
                const CompressionOptions& options = {});

/// \brief Compresses pages with one codec and level.
///
/// ZSTD pages (here and in the free Compress) go through one context per thread, shared by
/// every compressor on that thread: a context holds one to a few MiB of tables, which a context
/// per column writer allocated, page-faulted and freed again for every column of every file
/// (an ingest writing a hundred small files made thousands). The context is used only inside
/// one Compress call, so a compressor may move between threads.
/// Thread-safety: none; use one per thread or column writer.
class PageCompressor {
 public:
  PageCompressor(CompressionCodec codec, CompressionOptions options);
  ~PageCompressor();
  PageCompressor(const PageCompressor&) = delete;
  PageCompressor& operator=(const PageCompressor&) = delete;

  /// \brief Like the free Compress() with this compressor's codec and options.
  Status Compress(std::string_view input, std::string* out);
  CompressionCodec codec() const { return codec_; }

 private:
  CompressionCodec codec_;
  CompressionOptions options_;
};

/// \brief Decompresses pages, reusing one ZSTD decompression context between pages
/// (ZSTD_decompress sets up and frees a context of about 100 KiB for every call).
///
/// Thread-safety: none; use one per thread or column read.
class PageDecompressor {
 public:
  PageDecompressor();
  ~PageDecompressor();
  PageDecompressor(const PageDecompressor&) = delete;
  PageDecompressor& operator=(const PageDecompressor&) = delete;

  /// \brief Like the free Decompress(); `*out` keeps its capacity between calls.
  Status Decompress(CompressionCodec codec, std::string_view input, std::int64_t uncompressed_size,
                    std::string* out, std::int64_t max_uncompressed_size = kMaxDecompressedBytes);

 private:
  void* zstd_context_ = nullptr;  // ZSTD_DCtx*, owned, created on first use
};

/// \brief Decompress `input` into exactly `uncompressed_size` bytes in `*out`.
///
/// kCorruptData when the stream is malformed or decodes to a different size, or when
/// `uncompressed_size` exceeds `max_uncompressed_size`; kNotImplemented for LZO/unknown codecs.
Status Decompress(CompressionCodec codec, std::string_view input, std::int64_t uncompressed_size,
                  std::string* out, std::int64_t max_uncompressed_size = kMaxDecompressedBytes);

}  // namespace geolake::parquet
