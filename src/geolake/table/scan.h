/// \file
/// Scan planning, first cut: list the live data and delete files of a snapshot by reading its
/// manifest list and manifests (no filtering yet; partition and metrics pruning belong to
/// query/).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/manifest.h"
#include "geolake/table/table_metadata.h"

namespace geolake::table {

/// \brief Maps a path recorded in metadata to one FileIO can open (e.g. a relocated table).
/// Identity when empty.
using PathMapper = std::function<std::string(std::string_view)>;

/// \brief The files a scan of one snapshot must read.
struct ScanPlan {
  std::int64_t snapshot_id = 0;
  std::vector<ManifestFile> manifests;
  /// Live (ADDED or EXISTING) entries, sequence numbers and snapshot ids inherited.
  std::vector<ManifestEntry> data_files;
  std::vector<ManifestEntry> delete_files;

  /// \brief Σ record_count over data_files (before deletes are applied).
  std::int64_t DataRecordCount() const;
};

/// \brief Plan a scan of `snapshot_id` (default: the current snapshot). A table without a
/// snapshot gives an empty plan. kNotFound for an unknown snapshot id; kNotImplemented for a v1
/// snapshot that lists manifests without a manifest list; read errors pass through with the
/// file named.
Result<ScanPlan> PlanScan(const io::FileIO& io, const TableMetadata& metadata,
                          std::optional<std::int64_t> snapshot_id = std::nullopt,
                          const PathMapper& map_path = {});

}  // namespace geolake::table
