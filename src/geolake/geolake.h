/// \file
/// The header a program includes to embed geolake. A Warehouse is one warehouse root folder
/// and its catalog, together with the engine that works on it: ONE executor (a thread pool)
/// that every operation runs on, one metrics registry, and one stop source. Its methods are the
/// operations of the `geolake` program (create, ingest, query, describe, snapshots, files,
/// append, remove-orphans, render, profile, convert): each takes a small option struct and
/// returns data, never text. The `geolake` program is a client of this class that only parses
/// arguments, prints results and maps errors to exit codes.
///
/// docs/api.md shows how to build against the installed package (CMake or pkg-config), the
/// threading and error rules, and how to add an operation.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/core/stop.h"
#include "geolake/core/thread_pool.h"
#include "geolake/core/version.h"
#include "geolake/geo/envelope.h"
#include "geolake/io/file_io.h"
#include "geolake/maintenance/compact.h"
#include "geolake/maintenance/expire.h"
#include "geolake/maintenance/orphans.h"
#include "geolake/maintenance/policy.h"
#include "geolake/maintenance/rewrite_manifests.h"
#include "geolake/ops/dissolve.h"
#include "geolake/ops/eliminate.h"
#include "geolake/ops/join.h"
#include "geolake/ops/make_valid.h"
#include "geolake/ops/polygonize.h"
#include "geolake/ops/profile.h"
#include "geolake/ops/reproject.h"
#include "geolake/ops/runner.h"
#include "geolake/ops/simplify.h"
#include "geolake/pipeline/convert.h"
#include "geolake/pipeline/ingest.h"
#include "geolake/query/scan.h"
#include "geolake/render/render.h"
#include "geolake/table/catalog.h"
#include "geolake/table/manifest.h"
#include "geolake/table/schema.h"
#include "geolake/table/transaction.h"

namespace geolake {

/// \brief How Warehouse::Open sets up the engine.
struct WarehouseOptions {
  /// The catalog: "" = SQLite at `<location>/catalog.db`, "sqlite:PATH", or
  /// "postgresql://..." (catalog::OpenCatalog).
  std::string catalog;
  /// Threads of the executor; 0 = one per hardware thread.
  int workers = 0;
  /// The in-flight memory budget of the operations that have one (ingest, query); 0 = each
  /// operation's own default (ingest: a quarter of RAM; query: 512 MiB).
  std::int64_t memory_bytes = 0;
  /// Turn SIGINT and SIGTERM into a stop request while the Warehouse lives (a second signal
  /// exits the process). Only one object per process may handle signals at a time. A program
  /// asks for this; a library that embeds geolake usually does not.
  bool handle_signals = false;
  /// Stop everything this Warehouse runs once this long has passed since Open.
  std::optional<std::chrono::milliseconds> timeout;
  /// Open the catalog for reading only (catalog::OpenCatalogForReading): nothing is created,
  /// a missing SQLite catalog is kNotFound naming its path, and writes fail ("not committed").
  /// For programs and commands that only read (describe, files, snapshots, query, render).
  bool read_only_catalog = false;
};

/// \brief What Warehouse::CreateTable makes. Give exactly one of `from` and `schema`.
struct CreateTableOptions {
  /// Take the columns from this vector source (any format GDAL reads, or GeoParquet) and lay
  /// the table out as docs/table-layout.md says.
  std::string from;
  /// The layer of `from`; empty = the first.
  std::string layer;
  /// Or: this Iceberg schema, taken as given (validated). When it has the layout's geometry,
  /// bbox and geo_hilbert columns, the layout's sort order and geolake.* properties are added.
  table::SchemaPtr schema;
  /// "quadkey:Z", "s2:L" or "none". Empty: with `from`, chosen from the source's size as
  /// Ingest chooses it (CreatedTable::partition_reason says why); with `schema`, quadkey:4
  /// when the schema has geo_cell, else none.
  std::string partition;
  /// The table CRS (geolake.crs).
  std::string crs = "EPSG:4326";
  int format_version = table::kDefaultFormatVersion;
  /// Table properties. geolake.hilbert.extent and geolake.hilbert.order are validated and
  /// applied to the layout; geolake.crs and geolake.partition are refused (use `crs` and
  /// `partition`).
  std::map<std::string, std::string> properties;
  /// The table location; empty = `<warehouse>/<namespace levels>/<name>`.
  std::string location;
};

/// \brief A table CreateTable made.
struct CreatedTable {
  table::Table table;
  /// Why the partition was chosen when CreateTableOptions::partition was empty and `from` was
  /// given; empty otherwise.
  std::string partition_reason;
  /// The warehouse folder when an explicit CreateTableOptions::location lies outside it (or is
  /// the warehouse itself); empty otherwise. A name alone never places a table outside.
  std::string outside_warehouse;
};

/// \brief What Warehouse::Ingest loads and how; the engine's part (executor, memory budget,
/// stop token, metrics, warehouse folder) comes from the Warehouse.
struct IngestOptions {
  pipeline::InvalidPolicy on_invalid = pipeline::InvalidPolicy::kMakeValid;
  /// Commit after this many rows or seconds, whichever comes first.
  std::int64_t commit_rows = 1000000;
  std::int64_t commit_seconds = 30;
  /// The layer to read from each source; empty = the first.
  std::string layer;
  /// Create the table from the first source when it does not exist.
  bool create = false;
  /// With `create`: "quadkey:Z", "s2:L" or "none"; empty = chosen from the sources' bytes
  /// (IngestPartition). An existing table keeps its own.
  std::string partition;
  /// With `create`: the table CRS.
  std::string crs = "EPSG:4326";
  /// With `create`: the Iceberg format version, 2 or 3 (3: the geometry column has Iceberg's
  /// geometry type, as CreateTableOptions::format_version says). An existing table keeps its own.
  int format_version = table::kDefaultFormatVersion;
  /// Ingest a source again whose file changed since an earlier run committed it.
  bool allow_changed_sources = false;
  /// Rows per unit of work (resume works in whole units).
  std::int64_t unit_rows = 100000;
  /// The run id (the journal's folder name); empty = a new one.
  std::string run_id;
  /// Load only this shard of the sources' units (`--shard I/N`; pipeline::IngestOptions::shard
  /// says what every process of one job must share). The default is the whole job.
  Shard shard;
  /// Refuse a source that lacks a table column or has a field the table lacks, instead of
  /// writing nulls or dropping the field with a warning (`--strict-schema`).
  bool strict_schema = false;
};

/// \brief The partition a new table gets when none is given, and why.
struct ChosenPartition {
  std::string partition;  // "quadkey:1", "none", ...
  std::string reason;     // one line for the user
};

/// \brief One value of a data file's partition tuple.
struct PartitionValue {
  std::string name;     // the partition field, e.g. "geo_cell" ("p0", "p1"... when unknown)
  table::TypePtr type;  // null when the table's default spec does not describe the file
  table::Value value;
};

/// \brief A partition tuple as "geo_cell=0231" pairs joined by "/" ("" when unpartitioned);
/// a null value is "null", a value of unknown type "?".
std::string PartitionText(const std::vector<PartitionValue>& partition);

/// \brief One live data file of a snapshot.
struct DataFileInfo {
  table::ManifestEntry entry;  // the data file, with its snapshot id and sequence number
  std::vector<PartitionValue> partition;
  /// The file's bbox from its manifest bounds of bbox.xmin..bbox.ymax; nullopt when the table
  /// has no geolake layout or a bound is missing (e.g. a file of only null geometries).
  std::optional<geo::Envelope> bbox;
};

/// \brief The live data files of one snapshot (Warehouse::Files).
struct TableFiles {
  table::Table table;
  std::int64_t snapshot_id = 0;  // 0 for a table without snapshots
  std::vector<DataFileInfo> files;
  std::int64_t records = 0;  // Σ record_count
  std::int64_t bytes = 0;    // Σ file_size_in_bytes
};

/// \brief A table and the size of its current snapshot (Warehouse::Describe). The schema,
/// partition spec, sort order and properties are in `table.metadata`.
struct TableDescription {
  table::Table table;
  std::int64_t data_files = 0;
  std::int64_t records = 0;
  std::int64_t bytes = 0;
  std::int64_t partitions = 0;  // distinct partition tuples among the data files
  /// The union of the data files' bboxes; nullopt when unknown (no layout, or a file with
  /// rows but no bounds). Files of only null geometries add nothing.
  std::optional<geo::Envelope> bbox;
};

/// \brief One file Warehouse::Append committed.
struct AppendedFile {
  std::string path;  // absolute
  std::vector<PartitionValue> partition;
  std::int64_t record_count = 0;
  std::int64_t file_size_in_bytes = 0;
};

/// \brief How Warehouse::Append checks the files it commits.
struct AppendOptions {
  /// Check only footers and schemas; skip decoding every page (layout::VerifyDataFileContents).
  /// The fast path, for files geolake itself wrote.
  bool trust_footers = false;
};

/// \brief What Warehouse::Append committed, in one append snapshot.
struct AppendResult {
  table::TableIdentifier table;
  table::CommitResult commit;
  std::vector<AppendedFile> files;
  std::int64_t records = 0;
  std::int64_t bytes = 0;
};

/// \brief A warehouse and the engine that works on it.
///
/// Every operation runs its parallel work on executor() (no operation starts threads of its
/// own; docs/api.md lists the few service threads), records its metrics in metrics(), and
/// stops early with kCancelled once stop_token() is requested. A stop is final: operations
/// started afterwards return kCancelled at once; open a new Warehouse to go on.
///
/// The catalog is connected on first use (catalog() or the first table operation), so a
/// Warehouse that only profiles or converts files never creates `<location>/catalog.db`.
///
/// Thread-safety: all methods are safe to call concurrently. Concurrent operations share the
/// executor (they are slower, never wrong), and their commits to one table serialize in the
/// catalog (a lost race is retried, see table/transaction.h). The metrics of concurrent
/// operations add up in one registry.
class Warehouse {
 public:
  /// \brief Open the warehouse at `location` (a folder; created when the catalog is first used)
  /// and start the engine: the executor's threads, the metrics registry and the stop source.
  ///
  /// Errors: kInvalidArgument for a bad worker count or timeout; kAlreadyExists when
  /// `handle_signals` is asked while another object handles signals; kInternal/kIOError when a
  /// thread cannot be started.
  static Result<std::unique_ptr<Warehouse>> Open(std::string location,
                                                 WarehouseOptions options = {});

  ~Warehouse();
  Warehouse(const Warehouse&) = delete;
  Warehouse& operator=(const Warehouse&) = delete;

  /// \brief The warehouse folder as given to Open.
  const std::string& location() const { return location_; }
  const WarehouseOptions& options() const { return options_; }

  // The engine. Borrowed pointers: they live as long as the Warehouse.

  /// \brief The one executor every operation runs on.
  ThreadPool* executor() const { return executor_.get(); }
  /// \brief The catalog, connected on the first call. Errors: those of catalog::OpenCatalog
  /// (a failed connection is retried by the next call).
  Result<table::Catalog*> catalog();
  const io::FileIO& io() const { return *io_; }
  Metrics& metrics() { return metrics_; }
  std::stop_token stop_token() const { return stop_->token(); }
  /// \brief Stop every running operation; they return kCancelled.
  void RequestStop() { stop_->RequestStop(); }
  /// \brief Why the stop happened ("interrupted by SIGINT", "stop requested", ...) as a
  /// kCancelled status; OK while not stopped.
  Status StopStatus() const { return stop_->StopStatus(); }
  /// \brief 128 + the signal that stopped the engine (130 for SIGINT, 143 for SIGTERM), or 0.
  int SignalExitCode() const { return stop_->SignalExitCode(); }

  // Tables. A table name is "namespace.name" (namespace levels joined by dots).

  /// \brief Load a table. kInvalidArgument for a bad name, kNotFound for an unknown table,
  /// kCorruptData when its metadata cannot be read or names no current schema.
  Result<table::Table> LoadTable(std::string_view name);

  /// \brief Create a table (its namespace too, when missing). kAlreadyExists when it exists;
  /// kInvalidArgument for bad options, a bad schema or source fields; source errors of `from`.
  Result<CreatedTable> CreateTable(std::string_view name, const CreateTableOptions& options);

  /// \brief The partition Ingest with `create` and no `partition` gives `table` when it does
  /// not exist yet (chosen from the bytes of `sources`); nullopt when the table exists (it keeps
  /// its own). A program can print it before a long ingest starts.
  Result<std::optional<ChosenPartition>> IngestPartition(std::string_view table,
                                                         const std::vector<std::string>& sources);

  /// \brief Load `sources` (paths, globs, folders) into `table` in parallel on the executor,
  /// committing whole units as it goes; resumable (a re-run skips committed units) and
  /// cancellable (whole units committed before the stop stay).
  ///
  /// `summary` (required) is filled also when an error is returned. Errors: as
  /// pipeline::Ingest; a stop of the engine is kCancelled with StopStatus()'s reason.
  Status Ingest(std::string_view table, const std::vector<std::string>& sources,
                const IngestOptions& options, pipeline::IngestSummary* summary);

  /// \brief Scan one snapshot of `table` (options say which, and the filters), writing the
  /// matching rows to `sink` in table order; `sink` may be null (explain only: the scan runs,
  /// rows are dropped). Returns what each pruning level did (query::QueryExplain).
  ///
  /// The warehouse sets the options' engine fields (executor; memory_bytes when the warehouse
  /// has a budget). Errors: as query::RunQuery, prefixed "query 'TABLE': ".
  Result<query::QueryExplain> Query(std::string_view table, query::QueryOptions options,
                                    query::RowSink* sink);
  /// \brief As above, on a table already loaded (e.g. to read its CRS first).
  Result<query::QueryExplain> Query(const table::Table& table, query::QueryOptions options,
                                    query::RowSink* sink);

  /// \brief A table and the size of its current snapshot.
  Result<TableDescription> Describe(std::string_view table);
  /// \brief The live data files of `snapshot_id` (default: the current snapshot). kNotFound
  /// for an unknown snapshot.
  Result<TableFiles> Files(std::string_view table, std::optional<std::int64_t> snapshot_id = {});
  /// \brief The table's snapshots, oldest first, are `table.metadata.snapshots`; this loads
  /// the table for them.
  Result<table::Table> Snapshots(std::string_view table) { return LoadTable(table); }

  /// \brief Commit existing Parquet data files to `table` in one append snapshot. Every page of
  /// each file is decoded and checked first (layout::VerifyDataFileContents: pages and their
  /// CRCs, rows per column against the footer, WKB) unless `options.trust_footers`; each file's
  /// columns must match the table schema by field id, name and type, its geometry CRS the
  /// table's, and for a partitioned table its partition column must hold one value in every
  /// row. kInvalidArgument for a file that does not fit or is already live; kCorruptData for
  /// one whose contents disagree with its footer or do not decode, or whose row counts would
  /// overflow the total.
  Result<AppendResult> Append(std::string_view table, const std::vector<std::string>& files,
                              const AppendOptions& options = {});

  /// \brief Delete the files under the table location that no snapshot references and that
  /// are older than `options.older_than` (the warehouse sets `options.warehouse`).
  Result<maintenance::OrphanReport> RemoveOrphans(std::string_view table,
                                                  maintenance::OrphanOptions options);

  /// \brief Rewrite the small and oversized data files of `table` into files near the target
  /// size (binpack, sort or hilbert; maintenance/compact.h, docs/maintenance.md). The groups
  /// and the file writers' page compression run on the executor. The warehouse sets the
  /// options' executor and metrics, and memory_bytes and temp_dir when they are unset (its own
  /// budget; `<location>/.geolake-tmp`). Errors: as maintenance::Compact; once groups ran, the
  /// report's `status` says what failed.
  Result<maintenance::CompactReport> Compact(std::string_view table,
                                             maintenance::CompactOptions options);

  /// \brief Drop old snapshots of `table` (Iceberg's expire_snapshots rules; defaults from the
  /// table's history.expire.* properties), commit, then delete the files only they reached, on
  /// the executor (maintenance/expire.h). Errors: as maintenance::ExpireSnapshots; after the
  /// commit the report's `status` says what failed while deleting.
  Result<maintenance::ExpireReport> ExpireSnapshots(std::string_view table,
                                                    maintenance::ExpireOptions options);

  /// \brief Rewrite the current snapshot's data manifests of `table` into few, clustered by
  /// partition and cut at the target size (commit.manifest.target-size-bytes, 8 MiB), in one
  /// `replace` snapshot that changes manifests only (maintenance/rewrite_manifests.h). Records
  /// `rewrite_manifests.*` counters. Errors: as maintenance::RewriteManifests; a stop before
  /// the swap is the stop's status and commits nothing.
  Result<maintenance::RewriteManifestsReport> RewriteManifests(
      std::string_view table, maintenance::RewriteManifestsOptions options);

  /// \brief Measure `table` against `policy` (maintenance/policy.h): live and small data
  /// files (the compaction's planner), manifests of the current snapshot, snapshots and those
  /// older than the retention, metadata versions, orphans older than the policy's age, all
  /// ages against `now_ms` (0: the current time). Reads only. Errors: kInvalidArgument when the
  /// table's CRS is not the policy's; those of the dry runs.
  Result<maintenance::TableMeasurement> MeasureForPolicy(
      std::string_view table, const maintenance::MaintenancePolicy& policy,
      std::int64_t now_ms = 0);

  /// \brief Measure `table`, then run the tasks whose thresholds are crossed, in order:
  /// compact (the policy's strategy and target, max_concurrent_compactions groups at once,
  /// partial progress), rewrite-manifests, expire-snapshots (older than retention_days, keeping
  /// min_snapshots_to_keep), remove-orphans (older than orphan_min_age_hours). A dry run
  /// measures and decides only. Records `maintain.*` counters (measurements and tasks run).
  /// Errors: as MeasureForPolicy; once tasks run, the report's `status` says what failed (the
  /// tasks after it do not run) or that a stop came between tasks.
  Result<maintenance::MaintainReport> Maintain(std::string_view table,
                                               const maintenance::MaintenancePolicy& policy,
                                               const maintenance::MaintainOptions& options = {});

  // Operations on the ops runner (ops/runner.h): resumable by unit, sharded by --shard,
  // rejects per feature, committed to an output table or written to a file.

  /// \brief The engine parts an operation runs with (the catalog is connected here). They are
  /// borrowed from the Warehouse and valid while it lives. For an operation of ops/ that has
  /// no method of its own yet.
  Result<ops::OpEnv> OperationEnv();

  /// \brief Spatial join of `left` and `right` into `output` (ops/join.h). `runner`'s
  /// memory_bytes, when 0, becomes the warehouse budget. `summary` (required) and `report`
  /// (may be null) are filled also when an error is returned. Errors: as ops::RunJoin; a stop
  /// of the engine is kCancelled with StopStatus()'s reason.
  Status Join(const ops::InputSpec& left, const ops::InputSpec& right,
              const ops::JoinOptions& options, const ops::OutputSpec& output,
              const ops::RunnerOptions& runner, ops::RunSummary* summary,
              ops::JoinReport* report = nullptr);

  /// \brief Dissolve `input` into `output` (ops/dissolve.h): one feature per group, the union
  /// of its geometries. As Join for `runner`, `summary` and `report`. Errors: as
  /// ops::RunDissolve; a stop is kCancelled with StopStatus()'s reason.
  Status Dissolve(const ops::InputSpec& input, const ops::DissolveOptions& options,
                  const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                  ops::RunSummary* summary, ops::DissolveReport* report = nullptr);

  /// \brief Eliminate small polygons of `input` into `output` (ops/eliminate.h): each polygon
  /// below the threshold merges into a neighbour sharing a border. As Join for `runner`,
  /// `summary` and `report`. Errors: as ops::RunEliminate; a stop is kCancelled with
  /// StopStatus()'s reason.
  Status Eliminate(const ops::InputSpec& input, const ops::EliminateOptions& options,
                   const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                   ops::RunSummary* summary, ops::EliminateReport* report = nullptr);

  /// \brief Reproject `input` into `output` (ops/reproject.h): every coordinate from the
  /// input's CRS to `options.to` (x = longitude/easting always), the output laid out in that
  /// CRS. As Join for `runner`, `summary` and `report`. Errors: as ops::RunReproject; a stop
  /// is kCancelled with StopStatus()'s reason.
  Status Reproject(const ops::InputSpec& input, const ops::ReprojectOptions& options,
                   const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                   ops::RunSummary* summary, ops::ReprojectReport* report = nullptr);
  /// \brief Polygonize a band of `raster` into `output` (ops/polygonize.h): one polygon per
  /// connected region of equal value, as gdal_polygonize. As Join for `runner`, `summary` and
  /// `report`. Errors: as ops::RunPolygonize; a stop is kCancelled with StopStatus()'s reason.
  Status Polygonize(const std::string& raster, const ops::PolygonizeOptions& options,
                    const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                    ops::RunSummary* summary, ops::PolygonizeReport* report = nullptr);
  /// \brief Simplify `input` into `output` (ops/simplify.h): Douglas-Peucker,
  /// topology-preserving or coverage. As Join for `runner`, `summary` and `report`. Errors: as
  /// ops::RunSimplify; a stop is kCancelled with StopStatus()'s reason.
  Status Simplify(const ops::InputSpec& input, const ops::SimplifyOptions& options,
                  const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                  ops::RunSummary* summary, ops::SimplifyReport* report = nullptr);
  /// \brief Make-valid `input` into `output` (ops/make_valid.h): invalid geometries repaired
  /// with GEOS's make-valid (huge polygons ring by ring on the executor), valid ones passed
  /// through. As Join for `runner`, `summary` and `report`. Errors: as ops::RunMakeValid; a
  /// stop is kCancelled with StopStatus()'s reason.
  Status MakeValid(const ops::InputSpec& input, const ops::MakeValidOptions& options,
                   const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                   ops::RunSummary* summary, ops::MakeValidReport* report = nullptr);

  /// \brief Draw the table's features (and with `files`, its data-file boxes) as a PNG.
  Result<render::RenderSummary> Render(std::string_view table,
                                       const render::RenderOptions& options);

  // Files outside the catalog.

  /// \brief Profile a vector source on the executor (ops/profile.h); the warehouse sets the
  /// options' executor and stop token.
  Result<ops::ProfileReport> Profile(const std::string& source, ops::ProfileOptions options);

  /// \brief Write a vector source as one GeoParquet file (pipeline/convert.h).
  Result<pipeline::ConvertSummary> Convert(const std::string& source, const std::string& output,
                                           const pipeline::ConvertOptions& options);

  /// Only Open() can create the tag, so only Open() constructs a Warehouse.
  class PrivateTag {
   private:
    friend class Warehouse;
    PrivateTag() = default;
  };
  Warehouse(PrivateTag /*tag*/, std::string location, WarehouseOptions options);

 private:
  std::string location_;
  WarehouseOptions options_;
  std::unique_ptr<io::FileIO> io_;
  Metrics metrics_;
  std::unique_ptr<StopController> stop_;
  std::mutex catalog_mu_;  // guards catalog_ (connected once, on first use)
  std::unique_ptr<table::Catalog> catalog_;
  // Last: destroyed (its threads joined) before anything its tasks could use.
  std::unique_ptr<ThreadPool> executor_;
};

}  // namespace geolake
