/// \file
/// PointInPolygon: the join's point fast path. An exact point-in-polygon test for one Polygon or
/// MultiPolygon that needs no GEOS geometry for the point and touches only the edges near it:
/// the edges are bucketed by horizontal bands, and a point is tested against the edges of its
/// band by the crossing-number (even-odd) rule. Every orientation it relies on is certified
/// with a forward error bound (Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast
/// Robust Geometric Predicates", 1997, the ccwerrboundA filter); a point on an edge, at a
/// vertex, or too near an edge for doubles to tell answers kUnsure, and the caller asks GEOS.
/// So the fast path never decides a boundary case and agrees with GEOS wherever it answers.
///
/// Built once, then immutable: any number of threads may call Locate on one index (unlike
/// GEOS 3.11 prepared geometries, which build their indexes lazily and are not thread-safe).
#pragma once

#include <cstdint>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/wkb.h"

namespace geolake::ops {

class PointInPolygon {
 public:
  enum class Location : std::uint8_t {
    kInterior,  ///< strictly inside (not on the boundary)
    kExterior,  ///< strictly outside
    kUnsure,    ///< on the boundary or within rounding of it: ask GEOS
  };

  /// \brief Index the rings of a Polygon or MultiPolygon (valid: rings do not cross, so the
  /// even-odd rule is the interior). Errors: kInvalidArgument for another type.
  static Result<PointInPolygon> Build(const geo::FlatGeometry& polygon);

  /// \brief Where (x, y) is. Non-finite coordinates answer kUnsure.
  Location Locate(double x, double y) const;

  /// \brief Bytes held (for the join's memory accounting).
  std::int64_t ByteSize() const;
  std::int64_t edge_count() const { return static_cast<std::int64_t>(edges_.size()); }

 private:
  struct Edge {
    double x0, y0, x1, y1;
  };
  int BandOf(double y) const;

  std::vector<Edge> edges_;
  geo::Envelope box_;
  double band_height_ = 1;
  int bands_ = 1;
  std::vector<std::uint32_t> band_begin_;  // bands_ + 1 offsets into band_edges_
  std::vector<std::uint32_t> band_edges_;
};

}  // namespace geolake::ops
