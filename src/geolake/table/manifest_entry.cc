// The manifest entry and manifest-list entry as Avro: their schemas (in Java's key order, with
// Iceberg's field ids), the container writer, and field access by id for the readers.
#include <cmath>
#include <set>
#include <string>

#include "geolake/table/manifest.h"
#include "geolake/table/manifest_internal.h"

namespace geolake::table::internal {
namespace {

// ---- Avro schema construction (JSON, in Java's key order) ----------------------------------

Json AvroField(std::string_view name, Json type, std::int32_t id, std::string_view doc = {}) {
  Json f = Json::object();
  f["name"] = name;
  f["type"] = std::move(type);
  if (!doc.empty()) f["doc"] = doc;
  f["field-id"] = id;
  return f;
}

Json OptionalField(std::string_view name, Json type, std::int32_t id, std::string_view doc = {}) {
  Json f = Json::object();
  f["name"] = name;
  f["type"] = Json::array({"null", std::move(type)});
  if (!doc.empty()) f["doc"] = doc;
  f["default"] = nullptr;
  f["field-id"] = id;
  return f;
}

Json IntKeyMap(std::int32_t key_id, std::int32_t value_id, std::string_view value_type) {
  Json record = Json::object();
  record["type"] = "record";
  record["name"] = "k" + std::to_string(key_id) + "_v" + std::to_string(value_id);
  record["fields"] =
      Json::array({AvroField("key", "int", key_id), AvroField("value", value_type, value_id)});
  Json array = Json::object();
  array["type"] = "array";
  array["items"] = std::move(record);
  array["logicalType"] = "map";
  return array;
}

Json ArrayOf(std::string_view item_type, std::int32_t element_id) {
  Json array = Json::object();
  array["type"] = "array";
  array["items"] = item_type;
  array["element-id"] = element_id;
  return array;
}

// The Avro type of a partition field's value (Iceberg spec Appendix A).
Result<Json> AvroTypeOf(const Type& type, std::set<std::string>* named) {
  auto logical = [](std::string_view base, std::string_view logical_type) {
    Json j = Json::object();
    j["type"] = base;
    j["logicalType"] = logical_type;
    return j;
  };
  auto fixed = [&](std::string name, int size) -> Json {
    if (!named->insert(name).second) return name;  // already defined: refer by name
    Json j = Json::object();
    j["type"] = "fixed";
    j["name"] = name;
    j["size"] = size;
    return j;
  };
  switch (type.id()) {
    case TypeId::kBoolean:
      return Json("boolean");
    case TypeId::kInt:
      return Json("int");
    case TypeId::kLong:
      return Json("long");
    case TypeId::kFloat:
      return Json("float");
    case TypeId::kDouble:
      return Json("double");
    case TypeId::kDate:
      return logical("int", "date");
    case TypeId::kTime:
      return logical("long", "time-micros");
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      const bool nanos = type.id() == TypeId::kTimestampNs || type.id() == TypeId::kTimestampTzNs;
      Json j = logical("long", nanos ? "timestamp-nanos" : "timestamp-micros");
      j["adjust-to-utc"] = type.id() == TypeId::kTimestampTz || type.id() == TypeId::kTimestampTzNs;
      return j;
    }
    case TypeId::kString:
      return Json("string");
    case TypeId::kBinary:
    case TypeId::kGeometry:
    case TypeId::kGeography:
      return Json("bytes");
    case TypeId::kUuid: {
      Json j = fixed("uuid_fixed", 16);
      if (j.is_object()) j["logicalType"] = "uuid";
      return j;
    }
    case TypeId::kFixed:
      return fixed("fixed_" + std::to_string(type.length()), type.length());
    case TypeId::kDecimal: {
      Json j =
          fixed("decimal_" + std::to_string(type.precision()) + "_" + std::to_string(type.scale()),
                DecimalBytes(type.precision()));
      if (j.is_object()) {
        j["logicalType"] = "decimal";
        j["precision"] = type.precision();
        j["scale"] = type.scale();
      }
      return j;
    }
    default:
      return Status::InvalidArgument("type " + type.ToString() + " cannot be a partition value");
  }
}

bool IsBytesLike(const avro::Datum& d) {
  return d.type() == avro::Type::kBytes || d.type() == avro::Type::kFixed ||
         d.type() == avro::Type::kString;
}

}  // namespace

// Bytes needed for a decimal of `precision` digits as two's complement.
int DecimalBytes(int precision) {
  for (int n = 1; n < 17; ++n) {
    if (std::ldexp(1.0, 8 * n - 1) > std::pow(10.0, precision)) return n;
  }
  return 16;
}

Result<Json> ManifestEntrySchema(int format_version, const Type& partition_type) {
  std::set<std::string> named;
  Json partition_fields = Json::array();
  for (const auto& f : partition_type.fields()) {
    GEOLAKE_ASSIGN_OR_RETURN(Json t, AvroTypeOf(*f.type, &named));
    partition_fields.push_back(OptionalField(f.name, std::move(t), f.id));
  }
  Json partition = Json::object();
  partition["type"] = "record";
  partition["name"] = "r102";
  partition["fields"] = std::move(partition_fields);

  Json df = Json::array();
  df.push_back(AvroField("content", "int", 134,
                         "Contents of the file: 0=data, 1=position deletes, 2=equality deletes"));
  df.push_back(AvroField("file_path", "string", 100, "Location URI with FS scheme"));
  df.push_back(AvroField("file_format", "string", 101, "File format name: avro, orc, or parquet"));
  df.push_back(AvroField("partition", std::move(partition), 102,
                         "Partition data tuple, schema based on the partition spec"));
  df.push_back(AvroField("record_count", "long", 103, "Number of records in the file"));
  df.push_back(AvroField("file_size_in_bytes", "long", 104, "Total file size in bytes"));
  df.push_back(OptionalField("column_sizes", IntKeyMap(117, 118, "long"), 108,
                             "Map of column id to total size on disk"));
  df.push_back(OptionalField("value_counts", IntKeyMap(119, 120, "long"), 109,
                             "Map of column id to total count, including null and NaN"));
  df.push_back(OptionalField("null_value_counts", IntKeyMap(121, 122, "long"), 110,
                             "Map of column id to null value count"));
  df.push_back(OptionalField("nan_value_counts", IntKeyMap(138, 139, "long"), 137,
                             "Map of column id to number of NaN values in the column"));
  df.push_back(OptionalField("lower_bounds", IntKeyMap(126, 127, "bytes"), 125,
                             "Map of column id to lower bound"));
  df.push_back(OptionalField("upper_bounds", IntKeyMap(129, 130, "bytes"), 128,
                             "Map of column id to upper bound"));
  df.push_back(OptionalField("key_metadata", "bytes", 131, "Encryption key metadata blob"));
  df.push_back(OptionalField("split_offsets", ArrayOf("long", 133), 132, "Splittable offsets"));
  df.push_back(
      OptionalField("equality_ids", ArrayOf("int", 136), 135, "Equality comparison field IDs"));
  df.push_back(OptionalField("sort_order_id", "int", 140, "Sort order ID"));
  if (format_version >= 3) {
    df.push_back(OptionalField("first_row_id", "long", 142,
                               "The _row_id for the first row in the data file"));
  }
  df.push_back(OptionalField("referenced_data_file", "string", 143,
                             "Fully qualified location (URI with FS scheme) of a data file that "
                             "all deletes reference"));
  if (format_version >= 3) {
    df.push_back(OptionalField("content_offset", "long", 144,
                               "The offset in the file where the content starts"));
    df.push_back(OptionalField("content_size_in_bytes", "long", 145,
                               "The length of referenced content stored in the file"));
  }
  Json r2 = Json::object();
  r2["type"] = "record";
  r2["name"] = "r2";
  r2["fields"] = std::move(df);

  Json root = Json::object();
  root["type"] = "record";
  root["name"] = "manifest_entry";
  root["fields"] = Json::array(
      {AvroField("status", "int", 0), OptionalField("snapshot_id", "long", 1),
       OptionalField("sequence_number", "long", 3),
       OptionalField("file_sequence_number", "long", 4), AvroField("data_file", std::move(r2), 2)});
  return root;
}

Json ManifestListSchema(int format_version) {
  Json summary_fields = Json::array(
      {AvroField("contains_null", "boolean", 509, "True if any file has a null partition value"),
       OptionalField("contains_nan", "boolean", 518, "True if any file has a nan partition value"),
       OptionalField("lower_bound", "bytes", 510, "Partition lower bound for all files"),
       OptionalField("upper_bound", "bytes", 511, "Partition upper bound for all files")});
  Json r508 = Json::object();
  r508["type"] = "record";
  r508["name"] = "r508";
  r508["fields"] = std::move(summary_fields);
  Json partitions = Json::object();
  partitions["type"] = "array";
  partitions["items"] = std::move(r508);
  partitions["element-id"] = 508;

  Json fields = Json::array();
  fields.push_back(AvroField("manifest_path", "string", 500, "Location URI with FS scheme"));
  fields.push_back(AvroField("manifest_length", "long", 501, "Total file size in bytes"));
  fields.push_back(AvroField("partition_spec_id", "int", 502, "Spec ID used to write"));
  fields.push_back(AvroField("content", "int", 517, "Contents of the manifest: 0=data, 1=deletes"));
  fields.push_back(
      AvroField("sequence_number", "long", 515, "Sequence number when the manifest was added"));
  fields.push_back(
      AvroField("min_sequence_number", "long", 516, "Lowest sequence number in the manifest"));
  fields.push_back(
      AvroField("added_snapshot_id", "long", 503, "Snapshot ID that added the manifest"));
  fields.push_back(AvroField("added_files_count", "int", 504, "Added entry count"));
  fields.push_back(AvroField("existing_files_count", "int", 505, "Existing entry count"));
  fields.push_back(AvroField("deleted_files_count", "int", 506, "Deleted entry count"));
  fields.push_back(AvroField("added_rows_count", "long", 512, "Added rows count"));
  fields.push_back(AvroField("existing_rows_count", "long", 513, "Existing rows count"));
  fields.push_back(AvroField("deleted_rows_count", "long", 514, "Deleted rows count"));
  fields.push_back(
      OptionalField("partitions", std::move(partitions), 507, "Summary for each partition"));
  fields.push_back(OptionalField("key_metadata", "bytes", 519, "Encryption key metadata blob"));
  if (format_version >= 3) {
    fields.push_back(OptionalField("first_row_id", "long", 520,
                                   "Starting row ID to assign to new rows in ADDED data files"));
  }
  Json root = Json::object();
  root["type"] = "record";
  root["name"] = "manifest_file";
  root["fields"] = std::move(fields);
  return root;
}

Result<std::unique_ptr<avro::ContainerWriter>> MakeWriter(const Json& schema_json,
                                                          avro::Metadata metadata, bool compress) {
  auto schema = avro::Schema::Parse(schema_json.dump());
  if (!schema.ok()) {
    return Status::Internal("manifest schema: " + schema.status().message());
  }
  avro::WriterOptions options;
  options.codec = compress ? avro::Codec::kDeflate : avro::Codec::kNull;
  return avro::ContainerWriter::Make(std::make_shared<const avro::Schema>(std::move(*schema)),
                                     std::move(metadata), options);
}

Status CheckKind(const avro::Datum& d, std::initializer_list<avro::Type> kinds,
                 std::string_view what) {
  for (avro::Type k : kinds) {
    if (d.type() == k) return Status::OK();
  }
  return Status::CorruptData(std::string(what) + " has Avro type " +
                             std::string(avro::TypeName(d.type())));
}

Result<std::int64_t> ReqLong(const FieldIndex& idx, const avro::Datum& rec, std::int32_t id,
                             std::string_view name) {
  GEOLAKE_ASSIGN_OR_RETURN(const avro::Datum* d, idx.Req(rec, id, name));
  GEOLAKE_RETURN_NOT_OK(CheckKind(*d, {avro::Type::kInt, avro::Type::kLong}, name));
  return d->int64();
}

Result<std::optional<std::int64_t>> OptLongField(const FieldIndex& idx, const avro::Datum& rec,
                                                 std::int32_t id, std::string_view name) {
  const avro::Datum* d = idx.Opt(rec, id);
  if (d == nullptr) return std::optional<std::int64_t>();
  GEOLAKE_RETURN_NOT_OK(CheckKind(*d, {avro::Type::kInt, avro::Type::kLong}, name));
  return std::optional<std::int64_t>(d->int64());
}

Result<std::string> ReqString(const FieldIndex& idx, const avro::Datum& rec, std::int32_t id,
                              std::string_view name) {
  GEOLAKE_ASSIGN_OR_RETURN(const avro::Datum* d, idx.Req(rec, id, name));
  GEOLAKE_RETURN_NOT_OK(CheckKind(*d, {avro::Type::kString, avro::Type::kBytes}, name));
  return d->bytes();
}

Result<std::optional<std::string>> OptBytesField(const FieldIndex& idx, const avro::Datum& rec,
                                                 std::int32_t id, std::string_view name) {
  const avro::Datum* d = idx.Opt(rec, id);
  if (d == nullptr) return std::optional<std::string>();
  if (!IsBytesLike(*d)) {
    return Status::CorruptData(std::string(name) + " has Avro type " +
                               std::string(avro::TypeName(d->type())));
  }
  return std::optional<std::string>(d->bytes());
}

}  // namespace geolake::table::internal
