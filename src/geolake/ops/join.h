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

struct JoinOptions {
  JoinPredicate predicate = JoinPredicate::kIntersects;
  double distance = 0;  // kDWithin
  JoinHow how = JoinHow::kInner;
  std::string suffix = "_right";
  /// Output columns to keep, by output name (after the suffix); empty = all.
  std::vector<std::string> columns;
  JoinIndexSide index = JoinIndexSide::kAuto;
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
  std::int64_t pairs = 0;           // matching pairs written
  std::int64_t unmatched_left = 0;  // --how left rows without a match
  std::int64_t candidates = 0;      // tree hits tested
  std::int64_t fast_path = 0;       // of those, decided by the point-in-polygon index
};

/// \brief Join `left` and `right` into `output` on the runner.
///
/// Errors: kInvalidArgument for inputs of different CRS, a negative dwithin distance, an
/// unknown --columns name, --shard with `--how left` over an indexed left side; kNotImplemented
/// when the indexed side does not fit half the --memory budget (spatial partitioning is not
/// built yet); the runner's errors.
Status RunJoin(const OpEnv& env, const InputSpec& left, const InputSpec& right,
               const JoinOptions& options, const OutputSpec& output,
               const RunnerOptions& runner_options, RunSummary* summary, JoinReport* report);

}  // namespace geolake::ops
