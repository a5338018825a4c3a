// Coverage simplification on arcs (coverage_simplify.h has the rules).
#include "geolake/ops/coverage_simplify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "geolake/geo/strtree.h"

namespace geolake::ops {
namespace {

using geo::FlatGeometry;
using geo::GeometryType;

struct P {
  double x = 0, y = 0;
};
bool operator==(P a, P b) { return a.x == b.x && a.y == b.y; }
bool Less(P a, P b) { return a.x < b.x || (a.x == b.x && a.y < b.y); }

std::uint64_t Bits(double d) {
  d += 0.0;  // -0.0 becomes +0.0: equal coordinates hash alike
  std::uint64_t u = 0;
  std::memcpy(&u, &d, sizeof(u));
  return u;
}
std::uint64_t Mix(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
struct PHash {
  std::size_t operator()(P p) const { return Mix(Bits(p.x) * 0x9E3779B97F4A7C15ULL ^ Bits(p.y)); }
};
// A segment with its ends in order (undirected: a <= b), or directed (a = from).
struct Seg {
  P a, b;
};
bool operator==(const Seg& s, const Seg& t) { return s.a == t.a && s.b == t.b; }
struct SegHash {
  std::size_t operator()(const Seg& s) const { return Mix(PHash{}(s.a) * 31 + PHash{}(s.b)); }
};
Seg Undirected(P a, P b) { return Less(b, a) ? Seg{b, a} : Seg{a, b}; }
bool SegLess(const Seg& s, const Seg& t) {
  if (!(s.a == t.a)) return Less(s.a, t.a);
  return Less(s.b, t.b);
}

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The rings using an edge: how many traversals, and the first two rings' ids.
struct SegInfo {
  std::int32_t uses = 0;
  std::uint32_t r1 = kNone, r2 = kNone;
};

struct Ring {
  std::uint32_t geom = 0;
  std::uint32_t ring = 0;   // index into the geometry's rings
  std::uint32_t start = 0;  // first coordinate in `xy`
  std::uint32_t n = 0;      // distinct vertices (the closing one not counted)
  bool ok = false;          // closed, >= 3 distinct positions: simplified
};

// One traversal of an arc by a ring: from ring position `a`, `m` points.
struct Use {
  std::uint32_t arc = 0;
  bool reversed = false;
  std::uint32_t a = 0;
  std::uint32_t m = 0;
};

struct Arc {
  std::vector<P> pts;
  std::vector<std::uint8_t> keep;
  bool closed = false;
  bool restored = false;
  int uses = 0;
};

double Dist2(P a, P b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}

// Distance from p to the segment a-b (to a when a == b), as GEOS's Douglas-Peucker measures.
double SegmentDistance(P p, P a, P b) {
  if (a == b) return std::sqrt(Dist2(p, a));
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double t = ((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy);
  if (t <= 0) return std::sqrt(Dist2(p, a));
  if (t >= 1) return std::sqrt(Dist2(p, b));
  return std::sqrt(Dist2(p, P{a.x + t * dx, a.y + t * dy}));
}

// Douglas-Peucker on pts[i..j], ends kept: a vertex stays when it is farther than the
// tolerance from the chord of its section (GEOS's rule, DouglasPeuckerLineSimplifier).
void DouglasPeucker(const std::vector<P>& pts, std::size_t i, std::size_t j, double tolerance,
                    std::vector<std::uint8_t>* keep) {
  (*keep)[i] = 1;
  (*keep)[j] = 1;
  std::vector<std::pair<std::size_t, std::size_t>> stack{{i, j}};
  while (!stack.empty()) {
    const auto [a, b] = stack.back();
    stack.pop_back();
    if (b <= a + 1) continue;
    double worst = -1;
    std::size_t k = a;
    for (std::size_t t = a + 1; t < b; ++t) {
      const double d = SegmentDistance(pts[t], pts[a], pts[b]);
      if (d > worst) {
        worst = d;
        k = t;
      }
    }
    if (worst > tolerance) {
      (*keep)[k] = 1;
      stack.push_back({a, k});
      stack.push_back({k, b});
    }
  }
}

void SimplifyArc(Arc* arc, double tolerance) {
  const std::size_t m = arc->pts.size();
  arc->keep.assign(m, 0);
  if (!arc->closed) {
    DouglasPeucker(arc->pts, 0, m - 1, tolerance, &arc->keep);
    return;
  }
  // A closed arc: cut at its vertex farthest from the start, simplify both halves, and keep
  // at least 3 distinct vertices (a ring of one arc must stay a ring).
  std::size_t far = 0;
  double best = -1;
  for (std::size_t t = 1; t + 1 < m; ++t) {
    const double d = Dist2(arc->pts[t], arc->pts[0]);
    if (d > best) {
      best = d;
      far = t;
    }
  }
  if (far == 0) {
    arc->keep.assign(m, 1);
    return;
  }
  DouglasPeucker(arc->pts, 0, far, tolerance, &arc->keep);
  DouglasPeucker(arc->pts, far, m - 1, tolerance, &arc->keep);
  std::size_t distinct = 0;
  for (std::size_t t = 0; t + 1 < m; ++t) distinct += arc->keep[t];
  if (distinct < 3) {
    std::size_t third = 0;
    double worst = -1;
    for (std::size_t t = 1; t + 1 < m; ++t) {
      if (arc->keep[t] != 0) continue;
      const double d = SegmentDistance(arc->pts[t], arc->pts[0], arc->pts[far]);
      if (d > worst) {
        worst = d;
        third = t;
      }
    }
    if (third != 0) arc->keep[third] = 1;
  }
}

// Sign of the turn a -> b -> c (exact enough for input coordinates; 0 = collinear).
int Orient(P a, P b, P c) {
  const double v = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
  return v > 0 ? 1 : (v < 0 ? -1 : 0);
}
bool OnSegment(P p, P a, P b) {  // p collinear with a-b: within its box
  return std::min(a.x, b.x) <= p.x && p.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= p.y &&
         p.y <= std::max(a.y, b.y);
}

// True when segments a-b and c-d meet anywhere but at one shared end point.
bool SegmentsConflict(P a, P b, P c, P d) {
  const int shared = (a == c) + (a == d) + (b == c) + (b == d);
  if (shared >= 2) return true;  // the same edge twice (or a degenerate one)
  if (shared == 1) {
    // They meet at the shared end; they conflict only when they overlap along a line.
    const P s = (a == c || a == d) ? a : b;
    const P u = s == a ? b : a;
    const P v = s == c ? d : c;
    if (Orient(s, u, v) != 0) return false;
    return (u.x - s.x) * (v.x - s.x) + (u.y - s.y) * (v.y - s.y) > 0;
  }
  const int o1 = Orient(a, b, c), o2 = Orient(a, b, d);
  const int o3 = Orient(c, d, a), o4 = Orient(c, d, b);
  if (o1 != o2 && o3 != o4 && o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0) return true;
  if (o1 == 0 && OnSegment(c, a, b)) return true;
  if (o2 == 0 && OnSegment(d, a, b)) return true;
  if (o3 == 0 && OnSegment(a, c, d)) return true;
  if (o4 == 0 && OnSegment(b, c, d)) return true;
  return o1 != o2 && o3 != o4 && o1 * o2 < 0 && o3 * o4 < 0;
}

// Inside or on the boundary of the closed path pts[i..j] + chord (crossing number).
bool InSection(P q, const std::vector<P>& pts, std::size_t i, std::size_t j) {
  bool inside = false;
  for (std::size_t t = i; t <= j; ++t) {
    const P a = pts[t];
    const P b = t == j ? pts[i] : pts[t + 1];
    if (Orient(a, b, q) == 0 && OnSegment(q, a, b)) return true;
    if ((a.y > q.y) != (b.y > q.y)) {
      const double x = a.x + (q.y - a.y) * (b.x - a.x) / (b.y - a.y);
      if (x > q.x) inside = !inside;
    }
  }
  return inside;
}

geo::Envelope Box(P a, P b) {
  geo::Envelope e;
  e.Expand(a.x, a.y);
  e.Expand(b.x, b.y);
  return e;
}

class Coverage {
 public:
  Coverage(std::vector<FlatGeometry>* geoms, double tolerance, CoverageStats* stats,
           std::stop_token stop)
      : geoms_(*geoms), tolerance_(tolerance), stats_(*stats), stop_(std::move(stop)) {}

  Status Run(const CoverageGeometryCheck& check);

 private:
  Status Cancelled() const {
    return stop_.stop_requested() ? Status::Cancelled("simplify --coverage: stopped")
                                  : Status::OK();
  }
  P At(const Ring& r, std::uint32_t pos) const { return xy_[r.start + pos % r.n]; }
  void CollectRings();
  void FindNodes();
  Status BuildArcs();
  // Checks; add the arcs to restore to `restore`.
  void CheckRings(std::vector<std::uint8_t>* restore);
  Status CheckEdges(std::vector<std::uint8_t>* restore);
  Status CheckSections(std::vector<std::uint8_t>* restore);
  void Flag(std::uint32_t arc, std::vector<std::uint8_t>* restore) {
    if (!arcs_[arc].restored) (*restore)[arc] = 1;
  }
  FlatGeometry Rebuild(std::size_t g) const;

  std::vector<FlatGeometry>& geoms_;
  double tolerance_;
  CoverageStats& stats_;
  std::stop_token stop_;

  std::vector<P> xy_;
  std::vector<Ring> rings_;
  // rings of geometry g: ring_of_[g][k] = our ring id of its k-th ring, or kNone.
  std::vector<std::vector<std::uint32_t>> ring_of_;
  std::unordered_set<P, PHash> nodes_;
  std::vector<std::vector<Use>> uses_;  // per ring, in ring order from its first node
  std::vector<Arc> arcs_;
};

void Coverage::CollectRings() {
  ring_of_.resize(geoms_.size());
  for (std::size_t g = 0; g < geoms_.size(); ++g) {
    const FlatGeometry& fg = geoms_[g];
    const GeometryType type = fg.type();
    if (type != GeometryType::kPolygon && type != GeometryType::kMultiPolygon) continue;
    ring_of_[g].assign(fg.rings.size(), kNone);
    const int stride = fg.stride();
    for (std::size_t k = 0; k < fg.rings.size(); ++k) {
      const geo::GeometryRing& gr = fg.rings[k];
      stats_.vertices_in += gr.count;
      Ring r;
      r.geom = static_cast<std::uint32_t>(g);
      r.ring = static_cast<std::uint32_t>(k);
      r.start = static_cast<std::uint32_t>(xy_.size());
      for (std::uint32_t t = 0; t < gr.count; ++t) {
        const double* c = fg.coords.data() + (static_cast<std::size_t>(gr.offset) + t) * stride;
        xy_.push_back(P{c[0] + 0.0, c[1] + 0.0});
      }
      if (gr.count >= 4 && xy_[r.start] == xy_.back()) {
        xy_.pop_back();  // the closing point
        r.n = gr.count - 1;
        r.ok = true;
      } else {
        r.n = gr.count;
        r.ok = false;  // not a ring we can simplify: every vertex is a node, kept as it is
      }
      ring_of_[g][k] = static_cast<std::uint32_t>(rings_.size());
      rings_.push_back(r);
    }
  }
  stats_.rings = static_cast<std::int64_t>(rings_.size());
}

void Coverage::FindNodes() {
  std::unordered_map<P, std::int32_t, PHash> occ;
  std::unordered_map<Seg, SegInfo, SegHash> edges;
  occ.reserve(xy_.size());
  edges.reserve(xy_.size());
  for (std::uint32_t id = 0; id < rings_.size(); ++id) {
    const Ring& r = rings_[id];
    for (std::uint32_t t = 0; t < r.n; ++t) {
      ++occ[At(r, t)];
      if (!r.ok) {
        nodes_.insert(At(r, t));
        continue;
      }
      SegInfo& e = edges[Undirected(At(r, t), At(r, t + 1))];
      ++e.uses;
      if (e.r1 == kNone) {
        e.r1 = id;
      } else if (e.r2 == kNone) {
        e.r2 = id;
      }
    }
  }
  auto ring_set = [](const SegInfo& e) { return std::minmax(e.r1, e.r2); };
  for (std::uint32_t id = 0; id < rings_.size(); ++id) {
    const Ring& r = rings_[id];
    if (!r.ok) continue;
    for (std::uint32_t t = 0; t < r.n; ++t) {
      const P v = At(r, t);
      const SegInfo& before = edges.at(Undirected(At(r, t + r.n - 1), v));
      const SegInfo& after = edges.at(Undirected(v, At(r, t + 1)));
      const std::int32_t n = occ.at(v);
      const bool interior =
          before.uses == n && after.uses == n && n <= 2 && ring_set(before) == ring_set(after);
      if (!interior) nodes_.insert(v);
    }
  }
  stats_.nodes = static_cast<std::int64_t>(nodes_.size());
}

Status Coverage::BuildArcs() {
  std::unordered_map<Seg, std::uint32_t, SegHash> by_key;  // directed first edge -> arc
  uses_.resize(rings_.size());
  for (std::uint32_t id = 0; id < rings_.size(); ++id) {
    const Ring& r = rings_[id];
    if (!r.ok) continue;
    std::vector<std::uint32_t> cuts;
    for (std::uint32_t t = 0; t < r.n; ++t) {
      if (nodes_.contains(At(r, t))) cuts.push_back(t);
    }
    if (cuts.empty()) {
      // No node: one closed arc from the ring's smallest vertex.
      std::uint32_t best = 0;
      for (std::uint32_t t = 1; t < r.n; ++t) {
        if (Less(At(r, t), At(r, best))) best = t;
      }
      cuts.push_back(best);
      ++stats_.fixed_points;
    }
    for (std::size_t c = 0; c < cuts.size(); ++c) {
      const std::uint32_t a = cuts[c];
      const std::uint32_t b = c + 1 < cuts.size() ? cuts[c + 1] : cuts[0] + r.n;
      const std::uint32_t m = b - a + 1;
      const Seg forward{At(r, a), At(r, a + 1)};
      const Seg backward{At(r, b), At(r, b - 1)};
      const bool reversed = SegLess(backward, forward);
      const Seg key = reversed ? backward : forward;
      auto [it, inserted] = by_key.try_emplace(key, static_cast<std::uint32_t>(arcs_.size()));
      if (inserted) {
        Arc arc;
        arc.pts.reserve(m);
        for (std::uint32_t t = 0; t < m; ++t) {
          arc.pts.push_back(reversed ? At(r, b - t) : At(r, a + t));
        }
        arc.closed = arc.pts.front() == arc.pts.back();
        arcs_.push_back(std::move(arc));
      }
      Arc& arc = arcs_[it->second];
      // The same first edge from the same node: the same arc (its inner vertices are no
      // nodes, so both rings follow it to the same end). Check it rather than trust it.
      bool same = arc.pts.size() == m;
      for (std::uint32_t t = 0; same && t < m; ++t) {
        same = arc.pts[t] == (reversed ? At(r, b - t) : At(r, a + t));
      }
      if (!same) {
        return Status::Internal("simplify --coverage: two rings disagree on an arc");
      }
      ++arc.uses;
      uses_[id].push_back(Use{it->second, reversed, a, m});
    }
    GEOLAKE_RETURN_NOT_OK(Cancelled());
  }
  stats_.arcs = static_cast<std::int64_t>(arcs_.size());
  for (const Arc& arc : arcs_) stats_.shared_arcs += arc.uses >= 2 ? 1 : 0;
  return Status::OK();
}

void Coverage::CheckRings(std::vector<std::uint8_t>* restore) {
  for (std::uint32_t id = 0; id < rings_.size(); ++id) {
    if (!rings_[id].ok) continue;
    std::int64_t distinct = 0;
    for (const Use& u : uses_[id]) {
      const Arc& arc = arcs_[u.arc];
      for (std::size_t t = 0; t + 1 < arc.keep.size(); ++t) distinct += arc.keep[t];
    }
    if (distinct >= 3) continue;
    for (const Use& u : uses_[id]) Flag(u.arc, restore);
  }
}

Status Coverage::CheckEdges(std::vector<std::uint8_t>* restore) {
  // Every simplified edge: (arc, first kept index, next kept index).
  struct Edge {
    std::uint32_t arc;
    std::uint32_t i, j;
  };
  std::vector<Edge> edges;
  std::vector<geo::StrTree::Item> items;
  for (std::uint32_t a = 0; a < arcs_.size(); ++a) {
    const Arc& arc = arcs_[a];
    std::uint32_t prev = 0;
    for (std::uint32_t t = 1; t < arc.pts.size(); ++t) {
      if (arc.keep[t] == 0) continue;
      items.push_back({Box(arc.pts[prev], arc.pts[t]), static_cast<std::int64_t>(edges.size())});
      edges.push_back({a, prev, t});
      prev = t;
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::StrTree tree, geo::StrTree::Build(std::move(items)));
  for (std::size_t e = 0; e < edges.size(); ++e) {
    if ((e & 4095) == 0) GEOLAKE_RETURN_NOT_OK(Cancelled());
    const Edge& x = edges[e];
    const Arc& ax = arcs_[x.arc];
    const P a = ax.pts[x.i], b = ax.pts[x.j];
    tree.Query(Box(a, b), [&](std::int64_t other) {
      if (other <= static_cast<std::int64_t>(e)) return;
      const Edge& y = edges[static_cast<std::size_t>(other)];
      const Arc& ay = arcs_[y.arc];
      const P c = ay.pts[y.i], d = ay.pts[y.j];
      // (Consecutive edges of one arc share a vertex, which is no conflict unless they fold
      // back on each other.)
      if (!SegmentsConflict(a, b, c, d)) return;
      if (ax.restored && ay.restored) {
        ++stats_.input_conflicts;
        return;
      }
      Flag(x.arc, restore);
      Flag(y.arc, restore);
    });
  }
  return Status::OK();
}

Status Coverage::CheckSections(std::vector<std::uint8_t>* restore) {
  std::vector<geo::StrTree::Item> items;
  std::vector<P> points;
  for (const Arc& arc : arcs_) {
    for (std::size_t t = 0; t < arc.pts.size(); ++t) {
      if (arc.keep[t] == 0) continue;
      items.push_back({Box(arc.pts[t], arc.pts[t]), static_cast<std::int64_t>(points.size())});
      points.push_back(arc.pts[t]);
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::StrTree tree, geo::StrTree::Build(std::move(items)));
  for (std::uint32_t a = 0; a < arcs_.size(); ++a) {
    if ((a & 1023) == 0) GEOLAKE_RETURN_NOT_OK(Cancelled());
    const Arc& arc = arcs_[a];
    if (arc.restored) continue;
    std::size_t prev = 0;
    bool bad = false;
    for (std::size_t t = 1; t < arc.pts.size() && !bad; ++t) {
      if (arc.keep[t] == 0) continue;
      if (t > prev + 1) {
        geo::Envelope box;
        for (std::size_t s = prev; s <= t; ++s) box.Expand(arc.pts[s].x, arc.pts[s].y);
        const P from = arc.pts[prev], to = arc.pts[t];
        tree.Query(box, [&](std::int64_t id) {
          if (bad) return;
          const P q = points[static_cast<std::size_t>(id)];
          if (q == from || q == to) return;
          if (InSection(q, arc.pts, prev, t)) bad = true;
        });
      }
      prev = t;
    }
    if (bad) Flag(a, restore);
  }
  return Status::OK();
}

FlatGeometry Coverage::Rebuild(std::size_t g) const {
  const FlatGeometry& in = geoms_[g];
  FlatGeometry out;
  out.dims = in.dims;
  out.parts = in.parts;
  out.rings = in.rings;
  const std::size_t stride = static_cast<std::size_t>(in.stride());
  out.coords.reserve(in.coords.size());
  for (std::size_t k = 0; k < in.rings.size(); ++k) {
    const geo::GeometryRing& gr = in.rings[k];
    const std::uint32_t id = ring_of_[g][k];
    const std::size_t first = out.coords.size() / stride;
    auto emit = [&](std::uint32_t pos) {
      const double* c = in.coords.data() + (static_cast<std::size_t>(gr.offset) + pos) * stride;
      out.coords.insert(out.coords.end(), c, c + stride);
    };
    if (id == kNone || !rings_[id].ok) {
      for (std::uint32_t t = 0; t < gr.count; ++t) emit(t);
    } else {
      const Ring& r = rings_[id];
      std::vector<std::uint32_t> kept;
      for (const Use& u : uses_[id]) {
        const Arc& arc = arcs_[u.arc];
        for (std::uint32_t t = 0; t + 1 < u.m; ++t) {
          const std::uint32_t index = u.reversed ? u.m - 1 - t : t;
          if (arc.keep[index] != 0) kept.push_back((u.a + t) % r.n);
        }
      }
      // Start where the input ring starts when that vertex stays, else at its first node.
      const auto start = std::find(kept.begin(), kept.end(), 0u);
      if (start != kept.end()) std::rotate(kept.begin(), start, kept.end());
      for (const std::uint32_t pos : kept) emit(pos);
      emit(kept.front());  // close the ring
    }
    out.rings[k].offset = static_cast<std::uint32_t>(first);
    out.rings[k].count = static_cast<std::uint32_t>(out.coords.size() / stride - first);
  }
  return out;
}

Status Coverage::Run(const CoverageGeometryCheck& check) {
  CollectRings();
  GEOLAKE_RETURN_NOT_OK(Cancelled());
  FindNodes();
  GEOLAKE_RETURN_NOT_OK(Cancelled());
  GEOLAKE_RETURN_NOT_OK(BuildArcs());
  for (Arc& arc : arcs_) SimplifyArc(&arc, tolerance_);
  // Arcs per geometry, for restoring a geometry the caller's check rejects.
  std::vector<std::uint8_t> settled(geoms_.size(), 0);
  for (;;) {
    ++stats_.check_rounds;
    std::vector<std::uint8_t> restore(arcs_.size(), 0);
    CheckRings(&restore);
    GEOLAKE_RETURN_NOT_OK(CheckEdges(&restore));
    GEOLAKE_RETURN_NOT_OK(CheckSections(&restore));
    bool any = std::find(restore.begin(), restore.end(), 1) != restore.end();
    if (!any && check) {
      for (std::size_t g = 0; g < geoms_.size(); ++g) {
        if (ring_of_[g].empty() || settled[g] != 0) continue;
        if ((g & 255) == 0) GEOLAKE_RETURN_NOT_OK(Cancelled());
        GEOLAKE_ASSIGN_OR_RETURN(bool fine, check(g, Rebuild(g)));
        if (fine) continue;
        bool restored_any = false;
        for (const std::uint32_t id : ring_of_[g]) {
          if (id == kNone) continue;
          for (const Use& u : uses_[id]) {
            if (!arcs_[u.arc].restored) {
              restore[u.arc] = 1;
              restored_any = true;
            }
          }
        }
        if (!restored_any) settled[g] = 1;  // as good as the input: accepted
      }
      any = std::find(restore.begin(), restore.end(), 1) != restore.end();
    }
    if (!any) break;
    for (std::size_t a = 0; a < arcs_.size(); ++a) {
      if (restore[a] == 0) continue;
      arcs_[a].keep.assign(arcs_[a].pts.size(), 1);
      arcs_[a].restored = true;
      ++stats_.arcs_restored;
    }
    GEOLAKE_RETURN_NOT_OK(Cancelled());
  }
  for (std::size_t g = 0; g < geoms_.size(); ++g) {
    if (ring_of_[g].empty()) continue;
    geoms_[g] = Rebuild(g);
    for (const geo::GeometryRing& gr : geoms_[g].rings) stats_.vertices_out += gr.count;
  }
  return Status::OK();
}

}  // namespace

Status SimplifyCoverage(std::vector<geo::FlatGeometry>* geometries, double tolerance,
                        CoverageStats* stats, std::stop_token stop,
                        const CoverageGeometryCheck& check) {
  if (!(tolerance >= 0) || !std::isfinite(tolerance)) {
    return Status::InvalidArgument("simplify: --tolerance must be a finite number >= 0");
  }
  *stats = CoverageStats{};
  Coverage coverage(geometries, tolerance, stats, std::move(stop));
  return coverage.Run(check);
}

}  // namespace geolake::ops
