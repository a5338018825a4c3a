/// \file
/// The spatial join (`geolake join LEFT RIGHT --predicate P -o OUT`), an operation on the ops
/// runner (ops/runner.h). One side is indexed: its rows are read into memory once, its boxes
/// packed into an STRtree (geo/strtree.h) shared read-only by every worker; the other side is
/// streamed through the runner in units. Each worker keeps its own GEOS prepared geometries of
/// the indexed side (GEOS 3.11 prepared geometries are not thread-safe), built on first use and
/// cached per tree item within a share of the budget. A point tested against a polygon goes
/// through PointInPolygon (ops/point_in_polygon.h) and reaches GEOS only on the boundary.
/// Polygons on either side are repaired (geo::Geometry::RepairIfInvalid) before a predicate.
///
/// Semantics (docs/cli.md "geolake join"): the predicate reads "LEFT <predicate> RIGHT"
/// (`within`: the left row is within the right one); a point on a shared edge intersects every
/// polygon it touches and is within none of them (GEOS: the boundary is not the interior).
/// Output: the left's columns, then the right's (a name the left has gets `suffix`), then the
/// left's geometry; one row per matching pair, in stream order and then by the indexed row's
/// position; `--how left` keeps a left row without a match once, with nulls on the right.
///
/// With aggregates (`--aggregate count|sum:COL|min:COL|max:COL|mean:COL`, e.g. points in
/// polygons) the pairs are grouped by the right feature instead: one row per right feature
/// with at least one match (`--how left`: every right feature, with count 0), holding the
/// right's columns, then the aggregates of the matching left rows (named count, sum_COL,
/// min_COL, max_COL, mean_COL), then the right's geometry. The tree is then always over the
/// right side, the rows are written at the end (one commit, no --shard), and the invariant is
/// "sum of the counts = pairs".
///
/// An indexed side larger than its share of --memory (3/8 of it) is partitioned: the plane is
/// cut into cells (a k-d split of a sample of box centres) and the join runs one pass per
/// cell, each with the indexed rows of that cell only; every pair is still found exactly once
/// (join.cc "Spatial partitioning"). Output rows then come cell by cell.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/ops/runner.h"

namespace geolake::ops {

enum class JoinPredicate : std::uint8_t {
  kIntersects,
  kContains,  // left contains right
  kWithin,    // left within right
  kTouches,
  kCovers,     // left covers right
  kCoveredBy,  // left covered by right
  kDWithin,    // distance(left, right) <= distance, in CRS units
  /// Each left polygon gets the one right feature with the largest intersection area (> 0);
  /// a tie goes to the right feature first in the right input's order. Adds the columns
  /// overlap_area (CRS units squared) and overlap_fraction (of the left's area). The tree is
  /// always over the right side.
  kLargestOverlap,
};

enum class JoinHow : std::uint8_t { kInner, kLeft };

/// Which side the STRtree is built over: the smaller (by rows, else bytes) by default.
enum class JoinIndexSide : std::uint8_t { kAuto, kLeft, kRight };

/// \brief One aggregate of the left rows matched to a right feature.
struct JoinAggregate {
  enum class Kind : std::uint8_t { kCount, kSum, kMin, kMax, kMean };
  Kind kind = Kind::kCount;
  std::string column;  // a left column; empty for kCount
  /// The output column's name: count, sum_COL, min_COL, max_COL, mean_COL.
  std::string OutputName() const;
};

/// \brief Parse "count", "sum:COL", "min:COL", "max:COL" or "mean:COL". Errors:
/// kInvalidArgument naming the accepted forms.
Result<JoinAggregate> ParseJoinAggregate(std::string_view text);

struct JoinOptions {
  JoinPredicate predicate = JoinPredicate::kIntersects;
  double distance = 0;  // kDWithin
  JoinHow how = JoinHow::kInner;
  std::string suffix = "_right";
  /// Output columns to keep, by output name (after the suffix); empty = all.
  std::vector<std::string> columns;
  JoinIndexSide index = JoinIndexSide::kAuto;
  /// Group the pairs by the right feature (see the file comment); empty = one row per pair.
  std::vector<JoinAggregate> aggregates;
  /// The right side's geometries are transformed into the left's CRS as they are read (PROJ,
  /// always x/y order), when the two CRSs differ; without it such inputs are refused.
  bool reproject_right = false;
};

/// \brief Parse intersects, contains, within, touches, covers, covered-by, dwithin:D or
/// largest-overlap into
/// `options`. Errors: kInvalidArgument naming the accepted values.
Status ParseJoinPredicate(std::string_view text, JoinOptions* options);
/// \brief Parse inner|left. Errors: kInvalidArgument.
Result<JoinHow> ParseJoinHow(std::string_view text);
/// \brief Parse auto|left|right. Errors: kInvalidArgument.
Result<JoinIndexSide> ParseJoinIndexSide(std::string_view text);
/// \brief The canonical text of the predicate ("dwithin:2.5").
std::string JoinPredicateName(const JoinOptions& options);

/// \brief What a join did, besides the runner's summary.
struct JoinReport {
  bool index_left = false;  // the tree was over the left side
  std::int64_t indexed_rows = 0;
  std::int64_t indexed_bytes = 0;   // attributes, WKB, boxes and point-in-polygon indexes
  std::int64_t subdivided = 0;      // largest-overlap: indexed polygons cut into pieces
  std::int64_t pieces = 0;          // and the pieces they were cut into
  std::int64_t pairs = 0;           // matching pairs written
  std::int64_t unmatched_left = 0;  // --how left rows without a match
  std::int64_t candidates = 0;      // tree hits tested
  std::int64_t fast_path = 0;       // of those, decided by the point-in-polygon index
  std::int64_t groups = 0;          // aggregates: right features written
  /// The indexed side did not fit its share of --memory: the cells the plane was cut into,
  /// one pass each (0: not partitioned). indexed_rows then sums the cells' trees and
  /// indexed_bytes is the largest.
  std::int64_t cells = 0;
};

/// \brief Join `left` and `right` into `output` on the runner.
///
/// Errors: kInvalidArgument for inputs of different CRS (without reproject_right; with it, for
/// a side without a CRS or CRSs PROJ cannot transform between), a negative dwithin distance, an
/// unknown --columns name, --shard with `--how left` over an indexed left side, an aggregate
/// over a column the left lacks or of a type it cannot sum (sum and mean take int64, double
/// and bool; min and max also dates and timestamps), an aggregate name the right already has,
/// aggregates with `--index left` or --shard; kNotImplemented when the indexed side does not
/// fit its share of --memory and cannot be cut into cells that do (one row larger than the
/// share, or rows so close together that a cell of them is); the runner's errors.
Status RunJoin(const OpEnv& env, const InputSpec& left, const InputSpec& right,
               const JoinOptions& options, const OutputSpec& output,
               const RunnerOptions& runner_options, RunSummary* summary, JoinReport* report);

}  // namespace geolake::ops
