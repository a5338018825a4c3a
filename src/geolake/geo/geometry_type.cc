#include "geolake/geo/geometry_type.h"

#include <array>

namespace geolake::geo {
namespace {

constexpr std::array<std::string_view, 8> kTypeNames = {
    "Unknown",    "Point",           "LineString",   "Polygon",
    "MultiPoint", "MultiLineString", "MultiPolygon", "GeometryCollection"};

constexpr std::array<std::string_view, 8> kWktKeywords = {
    "UNKNOWN",    "POINT",           "LINESTRING",   "POLYGON",
    "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"};

constexpr std::array<std::string_view, 4> kDimSuffixes = {"", " Z", " M", " ZM"};

}  // namespace

std::string_view GeometryTypeName(GeometryType type) {
  const auto idx = static_cast<size_t>(type);
  return idx < kTypeNames.size() ? kTypeNames[idx] : kTypeNames[0];
}

std::string_view WktKeyword(GeometryType type) {
  const auto idx = static_cast<size_t>(type);
  return idx < kWktKeywords.size() ? kWktKeywords[idx] : kWktKeywords[0];
}

std::string GeoParquetTypeName(GeometryType type, Dimensions dims) {
  std::string name(GeometryTypeName(type));
  name += kDimSuffixes[static_cast<size_t>(dims) & 3];
  return name;
}

Result<TypedDimensions> ParseGeoParquetTypeName(std::string_view name) {
  for (size_t type_idx = 1; type_idx < kTypeNames.size(); ++type_idx) {
    const std::string_view base = kTypeNames[type_idx];
    if (name.substr(0, base.size()) != base) continue;
    const std::string_view suffix = name.substr(base.size());
    for (size_t dim_idx = 0; dim_idx < kDimSuffixes.size(); ++dim_idx) {
      if (suffix == kDimSuffixes[dim_idx]) {
        return TypedDimensions{static_cast<GeometryType>(type_idx),
                               static_cast<Dimensions>(dim_idx)};
      }
    }
  }
  return Status::InvalidArgument("unknown GeoParquet geometry type '" + std::string(name) + "'");
}

}  // namespace geolake::geo
