/// \file
/// Parquet value encodings (Encodings.md): bit packing, the RLE/bit-packed hybrid used for
/// levels and dictionary indices, PLAIN, dictionary building and RLE_DICTIONARY indices,
/// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT.
///
/// Everything here works on contiguous buffers: encoders append to a std::string, decoders read
/// a std::span of bytes and write into caller-owned arrays. Variable-length values travel as
/// Arrow-style offsets (value i is data[offsets[i], offsets[i+1])). Decoders never read past
/// their input and return kCorruptData for any count, length or bit width the input cannot
/// justify; the only allocations they make are bounded by the input size or by an explicit
/// `max_output_bytes` argument. The host is assumed little-endian (checked at compile time).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake::parquet {

static_assert(std::endian::native == std::endian::little, "geolake::parquet assumes little-endian");

using ByteSpan = std::span<const std::uint8_t>;

/// \brief View the bytes of a string as a ByteSpan.
inline ByteSpan AsBytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/// \brief The number of bits needed to store `max_value` (0 for 0).
inline int BitWidth(std::uint64_t max_value) { return 64 - std::countl_zero(max_value); }

// ---------------------------------------------------------------------------------------------
// Bit packing (LSB first: value i occupies bits [i*w, i*w + w) of a little-endian bit stream).

/// \brief Append `count` values packed at `bit_width` (0..32) bits: ceil(count*w/8) bytes.
/// Bits of a value above `bit_width` are ignored.
void PackBits(const std::uint32_t* values, std::size_t count, int bit_width, std::string* out);
/// \brief Like PackBits for 64-bit values, `bit_width` 0..64.
void PackBits64(const std::uint64_t* values, std::size_t count, int bit_width, std::string* out);

/// \brief Unpack `count` values of `bit_width` (0..32) bits from `in`, which must hold at least
/// ceil(count*w/8) bytes (checked by the caller; only those bytes are read).
void UnpackBits(const std::uint8_t* in, std::size_t in_size, std::size_t count, int bit_width,
                std::uint32_t* out);
/// \brief Like UnpackBits for 64-bit values, `bit_width` 0..64.
void UnpackBits64(const std::uint8_t* in, std::size_t in_size, std::size_t count, int bit_width,
                  std::uint64_t* out);

// ---------------------------------------------------------------------------------------------
// RLE / bit-packed hybrid.

/// \brief Append the hybrid encoding of `values` at `bit_width` (0..32), without a length
/// prefix. Runs of 8 or more equal values become RLE runs; the rest are bit-packed in groups of
/// 8 (the last group padded with zeros). T is an unsigned or signed integer type whose values
/// are non-negative and fit in `bit_width` bits.
template <typename T>
void EncodeRleBitPacked(const T* values, std::size_t count, int bit_width, std::string* out);

/// \brief Like EncodeRleBitPacked, preceded by the 4-byte little-endian length of the runs (the
/// form used by data page v1 levels and RLE-encoded booleans).
template <typename T>
void EncodeRleBitPackedWithLength(const T* values, std::size_t count, int bit_width,
                                  std::string* out);

/// \brief Streaming decoder of hybrid runs over a fixed buffer.
///
/// Thread-safety: none (it holds a cursor). The input must outlive the decoder.
class RleBitPackedDecoder {
 public:
  RleBitPackedDecoder() = default;
  /// `bit_width` outside 0..32 makes every Decode fail with kCorruptData.
  RleBitPackedDecoder(ByteSpan data, int bit_width) : data_(data), bit_width_(bit_width) {}

  /// \brief Decode exactly `count` values into `out`. kCorruptData when the runs end first, a
  /// run header is malformed, or a value does not fit in T (checked only for RLE values; a
  /// bit-packed value is truncated to T, so use a T wide enough for `bit_width`).
  template <typename T>
  Status Decode(T* out, std::size_t count);

  /// \brief Bytes consumed so far, including the header of a partly consumed run and, for a
  /// partly consumed bit-packed run, the whole run.
  std::size_t bytes_consumed() const { return pos_; }

 private:
  Status NextRun();

  ByteSpan data_;
  int bit_width_ = 0;
  std::size_t pos_ = 0;       // next unread byte (after the current run's bytes)
  std::size_t rle_left_ = 0;  // values left in the current RLE run
  std::uint64_t rle_value_ = 0;
  std::size_t packed_left_ = 0;   // values left in the current bit-packed run
  std::size_t packed_begin_ = 0;  // byte offset of the current bit-packed run's data
  std::size_t packed_index_ = 0;  // index of the next value within that run
  std::size_t packed_bytes_ = 0;  // bytes of the run that are present in the input
};

/// \brief Split a 4-byte little-endian length prefix off `in`: `*body` is the prefixed bytes,
/// `*consumed` = 4 + length. kCorruptData when the prefix or the body does not fit.
Status ReadLengthPrefixed(ByteSpan in, ByteSpan* body, std::size_t* consumed);

// ---------------------------------------------------------------------------------------------
// PLAIN.

/// \brief A 12-byte INT96 value as stored: 8 bytes of nanoseconds within the day, then 4 bytes
/// of Julian day, both little-endian.
struct Int96 {
  std::uint32_t words[3] = {0, 0, 0};
  bool operator==(const Int96&) const = default;
};

/// \brief Nanoseconds since the Unix epoch of an INT96 timestamp (wraps on overflow).
std::int64_t Int96ToUnixNanos(const Int96& v);

/// \brief Append the PLAIN encoding of fixed-width values (int32_t, int64_t, float, double,
/// Int96): their little-endian bytes.
template <typename T>
void EncodePlain(const T* values, std::size_t count, std::string* out);

/// \brief Append PLAIN booleans (bit-packed, LSB first); a non-zero byte is true.
void EncodePlainBoolean(const std::uint8_t* values, std::size_t count, std::string* out);

/// \brief Append PLAIN BYTE_ARRAY values (4-byte length + bytes each).
/// OffsetT is int32_t or int64_t.
template <typename OffsetT>
void EncodePlainByteArray(const OffsetT* offsets, const std::uint8_t* data, std::size_t count,
                          std::string* out);

/// \brief Decode `count` PLAIN fixed-width values (int32_t, int64_t, float, double, Int96).
/// `*consumed` (optional) receives count * sizeof(T).
template <typename T>
Status DecodePlain(ByteSpan in, std::size_t count, T* out, std::size_t* consumed = nullptr);

/// \brief Decode `count` PLAIN booleans into bytes 0/1.
Status DecodePlainBoolean(ByteSpan in, std::size_t count, std::uint8_t* out,
                          std::size_t* consumed = nullptr);

/// \brief Decode `count` PLAIN FIXED_LEN_BYTE_ARRAY values of `width` bytes into `out`
/// (count*width bytes).
Status DecodePlainFixed(ByteSpan in, std::size_t count, int width, std::uint8_t* out,
                        std::size_t* consumed = nullptr);

/// \brief Where decoders append variable-length values: offsets (already holding the start
/// offset, normally {0}) and bytes. Offsets are int64_t so that no page can overflow them.
struct ByteArrayOutput {
  std::vector<std::int64_t>* offsets;
  std::string* data;
};

/// \brief Decode `count` PLAIN BYTE_ARRAY values, appending them to `out`.
Status DecodePlainByteArray(ByteSpan in, std::size_t count, ByteArrayOutput out,
                            std::size_t* consumed = nullptr);

// ---------------------------------------------------------------------------------------------
// Dictionary encoding.

/// \brief Assign dictionary indices to values in first-seen order (for RLE_DICTIONARY pages).
///
/// T is int32_t, int64_t, float, double or Int96. Floats are keyed by their bits, so every NaN
/// payload and -0.0 get their own entry and the round trip is bit-exact. Thread-safety: none.
template <typename T>
class DictionaryBuilder {
 public:
  DictionaryBuilder();

  /// \brief The index of `value`, adding it if new.
  std::uint32_t Insert(T value);
  /// \brief Insert `count` values, writing their indices.
  void InsertBatch(const T* values, std::size_t count, std::uint32_t* indices);

  std::size_t size() const { return values_.size(); }
  /// \brief The size of the PLAIN-encoded dictionary page body.
  std::size_t byte_size() const { return values_.size() * sizeof(T); }
  const std::vector<T>& values() const { return values_; }
  /// \brief Append the dictionary page body (PLAIN).
  void WriteDictionaryPage(std::string* out) const;
  void Clear();

 private:
  void Grow();

  std::vector<T> values_;
  std::vector<std::uint32_t> slots_;  // 0 = empty, otherwise index + 1
  std::size_t mask_ = 0;
};

/// \brief DictionaryBuilder for BYTE_ARRAY (width < 0) or FIXED_LEN_BYTE_ARRAY (width >= 0).
///
/// Values are copied into one arena. byte_size() is the PLAIN size of the dictionary page
/// (with 4-byte length prefixes for BYTE_ARRAY). Thread-safety: none.
class ByteArrayDictionaryBuilder {
 public:
  explicit ByteArrayDictionaryBuilder(int fixed_width = -1);

  std::uint32_t Insert(std::string_view value);
  std::size_t size() const { return offsets_.size() - 1; }
  std::size_t byte_size() const;
  std::string_view value(std::size_t index) const {
    return std::string_view(arena_).substr(offsets_[index], offsets_[index + 1] - offsets_[index]);
  }
  void WriteDictionaryPage(std::string* out) const;
  void Clear();

 private:
  void Grow();

  int fixed_width_;
  std::string arena_;
  std::vector<std::size_t> offsets_{0};
  std::vector<std::uint64_t> slots_;  // 0 = empty, else (low 32 hash bits << 32) | (index + 1)
  std::size_t mask_ = 0;
};

/// \brief Append an RLE_DICTIONARY data page value section: one byte of bit width (enough for
/// `dictionary_size - 1`), then hybrid runs without a length prefix.
void EncodeDictionaryIndices(const std::uint32_t* indices, std::size_t count,
                             std::size_t dictionary_size, std::string* out);

/// \brief Decode `count` RLE_DICTIONARY indices. kCorruptData when the bit width byte exceeds
/// 32, the runs end early, or an index is >= `dictionary_size`.
Status DecodeDictionaryIndices(ByteSpan in, std::size_t count, std::size_t dictionary_size,
                               std::uint32_t* out);

// ---------------------------------------------------------------------------------------------
// DELTA_BINARY_PACKED (block size 128, 4 miniblocks of 32 when encoding).

/// \brief Append the DELTA_BINARY_PACKED encoding of int32_t or int64_t values.
template <typename T>
void EncodeDeltaBinaryPacked(const T* values, std::size_t count, std::string* out);

/// \brief Streaming DELTA_BINARY_PACKED decoder for int32_t or int64_t.
///
/// Thread-safety: none. The input must outlive the decoder.
template <typename T>
class DeltaBinaryPackedDecoder {
 public:
  /// \brief Parse the header. kCorruptData on a malformed header (block size not a multiple of
  /// 128, miniblock size not a multiple of 32, counts beyond what the input can hold).
  Status Init(ByteSpan in);
  /// \brief The value count the header declares.
  std::size_t total_values() const { return total_; }
  /// \brief Values not yet decoded.
  std::size_t remaining() const { return total_ - produced_; }
  /// \brief Decode the next `count` values (count <= remaining()).
  Status Decode(T* out, std::size_t count);
  /// \brief Bytes consumed so far; after all values are decoded, the encoded size.
  std::size_t bytes_consumed() const { return pos_; }

 private:
  using U = std::make_unsigned_t<T>;
  Status NextBlock();
  Status NextMiniblock();

  ByteSpan in_;
  std::size_t pos_ = 0;
  std::size_t block_size_ = 0;
  std::size_t miniblocks_per_block_ = 0;
  std::size_t miniblock_size_ = 0;
  std::size_t total_ = 0;
  std::size_t produced_ = 0;
  U last_ = 0;
  bool first_pending_ = false;
  U min_delta_ = 0;
  std::size_t miniblock_index_ = 0;  // within the current block
  std::uint8_t widths_[256] = {};    // bit width of each miniblock of the current block
  std::size_t mb_left_ = 0;          // deltas left in the current miniblock buffer
  std::size_t mb_pos_ = 0;
  std::vector<std::uint64_t> mb_;  // unpacked deltas of the current miniblock
};

/// \brief Decode a whole DELTA_BINARY_PACKED stream of exactly `count` values.
template <typename T>
Status DecodeDeltaBinaryPacked(ByteSpan in, std::size_t count, T* out,
                               std::size_t* consumed = nullptr);

// ---------------------------------------------------------------------------------------------
// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY.

/// \brief Append DELTA_LENGTH_BYTE_ARRAY: the lengths delta-encoded, then all bytes.
template <typename OffsetT>
void EncodeDeltaLengthByteArray(const OffsetT* offsets, const std::uint8_t* data, std::size_t count,
                                std::string* out);

/// \brief Append DELTA_BYTE_ARRAY: prefix lengths shared with the previous value, then the
/// suffixes as DELTA_LENGTH_BYTE_ARRAY.
template <typename OffsetT>
void EncodeDeltaByteArray(const OffsetT* offsets, const std::uint8_t* data, std::size_t count,
                          std::string* out);

/// \brief Decode `count` DELTA_LENGTH_BYTE_ARRAY values, appending to `out`.
Status DecodeDeltaLengthByteArray(ByteSpan in, std::size_t count, ByteArrayOutput out,
                                  std::size_t* consumed = nullptr);

/// \brief Decode `count` DELTA_BYTE_ARRAY values, appending to `out`. Reconstructed values
/// can be far larger than the input (each may repeat its predecessor), so more than
/// `max_output_bytes` of output is kCorruptData.
Status DecodeDeltaByteArray(ByteSpan in, std::size_t count, ByteArrayOutput out,
                            std::size_t max_output_bytes, std::size_t* consumed = nullptr);

// ---------------------------------------------------------------------------------------------
// BYTE_STREAM_SPLIT.

/// \brief Append `count` values of `width` bytes (raw little-endian values at `values`) split
/// into `width` streams.
void EncodeByteStreamSplit(const std::uint8_t* values, std::size_t count, int width,
                           std::string* out);

/// \brief Decode `count` values of `width` bytes. The stream length is in.size() / width (the
/// encoding has no header), which must be at least `count`; in.size() must be a multiple of
/// `width`.
Status DecodeByteStreamSplit(ByteSpan in, std::size_t count, int width, std::uint8_t* out);

}  // namespace geolake::parquet
