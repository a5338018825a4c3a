#include "geolake/geo/proj.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "geolake/geo/geo_context_internal.h"

namespace geolake::geo {
namespace {

using internal::GeoContextImpl;
using internal::GeosCall;
using internal::ProjPtr;

// Points per proj_trans_generic call between stop-token checks. 64k points take a few
// milliseconds for a typical projection, which bounds the cancellation latency.
constexpr size_t kBatchPoints = size_t{1} << 16;

std::string CrsLabel(const Crs& crs) { return crs.id().value_or(crs.name()); }

}  // namespace

Transformer::Transformer(GeoContext* ctx, PJconsts* pj, Crs source, Crs target)
    : ctx_(ctx), pj_(pj), source_(std::move(source)), target_(std::move(target)) {}

Transformer::Transformer(Transformer&& other) noexcept
    : ctx_(other.ctx_),
      pj_(std::exchange(other.pj_, nullptr)),
      source_(std::move(other.source_)),
      target_(std::move(other.target_)) {}

Transformer& Transformer::operator=(Transformer&& other) noexcept {
  if (this != &other) {
    if (pj_ != nullptr) proj_destroy(pj_);
    ctx_ = other.ctx_;
    pj_ = std::exchange(other.pj_, nullptr);
    source_ = std::move(other.source_);
    target_ = std::move(other.target_);
  }
  return *this;
}

Transformer::~Transformer() {
  if (pj_ != nullptr) proj_destroy(pj_);
}

std::string Transformer::Describe() const {
  return "transform " + CrsLabel(source_) + " -> " + CrsLabel(target_);
}

Result<Transformer> Transformer::Make(GeoContext& ctx, const Crs& source, const Crs& target) {
  GeoContextImpl& impl = ctx.impl();
  const std::string what = "transform " + CrsLabel(source) + " -> " + CrsLabel(target);
  internal::ResetProjError(impl);
  // OGC:CRS84 is EPSG:4326 with lon, lat axes, which the normalisation below makes moot. PROJ
  // 9.1 finds the EPSG registry's operations only for the EPSG code: from OGC:CRS84 it picks
  // ESRI's "WGS_1984_(ITRF00)_To_NAD_1983" Helmert into NAD83 CRSs (EPSG:5070 about 0.9 m
  // away from "NAD83 to WGS 84 (1)", the one it picks from EPSG:4326, as GDAL's gdaltransform,
  // ogr2ogr and PostGIS do for either). So operations are searched from EPSG:4326.
  auto definition = [](const Crs& crs) -> const std::string& {
    static const std::string kWgs84 = "EPSG:4326";
    return crs.id() == "OGC:CRS84" ? kWgs84 : crs.definition();
  };
  ProjPtr from(proj_create(impl.proj, definition(source).c_str()));
  ProjPtr to(proj_create(impl.proj, definition(target).c_str()));
  if (from == nullptr || to == nullptr) {
    return Status::InvalidArgument(what + ": " + internal::ProjErrorText(impl));
  }
  // Identity when equal up to the axis order of a geographic CRS: the normalisation below makes
  // axis order moot, and skipping PROJ saves a pass over every coordinate.
  if (proj_is_equivalent_to_with_ctx(impl.proj, from.get(), to.get(),
                                     PJ_COMP_EQUIVALENT_EXCEPT_AXIS_ORDER_GEOGCRS) != 0) {
    return Transformer(&ctx, nullptr, source, target);
  }
  ProjPtr op(proj_create_crs_to_crs_from_pj(impl.proj, from.get(), to.get(), nullptr, nullptr));
  if (op == nullptr) {
    return Status::InvalidArgument(what +
                                   ": no coordinate operation: " + internal::ProjErrorText(impl));
  }
  ProjPtr normalized(proj_normalize_for_visualization(impl.proj, op.get()));
  if (normalized == nullptr) {
    return Status::InvalidArgument(
        what + ": cannot normalise axis order: " + internal::ProjErrorText(impl));
  }
  return Transformer(&ctx, normalized.release(), source, target);
}

Result<bool> EquivalentCrs(GeoContext& ctx, std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (a.empty() || b.empty()) return false;
  Result<Crs> from = Crs::Make(ctx, a);
  Result<Crs> to = Crs::Make(ctx, b);
  if (!from.ok() || !to.ok()) return false;  // a definition PROJ cannot read matches nothing
  Result<Transformer> transformer = Transformer::Make(ctx, *from, *to);
  if (!transformer.ok()) {
    if (transformer.status().code() == ErrorCode::kCancelled) return transformer.status();
    return false;  // no operation between them: certainly not the same
  }
  return transformer->is_identity();
}

Status Transformer::Transform(std::span<double> x, std::span<double> y) {
  if (x.size() != y.size()) {
    return Status::InvalidArgument(Describe() + ": " + std::to_string(x.size()) + " x values but " +
                                   std::to_string(y.size()) + " y values");
  }
  return TransformStrided(x.data(), y.data(), 1, x.size(), nullptr);
}

Status Transformer::TransformInterleaved(double* xy, std::size_t count, std::size_t stride,
                                         std::size_t* first_bad) {
  if (stride < 2) {
    return Status::InvalidArgument(Describe() + ": stride " + std::to_string(stride) +
                                   " is less than 2 doubles");
  }
  if (count == 0) return Status::OK();
  return TransformStrided(xy, xy + 1, stride, count, first_bad);
}

Status Transformer::TransformStrided(double* x, double* y, std::size_t stride, std::size_t n,
                                     std::size_t* first_bad) {
  GeoContextImpl& impl = ctx_->impl();
  const std::size_t step = stride * sizeof(double);
  for (size_t begin = 0; begin < n; begin += kBatchPoints) {
    if (impl.stop.stop_requested()) return Status::Cancelled(Describe() + ": cancelled");
    const size_t end = std::min(n, begin + kBatchPoints);
    if (pj_ != nullptr) {
      internal::ResetProjError(impl);
      proj_errno_reset(pj_);
      const size_t count = end - begin;
      proj_trans_generic(pj_, PJ_FWD, x + begin * stride, step, count, y + begin * stride, step,
                         count, nullptr, 0, 0, nullptr, 0, 0);
    }
    // PROJ marks a point it cannot transform with HUGE_VAL (infinity) and carries on; NaN
    // inputs come out as NaN. Either way the caller learns the first bad index.
    size_t bad = end;
    for (size_t i = begin; i < end; ++i) {
      if (!std::isfinite(x[i * stride]) || !std::isfinite(y[i * stride])) {
        bad = i;
        break;
      }
    }
    if (bad != end) {
      if (first_bad != nullptr) *first_bad = bad;
      std::string detail;
      if (pj_ != nullptr) {
        const int err = proj_errno(pj_);
        if (err != 0) {
          const char* text = proj_context_errno_string(impl.proj, err);
          if (text != nullptr) detail = std::string(" (") + text + ")";
        }
      }
      return Status::GeometryError(Describe() + ": point " + std::to_string(bad) +
                                   " has no finite result" + detail);
    }
  }
  return Status::OK();
}

namespace {

// State for the two GEOSGeom_transformXY_r passes: the first gathers every coordinate, the
// second writes the transformed ones back in the same (deterministic) visiting order.
struct XYBuffer {
  std::vector<double> x;
  std::vector<double> y;
  size_t next = 0;
};

int GatherXY(double* x, double* y, void* userdata) {
  auto* buf = static_cast<XYBuffer*>(userdata);
  buf->x.push_back(*x);
  buf->y.push_back(*y);
  return 1;
}

int ScatterXY(double* x, double* y, void* userdata) {
  auto* buf = static_cast<XYBuffer*>(userdata);
  if (buf->next >= buf->x.size()) return 0;  // GEOS then fails the call
  *x = buf->x[buf->next];
  *y = buf->y[buf->next];
  ++buf->next;
  return 1;
}

}  // namespace

Result<Geometry> Transformer::Transform(const Geometry& geometry) {
  if (&geometry.context() != ctx_) {
    return Status::InvalidArgument(Describe() + ": geometry from another context");
  }
  if (is_identity()) return geometry.Clone();
  // Nothing to move in an empty geometry, and GEOS 3.11's transformXY would rebuild POLYGON
  // EMPTY as POLYGON Z EMPTY (found by TransformerTest.EmptyGeometriesAndArraysPassThrough).
  GEOLAKE_ASSIGN_OR_RETURN(bool empty, geometry.IsEmpty());
  if (empty) return geometry.Clone();
  GeoContextImpl& impl = ctx_->impl();
  // Batching through proj_trans_generic costs one extra geometry copy (the gathering pass) but
  // avoids a PROJ call per coordinate, which dominates for projections with grids.
  XYBuffer buf;
  const GEOSGeometry* g = internal::GeometryHandle(geometry);
  {
    GeosCall call(impl);
    GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled(Describe()));
    GEOSGeometry* copy = GEOSGeom_transformXY_r(impl.geos, g, &GatherXY, &buf);
    if (copy == nullptr) return call.Failure(Describe());
    GEOSGeom_destroy_r(impl.geos, copy);
  }
  GEOLAKE_RETURN_NOT_OK(Transform(std::span<double>(buf.x), std::span<double>(buf.y)));
  GeosCall call(impl);
  GEOSGeometry* out = GEOSGeom_transformXY_r(impl.geos, g, &ScatterXY, &buf);
  if (out == nullptr) return call.Failure(Describe());
  Geometry result = internal::AdoptGeometry(*ctx_, out);
  if (buf.next != buf.x.size()) {
    return Status::Internal(Describe() + ": GEOS visited coordinates differently twice");
  }
  // GEOS 3.11's transformXY rebuilds empty parts (POLYGON EMPTY inside a collection) as 3D,
  // which would make the whole result 3D and write NaN Z values for every real coordinate.
  // When that happens, drop back to the input's dimension through a WKB round trip; this is
  // rare, so the extra copy does not matter.
  const int in_dim = GEOSGeom_getCoordinateDimension_r(impl.geos, g);
  const int out_dim = GEOSGeom_getCoordinateDimension_r(impl.geos, out);
  if (in_dim == 0 || out_dim == 0) return call.Failure(Describe());
  if (out_dim <= in_dim) return result;
  GEOSWKBWriter* writer = GEOSWKBWriter_create_r(impl.geos);
  if (writer == nullptr) return call.Failure(Describe());
  GEOSWKBWriter_setOutputDimension_r(impl.geos, writer, in_dim);
  size_t size = 0;
  unsigned char* bytes = GEOSWKBWriter_write_r(impl.geos, writer, out, &size);
  GEOSWKBWriter_destroy_r(impl.geos, writer);
  if (bytes == nullptr) return call.Failure(Describe());
  std::unique_ptr<unsigned char, internal::GeosBufferDeleter> owned(
      bytes, internal::GeosBufferDeleter{impl.geos});
  return Geometry::FromWkb(*ctx_, std::span<const uint8_t>(owned.get(), size));
}

Result<std::string> Transformer::TransformWkb(std::span<const uint8_t> wkb) {
  GEOLAKE_ASSIGN_OR_RETURN(Geometry in, Geometry::FromWkb(*ctx_, wkb));
  GEOLAKE_ASSIGN_OR_RETURN(Geometry out, Transform(in));
  return out.ToWkb();
}

Result<std::string> Transformer::TransformWkb(std::string_view wkb) {
  return TransformWkb(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(wkb.data()), wkb.size()));
}

}  // namespace geolake::geo
