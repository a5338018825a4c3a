#include "geolake/formats/avro/binary.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "geolake/core/little_endian.h"

namespace geolake::avro {

static_assert(std::endian::native == std::endian::little,
              "the float/double coding below assumes a little-endian host");

namespace {

// Values nest one level per record, array, map or union; real manifests nest about 6 deep.
// 128 keeps a recursive schema from turning crafted input into a stack overflow.
constexpr int kMaxDatumDepth = 128;

std::size_t SaturatingAdd(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max()
                                                         : a + b;
}

std::size_t MinEncodedSize(const Node& schema, int depth) {
  // Past this depth the schema is recursive without a union or array in between, which no
  // finite value can satisfy; 0 is still a correct lower bound.
  if (depth > kMaxDatumDepth) return 0;
  switch (schema.type) {
    case Type::kNull:
      return 0;
    case Type::kFloat:
      return 4;
    case Type::kDouble:
      return 8;
    case Type::kFixed:
      return static_cast<std::size_t>(schema.fixed_size);
    case Type::kRecord: {
      std::size_t total = 0;
      for (const Field& field : schema.fields) {
        if (field.type != nullptr)
          total = SaturatingAdd(total, MinEncodedSize(*field.type, depth + 1));
      }
      return total;
    }
    default:
      // boolean, int, long, bytes, string, enum, array, map, union: at least one byte.
      return 1;
  }
}

std::string DescribeDatum(const Datum& datum) { return std::string(TypeName(datum.type())); }

Status Mismatch(const Datum& datum, const Node& schema) {
  return Status::InvalidArgument("expected " + std::string(TypeName(schema.type)) + ", got " +
                                 DescribeDatum(datum));
}

bool KindMatches(Type datum_type, Type schema_type) {
  if (datum_type == schema_type) return true;
  if (schema_type == Type::kLong && datum_type == Type::kInt) return true;
  if (schema_type == Type::kDouble && datum_type == Type::kFloat) return true;
  return false;
}

}  // namespace

void AppendLong(std::int64_t value, std::string* out) {
  auto zigzag = (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
  while (zigzag >= 0x80) {
    out->push_back(static_cast<char>((zigzag & 0x7f) | 0x80));
    zigzag >>= 7;
  }
  out->push_back(static_cast<char>(zigzag));
}

void AppendBytes(std::string_view value, std::string* out) {
  AppendLong(static_cast<std::int64_t>(value.size()), out);
  out->append(value);
}

std::size_t MinEncodedSize(const Node& schema) { return MinEncodedSize(schema, 0); }

Status Encode(const Datum& datum, const Node& schema, std::string* out) {
  switch (schema.type) {
    case Type::kNull:
      if (!datum.is_null()) return Mismatch(datum, schema);
      return Status::OK();
    case Type::kBoolean:
      if (datum.type() != Type::kBoolean) return Mismatch(datum, schema);
      out->push_back(datum.boolean() ? '\x01' : '\x00');
      return Status::OK();
    case Type::kInt:
      if (datum.type() != Type::kInt) return Mismatch(datum, schema);
      AppendLong(datum.int32(), out);
      return Status::OK();
    case Type::kLong:
      if (!KindMatches(datum.type(), Type::kLong)) return Mismatch(datum, schema);
      AppendLong(datum.int64(), out);
      return Status::OK();
    case Type::kFloat: {
      if (datum.type() != Type::kFloat) return Mismatch(datum, schema);
      const float value = datum.float32();
      AppendLE(value, out);
      return Status::OK();
    }
    case Type::kDouble: {
      if (!KindMatches(datum.type(), Type::kDouble)) return Mismatch(datum, schema);
      const double value = datum.float64();
      AppendLE(value, out);
      return Status::OK();
    }
    case Type::kBytes:
    case Type::kString:
      if (datum.type() != schema.type) return Mismatch(datum, schema);
      AppendBytes(datum.bytes(), out);
      return Status::OK();
    case Type::kFixed:
      if (datum.type() != Type::kFixed) return Mismatch(datum, schema);
      if (static_cast<std::int64_t>(datum.bytes().size()) != schema.fixed_size) {
        return Status::InvalidArgument("fixed '" + schema.full_name + "' needs " +
                                       std::to_string(schema.fixed_size) + " bytes, got " +
                                       std::to_string(datum.bytes().size()));
      }
      out->append(datum.bytes());
      return Status::OK();
    case Type::kEnum:
      if (datum.type() != Type::kEnum) return Mismatch(datum, schema);
      if (datum.enum_index() < 0 ||
          static_cast<std::size_t>(datum.enum_index()) >= schema.symbols.size()) {
        return Status::InvalidArgument("enum '" + schema.full_name + "' has no symbol " +
                                       std::to_string(datum.enum_index()));
      }
      AppendLong(datum.enum_index(), out);
      return Status::OK();
    case Type::kArray: {
      if (datum.type() != Type::kArray) return Mismatch(datum, schema);
      const auto& items = datum.items();
      if (!items.empty()) {
        AppendLong(static_cast<std::int64_t>(items.size()), out);
        for (std::size_t i = 0; i < items.size(); ++i) {
          GEOLAKE_RETURN_NOT_OK_CTX(Encode(items[i], *schema.items, out),
                                    "item " + std::to_string(i));
        }
      }
      AppendLong(0, out);
      return Status::OK();
    }
    case Type::kMap: {
      if (datum.type() != Type::kMap) return Mismatch(datum, schema);
      const auto& entries = datum.map_entries();
      if (!entries.empty()) {
        AppendLong(static_cast<std::int64_t>(entries.size()), out);
        for (const auto& [key, value] : entries) {
          AppendBytes(key, out);
          GEOLAKE_RETURN_NOT_OK_CTX(Encode(value, *schema.values, out), "key '" + key + "'");
        }
      }
      AppendLong(0, out);
      return Status::OK();
    }
    case Type::kRecord: {
      if (datum.type() != Type::kRecord) return Mismatch(datum, schema);
      const auto& fields = datum.fields();
      if (fields.size() != schema.fields.size()) {
        return Status::InvalidArgument("record '" + schema.full_name + "' has " +
                                       std::to_string(schema.fields.size()) + " fields, got " +
                                       std::to_string(fields.size()) + " values");
      }
      for (std::size_t i = 0; i < fields.size(); ++i) {
        GEOLAKE_RETURN_NOT_OK_CTX(Encode(fields[i], *schema.fields[i].type, out),
                                  "field '" + schema.fields[i].name + "'");
      }
      return Status::OK();
    }
    case Type::kUnion: {
      std::int32_t branch = datum.branch();
      if (branch < 0) {
        for (std::size_t i = 0; i < schema.branches.size(); ++i) {
          if (KindMatches(datum.type(), schema.branches[i]->type)) {
            branch = static_cast<std::int32_t>(i);
            break;
          }
        }
        if (branch < 0) {
          return Status::InvalidArgument("no union branch takes a " + DescribeDatum(datum));
        }
      } else if (static_cast<std::size_t>(branch) >= schema.branches.size()) {
        return Status::InvalidArgument("union has no branch " + std::to_string(branch));
      }
      AppendLong(branch, out);
      return Encode(datum, *schema.branches[branch], out);
    }
  }
  return Status::Internal("unknown avro type");
}

Status Decoder::Corrupt(std::string_view what) const {
  return Status::CorruptData(std::string(what) + " at byte offset " +
                             std::to_string(base_offset_ + pos_));
}

Status Decoder::ReadLong(std::int64_t* out) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) return Corrupt("truncated varint");
    const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
    // The tenth byte may carry only the top bit of a 64-bit value.
    if (shift == 63 && byte > 1) return Corrupt("varint overflows 64 bits");
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *out = static_cast<std::int64_t>((value >> 1) ^ (~(value & 1) + 1));
      return Status::OK();
    }
  }
  return Corrupt("varint longer than 10 bytes");
}

Status Decoder::ReadInt(std::int32_t* out) {
  const std::size_t start = pos_;
  std::int64_t value = 0;
  GEOLAKE_RETURN_NOT_OK(ReadLong(&value));
  if (value < std::numeric_limits<std::int32_t>::min() ||
      value > std::numeric_limits<std::int32_t>::max()) {
    pos_ = start;
    return Corrupt("int out of 32-bit range");
  }
  *out = static_cast<std::int32_t>(value);
  return Status::OK();
}

Status Decoder::ReadBytes(std::string_view* out) {
  const std::size_t start = pos_;
  std::int64_t length = 0;
  GEOLAKE_RETURN_NOT_OK(ReadLong(&length));
  if (length < 0 || static_cast<std::uint64_t>(length) > remaining()) {
    pos_ = start;
    return Corrupt("byte string length " + std::to_string(length) + " exceeds the " +
                   std::to_string(data_.size() - start) + " bytes left");
  }
  *out = data_.substr(pos_, static_cast<std::size_t>(length));
  pos_ += static_cast<std::size_t>(length);
  return Status::OK();
}

Status Decoder::ReadFixed(std::size_t size, std::string_view* out) {
  if (size > remaining()) return Corrupt("fixed of " + std::to_string(size) + " bytes truncated");
  *out = data_.substr(pos_, size);
  pos_ += size;
  return Status::OK();
}

Status Decoder::ReadDatum(const Node& schema, Datum* out) { return ReadDatum(schema, out, 0); }

Status Decoder::ReadBlockCount(const Node& item_schema, std::int64_t* count) {
  const std::size_t start = pos_;
  GEOLAKE_RETURN_NOT_OK(ReadLong(count));
  if (*count < 0) {
    if (*count == std::numeric_limits<std::int64_t>::min()) {
      pos_ = start;
      return Corrupt("block count out of range");
    }
    *count = -*count;
    std::int64_t block_bytes = 0;
    GEOLAKE_RETURN_NOT_OK(ReadLong(&block_bytes));
    if (block_bytes < 0 || static_cast<std::uint64_t>(block_bytes) > remaining()) {
      pos_ = start;
      return Corrupt("block byte size " + std::to_string(block_bytes) + " exceeds the bytes left");
    }
  }
  const std::size_t min_size = MinEncodedSize(item_schema);
  if (min_size > 0 ? static_cast<std::uint64_t>(*count) > remaining() / min_size
                   : *count > zero_size_items_left_) {
    pos_ = start;
    return Corrupt("block count " + std::to_string(*count) + " exceeds the bytes left");
  }
  if (min_size == 0) zero_size_items_left_ -= *count;
  return Status::OK();
}

Status Decoder::ReadDatum(const Node& schema, Datum* out, int depth) {
  if (depth > kMaxDatumDepth) return Corrupt("value nested too deeply");
  switch (schema.type) {
    case Type::kNull:
      *out = Datum::Null();
      return Status::OK();
    case Type::kBoolean: {
      if (pos_ >= data_.size()) return Corrupt("truncated boolean");
      const auto byte = static_cast<std::uint8_t>(data_[pos_]);
      if (byte > 1) return Corrupt("boolean byte " + std::to_string(byte));
      ++pos_;
      *out = Datum::Boolean(byte == 1);
      return Status::OK();
    }
    case Type::kInt: {
      std::int32_t value = 0;
      GEOLAKE_RETURN_NOT_OK(ReadInt(&value));
      *out = Datum::Int(value);
      return Status::OK();
    }
    case Type::kLong: {
      std::int64_t value = 0;
      GEOLAKE_RETURN_NOT_OK(ReadLong(&value));
      *out = Datum::Long(value);
      return Status::OK();
    }
    case Type::kFloat: {
      std::string_view raw;
      GEOLAKE_RETURN_NOT_OK(ReadFixed(4, &raw));
      *out = Datum::Float(LoadLE<float>(raw.data()));
      return Status::OK();
    }
    case Type::kDouble: {
      std::string_view raw;
      GEOLAKE_RETURN_NOT_OK(ReadFixed(8, &raw));
      *out = Datum::Double(LoadLE<double>(raw.data()));
      return Status::OK();
    }
    case Type::kBytes:
    case Type::kString: {
      std::string_view raw;
      GEOLAKE_RETURN_NOT_OK(ReadBytes(&raw));
      *out = schema.type == Type::kBytes ? Datum::Bytes(std::string(raw))
                                         : Datum::String(std::string(raw));
      return Status::OK();
    }
    case Type::kFixed: {
      std::string_view raw;
      GEOLAKE_RETURN_NOT_OK(ReadFixed(static_cast<std::size_t>(schema.fixed_size), &raw));
      *out = Datum::Fixed(std::string(raw));
      return Status::OK();
    }
    case Type::kEnum: {
      const std::size_t start = pos_;
      std::int32_t index = 0;
      GEOLAKE_RETURN_NOT_OK(ReadInt(&index));
      if (index < 0 || static_cast<std::size_t>(index) >= schema.symbols.size()) {
        pos_ = start;
        return Corrupt("enum index " + std::to_string(index) + " out of range");
      }
      *out = Datum::Enum(index);
      return Status::OK();
    }
    case Type::kArray: {
      std::vector<Datum> items;
      for (;;) {
        std::int64_t count = 0;
        GEOLAKE_RETURN_NOT_OK(ReadBlockCount(*schema.items, &count));
        if (count == 0) break;
        items.reserve(items.size() + static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) {
          items.emplace_back();
          GEOLAKE_RETURN_NOT_OK(ReadDatum(*schema.items, &items.back(), depth + 1));
        }
      }
      *out = Datum::Array(std::move(items));
      return Status::OK();
    }
    case Type::kMap: {
      Datum::MapEntries entries;
      for (;;) {
        std::int64_t count = 0;
        // Each entry has at least a one-byte key length on top of the value.
        GEOLAKE_RETURN_NOT_OK(ReadBlockCount(*schema.values, &count));
        if (count == 0) break;
        if (static_cast<std::uint64_t>(count) > remaining()) {
          return Corrupt("map block count " + std::to_string(count) + " exceeds the bytes left");
        }
        entries.reserve(entries.size() + static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) {
          std::string_view key;
          GEOLAKE_RETURN_NOT_OK(ReadBytes(&key));
          entries.emplace_back(std::string(key), Datum());
          GEOLAKE_RETURN_NOT_OK(ReadDatum(*schema.values, &entries.back().second, depth + 1));
        }
      }
      *out = Datum::Map(std::move(entries));
      return Status::OK();
    }
    case Type::kRecord: {
      std::vector<Datum> fields(schema.fields.size());
      for (std::size_t i = 0; i < fields.size(); ++i) {
        GEOLAKE_RETURN_NOT_OK(ReadDatum(*schema.fields[i].type, &fields[i], depth + 1));
      }
      *out = Datum::Record(std::move(fields));
      return Status::OK();
    }
    case Type::kUnion: {
      const std::size_t start = pos_;
      std::int64_t branch = 0;
      GEOLAKE_RETURN_NOT_OK(ReadLong(&branch));
      if (branch < 0 || static_cast<std::uint64_t>(branch) >= schema.branches.size()) {
        pos_ = start;
        return Corrupt("union branch " + std::to_string(branch) + " out of range");
      }
      GEOLAKE_RETURN_NOT_OK(ReadDatum(*schema.branches[branch], out, depth + 1));
      out->set_branch(static_cast<std::int32_t>(branch));
      return Status::OK();
    }
  }
  return Status::Internal("unknown avro type");
}

Result<Datum> Decode(std::string_view bytes, const Node& schema) {
  Decoder decoder(bytes);
  Datum datum;
  GEOLAKE_RETURN_NOT_OK(decoder.ReadDatum(schema, &datum));
  if (!decoder.at_end()) return decoder.Corrupt("trailing bytes after the value");
  return datum;
}

}  // namespace geolake::avro
