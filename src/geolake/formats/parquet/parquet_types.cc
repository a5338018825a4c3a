#include "geolake/formats/parquet/parquet_types.h"

#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace geolake::parquet {

using thrift::CompactDecoder;
using thrift::CompactEncoder;
using thrift::CType;
using thrift::FieldHeader;

namespace {

// ---------------------------------------------------------------------------------------------
// Generic reading: ReadField checks the wire type against the C++ type and skips the field on
// a mismatch (tolerant read, as the generated Thrift code does). Each struct's fields are
// listed once, in a field table (below) that drives both its Read and its Write.

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

// ---------------------------------------------------------------------------------------------
// Field tables: one per struct, naming each field's id, member and presence once; WriteFields and
// ReadFields walk the same table, so a struct's Write and Read cannot disagree on an id. The
// tables are tuples of member pointers, so both walks unroll at compile time (no allocation,
// no virtual calls); ReadFields finds a field by comparing ids in table order.

enum class Presence {
  kOptional,
  kRequired,      // Read: the struct is corrupt without it
  kSkipEmptyList  // optional list modelled as a vector; Write leaves an empty one out
};

template <typename S, typename M>
struct Field {
  std::int16_t id;
  M S::*member;
  Presence presence;
};

template <typename S, typename M>
constexpr Field<S, M> F(std::int16_t id, M S::*member, Presence presence = Presence::kOptional) {
  return {id, member, presence};
}

constexpr Presence kRequired = Presence::kRequired;
constexpr Presence kSkipEmptyList = Presence::kSkipEmptyList;

template <typename S, typename M>
void WriteTableField(CompactEncoder& enc, const S& s, const Field<S, M>& field) {
  if constexpr (IsVector<M>::value) {
    if (field.presence == kSkipEmptyList) {
      WriteNonEmptyList(enc, field.id, s.*field.member);
      return;
    }
  }
  WriteField(enc, field.id, s.*field.member);
}

/// Writes every field of `s` in table order (ascending ids).
template <typename S, typename... M>
void WriteFields(CompactEncoder& enc, const S& s, const std::tuple<Field<S, M>...>& fields) {
  enc.BeginStruct();
  std::apply([&](const auto&... field) { (WriteTableField(enc, s, field), ...); }, fields);
  enc.EndStruct();
}

/// Reads a struct into `s`: each field of the table by id (a wire type that does not match the
/// member's type is skipped), unknown ids skipped; then checks that every kRequired field was
/// seen, in table order ("<name> lacks required field <id>").
template <typename S, typename... M>
Status ReadFields(CompactDecoder& dec, S* s, std::string_view name,
                  const std::tuple<Field<S, M>...>& fields) {
  Required req;
  GEOLAKE_RETURN_NOT_OK(ReadStruct(dec, [&](const FieldHeader& h) -> Status {
    req.Saw(h.id);
    Status st;
    bool matched = false;
    std::apply(
        [&](const auto&... field) {
          ((!matched && h.id == field.id
                ? (matched = true, st = ReadField(dec, h, &(s->*field.member)), 0)
                : 0),
           ...);
        },
        fields);
    return matched ? st : dec.Skip(h.type);
  }));
  Status st;
  std::apply(
      [&](const auto&... field) {
        ((st.ok() && field.presence == kRequired ? (st = req.Check(dec, name, {field.id}), 0) : 0),
         ...);
      },
      fields);
  return st;
}

constexpr auto KeyValueFields() {
  return std::tuple{
      F(1, &KeyValue::key, kRequired),
      F(2, &KeyValue::value),
  };
}

constexpr auto SchemaElementFields() {
  return std::tuple{
      F(1, &SchemaElement::type),
      F(2, &SchemaElement::type_length),
      F(3, &SchemaElement::repetition_type),
      F(4, &SchemaElement::name, kRequired),
      F(5, &SchemaElement::num_children),
      F(6, &SchemaElement::converted_type),
      F(7, &SchemaElement::scale),
      F(8, &SchemaElement::precision),
      F(9, &SchemaElement::field_id),
      F(10, &SchemaElement::logical_type),
  };
}

constexpr auto StatisticsFields() {
  return std::tuple{
      F(1, &Statistics::max),
      F(2, &Statistics::min),
      F(3, &Statistics::null_count),
      F(4, &Statistics::distinct_count),
      F(5, &Statistics::max_value),
      F(6, &Statistics::min_value),
      F(7, &Statistics::is_max_value_exact),
      F(8, &Statistics::is_min_value_exact),
      F(9, &Statistics::nan_count),
  };
}

constexpr auto SizeStatisticsFields() {
  return std::tuple{
      F(1, &SizeStatistics::unencoded_byte_array_data_bytes),
      F(2, &SizeStatistics::repetition_level_histogram, kSkipEmptyList),
      F(3, &SizeStatistics::definition_level_histogram, kSkipEmptyList),
  };
}

constexpr auto BoundingBoxFields() {
  return std::tuple{
      F(1, &BoundingBox::xmin, kRequired),
      F(2, &BoundingBox::xmax, kRequired),
      F(3, &BoundingBox::ymin, kRequired),
      F(4, &BoundingBox::ymax, kRequired),
      F(5, &BoundingBox::zmin),
      F(6, &BoundingBox::zmax),
      F(7, &BoundingBox::mmin),
      F(8, &BoundingBox::mmax),
  };
}

constexpr auto GeospatialStatisticsFields() {
  return std::tuple{
      F(1, &GeospatialStatistics::bbox),
      F(2, &GeospatialStatistics::geospatial_types),
  };
}

constexpr auto PageEncodingStatsFields() {
  return std::tuple{
      F(1, &PageEncodingStats::page_type, kRequired),
      F(2, &PageEncodingStats::encoding, kRequired),
      F(3, &PageEncodingStats::count, kRequired),
  };
}

constexpr auto ColumnMetaDataFields() {
  return std::tuple{
      F(1, &ColumnMetaData::type, kRequired),
      F(2, &ColumnMetaData::encodings, kRequired),
      F(3, &ColumnMetaData::path_in_schema, kRequired),
      F(4, &ColumnMetaData::codec, kRequired),
      F(5, &ColumnMetaData::num_values, kRequired),
      F(6, &ColumnMetaData::total_uncompressed_size, kRequired),
      F(7, &ColumnMetaData::total_compressed_size, kRequired),
      F(8, &ColumnMetaData::key_value_metadata, kSkipEmptyList),
      F(9, &ColumnMetaData::data_page_offset, kRequired),
      F(10, &ColumnMetaData::index_page_offset),
      F(11, &ColumnMetaData::dictionary_page_offset),
      F(12, &ColumnMetaData::statistics),
      F(13, &ColumnMetaData::encoding_stats, kSkipEmptyList),
      F(14, &ColumnMetaData::bloom_filter_offset),
      F(15, &ColumnMetaData::bloom_filter_length),
      F(16, &ColumnMetaData::size_statistics),
      F(17, &ColumnMetaData::geospatial_statistics),
  };
}

// file_offset (2) is required in the IDL but deprecated; its absence is tolerated.
constexpr auto ColumnChunkFields() {
  return std::tuple{
      F(1, &ColumnChunk::file_path),           F(2, &ColumnChunk::file_offset),
      F(3, &ColumnChunk::meta_data),           F(4, &ColumnChunk::offset_index_offset),
      F(5, &ColumnChunk::offset_index_length), F(6, &ColumnChunk::column_index_offset),
      F(7, &ColumnChunk::column_index_length),
  };
}

constexpr auto SortingColumnFields() {
  return std::tuple{
      F(1, &SortingColumn::column_idx, kRequired),
      F(2, &SortingColumn::descending, kRequired),
      F(3, &SortingColumn::nulls_first, kRequired),
  };
}

constexpr auto RowGroupFields() {
  return std::tuple{
      F(1, &RowGroup::columns, kRequired),
      F(2, &RowGroup::total_byte_size, kRequired),
      F(3, &RowGroup::num_rows, kRequired),
      F(4, &RowGroup::sorting_columns, kSkipEmptyList),
      F(5, &RowGroup::file_offset),
      F(6, &RowGroup::total_compressed_size),
      F(7, &RowGroup::ordinal),
  };
}

// Encryption fields 8, 9 and anything newer are skipped.
constexpr auto FileMetaDataFields() {
  return std::tuple{
      F(1, &FileMetaData::version, kRequired),
      F(2, &FileMetaData::schema, kRequired),
      F(3, &FileMetaData::num_rows, kRequired),
      F(4, &FileMetaData::row_groups, kRequired),
      F(5, &FileMetaData::key_value_metadata, kSkipEmptyList),
      F(6, &FileMetaData::created_by),
      F(7, &FileMetaData::column_orders, kSkipEmptyList),
  };
}

constexpr auto DataPageHeaderFields() {
  return std::tuple{
      F(1, &DataPageHeader::num_values, kRequired),
      F(2, &DataPageHeader::encoding, kRequired),
      F(3, &DataPageHeader::definition_level_encoding),
      F(4, &DataPageHeader::repetition_level_encoding),
      F(5, &DataPageHeader::statistics),
  };
}

constexpr auto DataPageHeaderV2Fields() {
  return std::tuple{
      F(1, &DataPageHeaderV2::num_values, kRequired),
      F(2, &DataPageHeaderV2::num_nulls, kRequired),
      F(3, &DataPageHeaderV2::num_rows, kRequired),
      F(4, &DataPageHeaderV2::encoding, kRequired),
      F(5, &DataPageHeaderV2::definition_levels_byte_length, kRequired),
      F(6, &DataPageHeaderV2::repetition_levels_byte_length, kRequired),
      F(7, &DataPageHeaderV2::is_compressed),
      F(8, &DataPageHeaderV2::statistics),
  };
}

constexpr auto DictionaryPageHeaderFields() {
  return std::tuple{
      F(1, &DictionaryPageHeader::num_values, kRequired),
      F(2, &DictionaryPageHeader::encoding, kRequired),
      F(3, &DictionaryPageHeader::is_sorted),
  };
}

// 6 (index_page_header) and anything newer are skipped.
constexpr auto PageHeaderFields() {
  return std::tuple{
      F(1, &PageHeader::type, kRequired),
      F(2, &PageHeader::uncompressed_page_size, kRequired),
      F(3, &PageHeader::compressed_page_size, kRequired),
      F(4, &PageHeader::crc),
      F(5, &PageHeader::data_page_header),
      F(7, &PageHeader::dictionary_page_header),
      F(8, &PageHeader::data_page_header_v2),
  };
}

constexpr auto PageLocationFields() {
  return std::tuple{
      F(1, &PageLocation::offset, kRequired),
      F(2, &PageLocation::compressed_page_size, kRequired),
      F(3, &PageLocation::first_row_index, kRequired),
  };
}

constexpr auto OffsetIndexFields() {
  return std::tuple{
      F(1, &OffsetIndex::page_locations, kRequired),
      F(2, &OffsetIndex::unencoded_byte_array_data_bytes, kSkipEmptyList),
  };
}

constexpr auto ColumnIndexFields() {
  return std::tuple{
      F(1, &ColumnIndex::null_pages, kRequired),
      F(2, &ColumnIndex::min_values, kRequired),
      F(3, &ColumnIndex::max_values, kRequired),
      F(4, &ColumnIndex::boundary_order, kRequired),
      F(5, &ColumnIndex::null_counts, kSkipEmptyList),
      F(6, &ColumnIndex::repetition_level_histograms, kSkipEmptyList),
      F(7, &ColumnIndex::definition_level_histograms, kSkipEmptyList),
  };
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

void KeyValue::Write(CompactEncoder& enc) const { WriteFields(enc, *this, KeyValueFields()); }

Status KeyValue::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "KeyValue", KeyValueFields());
}

void SchemaElement::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, SchemaElementFields());
}

Status SchemaElement::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "SchemaElement", SchemaElementFields());
}

void Statistics::Write(CompactEncoder& enc) const { WriteFields(enc, *this, StatisticsFields()); }

Status Statistics::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "Statistics", StatisticsFields());
}

void SizeStatistics::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, SizeStatisticsFields());
}

Status SizeStatistics::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "SizeStatistics", SizeStatisticsFields());
}

void BoundingBox::Write(CompactEncoder& enc) const { WriteFields(enc, *this, BoundingBoxFields()); }

Status BoundingBox::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "BoundingBox", BoundingBoxFields());
}

void GeospatialStatistics::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, GeospatialStatisticsFields());
}

Status GeospatialStatistics::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "GeospatialStatistics", GeospatialStatisticsFields());
}

void PageEncodingStats::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, PageEncodingStatsFields());
}

Status PageEncodingStats::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "PageEncodingStats", PageEncodingStatsFields());
}

// ---------------------------------------------------------------------------------------------
// Column chunk metadata

void ColumnMetaData::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, ColumnMetaDataFields());
}

Status ColumnMetaData::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "ColumnMetaData", ColumnMetaDataFields());
}

void ColumnChunk::Write(CompactEncoder& enc) const { WriteFields(enc, *this, ColumnChunkFields()); }

Status ColumnChunk::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "ColumnChunk", ColumnChunkFields());
}

void SortingColumn::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, SortingColumnFields());
}

Status SortingColumn::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "SortingColumn", SortingColumnFields());
}

void RowGroup::Write(CompactEncoder& enc) const { WriteFields(enc, *this, RowGroupFields()); }

Status RowGroup::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "RowGroup", RowGroupFields());
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
  WriteFields(enc, *this, FileMetaDataFields());
}

Status FileMetaData::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "FileMetaData", FileMetaDataFields());
}

// ---------------------------------------------------------------------------------------------
// Page headers

void DataPageHeader::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, DataPageHeaderFields());
}

Status DataPageHeader::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "DataPageHeader", DataPageHeaderFields());
}

void DataPageHeaderV2::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, DataPageHeaderV2Fields());
}

Status DataPageHeaderV2::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "DataPageHeaderV2", DataPageHeaderV2Fields());
}

void DictionaryPageHeader::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, DictionaryPageHeaderFields());
}

Status DictionaryPageHeader::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "DictionaryPageHeader", DictionaryPageHeaderFields());
}

void PageHeader::Write(CompactEncoder& enc) const { WriteFields(enc, *this, PageHeaderFields()); }

Status PageHeader::Read(CompactDecoder& dec) {
  GEOLAKE_RETURN_NOT_OK(ReadFields(dec, this, "PageHeader", PageHeaderFields()));
  if (uncompressed_page_size < 0 || compressed_page_size < 0) {
    return dec.Corrupt("PageHeader has a negative page size");
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// Page index

void PageLocation::Write(CompactEncoder& enc) const {
  WriteFields(enc, *this, PageLocationFields());
}

Status PageLocation::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "PageLocation", PageLocationFields());
}

void OffsetIndex::Write(CompactEncoder& enc) const { WriteFields(enc, *this, OffsetIndexFields()); }

Status OffsetIndex::Read(CompactDecoder& dec) {
  return ReadFields(dec, this, "OffsetIndex", OffsetIndexFields());
}

void ColumnIndex::Write(CompactEncoder& enc) const { WriteFields(enc, *this, ColumnIndexFields()); }

Status ColumnIndex::Read(CompactDecoder& dec) {
  GEOLAKE_RETURN_NOT_OK(ReadFields(dec, this, "ColumnIndex", ColumnIndexFields()));
  if (min_values.size() != null_pages.size() || max_values.size() != null_pages.size()) {
    return dec.Corrupt("ColumnIndex lists differ in length");
  }
  return Status::OK();
}

}  // namespace geolake::parquet
