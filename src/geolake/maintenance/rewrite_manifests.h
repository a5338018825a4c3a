/// \file
/// `geolake rewrite-manifests`: rewrite the live entries of the current snapshot's data
/// manifests into few manifests clustered by partition, with Iceberg's rewrite_manifests
/// semantics (docs/maintenance.md#rewrite-manifests):
///
/// 1. Read every data manifest of the current snapshot (a damaged one refuses the run, naming
///    the file, before anything is written) and keep the live entries (ADDED and EXISTING;
///    DELETED entries disappear, as in Java).
/// 2. Plan (PlanManifestRewrite, pure): per partition spec, entries ordered by partition tuple
///    (nulls first, Iceberg's value order), cut into manifests of equal entry counts, so each
///    covers a contiguous partition range, and as few as keep every one (encoded) within the
///    target: `commit.manifest.target-size-bytes` (Iceberg's default 8 MiB) unless given.
/// 3. Commit one `replace` snapshot that changes manifests only: every entry becomes EXISTING
///    and keeps its snapshot id, data and file sequence numbers (and v3 first_row_id)
///    explicitly (Iceberg spec, "Sequence Number Inheritance": a data sequence number never
///    changes after the file was added); delete manifests are carried over unchanged. The new
///    manifests must hold exactly the live files and rows of the replaced ones (Java's
///    "Replaced and created manifests must have the same number of active files").
///
/// A concurrent commit that wins the race makes the attempt re-plan against the new current
/// snapshot (its manifests are rewritten too); the manifests of a lost attempt are deleted.
/// A snapshot whose data already sits in a single manifest that the plan would keep as one is a
/// no-op. Data files are never touched; old manifests stay for older snapshots (expire-snapshots
/// deletes them once no snapshot needs them).
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/catalog.h"
#include "geolake/table/manifest.h"
#include "geolake/table/table_metadata.h"
#include "geolake/table/transaction.h"

namespace geolake::maintenance {

/// Iceberg's `commit.manifest.target-size-bytes` default: 8 MiB.
inline constexpr std::int64_t kDefaultManifestTargetSizeBytes = std::int64_t{8} << 20;

/// \brief One data manifest of the current snapshot with its entries (as read, numbers
/// inherited from the list entry).
struct ManifestToRewrite {
  table::ManifestFile manifest;
  std::vector<table::ManifestEntry> entries;
};

/// \brief One manifest the rewrite writes: live entries of one spec, in partition order.
struct PlannedManifest {
  std::int32_t spec_id = 0;
  std::vector<table::ManifestEntry> entries;  // all EXISTING, numbers explicit
  std::int64_t rows = 0;
  /// The partition tuples of its first and last entry, as text ("" for unpartitioned).
  std::string first_partition;
  std::string last_partition;
  /// The encoded size: estimated while planning, exact once written.
  std::int64_t bytes = 0;
  std::string path;  // set when written
};

/// \brief What the rewrite would do with one snapshot's data manifests.
struct ManifestRewritePlan {
  std::vector<PlannedManifest> manifests;
  std::int64_t input_manifests = 0;
  std::int64_t input_bytes = 0;  // manifest_length sum
  std::int64_t live_entries = 0;
  std::int64_t deleted_entries = 0;  // DELETED entries that disappear
  std::int64_t target_bytes = 0;
};

/// \brief Group the live entries of `inputs` into manifests (pure but for encoding in memory to
/// measure sizes): per spec id (ascending), entries sorted by partition tuple with a stable
/// sort (ties keep manifest-list and entry order), cut into few chunks of equal entry
/// counts whose encoded size is within target_bytes (a chunk of one entry may exceed it).
/// kInvalidArgument for target_bytes <= 0; kCorruptData for a manifest whose spec id the table
/// lacks or whose entry lacks its numbers.
Result<ManifestRewritePlan> PlanManifestRewrite(const table::TableMetadata& metadata,
                                                const std::vector<ManifestToRewrite>& inputs,
                                                std::int64_t target_bytes);

struct RewriteManifestsOptions {
  /// Target size of a new manifest; nullopt: the table's `commit.manifest.target-size-bytes`,
  /// else 8 MiB. Must be > 0.
  std::optional<std::int64_t> target_manifest_size_bytes;
  /// Plan and report; write and commit nothing.
  bool dry_run = false;
  /// Test hook passed to the transaction (table/transaction.h CommitPhase): kManifestWritten
  /// once the attempt's new manifests are durable, then the usual phases.
  table::CommitHook commit_hook;
};

/// \brief The outcome of one run.
struct RewriteManifestsReport {
  bool dry_run = false;
  /// True when there was nothing to rewrite (no snapshot, no data manifest, or one manifest
  /// that would stay one); `noop_reason` says which. Nothing is written then.
  bool noop = false;
  std::string noop_reason;
  /// The plan of the attempt that committed (dry run: the plan).
  ManifestRewritePlan plan;
  std::int64_t manifests_kept = 0;  // delete manifests carried over unchanged
  std::int64_t output_bytes = 0;    // sum of the new manifests' sizes
  std::int64_t snapshot_id = 0;     // the new snapshot (0: none)
  std::string metadata_location;
  int commit_attempts = 0;
};

/// \brief Rewrite the current snapshot's data manifests of table `id` (see the file comment).
/// Errors (nothing committed, and every manifest this run wrote deleted): kInvalidArgument for
/// a target <= 0 or a v1 snapshot without a manifest list; kNotFound; kCorruptData naming a
/// manifest list or manifest that cannot be read; kCancelled when `stop` is requested before
/// the swap; the commit's errors (kCommitConflict once the retries are exhausted).
Result<RewriteManifestsReport> RewriteManifests(table::Catalog& catalog, const io::FileIO& io,
                                                const table::TableIdentifier& id,
                                                const RewriteManifestsOptions& options,
                                                std::stop_token stop = {});

}  // namespace geolake::maintenance
