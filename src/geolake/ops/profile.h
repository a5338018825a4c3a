/// \file
/// ProfileSource: read a vector source once, in parallel, and report what the ingest transform
/// stage will meet: geometry types, the extent, invalid geometries and whether make-valid
/// repairs them, the equal-area surface, and how features spread over quadkey cells and along
/// the Hilbert curve. It exercises the whole geo/ module (WKB, GEOS, PROJ, spatial keys) on real
/// data, with one GeoContext per worker.
#pragma once

#include <cstdint>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/core/thread_pool.h"
#include "geolake/geo/envelope.h"

namespace geolake::ops {

struct ProfileOptions {
  /// Borrowed, may be null: process features on this executor, one slot per thread; null =
  /// on the calling thread.
  ThreadPool* executor = nullptr;
  int quadkey_zoom = 3;                // cells counted at this zoom
  int hilbert_order = 16;              // Hilbert grid 2^order per side over the lon/lat world
  std::string area_crs = "EPSG:6933";  // equal-area CRS the surface is measured in
  std::int64_t batch_rows = 2048;      // features read per batch
  std::stop_token stop;
};

struct ProfileReport {
  std::string source;
  std::string driver;
  std::string crs;
  std::int64_t features = 0;
  std::int64_t null_geometries = 0;
  std::int64_t vertices = 0;
  std::int64_t invalid = 0;                            // features GEOS finds invalid
  std::int64_t repaired = 0;                           // of those, made valid by make-valid
  std::map<std::string, std::int64_t> geometry_types;  // GeoParquet names, e.g. "MultiPolygon"
  geo::Envelope extent;
  double area_km2 = 0;                        // sum of polygon areas in the equal-area CRS
  std::map<std::string, std::int64_t> cells;  // quadkey -> features whose centre lies in it
  std::uint64_t hilbert_min = 0;
  std::uint64_t hilbert_max = 0;
  std::int64_t wall_ms = 0;
};

/// \brief Profile the first layer of `path` (any format GDAL reads).
///
/// Features are read on the calling thread and processed on the executor (one slot per thread,
/// each with its own GEOS and PROJ context), or on the calling thread without one. Stage metrics
/// ("read", "transform") are recorded in `metrics` when given. Errors: those of opening and reading
/// the source; kCancelled when `stop` fires; kGeometryError only for failures other than invalid
/// input geometry (which is counted).
Result<ProfileReport> ProfileSource(const std::string& path, const ProfileOptions& options,
                                    Metrics* metrics = nullptr);

/// \brief The report as aligned text lines.
std::string FormatProfile(const ProfileReport& report, int top_cells = 8);

}  // namespace geolake::ops
