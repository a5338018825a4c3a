#include "geolake/formats/parquet/thrift_compact.h"

#include <bit>
#include <cstring>
#include <string>

#include "geolake/core/little_endian.h"

namespace geolake::parquet::thrift {
namespace {

std::uint32_t ZigZag32(std::int32_t n) {
  return (static_cast<std::uint32_t>(n) << 1) ^ static_cast<std::uint32_t>(n >> 31);
}
std::uint64_t ZigZag64(std::int64_t n) {
  return (static_cast<std::uint64_t>(n) << 1) ^ static_cast<std::uint64_t>(n >> 63);
}
std::int64_t UnZigZag64(std::uint64_t u) {
  return static_cast<std::int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

bool IsKnownType(std::uint8_t code) { return code <= static_cast<std::uint8_t>(CType::kUuid); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// CompactEncoder

void CompactEncoder::Clear() {
  buffer_.clear();
  last_field_ids_.clear();
  last_field_id_ = 0;
}

void CompactEncoder::BeginStruct() {
  last_field_ids_.push_back(last_field_id_);
  last_field_id_ = 0;
}

void CompactEncoder::EndStruct() {
  buffer_.push_back('\0');
  GEOLAKE_DCHECK(!last_field_ids_.empty());
  last_field_id_ = last_field_ids_.back();
  last_field_ids_.pop_back();
}

void CompactEncoder::WriteFieldHeader(std::int16_t id, CType type) {
  const int delta = static_cast<int>(id) - static_cast<int>(last_field_id_);
  if (delta >= 1 && delta <= 15) {
    buffer_.push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    buffer_.push_back(static_cast<char>(type));
    WriteI16(id);
  }
  last_field_id_ = id;
}

void CompactEncoder::WriteBoolField(std::int16_t id, bool value) {
  WriteFieldHeader(id, value ? CType::kBoolTrue : CType::kBoolFalse);
}
void CompactEncoder::WriteI8Field(std::int16_t id, std::int8_t value) {
  WriteFieldHeader(id, CType::kI8);
  WriteI8(value);
}
void CompactEncoder::WriteI16Field(std::int16_t id, std::int16_t value) {
  WriteFieldHeader(id, CType::kI16);
  WriteI16(value);
}
void CompactEncoder::WriteI32Field(std::int16_t id, std::int32_t value) {
  WriteFieldHeader(id, CType::kI32);
  WriteI32(value);
}
void CompactEncoder::WriteI64Field(std::int16_t id, std::int64_t value) {
  WriteFieldHeader(id, CType::kI64);
  WriteI64(value);
}
void CompactEncoder::WriteDoubleField(std::int16_t id, double value) {
  WriteFieldHeader(id, CType::kDouble);
  WriteDouble(value);
}
void CompactEncoder::WriteBinaryField(std::int16_t id, std::string_view value) {
  WriteFieldHeader(id, CType::kBinary);
  WriteBinary(value);
}
void CompactEncoder::BeginStructField(std::int16_t id) {
  WriteFieldHeader(id, CType::kStruct);
  BeginStruct();
}
void CompactEncoder::BeginListField(std::int16_t id, CType element_type, std::uint32_t size) {
  WriteFieldHeader(id, CType::kList);
  WriteListHeader(element_type, size);
}

void CompactEncoder::WriteListHeader(CType element_type, std::uint32_t size) {
  if (size <= 14) {
    buffer_.push_back(static_cast<char>((size << 4) | static_cast<std::uint32_t>(element_type)));
  } else {
    buffer_.push_back(static_cast<char>(0xF0 | static_cast<int>(element_type)));
    WriteVarint(size);
  }
}

void CompactEncoder::WriteBool(bool value) { buffer_.push_back(value ? 1 : 2); }
void CompactEncoder::WriteI8(std::int8_t value) { buffer_.push_back(static_cast<char>(value)); }
void CompactEncoder::WriteI16(std::int16_t value) { WriteVarint(ZigZag32(value)); }
void CompactEncoder::WriteI32(std::int32_t value) { WriteVarint(ZigZag32(value)); }
void CompactEncoder::WriteI64(std::int64_t value) { WriteVarint(ZigZag64(value)); }

void CompactEncoder::WriteDouble(double value) { AppendLE(value, &buffer_); }

void CompactEncoder::WriteBinary(std::string_view value) {
  WriteVarint(value.size());
  buffer_.append(value);
}

void CompactEncoder::WriteVarint(std::uint64_t value) {
  while (value >= 0x80) {
    buffer_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  buffer_.push_back(static_cast<char>(value));
}

// ---------------------------------------------------------------------------------------------
// CompactDecoder

CompactDecoder::CompactDecoder(std::span<const std::uint8_t> data, int max_depth)
    : data_(data), max_depth_(max_depth) {}

CompactDecoder::CompactDecoder(std::string_view data, int max_depth)
    : data_(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()),
      max_depth_(max_depth) {}

Status CompactDecoder::Corrupt(std::string_view what) const {
  std::string msg = "thrift: ";
  msg.append(what);
  msg.append(" at byte offset ");
  msg.append(std::to_string(pos_));
  return Status::CorruptData(std::move(msg));
}

Status CompactDecoder::BeginStruct() {
  if (depth_ >= max_depth_) return Corrupt("nesting deeper than " + std::to_string(max_depth_));
  ++depth_;
  last_field_ids_.push_back(last_field_id_);
  last_field_id_ = 0;
  return Status::OK();
}

void CompactDecoder::EndStruct() {
  GEOLAKE_DCHECK(!last_field_ids_.empty());
  --depth_;
  last_field_id_ = last_field_ids_.back();
  last_field_ids_.pop_back();
}

Status CompactDecoder::BeginList() {
  if (depth_ >= max_depth_) return Corrupt("nesting deeper than " + std::to_string(max_depth_));
  ++depth_;
  return Status::OK();
}

void CompactDecoder::EndList() { --depth_; }

Result<FieldHeader> CompactDecoder::ReadFieldHeader() {
  if (pos_ >= data_.size()) return Corrupt("truncated struct (no stop byte)");
  const std::uint8_t byte = data_[pos_++];
  FieldHeader header;
  if (byte == 0) return header;  // stop
  const std::uint8_t code = byte & 0x0F;
  if (!IsKnownType(code) || code == 0) {
    --pos_;
    return Corrupt("invalid field type " + std::to_string(code));
  }
  header.type = static_cast<CType>(code);
  const int delta = byte >> 4;
  if (delta != 0) {
    const int id = last_field_id_ + delta;
    if (id > INT16_MAX) return Corrupt("field id overflow");
    header.id = static_cast<std::int16_t>(id);
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(header.id, ReadI16());
  }
  last_field_id_ = header.id;
  return header;
}

Result<std::uint64_t> CompactDecoder::ReadVarint() {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return Corrupt("truncated varint");
    const std::uint8_t byte = data_[pos_++];
    if (shift == 63 && (byte & 0x7E) != 0) return Corrupt("varint overflows 64 bits");
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return Corrupt("varint longer than 10 bytes");
}

Result<bool> CompactDecoder::ReadBool() {
  if (pos_ >= data_.size()) return Corrupt("truncated bool");
  return data_[pos_++] == 1;
}

Result<std::int8_t> CompactDecoder::ReadI8() {
  if (pos_ >= data_.size()) return Corrupt("truncated i8");
  return static_cast<std::int8_t>(data_[pos_++]);
}

Result<std::int16_t> CompactDecoder::ReadI16() {
  const std::size_t start = pos_;
  GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t u, ReadVarint());
  const std::int64_t v = UnZigZag64(u);
  if (v < INT16_MIN || v > INT16_MAX) {
    pos_ = start;
    return Corrupt("i16 out of range");
  }
  return static_cast<std::int16_t>(v);
}

Result<std::int32_t> CompactDecoder::ReadI32() {
  const std::size_t start = pos_;
  GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t u, ReadVarint());
  const std::int64_t v = UnZigZag64(u);
  if (v < INT32_MIN || v > INT32_MAX) {
    pos_ = start;
    return Corrupt("i32 out of range");
  }
  return static_cast<std::int32_t>(v);
}

Result<std::int64_t> CompactDecoder::ReadI64() {
  GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t u, ReadVarint());
  return UnZigZag64(u);
}

Result<double> CompactDecoder::ReadDouble() {
  if (remaining() < 8) return Corrupt("truncated double");
  const auto value = LoadLE<double>(data_.data() + pos_);
  pos_ += 8;
  return value;
}

Result<std::string> CompactDecoder::ReadBinary() {
  const std::size_t start = pos_;
  GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t length, ReadVarint());
  if (length > remaining()) {
    pos_ = start;
    return Corrupt("binary length " + std::to_string(length) + " exceeds the " +
                   std::to_string(remaining()) + " bytes left");
  }
  std::string out(reinterpret_cast<const char*>(data_.data() + pos_), length);
  pos_ += length;
  return out;
}

Result<ListHeader> CompactDecoder::ReadListHeader() {
  if (pos_ >= data_.size()) return Corrupt("truncated list header");
  const std::size_t start = pos_;
  const std::uint8_t byte = data_[pos_++];
  ListHeader header;
  const std::uint8_t code = byte & 0x0F;
  if (!IsKnownType(code) || code == 0) {
    pos_ = start;
    return Corrupt("invalid list element type " + std::to_string(code));
  }
  header.element_type = static_cast<CType>(code);
  std::uint64_t size = byte >> 4;
  if (size == 15) {
    GEOLAKE_ASSIGN_OR_RETURN(size, ReadVarint());
  }
  // Every element takes at least one byte, so a count above the bytes left is corrupt; this
  // bounds any allocation a caller makes from the count.
  if (size > remaining()) {
    pos_ = start;
    return Corrupt("list of " + std::to_string(size) + " elements exceeds the " +
                   std::to_string(remaining()) + " bytes left");
  }
  header.size = static_cast<std::uint32_t>(size);
  return header;
}

Status CompactDecoder::Skip(CType type) {
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse:
      return Status::OK();  // a bool field's value is its header
    default:
      return SkipElement(type);
  }
}

Status CompactDecoder::SkipElement(CType type) {
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse:
    case CType::kI8:
      if (pos_ >= data_.size()) return Corrupt("truncated value");
      ++pos_;
      return Status::OK();
    case CType::kI16:
    case CType::kI32:
    case CType::kI64:
      return ReadVarint().status();
    case CType::kDouble:
      if (remaining() < 8) return Corrupt("truncated double");
      pos_ += 8;
      return Status::OK();
    case CType::kUuid:
      if (remaining() < 16) return Corrupt("truncated uuid");
      pos_ += 16;
      return Status::OK();
    case CType::kBinary: {
      const std::size_t start = pos_;
      GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t length, ReadVarint());
      if (length > remaining()) {
        pos_ = start;
        return Corrupt("binary length exceeds the bytes left");
      }
      pos_ += length;
      return Status::OK();
    }
    case CType::kStruct: {
      GEOLAKE_RETURN_NOT_OK(BeginStruct());
      while (true) {
        GEOLAKE_ASSIGN_OR_RETURN(FieldHeader h, ReadFieldHeader());
        if (h.type == CType::kStop) break;
        GEOLAKE_RETURN_NOT_OK(Skip(h.type));
      }
      EndStruct();
      return Status::OK();
    }
    case CType::kList:
    case CType::kSet: {
      GEOLAKE_ASSIGN_OR_RETURN(ListHeader h, ReadListHeader());
      GEOLAKE_RETURN_NOT_OK(BeginList());
      for (std::uint32_t i = 0; i < h.size; ++i) GEOLAKE_RETURN_NOT_OK(SkipElement(h.element_type));
      EndList();
      return Status::OK();
    }
    case CType::kMap: {
      const std::size_t start = pos_;
      GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t size, ReadVarint());
      if (size == 0) return Status::OK();
      // Each pair takes at least two bytes after the one-byte type header.
      if (remaining() < 1 || size > (remaining() - 1) / 2) {
        pos_ = start;
        return Corrupt("map of " + std::to_string(size) + " entries exceeds the bytes left");
      }
      const std::uint8_t types = data_[pos_++];
      const std::uint8_t key_code = types >> 4;
      const std::uint8_t value_code = types & 0x0F;
      if (!IsKnownType(key_code) || !IsKnownType(value_code) || key_code == 0 || value_code == 0) {
        return Corrupt("invalid map key/value types");
      }
      GEOLAKE_RETURN_NOT_OK(BeginList());
      for (std::uint64_t i = 0; i < size; ++i) {
        GEOLAKE_RETURN_NOT_OK(SkipElement(static_cast<CType>(key_code)));
        GEOLAKE_RETURN_NOT_OK(SkipElement(static_cast<CType>(value_code)));
      }
      EndList();
      return Status::OK();
    }
    case CType::kStop:
      break;
  }
  return Corrupt("cannot skip type " + std::to_string(static_cast<int>(type)));
}

}  // namespace geolake::parquet::thrift
