/// \file
/// Coverage simplification: the polygons of a coverage (counties, parcels, polygonized land
/// cover) simplified so that borders shared by neighbours stay shared, with no gaps or
/// overlaps introduced. GEOS 3.11 has no coverage simplifier (GEOSCoverageSimplifyVW is 3.12),
/// so this builds one on the arcs of the coverage (docs/ops.md "Simplify --coverage"):
///
/// 1. Nodes. Coordinates are compared exactly (x, y; Z and M ride along). A vertex is a node
///    unless, at every place it occurs in a ring, both of its edges are used by the same rings
///    and those rings are exactly the rings the vertex occurs in (each once), with at most two
///    rings per edge: so points where three or more rings meet, where a ring's neighbour
///    changes, where rings touch at a point, and ring self-touches are nodes. A ring without a
///    node gets one fixed point: its lexicographically smallest vertex (every ring that shares
///    the whole ring picks the same one).
/// 2. Arcs: each ring cut at its nodes. An arc shared by several rings (either direction) is
///    stored once and simplified once: Douglas-Peucker with its ends fixed (a closed arc is cut
///    at its vertex farthest from the start, and keeps at least 3 distinct vertices).
/// 3. Checks, repeated until none fails: a ring keeps at least 3 distinct vertices; no two
///    simplified edges meet except at a shared end vertex; no kept vertex lies inside (or on)
///    the area between a new edge and the part of the arc it replaces (which catches rings
///    and islands the new edge would jump over). An arc failing a check is kept unsimplified
///    (all its vertices); an input arc cannot fail against input arcs of a valid coverage, so
///    this ends. Optionally a caller-supplied validity test of each rebuilt geometry restores
///    every arc of a geometry it rejects.
/// 4. Every ring is rebuilt from its arcs, from its own vertices (the same orientation, ring
///    and part counts; the same start vertex when it stays, else the ring's first node): the
///    output has one geometry per input.
///
/// Input that is not a coverage (overlaps, shared borders whose vertices differ) is still
/// simplified arc by arc; borders whose vertices differ are then simplified independently and
/// may open gaps or overlaps: measure it (docs/ops.md gives US counties' figures).
#pragma once

#include <cstdint>
#include <functional>
#include <stop_token>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/wkb.h"

namespace geolake::ops {

struct CoverageStats {
  std::int64_t rings = 0;
  std::int64_t nodes = 0;          // distinct node coordinates
  std::int64_t fixed_points = 0;   // rings without a node
  std::int64_t arcs = 0;           // distinct arcs
  std::int64_t shared_arcs = 0;    // arcs used by two or more ring traversals
  std::int64_t arcs_restored = 0;  // arcs kept unsimplified by the checks
  std::int64_t check_rounds = 0;
  std::int64_t input_conflicts = 0;  // conflicts between two unsimplified arcs (input defects)
  std::int64_t vertices_in = 0;
  std::int64_t vertices_out = 0;
};

/// \brief Decides whether the rebuilt geometry `index` is acceptable (e.g. GEOS validity).
using CoverageGeometryCheck =
    std::function<Result<bool>(std::size_t index, const geo::FlatGeometry& geometry)>;

/// \brief Simplify the Polygon and MultiPolygon geometries of `geometries` as one coverage,
/// in place, with Douglas-Peucker distance `tolerance` (CRS units, finite, >= 0). Geometries
/// of other types are left as they are. `check`, when set, is called for each rebuilt
/// polygonal geometry; a false answer restores the geometry's arcs (and the checks run
/// again); an answer that stays false once all its arcs are restored is accepted.
///
/// Errors: kInvalidArgument for a bad tolerance; kCancelled when `stop` fires; the check's.
Status SimplifyCoverage(std::vector<geo::FlatGeometry>* geometries, double tolerance,
                        CoverageStats* stats, std::stop_token stop = {},
                        const CoverageGeometryCheck& check = {});

}  // namespace geolake::ops
