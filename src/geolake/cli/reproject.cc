// `geolake reproject INPUT --to CRS [--densify D] -o OUTPUT` and the runner's options
// (cli/ops_cli.h): every coordinate transformed from the input's CRS to --to with PROJ, x =
// longitude/easting always, on the ops runner (Warehouse::Reproject, ops/reproject.h,
// docs/ops.md).
#include "geolake/ops/reproject.h"

#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/ops_cli.h"

namespace geolake::cli {
namespace {

struct ReprojectArgs {
  std::string input;
  std::string to;
  double densify = 0;
  OpArgs op;
};

Status RunReprojectCommand(const GlobalOptions& global, const ReprojectArgs& args) {
  ops::ReprojectOptions options;
  options.to = args.to;
  options.densify = args.densify;
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec input, OpInput(args.input, args.op));
  GEOLAKE_ASSIGN_OR_RETURN(ops::OutputSpec output, ops::ParseOutput(args.op.output));
  return RunOpCommand(
      global, args.op,
      [&](Warehouse& warehouse, const ops::RunnerOptions& runner, ops::RunSummary* summary) {
        ops::ReprojectReport report;
        Status st = warehouse.Reproject(input, options, output, runner, summary, &report);
        if (st.ok() || report.features > 0 || report.failed > 0) {
          std::fputs(ops::FormatReprojectReport(report).c_str(), stdout);
        }
        return st;
      });
}

}  // namespace

void RegisterReproject(CLI::App* sub, Action* action) {
  auto args = std::make_shared<ReprojectArgs>();
  sub->add_option("input", args->input, "Input: a table (namespace.name) or sources")->required();
  sub->add_option("--to", args->to,
                  "Target CRS: EPSG:5070, OGC:CRS84, PROJJSON, WKT or a PROJ string "
                  "(x = longitude/easting always)")
      ->required();
  sub->add_option("--densify", args->densify,
                  "Add points so that no segment is longer than this, in input CRS units, "
                  "before transforming (0 = none)")
      ->capture_default_str();
  AddOpOptions(sub, &args->op);
  *action = [args](const GlobalOptions& global) { return RunReprojectCommand(global, *args); };
}

}  // namespace geolake::cli
