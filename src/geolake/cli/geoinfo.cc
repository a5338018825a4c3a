// `geolake geoinfo SOURCE`: profile a vector source with the geo module (types, extent,
// validity and make-valid, equal-area surface, quadkey cells, Hilbert keys) on every core.
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"

namespace geolake::cli {
namespace {

struct GeoinfoArgs {
  std::string source;
  int zoom = 3;
  bool metrics_table = false;
};

Status RunGeoinfo(Warehouse& warehouse, const GeoinfoArgs& args) {
  ops::ProfileOptions options;
  options.quadkey_zoom = args.zoom;
  GEOLAKE_ASSIGN_OR_RETURN(ops::ProfileReport report, warehouse.Profile(args.source, options));
  std::fputs(ops::FormatProfile(report).c_str(), stdout);
  if (args.metrics_table) std::fputs(warehouse.metrics().Snapshot().ToTable().c_str(), stdout);
  return Status::OK();
}

}  // namespace

void RegisterGeoinfo(CLI::App* sub, Action* action) {
  auto args = std::make_shared<GeoinfoArgs>();
  sub->add_option("source", args->source, "Any vector source GDAL reads")->required();
  sub->add_option("--zoom", args->zoom, "Quadkey zoom for the cell counts")
      ->check(CLI::Range(0, 23))
      ->capture_default_str();
  sub->add_flag("--metrics", args->metrics_table, "Also print the per-stage metrics table");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), RunGeoinfo(*warehouse, *args));
  };
}

}  // namespace geolake::cli
