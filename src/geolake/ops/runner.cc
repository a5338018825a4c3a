// How a run goes (runner.h has the contract).
//
// The calling thread reads the input (Input::Read: the query scan decodes row groups on the
// executor; sources are read on the calling thread) and cuts each batch into tasks of at most
// batch_rows rows and 256 KiB of WKB, so that a table of a few huge polygons still gives every
// worker something to do. Each task takes a worker slot (a GeoContext, the operation's OpWorker
// and, for a table output, a BatchTransformer that lays the rows out), processes its rows on
// the executor and parks its result under its sequence number. Whoever parks the next result
// in sequence takes the one writing role and writes every result whose turn has come, so rows
// reach the output in input order whatever the number of workers; a unit's end is a marker in
// the same sequence, which is when a table output's unit is finished and handed to the commit
// coordinator. The reader waits while the tasks in flight hold the batch part of the budget
// (or number 4 per worker): that is the backpressure.
//
// Memory (--memory): half for the operation's own state (OpContext::memory_bytes: a join's
// index), an eighth for the scan's decoded row groups, an eighth for batches between read and
// write, a quarter for the rows the table writer holds for Hilbert sorting.
#include "geolake/ops/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/thread_pool.h"
#include "geolake/core/units.h"
#include "geolake/geo/wkb.h"
#include "geolake/pipeline/commit_coordinator.h"
#include "geolake/pipeline/ingest.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/run_journal.h"
#include "geolake/pipeline/table_writer.h"
#include "geolake/query/output.h"
#include "geolake/query/scan.h"
#include "geolake/sources/discover.h"
#include "geolake/sources/unit_reader.h"
#include "geolake/table/location.h"
#include "geolake/table/scan.h"
#include "geolake/table/time_travel.h"
#include "geolake/table/transaction.h"

namespace geolake::ops {
namespace {

// A task's rows are cut at this much WKB, as ingest cuts its read batches (pipeline/ingest.cc:
// 255 countries of 8.8 MB WKB become ~35 batches instead of one).
constexpr std::int64_t kTaskWkbBytes = std::int64_t{256} << 10;

// The stable hash of core/shard.h for unit ids and the run key (unit ids masked to 53 bits so
// that JSON readers hold them exactly).
std::uint64_t Fnv1a(std::string_view text) { return StableHash64(text); }

std::int64_t UnitIdOf(std::string_view key) {
  return static_cast<std::int64_t>(Fnv1a(key) & ((std::uint64_t{1} << 53) - 1));
}

InputUnit MakeUnit(std::string key, std::string path) {
  InputUnit unit;
  unit.id = UnitIdOf(key);
  unit.key = std::move(key);
  unit.path = std::move(path);
  return unit;
}

std::optional<geo::Envelope> IntersectBoxes(const std::optional<geo::Envelope>& a,
                                            const std::optional<geo::Envelope>& b) {
  if (!a) return b;
  if (!b) return a;
  return geo::Envelope{std::max(a->xmin, b->xmin), std::max(a->ymin, b->ymin),
                       std::min(a->xmax, b->xmax), std::min(a->ymax, b->ymax)};
}

bool HasGlob(std::string_view text) { return text.find_first_of("*?[") != std::string_view::npos; }

// Rows [begin, end) of `in` as a batch of their own.
geoparquet::FeatureBatch SliceRows(const geoparquet::FeatureBatch& in, std::int64_t begin,
                                   std::int64_t end) {
  geoparquet::FeatureBatch out;
  out.fields = in.fields;
  std::vector<std::uint32_t> rows;
  rows.reserve(static_cast<std::size_t>(end - begin));
  for (std::int64_t r = begin; r < end; ++r) rows.push_back(static_cast<std::uint32_t>(r));
  out.columns.resize(in.columns.size());
  for (std::size_t c = 0; c < in.columns.size(); ++c) {
    out.columns[c].type = in.columns[c].type;
    pipeline::AppendRows(&in.columns[c], rows, &out.columns[c]);
  }
  const auto b = static_cast<std::size_t>(begin);
  const auto e = static_cast<std::size_t>(end);
  const std::int64_t base = in.wkb_offsets[b];
  out.wkb.assign(in.wkb, static_cast<std::size_t>(base),
                 static_cast<std::size_t>(in.wkb_offsets[e] - base));
  out.wkb_offsets.clear();
  out.wkb_offsets.reserve(e - b + 1);
  for (std::size_t r = b; r <= e; ++r) out.wkb_offsets.push_back(in.wkb_offsets[r] - base);
  out.geometry_valid.assign(in.geometry_valid.begin() + begin, in.geometry_valid.begin() + end);
  out.feature_index.assign(in.feature_index.begin() + begin, in.feature_index.begin() + end);
  return out;
}

bool SameFields(const std::vector<geoparquet::FieldDef>& a,
                const std::vector<geoparquet::FieldDef>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].type != b[i].type) return false;
  }
  return true;
}

}  // namespace

Status FilterByBox(const geo::Envelope& box, geoparquet::FeatureBatch* batch) {
  std::vector<std::uint32_t> keep;
  for (std::int64_t r = 0; r < batch->num_rows(); ++r) {
    if (batch->geometry_valid[static_cast<std::size_t>(r)] == 0) continue;
    auto envelope = geo::WkbEnvelope(batch->GeometryAt(static_cast<std::size_t>(r)));
    if (!envelope.ok()) continue;  // the operation reports malformed geometries; a box cannot
    if (envelope->Intersects(box)) keep.push_back(static_cast<std::uint32_t>(r));
  }
  if (static_cast<std::int64_t>(keep.size()) == batch->num_rows()) return Status::OK();
  geoparquet::FeatureBatch out;
  out.fields = batch->fields;
  out.columns.resize(batch->columns.size());
  for (std::size_t c = 0; c < batch->columns.size(); ++c) {
    out.columns[c].type = batch->columns[c].type;
    pipeline::AppendRows(&batch->columns[c], keep, &out.columns[c]);
  }
  for (const std::uint32_t r : keep) {
    const auto geometry = batch->GeometryAt(r);
    out.wkb.append(reinterpret_cast<const char*>(geometry.data()), geometry.size());
    out.wkb_offsets.push_back(static_cast<std::int64_t>(out.wkb.size()));
    out.geometry_valid.push_back(batch->geometry_valid[r]);
    out.feature_index.push_back(batch->feature_index[r]);
  }
  *batch = std::move(out);
  return Status::OK();
}

// ---- Parsing -------------------------------------------------------------------------------

Result<InputSpec> ResolveInput(std::string_view text) {
  InputSpec spec;
  if (text.empty()) return Status::InvalidArgument("empty input");
  std::error_code ec;
  if (HasGlob(text) || std::filesystem::exists(std::string(text), ec) ||
      text.find('/') != std::string_view::npos) {
    spec.sources.emplace_back(text);
    return spec;
  }
  auto id = table::TableIdentifier::Parse(text);
  if (!id.ok()) {
    return Status::InvalidArgument("input '" + std::string(text) +
                                   "' is neither an existing path nor a table name "
                                   "(namespace.name)");
  }
  spec.table = std::string(text);
  return spec;
}

namespace {
struct FileFormat {
  std::string_view extension;
  query::OutputFormat format;
};
constexpr FileFormat kFileFormats[] = {
    {".parquet", query::OutputFormat::kParquet},     {".fgb", query::OutputFormat::kFlatGeobuf},
    {".gpkg", query::OutputFormat::kGpkg},           {".geojson", query::OutputFormat::kGeoJson},
    {".geojsonl", query::OutputFormat::kGeoJsonSeq}, {".csv", query::OutputFormat::kCsv},
};

std::optional<query::OutputFormat> FormatOfPath(std::string_view path) {
  for (const FileFormat& f : kFileFormats) {
    if (path.size() > f.extension.size() && path.ends_with(f.extension)) return f.format;
  }
  return std::nullopt;
}
}  // namespace

Result<OutputSpec> ParseOutput(std::string_view text) {
  OutputSpec out;
  if (text.empty()) return Status::InvalidArgument("-o: empty output");
  if (FormatOfPath(text)) {
    out.path = std::string(text);
    return out;
  }
  if (text.find('/') != std::string_view::npos || !table::TableIdentifier::Parse(text).ok()) {
    return Status::InvalidArgument("-o '" + std::string(text) +
                                   "': expected a table (namespace.name) or a file ending in "
                                   ".parquet, .fgb, .gpkg, .geojson, .geojsonl or .csv");
  }
  out.table = std::string(text);
  return out;
}

int ShardOf(const InputUnit& unit, int count) { return ShardOfKey(unit.key, count); }

Result<FeatureErrorPolicy> ParseFeatureErrorPolicy(std::string_view text) {
  if (text == "skip") return FeatureErrorPolicy::kSkip;
  if (text == "stop") return FeatureErrorPolicy::kStop;
  return Status::InvalidArgument("--on-error '" + std::string(text) + "': expected skip or stop");
}

// ---- Input ---------------------------------------------------------------------------------

struct Input::Impl {
  InputSpec spec;
  std::string label;
  std::vector<geoparquet::FieldDef> fields;
  std::string crs;
  std::string identity;
  std::int64_t data_bytes = 0;
  std::int64_t row_count = -1;
  // A table input.
  std::optional<table::Table> table;
  const io::FileIO* io = nullptr;
  // A source input.
  std::vector<sources::DiscoveredSource> sources;
  // An input of listed units (Input::FromUnits).
  std::optional<UnitList> units;
};

Input::Input(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Input::~Input() = default;
const InputSpec& Input::spec() const { return impl_->spec; }
const std::string& Input::label() const { return impl_->label; }
const std::vector<geoparquet::FieldDef>& Input::fields() const { return impl_->fields; }
const std::string& Input::crs() const { return impl_->crs; }
const std::string& Input::identity() const { return impl_->identity; }
std::int64_t Input::data_bytes() const { return impl_->data_bytes; }
std::int64_t Input::row_count() const { return impl_->row_count; }

namespace {

Status OpenTableInput(const OpEnv& env, Input::Impl* impl) {
  const InputSpec& spec = impl->spec;
  if (env.catalog == nullptr) return Status::InvalidArgument(impl->label + ": no catalog");
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(spec.table));
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(*env.catalog, *env.io, id));
  Result<layout::TableLayout> layout = layout::ReadTableLayout(t.metadata);
  if (!layout.ok()) return layout.status().WithContext(impl->label);
  GEOLAKE_ASSIGN_OR_RETURN(std::optional<std::int64_t> snapshot,
                           table::ResolveSnapshot(t.metadata, spec.snapshot_id, std::nullopt));
  const table::SchemaPtr schema = t.metadata.current_schema();
  std::vector<geoparquet::FieldDef> all;
  for (int i = 0; i < layout->attribute_count; ++i) {
    const table::NestedField& field = schema->fields()[static_cast<std::size_t>(i)];
    Result<geoparquet::FieldType> type = pipeline::FieldTypeOfIceberg(*field.type);
    all.push_back({field.name, type.ok() ? *type : geoparquet::FieldType::kBinary});
  }
  if (spec.columns.empty()) {
    impl->fields = all;
  } else {
    for (const std::string& name : spec.columns) {
      const auto found = std::find_if(
          all.begin(), all.end(), [&](const geoparquet::FieldDef& f) { return f.name == name; });
      if (found == all.end()) {
        return Status::InvalidArgument(impl->label + ": no column '" + name + "'");
      }
      impl->fields.push_back(*found);
    }
  }
  impl->crs = layout->crs;
  if (snapshot) {
    GEOLAKE_ASSIGN_OR_RETURN(table::ScanPlan plan, table::PlanScan(*env.io, t.metadata, snapshot));
    impl->row_count = 0;
    for (const table::ManifestEntry& e : plan.data_files) {
      impl->data_bytes += e.data_file.file_size_in_bytes;
      impl->row_count += e.data_file.record_count;
    }
  } else {
    impl->row_count = 0;
  }
  nlohmann::json identity = {{"table", spec.table},
                             {"snapshot", snapshot.value_or(0)},
                             {"where", spec.where},
                             {"columns", spec.columns}};
  if (spec.bbox) {
    identity["bbox"] = {spec.bbox->xmin, spec.bbox->ymin, spec.bbox->xmax, spec.bbox->ymax};
  }
  impl->identity = identity.dump();
  impl->spec.snapshot_id = snapshot;  // a re-read sees the same rows, even after new commits
  impl->table = std::move(t);
  return Status::OK();
}

Status OpenSourceInput(Input::Impl* impl) {
  const InputSpec& spec = impl->spec;
  if (!spec.where.empty()) {
    return Status::InvalidArgument(impl->label + ": --where needs a table input");
  }
  sources::DiscoverOptions options;
  options.layer = spec.layer;
  GEOLAKE_ASSIGN_OR_RETURN(impl->sources, sources::DiscoverSources(spec.sources, options));
  if (impl->sources.empty()) return Status::NotFound(impl->label + ": no source");
  const sources::DiscoveredSource& first = impl->sources.front();
  impl->label = impl->sources.size() == 1
                    ? "source '" + first.path + "'"
                    : std::to_string(impl->sources.size()) + " sources from '" + first.path + "'";
  nlohmann::json identity = nlohmann::json::array();
  impl->row_count = 0;
  for (const sources::DiscoveredSource& source : impl->sources) {
    if (!SameFields(source.fields, first.fields)) {
      return Status::InvalidArgument(impl->label + ": source '" + source.path +
                                     "' has other fields than '" + first.path + "'");
    }
    const std::string crs =
        !source.crs_authority.empty() ? source.crs_authority : source.crs_projjson;
    const std::string first_crs =
        !first.crs_authority.empty() ? first.crs_authority : first.crs_projjson;
    if (crs != first_crs) {
      return Status::InvalidArgument(impl->label + ": source '" + source.path +
                                     "' has another CRS than '" + first.path + "'");
    }
    identity.push_back(source.fingerprint.ToString());
    impl->data_bytes += source.fingerprint.size;
    if (source.feature_count < 0 || impl->row_count < 0) {
      impl->row_count = -1;
    } else {
      impl->row_count += source.feature_count;
    }
  }
  impl->crs = !first.crs_authority.empty() ? first.crs_authority : first.crs_projjson;
  if (spec.columns.empty()) {
    impl->fields = first.fields;
  } else {
    return Status::InvalidArgument(impl->label + ": --columns needs a table input");
  }
  nlohmann::json id = {{"sources", identity}, {"layer", spec.layer}};
  if (spec.bbox) id["bbox"] = {spec.bbox->xmin, spec.bbox->ymin, spec.bbox->xmax, spec.bbox->ymax};
  impl->identity = id.dump();
  return Status::OK();
}

// Hands the scan's row groups to a visitor as units (one per data file).
class ScanUnits final : public query::RowSink {
 public:
  explicit ScanUnits(Input::Visitor* visitor) : visitor_(visitor) {}
  Status Begin(const query::OutputLayout& /*layout*/) override { return Status::OK(); }
  Status Write(std::string_view, const geoparquet::FeatureBatch&) override {
    return Status::Internal("ScanUnits: Write is not used");
  }
  Status WriteRowGroup(std::string_view file_path, int /*row_group*/,
                       geoparquet::FeatureBatch& rows) override {
    if (!current_ || current_->path != file_path) {
      if (current_) GEOLAKE_RETURN_NOT_OK(visitor_->UnitEnd(*current_));
      current_ = MakeUnit("file:" + std::string(file_path), std::string(file_path));
      current_->ordinal = next_ordinal_++;
    }
    if (rows.num_rows() == 0) return Status::OK();
    return visitor_->Batch(*current_, std::move(rows));
  }
  Status Finish() override {
    if (current_) GEOLAKE_RETURN_NOT_OK(visitor_->UnitEnd(*current_));
    current_.reset();
    return Status::OK();
  }

 private:
  Input::Visitor* visitor_;
  std::optional<InputUnit> current_;
  std::int64_t next_ordinal_ = 0;
};

}  // namespace

Result<std::unique_ptr<Input>> Input::Open(const OpEnv& env, InputSpec spec) {
  auto impl = std::make_unique<Impl>();
  impl->io = env.io;
  const bool is_table = !spec.table.empty();
  if (is_table == !spec.sources.empty()) {
    return Status::InvalidArgument("an input is either a table or sources");
  }
  impl->spec = std::move(spec);
  if (is_table) {
    impl->label = "table '" + impl->spec.table + "'";
    GEOLAKE_RETURN_NOT_OK(OpenTableInput(env, impl.get()));
  } else {
    impl->label = "source '" + impl->spec.sources.front() + "'";
    GEOLAKE_RETURN_NOT_OK(OpenSourceInput(impl.get()));
  }
  return std::unique_ptr<Input>(new Input(std::move(impl)));
}

std::unique_ptr<Input> Input::FromUnits(UnitList units) {
  auto impl = std::make_unique<Impl>();
  impl->spec.sources = {units.path};
  impl->label = units.label;
  impl->fields = units.fields;
  impl->crs = units.crs;
  impl->identity = units.identity;
  impl->data_bytes = units.data_bytes;
  impl->row_count = static_cast<std::int64_t>(units.keys.size());
  impl->units = std::move(units);
  return std::unique_ptr<Input>(new Input(std::move(impl)));
}

Status Input::Read(const ReadOptions& options, ThreadPool* executor, Visitor* visitor,
                   std::stop_token stop) const {
  const Impl& impl = *impl_;
  if (impl.units) {
    for (std::size_t i = 0; i < impl.units->keys.size(); ++i) {
      if (stop.stop_requested()) return Status::Cancelled(impl.label + ": read stopped");
      InputUnit unit = MakeUnit(impl.units->keys[i], impl.units->path);
      unit.ordinal = static_cast<std::int64_t>(i);
      if (options.keep && !options.keep(unit)) continue;
      GEOLAKE_ASSIGN_OR_RETURN(geoparquet::FeatureBatch batch, impl.units->read(unit));
      if (batch.num_rows() > 0) GEOLAKE_RETURN_NOT_OK(visitor->Batch(unit, std::move(batch)));
      GEOLAKE_RETURN_NOT_OK(visitor->UnitEnd(unit));
    }
    return Status::OK();
  }
  const std::optional<geo::Envelope> box = IntersectBoxes(impl.spec.bbox, options.bbox);
  if (box && box->IsEmpty()) return Status::OK();  // the two boxes do not meet
  if (impl.table) {
    if (!impl.spec.snapshot_id) return Status::OK();  // a table without snapshots has no rows
    query::QueryOptions q;
    q.bbox = box;
    q.where = impl.spec.where;
    q.snapshot_id = impl.spec.snapshot_id;
    q.columns = impl.spec.columns;
    q.executor = executor;
    q.memory_bytes = options.memory_bytes;
    if (options.keep) {
      // The scan asks per row group; a unit is a file, so ask once per file.
      std::string last_path;
      bool last_keep = true;
      q.row_group_filter = [&options, last_path, last_keep](const std::string& path, int) mutable {
        if (path != last_path) {
          last_path = path;
          last_keep = options.keep(MakeUnit("file:" + path, path));
        }
        return last_keep;
      };
    }
    ScanUnits sink(visitor);
    Result<query::QueryExplain> explain =
        query::RunQuery(*impl.io, impl.table->metadata, q, &sink, std::move(stop));
    if (!explain.ok()) return explain.status().WithContext(impl.label);
    return Status::OK();
  }
  std::int64_t ordinal = 0;
  for (const sources::DiscoveredSource& source : impl.sources) {
    const std::string fingerprint = source.fingerprint.ToString();
    for (const sources::SourceUnit& su : source.units) {
      if (stop.stop_requested()) return Status::Cancelled(impl.label + ": read stopped");
      InputUnit unit = MakeUnit(fingerprint + "#" + std::to_string(su.index), source.path);
      unit.ordinal = ordinal++;
      if (options.keep && !options.keep(unit)) continue;
      const std::string where = "source '" + source.path + "' unit " + std::to_string(su.index);
      auto reader = sources::UnitReader::Open(su);
      if (!reader.ok()) return reader.status().WithContext(where);
      while (true) {
        if (stop.stop_requested()) return Status::Cancelled(impl.label + ": read stopped");
        geoparquet::FeatureBatch batch;
        Result<std::int64_t> rows = (*reader)->ReadBatch(options.batch_rows, kTaskWkbBytes, &batch);
        if (!rows.ok()) return rows.status().WithContext(where);
        if (*rows == 0) break;
        if (box) GEOLAKE_RETURN_NOT_OK(FilterByBox(*box, &batch));
        if (batch.num_rows() == 0) continue;
        GEOLAKE_RETURN_NOT_OK(visitor->Batch(unit, std::move(batch)));
      }
      GEOLAKE_RETURN_NOT_OK(visitor->UnitEnd(unit));
    }
  }
  return Status::OK();
}

// ---- OpOutput ------------------------------------------------------------------------------

void OpOutput::Dropped(std::string_view reason, std::int64_t n) {
  auto it = dropped_.find(reason);
  if (it == dropped_.end()) it = dropped_.emplace(std::string(reason), 0).first;
  it->second += n;
}

Status OpOutput::FeatureError(const geoparquet::FeatureBatch& in, std::int64_t row,
                              const Status& error) {
  if (error.code() == ErrorCode::kCancelled) return error;
  const auto r = static_cast<std::size_t>(row);
  const std::int64_t feature = in.feature_index[r];
  if (policy_ == FeatureErrorPolicy::kStop) {
    return error.WithContext("'" + source_ + "' feature " + std::to_string(feature));
  }
  pipeline::RejectedRow reject;
  reject.feature_index = feature;
  reject.reason = error.message();
  if (in.geometry_valid[r] != 0) {
    const auto wkb = in.GeometryAt(r);
    reject.wkb.assign(reinterpret_cast<const char*>(wkb.data()), wkb.size());
  }
  rejects_.push_back(std::move(reject));
  return Status::OK();
}

// ---- PerFeatureOperation -------------------------------------------------------------------

namespace {

class PerFeatureWorker final : public OpWorker {
 public:
  PerFeatureWorker(const PerFeatureOperation* op, geo::GeoContext* geo) : op_(op), geo_(geo) {}

  Status Process(const InputUnit& /*unit*/, const geoparquet::FeatureBatch& in,
                 OpOutput* out) override {
    std::vector<std::uint32_t> kept;
    geoparquet::FeatureBatch& rows = out->rows;
    rows.fields = in.fields;
    rows.columns.assign(in.columns.size(), {});
    std::string reason;
    for (std::int64_t r = 0; r < in.num_rows(); ++r) {
      const auto row = static_cast<std::size_t>(r);
      if (in.geometry_valid[row] == 0) {
        if (!op_->keep_null_geometry()) {
          out->Dropped("null geometry");
          continue;
        }
        kept.push_back(static_cast<std::uint32_t>(r));
        rows.wkb_offsets.push_back(static_cast<std::int64_t>(rows.wkb.size()));
        rows.geometry_valid.push_back(0);
        rows.feature_index.push_back(in.feature_index[row]);
        out->Emitted();
        continue;
      }
      reason.clear();
      Result<std::optional<std::string>> result = op_->Apply(*geo_, in.GeometryAt(row), &reason);
      if (!result.ok()) {
        if (result.status().code() != ErrorCode::kGeometryError) return result.status();
        GEOLAKE_RETURN_NOT_OK(out->FeatureError(in, r, result.status()));
        continue;
      }
      if (!result->has_value()) {
        out->Dropped(reason.empty() ? "dropped by the operation" : reason);
        continue;
      }
      kept.push_back(static_cast<std::uint32_t>(r));
      rows.wkb += **result;
      rows.wkb_offsets.push_back(static_cast<std::int64_t>(rows.wkb.size()));
      rows.geometry_valid.push_back(1);
      rows.feature_index.push_back(in.feature_index[row]);
      out->Emitted();
    }
    for (std::size_t c = 0; c < in.columns.size(); ++c) {
      rows.columns[c].type = in.columns[c].type;
      pipeline::AppendRows(&in.columns[c], kept, &rows.columns[c]);
    }
    return Status::OK();
  }

 private:
  const PerFeatureOperation* op_;
  geo::GeoContext* geo_;
};

}  // namespace

Result<OpSchema> PerFeatureOperation::Bind(OpContext& /*ctx*/, const Input& main) {
  return OpSchema{main.fields(), main.crs()};
}

Result<std::unique_ptr<OpWorker>> PerFeatureOperation::MakeWorker(geo::GeoContext* geo) {
  return std::unique_ptr<OpWorker>(std::make_unique<PerFeatureWorker>(this, geo));
}

// ---- The runner ----------------------------------------------------------------------------

// One run of one operation. Members below `mu_` are guarded by it.
class Runner final : public Input::Visitor {
 public:
  Runner(const OpEnv& env, Operation& op, const RunnerOptions& options, RunSummary* summary)
      : env_(env), op_(op), options_(options), summary_(summary) {}

  Status Run(std::unique_ptr<Input> main, const OutputSpec& output);

  Status Batch(const InputUnit& unit, geoparquet::FeatureBatch batch) override;
  Status UnitEnd(const InputUnit& unit) override;

 private:
  // A worker thread's context, operation state and (table output) layout transformer.
  struct Slot {
    std::unique_ptr<geo::GeoContext> geo;
    std::unique_ptr<OpWorker> worker;
    std::unique_ptr<pipeline::BatchTransformer> transformer;
    int pass = -1;
  };
  // A result waiting for its turn to be written, or a unit's end marker.
  struct Ready {
    bool unit_end = false;
    InputUnit unit;
    OpOutput out;
    pipeline::TransformedBatch transformed;
    pipeline::Reservation reservation;
  };
  // A unit being written to the table.
  struct OpenUnit {
    std::unique_ptr<pipeline::PartitionedWriter> writer;
    pipeline::UnitOutcome outcome;
  };

  Status OpenOutput(const OutputSpec& output, const OpSchema& schema);
  Status CheckOutputTable(const table::Table& t);
  std::int64_t PassUnitId(const InputUnit& unit) const;
  bool Keep(const InputUnit& unit);
  Result<Slot*> AcquireSlot();
  void ReleaseSlot(Slot* slot);
  struct Task {
    InputUnit unit;
    geoparquet::FeatureBatch rows;
    pipeline::Reservation reservation;
    std::int64_t seq = 0;
  };
  Status ProcessTask(Task task);
  // A resumed table output: refuses units committed under other passes (pass_identity), and
  // records this run's passes with its first units.
  Status CheckPassIdentity();
  // Finish's rows (final) or FinishPass's of the current pass, written.
  Status RunEndRows(bool final);

  Status Park(std::int64_t seq, Ready ready);
  Status Drain();
  Status WriteReady(Ready& ready);
  Status EndUnit(const InputUnit& unit, std::int64_t unit_id);
  Status CloseOutput(bool ok);
  std::string OpSummaryJson() const;

  const OpEnv& env_;
  Operation& op_;
  const RunnerOptions& options_;
  RunSummary* summary_;
  Metrics* metrics_ = nullptr;
  OpContext ctx_;
  OpSchema schema_;
  std::unique_ptr<Input> main_;
  int workers_ = 1;
  int pass_ = 0;
  int passes_ = 1;
  std::string run_key_;
  std::string op_summary_;
  std::string unit_source_;           // "op:<key>": the coordinator's source of every unit
  std::set<std::int64_t> committed_;  // unit ids committed by earlier runs
  bool per_unit_ = true;
  StageMetrics* read_stage_ = nullptr;
  StageMetrics* op_stage_ = nullptr;
  StageMetrics* write_stage_ = nullptr;
  Gauge* inflight_ = nullptr;

  // Output: a table ...
  std::optional<table::TableIdentifier> table_id_;
  std::optional<pipeline::TableWriteOptions> write_;
  pipeline::FieldMapping mapping_;
  std::unique_ptr<pipeline::MemoryBudget> writer_budget_;
  std::unique_ptr<pipeline::CommitCoordinator> coordinator_;
  std::stop_source abort_;  // a failed commit stops the run
  // ... or a file.
  std::unique_ptr<query::RowSink> sink_;
  std::unique_ptr<pipeline::RunJournal> journal_;

  std::unique_ptr<pipeline::MemoryBudget> batch_budget_;
  std::int64_t max_tasks_ = 4;
  TaskGroup* group_ = nullptr;  // the current pass's tasks

  std::mutex mu_;  // guards the fields below
  std::condition_variable_any changed_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_slots_;
  std::map<std::int64_t, Ready> ready_;
  std::int64_t next_seq_ = 0;    // the reader's next sequence number
  std::int64_t next_write_ = 0;  // the next sequence number to write
  std::int64_t in_flight_ = 0;   // tasks spawned and not yet written
  bool writing_ = false;
  std::map<std::int64_t, OpenUnit> open_units_;  // by unit id (writing role only)
  bool write_failed_ = false;                    // a write failed: later results are dropped
  // rows_in and units_skipped by the reader under mu_; the rest by the writing role.
  RunTotals totals_;
};

std::int64_t Runner::PassUnitId(const InputUnit& unit) const {
  if (!per_unit_) return UnitIdOf("run");
  return passes_ == 1 ? unit.id : UnitIdOf(unit.key + "#pass" + std::to_string(pass_));
}

bool Runner::Keep(const InputUnit& unit) {
  if (options_.shard.count > 1 && ShardOf(unit, options_.shard.count) != options_.shard.index) {
    std::lock_guard lock(mu_);
    ++totals_.units_skipped;
    return false;
  }
  if (per_unit_ && committed_.contains(PassUnitId(unit))) {
    std::lock_guard lock(mu_);
    ++totals_.units_skipped;
    return false;
  }
  return true;
}

std::string Runner::OpSummaryJson() const {
  nlohmann::json inputs = nlohmann::json::array();
  inputs.push_back(main_->identity());
  for (const std::string& other : op_.other_inputs()) inputs.push_back(other);
  return nlohmann::json{
      {"key", run_key_},
      {"operation", op_.name()},
      {"parameters", op_.parameters()},
      {"inputs", inputs},
      {"shard", std::to_string(options_.shard.index) + "/" + std::to_string(options_.shard.count)}}
      .dump();
}

Status Runner::CheckOutputTable(const table::Table& t) {
  // Every snapshot of the current lineage must come from this operation (same key), unless
  // the caller asked to append to a table holding other rows.
  const table::Snapshot* snapshot = t.metadata.current_snapshot();
  std::set<std::int64_t> seen;
  while (snapshot != nullptr && seen.insert(snapshot->snapshot_id).second) {
    std::string other;
    const auto found = snapshot->summary.find(std::string(kOpSummary));
    if (found == snapshot->summary.end()) {
      other = "rows not written by an operation";
    } else {
      const nlohmann::json j = nlohmann::json::parse(found->second, nullptr, false);
      if (!j.is_object() || !j.contains("key") || j["key"] != run_key_) {
        other = j.is_object() && j.contains("operation") && j["operation"].is_string()
                    ? "rows of another " + j["operation"].get<std::string>() + " run (" +
                          (j.contains("parameters") ? j["parameters"].dump() : "?") + ")"
                    : "rows of another run";
      }
    }
    if (!other.empty() && !options_.append) {
      return Status::AlreadyExists(
          "output table '" + table_id_->ToString() + "' holds " + other + " (snapshot " +
          std::to_string(snapshot->snapshot_id) +
          "); write to a new table, or pass --append to add this run's rows");
    }
    snapshot = snapshot->parent_snapshot_id ? t.metadata.SnapshotById(*snapshot->parent_snapshot_id)
                                            : nullptr;
  }
  const pipeline::CommittedUnits done = pipeline::ReadCommittedUnits(t.metadata);
  if (const auto units = done.units.find(unit_source_); units != done.units.end()) {
    committed_ = units->second;
  }
  return Status::OK();
}

Status Runner::OpenOutput(const OutputSpec& output, const OpSchema& schema) {
  GEOLAKE_ASSIGN_OR_RETURN(
      auto journal, pipeline::RunJournal::Open(env_.io, summary_->run_dir, summary_->run_id,
                                               output.table.empty() ? output.path : output.table));
  journal_ = std::move(journal);
  if (!output.path.empty()) {
    const std::optional<query::OutputFormat> format = FormatOfPath(output.path);
    if (!format) return Status::InvalidArgument("-o '" + output.path + "': unknown extension");
    GEOLAKE_ASSIGN_OR_RETURN(sink_, query::MakeOutputSink(*format, output.path, *env_.io));
    query::OutputLayout layout;
    layout.fields = schema.fields;
    layout.crs = schema.crs;
    layout.layer_name = op_.name();
    return sink_->Begin(layout);
  }
  if (env_.catalog == nullptr) return Status::InvalidArgument("a table output needs a catalog");
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(output.table));
  table_id_ = id;
  Result<table::Table> loaded = table::LoadTable(*env_.catalog, *env_.io, id);
  if (!loaded.ok() && loaded.status().code() == ErrorCode::kNotFound) {
    layout::LayoutOptions layout;
    layout.crs = schema.crs.empty() ? "EPSG:4326" : schema.crs;
    layout.partition = options_.partition
                           ? *options_.partition
                           : layout::PartitionForInputSize(main_->data_bytes(),
                                                           layout::kDefaultTargetFileSizeBytes)
                                 .scheme;
    GEOLAKE_ASSIGN_OR_RETURN(table::NewTableOptions create,
                             layout::LayoutNewTable(schema.fields, layout));
    GEOLAKE_ASSIGN_OR_RETURN(create.location, table::DefaultTableLocation(env_.warehouse, id));
    GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(*env_.catalog, id.ns));
    loaded = table::CreateTable(*env_.catalog, *env_.io, id, create);
    if (loaded.ok()) {
      summary_->table_created = true;
    } else if (loaded.status().code() == ErrorCode::kAlreadyExists) {
      loaded = table::LoadTable(*env_.catalog, *env_.io, id);  // another shard made it
    }
  }
  if (!loaded.ok()) return loaded.status().WithContext("output table '" + output.table + "'");
  GEOLAKE_RETURN_NOT_OK(CheckOutputTable(*loaded));
  Result<pipeline::TableWriteOptions> write = pipeline::TableWriteOptionsFor(loaded->metadata);
  if (!write.ok()) return write.status().WithContext("output table '" + output.table + "'");
  write_ = std::move(*write);
  if (!schema.crs.empty() && write_->layout.crs != schema.crs) {
    Log(LogLevel::kWarn, "output table '{}' has CRS {}, the operation writes {}", output.table,
        write_->layout.crs, schema.crs);
  }
  GEOLAKE_ASSIGN_OR_RETURN(mapping_, pipeline::MapFields(schema.fields, write_->fields,
                                                         "output table '" + output.table + "'"));
  // As ingest: the Parquet writer's open row groups stay a fraction of the budget.
  write_->row_group_bytes =
      std::clamp<std::int64_t>(summary_->memory_bytes / (std::int64_t{8} * workers_),
                               std::int64_t{1} << 20, write_->row_group_bytes);
  writer_budget_ = std::make_unique<pipeline::MemoryBudget>(
      std::max<std::int64_t>(summary_->memory_bytes / 4, 1), inflight_);

  pipeline::CommitOptions commit;
  commit.commit_rows = options_.commit_rows;
  commit.commit_interval = std::chrono::seconds(options_.commit_seconds);
  commit.run_id = summary_->run_id;
  commit.extra_summary[std::string(kOpSummary)] = op_summary_;
  pipeline::SourcePlan plan;
  plan.fingerprint = unit_source_;
  plan.path = op_.name();
  plan.unit_count = std::numeric_limits<std::int64_t>::max();  // never "all done": shards
  plan.committed_units = committed_;
  coordinator_ = std::make_unique<pipeline::CommitCoordinator>(
      env_.catalog, env_.io, id, commit, std::vector<pipeline::SourcePlan>{plan}, journal_.get(),
      metrics_);
  coordinator_->Start([this] { abort_.request_stop(); });
  return Status::OK();
}

Result<Runner::Slot*> Runner::AcquireSlot() {
  {
    std::lock_guard lock(mu_);
    if (!free_slots_.empty()) {
      Slot* slot = free_slots_.back();
      free_slots_.pop_back();
      return slot;
    }
  }
  // At most one slot per executor thread is ever in use, so slots never outnumber threads.
  auto slot = std::make_unique<Slot>();
  GEOLAKE_ASSIGN_OR_RETURN(slot->geo, geo::GeoContext::Make(ctx_.stop));
  GEOLAKE_ASSIGN_OR_RETURN(slot->worker, op_.MakeWorker(slot->geo.get()));
  if (write_) {
    pipeline::TransformOptions t;
    t.on_invalid = pipeline::InvalidPolicy::kKeep;  // the operation's output is final
    t.table_fields = write_->fields;
    t.partition = write_->layout.partition;
    t.table_crs = write_->layout.crs;
    t.source_crs = write_->layout.crs;
    GEOLAKE_ASSIGN_OR_RETURN(slot->transformer,
                             pipeline::BatchTransformer::Make(slot->geo.get(), t, mapping_));
  }
  std::lock_guard lock(mu_);
  slots_.push_back(std::move(slot));
  return slots_.back().get();
}

void Runner::ReleaseSlot(Slot* slot) {
  std::lock_guard lock(mu_);
  free_slots_.push_back(slot);
}

Status Runner::Batch(const InputUnit& unit, geoparquet::FeatureBatch batch) {
  const std::int64_t n = batch.num_rows();
  read_stage_->AddRowsOut(n);
  read_stage_->AddBytesOut(batch.ByteSize());
  // Reserve the task's bytes and a task slot, then hand it to the executor.
  auto submit = [&](geoparquet::FeatureBatch rows) -> Status {
    const std::int64_t bytes = rows.ByteSize();
    const std::stop_token stop = group_->stop_token();
    GEOLAKE_RETURN_NOT_OK(batch_budget_->Reserve(bytes, stop));
    pipeline::Reservation reservation(batch_budget_.get(), bytes);
    std::int64_t seq = 0;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, stop, [&] { return in_flight_ < max_tasks_; });
      if (stop.stop_requested()) return Status::Cancelled("run stopped");
      seq = next_seq_++;
      ++in_flight_;
      totals_.rows_in += rows.num_rows();
    }
    // ThreadPool tasks are copyable functions; the move-only reservation travels in a
    // shared_ptr.
    auto task = std::make_shared<Task>(Task{unit, std::move(rows), std::move(reservation), seq});
    group_->Spawn([this, task] { return ProcessTask(std::move(*task)); });
    return Status::OK();
  };
  // Cut into tasks of at most batch_rows rows and about kTaskWkbBytes of WKB.
  std::int64_t begin = 0;
  while (begin < n) {
    std::int64_t end = begin;
    const std::int64_t base = batch.wkb_offsets[static_cast<std::size_t>(begin)];
    while (
        end < n && end - begin < options_.batch_rows &&
        (end == begin || batch.wkb_offsets[static_cast<std::size_t>(end)] - base < kTaskWkbBytes)) {
      ++end;
    }
    // A batch that is one task whole is moved, not copied (and not read again).
    if (begin == 0 && end == n) return submit(std::move(batch));
    GEOLAKE_RETURN_NOT_OK(submit(SliceRows(batch, begin, end)));
    begin = end;
  }
  return Status::OK();
}

Status Runner::UnitEnd(const InputUnit& unit) {
  std::int64_t seq = 0;
  {
    std::lock_guard lock(mu_);
    seq = next_seq_++;
  }
  Ready ready;
  ready.unit_end = true;
  ready.unit = unit;
  return Park(seq, std::move(ready));
}

Status Runner::ProcessTask(Task task) {
  Ready ready;
  ready.unit = std::move(task.unit);
  ready.reservation = std::move(task.reservation);
  const geoparquet::FeatureBatch& rows = task.rows;
  ready.out.policy_ = options_.on_error;
  ready.out.source_ = ready.unit.path;
  GEOLAKE_ASSIGN_OR_RETURN(Slot * slot, AcquireSlot());
  Status st = [&]() -> Status {
    slot->geo->set_stop_token(group_->stop_token());
    if (slot->pass != pass_) {
      GEOLAKE_RETURN_NOT_OK(slot->worker->BeginPass(pass_));
      slot->pass = pass_;
    }
    {
      StageMetrics::Timer timer(op_stage_);
      op_stage_->AddRowsIn(rows.num_rows());
      GEOLAKE_RETURN_NOT_OK(slot->worker->Process(ready.unit, rows, &ready.out));
      op_stage_->AddRowsOut(ready.out.rows.num_rows());
    }
    if (slot->transformer != nullptr && ready.out.rows.num_rows() > 0) {
      GEOLAKE_RETURN_NOT_OK(slot->transformer->Apply(ready.out.rows, &ready.transformed));
    }
    return Status::OK();
  }();
  ReleaseSlot(slot);
  if (!st.ok()) return st.WithContext("'" + ready.unit.path + "'");
  task.rows = {};  // the output is what waits to be written; the reservation still counts
  return Park(task.seq, std::move(ready));
}

Status Runner::Park(std::int64_t seq, Ready ready) {
  {
    std::lock_guard lock(mu_);
    ready_.emplace(seq, std::move(ready));
  }
  return Drain();
}

Status Runner::Drain() {
  std::unique_lock lock(mu_);
  if (writing_) return Status::OK();
  writing_ = true;
  Status st;
  while (!ready_.empty() && ready_.begin()->first == next_write_) {
    Ready ready = std::move(ready_.begin()->second);
    ready_.erase(ready_.begin());
    const bool failed = write_failed_;
    lock.unlock();
    if (!failed) st = WriteReady(ready);
    ready.reservation.Reset();
    lock.lock();
    if (!st.ok()) write_failed_ = true;
    ++next_write_;
    if (!ready.unit_end) --in_flight_;
    changed_.notify_all();
  }
  writing_ = false;
  // A result parked while this thread wrote is written by the next Drain (every Park drains,
  // and the caller drains once more after the pass).
  return st;
}

Status Runner::WriteReady(Ready& ready) {
  if (ready.unit_end) {
    if (!per_unit_) return Status::OK();
    return EndUnit(ready.unit, PassUnitId(ready.unit));
  }
  OpOutput& out = ready.out;
  totals_.rows_emitted += out.emitted();
  totals_.rows_rejected += out.rejected();
  for (const auto& [reason, n] : out.dropped()) totals_.rows_dropped[reason] += n;
  if (!out.rejects().empty()) journal_->AddRejects(ready.unit.path, out.rejects());
  metrics_->counter("rows_rejected")->Add(out.rejected());
  op_stage_->counter("rejected")->Add(out.rejected());
  StageMetrics::Timer timer(write_stage_);
  if (sink_ != nullptr) {
    const std::int64_t n = out.rows.num_rows();
    if (n == 0) return Status::OK();
    write_stage_->AddRowsIn(n);
    GEOLAKE_RETURN_NOT_OK(sink_->Write(ready.unit.path, out.rows));
    write_stage_->AddRowsOut(n);
    totals_.rows_out += n;
    metrics_->counter("rows_out")->Add(n);
    return Status::OK();
  }
  pipeline::TransformedBatch& transformed = ready.transformed;
  const std::int64_t n = transformed.batch.num_rows();
  if (!transformed.rejects.empty()) {
    // The layout refused rows the operation made (malformed WKB): counted, never lost.
    totals_.rows_rejected += static_cast<std::int64_t>(transformed.rejects.size());
    journal_->AddRejects(ready.unit.path, transformed.rejects);
  }
  const std::int64_t unit_id = PassUnitId(ready.unit);
  OpenUnit& open = open_units_[unit_id];
  if (open.writer == nullptr) {
    open.writer = std::make_unique<pipeline::PartitionedWriter>(
        &*write_, env_.io, writer_budget_.get(), writer_budget_->capacity_bytes(), write_stage_,
        ctx_.stop);
    open.outcome.source = unit_source_;
    open.outcome.source_path = op_.name();
    open.outcome.unit = unit_id;
  }
  open.outcome.rows_read += out.emitted() + out.rejected();
  open.outcome.rows_rejected += static_cast<std::int64_t>(transformed.rejects.size());
  if (n == 0) return Status::OK();
  write_stage_->AddRowsIn(n);
  open.outcome.rows_written += n;
  totals_.rows_out += n;
  metrics_->counter("rows_out")->Add(n);
  Status st = pipeline::WriteTransformedBatch(&transformed, open.writer.get());
  if (!st.ok()) return st.WithContext("output table '" + table_id_->ToString() + "'");
  write_stage_->AddRowsOut(n);
  return Status::OK();
}

Status Runner::EndUnit(const InputUnit& unit, std::int64_t unit_id) {
  ++totals_.units;
  if (coordinator_ == nullptr) return Status::OK();
  auto it = open_units_.find(unit_id);
  OpenUnit open;
  if (it != open_units_.end()) {
    open = std::move(it->second);
    open_units_.erase(it);
  } else {
    open.outcome.source = unit_source_;
    open.outcome.source_path = op_.name();
    open.outcome.unit = unit_id;
  }
  if (open.writer != nullptr) {
    Status st = open.writer->FinishAll();
    std::vector<pipeline::WrittenFile> files = open.writer->TakeWritten();
    std::vector<pipeline::JournalEntry> entries;
    entries.reserve(files.size());
    for (const pipeline::WrittenFile& file : files) {
      entries.push_back({file.path, unit_source_, unit_id, file.rows, false, 0, {}});
    }
    summary_->files_written += static_cast<std::int64_t>(files.size());
    write_stage_->counter("files")->Add(static_cast<std::int64_t>(files.size()));
    GEOLAKE_RETURN_NOT_OK(journal_->FilesWritten(entries));
    if (!st.ok()) return st.WithContext("unit '" + unit.key + "'");
    open.outcome.files = std::move(files);
  }
  coordinator_->Submit(std::move(open.outcome));
  return Status::OK();
}

Status Runner::CloseOutput(bool ok) {
  Status st;
  if (sink_ != nullptr) {
    if (ok) st = sink_->Finish();
    sink_.reset();  // an unfinished file sink removes its temporary file
  }
  if (coordinator_ != nullptr) {
    // Units still open were stopped: their finished files are journaled, never committed.
    for (auto& [unit_id, open] : open_units_) {
      if (open.writer == nullptr) continue;
      open.writer->Abort();
      std::vector<pipeline::JournalEntry> entries;
      for (const pipeline::WrittenFile& file : open.writer->TakeWritten()) {
        entries.push_back({file.path, unit_source_, unit_id, file.rows, false, 0, {}});
      }
      Status journaled = journal_->FilesWritten(entries);
      if (!journaled.ok()) Log(LogLevel::kWarn, "{}", journaled.ToString());
    }
    open_units_.clear();
    Status committed = coordinator_->Finish();
    if (st.ok()) st = committed;
    summary_->commits = coordinator_->commits();
    summary_->rows_committed = coordinator_->rows_committed();
  }
  if (journal_ != nullptr) {
    Status rejects = journal_->WriteRejects();
    Status finished = journal_->Finish();
    if (st.ok()) st = rejects;
    if (st.ok()) st = finished;
  }
  return st;
}

Status Runner::CheckPassIdentity() {
  const std::string identity = op_.pass_identity();
  if (identity.empty() || !per_unit_ || coordinator_ == nullptr) return Status::OK();
  // A unit of its own, without files, committed no later than the first unit of output.
  const std::int64_t marker = UnitIdOf("passes:" + identity);
  if (committed_.contains(marker)) return Status::OK();
  if (!committed_.empty()) {
    return Status::InvalidArgument(
        op_.name() + ": output table '" + table_id_->ToString() +
        "' holds units this run committed when its passes were cut otherwise (now: " + identity +
        "); re-run with the --memory of the first run, or write to a new table");
  }
  pipeline::UnitOutcome outcome;
  outcome.source = unit_source_;
  outcome.source_path = op_.name();
  outcome.unit = marker;
  coordinator_->Submit(std::move(outcome));
  return Status::OK();
}

Status Runner::RunEndRows(bool final) {
  GEOLAKE_ASSIGN_OR_RETURN(Slot * slot, AcquireSlot());
  Ready ready;
  ready.unit = MakeUnit(final ? "finish" : "pass-end", op_.name());
  ready.out.policy_ = options_.on_error;
  ready.out.source_ = op_.name();
  Status st = [&]() -> Status {
    slot->geo->set_stop_token(ctx_.stop);
    if (final) {
      GEOLAKE_RETURN_NOT_OK(op_.Finish(ctx_, slot->geo.get(), &ready.out));
    } else {
      GEOLAKE_RETURN_NOT_OK(op_.FinishPass(ctx_, pass_, slot->geo.get(), &ready.out));
    }
    if (slot->transformer != nullptr && ready.out.rows.num_rows() > 0) {
      GEOLAKE_RETURN_NOT_OK(slot->transformer->Apply(ready.out.rows, &ready.transformed));
    }
    return Status::OK();
  }();
  ReleaseSlot(slot);
  GEOLAKE_RETURN_NOT_OK(st);
  if (!final && ready.out.rows.num_rows() == 0 && ready.out.emitted() == 0 &&
      ready.out.rejected() == 0 && ready.out.dropped().empty()) {
    return Status::OK();  // the pass ended with nothing of its own (most operations)
  }
  // Resumable units: the rows are a unit of their own (only when there are any); else they
  // join the run's one unit, which ends with Finish's.
  if (final) pass_ = passes_;
  const std::int64_t unit_id = PassUnitId(ready.unit);
  if (per_unit_ && ready.out.rows.num_rows() == 0) return Status::OK();
  if (per_unit_ && committed_.contains(unit_id)) return Status::OK();
  GEOLAKE_RETURN_NOT_OK(WriteReady(ready));
  if (!final && !per_unit_) return Status::OK();
  return EndUnit(ready.unit, unit_id);
}

Status Runner::Run(std::unique_ptr<Input> main, const OutputSpec& output) {
  if (env_.io == nullptr || env_.executor == nullptr) {
    return Status::InvalidArgument("an operation needs a FileIO and an executor");
  }
  if (output.table.empty() == output.path.empty()) {
    return Status::InvalidArgument("an output is either a table or a file");
  }
  if (options_.batch_rows <= 0 || options_.commit_rows <= 0 || options_.commit_seconds <= 0) {
    return Status::InvalidArgument(
        "batch rows, --commit-rows and --commit-seconds must be positive");
  }
  Metrics local_metrics;
  metrics_ = env_.metrics != nullptr ? env_.metrics : &local_metrics;
  summary_->run_id = options_.run_id.empty() ? pipeline::NewRunId() : options_.run_id;
  summary_->run_dir = pipeline::RunDirectory(env_.warehouse, summary_->run_id);
  summary_->rejects_path = summary_->run_dir + "/rejects.geojsonseq";
  summary_->memory_bytes =
      options_.memory_bytes > 0 ? options_.memory_bytes : pipeline::DefaultMemoryBudget();
  workers_ = std::max(1, env_.executor->size());
  max_tasks_ = std::int64_t{4} * workers_;
  read_stage_ = metrics_->stage("read");
  op_stage_ = metrics_->stage("op");
  write_stage_ = metrics_->stage("write");
  inflight_ = metrics_->gauge("inflight_bytes");
  batch_budget_ = std::make_unique<pipeline::MemoryBudget>(
      std::max<std::int64_t>(summary_->memory_bytes / 8, 1), inflight_);

  std::stop_callback forward(env_.stop, [this] { abort_.request_stop(); });
  ctx_.env = &env_;
  ctx_.memory_bytes = summary_->memory_bytes / 2;
  ctx_.workers = workers_;
  ctx_.on_error = options_.on_error;
  ctx_.stop = abort_.get_token();
  ctx_.metrics = metrics_;

  main_ = std::move(main);
  if (main_ == nullptr) return Status::InvalidArgument("an operation needs an input");
  GEOLAKE_ASSIGN_OR_RETURN(schema_, op_.Bind(ctx_, *main_));
  per_unit_ = op_.resumable_by_unit();
  if (options_.shard.count > 1 && !per_unit_) {
    return Status::InvalidArgument(op_.ShardRefusal());
  }
  {
    std::string key_text = op_.name() + "\n" + op_.parameters() + "\n" + main_->identity();
    for (const std::string& other : op_.other_inputs()) key_text += "\n" + other;
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(Fnv1a(key_text)));
    run_key_ = hex;
  }
  summary_->run_key = run_key_;
  unit_source_ = "op:" + run_key_;
  op_summary_ = OpSummaryJson();

  Status st = OpenOutput(output, schema_);
  if (st.ok() && !per_unit_ && committed_.contains(UnitIdOf("run"))) {
    Log(LogLevel::kInfo, "{}: this run was committed already; nothing to do", op_.name());
    ++totals_.units_skipped;
    return CloseOutput(true);
  }
  if (st.ok()) st = op_.Prepare(ctx_);
  if (st.ok()) passes_ = std::max(1, op_.passes());
  if (st.ok()) st = CheckPassIdentity();

  for (pass_ = 0; st.ok() && pass_ < passes_; ++pass_) {
    Result<PassPlan> plan = op_.BeginPass(ctx_, pass_);
    if (!plan.ok()) {
      st = plan.status();
      break;
    }
    const Input* input = plan->input != nullptr ? plan->input : main_.get();
    if (passes_ > 1)
      Log(LogLevel::kInfo, "{}: pass {}/{} {}", op_.name(), pass_ + 1, passes_, plan->label);
    Input::ReadOptions read;
    read.bbox = plan->bbox;
    read.keep = [this](const InputUnit& unit) { return Keep(unit); };
    read.memory_bytes = std::max<std::int64_t>(summary_->memory_bytes / 8, 1);
    read.batch_rows = options_.batch_rows;
    Status read_status;
    Status task_status;
    {
      TaskGroup group(env_.executor, abort_.get_token());
      group_ = &group;
      {
        StageMetrics::Timer timer(read_stage_);
        read_status = input->Read(read, env_.executor, this, group.stop_token());
      }
      task_status = group.Wait();
      group_ = nullptr;
    }
    Status drained = Drain();
    // The tasks' error is the cause; the reader's kCancelled is its consequence.
    st = !task_status.ok() ? task_status : !read_status.ok() ? read_status : drained;
    if (st.ok()) st = RunEndRows(/*final=*/false);
    if (st.ok()) st = op_.EndPass(ctx_, pass_);
  }

  if (st.ok()) st = RunEndRows(/*final=*/true);
  if (abort_.stop_requested() && st.ok()) st = Status::Cancelled("run stopped");
  if (st.code() == ErrorCode::kCancelled && env_.stop.stop_requested()) {
    st = Status::Cancelled(op_.name() + " cancelled; whole units committed so far stay");
  }

  Status closed = CloseOutput(st.ok());
  if (st.ok()) st = closed;
  summary_->totals = totals_;
  summary_->peak_inflight_bytes = inflight_->peak();
  metrics_->counter("rows_in")->Add(totals_.rows_in);

  // The invariant, on a complete run: every row delivered is emitted, dropped or rejected.
  std::int64_t dropped = 0;
  std::string reasons;
  for (const auto& [reason, n] : totals_.rows_dropped) {
    dropped += n;
    reasons += (reasons.empty() ? " (" : ", ") + reason + ": " + std::to_string(n);
  }
  if (!reasons.empty()) reasons += ")";
  const std::int64_t accounted = totals_.rows_emitted + dropped + totals_.rows_rejected;
  const bool holds = totals_.rows_in == accounted;
  // A stopped or failed run discards the batches it had not finished: those rows are named as
  // such, not reported as a broken invariant.
  const std::int64_t unfinished = st.ok() ? 0 : totals_.rows_in - accounted;
  summary_->invariant.push_back(
      "rows in " + std::to_string(totals_.rows_in) + (holds || unfinished > 0 ? " = " : " != ") +
      "emitted " + std::to_string(totals_.rows_emitted) + " + dropped " + std::to_string(dropped) +
      reasons + " + rejected " + std::to_string(totals_.rows_rejected) +
      (unfinished > 0 ? " + in batches the stop discarded " + std::to_string(unfinished) : "") +
      "; rows out " + std::to_string(totals_.rows_out));
  if (!st.ok()) return st;
  if (!holds) {
    return Status::Internal(op_.name() + ": invariant failed: " + summary_->invariant.front());
  }
  return op_.CheckInvariant(totals_, &summary_->invariant);
}

Status RunOperation(const OpEnv& env, Operation& op, const InputSpec& main,
                    const OutputSpec& output, const RunnerOptions& options, RunSummary* summary) {
  *summary = RunSummary{};
  if (env.io == nullptr || env.executor == nullptr) {
    return Status::InvalidArgument("an operation needs a FileIO and an executor");
  }
  std::unique_ptr<Input> input;
  {
    Metrics local;
    Metrics* metrics = env.metrics != nullptr ? env.metrics : &local;
    StageMetrics::Timer timer(metrics->stage("discover"));
    GEOLAKE_ASSIGN_OR_RETURN(input, Input::Open(env, main));
  }
  return RunOperation(env, op, std::move(input), output, options, summary);
}

Status RunOperation(const OpEnv& env, Operation& op, std::unique_ptr<Input> main,
                    const OutputSpec& output, const RunnerOptions& options, RunSummary* summary) {
  *summary = RunSummary{};
  Runner runner(env, op, options, summary);
  return runner.Run(std::move(main), output);
}

std::string FormatRunSummary(const RunSummary& s) {
  std::string text = "run " + s.run_id + " (" + s.run_key + "): " + std::to_string(s.totals.units) +
                     " units (" + std::to_string(s.totals.units_skipped) + " skipped)\n";
  for (const std::string& line : s.invariant) text += line + "\n";
  if (s.commits > 0 || s.files_written > 0) {
    text += std::to_string(s.files_written) + " files written, " +
            std::to_string(s.rows_committed) + " rows committed in " + std::to_string(s.commits) +
            " commits\n";
  }
  text += "peak in flight " + FormatSize(s.peak_inflight_bytes) + " of " +
          FormatSize(s.memory_bytes) + "; rejects " + s.rejects_path + "\n";
  return text;
}

}  // namespace geolake::ops
