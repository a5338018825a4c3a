/// \file
/// The Avro binary encoding: zigzag varints, length-prefixed bytes and strings, little-endian
/// floats, union branch indexes, and arrays/maps written as blocks ending in a zero count
/// (negative block counts, which carry a byte size, are accepted on read). Encode/Decode turn a
/// Datum into bytes and back under a schema; the decoder bounds every count and length by the
/// bytes that remain, so malformed input yields kCorruptData with a byte offset, never a crash
/// or an allocation larger than the input justifies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/formats/avro/datum.h"
#include "geolake/formats/avro/schema.h"

namespace geolake::avro {

/// \brief Append the zigzag varint of `value` (Avro int and long share the encoding).
void AppendLong(std::int64_t value, std::string* out);

/// \brief Append a length-prefixed byte string (Avro bytes and string).
void AppendBytes(std::string_view value, std::string* out);

/// \brief Append `datum` encoded under `schema`.
///
/// Errors: kInvalidArgument when the datum does not fit the schema (wrong kind, record field
/// count, fixed size, enum or union index); the message names the field path. Numeric
/// promotions are accepted: an int datum for a long schema, a float datum for a double schema.
/// A datum with no union branch tag is written as the first branch of a matching kind.
Status Encode(const Datum& datum, const Node& schema, std::string* out);

/// \brief Reads Avro binary values from a byte buffer it does not own.
///
/// Error messages carry `base_offset + position`, so a caller that decodes a slice of a file
/// can report file offsets. Thread-safety: not thread-safe; one decoder per thread.
class Decoder {
 public:
  explicit Decoder(std::string_view data, std::uint64_t base_offset = 0)
      : data_(data), base_offset_(base_offset) {}

  Status ReadLong(std::int64_t* out);
  Status ReadInt(std::int32_t* out);
  /// \brief Read a length-prefixed byte string as a view into the buffer.
  Status ReadBytes(std::string_view* out);
  Status ReadFixed(std::size_t size, std::string_view* out);

  /// \brief Decode one value of `schema` into `out`.
  Status ReadDatum(const Node& schema, Datum* out);

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  /// \brief kCorruptData "<what> at byte offset N".
  Status Corrupt(std::string_view what) const;

 private:
  Status ReadDatum(const Node& schema, Datum* out, int depth);
  Status ReadBlockCount(const Node& item_schema, std::int64_t* count);

  // Items of a zero-byte type (null, empty record) cost no input, so their count cannot be
  // bounded by the bytes left. 1 Mi such items (48 MiB of Datums) per decoder is far above
  // anything a manifest holds and still a bounded allocation.
  static constexpr std::int64_t kMaxZeroSizeItems = 1 << 20;

  std::string_view data_;
  std::size_t pos_ = 0;
  std::uint64_t base_offset_ = 0;
  std::int64_t zero_size_items_left_ = kMaxZeroSizeItems;
};

/// \brief Decode exactly one value of `schema` from `bytes`.
///
/// Errors: kCorruptData with the byte offset for truncated or malformed input, or when bytes
/// remain after the value.
Result<Datum> Decode(std::string_view bytes, const Node& schema);

/// \brief The fewest bytes any value of `schema` encodes to (0 for null or an empty record).
/// Used to bound item counts by the bytes that remain.
std::size_t MinEncodedSize(const Node& schema);

}  // namespace geolake::avro
