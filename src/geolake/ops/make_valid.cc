// make-valid on the ops runner: a PerFeatureOperation (docs/ops.md "Adding an operation") whose
// Apply checks validity with GEOS, passes valid WKB through untouched, and repairs the rest with
// geo::MakeValidWith (GEOS's make-valid of the whole, or ring by ring for huge polygons, whose
// ring groups run on the engine's executor).
#include "geolake/ops/make_valid.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "geolake/geo/geos.h"
#include "geolake/geo/validity_fast_path.h"

namespace geolake::ops {
namespace {

class MakeValidOperation final : public PerFeatureOperation {
 public:
  MakeValidOperation(const MakeValidOptions& options, MakeValidReport* report)
      : options_(options), report_(report) {}

  std::string name() const override { return "make-valid"; }
  std::string parameters() const override {
    return fmt::format(R"({{"method":"{}","keep_collapsed":{}}})",
                       geo::MakeValidMethodName(options_.method),
                       options_.keep_collapsed ? "true" : "false");
  }

  Status Prepare(OpContext& ctx) override {
    executor_ = ctx.env->executor;
    stop_ = ctx.stop;
    return Status::OK();
  }

  Result<std::optional<std::string>> Apply(geo::GeoContext& geo, std::span<const std::uint8_t> wkb,
                                           std::string* drop_reason) const override {
    // A polygon geo::ProvablyValidPolygon proves valid never reaches GEOS (most polygons of
    // real data; GEOS's parse and validity check were most of the time spent on them).
    if (geo::ProvablyValidPolygon(wkb)) {
      rows_valid_.fetch_add(1, std::memory_order_relaxed);
      return std::optional<std::string>(
          std::string(reinterpret_cast<const char*>(wkb.data()), wkb.size()));
    }
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(geo, wkb));
    GEOLAKE_ASSIGN_OR_RETURN(bool valid, g.IsValid());
    if (valid) {
      rows_valid_.fetch_add(1, std::memory_order_relaxed);
      return std::optional<std::string>(
          std::string(reinterpret_cast<const char*>(wkb.data()), wkb.size()));
    }
    GEOLAKE_ASSIGN_OR_RETURN(bool polygonal, geo::IsPolygonal(g));
    geo::MakeValidOptions mv;
    // GEOS's defaults: keepCollapsed, so that the collapsed parts can be counted when a
    // polygonal column drops them (the polygonal part does not depend on it).
    mv.params = {options_.method, true};
    mv.executor = executor_;
    mv.stop = stop_;
    mv.ring_level_min_vertices = options_.ring_level_min_vertices;
    geo::MakeValidStats stats;
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry fixed, geo::MakeValidWith(g, mv, &stats));
    rows_repaired_.fetch_add(1, std::memory_order_relaxed);
    AddStats(stats);
    if (polygonal && !options_.keep_collapsed) {
      std::int64_t dropped = 0;
      GEOLAKE_ASSIGN_OR_RETURN(fixed, geo::PolygonalPart(fixed, &dropped));
      parts_dropped_.fetch_add(dropped, std::memory_order_relaxed);
      GEOLAKE_ASSIGN_OR_RETURN(bool empty, fixed.IsEmpty());
      if (empty) {
        rows_collapsed_.fetch_add(1, std::memory_order_relaxed);
        *drop_reason = std::string(kCollapsedReason);
        return std::optional<std::string>();
      }
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, fixed.ToWkb());
    return std::optional<std::string>(std::move(bytes));
  }

  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override {
    FillReport();
    const MakeValidReport& r = *report_;
    const auto it = totals.rows_dropped.find(kCollapsedReason);
    const std::int64_t dropped_collapsed = it == totals.rows_dropped.end() ? 0 : it->second;
    const std::int64_t without_geometry =
        totals.rows_in - r.rows_valid - r.rows_repaired - totals.rows_rejected;
    lines->push_back(fmt::format(
        "make-valid: rows in {} = valid {} + repaired {} + rejected {} + without a geometry {}; "
        "collapsed {} = dropped as collapsed {}",
        totals.rows_in, r.rows_valid, r.rows_repaired, totals.rows_rejected, without_geometry,
        r.rows_collapsed, dropped_collapsed));
    if (without_geometry < 0 || dropped_collapsed != r.rows_collapsed) {
      return Status::Internal("make-valid invariant failed: " + lines->back());
    }
    return Status::OK();
  }

  void FillReport() const {
    report_->method = std::string(geo::MakeValidMethodName(options_.method));
    report_->keep_collapsed = options_.keep_collapsed;
    report_->rows_valid = rows_valid_.load();
    report_->rows_repaired = rows_repaired_.load();
    report_->rows_collapsed = rows_collapsed_.load();
    report_->parts_dropped = parts_dropped_.load();
    std::lock_guard<std::mutex> lock(stats_mu_);
    report_->rings = stats_;
  }

 private:
  void AddStats(const geo::MakeValidStats& s) const {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.ring_level += s.ring_level;
    stats_.rings += s.rings;
    stats_.rings_kept += s.rings_kept;
    stats_.groups_repaired += s.groups_repaired;
    stats_.rings_repaired += s.rings_repaired;
    stats_.whole_fallbacks += s.whole_fallbacks;
  }

  MakeValidOptions options_;
  MakeValidReport* report_;
  ThreadPool* executor_ = nullptr;
  std::stop_token stop_;
  // Apply is const and runs on every worker: the counters are atomics, the stats under a lock.
  mutable std::atomic<std::int64_t> rows_valid_{0};
  mutable std::atomic<std::int64_t> rows_repaired_{0};
  mutable std::atomic<std::int64_t> rows_collapsed_{0};
  mutable std::atomic<std::int64_t> parts_dropped_{0};
  mutable std::mutex stats_mu_;  // guards stats_
  mutable geo::MakeValidStats stats_;
};

}  // namespace

Status RunMakeValid(const OpEnv& env, const InputSpec& input, const MakeValidOptions& options,
                    const OutputSpec& output, const RunnerOptions& runner_options,
                    RunSummary* summary, MakeValidReport* report) {
  *summary = RunSummary{};
  MakeValidReport local_report;
  if (report == nullptr) report = &local_report;
  *report = MakeValidReport{};
  if (options.ring_level_min_vertices < 0) {
    return Status::InvalidArgument("make-valid: ring-level vertex threshold must be >= 0");
  }
  MakeValidOperation op(options, report);
  Status st = RunOperation(env, op, input, output, runner_options, summary);
  op.FillReport();  // also when the run failed before CheckInvariant
  return st;
}

std::string FormatMakeValidReport(const MakeValidReport& r) {
  std::string text = fmt::format(
      "make-valid ({}{}): {} rows valid (passed through unchanged), {} repaired; {} collapsed "
      "parts dropped, {} rows dropped as collapsed\n",
      r.method, r.keep_collapsed ? ", keep collapsed" : "", r.rows_valid, r.rows_repaired,
      r.parts_dropped, r.rows_collapsed);
  if (r.rings.ring_level > 0) {
    text += fmt::format(
        "make-valid ring by ring: {} geometries, {} rings: {} kept as they were, {} in {} groups "
        "repaired by GEOS; {} fell back to GEOS on the whole\n",
        r.rings.ring_level, r.rings.rings, r.rings.rings_kept, r.rings.rings_repaired,
        r.rings.groups_repaired, r.rings.whole_fallbacks);
  }
  return text;
}

}  // namespace geolake::ops
