/// \file
/// The names of the columns geolake adds after a source's attributes (docs/table-layout.md
/// "Columns"): one definition for the table layout, the data-file writer and the readers.
#pragma once

#include <string_view>

#include "geolake/formats/geoparquet/feature_batch.h"

namespace geolake::geoparquet {

inline constexpr std::string_view kGeometryColumn = "geometry";
inline constexpr std::string_view kBboxColumn = "bbox";
inline constexpr std::string_view kCellColumn = "geo_cell";
inline constexpr std::string_view kHilbertColumn = "geo_hilbert";

/// \brief True for a source attribute that is one of the layout columns geolake derives from
/// each row's geometry: `geo_cell` holding text or `geo_hilbert` holding an int64. A file
/// geolake wrote (a data file, `convert`, `query -o parquet --columns ...`) carries them; a
/// table that reads it as a source computes its own for its CRS, partitioning and Hilbert
/// extent, so such a field is not an attribute (not a column of the new table, not "dropped").
/// `geometry` and `bbox` never reach the attributes of a GeoParquet source (the primary
/// geometry column and the covering struct are read as such); a field of another type under a
/// layout name is a user's column and stays a conflict.
inline bool IsRecomputedLayoutField(const FieldDef& field) {
  return (field.name == kCellColumn && field.type == FieldType::kString) ||
         (field.name == kHilbertColumn && field.type == FieldType::kInt64);
}

}  // namespace geolake::geoparquet
