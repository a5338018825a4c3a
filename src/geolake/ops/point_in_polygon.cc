#include "geolake/ops/point_in_polygon.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace geolake::ops {
namespace {

// Shewchuk's ccwerrboundA, (3 + 16 eps) eps with eps = 2^-53: when |det| exceeds this times
// (|detleft| + |detright|), the sign of the double-precision orientation determinant is the
// sign of the exact one (the paper's section 4.2; the rounding of the differences is included).
constexpr double kOrientErrorBound = (3.0 + 16.0 * 0x1p-53) * 0x1p-53;

// Edges per band aimed at; a band list never holds more than this many times the edges in all.
constexpr std::int64_t kEdgesPerBand = 8;
constexpr std::int64_t kMaxReplication = 4;
constexpr int kMaxBands = 1 << 16;

}  // namespace

Result<PointInPolygon> PointInPolygon::Build(const geo::FlatGeometry& polygon) {
  const geo::GeometryType type = polygon.type();
  if (type != geo::GeometryType::kPolygon && type != geo::GeometryType::kMultiPolygon) {
    return Status::InvalidArgument("point in polygon: not a polygon");
  }
  PointInPolygon index;
  const int stride = polygon.stride();
  for (const geo::GeometryPart& part : polygon.parts) {
    if (part.type != geo::GeometryType::kPolygon) continue;
    for (std::uint32_t r = 0; r < part.count; ++r) {
      const geo::GeometryRing& ring = polygon.rings[part.offset + r];
      for (std::uint32_t i = 0; i + 1 < ring.count; ++i) {
        const double* a =
            polygon.coords.data() + static_cast<std::size_t>(ring.offset + i) * stride;
        const double* b = a + stride;
        if (a[0] == b[0] && a[1] == b[1]) continue;  // a repeated vertex is no edge
        index.edges_.push_back({a[0], a[1], b[0], b[1]});
        index.box_.Expand(a[0], a[1]);
        index.box_.Expand(b[0], b[1]);
      }
    }
  }
  const auto n = static_cast<std::int64_t>(index.edges_.size());
  if (n == 0) return index;
  const double height = index.box_.ymax - index.box_.ymin;
  index.bands_ = static_cast<int>(std::clamp<std::int64_t>(n / kEdgesPerBand, 1, kMaxBands));
  if (!(height > 0) || !std::isfinite(height)) index.bands_ = 1;
  // Fewer bands while long edges would replicate too much.
  while (true) {
    index.band_height_ = index.bands_ > 1 ? height / index.bands_ : 1;
    std::int64_t entries = 0;
    for (const Edge& e : index.edges_) {
      entries += index.BandOf(std::max(e.y0, e.y1)) - index.BandOf(std::min(e.y0, e.y1)) + 1;
    }
    if (index.bands_ == 1 || entries <= kMaxReplication * n) break;
    index.bands_ = std::max(1, index.bands_ / 2);
  }
  // Counting sort of (band, edge) entries.
  index.band_begin_.assign(static_cast<std::size_t>(index.bands_) + 1, 0);
  for (const Edge& e : index.edges_) {
    for (int b = index.BandOf(std::min(e.y0, e.y1)); b <= index.BandOf(std::max(e.y0, e.y1)); ++b) {
      ++index.band_begin_[static_cast<std::size_t>(b) + 1];
    }
  }
  for (int b = 0; b < index.bands_; ++b) {
    index.band_begin_[static_cast<std::size_t>(b) + 1] +=
        index.band_begin_[static_cast<std::size_t>(b)];
  }
  index.band_edges_.resize(index.band_begin_.back());
  std::vector<std::uint32_t> fill(index.band_begin_.begin(), index.band_begin_.end() - 1);
  for (std::uint32_t i = 0; i < index.edges_.size(); ++i) {
    const Edge& e = index.edges_[i];
    for (int b = index.BandOf(std::min(e.y0, e.y1)); b <= index.BandOf(std::max(e.y0, e.y1)); ++b) {
      index.band_edges_[fill[static_cast<std::size_t>(b)]++] = i;
    }
  }
  return index;
}

// Monotone in y (a subtraction, a division by a positive number, a floor and a clamp), so an
// edge whose y range holds y is in y's band.
int PointInPolygon::BandOf(double y) const {
  if (bands_ == 1) return 0;
  const double b = std::floor((y - box_.ymin) / band_height_);
  if (!(b > 0)) return 0;
  if (b >= bands_ - 1) return bands_ - 1;
  return static_cast<int>(b);
}

PointInPolygon::Location PointInPolygon::Locate(double x, double y) const {
  if (!std::isfinite(x) || !std::isfinite(y)) return Location::kUnsure;
  if (edges_.empty() || x < box_.xmin || x > box_.xmax || y < box_.ymin || y > box_.ymax) {
    return Location::kExterior;
  }
  const auto band = static_cast<std::size_t>(BandOf(y));
  bool inside = false;
  for (std::uint32_t k = band_begin_[band]; k < band_begin_[band + 1]; ++k) {
    const Edge& e = edges_[band_edges_[k]];
    if (y < std::min(e.y0, e.y1) || y > std::max(e.y0, e.y1)) continue;
    if (x > std::max(e.x0, e.x1)) continue;  // left of the point: no crossing, not on it
    // Half-open in y, so a ray through a vertex counts the crossing once.
    const bool straddles = (e.y0 > y) != (e.y1 > y);
    if (x < std::min(e.x0, e.x1)) {
      if (straddles) inside = !inside;
      continue;
    }
    // The point is in the edge's box: which side of the edge it is on, certified.
    const double detleft = (e.x0 - x) * (e.y1 - y);
    const double detright = (e.y0 - y) * (e.x1 - x);
    const double det = detleft - detright;
    if (!(std::abs(det) > kOrientErrorBound * (std::abs(detleft) + std::abs(detright)))) {
      return Location::kUnsure;  // on the edge, or too near to tell
    }
    if (straddles && ((e.y1 > e.y0) == (det > 0))) inside = !inside;
  }
  return inside ? Location::kInterior : Location::kExterior;
}

std::int64_t PointInPolygon::ByteSize() const {
  return static_cast<std::int64_t>(sizeof(*this) + edges_.capacity() * sizeof(Edge) +
                                   (band_begin_.capacity() + band_edges_.capacity()) *
                                       sizeof(std::uint32_t));
}

}  // namespace geolake::ops
