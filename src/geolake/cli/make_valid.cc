// `geolake make-valid INPUT [--method linework|structure] [--keep-collapsed] -o OUTPUT` and the
// runner's options (cli/ops_cli.h): every invalid geometry repaired with GEOS's make-valid, valid
// ones passed through, on the ops runner (Warehouse::MakeValid, ops/make_valid.h, docs/ops.md).
#include "geolake/ops/make_valid.h"

#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/ops_cli.h"

namespace geolake::cli {
namespace {

struct MakeValidArgs {
  std::string input;
  std::string method = "linework";
  bool keep_collapsed = false;
  OpArgs op;
};

Status RunMakeValidCommand(const GlobalOptions& global, const MakeValidArgs& args) {
  ops::MakeValidOptions options;
  GEOLAKE_ASSIGN_OR_RETURN(options.method, geo::ParseMakeValidMethod(args.method));
  options.keep_collapsed = args.keep_collapsed;
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec input, OpInput(args.input, args.op));
  GEOLAKE_ASSIGN_OR_RETURN(ops::OutputSpec output, ops::ParseOutput(args.op.output));
  return RunOpCommand(
      global, args.op,
      [&](Warehouse& warehouse, const ops::RunnerOptions& runner, ops::RunSummary* summary) {
        ops::MakeValidReport report;
        Status st = warehouse.MakeValid(input, options, output, runner, summary, &report);
        if (st.ok() || report.rows_valid + report.rows_repaired > 0) {
          std::fputs(ops::FormatMakeValidReport(report).c_str(), stdout);
        }
        return st;
      });
}

}  // namespace

void RegisterMakeValid(CLI::App* sub, Action* action) {
  auto args = std::make_shared<MakeValidArgs>();
  sub->add_option("input", args->input, "Input: a table (namespace.name) or sources")->required();
  sub->add_option("--method", args->method,
                  "GEOS make-valid method: linework (even-odd of the noded rings) or structure "
                  "(shells unioned, holes subtracted)")
      ->capture_default_str();
  sub->add_flag("--keep-collapsed", args->keep_collapsed,
                "Keep the lines and points of collapsed rings (a GeometryCollection) instead of "
                "keeping a polygonal column polygonal");
  AddOpOptions(sub, &args->op);
  *action = [args](const GlobalOptions& global) { return RunMakeValidCommand(global, *args); };
}

}  // namespace geolake::cli
