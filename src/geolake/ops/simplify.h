/// \file
/// Simplify (`geolake simplify INPUT --tolerance T [--preserve-topology | --coverage] -o OUT`),
/// an operation on the ops runner (ops/runner.h); docs/ops.md "Simplify" has the rules.
///
/// - Douglas-Peucker (the default): GEOSSimplify per feature, in parallel. Every part is
///   simplified on its own; GEOS 3.11 repairs a polygon whose simplified rings became invalid
///   with buffer(0), which can drop area, and drops rings and polygons that collapse.
/// - `--preserve-topology`: GEOSTopologyPreserveSimplify per feature, in parallel. Invalid
///   polygonal inputs are made valid first (geo::Geometry::RepairIfInvalid), and every polygonal
///   result is checked with GEOS: a result GEOS 3.11 left invalid (its TPS bugs, see
///   docs/ops.md) is replaced by the unsimplified (valid) feature and counted, so the output's
///   polygons are always valid.
/// - `--coverage`: the polygons of the whole input simplified as one coverage, so that borders
///   shared by neighbours stay shared (ops/coverage_simplify.h). Reads the whole input before
///   writing (not resumable by unit; --shard refused).
///
/// What collapses: a feature whose simplified geometry is empty is dropped with the reason
/// "collapsed to empty" (counted by the runner and in the report); an input that is already
/// empty is kept as it is. Rows without a geometry are kept. A feature with a non-finite
/// coordinate is a feature error (--on-error).
#pragma once

#include <cstdint>
#include <string>

#include "geolake/core/result.h"
#include "geolake/ops/runner.h"

namespace geolake::ops {

enum class SimplifyMethod : std::uint8_t {
  kDouglasPeucker,    ///< GEOSSimplify
  kPreserveTopology,  ///< GEOSTopologyPreserveSimplify, valid polygons out
  kCoverage,          ///< shared borders simplified once (ops/coverage_simplify.h)
};

/// \brief "douglas-peucker", "preserve-topology" or "coverage".
const char* SimplifyMethodName(SimplifyMethod method);

struct SimplifyOptions {
  /// Distance tolerance in CRS units (finite, >= 0).
  double tolerance = 0;
  SimplifyMethod method = SimplifyMethod::kDouglasPeucker;
};

/// \brief What a simplify did, besides the runner's summary.
struct SimplifyReport {
  std::int64_t features = 0;           // non-empty geometries simplified
  std::int64_t empty = 0;              // empty geometries, written as they are (not features)
  std::int64_t vertices_in = 0;        // their coordinates before
  std::int64_t vertices_out = 0;       // and after (dropped features count 0)
  std::int64_t collapsed = 0;          // dropped: empty after simplification
  std::int64_t repaired = 0;           // --preserve-topology: invalid inputs made valid first
  std::int64_t kept_unsimplified = 0;  // --preserve-topology: invalid result, input kept
  // --coverage (ops/coverage_simplify.h's CoverageStats):
  std::int64_t passed_through = 0;  // non-polygonal geometries written unchanged
  std::int64_t rings = 0;
  std::int64_t nodes = 0;
  std::int64_t arcs = 0;
  std::int64_t shared_arcs = 0;    // arcs used by two or more rings
  std::int64_t arcs_restored = 0;  // arcs kept unsimplified by the checks
  std::int64_t check_rounds = 0;
  std::int64_t invalid_inputs = 0;  // polygonal inputs GEOS found invalid (kept as simplified)
  double seconds = 0;               // --coverage: time of the whole-input step
};

/// \brief Simplify `input` into `output` on the runner.
///
/// Errors: kInvalidArgument for a negative or non-finite tolerance, --shard with --coverage;
/// kNotImplemented when --coverage's input exceeds the operation's share of --memory; the
/// runner's errors.
Status RunSimplify(const OpEnv& env, const InputSpec& input, const SimplifyOptions& options,
                   const OutputSpec& output, const RunnerOptions& runner_options,
                   RunSummary* summary, SimplifyReport* report);

/// \brief One line about the report, for the CLI ("simplify (preserve-topology): ...").
std::string FormatSimplifyReport(const SimplifyOptions& options, const SimplifyReport& report);

}  // namespace geolake::ops
