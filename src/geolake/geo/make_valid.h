/// \file
/// Make-valid with GEOS's two methods (GEOSMakeValidWithParams, GEOS >= 3.10): the answer of
/// `geolake make-valid` (ops/make_valid.h). GEOS's defaults are linework with keepCollapsed
/// (GEOSMakeValid_r; shapely's make_valid(method="linework", keep_collapsed=True)):
/// - linework nodes every ring and rebuilds the area by even-odd parity of the noded rings, so
///   a hole outside its shell becomes a polygon of its own; collapsed rings come back as lines;
/// - structure makes each ring valid alone, subtracts from the shell the union of the holes
///   that meet it, and adds the holes that miss it as polygons of their own (GEOS 3.11's
///   GeometryFixer: a hole outside its shell becomes a polygon); parts are unioned;
///   keepCollapsed keeps a collapsed shell as a line.
/// MakeValidWith gives the same point set as one GEOS call on the whole geometry; what it does
/// differently for huge polygons (ring by ring, in parallel) is described in ring_repair.cc.
/// Geometry::MakeValid
/// (geos.h) is the ingest's structure repair without collapsed parts.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/geo/geos.h"

namespace geolake {
class ThreadPool;
}  // namespace geolake

namespace geolake::geo {

/// \brief GEOS's make-valid methods (GEOS_MAKE_VALID_LINEWORK / _STRUCTURE).
enum class MakeValidMethod : std::uint8_t { kLinework, kStructure };

/// \brief "linework" or "structure". Errors: kInvalidArgument naming both.
Result<MakeValidMethod> ParseMakeValidMethod(std::string_view text);
std::string_view MakeValidMethodName(MakeValidMethod method);

/// \brief GEOSMakeValidParams: the method and keepCollapsed (which only structure reads; GEOS
/// linework always keeps collapsed linework).
struct MakeValidParams {
  MakeValidMethod method = MakeValidMethod::kLinework;
  bool keep_collapsed = true;
};

/// \brief GEOSMakeValidWithParams on the whole geometry: one GEOS call, no shortcut. The
/// reference that MakeValidWith is tested against, and its answer for small geometries.
/// Errors: kGeometryError with GEOS's message; kCancelled.
Result<Geometry> GeosMakeValid(const Geometry& geometry, const MakeValidParams& params);

/// \brief The polygonal part of `geometry`: a Polygon or MultiPolygon as it is; from a
/// GeometryCollection its polygons (flattened into a MultiPolygon, or the one Polygon), with
/// `*dropped_parts` counting the other (collapsed) parts left out. Nothing polygonal gives
/// an empty MultiPolygon. Errors: kGeometryError.
Result<Geometry> PolygonalPart(const Geometry& geometry, std::int64_t* dropped_parts);

/// \brief True for a Polygon or MultiPolygon (empty or not).
Result<bool> IsPolygonal(const Geometry& geometry);

/// \brief How MakeValidWith may split the work of one huge polygonal geometry.
struct MakeValidOptions {
  MakeValidParams params;
  /// Ring groups run as tasks here (a worker that waits runs its own group's tasks); null:
  /// on the calling thread.
  ThreadPool* executor = nullptr;
  /// Checked between pieces, and interrupts GEOS inside one (each task's context has it).
  std::stop_token stop;
  /// Polygonal geometries with fewer vertices than this go to GEOS whole (one call is cheaper
  /// than the ring bookkeeping); 0 sends every polygonal geometry ring by ring (tests). At
  /// 20,000 the 47 smaller invalid countries of Natural Earth 10m went to GEOS whole, and the
  /// make-valid of the 255 took 3.7 s of CPU; at 2,000, 2.5 s, with the same point sets (the
  /// repaired rings are a few of each country's). 200 and 4 saved nothing more.
  std::int64_t ring_level_min_vertices = 2000;
};

/// \brief What MakeValidWith did (summed over calls by the caller).
struct MakeValidStats {
  std::int64_t ring_level = 0;       // geometries repaired ring by ring
  std::int64_t rings = 0;            // their rings
  std::int64_t rings_kept = 0;       // of those, kept as they were
  std::int64_t groups_repaired = 0;  // ring groups that went through GEOS
  std::int64_t rings_repaired = 0;   // the rings in those groups
  std::int64_t whole_fallbacks = 0;  // ring level tried, no answer or refused: GEOS whole
};

/// \brief Repair `geometry` (invalid or not) as GeosMakeValid(geometry, options.params) would:
/// the same point set, valid. A Polygon or MultiPolygon of at least
/// options.ring_level_min_vertices vertices is repaired ring group by ring group on
/// options.executor (ring_repair.cc: only broken or touching rings go through GEOS); that
/// answer is kept only when GEOSisValid accepts what it rebuilt (every polygon holding a
/// repaired ring) and it is polygonal (for linework: with GEOS's collapsed lines beside it in
/// a GeometryCollection), else GEOS repairs the whole
/// (stats->whole_fallbacks). Other geometries go to GEOS whole. `stats` (may be null) is added
/// to. Errors: kGeometryError with GEOS's message; kCancelled when options.stop (or the
/// context's token) fires.
Result<Geometry> MakeValidWith(const Geometry& geometry, const MakeValidOptions& options,
                               MakeValidStats* stats = nullptr);

}  // namespace geolake::geo
