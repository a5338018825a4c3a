// Geometry::MakeValid: GEOS's "structure" repair, with a shortcut for multipolygons.
//
// GEOS repairs a MultiPolygon by repairing each part on its own and then unioning all the
// repaired parts. On large multipolygons the union is nearly all of the cost: for the 52
// invalid countries of Natural Earth 10m it is ~2 of the ~2.1 s, while the few broken parts
// (a ring touching itself, a spike) take ~0.15 s to repair. The union of parts that do not
// overlap one another is just their collection, so:
//   1. repair only the parts GEOS calls invalid (each with the same GEOS structure repair) and
//      keep the valid parts as they are;
//   2. find the parts that intersect one another (touch or overlap; candidates from their
//      bounding boxes, tested with GEOS) and union only those groups, unless a group is a
//      valid MultiPolygon as it is (parts touching at points); the other parts are already
//      disjoint, so their union is themselves;
//   3. assemble: valid, since every part or group is valid (checked by GEOS, or GEOS's own
//      repair) and no two groups intersect. When a repaired part is not polygonal, a union
//      is not valid, or nothing is left, repair the whole geometry with GEOS as before (and
//      so for a multipolygon with an empty part).
// The answer covers the same point set as GEOS's own repair (MakeValidTest checks validity and
// compares them on real data: GEOSEquals, or a symmetric difference of last-bit noise where a
// group union computes crossing points in another order); vertex order and the order of
// parts may differ. Polygons and other types go straight to GEOS.
//
// Geometry::RepairIfInvalid uses the same steps to decide validity as well: when no part needed
// a repair and no group a union, the input was valid, and GEOS never checked the whole (the
// ingest's caller would otherwise run GEOSisValid on the whole first, then repair). It also
// judges a part from its WKB when it can: ProvablyValidPolygon proves most parts valid, and
// CertainlyInvalidPolygon finds the parts whose ring passes twice through a vertex, without
// GEOS's noding.
#include "geolake/geo/make_valid.h"

#include <geos_c.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <stop_token>
#include <vector>

#include "geolake/geo/geo_context_internal.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/ring_repair_internal.h"
#include "geolake/geo/validity_fast_path.h"

namespace geolake::geo {
namespace {

using internal::GeosCall;

// Owns one raw GEOS geometry.
struct GeomDeleter {
  GEOSContextHandle_t h;
  void operator()(GEOSGeometry* g) const { GEOSGeom_destroy_r(h, g); }
};
using GeomPtr = std::unique_ptr<GEOSGeometry, GeomDeleter>;

// The "no shortcut answer" result: the caller falls back to GEOS's whole repair.
GeomPtr NoAnswer(GEOSContextHandle_t h) { return GeomPtr(nullptr, GeomDeleter{h}); }

// The structure repair of one geometry, dropping collapsed parts: GEOS on the whole.
GEOSGeometry* GeosStructureRepair(GEOSContextHandle_t h, const GEOSGeometry* g) {
  GEOSMakeValidParams* p = GEOSMakeValidParams_create_r(h);
  if (p == nullptr) return nullptr;
  GEOSGeometry* out = nullptr;
  if (GEOSMakeValidParams_setMethod_r(h, p, GEOS_MAKE_VALID_STRUCTURE) != 0 &&
      GEOSMakeValidParams_setKeepCollapsed_r(h, p, 0) != 0) {
    out = GEOSMakeValidWithParams_r(h, g, p);
  }
  GEOSMakeValidParams_destroy_r(h, p);
  return out;
}

// The structure repair of one geometry, dropping collapsed parts. A polygonal geometry of at
// least MakeValidOptions' default ring_level_min_vertices is repaired ring by ring
// (ring_repair.cc: a giant polygon of 1.2M vertices in seconds instead of minutes) on this
// thread - an ingest worker is one of many already - and that answer is used only when GEOS
// finds what it rebuilt valid (checked inside); otherwise, or when the ring-level path has no
// answer, GEOS repairs the whole.
// `stop` is the context's token, so a stop inside the ring-level path ends as the caller's
// failure check reports it (kCancelled).
GEOSGeometry* StructureRepair(GEOSContextHandle_t h, const GEOSGeometry* g,
                              const std::stop_token& stop) {
  const int type = GEOSGeomTypeId_r(h, g);
  const MakeValidOptions defaults;
  if ((type == GEOS_POLYGON || type == GEOS_MULTIPOLYGON) &&
      GEOSGetNumCoordinates_r(h, g) >= defaults.ring_level_min_vertices) {
    MakeValidOptions options;
    options.params = {MakeValidMethod::kStructure, false};
    options.stop = stop;
    Status error;
    GeomPtr by_rings(internal::RingLevelRepair(h, g, options, nullptr, &error), GeomDeleter{h});
    if (error.code() == ErrorCode::kCancelled) return nullptr;
    // Validity is checked by RingLevelRepair itself (GEOSisValid of what it rebuilt).
    if (by_rings != nullptr && GEOSGeomTypeId_r(h, by_rings.get()) != GEOS_GEOMETRYCOLLECTION) {
      return by_rings.release();
    }
    if (stop.stop_requested()) return nullptr;
  }
  return GeosStructureRepair(h, g);
}

// Appends clones of the non-empty polygons of `g` (a Polygon or MultiPolygon) to `out`.
// False when `g` holds anything else: the caller then leaves the work to GEOS.
bool AppendPolygons(GEOSContextHandle_t h, const GEOSGeometry* g, std::vector<GeomPtr>* out) {
  const int type = GEOSGeomTypeId_r(h, g);
  if (type == GEOS_POLYGON) {
    if (GEOSisEmpty_r(h, g) == 1) return true;
    GEOSGeometry* copy = GEOSGeom_clone_r(h, g);
    if (copy == nullptr) return false;
    out->emplace_back(copy, GeomDeleter{h});
    return true;
  }
  if (type != GEOS_MULTIPOLYGON) return false;
  const int n = GEOSGetNumGeometries_r(h, g);
  for (int i = 0; i < n; ++i) {
    if (!AppendPolygons(h, GEOSGetGeometryN_r(h, g, i), out)) return false;
  }
  return true;
}

// A MultiPolygon of `polygons` (consumed), or the one Polygon when there is only one (as
// GEOS's union returns it). Null on failure.
GeomPtr Assemble(GEOSContextHandle_t h, std::vector<GeomPtr> polygons) {
  if (polygons.size() == 1) return std::move(polygons[0]);
  std::vector<GEOSGeometry*> raw;
  raw.reserve(polygons.size());
  for (GeomPtr& p : polygons) raw.push_back(p.release());
  GEOSGeometry* multi = GEOSGeom_createCollection_r(h, GEOS_MULTIPOLYGON, raw.data(),
                                                    static_cast<unsigned>(raw.size()));
  return GeomPtr(multi, GeomDeleter{h});
}

struct Box {
  double xmin, ymin, xmax, ymax;
};

std::optional<Box> BoxOf(GEOSContextHandle_t h, const GEOSGeometry* g) {
  Box b{};
  if (GEOSGeom_getXMin_r(h, g, &b.xmin) == 0 || GEOSGeom_getYMin_r(h, g, &b.ymin) == 0 ||
      GEOSGeom_getXMax_r(h, g, &b.xmax) == 0 || GEOSGeom_getYMax_r(h, g, &b.ymax) == 0) {
    return std::nullopt;
  }
  return b;
}

struct PreparedDeleter {
  GEOSContextHandle_t h;
  void operator()(const GEOSPreparedGeometry* g) const { GEOSPreparedGeom_destroy_r(h, g); }
};
using PreparedPtr = std::unique_ptr<const GEOSPreparedGeometry, PreparedDeleter>;

// Groups `polygons` into sets that intersect (touch or overlap, directly or through a chain),
// unions each set of two or more that is not a valid MultiPolygon as it is, and assembles
// everything. Candidate pairs come from a sweep over the bounding boxes; a pair is tested with
// the larger part prepared (one mainland box may hold hundreds of islands that touch nothing).
// Sets `*unioned` when some set needed its union. Null when GEOS fails or a union is not
// polygonal.
GeomPtr UnionIntersectingGroups(GEOSContextHandle_t h, std::vector<GeomPtr> polygons,
                                bool* unioned) {
  const std::size_t n = polygons.size();
  std::vector<Box> boxes;
  boxes.reserve(n);
  for (const GeomPtr& p : polygons) {
    std::optional<Box> b = BoxOf(h, p.get());
    if (!b) return NoAnswer(h);
    boxes.push_back(*b);
  }
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  const auto find = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::vector<PreparedPtr> prepared(n);
  const auto area = [&](std::size_t i) {
    return (boxes[i].xmax - boxes[i].xmin) * (boxes[i].ymax - boxes[i].ymin);
  };
  // Sweep along x: a part can only meet the earlier parts whose x-range is still open.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return boxes[a].xmin < boxes[b].xmin; });
  std::vector<std::size_t> open;
  for (std::size_t i : order) {
    const Box& bi = boxes[i];
    std::erase_if(open, [&](std::size_t j) { return boxes[j].xmax < bi.xmin; });
    for (std::size_t j : open) {
      if (boxes[j].ymin > bi.ymax || bi.ymin > boxes[j].ymax) continue;
      if (find(i) == find(j)) continue;
      const std::size_t big = area(i) >= area(j) ? i : j;
      const std::size_t small = big == i ? j : i;
      if (prepared[big] == nullptr) {
        prepared[big] = PreparedPtr(GEOSPrepare_r(h, polygons[big].get()), PreparedDeleter{h});
        if (prepared[big] == nullptr) return NoAnswer(h);
      }
      const char meets = GEOSPreparedIntersects_r(h, prepared[big].get(), polygons[small].get());
      if (meets == 2) return NoAnswer(h);
      if (meets == 1) parent[find(i)] = find(j);
    }
    open.push_back(i);
  }
  prepared.clear();  // they refer to `polygons`, which the groups below consume
  std::vector<std::vector<GeomPtr>> groups(n);
  for (std::size_t i = 0; i < n; ++i) groups[find(i)].push_back(std::move(polygons[i]));
  std::vector<GeomPtr> result;
  for (std::vector<GeomPtr>& group : groups) {
    if (group.empty()) continue;
    if (group.size() == 1) {
      result.push_back(std::move(group[0]));
      continue;
    }
    GeomPtr collection = Assemble(h, std::move(group));
    if (collection == nullptr) return NoAnswer(h);
    // Parts that only touch at points (the pieces of one repaired ring, an island on a
    // mainland's corner) are a valid MultiPolygon already; GEOS's union would return them.
    const char valid = GEOSisValid_r(h, collection.get());
    if (valid == 2) return NoAnswer(h);
    if (valid == 1) {
      if (!AppendPolygons(h, collection.get(), &result)) return NoAnswer(h);
      continue;
    }
    *unioned = true;
    GeomPtr merged(GEOSUnaryUnion_r(h, collection.get()), GeomDeleter{h});
    if (merged == nullptr || GEOSisValid_r(h, merged.get()) != 1 ||
        !AppendPolygons(h, merged.get(), &result)) {
      return NoAnswer(h);
    }
  }
  if (result.empty()) return NoAnswer(h);
  return Assemble(h, std::move(result));
}

// Whether `g` takes the parts' path (steps 1-3): a MultiPolygon of two or more parts, none of
// them empty (the parts' answer drops an empty part, so it would differ from a valid input).
bool RepairedByParts(GEOSContextHandle_t h, const GEOSGeometry* g) {
  if (GEOSGeomTypeId_r(h, g) != GEOS_MULTIPOLYGON) return false;
  const int n = GEOSGetNumGeometries_r(h, g);
  if (n < 2) return false;
  for (int i = 0; i < n; ++i) {
    const GEOSGeometry* part = GEOSGetGeometryN_r(h, g, i);
    if (part == nullptr || GEOSisEmpty_r(h, part) != 0) return false;
  }
  return true;
}

// Steps 1-3 of the file comment for a MultiPolygon; null when GEOS should repair the whole.
// `members`: the WKB of each part (MultiPolygonMembers), or empty; a part ProvablyValidPolygon
// proves valid, or CertainlyInvalidPolygon invalid, skips GEOSisValid. `*changed` stays false when
// no part needed a repair and no group a union: then the input itself is valid (every part valid,
// every group of parts that meet a valid MultiPolygon, no two groups meet), and the answer is just
// its non-empty parts.
GeomPtr RepairByParts(GEOSContextHandle_t h, const GEOSGeometry* multi,
                      std::span<const std::span<const std::uint8_t>> members, bool* changed,
                      const std::stop_token& stop) {
  const int n = GEOSGetNumGeometries_r(h, multi);
  if (!members.empty() && members.size() != static_cast<std::size_t>(n)) return NoAnswer(h);
  std::vector<GeomPtr> polygons;
  polygons.reserve(static_cast<std::size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) {
    const GEOSGeometry* part = GEOSGetGeometryN_r(h, multi, i);
    if (part == nullptr) return NoAnswer(h);
    char valid = 2;
    if (!members.empty() && ProvablyValidPolygon(members[i])) {
      valid = 1;
    } else if (!members.empty() && CertainlyInvalidPolygon(members[i])) {
      valid = 0;
    } else {
      valid = GEOSisValid_r(h, part);
    }
    if (valid == 2) return NoAnswer(h);
    if (valid == 1) {
      if (!AppendPolygons(h, part, &polygons)) return NoAnswer(h);
      continue;
    }
    *changed = true;
    GeomPtr repaired(StructureRepair(h, part, stop), GeomDeleter{h});
    if (repaired == nullptr || !AppendPolygons(h, repaired.get(), &polygons)) {
      return NoAnswer(h);
    }
  }
  if (polygons.empty()) return NoAnswer(h);
  // Valid without a last check of the whole: every part or group is valid (checked, or
  // GEOS's own repair) and no two groups intersect.
  return UnionIntersectingGroups(h, std::move(polygons), changed);
}

}  // namespace

GEOSGeometry* internal::UnionIntersectingParts(GEOSContextHandle_t h,
                                               std::vector<GEOSGeometry*> polygons, bool* unioned) {
  std::vector<GeomPtr> owned;
  owned.reserve(polygons.size());
  for (GEOSGeometry* p : polygons) owned.emplace_back(p, GeomDeleter{h});
  if (owned.empty()) return nullptr;
  return UnionIntersectingGroups(h, std::move(owned), unioned).release();
}

Result<Geometry> Geometry::MakeValid() const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("make valid"));
  GEOSContextHandle_t h = call.handle();
  if (RepairedByParts(h, geom_)) {
    bool changed = false;
    GeomPtr by_parts = RepairByParts(h, geom_, {}, &changed, ctx_->stop_token());
    if (by_parts != nullptr) return Geometry(ctx_, by_parts.release());
    // A GEOS failure on the way (interrupt included) is not an answer: fall through, and let
    // the whole repair below report it.
    GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("make valid"));
  }
  GEOSGeometry* g = StructureRepair(h, geom_, ctx_->stop_token());
  if (g == nullptr) return call.Failure("make valid");
  return Geometry(ctx_, g);
}

Result<std::optional<Geometry>> Geometry::RepairIfInvalid(std::span<const uint8_t> wkb) const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("make valid"));
  GEOSContextHandle_t h = call.handle();
  if (RepairedByParts(h, geom_)) {
    std::vector<std::span<const std::uint8_t>> members;
    if (wkb.empty() || !MultiPolygonMembers(wkb, &members)) members.clear();
    bool changed = false;
    GeomPtr by_parts = RepairByParts(h, geom_, members, &changed, ctx_->stop_token());
    if (by_parts != nullptr) {
      if (!changed) return std::optional<Geometry>();
      return std::optional<Geometry>(Geometry(ctx_, by_parts.release()));
    }
    GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("make valid"));
  }
  const char valid = GEOSisValid_r(h, geom_);
  if (valid == 2) return call.Failure("is valid");
  if (valid == 1) return std::optional<Geometry>();
  GEOSGeometry* g = StructureRepair(h, geom_, ctx_->stop_token());
  if (g == nullptr) return call.Failure("make valid");
  return std::optional<Geometry>(Geometry(ctx_, g));
}

}  // namespace geolake::geo

// ---- make_valid.h: GEOS's methods, and the ring-level repair of huge polygons ---------------

namespace geolake::geo {
namespace {

using internal::AdoptGeometry;
using internal::GeometryHandle;
using internal::GeosCall;

struct ParamsDeleter {
  GEOSContextHandle_t h;
  void operator()(GEOSMakeValidParams* p) const { GEOSMakeValidParams_destroy_r(h, p); }
};

// GEOSMakeValidWithParams of `g` in `h`; null on failure.
GEOSGeometry* GeosRepair(GEOSContextHandle_t h, const GEOSGeometry* g,
                         const MakeValidParams& params) {
  std::unique_ptr<GEOSMakeValidParams, ParamsDeleter> p(GEOSMakeValidParams_create_r(h),
                                                        ParamsDeleter{h});
  if (p == nullptr) return nullptr;
  const int method = params.method == MakeValidMethod::kStructure ? GEOS_MAKE_VALID_STRUCTURE
                                                                  : GEOS_MAKE_VALID_LINEWORK;
  if (GEOSMakeValidParams_setMethod_r(h, p.get(), static_cast<GEOSMakeValidMethods>(method)) == 0 ||
      GEOSMakeValidParams_setKeepCollapsed_r(h, p.get(), params.keep_collapsed ? 1 : 0) == 0) {
    return nullptr;
  }
  return GEOSMakeValidWithParams_r(h, g, p.get());
}

// Appends clones of the polygons of `g` (any type, collections flattened) to `out` and counts
// its other non-empty atoms in `*dropped`. False when GEOS fails.
bool CollectPolygons(GEOSContextHandle_t h, const GEOSGeometry* g, std::vector<GEOSGeometry*>* out,
                     std::int64_t* dropped) {
  const int type = GEOSGeomTypeId_r(h, g);
  if (type == GEOS_POLYGON) {
    if (GEOSisEmpty_r(h, g) == 1) return true;
    GEOSGeometry* copy = GEOSGeom_clone_r(h, g);
    if (copy == nullptr) return false;
    out->push_back(copy);
    return true;
  }
  if (type == GEOS_MULTIPOLYGON || type == GEOS_GEOMETRYCOLLECTION || type == GEOS_MULTIPOINT ||
      type == GEOS_MULTILINESTRING) {
    const int n = GEOSGetNumGeometries_r(h, g);
    for (int i = 0; i < n; ++i) {
      if (!CollectPolygons(h, GEOSGetGeometryN_r(h, g, i), out, dropped)) return false;
    }
    return true;
  }
  if (type < 0) return false;
  if (GEOSisEmpty_r(h, g) != 1) ++*dropped;
  return true;
}

}  // namespace

Result<MakeValidMethod> ParseMakeValidMethod(std::string_view text) {
  if (text == "linework") return MakeValidMethod::kLinework;
  if (text == "structure") return MakeValidMethod::kStructure;
  return Status::InvalidArgument("make-valid method '" + std::string(text) +
                                 "': expected linework or structure");
}

std::string_view MakeValidMethodName(MakeValidMethod method) {
  return method == MakeValidMethod::kStructure ? "structure" : "linework";
}

Result<Geometry> GeosMakeValid(const Geometry& geometry, const MakeValidParams& params) {
  GeosCall call(geometry.context().impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("make valid"));
  GEOSGeometry* out = GeosRepair(call.handle(), GeometryHandle(geometry), params);
  if (out == nullptr) return call.Failure("make valid");
  return AdoptGeometry(geometry.context(), out);
}

Result<bool> IsPolygonal(const Geometry& geometry) {
  GeosCall call(geometry.context().impl());
  const int type = GEOSGeomTypeId_r(call.handle(), GeometryHandle(geometry));
  if (type < 0) return call.Failure("geometry type");
  return type == GEOS_POLYGON || type == GEOS_MULTIPOLYGON;
}

Result<Geometry> PolygonalPart(const Geometry& geometry, std::int64_t* dropped_parts) {
  GeosCall call(geometry.context().impl());
  GEOSContextHandle_t h = call.handle();
  const GEOSGeometry* g = GeometryHandle(geometry);
  const int type = GEOSGeomTypeId_r(h, g);
  if (type < 0) return call.Failure("geometry type");
  if (type == GEOS_POLYGON || type == GEOS_MULTIPOLYGON) return geometry.Clone();
  std::vector<GEOSGeometry*> polygons;
  std::int64_t dropped = 0;
  if (!CollectPolygons(h, g, &polygons, &dropped)) {
    for (GEOSGeometry* p : polygons) GEOSGeom_destroy_r(h, p);
    return call.Failure("polygonal part");
  }
  *dropped_parts += dropped;
  if (polygons.size() == 1) return AdoptGeometry(geometry.context(), polygons[0]);
  GEOSGeometry* multi = GEOSGeom_createCollection_r(h, GEOS_MULTIPOLYGON, polygons.data(),
                                                    static_cast<unsigned>(polygons.size()));
  if (multi == nullptr) {
    for (GEOSGeometry* p : polygons) GEOSGeom_destroy_r(h, p);
    return call.Failure("polygonal part");
  }
  return AdoptGeometry(geometry.context(), multi);
}

Result<Geometry> MakeValidWith(const Geometry& geometry, const MakeValidOptions& options,
                               MakeValidStats* stats) {
  MakeValidStats unused;
  MakeValidStats& s = stats != nullptr ? *stats : unused;
  if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled before start");
  {
    GeosCall call(geometry.context().impl());
    GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("make valid"));
    GEOSContextHandle_t h = call.handle();
    const GEOSGeometry* g = GeometryHandle(geometry);
    const int type = GEOSGeomTypeId_r(h, g);
    if (type < 0) return call.Failure("make valid");
    const bool polygonal = type == GEOS_POLYGON || type == GEOS_MULTIPOLYGON;
    if (polygonal && GEOSGetNumCoordinates_r(h, g) >= options.ring_level_min_vertices) {
      MakeValidStats attempt;
      Status error;
      GEOSGeometry* raw = internal::RingLevelRepair(h, g, options, &attempt, &error);
      std::unique_ptr<GEOSGeometry, GeomDeleter> out(raw, GeomDeleter{h});
      if (error.code() == ErrorCode::kCancelled) return error;
      if (options.stop.stop_requested()) return Status::Cancelled("make valid: cancelled");
      if (out != nullptr) {
        // The safety check: the ring-level answer must be polygonal, or for linework a
        // collection of the polygonal answer and the collapsed lines; its validity GEOS has
        // judged inside RingLevelRepair (GEOSisValid of every polygon that holds a repaired
        // ring: the whole would cost O(holes x shell vertices) in GEOS 3.11, ring_repair.cc).
        const int out_type = GEOSGeomTypeId_r(h, out.get());
        const bool shape_ok = out_type == GEOS_POLYGON || out_type == GEOS_MULTIPOLYGON ||
                              (out_type == GEOS_GEOMETRYCOLLECTION &&
                               options.params.method == MakeValidMethod::kLinework);
        if (shape_ok) {
          ++s.ring_level;
          s.rings += attempt.rings;
          s.rings_kept += attempt.rings_kept;
          s.groups_repaired += attempt.groups_repaired;
          s.rings_repaired += attempt.rings_repaired;
          return AdoptGeometry(geometry.context(), out.release());
        }
      }
      // No answer (Z, empty rings, ...), a GEOS failure inside a group, or an answer GEOS
      // does not accept (RingLevelRepair's check): GEOS on the whole decides.
      ++s.whole_fallbacks;
    }
  }
  return GeosMakeValid(geometry, options.params);
}

}  // namespace geolake::geo
