/// \file
/// Maintenance policies: `geolake maintain TABLE... --policy FILE.json` measures each table
/// against the policy's thresholds and runs only the work whose threshold is crossed
/// (compact, rewrite-manifests, expire-snapshots, remove-orphans, in that order);
/// `geolake maintain --check-policy FILE.json` validates a policy without touching a table.
/// docs/maintenance.md documents every key with an example.
///
/// This file holds what needs no table: parsing and validating a policy, the measurements a
/// decision uses, and the decision itself (Warehouse::Maintain measures and runs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/maintenance/compact.h"
#include "geolake/maintenance/expire.h"
#include "geolake/maintenance/orphans.h"
#include "geolake/maintenance/rewrite_manifests.h"

namespace geolake::maintenance {

/// \brief The smallest retention_days a policy may state: two weeks of time travel, so that a
/// restore after a bad load found a week later is still possible.
inline constexpr std::int64_t kMinRetentionDays = 14;
/// \brief The most compactions a policy may run at once (Iceberg's default for
/// max-concurrent-file-group-rewrites is 5).
inline constexpr std::int64_t kMaxConcurrentCompactions = 5;

/// \brief A parsed, validated policy. The first three keys are required; every other has the
/// default shown.
struct MaintenancePolicy {
  std::string crs;                              // "crs": the CRS every table must have
  std::int64_t retention_days = 0;              // "retention_days": >= kMinRetentionDays
  std::int64_t max_concurrent_compactions = 0;  // 1 ..= kMaxConcurrentCompactions

  CompactStrategy compaction_strategy = CompactStrategy::kHilbert;  // "compaction_strategy"
  /// "target_file_size": unset = the table's write.target-file-size-bytes (512 MiB).
  std::optional<std::int64_t> target_file_size_bytes;

  /// Compact when at least this many live files are below the compaction's min size
  /// (0.75 x target), ...
  std::int64_t small_file_count = 5;
  /// ... or when this share of the live files is small (with at least 2 small files), ...
  double small_file_ratio = 0.5;
  /// ... or when the average live file is below this (with at least 2 files); unset = target/8.
  std::optional<std::int64_t> min_average_file_size_bytes;
  /// Rewrite manifests when the current snapshot has more manifests than this.
  std::int64_t max_manifests_per_snapshot = 50;
  /// Expire when the table has more snapshots than this, ...
  std::int64_t max_snapshots = 100;
  /// ... or when its oldest snapshot is older than this many days; unset = retention_days.
  /// Either way only snapshots older than retention_days are expired.
  std::optional<std::int64_t> max_snapshot_age_days;
  /// Expire never leaves fewer snapshots than this.
  std::int64_t min_snapshots_to_keep = 1;
  /// Remove orphans when the metadata folder holds more metadata versions (NNNNN-<uuid> files;
  /// their v<N> second names are not counted) than this; unset = the
  /// table's write.metadata.previous-versions-max + 1 (the files the metadata log keeps).
  std::optional<std::int64_t> max_metadata_files;
  /// Remove orphans when more bytes than this are orphaned (older than orphan_min_age_hours).
  std::int64_t max_orphan_bytes = 0;
  /// Only files older than this are orphans (Iceberg's default: 3 days); >= 1.
  std::int64_t orphan_min_age_hours = 72;
};

/// \brief The outcome of reading a policy: the policy, or one line per problem.
struct PolicyCheck {
  std::optional<MaintenancePolicy> policy;  // set when `errors` is empty
  std::vector<std::string> errors;
};

/// \brief Parse and validate policy JSON. Every problem is reported, one line each: text that
/// is not a JSON object, an unknown key (naming the known ones), a missing required key, a
/// value of the wrong type, a CRS PROJ does not know, retention_days < 14,
/// max_concurrent_compactions outside 1..5, and inconsistent sizes or thresholds.
PolicyCheck ParsePolicy(std::string_view json_text);

/// \brief Read and parse a policy file; a file that cannot be read is one error line.
PolicyCheck ReadPolicyFile(const std::string& path);

/// \brief An error line when `table_crs` (the table's geolake.crs) is not the policy's CRS
/// (authority codes compared case-insensitively), else nullopt.
std::optional<std::string> CrsMismatch(const MaintenancePolicy& policy, std::string_view table,
                                       std::string_view table_crs);

/// \brief What Warehouse::Maintain measured on one table.
struct TableMeasurement {
  std::string table;
  std::string crs;
  // Data files (the current snapshot's live files, as compact plans them).
  std::int64_t live_files = 0;
  std::int64_t live_bytes = 0;
  std::int64_t small_files = 0;  // below the compaction's min size
  std::int64_t target_file_size_bytes = 0;
  std::int64_t min_file_size_bytes = 0;
  std::int64_t compaction_groups = 0;  // groups a compaction would rewrite now
  // Manifests of the current snapshot.
  std::int64_t manifests = 0;
  // Snapshots.
  std::int64_t snapshots = 0;
  std::int64_t oldest_snapshot_age_ms = 0;  // 0 without snapshots
  std::int64_t expirable_snapshots = 0;     // older than retention_days, beyond the kept minimum
  // Metadata files (*.metadata.json in the table's metadata folder).
  std::int64_t metadata_files = 0;
  std::int64_t previous_versions_max = 100;
  // Orphans older than orphan_min_age_hours.
  std::int64_t orphan_files = 0;
  std::int64_t orphan_bytes = 0;
};

/// \brief The maintenance tasks, in the order maintain runs them.
enum class MaintenanceTask : std::uint8_t {
  kCompact,
  kRewriteManifests,
  kExpireSnapshots,
  kRemoveOrphans
};

std::string_view MaintenanceTaskName(MaintenanceTask task);

/// \brief Whether one task runs on one table, and why (or why not).
struct TaskDecision {
  MaintenanceTask task = MaintenanceTask::kCompact;
  bool run = false;
  /// What was measured against which threshold, e.g. "12 small files >= small_file_count 5".
  std::string why;
};

/// \brief The decisions for every task, in run order. A crossed threshold whose task would do
/// nothing (no group qualifies, no snapshot is older than the retention, no orphan is old
/// enough) does not run, and `why` says so.
std::vector<TaskDecision> Decide(const MaintenancePolicy& policy, const TableMeasurement& m);

/// \brief How Warehouse::Maintain runs.
struct MaintainOptions {
  /// Measure and decide; run nothing.
  bool dry_run = false;
  /// "Now" in ms since the epoch for every age (snapshots, orphans); 0 = the current time
  /// (tests move it).
  std::int64_t now_ms = 0;
};

/// \brief What Warehouse::Maintain measured, decided and ran on one table.
struct MaintainReport {
  bool dry_run = false;
  TableMeasurement measurement;
  std::vector<TaskDecision> decisions;  // every task, in run order
  /// The reports of the tasks that ran (unset: the task did not run).
  std::optional<CompactReport> compact;
  std::optional<RewriteManifestsReport> rewrite_manifests;
  std::optional<ExpireReport> expire;
  std::optional<OrphanReport> orphans;
  /// One line per task that ran: what it did.
  std::vector<std::string> ran;
  /// OK, or the first failure of a task (the tasks after it did not run; what the earlier ones
  /// committed stays), or the stop.
  Status status;
};

/// \brief The measurement as lines for people ("data files: 200 live, ...").
std::vector<std::string> DescribeMeasurement(const MaintenancePolicy& policy,
                                             const TableMeasurement& m);

}  // namespace geolake::maintenance
