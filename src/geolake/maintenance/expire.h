/// \file
/// `geolake expire-snapshots`: drop old snapshots and delete the files only they reach, with
/// Iceberg's expire_snapshots rules (docs/maintenance.md):
///
/// 1. Choose (SelectSnapshotsToExpire, pure): `main` and every ref younger than its max ref
///    age are kept, with their snapshots; each branch keeps its ancestors while fewer than
///    retain-last are kept or they are not older than the cutoff, and stops at the first that
///    fails both; snapshots on no branch and no tag are kept while not older than the cutoff.
///    Everything else expires, with the refs that aged off.
/// 2. Commit the metadata first (table::RemoveSnapshots, re-chosen on every attempt against the
///    reloaded table, so a concurrent commit is never lost).
/// 3. Then delete what the dropped snapshots reached and no retained one does (reachable
///    before minus reachable after): their manifest lists, the manifests no retained list
///    names, the data files of those manifests that no retained manifest holds live, and
///    statistics files no longer listed. Deletes run on the executor. If any retained manifest
///    list or manifest cannot be read, no data file is deleted and the report says why.
///
/// Before committing, every manifest list and manifest of the table is read: a damaged table
/// is refused (kCorruptData naming the file) and nothing changes. A process killed after the
/// commit leaves the unreferenced files for remove-orphans.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/catalog.h"
#include "geolake/table/table_metadata.h"

namespace geolake {
class ThreadPool;
}  // namespace geolake

namespace geolake::maintenance {

/// Iceberg's `history.expire.max-snapshot-age-ms` default: 5 days.
inline constexpr std::int64_t kDefaultMaxSnapshotAgeMs = 432000000;
/// Iceberg's `history.expire.min-snapshots-to-keep` default.
inline constexpr std::int64_t kDefaultMinSnapshotsToKeep = 1;

/// \brief A named point of an expiry, for tests that kill or stop it there.
enum class ExpirePoint : std::uint8_t {
  kAfterCommit,  // the metadata is committed, no file deleted yet
};

struct ExpireOptions {
  /// Snapshots older than this timestamp (ms since the epoch) may expire; nullopt: now minus
  /// the table's `history.expire.max-snapshot-age-ms` (5 days).
  std::optional<std::int64_t> older_than_ms;
  /// Snapshots each branch keeps at least; nullopt: `history.expire.min-snapshots-to-keep` (1).
  /// Must be >= 1.
  std::optional<std::int64_t> retain_last;
  /// Choose and report; commit and delete nothing.
  bool dry_run = false;
  /// "Now" in ms since the epoch; 0 = the current time (tests move it).
  std::int64_t now_ms = 0;
  /// Deletes run here (borrowed); null: on the calling thread.
  ThreadPool* executor = nullptr;
  /// Test hook, called on the calling thread.
  std::function<void(ExpirePoint)> hook;
};

/// \brief What SelectSnapshotsToExpire decided.
struct ExpireSelection {
  std::vector<std::int64_t> expired;      // snapshot ids, by timestamp, oldest first
  std::vector<std::string> refs_removed;  // refs that aged off (max-ref-age-ms), sorted
  std::int64_t retained = 0;              // snapshots kept
  std::int64_t cutoff_ms = 0;             // the older-than timestamp used for `main`
  std::int64_t retain_last = 0;           // the retain-last used for `main`
};

/// \brief Choose the snapshots and refs that expire (maintenance.md §3.2). A ref's own
/// min-snapshots-to-keep / max-snapshot-age-ms / max-ref-age-ms win over the options and the
/// table properties (`history.expire.max-ref-age-ms`, default never, for refs but `main`).
/// kInvalidArgument when retain-last < 1.
Result<ExpireSelection> SelectSnapshotsToExpire(const table::TableMetadata& metadata,
                                                const ExpireOptions& options, std::int64_t now_ms);

/// \brief The outcome of one run.
struct ExpireReport {
  bool dry_run = false;
  ExpireSelection selection;
  std::string metadata_location;  // the committed metadata (empty: nothing committed)
  int commit_attempts = 0;
  /// Deleted files (would-be-deleted in a dry run), sorted, and their counts and bytes.
  std::vector<std::string> deleted;
  std::int64_t deleted_data_files = 0;
  std::int64_t deleted_manifests = 0;
  std::int64_t deleted_manifest_lists = 0;
  std::int64_t deleted_statistics_files = 0;
  std::int64_t deleted_bytes = 0;
  /// Deletes that failed (the file stays, an orphan for remove-orphans).
  std::int64_t delete_failures = 0;
  /// Non-empty when no data file was deleted although some were due: why.
  std::string data_files_kept;
  /// OK, or what went wrong after the commit (the commit stays): kCorruptData when a retained
  /// manifest could not be read (data_files_kept says which), kCancelled, kIOError.
  Status status;
};

/// \brief Expire snapshots of table `id`. Errors (nothing committed): kInvalidArgument for bad
/// options, kNotFound, kInvalidArgument when `gc.enabled` is false, kCorruptData naming a
/// manifest list or manifest that cannot be read, the commit's errors. After the commit the
/// report is returned and its `status` holds what went wrong while deleting.
Result<ExpireReport> ExpireSnapshots(table::Catalog& catalog, const io::FileIO& io,
                                     const table::TableIdentifier& id, const ExpireOptions& options,
                                     std::stop_token stop = {});

}  // namespace geolake::maintenance
