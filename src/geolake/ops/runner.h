/// \file
/// The ops runner: what every batch operation (DESIGN.md "Operations") shares, so that an
/// operation is only its own geometry work. The runner
/// - reads the input: a table at a snapshot, pruned by --bbox/--where through the query
///   planner (query/scan.h), or any source ingest reads (sources/discover.h), in units (a data
///   file of the table, a unit of a source) cut into batches that the engine's executor
///   processes in parallel, within --memory;
/// - gives each worker thread its own GeoContext and the operation's per-worker state (OpWorker),
///   and applies the policy for a GEOS error on one feature (skip it and record it in the
///   rejects file with its id, or stop the run);
/// - writes the output rows, in input order, to a table (created with the layout of
///   docs/table-layout.md unless it exists; the pipeline's partitioned writer and commit
///   coordinator) or to a file whose extension names its format (query/output.h);
/// - makes a table output resumable: every snapshot records the operation, its parameters and
///   its inputs (snapshot ids, source fingerprints) in the `geolake.op` summary and the
///   committed units in `geolake.units`; a re-run of the same operation skips committed units,
///   and a different run into the same table is refused (RunnerOptions::append allows it);
/// - processes only the units of one shard (`--shard I/N`, a stable hash of the unit key);
/// - counts rows per stage, shows progress, stops within 2 s of SIGINT (the stop token is
///   checked between batches and interrupts GEOS), and checks the invariant at the end: every
///   input row delivered to the operation is in the output, dropped with a reason, or rejected.
///
/// An operation may read its input in several passes (a spatial join partitioned to fit the
/// budget reads each cell's rows in a pass of its own), each over the main input or another
/// Input, optionally restricted to a box. docs/ops.md shows how to add an operation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/core/shard.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/geo_context.h"
#include "geolake/io/file_io.h"
#include "geolake/layout/table_layout.h"
#include "geolake/pipeline/transform.h"
#include "geolake/table/catalog.h"

namespace geolake {
class ThreadPool;
}  // namespace geolake

namespace geolake::ops {

/// \brief The engine parts an operation runs with (borrowed; they outlive the run).
struct OpEnv {
  table::Catalog* catalog = nullptr;  // needed for table inputs and outputs
  const io::FileIO* io = nullptr;     // required
  ThreadPool* executor = nullptr;     // required: every parallel step runs here
  Metrics* metrics = nullptr;         // optional
  std::stop_token stop;
  /// The warehouse root: run folders go to `<warehouse>/.geolake/runs/<run-id>`, new tables
  /// to `<warehouse>/<namespace>/<name>`.
  std::string warehouse;
};

/// \brief What an operation reads: a table (`table` set) or sources (`sources` set).
struct InputSpec {
  std::string table;                        // "namespace.name"
  std::vector<std::string> sources;         // paths, globs, folders (as ingest takes them)
  std::string layer;                        // sources: the layer; empty = the first
  std::optional<std::int64_t> snapshot_id;  // tables: time travel; unset = current
  std::optional<geo::Envelope> bbox;        // rows whose bbox overlaps it
  std::string where;                        // tables: a --where expression (query/expr.h)
  std::vector<std::string> columns;         // attribute columns to read; empty = all
};

/// \brief Decide what a command-line INPUT names: an existing path or a glob (`*`, `?`, `[`)
/// is a source; anything else must be a table name ("namespace.name").
/// Errors: kInvalidArgument for text that is neither.
Result<InputSpec> ResolveInput(std::string_view text);

/// \brief One unit of an input: a data file of a table, or a unit of a source. Units are what
/// resume and --shard count.
struct InputUnit {
  /// Stable text: "file:<data file path>" or "<source fingerprint>#<unit index>".
  std::string key;
  /// A 53-bit hash of the key (exact in JSON numbers) that snapshot summaries record.
  std::int64_t id = 0;
  /// The data file or source path: rejects and messages name it.
  std::string path;
  /// The unit's position in the order one Read delivers units (0, 1, ...; a table's units
  /// count the files the scan reads, a source's every unit of the sources), so that an
  /// operation working on parallel batches can still tell input order (dissolve's `first`).
  std::int64_t ordinal = 0;
};

/// \brief An opened input: its fields, CRS and identity, readable any number of times.
///
/// Thread-safety: const methods are safe to call concurrently (each Read is independent).
class Input {
 public:
  /// \brief Open `spec`: load the table (its layout, the snapshot) or discover the sources
  /// (fingerprints and units). Errors: kInvalidArgument for a spec that names both or neither,
  /// --where on sources, an unknown column; kNotFound for a missing table, snapshot or
  /// source; those of the catalog and discovery.
  static Result<std::unique_ptr<Input>> Open(const OpEnv& env, InputSpec spec);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  const InputSpec& spec() const;
  /// \brief "table 'ns.name'" or "source 'path'" (or "N sources"), for messages.
  const std::string& label() const;
  /// \brief The attribute fields every batch carries, in order.
  const std::vector<geoparquet::FieldDef>& fields() const;
  /// \brief The CRS ("EPSG:4326", or PROJJSON for a source without an authority code); empty
  /// when unknown.
  const std::string& crs() const;
  /// \brief What makes a re-run the same run: the table and snapshot id (and filters), or the
  /// sources' fingerprints.
  const std::string& identity() const;
  /// \brief Bytes of the table's data files at the snapshot, or of the source files.
  std::int64_t data_bytes() const;
  /// \brief Rows before any filter; -1 when unknown (a GeoJSON source).
  std::int64_t row_count() const;

  /// \brief How one Read goes.
  struct ReadOptions {
    /// Rows whose bbox overlaps this box too (besides InputSpec::bbox).
    std::optional<geo::Envelope> bbox;
    /// Units for which this returns false are not read (resume, --shard).
    std::function<bool(const InputUnit&)> keep;
    /// The scan's decoded row groups in flight stay under this.
    std::int64_t memory_bytes = std::int64_t{64} << 20;
    /// Rows per batch read from a source.
    std::int64_t batch_rows = 8192;
  };

  /// \brief Receives what Read delivers, on the calling thread, in input order.
  class Visitor {
   public:
    virtual ~Visitor() = default;
    /// \brief Rows of `unit` (feature_index: the row's position in its data file or source).
    virtual Status Batch(const InputUnit& unit, geoparquet::FeatureBatch batch) = 0;
    /// \brief Every batch of `unit` was delivered.
    virtual Status UnitEnd(const InputUnit& unit) = 0;
  };

  /// \brief Read every kept unit. A table is scanned on `executor` (query/scan.h: pruning at
  /// every level); sources are read on the calling thread. Errors: kCancelled when `stop`
  /// fires; read errors naming the file; the visitor's errors.
  Status Read(const ReadOptions& options, ThreadPool* executor, Visitor* visitor,
              std::stop_token stop) const;

  struct Impl;  // defined in runner.cc

  /// \brief What an input made of units an operation lists looks like (UnitList).
  struct UnitList {
    std::string label;     // for messages, e.g. "raster 'a.tif'"
    std::string path;      // every unit's path (rejects and messages name it)
    std::string identity;  // what makes a re-run the same run (a file fingerprint, ...)
    std::string crs;
    std::int64_t data_bytes = 0;
    std::vector<geoparquet::FieldDef> fields;
    /// Unit i's key (stable across runs: resume and --shard use it); its ordinal is i.
    std::vector<std::string> keys;
    /// The rows of one unit, called on the reading thread in unit order for kept units only.
    std::function<Result<geoparquet::FeatureBatch>(const InputUnit& unit)> read;
  };
  /// \brief An input that is neither a table nor a vector source: units the operation lists
  /// (ops/polygonize.h: a raster's windows, each one row that names its window). Read
  /// delivers each kept unit's batch from `read`, then its UnitEnd; row_count() is the number
  /// of units. A --bbox does not apply (the operation applies its own).
  static std::unique_ptr<Input> FromUnits(UnitList units);

 private:
  explicit Input(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// \brief What happens when GEOS fails on one feature.
enum class FeatureErrorPolicy : std::uint8_t {
  kSkip,  ///< count it, record it (feature id, reason, geometry) in the rejects file, go on
  kStop,  ///< end the run with the error, naming the feature
};

/// \brief Parse "skip" or "stop". Errors: kInvalidArgument.
Result<FeatureErrorPolicy> ParseFeatureErrorPolicy(std::string_view text);

/// \brief What a batch's processing produced: output rows and the fate of every input row.
///
/// Thread-safety: one per task; the runner reads it after the task.
class OpOutput {
 public:
  /// \brief Output rows in the operation's output fields (OpSchema::fields).
  geoparquet::FeatureBatch rows;

  /// \brief `n` input rows are represented in the output.
  void Emitted(std::int64_t n = 1) { emitted_ += n; }
  /// \brief `n` input rows are left out on purpose, for `reason` ("no match", ...).
  void Dropped(std::string_view reason, std::int64_t n = 1);
  /// \brief GEOS failed on input row `row` of `in`: under kSkip the row is recorded as a
  /// reject and OK is returned; under kStop `error` is returned with the feature named. A
  /// kCancelled error is always returned as it is.
  Status FeatureError(const geoparquet::FeatureBatch& in, std::int64_t row, const Status& error);

  std::int64_t emitted() const { return emitted_; }
  std::int64_t rejected() const { return static_cast<std::int64_t>(rejects_.size()); }
  const std::map<std::string, std::int64_t, std::less<>>& dropped() const { return dropped_; }
  const std::vector<pipeline::RejectedRow>& rejects() const { return rejects_; }

 private:
  friend class Runner;
  FeatureErrorPolicy policy_ = FeatureErrorPolicy::kSkip;
  std::string source_;  // the unit's path, for messages
  std::int64_t emitted_ = 0;
  std::map<std::string, std::int64_t, std::less<>> dropped_;
  std::vector<pipeline::RejectedRow> rejects_;
};

/// \brief What an operation writes: the attribute fields (then a geometry per row) and CRS.
struct OpSchema {
  std::vector<geoparquet::FieldDef> fields;
  std::string crs;
};

/// \brief What the runner hands an operation while it prepares, between passes and at the end.
struct OpContext {
  const OpEnv* env = nullptr;
  /// The operation's share of --memory for its own state (an index, groups).
  std::int64_t memory_bytes = 0;
  int workers = 1;
  FeatureErrorPolicy on_error = FeatureErrorPolicy::kSkip;
  std::stop_token stop;
  Metrics* metrics = nullptr;  // never null while a run goes
};

/// \brief One pass over an input.
struct PassPlan {
  const Input* input = nullptr;       // null: the main input
  std::optional<geo::Envelope> bbox;  // only rows overlapping it
  std::string label;                  // for progress and messages, e.g. "cell 3/8"
};

/// \brief The totals of a run, for the operation's invariant.
struct RunTotals {
  std::int64_t rows_in = 0;        // rows delivered to the operation (every pass)
  std::int64_t rows_emitted = 0;   // of those, represented in the output
  std::int64_t rows_rejected = 0;  // GEOS errors skipped
  std::map<std::string, std::int64_t, std::less<>> rows_dropped;  // by reason
  std::int64_t rows_out = 0;       // output rows written (Finish's included)
  std::int64_t units = 0;          // units processed
  std::int64_t units_skipped = 0;  // committed by an earlier run, or another shard's
};

/// \brief Per-worker state of an operation (prepared geometries, scratch buffers).
///
/// Thread-safety: used by one thread at a time; the runner makes at most one per executor
/// thread and reuses it across batches.
class OpWorker {
 public:
  virtual ~OpWorker() = default;
  /// \brief A new pass begins (drop per-pass caches). Called before the pass's first batch.
  virtual Status BeginPass(int pass) {
    (void)pass;
    return Status::OK();
  }
  /// \brief Process a batch of the current pass's input: append output rows to out->rows and
  /// account every input row (Emitted, Dropped or FeatureError).
  virtual Status Process(const InputUnit& unit, const geoparquet::FeatureBatch& in,
                         OpOutput* out) = 0;
};

/// \brief A batch operation. The runner calls, on one thread: Bind, Prepare, passes, then for
/// each pass BeginPass, (workers' Process on the executor), FinishPass, EndPass; then Finish and
/// CheckInvariant. MakeWorker is called from executor threads, one at a time.
class Operation {
 public:
  virtual ~Operation() = default;
  /// \brief The operation's name, e.g. "join".
  virtual std::string name() const = 0;
  /// \brief Canonical text of every parameter that changes the output (recorded for resume).
  virtual std::string parameters() const = 0;
  /// \brief Identities of the inputs besides the main one (Input::identity), for resume.
  virtual std::vector<std::string> other_inputs() const { return {}; }
  /// \brief The output schema for the main input. Cheap: called before the output is opened.
  virtual Result<OpSchema> Bind(OpContext& ctx, const Input& main) = 0;
  /// \brief Heavy preparation once the output is known to be writable (build an index).
  virtual Status Prepare(OpContext& ctx) {
    (void)ctx;
    return Status::OK();
  }
  /// \brief Passes over the input (after Prepare); 1 by default.
  virtual int passes() const { return 1; }
  virtual Result<PassPlan> BeginPass(OpContext& ctx, int pass) {
    (void)ctx;
    (void)pass;
    return PassPlan{};
  }
  virtual Status EndPass(OpContext& ctx, int pass) {
    (void)ctx;
    (void)pass;
    return Status::OK();
  }
  /// \brief What fixes how the passes cut the work (known after Prepare; e.g. a partitioned
  /// join's cells, which depend on --memory); empty when nothing but the parameters does. A
  /// table output resumed per unit records it with its first units, and a re-run that cuts
  /// its passes otherwise is refused rather than mixing units of two cuts.
  virtual std::string pass_identity() const { return {}; }
  /// \brief True when a unit's output rows are complete once the unit is processed, so the
  /// output can be committed, resumed and sharded per unit. False (state carried across
  /// units or passes, e.g. an aggregate): one commit at the end, and --shard is refused.
  virtual bool resumable_by_unit() const { return true; }
  /// \brief The error text when --shard is given to an operation that is not resumable by
  /// unit (the runner refuses it after Bind, before anything is read); operations say why.
  virtual std::string ShardRefusal() const {
    return name() +
           ": --shard needs output rows that are complete per input unit, and this run's rows "
           "need every unit; run it without --shard";
  }
  /// \brief The state of one worker thread; `geo` is that thread's context.
  virtual Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext* geo) = 0;
  /// \brief Rows only the end of pass `pass` can give (after its last batch, before EndPass),
  /// on the calling thread with its own context `geo`: an operation partitioned into passes
  /// whose state per pass is complete then (a spatial join's cell). Written as Finish's rows
  /// are, as a unit of the pass.
  virtual Status FinishPass(OpContext& ctx, int pass, geo::GeoContext* geo, OpOutput* out) {
    (void)ctx;
    (void)pass;
    (void)geo;
    (void)out;
    return Status::OK();
  }
  /// \brief Rows only the end can give (after the last pass), on the calling thread with
  /// its own context `geo`.
  virtual Status Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) {
    (void)ctx;
    (void)geo;
    (void)out;
    return Status::OK();
  }
  /// \brief Check the operation's own invariant beyond the runner's (rows in = emitted +
  /// dropped + rejected) and describe it in `lines` (printed). kInternal when it fails.
  virtual Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const {
    (void)totals;
    (void)lines;
    return Status::OK();
  }
};

/// \brief A per-feature operation: each input feature gives at most one output feature with
/// the same attributes. Subclasses implement Apply (and name/parameters).
class PerFeatureOperation : public Operation {
 public:
  /// \brief The output geometry (ISO WKB) of one feature, or nullopt to drop it with
  /// `*drop_reason`. A kGeometryError is the feature's (the runner's policy applies); other
  /// errors end the run. Called concurrently from worker threads, each with its own `geo`.
  virtual Result<std::optional<std::string>> Apply(geo::GeoContext& geo,
                                                   std::span<const std::uint8_t> wkb,
                                                   std::string* drop_reason) const = 0;
  /// \brief What a feature without a geometry gives: kept by default.
  virtual bool keep_null_geometry() const { return true; }

  Result<OpSchema> Bind(OpContext& ctx, const Input& main) override;
  Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext* geo) override;
};

/// \brief Where the output goes: a table, or a file (exactly one is set).
struct OutputSpec {
  std::string table;  // "namespace.name"
  std::string path;   // .parquet, .fgb, .gpkg, .geojson, .geojsonl, .csv
};

/// \brief A file when `text` ends in one of the file extensions above, else a table name.
/// Errors: kInvalidArgument for text that is neither.
Result<OutputSpec> ParseOutput(std::string_view text);

/// \brief `--shard I/N`: core/shard.h's, shared with ingest.
using ::geolake::ParseShard;
using ::geolake::Shard;

/// \brief Which shard a unit belongs to: ShardOfKey of its key (FNV-1a 64 modulo the count).
int ShardOf(const InputUnit& unit, int count);

/// \brief Keeps only the rows whose geometry's box overlaps `box`, as a read through that box
/// gives them (sources have no bbox columns); rows without a readable geometry are dropped.
Status FilterByBox(const geo::Envelope& box, geoparquet::FeatureBatch* batch);

struct RunnerOptions {
  /// The --memory budget; 0 = pipeline::DefaultMemoryBudget().
  std::int64_t memory_bytes = 0;
  Shard shard;
  FeatureErrorPolicy on_error = FeatureErrorPolicy::kSkip;
  /// A new output table: its partition (unset: chosen from the main input's bytes, as ingest
  /// chooses it) and the CRS comes from the operation.
  std::optional<layout::PartitionScheme> partition;
  std::int64_t commit_rows = 1000000;
  std::int64_t commit_seconds = 30;
  /// Write into a table that holds rows of another run (without it that is refused).
  bool append = false;
  /// Rows per batch a worker processes (a row group is cut to this).
  std::int64_t batch_rows = 8192;
  std::string run_id;  // empty = a new one
};

/// \brief What a run did; filled also when an error is returned.
struct RunSummary {
  std::string run_id;
  std::string run_dir;
  std::string rejects_path;  // the rejects file (GeoJSON text sequence)
  std::string run_key;       // the operation's identity (geolake.op "key")
  RunTotals totals;
  std::int64_t files_written = 0;
  std::int64_t commits = 0;
  std::int64_t rows_committed = 0;
  std::int64_t peak_inflight_bytes = 0;
  std::int64_t memory_bytes = 0;
  bool table_created = false;
  /// The runner's invariant line, then the operation's (CheckInvariant).
  std::vector<std::string> invariant;
};

/// The summary key every snapshot of an operation's run carries: JSON {"key", "operation",
/// "parameters", "inputs"}.
inline constexpr std::string_view kOpSummary = "geolake.op";

/// \brief Run `op` over `main` into `output`.
///
/// Metrics: stages read, op, write, commit (table output); gauge inflight_bytes; counters
/// rows_in, rows_out, rows_rejected. Errors: kInvalidArgument for bad options, --shard with an
/// operation that is not resumable by unit, a file output of an unknown extension;
/// kAlreadyExists when the output table holds rows of another run (without `append`);
/// kCancelled when the stop token fires (whole units committed so far stay); kGeometryError
/// naming the feature under kStop; kInternal when an invariant fails; input, output and
/// commit errors.
Status RunOperation(const OpEnv& env, Operation& op, const InputSpec& main,
                    const OutputSpec& output, const RunnerOptions& options, RunSummary* summary);

/// \brief The same with the main input already opened (an operation that opened its inputs
/// to choose which one to stream, as the join does).
Status RunOperation(const OpEnv& env, Operation& op, std::unique_ptr<Input> main,
                    const OutputSpec& output, const RunnerOptions& options, RunSummary* summary);

/// \brief The runner's report of a run: the invariant lines, rows, files and time, for the
/// CLI.
std::string FormatRunSummary(const RunSummary& summary);

}  // namespace geolake::ops
