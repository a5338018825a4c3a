// `geolake eliminate INPUT --area-below A [--merge-into longest-border|largest-area]
// [--within COL] [--max-iterations N] [--area-crs CRS] -o OUTPUT` and the runner's options
// (cli/ops_cli.h): polygons below A merge into a neighbour sharing a border, on the ops runner
// (Warehouse::Eliminate, ops/eliminate.h, docs/ops.md; the rule is in docs/cli.md).
#include "geolake/ops/eliminate.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/ops_cli.h"

namespace geolake::cli {
namespace {

struct EliminateArgs {
  std::string input;
  double area_below = std::nan("");
  std::string merge_into = "longest-border";
  std::string within;
  std::int64_t max_iterations = 0;
  std::string area_crs;
  OpArgs op;
};

Status RunEliminateCommand(const GlobalOptions& global, const EliminateArgs& args) {
  ops::EliminateOptions options;
  options.area_below = args.area_below;
  GEOLAKE_ASSIGN_OR_RETURN(options.merge_into, ops::ParseMergeInto(args.merge_into));
  options.within = args.within;
  options.max_iterations = args.max_iterations;
  options.area_crs = args.area_crs;
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec input, OpInput(args.input, args.op));
  GEOLAKE_ASSIGN_OR_RETURN(ops::OutputSpec output, ops::ParseOutput(args.op.output));
  return RunOpCommand(
      global, args.op,
      [&](Warehouse& warehouse, const ops::RunnerOptions& runner, ops::RunSummary* summary) {
        ops::EliminateReport report;
        Status st = warehouse.Eliminate(input, options, output, runner, summary, &report);
        if (st.ok() || report.features > 0) {
          std::fputs(ops::FormatEliminateReport(report).c_str(), stdout);
        }
        return st;
      });
}

}  // namespace

void RegisterEliminate(CLI::App* sub, Action* action) {
  auto args = std::make_shared<EliminateArgs>();
  sub->add_option("input", args->input, "Input: a table (namespace.name) or sources")->required();
  sub->add_option("--area-below", args->area_below,
                  "Polygons whose area is below this merge into a neighbour (CRS units, or "
                  "--area-crs units)")
      ->required();
  sub->add_option("--merge-into", args->merge_into,
                  "The neighbour: longest-border (the longest shared border) or largest-area")
      ->capture_default_str();
  sub->add_option("--within", args->within,
                  "Merge only into neighbours with the same value of this column");
  sub->add_option("--max-iterations", args->max_iterations,
                  "At most this many rounds (0 = until nothing merges)")
      ->capture_default_str();
  sub->add_option("--area-crs", args->area_crs,
                  "Measure areas and borders in this CRS, e.g. EPSG:6933 (equal-area) for "
                  "lon/lat data (default: the input's CRS units)");
  AddOpOptions(sub, &args->op);
  *action = [args](const GlobalOptions& global) { return RunEliminateCommand(global, *args); };
}

}  // namespace geolake::cli
