/// \file
/// RunJournal: the record of one ingest run in `<warehouse>/.geolake/runs/<run-id>/`:
/// `journal.jsonl` lists every data file the run wrote, one JSON object a line after a header
/// line, with whether it was committed (and by which snapshot); a file written but never
/// committed is an orphan that `remove-orphans` may delete. `rejects.geojsonseq` holds the rows
/// the transform refused (source path, feature index, reason, the geometry as WKT).
///
/// While the run goes on, each change is one new small file, `journal-NNNNNN.jsonl` (NNNNNN
/// counting up from 000001), holding the lines of the files it concerns as they now stand: the
/// files just written, or the files just committed. Finish() writes `journal.jsonl` whole and
/// then deletes those files, so a run that ended (done, failed or cancelled) has one journal; a
/// run killed on the way has the header and its changes, which Read() folds (the last line of a
/// file wins). Each change costs its own lines, not the whole journal again: a run of N files
/// writes O(N) journal bytes, not O(N^2). Every file is written through FileIO (temp + fsync +
/// rename), so a reader never sees half a line.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/pipeline/transform.h"

namespace geolake::pipeline {

/// \brief `<warehouse>/.geolake/runs/<run_id>`.
std::string RunDirectory(const std::string& warehouse, const std::string& run_id);

/// \brief A new run id: UTC time and 8 random hex digits, "20261129T215000Z-1a2b3c4d".
std::string NewRunId();

/// \brief A run that is still going on (its process holds the run's lock), as remove-orphans
/// sees it: the files it may be about to commit must not be deleted as orphans.
struct LiveRun {
  std::string run_dir;
  std::string run_id;
  std::int64_t started_ms = 0;  // wall clock, ms since the epoch
  /// Data files the run journaled as written and not (yet) committed.
  std::vector<std::string> uncommitted_files;
};

/// \brief The runs of `table` (its "namespace.name") under `<warehouse>/.geolake/runs/` whose
/// process is alive: each holds an exclusive flock(2) on `running.lock` in its run folder from
/// RunJournal::Open until Finish or its death (the kernel releases it on exit, also on SIGKILL).
/// A run folder without a lock (finished, killed, or written before the lock existed) is not
/// live. flock is reliable on local file systems; on a network file system shared by several
/// nodes it may not be, and only remove-orphans' age threshold protects the other nodes' runs.
/// Errors: kIOError listing or reading run folders (a journal that cannot be parsed is skipped).
Result<std::vector<LiveRun>> ListLiveRuns(const io::FileIO* io, const std::string& warehouse,
                                          const std::string& table);

/// \brief One data file of a run.
struct JournalEntry {
  std::string path;
  std::string source;  // source fingerprint text
  std::int64_t unit = 0;
  std::int64_t rows = 0;
  bool committed = false;
  std::int64_t snapshot_id = 0;  // 0 while uncommitted
  /// The other sources (fingerprint texts) whose rows the file also holds: a unit of small
  /// sources packed together (`source` and `unit` are its first).
  std::vector<std::string> packed_with;
};

/// \brief The journal and rejects of one run.
///
/// Thread-safety: every method is safe to call concurrently; one mutex guards the entries
/// and the rejects text.
class RunJournal {
 public:
  /// \brief Start the journal of run `run_id` in `run_dir` (created), writing its header line.
  /// Errors: kIOError from FileIO.
  static Result<std::unique_ptr<RunJournal>> Open(const io::FileIO* io, std::string run_dir,
                                                  std::string run_id, std::string table);

  /// \brief The entries of the run in `run_dir`: the change files in order, then the entries
  /// of `journal.jsonl` (a later line of a file replaces an earlier one), in the order the
  /// files were first written. Errors: kIOError from FileIO, kCorruptData for a line that is not an
  /// entry.
  static Result<std::vector<JournalEntry>> Read(const io::FileIO* io, const std::string& run_dir);

  /// \brief Record data files as written (not committed).
  Status FilesWritten(const std::vector<JournalEntry>& entries);
  /// \brief Mark files as committed by `snapshot_id`.
  Status FilesCommitted(const std::vector<std::string>& paths, std::int64_t snapshot_id);
  /// \brief Write `journal.jsonl` whole, delete the change files and release the run's lock
  /// (the run is no longer live, see ListLiveRuns). Call once, at the end.
  Status Finish();
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;
  /// \brief Keep rejected rows of `source_path` (written by WriteRejects).
  void AddRejects(const std::string& source_path, const std::vector<RejectedRow>& rejects);
  /// \brief Write rejects.geojsonseq (always, also when empty).
  Status WriteRejects();

  std::vector<JournalEntry> entries() const;
  const std::string& run_dir() const { return run_dir_; }
  std::string journal_path() const { return run_dir_ + "/journal.jsonl"; }
  std::string rejects_path() const { return run_dir_ + "/rejects.geojsonseq"; }

 private:
  RunJournal(const io::FileIO* io, std::string run_dir, std::string header);
  // Writes the lines of entries_[i] for each i in `changed` as the next change file.
  Status WriteChangeLocked(const std::vector<std::size_t>& changed);

  const io::FileIO* io_;
  const std::string run_dir_;
  const std::string header_;
  mutable std::mutex mu_;  // guards entries_, index_, changes_, rejects_
  std::vector<JournalEntry> entries_;
  std::unordered_map<std::string, std::size_t> index_;  // path -> position in entries_
  std::int64_t changes_ = 0;                            // change files written
  std::string rejects_;
  int lock_fd_ = -1;  // running.lock, flock(LOCK_EX) while the run is live; guarded by mu_
};

}  // namespace geolake::pipeline
