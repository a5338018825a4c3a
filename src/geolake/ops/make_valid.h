/// \file
/// Make-valid (`geolake make-valid INPUT [--method linework|structure] [--keep-collapsed] -o
/// OUT`), a per-feature operation on the ops runner (ops/runner.h): every invalid geometry is
/// repaired with GEOS's make-valid (geo/make_valid.h), every valid one passes through byte for
/// byte (its WKB is not even re-encoded), attributes are kept.
///
/// - Method and GEOS parameters: GEOS's and shapely's defaults, linework with keepCollapsed
///   (GEOSMakeValid_r, GEOS capi/geos_ts_c.cpp; docs/ops.md). `structure` is GEOS's
///   GeometryFixer. The repair equals GEOS make-valid of the whole geometry (same point
///   set, valid), also for huge polygons, which geo::MakeValidWith repairs ring by ring.
/// - Output types: a polygonal input (Polygon, MultiPolygon) stays polygonal: the lines and
///   points GEOS returns for collapsed rings are dropped and counted (MakeValidReport::
///   parts_dropped), and a feature with nothing polygonal left is dropped with the reason
///   "collapsed: no polygon left". `keep_collapsed` keeps GEOS's result as it is (a
///   GeometryCollection of the polygons and the collapsed lines). Other types keep GEOS's
///   result.
/// - Rows without a geometry are kept. A GEOS error on one feature follows --on-error.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "geolake/core/result.h"
#include "geolake/geo/make_valid.h"
#include "geolake/ops/runner.h"

namespace geolake::ops {

struct MakeValidOptions {
  geo::MakeValidMethod method = geo::MakeValidMethod::kLinework;
  /// Keep GEOS's collapsed lines and points (a GeometryCollection) instead of keeping a
  /// polygonal column polygonal.
  bool keep_collapsed = false;
  /// Polygonal geometries of at least this many vertices are repaired ring by ring on the
  /// executor (geo::MakeValidOptions::ring_level_min_vertices); tests lower it.
  std::int64_t ring_level_min_vertices = geo::MakeValidOptions{}.ring_level_min_vertices;
};

/// \brief What a make-valid run did.
struct MakeValidReport {
  std::string method;  // "linework" or "structure"
  bool keep_collapsed = false;
  std::int64_t rows_valid = 0;      // passed through unchanged
  std::int64_t rows_repaired = 0;   // invalid, repaired (rows_collapsed included)
  std::int64_t rows_collapsed = 0;  // repaired to nothing polygonal: dropped
  std::int64_t parts_dropped = 0;   // collapsed lines/points left out of polygonal results
  geo::MakeValidStats rings;        // the ring-level repairs of huge polygons
};

/// \brief The reason a collapsed row is dropped with (RunTotals::rows_dropped).
inline constexpr std::string_view kCollapsedReason = "collapsed: no polygon left";

/// \brief Run make-valid of `input` into `output` on the runner. `report` may be null.
/// Errors: as RunOperation.
Status RunMakeValid(const OpEnv& env, const InputSpec& input, const MakeValidOptions& options,
                    const OutputSpec& output, const RunnerOptions& runner_options,
                    RunSummary* summary, MakeValidReport* report);

/// \brief The report's lines for the CLI ("make-valid (linework): ...").
std::string FormatMakeValidReport(const MakeValidReport& report);

}  // namespace geolake::ops
