/// \file
/// Dissolve (`geolake dissolve INPUT [--by COL,...] [--aggregate SPEC] -o OUT`), an operation
/// on the ops runner (ops/runner.h): one output feature per group of input rows with equal
/// `--by` values (every row in one group without --by), whose geometry is the union of the
/// group's geometries and whose other columns are the `--aggregate` results.
///
/// - Workers read batches in parallel: each row's geometry is made valid (GEOS make-valid,
///   geo::Geometry::RepairIfInvalid) and kept, as WKB, in the worker's own groups with the
///   row's aggregate values; a GEOS error on one feature follows the runner's --on-error.
/// - At the end (Operation::Finish) the workers' groups are merged and every group is unioned
///   as a parallel tree-reduce on the executor: its geometries in Hilbert order of their box
///   centres, cut into leaves of a few dozen, each leaf unioned by one task, then partial
///   unions merged two by two, each merge a task of its own once both halves are done. Groups
///   are independent, so many small groups and one huge group (a whole country) both keep
///   every worker busy; the report gives the busy time per worker.
/// - The coverage path: a group whose polygons form a coverage (no overlaps, shared edges with
///   the same vertices, as counties of one state) is unioned by cancelling shared edges
///   (GEOSCoverageUnion), much faster than an overlay. GEOS 3.11 fails on edges that do not
///   match and checks overlaps only to 1e-6 of the area, so a coverage result is kept only when
///   it is valid and its area equals the sum of its inputs' to 1e-11 relative; otherwise the
///   group falls back to the unary union (GEOS OverlayNG, snapping when noding fails), which is
///   always right. GEOS cannot interrupt its coverage union, so inputs above 256 KiB of WKB
///   (merges of big partial unions) take the unary union, and a stop still ends a run in 2 s.
/// - `precision` > 0 snaps to a grid of that size (CRS units): unary unions run on the grid
///   (GEOSUnaryUnionPrec) and every output is snapped (GEOSGeom_setPrecision, valid output).
///   Every output geometry is valid; a group without geometries gives a null geometry.
///
/// - `touching`: one output feature per connected component of each group's intersects
///   graph (STRtree candidates, prepared intersects on the executor, an int64 union-find),
///   ordered by each component's earliest row; a group's rows without a geometry give one more
///   feature, with a null geometry.
///
/// - `tile_column` (tile-edge dissolve): the input was cut into tiles, the column names each
///   row's tile. A tile's envelope is the union of its rows' boxes (all groups); only pieces
///   whose box reaches their tile's envelope enter the pair finding (an STRtree over them),
///   and two of them from different tiles that share a border of positive length
///   (geo::SharedBoundaryLength) join one union-find component; every other piece is a
///   component of its own and passes through (made valid, not unioned with anything). Output
///   as `touching`: one feature per component, ordered by its earliest row. Pieces of one tile
///   are never joined, so the result equals a global `touching` dissolve when no two pieces of
///   a tile touch each other and pieces of different tiles meet only along shared borders (a
///   layer of separate polygons cut by a tile grid). With `tile_grid` a tile's envelope is
///   instead the cell of that grid holding the centre of the tile's data box, so pieces on a
///   tile's data edge that does not reach the cell's edge (a coast) stay out of the pairing.
///
/// Output: the --by columns (their types), then the aggregates, then the geometry; one row per
/// group, ordered by the --by values (ascending, nulls last). Not resumable by unit (a group
/// needs every unit): a table output is committed once at the end, and --shard is refused.
///
/// Memory: the groups' geometries are held until their union, within the operation's share of
/// --memory. When the input's size says they may not fit, Prepare reads it once to measure them
/// (WKB plus a fixed overhead per piece, summed by hash bucket of the --by values, with each
/// bucket's extent; with --tile-column also every tile's envelope, from the geometries as read),
/// and a dissolve whose groups need more than half the share runs in passes: each pass reads the
/// whole input and keeps only the groups whose bucket is its (StableHash64 of their key modulo
/// 65,536 buckets; the buckets are packed into passes of at most half the share, first fit by
/// decreasing measured size, since groups are uneven; a bucket over half the share gets a pass
/// of its own or nearly). A pass's groups are unioned and written at its end
/// (Operation::FinishPass), so rows are ordered by the --by values within each pass.
/// Components (--touching, --tile-column) never cross groups, so they are found per pass.
///
/// A bucket over the whole share (one group larger than it, or without --by the one group) is
/// dissolved in spatial chunks: a second read measures its rows by the cell of their box centre
/// on a Hilbert curve of 256 x 256 cells over the bucket's extent, and runs of cells in curve
/// order (spatially compact) of at most a quarter of the share each make one pass, after the
/// other buckets' passes. Each chunk's pass unions its rows of the group into one partial union
/// and carries it on beside the earlier chunks'; the group's last chunk's pass unions its rows
/// with all the carried pieces at once and writes the group. Separate pieces hold more than
/// their union (each has its own outline), so when the carried pieces would leave no room for
/// the next chunk (the share less the largest chunk), each group's are merged into one. A pass
/// thus holds one chunk plus the group's partial unions, which grow towards the group's
/// output: a group whose union (its output feature) does not fit the share with one chunk is
/// still refused (kNotImplemented, naming the pass and what the carried unions hold), as are
/// groups over the share with --touching or --tile-column, whose pieces must stay apart (before
/// anything is written). The budget counts the geometries held, not GEOS's own memory while it
/// unions a group (docs/ops.md "Dissolve" has the measurement).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/ops/runner.h"

namespace geolake::ops {

enum class AggregateKind : std::uint8_t { kCount, kSum, kMin, kMax, kFirst, kMean };

/// \brief One `--aggregate`: count (rows of the group), or sum/min/max/first/mean of a column.
///
/// Nulls are skipped (as SQL aggregates skip them): sum, min, max and mean of a group without a
/// value are null; first is the first non-null value in input order. Output columns are named
/// `count`, `sum_COL`, `min_COL`, `max_COL`, `first_COL`, `mean_COL`; count is int64, sum has
/// the column's type (int64 or double), mean is double, min/max/first keep the column's type.
struct DissolveAggregate {
  AggregateKind kind = AggregateKind::kCount;
  std::string column;  // empty for count
};

/// \brief Parse "count", "sum:COL", "min:COL", "max:COL", "first:COL", "mean:COL".
/// Errors: kInvalidArgument naming the accepted forms.
Result<DissolveAggregate> ParseDissolveAggregate(std::string_view text);

/// \brief The output column name of an aggregate ("count", "sum_pop").
std::string DissolveAggregateName(const DissolveAggregate& aggregate);

/// \brief The grid of a tile-edge dissolve: square cells of `size` (CRS units) from the origin
/// (x0, y0), lon/lat (x, y) order for geographic CRSs.
struct TileGrid {
  double size = 0;
  double x0 = 0;
  double y0 = 0;
};

/// \brief Parse "SIZE" or "SIZE,X0,Y0" (finite, SIZE > 0). Errors: kInvalidArgument.
Result<TileGrid> ParseTileGrid(std::string_view text);

struct DissolveOptions {
  std::vector<std::string> by;  // empty: every row in one group
  std::vector<DissolveAggregate> aggregates;
  /// Grid cell size in CRS units; 0 = full floating precision.
  double precision = 0;
  /// One output feature per connected component of the intersects graph within each group
  /// (touching at a point counts), instead of one per group.
  bool touching = false;
  /// Tile-edge dissolve (see the file comment): the column naming each row's tile; empty =
  /// off. Excludes `touching`.
  std::string tile_column;
  /// With `tile_column`: tile envelopes are cells of this grid (see the file comment).
  std::optional<TileGrid> tile_grid;
  /// Try the coverage path first (detect and fall back); false = always the unary union.
  bool coverage = true;
  /// Geometries per leaf of the tree-reduce; 0 = the default (64). Tests set it small.
  std::int64_t leaf_pieces = 0;
};

/// \brief What a dissolve did, besides the runner's summary.
struct DissolveReport {
  std::int64_t groups = 0;              // output features: groups, or components (--touching)
  std::int64_t rows = 0;                // rows grouped (the runner's emitted rows)
  std::int64_t pieces = 0;              // non-empty geometries unioned
  std::int64_t repaired = 0;            // of those, made valid first
  std::int64_t piece_bytes = 0;         // their WKB held until the union
  std::int64_t largest_group = 0;       // pieces of the largest group
  std::int64_t leaves = 0;              // union tasks over input geometries
  std::int64_t merges = 0;              // tasks merging two partial unions
  std::int64_t coverage_groups = 0;     // groups unioned by the coverage path throughout
  std::int64_t coverage_fallbacks = 0;  // groups that left it for the unary union
  // (A group dissolved in spatial chunks counts in the last three once per chunk's union.)
  std::int64_t snap_retries = 0;  // unions retried on a grid after a GEOS error
  std::int64_t candidates = 0;    // --touching, --tile-column: tree candidate pairs tested
  std::int64_t pairs = 0;         // --touching: of those, intersecting (--tile-column:
                                  // sharing a border)
  std::int64_t tiles = 0;         // --tile-column: distinct tiles
  std::int64_t edge_pieces = 0;   // --tile-column: pieces reaching their tile's envelope
  double pairs_seconds = 0;       // --touching, --tile-column: wall time of the pairs
  double union_seconds = 0;       // wall time of the union phase
  /// Passes over the input: 1, or more when the groups do not fit the operation's share of
  /// --memory (each pass takes the groups whose --by values hash to it).
  std::int64_t passes = 1;
  /// Of those, passes over a spatial chunk of groups larger than the share ("Memory" above).
  std::int64_t chunk_passes = 0;
  /// Partial unions of such groups carried from one chunk's pass to a later one.
  std::int64_t carried = 0;
  /// Times a group's carried partial unions were merged into one to leave room for a chunk.
  std::int64_t carry_merges = 0;
  /// Busy seconds of each executor thread in the union phase (threads that ran nothing: 0).
  std::vector<double> worker_busy_seconds;
};

/// \brief Dissolve `input` into `output` on the runner.
///
/// Errors: kInvalidArgument for an unknown --by, --tile-column or aggregate column, --touching
/// with --tile-column, a tile grid without --tile-column or with a size that is not > 0, an
/// aggregate whose column type does not fit (sum/mean of a non-number), output column names that
/// clash, a negative or non-finite precision, --shard; kNotImplemented when what one pass holds
/// exceeds the operation's share of --memory ("Memory" above);
/// kGeometryError when a group cannot be unioned even on a snapping grid; the runner's errors.
Status RunDissolve(const OpEnv& env, const InputSpec& input, const DissolveOptions& options,
                   const OutputSpec& output, const RunnerOptions& runner_options,
                   RunSummary* summary, DissolveReport* report);

/// \brief One line about the report, for the CLI ("dissolve: 52 groups from 3230 rows ...").
std::string FormatDissolveReport(const DissolveReport& report);

}  // namespace geolake::ops
