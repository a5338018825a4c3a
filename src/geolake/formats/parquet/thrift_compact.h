/// \file
/// The Thrift compact protocol, as Parquet uses it for every header and footer structure: bare
/// structs, no message envelope. CompactEncoder appends to a byte string; CompactDecoder reads
/// from a byte span, skips fields it does not know, limits struct/list nesting and checks every
/// length and element count against the bytes left, so a corrupt footer fails with kCorruptData
/// (naming the byte offset) instead of allocating or reading past the end. The parquet_types
/// structs are written and read with these two classes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake::parquet::thrift {

/// \brief The compact-protocol type codes (low nibble of a field header, list element types).
enum class CType : std::uint8_t {
  kStop = 0,
  kBoolTrue = 1,   // as a field: the value true; as a list element type: bool
  kBoolFalse = 2,  // as a field: the value false; some writers use it as the bool element type
  kI8 = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
  kUuid = 13,
};

/// \brief Serialize Thrift structures with the compact protocol.
///
/// Usage: BeginStruct(); the Write*Field calls in ascending field-id order; EndStruct(). Nested
/// structs are written with BeginStructField(id) ... EndStruct(). Lists: WriteListHeader, then
/// the elements with the bare Write* calls (for struct elements BeginStruct/EndStruct).
/// Thread-safety: none (a value type).
class CompactEncoder {
 public:
  /// \brief Start a struct (pushes a new "previous field id" of 0).
  void BeginStruct();
  /// \brief Write the stop byte and return to the enclosing struct.
  void EndStruct();

  void WriteBoolField(std::int16_t id, bool value);
  void WriteI8Field(std::int16_t id, std::int8_t value);
  void WriteI16Field(std::int16_t id, std::int16_t value);
  void WriteI32Field(std::int16_t id, std::int32_t value);
  void WriteI64Field(std::int16_t id, std::int64_t value);
  void WriteDoubleField(std::int16_t id, double value);
  void WriteBinaryField(std::int16_t id, std::string_view value);
  /// \brief Write a struct-typed field header and BeginStruct(); close with EndStruct().
  void BeginStructField(std::int16_t id);
  /// \brief Write a list-typed field header; the `size` elements follow.
  void BeginListField(std::int16_t id, CType element_type, std::uint32_t size);
  /// \brief Write a field header alone (short form when 1 <= delta <= 15, long form otherwise).
  void WriteFieldHeader(std::int16_t id, CType type);

  /// \brief Write a list header (short form up to 14 elements).
  void WriteListHeader(CType element_type, std::uint32_t size);

  // Bare values (list elements).
  void WriteBool(bool value);  // list element: 1 = true, 2 = false (as Apache Thrift C++ does)
  void WriteI8(std::int8_t value);
  void WriteI16(std::int16_t value);
  void WriteI32(std::int32_t value);
  void WriteI64(std::int64_t value);
  void WriteDouble(double value);
  void WriteBinary(std::string_view value);
  void WriteVarint(std::uint64_t value);

  const std::string& buffer() const { return buffer_; }
  std::string Release() { return std::move(buffer_); }
  void Clear();

 private:
  std::string buffer_;
  std::vector<std::int16_t> last_field_ids_;
  std::int16_t last_field_id_ = 0;
};

/// \brief A field header read from the input. `type == CType::kStop` ends the struct.
struct FieldHeader {
  std::int16_t id = 0;
  CType type = CType::kStop;
};

/// \brief A list or set header: element type and count.
struct ListHeader {
  CType element_type = CType::kStop;
  std::uint32_t size = 0;
};

/// \brief Deserialize Thrift compact-protocol structures from a byte span.
///
/// Usage: BeginStruct(); loop ReadFieldHeader() until its type is kStop, dispatching on the id
/// (Skip(type) for unknown ids or unexpected types); EndStruct(). Every error is kCorruptData
/// with the byte offset. The span must outlive the decoder. Thread-safety: none.
class CompactDecoder {
 public:
  static constexpr int kDefaultMaxDepth = 64;

  explicit CompactDecoder(std::span<const std::uint8_t> data, int max_depth = kDefaultMaxDepth);
  explicit CompactDecoder(std::string_view data, int max_depth = kDefaultMaxDepth);

  /// \brief Enter a struct; fails when nesting exceeds the depth limit.
  Status BeginStruct();
  /// \brief Leave a struct (call after ReadFieldHeader returned kStop).
  void EndStruct();
  Result<FieldHeader> ReadFieldHeader();

  /// \brief The value of a bool *field*, which lives in the header's type nibble.
  static bool BoolFieldValue(const FieldHeader& header) { return header.type == CType::kBoolTrue; }

  /// \brief Read a list/set header; the size is bounded by the bytes remaining.
  Result<ListHeader> ReadListHeader();
  /// \brief Enter/leave a list (counts toward the nesting limit).
  Status BeginList();
  void EndList();

  Result<bool> ReadBool();  // list element: 1 = true; 0 or 2 = false
  Result<std::int8_t> ReadI8();
  Result<std::int16_t> ReadI16();
  Result<std::int32_t> ReadI32();
  Result<std::int64_t> ReadI64();
  Result<double> ReadDouble();
  Result<std::string> ReadBinary();
  Result<std::uint64_t> ReadVarint();

  /// \brief Skip one value of `type` (recursively for structs, lists, sets and maps).
  /// For a bool *field*, whose value is in the header, this consumes nothing.
  Status Skip(CType type);

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }

  /// \brief A kCorruptData status naming the current offset.
  Status Corrupt(std::string_view what) const;

 private:
  Status SkipElement(CType type);

  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
  int max_depth_;
  int depth_ = 0;
  std::vector<std::int16_t> last_field_ids_;
  std::int16_t last_field_id_ = 0;
};

}  // namespace geolake::parquet::thrift
