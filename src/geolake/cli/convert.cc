// `geolake convert SOURCE OUT.parquet`: any vector source GDAL reads, written as one GeoParquet
// file in geolake's table layout (bbox covering, Hilbert order), sequentially.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/units.h"

namespace geolake::cli {
namespace {

struct ConvertArgs {
  std::string source;
  std::string output;
  std::string sort = "hilbert";
  std::int64_t row_group_rows = 65536;
  std::string compression = "zstd";
  std::string layer;
  bool geometry_logical_type = false;
};

std::string FormatSummary(const std::string& output, const pipeline::ConvertSummary& s) {
  const double seconds = std::chrono::duration<double>(s.elapsed).count();
  const double rate = seconds > 0 ? static_cast<double>(s.file.rows) / seconds : 0.0;
  const auto plural = [](std::int64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  char timing[96];
  std::snprintf(timing, sizeof(timing), "%.2f s (%.0f rows/s)", seconds, rate);
  std::string line = "wrote " + output + ": " + plural(s.file.rows, "row", "rows") + ", " +
                     plural(s.file.row_groups, "row group", "row groups") + ", " +
                     std::to_string(s.file.file_bytes) + " bytes (" +
                     FormatSize(s.file.file_bytes) + ")";
  if (s.file.null_geometries > 0) {
    line += ", " + plural(s.file.null_geometries, "null geometry", "null geometries");
  }
  return line + " in " + timing + "\n";
}

Status RunConvert(Warehouse& warehouse, const ConvertArgs& args) {
  pipeline::ConvertOptions options;
  options.layer = args.layer;
  GEOLAKE_ASSIGN_OR_RETURN(options.file.order, geoparquet::ParseRowOrder(args.sort));
  GEOLAKE_ASSIGN_OR_RETURN(options.file.compression,
                           geoparquet::ParseCompression(args.compression));
  options.file.row_group_rows = args.row_group_rows;
  options.file.geometry_logical_type = args.geometry_logical_type;
  GEOLAKE_ASSIGN_OR_RETURN(pipeline::ConvertSummary summary,
                           warehouse.Convert(args.source, args.output, options));
  std::fputs(FormatSummary(args.output, summary).c_str(), stdout);
  return Status::OK();
}

}  // namespace

void RegisterConvert(CLI::App* sub, Action* action) {
  auto args = std::make_shared<ConvertArgs>();
  sub->add_option("source", args->source, "Any vector source GDAL reads")->required();
  sub->add_option("output", args->output, "OUT.parquet")->required();
  sub->add_option("--sort", args->sort, "Row order")
      ->check(CLI::IsMember({"hilbert", "none"}))
      ->capture_default_str();
  sub->add_option("--row-group-rows", args->row_group_rows, "Rows per row group")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--compression", args->compression, "zstd[:LEVEL] | snappy | gzip | none")
      ->capture_default_str();
  sub->add_option("--layer", args->layer, "Layer to read (default: the first)");
  sub->add_flag("--geometry-logical-type", args->geometry_logical_type,
                "Also give the geometry column the Parquet GEOMETRY logical type");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), RunConvert(*warehouse, *args));
  };
}

}  // namespace geolake::cli
