/// \file
/// The names of the columns geolake adds after a source's attributes (docs/table-layout.md
/// "Columns"): one definition for the table layout, the data-file writer and the readers.
#pragma once

#include <string_view>

namespace geolake::geoparquet {

inline constexpr std::string_view kGeometryColumn = "geometry";
inline constexpr std::string_view kBboxColumn = "bbox";
inline constexpr std::string_view kCellColumn = "geo_cell";
inline constexpr std::string_view kHilbertColumn = "geo_hilbert";

}  // namespace geolake::geoparquet
