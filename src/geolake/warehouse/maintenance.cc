// The Warehouse's table maintenance beyond compact and remove-orphans: expire-snapshots and
// rewrite-manifests, and maintain (a policy's thresholds measured, then the crossed tasks run
// through the methods above). Each fills the module's engine fields from the Warehouse, as every
// operation method does (warehouse.cc), and records its counters.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "geolake/core/units.h"
#include "geolake/geolake.h"
#include "geolake/layout/table_layout.h"

namespace geolake {

Result<maintenance::ExpireReport> Warehouse::ExpireSnapshots(std::string_view table,
                                                             maintenance::ExpireOptions options) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(table));
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  options.executor = executor_.get();
  Result<maintenance::ExpireReport> report =
      maintenance::ExpireSnapshots(*catalog, *io_, id, options, stop_token());
  const bool stopped = stop_->stop_requested();
  const std::string cancelled = "expire-snapshots '" + id.ToString() + "' cancelled";
  if (!report.ok()) {
    if (stopped && report.status().code() == ErrorCode::kCancelled) {
      return StopStatus().WithContext(cancelled);
    }
    return report;
  }
  maintenance::ExpireReport& r = *report;
  if (stopped && r.status.code() == ErrorCode::kCancelled) {
    r.status = StopStatus().WithContext(
        cancelled + "; the expiry is committed, the files not yet deleted are orphans");
  }
  metrics_.counter("expire.snapshots_retained")->Add(r.selection.retained);
  if (!r.dry_run) {
    metrics_.counter("expire.snapshots_expired")
        ->Add(static_cast<std::int64_t>(r.selection.expired.size()));
    metrics_.counter("expire.data_files_deleted")->Add(r.deleted_data_files);
    metrics_.counter("expire.manifests_deleted")->Add(r.deleted_manifests);
    metrics_.counter("expire.manifest_lists_deleted")->Add(r.deleted_manifest_lists);
    metrics_.counter("expire.statistics_files_deleted")->Add(r.deleted_statistics_files);
    metrics_.counter("expire.bytes_deleted")->Add(r.deleted_bytes);
    metrics_.counter("expire.delete_failures")->Add(r.delete_failures);
  }
  return report;
}

Result<maintenance::RewriteManifestsReport> Warehouse::RewriteManifests(
    std::string_view table, maintenance::RewriteManifestsOptions options) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(table));
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  Result<maintenance::RewriteManifestsReport> report =
      maintenance::RewriteManifests(*catalog, *io_, id, options, stop_token());
  if (!report.ok()) {
    if (stop_->stop_requested() && report.status().code() == ErrorCode::kCancelled) {
      return StopStatus().WithContext("rewrite-manifests '" + id.ToString() +
                                      "' cancelled; nothing committed");
    }
    return report;
  }
  const maintenance::RewriteManifestsReport& r = *report;
  metrics_.counter("rewrite_manifests.manifests_before")->Add(r.plan.input_manifests);
  metrics_.counter("rewrite_manifests.bytes_before")->Add(r.plan.input_bytes);
  metrics_.counter("rewrite_manifests.entries")->Add(r.plan.live_entries);
  if (!r.dry_run && !r.noop) {
    metrics_.counter("rewrite_manifests.manifests_after")
        ->Add(static_cast<std::int64_t>(r.plan.manifests.size()) + r.manifests_kept);
    metrics_.counter("rewrite_manifests.manifests_written")
        ->Add(static_cast<std::int64_t>(r.plan.manifests.size()));
    metrics_.counter("rewrite_manifests.bytes_after")->Add(r.output_bytes);
    metrics_.counter("rewrite_manifests.deleted_entries_dropped")->Add(r.plan.deleted_entries);
    metrics_.counter("rewrite_manifests.commit_attempts")->Add(r.commit_attempts);
  }
  return report;
}

namespace {

constexpr std::int64_t kDayMs = std::int64_t{24} * 3600 * 1000;

std::string Property(const table::TableMetadata& m, std::string_view key) {
  auto it = m.properties.find(std::string(key));
  return it == m.properties.end() ? std::string() : it->second;
}

// A metadata version's own file, NNNNN-<uuid>[.gz].metadata.json; its published second name
// v<N>[.gz].metadata.json (table/transaction.h) is not counted again.
bool IsMetadataVersionFile(std::string_view path) {
  std::string_view name = path.substr(path.find_last_of('/') + 1);
  if (!name.ends_with(".metadata.json")) return false;
  return !(name.size() > 1 && name[0] == 'v' && name[1] >= '0' && name[1] <= '9');
}

maintenance::CompactOptions PolicyCompactOptions(const maintenance::MaintenancePolicy& policy) {
  maintenance::CompactOptions o;
  o.strategy = policy.compaction_strategy;
  o.plan.target_file_size_bytes = policy.target_file_size_bytes;
  o.max_concurrent_groups = policy.max_concurrent_compactions;
  o.partial_progress = true;  // beside running ingests: finished groups commit as they go
  return o;
}

maintenance::ExpireOptions PolicyExpireOptions(const maintenance::MaintenancePolicy& policy,
                                               std::int64_t now_ms) {
  maintenance::ExpireOptions o;
  o.now_ms = now_ms;
  o.older_than_ms = now_ms - policy.retention_days * kDayMs;
  o.retain_last = policy.min_snapshots_to_keep;
  return o;
}

maintenance::OrphanOptions PolicyOrphanOptions(const maintenance::MaintenancePolicy& policy,
                                               std::int64_t now_ms) {
  maintenance::OrphanOptions o;
  o.older_than = std::chrono::hours(policy.orphan_min_age_hours);
  o.now_ms = now_ms;
  return o;
}

}  // namespace

Result<maintenance::TableMeasurement> Warehouse::MeasureForPolicy(
    std::string_view table, const maintenance::MaintenancePolicy& policy, std::int64_t now_ms) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, LoadTable(table));
  maintenance::TableMeasurement m;
  m.table = t.id.ToString();
  m.crs = Property(t.metadata, layout::kCrsProperty);
  if (std::optional<std::string> mismatch = maintenance::CrsMismatch(policy, m.table, m.crs)) {
    return Status::InvalidArgument(*mismatch);
  }
  if (now_ms == 0) now_ms = table::NowMillis();

  // Data files, against the sizes the compaction would use.
  maintenance::CompactOptions compact = PolicyCompactOptions(policy);
  compact.dry_run = true;
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::CompactReport plan, Compact(m.table, compact));
  m.target_file_size_bytes = plan.plan.sizes.target;
  m.min_file_size_bytes = plan.plan.sizes.min;
  m.compaction_groups = static_cast<std::int64_t>(plan.plan.groups.size());
  if (t.metadata.current_snapshot_id) {
    GEOLAKE_ASSIGN_OR_RETURN(
        std::vector<maintenance::ScanFile> files,
        maintenance::LiveDataFiles(*io_, t.metadata, *t.metadata.current_snapshot_id));
    for (const maintenance::ScanFile& f : files) {
      ++m.live_files;
      m.live_bytes += f.file.file_size_in_bytes;
      if (f.file.file_size_in_bytes < m.min_file_size_bytes) ++m.small_files;
    }
  }

  // Manifests of the current snapshot (the rewrite's own count).
  maintenance::RewriteManifestsOptions rewrite;
  rewrite.dry_run = true;
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  GEOLAKE_ASSIGN_OR_RETURN(
      maintenance::RewriteManifestsReport manifests,
      maintenance::RewriteManifests(*catalog, *io_, t.id, rewrite, stop_token()));
  m.manifests = manifests.plan.input_manifests;

  // Snapshots.
  m.snapshots = static_cast<std::int64_t>(t.metadata.snapshots.size());
  for (const table::Snapshot& s : t.metadata.snapshots) {
    m.oldest_snapshot_age_ms = std::max(m.oldest_snapshot_age_ms, now_ms - s.timestamp_ms);
  }
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::ExpireSelection selection,
                           maintenance::SelectSnapshotsToExpire(
                               t.metadata, PolicyExpireOptions(policy, now_ms), now_ms));
  m.expirable_snapshots = static_cast<std::int64_t>(selection.expired.size());

  // Metadata files, against what the metadata log keeps.
  const std::string versions = Property(t.metadata, "write.metadata.previous-versions-max");
  if (!versions.empty()) {
    try {
      m.previous_versions_max = std::stoll(versions);
    } catch (...) {
      return Status::InvalidArgument("table '" + m.table +
                                     "': write.metadata.previous-versions-max is '" + versions +
                                     "', not an integer");
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::string location,
                           maintenance::NormalizeLocalPath(t.metadata.location));
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<io::FileInfo> listing, io_->List(location + "/metadata"));
  m.metadata_files = std::count_if(listing.begin(), listing.end(), [](const io::FileInfo& f) {
    return IsMetadataVersionFile(f.path);
  });

  // Orphans old enough to remove.
  maintenance::OrphanOptions orphans = PolicyOrphanOptions(policy, now_ms);
  orphans.dry_run = true;
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::OrphanReport found, RemoveOrphans(m.table, orphans));
  m.orphan_files = static_cast<std::int64_t>(found.removed.size());
  m.orphan_bytes = found.removed_bytes;
  return m;
}

Result<maintenance::MaintainReport> Warehouse::Maintain(
    std::string_view table, const maintenance::MaintenancePolicy& policy,
    const maintenance::MaintainOptions& options) {
  maintenance::MaintainReport report;
  report.dry_run = options.dry_run;
  const std::int64_t now_ms = options.now_ms != 0 ? options.now_ms : table::NowMillis();
  GEOLAKE_ASSIGN_OR_RETURN(report.measurement, MeasureForPolicy(table, policy, now_ms));
  const maintenance::TableMeasurement& m = report.measurement;
  report.decisions = maintenance::Decide(policy, m);
  metrics_.counter("maintain.tables")->Add(1);
  metrics_.counter("maintain.live_files")->Add(m.live_files);
  metrics_.counter("maintain.small_files")->Add(m.small_files);
  metrics_.counter("maintain.manifests")->Add(m.manifests);
  metrics_.counter("maintain.snapshots")->Add(m.snapshots);
  metrics_.counter("maintain.expirable_snapshots")->Add(m.expirable_snapshots);
  metrics_.counter("maintain.metadata_files")->Add(m.metadata_files);
  metrics_.counter("maintain.orphan_bytes")->Add(m.orphan_bytes);
  if (options.dry_run) return report;
  for (const maintenance::TaskDecision& d : report.decisions) {
    if (!d.run) continue;
    if (stop_->stop_requested()) {
      report.status = StopStatus().WithContext("maintain '" + m.table + "' stopped before " +
                                               std::string(MaintenanceTaskName(d.task)));
      return report;
    }
    Status st;
    std::string line;
    switch (d.task) {
      case maintenance::MaintenanceTask::kCompact: {
        Result<maintenance::CompactReport> r = Compact(m.table, PolicyCompactOptions(policy));
        if (!r.ok()) {
          st = r.status();
          break;
        }
        st = r->status;
        line = "compact: " + std::to_string(r->groups_rewritten) + " of " +
               std::to_string(r->groups.size()) + " groups, " + std::to_string(r->files_in) +
               " files (" + FormatSize(r->bytes_in) + ") -> " + std::to_string(r->files_out) +
               " (" + FormatSize(r->bytes_out) + "), " + std::to_string(r->rows_out) + " rows";
        report.compact = std::move(*r);
        break;
      }
      case maintenance::MaintenanceTask::kRewriteManifests: {
        Result<maintenance::RewriteManifestsReport> r = RewriteManifests(m.table, {});
        if (!r.ok()) {
          st = r.status();
          break;
        }
        line = r->noop ? "rewrite-manifests: nothing to do (" + r->noop_reason + ")"
                       : "rewrite-manifests: " + std::to_string(r->plan.input_manifests) +
                             " manifests -> " +
                             std::to_string(r->plan.manifests.size() + r->manifests_kept);
        report.rewrite_manifests = std::move(*r);
        break;
      }
      case maintenance::MaintenanceTask::kExpireSnapshots: {
        Result<maintenance::ExpireReport> r =
            ExpireSnapshots(m.table, PolicyExpireOptions(policy, now_ms));
        if (!r.ok()) {
          st = r.status();
          break;
        }
        st = r->status;
        line = "expire-snapshots: " + std::to_string(r->selection.expired.size()) +
               " snapshots expired, " + std::to_string(r->deleted.size()) + " files (" +
               FormatSize(r->deleted_bytes) + ") deleted";
        report.expire = std::move(*r);
        break;
      }
      case maintenance::MaintenanceTask::kRemoveOrphans: {
        Result<maintenance::OrphanReport> r =
            RemoveOrphans(m.table, PolicyOrphanOptions(policy, now_ms));
        if (!r.ok()) {
          st = r.status();
          break;
        }
        line = "remove-orphans: " + std::to_string(r->removed.size()) + " files (" +
               FormatSize(r->removed_bytes) + ") removed";
        report.orphans = std::move(*r);
        break;
      }
    }
    if (!line.empty()) report.ran.push_back(line);
    metrics_.counter("maintain.ran." + std::string(MaintenanceTaskName(d.task)))->Add(1);
    if (!st.ok()) {
      report.status =
          st.WithContext("maintain '" + m.table + "': " + std::string(MaintenanceTaskName(d.task)));
      return report;
    }
  }
  return report;
}

}  // namespace geolake
