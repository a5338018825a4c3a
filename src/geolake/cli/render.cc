// `geolake render TABLE -o FILE.png [--bbox X1,Y1,X2,Y2] [--files] [--width PX] [--height PX]
// [--snapshot ID]`: a PNG of a table's features and, with --files, of its data-file boxes
// coloured by partition (render/render.h).
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"

namespace geolake::cli {
namespace {

struct RenderArgs {
  std::string table;
  std::string output;
  std::string bbox;
  bool files = false;
  int width_px = 1024;
  int height_px = 0;
  std::int64_t snapshot_id = 0;
  bool has_snapshot = false;
};

Status Run(Warehouse& warehouse, const RenderArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  render::RenderOptions options;
  options.output = args.output;
  options.width_px = args.width_px;
  options.height_px = args.height_px;
  options.files = args.files;
  if (!args.bbox.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.bbox, render::ParseBbox(args.bbox));
  }
  if (args.has_snapshot) options.snapshot_id = args.snapshot_id;
  GEOLAKE_ASSIGN_OR_RETURN(render::RenderSummary s, warehouse.Render(id.ToString(), options));
  std::printf(
      "wrote %s: %dx%d px, view %.6g,%.6g,%.6g,%.6g, %lld features from %lld of %lld "
      "files\n",
      args.output.c_str(), s.width_px, s.height_px, s.view.xmin, s.view.ymin, s.view.xmax,
      s.view.ymax, static_cast<long long>(s.features_drawn), static_cast<long long>(s.files_drawn),
      static_cast<long long>(s.files_total));
  if (args.files) {
    std::printf("files: %lld in %lld partitions; sum of file-bbox areas / table-bbox area = %.3f\n",
                static_cast<long long>(s.files_drawn), static_cast<long long>(s.partitions),
                s.overlap_ratio);
  }
  return Status::OK();
}

}  // namespace

void RegisterRender(CLI::App* sub, Action* action) {
  auto args = std::make_shared<RenderArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("-o,--output", args->output, "PNG file to write")->required();
  sub->add_option("--bbox", args->bbox, "X1,Y1,X2,Y2 to draw (default: the table's extent)");
  sub->add_flag("--files", args->files, "Also draw data-file boxes coloured by partition");
  sub->add_option("--width", args->width_px, "Canvas width in pixels")
      ->check(CLI::Range(1, 8192))
      ->capture_default_str();
  sub->add_option("--height", args->height_px, "Canvas height in pixels (default: by aspect)")
      ->check(CLI::Range(1, 8192));
  sub->add_option("--snapshot", args->snapshot_id, "Snapshot id (default: the current one)")
      ->each([args](const std::string&) { args->has_snapshot = true; });
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse,
                             OpenWarehouse(global, /*with_memory=*/false, /*read_only=*/true));
    return FinishCommand(global, warehouse.get(), Run(*warehouse, *args));
  };
}

}  // namespace geolake::cli
