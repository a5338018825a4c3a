/// \file
/// The commit stage of ingest (docs/architecture.md, stage 4 of every job): ONE coordinator
/// thread per process collects the files of finished units and commits them in one Iceberg
/// append when `commit_rows` rows or `commit_interval` have gathered, and at the end. Only
/// whole units are ever committed: a unit's files reach the coordinator after its last row is
/// written, so a cancelled run leaves no partial unit visible.
///
/// Each snapshot summary says what it completed, which is what resume reads:
///   geolake.run-id   the run
///   geolake.units    JSON [{"source": FINGERPRINT, "path": PATH, "units": [0, 3, ...],
///                    "unit_rows": N}] (N: the --unit-rows the units were cut with; a source
///                    partly committed is resumed only with the same N, or its units would
///                    cover other rows)
///   geolake.sources  JSON [FINGERPRINT, ...]: sources whose every unit is now committed
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/pipeline/run_journal.h"
#include "geolake/pipeline/table_writer.h"
#include "geolake/table/catalog.h"
#include "geolake/table/table_metadata.h"

namespace geolake::pipeline {

inline constexpr std::string_view kRunIdSummary = "geolake.run-id";
inline constexpr std::string_view kUnitsSummary = "geolake.units";
inline constexpr std::string_view kSourcesSummary = "geolake.sources";

/// \brief What earlier runs committed, read from every snapshot in the current lineage.
struct CommittedUnits {
  std::map<std::string, std::set<std::int64_t>> units;  // fingerprint -> unit indices
  std::set<std::string> sources;                        // fully committed fingerprints
  std::map<std::string, std::set<std::string>> fingerprints_by_path;
  std::map<std::string, std::int64_t> unit_rows;  // fingerprint -> unit_rows recorded with it

  bool UnitDone(const std::string& fingerprint, std::int64_t unit) const;
};

/// \brief Walk the current snapshot and its ancestors and collect their geolake summaries,
/// stopping before `since_snapshot_id` when given (only what was committed after it).
/// Malformed summary values are skipped with a warning (read tolerantly).
CommittedUnits ReadCommittedUnits(const table::TableMetadata& metadata,
                                  std::optional<std::int64_t> since_snapshot_id = std::nullopt);

/// \brief A finished unit of work: its files (possibly none) and its row counts.
struct UnitOutcome {
  std::string source;  // fingerprint text
  std::string source_path;
  std::int64_t unit = 0;
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
  std::int64_t rows_rejected = 0;
  std::vector<WrittenFile> files;
  /// Set by Submit: the outcomes handed over together (they share files) have one number.
  std::int64_t work_item = 0;
};

/// \brief A source this run works on: how many units it has, and which are done already.
struct SourcePlan {
  std::string fingerprint;
  std::string path;
  std::int64_t unit_count = 0;
  std::int64_t unit_rows = 0;  // what the units were cut with; 0 = not recorded
  std::set<std::int64_t> committed_units;
};

struct CommitOptions {
  std::int64_t commit_rows = 1000000;
  std::chrono::milliseconds commit_interval{30000};
  std::string run_id;
  /// More summary properties every snapshot of the run carries (an operation's identity,
  /// ops/runner.h); the geolake.run-id/units/sources keys are the coordinator's own.
  std::map<std::string, std::string> extra_summary;
  /// The snapshot the run planned against (what was committed then was skipped); every commit
  /// attempt checks the snapshots after it for units another run committed meanwhile. nullopt
  /// = the table had no snapshot: every snapshot is checked.
  std::optional<std::int64_t> base_snapshot_id;
};

/// \brief The one committing thread of an ingest.
///
/// Every commit attempt (also each retry after a lost race) is validated right before the
/// catalog swap against the snapshots committed since the run's base: a unit that another run
/// (another process ingesting the same source) committed meanwhile is not committed again.
/// Its work item (the units sharing its files) is taken out of the batch, its files stay
/// uncommitted in the journal (orphans for remove-orphans), it is counted in
/// units_committed_elsewhere / rows_committed_elsewhere, and the rest of the batch is
/// committed. Units packed with such a unit but not committed anywhere cannot be committed
/// apart from it: they are counted as uncommitted and Finish returns kCommitConflict (run
/// again to load them).
///
/// Usage: construct, Start, Submit from any worker, Finish once. Metrics: stage "commit"
/// (rows and files in/out, counters attempts, conflicts, commits, units_committed_elsewhere).
/// Thread-safety: Submit and the accessors are safe to call concurrently; Start and Finish
/// from the owning thread.
class CommitCoordinator {
 public:
  CommitCoordinator(table::Catalog* catalog, const io::FileIO* io, table::TableIdentifier id,
                    CommitOptions options, std::vector<SourcePlan> sources, RunJournal* journal,
                    Metrics* metrics);
  ~CommitCoordinator();
  CommitCoordinator(const CommitCoordinator&) = delete;
  CommitCoordinator& operator=(const CommitCoordinator&) = delete;

  /// \brief `on_error` is called (on the coordinator thread) when a commit fails, so the
  /// caller can stop the workers.
  void Start(std::function<void()> on_error);

  /// \brief Hand over a finished unit.
  void Submit(UnitOutcome outcome);
  /// \brief Hand over units that share files (a packed work item): they are committed in
  /// the same snapshot, never apart.
  void Submit(std::vector<UnitOutcome> outcomes);

  /// \brief Commit what is pending (whole units only) and stop the thread. Returns the first
  /// commit error.
  Status Finish();

  std::int64_t rows_committed() const;
  std::int64_t rows_rejected_committed() const;
  std::int64_t commits() const;
  /// Units (and the rows read for them) that another run committed meanwhile.
  std::int64_t units_committed_elsewhere() const;
  std::int64_t rows_committed_elsewhere() const;
  /// Rows read for units handed over but not committed (a failed commit, units packed with a
  /// unit committed elsewhere, units still pending when a commit error stopped the thread).
  std::int64_t rows_uncommitted() const;

 private:
  void Run();
  Status Commit(std::vector<UnitOutcome> outcomes);
  // What a validation found committed by another run: the units, and their work items.
  struct Elsewhere {
    std::set<std::pair<std::string, std::int64_t>> units;  // (fingerprint, unit)
    std::set<std::int64_t> work_items;
  };
  // One AppendFiles of `outcomes`. When the validation refused it because units were committed
  // by another run since the base, *elsewhere names them (else it is left empty).
  Status CommitOnce(const std::vector<UnitOutcome>& outcomes, Elsewhere* elsewhere);

  table::Catalog* catalog_;
  const io::FileIO* io_;
  table::TableIdentifier id_;
  CommitOptions options_;
  RunJournal* journal_;
  StageMetrics* stage_;

  mutable std::mutex mu_;  // guards every field below
  std::condition_variable wake_;
  std::vector<UnitOutcome> pending_;
  std::int64_t pending_rows_ = 0;
  bool finishing_ = false;
  Status error_;
  Status deferred_error_;  // units packed with units committed elsewhere were left out
  std::int64_t rows_committed_ = 0;
  std::int64_t rows_rejected_committed_ = 0;
  std::int64_t commits_ = 0;
  std::int64_t units_elsewhere_ = 0;
  std::int64_t rows_elsewhere_ = 0;
  std::int64_t rows_uncommitted_ = 0;
  std::int64_t next_work_item_ = 1;
  std::map<std::string, SourcePlan> sources_;  // by fingerprint; committed_units grows
  std::function<void()> on_error_;
  std::thread thread_;
};

}  // namespace geolake::pipeline
