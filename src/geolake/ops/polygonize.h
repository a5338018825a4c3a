/// \file
/// Polygonize (`geolake polygonize RASTER [--band N] [--connectedness 4|8] [--tile-size PX]
/// [--field NAME] [--nodata V] [--float-tolerance T] -o OUT`), an operation on the ops runner
/// (ops/runner.h): one polygon per 4- (default) or 8-connected region of equal pixel value,
/// with holes, as gdal_polygonize gives for the whole raster (docs/ops.md "polygonize").
///
/// - Input: any raster GDAL opens (GeoTIFF first), one band. Integer bands are read as GDAL's
///   polygonize reads them (Int32); a float band is refused unless `float_tolerance` T > 0,
///   which classes each pixel by round(v / T) (the output value is class * T). Nodata and the
///   band's mask are respected as gdal_polygonize does (GDALGetMaskBand): pixels whose mask is
///   0 make no polygon; `nodata` replaces the band's own mask by "value == V is nodata".
/// - Windows: the raster is cut into windows of `tile_size` pixels (rounded down to whole
///   blocks of the file when at least one block); each window is a unit of the runner's input
///   (Input::FromUnits) polygonized by a worker: the worker reads the window with its own GDAL
///   dataset handle (GDAL datasets are not thread-safe), copies it to an in-memory MEM dataset
///   whose geotransform is the window's pixel offset, and runs GDALPolygonize on it. Polygons
///   therefore come in pixel coordinates (integers, exact) and are mapped to the raster's CRS
///   once, with GDAL's own formula (x = gt0 + col*gt1 + row*gt2, y = gt3 + col*gt4 + row*gt5),
///   so a vertex on a seam maps to the same bits from either side and as in a whole-raster run.
/// - Seams: a polygon whose box reaches an interior window edge may continue in the next
///   window; it is kept (in pixel coordinates) until the end. There, pieces of equal value that
///   share a unit seam segment (4-connected) or also a seam point (8-connected) are joined by a
///   union-find, and each component of more than one piece is unioned by GEOS in parallel on
///   the executor (exact: integer coordinates). Every other polygon passes through untouched.
///   Memory: the pixels of the windows being polygonized (one per worker) plus the seam pieces,
///   whose vertices lie within a window of a seam; PolygonizeReport::seam_bytes gives the peak.
/// - Output: `field` (int64; double with a float tolerance), then the polygon, in the raster's
///   CRS (its authority code, else PROJJSON). A merged 8-connected region is the valid GEOS
///   union, so where GDAL writes one self-touching polygon it may be a MultiPolygon of parts
///   touching at a point (the same point set). Not resumable by window (the seam merge needs
///   every window): a table output is committed once at the end, and --shard is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/ops/runner.h"

namespace geolake::ops {

struct PolygonizeOptions {
  int band = 1;
  int connectedness = 4;  // 4 or 8
  /// Window width and height in pixels; 0 = the default: 4096, halved (down to 256) while the
  /// workers' windows (~16 bytes a pixel) would exceed a quarter of --memory, and (down to
  /// 1024) while there would be fewer than two windows per worker; whole blocks.
  std::int64_t tile_width = 0;
  std::int64_t tile_height = 0;
  std::string field = "DN";  // the value column (gdal_polygonize's default name)
  std::optional<double> nodata;
  /// > 0: a float band is classed by round(v / T); unset: a float band is refused.
  std::optional<double> float_tolerance;
};

/// \brief Parse `--tile-size`: "PX" (square) or "WxH". Errors: kInvalidArgument.
Status ParseTileSize(std::string_view text, PolygonizeOptions* options);

/// \brief What a polygonize did, besides the runner's summary.
struct PolygonizeReport {
  std::int64_t width = 0, height = 0;              // raster size in pixels
  std::int64_t tile_width = 0, tile_height = 0;    // window size used
  std::int64_t block_width = 0, block_height = 0;  // the file's block size
  std::int64_t windows = 0;                        // windows polygonized
  std::int64_t polygons = 0;                       // output polygons
  std::int64_t interior = 0;      // of those, from one window without reaching a seam
  std::int64_t seam_pieces = 0;   // window polygons reaching an interior window edge
  std::int64_t merged = 0;        // output polygons unioned from several pieces
  std::int64_t seam_bytes = 0;    // peak bytes of the seam pieces kept for the merge
  std::int64_t window_bytes = 0;  // estimate: pixels of the windows the workers hold at once
  double polygonize_seconds = 0;  // busy time of the window polygonizes (all workers)
  double merge_seconds = 0;       // wall time of the seam merge
};

/// \brief Polygonize band `options.band` of `raster` into `output` on the runner.
///
/// Errors: kNotFound / kInvalidArgument for a raster GDAL cannot open, a band out of range, a
/// float band without a float tolerance, connectedness other than 4 or 8, a non-positive tile
/// size or tolerance, --shard, an empty field name; kNotImplemented when GDAL cannot be loaded;
/// kGeometryError when GEOS cannot union a seam component; the runner's errors.
Status RunPolygonize(const OpEnv& env, const std::string& raster, const PolygonizeOptions& options,
                     const OutputSpec& output, const RunnerOptions& runner_options,
                     RunSummary* summary, PolygonizeReport* report);

/// \brief One line about the report, for the CLI.
std::string FormatPolygonizeReport(const PolygonizeReport& report);

}  // namespace geolake::ops
