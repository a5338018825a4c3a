/// \file
/// Well-Known Text for the FlatGeometry value of wkb.h: a writer (what `geolake cat` prints) and a
/// small parser (tests, the ops test cases, `query --intersects WKT`). Both cover the seven
/// types in XY, Z, M and ZM, and EMPTY at any level.
#pragma once

#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/geo/wkb.h"

namespace geolake::geo {

/// \brief Write `geometry` as WKT, e.g. "POLYGON Z ((0 0 1, 1 0 1, 1 1 1, 0 0 1))".
///
/// Keywords are upper case, followed by " Z", " M" or " ZM" when the geometry has them, then a
/// space and the body. `precision` <= 0 writes each number in the shortest form that reads back
/// to the same double (1.0 is "1"); a positive value writes that many significant digits. A
/// point with NaN x and y is "EMPTY". MultiPoint members are parenthesised: "MULTIPOINT ((1 2),
/// (3 4))".
std::string WriteWkt(const FlatGeometry& geometry, int precision = 0);

/// \brief Parse WKT into a FlatGeometry.
///
/// Accepts keywords in any case, the dimension tag separate or glued ("POINT Z", "POINTZ"), no
/// tag with the dimension taken from the coordinate count (3 = XYZ, 4 = XYZM), MultiPoint
/// members with or without parentheses, EMPTY at any level, and an EWKT "SRID=n;" prefix
/// (ignored). Errors: kInvalidArgument with the character position for anything else,
/// including mixed dimensions, nesting deeper than kMaxGeometryDepth, and trailing text.
Result<FlatGeometry> ParseWkt(std::string_view wkt);

/// \brief ParseWkt then WriteWkb: WKT to ISO little-endian WKB. Errors: as ParseWkt.
Result<std::string> WktToWkb(std::string_view wkt);

}  // namespace geolake::geo
