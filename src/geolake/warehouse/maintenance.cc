// The Warehouse's table maintenance beyond compact and remove-orphans: expire-snapshots and
// rewrite-manifests (and, as it lands, maintain). Each fills the module's engine fields from the
// Warehouse, as every operation method does (warehouse.cc), and records its counters.
#include <utility>

#include "geolake/geolake.h"

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

}  // namespace geolake
