/// \file
/// Private to geo/: the ring-by-ring make-valid of one huge polygonal geometry (ring_repair.cc),
/// used by MakeValidWith (make_valid.h) and by the ingest's structure repair (make_valid.cc).
#pragma once

#include <geos_c.h>

#include "geolake/core/result.h"
#include "geolake/geo/make_valid.h"

namespace geolake::geo::internal {

/// \brief GEOS make-valid of the Polygon or MultiPolygon `g` (in `h`) with `options.params`,
/// computed ring by ring: the result (owned by the caller, in `h`) covers the same points as
/// GEOSMakeValidWithParams on the whole and is valid. Null with `*error` OK when this path
/// gives no answer for `g` (Z coordinates, empty parts, a configuration it does not handle: the
/// caller repairs the whole with GEOS); null with `*error` set on a GEOS failure or a stop.
/// Structure accepts only a Polygon (MultiPolygons are repaired part by part by the caller).
GEOSGeometry* RingLevelRepair(GEOSContextHandle_t h, const GEOSGeometry* g,
                              const MakeValidOptions& options, MakeValidStats* stats,
                              Status* error);

}  // namespace geolake::geo::internal
