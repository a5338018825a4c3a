/// \file
/// GpkgSource: reads a GeoPackage feature table straight through SQLite (read-only, one
/// connection per reader) into FeatureBatches that are identical to what GdalSource gives for
/// the same range: the same fields, rows, feature indices, WKB bytes and geometry validity.
/// It skips OGR's per-feature objects and its geometry decode/re-encode: the GeoPackage
/// binary header is stepped over and the standard WKB behind it is validated and copied.
///
/// Exactness comes first. Open refuses (kNotImplemented, so the caller reads with GdalSource)
/// any table it does not read exactly as GDAL does: not a plain table, no single geometry
/// column, an FID that is not the rowid, a field type it has no exact mapping for. A row it
/// cannot convert itself (a spatialite or extended blob, a curve, an empty-flagged geometry,
/// a date it does not parse exactly as GDAL) is read for that row alone through GDAL (by FID),
/// so no row is ever silently different. See docs/sources.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/sources/gdal_source.h"

namespace geolake::geo {
class GdalProjjsonCache;
}  // namespace geolake::geo

namespace geolake::sources {

/// \brief One feature table of a GeoPackage, read natively.
///
/// Thread-safety: none; one reader per thread (each has its own SQLite connection and its own
/// GDAL handle for rows it hands to GDAL).
class GpkgSource {
 public:
  ~GpkgSource();
  GpkgSource(const GpkgSource&) = delete;
  GpkgSource& operator=(const GpkgSource&) = delete;

  /// \brief True when the file at `path` is a GeoPackage by its bytes: the SQLite header and a
  /// GeoPackage application_id ("GPKG", or "GP10"/"GP11" of versions 1.0/1.1). False when
  /// unreadable.
  static bool IsGeoPackageFile(const std::string& path);

  /// \brief The SourceInfo GdalSource::Open(path, layer)->info() gives for a GeoPackage feature
  /// table (the first layer when `layer` is empty), computed with SQLite and PROJ only, so
  /// that describing a GeoPackage never loads GDAL.
  ///
  /// It mirrors GDAL 3.6's GeoPackage driver where it is sure to: layer order, declared column
  /// types to OGR types (and gpkg_data_columns' JSON mime type), declared geometry type with
  /// Z/M, the feature count (gpkg_ogr_contents, else COUNT), GdalSource's contiguous-FID
  /// probe, and the CRS of an EPSG entry of gpkg_spatial_ref_sys (PROJJSON as GDAL exports it).
  /// Errors: kNotFound when the file does not exist; kNotImplemented (with the reason) for
  /// anything it cannot describe exactly as GDAL does: not a GeoPackage by its bytes, a `.gpkg`
  /// extension missing, tables GDAL would list that are not registered, an attribute table, a
  /// view, several or no geometry columns, an FID that is not the rowid, a declared type it has
  /// no exact mapping for, a CRS that is not a current EPSG one, a SQLite error. Callers then
  /// ask GDAL. The CRS text comes from `crs_cache` (one made for the call when null: a PROJ
  /// context costs ~2-3 ms, so callers describing many files share one). Thread-safety: safe
  /// to call concurrently (own SQLite connection per call; the cache is thread-safe).
  static Result<SourceInfo> Describe(const std::string& path, const std::string& layer = "",
                                     geo::GdalProjjsonCache* crs_cache = nullptr);

  /// \brief The layer names GdalSource::LayerNames gives for a GeoPackage, read with SQLite.
  /// Errors: as Describe (kNotImplemented when the listing is not certain to be GDAL's).
  static Result<std::vector<std::string>> LayerNames(const std::string& path);

  /// \brief Open table `layer` (the first layer when empty) of the GeoPackage at `path`.
  ///
  /// GDAL's SourceInfo of the layer (fields, FIDs, CRS) is the one this reader reports and
  /// follows: `known` when given (what discover saw), else Describe's (GDAL's own when Describe
  /// refuses the table; opening GDAL costs ~5-8 ms a unit and loading it ~70 ms a process). A
  /// GdalSource reads the rows this reader hands over (opened when the first such row comes).
  /// Errors: as GdalSource::Open; kNotImplemented (with the reason) when the source is not a
  /// GeoPackage table this reader reads exactly; kIOError when SQLite cannot open or query it.
  static Result<std::unique_ptr<GpkgSource>> Open(
      const std::string& path, const std::string& layer = "",
      std::shared_ptr<const SourceInfo> known = nullptr);

  const SourceInfo& info() const;

  /// \brief Continue reading at feature index `start` (as GdalSource::Seek).
  Status Seek(std::int64_t start);

  /// \brief Read features [start, start + count) only (count -1: to the end); indices are
  /// FID - first FID when the FIDs have no gaps, else positions in rowid order (as
  /// GdalSource::SeekRange).
  Status SeekRange(std::int64_t start, std::int64_t count);

  /// \brief As GdalSource::ReadBatch, the same rows in the same order; a batch may also end
  /// short (not empty) where this reader hands the rest of its range to GDAL (once a fifth of
  /// the rows, and at least 64, needed GDAL). Errors: kIOError when SQLite fails mid-read, and
  /// what GdalSource returns for a row read through it.
  Result<std::int64_t> ReadBatch(std::int64_t max_rows, geoparquet::FeatureBatch* batch,
                                 std::int64_t max_wkb_bytes = 0);

  /// \brief Rows since the last Seek that were read through GDAL because this reader could not
  /// convert them exactly itself (one at a time, or as the rest of the range).
  std::int64_t rows_read_by_gdal() const { return rows_read_by_gdal_; }

 private:
  struct State;
  explicit GpkgSource(std::unique_ptr<State> state);
  Status ResetStatement(std::int64_t start);
  // Convert the current SQLite row into `batch`; false (nothing appended) when the row needs
  // GDAL.
  bool AppendRow(std::int64_t feature_index, geoparquet::FeatureBatch* batch);

  std::unique_ptr<State> state_;
  std::int64_t next_index_ = 0;
  std::int64_t end_index_ = -1;  // -1 = to the end
  bool exhausted_ = false;
  std::int64_t rows_read_by_gdal_ = 0;  // since the last Seek
  std::int64_t rows_since_seek_ = 0;
  bool gdal_reads_rest_ = false;  // the rest of the range comes from GdalSource::ReadBatch
};

}  // namespace geolake::sources
