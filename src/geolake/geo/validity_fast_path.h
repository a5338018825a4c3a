/// \file
/// A conservative shortcut for OGC validity: it proves a small single-ring polygon valid
/// without GEOS, or says it cannot. It never claims "invalid"; every geometry it does not prove
/// valid goes to GEOS (Geometry::IsValid) as before, so the answer is always GEOS's own. The
/// ingest transform spends most of its CPU on GEOSisValid for small polygons; this shortcut
/// answers those in well under a microsecond.
#pragma once

#include <cstdint>
#include <span>

namespace geolake::geo {

/// Longest ring (points, closing point included) the shortcut examines: the check compares
/// every pair of edges, so bigger rings go to GEOS's indexed check.
inline constexpr std::uint32_t kFastValidMaxRingPoints = 64;

/// \brief True only when `wkb` is provably valid as GEOSisValid judges it: little-endian ISO
/// WKB, 2D (XY), a Polygon (or a MultiPolygon of one Polygon) with exactly one ring of 4 to
/// kFastValidMaxRingPoints points, all coordinates finite, the ring closed, no repeated
/// consecutive points, no vertex collinear with its neighbours, and every pair of non-adjacent
/// edges certainly apart. "Certainly" means each orientation decided here has a margin of
/// 1e-12 of the squared coordinate span, far beyond the rounding error of the floating-point
/// determinant (about 7e-16 of it) and of GEOS's own filter (1e-15), so GEOS's robust
/// orientation test gets the same sign and finds no intersection either. False means "not
/// proved": ask GEOS. Thread-safe (no state).
bool ProvablyValidPolygon(std::span<const std::uint8_t> wkb);

}  // namespace geolake::geo
