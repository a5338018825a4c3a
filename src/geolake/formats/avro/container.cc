#include "geolake/formats/avro/container.h"

#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <exception>
#include <random>

#include "geolake/core/utf8.h"

namespace geolake::avro {

namespace {

constexpr std::string_view kMagic("Obj\x01", 4);
constexpr std::size_t kSyncSize = 16;
// A record schema that encodes to zero bytes (an empty record) gives a block count nothing in
// the payload can bound; cap it like the decoder caps zero-byte array items.
constexpr std::int64_t kMaxZeroSizeRecordsPerBlock = 1 << 20;

std::array<std::uint8_t, 16> RandomSyncMarker() {
  std::array<std::uint8_t, 16> sync{};
  std::uint64_t seed = 0;
  try {
    std::random_device device;
    seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  } catch (const std::exception&) {
    // No entropy source: the marker only has to be unlikely to occur in the payload, which
    // a clock-seeded generator still gives.
  }
  seed ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::mt19937_64 engine(seed);
  for (std::size_t i = 0; i < sync.size(); i += 8) {
    const std::uint64_t bits = engine();
    std::memcpy(sync.data() + i, &bits, 8);
  }
  return sync;
}

std::uint32_t Crc32(std::string_view data) {
  // zlib's crc32 takes uInt lengths; feed it in pieces so that >4 GiB buffers stay correct.
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!data.empty()) {
    const auto chunk = static_cast<uInt>(std::min<std::size_t>(data.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), chunk);
    data.remove_prefix(chunk);
  }
  return static_cast<std::uint32_t>(crc);
}

Status Compress(Codec codec, int level, std::string_view in, std::string* out) {
  switch (codec) {
    case Codec::kNull:
      out->assign(in);
      return Status::OK();
    case Codec::kDeflate: {
      if (in.size() > UINT_MAX / 2) return Status::InvalidArgument("deflate: block too large");
      z_stream zs{};
      // Negative window bits: raw RFC 1951 deflate without zlib header or checksum, as the
      // Avro spec requires.
      if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return Status::Internal("deflateInit2 failed");
      }
      out->resize(deflateBound(&zs, static_cast<uLong>(in.size())));
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      zs.avail_in = static_cast<uInt>(in.size());
      zs.next_out = reinterpret_cast<Bytef*>(out->data());
      zs.avail_out = static_cast<uInt>(out->size());
      const int ret = deflate(&zs, Z_FINISH);
      const std::size_t produced = zs.total_out;
      deflateEnd(&zs);
      if (ret != Z_STREAM_END) return Status::Internal("deflate did not finish");
      out->resize(produced);
      return Status::OK();
    }
    case Codec::kZstandard: {
      out->resize(ZSTD_compressBound(in.size()));
      const std::size_t ret =
          ZSTD_compress(out->data(), out->size(), in.data(), in.size(), level < 0 ? 0 : level);
      if (ZSTD_isError(ret)) {
        return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(ret));
      }
      out->resize(ret);
      return Status::OK();
    }
    case Codec::kSnappy: {
      out->clear();
      snappy::Compress(in.data(), in.size(), out);
      const std::uint32_t crc = Crc32(in);
      out->push_back(static_cast<char>(crc >> 24));
      out->push_back(static_cast<char>(crc >> 16));
      out->push_back(static_cast<char>(crc >> 8));
      out->push_back(static_cast<char>(crc));
      return Status::OK();
    }
  }
  return Status::Internal("unknown codec");
}

// Grow `out` for more decompressed output, by doubling up to `max_bytes`. False when the limit
// is reached.
bool GrowOutput(std::string* out, std::size_t max_bytes) {
  if (out->size() >= max_bytes) return false;
  out->resize(std::min(max_bytes, std::max<std::size_t>(out->size() * 2, 4096)));
  return true;
}

std::string BombMessage(std::size_t max_bytes) {
  return "block inflates past the " + std::to_string(max_bytes) + "-byte limit";
}

// Errors come back as kCorruptData messages without an offset; the caller adds it.
Status Inflate(std::string_view in, std::size_t max_bytes, std::string* out) {
  if (in.size() > UINT_MAX) return Status::CorruptData("deflate block too large");
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) return Status::Internal("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  out->resize(std::min(max_bytes, std::max<std::size_t>(in.size() * 4, 4096)));
  std::size_t total = 0;
  Status status;
  for (;;) {
    if (total == out->size() && !GrowOutput(out, max_bytes)) {
      status = Status::CorruptData(BombMessage(max_bytes));
      break;
    }
    const std::size_t room = std::min<std::size_t>(out->size() - total, UINT_MAX);
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + total);
    zs.avail_out = static_cast<uInt>(room);
    const int ret = inflate(&zs, Z_NO_FLUSH);
    total += room - zs.avail_out;
    if (ret == Z_STREAM_END) break;
    if (ret == Z_OK) continue;
    if (ret == Z_BUF_ERROR && zs.avail_in == 0) {
      status = Status::CorruptData("deflate stream truncated");
    } else if (ret == Z_BUF_ERROR) {
      continue;  // output full; grow on the next round
    } else {
      status = Status::CorruptData(std::string("deflate: ") +
                                   (zs.msg != nullptr ? zs.msg : "invalid stream"));
    }
    break;
  }
  inflateEnd(&zs);
  out->resize(total);
  return status;
}

Status DecompressZstd(std::string_view in, std::size_t max_bytes, std::string* out) {
  out->clear();
  if (in.empty()) return Status::OK();
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) return Status::Internal("ZSTD_createDCtx failed");
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  out->resize(std::min(max_bytes, std::max<std::size_t>(in.size() * 4, 4096)));
  std::size_t total = 0;
  std::size_t last = 1;  // ZSTD_decompressStream's hint; 0 once a frame is complete
  Status status;
  while (input.pos < input.size || last != 0) {
    if (total == out->size() && !GrowOutput(out, max_bytes)) {
      status = Status::CorruptData(BombMessage(max_bytes));
      break;
    }
    ZSTD_outBuffer output{out->data() + total, out->size() - total, 0};
    const std::size_t in_before = input.pos;
    last = ZSTD_decompressStream(dctx, &output, &input);
    if (ZSTD_isError(last)) {
      status = Status::CorruptData(std::string("zstd: ") + ZSTD_getErrorName(last));
      break;
    }
    total += output.pos;
    if (output.pos == 0 && input.pos == in_before && output.pos < output.size) {
      status = Status::CorruptData("zstd frame truncated");
      break;
    }
  }
  ZSTD_freeDCtx(dctx);
  out->resize(total);
  return status;
}

Status DecompressSnappy(std::string_view in, std::size_t max_bytes, bool verify, std::string* out) {
  if (in.size() < 4) return Status::CorruptData("snappy block shorter than its CRC32");
  const std::string_view compressed = in.substr(0, in.size() - 4);
  std::size_t length = 0;
  if (!snappy::GetUncompressedLength(compressed.data(), compressed.size(), &length)) {
    return Status::CorruptData("snappy: invalid length header");
  }
  if (length > max_bytes) return Status::CorruptData(BombMessage(max_bytes));
  out->resize(length);
  if (!snappy::RawUncompress(compressed.data(), compressed.size(), out->data())) {
    return Status::CorruptData("snappy: invalid data");
  }
  if (verify) {
    const auto* t = reinterpret_cast<const std::uint8_t*>(in.data() + in.size() - 4);
    const std::uint32_t expected = (static_cast<std::uint32_t>(t[0]) << 24) |
                                   (static_cast<std::uint32_t>(t[1]) << 16) |
                                   (static_cast<std::uint32_t>(t[2]) << 8) | t[3];
    if (Crc32(*out) != expected) return Status::CorruptData("snappy: CRC32 mismatch");
  }
  return Status::OK();
}

}  // namespace

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kNull:
      return "null";
    case Codec::kDeflate:
      return "deflate";
    case Codec::kZstandard:
      return "zstandard";
    case Codec::kSnappy:
      return "snappy";
  }
  return "unknown";
}

Result<Codec> ParseCodec(std::string_view name) {
  if (name == "null") return Codec::kNull;
  if (name == "deflate") return Codec::kDeflate;
  if (name == "zstandard") return Codec::kZstandard;
  if (name == "snappy") return Codec::kSnappy;
  if (name == "bzip2" || name == "xz") {
    return Status::NotImplemented("avro codec '" + EscapeForMessage(name) + "' is not supported");
  }
  return Status::InvalidArgument("unknown avro codec '" + EscapeForMessage(name) + "'");
}

// ----------------------------------------------------------------------------- writer

ContainerWriter::ContainerWriter(std::shared_ptr<const Schema> schema, WriterOptions options)
    : schema_(std::move(schema)), options_(std::move(options)) {}

Result<std::unique_ptr<ContainerWriter>> ContainerWriter::Make(std::shared_ptr<const Schema> schema,
                                                               Metadata metadata,
                                                               WriterOptions options) {
  if (schema == nullptr || !schema->has_root()) {
    return Status::InvalidArgument("avro writer: schema has no root type");
  }
  for (const auto& [key, value] : metadata) {
    if (key.rfind("avro.", 0) == 0) {
      return Status::InvalidArgument("avro writer: metadata key '" + key +
                                     "' is reserved for the format");
    }
  }
  std::unique_ptr<ContainerWriter> writer(new ContainerWriter(std::move(schema), options));
  writer->sync_ = options.sync_marker ? *options.sync_marker : RandomSyncMarker();
  std::string& out = writer->out_;
  out.append(kMagic);
  AppendLong(static_cast<std::int64_t>(metadata.size() + 2), &out);
  AppendBytes("avro.schema", &out);
  AppendBytes(writer->schema_->ToJson(), &out);
  AppendBytes("avro.codec", &out);
  AppendBytes(CodecName(options.codec), &out);
  for (const auto& [key, value] : metadata) {
    AppendBytes(key, &out);
    AppendBytes(value, &out);
  }
  AppendLong(0, &out);
  out.append(reinterpret_cast<const char*>(writer->sync_.data()), kSyncSize);
  return writer;
}

Status ContainerWriter::Append(const Datum& datum) {
  if (finished_) return Status::InvalidArgument("avro writer: Append after Finish");
  const std::size_t mark = block_.size();
  Status status = Encode(datum, schema_->root(), &block_);
  if (!status.ok()) {
    block_.resize(mark);
    return std::move(status).WithContext("avro writer: record " + std::to_string(records_written_));
  }
  ++block_records_;
  ++records_written_;
  if (block_.size() >= options_.block_size_bytes) return FlushBlock();
  return Status::OK();
}

Status ContainerWriter::FlushBlock() {
  if (block_records_ == 0) return Status::OK();
  std::string payload;
  GEOLAKE_RETURN_NOT_OK(Compress(options_.codec, options_.compression_level, block_, &payload));
  AppendLong(block_records_, &out_);
  AppendLong(static_cast<std::int64_t>(payload.size()), &out_);
  out_.append(payload);
  out_.append(reinterpret_cast<const char*>(sync_.data()), kSyncSize);
  block_.clear();
  block_records_ = 0;
  return Status::OK();
}

Result<std::string> ContainerWriter::Finish() {
  if (finished_) return Status::InvalidArgument("avro writer: Finish called twice");
  GEOLAKE_RETURN_NOT_OK(FlushBlock());
  finished_ = true;
  return std::move(out_);
}

// ----------------------------------------------------------------------------- reader

Result<std::unique_ptr<ContainerReader>> ContainerReader::Open(std::string file,
                                                               ReaderOptions options) {
  std::unique_ptr<ContainerReader> reader(new ContainerReader(std::move(file), options));
  GEOLAKE_RETURN_NOT_OK(reader->ParseHeader());
  return reader;
}

Status ContainerReader::Corrupt(std::size_t offset, std::string_view what) const {
  return Status::CorruptData("avro file: " + std::string(what) + " at byte offset " +
                             std::to_string(offset));
}

Status ContainerReader::ParseHeader() {
  if (file_.size() < kMagic.size() || std::string_view(file_).substr(0, 4) != kMagic) {
    return Corrupt(0, "not an Avro object container file (bad magic)");
  }
  Decoder decoder(file_);
  std::string_view magic;
  GEOLAKE_RETURN_NOT_OK(decoder.ReadFixed(4, &magic));
  for (;;) {
    const std::size_t count_offset = decoder.position();
    std::int64_t count = 0;
    GEOLAKE_RETURN_NOT_OK_CTX(decoder.ReadLong(&count), "avro file header");
    if (count == 0) break;
    if (count < 0) {
      if (count == INT64_MIN) return Corrupt(count_offset, "header map count out of range");
      count = -count;
      std::int64_t block_bytes = 0;
      GEOLAKE_RETURN_NOT_OK_CTX(decoder.ReadLong(&block_bytes), "avro file header");
    }
    // Each entry takes at least two bytes (two empty strings).
    if (static_cast<std::uint64_t>(count) > decoder.remaining() / 2) {
      return Corrupt(count_offset,
                     "header map count " + std::to_string(count) + " exceeds the bytes left");
    }
    for (std::int64_t i = 0; i < count; ++i) {
      std::string_view key;
      std::string_view value;
      GEOLAKE_RETURN_NOT_OK_CTX(decoder.ReadBytes(&key), "avro file header");
      GEOLAKE_RETURN_NOT_OK_CTX(decoder.ReadBytes(&value), "avro file header");
      metadata_.emplace_back(std::string(key), std::string(value));
    }
  }
  std::string_view sync;
  if (decoder.remaining() < kSyncSize) {
    return Corrupt(decoder.position(), "header truncated before the sync marker");
  }
  GEOLAKE_RETURN_NOT_OK(decoder.ReadFixed(kSyncSize, &sync));
  sync_ = std::string(sync);
  pos_ = decoder.position();

  auto schema_json = GetMetadata("avro.schema");
  if (!schema_json) return Corrupt(0, "header has no avro.schema");
  auto schema = Schema::Parse(*schema_json);
  if (!schema.ok()) {
    return Status::CorruptData("avro file: header avro.schema: " + schema.status().message());
  }
  schema_ = std::make_shared<const Schema>(std::move(schema).value());
  auto codec_name = GetMetadata("avro.codec");
  if (codec_name) {
    auto codec = ParseCodec(*codec_name);
    if (!codec.ok()) {
      if (codec.status().code() == ErrorCode::kNotImplemented) return codec.status();
      return Status::CorruptData("avro file: header avro.codec: " + codec.status().message());
    }
    codec_ = *codec;
  }
  return Status::OK();
}

std::optional<std::string_view> ContainerReader::GetMetadata(std::string_view key) const {
  for (const auto& [k, v] : metadata_) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

Status ContainerReader::StartBlock() {
  const std::size_t block_start = pos_;
  // A sub-view starting at pos_ with base offset pos_, so that error offsets are file offsets.
  Decoder header(std::string_view(file_).substr(pos_), pos_);
  std::int64_t count = 0;
  std::int64_t size = 0;
  GEOLAKE_RETURN_NOT_OK_CTX(header.ReadLong(&count), "avro file block");
  GEOLAKE_RETURN_NOT_OK_CTX(header.ReadLong(&size), "avro file block");
  if (count < 0) return Corrupt(block_start, "negative block record count");
  const std::size_t payload_offset = pos_ + header.position();
  const std::size_t left = file_.size() - payload_offset;
  if (size < 0 || static_cast<std::uint64_t>(size) > left) {
    return Corrupt(block_start, "block byte size " + std::to_string(size) + " exceeds the " +
                                    std::to_string(left) + " bytes left");
  }
  const auto payload_size = static_cast<std::size_t>(size);
  if (left - payload_size < kSyncSize) {
    return Corrupt(payload_offset + payload_size, "block truncated before its sync marker");
  }
  if (std::string_view(file_).substr(payload_offset + payload_size, kSyncSize) != sync_) {
    return Corrupt(payload_offset + payload_size, "sync marker mismatch");
  }
  const std::string_view payload = std::string_view(file_).substr(payload_offset, payload_size);
  Status status;
  switch (codec_) {
    case Codec::kNull:
      if (payload_size > options_.max_block_bytes) {
        status = Status::CorruptData(BombMessage(options_.max_block_bytes));
      }
      block_ = payload;
      break;
    case Codec::kDeflate:
      status = Inflate(payload, options_.max_block_bytes, &block_storage_);
      block_ = block_storage_;
      break;
    case Codec::kZstandard:
      status = DecompressZstd(payload, options_.max_block_bytes, &block_storage_);
      block_ = block_storage_;
      break;
    case Codec::kSnappy:
      status = DecompressSnappy(payload, options_.max_block_bytes, options_.verify_checksums,
                                &block_storage_);
      block_ = block_storage_;
      break;
  }
  if (!status.ok()) {
    return Corrupt(block_start, "block: " + status.message());
  }
  const std::size_t min_size = MinEncodedSize(schema_->root());
  if (min_size > 0 ? static_cast<std::uint64_t>(count) > block_.size() / min_size
                   : count > kMaxZeroSizeRecordsPerBlock) {
    return Corrupt(block_start, "block record count " + std::to_string(count) +
                                    " exceeds what its " + std::to_string(block_.size()) +
                                    " bytes can hold");
  }
  // With the null codec the payload is the file itself, so decoder offsets are file offsets;
  // decompressed payloads report offsets inside the decompressed block.
  decoder_.emplace(block_, codec_ == Codec::kNull ? payload_offset : 0);
  block_offset_ = block_start;
  block_records_left_ = count;
  pos_ = payload_offset + payload_size + kSyncSize;
  ++blocks_read_;
  return Status::OK();
}

Result<bool> ContainerReader::Next(Datum* out) {
  while (block_records_left_ == 0) {
    if (decoder_ && !decoder_->at_end()) {
      return Corrupt(block_offset_, "block has " + std::to_string(decoder_->remaining()) +
                                        " bytes after its last record");
    }
    decoder_.reset();
    if (pos_ == file_.size()) return false;
    GEOLAKE_RETURN_NOT_OK(StartBlock());
  }
  Status status = decoder_->ReadDatum(schema_->root(), out);
  if (!status.ok()) {
    const char* where = codec_ == Codec::kNull ? "" : " (offset in the decompressed block)";
    return std::move(status).WithContext("avro file: block at byte offset " +
                                         std::to_string(block_offset_) + where);
  }
  --block_records_left_;
  return true;
}

Result<std::vector<Datum>> ContainerReader::ReadAll() {
  std::vector<Datum> records;
  for (;;) {
    Datum datum;
    GEOLAKE_ASSIGN_OR_RETURN(bool more, Next(&datum));
    if (!more) break;
    records.push_back(std::move(datum));
  }
  return records;
}

}  // namespace geolake::avro
