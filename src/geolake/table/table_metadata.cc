#include "geolake/table/table_metadata.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "geolake/table/json_internal.h"

namespace geolake::table {

using internal::Find;
using internal::GetInt32;
using internal::GetInt64;
using internal::GetOptInt32;
using internal::GetOptInt64;
using internal::GetOptString;
using internal::GetString;
using internal::Json;
using internal::Require;

namespace {

constexpr std::string_view kWhat = "table metadata";

Status Invalid(std::string message) {
  return Status::InvalidArgument("table metadata: " + std::move(message));
}

Result<std::map<std::string, std::string>> StringMap(const Json& json, std::string_view what) {
  if (!json.is_object()) return Status::CorruptData(std::string(what) + " is not an object");
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : json.items()) {
    if (v.is_string()) {
      out.emplace(k, v.get<std::string>());
    } else {
      // Tolerated: some writers put numbers or booleans here; keep their JSON text.
      out.emplace(k, v.dump());
    }
  }
  return out;
}

Result<Snapshot> SnapshotFromJson(const Json& j, int format_version) {
  Snapshot s;
  GEOLAKE_ASSIGN_OR_RETURN(s.snapshot_id, GetInt64(j, "snapshot-id", "snapshot"));
  const std::string what = "snapshot " + std::to_string(s.snapshot_id);
  GEOLAKE_ASSIGN_OR_RETURN(s.parent_snapshot_id, GetOptInt64(j, "parent-snapshot-id", what));
  if (format_version >= 2) {
    GEOLAKE_ASSIGN_OR_RETURN(s.sequence_number, GetInt64(j, "sequence-number", what));
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(auto seq, GetOptInt64(j, "sequence-number", what));
    s.sequence_number = seq.value_or(0);
  }
  GEOLAKE_ASSIGN_OR_RETURN(s.timestamp_ms, GetInt64(j, "timestamp-ms", what));
  GEOLAKE_ASSIGN_OR_RETURN(auto manifest_list, GetOptString(j, "manifest-list", what));
  if (manifest_list) {
    s.manifest_list = *manifest_list;
  } else if (const Json* manifests = Find(j, "manifests");
             manifests != nullptr && manifests->is_array() && format_version == 1) {
    for (const auto& m : *manifests) {
      if (!m.is_string()) return Status::CorruptData(what + ": 'manifests' holds a non-string");
      s.manifests.push_back(m.get<std::string>());
    }
  } else {
    return Status::CorruptData(what + ": missing required key 'manifest-list'");
  }
  if (const Json* summary = Find(j, "summary")) {
    GEOLAKE_ASSIGN_OR_RETURN(s.summary, StringMap(*summary, what + " 'summary'"));
    if (format_version >= 2 && s.summary.count("operation") == 0) {
      return Status::CorruptData(what + ": summary lacks required key 'operation'");
    }
  } else if (format_version >= 2) {
    return Status::CorruptData(what + ": missing required key 'summary'");
  }
  GEOLAKE_ASSIGN_OR_RETURN(s.schema_id, GetOptInt32(j, "schema-id", what));
  GEOLAKE_ASSIGN_OR_RETURN(s.first_row_id, GetOptInt64(j, "first-row-id", what));
  GEOLAKE_ASSIGN_OR_RETURN(s.added_rows, GetOptInt64(j, "added-rows", what));
  GEOLAKE_ASSIGN_OR_RETURN(s.key_id, GetOptString(j, "key-id", what));
  return s;
}

Json SnapshotToJson(const Snapshot& s, int format_version) {
  Json j = Json::object();
  j["sequence-number"] = s.sequence_number;
  j["snapshot-id"] = s.snapshot_id;
  if (s.parent_snapshot_id) j["parent-snapshot-id"] = *s.parent_snapshot_id;
  j["timestamp-ms"] = s.timestamp_ms;
  Json summary = Json::object();
  // "operation" first, as every other writer does; the rest in key order.
  if (auto it = s.summary.find("operation"); it != s.summary.end())
    summary["operation"] = it->second;
  for (const auto& [k, v] : s.summary) {
    if (k != "operation") summary[k] = v;
  }
  j["summary"] = std::move(summary);
  j["manifest-list"] = s.manifest_list;
  if (s.schema_id) j["schema-id"] = *s.schema_id;
  if (format_version >= 3) {
    if (s.first_row_id) j["first-row-id"] = *s.first_row_id;
    if (s.added_rows) j["added-rows"] = *s.added_rows;
    if (s.key_id) j["key-id"] = *s.key_id;
  }
  return j;
}

Result<SnapshotRef> RefFromJson(const Json& j, const std::string& name) {
  const std::string what = "ref '" + name + "'";
  SnapshotRef r;
  GEOLAKE_ASSIGN_OR_RETURN(r.snapshot_id, GetInt64(j, "snapshot-id", what));
  GEOLAKE_ASSIGN_OR_RETURN(std::string type, GetString(j, "type", what));
  if (type == "branch") {
    r.is_branch = true;
  } else if (type == "tag") {
    r.is_branch = false;
  } else {
    return Status::CorruptData(what + ": unknown type '" + type + "'");
  }
  GEOLAKE_ASSIGN_OR_RETURN(r.min_snapshots_to_keep, GetOptInt32(j, "min-snapshots-to-keep", what));
  GEOLAKE_ASSIGN_OR_RETURN(r.max_snapshot_age_ms, GetOptInt64(j, "max-snapshot-age-ms", what));
  GEOLAKE_ASSIGN_OR_RETURN(r.max_ref_age_ms, GetOptInt64(j, "max-ref-age-ms", what));
  return r;
}

Json RefToJson(const SnapshotRef& r) {
  Json j = Json::object();
  j["snapshot-id"] = r.snapshot_id;
  j["type"] = r.is_branch ? "branch" : "tag";
  if (r.min_snapshots_to_keep) j["min-snapshots-to-keep"] = *r.min_snapshots_to_keep;
  if (r.max_snapshot_age_ms) j["max-snapshot-age-ms"] = *r.max_snapshot_age_ms;
  if (r.max_ref_age_ms) j["max-ref-age-ms"] = *r.max_ref_age_ms;
  return j;
}

Result<const Json*> RequireArray(const Json& obj, std::string_view key) {
  GEOLAKE_ASSIGN_OR_RETURN(const Json* v, Require(obj, key, kWhat));
  if (!v->is_array()) {
    return Status::CorruptData("table metadata: key '" + std::string(key) + "' is not an array");
  }
  return v;
}

// An optional array key: nullptr when absent; kCorruptData when present but not an array.
Result<const Json*> OptArray(const Json& obj, std::string_view key) {
  const Json* v = Find(obj, key);
  if (v != nullptr && !v->is_array()) {
    return Status::CorruptData("table metadata: key '" + std::string(key) + "' is not an array");
  }
  return v;
}

}  // namespace

std::string Snapshot::operation() const {
  auto it = summary.find("operation");
  return it == summary.end() ? std::string() : it->second;
}

SchemaPtr TableMetadata::SchemaById(std::int32_t schema_id) const {
  for (const auto& s : schemas) {
    if (s->schema_id() == schema_id) return s;
  }
  return nullptr;
}

PartitionSpecPtr TableMetadata::SpecById(std::int32_t spec_id) const {
  for (const auto& s : partition_specs) {
    if (s->spec_id() == spec_id) return s;
  }
  return nullptr;
}

SortOrderPtr TableMetadata::SortOrderById(std::int32_t order_id) const {
  for (const auto& s : sort_orders) {
    if (s->order_id() == order_id) return s;
  }
  return nullptr;
}

const Snapshot* TableMetadata::current_snapshot() const {
  return current_snapshot_id ? SnapshotById(*current_snapshot_id) : nullptr;
}

const Snapshot* TableMetadata::SnapshotById(std::int64_t snapshot_id) const {
  for (const auto& s : snapshots) {
    if (s.snapshot_id == snapshot_id) return &s;
  }
  return nullptr;
}

std::int64_t TableMetadata::PropertyAsInt(std::string_view key, std::int64_t fallback) const {
  auto it = properties.find(std::string(key));
  if (it == properties.end()) return fallback;
  std::int64_t v = 0;
  const std::string& s = it->second;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return fallback;
  return v;
}

Status TableMetadata::Validate() const {
  if (format_version < 2 || format_version > kMaxFormatVersion) {
    return Status::NotImplemented("table metadata: cannot write format-version " +
                                  std::to_string(format_version));
  }
  if (table_uuid.empty()) return Invalid("empty table-uuid");
  if (location.empty()) return Invalid("empty location");
  const SchemaPtr schema = current_schema();
  if (schema == nullptr) {
    return Invalid("current-schema-id " + std::to_string(current_schema_id) + " names no schema");
  }
  std::set<std::int32_t> schema_ids;
  for (const auto& s : schemas) {
    if (!schema_ids.insert(s->schema_id()).second) {
      return Invalid("duplicate schema-id " + std::to_string(s->schema_id()));
    }
    if (s->HighestFieldId() > last_column_id) {
      return Invalid("last-column-id " + std::to_string(last_column_id) + " is below field id " +
                     std::to_string(s->HighestFieldId()) + " of schema " +
                     std::to_string(s->schema_id()));
    }
    GEOLAKE_RETURN_NOT_OK_CTX(s->Validate(), "table metadata");
  }
  const PartitionSpecPtr spec = default_spec();
  if (spec == nullptr) {
    return Invalid("default-spec-id " + std::to_string(default_spec_id) + " names no spec");
  }
  for (const auto& s : partition_specs) {
    if (s->LastAssignedFieldId() > last_partition_id) {
      return Invalid("last-partition-id " + std::to_string(last_partition_id) +
                     " is below a field id of spec " + std::to_string(s->spec_id()));
    }
  }
  GEOLAKE_RETURN_NOT_OK_CTX(spec->Validate(*schema), "table metadata");
  const SortOrderPtr order = default_sort_order();
  if (order == nullptr) {
    return Invalid("default-sort-order-id " + std::to_string(default_sort_order_id) +
                   " names no sort order");
  }
  GEOLAKE_RETURN_NOT_OK_CTX(order->Validate(*schema), "table metadata");
  std::set<std::int64_t> snapshot_ids;
  for (const auto& s : snapshots) {
    if (!snapshot_ids.insert(s.snapshot_id).second) {
      return Invalid("duplicate snapshot-id " + std::to_string(s.snapshot_id));
    }
    if (s.manifest_list.empty()) {
      return Invalid("snapshot " + std::to_string(s.snapshot_id) + " has no manifest-list");
    }
    if (s.operation().empty()) {
      return Invalid("snapshot " + std::to_string(s.snapshot_id) + " has no operation");
    }
    if (s.sequence_number > last_sequence_number) {
      return Invalid("snapshot " + std::to_string(s.snapshot_id) + " has sequence-number " +
                     std::to_string(s.sequence_number) + " above last-sequence-number");
    }
    if (format_version >= 3 && (!s.first_row_id || !s.added_rows)) {
      return Invalid("v3 snapshot " + std::to_string(s.snapshot_id) +
                     " lacks first-row-id or added-rows");
    }
  }
  auto main = refs.find(std::string(kMainBranch));
  if (current_snapshot_id) {
    if (snapshot_ids.count(*current_snapshot_id) == 0) {
      return Invalid("current-snapshot-id " + std::to_string(*current_snapshot_id) +
                     " names no snapshot");
    }
    if (main == refs.end() || main->second.snapshot_id != *current_snapshot_id) {
      return Invalid("current-snapshot-id differs from refs.main");
    }
  } else if (main != refs.end()) {
    return Invalid("refs.main is set but current-snapshot-id is not");
  }
  for (const auto& [name, ref] : refs) {
    if (snapshot_ids.count(ref.snapshot_id) == 0) {
      return Invalid("ref '" + name + "' names unknown snapshot " +
                     std::to_string(ref.snapshot_id));
    }
  }
  if (format_version >= 3 && !next_row_id) return Invalid("v3 table lacks next-row-id");
  return Status::OK();
}

Result<std::string> TableMetadata::ToJson() const {
  GEOLAKE_RETURN_NOT_OK(Validate());
  Json j = Json::object();
  j["format-version"] = format_version;
  j["table-uuid"] = table_uuid;
  j["location"] = location;
  j["last-sequence-number"] = last_sequence_number;
  j["last-updated-ms"] = last_updated_ms;
  j["last-column-id"] = last_column_id;
  if (format_version >= 3) j["next-row-id"] = *next_row_id;
  j["current-schema-id"] = current_schema_id;
  Json schemas_json = Json::array();
  for (const auto& s : schemas) schemas_json.push_back(internal::SchemaToJson(*s));
  j["schemas"] = std::move(schemas_json);
  j["default-spec-id"] = default_spec_id;
  Json specs_json = Json::array();
  for (const auto& s : partition_specs) specs_json.push_back(internal::PartitionSpecToJson(*s));
  j["partition-specs"] = std::move(specs_json);
  j["last-partition-id"] = last_partition_id;
  j["default-sort-order-id"] = default_sort_order_id;
  Json orders_json = Json::array();
  for (const auto& o : sort_orders) orders_json.push_back(internal::SortOrderToJson(*o));
  j["sort-orders"] = std::move(orders_json);
  Json props = Json::object();
  for (const auto& [k, v] : properties) props[k] = v;
  j["properties"] = std::move(props);
  // v1/v2 readers (Java < 1.10) expect -1 for "no snapshot"; v3 writes null.
  if (current_snapshot_id) {
    j["current-snapshot-id"] = *current_snapshot_id;
  } else if (format_version >= 3) {
    j["current-snapshot-id"] = nullptr;
  } else {
    j["current-snapshot-id"] = -1;
  }
  Json refs_json = Json::object();
  for (const auto& [name, ref] : refs) refs_json[name] = RefToJson(ref);
  j["refs"] = std::move(refs_json);
  Json snaps = Json::array();
  for (const auto& s : snapshots) snaps.push_back(SnapshotToJson(s, format_version));
  j["snapshots"] = std::move(snaps);
  auto raw_array = [](const std::string& text) {
    if (text.empty()) return Json::array();
    Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    return parsed.is_array() ? parsed : Json::array();
  };
  j["statistics"] = raw_array(statistics_json);
  j["partition-statistics"] = raw_array(partition_statistics_json);
  if (format_version >= 3 && !encryption_keys_json.empty()) {
    j["encryption-keys"] = raw_array(encryption_keys_json);
  }
  Json slog = Json::array();
  for (const auto& e : snapshot_log) {
    Json ej = Json::object();
    ej["timestamp-ms"] = e.timestamp_ms;
    ej["snapshot-id"] = e.snapshot_id;
    slog.push_back(std::move(ej));
  }
  j["snapshot-log"] = std::move(slog);
  Json mlog = Json::array();
  for (const auto& e : metadata_log) {
    Json ej = Json::object();
    ej["timestamp-ms"] = e.timestamp_ms;
    ej["metadata-file"] = e.metadata_file;
    mlog.push_back(std::move(ej));
  }
  j["metadata-log"] = std::move(mlog);
  return j.dump(2);
}

Result<TableMetadata> TableMetadata::FromJson(std::string_view text) {
  GEOLAKE_ASSIGN_OR_RETURN(Json j, internal::ParseJson(text, kWhat));
  if (!j.is_object()) return Status::CorruptData("table metadata: not a JSON object");
  TableMetadata m;
  GEOLAKE_ASSIGN_OR_RETURN(m.format_version, GetInt32(j, "format-version", kWhat));
  if (m.format_version < 1 || m.format_version > kMaxFormatVersion) {
    return Status::NotImplemented("table metadata: unsupported format-version " +
                                  std::to_string(m.format_version));
  }
  const bool v1 = m.format_version == 1;
  if (v1) {
    GEOLAKE_ASSIGN_OR_RETURN(auto uuid, GetOptString(j, "table-uuid", kWhat));
    m.table_uuid = uuid.value_or("");
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(m.table_uuid, GetString(j, "table-uuid", kWhat));
  }
  GEOLAKE_ASSIGN_OR_RETURN(m.location, GetString(j, "location", kWhat));
  if (v1) {
    GEOLAKE_ASSIGN_OR_RETURN(auto seq, GetOptInt64(j, "last-sequence-number", kWhat));
    m.last_sequence_number = seq.value_or(0);
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(m.last_sequence_number, GetInt64(j, "last-sequence-number", kWhat));
  }
  GEOLAKE_ASSIGN_OR_RETURN(m.last_updated_ms, GetInt64(j, "last-updated-ms", kWhat));
  GEOLAKE_ASSIGN_OR_RETURN(m.last_column_id, GetInt32(j, "last-column-id", kWhat));

  // Schemas: v2+ `schemas` + `current-schema-id`; v1 may have only the single `schema`.
  GEOLAKE_ASSIGN_OR_RETURN(const Json* schemas,
                           v1 ? OptArray(j, "schemas") : RequireArray(j, "schemas"));
  if (schemas != nullptr) {
    for (const auto& sj : *schemas) {
      auto schema = internal::SchemaFromJson(sj);
      if (!schema.ok()) return std::move(schema).status().WithContext(kWhat);
      m.schemas.push_back(*schema);
    }
    if (v1) {
      GEOLAKE_ASSIGN_OR_RETURN(auto id, GetOptInt32(j, "current-schema-id", kWhat));
      m.current_schema_id = id.value_or(m.schemas.empty() ? 0 : m.schemas.front()->schema_id());
    } else {
      GEOLAKE_ASSIGN_OR_RETURN(m.current_schema_id, GetInt32(j, "current-schema-id", kWhat));
    }
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(const Json* sj, Require(j, "schema", kWhat));
    auto schema = internal::SchemaFromJson(*sj);
    if (!schema.ok()) return std::move(schema).status().WithContext(kWhat);
    m.schemas.push_back(*schema);
    m.current_schema_id = (*schema)->schema_id();
  }

  // Partition specs: v1 may have only the fields-only `partition-spec`.
  GEOLAKE_ASSIGN_OR_RETURN(
      const Json* specs, v1 ? OptArray(j, "partition-specs") : RequireArray(j, "partition-specs"));
  if (specs != nullptr) {
    for (const auto& sj : *specs) {
      auto spec = internal::PartitionSpecFromJson(sj);
      if (!spec.ok()) return std::move(spec).status().WithContext(kWhat);
      m.partition_specs.push_back(*spec);
    }
    if (v1) {
      GEOLAKE_ASSIGN_OR_RETURN(auto id, GetOptInt32(j, "default-spec-id", kWhat));
      m.default_spec_id = id.value_or(0);
    } else {
      GEOLAKE_ASSIGN_OR_RETURN(m.default_spec_id, GetInt32(j, "default-spec-id", kWhat));
    }
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(const Json* fj, Require(j, "partition-spec", kWhat));
    auto fields = internal::PartitionFieldsFromJson(*fj);
    if (!fields.ok()) return std::move(fields).status().WithContext(kWhat);
    m.partition_specs.push_back(std::make_shared<const PartitionSpec>(0, std::move(*fields)));
    m.default_spec_id = 0;
  }
  {
    GEOLAKE_ASSIGN_OR_RETURN(auto last, GetOptInt32(j, "last-partition-id", kWhat));
    if (!last && !v1)
      return Status::CorruptData("table metadata: missing required key 'last-partition-id'");
    std::int32_t computed = kFirstPartitionFieldId - 1;
    for (const auto& s : m.partition_specs) computed = std::max(computed, s->LastAssignedFieldId());
    m.last_partition_id = last.value_or(computed);
  }

  if (const Json* props = Find(j, "properties")) {
    GEOLAKE_ASSIGN_OR_RETURN(m.properties, StringMap(*props, "table metadata 'properties'"));
  }

  GEOLAKE_ASSIGN_OR_RETURN(const Json* snapshots, OptArray(j, "snapshots"));
  if (snapshots != nullptr) {
    for (const auto& sj : *snapshots) {
      auto snapshot = SnapshotFromJson(sj, m.format_version);
      if (!snapshot.ok()) return std::move(snapshot).status().WithContext(kWhat);
      m.snapshots.push_back(std::move(*snapshot));
    }
  }
  // -1 (v1/v2 Java) and null (v3) both mean "no current snapshot".
  GEOLAKE_ASSIGN_OR_RETURN(auto current, GetOptInt64(j, "current-snapshot-id", kWhat));
  if (current && *current != -1) m.current_snapshot_id = current;

  GEOLAKE_ASSIGN_OR_RETURN(const Json* slog, OptArray(j, "snapshot-log"));
  if (slog != nullptr) {
    for (const auto& ej : *slog) {
      SnapshotLogEntry e;
      GEOLAKE_ASSIGN_OR_RETURN(e.timestamp_ms, GetInt64(ej, "timestamp-ms", "snapshot-log entry"));
      GEOLAKE_ASSIGN_OR_RETURN(e.snapshot_id, GetInt64(ej, "snapshot-id", "snapshot-log entry"));
      m.snapshot_log.push_back(e);
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(const Json* mlog, OptArray(j, "metadata-log"));
  if (mlog != nullptr) {
    for (const auto& ej : *mlog) {
      MetadataLogEntry e;
      GEOLAKE_ASSIGN_OR_RETURN(e.timestamp_ms, GetInt64(ej, "timestamp-ms", "metadata-log entry"));
      GEOLAKE_ASSIGN_OR_RETURN(e.metadata_file,
                               GetString(ej, "metadata-file", "metadata-log entry"));
      m.metadata_log.push_back(std::move(e));
    }
  }

  GEOLAKE_ASSIGN_OR_RETURN(const Json* orders,
                           v1 ? OptArray(j, "sort-orders") : RequireArray(j, "sort-orders"));
  if (orders != nullptr) {
    for (const auto& oj : *orders) {
      auto order = internal::SortOrderFromJson(oj);
      if (!order.ok()) return std::move(order).status().WithContext(kWhat);
      m.sort_orders.push_back(*order);
    }
    if (v1) {
      GEOLAKE_ASSIGN_OR_RETURN(auto id, GetOptInt32(j, "default-sort-order-id", kWhat));
      m.default_sort_order_id = id.value_or(0);
    } else {
      GEOLAKE_ASSIGN_OR_RETURN(m.default_sort_order_id,
                               GetInt32(j, "default-sort-order-id", kWhat));
    }
  }
  if (m.sort_orders.empty()) {
    m.sort_orders.push_back(SortOrder::Unsorted());
    m.default_sort_order_id = 0;
  }

  if (const Json* refs = Find(j, "refs")) {
    if (!refs->is_object())
      return Status::CorruptData("table metadata: key 'refs' is not an object");
    for (const auto& [name, rj] : refs->items()) {
      auto ref = RefFromJson(rj, name);
      if (!ref.ok()) return std::move(ref).status().WithContext(kWhat);
      m.refs.emplace(name, *ref);
    }
  }
  // The main branch exists implicitly: older writers only set current-snapshot-id.
  if (m.current_snapshot_id && m.refs.count(std::string(kMainBranch)) == 0) {
    m.refs.emplace(std::string(kMainBranch), SnapshotRef{*m.current_snapshot_id, true, {}, {}, {}});
  }

  if (m.format_version >= 3) {
    GEOLAKE_ASSIGN_OR_RETURN(m.next_row_id, GetOptInt64(j, "next-row-id", kWhat));
    if (!m.next_row_id)
      return Status::CorruptData("table metadata: missing required key 'next-row-id'");
  }
  if (const Json* v = Find(j, "statistics"); v != nullptr && v->is_array() && !v->empty()) {
    m.statistics_json = v->dump();
  }
  if (const Json* v = Find(j, "partition-statistics");
      v != nullptr && v->is_array() && !v->empty()) {
    m.partition_statistics_json = v->dump();
  }
  if (const Json* v = Find(j, "encryption-keys"); v != nullptr && v->is_array() && !v->empty()) {
    m.encryption_keys_json = v->dump();
  }
  return m;
}

// ---- New tables and the builder -----------------------------------------------------------

Result<TableMetadata> NewTableMetadata(const NewTableOptions& options) {
  if (options.location.empty()) return Status::InvalidArgument("new table: empty location");
  if (options.format_version < 2 || options.format_version > kMaxFormatVersion) {
    return Status::InvalidArgument("new table: unsupported format-version " +
                                   std::to_string(options.format_version));
  }
  if (options.schema == nullptr) return Status::InvalidArgument("new table: no schema");
  FreshIds fresh = AssignFreshIds(*options.schema, 0);
  auto remap = [&](std::int32_t old_id) -> Result<std::int32_t> {
    if (options.schema->FindField(old_id) == nullptr) {
      return Status::InvalidArgument("new table: source field id " + std::to_string(old_id) +
                                     " not in schema");
    }
    return fresh.old_to_new.at(old_id);
  };

  TableMetadata m;
  m.format_version = options.format_version;
  m.table_uuid = options.table_uuid.empty() ? NewUuid() : options.table_uuid;
  m.location = options.location;
  while (m.location.size() > 1 && m.location.back() == '/') m.location.pop_back();
  m.last_updated_ms = options.now_ms != 0 ? options.now_ms : NowMillis();
  m.last_column_id = fresh.last_column_id;
  m.schemas.push_back(fresh.schema);
  m.current_schema_id = 0;

  std::vector<PartitionField> spec_fields;
  std::int32_t next_partition_id = kFirstPartitionFieldId;
  if (options.spec != nullptr) {
    for (const auto& f : options.spec->fields()) {
      PartitionField nf = f;
      GEOLAKE_ASSIGN_OR_RETURN(nf.source_id, remap(f.source_id));
      for (auto& id : nf.source_ids) {
        GEOLAKE_ASSIGN_OR_RETURN(id, remap(id));
      }
      nf.field_id = next_partition_id++;
      spec_fields.push_back(std::move(nf));
    }
  }
  m.partition_specs.push_back(std::make_shared<const PartitionSpec>(0, std::move(spec_fields)));
  m.default_spec_id = 0;
  m.last_partition_id = next_partition_id - 1;

  m.sort_orders.push_back(SortOrder::Unsorted());
  m.default_sort_order_id = 0;
  if (options.sort_order != nullptr && !options.sort_order->is_unsorted()) {
    std::vector<SortField> fields;
    for (const auto& f : options.sort_order->fields()) {
      SortField nf = f;
      GEOLAKE_ASSIGN_OR_RETURN(nf.source_id, remap(f.source_id));
      fields.push_back(nf);
    }
    m.sort_orders.push_back(std::make_shared<const SortOrder>(1, std::move(fields)));
    m.default_sort_order_id = 1;
  }
  m.properties = options.properties;
  if (m.format_version >= 3) m.next_row_id = 0;
  GEOLAKE_RETURN_NOT_OK_CTX(m.Validate(), "new table");
  return m;
}

TableMetadataBuilder::TableMetadataBuilder(TableMetadata base, std::string base_metadata_location)
    : metadata_(std::move(base)),
      base_metadata_location_(std::move(base_metadata_location)),
      base_last_updated_ms_(metadata_.last_updated_ms) {}

TableMetadataBuilder& TableMetadataBuilder::SetProperties(
    const std::map<std::string, std::string>& updates) {
  for (const auto& [k, v] : updates) metadata_.properties[k] = v;
  return *this;
}

TableMetadataBuilder& TableMetadataBuilder::RemoveProperties(const std::vector<std::string>& keys) {
  for (const auto& k : keys) metadata_.properties.erase(k);
  return *this;
}

Status TableMetadataBuilder::AddSnapshot(Snapshot snapshot) {
  const std::string what = "snapshot " + std::to_string(snapshot.snapshot_id);
  if (snapshot.snapshot_id <= 0) return Status::InvalidArgument(what + ": id must be positive");
  if (metadata_.SnapshotById(snapshot.snapshot_id) != nullptr) {
    return Status::InvalidArgument(what + " already exists");
  }
  if (snapshot.parent_snapshot_id &&
      metadata_.SnapshotById(*snapshot.parent_snapshot_id) == nullptr) {
    return Status::InvalidArgument(what + ": unknown parent " +
                                   std::to_string(*snapshot.parent_snapshot_id));
  }
  if (snapshot.manifest_list.empty() || snapshot.operation().empty()) {
    return Status::InvalidArgument(what + ": needs a manifest-list and an operation");
  }
  if (metadata_.format_version >= 2) {
    if (snapshot.sequence_number <= metadata_.last_sequence_number) {
      return Status::InvalidArgument(
          what + ": sequence-number " + std::to_string(snapshot.sequence_number) +
          " is not above last-sequence-number " + std::to_string(metadata_.last_sequence_number));
    }
    metadata_.last_sequence_number = snapshot.sequence_number;
  }
  if (metadata_.format_version >= 3) {
    if (!snapshot.first_row_id || !snapshot.added_rows || *snapshot.added_rows < 0 ||
        *snapshot.first_row_id != metadata_.next_row_id.value_or(0)) {
      return Status::InvalidArgument(what + ": first-row-id must equal next-row-id " +
                                     std::to_string(metadata_.next_row_id.value_or(0)) +
                                     " and added-rows be set");
    }
    metadata_.next_row_id = *snapshot.first_row_id + *snapshot.added_rows;
  }
  metadata_.snapshots.push_back(std::move(snapshot));
  return Status::OK();
}

Status TableMetadataBuilder::SetBranchSnapshot(std::int64_t snapshot_id, std::string_view branch) {
  const Snapshot* snapshot = metadata_.SnapshotById(snapshot_id);
  if (snapshot == nullptr) {
    return Status::InvalidArgument("branch '" + std::string(branch) + "': unknown snapshot " +
                                   std::to_string(snapshot_id));
  }
  auto [it, inserted] = metadata_.refs.try_emplace(std::string(branch));
  if (!inserted && !it->second.is_branch) {
    return Status::InvalidArgument("ref '" + std::string(branch) + "' is a tag, not a branch");
  }
  it->second.snapshot_id = snapshot_id;
  it->second.is_branch = true;
  if (branch == kMainBranch) {
    metadata_.current_snapshot_id = snapshot_id;
    metadata_.snapshot_log.push_back({snapshot->timestamp_ms, snapshot_id});
  }
  return Status::OK();
}

namespace {

// A statistics / partition-statistics JSON array without the entries of removed snapshots.
std::string WithoutStatisticsOf(const std::string& json_text,
                                const std::set<std::int64_t>& snapshot_ids) {
  if (json_text.empty()) return json_text;
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return json_text;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& item : j) {
    const auto id = item.is_object() ? item.find("snapshot-id") : item.end();
    if (id != item.end() && id->is_number_integer() &&
        snapshot_ids.count(id->get<std::int64_t>()) != 0) {
      continue;
    }
    kept.push_back(item);
  }
  return kept.empty() ? std::string() : kept.dump();
}

}  // namespace

Status TableMetadataBuilder::RemoveSnapshots(const std::set<std::int64_t>& snapshot_ids) {
  for (std::int64_t id : snapshot_ids) {
    if (metadata_.SnapshotById(id) == nullptr) {
      return Status::InvalidArgument("cannot remove snapshot " + std::to_string(id) + ": unknown");
    }
    if (metadata_.current_snapshot_id == id) {
      return Status::InvalidArgument("cannot remove snapshot " + std::to_string(id) +
                                     ": it is the current snapshot");
    }
  }
  if (snapshot_ids.empty()) return Status::OK();
  std::erase_if(metadata_.snapshots,
                [&](const Snapshot& s) { return snapshot_ids.count(s.snapshot_id) != 0; });
  std::erase_if(metadata_.refs,
                [&](const auto& ref) { return snapshot_ids.count(ref.second.snapshot_id) != 0; });
  std::vector<SnapshotLogEntry> log;
  for (const SnapshotLogEntry& e : metadata_.snapshot_log) {
    if (snapshot_ids.count(e.snapshot_id) != 0) {
      log.clear();
    } else {
      log.push_back(e);
    }
  }
  metadata_.snapshot_log = std::move(log);
  metadata_.statistics_json = WithoutStatisticsOf(metadata_.statistics_json, snapshot_ids);
  metadata_.partition_statistics_json =
      WithoutStatisticsOf(metadata_.partition_statistics_json, snapshot_ids);
  return Status::OK();
}

Status TableMetadataBuilder::RemoveRefs(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (name == kMainBranch) return Status::InvalidArgument("cannot remove the main branch");
  }
  for (const std::string& name : names) metadata_.refs.erase(name);
  return Status::OK();
}

Result<TableMetadata> TableMetadataBuilder::Build(std::int64_t now_ms) {
  TableMetadata out = metadata_;
  std::int64_t ts = now_ms != 0 ? now_ms : NowMillis();
  // last-updated-ms never goes backwards, even if this host's clock is behind the last writer's.
  ts = std::max(ts, base_last_updated_ms_);
  for (const auto& s : out.snapshots) ts = std::max(ts, s.timestamp_ms);
  out.last_updated_ms = ts;
  if (!base_metadata_location_.empty()) {
    out.metadata_log.push_back({base_last_updated_ms_, base_metadata_location_});
  }
  const std::int64_t max_entries =
      std::max<std::int64_t>(1, out.PropertyAsInt("write.metadata.previous-versions-max", 100));
  if (static_cast<std::int64_t>(out.metadata_log.size()) > max_entries) {
    out.metadata_log.erase(out.metadata_log.begin(),
                           out.metadata_log.end() - static_cast<std::ptrdiff_t>(max_entries));
  }
  GEOLAKE_RETURN_NOT_OK(out.Validate());
  return out;
}

// ---- Ids and names ------------------------------------------------------------------------

namespace {

// One generator per thread, seeded from the OS; ids only need to be unpredictable enough not
// to collide, not cryptographically strong.
std::mt19937_64& Generator() {
  thread_local std::mt19937_64 gen(std::random_device{}() ^
                                   (static_cast<std::uint64_t>(std::random_device{}()) << 32));
  return gen;
}

void RandomUuidHalves(std::uint64_t* hi, std::uint64_t* lo) {
  *hi = Generator()();
  *lo = Generator()();
  *hi = (*hi & ~0xF000ULL) | 0x4000ULL;              // version 4
  *lo = (*lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);  // RFC 4122 variant
}

}  // namespace

std::string NewUuid() {
  std::uint64_t hi, lo;
  RandomUuidHalves(&hi, &lo);
  char buf[37];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

std::int64_t NewSnapshotId(const TableMetadata& metadata) {
  while (true) {
    std::uint64_t hi, lo;
    RandomUuidHalves(&hi, &lo);
    const auto id = static_cast<std::int64_t>((hi ^ lo) & 0x7FFFFFFFFFFFFFFFULL);
    if (id != 0 && metadata.SnapshotById(id) == nullptr) return id;
  }
}

std::int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string MetadataFileName(std::int64_t version, std::string_view uuid, bool gzip) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%05lld-", static_cast<long long>(version));
  return std::string(buf) + std::string(uuid) + (gzip ? ".gz.metadata.json" : ".metadata.json");
}

std::string HintedMetadataFileName(std::int64_t version, bool gzip) {
  return "v" + std::to_string(version) + (gzip ? ".gz.metadata.json" : ".metadata.json");
}

bool IsGzipMetadataFileName(std::string_view path) {
  return path.ends_with(".gz.metadata.json") || path.ends_with(".metadata.json.gz");
}

Result<bool> MetadataCompressionIsGzip(const std::map<std::string, std::string>& properties) {
  auto it = properties.find("write.metadata.compression-codec");
  if (it == properties.end()) return false;
  std::string codec = it->second;
  std::transform(codec.begin(), codec.end(), codec.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (codec == "none") return false;
  if (codec == "gzip") return true;
  return Status::InvalidArgument("write.metadata.compression-codec '" + it->second +
                                 "' is not supported: Iceberg readers accept only 'none' and "
                                 "'gzip' for metadata files");
}

Result<std::int64_t> ParseMetadataVersion(std::string_view path) {
  std::string_view name = path;
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  auto bad = [&]() {
    return Status::InvalidArgument("not a metadata file name: '" + std::string(path) + "'");
  };
  const bool is_metadata = name.ends_with(".metadata.json") || name.ends_with(".metadata.json.gz");
  if (!is_metadata) return bad();
  std::string_view digits;
  if (name.starts_with("v")) {
    digits = name.substr(1, name.find('.') - 1);
  } else {
    const auto dash = name.find('-');
    if (dash == std::string_view::npos) return bad();
    digits = name.substr(0, dash);
  }
  std::int64_t version = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || version < 0) {
    return bad();
  }
  return version;
}

std::string VersionHintContent(std::int64_t version) { return std::to_string(version); }

std::string ManifestListFileName(std::int64_t snapshot_id, int attempt,
                                 std::string_view commit_uuid) {
  return "snap-" + std::to_string(snapshot_id) + "-" + std::to_string(attempt) + "-" +
         std::string(commit_uuid) + ".avro";
}

std::string ManifestFileName(std::string_view commit_uuid, int index) {
  return std::string(commit_uuid) + "-m" + std::to_string(index) + ".avro";
}

}  // namespace geolake::table
