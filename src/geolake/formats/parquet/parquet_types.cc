#include "geolake/formats/parquet/parquet_types.h"

#include <string>
#include <type_traits>

namespace geolake::parquet {

using thrift::CompactDecoder;
using thrift::CompactEncoder;
using thrift::CType;
using thrift::FieldHeader;

namespace {

// ---------------------------------------------------------------------------------------------
// Generic reading: each struct's Read is a switch over field ids that calls ReadField, which
// checks the wire type against the C++ type and skips the field on a mismatch (tolerant read,
// as the generated Thrift code does).

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

template <typename T>
constexpr bool HasRead() {
  return requires(T t, CompactDecoder & d) { t.Read(d); };
}

template <typename T>
bool WireTypeMatches(CType type) {
  if constexpr (std::is_same_v<T, bool>) {
    return type == CType::kBoolTrue || type == CType::kBoolFalse;
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return type == CType::kI8;
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    return type == CType::kI16;
  } else if constexpr (std::is_same_v<T, std::int32_t> || std::is_enum_v<T>) {
    return type == CType::kI32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return type == CType::kI64;
  } else if constexpr (std::is_same_v<T, double>) {
    return type == CType::kDouble;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return type == CType::kBinary;
  } else if constexpr (IsVector<T>::value) {
    return type == CType::kList || type == CType::kSet;
  } else {
    static_assert(HasRead<T>(), "unsupported thrift field type");
    return type == CType::kStruct;
  }
}

template <typename T>
Status ReadValue(CompactDecoder& dec, T* out);

template <typename T>
Status ReadList(CompactDecoder& dec, std::vector<T>* out) {
  GEOLAKE_ASSIGN_OR_RETURN(thrift::ListHeader header, dec.ReadListHeader());
  GEOLAKE_RETURN_NOT_OK(dec.BeginList());
  out->clear();
  if (!WireTypeMatches<T>(header.element_type)) {
    // Wrong element type: skip the elements, leave the list empty.
    for (std::uint32_t i = 0; i < header.size; ++i) {
      if (header.element_type == CType::kBoolTrue || header.element_type == CType::kBoolFalse) {
        GEOLAKE_RETURN_NOT_OK(dec.ReadBool().status());
      } else {
        GEOLAKE_RETURN_NOT_OK(dec.Skip(header.element_type));
      }
    }
    dec.EndList();
    return Status::OK();
  }
  out->reserve(header.size);
  for (std::uint32_t i = 0; i < header.size; ++i) {
    T value{};
    GEOLAKE_RETURN_NOT_OK(ReadValue(dec, &value));
    out->push_back(std::move(value));
  }
  dec.EndList();
  return Status::OK();
}

// std::vector<bool> has no addressable elements, hence its own overload.
Status ReadBoolList(CompactDecoder& dec, std::vector<bool>* out) {
  GEOLAKE_ASSIGN_OR_RETURN(thrift::ListHeader header, dec.ReadListHeader());
  out->clear();
  const bool is_bool =
      header.element_type == CType::kBoolTrue || header.element_type == CType::kBoolFalse;
  GEOLAKE_RETURN_NOT_OK(dec.BeginList());
  for (std::uint32_t i = 0; i < header.size; ++i) {
    if (is_bool) {
      GEOLAKE_ASSIGN_OR_RETURN(bool v, dec.ReadBool());
      out->push_back(v);
    } else {
      GEOLAKE_RETURN_NOT_OK(dec.Skip(header.element_type));
    }
  }
  dec.EndList();
  return Status::OK();
}

template <typename T>
Status ReadValue(CompactDecoder& dec, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    GEOLAKE_ASSIGN_OR_RETURN(*out, dec.ReadBool());
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    GEOLAKE_ASSIGN_OR_RETURN(*out, dec.ReadI8());
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    GEOLAKE_ASSIGN_OR_RETURN(*out, dec.ReadI16());
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    GEOLAKE_ASSIGN_OR_RETURN(*out, dec.ReadI32());
  } else if constexpr (std::is_enum_v<T>) {
    GEOLAKE_ASSIGN_OR_RETURN(std::int32_t v, dec.ReadI32());
    *out = static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    GEOLAKE_ASSIGN_OR_RETURN(*out, dec.ReadI64());
  } else if constexpr (std::is_same_v<T, double>) {
    GEOLAKE_ASSIGN_OR_RETURN(*out, dec.ReadDouble());
  } else if constexpr (std::is_same_v<T, std::string>) {
    GEOLAKE_ASSIGN_OR_RETURN(*out, dec.ReadBinary());
  } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
    return ReadBoolList(dec, out);
  } else if constexpr (IsVector<T>::value) {
    return ReadList(dec, out);
  } else {
    return out->Read(dec);
  }
  return Status::OK();
}

template <typename T>
Status ReadField(CompactDecoder& dec, const FieldHeader& header, T* out) {
  if (!WireTypeMatches<T>(header.type)) return dec.Skip(header.type);
  if constexpr (std::is_same_v<T, bool>) {
    *out = CompactDecoder::BoolFieldValue(header);
    return Status::OK();
  } else {
    return ReadValue(dec, out);
  }
}

template <typename T>
Status ReadField(CompactDecoder& dec, const FieldHeader& header, std::optional<T>* out) {
  if (!WireTypeMatches<T>(header.type)) return dec.Skip(header.type);
  T value{};
  GEOLAKE_RETURN_NOT_OK(ReadField(dec, header, &value));
  *out = std::move(value);
  return Status::OK();
}

/// Reads a struct: BeginStruct, `on_field(header)` per field until stop, EndStruct.
template <typename Fn>
Status ReadStruct(CompactDecoder& dec, Fn&& on_field) {
  GEOLAKE_RETURN_NOT_OK(dec.BeginStruct());
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(FieldHeader header, dec.ReadFieldHeader());
    if (header.type == CType::kStop) break;
    GEOLAKE_RETURN_NOT_OK(on_field(header));
  }
  dec.EndStruct();
  return Status::OK();
}

/// Tracks which required fields were seen.
class Required {
 public:
  void Saw(std::int16_t id) {
    if (id >= 0 && id < 64) seen_ |= (std::uint64_t{1} << id);
  }
  Status Check(const CompactDecoder& dec, std::string_view struct_name,
               std::initializer_list<std::int16_t> ids) const {
    for (std::int16_t id : ids) {
      if ((seen_ & (std::uint64_t{1} << id)) == 0) {
        return dec.Corrupt(std::string(struct_name) + " lacks required field " +
                           std::to_string(id));
      }
    }
    return Status::OK();
  }

 private:
  std::uint64_t seen_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Generic writing.

template <typename T>
CType WireTypeOf() {
  if constexpr (std::is_same_v<T, bool>) {
    return CType::kBoolTrue;  // list element type for bools, as Apache Thrift C++ writes it
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return CType::kI8;
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    return CType::kI16;
  } else if constexpr (std::is_same_v<T, std::int32_t> || std::is_enum_v<T>) {
    return CType::kI32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return CType::kI64;
  } else if constexpr (std::is_same_v<T, double>) {
    return CType::kDouble;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return CType::kBinary;
  } else if constexpr (IsVector<T>::value) {
    return CType::kList;
  } else {
    return CType::kStruct;
  }
}

template <typename T>
void WriteValue(CompactEncoder& enc, const T& value);

template <typename T>
void WriteList(CompactEncoder& enc, const std::vector<T>& values) {
  enc.WriteListHeader(WireTypeOf<T>(), static_cast<std::uint32_t>(values.size()));
  for (const auto& v : values) WriteValue<T>(enc, v);
}

template <typename T>
void WriteValue(CompactEncoder& enc, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    enc.WriteBool(value);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    enc.WriteI8(value);
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    enc.WriteI16(value);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    enc.WriteI32(value);
  } else if constexpr (std::is_enum_v<T>) {
    enc.WriteI32(static_cast<std::int32_t>(value));
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    enc.WriteI64(value);
  } else if constexpr (std::is_same_v<T, double>) {
    enc.WriteDouble(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    enc.WriteBinary(value);
  } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
    enc.WriteListHeader(CType::kBoolTrue, static_cast<std::uint32_t>(value.size()));
    for (bool b : value) enc.WriteBool(b);
  } else if constexpr (IsVector<T>::value) {
    WriteList(enc, value);
  } else {
    value.Write(enc);
  }
}

template <typename T>
void WriteField(CompactEncoder& enc, std::int16_t id, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    enc.WriteBoolField(id, value);
  } else {
    enc.WriteFieldHeader(id, WireTypeOf<T>());
    WriteValue<T>(enc, value);
  }
}

template <typename T>
void WriteField(CompactEncoder& enc, std::int16_t id, const std::optional<T>& value) {
  if (value.has_value()) WriteField<T>(enc, id, *value);
}

/// Optional list fields are modelled as vectors; an empty vector is not written.
template <typename T>
void WriteNonEmptyList(CompactEncoder& enc, std::int16_t id, const std::vector<T>& values) {
  if (!values.empty()) WriteField(enc, id, values);
}

void WriteEmptyStructField(CompactEncoder& enc, std::int16_t id) {
  enc.BeginStructField(id);
  enc.EndStruct();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names

std::string_view PhysicalTypeName(PhysicalType type) {
  switch (type) {
    case PhysicalType::kBoolean:
      return "BOOLEAN";
    case PhysicalType::kInt32:
      return "INT32";
    case PhysicalType::kInt64:
      return "INT64";
    case PhysicalType::kInt96:
      return "INT96";
    case PhysicalType::kFloat:
      return "FLOAT";
    case PhysicalType::kDouble:
      return "DOUBLE";
    case PhysicalType::kByteArray:
      return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray:
      return "FIXED_LEN_BYTE_ARRAY";
  }
  return "UNKNOWN_TYPE";
}

std::string_view EncodingName(Encoding encoding) {
  switch (encoding) {
    case Encoding::kPlain:
      return "PLAIN";
    case Encoding::kPlainDictionary:
      return "PLAIN_DICTIONARY";
    case Encoding::kRle:
      return "RLE";
    case Encoding::kBitPacked:
      return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked:
      return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray:
      return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray:
      return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary:
      return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit:
      return "BYTE_STREAM_SPLIT";
  }
  return "UNKNOWN_ENCODING";
}

std::string_view CodecName(CompressionCodec codec) {
  switch (codec) {
    case CompressionCodec::kUncompressed:
      return "UNCOMPRESSED";
    case CompressionCodec::kSnappy:
      return "SNAPPY";
    case CompressionCodec::kGzip:
      return "GZIP";
    case CompressionCodec::kLzo:
      return "LZO";
    case CompressionCodec::kBrotli:
      return "BROTLI";
    case CompressionCodec::kLz4:
      return "LZ4";
    case CompressionCodec::kZstd:
      return "ZSTD";
    case CompressionCodec::kLz4Raw:
      return "LZ4_RAW";
  }
  return "UNKNOWN_CODEC";
}

// ---------------------------------------------------------------------------------------------
// LogicalType

LogicalType LogicalType::Decimal(std::int32_t precision, std::int32_t scale) {
  LogicalType t = Simple(Kind::kDecimal);
  t.precision = precision;
  t.scale = scale;
  return t;
}

LogicalType LogicalType::Timestamp(bool is_adjusted_to_utc, TimeUnit unit) {
  LogicalType t = Simple(Kind::kTimestamp);
  t.is_adjusted_to_utc = is_adjusted_to_utc;
  t.unit = unit;
  return t;
}

LogicalType LogicalType::Time(bool is_adjusted_to_utc, TimeUnit unit) {
  LogicalType t = Simple(Kind::kTime);
  t.is_adjusted_to_utc = is_adjusted_to_utc;
  t.unit = unit;
  return t;
}

LogicalType LogicalType::Integer(std::int8_t bit_width, bool is_signed) {
  LogicalType t = Simple(Kind::kInteger);
  t.bit_width = bit_width;
  t.is_signed = is_signed;
  return t;
}

LogicalType LogicalType::Geometry(std::optional<std::string> crs) {
  LogicalType t = Simple(Kind::kGeometry);
  t.crs = std::move(crs);
  return t;
}

LogicalType LogicalType::Geography(std::optional<std::string> crs,
                                   std::optional<EdgeInterpolationAlgorithm> algorithm) {
  LogicalType t = Simple(Kind::kGeography);
  t.crs = std::move(crs);
  t.algorithm = algorithm;
  return t;
}

namespace {

void WriteTimeUnit(CompactEncoder& enc, std::int16_t id, TimeUnit unit) {
  enc.BeginStructField(id);
  WriteEmptyStructField(enc, static_cast<std::int16_t>(unit));
  enc.EndStruct();
}

Status ReadTimeUnit(CompactDecoder& dec, TimeUnit* out, bool* known) {
  *known = false;
  return ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    if (h.type == CType::kStruct && h.id >= 1 && h.id <= 3) {
      *out = static_cast<TimeUnit>(h.id);
      *known = true;
    }
    return dec.Skip(h.type);
  });
}

}  // namespace

void LogicalType::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  const auto member = static_cast<std::int16_t>(kind);
  switch (kind) {
    case Kind::kDecimal:
      enc.BeginStructField(member);
      enc.WriteI32Field(1, scale);
      enc.WriteI32Field(2, precision);
      enc.EndStruct();
      break;
    case Kind::kTime:
    case Kind::kTimestamp:
      enc.BeginStructField(member);
      enc.WriteBoolField(1, is_adjusted_to_utc);
      WriteTimeUnit(enc, 2, unit);
      enc.EndStruct();
      break;
    case Kind::kInteger:
      enc.BeginStructField(member);
      enc.WriteI8Field(1, bit_width);
      enc.WriteBoolField(2, is_signed);
      enc.EndStruct();
      break;
    case Kind::kVariant:
      enc.BeginStructField(member);
      WriteField(enc, 1, variant_specification_version);
      enc.EndStruct();
      break;
    case Kind::kGeometry:
      enc.BeginStructField(member);
      WriteField(enc, 1, crs);
      enc.EndStruct();
      break;
    case Kind::kGeography:
      enc.BeginStructField(member);
      WriteField(enc, 1, crs);
      WriteField(enc, 2, algorithm);
      enc.EndStruct();
      break;
    case Kind::kUnrecognized:
      break;  // nothing we can write: an empty union
    default:
      WriteEmptyStructField(enc, member);
      break;
  }
  enc.EndStruct();
}

Status LogicalType::Read(CompactDecoder& dec) {
  *this = LogicalType{};
  return ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    if (h.type != CType::kStruct) return dec.Skip(h.type);
    switch (h.id) {
      case 1:
      case 2:
      case 3:
      case 4:
      case 6:
      case 11:
      case 12:
      case 13:
      case 14:
      case 15:
        kind = static_cast<Kind>(h.id);
        return dec.Skip(h.type);
      case 5: {
        kind = Kind::kDecimal;
        Required req;
        GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& f) -> Status {
          req.Saw(f.id);
          if (f.id == 1) return ReadField(dec, f, &scale);
          if (f.id == 2) return ReadField(dec, f, &precision);
          return dec.Skip(f.type);
        }));
        return req.Check(dec, "DecimalType", {1, 2});
      }
      case 7:
      case 8: {
        kind = static_cast<Kind>(h.id);
        bool unit_known = false;
        GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& f) -> Status {
          if (f.id == 1) return ReadField(dec, f, &is_adjusted_to_utc);
          if (f.id == 2 && f.type == CType::kStruct) return ReadTimeUnit(dec, &unit, &unit_known);
          return dec.Skip(f.type);
        }));
        // An unknown unit is unsupported, not corrupt: keep the column as its physical type.
        if (!unit_known) kind = Kind::kUnrecognized;
        return Status::OK();
      }
      case 10:
        kind = Kind::kInteger;
        return ReadStruct(dec, [&](const FieldHeader& f) -> Status {
          if (f.id == 1) return ReadField(dec, f, &bit_width);
          if (f.id == 2) return ReadField(dec, f, &is_signed);
          return dec.Skip(f.type);
        });
      case 16:
        kind = Kind::kVariant;
        return ReadStruct(dec, [&](const FieldHeader& f) -> Status {
          if (f.id == 1) return ReadField(dec, f, &variant_specification_version);
          return dec.Skip(f.type);
        });
      case 17:
      case 18:
        kind = static_cast<Kind>(h.id);
        return ReadStruct(dec, [&](const FieldHeader& f) -> Status {
          if (f.id == 1) return ReadField(dec, f, &crs);
          if (f.id == 2 && h.id == 18) return ReadField(dec, f, &algorithm);
          return dec.Skip(f.type);
        });
      default:
        kind = Kind::kUnrecognized;
        return dec.Skip(h.type);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Small structs

void KeyValue::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, key);
  WriteField(enc, 2, value);
  enc.EndStruct();
}

Status KeyValue::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    if (h.id == 1) return ReadField(dec, h, &key);
    if (h.id == 2) return ReadField(dec, h, &value);
    return dec.Skip(h.type);
  }));
  return req.Check(dec, "KeyValue", {1});
}

void SchemaElement::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, type);
  WriteField(enc, 2, type_length);
  WriteField(enc, 3, repetition_type);
  WriteField(enc, 4, name);
  WriteField(enc, 5, num_children);
  WriteField(enc, 6, converted_type);
  WriteField(enc, 7, scale);
  WriteField(enc, 8, precision);
  WriteField(enc, 9, field_id);
  WriteField(enc, 10, logical_type);
  enc.EndStruct();
}

Status SchemaElement::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &type);
      case 2:
        return ReadField(dec, h, &type_length);
      case 3:
        return ReadField(dec, h, &repetition_type);
      case 4:
        return ReadField(dec, h, &name);
      case 5:
        return ReadField(dec, h, &num_children);
      case 6:
        return ReadField(dec, h, &converted_type);
      case 7:
        return ReadField(dec, h, &scale);
      case 8:
        return ReadField(dec, h, &precision);
      case 9:
        return ReadField(dec, h, &field_id);
      case 10:
        return ReadField(dec, h, &logical_type);
      default:
        return dec.Skip(h.type);
    }
  }));
  return req.Check(dec, "SchemaElement", {4});
}

void Statistics::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, max);
  WriteField(enc, 2, min);
  WriteField(enc, 3, null_count);
  WriteField(enc, 4, distinct_count);
  WriteField(enc, 5, max_value);
  WriteField(enc, 6, min_value);
  WriteField(enc, 7, is_max_value_exact);
  WriteField(enc, 8, is_min_value_exact);
  WriteField(enc, 9, nan_count);
  enc.EndStruct();
}

Status Statistics::Read(CompactDecoder& dec) {
  return ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &max);
      case 2:
        return ReadField(dec, h, &min);
      case 3:
        return ReadField(dec, h, &null_count);
      case 4:
        return ReadField(dec, h, &distinct_count);
      case 5:
        return ReadField(dec, h, &max_value);
      case 6:
        return ReadField(dec, h, &min_value);
      case 7:
        return ReadField(dec, h, &is_max_value_exact);
      case 8:
        return ReadField(dec, h, &is_min_value_exact);
      case 9:
        return ReadField(dec, h, &nan_count);
      default:
        return dec.Skip(h.type);
    }
  });
}

void SizeStatistics::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, unencoded_byte_array_data_bytes);
  WriteNonEmptyList(enc, 2, repetition_level_histogram);
  WriteNonEmptyList(enc, 3, definition_level_histogram);
  enc.EndStruct();
}

Status SizeStatistics::Read(CompactDecoder& dec) {
  return ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &unencoded_byte_array_data_bytes);
      case 2:
        return ReadField(dec, h, &repetition_level_histogram);
      case 3:
        return ReadField(dec, h, &definition_level_histogram);
      default:
        return dec.Skip(h.type);
    }
  });
}

void BoundingBox::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, xmin);
  WriteField(enc, 2, xmax);
  WriteField(enc, 3, ymin);
  WriteField(enc, 4, ymax);
  WriteField(enc, 5, zmin);
  WriteField(enc, 6, zmax);
  WriteField(enc, 7, mmin);
  WriteField(enc, 8, mmax);
  enc.EndStruct();
}

Status BoundingBox::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &xmin);
      case 2:
        return ReadField(dec, h, &xmax);
      case 3:
        return ReadField(dec, h, &ymin);
      case 4:
        return ReadField(dec, h, &ymax);
      case 5:
        return ReadField(dec, h, &zmin);
      case 6:
        return ReadField(dec, h, &zmax);
      case 7:
        return ReadField(dec, h, &mmin);
      case 8:
        return ReadField(dec, h, &mmax);
      default:
        return dec.Skip(h.type);
    }
  }));
  return req.Check(dec, "BoundingBox", {1, 2, 3, 4});
}

void GeospatialStatistics::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, bbox);
  WriteField(enc, 2, geospatial_types);
  enc.EndStruct();
}

Status GeospatialStatistics::Read(CompactDecoder& dec) {
  return ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    if (h.id == 1) return ReadField(dec, h, &bbox);
    if (h.id == 2) return ReadField(dec, h, &geospatial_types);
    return dec.Skip(h.type);
  });
}

void PageEncodingStats::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, page_type);
  WriteField(enc, 2, encoding);
  WriteField(enc, 3, count);
  enc.EndStruct();
}

Status PageEncodingStats::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    if (h.id == 1) return ReadField(dec, h, &page_type);
    if (h.id == 2) return ReadField(dec, h, &encoding);
    if (h.id == 3) return ReadField(dec, h, &count);
    return dec.Skip(h.type);
  }));
  return req.Check(dec, "PageEncodingStats", {1, 2, 3});
}

// ---------------------------------------------------------------------------------------------
// Column chunk metadata

void ColumnMetaData::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, type);
  WriteField(enc, 2, encodings);
  WriteField(enc, 3, path_in_schema);
  WriteField(enc, 4, codec);
  WriteField(enc, 5, num_values);
  WriteField(enc, 6, total_uncompressed_size);
  WriteField(enc, 7, total_compressed_size);
  WriteNonEmptyList(enc, 8, key_value_metadata);
  WriteField(enc, 9, data_page_offset);
  WriteField(enc, 10, index_page_offset);
  WriteField(enc, 11, dictionary_page_offset);
  WriteField(enc, 12, statistics);
  WriteNonEmptyList(enc, 13, encoding_stats);
  WriteField(enc, 14, bloom_filter_offset);
  WriteField(enc, 15, bloom_filter_length);
  WriteField(enc, 16, size_statistics);
  WriteField(enc, 17, geospatial_statistics);
  enc.EndStruct();
}

Status ColumnMetaData::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &type);
      case 2:
        return ReadField(dec, h, &encodings);
      case 3:
        return ReadField(dec, h, &path_in_schema);
      case 4:
        return ReadField(dec, h, &codec);
      case 5:
        return ReadField(dec, h, &num_values);
      case 6:
        return ReadField(dec, h, &total_uncompressed_size);
      case 7:
        return ReadField(dec, h, &total_compressed_size);
      case 8:
        return ReadField(dec, h, &key_value_metadata);
      case 9:
        return ReadField(dec, h, &data_page_offset);
      case 10:
        return ReadField(dec, h, &index_page_offset);
      case 11:
        return ReadField(dec, h, &dictionary_page_offset);
      case 12:
        return ReadField(dec, h, &statistics);
      case 13:
        return ReadField(dec, h, &encoding_stats);
      case 14:
        return ReadField(dec, h, &bloom_filter_offset);
      case 15:
        return ReadField(dec, h, &bloom_filter_length);
      case 16:
        return ReadField(dec, h, &size_statistics);
      case 17:
        return ReadField(dec, h, &geospatial_statistics);
      default:
        return dec.Skip(h.type);
    }
  }));
  return req.Check(dec, "ColumnMetaData", {1, 2, 3, 4, 5, 6, 7, 9});
}

void ColumnChunk::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, file_path);
  WriteField(enc, 2, file_offset);
  WriteField(enc, 3, meta_data);
  WriteField(enc, 4, offset_index_offset);
  WriteField(enc, 5, offset_index_length);
  WriteField(enc, 6, column_index_offset);
  WriteField(enc, 7, column_index_length);
  enc.EndStruct();
}

Status ColumnChunk::Read(CompactDecoder& dec) {
  // file_offset is required in the IDL but deprecated; tolerate its absence.
  return ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &file_path);
      case 2:
        return ReadField(dec, h, &file_offset);
      case 3:
        return ReadField(dec, h, &meta_data);
      case 4:
        return ReadField(dec, h, &offset_index_offset);
      case 5:
        return ReadField(dec, h, &offset_index_length);
      case 6:
        return ReadField(dec, h, &column_index_offset);
      case 7:
        return ReadField(dec, h, &column_index_length);
      default:
        return dec.Skip(h.type);
    }
  });
}

void SortingColumn::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, column_idx);
  WriteField(enc, 2, descending);
  WriteField(enc, 3, nulls_first);
  enc.EndStruct();
}

Status SortingColumn::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    if (h.id == 1) return ReadField(dec, h, &column_idx);
    if (h.id == 2) return ReadField(dec, h, &descending);
    if (h.id == 3) return ReadField(dec, h, &nulls_first);
    return dec.Skip(h.type);
  }));
  return req.Check(dec, "SortingColumn", {1, 2, 3});
}

void RowGroup::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, columns);
  WriteField(enc, 2, total_byte_size);
  WriteField(enc, 3, num_rows);
  WriteNonEmptyList(enc, 4, sorting_columns);
  WriteField(enc, 5, file_offset);
  WriteField(enc, 6, total_compressed_size);
  WriteField(enc, 7, ordinal);
  enc.EndStruct();
}

Status RowGroup::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &columns);
      case 2:
        return ReadField(dec, h, &total_byte_size);
      case 3:
        return ReadField(dec, h, &num_rows);
      case 4:
        return ReadField(dec, h, &sorting_columns);
      case 5:
        return ReadField(dec, h, &file_offset);
      case 6:
        return ReadField(dec, h, &total_compressed_size);
      case 7:
        return ReadField(dec, h, &ordinal);
      default:
        return dec.Skip(h.type);
    }
  }));
  return req.Check(dec, "RowGroup", {1, 2, 3});
}

void ColumnOrder::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  if (kind != Kind::kUnrecognized) WriteEmptyStructField(enc, static_cast<std::int16_t>(kind));
  enc.EndStruct();
}

Status ColumnOrder::Read(CompactDecoder& dec) {
  kind = Kind::kUnrecognized;
  return ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    if (h.type == CType::kStruct && (h.id == 1 || h.id == 2)) kind = static_cast<Kind>(h.id);
    return dec.Skip(h.type);
  });
}

void FileMetaData::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, version);
  WriteField(enc, 2, schema);
  WriteField(enc, 3, num_rows);
  WriteField(enc, 4, row_groups);
  WriteNonEmptyList(enc, 5, key_value_metadata);
  WriteField(enc, 6, created_by);
  WriteNonEmptyList(enc, 7, column_orders);
  enc.EndStruct();
}

Status FileMetaData::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &version);
      case 2:
        return ReadField(dec, h, &schema);
      case 3:
        return ReadField(dec, h, &num_rows);
      case 4:
        return ReadField(dec, h, &row_groups);
      case 5:
        return ReadField(dec, h, &key_value_metadata);
      case 6:
        return ReadField(dec, h, &created_by);
      case 7:
        return ReadField(dec, h, &column_orders);
      default:
        return dec.Skip(h.type);  // encryption fields 8, 9 and anything newer
    }
  }));
  return req.Check(dec, "FileMetaData", {1, 2, 3, 4});
}

// ---------------------------------------------------------------------------------------------
// Page headers

void DataPageHeader::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, num_values);
  WriteField(enc, 2, encoding);
  WriteField(enc, 3, definition_level_encoding);
  WriteField(enc, 4, repetition_level_encoding);
  WriteField(enc, 5, statistics);
  enc.EndStruct();
}

Status DataPageHeader::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &num_values);
      case 2:
        return ReadField(dec, h, &encoding);
      case 3:
        return ReadField(dec, h, &definition_level_encoding);
      case 4:
        return ReadField(dec, h, &repetition_level_encoding);
      case 5:
        return ReadField(dec, h, &statistics);
      default:
        return dec.Skip(h.type);
    }
  }));
  return req.Check(dec, "DataPageHeader", {1, 2});
}

void DataPageHeaderV2::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, num_values);
  WriteField(enc, 2, num_nulls);
  WriteField(enc, 3, num_rows);
  WriteField(enc, 4, encoding);
  WriteField(enc, 5, definition_levels_byte_length);
  WriteField(enc, 6, repetition_levels_byte_length);
  WriteField(enc, 7, is_compressed);
  WriteField(enc, 8, statistics);
  enc.EndStruct();
}

Status DataPageHeaderV2::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &num_values);
      case 2:
        return ReadField(dec, h, &num_nulls);
      case 3:
        return ReadField(dec, h, &num_rows);
      case 4:
        return ReadField(dec, h, &encoding);
      case 5:
        return ReadField(dec, h, &definition_levels_byte_length);
      case 6:
        return ReadField(dec, h, &repetition_levels_byte_length);
      case 7:
        return ReadField(dec, h, &is_compressed);
      case 8:
        return ReadField(dec, h, &statistics);
      default:
        return dec.Skip(h.type);
    }
  }));
  return req.Check(dec, "DataPageHeaderV2", {1, 2, 3, 4, 5, 6});
}

void DictionaryPageHeader::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, num_values);
  WriteField(enc, 2, encoding);
  WriteField(enc, 3, is_sorted);
  enc.EndStruct();
}

Status DictionaryPageHeader::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    if (h.id == 1) return ReadField(dec, h, &num_values);
    if (h.id == 2) return ReadField(dec, h, &encoding);
    if (h.id == 3) return ReadField(dec, h, &is_sorted);
    return dec.Skip(h.type);
  }));
  return req.Check(dec, "DictionaryPageHeader", {1, 2});
}

void PageHeader::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, type);
  WriteField(enc, 2, uncompressed_page_size);
  WriteField(enc, 3, compressed_page_size);
  WriteField(enc, 4, crc);
  WriteField(enc, 5, data_page_header);
  WriteField(enc, 7, dictionary_page_header);
  WriteField(enc, 8, data_page_header_v2);
  enc.EndStruct();
}

Status PageHeader::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &type);
      case 2:
        return ReadField(dec, h, &uncompressed_page_size);
      case 3:
        return ReadField(dec, h, &compressed_page_size);
      case 4:
        return ReadField(dec, h, &crc);
      case 5:
        return ReadField(dec, h, &data_page_header);
      case 7:
        return ReadField(dec, h, &dictionary_page_header);
      case 8:
        return ReadField(dec, h, &data_page_header_v2);
      default:
        return dec.Skip(h.type);  // 6 index_page_header and anything newer
    }
  }));
  GEOLAKE_RETURN_NOT_OK(req.Check(dec, "PageHeader", {1, 2, 3}));
  if (uncompressed_page_size < 0 || compressed_page_size < 0) {
    return dec.Corrupt("PageHeader has a negative page size");
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// Page index

void PageLocation::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, offset);
  WriteField(enc, 2, compressed_page_size);
  WriteField(enc, 3, first_row_index);
  enc.EndStruct();
}

Status PageLocation::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    if (h.id == 1) return ReadField(dec, h, &offset);
    if (h.id == 2) return ReadField(dec, h, &compressed_page_size);
    if (h.id == 3) return ReadField(dec, h, &first_row_index);
    return dec.Skip(h.type);
  }));
  return req.Check(dec, "PageLocation", {1, 2, 3});
}

void OffsetIndex::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, page_locations);
  WriteNonEmptyList(enc, 2, unencoded_byte_array_data_bytes);
  enc.EndStruct();
}

Status OffsetIndex::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    if (h.id == 1) return ReadField(dec, h, &page_locations);
    if (h.id == 2) return ReadField(dec, h, &unencoded_byte_array_data_bytes);
    return dec.Skip(h.type);
  }));
  return req.Check(dec, "OffsetIndex", {1});
}

void ColumnIndex::Write(CompactEncoder& enc) const {
  enc.BeginStruct();
  WriteField(enc, 1, null_pages);
  WriteField(enc, 2, min_values);
  WriteField(enc, 3, max_values);
  WriteField(enc, 4, boundary_order);
  WriteNonEmptyList(enc, 5, null_counts);
  WriteNonEmptyList(enc, 6, repetition_level_histograms);
  WriteNonEmptyList(enc, 7, definition_level_histograms);
  enc.EndStruct();
}

Status ColumnIndex::Read(CompactDecoder& dec) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    switch (h.id) {
      case 1:
        return ReadField(dec, h, &null_pages);
      case 2:
        return ReadField(dec, h, &min_values);
      case 3:
        return ReadField(dec, h, &max_values);
      case 4:
        return ReadField(dec, h, &boundary_order);
      case 5:
        return ReadField(dec, h, &null_counts);
      case 6:
        return ReadField(dec, h, &repetition_level_histograms);
      case 7:
        return ReadField(dec, h, &definition_level_histograms);
      default:
        return dec.Skip(h.type);
    }
  }));
  GEOLAKE_RETURN_NOT_OK(req.Check(dec, "ColumnIndex", {1, 2, 3, 4}));
  if (min_values.size() != null_pages.size() || max_values.size() != null_pages.size()) {
    return dec.Corrupt("ColumnIndex lists differ in length");
  }
  return Status::OK();
}

}  // namespace geolake::parquet
