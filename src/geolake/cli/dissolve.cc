// `geolake dissolve INPUT -o OUTPUT [--by COL,...] [--touching | --tile-column COL
// [--tile-grid SIZE[,X0,Y0]]] [--aggregate SPEC,...] [--precision G]` and
// the runner's options (cli/ops_cli.h): one feature per group of equal --by values, the union
// of its geometries, on the ops runner (Warehouse::Dissolve, ops/dissolve.h, docs/ops.md).
#include "geolake/ops/dissolve.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/ops_cli.h"

namespace geolake::cli {
namespace {

struct DissolveArgs {
  std::string input;
  std::vector<std::string> by;
  std::vector<std::string> aggregates;
  double precision = 0;
  bool touching = false;
  std::string tile_column;
  std::string tile_grid;
  OpArgs op;
};

Status RunDissolveCommand(const GlobalOptions& global, const DissolveArgs& args) {
  ops::DissolveOptions options;
  options.by = args.by;
  for (const std::string& text : args.aggregates) {
    GEOLAKE_ASSIGN_OR_RETURN(ops::DissolveAggregate aggregate, ops::ParseDissolveAggregate(text));
    options.aggregates.push_back(std::move(aggregate));
  }
  options.precision = args.precision;
  options.touching = args.touching;
  options.tile_column = args.tile_column;
  if (!args.tile_grid.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(ops::TileGrid grid, ops::ParseTileGrid(args.tile_grid));
    options.tile_grid = grid;
  }
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec input, OpInput(args.input, args.op));
  GEOLAKE_ASSIGN_OR_RETURN(ops::OutputSpec output, ops::ParseOutput(args.op.output));
  return RunOpCommand(
      global, args.op,
      [&](Warehouse& warehouse, const ops::RunnerOptions& runner, ops::RunSummary* summary) {
        ops::DissolveReport report;
        Status st = warehouse.Dissolve(input, options, output, runner, summary, &report);
        if (st.ok() || report.groups > 0) {
          std::fputs(ops::FormatDissolveReport(report).c_str(), stdout);
        }
        return st;
      });
}

}  // namespace

void RegisterDissolve(CLI::App* sub, Action* action) {
  auto args = std::make_shared<DissolveArgs>();
  sub->add_option("input", args->input, "Input: a table (namespace.name) or sources")->required();
  sub->add_option("--by", args->by, "Group by these columns (default: every row in one group)")
      ->delimiter(',');
  sub->add_option("--aggregate", args->aggregates,
                  "Per group: count, sum:COL, min:COL, max:COL, first:COL, mean:COL (columns "
                  "count, sum_COL, ...)")
      ->delimiter(',');
  sub->add_flag("--touching", args->touching,
                "One feature per group of polygons that touch or overlap (within each --by "
                "group), not one per group");
  sub->add_option("--tile-column", args->tile_column,
                  "Tile-edge dissolve: the input was cut into tiles named by COL; join only "
                  "pieces of different tiles that share a border at their tiles' edges");
  sub->add_option("--tile-grid", args->tile_grid,
                  "SIZE[,X0,Y0]: with --tile-column, each tile's envelope is the cell of this "
                  "grid holding its data (default: the box of the tile's rows)");
  sub->add_option("--precision", args->precision,
                  "Snap the union to a grid of this cell size, in CRS units (0 = none)")
      ->capture_default_str();
  AddOpOptions(sub, &args->op);
  *action = [args](const GlobalOptions& global) { return RunDissolveCommand(global, *args); };
}

}  // namespace geolake::cli
