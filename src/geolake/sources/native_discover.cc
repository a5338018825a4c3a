#include "geolake/sources/native_discover.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <utility>

#include "geolake/sources/fgb_source.h"
#include "geolake/sources/gdal_source.h"
#include "geolake/sources/geojsonseq_source.h"

namespace geolake::sources::internal {
namespace {

// The first row of every unit but the first, for RecordOffsets.
std::vector<std::int64_t> UnitStarts(const std::vector<SourceUnit>& units) {
  std::vector<std::int64_t> rows;
  rows.reserve(units.size());
  for (const SourceUnit& unit : units) rows.push_back(unit.first_row);
  return rows;
}

// The CRS GDAL's GeoJSON reader gives every GeoJSON and GeoJSONSeq layer without a "crs" member
// (RFC 7946: WGS 84 lon/lat), as OSRExportToPROJJSON exports it in GDAL 3.6 with PROJ 9.1: the
// plain WGS 84 datum GDAL builds for "WGS84", not the EPSG database's datum ensemble.
// stream_sources_test.cc compares it with GDAL's on every GeoJSONSeq file it reads.
constexpr const char* kGeoJsonProjjson = R"({
  "$schema": "https://proj.org/schemas/v0.5/projjson.schema.json",
  "type": "GeographicCRS",
  "name": "WGS 84",
  "datum": {
    "type": "GeodeticReferenceFrame",
    "name": "World Geodetic System 1984",
    "ellipsoid": {
      "name": "WGS 84",
      "semi_major_axis": 6378137,
      "inverse_flattening": 298.257223563
    }
  },
  "coordinate_system": {
    "subtype": "ellipsoidal",
    "axis": [
      {
        "name": "Geodetic latitude",
        "abbreviation": "Lat",
        "direction": "north",
        "unit": "degree"
      },
      {
        "name": "Geodetic longitude",
        "abbreviation": "Lon",
        "direction": "east",
        "unit": "degree"
      }
    ]
  },
  "id": {
    "authority": "EPSG",
    "code": 4326
  }
})";

}  // namespace

std::vector<SourceUnit> CutRanges(const std::string& path, const std::string& layer,
                                  const std::string& driver, std::int64_t count,
                                  std::int64_t unit_rows) {
  const std::int64_t n =
      count <= 0 ? 1 : std::max<std::int64_t>(1, (count + unit_rows - 1) / unit_rows);
  std::vector<SourceUnit> units;
  for (std::int64_t i = 0; i < n; ++i) {
    SourceUnit unit;
    unit.path = path;
    unit.layer = layer;
    unit.driver = driver;
    unit.index = i;
    unit.first_row = count <= 0 ? 0 : i * count / n;
    unit.row_count = i + 1 == n ? -1 : (i + 1) * count / n - unit.first_row;
    units.push_back(std::move(unit));
  }
  return units;
}

NativeStream NativeStreamOf(const std::string& path, const DiscoverOptions& options) {
  if (path.rfind("/vsi", 0) == 0) return NativeStream::kNone;
  if (options.native_fgb && FgbSource::IsFlatGeobufFile(path)) return NativeStream::kFlatGeobuf;
  if (options.native_geojsonseq && GeoJsonSeqSource::IsGeoJsonSeqPath(path)) {
    return NativeStream::kGeoJsonSeq;
  }
  std::error_code ec;
  if (options.native_geojsonseq && GeoJsonSeqSource::IsGeoJsonPath(path) &&
      static_cast<std::int64_t>(std::filesystem::file_size(path, ec)) >=
          options.native_geojson_min_bytes &&
      !ec) {
    return NativeStream::kGeoJson;
  }
  return NativeStream::kNone;
}

Status DiscoverFlatGeobuf(const std::string& path, const SourceFingerprint& fingerprint,
                          const DiscoverOptions& options, std::vector<DiscoveredSource>* out) {
  GEOLAKE_ASSIGN_OR_RETURN(auto gdal, GdalSource::Open(path, options.layer));
  const SourceInfo& info = gdal->info();
  GEOLAKE_ASSIGN_OR_RETURN(auto fgb, FgbSource::Open(path));
  GEOLAKE_RETURN_NOT_OK(fgb->MatchesDescription(info));
  std::int64_t count = fgb->header_feature_count();
  if (count == 0) {
    GEOLAKE_ASSIGN_OR_RETURN(count, fgb->CountRecords());
  }
  DiscoveredSource found;
  found.path = path;
  found.layer = info.layer;
  found.driver = info.driver;
  found.fingerprint = fingerprint;
  found.fields = info.fields;
  found.crs_projjson = info.crs_projjson;
  found.crs_authority = info.crs_authority;
  found.feature_count = info.feature_count >= 0 ? info.feature_count : count;
  found.units = CutRanges(path, found.layer, found.driver, count, options.unit_rows);
  if (count > 0) {
    GEOLAKE_ASSIGN_OR_RETURN(const auto offsets, fgb->RecordOffsets(UnitStarts(found.units)));
    for (std::size_t i = 0; i < found.units.size(); ++i) found.units[i].first_byte = offsets[i];
  } else {
    found.units.front().first_byte = fgb->features_offset();
  }
  out->push_back(std::move(found));
  return Status::OK();
}

Status DiscoverGeoJsonSeq(const std::string& path, const SourceFingerprint& fingerprint,
                          const DiscoverOptions& options, ThreadPool* pool,
                          std::vector<DiscoveredSource>* out, bool feature_collection) {
  GEOLAKE_ASSIGN_OR_RETURN(const GeoJsonSeqScan scan,
                           feature_collection
                               ? GeoJsonSeqSource::ScanFeatureCollection(path, pool, options.stop)
                               : GeoJsonSeqSource::Scan(path, pool, options.stop));
  DiscoveredSource found;
  found.path = path;
  // GDAL names a GeoJSONSeq layer, and a GeoJSON layer without a "name" member, after the
  // file, without its extension.
  found.layer =
      scan.layer_name.empty() ? std::filesystem::path(path).stem().string() : scan.layer_name;
  found.driver = feature_collection ? "GeoJSON" : "GeoJSONSeq";
  if (!options.layer.empty() && options.layer != found.layer) {
    return Status::NotFound("source '" + path + "': no layer named '" + options.layer + "'");
  }
  found.fingerprint = fingerprint;
  found.fields = scan.fields;
  found.crs_projjson = kGeoJsonProjjson;
  found.crs_authority = "EPSG:4326";
  found.feature_count = scan.record_count;
  found.units = CutRanges(path, found.layer, found.driver, scan.record_count, options.unit_rows);
  if (scan.record_count > 0) {
    GEOLAKE_ASSIGN_OR_RETURN(const auto offsets,
                             GeoJsonSeqSource::RecordOffsets(path, scan, UnitStarts(found.units)));
    for (std::size_t i = 0; i < found.units.size(); ++i) found.units[i].first_byte = offsets[i];
  } else {
    found.units.front().first_byte = scan.file_size;
  }
  auto description = std::make_shared<SourceInfo>();
  description->path = path;
  description->layer = found.layer;
  description->driver = found.driver;
  description->feature_count = found.feature_count;
  description->fields = found.fields;
  description->crs_projjson = found.crs_projjson;
  description->crs_authority = found.crs_authority;
  for (SourceUnit& unit : found.units) unit.gdal_info = description;
  out->push_back(std::move(found));
  return Status::OK();
}

}  // namespace geolake::sources::internal
