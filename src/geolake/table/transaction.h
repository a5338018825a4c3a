/// \file
/// Table operations that write: creating a table, and the transactions that commit a change to
/// it — AppendFiles, ReplaceFiles (rewrite), DeleteFiles and SetProperties. Every file is
/// written once through io::FileIO (manifests, manifest lists and metadata JSON are never
/// overwritten) and the new metadata becomes current only through the catalog's
/// compare-and-swap. All transactions share one commit loop: a lost race (kCommitConflict from
/// the catalog) reloads the table, re-validates and re-applies the change on the new base, and
/// retries with exponential backoff and jitter per the `commit.retry.*` table properties
/// (Iceberg Java's defaults). A failed validation (a file to remove is no longer live) is a
/// kCommitConflict that is not retried.
///
/// Metadata files are named `NNNNN-<uuid>.metadata.json` (5-digit version, as Java and
/// PyIceberg write them), so writers racing for one version never collide. After each
/// successful swap the winner also publishes its file as `v<N>.metadata.json` (a write-once
/// second name: a hard link on local disks) and then rewrites `version-hint.text` to hold N,
/// so that path-based readers that know only a table's folder (icebird, DuckDB's iceberg_scan,
/// Iceberg's Hadoop convention) find the current version; the catalog stays the source of
/// truth. Tables written earlier with only `v<N>.metadata.json` names still load and commit.
///
/// Metadata retention: the metadata log keeps `write.metadata.previous-versions-max` entries
/// (default 100); with `write.metadata.delete-after-commit.enabled` = true the metadata files
/// that drop out of the log (and their published `v<N>` names) are deleted after the swap
/// succeeded, never before.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/catalog.h"
#include "geolake/table/manifest.h"
#include "geolake/table/table.h"
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

/// \brief The JSON text of a metadata file, gunzipped when the file is a gzip stream
/// (`write.metadata.compression-codec` = gzip). kCorruptData naming the file for a broken
/// stream; FileIO's errors otherwise.
Result<std::string> ReadMetadataFile(const io::FileIO& io, const std::string& path);

/// \brief Load a table through the catalog (location) and FileIO (metadata JSON).
/// kNotFound if the catalog has no such table; kCorruptData for unreadable metadata.
Result<Table> LoadTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id);

/// \brief Find the current metadata file of a table directory without a catalog, as
/// path-based readers do: metadata/version-hint.text holding N (→ vN.metadata.json, or the
/// NNNNN-<uuid> file of version N; when a killed writer left several files of version N, the
/// newest by modification time) or a file stem (→ <stem>.metadata.json); without a usable
/// hint, the metadata file with the highest version in metadata/. kNotFound if there is none.
Result<std::string> FindCurrentMetadataFile(const io::FileIO& io, const std::string& table_dir);

/// \brief Load a table from its directory (FindCurrentMetadataFile); the id stays empty.
Result<Table> LoadTableFromPath(const io::FileIO& io, const std::string& table_dir);

/// \brief Create a table: write its first metadata file (00001-<uuid>.metadata.json) and
/// version hint under `options.location`/metadata, then register it in the catalog.
/// kAlreadyExists if the catalog has the table (the metadata file written for it is removed).
Result<Table> CreateTable(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id,
                          const NewTableOptions& options);

/// \brief What a successful commit did.
struct CommitResult {
  std::int64_t snapshot_id = 0;  // the new snapshot (SetProperties: the unchanged current one)
  std::int64_t sequence_number = 0;
  std::string metadata_location;
  int attempts = 0;  // 1 = no conflict; attempts - 1 lost races
  TableMetadata metadata;
};

/// \brief Named points of a commit, for tests that kill or interrupt a committer there.
enum class CommitPhase {
  kManifestWritten,      // the transaction's new manifest is durable (once per commit)
  kManifestListWritten,  // this attempt's manifest list (and rewritten manifests) are durable
  kMetadataWritten,      // this attempt's metadata JSON is durable
  kBeforeSwap,           // immediately before the catalog's compare-and-swap
  kAfterSwap,            // the swap succeeded; version hint and cleanup not yet done
};

/// \brief "manifest-written", "manifest-list-written", "metadata-written", "before-swap",
/// "after-swap".
std::string_view CommitPhaseName(CommitPhase phase);
/// \brief The inverse of CommitPhaseName; kInvalidArgument naming the accepted names.
Result<CommitPhase> ParseCommitPhase(std::string_view name);

/// \brief Called at each CommitPhase with the 1-based attempt number. Test-only: production
/// code leaves it unset. It runs on the committing thread and must not throw.
using CommitHook = std::function<void(CommitPhase phase, int attempt)>;

/// \brief The shared commit loop of every transaction (template method).
///
/// Commit() loads the table, calls Prepare once (files reused by every attempt), then per
/// attempt Apply (derive the next metadata from the current base; may write files), writes the
/// metadata file, swaps it in through the catalog, and on a lost race deletes the attempt's
/// files, waits (backoff) and reloads. Errors from Prepare/Apply end the commit without retry.
/// When the catalog reports an unknown outcome (kIOError) nothing is deleted; the commit
/// succeeds if the new metadata became current after all, else returns kIOError.
///
/// Thread-safety: none; one transaction object per commit, Commit called once. Any number of
/// transactions (threads or processes) may commit to the same table concurrently.
class Transaction {
 public:
  virtual ~Transaction() = default;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  /// \brief Replace the sleep used between retries (tests inject a fake clock).
  Transaction& SetSleep(std::function<void(std::int64_t millis)> sleep);
  /// \brief Install a test hook called at every CommitPhase.
  Transaction& SetCommitHook(CommitHook hook);

  /// \brief Commit. Errors: kInvalidArgument for a change that does not fit the table;
  /// kNotFound for an unknown table; kCommitConflict when the retries are exhausted
  /// (commit.retry.num-retries / total-timeout-ms) or validation failed on a reloaded base;
  /// kIOError from FileIO, or when the catalog's outcome is unknown and the new metadata did not
  /// become current (files are then left in place, not deleted).
  Result<CommitResult> Commit();

 protected:
  /// What one attempt derived from its base.
  struct Attempt {
    TableMetadata next;              // validated by TableMetadataBuilder::Build
    std::vector<std::string> files;  // written by this attempt; deleted if the swap fails
    std::int64_t snapshot_id = 0;    // for CommitResult
    std::int64_t sequence_number = 0;
  };

  Transaction(Catalog* catalog, const io::FileIO* io, TableIdentifier id, std::string verb);

  /// \brief Once, against the first base: validate inputs, write files every attempt reuses.
  virtual Status Prepare(const Table& base) = 0;
  /// \brief One attempt against `base`. kCommitConflict = the change no longer applies (not
  /// retried). Files written here must be listed in Attempt::files.
  virtual Result<Attempt> Apply(const Table& base, int attempt) = 0;
  /// \brief The commit failed for good: delete the files Prepare wrote (best effort).
  virtual void Abandon() = 0;
  /// \brief Last check of an attempt against `base`, right before the catalog swap (after the
  /// metadata file is written). An error ends the commit without retry and without a swap:
  /// the table stays as `base` left it. Default: OK.
  virtual Status CheckBeforeSwap(const Table& base) {
    (void)base;
    return Status::OK();
  }

  void CallHook(CommitPhase phase, int attempt) const {
    if (hook_) hook_(phase, attempt);
  }
  /// "append to 'ns.t'" etc., the context of every error message.
  const std::string& what() const { return what_; }

  Catalog* catalog_;
  const io::FileIO* io_;
  TableIdentifier id_;

 private:
  std::string what_;
  std::function<void(std::int64_t)> sleep_;
  CommitHook hook_;
};

/// \brief Base of the transactions that produce a snapshot on the main branch from files
/// added and files removed (by path): one new manifest for the added files (written once,
/// ADDED entries inherit snapshot id and sequence numbers), and for every parent manifest that
/// holds a removed file a rewritten manifest in which the removed files are DELETED and the
/// others EXISTING. Manifests without live files are not carried into the new snapshot.
/// Summary: the standard keys (added-/deleted-data-files, added-/deleted-records,
/// added-files-size, removed-files-size, changed-partition-count, manifests-created/-kept/
/// -replaced, total-*), recomputed from the parent on every attempt.
class SnapshotTransaction : public Transaction {
 public:
  /// \brief Extra snapshot summary entries (e.g. "engine-name").
  SnapshotTransaction& SetSummary(std::string key, std::string value);

  /// \brief A check run on every attempt, right before the swap, against that attempt's base
  /// (the table as it is after every commit that won meanwhile). An error ends the commit
  /// without a swap and is returned as is (use kCommitConflict for "the change no longer
  /// applies"). Ingest uses it to refuse units another run committed since its base.
  using Validation = std::function<Status(const Table& base)>;
  SnapshotTransaction& SetValidation(Validation validation);

 protected:
  SnapshotTransaction(Catalog* catalog, const io::FileIO* io, TableIdentifier id, std::string verb,
                      std::string operation);

  Status Prepare(const Table& base) override;
  Result<Attempt> Apply(const Table& base, int attempt) override;
  void Abandon() override;
  /// Every added data file still exists (kNotFound naming the first that does not: a
  /// remove-orphans with a young cutoff may have deleted it), then the validation.
  Status CheckBeforeSwap(const Table& base) override;

  std::vector<DataFile> added_;
  std::set<std::string> removed_paths_;
  /// Set by the attempt that found files of removed_paths_ no longer live (sorted).
  std::vector<std::string> missing_paths_;
  bool fail_on_delete_files_ = false;

 private:
  // Apply's body; files it wrote are in out->files even when it fails.
  Status ApplyTo(const Table& base, int attempt, Attempt* out);

  std::string operation_;  // snapshot summary "operation"
  std::map<std::string, std::string> extra_summary_;
  Validation validation_;
  std::string commit_uuid_;
  std::int32_t spec_id_ = 0;
  std::int64_t snapshot_id_ = 0;
  std::optional<ManifestFile> new_manifest_;  // set by Prepare when files are added
  int next_manifest_index_ = 0;               // "<commit uuid>-m<N>.avro", unique across attempts
};

/// \brief Append data files in one `append` snapshot (fast append: one new manifest plus the
/// parent's manifests). Appends never conflict logically: every lost race is re-applied.
///
/// Usage: construct, AddFile for each written data file, Commit once. Errors as
/// Transaction::Commit; kInvalidArgument for a file whose partition does not fit the table's
/// default spec, kCommitConflict if the default spec changed during the commit.
class AppendFiles : public SnapshotTransaction {
 public:
  AppendFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id);

  /// \brief Add a data file; its partition must match the table's default spec.
  AppendFiles& AddFile(DataFile file);
};

/// \brief Replace (rewrite) data files: remove a set of live files and add others in one
/// `replace` snapshot, e.g. after compaction. Validated on every attempt: if a file to remove is
/// no longer live in the (reloaded) base, the commit fails with kCommitConflict and is not
/// retried (Java: "Missing required files to delete"); missing_files() then names every such
/// file. Files added meanwhile by others are kept. kInvalidArgument when nothing is removed.
class ReplaceFiles : public SnapshotTransaction {
 public:
  ReplaceFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id);

  /// \brief Remove the live data file with this path.
  ReplaceFiles& DeleteFile(std::string path);
  /// \brief Add a data file (partition must match the default spec).
  ReplaceFiles& AddFile(DataFile file);
  /// \brief Also fail (kCommitConflict, not retried) when the base has live delete files:
  /// for a rewriter that read the replaced files without applying deletes, a delete committed
  /// meanwhile would be lost (maintenance.md §1.5, "new position delete for replaced file").
  ReplaceFiles& FailOnDeleteFiles();
  /// \brief After a failed validation: the files to remove that were no longer live, sorted.
  const std::vector<std::string>& missing_files() const { return missing_paths_; }

 protected:
  Status Prepare(const Table& base) override;
};

/// \brief Remove data files by path in one `delete` snapshot. Validated like ReplaceFiles
/// (kCommitConflict without retry if a file is no longer live). kInvalidArgument when no path
/// was given.
class DeleteFiles : public SnapshotTransaction {
 public:
  DeleteFiles(Catalog* catalog, const io::FileIO* io, TableIdentifier id);

  /// \brief Remove the live data file with this path.
  DeleteFiles& DeleteFile(std::string path);

 protected:
  Status Prepare(const Table& base) override;
};

/// \brief Set and remove table properties; no snapshot. Re-applied on every attempt (a
/// concurrent change of the same key is overwritten: last writer wins, as in Java).
/// kInvalidArgument for a key both set and removed, or a key Java reserves (format-version,
/// uuid, current-snapshot-id, ...).
class SetProperties : public Transaction {
 public:
  SetProperties(Catalog* catalog, const io::FileIO* io, TableIdentifier id);

  SetProperties& Set(std::string key, std::string value);
  SetProperties& Remove(std::string key);

 protected:
  Status Prepare(const Table& base) override;
  Result<Attempt> Apply(const Table& base, int attempt) override;
  void Abandon() override {}

 private:
  std::map<std::string, std::string> updates_;
  std::vector<std::string> removals_;
};

/// \brief What RemoveSnapshots removes from one base.
struct SnapshotRemoval {
  std::set<std::int64_t> snapshot_ids;
  std::vector<std::string> refs;
};

/// \brief Remove snapshots and refs (expire-snapshots); no new snapshot. The removal is chosen
/// by `select` against every attempt's (reloaded) base, so what a concurrent commit added is
/// judged too and never lost; an error from `select` or from applying its choice ends the
/// commit. Deleting the files the removed snapshots reached is the caller's job, after Commit
/// succeeded (maintenance/expire.h): applied_base() is the metadata the winning attempt started
/// from, removed() what it removed.
class RemoveSnapshots : public Transaction {
 public:
  using Selector = std::function<Result<SnapshotRemoval>(const TableMetadata& base)>;
  RemoveSnapshots(Catalog* catalog, const io::FileIO* io, TableIdentifier id, Selector select);

  const SnapshotRemoval& removed() const { return removed_; }
  const TableMetadata& applied_base() const { return applied_base_; }

 protected:
  Status Prepare(const Table&) override { return Status::OK(); }
  Result<Attempt> Apply(const Table& base, int attempt) override;
  void Abandon() override {}

 private:
  Selector select_;
  SnapshotRemoval removed_;
  TableMetadata applied_base_;
};

}  // namespace geolake::table
