/// \file
/// Page compression for Parquet (Compression.md): UNCOMPRESSED, SNAPPY (raw block), GZIP
/// (RFC 1952 stream), ZSTD, LZ4_RAW (LZ4 block) and BROTLI both ways; the deprecated LZ4 codec
/// (Hadoop framing, falling back to a raw LZ4 block) for reading only. Decompression always
/// produces exactly the size a page header declares, never more: a stream that would decode to
/// more (a "bomb") or to less is kCorruptData.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

/// \brief Threads that compress pages of column chunks in parallel, shared by every writer of a
/// run (WriterOptions::compression_arena): a oneTBB arena of at most `max_threads` threads.
///
/// A writer's thread enters the arena only to wait for its own pages, and oneTBB's threads
/// join it only while a slot is free, so `max_threads` bounds the threads compressing at once
/// (with max_threads <= 1 writers do not use it and compress each page as it is cut).
/// Thread-safety: all methods may be called concurrently. It must outlive its task groups.
class CompressionArena {
 public:
  explicit CompressionArena(int max_threads);
  ~CompressionArena();
  CompressionArena(const CompressionArena&) = delete;
  CompressionArena& operator=(const CompressionArena&) = delete;

  int max_threads() const { return max_threads_; }
  /// \brief Tasks run so far, and those of them run by a thread other than the one that
  /// queued them (the parallelism the arena gave).
  std::int64_t tasks_run() const;
  std::int64_t tasks_run_elsewhere() const;

 private:
  friend class CompressionTaskGroup;
  struct Impl;
  int max_threads_;
  std::unique_ptr<Impl> impl_;
};

/// \brief Tasks run on a CompressionArena and waited for together.
///
/// Thread-safety: Run and Wait from one thread at a time; the tasks run on any thread of the
/// arena (or on the waiting thread). The destructor waits for every task.
class CompressionTaskGroup {
 public:
  explicit CompressionTaskGroup(CompressionArena* arena);
  ~CompressionTaskGroup();
  CompressionTaskGroup(const CompressionTaskGroup&) = delete;
  CompressionTaskGroup& operator=(const CompressionTaskGroup&) = delete;

  /// \brief Queue `task` on the arena and return at once. The task must not throw (report
  /// errors through its own state). kInternal if the task cannot be queued (it does not run).
  Status Run(std::function<void()> task);

  /// \brief Wait for every task queued so far, running queued tasks of the arena meanwhile.
  /// kInternal if the arena fails.
  Status Wait();

 private:
  struct Impl;
  CompressionArena* arena_;
  std::unique_ptr<Impl> impl_;
  std::int64_t queued_ = 0;  // tasks queued since the last Wait
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
