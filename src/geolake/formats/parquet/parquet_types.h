/// \file
/// The Parquet metadata structures (apache/parquet-format's parquet.thrift, format 2.11, with
/// its field ids) as plain C++ structs, each with Write(CompactEncoder&) and
/// Read(CompactDecoder&). Optional Thrift fields are std::optional; enums keep unknown values
/// as they were read (they are int32 underneath). Read skips unknown fields and union members
/// and fails with kCorruptData when a required field is missing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/thrift_compact.h"

namespace geolake::parquet {

enum class PhysicalType : std::int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class Repetition : std::int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class ConvertedType : std::int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class Encoding : std::int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class CompressionCodec : std::int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,
  kZstd = 6,
  kLz4Raw = 7,
};

enum class PageType : std::int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

enum class BoundaryOrder : std::int32_t { kUnordered = 0, kAscending = 1, kDescending = 2 };

enum class EdgeInterpolationAlgorithm : std::int32_t {
  kSpherical = 0,
  kVincenty = 1,
  kThomas = 2,
  kAndoyer = 3,
  kKarney = 4,
};

enum class TimeUnit : std::int16_t { kMillis = 1, kMicros = 2, kNanos = 3 };

/// \brief Names for messages and debugging ("INT64", "ZSTD", ...).
std::string_view PhysicalTypeName(PhysicalType type);
std::string_view EncodingName(Encoding encoding);
std::string_view CodecName(CompressionCodec codec);

/// \brief The LogicalType union. `kind` is the union member id; kUnrecognized marks a member
/// this code does not know (treat the column as its physical type).
struct LogicalType {
  enum class Kind : std::int16_t {
    kUnrecognized = 0,
    kString = 1,
    kMap = 2,
    kList = 3,
    kEnum = 4,
    kDecimal = 5,
    kDate = 6,
    kTime = 7,
    kTimestamp = 8,
    kInteger = 10,
    kUnknown = 11,  // the Parquet UNKNOWN (always-null) type
    kJson = 12,
    kBson = 13,
    kUuid = 14,
    kFloat16 = 15,
    kVariant = 16,
    kGeometry = 17,
    kGeography = 18,
  };

  Kind kind = Kind::kUnrecognized;
  // DECIMAL
  std::int32_t scale = 0;
  std::int32_t precision = 0;
  // TIME, TIMESTAMP
  bool is_adjusted_to_utc = false;
  TimeUnit unit = TimeUnit::kMicros;
  // INTEGER
  std::int8_t bit_width = 0;
  bool is_signed = true;
  // GEOMETRY, GEOGRAPHY
  std::optional<std::string> crs;
  std::optional<EdgeInterpolationAlgorithm> algorithm;  // GEOGRAPHY only
  // VARIANT
  std::optional<std::int8_t> variant_specification_version;

  static LogicalType String() { return Simple(Kind::kString); }
  static LogicalType Date() { return Simple(Kind::kDate); }
  static LogicalType Json() { return Simple(Kind::kJson); }
  static LogicalType Decimal(std::int32_t precision, std::int32_t scale);
  static LogicalType Timestamp(bool is_adjusted_to_utc, TimeUnit unit);
  static LogicalType Time(bool is_adjusted_to_utc, TimeUnit unit);
  static LogicalType Integer(std::int8_t bit_width, bool is_signed);
  static LogicalType Geometry(std::optional<std::string> crs = std::nullopt);
  static LogicalType Geography(std::optional<std::string> crs = std::nullopt,
                               std::optional<EdgeInterpolationAlgorithm> algorithm = std::nullopt);
  static LogicalType Simple(Kind kind) {
    LogicalType t;
    t.kind = kind;
    return t;
  }

  bool operator==(const LogicalType&) const = default;

  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;

  bool operator==(const KeyValue&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct SchemaElement {
  std::optional<PhysicalType> type;
  std::optional<std::int32_t> type_length;
  std::optional<Repetition> repetition_type;
  std::string name;
  std::optional<std::int32_t> num_children;
  std::optional<ConvertedType> converted_type;
  std::optional<std::int32_t> scale;
  std::optional<std::int32_t> precision;
  std::optional<std::int32_t> field_id;
  std::optional<LogicalType> logical_type;

  bool operator==(const SchemaElement&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

/// \brief Column or page statistics. Bounds are PLAIN-encoded values (BYTE_ARRAY without the
/// length prefix), ordered per the column's ColumnOrder.
struct Statistics {
  std::optional<std::string> max;  // deprecated; read only
  std::optional<std::string> min;  // deprecated; read only
  std::optional<std::int64_t> null_count;
  std::optional<std::int64_t> distinct_count;
  std::optional<std::string> max_value;
  std::optional<std::string> min_value;
  std::optional<bool> is_max_value_exact;
  std::optional<bool> is_min_value_exact;
  std::optional<std::int64_t> nan_count;  // format 2.13; read only

  bool operator==(const Statistics&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct SizeStatistics {
  std::optional<std::int64_t> unencoded_byte_array_data_bytes;
  std::vector<std::int64_t> repetition_level_histogram;
  std::vector<std::int64_t> definition_level_histogram;

  bool operator==(const SizeStatistics&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

/// \brief Thrift field order is xmin, xmax, ymin, ymax (x-min, x-max first).
struct BoundingBox {
  double xmin = 0;
  double xmax = 0;
  double ymin = 0;
  double ymax = 0;
  std::optional<double> zmin;
  std::optional<double> zmax;
  std::optional<double> mmin;
  std::optional<double> mmax;

  bool operator==(const BoundingBox&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct GeospatialStatistics {
  std::optional<BoundingBox> bbox;
  std::optional<std::vector<std::int32_t>> geospatial_types;

  bool operator==(const GeospatialStatistics&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct PageEncodingStats {
  PageType page_type = PageType::kDataPage;
  Encoding encoding = Encoding::kPlain;
  std::int32_t count = 0;

  bool operator==(const PageEncodingStats&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kBoolean;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  CompressionCodec codec = CompressionCodec::kUncompressed;
  std::int64_t num_values = 0;
  std::int64_t total_uncompressed_size = 0;
  std::int64_t total_compressed_size = 0;
  std::vector<KeyValue> key_value_metadata;
  std::int64_t data_page_offset = 0;
  std::optional<std::int64_t> index_page_offset;
  std::optional<std::int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
  std::vector<PageEncodingStats> encoding_stats;
  std::optional<std::int64_t> bloom_filter_offset;
  std::optional<std::int32_t> bloom_filter_length;
  std::optional<SizeStatistics> size_statistics;
  std::optional<GeospatialStatistics> geospatial_statistics;

  bool operator==(const ColumnMetaData&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct ColumnChunk {
  std::optional<std::string> file_path;
  std::int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  std::optional<std::int64_t> offset_index_offset;
  std::optional<std::int32_t> offset_index_length;
  std::optional<std::int64_t> column_index_offset;
  std::optional<std::int32_t> column_index_length;

  bool operator==(const ColumnChunk&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct SortingColumn {
  std::int32_t column_idx = 0;
  bool descending = false;
  bool nulls_first = false;

  bool operator==(const SortingColumn&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  std::int64_t total_byte_size = 0;
  std::int64_t num_rows = 0;
  std::vector<SortingColumn> sorting_columns;
  std::optional<std::int64_t> file_offset;
  std::optional<std::int64_t> total_compressed_size;
  std::optional<std::int16_t> ordinal;

  bool operator==(const RowGroup&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

/// \brief The ColumnOrder union: 1 TYPE_ORDER, 2 IEEE_754_TOTAL_ORDER; 0 = a member unknown here.
struct ColumnOrder {
  enum class Kind : std::int16_t { kUnrecognized = 0, kTypeOrder = 1, kIeee754TotalOrder = 2 };
  Kind kind = Kind::kTypeOrder;

  bool operator==(const ColumnOrder&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct FileMetaData {
  std::int32_t version = 1;
  std::vector<SchemaElement> schema;
  std::int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::optional<std::string> created_by;
  std::vector<ColumnOrder> column_orders;

  bool operator==(const FileMetaData&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct DataPageHeader {
  std::int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;

  bool operator==(const DataPageHeader&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct DataPageHeaderV2 {
  std::int32_t num_values = 0;
  std::int32_t num_nulls = 0;
  std::int32_t num_rows = 0;
  Encoding encoding = Encoding::kPlain;
  std::int32_t definition_levels_byte_length = 0;
  std::int32_t repetition_levels_byte_length = 0;
  std::optional<bool> is_compressed;  // absent means true
  std::optional<Statistics> statistics;

  bool operator==(const DataPageHeaderV2&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct DictionaryPageHeader {
  std::int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  std::optional<bool> is_sorted;

  bool operator==(const DictionaryPageHeader&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  std::int32_t uncompressed_page_size = 0;
  std::int32_t compressed_page_size = 0;
  std::optional<std::int32_t> crc;
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;

  bool operator==(const PageHeader&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct PageLocation {
  std::int64_t offset = 0;
  std::int32_t compressed_page_size = 0;  // header + body
  std::int64_t first_row_index = 0;

  bool operator==(const PageLocation&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct OffsetIndex {
  std::vector<PageLocation> page_locations;
  std::vector<std::int64_t> unencoded_byte_array_data_bytes;

  bool operator==(const OffsetIndex&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

struct ColumnIndex {
  std::vector<bool> null_pages;
  std::vector<std::string> min_values;
  std::vector<std::string> max_values;
  BoundaryOrder boundary_order = BoundaryOrder::kUnordered;
  std::vector<std::int64_t> null_counts;
  std::vector<std::int64_t> repetition_level_histograms;
  std::vector<std::int64_t> definition_level_histograms;

  bool operator==(const ColumnIndex&) const = default;
  void Write(thrift::CompactEncoder& enc) const;
  Status Read(thrift::CompactDecoder& dec);
};

/// \brief Serialize any of the structs above to a byte string.
template <typename T>
std::string SerializeThrift(const T& value) {
  thrift::CompactEncoder enc;
  value.Write(enc);
  return enc.Release();
}

/// \brief Deserialize one struct from the front of `data`; `*bytes_read` (if given) receives the
/// length consumed, so page headers can be read from a buffer that also holds the body.
template <typename T>
Status DeserializeThrift(std::string_view data, T* out, std::size_t* bytes_read = nullptr) {
  thrift::CompactDecoder dec(data);
  *out = T{};
  GEOLAKE_RETURN_NOT_OK(out->Read(dec));
  if (bytes_read != nullptr) *bytes_read = dec.position();
  return Status::OK();
}

}  // namespace geolake::parquet
