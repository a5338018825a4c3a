// `geolake simplify INPUT --tolerance T [--preserve-topology | --coverage] -o OUTPUT` and the
// runner's options (cli/ops_cli.h): Douglas-Peucker, topology-preserving or coverage
// simplification on the ops runner (Warehouse::Simplify, ops/simplify.h, docs/ops.md).
#include "geolake/ops/simplify.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/ops_cli.h"

namespace geolake::cli {
namespace {

struct SimplifyArgs {
  std::string input;
  double tolerance = std::nan("");
  bool preserve_topology = false;
  bool coverage = false;
  OpArgs op;
};

Status RunSimplifyCommand(const GlobalOptions& global, const SimplifyArgs& args) {
  if (std::isnan(args.tolerance)) {
    return Status::InvalidArgument("--tolerance is required");
  }
  if (args.preserve_topology && args.coverage) {
    return Status::InvalidArgument(
        "--preserve-topology and --coverage exclude each other (--coverage keeps "
        "the topology of the whole coverage)");
  }
  ops::SimplifyOptions options;
  options.tolerance = args.tolerance;
  options.method = args.coverage            ? ops::SimplifyMethod::kCoverage
                   : args.preserve_topology ? ops::SimplifyMethod::kPreserveTopology
                                            : ops::SimplifyMethod::kDouglasPeucker;
  if (!(options.tolerance >= 0) || !std::isfinite(options.tolerance)) {
    return Status::InvalidArgument("--tolerance must be a finite number >= 0");
  }
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec input, OpInput(args.input, args.op));
  GEOLAKE_ASSIGN_OR_RETURN(ops::OutputSpec output, ops::ParseOutput(args.op.output));
  return RunOpCommand(
      global, args.op,
      [&](Warehouse& warehouse, const ops::RunnerOptions& runner, ops::RunSummary* summary) {
        ops::SimplifyReport report;
        Status st = warehouse.Simplify(input, options, output, runner, summary, &report);
        if (st.ok() || report.features > 0) {
          std::fputs(ops::FormatSimplifyReport(options, report).c_str(), stdout);
        }
        return st;
      });
}

}  // namespace

void RegisterSimplify(CLI::App* sub, Action* action) {
  auto args = std::make_shared<SimplifyArgs>();
  sub->add_option("input", args->input, "Input: a table (namespace.name) or sources")->required();
  sub->add_option("--tolerance", args->tolerance,
                  "Distance tolerance in CRS units (Douglas-Peucker)");
  sub->add_flag("--preserve-topology", args->preserve_topology,
                "Topology-preserving simplification: rings keep their count and do not cross; "
                "polygons come out valid");
  sub->add_flag("--coverage", args->coverage,
                "Simplify the polygons as one coverage: shared borders are simplified once and "
                "stay shared (no gaps or overlaps); reads the whole input");
  AddOpOptions(sub, &args->op);
  *action = [args](const GlobalOptions& global) { return RunSimplifyCommand(global, *args); };
}

}  // namespace geolake::cli
