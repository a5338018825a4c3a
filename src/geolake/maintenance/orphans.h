/// \file
/// Orphan-file removal: delete the files under a table's `data/` and `metadata/` folders that no
/// snapshot of the table references, once they are older than a threshold (Iceberg's
/// DeleteOrphanFiles; default 3 days). Orphans come from crashed or cancelled writers (data
/// files written but never committed, temporary files of unfinished writes) and from commits
/// that lost a race. The reachable set is computed from the table's metadata alone, never from
/// a run journal, so a lost journal cannot make a referenced file look orphaned.
///
/// Safety rules: the table location must be a local directory strictly below the warehouse;
/// every manifest list and manifest must be readable, or nothing at all is deleted (a file
/// that cannot be read could reference anything).
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/location.h"
#include "geolake/table/table.h"
#include "geolake/table/table_metadata.h"

namespace geolake::maintenance {

/// \brief Iceberg's default age below which an unreferenced file is kept: a writer may still
/// be about to commit it.
inline constexpr std::chrono::milliseconds kDefaultOrphanAge = std::chrono::hours(24 * 3);

/// \brief The shortest cutoff RemoveOrphanFiles accepts while a writer may be running: a file
/// written a minute ago by an ingest on another machine (whose run journal this process cannot
/// see) looks exactly like an orphan. Shorter cutoffs need OrphanOptions::no_running_writers.
inline constexpr std::chrono::milliseconds kMinOrphanAge =
    std::chrono::hours(1);  // "one hour" in messages

/// \brief What RemoveOrphanFiles does.
struct OrphanOptions {
  /// The warehouse root; the table location must lie strictly below it. Required.
  std::string warehouse;
  /// Only files last modified more than this long before `now_ms` are removed.
  std::chrono::milliseconds older_than = kDefaultOrphanAge;
  /// List what would be removed, delete nothing.
  bool dry_run = false;
  /// The caller states that nothing writes to the table while this runs; only then may a real
  /// (not dry) run use an older_than below kMinOrphanAge.
  bool no_running_writers = false;
  /// "Now" in ms since the epoch; 0 = the current time (tests move it).
  std::int64_t now_ms = 0;
};

/// \brief One file that was (or, in a dry run, would be) removed.
struct OrphanFile {
  std::string path;
  std::int64_t size_bytes = 0;
  std::int64_t mtime_ms = 0;
  bool temp_file = false;  // a leftover of an unfinished write (io::IsTempFilePath)
};

/// \brief The outcome of one run.
struct OrphanReport {
  /// Removed files (would-be-removed in a dry run), sorted by path.
  std::vector<OrphanFile> removed;
  std::int64_t removed_bytes = 0;
  /// Files found under data/ and metadata/.
  std::int64_t files_listed = 0;
  /// Of those, files some snapshot or metadata file references.
  std::int64_t files_referenced = 0;
  /// Unreferenced files kept because they are younger than the threshold.
  std::int64_t files_too_new = 0;
  /// Files kept because another table of the catalog owns them: referenced by a table whose
  /// location is this one or contains it, or lying under a table location nested in this one.
  std::int64_t files_other_tables = 0;
  /// Unreferenced files kept because an ingest run of this table is still going on and may
  /// commit them: listed in its journal as written, or modified since it started
  /// (pipeline::ListLiveRuns).
  std::int64_t files_in_flight = 0;
  bool dry_run = false;
};

/// \brief Every file the table's metadata reaches, as normalized local paths
/// (NormalizeLocalPath): the current metadata file and those in its metadata log,
/// metadata/version-hint.text, each snapshot's manifest list (or v1 manifest paths), every
/// manifest, every data and delete file of every manifest entry (DELETED entries included:
/// time travel to an older snapshot may still read them), and statistics files.
///
/// Errors: kCorruptData naming the manifest list or manifest that could not be read or decoded
/// (missing files included), or malformed statistics metadata.
Result<std::set<std::string>> ReferencedFiles(const io::FileIO& io,
                                              const table::TableMetadata& metadata,
                                              const std::string& metadata_location);

/// \brief Remove the unreferenced files of `table` older than `options.older_than`.
///
/// Only `<location>/data` and `<location>/metadata` are listed: those are the folders the table
/// layout gives a table (docs/table-layout.md), and anything else below the location (a user's
/// file) is not ours to judge. Every other table of `catalog` is consulted too, because a
/// catalog written before locations were kept apart (table/location.h) can hold tables that
/// share a folder: files another table references, and files under another table's location
/// nested in this one, are kept and counted in files_other_tables. Files a live ingest run of
/// the table may still commit are kept whatever their age (files_in_flight; run journals under
/// `<warehouse>/.geolake/runs`, pipeline/run_journal.h).
///
/// Errors: kInvalidArgument when options.warehouse is empty, when options.older_than is below
/// kMinOrphanAge in a run that is neither dry nor no_running_writers, or when the table location
/// is not a local path strictly below it (a `file:` URI is accepted); kCorruptData from
/// ReferencedFiles, also for another table that shares or contains the location and whose metadata
/// cannot be read (nothing is deleted then); kIOError from the catalog, listing or deleting (files
/// deleted before the failure stay deleted: each was an orphan); kCancelled when `stop` fires
/// between deletions.
Result<OrphanReport> RemoveOrphanFiles(table::Catalog& catalog, const io::FileIO& io,
                                       const table::Table& table, const OrphanOptions& options,
                                       std::stop_token stop = {});

/// \brief table::NormalizeLocalPath, where it lives now (table/location.h).
using table::NormalizeLocalPath;

}  // namespace geolake::maintenance
