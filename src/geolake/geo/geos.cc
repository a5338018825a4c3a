#include "geolake/geo/geos.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "geolake/core/little_endian.h"
#include "geolake/geo/geo_context_internal.h"
#include "geolake/geo/wkb.h"

namespace geolake::geo {
namespace {

using internal::GeoContextImpl;
using internal::GeosBufferDeleter;
using internal::GeosCall;

// GEOS predicates return 1 (true), 0 (false) or 2 (exception).
Result<bool> PredicateResult(char rc, const GeosCall& call, std::string_view op) {
  if (rc == 2) return call.Failure(op);
  return rc == 1;
}

Result<GEOSWKBWriter*> WkbWriter(GeoContextImpl& impl) {
  if (impl.wkb_writer == nullptr) {
    GEOSWKBWriter* writer = GEOSWKBWriter_create_r(impl.geos);
    if (writer == nullptr) return Status::Internal("to WKB: cannot create the GEOS WKB writer");
    // ISO WKB, little endian, Z kept when present (dimension 3 is an upper bound: GEOS writes
    // 2D geometries as 2D), no SRID: what GeoParquet and Iceberg expect.
    GEOSWKBWriter_setFlavor_r(impl.geos, writer, GEOS_WKB_ISO);
    GEOSWKBWriter_setByteOrder_r(impl.geos, writer, GEOS_WKB_NDR);
    GEOSWKBWriter_setOutputDimension_r(impl.geos, writer, 3);
    GEOSWKBWriter_setIncludeSRID_r(impl.geos, writer, 0);
    impl.wkb_writer = writer;
  }
  return impl.wkb_writer;
}

// ---- ISO WKB of 2D points, lines and polygons without GEOS's writer --------------------------
// GEOS's WKBWriter goes through an ostream a few bytes at a time; on the 1M-polygon coverage it
// was a tenth of `simplify --preserve-topology`. For the shapes every operation writes (2D
// Point, LineString, Polygon and their Multi* forms, no empty member) these write the same
// bytes GEOS writes (ISO, little endian, no SRID: WkbWriter below; GeosTest checks that they
// are equal), copying each coordinate sequence in one GEOSCoordSeq_copyToBuffer_r call.
// Anything else (Z, an empty member, a collection, a curve) returns false: GEOS's writer.

bool AppendSequence(GEOSContextHandle_t h, const GEOSGeometry* g, bool with_count,
                    std::string* out) {
  const GEOSCoordSequence* seq = GEOSGeom_getCoordSeq_r(h, g);
  unsigned n = 0;
  if (seq == nullptr || GEOSCoordSeq_getSize_r(h, seq, &n) == 0) return false;
  if (with_count) AppendLE<std::uint32_t>(n, out);
  const std::size_t at = out->size();
  out->resize(at + std::size_t{n} * 16);
  static_assert(std::endian::native == std::endian::little, "WKB is written little endian");
  return n == 0 || GEOSCoordSeq_copyToBuffer_r(h, seq, reinterpret_cast<double*>(out->data() + at),
                                               0, 0) != 0;
}

bool AppendFastWkb(GEOSContextHandle_t h, const GEOSGeometry* g, std::string* out) {
  const int type = GEOSGeomTypeId_r(h, g);
  if (GEOSisEmpty_r(h, g) != 0) return false;
  switch (type) {
    case GEOS_POINT:
      out->push_back(1);
      AppendLE<std::uint32_t>(1, out);
      return AppendSequence(h, g, false, out);
    case GEOS_LINESTRING:
      out->push_back(1);
      AppendLE<std::uint32_t>(2, out);
      return AppendSequence(h, g, true, out);
    case GEOS_POLYGON: {
      const int holes = GEOSGetNumInteriorRings_r(h, g);
      if (holes < 0) return false;
      out->push_back(1);
      AppendLE<std::uint32_t>(3, out);
      AppendLE<std::uint32_t>(static_cast<std::uint32_t>(holes) + 1, out);
      const GEOSGeometry* shell = GEOSGetExteriorRing_r(h, g);
      if (shell == nullptr || !AppendSequence(h, shell, true, out)) return false;
      for (int i = 0; i < holes; ++i) {
        const GEOSGeometry* hole = GEOSGetInteriorRingN_r(h, g, i);
        if (hole == nullptr || !AppendSequence(h, hole, true, out)) return false;
      }
      return true;
    }
    case GEOS_MULTIPOINT:
    case GEOS_MULTILINESTRING:
    case GEOS_MULTIPOLYGON: {
      const int n = GEOSGetNumGeometries_r(h, g);
      if (n < 0) return false;
      out->push_back(1);
      AppendLE<std::uint32_t>(type == GEOS_MULTIPOINT        ? 4
                              : type == GEOS_MULTILINESTRING ? 5
                                                             : 6,
                              out);
      AppendLE<std::uint32_t>(static_cast<std::uint32_t>(n), out);
      for (int i = 0; i < n; ++i) {
        const GEOSGeometry* part = GEOSGetGeometryN_r(h, g, i);
        if (part == nullptr || !AppendFastWkb(h, part, out)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

namespace internal {
bool FastWkb(GEOSContextHandle_t h, const GEOSGeometry* g, std::string* out) {
  out->clear();
  if (GEOSGeom_getCoordinateDimension_r(h, g) != 2) return false;
  return AppendFastWkb(h, g, out);
}
}  // namespace internal

namespace internal {
GEOSGeom_t* GeometryHandle(const Geometry& geometry) { return geometry.geom_; }
Geometry AdoptGeometry(GeoContext& ctx, GEOSGeom_t* geom) { return Geometry(&ctx, geom); }
void ReleaseGeometry(Geometry& geometry) { geometry.geom_ = nullptr; }
}  // namespace internal

Geometry::Geometry(Geometry&& other) noexcept : ctx_(other.ctx_), geom_(other.geom_) {
  other.geom_ = nullptr;
}

Geometry& Geometry::operator=(Geometry&& other) noexcept {
  if (this != &other) {
    Reset();
    ctx_ = other.ctx_;
    geom_ = other.geom_;
    other.geom_ = nullptr;
  }
  return *this;
}

Geometry::~Geometry() { Reset(); }

void Geometry::Reset() {
  if (geom_ != nullptr) GEOSGeom_destroy_r(ctx_->impl().geos, geom_);
  geom_ = nullptr;
}

Result<Geometry> Geometry::FromWkb(GeoContext& ctx, std::span<const uint8_t> wkb) {
  GeoContextImpl& impl = ctx.impl();
  GeosCall call(impl);
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("from WKB"));
  if (impl.wkb_reader == nullptr) {
    impl.wkb_reader = GEOSWKBReader_create_r(impl.geos);
    if (impl.wkb_reader == nullptr) return call.Failure("from WKB");
  }
  GEOSGeometry* g = GEOSWKBReader_read_r(impl.geos, impl.wkb_reader, wkb.data(), wkb.size());
  if (g == nullptr) return call.Failure("from WKB");
  return Geometry(&ctx, g);
}

Result<Geometry> Geometry::FromWkb(GeoContext& ctx, std::string_view wkb) {
  return FromWkb(
      ctx, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(wkb.data()), wkb.size()));
}

Result<std::vector<Geometry>> Geometry::FromWkbs(GeoContext& ctx,
                                                 std::span<const std::string_view> wkbs) {
  std::vector<Geometry> parts;
  parts.reserve(wkbs.size());
  for (const std::string_view wkb : wkbs) {
    GEOLAKE_ASSIGN_OR_RETURN(Geometry g, FromWkb(ctx, wkb));
    parts.push_back(std::move(g));
  }
  return parts;
}

Result<Geometry> Geometry::FromWkt(GeoContext& ctx, std::string_view wkt) {
  GeoContextImpl& impl = ctx.impl();
  GeosCall call(impl);
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("from WKT"));
  if (impl.wkt_reader == nullptr) {
    impl.wkt_reader = GEOSWKTReader_create_r(impl.geos);
    if (impl.wkt_reader == nullptr) return call.Failure("from WKT");
  }
  const std::string text(wkt);  // GEOS wants a NUL-terminated string
  GEOSGeometry* g = GEOSWKTReader_read_r(impl.geos, impl.wkt_reader, text.c_str());
  if (g == nullptr) return call.Failure("from WKT");
  return Geometry(&ctx, g);
}

namespace {

// The parts as one GEOS collection, which takes them over (the parts are left empty).
Result<Geometry> CollectParts(GeoContext& ctx, const GeosCall& call, std::vector<Geometry>& parts,
                              std::string_view op) {
  std::vector<GEOSGeometry*> raw;
  raw.reserve(parts.size());
  for (Geometry& part : parts) {
    if (&part.context() != &ctx) {
      return Status::InvalidArgument(std::string(op) + ": part from another context");
    }
    raw.push_back(internal::GeometryHandle(part));
  }
  GEOSGeometry* collection = GEOSGeom_createCollection_r(
      ctx.impl().geos, GEOS_GEOMETRYCOLLECTION, raw.data(), static_cast<unsigned>(raw.size()));
  // GEOS took the parts into the collection (or freed them when creation failed): release
  // ours, a double free being the risk to avoid, not a leak.
  for (Geometry& part : parts) internal::ReleaseGeometry(part);
  if (collection == nullptr) return call.Failure(op);
  return internal::AdoptGeometry(ctx, collection);
}

}  // namespace

Result<Geometry> Geometry::UnionAll(GeoContext& ctx, std::vector<Geometry> parts,
                                    double grid_size) {
  if (!(grid_size >= 0) || !std::isfinite(grid_size)) {
    return Status::InvalidArgument("union all: grid size must be finite and >= 0");
  }
  GeoContextImpl& impl = ctx.impl();
  GeosCall call(impl);
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("union all"));
  GEOLAKE_ASSIGN_OR_RETURN(Geometry all, CollectParts(ctx, call, parts, "union all"));
  GEOSGeometry* u = grid_size > 0 ? GEOSUnaryUnionPrec_r(impl.geos, all.geom_, grid_size)
                                  : GEOSUnaryUnion_r(impl.geos, all.geom_);
  if (u == nullptr) return call.Failure("union all");
  return Geometry(&ctx, u);
}

Result<Geometry> Geometry::CoverageUnionAll(GeoContext& ctx, std::vector<Geometry> parts) {
  GeoContextImpl& impl = ctx.impl();
  GeosCall call(impl);
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("coverage union"));
  GEOLAKE_ASSIGN_OR_RETURN(Geometry all, CollectParts(ctx, call, parts, "coverage union"));
  GEOSGeometry* u = GEOSCoverageUnion_r(impl.geos, all.geom_);
  if (u == nullptr) return call.Failure("coverage union");
  return Geometry(&ctx, u);
}

Result<Geometry> Geometry::UnionWkbsSnapping(GeoContext& ctx,
                                             std::span<const std::string_view> wkbs,
                                             double grid_size, std::atomic<std::int64_t>* retries) {
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<Geometry> parts, FromWkbs(ctx, wkbs));
  Result<Geometry> u = UnionAll(ctx, std::move(parts), grid_size);
  if (u.ok() || u.status().code() != ErrorCode::kGeometryError) return u;
  double magnitude = 0;
  for (const std::string_view wkb : wkbs) {
    GEOLAKE_ASSIGN_OR_RETURN(Envelope box, WkbEnvelope(AsBytes(wkb)));
    if (box.IsEmpty()) continue;
    magnitude = std::max({magnitude, std::abs(box.xmin), std::abs(box.xmax), std::abs(box.ymin),
                          std::abs(box.ymax)});
  }
  if (magnitude == 0) magnitude = 1;
  Status last = u.status();
  for (const double relative : {1e-12, 1e-10, 1e-8}) {
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<Geometry> again, FromWkbs(ctx, wkbs));
    if (retries != nullptr) retries->fetch_add(1);
    Result<Geometry> snapped =
        UnionAll(ctx, std::move(again), std::max(grid_size, magnitude * relative));
    if (snapped.ok() || snapped.status().code() != ErrorCode::kGeometryError) return snapped;
    last = snapped.status();
  }
  return last;
}

Result<Geometry> Geometry::SetPrecision(double grid_size) const {
  if (!(grid_size > 0) || !std::isfinite(grid_size)) {
    return Status::InvalidArgument("set precision: grid size must be finite and > 0");
  }
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("set precision"));
  GEOSGeometry* g = GEOSGeom_setPrecision_r(call.handle(), geom_, grid_size, 0);
  if (g == nullptr) return call.Failure("set precision");
  return Geometry(ctx_, g);
}

Result<std::string> Geometry::ToWkb() const {
  GeoContextImpl& impl = ctx_->impl();
  GeosCall call(impl);
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("to WKB"));
  std::string fast;
  if (internal::FastWkb(impl.geos, geom_, &fast)) return fast;
  GEOLAKE_ASSIGN_OR_RETURN(GEOSWKBWriter * writer, WkbWriter(impl));
  size_t size = 0;
  std::unique_ptr<unsigned char, GeosBufferDeleter> buf(
      GEOSWKBWriter_write_r(impl.geos, writer, geom_, &size), GeosBufferDeleter{impl.geos});
  if (buf == nullptr) return call.Failure("to WKB");
  return std::string(reinterpret_cast<const char*>(buf.get()), size);
}

Result<std::string> Geometry::ToWkt(int decimals) const {
  GeoContextImpl& impl = ctx_->impl();
  GeosCall call(impl);
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("to WKT"));
  if (decimals < 0 || decimals > 17) {
    return Status::InvalidArgument("to WKT: decimals must be in [0, 17], got " +
                                   std::to_string(decimals));
  }
  if (impl.wkt_writer == nullptr) {
    impl.wkt_writer = GEOSWKTWriter_create_r(impl.geos);
    if (impl.wkt_writer == nullptr) return call.Failure("to WKT");
    GEOSWKTWriter_setTrim_r(impl.geos, impl.wkt_writer, 1);
    GEOSWKTWriter_setOutputDimension_r(impl.geos, impl.wkt_writer, 3);
  }
  GEOSWKTWriter_setRoundingPrecision_r(impl.geos, impl.wkt_writer, decimals);
  std::unique_ptr<char, GeosBufferDeleter> text(
      GEOSWKTWriter_write_r(impl.geos, impl.wkt_writer, geom_), GeosBufferDeleter{impl.geos});
  if (text == nullptr) return call.Failure("to WKT");
  return std::string(text.get());
}

Result<Geometry> Geometry::Clone() const {
  GeosCall call(ctx_->impl());
  GEOSGeometry* g = GEOSGeom_clone_r(call.handle(), geom_);
  if (g == nullptr) return call.Failure("clone");
  return Geometry(ctx_, g);
}

Result<std::string> Geometry::TypeName() const {
  GeosCall call(ctx_->impl());
  std::unique_ptr<char, GeosBufferDeleter> name(GEOSGeomType_r(call.handle(), geom_),
                                                GeosBufferDeleter{call.handle()});
  if (name == nullptr) return call.Failure("type name");
  return std::string(name.get());
}

Result<bool> Geometry::IsEmpty() const {
  GeosCall call(ctx_->impl());
  return PredicateResult(GEOSisEmpty_r(call.handle(), geom_), call, "is empty");
}

Result<bool> Geometry::IsValid() const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("is valid"));
  return PredicateResult(GEOSisValid_r(call.handle(), geom_), call, "is valid");
}

Result<std::string> Geometry::IsValidReason() const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("is valid reason"));
  std::unique_ptr<char, GeosBufferDeleter> reason(GEOSisValidReason_r(call.handle(), geom_),
                                                  GeosBufferDeleter{call.handle()});
  if (reason == nullptr) return call.Failure("is valid reason");
  return std::string(reason.get());
}

// Geometry::MakeValid is in make_valid.cc.

Result<double> Geometry::Area() const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("area"));
  double area = 0;
  if (GEOSArea_r(call.handle(), geom_, &area) == 0) return call.Failure("area");
  return area;
}

Result<double> Geometry::Length() const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("length"));
  double length = 0;
  if (GEOSLength_r(call.handle(), geom_, &length) == 0) return call.Failure("length");
  return length;
}

#define GEOLAKE_GEOS_BINARY_PREDICATE(Method, geos_fn, op)                          \
  Result<bool> Geometry::Method(const Geometry& other) const {                      \
    if (other.ctx_ != ctx_) {                                                       \
      return Status::InvalidArgument(op ": operands come from different contexts"); \
    }                                                                               \
    GeosCall call(ctx_->impl());                                                    \
    GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled(op));                              \
    return PredicateResult(geos_fn(call.handle(), geom_, other.geom_), call, op);   \
  }

GEOLAKE_GEOS_BINARY_PREDICATE(Intersects, GEOSIntersects_r, "intersects")
GEOLAKE_GEOS_BINARY_PREDICATE(Contains, GEOSContains_r, "contains")
GEOLAKE_GEOS_BINARY_PREDICATE(Within, GEOSWithin_r, "within")
GEOLAKE_GEOS_BINARY_PREDICATE(Touches, GEOSTouches_r, "touches")
GEOLAKE_GEOS_BINARY_PREDICATE(Covers, GEOSCovers_r, "covers")
GEOLAKE_GEOS_BINARY_PREDICATE(CoveredBy, GEOSCoveredBy_r, "covered by")
#undef GEOLAKE_GEOS_BINARY_PREDICATE

Result<bool> Geometry::DistanceWithin(const Geometry& other, double distance) const {
  if (other.ctx_ != ctx_) {
    return Status::InvalidArgument("distance within: operands come from different contexts");
  }
  if (!(distance >= 0) || !std::isfinite(distance)) {
    return Status::InvalidArgument("distance within: distance must be finite and >= 0");
  }
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("distance within"));
  return PredicateResult(GEOSDistanceWithin_r(call.handle(), geom_, other.geom_, distance), call,
                         "distance within");
}

Result<Geometry> Geometry::ClipByRect(const Envelope& box) const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("clip by rect"));
  GEOSGeometry* g = GEOSClipByRect_r(call.handle(), geom_, box.xmin, box.ymin, box.xmax, box.ymax);
  if (g == nullptr) return call.Failure("clip by rect");
  return Geometry(ctx_, g);
}

Result<std::int64_t> Geometry::NumCoordinates() const {
  GeosCall call(ctx_->impl());
  const int n = GEOSGetNumCoordinates_r(call.handle(), geom_);
  if (n < 0) return call.Failure("number of coordinates");
  return static_cast<std::int64_t>(n);
}

Result<Geometry> Geometry::Intersection(const Geometry& other) const {
  if (other.ctx_ != ctx_) {
    return Status::InvalidArgument("intersection: operands come from different contexts");
  }
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("intersection"));
  GEOSGeometry* g = GEOSIntersection_r(call.handle(), geom_, other.geom_);
  if (g == nullptr) return call.Failure("intersection");
  return Geometry(ctx_, g);
}

Result<Geometry> Geometry::Union(const Geometry& other) const {
  if (other.ctx_ != ctx_) {
    return Status::InvalidArgument("union: operands come from different contexts");
  }
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("union"));
  GEOSGeometry* g = GEOSUnion_r(call.handle(), geom_, other.geom_);
  if (g == nullptr) return call.Failure("union");
  return Geometry(ctx_, g);
}

Result<Geometry> Geometry::UnaryUnion() const {
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("unary union"));
  GEOSGeometry* g = GEOSUnaryUnion_r(call.handle(), geom_);
  if (g == nullptr) return call.Failure("unary union");
  return Geometry(ctx_, g);
}

Result<Geometry> Geometry::Buffer(double distance, int quadrant_segments) const {
  if (!std::isfinite(distance)) return Status::InvalidArgument("buffer: distance is not finite");
  if (quadrant_segments < 1) {
    return Status::InvalidArgument("buffer: quadrant_segments must be >= 1, got " +
                                   std::to_string(quadrant_segments));
  }
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("buffer"));
  GEOSGeometry* g = GEOSBuffer_r(call.handle(), geom_, distance, quadrant_segments);
  if (g == nullptr) return call.Failure("buffer");
  return Geometry(ctx_, g);
}

Result<Geometry> Geometry::Simplify(double tolerance) const {
  if (!(tolerance >= 0) || !std::isfinite(tolerance)) {
    return Status::InvalidArgument("simplify: tolerance must be finite and >= 0");
  }
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("simplify"));
  GEOSGeometry* g = GEOSTopologyPreserveSimplify_r(call.handle(), geom_, tolerance);
  if (g == nullptr) return call.Failure("simplify");
  return Geometry(ctx_, g);
}

Result<Geometry> Geometry::SimplifyDouglasPeucker(double tolerance) const {
  if (!(tolerance >= 0) || !std::isfinite(tolerance)) {
    return Status::InvalidArgument("simplify: tolerance must be finite and >= 0");
  }
  GeosCall call(ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("simplify"));
  GEOSGeometry* g = GEOSSimplify_r(call.handle(), geom_, tolerance);
  if (g == nullptr) return call.Failure("simplify");
  return Geometry(ctx_, g);
}

Result<Envelope> Geometry::Bounds() const {
  GeosCall call(ctx_->impl());
  GEOSContextHandle_t h = call.handle();
  const char empty = GEOSisEmpty_r(h, geom_);
  if (empty == 2) return call.Failure("bounds");
  if (empty == 1) return Envelope::Empty();
  Envelope env;
  if (GEOSGeom_getXMin_r(h, geom_, &env.xmin) == 0 ||
      GEOSGeom_getYMin_r(h, geom_, &env.ymin) == 0 ||
      GEOSGeom_getXMax_r(h, geom_, &env.xmax) == 0 ||
      GEOSGeom_getYMax_r(h, geom_, &env.ymax) == 0) {
    return call.Failure("bounds");
  }
  return env;
}

Result<PreparedGeometry> PreparedGeometry::Make(Geometry base) {
  GeosCall call(base.ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("prepare"));
  const GEOSPreparedGeometry* prepared = GEOSPrepare_r(call.handle(), base.geom_);
  if (prepared == nullptr) return call.Failure("prepare");
  // The prepared handle points at base's GEOS geometry, which the move below does not relocate.
  return PreparedGeometry(std::move(base), prepared);
}

PreparedGeometry::PreparedGeometry(PreparedGeometry&& other) noexcept
    : base_(std::move(other.base_)), prepared_(other.prepared_) {
  other.prepared_ = nullptr;
}

PreparedGeometry& PreparedGeometry::operator=(PreparedGeometry&& other) noexcept {
  if (this != &other) {
    Reset();
    base_ = std::move(other.base_);
    prepared_ = other.prepared_;
    other.prepared_ = nullptr;
  }
  return *this;
}

PreparedGeometry::~PreparedGeometry() { Reset(); }

void PreparedGeometry::Reset() {
  // Destroy the prepared handle before base_ (a member, destroyed after this body runs).
  if (prepared_ != nullptr) GEOSPreparedGeom_destroy_r(base_.ctx_->impl().geos, prepared_);
  prepared_ = nullptr;
}

#define GEOLAKE_GEOS_PREPARED_PREDICATE(Method, geos_fn, op)                          \
  Result<bool> PreparedGeometry::Method(const Geometry& other) const {                \
    if (other.ctx_ != base_.ctx_) {                                                   \
      return Status::InvalidArgument(op ": operands come from different contexts");   \
    }                                                                                 \
    GeosCall call(base_.ctx_->impl());                                                \
    GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled(op));                                \
    return PredicateResult(geos_fn(call.handle(), prepared_, other.geom_), call, op); \
  }

GEOLAKE_GEOS_PREPARED_PREDICATE(Intersects, GEOSPreparedIntersects_r, "prepared intersects")
GEOLAKE_GEOS_PREPARED_PREDICATE(Contains, GEOSPreparedContains_r, "prepared contains")
GEOLAKE_GEOS_PREPARED_PREDICATE(Within, GEOSPreparedWithin_r, "prepared within")
GEOLAKE_GEOS_PREPARED_PREDICATE(Touches, GEOSPreparedTouches_r, "prepared touches")
GEOLAKE_GEOS_PREPARED_PREDICATE(Covers, GEOSPreparedCovers_r, "prepared covers")
GEOLAKE_GEOS_PREPARED_PREDICATE(CoveredBy, GEOSPreparedCoveredBy_r, "prepared covered by")

Result<bool> PreparedGeometry::DistanceWithin(const Geometry& other, double distance) const {
  if (other.ctx_ != base_.ctx_) {
    return Status::InvalidArgument(
        "prepared distance within: operands come from different contexts");
  }
  if (!(distance >= 0) || !std::isfinite(distance)) {
    return Status::InvalidArgument("prepared distance within: distance must be finite and >= 0");
  }
  GeosCall call(base_.ctx_->impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("prepared distance within"));
  return PredicateResult(
      GEOSPreparedDistanceWithin_r(call.handle(), prepared_, other.geom_, distance), call,
      "prepared distance within");
}
#undef GEOLAKE_GEOS_PREPARED_PREDICATE

}  // namespace geolake::geo
