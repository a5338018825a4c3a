/// \file
/// GdalSource: reads any vector format GDAL/OGR reads (Shapefile, GeoPackage, FlatGeobuf,
/// GeoJSON, GeoJSONSeq, CSV with WKT, TopoJSON, OSM PBF, ...) into FeatureBatches: attributes as
/// typed columns, geometry as ISO WKB. GDAL headers stay inside gdal_source.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"

namespace geolake::sources {

/// \brief What a source says about itself before any feature is read.
struct SourceInfo {
  std::string path;
  std::string layer;
  std::string driver;               // GDAL driver short name, e.g. "GPKG"
  std::int64_t feature_count = -1;  // -1 when the driver cannot tell cheaply
  std::vector<geoparquet::FieldDef> fields;
  std::string geometry_type;  // OGR's name for the layer's declared type, e.g. "Multi Polygon"
  std::string crs_projjson;   // empty when the layer has no CRS
  std::string crs_authority;  // "EPSG:4326" when known, else empty
  /// True when the driver seeks to a feature index without reading the features before it
  /// (Shapefile: OGR's FastSetNextByIndex; GeoPackage tables whose FIDs have no gaps: a rowid
  /// range), so one layer can be read in parallel ranges. FlatGeobuf is not (GDAL 3.6 reads
  /// and drops every feature before the index).
  bool fast_seek = false;
  std::int64_t layer_count = 1;  // layers in the dataset
  /// What GpkgSource needs to read the same table itself (and to know when it must not):
  std::string fid_column;                     // OGR's FID column; empty when the layer has none
  std::int64_t first_fid = -1;                // FID of feature 0 when fast_seek by FID, else -1
  std::vector<std::string> geometry_columns;  // names of the layer's geometry fields
  /// OGR's type of each field, parallel to `fields`: "Integer", "Integer64", "Real",
  /// "String", "Date", "DateTime", "Binary", ..., with the subtype in parentheses when there
  /// is one ("Integer(Boolean)", "Real(Float32)").
  std::vector<std::string> field_source_types;
};

/// \brief One open layer of a vector dataset.
///
/// Thread-safety: none; a GDAL dataset handle must stay on one thread at a time. Open one
/// GdalSource per worker to read one file from several threads (each over its own range).
class GdalSource {
 public:
  ~GdalSource();
  GdalSource(const GdalSource&) = delete;
  GdalSource& operator=(const GdalSource&) = delete;

  /// \brief Open `path` and its layer `layer` (the first layer when empty).
  ///
  /// A CSV file is opened with geometry from a column named WKT, geometry, geom or wkt_geom
  /// (WKT text), or else from x/lon/longitude and y/lat/latitude columns (points); the
  /// geometry columns are not repeated as attributes and other column types are detected.
  ///
  /// Errors: kNotFound when GDAL cannot open the path or the layer does not exist,
  /// kInvalidArgument when the dataset has no vector layer.
  static Result<std::unique_ptr<GdalSource>> Open(const std::string& path,
                                                  const std::string& layer = "");

  /// \brief The names of every layer of the dataset at `path`, in the dataset's order.
  /// Errors: as Open.
  static Result<std::vector<std::string>> LayerNames(const std::string& path);

  const SourceInfo& info() const { return info_; }

  /// \brief Continue reading at feature index `start` (0-based, in the layer's read order).
  Status Seek(std::int64_t start);

  /// \brief Read features [start, start + count) only (count -1: to the end). For GeoPackage
  /// and Shapefile the range is one of feature indices derived from FIDs, so a deleted
  /// Shapefile record leaves a gap in the indices instead of moving the range.
  Status SeekRange(std::int64_t start, std::int64_t count);

  /// \brief Read up to `max_rows` features into `batch` (cleared first, schema set), fewer
  /// when the batch reaches `max_wkb_bytes` of geometry first (0 = no byte limit).
  /// Returns the number of rows read; 0 means the layer is exhausted.
  Result<std::int64_t> ReadBatch(std::int64_t max_rows, geoparquet::FeatureBatch* batch,
                                 std::int64_t max_wkb_bytes = 0);

  /// \brief Append the feature whose FID is `fid` to `batch` (whose schema is already set,
  /// as ReadBatch sets it) as one row with the given feature index, converted exactly as
  /// ReadBatch converts it. Does not move the read position. Errors: kNotFound when no
  /// feature has that FID.
  Status AppendFeatureByFid(std::int64_t fid, std::int64_t feature_index,
                            geoparquet::FeatureBatch* batch);

 private:
  struct Handles;
  explicit GdalSource(std::unique_ptr<Handles> handles, SourceInfo info);
  static void ProbeContiguousFids(Handles* handles, SourceInfo* info);

  std::unique_ptr<Handles> handles_;
  SourceInfo info_;
  std::int64_t next_index_ = 0;
  std::int64_t end_index_ = -1;  // -1 = read to the end
  bool exhausted_ = false;
};

}  // namespace geolake::sources
