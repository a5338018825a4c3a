// `geolake geoinfo SOURCE`: profile a vector source with the geo module (types, extent,
// validity and make-valid, equal-area surface, quadkey cells, Hilbert keys) on every core.
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/ops/profile.h"

namespace geolake::cli {
namespace {

struct GeoinfoArgs {
  std::string source;
  int zoom = 3;
  bool metrics_table = false;
};

Status RunGeoinfo(const GlobalOptions& global, const GeoinfoArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(auto runtime, StartRuntime(global));
  ops::ProfileOptions options;
  options.workers = runtime->workers;
  options.quadkey_zoom = args.zoom;
  options.stop = runtime->stop->token();
  Result<ops::ProfileReport> report = ops::ProfileSource(args.source, options, &runtime->metrics);
  if (report.ok()) {
    std::fputs(ops::FormatProfile(*report).c_str(), stdout);
    if (args.metrics_table) std::fputs(runtime->metrics.Snapshot().ToTable().c_str(), stdout);
  }
  return FinishRuntime(global, runtime.get(), report.status());
}

}  // namespace

void RegisterGeoinfo(CLI::App* sub, Action* action) {
  auto args = std::make_shared<GeoinfoArgs>();
  sub->add_option("source", args->source, "Any vector source GDAL reads")->required();
  sub->add_option("--zoom", args->zoom, "Quadkey zoom for the cell counts")
      ->check(CLI::Range(0, 23))
      ->capture_default_str();
  sub->add_flag("--metrics", args->metrics_table, "Also print the per-stage metrics table");
  *action = [args](const GlobalOptions& global) { return RunGeoinfo(global, *args); };
}

}  // namespace geolake::cli
