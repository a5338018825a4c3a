/// \file
/// Reproject (`geolake reproject INPUT --to CRS [--densify D] -o OUT`), a per-feature operation
/// on the ops runner (ops/runner.h): every coordinate of every feature transformed from the
/// input's CRS to `to` with PROJ (proj_create_crs_to_crs, then proj_normalize_for_visualization:
/// x is longitude/easting and y latitude/northing on both sides whatever the CRS's official
/// axis order, so EPSG:4326's lat,lon order is never applied to the data; geo/proj.h). Z and M
/// are carried unchanged.
///
/// - The output's CRS is `to` (its "AUTHORITY:CODE" when PROJ identifies one, else its
///   PROJJSON): written into a GeoParquet file's "geo" metadata, or the new table's
///   `geolake.crs`, whose bbox columns, geo_cell partition values and Hilbert keys are then
///   computed by the runner's table writer in that CRS (docs/table-layout.md). An existing
///   output table in another CRS is refused.
/// - `densify` > 0 adds points along every segment of lines and rings before transforming, so
///   that no segment is longer than `densify` (input CRS units), as GEOSDensify does: a segment
///   of length L > D is cut into ceil(L / D) equal parts (Z and M interpolated linearly). Long
///   edges then curve in the target CRS as they should.
/// - A coordinate that does not transform (PROJ returns HUGE_VAL or an error: outside the
///   projection's domain, a latitude beyond 90) is a kGeometryError of the feature naming the
///   coordinate: with `--on-error stop` it ends the run naming the feature, with `skip` the
///   feature goes to the rejects file and is counted.
/// - A feature with more than `piece_coordinates` coordinates (a country of millions of
///   vertices) is transformed in pieces of that many coordinates by every worker of the
///   executor (ThreadPool::ParallelFor from inside the worker's task), each piece on a PROJ
///   transformer of its own (a pool of them, one in use per thread at a time, as PROJ asks).
///
/// Resumable by unit and shardable, as every per-feature operation.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "geolake/core/result.h"
#include "geolake/geo/wkb.h"
#include "geolake/ops/runner.h"

namespace geolake::ops {

struct ReprojectOptions {
  /// The target CRS: "EPSG:5070", "OGC:CRS84", PROJJSON, WKT or a PROJ string with +type=crs.
  std::string to;
  /// Maximum segment length before transforming, in input CRS units; 0 = no densifying.
  double densify = 0;
  /// A feature with more coordinates is transformed in pieces of this many by several workers.
  std::int64_t piece_coordinates = std::int64_t{1} << 17;
};

/// \brief What a run did, beyond the runner's summary.
struct ReprojectReport {
  std::string from;              // the input's CRS ("EPSG:4326" or PROJJSON)
  std::string to;                // the output's CRS as written
  bool identity = false;         // PROJ found the two CRSs equivalent: coordinates are not touched
  std::int64_t features = 0;     // geometries transformed
  std::int64_t coordinates = 0;  // coordinates transformed (after densifying)
  std::int64_t densified = 0;    // coordinates --densify added
  std::int64_t failed = 0;       // features with a coordinate that did not transform
  std::int64_t pieced_features = 0;  // features transformed in pieces
  std::int64_t pieces = 0;
  /// The most distinct threads that transformed pieces of one feature.
  int max_piece_threads = 0;
};

/// \brief Reproject `input` into `output` on the runner. `report` may be null.
///
/// Errors: kInvalidArgument for an input without a CRS, an unknown `to`, no coordinate
/// operation between the CRSs, a negative or non-finite `densify`, piece_coordinates < 1, an
/// existing output table in another CRS; otherwise as RunOperation (a coordinate that does not
/// transform is kGeometryError naming the feature under kStop).
Status RunReproject(const OpEnv& env, const InputSpec& input, const ReprojectOptions& options,
                    const OutputSpec& output, const RunnerOptions& runner_options,
                    RunSummary* summary, ReprojectReport* report = nullptr);

/// \brief One line: "reproject EPSG:4326 -> EPSG:5070: N features, M coordinates (...)".
std::string FormatReprojectReport(const ReprojectReport& report);

/// \brief Add points along every segment of the lines and rings of `geometry` so that none
/// is longer than `max_segment` (> 0), as GEOSDensify does (equal parts, Z and M
/// interpolated), except that repeated input vertices are kept. Points are left alone.
/// Returns the number of coordinates added. Errors: kInvalidArgument when max_segment is not
/// a positive finite number, or when the result would exceed `max_coordinates`.
Result<std::int64_t> DensifyFlat(geo::FlatGeometry* geometry, double max_segment,
                                 std::int64_t max_coordinates = std::int64_t{1} << 28);

}  // namespace geolake::ops
