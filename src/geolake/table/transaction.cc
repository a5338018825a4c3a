#include "geolake/table/transaction.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <random>
#include <set>
#include <thread>

namespace geolake::table {

namespace {

std::int64_t PropertyOr(const std::map<std::string, std::string>& props, const std::string& key,
                        std::int64_t fallback) {
  TableMetadata tmp;
  tmp.properties = props;
  return tmp.PropertyAsInt(key, fallback);
}

std::string MetadataDir(const TableMetadata& m) { return m.location + "/metadata/"; }

// Write a small file once; kAlreadyExists if the name is taken.
Status WriteOnce(const io::FileIO& io, const std::string& path, std::string_view bytes) {
  return io.WriteAll(path, bytes, /*overwrite=*/false);
}

// The version of a metadata location, or a fallback derived from the metadata log.
std::int64_t VersionOf(const std::string& location, const TableMetadata& m) {
  auto v = ParseMetadataVersion(location);
  if (v.ok()) return *v;
  return static_cast<std::int64_t>(m.metadata_log.size()) + 1;
}

// Write the next metadata file as v<N>.metadata.json, taking the next free N if a concurrent
// writer already used it (its commit may have failed, leaving the name burned).
Result<std::string> WriteMetadataFile(const io::FileIO& io, const TableMetadata& m,
                                      std::int64_t first_version, std::int64_t* version_out) {
  GEOLAKE_ASSIGN_OR_RETURN(std::string json, m.ToJson());
  constexpr int kMaxNameProbes = 100;
  for (int probe = 0; probe < kMaxNameProbes; ++probe) {
    const std::int64_t version = first_version + probe;
    const std::string path = MetadataDir(m) + HintedMetadataFileName(version);
    Status st = WriteOnce(io, path, json);
    if (st.ok()) {
      *version_out = version;
      return path;
    }
    if (st.code() != ErrorCode::kAlreadyExists) return st;
  }
  return Status::CommitConflict("metadata: " + std::to_string(kMaxNameProbes) + " versions after " +
                                std::to_string(first_version) + " are taken");
}

// Best effort: the hint only helps path-based readers; the catalog is the source of truth.
void WriteVersionHint(const io::FileIO& io, const TableMetadata& m, std::int64_t version) {
  (void)io.WriteAll(MetadataDir(m) + "version-hint.text", VersionHintContent(version),
                    /*overwrite=*/true);
}

std::string PartitionKey(const Type& partition_type, const DataFile& f) {
  std::string key;
  for (std::size_t i = 0; i < f.partition.size() && i < partition_type.fields().size(); ++i) {
    key += ValueToString(*partition_type.fields()[i].type, f.partition[i]);
    key.push_back('\x1f');
  }
  return key;
}

}  // namespace

CommitRetryPolicy CommitRetryPolicy::FromProperties(
    const std::map<std::string, std::string>& properties) {
  CommitRetryPolicy p;
  p.num_retries = static_cast<int>(
      std::max<std::int64_t>(0, PropertyOr(properties, "commit.retry.num-retries", 4)));
  p.min_wait_ms =
      std::max<std::int64_t>(0, PropertyOr(properties, "commit.retry.min-wait-ms", 100));
  p.max_wait_ms =
      std::max(p.min_wait_ms, PropertyOr(properties, "commit.retry.max-wait-ms", 60000));
  p.total_timeout_ms = PropertyOr(properties, "commit.retry.total-timeout-ms", 1800000);
  return p;
}

std::int64_t CommitRetryPolicy::WaitMillis(int retry) const {
  double delay = static_cast<double>(min_wait_ms);
  for (int i = 1; i < retry && delay < static_cast<double>(max_wait_ms); ++i) delay *= 2.0;
  const auto capped = std::min<std::int64_t>(static_cast<std::int64_t>(delay), max_wait_ms);
  // Jitter spreads writers that lost the same race so they do not collide again in lockstep.
  thread_local std::mt19937_64 gen(std::random_device{}());
  std::uniform_int_distribution<std::int64_t> jitter(0, std::max<std::int64_t>(0, capped / 10));
  return capped + jitter(gen);
}

Result<Table> LoadTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id) {
  Table t;
  t.id = id;
  GEOLAKE_ASSIGN_OR_RETURN(t.metadata_location, catalog.LoadTable(id));
  GEOLAKE_ASSIGN_OR_RETURN(std::string json, io.ReadAll(t.metadata_location));
  auto m = TableMetadata::FromJson(json);
  if (!m.ok()) return std::move(m).status().WithContext("table '" + id.ToString() + "'");
  t.metadata = std::move(*m);
  return t;
}

Result<std::string> FindCurrentMetadataFile(const io::FileIO& io, const std::string& table_dir) {
  std::string dir = table_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string meta = dir + "/metadata/";
  GEOLAKE_ASSIGN_OR_RETURN(auto listing, io.List(meta));
  // Candidates: every *.metadata.json with a parsable version, highest version wins.
  std::string best;
  std::int64_t best_version = -1;
  std::map<std::int64_t, std::vector<std::string>> by_version;
  for (const auto& f : listing) {
    if (io::IsTempFilePath(f.path)) continue;
    auto v = ParseMetadataVersion(f.path);
    if (!v.ok()) continue;
    by_version[*v].push_back(f.path);
    if (*v > best_version) {
      best_version = *v;
      best = f.path;
    }
  }
  auto hint = io.ReadAll(meta + "version-hint.text");
  if (hint.ok()) {
    std::string h = *hint;
    while (!h.empty() && std::isspace(static_cast<unsigned char>(h.back()))) h.pop_back();
    while (!h.empty() && std::isspace(static_cast<unsigned char>(h.front()))) h.erase(0, 1);
    const bool numeric = !h.empty() && std::all_of(h.begin(), h.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (numeric) {
      const std::string hinted = meta + HintedMetadataFileName(std::stoll(h));
      if (io.Exists(hinted).value_or(false)) return hinted;
      auto it = by_version.find(std::stoll(h));
      if (it != by_version.end() && it->second.size() == 1) return it->second.front();
    } else if (!h.empty()) {
      const std::string stem = meta + h + ".metadata.json";
      if (io.Exists(stem).value_or(false)) return stem;
    }
  }
  if (best.empty()) {
    return Status::NotFound("table '" + table_dir + "': no metadata file under " + meta);
  }
  return best;
}

Result<Table> LoadTableFromPath(const io::FileIO& io, const std::string& table_dir) {
  Table t;
  GEOLAKE_ASSIGN_OR_RETURN(t.metadata_location, FindCurrentMetadataFile(io, table_dir));
  GEOLAKE_ASSIGN_OR_RETURN(std::string json, io.ReadAll(t.metadata_location));
  auto m = TableMetadata::FromJson(json);
  if (!m.ok()) return std::move(m).status().WithContext("'" + t.metadata_location + "'");
  t.metadata = std::move(*m);
  return t;
}

Result<Table> CreateTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id,
                          const NewTableOptions& options) {
  GEOLAKE_ASSIGN_OR_RETURN(TableMetadata m, NewTableMetadata(options));
  std::int64_t version = 0;
  GEOLAKE_ASSIGN_OR_RETURN(std::string location, WriteMetadataFile(io, m, 1, &version));
  Status st = catalog.CreateTable(id, location);
  if (!st.ok()) {
    (void)io.Delete(location);  // never visible: nobody can reference it
    return st.WithContext("create table '" + id.ToString() + "'");
  }
  WriteVersionHint(io, m, version);
  return Table{id, std::move(location), std::move(m)};
}

AppendFiles::AppendFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id)
    : catalog_(catalog),
      io_(io),
      id_(std::move(id)),
      sleep_([](std::int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }) {}

AppendFiles& AppendFiles::AddFile(DataFile file) {
  files_.push_back(std::move(file));
  return *this;
}

AppendFiles& AppendFiles::SetSummary(std::string key, std::string value) {
  extra_summary_[std::move(key)] = std::move(value);
  return *this;
}

AppendFiles& AppendFiles::SetSleep(std::function<void(std::int64_t)> sleep) {
  sleep_ = std::move(sleep);
  return *this;
}

Result<CommitResult> AppendFiles::Commit() {
  const std::string what = "append to '" + id_.ToString() + "'";
  GEOLAKE_ASSIGN_OR_RETURN(Table base, LoadTable(*catalog_, *io_, id_));
  const CommitRetryPolicy policy = CommitRetryPolicy::FromProperties(base.metadata.properties);
  const auto started = std::chrono::steady_clock::now();

  // The new manifest is written once and reused by every attempt: ADDED entries carry no
  // snapshot id or sequence numbers, they inherit them from the manifest list entry.
  const std::string commit_uuid = NewUuid();
  const std::int32_t spec_id = base.metadata.default_spec_id;
  const SchemaPtr schema = base.metadata.current_schema();
  const PartitionSpecPtr spec = base.metadata.default_spec();
  std::int64_t snapshot_id = NewSnapshotId(base.metadata);
  ManifestWriteOptions mopts;
  mopts.format_version = base.metadata.format_version;
  mopts.snapshot_id = snapshot_id;
  mopts.schema = schema;
  mopts.spec = spec;
  std::vector<ManifestEntry> entries;
  entries.reserve(files_.size());
  for (const DataFile& f : files_) {
    ManifestEntry e;
    e.status = ManifestEntryStatus::kAdded;
    e.data_file = f;
    entries.push_back(std::move(e));
  }
  const std::string manifest_path = MetadataDir(base.metadata) + ManifestFileName(commit_uuid, 0);
  auto encoded = EncodeManifest(mopts, entries, manifest_path);
  if (!encoded.ok()) return std::move(encoded).status().WithContext(what);
  GEOLAKE_RETURN_NOT_OK_CTX(WriteOnce(*io_, manifest_path, encoded->bytes), what);
  const ManifestFile new_manifest = encoded->entry;

  GEOLAKE_ASSIGN_OR_RETURN(TypePtr partition_type, spec->PartitionType(*schema));
  std::set<std::string> partitions;
  std::int64_t added_records = 0, added_size = 0;
  for (const DataFile& f : files_) {
    partitions.insert(PartitionKey(*partition_type, f));
    added_records += f.record_count;
    added_size += f.file_size_in_bytes;
  }

  Status last_error;
  for (int attempt = 1;; ++attempt) {
    const TableMetadata& m = base.metadata;
    if (m.default_spec_id != spec_id) {
      (void)io_->Delete(manifest_path);
      return Status::CommitConflict(what + ": the partition spec changed during the commit");
    }
    if (m.SnapshotById(snapshot_id) != nullptr) snapshot_id = NewSnapshotId(m);

    // Manifests of the new snapshot: ours first, then all of the parent's.
    const Snapshot* parent = m.current_snapshot();
    std::vector<ManifestFile> manifests;
    ManifestFile ours = new_manifest;
    const std::int64_t seq = m.last_sequence_number + 1;
    ours.sequence_number = seq;
    ours.min_sequence_number = seq;
    ours.added_snapshot_id = snapshot_id;
    std::optional<std::int64_t> first_row_id;
    std::int64_t assigned_rows = 0;
    if (m.format_version >= 3) {
      first_row_id = m.next_row_id.value_or(0);
      ours.first_row_id = first_row_id;
      assigned_rows = ours.added_rows_count + ours.existing_rows_count;
    }
    manifests.push_back(ours);
    if (parent != nullptr) {
      auto previous = ReadManifestList(*io_, parent->manifest_list);
      if (!previous.ok()) return std::move(previous).status().WithContext(what);
      manifests.insert(manifests.end(), previous->begin(), previous->end());
    }

    const std::string list_path =
        MetadataDir(m) + ManifestListFileName(snapshot_id, attempt, commit_uuid);
    auto list_bytes = EncodeManifestList(m.format_version, snapshot_id,
                                         parent ? std::optional(parent->snapshot_id) : std::nullopt,
                                         seq, first_row_id, manifests);
    if (!list_bytes.ok()) return std::move(list_bytes).status().WithContext(what);
    GEOLAKE_RETURN_NOT_OK_CTX(WriteOnce(*io_, list_path, *list_bytes), what);

    Snapshot snap;
    snap.snapshot_id = snapshot_id;
    if (parent) snap.parent_snapshot_id = parent->snapshot_id;
    snap.sequence_number = seq;
    snap.timestamp_ms = std::max(NowMillis(), m.last_updated_ms);
    snap.manifest_list = list_path;
    snap.schema_id = m.current_schema_id;
    if (m.format_version >= 3) {
      snap.first_row_id = first_row_id;
      snap.added_rows = assigned_rows;
    }
    auto& s = snap.summary;
    s = extra_summary_;
    s["operation"] = "append";
    s["added-data-files"] = std::to_string(files_.size());
    s["added-records"] = std::to_string(added_records);
    s["added-files-size"] = std::to_string(added_size);
    s["changed-partition-count"] = std::to_string(partitions.size());
    // Totals continue the parent's; a total the parent lacks stays unknown (Java's rule).
    auto total = [&](const char* key, std::int64_t added) {
      std::int64_t prev = 0;
      if (parent != nullptr) {
        auto it = parent->summary.find(key);
        if (it == parent->summary.end()) return;
        prev = std::strtoll(it->second.c_str(), nullptr, 10);
      }
      s[key] = std::to_string(prev + added);
    };
    total("total-records", added_records);
    total("total-files-size", added_size);
    total("total-data-files", static_cast<std::int64_t>(files_.size()));
    total("total-delete-files", 0);
    total("total-position-deletes", 0);
    total("total-equality-deletes", 0);

    TableMetadataBuilder builder(m, base.metadata_location);
    Status st = builder.AddSnapshot(snap);
    if (st.ok()) st = builder.SetBranchSnapshot(snapshot_id);
    auto next = st.ok() ? builder.Build(snap.timestamp_ms) : Result<TableMetadata>(st);
    if (!next.ok()) {
      (void)io_->Delete(list_path);
      (void)io_->Delete(manifest_path);
      return std::move(next).status().WithContext(what);
    }
    std::int64_t version = 0;
    auto new_location =
        WriteMetadataFile(*io_, *next, VersionOf(base.metadata_location, m) + 1, &version);
    if (!new_location.ok()) {
      (void)io_->Delete(list_path);
      return std::move(new_location).status().WithContext(what);
    }

    st = catalog_->CommitTable(id_, base.metadata_location, *new_location);
    if (st.ok()) {
      WriteVersionHint(*io_, *next, version);
      return CommitResult{snapshot_id, seq, *new_location, attempt, std::move(*next)};
    }
    if (st.code() == ErrorCode::kIOError) {
      // Unknown outcome: keep every file; success if our metadata became current after all.
      auto now = catalog_->LoadTable(id_);
      if (now.ok() && *now == *new_location) {
        WriteVersionHint(*io_, *next, version);
        return CommitResult{snapshot_id, seq, *new_location, attempt, std::move(*next)};
      }
      return st.WithContext(what + ": commit outcome unknown");
    }
    // The CAS definitively failed, so nothing references this attempt's files.
    (void)io_->Delete(*new_location);
    (void)io_->Delete(list_path);
    if (st.code() != ErrorCode::kCommitConflict) {
      (void)io_->Delete(manifest_path);
      return st.WithContext(what);
    }
    const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count();
    if (attempt > policy.num_retries || elapsed_ms >= policy.total_timeout_ms) {
      (void)io_->Delete(manifest_path);
      return st.WithContext(what + ": gave up after " + std::to_string(attempt) + " attempts");
    }
    sleep_(policy.WaitMillis(attempt));
    auto reloaded = LoadTable(*catalog_, *io_, id_);
    if (!reloaded.ok()) return std::move(reloaded).status().WithContext(what);
    base = std::move(*reloaded);
  }
}

}  // namespace geolake::table
