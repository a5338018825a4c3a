/// \file
/// Table operations that write: creating a table and appending data files in one snapshot.
/// Every file is written once through io::FileIO (manifests, manifest lists and metadata JSON
/// are never overwritten) and the new metadata becomes current only through the catalog's
/// compare-and-swap. A lost race (kCommitConflict) is retried on the reloaded table with
/// exponential backoff and jitter per the `commit.retry.*` table properties (formats.md §3.10).
///
/// Metadata files are named `v<N>.metadata.json` next to `version-hint.text` (DESIGN.md: the
/// table stays discoverable by path-based readers such as icebird); since the write refuses to
/// replace an existing file, two writers racing for the same N cannot clobber each other.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/catalog.h"
#include "geolake/table/manifest.h"
#include "geolake/table/table_metadata.h"

namespace geolake::table {

/// \brief How often and how long a commit is retried after kCommitConflict.
struct CommitRetryPolicy {
  int num_retries = 4;
  std::int64_t min_wait_ms = 100;
  std::int64_t max_wait_ms = 60000;
  std::int64_t total_timeout_ms = 1800000;

  /// \brief Read `commit.retry.num-retries`, `.min-wait-ms`, `.max-wait-ms`,
  /// `.total-timeout-ms`, with Iceberg's defaults for absent or malformed values.
  static CommitRetryPolicy FromProperties(const std::map<std::string, std::string>& properties);

  /// \brief The wait before retry number `retry` (1-based): min_wait·2^(retry-1) capped at
  /// max_wait, plus up to 10% random jitter (as Java's Tasks do).
  std::int64_t WaitMillis(int retry) const;
};

/// \brief A loaded table: where its metadata is and what it says.
struct Table {
  TableIdentifier id;
  std::string metadata_location;
  TableMetadata metadata;
};

/// \brief Load a table through the catalog (location) and FileIO (metadata JSON).
/// kNotFound if the catalog has no such table; kCorruptData for unreadable metadata.
Result<Table> LoadTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id);

/// \brief Find the current metadata file of a table directory without a catalog, as
/// path-based readers do: metadata/version-hint.text holding N (→ vN.metadata.json, or the
/// NNNNN-<uuid> file of version N) or a file stem (→ <stem>.metadata.json); without a usable
/// hint, the metadata file with the highest version in metadata/. kNotFound if there is none.
Result<std::string> FindCurrentMetadataFile(const io::FileIO& io, const std::string& table_dir);

/// \brief Load a table from its directory (FindCurrentMetadataFile); the id stays empty.
Result<Table> LoadTableFromPath(const io::FileIO& io, const std::string& table_dir);

/// \brief Create a table: write its first metadata file (v1.metadata.json) and version hint
/// under `options.location`/metadata, then register it in the catalog. kAlreadyExists if the
/// catalog has the table (the metadata file written for it is removed again).
Result<Table> CreateTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id,
                          const NewTableOptions& options);

/// \brief What a successful commit did.
struct CommitResult {
  std::int64_t snapshot_id = 0;
  std::int64_t sequence_number = 0;
  std::string metadata_location;
  int attempts = 0;  // 1 = no conflict
  TableMetadata metadata;
};

/// \brief Append data files to a table in one `append` snapshot on the main branch.
///
/// Usage: construct, AddFile for each written data file, Commit once. Fast append: one new
/// manifest holding the added files (written once, reused on every retry), plus the manifests
/// of the current snapshot; each attempt writes a new manifest list and metadata file.
/// Appends never conflict logically, so every kCommitConflict is retried on the reloaded base.
/// Thread-safety: none; one AppendFiles per commit. Different processes may append to the
/// same table concurrently (that is what the retry is for).
class AppendFiles {
 public:
  AppendFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id);

  /// \brief Add a data file; its partition must match the table's default spec.
  AppendFiles& AddFile(DataFile file);
  /// \brief Extra snapshot summary entries (e.g. "engine-name").
  AppendFiles& SetSummary(std::string key, std::string value);
  /// \brief Replace the sleep used between retries (tests inject a fake clock).
  AppendFiles& SetSleep(std::function<void(std::int64_t millis)> sleep);

  /// \brief Commit. Errors: kInvalidArgument for files that do not fit the table;
  /// kCommitConflict when the retries are exhausted or the table's partition spec changed
  /// meanwhile; kIOError from FileIO or when the catalog's outcome is unknown and the new
  /// metadata did not become current (files are then left in place, not deleted).
  Result<CommitResult> Commit();

 private:
  Catalog* catalog_;
  const io::FileIO* io_;
  TableIdentifier id_;
  std::vector<DataFile> files_;
  std::map<std::string, std::string> extra_summary_;
  std::function<void(std::int64_t)> sleep_;
};

}  // namespace geolake::table
