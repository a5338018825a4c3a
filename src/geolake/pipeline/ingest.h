/// \file
/// Ingest: load vector sources into a geolake table in the four stages of every job
/// (docs/architecture.md): discover (sources::DiscoverSources: fingerprints and units; units and
/// sources committed by earlier runs are skipped), transform (one worker per executor thread:
/// BatchTransformer), write (PartitionedWriter: one open file per partition value, within the
/// memory budget) and commit (one CommitCoordinator thread; whole units only).
///
/// Parallelism is within units as well as across them: a unit's batches (cut at
/// read_batch_rows rows or about 256 KiB of WKB) are read one at a time, transformed by any
/// worker in parallel, and written in read order by one worker at a time; at most one unit per
/// worker is open at once. Small sources (one unit each) are packed into work items of at most
/// `unit_rows` rows that share files and are committed together. A unit's files go to the
/// coordinator once its last row is written, so a unit's rows are committed all together or
/// not at all, and a cancelled run leaves only whole units visible. Files written but not
/// committed are listed in the run journal.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/core/shard.h"
#include "geolake/core/thread_pool.h"
#include "geolake/io/file_io.h"
#include "geolake/layout/table_layout.h"
#include "geolake/pipeline/transform.h"
#include "geolake/table/catalog.h"

namespace geolake::pipeline {

struct IngestOptions {
  std::string warehouse;  // the run folder goes to <warehouse>/.geolake/runs/<run-id>
  InvalidPolicy on_invalid = InvalidPolicy::kMakeValid;
  std::int64_t commit_rows = 1000000;
  std::int64_t commit_seconds = 30;
  /// Borrowed, may be null: the executor whose threads are the workers (discovery, transform,
  /// write and page compression all run on it). Null: one worker, on the calling thread.
  ThreadPool* executor = nullptr;
  std::int64_t memory_bytes = 0;  // 0 = DefaultMemoryBudget()
  std::string layer;
  bool allow_changed_sources = false;
  /// Create the table from the first source (LayoutNewTable with `layout`) when missing.
  bool create = false;
  layout::LayoutOptions layout;
  std::int64_t read_batch_rows = 8192;
  std::int64_t unit_rows = 100000;
  std::string run_id;  // empty = NewRunId()
  /// `--shard I/N`: only the units whose sources::ShardKey falls in this shard are read (the
  /// others are left to the processes of the other shards; resume is per unit as always).
  /// Every process of one job must name the same sources with the same unit_rows, or the
  /// units they cut differ. The default is the whole job.
  Shard shard;
  /// `--strict-schema`: refuse (kInvalidArgument, before any row is written) a source that
  /// lacks a table column or has a field the table has no column for; without it such columns
  /// are null (or dropped) with a warning.
  bool strict_schema = false;
};

/// \brief What a run did. On failure or cancel the counts say how far it got.
struct IngestSummary {
  std::string run_id;
  std::string run_dir;
  std::int64_t sources = 0;
  std::int64_t sources_skipped = 0;     // fully committed by earlier runs
  std::int64_t units = 0;               // units this run worked on
  std::int64_t units_skipped = 0;       // committed by earlier runs
  std::int64_t units_other_shards = 0;  // not yet committed, and another shard's
  std::int64_t rows_read = 0;
  std::int64_t rows_committed = 0;
  std::int64_t rows_rejected = 0;     // of committed units
  std::int64_t rows_uncommitted = 0;  // read by units that were not committed (cancel, error)
  /// Units (and the rows read for them) that another run committed while this one ran (the
  /// same source ingested by two processes at once): not committed again, their files are
  /// orphans. rows read = committed + rejected + committed elsewhere + uncommitted.
  std::int64_t units_committed_elsewhere = 0;
  std::int64_t rows_committed_elsewhere = 0;
  /// String values whose invalid UTF-8 bytes were replaced by U+FFFD (make-valid, keep).
  std::int64_t values_utf8_replaced = 0;
  /// Sources this run read that lack one or more table columns (written as null), and the
  /// rows they wrote with such nulls.
  std::int64_t sources_missing_columns = 0;
  std::int64_t rows_missing_columns = 0;
  std::int64_t files_written = 0;
  std::int64_t files_committed = 0;
  std::int64_t commits = 0;
  std::int64_t peak_inflight_bytes = 0;  // batches between read and write + rows writers hold
  /// Worker threads that transformed at least one batch (a one-unit source uses several).
  std::int64_t transform_threads = 0;
  std::int64_t memory_bytes = 0;
  bool table_created = false;
};

/// \brief Ingest `specs` (paths, globs, folders) into table `id`.
///
/// `summary` (required) is filled also when an error is returned. Metrics (optional): stages
/// discover, read, transform, write, commit; gauge inflight_bytes; counters rows_read,
/// rows_committed, rows_rejected, transform_threads.
/// Errors: kNotFound for a missing table (without `create`) or source; kInvalidArgument for
/// a source whose fields do not fit the table (before any row is written; under
/// `strict_schema` also one that lacks a table column or has an extra field), a source without
/// a CRS whose first rows are mostly outside lon/lat range while the table CRS is geographic
/// (projected coordinates: refused before any row is written), a changed source
/// whose path was committed (without `allow_changed_sources`); kCancelled when `stop` fires
/// (whole units committed so far stay committed); kInternal when rows read != rows committed
/// + rows rejected + rows committed by another run at the end of a complete run;
/// kCommitConflict when units packed with units another run committed meanwhile could not be
/// committed (the others are; run again); commit, I/O and source errors.
Status Ingest(table::Catalog& catalog, const io::FileIO& io, const table::TableIdentifier& id,
              const std::vector<std::string>& specs, const IngestOptions& options,
              IngestSummary* summary, Metrics* metrics = nullptr, std::stop_token stop = {});

}  // namespace geolake::pipeline
