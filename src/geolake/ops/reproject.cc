#include "geolake/ops/reproject.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/proj.h"
#include "geolake/layout/table_layout.h"
#include "geolake/table/transaction.h"

namespace geolake::ops {
namespace {

using geo::FlatGeometry;
using geo::GeometryPart;
using geo::GeometryType;

// The label the project writes a CRS with (Input::crs, geolake.crs): the authority code when
// PROJ knows one, else PROJJSON.
std::string CrsLabel(const geo::Crs& crs) { return crs.id().value_or(crs.projjson()); }

bool SameCrs(const geo::Crs& a, const geo::Crs& b) {
  if (a.id() && b.id()) return *a.id() == *b.id();
  return a.projjson() == b.projjson();
}

// Append the densified run of coordinates [begin, begin + count) of `in` (stride `s`) to `out`.
void DensifyRun(const std::vector<double>& in, std::size_t begin, std::size_t count, int s,
                double d, std::vector<double>* out) {
  const auto stride = static_cast<std::size_t>(s);
  for (std::size_t i = 0; i < count; ++i) {
    const double* p0 = in.data() + (begin + i) * stride;
    out->insert(out->end(), p0, p0 + stride);
    if (i + 1 == count) break;
    const double* p1 = p0 + stride;
    const double len = std::hypot(p1[0] - p0[0], p1[1] - p0[1]);
    if (!(len > d)) continue;  // also NaN
    // GEOS Densifier::densifyPoints (3.11): ceil(len / d) parts of len / parts each.
    const auto parts = static_cast<std::int64_t>(std::ceil(len / d));
    const double part = len / static_cast<double>(parts);
    for (std::int64_t j = 1; j < parts; ++j) {
      const double f = (static_cast<double>(j) * part) / len;
      for (std::size_t k = 0; k < stride; ++k) out->push_back(p0[k] + f * (p1[k] - p0[k]));
    }
  }
}

// Coordinates a run of `count` would have after densifying.
std::int64_t DensifiedCount(const std::vector<double>& in, std::size_t begin, std::size_t count,
                            int s, double d) {
  const auto stride = static_cast<std::size_t>(s);
  std::int64_t n = static_cast<std::int64_t>(count);
  for (std::size_t i = 0; i + 1 < count; ++i) {
    const double* p0 = in.data() + (begin + i) * stride;
    const double* p1 = p0 + stride;
    const double len = std::hypot(p1[0] - p0[0], p1[1] - p0[1]);
    if (!(len > d)) continue;
    const double parts = std::ceil(len / d);
    if (parts > 1e15) return std::numeric_limits<std::int64_t>::max();
    n += static_cast<std::int64_t>(parts) - 1;
  }
  return n;
}

// The index ranges [begin, end) of coordinates to transform: all of them but the NaN
// coordinate of each POINT EMPTY (geo/wkb.h stores it so), which stays NaN.
std::vector<std::pair<std::size_t, std::size_t>> TransformRanges(const FlatGeometry& g) {
  std::vector<std::size_t> holes;
  const auto stride = static_cast<std::size_t>(g.stride());
  for (const GeometryPart& part : g.parts) {
    if (part.type == GeometryType::kPoint && std::isnan(g.coords[part.offset * stride])) {
      holes.push_back(part.offset);
    }
  }
  std::sort(holes.begin(), holes.end());
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::size_t begin = 0;
  for (const std::size_t h : holes) {
    if (h > begin) ranges.emplace_back(begin, h);
    begin = h + 1;
  }
  if (g.num_coordinates() > begin) ranges.emplace_back(begin, g.num_coordinates());
  return ranges;
}

// A PROJ transformer on a GeoContext of its own, used by one thread at a time.
struct Lane {
  std::unique_ptr<geo::GeoContext> geo;
  std::optional<geo::Transformer> transformer;
};

class ReprojectOperation final : public PerFeatureOperation {
 public:
  ReprojectOperation(ReprojectOptions options, OutputSpec output, ReprojectReport* report)
      : options_(std::move(options)), output_(std::move(output)), report_(report) {}

  std::string name() const override { return "reproject"; }
  std::string parameters() const override {
    nlohmann::json j;
    j["to"] = target_label_;
    j["densify"] = options_.densify;
    return j.dump();
  }

  Result<OpSchema> Bind(OpContext& ctx, const Input& main) override {
    executor_ = ctx.env->executor;
    if (main.crs().empty()) {
      return Status::InvalidArgument("reproject: " + main.label() +
                                     " has no CRS; there is nothing to reproject from");
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo, geo::GeoContext::Make());
    Result<geo::Crs> from = geo::Crs::Make(*geo, main.crs());
    if (!from.ok()) return from.status().WithContext("reproject: the CRS of " + main.label());
    Result<geo::Crs> to = geo::Crs::Make(*geo, options_.to);
    if (!to.ok()) return to.status().WithContext("reproject --to '" + options_.to + "'");
    from_ = std::move(*from);
    to_ = std::move(*to);
    target_label_ = CrsLabel(*to_);
    // Fail here, before any output exists, when PROJ has no operation between them.
    GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer probe, geo::Transformer::Make(*geo, *from_, *to_));
    identity_ = probe.is_identity();
    report_->from = main.crs();
    report_->to = target_label_;
    report_->identity = identity_;
    if (!output_.table.empty() && ctx.env->catalog != nullptr) {
      GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id,
                               table::TableIdentifier::Parse(output_.table));
      Result<table::Table> existing = table::LoadTable(*ctx.env->catalog, *ctx.env->io, id);
      if (existing.ok()) {
        GEOLAKE_ASSIGN_OR_RETURN(layout::TableLayout layout,
                                 layout::ReadTableLayout(existing->metadata));
        Result<geo::Crs> table_crs = geo::Crs::Make(*geo, layout.crs);
        if (!table_crs.ok() || !SameCrs(*table_crs, *to_)) {
          return Status::InvalidArgument("reproject: output table '" + output_.table +
                                         "' has CRS " + layout.crs + ", not " + target_label_);
        }
      }
    }
    return OpSchema{main.fields(), target_label_};
  }

  Result<std::optional<std::string>> Apply(geo::GeoContext& geo, std::span<const std::uint8_t> wkb,
                                           std::string* /*drop_reason*/) const override {
    if (identity_ && options_.densify <= 0) {
      features_.fetch_add(1, std::memory_order_relaxed);
      return std::optional<std::string>(
          std::string(reinterpret_cast<const char*>(wkb.data()), wkb.size()));
    }
    Result<FlatGeometry> parsed = geo::ParseWkb(wkb);
    if (!parsed.ok()) return Status::GeometryError(parsed.status().message());
    FlatGeometry g = std::move(*parsed);
    if (options_.densify > 0) {
      GEOLAKE_ASSIGN_OR_RETURN(std::int64_t added, DensifyFlat(&g, options_.densify));
      densified_.fetch_add(added, std::memory_order_relaxed);
    }
    if (!identity_) GEOLAKE_RETURN_NOT_OK(TransformCoordinates(geo, wkb, &g));
    features_.fetch_add(1, std::memory_order_relaxed);
    coordinates_.fetch_add(static_cast<std::int64_t>(g.num_coordinates()),
                           std::memory_order_relaxed);
    return std::optional<std::string>(geo::WriteWkb(g));
  }

  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override {
    const std::int64_t features = features_.load();
    const std::int64_t failed = failed_.load();
    lines->push_back("reproject: " + std::to_string(features) + " geometries transformed, " +
                     std::to_string(failed) + " did not transform (rejected), " +
                     std::to_string(totals.rows_emitted - features) +
                     " rows without a geometry kept");
    if (features > totals.rows_emitted || failed > totals.rows_rejected) {
      return Status::Internal("reproject: more geometries transformed or failed than rows");
    }
    return Status::OK();
  }

  // The counters into the report (after the run, also a failed one).
  void FillReport() const {
    report_->features = features_.load();
    report_->coordinates = coordinates_.load();
    report_->densified = densified_.load();
    report_->failed = failed_.load();
    report_->pieced_features = pieced_features_.load();
    report_->pieces = pieces_.load();
    report_->max_piece_threads = max_piece_threads_.load();
  }

 private:
  Result<std::unique_ptr<Lane>> AcquireLane(const std::stop_token& stop) const {
    std::unique_ptr<Lane> lane;
    {
      std::lock_guard lock(lanes_mu_);
      if (!lanes_.empty()) {
        lane = std::move(lanes_.back());
        lanes_.pop_back();
      }
    }
    if (lane == nullptr) {
      lane = std::make_unique<Lane>();
      GEOLAKE_ASSIGN_OR_RETURN(lane->geo, geo::GeoContext::Make(stop));
      GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t,
                               geo::Transformer::Make(*lane->geo, *from_, *to_));
      lane->transformer.emplace(std::move(t));
    }
    lane->geo->set_stop_token(stop);
    return lane;
  }
  void ReleaseLane(std::unique_ptr<Lane> lane) const {
    std::lock_guard lock(lanes_mu_);
    lanes_.push_back(std::move(lane));
  }

  // Transform the coordinates [begin, end) of `g` that `ranges` covers; on a coordinate that
  // does not transform, *bad is its index and the status PROJ's.
  Status TransformSpan(const std::stop_token& stop, FlatGeometry* g,
                       const std::vector<std::pair<std::size_t, std::size_t>>& ranges,
                       std::size_t begin, std::size_t end, std::size_t* bad) const {
    GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<Lane> lane, AcquireLane(stop));
    const auto stride = static_cast<std::size_t>(g->stride());
    Status st;
    for (const auto& [rb, re] : ranges) {
      const std::size_t b = std::max(rb, begin);
      const std::size_t e = std::min(re, end);
      if (b >= e) continue;
      std::size_t first_bad = 0;
      st = lane->transformer->TransformInterleaved(g->coords.data() + b * stride, e - b, stride,
                                                   &first_bad);
      if (!st.ok()) {
        *bad = b + first_bad;
        break;
      }
    }
    ReleaseLane(std::move(lane));
    return st;
  }

  Status TransformCoordinates(geo::GeoContext& geo, std::span<const std::uint8_t> wkb,
                              FlatGeometry* g) const {
    const auto ranges = TransformRanges(*g);
    const std::size_t n = g->num_coordinates();
    const auto piece = static_cast<std::size_t>(options_.piece_coordinates);
    std::size_t bad = n;
    Status st;
    if (n > piece && executor_ != nullptr && executor_->size() > 1) {
      const std::size_t count = (n + piece - 1) / piece;
      std::mutex mu;
      std::set<std::thread::id> threads;
      st = executor_->ParallelFor(
          static_cast<std::int64_t>(count),
          [&](std::int64_t i) -> Status {
            const std::size_t b = static_cast<std::size_t>(i) * piece;
            std::size_t piece_bad = n;
            Status s =
                TransformSpan(geo.stop_token(), g, ranges, b, std::min(n, b + piece), &piece_bad);
            std::lock_guard lock(mu);
            threads.insert(std::this_thread::get_id());
            bad = std::min(bad, piece_bad);
            return s;
          },
          geo.stop_token());
      pieced_features_.fetch_add(1, std::memory_order_relaxed);
      pieces_.fetch_add(static_cast<std::int64_t>(count), std::memory_order_relaxed);
      const int used = static_cast<int>(threads.size());
      int seen = max_piece_threads_.load();
      while (used > seen && !max_piece_threads_.compare_exchange_weak(seen, used)) {
      }
    } else {
      st = TransformSpan(geo.stop_token(), g, ranges, 0, n, &bad);
    }
    if (st.ok() || st.code() != ErrorCode::kGeometryError || bad >= n) return st;
    failed_.fetch_add(1, std::memory_order_relaxed);
    // Name the coordinate as it was before transforming: parse (and densify) again.
    std::string where = "coordinate " + std::to_string(bad);
    Result<FlatGeometry> original = geo::ParseWkb(wkb);
    if (original.ok() &&
        (options_.densify <= 0 || DensifyFlat(&*original, options_.densify).ok()) &&
        bad < original->num_coordinates()) {
      const auto c = original->coordinate(bad);
      char text[96];
      std::snprintf(text, sizeof(text), " (%.17g %.17g)", c[0], c[1]);
      where += text;
    }
    std::string detail;
    const std::string message = st.message();
    if (const std::size_t p = message.find("has no finite result"); p != std::string::npos) {
      detail = message.substr(p + std::string_view("has no finite result").size());
    }
    return Status::GeometryError(where + " does not transform " + CrsLabel(*from_) + " -> " +
                                 target_label_ + detail);
  }

  ReprojectOptions options_;
  OutputSpec output_;
  ReprojectReport* report_;
  ThreadPool* executor_ = nullptr;
  std::optional<geo::Crs> from_;
  std::optional<geo::Crs> to_;
  std::string target_label_;
  bool identity_ = false;

  mutable std::mutex lanes_mu_;
  mutable std::vector<std::unique_ptr<Lane>> lanes_;
  mutable std::atomic<std::int64_t> features_{0};
  mutable std::atomic<std::int64_t> coordinates_{0};
  mutable std::atomic<std::int64_t> densified_{0};
  mutable std::atomic<std::int64_t> failed_{0};
  mutable std::atomic<std::int64_t> pieced_features_{0};
  mutable std::atomic<std::int64_t> pieces_{0};
  mutable std::atomic<int> max_piece_threads_{0};
};

}  // namespace

Result<std::int64_t> DensifyFlat(FlatGeometry* g, double max_segment,
                                 std::int64_t max_coordinates) {
  if (!(max_segment > 0) || !std::isfinite(max_segment)) {
    return Status::InvalidArgument("densify: the segment length must be a positive number");
  }
  const int stride = g->stride();
  // Count first, so that a tiny D on a long edge is refused before it eats the memory.
  std::int64_t total = 0;
  for (const GeometryPart& part : g->parts) {
    if (part.type == GeometryType::kLineString) {
      total += DensifiedCount(g->coords, part.offset, part.count, stride, max_segment);
    } else if (part.type == GeometryType::kPolygon) {
      for (std::uint32_t r = 0; r < part.count; ++r) {
        const geo::GeometryRing& ring = g->rings[part.offset + r];
        total += DensifiedCount(g->coords, ring.offset, ring.count, stride, max_segment);
      }
    } else if (part.type == GeometryType::kPoint) {
      total += 1;
    }
    if (total > max_coordinates || total < 0) {
      return Status::InvalidArgument("densify " + std::to_string(max_segment) +
                                     ": a feature would have more than " +
                                     std::to_string(max_coordinates) + " coordinates");
    }
  }
  const auto old_count = static_cast<std::int64_t>(g->num_coordinates());
  if (total == old_count) return 0;
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(total) * static_cast<std::size_t>(stride));
  const auto s = static_cast<std::size_t>(stride);
  for (GeometryPart& part : g->parts) {
    if (part.type == GeometryType::kPoint) {
      const std::size_t at = out.size() / s;
      const double* p = g->coords.data() + part.offset * s;
      out.insert(out.end(), p, p + s);
      part.offset = static_cast<std::uint32_t>(at);
    } else if (part.type == GeometryType::kLineString) {
      const std::size_t at = out.size() / s;
      DensifyRun(g->coords, part.offset, part.count, stride, max_segment, &out);
      part.offset = static_cast<std::uint32_t>(at);
      part.count = static_cast<std::uint32_t>(out.size() / s - at);
    } else if (part.type == GeometryType::kPolygon) {
      for (std::uint32_t r = 0; r < part.count; ++r) {
        geo::GeometryRing& ring = g->rings[part.offset + r];
        const std::size_t at = out.size() / s;
        DensifyRun(g->coords, ring.offset, ring.count, stride, max_segment, &out);
        ring.offset = static_cast<std::uint32_t>(at);
        ring.count = static_cast<std::uint32_t>(out.size() / s - at);
      }
    }
  }
  g->coords = std::move(out);
  return total - old_count;
}

Status RunReproject(const OpEnv& env, const InputSpec& input, const ReprojectOptions& options,
                    const OutputSpec& output, const RunnerOptions& runner_options,
                    RunSummary* summary, ReprojectReport* report) {
  *summary = RunSummary{};
  ReprojectReport local_report;
  if (report == nullptr) report = &local_report;
  *report = ReprojectReport{};
  if (options.to.empty()) return Status::InvalidArgument("reproject: --to is required");
  if (!(options.densify >= 0) || !std::isfinite(options.densify)) {
    return Status::InvalidArgument("reproject: --densify must be a finite number >= 0");
  }
  if (options.piece_coordinates < 1) {
    return Status::InvalidArgument("reproject: piece coordinates must be >= 1");
  }
  ReprojectOperation op(options, output, report);
  Status st = RunOperation(env, op, input, output, runner_options, summary);
  op.FillReport();
  return st;
}

std::string FormatReprojectReport(const ReprojectReport& r) {
  char text[512];
  std::snprintf(text, sizeof(text),
                "reproject %s -> %s%s: %lld features, %lld coordinates (%lld added by "
                "--densify), %lld did not transform; %lld features in %lld pieces (up to %d "
                "threads on one feature)\n",
                r.from.size() > 64 ? "(PROJJSON)" : r.from.c_str(),
                r.to.size() > 64 ? "(PROJJSON)" : r.to.c_str(),
                r.identity ? " (equivalent CRSs: coordinates unchanged)" : "",
                static_cast<long long>(r.features), static_cast<long long>(r.coordinates),
                static_cast<long long>(r.densified), static_cast<long long>(r.failed),
                static_cast<long long>(r.pieced_features), static_cast<long long>(r.pieces),
                r.max_piece_threads);
  return text;
}

}  // namespace geolake::ops
