// `geolake polygonize RASTER -o OUTPUT [--band N] [--connectedness 4|8] [--tile-size PX|WxH]
// [--field NAME] [--nodata V] [--float-tolerance T]` and the runner's options (cli/ops_cli.h):
// one polygon per connected region of equal pixel value, as gdal_polygonize, in parallel
// windows (Warehouse::Polygonize, ops/polygonize.h, docs/ops.md).
#include "geolake/ops/polygonize.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/ops_cli.h"

namespace geolake::cli {
namespace {

struct PolygonizeArgs {
  std::string raster;
  int band = 1;
  int connectedness = 4;
  std::string tile_size;
  std::string field = "DN";
  std::optional<double> nodata;
  std::optional<double> float_tolerance;
  OpArgs op;
};

Status RunPolygonizeCommand(const GlobalOptions& global, const PolygonizeArgs& args) {
  if (!args.op.bbox.empty() || !args.op.where.empty() || args.op.has_snapshot) {
    return Status::InvalidArgument(
        "polygonize: --bbox, --where and --snapshot apply to table "
        "and vector inputs, not to a raster");
  }
  ops::PolygonizeOptions options;
  options.band = args.band;
  options.connectedness = args.connectedness;
  if (!args.tile_size.empty()) {
    GEOLAKE_RETURN_NOT_OK(ops::ParseTileSize(args.tile_size, &options));
  }
  options.field = args.field;
  options.nodata = args.nodata;
  options.float_tolerance = args.float_tolerance;
  GEOLAKE_ASSIGN_OR_RETURN(ops::OutputSpec output, ops::ParseOutput(args.op.output));
  return RunOpCommand(
      global, args.op,
      [&](Warehouse& warehouse, const ops::RunnerOptions& runner, ops::RunSummary* summary) {
        ops::PolygonizeReport report;
        Status st = warehouse.Polygonize(args.raster, options, output, runner, summary, &report);
        if (st.ok()) std::fputs(ops::FormatPolygonizeReport(report).c_str(), stdout);
        return st;
      });
}

}  // namespace

void RegisterPolygonize(CLI::App* sub, Action* action) {
  auto args = std::make_shared<PolygonizeArgs>();
  sub->add_option("raster", args->raster, "A raster GDAL reads (GeoTIFF, ...)")->required();
  sub->add_option("--band", args->band, "The band to polygonize (1 = the first)")
      ->capture_default_str();
  sub->add_option("--connectedness", args->connectedness,
                  "4: pixels joined by edges; 8: also by corners")
      ->capture_default_str();
  sub->add_option("--tile-size", args->tile_size,
                  "Window size PX or WxH in pixels, rounded down to whole blocks (default "
                  "4096)");
  sub->add_option("--field", args->field, "Name of the pixel value column")->capture_default_str();
  sub->add_option("--nodata", args->nodata,
                  "Pixels of this value make no polygon (replaces the band's nodata and mask)");
  sub->add_option(
      "--float-tolerance", args->float_tolerance,
      "Polygonize a float band by classes round(value / T) (ties to even); the value column is "
      "class * T (without it a float band is refused)");
  AddOpOptions(sub, &args->op);
  *action = [args](const GlobalOptions& global) { return RunPolygonizeCommand(global, *args); };
}

}  // namespace geolake::cli
