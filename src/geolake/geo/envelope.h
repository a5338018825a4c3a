/// \file
/// Envelope: an axis-aligned 2D bounding box in lon/lat (x, y) or projected (easting, northing)
/// coordinates. It is the unit of every spatial prune in geolake (file bboxes, row-group bbox
/// statistics, the GeoParquet bbox covering), so it is a plain constexpr value type with an
/// explicit empty state. It is planar: a box that crosses the antimeridian (xmin > xmax in
/// GeoJSON terms) is not modelled here and reads as empty.
#pragma once

#include <limits>

namespace geolake::geo {

/// \brief An axis-aligned box {xmin, ymin, xmax, ymax}; x = lon/easting, y = lat/northing.
///
/// The default value is empty (min = +inf, max = -inf), so expanding it by the first point
/// gives that point's degenerate box. NaN coordinates are ignored per axis, which is how WKB
/// encodes POINT EMPTY. Thread-safety: a value type.
struct Envelope {
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  double xmin = kInf;
  double ymin = kInf;
  double xmax = -kInf;
  double ymax = -kInf;

  /// \brief The empty envelope (the same as a default-constructed one).
  static constexpr Envelope Empty() { return Envelope{}; }

  /// \brief True when no point has been added on at least one axis (or min > max).
  constexpr bool IsEmpty() const { return !(xmin <= xmax) || !(ymin <= ymax); }

  /// \brief Grow to include the point (x, y); a NaN coordinate leaves its axis unchanged.
  constexpr void Expand(double x, double y) {
    // Written as x == x rather than std::isnan: std::isnan is not constexpr in C++20.
    if (x == x) {
      if (x < xmin) xmin = x;
      if (x > xmax) xmax = x;
    }
    if (y == y) {
      if (y < ymin) ymin = y;
      if (y > ymax) ymax = y;
    }
  }

  /// \brief Grow to include `other`; an empty `other` changes nothing.
  constexpr void Expand(const Envelope& other) {
    if (other.IsEmpty()) return;
    if (other.xmin < xmin) xmin = other.xmin;
    if (other.ymin < ymin) ymin = other.ymin;
    if (other.xmax > xmax) xmax = other.xmax;
    if (other.ymax > ymax) ymax = other.ymax;
  }

  /// \brief True when the boxes share at least one point (touching edges count). An empty box
  /// intersects nothing.
  constexpr bool Intersects(const Envelope& other) const {
    if (IsEmpty() || other.IsEmpty()) return false;
    return other.xmin <= xmax && other.xmax >= xmin && other.ymin <= ymax && other.ymax >= ymin;
  }

  /// \brief True when `other` lies inside this box (boundary included). Nothing contains, or is
  /// contained in, an empty box.
  constexpr bool Contains(const Envelope& other) const {
    if (IsEmpty() || other.IsEmpty()) return false;
    return other.xmin >= xmin && other.xmax <= xmax && other.ymin >= ymin && other.ymax <= ymax;
  }

  /// \brief True when the point (x, y) lies inside this box (boundary included).
  constexpr bool Contains(double x, double y) const {
    return x >= xmin && x <= xmax && y >= ymin && y <= ymax;
  }

  /// \brief xmax - xmin, or 0 when empty.
  constexpr double Width() const { return IsEmpty() ? 0.0 : xmax - xmin; }

  /// \brief ymax - ymin, or 0 when empty.
  constexpr double Height() const { return IsEmpty() ? 0.0 : ymax - ymin; }

  /// \brief Exact comparison; all empty envelopes compare equal.
  constexpr bool operator==(const Envelope& other) const {
    if (IsEmpty() || other.IsEmpty()) return IsEmpty() == other.IsEmpty();
    return xmin == other.xmin && ymin == other.ymin && xmax == other.xmax && ymax == other.ymax;
  }
};

}  // namespace geolake::geo
