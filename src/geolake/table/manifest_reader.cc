// Reading a manifest: an Avro container file of entries, tolerant of what other writers emit
// (format versions 1-3, int or long counts, optional metrics), checked against its list entry.
#include <charconv>
#include <map>
#include <vector>

#include "geolake/table/manifest.h"
#include "geolake/table/manifest_internal.h"

namespace geolake::table {
namespace {

using internal::CheckKind;
using internal::FieldIndex;
using internal::OptBytesField;
using internal::OptLongField;
using internal::ReqLong;
using internal::ReqString;

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

}  // namespace

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

Result<std::vector<ManifestEntry>> ReadManifest(const io::FileIO& io, const ManifestFile& entry) {
  GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, io.ReadAll(entry.manifest_path));
  return DecodeManifest(std::move(bytes), &entry)
      .WithContext("manifest '" + entry.manifest_path + "'");
}

}  // namespace geolake::table
