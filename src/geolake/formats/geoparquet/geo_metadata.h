/// \file
/// The GeoParquet "geo" file metadata (GeoParquet 1.1.0): the JSON document stored under the
/// Parquet key-value key "geo" that names the geometry columns, their encoding, geometry types,
/// CRS, bbox and bbox covering. GeoMetadata::ToJson writes it strictly (1.1.0 rules);
/// GeoMetadata::Parse reads 1.0.x and 1.1.x documents tolerantly (unknown keys are ignored,
/// values geolake relies on are checked).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/geometry_type.h"

namespace geolake::geoparquet {

/// The Parquet key-value metadata key.
inline constexpr std::string_view kGeoMetadataKey = "geo";
/// The version geolake writes.
inline constexpr std::string_view kGeoParquetVersion = "1.1.0";

/// \brief How a column states its CRS. The three cases mean different things in GeoParquet.
enum class CrsMode : std::uint8_t {
  kOmitted = 0,   ///< key absent: OGC:CRS84 (lon/lat WGS84)
  kNull = 1,      ///< explicit null: CRS unknown
  kProjJson = 2,  ///< a PROJJSON object, kept as its JSON text
};

/// \brief The `covering.bbox` paths: each names a Parquet schema path (root column, field).
struct BboxCovering {
  std::vector<std::string> xmin;
  std::vector<std::string> ymin;
  std::vector<std::string> xmax;
  std::vector<std::string> ymax;

  /// \brief The covering of a root struct column `column` with fields xmin, ymin, xmax, ymax.
  static BboxCovering ForColumn(std::string_view column);

  /// \brief The root column all four paths name ("bbox").
  const std::string& column() const { return xmin.front(); }

  bool operator==(const BboxCovering&) const = default;
};

/// \brief Metadata of one geometry column.
struct GeoColumnMetadata {
  std::string encoding = "WKB";
  /// Exact names as GeoParquet spells them ("Polygon", "MultiPolygon Z"); empty = unknown.
  std::vector<std::string> geometry_types;
  CrsMode crs_mode = CrsMode::kOmitted;
  /// The PROJJSON object's text when crs_mode is kProjJson (compact, key order preserved).
  std::string crs_projjson;
  /// "planar" or "spherical"; absent means planar.
  std::optional<std::string> edges;
  /// "counterclockwise"; absent means no claim.
  std::optional<std::string> orientation;
  /// Empty, [xmin, ymin, xmax, ymax] or [xmin, ymin, zmin, xmax, ymax, zmax].
  std::vector<double> bbox;
  /// Coordinate epoch (decimal year) of a dynamic CRS.
  std::optional<double> epoch;
  std::optional<BboxCovering> covering;

  /// \brief The 2D part of `bbox`; empty when there is none. Not meaningful for a box that
  /// crosses the antimeridian (xmin > xmax), which comes back empty.
  geo::Envelope BboxEnvelope() const;

  /// \brief The geometry types decoded. Errors: kCorruptData naming an unknown type name.
  Result<std::vector<geo::TypedDimensions>> DecodedGeometryTypes() const;

  /// \brief True when the CRS is OGC:CRS84: omitted, or a PROJJSON whose `id` is OGC:CRS84 or
  /// EPSG:4326 (the axis-order difference does not matter: GeoParquet is always x = lon).
  bool IsDefaultCrs() const;

  bool operator==(const GeoColumnMetadata&) const = default;
};

/// \brief The whole "geo" document. A value type; const methods are thread-safe.
struct GeoMetadata {
  std::string version = std::string(kGeoParquetVersion);
  std::string primary_column;
  /// Geometry columns in the order they are written.
  std::vector<std::pair<std::string, GeoColumnMetadata>> columns;

  /// \brief The metadata of column `name`, or nullptr.
  const GeoColumnMetadata* FindColumn(std::string_view name) const;
  GeoColumnMetadata* FindColumn(std::string_view name);

  /// \brief Check the document against the GeoParquet 1.1.0 rules geolake writes by:
  /// a primary column that is one of the columns, encoding "WKB", geometry type names from
  /// the 1.1 set (no M), a bbox of 4 or 6 finite numbers, a covering whose four paths name one
  /// root column, edges/orientation from their allowed values, a PROJJSON that is a JSON
  /// object. Errors: kInvalidArgument naming the column and the rule.
  Status Validate() const;

  /// \brief Serialize as compact JSON, keys in spec order. Validates first (errors: as
  /// Validate).
  Result<std::string> ToJson() const;

  /// \brief Parse a "geo" value. Accepts versions 1.0.x and 1.1.x (and 1.x pre-releases),
  /// ignores unknown keys, keeps unknown encodings and type names as text for the caller to
  /// judge. Errors: kCorruptData for text that is not JSON or for a missing or ill-typed
  /// required key (naming it); kNotImplemented for a major version other than 1.
  static Result<GeoMetadata> Parse(std::string_view json);

  bool operator==(const GeoMetadata&) const = default;
};

}  // namespace geolake::geoparquet
