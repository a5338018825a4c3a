#include "geolake/table/transaction.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "geolake/core/little_endian.h"
#include "geolake/core/logging.h"
#include "geolake/formats/parquet/compression.h"
#include "geolake/table/location.h"

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

// Write the next metadata file as NNNNN-<uuid>.metadata.json, or gzip-compressed as
// NNNNN-<uuid>.gz.metadata.json when write.metadata.compression-codec is gzip. The uuid makes
// the name unique, so writers racing for the same version never collide; the catalog's swap
// decides who wins.
Result<std::string> WriteMetadataFile(const io::FileIO& io, const TableMetadata& m,
                                      std::int64_t version) {
  GEOLAKE_ASSIGN_OR_RETURN(const bool gzip, MetadataCompressionIsGzip(m.properties));
  GEOLAKE_ASSIGN_OR_RETURN(std::string json, m.ToJson());
  if (gzip) {
    std::string compressed;
    GEOLAKE_RETURN_NOT_OK(parquet::Compress(parquet::CompressionCodec::kGzip, json, &compressed));
    json = std::move(compressed);
  }
  const std::string path = MetadataDir(m) + MetadataFileName(version, NewUuid(), gzip);
  GEOLAKE_RETURN_NOT_OK(WriteOnce(io, path, json));
  return path;
}

// The published v<N> name of a version: the gzip form when that version's file is gzip.
bool HintedExists(const io::FileIO& io, const std::string& metadata_dir, std::int64_t version) {
  for (const bool gzip : {false, true}) {
    auto exists = io.Exists(metadata_dir + HintedMetadataFileName(version, gzip));
    if (!exists.ok() || *exists) return true;  // unknown counts as existing: keep the hint
  }
  return false;
}

// Path-based readers (icebird, DuckDB's iceberg_scan of a folder, Iceberg's Hadoop tables) read
// metadata/version-hint.text and open v<N>.metadata.json. The catalog's files are named
// NNNNN-<uuid>.metadata.json so that writers racing for version N never collide; only the
// writer whose swap won version N gets here, and it publishes v<N>.metadata.json as a
// write-once second name of its own file (a hard link on local disks), then the hint. A v<N>
// that already exists with other bytes (left by an earlier table at this location) is not
// hinted. Best effort: the catalog is the source of truth. A writer that swapped in N but gets
// here after another writer hinted N+1 leaves the newer hint alone, so the remaining
// read-then-write race can only leave the hint a commit behind, never naming a missing file.
void PublishVersion(const io::FileIO& io, const TableMetadata& m, const std::string& location,
                    std::int64_t version) {
  const std::string published =
      MetadataDir(m) + HintedMetadataFileName(version, IsGzipMetadataFileName(location));
  Status linked = io.LinkOnce(location, published);
  if (linked.code() == ErrorCode::kAlreadyExists) {
    auto ours = io.ReadAll(location);
    auto theirs = io.ReadAll(published);
    if (!ours.ok() || !theirs.ok() || *ours != *theirs) {
      GEOLAKE_LOG_WARN(
          "table at '{}': {} exists and is not version {}; version-hint.text not "
          "updated",
          m.location, published, version);
      return;
    }
  } else if (!linked.ok()) {
    GEOLAKE_LOG_WARN("table at '{}': {}; version-hint.text not updated", m.location,
                     linked.message());
    return;
  }
  const std::string path = MetadataDir(m) + "version-hint.text";
  if (auto current = io.ReadAll(path); current.ok()) {
    // A newer version's winner may have hinted already (it published before us): keep its
    // hint. A hint whose v<N> file does not exist (a hand edit, a restored backup) is no
    // version at all and is replaced, or path-based readers would fail forever.
    const std::int64_t hinted = std::strtoll(current->c_str(), nullptr, 10);
    if (hinted > version && HintedExists(io, MetadataDir(m), hinted)) return;
  }
  (void)io.WriteAll(path, VersionHintContent(version), /*overwrite=*/true);
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

Result<std::string> ReadMetadataFile(const io::FileIO& io, const std::string& path) {
  GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, io.ReadAll(path));
  // Compressed files are recognized by the gzip magic (RFC 1952), not by name: Java reads
  // both "*.gz.metadata.json" and "*.metadata.json.gz", and a name can be wrong.
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f ||
      static_cast<unsigned char>(bytes[1]) != 0x8b) {
    return bytes;
  }
  auto corrupt = [&](const std::string& why) {
    return Status::CorruptData("metadata file '" + path + "': " + why);
  };
  if (bytes.size() < 18) return corrupt("gzip stream too short");
  // ISIZE, the stream's last 4 bytes: the uncompressed size modulo 2^32, little-endian.
  const auto isize = LoadLE<std::uint32_t>(bytes.data() + bytes.size() - 4);
  std::string json;
  Status st = parquet::Decompress(parquet::CompressionCodec::kGzip, bytes, isize, &json);
  if (!st.ok()) return corrupt(st.message());
  return json;
}

Result<Table> LoadTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id) {
  Table t;
  t.id = id;
  GEOLAKE_ASSIGN_OR_RETURN(t.metadata_location, catalog.LoadTable(id));
  GEOLAKE_ASSIGN_OR_RETURN(std::string json, ReadMetadataFile(io, t.metadata_location));
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
  std::map<std::int64_t, std::vector<const io::FileInfo*>> by_version;
  for (const auto& f : listing) {
    if (io::IsTempFilePath(f.path)) continue;
    auto v = ParseMetadataVersion(f.path);
    if (!v.ok()) continue;
    by_version[*v].push_back(&f);
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
    std::int64_t version = 0;
    const auto [end, ec] = std::from_chars(h.data(), h.data() + h.size(), version);
    // A hint too large for int64 is no version of ours: treated like a missing hint.
    const bool numeric =
        !h.empty() && ec == std::errc() && end == h.data() + h.size() && version >= 0;
    if (numeric) {
      std::string hinted = meta + HintedMetadataFileName(version);
      bool hinted_exists = io.Exists(hinted).value_or(false);
      if (!hinted_exists) {
        const std::string gz = meta + HintedMetadataFileName(version, /*gzip=*/true);
        if (io.Exists(gz).value_or(false)) {
          hinted = gz;
          hinted_exists = true;
        }
      }
      std::vector<const io::FileInfo*> named;  // NNNNN-<uuid> files of that version
      if (auto it = by_version.find(version); it != by_version.end()) {
        for (const io::FileInfo* f : it->second) {
          if (f->path != hinted) named.push_back(f);
        }
      }
      if (hinted_exists) {
        // v<N> is the published second name of the winner's NNNNN-<uuid> file: answer with the
        // name the catalog records (what orphan removal and the metadata log reason about).
        auto published = io.ReadAll(hinted);
        for (const io::FileInfo* f : named) {
          auto bytes = io.ReadAll(f->path);
          if (published.ok() && bytes.ok() && *bytes == *published) return f->path;
        }
        return hinted;
      }
      if (!named.empty()) {
        // Several NNNNN-<uuid> files of version N exist when a writer died between writing
        // its metadata and losing the swap; without a catalog the newest is the best guess.
        const io::FileInfo* newest = named.front();
        for (const io::FileInfo* f : named) {
          if (f->mtime_ns > newest->mtime_ns) newest = f;
        }
        return newest->path;
      }
    } else if (!h.empty()) {
      for (const char* ext : {".metadata.json", ".gz.metadata.json"}) {
        const std::string stem = meta + h + ext;
        if (io.Exists(stem).value_or(false)) return stem;
      }
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
  GEOLAKE_ASSIGN_OR_RETURN(std::string json, ReadMetadataFile(io, t.metadata_location));
  auto m = TableMetadata::FromJson(json);
  if (!m.ok()) return std::move(m).status().WithContext("'" + t.metadata_location + "'");
  t.metadata = std::move(*m);
  return t;
}

Result<Table> CreateTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id,
                          const NewTableOptions& options) {
  const std::string what = "create table '" + id.ToString() + "'";
  GEOLAKE_RETURN_NOT_OK_CTX(ValidateTableNameForLocation(id), what);
  GEOLAKE_ASSIGN_OR_RETURN(TableMetadata m, NewTableMetadata(options));
  GEOLAKE_RETURN_NOT_OK_CTX(CheckLocationFree(catalog, io, id, m.location), what);
  GEOLAKE_ASSIGN_OR_RETURN(std::string location, WriteMetadataFile(io, m, 1));
  Status st = catalog.CreateTable(id, location);
  if (!st.ok()) {
    (void)io.Delete(location);  // never visible: nobody can reference it
    return st.WithContext(what);
  }
  PublishVersion(io, m, location, 1);
  return Table{id, std::move(location), std::move(m)};
}

// ---- Commit phases ------------------------------------------------------------------------

namespace {

constexpr std::pair<CommitPhase, std::string_view> kPhaseNames[] = {
    {CommitPhase::kManifestWritten, "manifest-written"},
    {CommitPhase::kManifestListWritten, "manifest-list-written"},
    {CommitPhase::kMetadataWritten, "metadata-written"},
    {CommitPhase::kBeforeSwap, "before-swap"},
    {CommitPhase::kAfterSwap, "after-swap"},
};

bool PropertyAsBool(const TableMetadata& m, const std::string& key, bool fallback) {
  auto it = m.properties.find(key);
  if (it == m.properties.end()) return fallback;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "true") return true;
  if (v == "false") return false;
  return fallback;
}

// After a successful swap: metadata files that were in the base's metadata log but fell out of
// the new one (write.metadata.previous-versions-max) are deleted when
// write.metadata.delete-after-commit.enabled is true (Java's rule: base log minus new log).
// Never before the swap: until then the base is current and its log must stay readable.
// Returns how many files were deleted.
int DeleteRemovedMetadataFiles(const io::FileIO& io, const TableMetadata& base,
                               const TableMetadata& next, const std::string& new_location) {
  if (!PropertyAsBool(next, "write.metadata.delete-after-commit.enabled", false)) return 0;
  std::set<std::string> kept{new_location};
  for (const auto& e : next.metadata_log) kept.insert(e.metadata_file);
  int deleted = 0;
  for (const auto& e : base.metadata_log) {
    if (kept.count(e.metadata_file) != 0) continue;
    // Best effort: a file already gone (another writer's cleanup) is fine, and a file that
    // cannot be deleted only stays behind as an orphan. Its published v<N> name goes too.
    if (io.Delete(e.metadata_file).ok()) ++deleted;
    if (auto v = ParseMetadataVersion(e.metadata_file); v.ok()) {
      (void)io.Delete(MetadataDir(next) +
                      HintedMetadataFileName(*v, IsGzipMetadataFileName(e.metadata_file)));
    }
  }
  return deleted;
}

}  // namespace

std::string_view CommitPhaseName(CommitPhase phase) {
  for (const auto& [p, name] : kPhaseNames) {
    if (p == phase) return name;
  }
  return "unknown";
}

Result<CommitPhase> ParseCommitPhase(std::string_view name) {
  std::string known;
  for (const auto& [p, n] : kPhaseNames) {
    if (n == name) return p;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  return Status::InvalidArgument("unknown commit phase '" + std::string(name) +
                                 "' (expected one of " + known + ")");
}

// ---- Transaction: the shared commit loop ----------------------------------------------------

Transaction::Transaction(Catalog* catalog, const io::FileIO* io, TableIdentifier id,
                         std::string verb)
    : catalog_(catalog),
      io_(io),
      id_(std::move(id)),
      what_(std::move(verb) + " '" + id_.ToString() + "'"),
      sleep_([](std::int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }) {}

Transaction& Transaction::SetSleep(std::function<void(std::int64_t)> sleep) {
  sleep_ = std::move(sleep);
  return *this;
}

Transaction& Transaction::SetCommitHook(CommitHook hook) {
  hook_ = std::move(hook);
  return *this;
}

Result<CommitResult> Transaction::Commit() {
  GEOLAKE_ASSIGN_OR_RETURN(Table base, LoadTable(*catalog_, *io_, id_));
  const CommitRetryPolicy policy = CommitRetryPolicy::FromProperties(base.metadata.properties);
  const auto started = std::chrono::steady_clock::now();
  GEOLAKE_RETURN_NOT_OK_CTX(Prepare(base), what_);

  for (int attempt = 1;; ++attempt) {
    auto applied = Apply(base, attempt);
    if (!applied.ok()) {
      Abandon();
      return std::move(applied).status().WithContext(what_);
    }
    Attempt a = std::move(*applied);
    auto delete_attempt_files = [&] {
      for (const auto& f : a.files) (void)io_->Delete(f);
    };
    const std::int64_t version = VersionOf(base.metadata_location, base.metadata) + 1;
    auto location = WriteMetadataFile(*io_, a.next, version);
    if (!location.ok()) {
      delete_attempt_files();
      Abandon();
      return std::move(location).status().WithContext(what_);
    }
    CallHook(CommitPhase::kMetadataWritten, attempt);

    CallHook(CommitPhase::kBeforeSwap, attempt);
    if (Status ready = CheckBeforeSwap(base); !ready.ok()) {
      (void)io_->Delete(*location);
      delete_attempt_files();
      Abandon();
      return ready.WithContext(what_);
    }
    Status st = catalog_->CommitTable(id_, base.metadata_location, *location);
    bool committed = st.ok();
    if (CommitNotApplied(st)) {
      // The database refused the swap (locked, read-only, full): not committed, and nothing
      // references this attempt's files.
      (void)io_->Delete(*location);
      delete_attempt_files();
      Abandon();
      return st.WithContext(what_ + ": not committed");
    }
    if (st.code() == ErrorCode::kIOError) {
      // Unknown outcome: keep every file; success if our metadata became current after all.
      auto now = catalog_->LoadTable(id_);
      if (!now.ok() || *now != *location) {
        return st.WithContext(what_ + ": commit outcome unknown");
      }
      committed = true;
    }
    if (committed) {
      CallHook(CommitPhase::kAfterSwap, attempt);
      PublishVersion(*io_, a.next, *location, version);
      DeleteRemovedMetadataFiles(*io_, base.metadata, a.next, *location);
      return CommitResult{a.snapshot_id, a.sequence_number, *location, attempt, std::move(a.next)};
    }
    // The swap definitively failed, so nothing references this attempt's files.
    (void)io_->Delete(*location);
    delete_attempt_files();
    if (st.code() != ErrorCode::kCommitConflict) {
      Abandon();
      return st.WithContext(what_);
    }
    const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count();
    if (attempt > policy.num_retries || elapsed_ms >= policy.total_timeout_ms) {
      Abandon();
      return st.WithContext(what_ + ": gave up after " + std::to_string(attempt) + " attempts");
    }
    sleep_(policy.WaitMillis(attempt));
    auto reloaded = LoadTable(*catalog_, *io_, id_);
    if (!reloaded.ok()) {
      Abandon();
      return std::move(reloaded).status().WithContext(what_);
    }
    base = std::move(*reloaded);
  }
}

// ---- SnapshotTransaction ------------------------------------------------------------------

SnapshotTransaction::SnapshotTransaction(Catalog* catalog, const io::FileIO* io, TableIdentifier id,
                                         std::string verb, std::string operation)
    : Transaction(catalog, io, std::move(id), std::move(verb)), operation_(std::move(operation)) {}

SnapshotTransaction& SnapshotTransaction::SetSummary(std::string key, std::string value) {
  extra_summary_[std::move(key)] = std::move(value);
  return *this;
}

Status SnapshotTransaction::Prepare(const Table& base) {
  const TableMetadata& m = base.metadata;
  commit_uuid_ = NewUuid();
  spec_id_ = m.default_spec_id;
  snapshot_id_ = NewSnapshotId(m);
  if (added_.empty()) return Status::OK();

  // The new manifest is written once and reused by every attempt: ADDED entries carry no
  // snapshot id or sequence numbers, they inherit them from the manifest list entry.
  ManifestWriteOptions mopts;
  mopts.format_version = m.format_version;
  mopts.snapshot_id = snapshot_id_;
  mopts.schema = m.current_schema();
  mopts.spec = m.default_spec();
  std::vector<ManifestEntry> entries;
  entries.reserve(added_.size());
  for (const DataFile& f : added_) {
    ManifestEntry e;
    e.status = ManifestEntryStatus::kAdded;
    e.data_file = f;
    entries.push_back(std::move(e));
  }
  const std::string path = MetadataDir(m) + ManifestFileName(commit_uuid_, next_manifest_index_++);
  GEOLAKE_ASSIGN_OR_RETURN(EncodedManifest encoded, EncodeManifest(mopts, entries, path));
  GEOLAKE_RETURN_NOT_OK(WriteOnce(*io_, path, encoded.bytes));
  new_manifest_ = std::move(encoded.entry);
  CallHook(CommitPhase::kManifestWritten, 1);
  return Status::OK();
}

SnapshotTransaction& SnapshotTransaction::SetValidation(Validation validation) {
  validation_ = std::move(validation);
  return *this;
}

Status SnapshotTransaction::CheckBeforeSwap(const Table& base) {
  // One stat per added file per attempt: a commit adds tens of files, a few ms at most, and it
  // keeps a commit from publishing a snapshot whose files are gone (every later read of the
  // table would fail).
  for (const DataFile& f : added_) {
    Result<io::FileInfo> info = io_->Stat(f.file_path);
    if (!info.ok()) {
      if (info.status().code() != ErrorCode::kNotFound) return info.status();
      return Status::NotFound("data file '" + f.file_path +
                              "' no longer exists (was it removed as an orphan?); nothing "
                              "committed");
    }
  }
  return validation_ ? validation_(base) : Status::OK();
}

void SnapshotTransaction::Abandon() {
  if (new_manifest_) (void)io_->Delete(new_manifest_->manifest_path);
  new_manifest_.reset();
}

Result<Transaction::Attempt> SnapshotTransaction::Apply(const Table& base, int attempt) {
  Attempt out;
  Status st = ApplyTo(base, attempt, &out);
  if (!st.ok()) {
    // Whatever this attempt wrote before failing is referenced by nothing.
    for (const auto& f : out.files) (void)io_->Delete(f);
    return st;
  }
  return out;
}

Status SnapshotTransaction::ApplyTo(const Table& base, int attempt, Attempt* attempt_out) {
  Attempt& out = *attempt_out;
  const TableMetadata& m = base.metadata;
  if (new_manifest_ && m.default_spec_id != spec_id_) {
    return Status::CommitConflict("the partition spec changed during the commit");
  }
  if (m.SnapshotById(snapshot_id_) != nullptr) snapshot_id_ = NewSnapshotId(m);
  const Snapshot* parent = m.current_snapshot();
  const std::int64_t seq = m.last_sequence_number + 1;
  const SchemaPtr schema = m.current_schema();

  out.snapshot_id = snapshot_id_;
  out.sequence_number = seq;
  std::vector<ManifestFile> previous;
  if (parent != nullptr) {
    GEOLAKE_ASSIGN_OR_RETURN(previous, ReadManifestList(*io_, parent->manifest_list));
  }

  // Find the files to remove among the parent's live entries (re-validated on every attempt:
  // a concurrent rewrite or delete may have removed one already).
  std::vector<ManifestFile> kept;
  std::vector<std::pair<ManifestFile, std::vector<ManifestEntry>>> to_rewrite;
  std::set<std::string> found;
  for (const ManifestFile& mf : previous) {
    // A manifest holding only DELETED entries of an earlier snapshot describes no live file.
    if (mf.added_files_count + mf.existing_files_count == 0 && mf.deleted_files_count > 0) {
      continue;
    }
    if (removed_paths_.empty() || mf.content != ManifestContent::kData) {
      kept.push_back(mf);
      continue;
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<ManifestEntry> entries, ReadManifest(*io_, mf));
    bool hit = false;
    for (const ManifestEntry& e : entries) {
      if (e.status == ManifestEntryStatus::kDeleted) continue;
      if (removed_paths_.count(e.data_file.file_path) != 0) {
        found.insert(e.data_file.file_path);
        hit = true;
      }
    }
    if (hit) {
      to_rewrite.emplace_back(mf, std::move(entries));
    } else {
      kept.push_back(mf);
    }
  }
  missing_paths_.clear();
  for (const std::string& path : removed_paths_) {
    if (found.count(path) == 0) missing_paths_.push_back(path);
  }
  if (!missing_paths_.empty()) {
    const std::string which =
        missing_paths_.size() == 1
            ? "' is"
            : "' and " + std::to_string(missing_paths_.size() - 1) + " more are";
    return Status::CommitConflict("data file '" + missing_paths_.front() + which +
                                  " no longer in the table (removed by another commit?)");
  }
  if (fail_on_delete_files_) {
    // Deletes that may apply to a replaced file change its rows after the rewrite read them
    // (Java: "found new position delete for replaced data file"); without tracking which file a
    // delete applies to, any live delete file refuses the commit.
    for (const ManifestFile& mf : kept) {
      if (mf.content == ManifestContent::kDeletes &&
          mf.added_files_count + mf.existing_files_count > 0) {
        return Status::CommitConflict("the table has delete files (manifest '" + mf.manifest_path +
                                      "'): the replaced rows may have changed");
      }
    }
  }

  // Rewrite the manifests that hold a removed file: removed → DELETED (by this snapshot), the
  // others → EXISTING with their numbers made explicit (ReadManifest inherited them). Entries
  // carry everything they need, so manifests of one partition spec are merged, as Java's
  // manifest merging does, up to `commit.manifest.target-size-bytes` of old manifests each: a
  // compaction of files from 100 ingests writes one manifest, not 100 (each a write, an fsync
  // and a directory fsync, and a file every later scan opens).
  const std::int64_t merge_bytes = m.PropertyAsInt("commit.manifest.target-size-bytes", 8LL << 20);
  std::stable_sort(to_rewrite.begin(), to_rewrite.end(), [](const auto& a, const auto& b) {
    return a.first.partition_spec_id < b.first.partition_spec_id;
  });
  std::set<std::string> partitions;
  std::int64_t deleted_records = 0, removed_size = 0;
  std::vector<ManifestFile> rewritten;
  std::vector<ManifestEntry> next_entries;
  for (std::size_t i = 0; i < to_rewrite.size();) {
    const std::int32_t spec_id = to_rewrite[i].first.partition_spec_id;
    const PartitionSpecPtr spec = m.SpecById(spec_id);
    if (spec == nullptr) {
      return Status::CorruptData("manifest '" + to_rewrite[i].first.manifest_path +
                                 "': unknown partition spec " + std::to_string(spec_id));
    }
    GEOLAKE_ASSIGN_OR_RETURN(TypePtr partition_type, spec->PartitionType(*schema));
    next_entries.clear();
    std::int64_t merged_bytes = 0;
    for (; i < to_rewrite.size() && to_rewrite[i].first.partition_spec_id == spec_id; ++i) {
      auto& [mf, entries] = to_rewrite[i];
      if (merged_bytes > 0 && merged_bytes + mf.manifest_length > merge_bytes) break;
      merged_bytes += std::max<std::int64_t>(mf.manifest_length, 1);
      for (ManifestEntry& e : entries) {
        if (e.status == ManifestEntryStatus::kDeleted) continue;  // only its own snapshot's news
        if (removed_paths_.count(e.data_file.file_path) != 0) {
          e.status = ManifestEntryStatus::kDeleted;
          e.snapshot_id = snapshot_id_;
          deleted_records += e.data_file.record_count;
          removed_size += e.data_file.file_size_in_bytes;
          partitions.insert(std::to_string(spec->spec_id()) + ":" +
                            PartitionKey(*partition_type, e.data_file));
        } else {
          e.status = ManifestEntryStatus::kExisting;
        }
        next_entries.push_back(std::move(e));
      }
    }
    ManifestWriteOptions mopts;
    mopts.format_version = m.format_version;
    mopts.snapshot_id = snapshot_id_;
    mopts.sequence_number = seq;
    mopts.schema = schema;
    mopts.spec = spec;
    const std::string path =
        MetadataDir(m) + ManifestFileName(commit_uuid_, next_manifest_index_++);
    GEOLAKE_ASSIGN_OR_RETURN(EncodedManifest encoded, EncodeManifest(mopts, next_entries, path));
    GEOLAKE_RETURN_NOT_OK(WriteOnce(*io_, path, encoded.bytes));
    out.files.push_back(path);
    rewritten.push_back(std::move(encoded.entry));
  }

  // The manifest list: ours first, then the rewritten manifests, then the untouched ones.
  std::vector<ManifestFile> manifests;
  std::optional<std::int64_t> first_row_id;
  std::int64_t assigned_rows = 0;
  if (m.format_version >= 3) first_row_id = m.next_row_id.value_or(0);
  std::int64_t added_records = 0, added_size = 0;
  if (new_manifest_) {
    ManifestFile ours = *new_manifest_;
    ours.sequence_number = seq;
    ours.min_sequence_number = seq;
    ours.added_snapshot_id = snapshot_id_;
    if (first_row_id) {
      // v3: only the new manifest's rows get fresh row ids; rewritten manifests keep the ids
      // their entries already carry explicitly.
      ours.first_row_id = first_row_id;
      assigned_rows = ours.added_rows_count + ours.existing_rows_count;
    }
    manifests.push_back(std::move(ours));
    GEOLAKE_ASSIGN_OR_RETURN(TypePtr partition_type, m.default_spec()->PartitionType(*schema));
    for (const DataFile& f : added_) {
      partitions.insert(std::to_string(spec_id_) + ":" + PartitionKey(*partition_type, f));
      added_records += f.record_count;
      added_size += f.file_size_in_bytes;
    }
  }
  manifests.insert(manifests.end(), rewritten.begin(), rewritten.end());
  manifests.insert(manifests.end(), kept.begin(), kept.end());

  const std::string list_path =
      MetadataDir(m) + ManifestListFileName(snapshot_id_, attempt, commit_uuid_);
  GEOLAKE_ASSIGN_OR_RETURN(
      std::string list_bytes,
      EncodeManifestList(m.format_version, snapshot_id_,
                         parent ? std::optional(parent->snapshot_id) : std::nullopt, seq,
                         first_row_id, manifests));
  GEOLAKE_RETURN_NOT_OK(WriteOnce(*io_, list_path, list_bytes));
  out.files.push_back(list_path);
  CallHook(CommitPhase::kManifestListWritten, attempt);

  Snapshot snap;
  snap.snapshot_id = snapshot_id_;
  if (parent) snap.parent_snapshot_id = parent->snapshot_id;
  snap.sequence_number = seq;
  snap.timestamp_ms = std::max(NowMillis(), m.last_updated_ms);
  snap.manifest_list = list_path;
  snap.schema_id = m.current_schema_id;
  if (first_row_id) {
    snap.first_row_id = first_row_id;
    snap.added_rows = assigned_rows;
  }
  auto& s = snap.summary;
  s = extra_summary_;
  s["operation"] = operation_;
  // Counts that are zero are left out, as Java's SnapshotSummary does.
  auto put_positive = [&](const char* key, std::int64_t value) {
    if (value > 0) s[key] = std::to_string(value);
  };
  const auto added_files = static_cast<std::int64_t>(added_.size());
  const auto removed_files = static_cast<std::int64_t>(found.size());
  put_positive("added-data-files", added_files);
  put_positive("deleted-data-files", removed_files);
  put_positive("added-records", added_records);
  put_positive("deleted-records", deleted_records);
  put_positive("added-files-size", added_size);
  put_positive("removed-files-size", removed_size);
  s["changed-partition-count"] = std::to_string(partitions.size());
  s["manifests-created"] = std::to_string(rewritten.size() + (new_manifest_ ? 1 : 0));
  s["manifests-kept"] = std::to_string(kept.size());
  s["manifests-replaced"] = std::to_string(to_rewrite.size());
  // Totals continue the parent's; a total the parent lacks stays unknown (Java's rule).
  auto total = [&](const char* key, std::int64_t delta) {
    std::int64_t prev = 0;
    if (parent != nullptr) {
      auto it = parent->summary.find(key);
      if (it == parent->summary.end()) return;
      prev = std::strtoll(it->second.c_str(), nullptr, 10);
    }
    s[key] = std::to_string(prev + delta);
  };
  total("total-records", added_records - deleted_records);
  total("total-files-size", added_size - removed_size);
  total("total-data-files", added_files - removed_files);
  total("total-delete-files", 0);
  total("total-position-deletes", 0);
  total("total-equality-deletes", 0);

  TableMetadataBuilder builder(m, base.metadata_location);
  GEOLAKE_RETURN_NOT_OK(builder.AddSnapshot(snap));
  GEOLAKE_RETURN_NOT_OK(builder.SetBranchSnapshot(snapshot_id_));
  GEOLAKE_ASSIGN_OR_RETURN(out.next, builder.Build(snap.timestamp_ms));
  return Status::OK();
}

// ---- The concrete transactions ------------------------------------------------------------

AppendFiles::AppendFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id)
    : SnapshotTransaction(catalog, io, std::move(id), "append to", "append") {}

AppendFiles& AppendFiles::AddFile(DataFile file) {
  added_.push_back(std::move(file));
  return *this;
}

ReplaceFiles::ReplaceFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id)
    : SnapshotTransaction(catalog, io, std::move(id), "replace files in", "replace") {}

ReplaceFiles& ReplaceFiles::DeleteFile(std::string path) {
  removed_paths_.insert(std::move(path));
  return *this;
}

ReplaceFiles& ReplaceFiles::AddFile(DataFile file) {
  added_.push_back(std::move(file));
  return *this;
}

ReplaceFiles& ReplaceFiles::FailOnDeleteFiles() {
  fail_on_delete_files_ = true;
  return *this;
}

Status ReplaceFiles::Prepare(const Table& base) {
  if (removed_paths_.empty()) return Status::InvalidArgument("no data file to replace");
  for (const DataFile& f : added_) {
    if (removed_paths_.count(f.file_path) != 0) {
      return Status::InvalidArgument("data file '" + f.file_path + "' is both added and removed");
    }
  }
  return SnapshotTransaction::Prepare(base);
}

DeleteFiles::DeleteFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id)
    : SnapshotTransaction(catalog, io, std::move(id), "delete files from", "delete") {}

DeleteFiles& DeleteFiles::DeleteFile(std::string path) {
  removed_paths_.insert(std::move(path));
  return *this;
}

Status DeleteFiles::Prepare(const Table& base) {
  if (removed_paths_.empty()) return Status::InvalidArgument("no data file to delete");
  return SnapshotTransaction::Prepare(base);
}

SetProperties::SetProperties(Catalog* catalog, const io::FileIO* io, TableIdentifier id)
    : Transaction(catalog, io, std::move(id), "set properties of") {}

SetProperties& SetProperties::Set(std::string key, std::string value) {
  updates_[std::move(key)] = std::move(value);
  return *this;
}

SetProperties& SetProperties::Remove(std::string key) {
  removals_.push_back(std::move(key));
  return *this;
}

Status SetProperties::Prepare(const Table&) {
  // Java keeps these out of the persisted properties (Iceberg spec, "Reserved table properties"):
  // they are derived.
  static constexpr std::string_view kReserved[] = {
      "format-version",           "uuid",
      "snapshot-count",           "current-snapshot-id",
      "current-snapshot-summary", "current-snapshot-timestamp-ms",
      "current-schema",           "default-partition-spec",
      "default-sort-order"};
  auto check = [&](const std::string& key) -> Status {
    if (key.empty()) return Status::InvalidArgument("empty property key");
    for (std::string_view r : kReserved) {
      if (key == r) return Status::InvalidArgument("property '" + key + "' is reserved");
    }
    return Status::OK();
  };
  for (const auto& [key, value] : updates_) GEOLAKE_RETURN_NOT_OK(check(key));
  if (auto codec = updates_.find("write.metadata.compression-codec"); codec != updates_.end()) {
    GEOLAKE_RETURN_NOT_OK(MetadataCompressionIsGzip({*codec}).status());
  }
  for (const auto& key : removals_) {
    GEOLAKE_RETURN_NOT_OK(check(key));
    if (updates_.count(key) != 0) {
      return Status::InvalidArgument("property '" + key + "' is both set and removed");
    }
  }
  return Status::OK();
}

Result<Transaction::Attempt> SetProperties::Apply(const Table& base, int) {
  TableMetadataBuilder builder(base.metadata, base.metadata_location);
  builder.SetProperties(updates_).RemoveProperties(removals_);
  Attempt out;
  GEOLAKE_ASSIGN_OR_RETURN(out.next, builder.Build());
  out.snapshot_id = out.next.current_snapshot_id.value_or(0);
  out.sequence_number = out.next.last_sequence_number;
  return out;
}

RemoveSnapshots::RemoveSnapshots(Catalog* catalog, const io::FileIO* io, TableIdentifier id,
                                 Selector select)
    : Transaction(catalog, io, std::move(id), "expire snapshots of"), select_(std::move(select)) {}

Result<Transaction::Attempt> RemoveSnapshots::Apply(const Table& base, int) {
  GEOLAKE_ASSIGN_OR_RETURN(removed_, select_(base.metadata));
  TableMetadataBuilder builder(base.metadata, base.metadata_location);
  GEOLAKE_RETURN_NOT_OK(builder.RemoveRefs(removed_.refs));
  GEOLAKE_RETURN_NOT_OK(builder.RemoveSnapshots(removed_.snapshot_ids));
  Attempt out;
  GEOLAKE_ASSIGN_OR_RETURN(out.next, builder.Build());
  out.snapshot_id = out.next.current_snapshot_id.value_or(0);
  out.sequence_number = out.next.last_sequence_number;
  applied_base_ = base.metadata;
  return out;
}

}  // namespace geolake::table
