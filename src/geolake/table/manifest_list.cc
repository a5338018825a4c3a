// The manifest list: one Avro record per manifest of a snapshot (path, length, spec, content,
// sequence numbers, file and row counts, partition summaries).
#include <vector>

#include "geolake/table/manifest.h"
#include "geolake/table/manifest_internal.h"

namespace geolake::table {

using internal::CheckKind;
using internal::FieldIndex;
using internal::MakeWriter;
using internal::ManifestListSchema;
using internal::OptBytes;
using internal::OptBytesField;
using internal::OptLong;
using internal::OptLongField;
using internal::ReqLong;
using internal::ReqString;

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

}  // namespace geolake::table
