// Writing a manifest: entries of one partition spec as an Avro container file, with the data
// file metrics Java writes and the manifest-list entry that describes the result.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "geolake/table/manifest.h"
#include "geolake/table/manifest_internal.h"

namespace geolake::table {
namespace {

using internal::DecimalBytes;
using internal::Json;
using internal::MakeWriter;
using internal::ManifestEntrySchema;
using internal::OptBytes;
using internal::OptInt;
using internal::OptLong;

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
  return VisitValueAlternative(
      type.id(), [&]<typename T>(std::type_identity<T>) -> Result<avro::Datum> {
        if constexpr (std::is_same_v<T, bool>) {
          return avro::Datum::Boolean(std::get<bool>(value));
        } else if constexpr (std::is_same_v<T, std::int32_t>) {
          return avro::Datum::Int(std::get<std::int32_t>(value));
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return avro::Datum::Long(std::get<std::int64_t>(value));
        } else if constexpr (std::is_same_v<T, float>) {
          return avro::Datum::Float(std::get<float>(value));
        } else if constexpr (std::is_same_v<T, double>) {
          return avro::Datum::Double(std::get<double>(value));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return avro::Datum::String(std::get<std::string>(value));
        } else if constexpr (std::is_same_v<T, Bytes>) {
          // binary is Avro bytes, fixed[L] Avro fixed (Iceberg spec, Avro type mapping).
          const Bytes& b = std::get<Bytes>(value);
          std::string raw(b.begin(), b.end());
          return type.id() == TypeId::kFixed ? avro::Datum::Fixed(std::move(raw))
                                             : avro::Datum::Bytes(std::move(raw));
        } else if constexpr (std::is_same_v<T, UuidValue>) {
          const auto& b = std::get<UuidValue>(value).bytes;
          return avro::Datum::Fixed(std::string(b.begin(), b.end()));
        } else if constexpr (std::is_same_v<T, DecimalValue>) {
          return avro::Datum::Fixed(BigEndianFixed(std::get<DecimalValue>(value).unscaled,
                                                   DecimalBytes(type.precision())));
        } else {
          return Status::InvalidArgument("type " + type.ToString() +
                                         " cannot be a partition value");
        }
      });
}

}  // namespace

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

}  // namespace geolake::table
