/// \file
/// The Hilbert curve as a sort key. A 2^order x 2^order grid laid over an extent is numbered
/// along the Hilbert curve, so points close on the curve are close in space; geolake sorts data
/// files by this number (the `geo_hilbert` column) so that row groups cover compact areas.
/// Order <= 31 keeps the index below 2^62, so it fits int64 as Iceberg stores it.
#pragma once

#include <cstdint>
#include <utility>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"

namespace geolake::geo {

/// \brief The largest supported order: 2^31 cells per side, indexes below 2^62.
inline constexpr int kMaxHilbertOrder = 31;

/// \brief The Hilbert index of grid cell (x, y) on a 2^order grid, order in [0, 31].
///
/// The curve starts at (0, 0), first moves up to (0, 1), and ends at (2^order - 1, 0):
/// order 1 visits (0,0)=0, (0,1)=1, (1,1)=2, (1,0)=3. Bits of x and y at or above `order` are
/// ignored. Precondition (DCHECK): 0 <= order <= 31.
uint64_t HilbertEncode(uint32_t x, uint32_t y, int order);

/// \brief The grid cell (x, y) with HilbertEncode(x, y, order) == d (bits of d at or above
/// 2 * order are ignored). Precondition (DCHECK): 0 <= order <= 31.
std::pair<uint32_t, uint32_t> HilbertDecode(uint64_t d, int order);

/// \brief A Hilbert curve over a fixed extent: maps points (x = lon/easting, y = lat/northing)
/// to the index of their grid cell.
///
/// Points outside the extent clamp to the nearest edge cell; NaN coordinates clamp to cell 0
/// on their axis. An extent of zero width or height puts every point in column (row) 0.
/// Thread-safety: an immutable value.
class HilbertCurve {
 public:
  /// \brief Errors: kInvalidArgument for an empty or non-finite extent or an order outside
  /// [0, 31].
  static Result<HilbertCurve> Make(const Envelope& extent, int order);

  /// \brief The index of the cell holding (x, y).
  uint64_t Index(double x, double y) const;

  /// \brief The box of the cell with index `d` (the inverse of Index, up to the cell size).
  Envelope CellBounds(uint64_t d) const;

  const Envelope& extent() const { return extent_; }
  int order() const { return order_; }

 private:
  HilbertCurve(const Envelope& extent, int order);
  uint32_t Column(double v, double min, double scale) const;

  Envelope extent_;
  int order_;
  double cells_per_side_;
  double x_scale_;  // cells per unit of x, 0 for a zero-width extent
  double y_scale_;
};

/// \brief One-off HilbertCurve::Make(extent, order) then Index(x, y).
Result<uint64_t> HilbertIndex(double x, double y, const Envelope& extent, int order);

}  // namespace geolake::geo
