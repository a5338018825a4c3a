/// \file
/// A conservative shortcut for OGC validity: it proves a polygon or multipolygon valid without
/// GEOS, or says it cannot. It never claims "invalid"; every geometry it does not prove valid
/// goes to GEOS (Geometry::IsValid) as before, so the answer is always GEOS's own. The ingest
/// transform spent most of its CPU on GEOSisValid: for small polygons on the parse and the
/// call (the shortcut answers those in well under a microsecond), for large ones (country and
/// county outlines, tens of thousands of vertices) on GEOS's noding; the shortcut checks those
/// with a sweep over chunks of edges, several times faster.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace geolake::geo {

/// Rings of at most this many points (closing point included) in a one-ring polygon are checked
/// by comparing every pair of edges, without sorting anything.
inline constexpr std::uint32_t kFastValidMaxRingPoints = 64;

/// \brief True only when `wkb` is provably valid as GEOSisValid judges it.
///
/// Proved: little-endian ISO WKB, 2D (XY), a Polygon or a MultiPolygon of Polygons, where
/// every ring has at least 4 points, all coordinates are finite, every ring is closed with no
/// repeated consecutive point, no two edges meet except neighbouring edges of a ring at their
/// shared vertex (so every ring is simple and no two rings touch), every hole lies inside its
/// shell and outside the other holes of its polygon, and no polygon's shell lies inside another
/// polygon's shell. Such a geometry is valid under the OGC rules GEOS implements: rings simple,
/// holes inside the shell and not nested, interior connected (nothing touches), polygon
/// interiors of a multipolygon disjoint.
///
/// Every geometric decision is certain: an orientation or a dot product is accepted only when
/// its magnitude exceeds 1e-12 of the squared coordinate span of the points involved, far
/// beyond the rounding error of the computation (about 7e-16 of it) and of GEOS's own filter
/// (1e-15), so GEOS's robust predicates reach the same signs. A polygon whose rings touch (valid
/// or not), a repeated point, an island inside another polygon's lake, or anything closer than
/// that margin is not proved: false means "ask GEOS". Work is bounded (a pathological layout
/// of edges gives up rather than compare every pair). Thread-safe (per-thread scratch).
bool ProvablyValidPolygon(std::span<const std::uint8_t> wkb);

/// \brief Repairs a common invalidity of real polygons, spikes, without GEOS.
///
/// A spike is a vertex where the ring turns straight back: its two neighbours are the same
/// point, or all three lie exactly on one line parallel to an axis (equal x or equal y) and the
/// direction reverses. The two edges overlap there, enclosing no area, and GEOS calls the
/// polygon invalid. When `wkb` (as ProvablyValidPolygon takes it) has at least one spike, and
/// dropping every spike (repeatedly: a spike of spikes too) and every repeated consecutive point
/// leaves a geometry ProvablyValidPolygon proves valid, writes that geometry's ISO WKB to `*out`
/// and returns true. It covers the same points as GEOS's "structure" repair of `wkb` (what
/// Geometry::MakeValid gives), with GEOS's type: a MultiPolygon of one polygon becomes that
/// Polygon. Rings and vertices keep their order, minus the dropped vertices. Otherwise returns
/// false, `*out` unspecified: repair with GEOS. Thread-safe.
bool RepairSpikes(std::span<const std::uint8_t> wkb, std::string* out);

/// \brief True only when `wkb` (as ProvablyValidPolygon takes it) is certainly invalid as
/// GEOSisValid judges it: some closed ring passes twice through one point, apart from its
/// closing point and repeats of the point just before (which GEOS drops). Such a ring is not
/// simple, whether it touches itself there or folds back (a spike), and OGC validity wants
/// simple rings. Exact comparisons only. False means "not known": ask GEOS. Lets a repair skip
/// GEOS's noding of a part it would only learn is broken (the commonest defect of the Natural
/// Earth countries is a ring touching itself at a vertex).
bool CertainlyInvalidPolygon(std::span<const std::uint8_t> wkb);

/// \brief The polygons of a little-endian 2D MultiPolygon, as views into `wkb`: each one is the
/// WKB of that Polygon on its own, so ProvablyValidPolygon can judge the parts one by one (a
/// multipolygon whose parts touch is not proved whole, but most of its parts usually are).
/// Replaces `*members`; false (and `*members` unspecified) for anything else: another type or
/// byte order, Z or M, a member that is not a Polygon, bytes missing or left over.
bool MultiPolygonMembers(std::span<const std::uint8_t> wkb,
                         std::vector<std::span<const std::uint8_t>>* members);

}  // namespace geolake::geo
