/// \file
/// `geolake compact`: rewrite a table's small (and oversized) data files into files near the
/// target size, with Iceberg's rewrite_data_files semantics (docs/maintenance.md).
///
/// 1. Plan (compact_plan.h) over the current snapshot's live data files, narrowed to those a
///    `--where` / `--bbox` query would read (query::SelectDataFiles).
/// 2. Rewrite each file group on the executor, up to max_concurrent_groups at once, within the
///    memory budget: binpack streams the rows in file order; sort and hilbert order them
///    (compact_sort.h: sorted inputs merged as runs, unsorted ones sorted in runs that fit the
///    budget and spilled to the temporary folder). Output goes through the table's GeoParquet
///    writer (group_writer.h), files cut at the group's split size. Rows out must equal rows in.
/// 3. Commit with table::ReplaceFiles (one validated `replace` snapshot per commit, retried over
///    concurrent appends). A group whose input another commit removed meanwhile is dropped (its
///    new files deleted) and reported; the other groups of the commit go in. With partial
///    progress finished groups commit in batches of ceil(groups / max_commits) as they finish,
///    so a stopped or killed run keeps what it committed and a re-run plans only what is left.
///
/// Nothing is ever deleted from the table but by the commit: files written and not committed
/// (a failed group, a lost validation, a stop) are deleted by the run itself, or, if the process
/// dies, left as orphans for remove-orphans.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"
#include "geolake/io/file_io.h"
#include "geolake/maintenance/compact_plan.h"
#include "geolake/table/catalog.h"

namespace geolake {
class ThreadPool;
}  // namespace geolake

namespace geolake::maintenance {

enum class CompactStrategy : std::uint8_t { kBinpack, kSort, kHilbert };

/// \brief "binpack", "sort" or "hilbert". kInvalidArgument naming the accepted values.
Result<CompactStrategy> ParseCompactStrategy(std::string_view text);
std::string_view CompactStrategyName(CompactStrategy strategy);

/// \brief A named point of a compaction, for tests that kill or stop it there.
enum class CompactPoint : std::uint8_t {
  kGroupWritten,  // a group's output files are complete (once per group)
  kBeforeCommit,  // a commit of finished groups is about to start (once per commit)
  kAfterCommit,   // that commit succeeded
};

struct CompactOptions {
  CompactStrategy strategy = CompactStrategy::kBinpack;
  /// `--sort-order`: "COL ASC|DESC [NULLS FIRST|LAST], ..." (sort only; empty = the table's).
  std::string sort_order;
  PlanOptions plan;
  /// Groups rewritten at once (Iceberg's max-concurrent-file-group-rewrites), >= 1.
  std::int64_t max_concurrent_groups = 5;
  /// Commit finished groups in batches while the job runs.
  bool partial_progress = false;
  /// With partial_progress: groups per commit = ceil(groups / max_commits); > 0.
  std::int64_t max_commits = 10;
  /// With partial_progress: fail the run when more commits than this failed (< 0: max_commits).
  std::int64_t max_failed_commits = -1;
  /// Select the files that may hold matching rows (a query's file pruning).
  std::string where;
  std::optional<geo::Envelope> bbox;
  /// Plan and report; write and commit nothing.
  bool dry_run = false;

  /// The engine's executor groups run on (borrowed; null: one group at a time on the calling
  /// thread). The calling thread commits.
  ThreadPool* executor = nullptr;
  /// Bytes of rows in flight across all groups (`--memory`); 0: pipeline::DefaultMemoryBudget.
  std::int64_t memory_bytes = 0;
  /// Where sorts spill their runs (a folder of its own is made below it and removed); required
  /// for sort and hilbert when a group does not fit in memory.
  std::string temp_dir;
  /// Metrics of the run (stages "read", "write", "commit"; counters "compact.*"); may be null.
  Metrics* metrics = nullptr;
  /// Test hook, called on the committing thread (kBeforeCommit, kAfterCommit) or the group's
  /// thread (kGroupWritten) with the group index or the commit number.
  std::function<void(CompactPoint point, int index)> hook;
};

/// \brief What happened to one planned group.
enum class GroupOutcome : std::uint8_t {
  kPlanned,    // dry run, or never started (stopped before)
  kCommitted,  // rewritten and committed
  kDropped,    // rewritten, but another commit removed one of its input files first
  kFailed,     // the rewrite or its commit failed (error says why); its files were deleted
};

std::string_view GroupOutcomeName(GroupOutcome outcome);

struct GroupResult {
  int index = 0;
  std::string partition_text;
  GroupOutcome outcome = GroupOutcome::kPlanned;
  std::int64_t input_files = 0;
  std::int64_t input_bytes = 0;
  std::int64_t input_rows = 0;
  std::int64_t output_files = 0;
  std::int64_t output_bytes = 0;
  std::int64_t output_rows = 0;
  /// Sorted runs merged and runs spilled (sort/hilbert).
  std::int64_t runs = 0;
  std::int64_t spilled_runs = 0;
  std::int64_t snapshot_id = 0;  // the commit that took it
  std::string error;             // kFailed / kDropped: why
};

struct CompactReport {
  CompactStrategy strategy = CompactStrategy::kBinpack;
  bool dry_run = false;
  std::int64_t starting_snapshot_id = 0;  // 0: the table has no snapshot
  CompactionPlan plan;
  std::vector<GroupResult> groups;    // one per planned group, in plan order
  std::int64_t groups_rewritten = 0;  // committed
  std::int64_t groups_failed = 0;
  std::int64_t groups_dropped = 0;
  std::int64_t files_in = 0;  // of committed groups
  std::int64_t files_out = 0;
  std::int64_t bytes_in = 0;
  std::int64_t bytes_out = 0;
  std::int64_t rows_in = 0;
  std::int64_t rows_out = 0;
  std::int64_t commits = 0;
  std::int64_t commits_failed = 0;
  std::int64_t commit_attempts = 0;
  std::int64_t commit_conflicts = 0;  // lost races (retried) plus validations that dropped groups
  std::vector<std::int64_t> snapshot_ids;  // the replace snapshots made, in order
  double wall_seconds = 0;
  double busy_seconds = 0;               // summed over the threads that rewrote groups
  std::int64_t peak_reserved_bytes = 0;  // the memory budget's peak
  /// OK, or the first failure after work started (a group's error, a commit's, kCancelled);
  /// what was committed before it stays committed.
  Status status;
};

/// \brief Compact table `id`. Errors (nothing written): kInvalidArgument for bad options (sizes,
/// --sort-order, a table that is not a geolake layout, sort on an unsorted table without
/// --sort-order), kNotImplemented for tables with delete files, kNotFound, and kCorruptData
/// naming the manifest list or manifest that cannot be read. Once groups run, the report is
/// returned and its `status` holds what went wrong, if anything.
Result<CompactReport> Compact(table::Catalog& catalog, const io::FileIO& io,
                              const table::TableIdentifier& id, const CompactOptions& options,
                              const std::stop_token& stop = {});

/// \brief The live data files of `snapshot_id` with the partition spec of their manifest, in
/// manifest-list order (the planner's scan). kCorruptData naming an unreadable manifest list or
/// manifest; kNotImplemented for a table with live delete files. With an `executor` (borrowed,
/// may be null) of more than one thread the manifests are read in parallel; the result is the
/// same.
Result<std::vector<ScanFile>> LiveDataFiles(const io::FileIO& io,
                                            const table::TableMetadata& metadata,
                                            std::int64_t snapshot_id,
                                            ThreadPool* executor = nullptr);

}  // namespace geolake::maintenance
