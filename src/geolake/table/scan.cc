#include "geolake/table/scan.h"

namespace geolake::table {

std::int64_t ScanPlan::DataRecordCount() const {
  std::int64_t total = 0;
  for (const auto& e : data_files) total += e.data_file.record_count;
  return total;
}

Result<ScanPlan> PlanScan(const io::FileIO& io, const TableMetadata& metadata,
                          std::optional<std::int64_t> snapshot_id, const PathMapper& map_path) {
  ScanPlan plan;
  if (!snapshot_id) snapshot_id = metadata.current_snapshot_id;
  if (!snapshot_id) return plan;
  const Snapshot* snapshot = metadata.SnapshotById(*snapshot_id);
  if (snapshot == nullptr) {
    return Status::NotFound("scan: snapshot " + std::to_string(*snapshot_id) + " not found");
  }
  plan.snapshot_id = *snapshot_id;
  if (snapshot->manifest_list.empty()) {
    return Status::NotImplemented("scan: v1 snapshot " + std::to_string(*snapshot_id) +
                                  " without a manifest list");
  }
  auto mapped = [&](const std::string& p) { return map_path ? map_path(p) : p; };
  GEOLAKE_ASSIGN_OR_RETURN(plan.manifests, ReadManifestList(io, mapped(snapshot->manifest_list)));
  for (const ManifestFile& m : plan.manifests) {
    ManifestFile local = m;
    local.manifest_path = mapped(m.manifest_path);
    GEOLAKE_ASSIGN_OR_RETURN(auto entries, ReadManifest(io, local));
    for (auto& e : entries) {
      if (e.status == ManifestEntryStatus::kDeleted) continue;
      if (e.data_file.content == DataFileContent::kData) {
        plan.data_files.push_back(std::move(e));
      } else {
        plan.delete_files.push_back(std::move(e));
      }
    }
  }
  return plan;
}

}  // namespace geolake::table
