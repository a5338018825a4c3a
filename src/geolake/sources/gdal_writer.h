/// \file
/// GdalWriter: writes FeatureBatches as one layer of a vector file through one of GDAL's
/// drivers (GeoJSON, GeoJSONSeq, FlatGeobuf, GPKG, ...), loading GDAL when first used
/// (gdal_api.h). It is how modules above sources/ write GDAL formats without GDAL's headers:
/// the query exporters use it. A file appears only when complete: it is written under a
/// temporary name beside `path` and renamed by Finish; an unfinished one is removed.
///
/// The sequential text drivers (GeoJSON, GeoJSONSeq) do not write files themselves: their bytes
/// go through a GDAL virtual file handler into an io::OutputStream (or standard output), so a
/// failed write (a full disk) is an error here, where GDAL would ignore it, and the file is
/// published by FileIO (a FIFO or a device is written directly, a symlink's target replaced).
/// FlatGeobuf and GeoPackage seek in their file and are written by GDAL to a temporary file;
/// onto an existing non-regular file they are refused.
#pragma once

#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/io/file_io.h"

namespace geolake::sources {

/// \brief One output layer being written.
///
/// Thread-safety: none; one thread from Create to destruction (GDAL's error handler that
/// collects messages is per thread).
class GdalWriter {
 public:
  /// \brief Create `path` (empty: standard output, /vsistdout/) with GDAL driver `driver` and
  /// one layer `layer_name` holding `fields` (bool -> Integer(Boolean), int64 -> Integer64,
  /// double -> Real, string -> String, binary -> Binary, date -> Date, timestamp -> DateTime)
  /// and a geometry of any type in `crs` (any definition GDAL reads, e.g. "EPSG:4326";
  /// empty or unreadable: none), lon/lat axis order. GeoJSON outputs keep 17 significant
  /// digits, so doubles round-trip.
  /// GeoJSON and GeoJSONSeq files are written through `io` (it must outlive the writer).
  /// Errors: kNotImplemented when libgdal or the driver is missing; kIOError naming the path
  /// and driver, with GDAL's message, when the file, layer or a field cannot be created;
  /// kInvalidArgument when `path` is an existing directory, or a FIFO or device for a driver
  /// that must seek (FlatGeobuf, GPKG).
  static Result<std::unique_ptr<GdalWriter>> Create(const std::string& driver,
                                                    const std::string& path,
                                                    const std::string& layer_name,
                                                    const std::vector<geoparquet::FieldDef>& fields,
                                                    const std::string& crs, const io::FileIO& io);
  ~GdalWriter();
  GdalWriter(const GdalWriter&) = delete;
  GdalWriter& operator=(const GdalWriter&) = delete;

  /// \brief Append the batch's rows (its columns in the order of Create's fields).
  /// Errors: kCorruptData naming the row (feature_index) whose WKB GDAL refuses; kIOError
  /// with GDAL's message when a feature cannot be written, or the stream's when its bytes
  /// could not be written (the first failure sticks); kCancelled when `stop` is requested
  /// (checked every 1024 rows, so a stop is seen within milliseconds of a large batch).
  Status Write(const geoparquet::FeatureBatch& rows, const std::stop_token& stop = {});

  /// \brief Commit, close and publish the file under `path` (flush standard output).
  /// Errors: kIOError with GDAL's message, the stream's (any failed write, flush, fsync or
  /// rename) or the rename's. After an error nothing is published and the temporary file is
  /// removed.
  Status Finish();

 private:
  struct State;
  explicit GdalWriter(std::unique_ptr<State> state);
  Status Fail(const std::string& what) const;
  Status StreamError() const;

  std::unique_ptr<State> state_;
};

}  // namespace geolake::sources
