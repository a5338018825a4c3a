#include "geolake/formats/parquet/geospatial_statistics.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "geolake/core/little_endian.h"

namespace geolake::parquet {
namespace {

constexpr int kMaxWkbDepth = 32;

// A cursor over one WKB value. Every read is bounds-checked.
class WkbScanner {
 public:
  explicit WkbScanner(std::string_view data) : data_(data) {}

  bool ReadByte(std::uint8_t* out) {
    if (pos_ >= data_.size()) return false;
    *out = static_cast<std::uint8_t>(data_[pos_++]);
    return true;
  }
  bool ReadU32(bool little_endian, std::uint32_t* out) {
    if (data_.size() - pos_ < 4) return false;
    *out = LoadEndian<std::uint32_t>(data_.data() + pos_, !little_endian);
    pos_ += 4;
    return true;
  }
  bool ReadDouble(bool little_endian, double* out) {
    if (data_.size() - pos_ < 8) return false;
    *out = LoadEndian<double>(data_.data() + pos_, !little_endian);
    pos_ += 8;
    return true;
  }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

struct Header {
  bool little_endian = true;
  std::uint32_t base_type = 0;  // 1..7
  bool has_z = false;
  bool has_m = false;
  std::int32_t iso_code() const {
    return static_cast<std::int32_t>(base_type + (has_z && has_m ? 3000
                                                  : has_m        ? 2000
                                                  : has_z        ? 1000
                                                                 : 0));
  }
};

bool ReadHeader(WkbScanner& s, Header* h) {
  std::uint8_t order = 0;
  if (!s.ReadByte(&order) || order > 1) return false;
  h->little_endian = order == 1;
  std::uint32_t type = 0;
  if (!s.ReadU32(h->little_endian, &type)) return false;
  // EWKB flags (PostGIS): Z 0x80000000, M 0x40000000, SRID 0x20000000.
  const bool ewkb_z = (type & 0x80000000u) != 0;
  const bool ewkb_m = (type & 0x40000000u) != 0;
  const bool ewkb_srid = (type & 0x20000000u) != 0;
  type &= 0x0FFFFFFFu;
  const std::uint32_t thousands = type / 1000;
  h->base_type = type % 1000;
  if (h->base_type < 1 || h->base_type > 7 || thousands > 3) return false;
  h->has_z = ewkb_z || thousands == 1 || thousands == 3;
  h->has_m = ewkb_m || thousands == 2 || thousands == 3;
  if (ewkb_srid) {
    std::uint32_t srid = 0;
    if (!s.ReadU32(h->little_endian, &srid)) return false;
  }
  return true;
}

}  // namespace

void GeospatialStatisticsAccumulator::Range::Add(double v) {
  if (std::isnan(v)) return;
  if (!seen) {
    lo = hi = v;
    seen = true;
    return;
  }
  if (v < lo) lo = v;
  if (v > hi) hi = v;
}

void GeospatialStatisticsAccumulator::Range::Merge(const Range& other) {
  if (!other.seen) return;
  Add(other.lo);
  Add(other.hi);
}

void GeospatialStatisticsAccumulator::Reset() { *this = GeospatialStatisticsAccumulator{}; }

void GeospatialStatisticsAccumulator::Merge(const GeospatialStatisticsAccumulator& other) {
  valid_ = valid_ && other.valid_;
  x_.Merge(other.x_);
  y_.Merge(other.y_);
  z_.Merge(other.z_);
  m_.Merge(other.m_);
  types_.insert(other.types_.begin(), other.types_.end());
}

Status GeospatialStatisticsAccumulator::Update(std::string_view wkb) {
  WkbScanner s(wkb);
  Range x, y, z, m;
  std::vector<std::int32_t> codes;
  // Recursive descent with an explicit depth bound.
  auto scan = [&](auto&& self, int depth) -> bool {
    if (depth > kMaxWkbDepth) return false;
    Header h;
    if (!ReadHeader(s, &h)) return false;
    codes.push_back(h.iso_code());
    const int dims = 2 + (h.has_z ? 1 : 0) + (h.has_m ? 1 : 0);
    auto read_points = [&](std::uint32_t n) -> bool {
      if (n > s.remaining() / (std::size_t{8} * static_cast<std::size_t>(dims))) return false;
      for (std::uint32_t i = 0; i < n; ++i) {
        double c[4] = {0, 0, 0, 0};
        for (int d = 0; d < dims; ++d) {
          if (!s.ReadDouble(h.little_endian, &c[d])) return false;
        }
        x.Add(c[0]);
        y.Add(c[1]);
        if (h.has_z) z.Add(c[2]);
        if (h.has_m) m.Add(c[h.has_z ? 3 : 2]);
      }
      return true;
    };
    std::uint32_t n = 0;
    switch (h.base_type) {
      case 1:
        return read_points(1);  // POINT EMPTY is all-NaN and adds nothing
      case 2:
        return s.ReadU32(h.little_endian, &n) && read_points(n);
      case 3: {
        if (!s.ReadU32(h.little_endian, &n) || n > s.remaining() / 4) return false;
        for (std::uint32_t r = 0; r < n; ++r) {
          std::uint32_t points = 0;
          if (!s.ReadU32(h.little_endian, &points) || !read_points(points)) return false;
        }
        return true;
      }
      default: {  // 4..7: collections of WKB geometries
        if (!s.ReadU32(h.little_endian, &n) || n > s.remaining() / 5) return false;
        for (std::uint32_t g = 0; g < n; ++g) {
          if (!self(self, depth + 1)) return false;
        }
        return true;
      }
    }
  };
  if (!scan(scan, 0) || !s.at_end()) {
    valid_ = false;
    return Status::CorruptData("geospatial statistics: malformed WKB value of " +
                               std::to_string(wkb.size()) + " bytes");
  }
  x_.Merge(x);
  y_.Merge(y);
  z_.Merge(z);
  m_.Merge(m);
  // Only the outermost type counts: a MultiPolygon's parts are not listed separately.
  if (!codes.empty()) types_.insert(codes.front());
  return Status::OK();
}

std::optional<GeospatialStatistics> GeospatialStatisticsAccumulator::ToThrift() const {
  if (!valid_) return std::nullopt;
  GeospatialStatistics st;
  if (x_.seen && y_.seen) {
    BoundingBox box;
    box.xmin = x_.lo;
    box.xmax = x_.hi;
    box.ymin = y_.lo;
    box.ymax = y_.hi;
    if (z_.seen) {
      box.zmin = z_.lo;
      box.zmax = z_.hi;
    }
    if (m_.seen) {
      box.mmin = m_.lo;
      box.mmax = m_.hi;
    }
    st.bbox = box;
  }
  st.geospatial_types = std::vector<std::int32_t>(types_.begin(), types_.end());
  return st;
}

}  // namespace geolake::parquet
