/// \file
/// Geometry and PreparedGeometry: RAII handles for GEOS geometries bound to a GeoContext, and
/// the GEOS operations geolake needs (validity, make-valid, measures, predicates, overlay,
/// buffer, simplify, bounds). Geometries enter and leave as ISO WKB bytes; GEOS itself stays
/// behind this header. Every operation returns a Result: GEOS failures become kGeometryError
/// carrying GEOS's own message, and a fired stop token becomes kCancelled (see geo_context.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/geo_context.h"

// GEOS's own opaque C types, declared (never defined) here so that no GEOS header is needed.
struct GEOSGeom_t;
struct GEOSPrepGeom_t;

namespace geolake::geo {

class Geometry;

namespace internal {
// For other wrappers in geo/ (proj.cc): the raw handle, and adopting a raw GEOS result.
GEOSGeom_t* GeometryHandle(const Geometry& geometry);
Geometry AdoptGeometry(GeoContext& ctx, GEOSGeom_t* geom);
// Forget the handle without destroying it (GEOS took ownership of it).
void ReleaseGeometry(Geometry& geometry);
}  // namespace internal

/// \brief One GEOS geometry, owned, bound to the GeoContext that made it.
///
/// Binary operations require both operands to come from the same context. The context must
/// outlive the geometry. Thread-safety: none beyond its context's (one thread at a time).
/// Move-only; Clone() copies. A moved-from Geometry may only be assigned to or destroyed.
class Geometry {
 public:
  /// \brief Parse WKB (ISO or extended, either byte order).
  ///
  /// Errors: kGeometryError with GEOS's message on malformed bytes; kCancelled.
  static Result<Geometry> FromWkb(GeoContext& ctx, std::span<const uint8_t> wkb);
  static Result<Geometry> FromWkb(GeoContext& ctx, std::string_view wkb);

  /// \brief Parse each of `wkbs` (as FromWkb), in order. Errors: as FromWkb, for the first
  /// one that fails.
  static Result<std::vector<Geometry>> FromWkbs(GeoContext& ctx,
                                                std::span<const std::string_view> wkbs);

  /// \brief Parse WKT ("POLYGON ((0 0, 1 0, 1 1, 0 0))"); meant for tests and diagnostics.
  ///
  /// Errors: kGeometryError with GEOS's message.
  static Result<Geometry> FromWkt(GeoContext& ctx, std::string_view wkt);

  /// \brief Union all `parts` at once (GEOS cascaded unary union), consuming them. With
  /// `grid_size` > 0 the parts are snapped to a grid of that cell size (CRS units) and the
  /// union is computed on it (GEOSUnaryUnionPrec).
  ///
  /// An empty input gives GEOMETRYCOLLECTION EMPTY. Errors: kInvalidArgument for a negative or
  /// non-finite grid size; kGeometryError, kCancelled.
  static Result<Geometry> UnionAll(GeoContext& ctx, std::vector<Geometry> parts,
                                   double grid_size = 0);

  /// \brief Union polygonal `parts` that form a coverage (no overlaps; shared edges with the
  /// same vertices) by cancelling shared edges (GEOSCoverageUnion), consuming them.
  ///
  /// GEOS 3.11 checks little: it fails (kGeometryError) when edges do not close into polygons
  /// or the area changes by more than 1e-6 relative, but parts that overlap by less can give
  /// an invalid result, so a caller that is not sure of its coverage validates the result.
  /// Errors: kGeometryError, kCancelled.
  static Result<Geometry> CoverageUnionAll(GeoContext& ctx, std::vector<Geometry> parts);

  /// \brief Union the WKB geometries `wkbs` as UnionAll on `grid_size`, and when GEOS still
  /// fails with a topology error (its OverlayNG has already snapped and snap-rounded), again
  /// on ever coarser grids of 1e-12, 1e-10 and 1e-8 of the coordinates' largest magnitude
  /// (never finer than `grid_size`), so that a TopologyException does not reach the user.
  /// `retries`, when not null, counts each retry.
  ///
  /// Errors: the last attempt's kGeometryError; kInvalidArgument as UnionAll; kCancelled.
  static Result<Geometry> UnionWkbsSnapping(GeoContext& ctx, std::span<const std::string_view> wkbs,
                                            double grid_size,
                                            std::atomic<std::int64_t>* retries = nullptr);

  Geometry(Geometry&& other) noexcept;
  Geometry& operator=(Geometry&& other) noexcept;
  Geometry(const Geometry&) = delete;
  Geometry& operator=(const Geometry&) = delete;
  ~Geometry();

  /// \brief Encode as ISO WKB, little endian, 2D or 3D as the geometry is.
  Result<std::string> ToWkb() const;

  /// \brief Encode as WKT with `decimals` digits after the point, trailing zeros trimmed.
  Result<std::string> ToWkt(int decimals = 6) const;

  /// \brief Deep copy, bound to the same context.
  Result<Geometry> Clone() const;

  /// \brief GEOS's type name: "Point", "MultiPolygon", ...
  Result<std::string> TypeName() const;
  Result<bool> IsEmpty() const;

  /// \brief OGC validity. IsValidReason() gives "Valid Geometry" or GEOS's explanation, such
  /// as "Self-intersection[0.5 0.5]".
  Result<bool> IsValid() const;
  Result<std::string> IsValidReason() const;

  /// \brief Repair with GEOS's "structure" method, dropping collapsed parts (keep collapsed =
  /// false): a bowtie becomes a MultiPolygon of its two triangles. A MultiPolygon whose parts
  /// do not overlap after repair gets only its invalid parts repaired, much faster than GEOS's
  /// union of all parts; the answer is the same point set (up to last-bit differences in
  /// crossing points where overlapping parts are unioned), not always the same vertex order
  /// (make_valid.cc). A polygon or part of at least 20k vertices is repaired ring group by ring
  /// group on the calling thread (ring_repair.cc: seconds instead of minutes for a land polygon
  /// with 100k lakes), the same point set again.
  Result<Geometry> MakeValid() const;

  /// \brief MakeValid() when the geometry is invalid; nullopt when it is valid (IsValid()).
  ///
  /// One call instead of IsValid() and then MakeValid(): a MultiPolygon is judged part by part
  /// and only the groups of parts that meet are checked together, so GEOS never validates the
  /// whole. `wkb`, when not empty, must be the bytes this geometry was parsed from: parts that
  /// ProvablyValidPolygon proves valid from their bytes skip GEOS altogether.
  Result<std::optional<Geometry>> RepairIfInvalid(std::span<const uint8_t> wkb = {}) const;

  /// \brief Planar measures in the units of the coordinates (0 for types without them).
  Result<double> Area() const;
  Result<double> Length() const;

  /// \brief DE-9IM predicates against `other` (same context).
  Result<bool> Intersects(const Geometry& other) const;
  Result<bool> Contains(const Geometry& other) const;
  Result<bool> Within(const Geometry& other) const;
  Result<bool> Touches(const Geometry& other) const;
  Result<bool> Covers(const Geometry& other) const;
  Result<bool> CoveredBy(const Geometry& other) const;
  /// \brief True when the distance to `other` is at most `distance` (CRS units).
  /// Errors: kInvalidArgument for a negative or non-finite distance; kGeometryError.
  Result<bool> DistanceWithin(const Geometry& other, double distance) const;

  /// \brief The part of this geometry inside `box` (GEOS ClipByRect: fast, linear; the result
  /// of a valid polygon may touch itself along the box's edges). Errors: kGeometryError.
  Result<Geometry> ClipByRect(const Envelope& box) const;

  /// \brief The number of coordinates of all parts.
  Result<std::int64_t> NumCoordinates() const;

  /// \brief Overlay with `other` (same context).
  Result<Geometry> Intersection(const Geometry& other) const;
  Result<Geometry> Union(const Geometry& other) const;

  /// \brief Union of this geometry's own parts (dissolves a collection).
  Result<Geometry> UnaryUnion() const;

  /// \brief Snap every coordinate to a grid of cell `grid_size` (CRS units), keeping the
  /// result valid (GEOSGeom_setPrecision, GEOS_PREC_VALID_OUTPUT): collapsed parts go.
  ///
  /// Errors: kInvalidArgument for a grid size that is not finite and > 0; kGeometryError.
  Result<Geometry> SetPrecision(double grid_size) const;

  /// \brief Buffer by `distance` with `quadrant_segments` segments per quarter circle.
  ///
  /// Errors: kInvalidArgument for a non-finite distance or quadrant_segments < 1.
  Result<Geometry> Buffer(double distance, int quadrant_segments = 8) const;

  /// \brief Topology-preserving Douglas-Peucker simplification.
  ///
  /// Errors: kInvalidArgument for a negative or non-finite tolerance.
  Result<Geometry> Simplify(double tolerance) const;

  /// \brief Plain Douglas-Peucker simplification (GEOSSimplify): every part on its own, so
  /// rings may cross; GEOS 3.11 repairs a polygon whose simplified rings are invalid with
  /// buffer(0), and drops rings (or the whole polygon) that collapse.
  ///
  /// Errors: kInvalidArgument for a negative or non-finite tolerance.
  Result<Geometry> SimplifyDouglasPeucker(double tolerance) const;

  /// \brief The bounding box; empty geometries give Envelope::Empty().
  Result<Envelope> Bounds() const;

  GeoContext& context() const { return *ctx_; }

 private:
  friend class PreparedGeometry;
  friend GEOSGeom_t* internal::GeometryHandle(const Geometry& geometry);
  friend Geometry internal::AdoptGeometry(GeoContext& ctx, GEOSGeom_t* geom);
  friend void internal::ReleaseGeometry(Geometry& geometry);
  Geometry(GeoContext* ctx, GEOSGeom_t* geom) : ctx_(ctx), geom_(geom) {}
  void Reset();

  GeoContext* ctx_;
  GEOSGeom_t* geom_;  // owned; null only after a move
};

/// \brief A geometry with GEOS's lazily built indexes, for many predicates against one shape.
///
/// Owns its base geometry. Thread-safety: none (GEOS builds the indexes on first use, and the
/// handle is bound to one context).
class PreparedGeometry {
 public:
  /// \brief Prepare `base`, taking ownership. Errors: kGeometryError, kCancelled.
  static Result<PreparedGeometry> Make(Geometry base);

  PreparedGeometry(PreparedGeometry&& other) noexcept;
  PreparedGeometry& operator=(PreparedGeometry&& other) noexcept;
  PreparedGeometry(const PreparedGeometry&) = delete;
  PreparedGeometry& operator=(const PreparedGeometry&) = delete;
  ~PreparedGeometry();

  Result<bool> Intersects(const Geometry& other) const;
  Result<bool> Contains(const Geometry& other) const;
  Result<bool> Within(const Geometry& other) const;
  Result<bool> Touches(const Geometry& other) const;
  Result<bool> Covers(const Geometry& other) const;
  Result<bool> CoveredBy(const Geometry& other) const;
  /// \brief As Geometry::DistanceWithin, with the prepared indexes.
  Result<bool> DistanceWithin(const Geometry& other, double distance) const;

  const Geometry& base() const { return base_; }

 private:
  PreparedGeometry(Geometry base, const GEOSPrepGeom_t* prepared)
      : base_(std::move(base)), prepared_(prepared) {}
  void Reset();

  Geometry base_;
  const GEOSPrepGeom_t* prepared_;  // owned; refers to base_'s GEOS geometry
};

}  // namespace geolake::geo
