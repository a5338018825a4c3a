#include "geolake/formats/parquet/compression.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <lz4.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <exception>
#include <string>

namespace geolake::parquet {
namespace {

Status Corrupt(CompressionCodec codec, const std::string& what) {
  return Status::CorruptData(std::string(CodecName(codec)) + " page: " + what);
}

// --- GZIP ---------------------------------------------------------------------------------------

Status GzipCompress(std::string_view input, std::string* out, int level) {
  z_stream zs{};
  // windowBits 15 + 16 = gzip wrapper (RFC 1952), which Parquet requires (not zlib/deflate).
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("gzip: deflateInit2 failed");
  }
  out->resize(deflateBound(&zs, static_cast<uLong>(input.size())) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  const int rc = deflate(&zs, Z_FINISH);
  const auto written = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return Status::Internal("gzip: deflate failed (" + std::to_string(rc) + ")");
  out->resize(written);
  return Status::OK();
}

Status GzipDecompress(std::string_view input, std::string* out) {
  z_stream zs{};
  // 15 + 32: accept gzip or zlib headers (some old writers emitted zlib streams).
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return Status::Internal("gzip: inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  Status st;
  while (true) {
    const int rc = inflate(&zs, Z_FINISH);
    if (rc == Z_STREAM_END) {
      // Several gzip members may follow each other; continue with the next one.
      if (zs.avail_in > 0 && zs.avail_out > 0) {
        inflateReset(&zs);
        continue;
      }
      if (zs.avail_in > 0) st = Corrupt(CompressionCodec::kGzip, "decodes to more than declared");
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_out == 0) {
      st = Corrupt(CompressionCodec::kGzip, "decodes to more than the declared size");
    } else {
      st = Corrupt(CompressionCodec::kGzip, std::string("inflate failed: ") +
                                                (zs.msg != nullptr ? zs.msg : std::to_string(rc)));
    }
    break;
  }
  const auto produced = zs.total_out;
  inflateEnd(&zs);
  GEOLAKE_RETURN_NOT_OK(st);
  if (zs.avail_out != 0) {
    return Corrupt(CompressionCodec::kGzip, "decodes to fewer bytes than declared");
  }
  (void)produced;
  return Status::OK();
}

// --- LZ4 (Hadoop framing) --------------------------------------------------------------------

std::uint32_t LoadBigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         std::uint32_t{u[3]};
}

// Hadoop's Lz4Codec writes blocks of [u32 BE uncompressed size][u32 BE compressed size][data].
bool TryLz4Hadoop(std::string_view input, std::string* out) {
  std::size_t in_pos = 0;
  std::size_t out_pos = 0;
  while (in_pos < input.size()) {
    if (input.size() - in_pos < 8) return false;
    const std::uint32_t block_uncompressed = LoadBigEndian32(input.data() + in_pos);
    const std::uint32_t block_compressed = LoadBigEndian32(input.data() + in_pos + 4);
    in_pos += 8;
    if (block_compressed > input.size() - in_pos) return false;
    if (block_uncompressed > out->size() - out_pos) return false;
    const int n = LZ4_decompress_safe(input.data() + in_pos, out->data() + out_pos,
                                      static_cast<int>(block_compressed),
                                      static_cast<int>(block_uncompressed));
    if (n < 0 || static_cast<std::uint32_t>(n) != block_uncompressed) return false;
    in_pos += block_compressed;
    out_pos += block_uncompressed;
  }
  return out_pos == out->size();
}

// The calling thread's ZSTD compression context (see PageCompressor), made on first use and
// freed when the thread ends. Each call resets the context's parameters, so pages of different
// levels and sizes may share it.
ZSTD_CCtx* ThreadCompressionContext() {
  struct Owner {
    ZSTD_CCtx* context = nullptr;
    ~Owner() { ZSTD_freeCCtx(context); }
  };
  thread_local Owner owner;
  if (owner.context == nullptr) owner.context = ZSTD_createCCtx();
  return owner.context;
}

Status ZstdCompress(std::string_view input, std::string* out, int level) {
  ZSTD_CCtx* context = ThreadCompressionContext();
  if (context == nullptr) return Status::Internal("zstd: cannot create a compression context");
  out->resize(ZSTD_compressBound(input.size()));
  const std::size_t n =
      ZSTD_compressCCtx(context, out->data(), out->size(), input.data(), input.size(), level);
  if (ZSTD_isError(n)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
  out->resize(n);
  return Status::OK();
}

}  // namespace

bool CanCompress(CompressionCodec codec) {
  switch (codec) {
    case CompressionCodec::kUncompressed:
    case CompressionCodec::kSnappy:
    case CompressionCodec::kGzip:
    case CompressionCodec::kBrotli:
    case CompressionCodec::kZstd:
    case CompressionCodec::kLz4Raw:
      return true;
    default:
      return false;
  }
}

std::int64_t MaxCompressedSize(CompressionCodec codec, std::int64_t input_bytes) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(input_bytes, 0));
  switch (codec) {
    case CompressionCodec::kSnappy:
      return static_cast<std::int64_t>(snappy::MaxCompressedLength(n));
    case CompressionCodec::kGzip:
      // zlib's bound for its 6-byte wrapper, plus gzip's 18-byte wrapper and the 32 bytes
      // GzipCompress adds to deflateBound.
      return static_cast<std::int64_t>(compressBound(static_cast<uLong>(n))) + 64;
    case CompressionCodec::kZstd:
      return static_cast<std::int64_t>(ZSTD_compressBound(n));
    case CompressionCodec::kLz4Raw:
      return n > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)
                 ? static_cast<std::int64_t>(n) + static_cast<std::int64_t>(n / 255) + 16
                 : LZ4_compressBound(static_cast<int>(n));
    case CompressionCodec::kBrotli: {
      const std::size_t bound = BrotliEncoderMaxCompressedSize(n);
      return static_cast<std::int64_t>(bound != 0 ? bound : n + 1024);
    }
    default:
      return static_cast<std::int64_t>(n);
  }
}

bool CanDecompress(CompressionCodec codec) {
  return CanCompress(codec) || codec == CompressionCodec::kLz4;
}

Status Compress(CompressionCodec codec, std::string_view input, std::string* out,
                const CompressionOptions& options) {
  switch (codec) {
    case CompressionCodec::kUncompressed:
      out->assign(input);
      return Status::OK();
    case CompressionCodec::kSnappy: {
      out->resize(snappy::MaxCompressedLength(input.size()));
      std::size_t written = 0;
      snappy::RawCompress(input.data(), input.size(), out->data(), &written);
      out->resize(written);
      return Status::OK();
    }
    case CompressionCodec::kGzip:
      return GzipCompress(input, out, options.gzip_level);
    case CompressionCodec::kZstd:
      return ZstdCompress(input, out, options.zstd_level);
    case CompressionCodec::kLz4Raw: {
      if (input.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) {
        return Status::InvalidArgument("lz4: page of " + std::to_string(input.size()) +
                                       " bytes is too large");
      }
      out->resize(LZ4_compressBound(static_cast<int>(input.size())));
      const int n = LZ4_compress_default(input.data(), out->data(), static_cast<int>(input.size()),
                                         static_cast<int>(out->size()));
      if (n <= 0 && !input.empty()) return Status::Internal("lz4: compression failed");
      out->resize(n);
      return Status::OK();
    }
    case CompressionCodec::kBrotli: {
      std::size_t size = BrotliEncoderMaxCompressedSize(input.size());
      if (size == 0) size = input.size() + 1024;
      out->resize(size);
      if (BrotliEncoderCompress(options.brotli_quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC,
                                input.size(), reinterpret_cast<const uint8_t*>(input.data()), &size,
                                reinterpret_cast<uint8_t*>(out->data())) != BROTLI_TRUE) {
        return Status::Internal("brotli: compression failed");
      }
      out->resize(size);
      return Status::OK();
    }
    default:
      return Status::NotImplemented("compression with codec " + std::string(CodecName(codec)) +
                                    " is not supported");
  }
}

PageCompressor::PageCompressor(CompressionCodec codec, CompressionOptions options)
    : codec_(codec), options_(options) {}

PageCompressor::~PageCompressor() = default;

Status PageCompressor::Compress(std::string_view input, std::string* out) {
  return ::geolake::parquet::Compress(codec_, input, out, options_);
}

namespace {

// `context` may be null (a one-off context).
Status ZstdDecompress(ZSTD_DCtx* context, std::string_view input, std::size_t size,
                      std::string* out) {
  out->resize(size);
  const std::size_t n =
      context != nullptr
          ? ZSTD_decompressDCtx(context, out->data(), size, input.data(), input.size())
          : ZSTD_decompress(out->data(), size, input.data(), input.size());
  if (ZSTD_isError(n)) {
    // dstSize_tooSmall is how a bomb shows up here: the frame wants more than declared.
    return Corrupt(CompressionCodec::kZstd, ZSTD_getErrorName(n));
  }
  if (n != size) {
    return Corrupt(CompressionCodec::kZstd,
                   "decodes to " + std::to_string(n) + " bytes, declared " + std::to_string(size));
  }
  return Status::OK();
}

}  // namespace

PageDecompressor::PageDecompressor() = default;

PageDecompressor::~PageDecompressor() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_context_)); }

Status PageDecompressor::Decompress(CompressionCodec codec, std::string_view input,
                                    std::int64_t uncompressed_size, std::string* out,
                                    std::int64_t max_uncompressed_size) {
  if (codec != CompressionCodec::kZstd || uncompressed_size < 0 ||
      uncompressed_size > max_uncompressed_size) {
    return ::geolake::parquet::Decompress(codec, input, uncompressed_size, out,
                                          max_uncompressed_size);
  }
  if (zstd_context_ == nullptr) zstd_context_ = ZSTD_createDCtx();
  return ZstdDecompress(static_cast<ZSTD_DCtx*>(zstd_context_), input,
                        static_cast<std::size_t>(uncompressed_size), out);
}

Status Decompress(CompressionCodec codec, std::string_view input, std::int64_t uncompressed_size,
                  std::string* out, std::int64_t max_uncompressed_size) {
  if (uncompressed_size < 0 || uncompressed_size > max_uncompressed_size) {
    return Corrupt(codec, "declared uncompressed size " + std::to_string(uncompressed_size) +
                              " outside [0, " + std::to_string(max_uncompressed_size) + "]");
  }
  const auto size = static_cast<std::size_t>(uncompressed_size);
  switch (codec) {
    case CompressionCodec::kUncompressed:
      if (input.size() != size) {
        return Corrupt(codec, "stored " + std::to_string(input.size()) + " bytes, declared " +
                                  std::to_string(size));
      }
      out->assign(input);
      return Status::OK();
    case CompressionCodec::kSnappy: {
      std::size_t actual = 0;
      if (!snappy::GetUncompressedLength(input.data(), input.size(), &actual)) {
        return Corrupt(codec, "malformed snappy header");
      }
      if (actual != size) {
        return Corrupt(codec, "decodes to " + std::to_string(actual) + " bytes, declared " +
                                  std::to_string(size));
      }
      out->resize(size);
      if (!snappy::RawUncompress(input.data(), input.size(), out->data())) {
        return Corrupt(codec, "malformed snappy data");
      }
      return Status::OK();
    }
    case CompressionCodec::kGzip:
      out->resize(size);
      return GzipDecompress(input, out);
    case CompressionCodec::kZstd:
      return ZstdDecompress(nullptr, input, size, out);
    case CompressionCodec::kLz4Raw: {
      out->resize(size);
      if (input.size() > static_cast<std::size_t>(INT32_MAX))
        return Corrupt(codec, "page too large");
      const int n = LZ4_decompress_safe(input.data(), out->data(), static_cast<int>(input.size()),
                                        static_cast<int>(size));
      if (n < 0 || static_cast<std::size_t>(n) != size) {
        return Corrupt(codec,
                       "malformed block or size differs from the declared " + std::to_string(size));
      }
      return Status::OK();
    }
    case CompressionCodec::kLz4: {
      out->resize(size);
      if (input.size() > static_cast<std::size_t>(INT32_MAX))
        return Corrupt(codec, "page too large");
      if (TryLz4Hadoop(input, out)) return Status::OK();
      // Some writers stored a bare LZ4 block under this codec id.
      const int n = LZ4_decompress_safe(input.data(), out->data(), static_cast<int>(input.size()),
                                        static_cast<int>(size));
      if (n < 0 || static_cast<std::size_t>(n) != size) {
        return Corrupt(codec, "neither Hadoop-framed nor a raw LZ4 block of the declared size");
      }
      return Status::OK();
    }
    case CompressionCodec::kBrotli: {
      out->resize(size);
      std::size_t decoded = size;
      const auto rc =
          BrotliDecoderDecompress(input.size(), reinterpret_cast<const uint8_t*>(input.data()),
                                  &decoded, reinterpret_cast<uint8_t*>(out->data()));
      if (rc != BROTLI_DECODER_RESULT_SUCCESS || decoded != size) {
        return Corrupt(
            codec, "malformed stream or size differs from the declared " + std::to_string(size));
      }
      return Status::OK();
    }
    default:
      return Status::NotImplemented("decompression with codec " + std::string(CodecName(codec)) +
                                    " is not supported");
  }
}

}  // namespace geolake::parquet
