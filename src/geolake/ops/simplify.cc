// Simplify on the runner (simplify.h has the contract). Douglas-Peucker and topology-preserving
// simplification are per-feature operations (PerFeatureOperation: the runner spreads the
// batches over the workers); the coverage simplification is an Operation that keeps the
// whole input and simplifies it in Finish.
#include "geolake/ops/simplify.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>

#include "geolake/core/units.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/validity_fast_path.h"
#include "geolake/geo/wkb.h"
#include "geolake/ops/coverage_simplify.h"

namespace geolake::ops {
namespace {

constexpr const char* kCollapsed = "collapsed to empty";

bool IsPolygonal(geo::GeometryType type) {
  return type == geo::GeometryType::kPolygon || type == geo::GeometryType::kMultiPolygon;
}

// Counters that worker threads add to; copied into the report at the end.
struct Counters {
  std::atomic<std::int64_t> features{0};
  std::atomic<std::int64_t> empty{0};
  std::atomic<std::int64_t> vertices_in{0};
  std::atomic<std::int64_t> vertices_out{0};
  std::atomic<std::int64_t> collapsed{0};
  std::atomic<std::int64_t> repaired{0};
  std::atomic<std::int64_t> kept_unsimplified{0};
};

class PerFeatureSimplify final : public PerFeatureOperation {
 public:
  explicit PerFeatureSimplify(SimplifyOptions options) : options_(options) {}

  std::string name() const override { return "simplify"; }
  std::string parameters() const override {
    return nlohmann::json{{"method", SimplifyMethodName(options_.method)},
                          {"tolerance", options_.tolerance}}
        .dump();
  }

  Result<std::optional<std::string>> Apply(geo::GeoContext& geo, std::span<const std::uint8_t> wkb,
                                           std::string* drop_reason) const override {
    GEOLAKE_ASSIGN_OR_RETURN(geo::WkbSummary summary, geo::SummarizeWkb(wkb));
    if (summary.non_finite) {
      // GEOS 3.11 cannot simplify such a geometry safely (docs/ops.md): the feature's error.
      return Status::GeometryError("simplify: a coordinate is not finite");
    }
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(geo, wkb));
    GEOLAKE_ASSIGN_OR_RETURN(bool empty_in, g.IsEmpty());
    if (empty_in) {
      // Nothing to simplify: kept as it is (not a collapse).
      counters_.empty.fetch_add(1, std::memory_order_relaxed);
      return std::optional<std::string>(
          std::string(reinterpret_cast<const char*>(wkb.data()), wkb.size()));
    }
    const bool polygonal = IsPolygonal(summary.header.type);
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t n_in, g.NumCoordinates());
    counters_.features.fetch_add(1, std::memory_order_relaxed);
    counters_.vertices_in.fetch_add(n_in, std::memory_order_relaxed);
    std::optional<geo::Geometry> out;
    std::optional<std::string> out_bytes;  // out's WKB when already written
    if (options_.method == SimplifyMethod::kPreserveTopology) {
      // Validity is decided by geo::ProvablyValidPolygon where it can (most polygons, in well
      // under a microsecond), and by GEOS otherwise: on the 1M-polygon coverage GEOS's two
      // validity checks were most of the command's time.
      if (polygonal && !geo::ProvablyValidPolygon(wkb)) {
        GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed, g.RepairIfInvalid(wkb));
        if (fixed) {
          g = std::move(*fixed);
          counters_.repaired.fetch_add(1, std::memory_order_relaxed);
        }
      }
      GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry s, g.Simplify(options_.tolerance));
      if (polygonal) {
        GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, s.ToWkb());
        bool valid = geo::ProvablyValidPolygon(geo::AsBytes(bytes));
        if (!valid) {
          GEOLAKE_ASSIGN_OR_RETURN(valid, s.IsValid());
        }
        if (!valid) {
          // GEOS 3.11's TPS can cross rings in rare cases (fixed in 3.13/3.14): keep the
          // valid input rather than write an invalid polygon.
          counters_.kept_unsimplified.fetch_add(1, std::memory_order_relaxed);
          GEOLAKE_ASSIGN_OR_RETURN(s, g.Clone());
        } else {
          out_bytes = std::move(bytes);
        }
      }
      out = std::move(s);
    } else {
      GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry s, g.SimplifyDouglasPeucker(options_.tolerance));
      out = std::move(s);
    }
    GEOLAKE_ASSIGN_OR_RETURN(bool empty_out, out->IsEmpty());
    if (empty_out) {
      counters_.collapsed.fetch_add(1, std::memory_order_relaxed);
      *drop_reason = kCollapsed;
      return std::optional<std::string>();
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t n_out, out->NumCoordinates());
    counters_.vertices_out.fetch_add(n_out, std::memory_order_relaxed);
    if (out_bytes) return out_bytes;
    GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, out->ToWkb());
    return std::optional<std::string>(std::move(bytes));
  }

  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override {
    const auto it = totals.rows_dropped.find(kCollapsed);
    const std::int64_t dropped = it == totals.rows_dropped.end() ? 0 : it->second;
    char text[200];
    std::snprintf(text, sizeof(text), "simplify: %lld features collapsed to empty = %lld dropped",
                  static_cast<long long>(counters_.collapsed.load()),
                  static_cast<long long>(dropped));
    lines->push_back(text);
    if (dropped != counters_.collapsed.load()) {
      return Status::Internal(std::string("simplify: invariant failed: ") + text);
    }
    return Status::OK();
  }

  void Fill(SimplifyReport* report) const {
    report->features = counters_.features.load();
    report->empty = counters_.empty.load();
    report->vertices_in = counters_.vertices_in.load();
    report->vertices_out = counters_.vertices_out.load();
    report->collapsed = counters_.collapsed.load();
    report->repaired = counters_.repaired.load();
    report->kept_unsimplified = counters_.kept_unsimplified.load();
  }

 private:
  SimplifyOptions options_;
  mutable Counters counters_;
};

// ---- --coverage: the whole input, simplified in Finish ---------------------------------------

// The rows one task delivered, kept until the end with their place in the input order.
struct HeldBatch {
  std::int64_t ordinal = 0;       // the unit's
  std::int64_t first_index = 0;   // its first row's feature_index
  geoparquet::FeatureBatch rows;  // the input's fields
};

class CoverageSimplify;

class CoverageWorker final : public OpWorker {
 public:
  explicit CoverageWorker(CoverageSimplify* op) : op_(op) {}
  Status Process(const InputUnit& unit, const geoparquet::FeatureBatch& in, OpOutput* out) override;

 private:
  CoverageSimplify* op_;
};

class CoverageSimplify final : public Operation {
 public:
  CoverageSimplify(SimplifyOptions options, SimplifyReport* report)
      : options_(options), report_(report) {}

  std::string name() const override { return "simplify"; }
  std::string parameters() const override {
    return nlohmann::json{{"method", SimplifyMethodName(options_.method)},
                          {"tolerance", options_.tolerance}}
        .dump();
  }
  bool resumable_by_unit() const override { return false; }
  std::string ShardRefusal() const override {
    return "simplify --coverage: --shard is refused: the coverage needs every unit's polygons";
  }

  Result<OpSchema> Bind(OpContext& ctx, const Input& main) override {
    fields_ = main.fields();
    memory_bytes_ = ctx.memory_bytes;
    return OpSchema{main.fields(), main.crs()};
  }
  Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext* /*geo*/) override {
    return std::unique_ptr<OpWorker>(std::make_unique<CoverageWorker>(this));
  }
  Status Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) override;

  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override {
    char text[200];
    std::snprintf(text, sizeof(text),
                  "simplify --coverage: %lld rows held = %lld emitted; rows out %lld = rows held",
                  static_cast<long long>(held_rows_), static_cast<long long>(totals.rows_emitted),
                  static_cast<long long>(totals.rows_out));
    lines->push_back(text);
    if (held_rows_ != totals.rows_emitted || totals.rows_out != held_rows_) {
      return Status::Internal(std::string("simplify --coverage: invariant failed: ") + text);
    }
    return Status::OK();
  }

  Status Hold(HeldBatch batch) {
    const std::int64_t bytes = batch.rows.ByteSize();
    std::lock_guard lock(mu_);
    held_bytes_ += bytes;
    if (held_bytes_ > memory_bytes_) {
      return Status::NotImplemented(
          "simplify --coverage: the input needs more than the operation's share of --memory (" +
          FormatSize(memory_bytes_) +
          "); simplifying a coverage by tiles is not built yet: raise --memory");
    }
    held_.push_back(std::move(batch));
    return Status::OK();
  }

 private:
  SimplifyOptions options_;
  SimplifyReport* report_;
  std::vector<geoparquet::FieldDef> fields_;
  std::int64_t memory_bytes_ = 0;
  std::int64_t held_rows_ = 0;
  std::mutex mu_;  // guards held_ and held_bytes_
  std::vector<HeldBatch> held_;
  std::int64_t held_bytes_ = 0;
};

Status CoverageWorker::Process(const InputUnit& unit, const geoparquet::FeatureBatch& in,
                               OpOutput* out) {
  HeldBatch held;
  held.ordinal = unit.ordinal;
  held.first_index = in.num_rows() > 0 ? in.feature_index[0] : 0;
  geoparquet::FeatureBatch& rows = held.rows;
  rows.fields = in.fields;
  rows.columns.assign(in.columns.size(), {});
  std::vector<std::uint32_t> kept;
  for (std::int64_t r = 0; r < in.num_rows(); ++r) {
    const auto row = static_cast<std::size_t>(r);
    if (in.geometry_valid[row] != 0) {
      Result<geo::WkbSummary> summary = geo::SummarizeWkb(in.GeometryAt(row));
      Status st = summary.ok() ? Status::OK() : summary.status();
      if (st.ok() && summary->non_finite) {
        st = Status::GeometryError("simplify: a coordinate is not finite");
      }
      if (!st.ok()) {
        if (st.code() != ErrorCode::kGeometryError && st.code() != ErrorCode::kCorruptData) {
          return st;
        }
        GEOLAKE_RETURN_NOT_OK(out->FeatureError(in, r, Status::GeometryError(st.message())));
        continue;
      }
      const std::span<const std::uint8_t> bytes = in.GeometryAt(row);
      rows.wkb.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    kept.push_back(static_cast<std::uint32_t>(r));
    rows.wkb_offsets.push_back(static_cast<std::int64_t>(rows.wkb.size()));
    rows.geometry_valid.push_back(in.geometry_valid[row]);
    rows.feature_index.push_back(in.feature_index[row]);
    out->Emitted();
  }
  for (std::size_t c = 0; c < in.columns.size(); ++c) {
    rows.columns[c].type = in.columns[c].type;
    pipeline::AppendRows(&in.columns[c], kept, &rows.columns[c]);
  }
  return op_->Hold(std::move(held));
}

Status CoverageSimplify::Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) {
  const auto started = std::chrono::steady_clock::now();
  std::sort(held_.begin(), held_.end(), [](const HeldBatch& a, const HeldBatch& b) {
    return std::tie(a.ordinal, a.first_index) < std::tie(b.ordinal, b.first_index);
  });
  // Every row's geometry: polygonal ones parsed for the coverage, the rest kept as bytes.
  struct RowRef {
    std::size_t batch;
    std::size_t row;
  };
  std::vector<RowRef> refs;
  std::vector<geo::FlatGeometry> geoms;
  std::vector<std::uint8_t> polygonal;
  std::vector<std::uint8_t> valid_in;
  for (std::size_t b = 0; b < held_.size(); ++b) {
    const geoparquet::FeatureBatch& rows = held_[b].rows;
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows.num_rows()); ++r) {
      refs.push_back({b, r});
      geoms.emplace_back();
      polygonal.push_back(0);
      valid_in.push_back(1);
      if (rows.geometry_valid[r] == 0) continue;
      const std::span<const std::uint8_t> bytes = rows.GeometryAt(r);
      GEOLAKE_ASSIGN_OR_RETURN(geo::WkbHeader header, geo::PeekWkbType(bytes));
      if (header.type != geo::GeometryType::kPolygon &&
          header.type != geo::GeometryType::kMultiPolygon) {
        ++report_->passed_through;
        continue;
      }
      GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(*geo, bytes));
      GEOLAKE_ASSIGN_OR_RETURN(bool empty, g.IsEmpty());
      if (empty) {  // kept as it is
        ++report_->empty;
        continue;
      }
      GEOLAKE_ASSIGN_OR_RETURN(bool valid, g.IsValid());
      if (!valid) ++report_->invalid_inputs;
      valid_in.back() = valid ? 1 : 0;
      GEOLAKE_ASSIGN_OR_RETURN(geoms.back(), geo::ParseWkb(bytes));
      polygonal.back() = 1;
      ++report_->features;
    }
  }
  held_rows_ = static_cast<std::int64_t>(refs.size());
  // The safety net: every rebuilt polygon of a valid input must be valid for GEOS.
  const CoverageGeometryCheck check = [&](std::size_t index,
                                          const geo::FlatGeometry& rebuilt) -> Result<bool> {
    if (valid_in[index] == 0) return true;
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(*geo, geo::WriteWkb(rebuilt)));
    return g.IsValid();
  };
  CoverageStats stats;
  GEOLAKE_RETURN_NOT_OK(SimplifyCoverage(&geoms, options_.tolerance, &stats, ctx.stop, check));
  report_->rings = stats.rings;
  report_->nodes = stats.nodes;
  report_->arcs = stats.arcs;
  report_->shared_arcs = stats.shared_arcs;
  report_->arcs_restored = stats.arcs_restored;
  report_->check_rounds = stats.check_rounds;
  report_->vertices_in = stats.vertices_in;
  report_->vertices_out = stats.vertices_out;

  geoparquet::FeatureBatch& rows = out->rows;
  rows.fields = fields_;
  rows.columns.assign(fields_.size(), {});
  for (std::size_t c = 0; c < fields_.size(); ++c) rows.columns[c].type = fields_[c].type;
  for (std::size_t b = 0; b < held_.size(); ++b) {
    geoparquet::FeatureBatch& in = held_[b].rows;
    std::vector<std::uint32_t> all(static_cast<std::size_t>(in.num_rows()));
    for (std::size_t r = 0; r < all.size(); ++r) all[r] = static_cast<std::uint32_t>(r);
    for (std::size_t c = 0; c < fields_.size(); ++c) {
      pipeline::AppendRows(&in.columns[c], all, &rows.columns[c]);
    }
  }
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const geoparquet::FeatureBatch& in = held_[refs[i].batch].rows;
    const std::size_t r = refs[i].row;
    if (polygonal[i] != 0) {
      rows.wkb += geo::WriteWkb(geoms[i]);
      geo::FlatGeometry().parts.swap(geoms[i].parts);
    } else if (in.geometry_valid[r] != 0) {
      const std::span<const std::uint8_t> bytes = in.GeometryAt(r);
      rows.wkb.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    rows.wkb_offsets.push_back(static_cast<std::int64_t>(rows.wkb.size()));
    rows.geometry_valid.push_back(in.geometry_valid[r]);
    rows.feature_index.push_back(in.feature_index[r]);
  }
  report_->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return Status::OK();
}

}  // namespace

const char* SimplifyMethodName(SimplifyMethod method) {
  switch (method) {
    case SimplifyMethod::kDouglasPeucker:
      return "douglas-peucker";
    case SimplifyMethod::kPreserveTopology:
      return "preserve-topology";
    case SimplifyMethod::kCoverage:
      return "coverage";
  }
  return "?";
}

Status RunSimplify(const OpEnv& env, const InputSpec& input, const SimplifyOptions& options,
                   const OutputSpec& output, const RunnerOptions& runner_options,
                   RunSummary* summary, SimplifyReport* report) {
  *summary = RunSummary{};
  SimplifyReport local_report;
  if (report == nullptr) report = &local_report;
  *report = SimplifyReport{};
  if (!(options.tolerance >= 0) || !std::isfinite(options.tolerance)) {
    return Status::InvalidArgument("simplify: --tolerance must be a finite number >= 0");
  }
  if (options.method == SimplifyMethod::kCoverage) {
    CoverageSimplify op(options, report);
    return RunOperation(env, op, input, output, runner_options, summary);
  }
  PerFeatureSimplify op(options);
  Status st = RunOperation(env, op, input, output, runner_options, summary);
  op.Fill(report);
  return st;
}

std::string FormatSimplifyReport(const SimplifyOptions& options, const SimplifyReport& r) {
  const double ratio =
      r.vertices_in > 0 ? static_cast<double>(r.vertices_out) / static_cast<double>(r.vertices_in)
                        : 1.0;
  char text[512];
  std::snprintf(text, sizeof(text),
                "simplify (%s, tolerance %g): %lld features, %lld -> %lld vertices (%.1f%%), "
                "%lld collapsed to empty and dropped",
                SimplifyMethodName(options.method), options.tolerance,
                static_cast<long long>(r.features), static_cast<long long>(r.vertices_in),
                static_cast<long long>(r.vertices_out), 100.0 * ratio,
                static_cast<long long>(r.collapsed));
  std::string line = text;
  if (r.empty > 0) {
    // Written as they are and not counted as features: the rows out are features + empty.
    std::snprintf(text, sizeof(text), ", %lld empty geometries kept as they are",
                  static_cast<long long>(r.empty));
    line += text;
  }
  if (options.method == SimplifyMethod::kPreserveTopology) {
    std::snprintf(text, sizeof(text),
                  ", %lld invalid inputs made valid first, %lld invalid results replaced by "
                  "the input",
                  static_cast<long long>(r.repaired), static_cast<long long>(r.kept_unsimplified));
    line += text;
  }
  if (options.method == SimplifyMethod::kCoverage) {
    std::snprintf(text, sizeof(text),
                  "; coverage: %lld rings, %lld nodes, %lld arcs (%lld shared), %lld arcs kept "
                  "unsimplified by the checks in %lld rounds, %lld non-polygonal passed "
                  "through, %lld invalid inputs, %.2f s",
                  static_cast<long long>(r.rings), static_cast<long long>(r.nodes),
                  static_cast<long long>(r.arcs), static_cast<long long>(r.shared_arcs),
                  static_cast<long long>(r.arcs_restored), static_cast<long long>(r.check_rounds),
                  static_cast<long long>(r.passed_through),
                  static_cast<long long>(r.invalid_inputs), r.seconds);
    line += text;
  }
  return line + "\n";
}

}  // namespace geolake::ops
