/// \file
/// RunJournal: the record of one ingest run in `<warehouse>/.geolake/runs/<run-id>/`:
/// `journal.jsonl` lists every data file the run wrote, one JSON object a line, with whether
/// it was committed (and by which snapshot); a file written but never committed is an orphan
/// that `remove-orphans` may delete. `rejects.geojsonseq` holds the rows the transform refused
/// (source path, feature index, reason, the geometry as WKT). Both files are rewritten whole
/// through FileIO (temp + fsync + rename) on each change, so a reader never sees half a line.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/pipeline/transform.h"

namespace geolake::pipeline {

/// \brief `<warehouse>/.geolake/runs/<run_id>`.
std::string RunDirectory(const std::string& warehouse, const std::string& run_id);

/// \brief A new run id: UTC time and 8 random hex digits, "20261129T215000Z-1a2b3c4d".
std::string NewRunId();

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

  /// \brief Record data files as written (not committed).
  Status FilesWritten(const std::vector<JournalEntry>& entries);
  /// \brief Mark files as committed by `snapshot_id`.
  Status FilesCommitted(const std::vector<std::string>& paths, std::int64_t snapshot_id);
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
  Status WriteLocked();

  const io::FileIO* io_;
  const std::string run_dir_;
  const std::string header_;
  mutable std::mutex mu_;  // guards entries_, rejects_
  std::vector<JournalEntry> entries_;
  std::string rejects_;
};

}  // namespace geolake::pipeline
