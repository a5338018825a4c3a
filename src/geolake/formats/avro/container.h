/// \file
/// Avro object container files, the format of Iceberg manifests and manifest lists: the magic
/// "Obj\x01", a metadata map (avro.schema, avro.codec and user keys such as Iceberg's "schema",
/// "partition-spec", "format-version", "content"), a 16-byte sync marker, then blocks of
/// records (count, byte size, possibly compressed payload, sync marker). Codecs: null, deflate
/// (raw RFC 1951), zstandard and snappy (with its CRC32 trailer). Both sides work on byte
/// buffers; the table layer moves the bytes through FileIO.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/avro/binary.h"
#include "geolake/formats/avro/datum.h"
#include "geolake/formats/avro/schema.h"

namespace geolake::avro {

enum class Codec : std::uint8_t { kNull, kDeflate, kZstandard, kSnappy };

/// \brief The "avro.codec" name: "null", "deflate", "zstandard", "snappy".
std::string_view CodecName(Codec codec);
/// \brief Parse an "avro.codec" name; kNotImplemented for known-but-unsupported codecs (bzip2,
/// xz), kInvalidArgument for anything else.
Result<Codec> ParseCodec(std::string_view name);

/// Header metadata in file order: key and raw value bytes.
using Metadata = std::vector<std::pair<std::string, std::string>>;

struct WriterOptions {
  Codec codec = Codec::kDeflate;
  /// zlib level for deflate (-1 = zlib's default, 6), zstd level for zstandard (0 = default).
  int compression_level = -1;
  /// A block is closed once its uncompressed payload reaches this size (Java's Avro default
  /// sync interval is 64000 bytes).
  std::size_t block_size_bytes = 64000;
  /// The sync marker; random when not given (tests fix it for reproducible bytes).
  std::optional<std::array<std::uint8_t, 16>> sync_marker;
};

/// \brief Writes one Avro object container file into memory.
///
/// Usage: Make, Append each record, Finish to get the file bytes. Thread-safety: not
/// thread-safe.
class ContainerWriter {
 public:
  /// \brief Start a file for records of `schema` (must have a root). `metadata` are user keys
  /// written after avro.schema and avro.codec, in order.
  ///
  /// Errors: kInvalidArgument for a schema without a root, or a user key starting with
  /// "avro." (reserved by the spec).
  static Result<std::unique_ptr<ContainerWriter>> Make(std::shared_ptr<const Schema> schema,
                                                       Metadata metadata,
                                                       WriterOptions options = {});

  /// \brief Encode one record. kInvalidArgument if it does not fit the schema (nothing of it
  /// is written then).
  Status Append(const Datum& datum);

  /// \brief Flush the last block and return the whole file. The writer is spent afterwards.
  Result<std::string> Finish();

  std::int64_t records_written() const { return records_written_; }
  const std::array<std::uint8_t, 16>& sync_marker() const { return sync_; }

 private:
  ContainerWriter(std::shared_ptr<const Schema> schema, WriterOptions options);
  Status FlushBlock();

  std::shared_ptr<const Schema> schema_;
  WriterOptions options_;
  std::array<std::uint8_t, 16> sync_{};
  std::string out_;
  std::string block_;
  std::int64_t block_records_ = 0;
  std::int64_t records_written_ = 0;
  bool finished_ = false;
};

struct ReaderOptions {
  /// Largest uncompressed block accepted. Guards against decompression bombs: Java writes
  /// blocks of about 64 kB (plus one record), and decoded Datums take up to ~48 bytes per
  /// input byte, so 16 MiB bounds one block's values at well under 1 GiB.
  std::size_t max_block_bytes = 16u << 20;
  /// Check the CRC32 trailer of snappy blocks.
  bool verify_checksums = true;
};

/// \brief Reads an Avro object container file from memory, decoding with the writer's schema.
///
/// Every malformed input (wrong magic, truncation, a bad sync marker, counts or lengths beyond
/// the bytes left, a bad checksum, a block that inflates past max_block_bytes) is kCorruptData
/// with the byte offset in the file. Thread-safety: not thread-safe.
class ContainerReader {
 public:
  /// \brief Parse the header of `file`. The reader keeps the bytes.
  ///
  /// Errors: kCorruptData for a malformed header or a missing/invalid avro.schema;
  /// kNotImplemented for an unsupported codec.
  static Result<std::unique_ptr<ContainerReader>> Open(std::string file,
                                                       ReaderOptions options = {});

  /// \brief The writer's schema from "avro.schema".
  const std::shared_ptr<const Schema>& schema() const { return schema_; }
  Codec codec() const { return codec_; }
  const Metadata& metadata() const { return metadata_; }
  /// \brief The value of a header key, or nullopt.
  std::optional<std::string_view> GetMetadata(std::string_view key) const;

  /// \brief Decode the next record into `out`. Returns false at the end of the file.
  Result<bool> Next(Datum* out);

  /// \brief Decode all remaining records.
  Result<std::vector<Datum>> ReadAll();

  /// \brief Blocks started so far.
  std::int64_t blocks_read() const { return blocks_read_; }

 private:
  ContainerReader(std::string file, ReaderOptions options)
      : file_(std::move(file)), options_(options) {}
  Status ParseHeader();
  Status StartBlock();
  Status Corrupt(std::size_t offset, std::string_view what) const;

  std::string file_;
  ReaderOptions options_;
  std::shared_ptr<const Schema> schema_;
  Codec codec_ = Codec::kNull;
  Metadata metadata_;
  std::string sync_;
  std::size_t pos_ = 0;  // file offset of the next block

  // The current block.
  std::string block_storage_;  // decompressed payload (unused for the null codec)
  std::string_view block_;
  std::size_t block_offset_ = 0;  // file offset of the current block's payload
  std::int64_t block_records_left_ = 0;
  std::optional<Decoder> decoder_;
  std::int64_t blocks_read_ = 0;
};

}  // namespace geolake::avro
