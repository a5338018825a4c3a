#include "geolake/geo/validity_fast_path.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "geolake/core/little_endian.h"
#include "geolake/geo/envelope.h"

namespace geolake::geo {
namespace {

// Why the shortcut agrees with GEOS (3.11 IsValidOp on a Polygon or MultiPolygon):
// - coordinates finite: checkCoordinatesValid passes; rings closed and >= 4 points with no
//   repeated consecutive point: checkRingsClosed and checkRingsPointSize pass, and the noder
//   sees exactly our edges (GEOS drops repeated points before noding; there are none);
// - the noding check intersects every pair of edges of all rings (LineIntersector). Neighbour
//   edges a-b, b-c of a ring may meet only at b: they do when a, b, c certainly turn, or when
//   they certainly go on ((b - a) . (c - b) > 0: an angle under 90 degrees at b cannot fold
//   the edges onto each other); GEOS then finds the one intersection point b (its orientations
//   of b against either edge are exactly 0, so it never reports a proper crossing or an
//   overlap). Any other two edges must not meet at all, which LineIntersector decides either
//   from disjoint envelopes (exact comparisons, the same as ours) or from two orientations of
//   one edge's endpoints against the other edge's line having the same sign. Orientation signs
//   we accept have |det| > 1e-12 * span^2 (span = largest coordinate difference among the three
//   points); the computed determinant's error is below 3.4e-16 * (|a| + |b|) <= 7e-16 * span^2,
//   so the true determinant has our sign, and GEOS's filter (which accepts |det| >= 1e-15 *
//   detsum, detsum <= 2 * span^2) returns that sign. So no ring touches itself or another ring,
//   and the interior is connected;
// - holes inside their shell, not inside each other, no shell inside another polygon's shell:
//   with no two rings meeting, one point of a ring decides on which side of another ring the
//   whole ring lies; we count crossings of a ray from it, each decided by exact comparisons or
//   a certain orientation, as GEOS's point-in-ring test decides them.
// The span limits keep every product away from overflow and underflow.
constexpr double kMargin = 1e-12;
constexpr double kMinSpan = 1e-100;
constexpr double kMaxSpan = 1e100;
constexpr double kMaxAbsCoordinate = 1e150;

struct Point {
  double x;
  double y;
};

bool SamePoint(const Point& a, const Point& b) { return a.x == b.x && a.y == b.y; }

// +1 / -1: c is certainly left / right of a->b; 0: not certain (ask GEOS).
int CertainOrientation(const Point& a, const Point& b, const Point& c) {
  const double dx1 = b.x - a.x;
  const double dy1 = b.y - a.y;
  const double dx2 = c.x - a.x;
  const double dy2 = c.y - a.y;
  const double dx3 = c.x - b.x;
  const double dy3 = c.y - b.y;
  const double span = std::max({std::fabs(dx1), std::fabs(dy1), std::fabs(dx2), std::fabs(dy2),
                                std::fabs(dx3), std::fabs(dy3)});
  if (!(span >= kMinSpan && span <= kMaxSpan)) return 0;
  const double det = dx1 * dy2 - dy1 * dx2;
  const double bound = kMargin * span * span;
  if (det > bound) return 1;
  if (det < -bound) return -1;
  return 0;
}

// Segments a-b and c-d certainly do not meet.
bool CertainlyApart(const Point& a, const Point& b, const Point& c, const Point& d) {
  if (std::max(a.x, b.x) < std::min(c.x, d.x) || std::max(c.x, d.x) < std::min(a.x, b.x) ||
      std::max(a.y, b.y) < std::min(c.y, d.y) || std::max(c.y, d.y) < std::min(a.y, b.y)) {
    return true;
  }
  const int c_side = CertainOrientation(a, b, c);
  if (c_side != 0 && c_side == CertainOrientation(a, b, d)) return true;
  const int a_side = CertainOrientation(c, d, a);
  return a_side != 0 && a_side == CertainOrientation(c, d, b);
}

// The turn at b certainly keeps going forwards: (b - a) . (c - b) > 0 with the margin of
// CertainOrientation (its rounding error is below 2e-15 * span^2 as well).
bool CertainlyForward(const Point& a, const Point& b, const Point& c) {
  const double dx1 = b.x - a.x;
  const double dy1 = b.y - a.y;
  const double dx2 = c.x - b.x;
  const double dy2 = c.y - b.y;
  const double span = std::max({std::fabs(dx1), std::fabs(dy1), std::fabs(dx2), std::fabs(dy2)});
  if (!(span >= kMinSpan && span <= kMaxSpan)) return false;
  return dx1 * dx2 + dy1 * dy2 > kMargin * span * span;
}

// A ring of `n` points is closed, finite, without repeated consecutive points, and at every
// vertex its two edges meet only there.
bool RingShapeOk(const Point* ring, std::uint32_t n) {
  for (std::uint32_t idx = 0; idx < n; ++idx) {
    if (!(std::fabs(ring[idx].x) <= kMaxAbsCoordinate) ||
        !(std::fabs(ring[idx].y) <= kMaxAbsCoordinate)) {
      return false;  // NaN, infinite or huge
    }
  }
  const std::uint32_t num_edges = n - 1;
  if (!SamePoint(ring[0], ring[num_edges])) return false;
  for (std::uint32_t idx = 0; idx < num_edges; ++idx) {
    const Point& prev = ring[idx == 0 ? num_edges - 1 : idx - 1];
    const Point& next = ring[idx + 1];
    if (SamePoint(ring[idx], next)) return false;  // repeated point
    if (CertainOrientation(prev, ring[idx], next) == 0 &&
        !CertainlyForward(prev, ring[idx], next)) {
      return false;  // a spike, or too close to call
    }
  }
  return true;
}

// Edges k1 < k2 of the ring whose points are [begin, end) are neighbours (edge k joins points
// k and k + 1; the last edge and the first share the closing point).
bool Neighbours(std::uint32_t k1, std::uint32_t k2, std::uint32_t begin, std::uint32_t end) {
  return k2 == k1 + 1 || (k1 == begin && k2 == end - 2);
}

Envelope BoxOf(const Point* points, std::uint32_t n) {
  Envelope box;
  for (std::uint32_t idx = 0; idx < n; ++idx) box.Expand(points[idx].x, points[idx].y);
  return box;
}

// Up to kChunkEdges consecutive edges of one ring, with the box of their points.
constexpr std::uint32_t kChunkEdges = 8;
struct Chunk {
  Envelope box;
  std::uint32_t first;       // first edge (= its first point)
  std::uint32_t count;       // edges
  std::uint32_t ring_begin;  // the ring's points
  std::uint32_t ring_end;
};

// Per-thread buffers of the general check, kept between calls.
struct Scratch {
  std::vector<Point> points;               // every ring's points, back to back
  std::vector<std::uint32_t> ring_end;     // ring r: points [ring_end[r - 1] or 0, ring_end[r])
  std::vector<std::uint32_t> polygon_end;  // polygon p: rings [polygon_end[p - 1] or 0, ...)
  std::vector<Envelope> ring_box;
  std::vector<Chunk> chunks;

  std::uint32_t RingBegin(std::size_t r) const { return r == 0 ? 0 : ring_end[r - 1]; }
  std::uint32_t PolygonBegin(std::size_t p) const { return p == 0 ? 0 : polygon_end[p - 1]; }
};

// Walks one little-endian 2D Polygon at `*pos`, advancing it past the polygon: checks the
// header and that every ring's points are there, and calls `on_ring(points, n)` for each ring
// (`points`: its n * 16 bytes). Sets `*num_rings`. False when the bytes are not such a polygon
// or `on_ring` returns false.
template <typename OnRing>
bool WalkPolygon(std::span<const std::uint8_t> wkb, std::size_t* pos, std::uint32_t* num_rings,
                 OnRing on_ring) {
  const std::uint8_t* p = wkb.data();
  if (wkb.size() - *pos < 9 || p[*pos] != 1 || LoadLE<std::uint32_t>(p + *pos + 1) != 3)
    return false;
  *num_rings = LoadLE<std::uint32_t>(p + *pos + 5);
  *pos += 9;
  for (std::uint32_t r = 0; r < *num_rings; ++r) {
    if (wkb.size() - *pos < 4) return false;
    const std::uint32_t n = LoadLE<std::uint32_t>(p + *pos);
    *pos += 4;
    if (n > (wkb.size() - *pos) / 16) return false;
    if (!on_ring(p + *pos, n)) return false;
    *pos += std::size_t{n} * 16;
  }
  return true;
}

// Appends one little-endian 2D Polygon at `*pos` (advancing it). False for anything else,
// including an empty polygon or ring (left to GEOS).
bool ParsePolygon(std::span<const std::uint8_t> wkb, std::size_t* pos, Scratch* s) {
  std::uint32_t num_rings = 0;
  const bool walked =
      WalkPolygon(wkb, pos, &num_rings, [s](const std::uint8_t* points, std::uint32_t n) {
        if (n < 4 || s->points.size() + n > (std::uint32_t{1} << 31)) return false;
        const std::size_t at = s->points.size();
        s->points.resize(at + n);
        std::memcpy(s->points.data() + at, points, std::size_t{n} * 16);
        s->ring_end.push_back(static_cast<std::uint32_t>(s->points.size()));
        return true;
      });
  if (!walked || num_rings == 0) return false;
  s->polygon_end.push_back(static_cast<std::uint32_t>(s->ring_end.size()));
  return true;
}

// The per-thread buffers of ProvablyValidPolygon and CertainlyInvalidPolygon.
Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Keeps a thread's buffers for the next call unless a huge geometry grew them.
void TrimScratch(Scratch* s) {
  if (s->points.capacity() > (std::size_t{1} << 20) || s->ring_end.capacity() > (1u << 16)) {
    *s = Scratch{};
  }
}

// Replaces `*s`'s rings with those of `wkb`: a little-endian 2D Polygon or MultiPolygon, every
// member little-endian, nothing after it. False for anything else (ParsePolygon's refusals
// included).
bool ParseRings(std::span<const std::uint8_t> wkb, Scratch* s) {
  s->points.clear();
  s->ring_end.clear();
  s->polygon_end.clear();
  const std::uint8_t* p = wkb.data();
  if (wkb.size() < 13 || p[0] != 1) return false;
  std::size_t pos = 0;
  const std::uint32_t type = LoadLE<std::uint32_t>(p + 1);
  if (type == 3) {
    if (!ParsePolygon(wkb, &pos, s)) return false;
  } else if (type == 6) {
    const std::uint32_t count = LoadLE<std::uint32_t>(p + 5);
    pos = 9;
    if (count == 0) return false;
    for (std::uint32_t idx = 0; idx < count; ++idx) {
      if (!ParsePolygon(wkb, &pos, s)) return false;
    }
  } else {
    return false;
  }
  return pos == wkb.size();
}

// Crossings of a ray from `pt` towards +x with the ring's edges: +1 inside, -1 outside, 0 when
// a crossing cannot be decided with certainty (`pt` on or too near an edge). Adds the edges
// visited to `*work`.
int Locate(const Point& pt, const Point* ring, std::uint32_t n, std::uint64_t* work) {
  *work += n;
  bool inside = false;
  for (std::uint32_t idx = 0; idx + 1 < n; ++idx) {
    const Point& p = ring[idx];
    const Point& q = ring[idx + 1];
    if ((p.y > pt.y) == (q.y > pt.y)) continue;  // half-open: no crossing at pt's height
    if (pt.x < std::min(p.x, q.x)) {
      inside = !inside;  // the crossing is certainly to the right
      continue;
    }
    if (pt.x > std::max(p.x, q.x)) continue;  // certainly to the left
    const int side = CertainOrientation(p, q, pt);
    if (side == 0) return 0;
    // pt left of an upward edge: the edge passes to its right.
    if ((side > 0) == (q.y > p.y)) inside = !inside;
  }
  return inside ? 1 : -1;
}

// Edges of chunks `a` and `b` (distinct, or the same chunk) never meet, neighbours aside.
bool ChunkEdgesApart(const std::vector<Point>& pts, const Chunk& a, const Chunk& b, bool same) {
  const bool same_ring = a.ring_begin == b.ring_begin;
  for (std::uint32_t i = 0; i < a.count; ++i) {
    const std::uint32_t e1 = a.first + i;
    const Point& p1 = pts[e1];
    const Point& p2 = pts[e1 + 1];
    const Envelope edge{std::min(p1.x, p2.x), std::min(p1.y, p2.y), std::max(p1.x, p2.x),
                        std::max(p1.y, p2.y)};
    if (!edge.Intersects(b.box)) continue;
    for (std::uint32_t j = same ? i + 1 : 0; j < b.count; ++j) {
      const std::uint32_t e2 = b.first + j;
      if (same_ring && Neighbours(std::min(e1, e2), std::max(e1, e2), a.ring_begin, a.ring_end)) {
        continue;
      }
      if (!CertainlyApart(p1, p2, pts[e2], pts[e2 + 1])) return false;
    }
  }
  return true;
}

// The general check (see the header) over the parsed rings in `s`.
bool ProvablyValidRings(Scratch* s) {
  const std::vector<Point>& pts = s->points;
  const std::size_t num_rings = s->ring_end.size();
  s->ring_box.clear();
  s->chunks.clear();
  for (std::size_t r = 0; r < num_rings; ++r) {
    const std::uint32_t begin = s->RingBegin(r);
    const std::uint32_t end = s->ring_end[r];
    if (!RingShapeOk(pts.data() + begin, end - begin)) return false;
    s->ring_box.push_back(BoxOf(pts.data() + begin, end - begin));
    for (std::uint32_t first = begin; first + 1 < end; first += kChunkEdges) {
      const std::uint32_t count = std::min(kChunkEdges, end - 1 - first);
      s->chunks.push_back({BoxOf(pts.data() + first, count + 1), first, count, begin, end});
    }
  }

  // Edges: a sweep over the chunks in order of their left edge. Work is bounded: a layout
  // where many chunks share an x range (a long straight north-south edge next to thousands of
  // others) gives up rather than compare them all.
  std::vector<Chunk>& chunks = s->chunks;
  std::sort(chunks.begin(), chunks.end(),
            [](const Chunk& a, const Chunk& b) { return a.box.xmin < b.box.xmin; });
  const std::uint64_t budget = 32 * std::uint64_t{chunks.size()} + (std::uint64_t{1} << 20);
  std::uint64_t work = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& a = chunks[i];
    if (!ChunkEdgesApart(pts, a, a, /*same=*/true)) return false;
    for (std::size_t j = i + 1; j < chunks.size() && chunks[j].box.xmin <= a.box.xmax; ++j) {
      if (++work > budget) return false;
      if (!chunks[j].box.Intersects(a.box)) continue;
      if (!ChunkEdgesApart(pts, a, chunks[j], /*same=*/false)) return false;
    }
  }

  // Where rings lie: no two rings meet, so one point of a ring places all of it.
  const std::uint64_t locate_budget = 8 * std::uint64_t{pts.size()} + (std::uint64_t{1} << 20);
  std::uint64_t located = 0;
  // True when ring `inner` certainly lies outside ring `outer`.
  const auto outside = [&](std::size_t inner, std::size_t outer) {
    if (!s->ring_box[outer].Contains(s->ring_box[inner])) return true;
    const std::uint32_t begin = s->RingBegin(outer);
    return located <= locate_budget && Locate(pts[s->RingBegin(inner)], pts.data() + begin,
                                              s->ring_end[outer] - begin, &located) < 0;
  };
  constexpr std::size_t kMaxPairwise = 2048;  // rings compared pairwise, per polygon or shells
  const std::size_t num_polygons = s->polygon_end.size();
  for (std::size_t p = 0; p < num_polygons; ++p) {
    const std::size_t shell = s->PolygonBegin(p);
    const std::size_t end = s->polygon_end[p];
    if (end - shell - 1 > kMaxPairwise) return false;
    for (std::size_t hole = shell + 1; hole < end; ++hole) {
      if (!s->ring_box[shell].Contains(s->ring_box[hole])) return false;
      const std::uint32_t begin = s->RingBegin(shell);
      if (located > locate_budget || Locate(pts[s->RingBegin(hole)], pts.data() + begin,
                                            s->ring_end[shell] - begin, &located) <= 0) {
        return false;
      }
      for (std::size_t other = shell + 1; other < end; ++other) {
        if (other != hole && !outside(hole, other)) return false;
      }
    }
  }
  if (num_polygons > 1) {
    if (num_polygons > kMaxPairwise) return false;
    for (std::size_t p = 0; p < num_polygons; ++p) {
      for (std::size_t q = 0; q < num_polygons; ++q) {
        if (p != q && !outside(s->PolygonBegin(p), s->PolygonBegin(q))) return false;
      }
    }
  }
  return true;
}

// One ring of at most kFastValidMaxRingPoints points: every pair of edges, on the stack.
bool ProvablyValidSmallRing(const std::uint8_t* points, std::uint32_t num_points) {
  std::array<Point, kFastValidMaxRingPoints> ring;
  std::memcpy(ring.data(), points, std::size_t{num_points} * 16);
  if (!RingShapeOk(ring.data(), num_points)) return false;
  // Edge e joins ring[e] and ring[e + 1]; e and e + 1 are adjacent, and so are the last and
  // the first edge.
  const std::uint32_t num_edges = num_points - 1;
  for (std::uint32_t e1 = 0; e1 + 2 < num_edges; ++e1) {
    const std::uint32_t last = e1 == 0 ? num_edges - 1 : num_edges;
    for (std::uint32_t e2 = e1 + 2; e2 < last; ++e2) {
      if (!CertainlyApart(ring[e1], ring[e1 + 1], ring[e2], ring[e2 + 1])) return false;
    }
  }
  return true;
}

}  // namespace

bool ProvablyValidPolygon(std::span<const std::uint8_t> wkb) {
  const std::uint8_t* p = wkb.data();
  if (wkb.size() < 13 || p[0] != 1) return false;
  // The common case first: [MultiPolygon: 1 | 6 | count=1] 1 | 3 | rings=1 | points | points.
  {
    std::size_t pos = 0;
    std::uint32_t type = LoadLE<std::uint32_t>(p + 1);
    if (type == 6 && LoadLE<std::uint32_t>(p + 5) == 1 && wkb.size() >= 22 && p[9] == 1) {
      pos = 9;
      type = LoadLE<std::uint32_t>(p + pos + 1);
    }
    if (type == 3 && wkb.size() >= pos + 13 && LoadLE<std::uint32_t>(p + pos + 5) == 1) {
      const std::uint32_t num_points = LoadLE<std::uint32_t>(p + pos + 9);
      pos += 13;
      if (num_points >= 4 && num_points <= kFastValidMaxRingPoints &&
          wkb.size() == pos + std::size_t{num_points} * 16) {
        return ProvablyValidSmallRing(p + pos, num_points);
      }
    }
  }
  Scratch& s = ThreadScratch();
  const bool proved = ParseRings(wkb, &s) && ProvablyValidRings(&s);
  TrimScratch(&s);
  return proved;
}

bool CertainlyInvalidPolygon(std::span<const std::uint8_t> wkb) {
  Scratch& scratch = ThreadScratch();
  thread_local std::vector<Point> ring;
  if (!ParseRings(wkb, &scratch)) return false;
  const auto before = [](const Point& a, const Point& b) {
    return a.x < b.x || (a.x == b.x && a.y < b.y);
  };
  bool repeated = false;
  for (std::size_t r = 0; r < scratch.ring_end.size() && !repeated; ++r) {
    const Point* pts = scratch.points.data() + scratch.RingBegin(r);
    const std::uint32_t n = scratch.ring_end[r] - scratch.RingBegin(r);
    if (!SamePoint(pts[0], pts[n - 1])) continue;  // not closed: GEOS's own reason
    ring.clear();
    for (std::uint32_t idx = 0; idx + 1 < n; ++idx) {  // the closing point left out
      if (ring.empty() || !SamePoint(ring.back(), pts[idx])) ring.push_back(pts[idx]);
    }
    // The first point again just before the closing one is a consecutive repeat too.
    while (ring.size() > 1 && SamePoint(ring.back(), ring.front())) ring.pop_back();
    std::sort(ring.begin(), ring.end(), before);
    repeated = std::adjacent_find(ring.begin(), ring.end(), SamePoint) != ring.end();
  }
  TrimScratch(&scratch);
  if (ring.capacity() > (std::size_t{1} << 20)) ring = std::vector<Point>();
  return repeated;
}

bool MultiPolygonMembers(std::span<const std::uint8_t> wkb,
                         std::vector<std::span<const std::uint8_t>>* members) {
  members->clear();
  const std::uint8_t* p = wkb.data();
  if (wkb.size() < 9 || p[0] != 1 || LoadLE<std::uint32_t>(p + 1) != 6) return false;
  const std::uint32_t count = LoadLE<std::uint32_t>(p + 5);
  if (count > (wkb.size() - 9) / 9) return false;  // each member takes at least 9 bytes
  members->reserve(count);
  std::size_t pos = 9;
  for (std::uint32_t idx = 0; idx < count; ++idx) {
    const std::size_t begin = pos;
    std::uint32_t num_rings = 0;
    if (!WalkPolygon(wkb, &pos, &num_rings,
                     [](const std::uint8_t*, std::uint32_t) { return true; })) {
      return false;
    }
    members->push_back(wkb.subspan(begin, pos - begin));
  }
  return pos == wkb.size();
}

namespace {

// The ring goes a -> b and turns straight back at b: b's neighbours are the same point, or all
// three lie exactly on one axis-parallel line (equal x, or equal y: no rounding to doubt) and
// the direction reverses. Either way the edges overlap next to b, enclosing no area, and
// dropping b leaves the ring's path a -> p, which covers the same area.
bool FoldsAt(const Point& a, const Point& b, const Point& p) {
  if (SamePoint(a, p)) return true;
  if (a.x == b.x && b.x == p.x) return (b.y - a.y > 0) != (p.y - b.y > 0);
  if (a.y == b.y && b.y == p.y) return (b.x - a.x > 0) != (p.x - b.x > 0);
  return false;
}

// Appends `ring` (closed) without repeated consecutive points and without spikes (see
// FoldsAt), counting the spikes dropped. False when fewer than 3 distinct points remain.
bool AppendDespiked(const Point* ring, std::uint32_t n, std::vector<Point>* out,
                    std::size_t* spikes) {
  std::vector<Point> kept;  // a stack: a spike is undone as soon as the ring turns back
  kept.reserve(n);
  for (std::uint32_t idx = 0; idx + 1 < n; ++idx) {
    const Point& p = ring[idx];
    while (kept.size() >= 2 && !SamePoint(kept.back(), p) &&
           FoldsAt(kept[kept.size() - 2], kept.back(), p)) {
      kept.pop_back();
      ++*spikes;
    }
    if (kept.empty() || !SamePoint(kept.back(), p)) kept.push_back(p);
  }
  // Where the ring closes: the last points and the first ones may repeat or spike too.
  std::size_t front = 0;
  while (kept.size() - front >= 3) {
    const std::size_t last = kept.size() - 1;
    if (SamePoint(kept[last], kept[front])) {
      kept.pop_back();
    } else if (FoldsAt(kept[last - 1], kept[last], kept[front])) {
      kept.pop_back();  // ..., a, tip | p, ...
      ++*spikes;
    } else if (FoldsAt(kept[last], kept[front], kept[front + 1])) {
      ++front;  // ..., a | tip, p, ...
      ++*spikes;
    } else {
      break;
    }
  }
  if (kept.size() - front < 3) return false;
  out->insert(out->end(), kept.begin() + static_cast<std::ptrdiff_t>(front), kept.end());
  out->push_back(kept[front]);
  return true;
}

void PutPoint(const Point& p, std::string* out) {
  AppendLE(p.x, out);
  AppendLE(p.y, out);
}

}  // namespace

bool RepairSpikes(std::span<const std::uint8_t> wkb, std::string* out) {
  Scratch s;
  if (!ParseRings(wkb, &s)) return false;

  const std::size_t num_polygons = s.polygon_end.size();
  std::size_t spikes = 0;
  std::vector<Point> ring;
  out->clear();
  out->reserve(wkb.size());
  if (num_polygons > 1) {
    out->push_back('\x01');
    AppendLE<std::uint32_t>(6, out);
    AppendLE<std::uint32_t>(static_cast<std::uint32_t>(num_polygons), out);
  }
  for (std::size_t poly = 0; poly < num_polygons; ++poly) {
    const std::size_t first_ring = s.PolygonBegin(poly);
    out->push_back('\x01');
    AppendLE<std::uint32_t>(3, out);
    AppendLE<std::uint32_t>(static_cast<std::uint32_t>(s.polygon_end[poly] - first_ring), out);
    for (std::size_t r = first_ring; r < s.polygon_end[poly]; ++r) {
      const std::uint32_t begin = s.RingBegin(r);
      ring.clear();
      if (!AppendDespiked(s.points.data() + begin, s.ring_end[r] - begin, &ring, &spikes)) {
        return false;  // the ring collapses: GEOS decides what remains
      }
      AppendLE<std::uint32_t>(static_cast<std::uint32_t>(ring.size()), out);
      for (const Point& point : ring) PutPoint(point, out);
    }
  }
  // Without a spike the input was not made invalid by one (repeated points alone are valid).
  return spikes > 0 &&
         ProvablyValidPolygon({reinterpret_cast<const std::uint8_t*>(out->data()), out->size()});
}

}  // namespace geolake::geo
