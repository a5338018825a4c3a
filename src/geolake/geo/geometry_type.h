/// \file
/// GeometryType and Dimensions: the seven OGC simple-feature types with their WKB codes, the
/// four coordinate layouts (XY, XYZ, XYM, XYZM), and the names each format spells them with:
/// ISO WKB codes (1003 = Polygon Z), WKT keywords ("MULTIPOLYGON") and the GeoParquet
/// `geometry_types` strings ("MultiPolygon Z").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/core/result.h"

namespace geolake::geo {

/// \brief The seven simple-feature geometry types; the values are the 2D WKB type codes.
enum class GeometryType : std::uint8_t {
  kPoint = 1,
  kLineString = 2,
  kPolygon = 3,
  kMultiPoint = 4,
  kMultiLineString = 5,
  kMultiPolygon = 6,
  kGeometryCollection = 7,
};

/// \brief Coordinate layout; the values are the thousands digit of ISO WKB type codes.
enum class Dimensions : std::uint8_t {
  kXY = 0,
  kXYZ = 1,
  kXYM = 2,
  kXYZM = 3,
};

constexpr bool HasZ(Dimensions dims) {
  return dims == Dimensions::kXYZ || dims == Dimensions::kXYZM;
}
constexpr bool HasM(Dimensions dims) {
  return dims == Dimensions::kXYM || dims == Dimensions::kXYZM;
}

/// \brief Number of doubles per coordinate: 2, 3 or 4.
constexpr int CoordinateSize(Dimensions dims) { return 2 + HasZ(dims) + HasM(dims); }

/// \brief The Dimensions with the given Z and M flags.
constexpr Dimensions MakeDimensions(bool has_z, bool has_m) {
  return static_cast<Dimensions>((has_z ? 1 : 0) + (has_m ? 2 : 0));
}

/// \brief True for MultiPoint, MultiLineString, MultiPolygon and GeometryCollection.
constexpr bool IsCollection(GeometryType type) {
  return static_cast<int>(type) >= static_cast<int>(GeometryType::kMultiPoint);
}

/// \brief The ISO WKB type code: 1..7 plus 1000 (Z), 2000 (M) or 3000 (ZM).
constexpr std::uint32_t IsoWkbCode(GeometryType type, Dimensions dims) {
  return static_cast<std::uint32_t>(type) + 1000u * static_cast<std::uint32_t>(dims);
}

/// \brief "Point", "LineString", ... "GeometryCollection".
std::string_view GeometryTypeName(GeometryType type);

/// \brief The WKT keyword: "POINT", "LINESTRING", ... "GEOMETRYCOLLECTION".
std::string_view WktKeyword(GeometryType type);

/// \brief The GeoParquet `geometry_types` name: "Point", "MultiPolygon Z", "LineString M",
/// "Point ZM".
///
/// GeoParquet 1.1 allows only the XY and Z forms; the " M"/" ZM" suffixes are those of the
/// 2.0 draft. Callers that write 1.1 files decide whether to drop M first.
std::string GeoParquetTypeName(GeometryType type, Dimensions dims);

/// \brief A geometry type together with its coordinate layout.
struct TypedDimensions {
  GeometryType type = GeometryType::kPoint;
  Dimensions dims = Dimensions::kXY;
  bool operator==(const TypedDimensions&) const = default;
};

/// \brief Parse a GeoParquet `geometry_types` name (exact spelling, as GeoParquetTypeName
/// writes it). Fails with kInvalidArgument naming the text otherwise.
Result<TypedDimensions> ParseGeoParquetTypeName(std::string_view name);

}  // namespace geolake::geo
