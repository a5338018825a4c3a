/// \file
/// The geometry of `query --intersects FILE`: the union of every geometry of a vector file GDAL
/// reads (its first layer), as ISO WKB for QueryOptions::intersects_wkb.
#pragma once

#include <string>
#include <string_view>

#include "geolake/core/result.h"

namespace geolake::query {

/// \brief Read the first layer of `path` and union its geometries (features without one are
/// skipped). `table_crs` is the table's geolake.crs ("EPSG:4326"; EPSG:4326 and OGC:CRS84 count
/// as one); a file whose layer declares another CRS is refused, since it is not reprojected.
///
/// Errors: kNotFound when GDAL cannot open the file as vector data (the caller may then read
/// it as WKT text); kInvalidArgument for a file without geometries or in another CRS;
/// kGeometryError when GEOS cannot parse or union the geometries.
Result<std::string> ReadGeometryFileUnion(const std::string& path, std::string_view table_crs);

}  // namespace geolake::query
