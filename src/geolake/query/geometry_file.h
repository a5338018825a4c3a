/// \file
/// The geometry of `query --intersects FILE`: the union of every geometry of a vector file GDAL
/// reads (its first layer), as ISO WKB for QueryOptions::intersects_wkb, and the resolution of
/// the `--intersects` argument (such a file, a file holding WKT, or WKT text).
#pragma once

#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/query/scan.h"

namespace geolake::query {

/// \brief Read the first layer of `path` and union its geometries (features without one are
/// skipped). `table_crs` is the table's geolake.crs ("EPSG:4326"; EPSG:4326 and OGC:CRS84 count
/// as one); a file whose layer declares another CRS is refused, since it is not reprojected.
///
/// Errors: kNotFound when GDAL cannot open the file as vector data (the caller may then read
/// it as WKT text); kInvalidArgument for a file without geometries or in another CRS;
/// kGeometryError when GEOS cannot parse or union the geometries.
Result<std::string> ReadGeometryFileUnion(const std::string& path, std::string_view table_crs);

/// \brief Set `options->intersects_wkb` or `intersects_wkt` from a `--intersects` argument: an
/// existing regular file is read as a vector file (ReadGeometryFileUnion) or else as WKT text;
/// anything else is WKT text. An empty argument or a file with nothing but white space is an
/// error, never "no filter" (before, a 0-byte file returned every row).
///
/// Errors: kInvalidArgument for an empty argument or file (naming it), and those of
/// ReadGeometryFileUnion and of reading the file.
Status ResolveIntersects(const std::string& argument, std::string_view table_crs,
                         const io::FileIO& io, QueryOptions* options);

}  // namespace geolake::query
