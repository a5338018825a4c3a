/// \file
/// The WKB codec: a compact in-memory FlatGeometry value and the functions that read and write
/// Well-Known Binary. Every geometry column geolake writes is ISO WKB, little-endian; the reader
/// also accepts big-endian input and PostGIS/GEOS extended WKB (EWKB: high-bit Z/M/SRID flags).
/// Malformed input never crashes and never makes the reader allocate more than the input size
/// could justify; it is reported as kCorruptData with the byte offset where reading failed.
/// The free functions keep no state and are safe to call from any number of threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/geometry_type.h"

namespace geolake::geo {

/// Deepest nesting the readers accept (a collection inside a collection ... counts one per
/// level; a MultiPolygon is depth 2). Deeper input is refused as kCorruptData.
inline constexpr int kMaxGeometryDepth = 32;

/// \brief One node of a FlatGeometry's tree, stored in preorder.
struct GeometryPart {
  GeometryType type = GeometryType::kPoint;
  /// Point: 1. LineString: number of points. Polygon: number of rings. Multi*/collection:
  /// number of direct children.
  std::uint32_t count = 0;
  /// Point/LineString: index of the first coordinate (in coordinates, not doubles) in
  /// FlatGeometry::coords. Polygon: index of the first ring in FlatGeometry::rings. Otherwise 0.
  std::uint32_t offset = 0;
  /// Index one past this part's subtree in FlatGeometry::parts; the next sibling starts there.
  std::uint32_t end = 0;
};

/// \brief A polygon ring: `count` coordinates starting at coordinate index `offset`.
struct GeometryRing {
  std::uint32_t offset = 0;
  std::uint32_t count = 0;
};

/// \brief A geometry of any of the seven types, flat: all coordinates in one array, the tree
/// as a preorder array of parts, and polygon rings as (offset, count) pairs.
///
/// parts[0] is the root. The children of a collection part at index i start at i + 1; each
/// child's `end` leads to the next. POINT EMPTY is a Point whose coordinate is all NaN (that is
/// how WKB writes it); an empty LineString, Polygon or collection has count 0. All parts share
/// one Dimensions. A value type: copy it, move it; const methods are thread-safe. (Not to be
/// confused with geos.h's Geometry, an owned GEOS handle; both travel as WKB between them.)
struct FlatGeometry {
  Dimensions dims = Dimensions::kXY;
  std::vector<GeometryPart> parts;
  std::vector<GeometryRing> rings;
  /// Interleaved coordinates: x, y[, z][, m] per coordinate (x = lon/easting).
  std::vector<double> coords;

  GeometryType type() const { return parts.empty() ? GeometryType::kPoint : parts[0].type; }
  int stride() const { return CoordinateSize(dims); }
  std::size_t num_coordinates() const { return coords.size() / CoordinateSize(dims); }

  /// \brief The doubles of coordinate `coord_idx` (stride() of them).
  std::span<const double> coordinate(std::size_t coord_idx) const {
    return {coords.data() + coord_idx * stride(), static_cast<std::size_t>(stride())};
  }

  /// \brief True when the geometry has no non-empty point (POINT EMPTY, LINESTRING EMPTY,
  /// a collection whose members are all empty, ...).
  bool IsEmpty() const;

  /// \brief The 2D envelope of all coordinates, NaN ignored; empty for an empty geometry.
  Envelope GetEnvelope() const;

  /// \brief Structural equality; NaN coordinates compare equal to NaN (so POINT EMPTY ==
  /// POINT EMPTY).
  bool operator==(const FlatGeometry& other) const;

  /// \brief A 2D point (a convenience for tests and callers).
  static FlatGeometry MakePoint(double x, double y);
};

/// \brief What the outer header of a WKB value says.
struct WkbHeader {
  GeometryType type = GeometryType::kPoint;
  Dimensions dims = Dimensions::kXY;
  bool big_endian = false;
  /// True when the value is EWKB with the SRID flag; `srid` then holds it.
  bool has_srid = false;
  std::uint32_t srid = 0;
};

/// \brief Decode a whole WKB value (ISO or EWKB, either byte order) into a FlatGeometry.
///
/// Errors: kCorruptData naming the byte offset for truncation, a bad byte-order marker, an
/// unknown type code, a member of the wrong type inside a Multi* (or of other dimensions than
/// its parent), nesting deeper than kMaxGeometryDepth, a count that the remaining bytes cannot
/// hold, or trailing bytes after the geometry.
Result<FlatGeometry> ParseWkb(std::span<const std::uint8_t> wkb);

/// \brief Encode as ISO WKB, little-endian (codes 1..7, 1001.., 2001.., 3001..).
///
/// A FlatGeometry whose parts are inconsistent (counts pointing past the arrays) is a programmer
/// error; build geometries with ParseWkb/ParseWkt or keep to the invariants documented above.
std::string WriteWkb(const FlatGeometry& geometry);

/// \brief What one validating pass over a WKB value learns: its outer header, its 2D
/// envelope (NaN ignored; empty for an empty geometry) and whether an x or y is not finite.
struct WkbSummary {
  WkbHeader header;
  Envelope envelope;
  /// An x or y is NaN or infinite (POINT EMPTY, written as a NaN point, excepted). Such a
  /// geometry is invalid: GEOS, the envelope and the spatial keys cannot place it.
  bool non_finite = false;
};

/// \brief Rewrite any WKB that ParseWkb accepts as ISO little-endian WKB without an SRID.
///
/// When the input already is (every header little-endian, plain ISO codes) the bytes are
/// copied as they are after one validating pass; otherwise they are re-encoded in a second
/// pass without building a FlatGeometry. When `summary` is not null it receives the header and
/// envelope from the validating pass, which saves a writer calling WkbEnvelope and
/// PeekWkbType on the result (the ingest path: one walk instead of three). Errors: as ParseWkb.
Result<std::string> NormalizeWkb(std::span<const std::uint8_t> wkb, WkbSummary* summary = nullptr);

/// \brief NormalizeWkb that appends the ISO WKB to `out` instead of returning a new string
/// (the ingest path: no allocation per geometry). On error `out` is left as it was.
Status NormalizeWkbAppend(std::span<const std::uint8_t> wkb, std::string* out,
                          WkbSummary* summary = nullptr);

/// \brief True when `wkb` is valid (as ParseWkb) and already what NormalizeWkb returns: every
/// header little-endian, plain ISO codes, no SRID, so the bytes may be used as they are. One
/// validating pass, no copy.
bool IsCanonicalWkb(std::span<const std::uint8_t> wkb);

/// \brief The 2D envelope of a WKB value, NaN coordinates ignored, without building a
/// FlatGeometry and without allocating. The whole value is validated. Errors: as ParseWkb.
Result<Envelope> WkbEnvelope(std::span<const std::uint8_t> wkb);

/// \brief Header and envelope in one validating pass, without allocating. Errors: as ParseWkb.
Result<WkbSummary> SummarizeWkb(std::span<const std::uint8_t> wkb);

/// \brief Read only the outer header: type, dimensions, byte order, SRID. Nested parts are
/// not validated. Errors: kCorruptData for a short or malformed header.
Result<WkbHeader> PeekWkbType(std::span<const std::uint8_t> wkb);

/// \brief Convert WKB to WKT ("POLYGON Z ((...))"). `precision` <= 0 writes each number in the
/// shortest form that reads back to the same double; a positive value writes that many
/// significant digits. Errors: as ParseWkb.
Result<std::string> WkbToWkt(std::span<const std::uint8_t> wkb, int precision = 0);

/// \brief View a std::string of WKB bytes as the span the functions above take.
inline std::span<const std::uint8_t> AsBytes(std::string_view bytes) {
  return {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()};
}

}  // namespace geolake::geo
