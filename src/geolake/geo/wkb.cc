#include "geolake/geo/wkb.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "geolake/core/little_endian.h"
#include "geolake/geo/wkt.h"

namespace geolake::geo {

// Doubles and counts are copied to and from the buffers with memcpy in host order; every
// platform geolake targets (x86-64, aarch64) is little-endian, which is also our output order.
static_assert(std::endian::native == std::endian::little, "geolake assumes a little-endian host");

namespace {

constexpr std::uint32_t kEwkbZFlag = 0x80000000u;
constexpr std::uint32_t kEwkbMFlag = 0x40000000u;
constexpr std::uint32_t kEwkbSridFlag = 0x20000000u;
constexpr std::uint32_t kEwkbFlags = kEwkbZFlag | kEwkbMFlag | kEwkbSridFlag;

// Smallest encoding of a collection member: a 5-byte header plus a 4-byte count (an empty
// LineString, Polygon or collection). A member Point needs 5 + coordinate bytes instead.
constexpr std::size_t kMinMemberBytes = 9;

/// Bounds-checked reading position over one WKB value. Every failure names the byte offset.
class WkbCursor {
 public:
  explicit WkbCursor(std::span<const std::uint8_t> data) : data_(data) {}

  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }
  const std::uint8_t* current() const { return data_.data() + pos_; }

  Status Need(std::size_t num_bytes, std::string_view what) const {
    if (remaining() >= num_bytes) return Status::OK();
    return Status::CorruptData(fmt::format("wkb: truncated at byte {}: {} needs {} bytes, {} left",
                                           pos_, what, num_bytes, remaining()));
  }

  // Callers check Need() first.
  std::uint8_t TakeU8() { return data_[pos_++]; }
  std::uint32_t TakeU32(bool big_endian) {
    const std::uint32_t v = LoadEndian<std::uint32_t>(current(), big_endian);
    pos_ += 4;
    return v;
  }
  const std::uint8_t* Skip(std::size_t num_bytes) {
    const std::uint8_t* p = current();
    pos_ += num_bytes;
    return p;
  }

  /// Read a 4-byte element count and check that `count` elements of at least
  /// `min_element_bytes` each fit in what is left, before anyone allocates for them.
  Status TakeCount(bool big_endian, std::size_t min_element_bytes, std::string_view what,
                   std::uint32_t* count) {
    GEOLAKE_RETURN_NOT_OK(Need(4, what));
    const std::size_t count_offset = pos_;
    *count = TakeU32(big_endian);
    // 2^32 * 41 fits in 64 bits, so this product cannot overflow.
    const std::uint64_t needed = std::uint64_t{*count} * min_element_bytes;
    if (needed > remaining()) {
      return Status::CorruptData(
          fmt::format("wkb: {} {} at byte {} need at least {} bytes, only {} left", *count, what,
                      count_offset, needed, remaining()));
    }
    return Status::OK();
  }

 private:
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

struct DecodedHeader {
  GeometryType type = GeometryType::kPoint;
  Dimensions dims = Dimensions::kXY;
  bool big_endian = false;
  bool has_srid = false;
  std::uint32_t srid = 0;
  /// Little-endian with a plain ISO code: already what we write.
  bool canonical = true;
};

Status ReadHeader(WkbCursor& cursor, DecodedHeader* header) {
  const std::size_t start = cursor.offset();
  GEOLAKE_RETURN_NOT_OK(cursor.Need(5, "geometry header"));
  const std::uint8_t order = cursor.TakeU8();
  if (order > 1) {
    return Status::CorruptData(
        fmt::format("wkb: bad byte order marker 0x{:02x} at byte {}", order, start));
  }
  header->big_endian = order == 0;
  const std::uint32_t raw = cursor.TakeU32(header->big_endian);
  const std::uint32_t code = raw & ~kEwkbFlags;
  const std::uint32_t base = code % 1000;
  const std::uint32_t thousands = code / 1000;
  if (base < 1 || base > 7 || thousands > 3) {
    return Status::CorruptData(fmt::format(
        "wkb: unknown geometry type code {} (0x{:08x}) at byte {}", code, raw, start + 1));
  }
  header->type = static_cast<GeometryType>(base);
  // ISO codes and EWKB flags are both honoured; a value using both is read as their union.
  const bool has_z = (raw & kEwkbZFlag) != 0 || (thousands & 1) != 0;
  const bool has_m = (raw & kEwkbMFlag) != 0 || (thousands & 2) != 0;
  header->dims = MakeDimensions(has_z, has_m);
  header->has_srid = (raw & kEwkbSridFlag) != 0;
  if (header->has_srid) {
    GEOLAKE_RETURN_NOT_OK(cursor.Need(4, "EWKB SRID"));
    header->srid = cursor.TakeU32(header->big_endian);
  }
  header->canonical = !header->big_endian && (raw & kEwkbFlags) == 0;
  return Status::OK();
}

/// Walk one geometry, validating everything, and report its structure to `visitor`:
///   OnGeometry(header, count)  at each geometry (count as in GeometryPart::count)
///   OnRing(num_points)         before each polygon ring's coordinates
///   OnCoords(bytes, n, header) for n coordinates stored at `bytes` in the header's byte order
///   OnEnd()                    after each geometry
/// One walker serves the parser, the envelope, the normalizer and the validator, so they
/// cannot disagree on what is valid.
template <typename Visitor>
Status WalkGeometry(WkbCursor& cursor, Visitor& visitor, int depth, const DecodedHeader* parent,
                    GeometryType required_type, bool any_type) {
  if (depth > kMaxGeometryDepth) {
    return Status::CorruptData(fmt::format("wkb: geometry nested deeper than {} levels at byte {}",
                                           kMaxGeometryDepth, cursor.offset()));
  }
  const std::size_t start = cursor.offset();
  DecodedHeader header;
  GEOLAKE_RETURN_NOT_OK(ReadHeader(cursor, &header));
  if (!any_type && header.type != required_type) {
    return Status::CorruptData(fmt::format("wkb: {} at byte {} inside a Multi{}",
                                           GeometryTypeName(header.type), start,
                                           GeometryTypeName(required_type)));
  }
  if (parent != nullptr && parent->dims != header.dims) {
    return Status::CorruptData(
        fmt::format("wkb: member at byte {} has dimensions {} but its collection has {}", start,
                    GeoParquetTypeName(header.type, header.dims),
                    GeoParquetTypeName(parent->type, parent->dims)));
  }
  const std::size_t coord_bytes = 8 * static_cast<std::size_t>(CoordinateSize(header.dims));
  std::uint32_t count = 0;
  switch (header.type) {
    case GeometryType::kPoint: {
      GEOLAKE_RETURN_NOT_OK(cursor.Need(coord_bytes, "point coordinate"));
      visitor.OnGeometry(header, 1);
      visitor.OnCoords(cursor.Skip(coord_bytes), 1, header);
      break;
    }
    case GeometryType::kLineString: {
      GEOLAKE_RETURN_NOT_OK(cursor.TakeCount(header.big_endian, coord_bytes, "points", &count));
      visitor.OnGeometry(header, count);
      visitor.OnCoords(cursor.Skip(count * coord_bytes), count, header);
      break;
    }
    case GeometryType::kPolygon: {
      GEOLAKE_RETURN_NOT_OK(cursor.TakeCount(header.big_endian, 4, "rings", &count));
      visitor.OnGeometry(header, count);
      for (std::uint32_t ring_idx = 0; ring_idx < count; ++ring_idx) {
        std::uint32_t num_points = 0;
        GEOLAKE_RETURN_NOT_OK(
            cursor.TakeCount(header.big_endian, coord_bytes, "ring points", &num_points));
        visitor.OnRing(num_points);
        visitor.OnCoords(cursor.Skip(num_points * coord_bytes), num_points, header);
      }
      break;
    }
    case GeometryType::kMultiPoint:
    case GeometryType::kMultiLineString:
    case GeometryType::kMultiPolygon:
    case GeometryType::kGeometryCollection: {
      const bool members_any = header.type == GeometryType::kGeometryCollection;
      const GeometryType member_type =
          members_any ? GeometryType::kPoint
                      : static_cast<GeometryType>(static_cast<int>(header.type) - 3);
      const std::size_t min_member =
          header.type == GeometryType::kMultiPoint ? 5 + coord_bytes : kMinMemberBytes;
      GEOLAKE_RETURN_NOT_OK(cursor.TakeCount(header.big_endian, min_member, "members", &count));
      visitor.OnGeometry(header, count);
      for (std::uint32_t member_idx = 0; member_idx < count; ++member_idx) {
        GEOLAKE_RETURN_NOT_OK(
            WalkGeometry(cursor, visitor, depth + 1, &header, member_type, members_any));
      }
      break;
    }
  }
  visitor.OnEnd();
  return Status::OK();
}

template <typename Visitor>
Status WalkWkb(std::span<const std::uint8_t> wkb, Visitor& visitor) {
  WkbCursor cursor(wkb);
  GEOLAKE_RETURN_NOT_OK(WalkGeometry(cursor, visitor, 1, nullptr, GeometryType::kPoint, true));
  if (cursor.remaining() != 0) {
    return Status::CorruptData(fmt::format("wkb: {} trailing bytes after the geometry at byte {}",
                                           cursor.remaining(), cursor.offset()));
  }
  return Status::OK();
}

/// Builds a FlatGeometry. Allocation is bounded by the walker's count checks: every part, ring and
/// coordinate appended is backed by bytes already read.
class BuildVisitor {
 public:
  explicit BuildVisitor(FlatGeometry* geometry) : geometry_(geometry) {}

  void OnGeometry(const DecodedHeader& header, std::uint32_t count) {
    if (geometry_->parts.empty()) geometry_->dims = header.dims;
    GeometryPart part;
    part.type = header.type;
    part.count = count;
    if (header.type == GeometryType::kPolygon) {
      part.offset = static_cast<std::uint32_t>(geometry_->rings.size());
    } else if (!IsCollection(header.type)) {
      part.offset = static_cast<std::uint32_t>(geometry_->num_coordinates());
    }
    open_[depth_++] = static_cast<std::uint32_t>(geometry_->parts.size());
    geometry_->parts.push_back(part);
  }

  void OnRing(std::uint32_t num_points) {
    geometry_->rings.push_back(
        {static_cast<std::uint32_t>(geometry_->num_coordinates()), num_points});
  }

  void OnCoords(const std::uint8_t* bytes, std::uint32_t num_coords, const DecodedHeader& header) {
    const std::size_t num_doubles =
        std::size_t{num_coords} * static_cast<std::size_t>(CoordinateSize(header.dims));
    if (num_doubles == 0) return;  // coords.data() may be null: no memcpy from/to it
    const std::size_t old_size = geometry_->coords.size();
    geometry_->coords.resize(old_size + num_doubles);
    double* out = geometry_->coords.data() + old_size;
    if (header.big_endian) {
      for (std::size_t idx = 0; idx < num_doubles; ++idx)
        out[idx] = LoadEndian<double>(bytes + 8 * idx, true);
    } else {
      std::memcpy(out, bytes, num_doubles * 8);
    }
  }

  void OnEnd() {
    geometry_->parts[open_[--depth_]].end = static_cast<std::uint32_t>(geometry_->parts.size());
  }

 private:
  FlatGeometry* geometry_;
  // The walker refuses nesting deeper than kMaxGeometryDepth, so a fixed stack suffices.
  std::array<std::uint32_t, kMaxGeometryDepth + 1> open_{};
  int depth_ = 0;
};

// Expands `envelope` by the coordinates; returns false when an x or y is NaN or infinite.
template <bool kBigEndian>
bool ExpandByCoords(Envelope* envelope, const std::uint8_t* bytes, std::uint32_t num_coords,
                    std::size_t coord_bytes) {
  // Accumulate in locals so that the four bounds stay in registers; this loop is the whole
  // cost of WkbEnvelope on large geometries.
  double xmin = envelope->xmin, ymin = envelope->ymin;
  double xmax = envelope->xmax, ymax = envelope->ymax;
  bool finite = true;
  for (std::uint32_t coord_idx = 0; coord_idx < num_coords; ++coord_idx) {
    const std::uint8_t* p = bytes + coord_idx * coord_bytes;
    const double x = LoadEndian<double>(p, kBigEndian);
    const double y = LoadEndian<double>(p + 8, kBigEndian);
    // Every comparison with NaN is false, so a NaN ordinate leaves its bounds as they are;
    // written this way the selects compile to branch-free minsd/maxsd.
    xmin = x < xmin ? x : xmin;
    xmax = x > xmax ? x : xmax;
    ymin = y < ymin ? y : ymin;
    ymax = y > ymax ? y : ymax;
    // v - v is 0 for a finite v and NaN for NaN or infinity: no branch.
    finite &= (x - x == 0.0) & (y - y == 0.0);
  }
  *envelope = Envelope{xmin, ymin, xmax, ymax};
  return finite;
}

// POINT EMPTY as WKB writes it: a point whose x and y are both NaN.
bool IsEmptyPoint(const std::uint8_t* bytes, const DecodedHeader& header) {
  return std::isnan(LoadEndian<double>(bytes, header.big_endian)) &&
         std::isnan(LoadEndian<double>(bytes + 8, header.big_endian));
}

/// Computes the envelope, remembers the outer header and whether every header is canonical.
class SummaryVisitor {
 public:
  void OnGeometry(const DecodedHeader& header, std::uint32_t) {
    if (!seen_outer_) {
      seen_outer_ = true;
      summary.header.type = header.type;
      summary.header.dims = header.dims;
      summary.header.big_endian = header.big_endian;
      summary.header.has_srid = header.has_srid;
      summary.header.srid = header.srid;
    }
    canonical &= header.canonical;
  }
  void OnRing(std::uint32_t) {}
  void OnCoords(const std::uint8_t* bytes, std::uint32_t num_coords, const DecodedHeader& header) {
    if (!want_envelope) return;
    const std::size_t coord_bytes = 8 * static_cast<std::size_t>(CoordinateSize(header.dims));
    const bool finite =
        header.big_endian
            ? ExpandByCoords<true>(&summary.envelope, bytes, num_coords, coord_bytes)
            : ExpandByCoords<false>(&summary.envelope, bytes, num_coords, coord_bytes);
    if (!finite && !(header.type == GeometryType::kPoint && IsEmptyPoint(bytes, header))) {
      summary.non_finite = true;
    }
  }
  void OnEnd() {}

  WkbSummary summary;
  bool canonical = true;
  /// NormalizeWkb without a summary skips the coordinates entirely (about 4x faster).
  bool want_envelope = true;

 private:
  bool seen_outer_ = false;
};

/// Re-encodes as ISO little-endian WKB while walking.
class WriteVisitor {
 public:
  explicit WriteVisitor(std::string* out) : out_(out) {}

  void OnGeometry(const DecodedHeader& header, std::uint32_t count) {
    out_->push_back('\x01');
    AppendLE<std::uint32_t>(IsoWkbCode(header.type, header.dims), out_);
    if (header.type != GeometryType::kPoint) AppendLE<std::uint32_t>(count, out_);
  }
  void OnRing(std::uint32_t num_points) { AppendLE<std::uint32_t>(num_points, out_); }
  void OnCoords(const std::uint8_t* bytes, std::uint32_t num_coords, const DecodedHeader& header) {
    const std::size_t num_doubles =
        std::size_t{num_coords} * static_cast<std::size_t>(CoordinateSize(header.dims));
    if (!header.big_endian) {
      out_->append(reinterpret_cast<const char*>(bytes), num_doubles * 8);
      return;
    }
    // Grow once and swap in place: appending 8 bytes at a time costs about 4x more.
    const std::size_t old_size = out_->size();
    out_->resize(old_size + num_doubles * 8);
    char* dst = out_->data() + old_size;
    for (std::size_t idx = 0; idx < num_doubles; ++idx) {
      StoreLE(LoadBE<double>(bytes + 8 * idx), dst + 8 * idx);
    }
  }
  void OnEnd() {}

 private:
  std::string* out_;
};

void AppendCoords(const FlatGeometry& geometry, std::uint32_t first, std::uint32_t count,
                  std::string* out) {
  if (count == 0) return;
  const std::size_t stride = static_cast<std::size_t>(geometry.stride());
  GEOLAKE_DCHECK((std::size_t{first} + count) * stride <= geometry.coords.size());
  out->append(reinterpret_cast<const char*>(geometry.coords.data() + first * stride),
              std::size_t{count} * stride * sizeof(double));
}

/// Writes part `part_idx` and returns the index of the part after its subtree.
std::uint32_t WritePart(const FlatGeometry& geometry, std::uint32_t part_idx, std::string* out) {
  GEOLAKE_DCHECK(part_idx < geometry.parts.size());
  const GeometryPart& part = geometry.parts[part_idx];
  out->push_back('\x01');
  AppendLE<std::uint32_t>(IsoWkbCode(part.type, geometry.dims), out);
  switch (part.type) {
    case GeometryType::kPoint:
      AppendCoords(geometry, part.offset, 1, out);
      break;
    case GeometryType::kLineString:
      AppendLE<std::uint32_t>(part.count, out);
      AppendCoords(geometry, part.offset, part.count, out);
      break;
    case GeometryType::kPolygon:
      AppendLE<std::uint32_t>(part.count, out);
      for (std::uint32_t ring_idx = 0; ring_idx < part.count; ++ring_idx) {
        GEOLAKE_DCHECK(part.offset + ring_idx < geometry.rings.size());
        const GeometryRing& ring = geometry.rings[part.offset + ring_idx];
        AppendLE<std::uint32_t>(ring.count, out);
        AppendCoords(geometry, ring.offset, ring.count, out);
      }
      break;
    default: {
      AppendLE<std::uint32_t>(part.count, out);
      std::uint32_t child_idx = part_idx + 1;
      for (std::uint32_t member_idx = 0; member_idx < part.count; ++member_idx) {
        child_idx = WritePart(geometry, child_idx, out);
      }
      break;
    }
  }
  return part.end;
}

bool SameDouble(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

bool FlatGeometry::IsEmpty() const {
  const std::size_t step = static_cast<std::size_t>(stride());
  for (std::size_t idx = 0; idx + 1 < coords.size(); idx += step) {
    if (!std::isnan(coords[idx]) || !std::isnan(coords[idx + 1])) return false;
  }
  return true;
}

Envelope FlatGeometry::GetEnvelope() const {
  Envelope envelope;
  const std::size_t step = static_cast<std::size_t>(stride());
  for (std::size_t idx = 0; idx + 1 < coords.size(); idx += step) {
    envelope.Expand(coords[idx], coords[idx + 1]);
  }
  return envelope;
}

bool FlatGeometry::operator==(const FlatGeometry& other) const {
  if (dims != other.dims || parts.size() != other.parts.size() ||
      rings.size() != other.rings.size() || coords.size() != other.coords.size()) {
    return false;
  }
  for (std::size_t idx = 0; idx < parts.size(); ++idx) {
    const GeometryPart& a = parts[idx];
    const GeometryPart& b = other.parts[idx];
    if (a.type != b.type || a.count != b.count || a.offset != b.offset || a.end != b.end) {
      return false;
    }
  }
  for (std::size_t idx = 0; idx < rings.size(); ++idx) {
    if (rings[idx].offset != other.rings[idx].offset ||
        rings[idx].count != other.rings[idx].count) {
      return false;
    }
  }
  for (std::size_t idx = 0; idx < coords.size(); ++idx) {
    if (!SameDouble(coords[idx], other.coords[idx])) return false;
  }
  return true;
}

FlatGeometry FlatGeometry::MakePoint(double x, double y) {
  FlatGeometry geometry;
  geometry.parts.push_back({GeometryType::kPoint, 1, 0, 1});
  geometry.coords = {x, y};
  return geometry;
}

Result<FlatGeometry> ParseWkb(std::span<const std::uint8_t> wkb) {
  FlatGeometry geometry;
  BuildVisitor visitor(&geometry);
  GEOLAKE_RETURN_NOT_OK(WalkWkb(wkb, visitor));
  return geometry;
}

std::string WriteWkb(const FlatGeometry& geometry) {
  std::string out;
  if (geometry.parts.empty()) return out;
  out.reserve(9 * geometry.parts.size() + 4 * geometry.rings.size() + 8 * geometry.coords.size());
  WritePart(geometry, 0, &out);
  return out;
}

Status NormalizeWkbAppend(std::span<const std::uint8_t> wkb, std::string* out,
                          WkbSummary* summary) {
  SummaryVisitor check;
  check.want_envelope = summary != nullptr;
  GEOLAKE_RETURN_NOT_OK(WalkWkb(wkb, check));
  if (summary != nullptr) *summary = check.summary;
  if (check.canonical) {
    out->append(reinterpret_cast<const char*>(wkb.data()), wkb.size());
    return Status::OK();
  }
  // The validating pass succeeded, so this second walk cannot fail half-way through. (No
  // reserve here: an exact reserve per call would defeat the string's geometric growth when
  // many values are appended to one buffer.)
  WriteVisitor writer(out);
  return WalkWkb(wkb, writer);
}

bool IsCanonicalWkb(std::span<const std::uint8_t> wkb) {
  SummaryVisitor check;
  check.want_envelope = false;
  return WalkWkb(wkb, check).ok() && check.canonical;
}

Result<std::string> NormalizeWkb(std::span<const std::uint8_t> wkb, WkbSummary* summary) {
  std::string out;
  GEOLAKE_RETURN_NOT_OK(NormalizeWkbAppend(wkb, &out, summary));
  return out;
}

Result<Envelope> WkbEnvelope(std::span<const std::uint8_t> wkb) {
  SummaryVisitor visitor;
  GEOLAKE_RETURN_NOT_OK(WalkWkb(wkb, visitor));
  return visitor.summary.envelope;
}

Result<WkbSummary> SummarizeWkb(std::span<const std::uint8_t> wkb) {
  SummaryVisitor visitor;
  GEOLAKE_RETURN_NOT_OK(WalkWkb(wkb, visitor));
  return visitor.summary;
}

Result<WkbHeader> PeekWkbType(std::span<const std::uint8_t> wkb) {
  WkbCursor cursor(wkb);
  DecodedHeader decoded;
  GEOLAKE_RETURN_NOT_OK(ReadHeader(cursor, &decoded));
  WkbHeader header;
  header.type = decoded.type;
  header.dims = decoded.dims;
  header.big_endian = decoded.big_endian;
  header.has_srid = decoded.has_srid;
  header.srid = decoded.srid;
  return header;
}

Result<std::string> WkbToWkt(std::span<const std::uint8_t> wkb, int precision) {
  GEOLAKE_ASSIGN_OR_RETURN(FlatGeometry geometry, ParseWkb(wkb));
  return WriteWkt(geometry, precision);
}

}  // namespace geolake::geo
