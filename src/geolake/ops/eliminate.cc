// Eliminate on the runner (eliminate.h has the contract and the rule).
//
// Phases. (1) Workers (OpWorker::Process, in parallel) make each row's geometry valid, measure
// it (reprojected to --area-crs when given) and keep it with the row's attributes: no lock per
// row. (2) Finish sorts the rows into input order (row ids), measures the border of every pair
// of polygons whose boxes meet and of which at least one is below the threshold, in chunks on
// the executor. (3) The rounds run on the neighbour graph only: a region's area is the sum of
// its members' areas and its border with another region the sum of their pairs' borders, so no
// geometry is touched while deciding (sequential; on the US counties it takes milliseconds).
// (4) Each absorbing feature is unioned with what it absorbed, one task per absorber on the
// executor. Geometries travel between phases as WKB: a GEOS geometry belongs to the context of
// the thread that made it.
#include "geolake/ops/eliminate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "geolake/core/thread_pool.h"
#include "geolake/core/units.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/make_valid.h"
#include "geolake/geo/proj.h"
#include "geolake/geo/shared_boundary.h"
#include "geolake/geo/strtree.h"
#include "geolake/geo/wkb.h"
#include "geolake/ops/task_state_internal.h"
#include "geolake/pipeline/transform.h"

namespace geolake::ops {
namespace {

using internal::BusyClock;
using internal::ContextPool;

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;

// Rough bytes a kept row costs besides its WKB and attributes (vectors, strings).
constexpr std::int64_t kFeatureOverheadBytes = 160;
// Small polygons per task of the border measuring: each parses its polygon and boundary once
// and its candidates once per pair, a few ms per task on county-sized polygons.
constexpr std::int64_t kPairChunk = 32;
// The invariant's relative tolerance on total areas (eliminate.h).
constexpr double kAreaTolerance = 1e-9;
constexpr std::size_t kMaxIslandRows = 1000;

bool IsIntegral(FieldType t) {
  return t == FieldType::kBool || t == FieldType::kInt64 || t == FieldType::kDate ||
         t == FieldType::kTimestamp;
}

// The --within value of a row as bytes: a tag, then the value (-0.0 as 0.0 and every NaN as
// one NaN, so equal values are equal keys); a null is a value of its own, equal to a null.
std::string WithinKey(const Column& c, std::size_t row) {
  std::string key;
  if (row >= c.valid.size() || c.valid[row] == 0) return std::string(1, '\0');
  key.push_back('\1');
  if (IsIntegral(c.type)) {
    key.append(reinterpret_cast<const char*>(&c.ints[row]), sizeof(std::int64_t));
  } else if (c.type == FieldType::kDouble) {
    double d = c.doubles[row];
    if (d == 0) d = 0;
    if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
    key.append(reinterpret_cast<const char*>(&d), sizeof(double));
  } else {
    key.append(c.StringAt(row));
  }
  return key;
}

std::int64_t ColumnBytes(const Column& c) {
  return static_cast<std::int64_t>(c.valid.size() + c.ints.size() * 8 + c.doubles.size() * 8 +
                                   c.bytes.size() + c.offsets.size() * 8);
}

// One input row as the operation keeps it.
struct Feature {
  std::int64_t unit = 0;   // input order: the unit's ordinal,
  std::int64_t index = 0;  // then the row's feature index
  std::int64_t batch = 0;  // where its attributes are (worker-local, then global)
  std::uint32_t row = 0;
  bool has_geometry = false;  // false: a null geometry
  bool polygon = false;       // a non-empty valid (multi)polygon that takes part
  std::string wkb;            // valid geometry in the input CRS (or the empty one as read)
  std::string measure_wkb;    // the same in --area-crs; empty without it
  geo::Envelope box;          // of the measured geometry
  double area = 0;            // measured area (threshold units)
  double plain_area = 0;      // area in the input CRS units (the invariant)
  std::string within;         // WithinKey, with --within
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The neighbour graph and the rounds (eliminate.h states the rule). Regions are indexed by
// their owner's row id; a region absorbed by another is dead and points at it (parent).
// Thread-safety: none; Finish uses it on one thread.
class Regions {
 public:
  Regions(std::vector<double> areas, const std::vector<std::string>* within, double threshold,
          MergeInto merge_into)
      : area_(std::move(areas)),
        alive_(area_.size(), 1),
        parent_(area_.size()),
        adj_(area_.size()),
        within_(within),
        threshold_(threshold),
        merge_into_(merge_into) {
    for (std::size_t i = 0; i < parent_.size(); ++i) parent_[i] = static_cast<std::int64_t>(i);
  }

  // A border of `length` between rows a and b (each unordered pair once).
  void AddBorder(std::int64_t a, std::int64_t b, double length) {
    adj_[Idx(a)][b] += length;
    adj_[Idx(b)][a] = adj_[Idx(a)][b];
  }

  bool Eligible(std::int64_t r, std::int64_t u) const {
    return within_ == nullptr || (*within_)[Idx(r)] == (*within_)[Idx(u)];
  }
  bool Small(std::int64_t r) const { return area_[Idx(r)] < threshold_; }
  bool HasEligible(std::int64_t r) const {
    for (const auto& [u, length] : adj_[Idx(r)]) {
      if (Eligible(r, u)) return true;
    }
    return false;
  }

  // Run rounds until nothing merges or `max_rounds` (0: no cap) ran; `small` are the rows
  // below the threshold at the start (the only regions that can ever be small).
  void Run(const std::vector<std::int64_t>& small, std::int64_t max_rounds) {
    std::vector<std::int64_t> candidates;
    std::vector<std::int64_t> target(area_.size(), -1);
    std::vector<std::int64_t> root(area_.size(), -1);
    std::vector<std::uint8_t> state(area_.size(), 0);
    while (true) {
      candidates.clear();
      for (const std::int64_t r : small) {
        if (alive_[Idx(r)] != 0 && Small(r) && HasEligible(r)) candidates.push_back(r);
      }
      if (candidates.empty()) break;
      if (max_rounds > 0 && rounds_ == max_rounds) {
        capped_ = static_cast<std::int64_t>(candidates.size());
        break;
      }
      ++rounds_;
      // Every candidate chooses from the state at the start of the round.
      for (const std::int64_t r : candidates) target[Idx(r)] = Choose(r);
      // Two regions that chose each other: the larger (area, then row id) keeps still.
      for (const std::int64_t r : candidates) {
        const std::int64_t t = target[Idx(r)];
        if (t >= 0 && target[Idx(t)] == r && Before(t, r)) target[Idx(r)] = -1;
      }
      // Follow the choices to the region that absorbs each chain (a guard breaks any longer
      // cycle, which the strict orders rule out, at its largest region).
      for (const std::int64_t r : candidates) FindRoot(r, target, root, state);
      // Merge, absorbers by row id and their members by row id, so that the sums of borders
      // (floating point) come out the same on every run.
      std::map<std::int64_t, std::vector<std::int64_t>> absorbed;
      for (const std::int64_t r : candidates) {
        if (root[Idx(r)] != r) absorbed[root[Idx(r)]].push_back(r);
      }
      for (auto& [t, members] : absorbed) {
        std::sort(members.begin(), members.end());
        for (const std::int64_t m : members) Absorb(t, m);
      }
      for (const std::int64_t r : candidates) {
        target[Idx(r)] = -1;
        root[Idx(r)] = -1;
        state[Idx(r)] = 0;
      }
    }
  }

  // The row that a row ends in (itself when it survives).
  std::int64_t Owner(std::int64_t r) {
    std::int64_t x = r;
    while (parent_[Idx(x)] != x) x = parent_[Idx(x)];
    while (parent_[Idx(r)] != x) {
      const std::int64_t next = parent_[Idx(r)];
      parent_[Idx(r)] = x;
      r = next;
    }
    return x;
  }

  bool alive(std::int64_t r) const { return alive_[Idx(r)] != 0; }
  bool has_neighbours(std::int64_t r) const { return !adj_[Idx(r)].empty(); }
  std::int64_t rounds() const { return rounds_; }
  std::int64_t capped() const { return capped_; }

 private:
  static std::size_t Idx(std::int64_t r) { return static_cast<std::size_t>(r); }

  // True when region a comes before b in (area, row id) order.
  bool Before(std::int64_t a, std::int64_t b) const {
    if (area_[Idx(a)] != area_[Idx(b)]) return area_[Idx(a)] < area_[Idx(b)];
    return a < b;
  }

  // r's target: the eligible neighbour first by the --merge-into order.
  std::int64_t Choose(std::int64_t r) const {
    std::int64_t best = -1;
    double best_length = 0;
    for (const auto& [u, length] : adj_[Idx(r)]) {
      if (!Eligible(r, u)) continue;
      bool better = false;
      if (best < 0) {
        better = true;
      } else if (merge_into_ == MergeInto::kLargestArea && area_[Idx(u)] != area_[Idx(best)]) {
        better = area_[Idx(u)] > area_[Idx(best)];
      } else if (length != best_length) {
        better = length > best_length;
      } else {
        better = u < best;
      }
      if (better) {
        best = u;
        best_length = length;
      }
    }
    return best;
  }

  void FindRoot(std::int64_t r, std::vector<std::int64_t>& target, std::vector<std::int64_t>& root,
                std::vector<std::uint8_t>& state) {
    std::vector<std::int64_t> path;
    std::int64_t x = r;
    while (true) {
      if (state[Idx(x)] == 2) break;  // its root is known
      if (target[Idx(x)] < 0) {       // it chose nothing: a root
        root[Idx(x)] = x;
        state[Idx(x)] = 2;
        break;
      }
      if (state[Idx(x)] == 1) {  // a cycle: break it
        std::int64_t largest = x;
        for (std::int64_t y = target[Idx(x)]; y != x; y = target[Idx(y)]) {
          if (Before(largest, y)) largest = y;
        }
        target[Idx(largest)] = -1;
        root[Idx(largest)] = largest;
        state[Idx(largest)] = 2;
        ++cycles_broken_;
        // Re-walk from r; the nodes on the path stay "in progress" and are finished below.
        for (const std::int64_t p : path) state[Idx(p)] = 0;
        path.clear();
        x = r;
        continue;
      }
      state[Idx(x)] = 1;
      path.push_back(x);
      x = target[Idx(x)];
    }
    const std::int64_t found = root[Idx(x)];
    for (const std::int64_t p : path) {
      root[Idx(p)] = found;
      state[Idx(p)] = 2;
    }
  }

  // Region m merges into region t.
  void Absorb(std::int64_t t, std::int64_t m) {
    area_[Idx(t)] += area_[Idx(m)];
    alive_[Idx(m)] = 0;
    parent_[Idx(m)] = t;
    std::map<std::int64_t, double>& into = adj_[Idx(t)];
    into.erase(m);
    for (const auto& [u, length] : adj_[Idx(m)]) {
      if (u == t) continue;
      double& sum = into[u];
      sum += length;
      std::map<std::int64_t, double>& back = adj_[Idx(u)];
      back.erase(m);
      back[t] = sum;
    }
    std::map<std::int64_t, double>().swap(adj_[Idx(m)]);
  }

  std::vector<double> area_;
  std::vector<std::uint8_t> alive_;
  std::vector<std::int64_t> parent_;
  // Borders by neighbour, ordered so that every walk over them is deterministic.
  std::vector<std::map<std::int64_t, double>> adj_;
  const std::vector<std::string>* within_;
  double threshold_;
  MergeInto merge_into_;
  std::int64_t rounds_ = 0;
  std::int64_t capped_ = 0;
  std::int64_t cycles_broken_ = 0;
};

class EliminateOperation;

// One worker thread's rows. Thread-safety: used by one thread at a time (the runner's rule for
// OpWorker); Finish reads it after every Process returned.
class EliminateWorker final : public OpWorker {
 public:
  EliminateWorker(EliminateOperation* op, geo::GeoContext* geo,
                  std::optional<geo::Transformer> transformer)
      : op_(op), geo_(geo), transformer_(std::move(transformer)) {}
  Status Process(const InputUnit& unit, const FeatureBatch& in, OpOutput* out) override;

  std::vector<std::vector<Column>> batches;
  std::vector<Feature> features;
  std::int64_t repaired = 0;
  std::chrono::steady_clock::time_point first_batch = std::chrono::steady_clock::time_point::max();

 private:
  Status Measure(std::span<const std::uint8_t> bytes, Feature* f);

  EliminateOperation* op_;
  geo::GeoContext* geo_;
  std::optional<geo::Transformer> transformer_;
};

// Thread-safety: as the runner calls an Operation; MakeWorker and Hold may run concurrently
// (mu_ and atomics), Finish and CheckInvariant on one thread.
class EliminateOperation final : public Operation {
 public:
  EliminateOperation(EliminateOptions options, EliminateReport* report)
      : options_(std::move(options)), report_(report) {}

  std::string name() const override { return "eliminate"; }
  std::string parameters() const override {
    return nlohmann::json{{"area_below", options_.area_below},
                          {"merge_into", std::string(MergeIntoName(options_.merge_into))},
                          {"within", options_.within},
                          {"max_iterations", options_.max_iterations},
                          {"area_crs", options_.area_crs}}
        .dump();
  }
  bool resumable_by_unit() const override { return false; }
  std::string ShardRefusal() const override {
    return "eliminate: --shard is refused: a polygon's neighbours may be in any unit (run one "
           "process)";
  }

  Result<OpSchema> Bind(OpContext& ctx, const Input& main) override {
    const std::vector<FieldDef>& fields = main.fields();
    if (!options_.within.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].name == options_.within) within_column_ = static_cast<int>(i);
      }
      if (within_column_ < 0) {
        return Status::InvalidArgument("--within: " + main.label() + " has no column '" +
                                       options_.within + "'");
      }
    }
    if (!options_.area_crs.empty()) {
      if (main.crs().empty()) {
        return Status::InvalidArgument("eliminate --area-crs: " + main.label() +
                                       " has no CRS to reproject from");
      }
      GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo, geo::GeoContext::Make());
      Result<geo::Crs> from = geo::Crs::Make(*geo, main.crs());
      if (!from.ok()) return from.status().WithContext("eliminate: the CRS of " + main.label());
      Result<geo::Crs> to = geo::Crs::Make(*geo, options_.area_crs);
      if (!to.ok())
        return to.status().WithContext("eliminate --area-crs '" + options_.area_crs + "'");
      // Fail before any output exists when PROJ has no operation between them.
      GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer probe, geo::Transformer::Make(*geo, *from, *to));
      if (!probe.is_identity()) {
        from_ = std::move(*from);
        to_ = std::move(*to);
      }
    }
    memory_bytes_ = ctx.memory_bytes;
    workers_ = ctx.workers;
    out_fields_ = fields;
    return OpSchema{fields, main.crs()};
  }

  Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext* geo) override {
    std::optional<geo::Transformer> transformer;
    if (from_) {
      GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t, geo::Transformer::Make(*geo, *from_, *to_));
      transformer = std::move(t);
    }
    auto worker = std::make_unique<EliminateWorker>(this, geo, std::move(transformer));
    std::lock_guard lock(mu_);
    made_.push_back(worker.get());
    return std::unique_ptr<OpWorker>(std::move(worker));
  }

  Status Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) override;

  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override {
    const EliminateReport& r = *report_;
    char text[400];
    std::snprintf(text, sizeof(text),
                  "eliminate: features out %lld = rows emitted %lld - merged %lld",
                  static_cast<long long>(totals.rows_out),
                  static_cast<long long>(totals.rows_emitted), static_cast<long long>(r.merged));
    lines->push_back(text);
    const bool rows_ok = totals.rows_out == totals.rows_emitted - r.merged;
    const double expected = r.area_in - r.overlap_area;
    const double difference = std::abs(r.area_out - expected);
    const double relative = difference / std::max(std::abs(r.area_in), 1e-300);
    char area[400];
    std::snprintf(area, sizeof(area),
                  "eliminate: area out %.10g = area in %.10g - overlap of merged polygons %.3g "
                  "(relative difference %.1e, at most %.0e)",
                  r.area_out, r.area_in, r.overlap_area, r.area_in == 0 ? 0.0 : relative,
                  kAreaTolerance);
    lines->push_back(area);
    const bool area_ok = r.area_in == 0 ? difference == 0 : relative <= kAreaTolerance;
    if (!rows_ok || !area_ok) {
      return Status::Internal(std::string("eliminate: invariant failed: ") +
                              (rows_ok ? area : text));
    }
    return Status::OK();
  }

  // For the workers.
  int within_column() const { return within_column_; }
  Status Hold(std::int64_t bytes) {
    const std::int64_t held = held_bytes_.fetch_add(bytes) + bytes;
    if (held > memory_bytes_) {
      return Status::NotImplemented(
          "eliminate: the features need more than the operation's share of --memory (" +
          FormatSize(memory_bytes_) + "); spilling is not built yet (issue 20): raise --memory");
    }
    return Status::OK();
  }

 private:
  Status MeasureBorders(OpContext& ctx, ContextPool& pool, const std::vector<Feature>& features,
                        const std::vector<std::int64_t>& small, Regions* regions);

  EliminateOptions options_;
  EliminateReport* report_;
  int within_column_ = -1;
  std::optional<geo::Crs> from_, to_;  // set when areas are measured in another CRS
  std::vector<FieldDef> out_fields_;
  std::int64_t memory_bytes_ = 0;
  int workers_ = 1;
  std::atomic<std::int64_t> held_bytes_{0};
  std::atomic<std::int64_t> snap_retries_{0};
  std::mutex mu_;  // guards made_
  std::vector<EliminateWorker*> made_;
};

Status EliminateWorker::Measure(std::span<const std::uint8_t> bytes, Feature* f) {
  GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(*geo_, bytes));
  GEOLAKE_ASSIGN_OR_RETURN(bool empty_in, g.IsEmpty());
  if (empty_in) {
    f->wkb.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return Status::OK();
  }
  GEOLAKE_ASSIGN_OR_RETURN(bool polygonal, geo::IsPolygonal(g));
  if (!polygonal) {
    GEOLAKE_ASSIGN_OR_RETURN(std::string type, g.TypeName());
    return Status::GeometryError("eliminate: a " + type +
                                 " is not polygonal (eliminate merges polygons)");
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed, g.RepairIfInvalid(bytes));
  const geo::Geometry& valid = fixed ? *fixed : g;
  if (fixed) {
    ++repaired;
    GEOLAKE_ASSIGN_OR_RETURN(f->wkb, valid.ToWkb());
  } else {
    f->wkb.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  GEOLAKE_ASSIGN_OR_RETURN(bool empty, valid.IsEmpty());
  if (empty) return Status::OK();  // collapsed by the repair: passed through, empty
  GEOLAKE_ASSIGN_OR_RETURN(f->plain_area, valid.Area());
  if (transformer_) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry measured, transformer_->Transform(valid));
    GEOLAKE_ASSIGN_OR_RETURN(f->area, measured.Area());
    GEOLAKE_ASSIGN_OR_RETURN(f->box, measured.Bounds());
    GEOLAKE_ASSIGN_OR_RETURN(f->measure_wkb, measured.ToWkb());
  } else {
    f->area = f->plain_area;
    GEOLAKE_ASSIGN_OR_RETURN(f->box, valid.Bounds());
  }
  if (!std::isfinite(f->area) || !std::isfinite(f->plain_area) || !std::isfinite(f->box.xmin) ||
      !std::isfinite(f->box.ymin) || !std::isfinite(f->box.xmax) || !std::isfinite(f->box.ymax)) {
    return Status::GeometryError("eliminate: the polygon has a coordinate that is not finite");
  }
  f->polygon = true;
  return Status::OK();
}

Status EliminateWorker::Process(const InputUnit& unit, const FeatureBatch& in, OpOutput* out) {
  if (first_batch == std::chrono::steady_clock::time_point::max()) {
    first_batch = std::chrono::steady_clock::now();
  }
  const auto batch = static_cast<std::int64_t>(batches.size());
  std::int64_t kept = 0;
  std::int64_t held = 0;
  const int within = op_->within_column();
  for (std::int64_t r = 0; r < in.num_rows(); ++r) {
    const auto row = static_cast<std::size_t>(r);
    Feature f;
    f.unit = unit.ordinal;
    f.index = in.feature_index[row];
    f.batch = batch;
    f.row = static_cast<std::uint32_t>(row);
    if (in.geometry_valid[row] != 0) {
      f.has_geometry = true;
      Status st = Measure(in.GeometryAt(row), &f);
      if (!st.ok()) {
        if (st.code() != ErrorCode::kGeometryError) return st;
        GEOLAKE_RETURN_NOT_OK(out->FeatureError(in, r, st));
        continue;
      }
    }
    if (within >= 0) f.within = WithinKey(in.columns[static_cast<std::size_t>(within)], row);
    held += kFeatureOverheadBytes +
            static_cast<std::int64_t>(f.wkb.size() + f.measure_wkb.size() + f.within.size());
    features.push_back(std::move(f));
    ++kept;
    out->Emitted();
  }
  if (kept > 0) {
    batches.push_back(in.columns);
    for (const Column& c : in.columns) held += ColumnBytes(c);
  }
  return held > 0 ? op_->Hold(held) : Status::OK();
}

Status EliminateOperation::MeasureBorders(OpContext& ctx, ContextPool& pool,
                                          const std::vector<Feature>& features,
                                          const std::vector<std::int64_t>& small,
                                          Regions* regions) {
  std::vector<geo::StrTree::Item> items;
  std::vector<std::uint8_t> is_small(features.size(), 0);
  for (const std::int64_t s : small) is_small[static_cast<std::size_t>(s)] = 1;
  for (std::size_t i = 0; i < features.size(); ++i) {
    if (features[i].polygon) items.push_back({features[i].box, static_cast<std::int64_t>(i)});
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::StrTree tree, geo::StrTree::Build(std::move(items)));
  // Each small polygon against every polygon whose box meets its own: a pair of two small
  // ones is measured once, by the one with the smaller row id.
  const auto n = static_cast<std::int64_t>(small.size());
  const std::int64_t chunks = (n + kPairChunk - 1) / kPairChunk;
  struct Border {
    std::int64_t a, b;
    double length;
  };
  std::vector<std::vector<Border>> found(static_cast<std::size_t>(chunks));
  std::atomic<std::int64_t> candidates{0};
  auto measured = [&](const Feature& f) -> std::string_view {
    return f.measure_wkb.empty() ? std::string_view(f.wkb) : std::string_view(f.measure_wkb);
  };
  GEOLAKE_RETURN_NOT_OK(ctx.env->executor->ParallelFor(
      chunks,
      [&](std::int64_t c) -> Status {
        GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo, pool.Acquire());
        geo->set_stop_token(ctx.stop);
        Status st = [&]() -> Status {
          std::vector<std::int64_t> near;
          for (std::int64_t k = c * kPairChunk; k < std::min(n, (c + 1) * kPairChunk); ++k) {
            const std::int64_t i = small[static_cast<std::size_t>(k)];
            const Feature& a = features[static_cast<std::size_t>(i)];
            near.clear();
            tree.Query(a.box, [&](std::int64_t j) {
              if (j != i && (is_small[static_cast<std::size_t>(j)] == 0 || j > i)) {
                near.push_back(j);
              }
            });
            if (near.empty()) continue;
            std::sort(near.begin(), near.end());
            candidates.fetch_add(static_cast<std::int64_t>(near.size()));
            GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry ga, geo::Geometry::FromWkb(*geo, measured(a)));
            GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry boundary, geo::Boundary(ga));
            for (const std::int64_t j : near) {
              GEOLAKE_ASSIGN_OR_RETURN(
                  geo::Geometry gb,
                  geo::Geometry::FromWkb(*geo, measured(features[static_cast<std::size_t>(j)])));
              GEOLAKE_ASSIGN_OR_RETURN(double length, geo::SharedBoundaryLength(ga, gb, &boundary));
              if (length > 0) found[static_cast<std::size_t>(c)].push_back({i, j, length});
            }
          }
          return Status::OK();
        }();
        pool.Release(std::move(geo));
        return st;
      },
      ctx.stop));
  report_->candidates = candidates.load();
  for (const std::vector<Border>& chunk : found) {
    for (const Border& b : chunk) {
      regions->AddBorder(b.a, b.b, b.length);
      ++report_->neighbour_pairs;
    }
  }
  return Status::OK();
}

Status EliminateOperation::Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) {
  // Gather the workers' rows into input order; a row's id is its position.
  std::vector<Feature> features;
  std::vector<std::vector<Column>> batches;
  auto read_end = std::chrono::steady_clock::now();
  auto read_start = read_end;
  for (EliminateWorker* w : made_) {
    const auto offset = static_cast<std::int64_t>(batches.size());
    for (std::vector<Column>& b : w->batches) batches.push_back(std::move(b));
    for (Feature& f : w->features) {
      f.batch += offset;
      features.push_back(std::move(f));
    }
    std::vector<Feature>().swap(w->features);
    report_->repaired += w->repaired;
    read_start = std::min(read_start, w->first_batch);
  }
  report_->read_seconds = std::chrono::duration<double>(read_end - read_start).count();
  std::sort(features.begin(), features.end(), [](const Feature& a, const Feature& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.index < b.index;
  });
  const auto n = static_cast<std::int64_t>(features.size());
  std::vector<double> areas(features.size(), 0);
  std::vector<std::string> within;
  std::vector<std::int64_t> small;
  for (std::int64_t i = 0; i < n; ++i) {
    const Feature& f = features[static_cast<std::size_t>(i)];
    if (!f.polygon) {
      ++report_->without;
      continue;
    }
    ++report_->features;
    report_->area_in += f.plain_area;
    // Rows without a polygon keep area 0 but never enter the graph: no borders, not small.
    areas[static_cast<std::size_t>(i)] = f.area;
    if (f.area < options_.area_below) small.push_back(i);
  }
  if (within_column_ >= 0) {
    within.reserve(features.size());
    for (const Feature& f : features) within.push_back(f.within);
  }
  report_->small = static_cast<std::int64_t>(small.size());

  Regions regions(std::move(areas), within_column_ >= 0 ? &within : nullptr, options_.area_below,
                  options_.merge_into);
  ContextPool pool(ctx.stop);
  auto started = std::chrono::steady_clock::now();
  GEOLAKE_RETURN_NOT_OK(MeasureBorders(ctx, pool, features, small, &regions));
  report_->pairs_seconds = SecondsSince(started);

  started = std::chrono::steady_clock::now();
  regions.Run(small, options_.max_iterations);
  report_->rounds = regions.rounds();
  report_->capped = regions.capped();
  // Members of each absorber, in row order (the absorber first).
  std::map<std::int64_t, std::vector<std::int64_t>> groups;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!features[static_cast<std::size_t>(i)].polygon) continue;
    const std::int64_t owner = regions.Owner(i);
    if (owner != i) {
      ++report_->merged;
      std::vector<std::int64_t>& members = groups[owner];
      if (members.empty()) members.push_back(owner);
      members.push_back(i);
    }
  }
  for (const std::int64_t s : small) {
    if (!regions.alive(s) || !regions.Small(s)) continue;
    if (!regions.has_neighbours(s)) {
      ++report_->islands;
      if (report_->island_rows.size() < kMaxIslandRows) report_->island_rows.push_back(s);
    } else if (!regions.HasEligible(s)) {
      ++report_->blocked;
    }
  }
  report_->absorbers = static_cast<std::int64_t>(groups.size());
  report_->graph_seconds = SecondsSince(started);

  // The unions, one task per absorber.
  struct Union {
    std::int64_t owner;
    const std::vector<std::int64_t>* members;
    std::string wkb;
    double area = 0;
    double members_area = 0;
  };
  std::vector<Union> unions;
  unions.reserve(groups.size());
  for (const auto& [owner, members] : groups) unions.push_back({owner, &members, {}, 0, 0});
  BusyClock clock;
  started = std::chrono::steady_clock::now();
  GEOLAKE_RETURN_NOT_OK(ctx.env->executor->ParallelFor(
      static_cast<std::int64_t>(unions.size()),
      [&](std::int64_t k) -> Status {
        const auto task_started = std::chrono::steady_clock::now();
        Union& u = unions[static_cast<std::size_t>(k)];
        GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> task_geo, pool.Acquire());
        task_geo->set_stop_token(ctx.stop);
        Status st = [&]() -> Status {
          std::vector<std::string_view> wkbs;
          for (const std::int64_t m : *u.members) {
            const Feature& f = features[static_cast<std::size_t>(m)];
            wkbs.push_back(f.wkb);
            u.members_area += f.plain_area;
          }
          GEOLAKE_ASSIGN_OR_RETURN(
              geo::Geometry g,
              geo::Geometry::UnionWkbsSnapping(*task_geo, wkbs, 0, &snap_retries_)
                  .WithContext(
                      "eliminate: the union of an absorbing feature and its absorbed ones"));
          GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed, g.RepairIfInvalid());
          if (fixed) g = std::move(*fixed);
          GEOLAKE_ASSIGN_OR_RETURN(u.area, g.Area());
          GEOLAKE_ASSIGN_OR_RETURN(u.wkb, g.ToWkb());
          return Status::OK();
        }();
        pool.Release(std::move(task_geo));
        clock.Add(std::chrono::steady_clock::now() - task_started);
        return st;
      },
      ctx.stop));
  report_->union_seconds = SecondsSince(started);
  report_->worker_busy_seconds = clock.Seconds(workers_);
  report_->snap_retries = snap_retries_.load();
  if (ctx.metrics != nullptr) {
    StageMetrics* stage = ctx.metrics->stage("union");
    for (std::size_t w = 0; w < report_->worker_busy_seconds.size(); ++w) {
      stage->counter("busy_ms_worker_" + std::to_string(w))
          ->Add(static_cast<std::int64_t>(report_->worker_busy_seconds[w] * 1000));
    }
  }
  std::map<std::int64_t, const Union*> union_of;
  for (const Union& u : unions) {
    union_of[u.owner] = &u;
    report_->overlap_area += u.members_area - u.area;
  }

  // The surviving rows, in input order: their own attributes, their (unioned) geometry.
  FeatureBatch& rows = out->rows;
  rows.fields = out_fields_;
  rows.columns.assign(out_fields_.size(), {});
  for (std::size_t c = 0; c < out_fields_.size(); ++c) rows.columns[c].type = out_fields_[c].type;
  for (std::int64_t i = 0; i < n; ++i) {
    const Feature& f = features[static_cast<std::size_t>(i)];
    if (f.polygon && regions.Owner(i) != i) continue;
    const std::vector<Column>& from = batches[static_cast<std::size_t>(f.batch)];
    const std::uint32_t one[1] = {f.row};
    for (std::size_t c = 0; c < rows.columns.size(); ++c) {
      pipeline::AppendRows(&from[c], one, &rows.columns[c]);
    }
    std::string_view wkb = f.wkb;
    if (auto it = union_of.find(i); it != union_of.end()) {
      wkb = it->second->wkb;
      report_->area_out += it->second->area;
    } else if (f.polygon) {
      report_->area_out += f.plain_area;
    }
    rows.wkb += wkb;
    rows.wkb_offsets.push_back(static_cast<std::int64_t>(rows.wkb.size()));
    rows.geometry_valid.push_back(f.has_geometry ? 1 : 0);
    rows.feature_index.push_back(i);
  }
  (void)geo;
  return Status::OK();
}

}  // namespace

Result<MergeInto> ParseMergeInto(std::string_view text) {
  if (text == "longest-border") return MergeInto::kLongestBorder;
  if (text == "largest-area") return MergeInto::kLargestArea;
  return Status::InvalidArgument("--merge-into '" + std::string(text) +
                                 "': expected longest-border or largest-area");
}

std::string_view MergeIntoName(MergeInto merge_into) {
  return merge_into == MergeInto::kLargestArea ? "largest-area" : "longest-border";
}

Status RunEliminate(const OpEnv& env, const InputSpec& input, const EliminateOptions& options,
                    const OutputSpec& output, const RunnerOptions& runner_options,
                    RunSummary* summary, EliminateReport* report) {
  *summary = RunSummary{};
  EliminateReport local_report;
  if (report == nullptr) report = &local_report;
  *report = EliminateReport{};
  if (!(options.area_below > 0) || !std::isfinite(options.area_below)) {
    return Status::InvalidArgument("eliminate: --area-below must be a finite number > 0");
  }
  if (options.max_iterations < 0) {
    return Status::InvalidArgument("eliminate: --max-iterations must be >= 0 (0: no cap)");
  }
  EliminateOperation op(options, report);
  return RunOperation(env, op, input, output, runner_options, summary);
}

std::string FormatEliminateReport(const EliminateReport& r) {
  std::string busy;
  for (const double s : r.worker_busy_seconds) {
    char one[32];
    std::snprintf(one, sizeof(one), "%s%.2f s", busy.empty() ? "" : ", ", s);
    busy += one;
  }
  char text[1024];
  std::snprintf(text, sizeof(text),
                "eliminate: %lld features (%lld made valid, %lld rows without a polygon passed "
                "through), %lld below the threshold; %lld merged into %lld neighbours in %lld "
                "rounds; kept below: %lld islands, %lld blocked by --within, %lld left by "
                "--max-iterations\n"
                "eliminate: %lld candidate pairs, %lld share a border; read %.2f s, borders "
                "%.2f s, rounds %.3f s, unions %.2f s (%lld snapped retries; busy per worker: "
                "%s)\n",
                static_cast<long long>(r.features), static_cast<long long>(r.repaired),
                static_cast<long long>(r.without), static_cast<long long>(r.small),
                static_cast<long long>(r.merged), static_cast<long long>(r.absorbers),
                static_cast<long long>(r.rounds), static_cast<long long>(r.islands),
                static_cast<long long>(r.blocked), static_cast<long long>(r.capped),
                static_cast<long long>(r.candidates), static_cast<long long>(r.neighbour_pairs),
                r.read_seconds, r.pairs_seconds, r.graph_seconds, r.union_seconds,
                static_cast<long long>(r.snap_retries), busy.c_str());
  std::string all = text;
  if (!r.island_rows.empty()) {
    all += "eliminate: island rows (0-based, input order):";
    for (std::size_t i = 0; i < r.island_rows.size() && i < 20; ++i) {
      all += " " + std::to_string(r.island_rows[i]);
    }
    if (r.islands > 20) all += " ...";
    all += "\n";
  }
  if (r.overlap_area > kAreaTolerance * std::max(r.area_in, 1e-300)) {
    char overlap[200];
    std::snprintf(overlap, sizeof(overlap),
                  "eliminate: the input is not a coverage: merged polygons overlapped by %.6g "
                  "(counted once in the output)\n",
                  r.overlap_area);
    all += overlap;
  }
  return all;
}

}  // namespace geolake::ops
