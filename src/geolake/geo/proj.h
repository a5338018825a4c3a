/// \file
/// Transformer: reprojection between two CRSs with PROJ, bound to one GeoContext. Axis order is
/// normalised for visualisation, so on both sides x is longitude/easting and y is
/// latitude/northing whatever the CRS's official axis order (EPSG:4326 is officially lat/lon).
/// Coordinates are transformed in place in batches; a WKB geometry is reprojected coordinate by
/// coordinate through GEOS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/geos.h"

// PROJ's opaque PJ type, declared (never defined) here so that proj.h of PROJ is not needed.
struct PJconsts;

namespace geolake::geo {

/// \brief Transforms coordinates from one CRS to another.
///
/// Made with Make(); bound to the GeoContext passed there, which must outlive it.
/// Thread-safety: none (PROJ objects are bound to their context); one per thread. Move-only.
class Transformer {
 public:
  /// \brief Prepare the transformation from `source` to `target` (lon/lat or easting/northing
  /// order on both sides). When PROJ finds the two equivalent (ignoring geographic axis order,
  /// so EPSG:4326 and OGC:CRS84 count as the same) the transformer is an identity and touches
  /// no coordinates.
  ///
  /// Errors: kInvalidArgument when PROJ finds no operation between them.
  static Result<Transformer> Make(GeoContext& ctx, const Crs& source, const Crs& target);

  Transformer(Transformer&& other) noexcept;
  Transformer& operator=(Transformer&& other) noexcept;
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;
  ~Transformer();

  bool is_identity() const { return pj_ == nullptr; }
  const Crs& source() const { return source_; }
  const Crs& target() const { return target_; }

  /// \brief Transform the points (x[i], y[i]) in place; x and y must have equal sizes.
  ///
  /// Errors: kInvalidArgument for unequal sizes; kGeometryError naming the first point index
  /// whose result is not finite (outside the projection's domain, or a non-finite input), after
  /// which the arrays hold partial results; kCancelled when the context's stop token fires
  /// (checked between batches of 64k points).
  Status Transform(std::span<double> x, std::span<double> y);

  /// \brief Transform `count` interleaved coordinates in place: coordinate i has x at
  /// xy[i * stride] and y at xy[i * stride + 1] (stride >= 2 doubles; Z and M after them are
  /// left as they are), as geo/wkb.h's FlatGeometry stores them, so no copy is needed.
  ///
  /// Errors: as Transform(); `*first_bad` (when not null) receives the index of the first
  /// coordinate whose result is not finite.
  Status TransformInterleaved(double* xy, std::size_t count, std::size_t stride,
                              std::size_t* first_bad = nullptr);

  /// \brief Reproject every coordinate of a geometry (Z is carried unchanged).
  ///
  /// Errors: as Transform(); the point index counts coordinates in WKB order.
  Result<Geometry> Transform(const Geometry& geometry);

  /// \brief Reproject a WKB geometry and return ISO WKB.
  ///
  /// Errors: kGeometryError for malformed WKB; otherwise as Transform().
  Result<std::string> TransformWkb(std::span<const uint8_t> wkb);
  Result<std::string> TransformWkb(std::string_view wkb);

 private:
  Transformer(GeoContext* ctx, PJconsts* pj, Crs source, Crs target);

  std::string Describe() const;
  Status TransformStrided(double* x, double* y, std::size_t stride, std::size_t n,
                          std::size_t* first_bad);

  GeoContext* ctx_;
  PJconsts* pj_;  // owned; null for the identity
  Crs source_;
  Crs target_;
};

/// \brief True when data in CRS `a` may be used as data in CRS `b` without a transformation:
/// the same definition, or two CRSs PROJ finds equivalent up to a geographic CRS's axis order
/// (EPSG:4326 and OGC:CRS84: geolake keeps x = longitude in both). False when either is empty,
/// unknown to PROJ, or needs a coordinate operation. Errors: none but kCancelled.
Result<bool> EquivalentCrs(GeoContext& ctx, std::string_view a, std::string_view b);

}  // namespace geolake::geo
