#include "geolake/table/manifest.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "geolake/formats/avro/container.h"
#include "geolake/table/json_internal.h"

namespace geolake::table {

namespace {

using internal::Json;

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

// Bytes needed for a decimal of `precision` digits as two's complement.
int DecimalBytes(int precision) {
  for (int n = 1; n < 17; ++n) {
    if (std::ldexp(1.0, 8 * n - 1) > std::pow(10.0, precision)) return n;
  }
  return 16;
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

// ---- Values <-> Datums ----------------------------------------------------------------------

avro::Datum OptLong(const std::optional<std::int64_t>& v) {
  return v ? avro::Datum::Long(*v) : avro::Datum::Null();
}
avro::Datum OptInt(const std::optional<std::int32_t>& v) {
  return v ? avro::Datum::Int(*v) : avro::Datum::Null();
}
avro::Datum OptBytes(const std::optional<std::string>& v) {
  return v ? avro::Datum::Bytes(*v) : avro::Datum::Null();
}

template <typename V, typename MakeValue>
avro::Datum MetricMap(const std::map<std::int32_t, V>& m, MakeValue make_value) {
  if (m.empty()) return avro::Datum::Null();
  std::vector<avro::Datum> items;
  items.reserve(m.size());
  for (const auto& [k, v] : m) {
    items.push_back(avro::Datum::Record({avro::Datum::Int(k), make_value(v)}));
  }
  return avro::Datum::Array(std::move(items));
}

std::string BigEndianFixed(Int128 v, int size) {
  std::string out(static_cast<std::size_t>(size), '\0');
  for (int i = 0; i < size; ++i) {
    out[static_cast<std::size_t>(size - 1 - i)] =
        static_cast<char>(static_cast<std::uint8_t>(v >> (8 * std::min(i, 15))));
  }
  return out;
}

Result<avro::Datum> PartitionDatum(const Type& type, const Value& value) {
  if (IsNull(value)) return avro::Datum::Null();
  GEOLAKE_RETURN_NOT_OK(CheckValueType(type, value));
  switch (type.id()) {
    case TypeId::kBoolean:
      return avro::Datum::Boolean(std::get<bool>(value));
    case TypeId::kInt:
    case TypeId::kDate:
      return avro::Datum::Int(std::get<std::int32_t>(value));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return avro::Datum::Long(std::get<std::int64_t>(value));
    case TypeId::kFloat:
      return avro::Datum::Float(std::get<float>(value));
    case TypeId::kDouble:
      return avro::Datum::Double(std::get<double>(value));
    case TypeId::kString:
      return avro::Datum::String(std::get<std::string>(value));
    case TypeId::kBinary: {
      const Bytes& b = std::get<Bytes>(value);
      return avro::Datum::Bytes(std::string(b.begin(), b.end()));
    }
    case TypeId::kFixed: {
      const Bytes& b = std::get<Bytes>(value);
      return avro::Datum::Fixed(std::string(b.begin(), b.end()));
    }
    case TypeId::kUuid: {
      const auto& b = std::get<UuidValue>(value).bytes;
      return avro::Datum::Fixed(std::string(b.begin(), b.end()));
    }
    case TypeId::kDecimal:
      return avro::Datum::Fixed(
          BigEndianFixed(std::get<DecimalValue>(value).unscaled, DecimalBytes(type.precision())));
    default:
      return Status::InvalidArgument("type " + type.ToString() + " cannot be a partition value");
  }
}

Int128 SignExtendBigEndian(std::string_view bytes) {
  if (bytes.empty()) return 0;
  Int128 v = static_cast<std::int8_t>(bytes[0]);
  for (std::size_t i = 1; i < bytes.size(); ++i) {
    v = static_cast<Int128>(static_cast<unsigned __int128>(v) << 8) |  // NOLINT
        static_cast<std::uint8_t>(bytes[i]);
  }
  return v;
}

// A partition value from its Avro encoding; the Avro type (and logical type) decides.
Result<Value> PartitionValue(const avro::Node& field_type, const avro::Datum& d) {
  if (d.is_null()) return Value();
  const avro::Node* node = &field_type;
  if (node->type == avro::Type::kUnion) {
    const avro::Node* branch = node->NonNullBranch();
    if (branch == nullptr) return Status::CorruptData("partition field: unsupported union");
    node = branch;
  }
  const std::string logical = node->logical_type();
  switch (d.type()) {
    case avro::Type::kBoolean:
      return Value(d.boolean());
    case avro::Type::kInt:
      return Value(d.int32());
    case avro::Type::kLong:
      return Value(d.int64());
    case avro::Type::kFloat:
      return Value(d.float32());
    case avro::Type::kDouble:
      return Value(d.float64());
    case avro::Type::kString:
      return Value(std::string(d.string()));
    case avro::Type::kBytes:
    case avro::Type::kFixed: {
      const std::string& b = d.bytes();
      if (logical == "decimal") return Value(DecimalValue{SignExtendBigEndian(b)});
      if (logical == "uuid" && b.size() == 16) {
        UuidValue u;
        std::copy(b.begin(), b.end(), u.bytes.begin());
        return Value(u);
      }
      return Value(Bytes(b.begin(), b.end()));
    }
    default:
      return Status::CorruptData("partition field: unsupported Avro type " +
                                 std::string(avro::TypeName(d.type())));
  }
}

// ---- Reading helpers --------------------------------------------------------------------------

// Field access by Iceberg field id, resolved once per file.
class FieldIndex {
 public:
  FieldIndex(const avro::Node& record, std::string what)
      : record_(record), what_(std::move(what)) {}

  // The datum of field `id`, or nullptr when the file has no such field or it is null.
  const avro::Datum* Opt(const avro::Datum& rec, std::int32_t id) const {
    if (rec.type() != avro::Type::kRecord) return nullptr;
    auto idx = record_.FieldIndexById(id);
    if (!idx || *idx >= rec.fields().size()) return nullptr;
    const avro::Datum& d = rec.fields()[*idx];
    return d.is_null() ? nullptr : &d;
  }
  Result<const avro::Datum*> Req(const avro::Datum& rec, std::int32_t id,
                                 std::string_view name) const {
    const avro::Datum* d = Opt(rec, id);
    if (d == nullptr) {
      return Status::CorruptData(what_ + ": missing required field '" + std::string(name) +
                                 "' (id " + std::to_string(id) + ")");
    }
    return d;
  }
  const avro::Node* FieldType(std::int32_t id) const {
    auto idx = record_.FieldIndexById(id);
    return idx ? record_.fields[*idx].type : nullptr;
  }

 private:
  const avro::Node& record_;
  std::string what_;
};

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

template <typename V, typename Convert>
Status ReadMetricMap(const FieldIndex& idx, const avro::Datum& rec, std::int32_t id,
                     std::string_view name, std::map<std::int32_t, V>* out, Convert convert) {
  const avro::Datum* d = idx.Opt(rec, id);
  if (d == nullptr) return Status::OK();
  if (d->type() == avro::Type::kArray) {  // Iceberg's int-keyed map: array of {key, value}
    for (const auto& item : d->items()) {
      if (item.type() != avro::Type::kRecord || item.fields().size() < 2) {  // k, v
        return Status::CorruptData(std::string(name) + ": malformed map entry");
      }
      const avro::Datum& k = item.fields()[0];
      if (k.type() != avro::Type::kInt)
        return Status::CorruptData(std::string(name) + ": key not int");
      GEOLAKE_ASSIGN_OR_RETURN(V v, convert(item.fields()[1]));
      (*out)[k.int32()] = std::move(v);
    }
    return Status::OK();
  }
  return Status::CorruptData(std::string(name) + " has Avro type " +
                             std::string(avro::TypeName(d->type())));
}

bool IsBytesLike(const avro::Datum& d) {
  return d.type() == avro::Type::kBytes || d.type() == avro::Type::kFixed ||
         d.type() == avro::Type::kString;
}

// An optional bytes field; a value of another Avro type is kCorruptData.
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

// An optional array of ints or longs.
template <typename T>
Status ReadIntArray(const FieldIndex& idx, const avro::Datum& rec, std::int32_t id,
                    std::string_view name, std::vector<T>* out) {
  const avro::Datum* d = idx.Opt(rec, id);
  if (d == nullptr) return Status::OK();
  GEOLAKE_RETURN_NOT_OK(CheckKind(*d, {avro::Type::kArray}, name));
  for (const auto& item : d->items()) {
    GEOLAKE_RETURN_NOT_OK(CheckKind(item, {avro::Type::kInt, avro::Type::kLong}, name));
    out->push_back(static_cast<T>(item.int64()));
  }
  return Status::OK();
}

Result<std::int64_t> AsLong(const avro::Datum& d) {
  if (d.type() != avro::Type::kLong && d.type() != avro::Type::kInt) {
    return Status::CorruptData("metric value is not a long");
  }
  return d.int64();
}

Result<std::string> AsBytes(const avro::Datum& d) {
  if (d.type() != avro::Type::kBytes && d.type() != avro::Type::kFixed) {
    return Status::CorruptData("bound value is not bytes");
  }
  return d.bytes();
}

int ParseIntOr(std::optional<std::string_view> s, int fallback) {
  if (!s) return fallback;
  int v = 0;
  auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  return (ec == std::errc() && ptr == s->data() + s->size()) ? v : fallback;
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

}  // namespace

// ---- Manifest ---------------------------------------------------------------------------------

Result<EncodedManifest> EncodeManifest(const ManifestWriteOptions& options,
                                       const std::vector<ManifestEntry>& entries,
                                       std::string manifest_path) {
  if (options.schema == nullptr || options.spec == nullptr) {
    return Status::InvalidArgument("manifest: schema and partition spec are required");
  }
  if (options.format_version < 2 || options.format_version > 3) {
    return Status::NotImplemented("manifest: cannot write format-version " +
                                  std::to_string(options.format_version));
  }
  GEOLAKE_ASSIGN_OR_RETURN(TypePtr partition_type, options.spec->PartitionType(*options.schema));
  GEOLAKE_ASSIGN_OR_RETURN(Json schema_json,
                           ManifestEntrySchema(options.format_version, *partition_type));
  avro::Metadata metadata = {
      {"schema", internal::SchemaToJson(*options.schema).dump()},
      {"schema-id", std::to_string(options.schema->schema_id())},
      {"partition-spec", internal::PartitionFieldsToJson(*options.spec).dump()},
      {"partition-spec-id", std::to_string(options.spec->spec_id())},
      {"format-version", std::to_string(options.format_version)},
      {"content", options.content == ManifestContent::kData ? "data" : "deletes"},
  };
  GEOLAKE_ASSIGN_OR_RETURN(auto writer,
                           MakeWriter(schema_json, std::move(metadata), options.compress));

  ManifestFile entry;
  entry.manifest_path = std::move(manifest_path);
  entry.partition_spec_id = options.spec->spec_id();
  entry.content = options.content;
  entry.added_snapshot_id = options.snapshot_id;
  std::optional<std::int64_t> min_seq;

  const auto& pfields = partition_type->fields();
  struct Summary {
    bool contains_null = false;
    bool contains_nan = false;
    Value lower, upper;
  };
  std::vector<Summary> summaries(pfields.size());

  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ManifestEntry& e = entries[i];
    const DataFile& f = e.data_file;
    const std::string what = "manifest entry " + std::to_string(i) + " ('" + f.file_path + "')";
    const bool is_delete = f.content != DataFileContent::kData;
    if (is_delete != (options.content == ManifestContent::kDeletes)) {
      return Status::InvalidArgument(what + ": file content does not match the manifest content");
    }
    if (f.partition.size() != pfields.size()) {
      return Status::InvalidArgument(what + ": " + std::to_string(f.partition.size()) +
                                     " partition values for a spec of " +
                                     std::to_string(pfields.size()) + " fields");
    }
    std::vector<avro::Datum> partition;
    for (std::size_t p = 0; p < pfields.size(); ++p) {
      const Type& ptype = *pfields[p].type;
      const Value& v = f.partition[p];
      auto datum = PartitionDatum(ptype, v);
      if (!datum.ok()) {
        return std::move(datum).status().WithContext(what + " partition '" + pfields[p].name + "'");
      }
      partition.push_back(std::move(*datum));
      Summary& s = summaries[p];
      if (IsNull(v)) {
        s.contains_null = true;
        continue;
      }
      const bool nan = (std::holds_alternative<double>(v) && std::isnan(std::get<double>(v))) ||
                       (std::holds_alternative<float>(v) && std::isnan(std::get<float>(v)));
      if (nan) {
        s.contains_nan = true;
        continue;
      }
      auto less = CompareValues(ptype, v, s.lower);
      if (IsNull(s.lower) || (less.ok() && *less < 0)) s.lower = v;
      auto more = CompareValues(ptype, v, s.upper);
      if (IsNull(s.upper) || (more.ok() && *more > 0)) s.upper = v;
    }
    if (e.status != ManifestEntryStatus::kAdded &&
        (!e.sequence_number || !e.file_sequence_number || !e.snapshot_id)) {
      // Only ADDED entries may inherit; others must carry their numbers (spec §Manifests).
      return Status::InvalidArgument(what +
                                     ": EXISTING/DELETED entries need explicit snapshot "
                                     "id and sequence numbers");
    }
    if (e.sequence_number)
      min_seq = std::min(min_seq.value_or(*e.sequence_number), *e.sequence_number);

    std::vector<avro::Datum> df;
    df.push_back(avro::Datum::Int(static_cast<std::int32_t>(f.content)));
    df.push_back(avro::Datum::String(f.file_path));
    df.push_back(avro::Datum::String(f.file_format));
    df.push_back(avro::Datum::Record(std::move(partition)));
    df.push_back(avro::Datum::Long(f.record_count));
    df.push_back(avro::Datum::Long(f.file_size_in_bytes));
    auto long_value = [](std::int64_t v) { return avro::Datum::Long(v); };
    auto bytes_value = [](const std::string& v) { return avro::Datum::Bytes(v); };
    df.push_back(MetricMap(f.column_sizes, long_value));
    df.push_back(MetricMap(f.value_counts, long_value));
    df.push_back(MetricMap(f.null_value_counts, long_value));
    df.push_back(MetricMap(f.nan_value_counts, long_value));
    df.push_back(MetricMap(f.lower_bounds, bytes_value));
    df.push_back(MetricMap(f.upper_bounds, bytes_value));
    df.push_back(OptBytes(f.key_metadata));
    if (f.split_offsets.empty()) {
      df.push_back(avro::Datum::Null());
    } else {
      std::vector<avro::Datum> items;
      for (std::int64_t o : f.split_offsets) items.push_back(avro::Datum::Long(o));
      df.push_back(avro::Datum::Array(std::move(items)));
    }
    if (f.equality_ids.empty()) {
      df.push_back(avro::Datum::Null());
    } else {
      std::vector<avro::Datum> items;
      for (std::int32_t id : f.equality_ids) items.push_back(avro::Datum::Int(id));
      df.push_back(avro::Datum::Array(std::move(items)));
    }
    df.push_back(OptInt(f.sort_order_id));
    if (options.format_version >= 3) df.push_back(OptLong(f.first_row_id));
    df.push_back(f.referenced_data_file ? avro::Datum::String(*f.referenced_data_file)
                                        : avro::Datum::Null());
    if (options.format_version >= 3) {
      df.push_back(OptLong(f.content_offset));
      df.push_back(OptLong(f.content_size_in_bytes));
    }
    std::vector<avro::Datum> record;
    record.push_back(avro::Datum::Int(static_cast<std::int32_t>(e.status)));
    record.push_back(OptLong(e.snapshot_id));
    record.push_back(OptLong(e.sequence_number));
    record.push_back(OptLong(e.file_sequence_number));
    record.push_back(avro::Datum::Record(std::move(df)));
    GEOLAKE_RETURN_NOT_OK_CTX(writer->Append(avro::Datum::Record(std::move(record))), what);

    switch (e.status) {
      case ManifestEntryStatus::kAdded:
        ++entry.added_files_count;
        entry.added_rows_count += f.record_count;
        break;
      case ManifestEntryStatus::kExisting:
        ++entry.existing_files_count;
        entry.existing_rows_count += f.record_count;
        break;
      case ManifestEntryStatus::kDeleted:
        ++entry.deleted_files_count;
        entry.deleted_rows_count += f.record_count;
        break;
    }
  }
  for (std::size_t p = 0; p < pfields.size(); ++p) {
    const Summary& s = summaries[p];
    FieldSummary fs;
    fs.contains_null = s.contains_null;
    fs.contains_nan = s.contains_nan;
    if (!IsNull(s.lower)) {
      GEOLAKE_ASSIGN_OR_RETURN(fs.lower_bound, SerializeValue(*pfields[p].type, s.lower));
      GEOLAKE_ASSIGN_OR_RETURN(fs.upper_bound, SerializeValue(*pfields[p].type, s.upper));
    }
    entry.partitions.push_back(std::move(fs));
  }
  if (options.sequence_number) {
    entry.sequence_number = *options.sequence_number;
    entry.min_sequence_number =
        std::min(min_seq.value_or(entry.sequence_number), entry.sequence_number);
  } else {
    entry.min_sequence_number = min_seq.value_or(0);
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, writer->Finish());
  entry.manifest_length = static_cast<std::int64_t>(bytes.size());
  return EncodedManifest{std::move(bytes), std::move(entry)};
}

Result<std::vector<ManifestEntry>> DecodeManifest(std::string bytes, const ManifestFile* list_entry,
                                                  ManifestHeader* header_out) {
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, avro::ContainerReader::Open(std::move(bytes)));
  ManifestHeader header;
  header.format_version = ParseIntOr(reader->GetMetadata("format-version"), 1);
  if (auto id = reader->GetMetadata("partition-spec-id")) {
    header.partition_spec_id = ParseIntOr(id, 0);
  }
  if (auto content = reader->GetMetadata("content"); content && *content == "deletes") {
    header.content = ManifestContent::kDeletes;
  }
  if (auto s = reader->GetMetadata("schema")) header.schema_json = std::string(*s);
  if (auto s = reader->GetMetadata("partition-spec")) header.partition_spec_json = std::string(*s);

  const avro::Node& root = reader->schema()->root();
  if (root.type != avro::Type::kRecord)
    return Status::CorruptData("manifest: root is not a record");
  FieldIndex entry_idx(root, "manifest entry");
  const avro::Node* df_node = entry_idx.FieldType(2);
  if (df_node == nullptr || df_node->type != avro::Type::kRecord) {
    return Status::CorruptData("manifest entry: missing required field 'data_file' (id 2)");
  }
  FieldIndex file_idx(*df_node, "data_file");
  const avro::Node* partition_node = file_idx.FieldType(102);
  if (partition_node == nullptr || partition_node->type != avro::Type::kRecord) {
    return Status::CorruptData("data_file: missing required field 'partition' (id 102)");
  }
  // Partition values are returned in spec order; map each spec field to its Avro position.
  std::vector<std::size_t> partition_positions;
  bool spec_order = false;
  if (!header.partition_spec_json.empty()) {
    auto parsed = internal::ParseJson(header.partition_spec_json, "manifest 'partition-spec'");
    if (parsed.ok()) {
      auto fields = internal::PartitionFieldsFromJson(*parsed);
      if (fields.ok()) {
        spec_order = true;
        for (const auto& pf : *fields) {
          auto pos = partition_node->FieldIndexById(pf.field_id);
          if (!pos) {
            spec_order = false;
            break;
          }
          partition_positions.push_back(*pos);
        }
      }
    }
  }
  if (!spec_order) {
    partition_positions.clear();
    for (std::size_t i = 0; i < partition_node->fields.size(); ++i)
      partition_positions.push_back(i);
  }

  std::vector<ManifestEntry> out;
  avro::Datum rec;
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(bool more, reader->Next(&rec));
    if (!more) break;
    ManifestEntry e;
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t status, ReqLong(entry_idx, rec, 0, "status"));
    if (status < 0 || status > 2) {
      return Status::CorruptData("manifest entry: invalid status " + std::to_string(status));
    }
    e.status = static_cast<ManifestEntryStatus>(status);
    GEOLAKE_ASSIGN_OR_RETURN(e.snapshot_id, OptLongField(entry_idx, rec, 1, "snapshot_id"));
    GEOLAKE_ASSIGN_OR_RETURN(e.sequence_number, OptLongField(entry_idx, rec, 3, "sequence_number"));
    GEOLAKE_ASSIGN_OR_RETURN(e.file_sequence_number,
                             OptLongField(entry_idx, rec, 4, "file_sequence_number"));
    GEOLAKE_ASSIGN_OR_RETURN(const avro::Datum* dfd, entry_idx.Req(rec, 2, "data_file"));
    GEOLAKE_RETURN_NOT_OK(CheckKind(*dfd, {avro::Type::kRecord}, "data_file"));
    DataFile& f = e.data_file;
    GEOLAKE_ASSIGN_OR_RETURN(auto content, OptLongField(file_idx, *dfd, 134, "content"));
    if (content.value_or(0) < 0 || content.value_or(0) > 2) {
      return Status::CorruptData("data_file: invalid content " + std::to_string(*content));
    }
    f.content = static_cast<DataFileContent>(content.value_or(0));
    GEOLAKE_ASSIGN_OR_RETURN(f.file_path, ReqString(file_idx, *dfd, 100, "file_path"));
    GEOLAKE_ASSIGN_OR_RETURN(f.file_format, ReqString(file_idx, *dfd, 101, "file_format"));
    GEOLAKE_ASSIGN_OR_RETURN(const avro::Datum* pd, file_idx.Req(*dfd, 102, "partition"));
    GEOLAKE_RETURN_NOT_OK(CheckKind(*pd, {avro::Type::kRecord}, "partition"));
    for (std::size_t pos : partition_positions) {
      if (pos >= pd->fields().size()) return Status::CorruptData("partition: too few fields");
      auto value = PartitionValue(*partition_node->fields[pos].type, pd->fields()[pos]);
      if (!value.ok()) return std::move(value).status().WithContext(f.file_path);
      f.partition.push_back(std::move(*value));
    }
    GEOLAKE_ASSIGN_OR_RETURN(f.record_count, ReqLong(file_idx, *dfd, 103, "record_count"));
    GEOLAKE_ASSIGN_OR_RETURN(f.file_size_in_bytes,
                             ReqLong(file_idx, *dfd, 104, "file_size_in_bytes"));
    GEOLAKE_RETURN_NOT_OK(
        ReadMetricMap(file_idx, *dfd, 108, "column_sizes", &f.column_sizes, AsLong));
    GEOLAKE_RETURN_NOT_OK(
        ReadMetricMap(file_idx, *dfd, 109, "value_counts", &f.value_counts, AsLong));
    GEOLAKE_RETURN_NOT_OK(
        ReadMetricMap(file_idx, *dfd, 110, "null_value_counts", &f.null_value_counts, AsLong));
    GEOLAKE_RETURN_NOT_OK(
        ReadMetricMap(file_idx, *dfd, 137, "nan_value_counts", &f.nan_value_counts, AsLong));
    GEOLAKE_RETURN_NOT_OK(
        ReadMetricMap(file_idx, *dfd, 125, "lower_bounds", &f.lower_bounds, AsBytes));
    GEOLAKE_RETURN_NOT_OK(
        ReadMetricMap(file_idx, *dfd, 128, "upper_bounds", &f.upper_bounds, AsBytes));
    GEOLAKE_ASSIGN_OR_RETURN(f.key_metadata, OptBytesField(file_idx, *dfd, 131, "key_metadata"));
    GEOLAKE_RETURN_NOT_OK(ReadIntArray(file_idx, *dfd, 132, "split_offsets", &f.split_offsets));
    GEOLAKE_RETURN_NOT_OK(ReadIntArray(file_idx, *dfd, 135, "equality_ids", &f.equality_ids));
    if (const avro::Datum* d = file_idx.Opt(*dfd, 140); d && d->type() == avro::Type::kInt) {
      f.sort_order_id = d->int32();
    }
    GEOLAKE_ASSIGN_OR_RETURN(f.first_row_id, OptLongField(file_idx, *dfd, 142, "first_row_id"));
    if (const avro::Datum* d = file_idx.Opt(*dfd, 143); d && d->type() == avro::Type::kString) {
      f.referenced_data_file = std::string(d->string());
    }
    GEOLAKE_ASSIGN_OR_RETURN(f.content_offset, OptLongField(file_idx, *dfd, 144, "content_offset"));
    GEOLAKE_ASSIGN_OR_RETURN(f.content_size_in_bytes,
                             OptLongField(file_idx, *dfd, 145, "content_size_in_bytes"));

    // Inheritance (spec "Sequence Number Inheritance"): v1 manifests have no sequence numbers.
    if (header.format_version == 1) {
      e.sequence_number = 0;
      e.file_sequence_number = 0;
    }
    if (list_entry != nullptr) {
      if (!e.snapshot_id) e.snapshot_id = list_entry->added_snapshot_id;
      if (e.status == ManifestEntryStatus::kAdded) {
        if (!e.sequence_number) e.sequence_number = list_entry->sequence_number;
        if (!e.file_sequence_number) e.file_sequence_number = list_entry->sequence_number;
      }
    }
    out.push_back(std::move(e));
  }
  // v3 row lineage: ADDED data files without first_row_id take the manifest's first_row_id
  // plus the rows of the preceding such files.
  if (list_entry != nullptr && list_entry->first_row_id) {
    std::int64_t next = *list_entry->first_row_id;
    for (auto& e : out) {
      if (e.data_file.content != DataFileContent::kData || e.data_file.first_row_id) continue;
      e.data_file.first_row_id = next;
      next += e.data_file.record_count;
    }
  }
  if (header_out != nullptr) *header_out = std::move(header);
  return out;
}

// ---- Manifest list ----------------------------------------------------------------------------

Result<std::string> EncodeManifestList(int format_version, std::int64_t snapshot_id,
                                       std::optional<std::int64_t> parent_snapshot_id,
                                       std::int64_t sequence_number,
                                       std::optional<std::int64_t> first_row_id,
                                       const std::vector<ManifestFile>& manifests, bool compress) {
  if (format_version < 2 || format_version > 3) {
    return Status::NotImplemented("manifest list: cannot write format-version " +
                                  std::to_string(format_version));
  }
  avro::Metadata metadata = {
      {"snapshot-id", std::to_string(snapshot_id)},
      {"parent-snapshot-id", parent_snapshot_id ? std::to_string(*parent_snapshot_id) : "null"},
      {"sequence-number", std::to_string(sequence_number)},
  };
  if (format_version >= 3) {
    metadata.emplace_back("first-row-id", first_row_id ? std::to_string(*first_row_id) : "null");
  }
  metadata.emplace_back("format-version", std::to_string(format_version));
  GEOLAKE_ASSIGN_OR_RETURN(
      auto writer, MakeWriter(ManifestListSchema(format_version), std::move(metadata), compress));
  for (const ManifestFile& m : manifests) {
    std::vector<avro::Datum> partitions;
    for (const FieldSummary& s : m.partitions) {
      partitions.push_back(avro::Datum::Record(
          {avro::Datum::Boolean(s.contains_null),
           s.contains_nan ? avro::Datum::Boolean(*s.contains_nan) : avro::Datum::Null(),
           OptBytes(s.lower_bound), OptBytes(s.upper_bound)}));
    }
    std::vector<avro::Datum> rec = {
        avro::Datum::String(m.manifest_path),
        avro::Datum::Long(m.manifest_length),
        avro::Datum::Int(m.partition_spec_id),
        avro::Datum::Int(static_cast<std::int32_t>(m.content)),
        avro::Datum::Long(m.sequence_number),
        avro::Datum::Long(m.min_sequence_number),
        avro::Datum::Long(m.added_snapshot_id),
        avro::Datum::Int(m.added_files_count),
        avro::Datum::Int(m.existing_files_count),
        avro::Datum::Int(m.deleted_files_count),
        avro::Datum::Long(m.added_rows_count),
        avro::Datum::Long(m.existing_rows_count),
        avro::Datum::Long(m.deleted_rows_count),
        avro::Datum::Array(std::move(partitions)),
        OptBytes(m.key_metadata),
    };
    if (format_version >= 3) rec.push_back(OptLong(m.first_row_id));
    GEOLAKE_RETURN_NOT_OK_CTX(writer->Append(avro::Datum::Record(std::move(rec))),
                              "manifest list entry '" + m.manifest_path + "'");
  }
  return writer->Finish();
}

Result<std::vector<ManifestFile>> DecodeManifestList(std::string bytes) {
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, avro::ContainerReader::Open(std::move(bytes)));
  const avro::Node& root = reader->schema()->root();
  if (root.type != avro::Type::kRecord) {
    return Status::CorruptData("manifest list: root is not a record");
  }
  FieldIndex idx(root, "manifest list entry");
  const avro::Node* partitions_node = idx.FieldType(507);
  if (partitions_node != nullptr && partitions_node->type == avro::Type::kUnion) {
    partitions_node = partitions_node->NonNullBranch();
  }
  const avro::Node* summary_node =
      (partitions_node != nullptr && partitions_node->type == avro::Type::kArray)
          ? partitions_node->items
          : nullptr;

  std::vector<ManifestFile> out;
  avro::Datum rec;
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(bool more, reader->Next(&rec));
    if (!more) break;
    ManifestFile m;
    GEOLAKE_ASSIGN_OR_RETURN(m.manifest_path, ReqString(idx, rec, 500, "manifest_path"));
    GEOLAKE_ASSIGN_OR_RETURN(m.manifest_length, ReqLong(idx, rec, 501, "manifest_length"));
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t spec_id, ReqLong(idx, rec, 502, "partition_spec_id"));
    m.partition_spec_id = static_cast<std::int32_t>(spec_id);
    GEOLAKE_ASSIGN_OR_RETURN(auto content, OptLongField(idx, rec, 517, "content"));
    m.content = content.value_or(0) == 1 ? ManifestContent::kDeletes : ManifestContent::kData;
    GEOLAKE_ASSIGN_OR_RETURN(auto seq, OptLongField(idx, rec, 515, "sequence_number"));
    m.sequence_number = seq.value_or(0);
    GEOLAKE_ASSIGN_OR_RETURN(auto min_seq, OptLongField(idx, rec, 516, "min_sequence_number"));
    m.min_sequence_number = min_seq.value_or(0);
    GEOLAKE_ASSIGN_OR_RETURN(m.added_snapshot_id, ReqLong(idx, rec, 503, "added_snapshot_id"));
    GEOLAKE_ASSIGN_OR_RETURN(auto added_files, OptLongField(idx, rec, 504, "added_files_count"));
    GEOLAKE_ASSIGN_OR_RETURN(auto existing_files,
                             OptLongField(idx, rec, 505, "existing_files_count"));
    GEOLAKE_ASSIGN_OR_RETURN(auto deleted_files,
                             OptLongField(idx, rec, 506, "deleted_files_count"));
    m.added_files_count = static_cast<std::int32_t>(added_files.value_or(0));
    m.existing_files_count = static_cast<std::int32_t>(existing_files.value_or(0));
    m.deleted_files_count = static_cast<std::int32_t>(deleted_files.value_or(0));
    GEOLAKE_ASSIGN_OR_RETURN(auto added_rows, OptLongField(idx, rec, 512, "added_rows_count"));
    GEOLAKE_ASSIGN_OR_RETURN(auto existing_rows,
                             OptLongField(idx, rec, 513, "existing_rows_count"));
    GEOLAKE_ASSIGN_OR_RETURN(auto deleted_rows, OptLongField(idx, rec, 514, "deleted_rows_count"));
    m.added_rows_count = added_rows.value_or(0);
    m.existing_rows_count = existing_rows.value_or(0);
    m.deleted_rows_count = deleted_rows.value_or(0);
    if (const avro::Datum* parts = idx.Opt(rec, 507);
        parts != nullptr && parts->type() == avro::Type::kArray && summary_node != nullptr) {
      FieldIndex sidx(*summary_node, "field_summary");
      for (const auto& s : parts->items()) {
        FieldSummary fs;
        GEOLAKE_ASSIGN_OR_RETURN(const avro::Datum* cn, sidx.Req(s, 509, "contains_null"));
        GEOLAKE_RETURN_NOT_OK(CheckKind(*cn, {avro::Type::kBoolean}, "contains_null"));
        fs.contains_null = cn->boolean();
        if (const avro::Datum* d = sidx.Opt(s, 518); d && d->type() == avro::Type::kBoolean) {
          fs.contains_nan = d->boolean();
        }
        GEOLAKE_ASSIGN_OR_RETURN(fs.lower_bound, OptBytesField(sidx, s, 510, "lower_bound"));
        GEOLAKE_ASSIGN_OR_RETURN(fs.upper_bound, OptBytesField(sidx, s, 511, "upper_bound"));
        m.partitions.push_back(std::move(fs));
      }
    }
    GEOLAKE_ASSIGN_OR_RETURN(m.key_metadata, OptBytesField(idx, rec, 519, "key_metadata"));
    GEOLAKE_ASSIGN_OR_RETURN(m.first_row_id, OptLongField(idx, rec, 520, "first_row_id"));
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<ManifestFile>> ReadManifestList(const io::FileIO& io, const std::string& path) {
  GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, io.ReadAll(path));
  return DecodeManifestList(std::move(bytes)).WithContext("manifest list '" + path + "'");
}

Result<std::vector<ManifestEntry>> ReadManifest(const io::FileIO& io, const ManifestFile& entry) {
  GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, io.ReadAll(entry.manifest_path));
  return DecodeManifest(std::move(bytes), &entry)
      .WithContext("manifest '" + entry.manifest_path + "'");
}

}  // namespace geolake::table
