#include "geolake/maintenance/expire.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/thread_pool.h"
#include "geolake/table/manifest.h"
#include "geolake/table/transaction.h"

namespace geolake::maintenance {
namespace {

// The data and delete files of one manifest: path, size, and whether the entry is live.
struct ManifestContent {
  struct File {
    std::string path;
    std::int64_t bytes = 0;
    bool live = false;
  };
  std::vector<File> files;
};

// Reads manifest lists and manifests once per run: the check before the commit reads the whole
// table, the cleanup after it then reads only what a concurrent commit added.
class ManifestCache {
 public:
  explicit ManifestCache(const io::FileIO& io) : io_(io) {}

  Result<const std::vector<table::ManifestFile>*> List(const table::Snapshot& snapshot) {
    if (snapshot.manifest_list.empty()) {
      return Status::NotImplemented("snapshot " + std::to_string(snapshot.snapshot_id) +
                                    " has no manifest list (format v1)");
    }
    auto it = lists_.find(snapshot.manifest_list);
    if (it == lists_.end()) {
      auto list = table::ReadManifestList(io_, snapshot.manifest_list);
      if (!list.ok()) {
        return Status::CorruptData("manifest list '" + snapshot.manifest_list +
                                   "' cannot be read: " + list.status().ToString());
      }
      it = lists_.emplace(snapshot.manifest_list, std::move(*list)).first;
    }
    return &it->second;
  }

  Result<const ManifestContent*> Manifest(const table::ManifestFile& manifest) {
    auto it = manifests_.find(manifest.manifest_path);
    if (it == manifests_.end()) {
      auto entries = table::ReadManifest(io_, manifest);
      if (!entries.ok()) {
        return Status::CorruptData("manifest '" + manifest.manifest_path +
                                   "' cannot be read: " + entries.status().ToString());
      }
      ManifestContent content;
      content.files.reserve(entries->size());
      for (const table::ManifestEntry& e : *entries) {
        content.files.push_back({e.data_file.file_path, e.data_file.file_size_in_bytes,
                                 e.status != table::ManifestEntryStatus::kDeleted});
      }
      it = manifests_.emplace(manifest.manifest_path, std::move(content)).first;
    }
    return &it->second;
  }

  // Every manifest list and manifest of `metadata` readable, or the first that is not;
  // kCancelled once `stop` is requested.
  Status CheckAll(const table::TableMetadata& metadata, const std::stop_token& stop) {
    for (const table::Snapshot& s : metadata.snapshots) {
      GEOLAKE_ASSIGN_OR_RETURN(const std::vector<table::ManifestFile>* list, List(s));
      for (const table::ManifestFile& mf : *list) {
        if (stop.stop_requested()) return Status::Cancelled("stopped before the commit");
        GEOLAKE_RETURN_NOT_OK(Manifest(mf).status());
      }
    }
    return Status::OK();
  }

 private:
  const io::FileIO& io_;
  std::map<std::string, std::vector<table::ManifestFile>> lists_;
  std::map<std::string, ManifestContent> manifests_;
};

// The `statistics-path` of each entry of a statistics / partition-statistics array.
std::set<std::string> StatisticsPaths(const std::string& json_text) {
  std::set<std::string> out;
  if (json_text.empty()) return out;
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const auto& item : j) {
    if (!item.is_object()) continue;
    const auto it = item.find("statistics-path");
    if (it != item.end() && it->is_string()) out.insert(it->get<std::string>());
  }
  return out;
}

enum class FileKind : std::uint8_t { kData, kManifest, kManifestList, kStatistics };

struct Doomed {
  std::string path;
  FileKind kind = FileKind::kData;
  std::int64_t bytes = 0;  // -1: unknown until stat
};

// What the snapshots in `before` but not in `after` reach and no snapshot of `after` does.
// Fills report->data_files_kept and returns kCorruptData (with the files that are safe to
// delete regardless) when a retained manifest cannot be read.
Result<std::vector<Doomed>> FilesToDelete(ManifestCache& cache, const table::TableMetadata& before,
                                          const table::TableMetadata& after, Status* partial,
                                          std::string* data_files_kept) {
  std::set<std::int64_t> kept_ids;
  for (const table::Snapshot& s : after.snapshots) kept_ids.insert(s.snapshot_id);

  // Retained manifests: every manifest a retained snapshot's list names.
  std::set<std::string> retained_lists;
  std::map<std::string, const table::ManifestFile*> retained_manifests;
  for (const table::Snapshot& s : after.snapshots) {
    auto list = cache.List(s);
    if (!list.ok()) {
      return list.status().WithContext("a retained snapshot cannot be read; nothing deleted");
    }
    retained_lists.insert(s.manifest_list);
    for (const table::ManifestFile& mf : **list) retained_manifests[mf.manifest_path] = &mf;
  }

  std::vector<Doomed> out;
  std::map<std::string, const table::ManifestFile*> candidates;
  for (const table::Snapshot& s : before.snapshots) {
    if (kept_ids.count(s.snapshot_id) != 0) continue;
    GEOLAKE_ASSIGN_OR_RETURN(const std::vector<table::ManifestFile>* list,
                             cache.List(s).WithContext("an expired snapshot; nothing deleted"));
    if (retained_lists.count(s.manifest_list) == 0) {
      out.push_back({s.manifest_list, FileKind::kManifestList, -1});
    }
    for (const table::ManifestFile& mf : *list) {
      if (retained_manifests.count(mf.manifest_path) == 0) candidates[mf.manifest_path] = &mf;
    }
  }
  // The data files of candidate manifests (any status: a DELETED entry names a file some
  // older snapshot held), minus those a retained manifest holds live.
  std::map<std::string, std::int64_t> data;
  for (const auto& [path, mf] : candidates) {
    GEOLAKE_ASSIGN_OR_RETURN(
        const ManifestContent* content,
        cache.Manifest(*mf).WithContext("an expired manifest; nothing deleted"));
    out.push_back({path, FileKind::kManifest, mf->manifest_length});
    for (const ManifestContent::File& f : content->files) data.emplace(f.path, f.bytes);
  }
  if (!data.empty()) {
    Status unreadable;
    for (const auto& [path, mf] : retained_manifests) {
      auto content = cache.Manifest(*mf);
      if (!content.ok()) {
        unreadable = content.status();
        break;
      }
      for (const ManifestContent::File& f : (*content)->files) {
        if (f.live) data.erase(f.path);
      }
    }
    if (!unreadable.ok()) {
      *data_files_kept = std::to_string(data.size()) +
                         " data files may be due but none is deleted: a retained " +
                         unreadable.message();
      *partial = Status::CorruptData(*data_files_kept);
      data.clear();
    }
  }
  for (const auto& [path, bytes] : data) out.push_back({path, FileKind::kData, bytes});

  // Statistics files no longer listed.
  std::set<std::string> stats_after = StatisticsPaths(after.statistics_json);
  for (const std::string& p : StatisticsPaths(after.partition_statistics_json)) {
    stats_after.insert(p);
  }
  std::set<std::string> stats_before = StatisticsPaths(before.statistics_json);
  for (const std::string& p : StatisticsPaths(before.partition_statistics_json)) {
    stats_before.insert(p);
  }
  for (const std::string& p : stats_before) {
    if (stats_after.count(p) == 0) out.push_back({p, FileKind::kStatistics, -1});
  }
  return out;
}

void Count(const Doomed& d, ExpireReport* report) {
  switch (d.kind) {
    case FileKind::kData:
      ++report->deleted_data_files;
      break;
    case FileKind::kManifest:
      ++report->deleted_manifests;
      break;
    case FileKind::kManifestList:
      ++report->deleted_manifest_lists;
      break;
    case FileKind::kStatistics:
      ++report->deleted_statistics_files;
      break;
  }
  report->deleted_bytes += std::max<std::int64_t>(d.bytes, 0);
  report->deleted.push_back(d.path);
}

// The metadata `base` would have with `selection` applied (for dry runs and the checks).
Result<table::TableMetadata> Apply(const table::TableMetadata& base,
                                   const ExpireSelection& selection) {
  table::TableMetadataBuilder b(base, "");
  GEOLAKE_RETURN_NOT_OK(b.RemoveRefs(selection.refs_removed));
  GEOLAKE_RETURN_NOT_OK(b.RemoveSnapshots(
      std::set<std::int64_t>(selection.expired.begin(), selection.expired.end())));
  return b.current();
}

}  // namespace

Result<ExpireSelection> SelectSnapshotsToExpire(const table::TableMetadata& metadata,
                                                const ExpireOptions& options, std::int64_t now_ms) {
  ExpireSelection out;
  out.retain_last = options.retain_last.value_or(
      metadata.PropertyAsInt("history.expire.min-snapshots-to-keep", kDefaultMinSnapshotsToKeep));
  if (out.retain_last < 1) {
    return Status::InvalidArgument("retain-last " + std::to_string(out.retain_last) +
                                   ": the number of snapshots to retain must be at least 1");
  }
  const std::int64_t max_age =
      metadata.PropertyAsInt("history.expire.max-snapshot-age-ms", kDefaultMaxSnapshotAgeMs);
  out.cutoff_ms = options.older_than_ms.value_or(now_ms - max_age);
  const std::int64_t max_ref_age = metadata.PropertyAsInt("history.expire.max-ref-age-ms",
                                                          std::numeric_limits<std::int64_t>::max());

  std::set<std::int64_t> keep;
  std::set<std::int64_t> on_branch;  // every ancestor of a retained branch
  for (const auto& [name, ref] : metadata.refs) {
    const table::Snapshot* head = metadata.SnapshotById(ref.snapshot_id);
    if (name != table::kMainBranch) {
      const std::int64_t limit = ref.max_ref_age_ms.value_or(max_ref_age);
      if (head == nullptr || (head->timestamp_ms < now_ms && now_ms - head->timestamp_ms > limit)) {
        out.refs_removed.push_back(name);
        continue;
      }
    }
    if (head == nullptr) continue;
    keep.insert(head->snapshot_id);
    if (!ref.is_branch) continue;
    const std::int64_t min_keep = ref.min_snapshots_to_keep.value_or(out.retain_last);
    const std::int64_t cutoff =
        ref.max_snapshot_age_ms ? now_ms - *ref.max_snapshot_age_ms : out.cutoff_ms;
    std::int64_t kept = 0;
    bool walking = true;
    for (const table::Snapshot* s = head; s != nullptr;
         s = s->parent_snapshot_id ? metadata.SnapshotById(*s->parent_snapshot_id) : nullptr) {
      if (!on_branch.insert(s->snapshot_id).second && !walking) break;
      if (walking && (kept < min_keep || s->timestamp_ms >= cutoff)) {
        keep.insert(s->snapshot_id);
        ++kept;
      } else {
        walking = false;
      }
    }
  }
  std::vector<const table::Snapshot*> expired;
  for (const table::Snapshot& s : metadata.snapshots) {
    if (keep.count(s.snapshot_id) != 0) continue;
    // Not on any branch nor tagged (staged, rolled back): kept while younger than the cutoff.
    if (on_branch.count(s.snapshot_id) == 0 && s.timestamp_ms >= out.cutoff_ms) continue;
    expired.push_back(&s);
  }
  std::stable_sort(expired.begin(), expired.end(),
                   [](const table::Snapshot* a, const table::Snapshot* b) {
                     return a->timestamp_ms < b->timestamp_ms;
                   });
  for (const table::Snapshot* s : expired) out.expired.push_back(s->snapshot_id);
  out.retained = static_cast<std::int64_t>(metadata.snapshots.size() - expired.size());
  return out;
}

Result<ExpireReport> ExpireSnapshots(table::Catalog& catalog, const io::FileIO& io,
                                     const table::TableIdentifier& id, const ExpireOptions& options,
                                     std::stop_token stop) {
  const std::string what = "expire snapshots of '" + id.ToString() + "'";
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(catalog, io, id));
  const auto gc = t.metadata.properties.find("gc.enabled");
  if (gc != t.metadata.properties.end() && (gc->second == "false" || gc->second == "FALSE")) {
    return Status::InvalidArgument(what +
                                   ": GC is disabled (gc.enabled=false; deleting files may "
                                   "corrupt other tables)");
  }
  const std::int64_t now = options.now_ms != 0 ? options.now_ms : table::NowMillis();
  ExpireReport report;
  report.dry_run = options.dry_run;
  GEOLAKE_ASSIGN_OR_RETURN(report.selection,
                           SelectSnapshotsToExpire(t.metadata, options, now).WithContext(what));
  if (report.selection.expired.empty() && report.selection.refs_removed.empty()) return report;

  // A damaged table is refused before anything changes.
  ManifestCache cache(io);
  GEOLAKE_RETURN_NOT_OK(cache.CheckAll(t.metadata, stop).WithContext(what + ": nothing changed"));
  if (stop.stop_requested()) return Status::Cancelled(what + ": stopped before the commit");

  table::TableMetadata before = t.metadata;
  table::TableMetadata after;
  if (options.dry_run) {
    GEOLAKE_ASSIGN_OR_RETURN(after, Apply(t.metadata, report.selection).WithContext(what));
  } else {
    ExpireSelection chosen;
    table::RemoveSnapshots tx(
        &catalog, &io, id, [&](const table::TableMetadata& base) -> Result<table::SnapshotRemoval> {
          GEOLAKE_ASSIGN_OR_RETURN(chosen, SelectSnapshotsToExpire(base, options, now));
          table::SnapshotRemoval removal;
          removal.snapshot_ids.insert(chosen.expired.begin(), chosen.expired.end());
          removal.refs = chosen.refs_removed;
          return removal;
        });
    GEOLAKE_ASSIGN_OR_RETURN(table::CommitResult committed, tx.Commit());
    report.selection = chosen;
    report.metadata_location = committed.metadata_location;
    report.commit_attempts = committed.attempts;
    before = tx.applied_base();
    after = std::move(committed.metadata);
    if (options.hook) options.hook(ExpirePoint::kAfterCommit);
  }

  Status partial;
  auto doomed = FilesToDelete(cache, before, after, &partial, &report.data_files_kept);
  if (!doomed.ok()) {
    report.status = doomed.status().WithContext(what);
    return report;
  }
  // Sizes of the files the manifests do not state.
  for (Doomed& d : *doomed) {
    if (d.bytes >= 0) continue;
    auto info = io.Stat(d.path);
    d.bytes = info.ok() ? static_cast<std::int64_t>(info->size_bytes) : 0;
  }
  std::sort(doomed->begin(), doomed->end(),
            [](const Doomed& a, const Doomed& b) { return a.path < b.path; });

  if (!options.dry_run) {
    std::vector<char> gone(doomed->size(), 0);
    auto remove = [&](std::int64_t i) -> Status {
      const Doomed& d = (*doomed)[static_cast<std::size_t>(i)];
      Status st = io.Delete(d.path);
      if (st.ok() || st.code() == ErrorCode::kNotFound) {
        gone[static_cast<std::size_t>(i)] = 1;
      } else {
        GEOLAKE_LOG_WARN("expire-snapshots: cannot delete '{}': {}", d.path, st.ToString());
      }
      return Status::OK();
    };
    const auto n = static_cast<std::int64_t>(doomed->size());
    Status st;
    if (options.executor != nullptr) {
      st = options.executor->ParallelFor(n, remove, stop);
    } else {
      for (std::int64_t i = 0; i < n && st.ok(); ++i) {
        st = stop.stop_requested() ? Status::Cancelled("stopped") : remove(i);
      }
    }
    for (std::size_t i = 0; i < doomed->size(); ++i) {
      if (gone[i] != 0) {
        Count((*doomed)[i], &report);
      } else if (st.ok()) {
        ++report.delete_failures;
      }
    }
    if (!st.ok()) {
      report.status = st.WithContext(what + ": committed; the files not yet deleted are orphans");
      return report;
    }
    if (report.delete_failures > 0) {
      report.status = Status::IOError(what + ": " + std::to_string(report.delete_failures) +
                                      " files could not be deleted (orphans now)");
    }
  } else {
    for (const Doomed& d : *doomed) Count(d, &report);
  }
  if (report.status.ok() && !partial.ok()) report.status = partial.WithContext(what);
  return report;
}

}  // namespace geolake::maintenance
