/// \file
/// Eliminate (`geolake eliminate INPUT --area-below A [--merge-into longest-border|largest-area]
/// [--within COL] [--max-iterations N] [--area-crs CRS] -o OUT`), an operation on the ops
/// runner (ops/runner.h): every polygon whose area is below A is merged into a neighbour it
/// shares a border with (a common boundary of positive length; a point touch is no border),
/// as GRASS `v.clean tool=rmarea` and QGIS "Eliminate selected polygons" do, but with a rule
/// that does not depend on the order rows are read or processed.
///
/// The rule (docs/cli.md states it for users; tests/cases/ops/eliminate/*.case test it):
/// - A *region* is a surviving feature with what it absorbed so far; its area is the sum of
///   its members' areas, its border with another region the sum of their members' shared
///   border lengths (geo::SharedBoundaryLength). At the start every polygon is a region.
/// - Rounds. In each round every region whose area is below A and that has an eligible
///   neighbour (with `within`: whose owner has the same value of that column; a null equals a
///   null) chooses its target, all at once from the state at the start of the round:
///   longest-border: the longest border, then the smaller row id; largest-area: the largest
///   area, then the longest border, then the smaller row id. (Row ids are the rows' positions
///   in input order, 0-based, int64.)
/// - A small region may choose another small region. It then ends where that region ends:
///   choices are followed to a region that chose nothing this round, which absorbs the whole
///   chain and keeps its own attributes. Two regions that chose each other: the smaller (area,
///   then row id) merges into the other. No longer cycle can arise (each choice is a strict
///   order on symmetric borders, areas and ids); a guard breaks one at its largest region.
/// - Rounds repeat until no small region has an eligible neighbour, or `max_iterations` rounds
///   ran. A small region without any neighbour is an island and is kept; one whose neighbours
///   all differ in `within` is kept (blocked); both are counted, as are the small regions left
///   by the cap.
///
/// Areas (and border lengths) are measured in the input's CRS units, or in `area_crs` (e.g.
/// EPSG:6933, equal-area, for lon/lat data: the threshold is then in m²); the output stays in
/// the input's CRS.
///
/// Work: workers (in parallel) make each geometry valid (geo::Geometry::RepairIfInvalid),
/// measure it and keep it; at the end the border lengths of every candidate pair (STRtree
/// boxes, at least one of the two below A) are computed in chunks on the executor, the rounds
/// run on the neighbour graph alone (no geometry: sums of areas and lengths, sequential and
/// cheap), and the union of each absorbing feature with its absorbed polygons runs as one task
/// per absorber on the executor (GEOS unary union; retried on snapping grids so a
/// TopologyException never reaches the user; the result made valid).
///
/// Output: the surviving rows, in input order, with their own attributes (the input's fields)
/// and their (unioned) valid geometry. Rows without a geometry (or with an empty one) pass
/// through. A non-polygonal geometry is a feature error (the runner's --on-error). Not
/// resumable by unit: a table output is committed once at the end, and --shard is refused.
/// Invariant: rows out = rows emitted - merged, and the output's total area equals the input's
/// to 1e-9 relative, less the overlap between merged polygons (zero for a coverage; reported).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/ops/runner.h"

namespace geolake::ops {

/// \brief Which neighbour a small polygon merges into.
enum class MergeInto : std::uint8_t { kLongestBorder, kLargestArea };

/// \brief Parse "longest-border" or "largest-area". Errors: kInvalidArgument naming both.
Result<MergeInto> ParseMergeInto(std::string_view text);
std::string_view MergeIntoName(MergeInto merge_into);

struct EliminateOptions {
  /// Polygons whose area is strictly below this merge (CRS units², or area_crs units²).
  double area_below = 0;
  MergeInto merge_into = MergeInto::kLongestBorder;
  /// Merge only into neighbours with the same value of this column (empty: any neighbour).
  std::string within;
  /// At most this many rounds; 0 = until nothing changes.
  std::int64_t max_iterations = 0;
  /// Measure areas and borders in this CRS ("EPSG:6933"); empty = the input's CRS units.
  std::string area_crs;
};

/// \brief What an eliminate did, besides the runner's summary.
struct EliminateReport {
  std::int64_t features = 0;    // rows with a non-empty polygonal geometry
  std::int64_t without = 0;     // rows without a geometry or with an empty one (passed through)
  std::int64_t repaired = 0;    // geometries made valid first
  std::int64_t small = 0;       // features below the threshold at the start
  std::int64_t merged = 0;      // features absorbed by a neighbour (rows not in the output)
  std::int64_t absorbers = 0;   // surviving features that absorbed at least one
  std::int64_t islands = 0;     // features still below: no neighbour at all
  std::int64_t blocked = 0;     // still below: neighbours, none with the same `within` value
  std::int64_t capped = 0;      // still below with an eligible neighbour when the cap hit
  std::int64_t rounds = 0;      // rounds that merged something
  std::int64_t candidates = 0;  // candidate pairs (boxes meet) whose border was measured
  std::int64_t neighbour_pairs = 0;  // of those, sharing a border of positive length
  std::int64_t snap_retries = 0;     // unions retried on a grid after a GEOS error
  double area_in = 0;                // total area of the input features (input CRS units)
  double area_out = 0;               // total area of the output features
  double overlap_area = 0;           // area counted twice in the input among merged polygons
  double read_seconds = 0;           // wall time from the first batch to the end of the read
  double pairs_seconds = 0;          // border lengths (parallel)
  double graph_seconds = 0;          // the rounds (sequential)
  double union_seconds = 0;          // the unions (parallel)
  /// Busy seconds of each executor thread in the union phase.
  std::vector<double> worker_busy_seconds;
  /// Ids (row positions) of the islands, ascending; at most 1000 are kept.
  std::vector<std::int64_t> island_rows;
};

/// \brief Eliminate small polygons of `input` into `output` on the runner.
///
/// Errors: kInvalidArgument for a threshold that is not a finite number > 0, a negative
/// max_iterations, an unknown `within` column, an `area_crs` PROJ does not know or an input
/// without a CRS with `area_crs`, --shard; kNotImplemented when the features exceed the
/// operation's share of --memory (no spilling yet); kGeometryError for a feature that is not
/// polygonal or cannot be parsed, measured or reprojected (under --on-error stop; skipped and
/// recorded otherwise), or a union that fails even on a snapping grid; kInternal when the
/// invariant fails; the runner's errors.
Status RunEliminate(const OpEnv& env, const InputSpec& input, const EliminateOptions& options,
                    const OutputSpec& output, const RunnerOptions& runner_options,
                    RunSummary* summary, EliminateReport* report);

/// \brief The report as lines for the CLI ("eliminate: 3230 features, 41 below ...").
std::string FormatEliminateReport(const EliminateReport& report);

}  // namespace geolake::ops
