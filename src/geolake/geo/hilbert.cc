#include "geolake/geo/hilbert.h"

#include <cmath>
#include <string>

namespace geolake::geo {

uint64_t HilbertEncode(uint32_t x, uint32_t y, int order) {
  GEOLAKE_DCHECK(order >= 0 && order <= kMaxHilbertOrder);
  uint64_t d = 0;
  // Walk from the most significant bit down. At each level the quadrant (rx, ry) adds its rank
  // along the curve times the quadrant size; then the sub-square is reflected/transposed so
  // that the sub-curve inside it has the canonical orientation again.
  for (uint32_t s = order == 0 ? 0 : (uint32_t{1} << (order - 1)); s > 0; s >>= 1) {
    const uint32_t rx = (x & s) != 0 ? 1 : 0;
    const uint32_t ry = (y & s) != 0 ? 1 : 0;
    d += static_cast<uint64_t>(s) * s * ((3 * rx) ^ ry);
    x &= s - 1;
    y &= s - 1;
    if (ry == 0) {
      if (rx == 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      std::swap(x, y);
    }
  }
  return d;
}

std::pair<uint32_t, uint32_t> HilbertDecode(uint64_t d, int order) {
  GEOLAKE_DCHECK(order >= 0 && order <= kMaxHilbertOrder);
  uint32_t x = 0;
  uint32_t y = 0;
  uint64_t t = d;
  // Build the cell from the least significant quadrant up, undoing Encode's reflections.
  for (int level = 0; level < order; ++level) {
    const uint32_t s = uint32_t{1} << level;
    const uint32_t rx = static_cast<uint32_t>((t >> 1) & 1);
    const uint32_t ry = static_cast<uint32_t>((t ^ rx) & 1);
    if (ry == 0) {
      if (rx == 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      std::swap(x, y);
    }
    x += s * rx;
    y += s * ry;
    t >>= 2;
  }
  return {x, y};
}

HilbertCurve::HilbertCurve(const Envelope& extent, int order)
    : extent_(extent),
      order_(order),
      cells_per_side_(std::ldexp(1.0, order)),
      x_scale_(extent.Width() > 0 ? cells_per_side_ / extent.Width() : 0.0),
      y_scale_(extent.Height() > 0 ? cells_per_side_ / extent.Height() : 0.0) {}

Result<HilbertCurve> HilbertCurve::Make(const Envelope& extent, int order) {
  if (order < 0 || order > kMaxHilbertOrder) {
    return Status::InvalidArgument("hilbert curve: order must be in [0, 31], got " +
                                   std::to_string(order));
  }
  if (extent.IsEmpty()) return Status::InvalidArgument("hilbert curve: empty extent");
  if (!std::isfinite(extent.xmin) || !std::isfinite(extent.xmax) || !std::isfinite(extent.ymin) ||
      !std::isfinite(extent.ymax) || !std::isfinite(extent.Width()) ||
      !std::isfinite(extent.Height())) {
    return Status::InvalidArgument("hilbert curve: extent is not finite");
  }
  return HilbertCurve(extent, order);
}

uint32_t HilbertCurve::Column(double v, double min, double scale) const {
  const double cell = (v - min) * scale;
  // Written so that NaN lands in cell 0: every comparison with NaN is false.
  if (!(cell > 0)) return 0;
  if (cell >= cells_per_side_) return static_cast<uint32_t>(cells_per_side_ - 1);
  return static_cast<uint32_t>(cell);
}

uint64_t HilbertCurve::Index(double x, double y) const {
  return HilbertEncode(Column(x, extent_.xmin, x_scale_), Column(y, extent_.ymin, y_scale_),
                       order_);
}

Envelope HilbertCurve::CellBounds(uint64_t d) const {
  const auto [col, row] = HilbertDecode(d, order_);
  const double cell_w = extent_.Width() / cells_per_side_;
  const double cell_h = extent_.Height() / cells_per_side_;
  Envelope box;
  box.xmin = extent_.xmin + col * cell_w;
  box.xmax = col + 1 == cells_per_side_ ? extent_.xmax : extent_.xmin + (col + 1) * cell_w;
  box.ymin = extent_.ymin + row * cell_h;
  box.ymax = row + 1 == cells_per_side_ ? extent_.ymax : extent_.ymin + (row + 1) * cell_h;
  return box;
}

Result<uint64_t> HilbertIndex(double x, double y, const Envelope& extent, int order) {
  GEOLAKE_ASSIGN_OR_RETURN(HilbertCurve curve, HilbertCurve::Make(extent, order));
  return curve.Index(x, y);
}

}  // namespace geolake::geo
