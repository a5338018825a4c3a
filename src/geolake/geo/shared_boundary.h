/// \file
/// Shared borders of polygons: the length of the boundary two polygonal geometries have in
/// common, as PostGIS computes it with ST_Length(ST_Intersection(ST_Boundary(a),
/// ST_Boundary(b))). `geolake eliminate` (ops/eliminate.h) merges a small polygon into the
/// neighbour it shares the longest border with, and a border of length zero (a point touch, a
/// crossing) makes no neighbours.
#pragma once

#include "geolake/core/result.h"
#include "geolake/geo/geos.h"

namespace geolake::geo {

/// \brief The boundary of `geometry` (GEOSBoundary): a polygon's rings as lines, a line's end
/// points. Errors: kGeometryError (GEOS's message; a GeometryCollection has no boundary),
/// kCancelled.
Result<Geometry> Boundary(const Geometry& geometry);

/// \brief The length (CRS units) of the lines where the boundaries of `a` and `b` (same
/// context) coincide: length(boundary(a) ∩ boundary(b)), computed by GEOS's overlay, which
/// nodes the two boundaries, so borders whose vertices differ (T-junctions) count too. Points
/// where they only touch or cross count 0. `a_boundary`, when given, must be Boundary(a)
/// (computed once for many neighbours).
///
/// Symmetric up to rounding in the overlay. Errors: kGeometryError, kCancelled.
Result<double> SharedBoundaryLength(const Geometry& a, const Geometry& b,
                                    const Geometry* a_boundary = nullptr);

}  // namespace geolake::geo
