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

/// \brief Walk the current snapshot and its ancestors and collect their geolake summaries.
/// Malformed summary values are skipped with a warning (read tolerantly).
CommittedUnits ReadCommittedUnits(const table::TableMetadata& metadata);

/// \brief A finished unit of work: its files (possibly none) and its row counts.
struct UnitOutcome {
  std::string source;  // fingerprint text
  std::string source_path;
  std::int64_t unit = 0;
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
  std::int64_t rows_rejected = 0;
  std::vector<WrittenFile> files;
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
};

/// \brief The one committing thread of an ingest.
///
/// Usage: construct, Start, Submit from any worker, Finish once. Metrics: stage "commit"
/// (rows and files in/out, counters attempts, conflicts, commits). Thread-safety: Submit and
/// the accessors are safe to call concurrently; Start and Finish from the owning thread.
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

 private:
  void Run();
  Status Commit(std::vector<UnitOutcome> outcomes);

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
  std::int64_t rows_committed_ = 0;
  std::int64_t rows_rejected_committed_ = 0;
  std::int64_t commits_ = 0;
  std::map<std::string, SourcePlan> sources_;  // by fingerprint; committed_units grows
  std::function<void()> on_error_;
  std::thread thread_;
};

}  // namespace geolake::pipeline
