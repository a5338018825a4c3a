// RingLevelRepair: GEOS make-valid of one huge Polygon or MultiPolygon, ring group by ring group.
//
// Why. GEOS repairs a polygon as one noding and one overlay of all its rings at once. OSM's
// Russian mainland (1,245,836 vertices, a shell and 191,182 holes, invalid by one ring crossing
// itself) takes more than 5 minutes that way, while the broken parts are small: GEOS repairs
// the shell alone in 1.6 s and finds the 4,473 holes that are invalid alone in 0.6 s. Most rings
// are fine and touch nothing, and GEOS's answer keeps them as they are; only the rings that are
// broken or meet another ring need GEOS.
//
// The rings are grouped: two rings interact when their lines share a point (candidates from our
// STRtree over chunks of 32 segments, confirmed with GEOSIntersects on the chunks' lines); the
// groups are the connected components. A ring that is valid alone (GEOSisValid of a polygon of
// just that ring: closed, >= 4 points, simple, non-zero area) and interacts with nothing is
// kept; every other group is repaired by GEOS, one task per group (on options.executor). What
// the pieces combine to depends on the method.
//
// Linework. GEOS nodes the lines of all rings (all parts of a MultiPolygon together) and keeps
// the faces covered by an odd number of rings: the area is the even-odd (XOR) combination of
// the areas the noded rings enclose, whatever rings are shells or holes. XOR is associative and
// the noding of a group only involves the group's own segments (lines of different groups share
// no point, so the whole's noding adds no vertex across groups), so
//   area(whole) = XOR over groups of area(GEOS linework of the group's rings)
//                 XOR over kept rings of the disk of the ring.
// A group's area is a valid polygonal set; its indicator is the parity of its own boundary rings
// around a point. So the whole area is the parity of ALL final rings around a point: the
// boundary rings of every repaired piece plus the kept rings. These rings never cross: rings of
// different groups share no point (their boundaries lie on disjoint lines), and rings of one
// piece only touch at points (GEOS made them valid). Rings that do not cross nest: the rings
// that contain a ring form a chain, so each ring has one innermost container (its parent), and
// a point's parity is decided by the innermost ring around it. The answer is then: every ring
// at even depth (0-based count of containers) bounds a polygon whose holes are its children
// (odd depth). In particular a kept hole lies either inside exactly one piece ring chain - it
// becomes a hole of the piece (or of the kept shell) it lies in when that is at even depth, or an
// island when it lies in a hole - or outside everything, where it becomes a polygon of its own
// (GEOS's linework turns a hole outside its shell into a polygon too). Finding the parent is a
// point-in-ring test of one vertex of the ring (a vertex on the candidate's boundary is skipped,
// for rings of one piece that touch) against the candidates whose box contains the ring's box,
// smallest area first: the assembly is a containment assignment, never a union. Lines and points
// that GEOS keeps for collapsed rings are edges of one group that bound no area of that group;
// another group's rings are constant near them, so they bound no area of the whole either: the
// groups' collapsed lines are the whole's.
//
// One more point for linework: GEOS's polygons for a group may touch each other at two points
// (two overlapping squares give two L shapes), a valid MultiPolygon; where the group lies inside
// the answer its shells turn into holes, and two holes touching twice cut the polygon around
// them in two. Such a group is then described by other rings covering the same area: those of
// (a box around it) minus it, without the box's ring - the outlines of its parts and the
// islands they enclose (computed by the group's task when its shells are not valid as holes of
// a box, used only when its surroundings are in the answer, then everything is placed again).
//
// Structure (GEOS 3.11's GeometryFixer). For one polygon the answer is
//   (fix(shell) minus the union of the fixed holes that meet fix(shell))
//   union (the fixed holes that miss it: GEOS turns them into polygons),
// fix(ring) being a buffer by 0 of the ring's polygon in both orientations (a ring valid alone
// is fixed to its own disk). A MultiPolygon is the union of its parts' answers. The groups are:
// the shell's group (the shell and every hole that meets it, transitively), repaired by GEOS
// structure on a polygon of those rings (P0: GEOS classifies those holes itself), and groups of
// holes only, each repaired to the union of its fixed holes (GEOS structure of a MultiPolygon of
// one polygon per hole). A hole group's lines meet neither the shell's lines nor a hole that
// does, so they lie wholly inside fix(shell) or wholly outside it, and one vertex tested
// against the rings of fix(shell) says which (fix(shell) is P0 when the shell's group is the
// shell alone, the shell's ring when it is valid alone, else one more GEOS task on the shell
// alone); a hole group that encloses a piece of fix(shell) meets it too. Because
// A - (B u C) = (A - B) - C, the answer is P0, minus every meeting hole set, plus every missing
// one. All their rings again do not cross, and a face of the nesting is in the answer when
// (P0's rings surround it an odd number of times and no subtracted set's do) or some added
// set's rings surround it an odd number of times. A ring is a boundary of the answer where its
// face and its parent's differ; an "in" boundary is a shell, and its holes are the boundaries
// below it reached through rings that are not boundaries (a kept hole inside another hole, or
// inside an added hole, changes nothing). Parts of a MultiPolygon are repaired one job each
// (ring by ring when large) and then unioned only where parts meet (UnionIntersectingParts, the
// ingest's part-by-part union).
//
// What gives no answer (null, *error OK: the caller runs GEOS on the whole): Z or M
// coordinates, empty rings or parts, non-finite coordinates, a structure repair whose shell
// collapses to lines (keepCollapsed), an answer with no polygon, rings whose vertices all lie
// on a candidate container (undecidable nesting), a hole group larger than a broken shell that
// it encloses (the shell's own added holes could overlap it, which the face rule cannot see).
// The caller checks the validity of what comes back and repairs the whole when it is not.
//
// Threads and GEOS. Each task makes its own GeoContext (GEOS handle and interrupt slot bound
// to the run's stop token); GEOS geometries never cross tasks: tasks read the rings as plain
// coordinates and return plain coordinates (and WKB for collapsed lines). One group can still be
// large - the Russian shell, 150k vertices, is 1.6 s of GEOS in one task - which is acceptable:
// it is the floor of this method, and the other groups run beside it.
#include <geos_c.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/geo_context_internal.h"
#include "geolake/geo/ring_repair_internal.h"
#include "geolake/geo/strtree.h"

namespace geolake::geo::internal {
namespace {

// ---- GEOS ownership -------------------------------------------------------------------------

struct GeomDeleter {
  GEOSContextHandle_t h;
  void operator()(GEOSGeometry* g) const { GEOSGeom_destroy_r(h, g); }
};
using GeomPtr = std::unique_ptr<GEOSGeometry, GeomDeleter>;

struct PreparedDeleter {
  GEOSContextHandle_t h;
  void operator()(const GEOSPreparedGeometry* g) const { GEOSPreparedGeom_destroy_r(h, g); }
};
using PreparedPtr = std::unique_ptr<const GEOSPreparedGeometry, PreparedDeleter>;

struct ParamsDeleter {
  GEOSContextHandle_t h;
  void operator()(GEOSMakeValidParams* p) const { GEOSMakeValidParams_destroy_r(h, p); }
};

struct WkbWriterDeleter {
  GEOSContextHandle_t h;
  void operator()(GEOSWKBWriter* w) const { GEOSWKBWriter_destroy_r(h, w); }
};

// ---- plain data that crosses tasks --------------------------------------------------------

// Ring coordinates x0, y0, x1, y1, ... (closed: the last point repeats the first).
using Coords = std::vector<double>;

struct InputRing {
  Coords xy;
  Envelope box;
  int part = 0;
  bool shell = false;
};

// A polygon: its shell's coordinates and then its holes'.
using PlainPolygon = std::vector<Coords>;

// What one repaired group gives back.
struct PieceResult {
  std::vector<PlainPolygon> polygons;
  std::vector<std::string> collapsed_wkb;  // linework's lines and points, ISO WKB
  bool no_answer = false;                  // not polygonal where it must be
  // The same area's boundaries as they must read where the piece lies inside the answer (its
  // shells become holes there): GEOS's polygons may touch at two points (two overlapping
  // squares give two L shapes), which is a valid MultiPolygon but, turned into holes, cuts the
  // surrounding polygon in two. These are the rings of (a box around the piece) minus the
  // piece, without the box's ring: the outlines and the enclosed islands. Set only when the
  // shells as holes are not valid.
  std::vector<Coords> inverse_rings;
  bool has_inverse = false;
};

std::size_t NumPoints(const Coords& xy) { return xy.size() / 2; }

Envelope BoxOf(std::span<const double> xy) {
  Envelope box;
  for (std::size_t i = 0; i + 1 < xy.size(); i += 2) box.Expand(xy[i], xy[i + 1]);
  return box;
}

// |shoelace area| of a closed ring.
double RingArea(std::span<const double> xy) {
  const std::size_t n = xy.size() / 2;
  if (n < 3) return 0;
  // Relative to the first point: the products stay small for rings far from the origin.
  const double x0 = xy[0], y0 = xy[1];
  double twice = 0;
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const double ax = xy[2 * i] - x0, ay = xy[2 * i + 1] - y0;
    const double bx = xy[2 * i + 2] - x0, by = xy[2 * i + 3] - y0;
    twice += ax * by - bx * ay;
  }
  return std::abs(twice) / 2;
}

// ---- GEOS geometry from and to plain coordinates ------------------------------------------

GEOSCoordSequence* SequenceOf(GEOSContextHandle_t h, std::span<const double> xy) {
  return GEOSCoordSeq_copyFromBuffer_r(h, xy.data(), static_cast<unsigned>(xy.size() / 2), 0, 0);
}

GEOSGeometry* LinearRingOf(GEOSContextHandle_t h, std::span<const double> xy) {
  GEOSCoordSequence* seq = SequenceOf(h, xy);
  if (seq == nullptr) return nullptr;
  return GEOSGeom_createLinearRing_r(h, seq);  // takes the sequence, also on failure
}

GEOSGeometry* LineStringOf(GEOSContextHandle_t h, std::span<const double> xy) {
  GEOSCoordSequence* seq = SequenceOf(h, xy);
  if (seq == nullptr) return nullptr;
  return GEOSGeom_createLineString_r(h, seq);
}

// A polygon of `rings` (the first is the shell); null on failure. The rings need not form a
// valid polygon: make-valid is what reads it.
GEOSGeometry* PolygonOf(GEOSContextHandle_t h, const std::vector<std::span<const double>>& rings) {
  if (rings.empty()) return nullptr;
  GEOSGeometry* shell = LinearRingOf(h, rings[0]);
  if (shell == nullptr) return nullptr;
  std::vector<GEOSGeometry*> holes;
  holes.reserve(rings.size() - 1);
  for (std::size_t i = 1; i < rings.size(); ++i) {
    GEOSGeometry* hole = LinearRingOf(h, rings[i]);
    if (hole == nullptr) {
      GEOSGeom_destroy_r(h, shell);
      for (GEOSGeometry* g : holes) GEOSGeom_destroy_r(h, g);
      return nullptr;
    }
    holes.push_back(hole);
  }
  // GEOSGeom_createPolygon_r takes ownership of the rings, on failure too (GEOS >= 3.5).
  return GEOSGeom_createPolygon_r(h, shell, holes.data(), static_cast<unsigned>(holes.size()));
}

GEOSGeometry* CollectionOf(GEOSContextHandle_t h, int type, std::vector<GEOSGeometry*> parts) {
  // On failure GEOS leaves the parts to the caller (3.11: it destroys nothing it did not take).
  GEOSGeometry* g =
      GEOSGeom_createCollection_r(h, type, parts.data(), static_cast<unsigned>(parts.size()));
  if (g == nullptr) {
    for (GEOSGeometry* p : parts) GEOSGeom_destroy_r(h, p);
  }
  return g;
}

bool ReadRing(GEOSContextHandle_t h, const GEOSGeometry* ring, Coords* xy) {
  const GEOSCoordSequence* seq = GEOSGeom_getCoordSeq_r(h, ring);
  if (seq == nullptr) return false;
  unsigned size = 0;
  if (GEOSCoordSeq_getSize_r(h, seq, &size) == 0) return false;
  xy->resize(2 * static_cast<std::size_t>(size));
  if (size == 0) return true;
  return GEOSCoordSeq_copyToBuffer_r(h, seq, xy->data(), 0, 0) != 0;
}

bool ReadPolygon(GEOSContextHandle_t h, const GEOSGeometry* polygon, PlainPolygon* out) {
  out->clear();
  const GEOSGeometry* shell = GEOSGetExteriorRing_r(h, polygon);
  if (shell == nullptr) return false;
  out->emplace_back();
  if (!ReadRing(h, shell, &out->back())) return false;
  const int holes = GEOSGetNumInteriorRings_r(h, polygon);
  if (holes < 0) return false;
  for (int i = 0; i < holes; ++i) {
    const GEOSGeometry* hole = GEOSGetInteriorRingN_r(h, polygon, i);
    if (hole == nullptr) return false;
    out->emplace_back();
    if (!ReadRing(h, hole, &out->back())) return false;
  }
  return true;
}

// Splits a GEOS result into plain polygons and the WKB of its other non-empty atoms.
bool SplitResult(GEOSContextHandle_t h, const GEOSGeometry* g, GEOSWKBWriter* writer,
                 PieceResult* out) {
  const int type = GEOSGeomTypeId_r(h, g);
  if (type < 0) return false;
  if (GEOSisEmpty_r(h, g) == 1) return true;
  if (type == GEOS_POLYGON) {
    out->polygons.emplace_back();
    return ReadPolygon(h, g, &out->polygons.back());
  }
  if (type == GEOS_MULTIPOLYGON || type == GEOS_GEOMETRYCOLLECTION ||
      type == GEOS_MULTILINESTRING || type == GEOS_MULTIPOINT) {
    const int n = GEOSGetNumGeometries_r(h, g);
    for (int i = 0; i < n; ++i) {
      if (!SplitResult(h, GEOSGetGeometryN_r(h, g, i), writer, out)) return false;
    }
    return true;
  }
  if (writer == nullptr) return false;
  std::size_t size = 0;
  unsigned char* bytes = GEOSWKBWriter_write_r(h, writer, g, &size);
  if (bytes == nullptr) return false;
  out->collapsed_wkb.emplace_back(reinterpret_cast<const char*>(bytes), size);
  GEOSFree_r(h, bytes);
  return true;
}

GEOSGeometry* GeosMakeValidRaw(GEOSContextHandle_t h, const GEOSGeometry* g, MakeValidMethod method,
                               bool keep_collapsed) {
  std::unique_ptr<GEOSMakeValidParams, ParamsDeleter> p(GEOSMakeValidParams_create_r(h),
                                                        ParamsDeleter{h});
  if (p == nullptr) return nullptr;
  const auto m =
      method == MakeValidMethod::kStructure ? GEOS_MAKE_VALID_STRUCTURE : GEOS_MAKE_VALID_LINEWORK;
  if (GEOSMakeValidParams_setMethod_r(h, p.get(), m) == 0 ||
      GEOSMakeValidParams_setKeepCollapsed_r(h, p.get(), keep_collapsed ? 1 : 0) == 0) {
    return nullptr;
  }
  return GEOSMakeValidWithParams_r(h, g, p.get());
}

// ---- jobs on the executor -------------------------------------------------------------------

// Below this many points of work a phase runs on the calling thread: a task and a GeoContext
// cost more than the GEOS calls (a GeoContext is a GEOS and a PROJ context, ~0.1 ms).
constexpr std::int64_t kMinParallelPoints = 20000;

// The context that phases run in when they run on the calling thread: the caller's task
// context when there is one (a part's phases inside its job), else one made on first use with
// the run's stop token.
struct InlineContext {
  GeoContext* borrowed = nullptr;
  std::unique_ptr<GeoContext> owned;

  Result<GeoContext*> Get(const std::stop_token& stop) {
    if (borrowed != nullptr) return borrowed;
    if (owned == nullptr) {
      GEOLAKE_ASSIGN_OR_RETURN(owned, GeoContext::Make(stop));
    }
    return owned.get();
  }
};

using Job = std::function<Status(GeoContext& ctx, GeosCall& call, std::size_t index)>;

// Runs job(ctx, call, i) for every i in [0, weights.size()), `weights[i]` its cost in points.
// With an executor and enough work: about four tasks per worker, contiguous ranges of similar
// weight, each task in a GeoContext of its own bound to the group's stop token (the run's
// token, or the group's first failure). Otherwise on this thread, in the inline context. The
// jobs write their results into slots of their own, so nothing here locks.
Status RunJobs(const MakeValidOptions& options, std::span<const std::int64_t> weights,
               InlineContext* inline_ctx, const Job& job) {
  const std::size_t n = weights.size();
  if (n == 0) return Status::OK();
  const std::int64_t total = std::accumulate(weights.begin(), weights.end(), std::int64_t{0});
  const auto run_range = [&](GeoContext& ctx, std::size_t begin, std::size_t end) -> Status {
    for (std::size_t i = begin; i < end; ++i) {
      if (ctx.stop_token().stop_requested() || options.stop.stop_requested()) {
        return Status::Cancelled("make valid: cancelled");
      }
      GeosCall call(ctx.impl());
      GEOLAKE_RETURN_NOT_OK(job(ctx, call, i));
    }
    return Status::OK();
  };
  if (options.executor == nullptr || total < kMinParallelPoints || n == 1) {
    GEOLAKE_ASSIGN_OR_RETURN(GeoContext * ctx, inline_ctx->Get(options.stop));
    return run_range(*ctx, 0, n);
  }
  const std::int64_t tasks = std::min<std::int64_t>(static_cast<std::int64_t>(n),
                                                    4 * std::max(1, options.executor->size()));
  const std::int64_t target = std::max<std::int64_t>(1, total / tasks);
  TaskGroup group(options.executor, options.stop);
  const std::stop_token group_stop = group.stop_token();
  std::size_t begin = 0;
  while (begin < n) {
    std::size_t end = begin;
    std::int64_t weight = 0;
    while (end < n && (end == begin || weight + weights[end] <= target)) weight += weights[end++];
    group.Spawn([&run_range, group_stop, begin, end]() -> Status {
      GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<GeoContext> ctx, GeoContext::Make(group_stop));
      return run_range(*ctx, begin, end);
    });
    begin = end;
  }
  return group.Wait();
}

// Fills piece->inverse_rings (see PieceResult) when the shells of `fixed` (the piece's
// polygons, in `h`) are not valid as holes of a box around them. Costs one validity check and,
// when needed, one overlay of the piece's size.
Status InverseIfNeeded(GEOSContextHandle_t h, const GeosCall& call, const GEOSGeometry* fixed,
                       PieceResult* piece) {
  Envelope box;
  for (const PlainPolygon& p : piece->polygons) box.Expand(BoxOf(p[0]));
  const double margin = 0.01 * std::max(box.xmax - box.xmin, box.ymax - box.ymin) + 1;
  const std::vector<double> frame{box.xmin - margin, box.ymin - margin, box.xmax + margin,
                                  box.ymin - margin, box.xmax + margin, box.ymax + margin,
                                  box.xmin - margin, box.ymax + margin, box.xmin - margin,
                                  box.ymin - margin};
  std::vector<std::span<const double>> rings{frame};
  for (const PlainPolygon& p : piece->polygons) rings.emplace_back(p[0]);
  GeomPtr holes(PolygonOf(h, rings), GeomDeleter{h});
  if (holes == nullptr) return call.Failure("make valid: piece as holes");
  const char valid = GEOSisValid_r(h, holes.get());
  if (valid == 2) return call.Failure("make valid: piece as holes");
  if (valid == 1) return Status::OK();
  GeomPtr frame_polygon(PolygonOf(h, {std::span<const double>(frame)}), GeomDeleter{h});
  if (frame_polygon == nullptr) return call.Failure("make valid: piece frame");
  GeomPtr inverse(GEOSDifference_r(h, frame_polygon.get(), fixed), GeomDeleter{h});
  if (inverse == nullptr) return call.Failure("make valid: piece inverse");
  PieceResult parts;
  if (!SplitResult(h, inverse.get(), nullptr, &parts) || !parts.collapsed_wkb.empty()) {
    return Status::OK();  // no inverse: the assembly gives no answer if it needs one
  }
  bool frame_seen = false;
  for (PlainPolygon& p : parts.polygons) {
    for (std::size_t r = 0; r < p.size(); ++r) {
      const Envelope b = BoxOf(p[r]);
      if (r == 0 && b.xmin <= frame[0] && b.ymin <= frame[1] && b.xmax >= frame[4] &&
          b.ymax >= frame[5]) {
        frame_seen = true;
        continue;  // the box's own ring
      }
      piece->inverse_rings.push_back(std::move(p[r]));
    }
  }
  piece->has_inverse = frame_seen;
  if (!frame_seen) piece->inverse_rings.clear();
  return Status::OK();
}

// ---- union-find --------------------------------------------------------------------------

struct DisjointSets {
  explicit DisjointSets(std::size_t n) : parent(n) {
    std::iota(parent.begin(), parent.end(), std::size_t{0});
  }
  std::size_t Find(std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void Join(std::size_t a, std::size_t b) { parent[Find(a)] = Find(b); }
  std::vector<std::size_t> parent;
};

// ---- phase 1: which rings are valid alone ---------------------------------------------------

Status FindValidAlone(const std::vector<InputRing>& rings, const MakeValidOptions& options,
                      InlineContext* inline_ctx, std::vector<char>* valid) {
  valid->assign(rings.size(), 0);
  std::vector<std::int64_t> weights(rings.size());
  for (std::size_t i = 0; i < rings.size(); ++i) {
    weights[i] = static_cast<std::int64_t>(NumPoints(rings[i].xy));
  }
  return RunJobs(options, weights, inline_ctx,
                 [&](GeoContext& /*ctx*/, GeosCall& call, std::size_t i) -> Status {
                   GEOSContextHandle_t h = call.handle();
                   GeomPtr polygon(PolygonOf(h, {std::span<const double>(rings[i].xy)}),
                                   GeomDeleter{h});
                   if (polygon == nullptr) return call.Failure("make valid: ring");
                   const char v = GEOSisValid_r(h, polygon.get());
                   if (v == 2) return call.Failure("make valid: ring validity");
                   (*valid)[i] = v;
                   return Status::OK();
                 });
}

// ---- phase 2: which rings interact -------------------------------------------------------

// Segments per chunk: small enough that a chunk's box says something about a long ring (the
// box of a whole shell contains every hole), large enough to keep the tree small (1.2M
// vertices are ~40k chunks of shell and one chunk per small hole).
constexpr std::size_t kChunkSegments = 32;

struct Chunk {
  std::uint32_t ring;
  std::uint32_t begin;  // first point
  std::uint32_t end;    // last point, inclusive
};

// Pairs (a, b), a < b, of rings whose lines share a point; appended to `*pairs`.
Status FindInteractions(const std::vector<InputRing>& rings, const MakeValidOptions& options,
                        InlineContext* inline_ctx,
                        std::vector<std::pair<std::uint32_t, std::uint32_t>>* pairs) {
  std::vector<Chunk> chunks;
  std::vector<StrTree::Item> items;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    const std::size_t n = NumPoints(rings[r].xy);
    for (std::size_t begin = 0; begin + 1 < n; begin += kChunkSegments) {
      const std::size_t end = std::min(n - 1, begin + kChunkSegments);
      Chunk c{static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(begin),
              static_cast<std::uint32_t>(end)};
      const std::span<const double> xy(rings[r].xy.data() + 2 * begin, 2 * (end - begin + 1));
      items.push_back({BoxOf(xy), static_cast<std::int64_t>(chunks.size())});
      chunks.push_back(c);
    }
  }
  std::vector<Envelope> boxes(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) boxes[i] = items[i].box;
  GEOLAKE_ASSIGN_OR_RETURN(StrTree tree, StrTree::Build(std::move(items)));
  const auto span_of = [&](const Chunk& c) {
    return std::span<const double>(rings[c.ring].xy.data() + 2 * c.begin,
                                   2 * (c.end - c.begin + 1));
  };
  // Jobs of 256 chunks; each collects its pairs in a slot of its own.
  constexpr std::size_t kChunksPerJob = 256;
  const std::size_t jobs = (chunks.size() + kChunksPerJob - 1) / kChunksPerJob;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> found(jobs);
  std::vector<std::int64_t> weights(jobs, static_cast<std::int64_t>(kChunksPerJob * 4));
  GEOLAKE_RETURN_NOT_OK(
      RunJobs(options, weights, inline_ctx,
              [&](GeoContext& /*ctx*/, GeosCall& call, std::size_t job) -> Status {
                GEOSContextHandle_t h = call.handle();
                std::unordered_set<std::uint64_t> seen;
                std::vector<std::size_t> candidates;
                const std::size_t end = std::min(chunks.size(), (job + 1) * kChunksPerJob);
                for (std::size_t a = job * kChunksPerJob; a < end; ++a) {
                  const Chunk& ca = chunks[a];
                  candidates.clear();
                  tree.Query(boxes[a], [&](std::int64_t b) {
                    if (chunks[static_cast<std::size_t>(b)].ring > ca.ring) {
                      candidates.push_back(static_cast<std::size_t>(b));
                    }
                  });
                  if (candidates.empty()) continue;
                  GeomPtr line_a(LineStringOf(h, span_of(ca)), GeomDeleter{h});
                  if (line_a == nullptr) return call.Failure("make valid: ring chunk");
                  for (std::size_t b : candidates) {
                    const std::uint64_t key = (std::uint64_t{ca.ring} << 32) | chunks[b].ring;
                    if (seen.contains(key)) continue;
                    GeomPtr line_b(LineStringOf(h, span_of(chunks[b])), GeomDeleter{h});
                    if (line_b == nullptr) return call.Failure("make valid: ring chunk");
                    const char meets = GEOSIntersects_r(h, line_a.get(), line_b.get());
                    if (meets == 2) return call.Failure("make valid: ring intersects");
                    if (meets == 1) {
                      seen.insert(key);
                      found[job].emplace_back(ca.ring, chunks[b].ring);
                    }
                  }
                }
                return Status::OK();
              }));
  for (auto& f : found) pairs->insert(pairs->end(), f.begin(), f.end());
  return Status::OK();
}

// ---- phase 4: nesting of the final rings and the answer ------------------------------------

struct FinalRing {
  std::span<const double> xy;
  int source = 0;           // which set's boundary it is (see Assemble)
  std::int64_t piece = -1;  // the repaired group it comes from, or -1 for a kept ring
  double area = 0;
  Envelope box;
};

// Where each of `queries` lies among `containers` (rings that do not cross the queries): with
// `innermost` set, (*innermost)[i] is the index of the smallest container of query i, or -1;
// else (*all)[i] lists every container of query i. `same` says that queries and containers are
// one list (a ring does not contain itself). Sets *undecided when a query's vertices all lie
// on a candidate's boundary (nothing to decide by).
Status FindContainers(const std::vector<FinalRing>& queries,
                      const std::vector<FinalRing>& containers, bool same,
                      const MakeValidOptions& options, InlineContext* inline_ctx,
                      std::vector<std::int64_t>* innermost,
                      std::vector<std::vector<std::int64_t>>* all, bool* undecided) {
  if (innermost != nullptr) innermost->assign(queries.size(), -1);
  if (all != nullptr) all->assign(queries.size(), {});
  if (queries.empty() || containers.empty()) return Status::OK();
  std::vector<StrTree::Item> items(containers.size());
  for (std::size_t i = 0; i < containers.size(); ++i) {
    items[i] = {containers[i].box, static_cast<std::int64_t>(i)};
  }
  GEOLAKE_ASSIGN_OR_RETURN(StrTree tree, StrTree::Build(std::move(items)));
  // Few large jobs: each job prepares every container it meets, and the shell around most
  // rings is the largest ring of all (~20 ms to index 150k vertices). 512-ring jobs spent 5 s of
  // 13 preparing that shell 235 times for the 120k-hole test polygon; one job per task of
  // RunJobs (four per worker) prepares it eight times on two workers.
  const std::size_t workers = options.executor == nullptr
                                  ? 1
                                  : static_cast<std::size_t>(std::max(1, options.executor->size()));
  const std::size_t rings_per_job =
      std::max<std::size_t>(512, (queries.size() + 4 * workers - 1) / (4 * workers));
  const std::size_t jobs = (queries.size() + rings_per_job - 1) / rings_per_job;
  std::vector<std::int64_t> weights(jobs, static_cast<std::int64_t>(rings_per_job * 8));
  std::vector<char> job_undecided(jobs, 0);
  GEOLAKE_RETURN_NOT_OK(RunJobs(
      options, weights, inline_ctx,
      [&](GeoContext& /*ctx*/, GeosCall& call, std::size_t job) -> Status {
        GEOSContextHandle_t h = call.handle();
        // Each job prepares the containers it tests against itself: prepared geometries build
        // their indexes lazily and are not safe to share (ops reference 1.2). A large shell is
        // prepared once per job (~50 ms for 150k vertices) and then places a point in
        // O(log n).
        struct Prepared {
          GeomPtr polygon;
          PreparedPtr prepared;
        };
        std::unordered_map<std::size_t, Prepared> cache;
        std::vector<std::size_t> candidates;
        const std::size_t end = std::min(queries.size(), (job + 1) * rings_per_job);
        for (std::size_t i = job * rings_per_job; i < end; ++i) {
          const FinalRing& ring = queries[i];
          candidates.clear();
          tree.Query(ring.box, [&](std::int64_t j) {
            const auto k = static_cast<std::size_t>(j);
            if (same && k == i) return;
            const Envelope& b = containers[k].box;
            if (b.xmin <= ring.box.xmin && b.ymin <= ring.box.ymin && b.xmax >= ring.box.xmax &&
                b.ymax >= ring.box.ymax && containers[k].area >= ring.area) {
              candidates.push_back(k);
            }
          });
          // Containers form a chain, so the first one found in order of area is the innermost.
          std::sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
            return containers[a].area < containers[b].area;
          });
          for (std::size_t k : candidates) {
            auto it = cache.find(k);
            if (it == cache.end()) {
              GeomPtr polygon(PolygonOf(h, {containers[k].xy}), GeomDeleter{h});
              if (polygon == nullptr) return call.Failure("make valid: container");
              PreparedPtr prepared(GEOSPrepare_r(h, polygon.get()), PreparedDeleter{h});
              if (prepared == nullptr) return call.Failure("make valid: prepare");
              it = cache.emplace(k, Prepared{std::move(polygon), std::move(prepared)}).first;
            }
            const GEOSPreparedGeometry* container = it->second.prepared.get();
            int inside = -1;  // -1 undecided, 0 outside, 1 inside
            const std::size_t points = ring.xy.size() / 2;
            for (std::size_t v = 0; v + 1 < points && inside < 0; ++v) {
              GeomPtr point(GEOSGeom_createPointFromXY_r(h, ring.xy[2 * v], ring.xy[2 * v + 1]),
                            GeomDeleter{h});
              if (point == nullptr) return call.Failure("make valid: point");
              const char proper = GEOSPreparedContainsProperly_r(h, container, point.get());
              if (proper == 2) return call.Failure("make valid: contains");
              if (proper == 1) {
                inside = 1;
                break;
              }
              const char meets = GEOSPreparedIntersects_r(h, container, point.get());
              if (meets == 2) return call.Failure("make valid: intersects");
              if (meets == 0) inside = 0;
            }
            if (inside < 0) {
              job_undecided[job] = 1;
              break;
            }
            if (inside == 1) {
              if (innermost != nullptr) {
                (*innermost)[i] = static_cast<std::int64_t>(k);
                break;
              }
              (*all)[i].push_back(static_cast<std::int64_t>(k));
            }
          }
        }
        return Status::OK();
      }));
  if (std::any_of(job_undecided.begin(), job_undecided.end(), [](char c) { return c != 0; })) {
    *undecided = true;
  }
  return Status::OK();
}

// What each source of final rings does to the answer (see Assemble).
enum class SourceRole : std::uint8_t {
  kToggle,    // linework: every ring flips the parity
  kBase,      // structure: P0, the shell's piece
  kSubtract,  // structure: holes whose fixed area meets the fixed shell
  kAdd,       // structure: holes whose fixed area misses the fixed shell (GEOS makes them shells)
};

// The polygons of the answer, as lists of indices into `rings` (shell first). A face of the
// nesting (a ring's disk minus its children's) is in the answer when: linework, an odd number
// of rings surround it; structure, (P0's rings surround it an odd number of times and no
// subtracted source's rings do) or some added source's rings do an odd number of times. A ring
// is a boundary when its face and its parent's face differ; an "in" boundary is a shell, and its
// holes are the boundaries found below it through rings that are not boundaries.
void Assemble(const std::vector<FinalRing>& rings, const std::vector<std::int64_t>& parent,
              const std::vector<SourceRole>& roles, std::vector<std::vector<std::size_t>>* polygons,
              std::vector<char>* in_out) {
  const std::size_t n = rings.size();
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < n; ++i) {
    if (parent[i] < 0) {
      roots.push_back(i);
    } else {
      children[static_cast<std::size_t>(parent[i])].push_back(i);
    }
  }
  std::vector<char> in(n, 0);
  std::vector<char> parity(roles.size(), 0);
  int toggles = 0, odd_base = 0, odd_subtract = 0, odd_add = 0;
  const auto toggle = [&](std::size_t i) {
    const auto s = static_cast<std::size_t>(rings[i].source);
    parity[s] ^= 1;
    const int d = parity[s] != 0 ? 1 : -1;
    switch (roles[s]) {
      case SourceRole::kToggle:
        toggles += d;
        break;
      case SourceRole::kBase:
        odd_base += d;
        break;
      case SourceRole::kSubtract:
        odd_subtract += d;
        break;
      case SourceRole::kAdd:
        odd_add += d;
        break;
    }
  };
  // Counters, not a scan of the sources: structure has one source per kept hole (120k).
  const auto face_in = [&] {
    return toggles % 2 == 1 || (odd_base > 0 && odd_subtract == 0) || odd_add > 0;
  };
  struct Frame {
    std::size_t ring;
    bool leaving;
  };
  std::vector<Frame> stack;
  for (std::size_t root : roots) stack.push_back({root, false});
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    toggle(f.ring);
    if (f.leaving) continue;
    in[f.ring] = face_in() ? 1 : 0;
    stack.push_back({f.ring, true});
    for (std::size_t c : children[f.ring]) stack.push_back({c, false});
  }
  const auto parent_in = [&](std::size_t i) {
    return parent[i] >= 0 && in[static_cast<std::size_t>(parent[i])] != 0;
  };
  polygons->clear();
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < n; ++i) {
    if (!in[i] || parent_in(i)) continue;
    std::vector<std::size_t> polygon{i};
    pending.assign(children[i].begin(), children[i].end());
    while (!pending.empty()) {
      const std::size_t c = pending.back();
      pending.pop_back();
      if (!in[c]) {
        polygon.push_back(c);  // a boundary: a hole of this shell
      } else {
        pending.insert(pending.end(), children[c].begin(), children[c].end());
      }
    }
    polygons->push_back(std::move(polygon));
  }
  *in_out = std::move(in);
}

// ---- one pool of rings ---------------------------------------------------------------------

// The answer for one pool of rings as plain polygons (and collapsed WKB): all rings of the
// geometry for linework, one polygon's rings (rings[0] its shell) for structure.
struct PoolAnswer {
  std::vector<PlainPolygon> polygons;
  std::vector<std::string> collapsed_wkb;
  bool no_answer = false;
};

Status RepairPool(const std::vector<InputRing>& rings, const MakeValidOptions& options,
                  InlineContext* inline_ctx, MakeValidStats* stats, PoolAnswer* answer) {
  const bool structure = options.params.method == MakeValidMethod::kStructure;
  const std::size_t n = rings.size();
  std::vector<char> valid;
  GEOLAKE_RETURN_NOT_OK(FindValidAlone(rings, options, inline_ctx, &valid));
  if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled");
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  GEOLAKE_RETURN_NOT_OK(FindInteractions(rings, options, inline_ctx, &pairs));
  if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled");

  DisjointSets sets(n);
  for (const auto& [a, b] : pairs) sets.Join(a, b);
  std::vector<std::vector<std::size_t>> members(n);
  for (std::size_t i = 0; i < n; ++i) members[sets.Find(i)].push_back(i);

  // Groups for GEOS: more than one ring, or one broken ring.
  std::vector<std::size_t> group_roots;
  std::vector<std::size_t> kept;
  for (std::size_t root = 0; root < n; ++root) {
    const std::vector<std::size_t>& m = members[root];
    if (m.empty()) continue;
    if (m.size() == 1 && valid[m[0]] != 0) {
      kept.push_back(m[0]);
    } else {
      group_roots.push_back(root);
    }
  }
  stats->rings += static_cast<std::int64_t>(n);
  stats->rings_kept += static_cast<std::int64_t>(kept.size());
  stats->groups_repaired += static_cast<std::int64_t>(group_roots.size());
  stats->rings_repaired += static_cast<std::int64_t>(n - kept.size());

  // Phase 3: GEOS on each group, one job per group (weighted by its points). Structure also
  // needs fix(shell) alone when the shell is broken and holes meet it (the classifier below):
  // one more job, the shell's ring made valid alone.
  const std::size_t shell_root = sets.Find(0);
  const bool shell_alone = members[shell_root].size() == 1;
  const bool fix_shell_job = structure && !shell_alone && valid[0] == 0;
  const std::size_t num_jobs = group_roots.size() + (fix_shell_job ? 1 : 0);
  std::vector<PieceResult> pieces(num_jobs);
  std::vector<std::int64_t> weights(num_jobs);
  for (std::size_t g = 0; g < group_roots.size(); ++g) {
    for (std::size_t r : members[group_roots[g]]) {
      weights[g] += static_cast<std::int64_t>(NumPoints(rings[r].xy));
    }
  }
  if (fix_shell_job) weights.back() = static_cast<std::int64_t>(NumPoints(rings[0].xy));
  GEOLAKE_RETURN_NOT_OK(RunJobs(
      options, weights, inline_ctx,
      [&](GeoContext& /*ctx*/, GeosCall& call, std::size_t g) -> Status {
        GEOSContextHandle_t h = call.handle();
        GeomPtr input(nullptr, GeomDeleter{h});
        bool keep_collapsed = options.params.keep_collapsed;
        if (g == group_roots.size()) {
          keep_collapsed = false;
          input.reset(PolygonOf(h, {std::span<const double>(rings[0].xy)}));
        } else if (!structure || group_roots[g] == shell_root) {
          // Linework: any polygon of the group's rings (GEOS ignores their roles). Structure's
          // shell group: the shell first (rings[0] is the shell; members are in index order).
          std::vector<std::span<const double>> spans;
          for (std::size_t r : members[group_roots[g]]) spans.emplace_back(rings[r].xy);
          input.reset(PolygonOf(h, spans));
        } else {
          // A group of holes: the union of each hole made valid alone (GEOS's fixed holes are
          // unioned before they are subtracted or added); GEOS drops collapsed holes whatever
          // keepCollapsed says.
          keep_collapsed = false;
          std::vector<GEOSGeometry*> polygons;
          for (std::size_t r : members[group_roots[g]]) {
            GEOSGeometry* p = PolygonOf(h, {std::span<const double>(rings[r].xy)});
            if (p == nullptr) {
              for (GEOSGeometry* q : polygons) GEOSGeom_destroy_r(h, q);
              return call.Failure("make valid: hole group");
            }
            polygons.push_back(p);
          }
          input.reset(CollectionOf(h, GEOS_MULTIPOLYGON, std::move(polygons)));
        }
        if (input == nullptr) return call.Failure("make valid: ring group");
        GeomPtr fixed(GeosMakeValidRaw(h, input.get(), options.params.method, keep_collapsed),
                      GeomDeleter{h});
        if (fixed == nullptr) return call.Failure("make valid: ring group");
        std::unique_ptr<GEOSWKBWriter, WkbWriterDeleter> writer(GEOSWKBWriter_create_r(h),
                                                                WkbWriterDeleter{h});
        if (writer == nullptr) return call.Failure("make valid: wkb writer");
        GEOSWKBWriter_setFlavor_r(h, writer.get(), GEOS_WKB_ISO);
        if (!SplitResult(h, fixed.get(), writer.get(), &pieces[g])) {
          return call.Failure("make valid: ring group result");
        }
        // Structure's answer for a polygon is polygonal; lines mean a collapsed shell
        // (keepCollapsed), which the whole repair returns as a line: no answer here.
        if (structure && !pieces[g].collapsed_wkb.empty()) pieces[g].no_answer = true;
        const bool may_turn_inside =
            !structure || (g < group_roots.size() && group_roots[g] != shell_root);
        if (may_turn_inside && pieces[g].polygons.size() >= 2) {
          return InverseIfNeeded(h, call, fixed.get(), &pieces[g]);
        }
        return Status::OK();
      }));
  if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled");

  // Phase 4: the final rings, each tagged with its source.
  std::vector<FinalRing> final_rings;
  std::vector<SourceRole> roles{structure ? SourceRole::kBase : SourceRole::kToggle};
  std::vector<std::size_t> first_ring_of_source{0};
  const auto add_ring = [](std::vector<FinalRing>* out, std::span<const double> xy, int source,
                           std::int64_t piece = -1) {
    FinalRing f;
    f.xy = xy;
    f.source = source;
    f.piece = piece;
    f.area = RingArea(xy);
    f.box = BoxOf(xy);
    out->push_back(f);
  };
  const auto new_source = [&]() -> int {
    if (!structure) return 0;
    roles.push_back(SourceRole::kSubtract);  // decided below
    first_ring_of_source.push_back(final_rings.size());
    return static_cast<int>(roles.size() - 1);
  };
  for (std::size_t g = 0; g < group_roots.size(); ++g) {
    if (pieces[g].no_answer) {
      answer->no_answer = true;
      return Status::OK();
    }
    const int source = group_roots[g] == shell_root ? 0 : new_source();
    for (const PlainPolygon& p : pieces[g].polygons) {
      for (const Coords& ring : p) {
        add_ring(&final_rings, ring, source, static_cast<std::int64_t>(g));
      }
    }
    for (std::string& wkb : pieces[g].collapsed_wkb) {
      answer->collapsed_wkb.push_back(std::move(wkb));
    }
  }
  for (std::size_t r : kept) add_ring(&final_rings, rings[r].xy, r == 0 ? 0 : new_source());
  bool undecided = false;

  if (structure && roles.size() > 1) {
    // GEOS's GeometryFixer subtracts a fixed hole only when it meets the fixed shell; a fixed
    // hole that misses it becomes a shell of its own (unioned in). A hole source's lines lie
    // wholly inside fix(shell) or wholly outside it (they meet neither the shell's lines nor,
    // outside the shell's group, any hole that does), so one vertex decides, against the rings
    // of fix(shell): P0's own when the shell's group is the shell alone, the shell's ring when
    // it is valid alone, else the extra job's answer. A hole outside can still meet fix(shell)
    // by enclosing a piece of it: then it is subtracted too.
    std::vector<FinalRing> classifier;
    if (shell_alone) {
      for (const FinalRing& f : final_rings) {
        if (f.source == 0) classifier.push_back(f);
      }
    } else if (!fix_shell_job) {
      add_ring(&classifier, rings[0].xy, 0);
    } else {
      for (const PlainPolygon& p : pieces.back().polygons) {
        for (const Coords& ring : p) add_ring(&classifier, ring, 0);
      }
    }
    std::vector<FinalRing> firsts;
    std::vector<std::size_t> first_source;
    for (std::size_t src = 1; src < roles.size(); ++src) {
      if (first_ring_of_source[src] < final_rings.size() &&
          final_rings[first_ring_of_source[src]].source == static_cast<int>(src)) {
        firsts.push_back(final_rings[first_ring_of_source[src]]);
        first_source.push_back(src);
      } else {
        roles[src] = SourceRole::kAdd;  // nothing left of it: either role adds nothing
      }
    }
    std::vector<std::vector<std::int64_t>> inside;
    GEOLAKE_RETURN_NOT_OK(FindContainers(firsts, classifier, false, options, inline_ctx, nullptr,
                                         &inside, &undecided));
    for (std::size_t q = 0; q < firsts.size(); ++q) {
      roles[first_source[q]] = inside[q].size() % 2 == 1 ? SourceRole::kSubtract : SourceRole::kAdd;
    }
    // fix(shell) inside a hole source's area: that source meets it (subtracted).
    std::vector<FinalRing> hole_rings;
    for (const FinalRing& f : final_rings) {
      if (f.source != 0) hole_rings.push_back(f);
    }
    std::vector<std::vector<std::int64_t>> around;
    GEOLAKE_RETURN_NOT_OK(FindContainers(classifier, hole_rings, false, options, inline_ctx,
                                         nullptr, &around, &undecided));
    for (const std::vector<std::int64_t>& list : around) {
      std::unordered_map<int, int> count;
      for (std::int64_t k : list) ++count[hole_rings[static_cast<std::size_t>(k)].source];
      for (const auto& [src, c] : count) {
        if (c % 2 == 1 && roles[static_cast<std::size_t>(src)] != SourceRole::kSubtract) {
          // Then P0 - X and the shell group's added holes could overlap X, which a per-face
          // rule cannot see; rare (a hole larger than the broken shell): GEOS decides.
          if (!shell_alone) undecided = true;
          roles[static_cast<std::size_t>(src)] = SourceRole::kSubtract;
        }
      }
    }
  }
  if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled");

  std::vector<std::int64_t> parent;
  std::vector<std::vector<std::size_t>> polygons;
  std::vector<char> in;
  if (!undecided) {
    GEOLAKE_RETURN_NOT_OK(FindContainers(final_rings, final_rings, true, options, inline_ctx,
                                         &parent, nullptr, &undecided));
  }
  if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled");
  if (undecided) {
    answer->no_answer = true;
    return Status::OK();
  }
  Assemble(final_rings, parent, roles, &polygons, &in);
  // A piece that lies inside the answer (its outermost rings' parent face is in) has its
  // shells turned into holes; where those would cut the answer (PieceResult::inverse_rings),
  // use its inverse rings instead and place everything again. Swapping one piece's rings does
  // not change the area anywhere, so no other piece's surroundings change: one round.
  std::vector<char> swap(pieces.size(), 0);
  bool any_swap = false;
  for (std::size_t i = 0; i < final_rings.size(); ++i) {
    const std::int64_t g = final_rings[i].piece;
    if (g < 0 || parent[i] < 0) continue;
    const auto gi = static_cast<std::size_t>(g);
    const auto pi = static_cast<std::size_t>(parent[i]);
    if (final_rings[pi].piece == g || in[pi] == 0 || swap[gi] != 0) continue;
    if (!pieces[gi].has_inverse) continue;  // its shells are valid as holes
    swap[gi] = 1;
    any_swap = true;
  }
  if (any_swap) {
    std::vector<FinalRing> swapped;
    swapped.reserve(final_rings.size());
    for (const FinalRing& f : final_rings) {
      if (f.piece < 0 || swap[static_cast<std::size_t>(f.piece)] == 0) swapped.push_back(f);
    }
    for (std::size_t g = 0; g < pieces.size(); ++g) {
      if (swap[g] == 0) continue;
      const int source = [&] {
        for (const FinalRing& f : final_rings) {
          if (f.piece == static_cast<std::int64_t>(g)) return f.source;
        }
        return 0;
      }();
      for (const Coords& ring : pieces[g].inverse_rings) {
        add_ring(&swapped, ring, source, static_cast<std::int64_t>(g));
      }
    }
    final_rings = std::move(swapped);
    GEOLAKE_RETURN_NOT_OK(FindContainers(final_rings, final_rings, true, options, inline_ctx,
                                         &parent, nullptr, &undecided));
    if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled");
    if (undecided) {
      answer->no_answer = true;
      return Status::OK();
    }
    Assemble(final_rings, parent, roles, &polygons, &in);
  }
  // The safety check, GEOS's own judgement of what was built: GEOSisValid of the polygons that
  // hold a repaired ring, with those rings only. Left out are the kept rings, which are valid
  // alone, meet no other ring of the input (GEOS said so) and sit where the containment tests
  // put them, and the polygons made of kept rings only. Checking everything would cost more
  // than the repair itself: GEOS 3.11 tests each hole against its shell with a linear
  // point-in-ring (IsValidOp::checkHolesInShell), 120k holes x 150k shell vertices = 140 s of
  // the measured large polygon, against ~0.1 s for the repaired rings.
  {
    GEOLAKE_ASSIGN_OR_RETURN(GeoContext * check_ctx, inline_ctx->Get(options.stop));
    GeosCall call(check_ctx->impl());
    GEOSContextHandle_t h = call.handle();
    std::vector<GEOSGeometry*> checked;
    bool failed = false;
    for (const std::vector<std::size_t>& p : polygons) {
      bool repaired = false;
      std::vector<std::span<const double>> spans{final_rings[p[0]].xy};
      repaired = final_rings[p[0]].piece >= 0;
      for (std::size_t k = 1; k < p.size(); ++k) {
        if (final_rings[p[k]].piece < 0) continue;
        repaired = true;
        spans.push_back(final_rings[p[k]].xy);
      }
      if (!repaired) continue;
      GEOSGeometry* g = PolygonOf(h, spans);
      if (g == nullptr) {
        failed = true;
        break;
      }
      checked.push_back(g);
    }
    if (failed) {
      for (GEOSGeometry* g : checked) GEOSGeom_destroy_r(h, g);
      return call.Failure("make valid: check");
    }
    if (!checked.empty()) {
      GeomPtr multi(CollectionOf(h, GEOS_MULTIPOLYGON, std::move(checked)), GeomDeleter{h});
      if (multi == nullptr) return call.Failure("make valid: check");
      const char check_valid = GEOSisValid_r(h, multi.get());
      if (check_valid == 2) return call.Failure("make valid: check");
      if (check_valid == 0) {
        answer->no_answer = true;
        return Status::OK();
      }
    }
  }
  for (const std::vector<std::size_t>& p : polygons) {
    PlainPolygon plain;
    plain.reserve(p.size());
    for (std::size_t r : p) plain.emplace_back(final_rings[r].xy.begin(), final_rings[r].xy.end());
    answer->polygons.push_back(std::move(plain));
  }
  return Status::OK();
}

// GEOS structure on one small part (rings[0] its shell), in `ctx`: cheaper than the ring
// bookkeeping below ring_level_min_vertices.
Status RepairPartWhole(GeoContext& ctx, const std::vector<InputRing>& rings,
                       const MakeValidOptions& options, PoolAnswer* answer) {
  GeosCall call(ctx.impl());
  GEOSContextHandle_t h = call.handle();
  std::vector<std::span<const double>> spans;
  for (const InputRing& r : rings) spans.emplace_back(r.xy);
  GeomPtr input(PolygonOf(h, spans), GeomDeleter{h});
  if (input == nullptr) return call.Failure("make valid: part");
  GeomPtr fixed(
      GeosMakeValidRaw(h, input.get(), MakeValidMethod::kStructure, options.params.keep_collapsed),
      GeomDeleter{h});
  if (fixed == nullptr) return call.Failure("make valid: part");
  std::unique_ptr<GEOSWKBWriter, WkbWriterDeleter> writer(GEOSWKBWriter_create_r(h),
                                                          WkbWriterDeleter{h});
  if (writer == nullptr) return call.Failure("make valid: wkb writer");
  PieceResult piece;
  if (!SplitResult(h, fixed.get(), writer.get(), &piece)) return call.Failure("make valid: part");
  answer->polygons = std::move(piece.polygons);
  answer->no_answer = !piece.collapsed_wkb.empty();
  return Status::OK();
}

// ---- reading the input --------------------------------------------------------------------

// Appends the rings of `polygon` (part `part`) to `rings`; false when a ring is empty or has a
// non-finite coordinate (GEOS's whole repair decides those).
bool ReadPolygonRings(GEOSContextHandle_t h, const GEOSGeometry* polygon, int part,
                      std::vector<InputRing>* rings) {
  if (GEOSGeomTypeId_r(h, polygon) != GEOS_POLYGON || GEOSisEmpty_r(h, polygon) != 0) return false;
  PlainPolygon plain;
  if (!ReadPolygon(h, polygon, &plain)) return false;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    if (NumPoints(plain[i]) < 4) return false;
    for (double c : plain[i]) {
      if (!std::isfinite(c)) return false;
    }
    InputRing ring;
    ring.xy = std::move(plain[i]);
    ring.box = BoxOf(ring.xy);
    ring.part = part;
    ring.shell = i == 0;
    rings->push_back(std::move(ring));
  }
  return true;
}

// Builds the GEOS answer in `h` from plain polygons: a Polygon for one, else a MultiPolygon;
// with collapsed parts, a GeometryCollection of those polygons and parts. Null on failure.
GEOSGeometry* BuildAnswer(GEOSContextHandle_t h, const std::vector<PlainPolygon>& plain,
                          const std::vector<std::string>& collapsed_wkb) {
  std::vector<GEOSGeometry*> polygons;
  polygons.reserve(plain.size());
  for (const PlainPolygon& p : plain) {
    std::vector<std::span<const double>> spans(p.begin(), p.end());
    GEOSGeometry* g = PolygonOf(h, spans);
    if (g == nullptr) {
      for (GEOSGeometry* q : polygons) GEOSGeom_destroy_r(h, q);
      return nullptr;
    }
    polygons.push_back(g);
  }
  GEOSGeometry* area =
      polygons.size() == 1 ? polygons[0] : CollectionOf(h, GEOS_MULTIPOLYGON, std::move(polygons));
  if (area == nullptr || collapsed_wkb.empty()) return area;
  std::vector<GEOSGeometry*> parts{area};
  for (const std::string& wkb : collapsed_wkb) {
    GEOSGeometry* g =
        GEOSGeomFromWKB_buf_r(h, reinterpret_cast<const unsigned char*>(wkb.data()), wkb.size());
    if (g == nullptr) {
      for (GEOSGeometry* q : parts) GEOSGeom_destroy_r(h, q);
      return nullptr;
    }
    parts.push_back(g);
  }
  return CollectionOf(h, GEOS_GEOMETRYCOLLECTION, std::move(parts));
}

}  // namespace

GEOSGeometry* RingLevelRepair(GEOSContextHandle_t h, const GEOSGeometry* g,
                              const MakeValidOptions& options, MakeValidStats* stats,
                              Status* error) {
  *error = Status::OK();
  MakeValidStats local;
  MakeValidStats& s = stats != nullptr ? *stats : local;
  const int type = GEOSGeomTypeId_r(h, g);
  if (type != GEOS_POLYGON && type != GEOS_MULTIPOLYGON) return nullptr;
  if (GEOSHasZ_r(h, g) != 0 || GEOSGeom_getCoordinateDimension_r(h, g) != 2) return nullptr;
  if (options.stop.stop_requested()) {
    *error = Status::Cancelled("make valid: cancelled before start");
    return nullptr;
  }
  std::vector<const GEOSGeometry*> parts;
  if (type == GEOS_POLYGON) {
    parts.push_back(g);
  } else {
    const int n = GEOSGetNumGeometries_r(h, g);
    if (n <= 0) return nullptr;
    for (int i = 0; i < n; ++i) parts.push_back(GEOSGetGeometryN_r(h, g, i));
  }
  InlineContext inline_ctx;
  const bool structure = options.params.method == MakeValidMethod::kStructure;

  if (!structure) {
    // All rings of all parts form one even-odd pool.
    std::vector<InputRing> rings;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (!ReadPolygonRings(h, parts[p], static_cast<int>(p), &rings)) return nullptr;
    }
    PoolAnswer answer;
    *error = RepairPool(rings, options, &inline_ctx, &s, &answer);
    if (!error->ok() || answer.no_answer || answer.polygons.empty()) return nullptr;
    GEOSGeometry* out = BuildAnswer(h, answer.polygons, answer.collapsed_wkb);
    if (out == nullptr)
      *error = Status::GeometryError("make valid: building the ring-level answer");
    return out;
  }

  // Structure: each part on its own (one job per part; a large part's own phases run as tasks
  // of their own), then the union where the parts' answers meet.
  std::vector<std::vector<InputRing>> part_rings(parts.size());
  std::vector<std::int64_t> weights(parts.size());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    if (!ReadPolygonRings(h, parts[p], static_cast<int>(p), &part_rings[p])) return nullptr;
    for (const InputRing& r : part_rings[p]) {
      weights[p] += static_cast<std::int64_t>(NumPoints(r.xy));
    }
  }
  std::vector<PoolAnswer> answers(parts.size());
  std::vector<MakeValidStats> part_stats(parts.size());
  *error =
      RunJobs(options, weights, &inline_ctx,
              [&](GeoContext& ctx, GeosCall& /*call*/, std::size_t p) -> Status {
                // A small part's phases run inline in this job's context; a large part's
                // run as tasks of a nested group (a waiting worker runs its own group's
                // tasks, so nesting cannot deadlock).
                if (weights[p] < options.ring_level_min_vertices) {
                  return RepairPartWhole(ctx, part_rings[p], options, &answers[p]);
                }
                InlineContext part_ctx;
                part_ctx.borrowed = &ctx;
                return RepairPool(part_rings[p], options, &part_ctx, &part_stats[p], &answers[p]);
              });
  if (!error->ok()) return nullptr;
  for (const MakeValidStats& ps : part_stats) {
    s.rings += ps.rings;
    s.rings_kept += ps.rings_kept;
    s.groups_repaired += ps.groups_repaired;
    s.rings_repaired += ps.rings_repaired;
  }
  std::vector<GEOSGeometry*> polygons;
  bool failed = false;
  for (const PoolAnswer& a : answers) {
    if (a.no_answer) return nullptr;  // collapsed shell lines etc.: GEOS on the whole
    for (const PlainPolygon& p : a.polygons) {
      std::vector<std::span<const double>> spans(p.begin(), p.end());
      GEOSGeometry* polygon = PolygonOf(h, spans);
      if (polygon == nullptr) {
        failed = true;
        break;
      }
      polygons.push_back(polygon);
    }
    if (failed) break;
  }
  if (failed) {
    for (GEOSGeometry* q : polygons) GEOSGeom_destroy_r(h, q);
    *error = Status::GeometryError("make valid: building the ring-level answer");
    return nullptr;
  }
  if (polygons.empty()) return nullptr;  // everything collapsed: GEOS says what is left
  if (parts.size() == 1) {
    // One polygon's answer is valid as it is (its pieces are interior-disjoint).
    if (polygons.size() == 1) return polygons[0];
    GEOSGeometry* multi = CollectionOf(h, GEOS_MULTIPOLYGON, std::move(polygons));
    if (multi == nullptr) *error = Status::GeometryError("make valid: building the answer");
    return multi;
  }
  bool unioned = false;
  return UnionIntersectingParts(h, std::move(polygons), &unioned);
}

}  // namespace geolake::geo::internal
