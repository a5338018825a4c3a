#include "geolake/geo/shared_boundary.h"

#include <optional>
#include <utility>

#include "geolake/geo/geo_context_internal.h"

namespace geolake::geo {

using internal::AdoptGeometry;
using internal::GeometryHandle;
using internal::GeosCall;

Result<Geometry> Boundary(const Geometry& geometry) {
  GeosCall call(geometry.context().impl());
  GEOLAKE_RETURN_NOT_OK(call.CheckNotCancelled("boundary"));
  GEOSGeometry* out = GEOSBoundary_r(call.handle(), GeometryHandle(geometry));
  if (out == nullptr) return call.Failure("boundary");
  return AdoptGeometry(geometry.context(), out);
}

Result<double> SharedBoundaryLength(const Geometry& a, const Geometry& b,
                                    const Geometry* a_boundary) {
  if (&a.context() != &b.context()) {
    return Status::InvalidArgument("shared boundary: operands come from different contexts");
  }
  // Boxes that do not meet share nothing: skip two GEOS calls for most tree candidates.
  GEOLAKE_ASSIGN_OR_RETURN(Envelope box_a, a.Bounds());
  GEOLAKE_ASSIGN_OR_RETURN(Envelope box_b, b.Bounds());
  if (box_a.IsEmpty() || box_b.IsEmpty() || !box_a.Intersects(box_b)) return 0.0;
  std::optional<Geometry> own;
  if (a_boundary == nullptr) {
    GEOLAKE_ASSIGN_OR_RETURN(Geometry boundary, Boundary(a));
    own = std::move(boundary);
    a_boundary = &*own;
  }
  GEOLAKE_ASSIGN_OR_RETURN(Geometry b_boundary, Boundary(b));
  // The intersection of two lineal geometries holds points (touches, crossings) and lines
  // (common stretches); only the lines have a length.
  GEOLAKE_ASSIGN_OR_RETURN(Geometry common, a_boundary->Intersection(b_boundary));
  return common.Length();
}

}  // namespace geolake::geo
