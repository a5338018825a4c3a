/// \file
/// Private to geo/: the ring-by-ring make-valid of one huge polygonal geometry (ring_repair.cc),
/// used by MakeValidWith (make_valid.h) and by the ingest's structure repair (make_valid.cc).
#pragma once

#include <geos_c.h>

#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/make_valid.h"

namespace geolake::geo::internal {

/// \brief GEOS make-valid of the Polygon or MultiPolygon `g` (in `h`) with `options.params`,
/// computed ring by ring: the result (owned by the caller, in `h`) covers the same points as
/// GEOSMakeValidWithParams on the whole and is valid. Null with `*error` OK when this path
/// gives no answer for `g` (Z coordinates, empty parts, a configuration it does not handle: the
/// caller repairs the whole with GEOS); null with `*error` set on a GEOS failure or a stop.
/// For structure, the parts of a MultiPolygon are repaired one job each (ring by ring when a
/// part has at least `options.ring_level_min_vertices` vertices, else by GEOS) and then unioned
/// where they meet (UnionIntersectingParts). Work runs on `options.executor` when set, each
/// task in a GEOS context of its own; `options.stop` is checked between pieces and interrupts
/// GEOS inside one. Adds what it did to `*stats` (may be null). Validity: an answer is
/// returned only when GEOSisValid accepts every polygon that holds a repaired ring (with its
/// repaired rings; the kept rings are valid alone and meet nothing), else null, *error OK.
GEOSGeometry* RingLevelRepair(GEOSContextHandle_t h, const GEOSGeometry* g,
                              const MakeValidOptions& options, MakeValidStats* stats,
                              Status* error);

/// \brief The union of valid `polygons` (consumed; Polygons, in `h`), computed only where they
/// meet: groups of polygons that intersect (touch or overlap, directly or through a chain) are
/// unioned by GEOS unless they already form a valid MultiPolygon; the rest are collected as
/// they are. Sets `*unioned` when some group needed GEOS. A Polygon for one polygon, else a
/// MultiPolygon; null when GEOS fails or a union is not polygonal (make_valid.cc).
GEOSGeometry* UnionIntersectingParts(GEOSContextHandle_t h, std::vector<GEOSGeometry*> polygons,
                                     bool* unioned);

}  // namespace geolake::geo::internal
