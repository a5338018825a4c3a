// `geolake query TABLE [--bbox X1,Y1,X2,Y2] [--intersects WKT|FILE] [--where EXPR]
// [--snapshot ID | --as-of TIME] [--columns a,b] [--format F] [-o FILE] [--limit N] [--explain
// [--json]]`: the rows of one snapshot that pass every filter, pruned at every level (query/).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/query/geometry_file.h"
#include "geolake/query/output.h"
#include "geolake/query/scan.h"
#include "geolake/table/time_travel.h"
#include "geolake/table/transaction.h"

namespace geolake::cli {
namespace {

struct QueryArgs {
  std::string table;
  std::string bbox;
  std::string intersects;
  std::string where;
  std::int64_t snapshot = 0;
  bool has_snapshot = false;
  std::string as_of;
  std::string columns;
  std::string format = "geojson";
  std::string output;
  std::int64_t limit = -1;
  bool explain = false;
  bool json = false;
};

Result<geo::Envelope> ParseBox(const std::string& text) {
  std::vector<double> v;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      std::size_t used = 0;
      v.push_back(std::stod(part, &used));
      if (used != part.size()) v.clear();
    } catch (const std::exception&) {
      v.clear();
      break;
    }
  }
  if (v.size() != 4 || !(v[0] <= v[2]) || !(v[1] <= v[3])) {
    return Status::InvalidArgument("--bbox '" + text +
                                   "': expected X1,Y1,X2,Y2 with X1<=X2, Y1<=Y2");
  }
  return geo::Envelope{v[0], v[1], v[2], v[3]};
}

std::vector<std::string> SplitColumns(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

Status RunQuery(Warehouse& warehouse, const QueryArgs& args) {
  query::QueryOptions options;
  if (!args.bbox.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.bbox, ParseBox(args.bbox));
  }
  options.where = args.where;
  if (args.has_snapshot) options.snapshot_id = args.snapshot;
  if (!args.as_of.empty()) {
    if (args.has_snapshot) return Status::InvalidArgument("give --snapshot or --as-of, not both");
    GEOLAKE_ASSIGN_OR_RETURN(options.as_of_ms, table::ParseTimestampMillis(args.as_of));
  }
  options.columns = SplitColumns(args.columns);
  options.limit = args.limit;
  GEOLAKE_ASSIGN_OR_RETURN(query::OutputFormat format, query::ParseOutputFormat(args.format));
  if (args.json && !args.explain) return Status::InvalidArgument("--json needs --explain");

  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, warehouse.LoadTable(args.table));
  if (!args.intersects.empty()) {
    const auto crs = t.metadata.properties.find("geolake.crs");
    GEOLAKE_RETURN_NOT_OK(query::ResolveIntersects(
        args.intersects, crs == t.metadata.properties.end() ? "" : crs->second, warehouse.io(),
        &options));
  }

  // --explain alone prints the plan and counts (the scan still runs, so bytes are real); with
  // -o the rows are written as well.
  std::unique_ptr<query::RowSink> sink;
  if (!args.explain || !args.output.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(
        sink, query::MakeOutputSink(format, args.output, warehouse.io(), warehouse.stop_token()));
  }
  GEOLAKE_ASSIGN_OR_RETURN(query::QueryExplain explain, warehouse.Query(t, options, sink.get()));
  if (args.explain) {
    const std::string text = args.json ? explain.ToJson() + "\n" : explain.ToText();
    std::fputs(text.c_str(), args.output.empty() ? stdout : stderr);
  }
  return Status::OK();
}

}  // namespace

void RegisterQuery(CLI::App* sub, Action* action) {
  auto args = std::make_shared<QueryArgs>();
  sub->add_option("table", args->table, "Table (namespace.name)")->required();
  sub->add_option("--bbox", args->bbox, "X1,Y1,X2,Y2: rows whose bbox overlaps this box")
      ->check(NonEmptyFilter());
  sub->add_option("--intersects", args->intersects,
                  "WKT, or a vector file (the union of its geometries) or WKT file: rows whose "
                  "geometry intersects it (exact)")
      ->check(NonEmptyFilter());
  sub->add_option("--where", args->where,
                  "Filter: = != < <= > >=, AND OR NOT, IN (...), IS [NOT] NULL, LIKE")
      ->check(NonEmptyFilter());
  sub->add_option("--snapshot", args->snapshot, "Read this snapshot id")
      ->each([args](const std::string&) { args->has_snapshot = true; });
  sub->add_option("--as-of", args->as_of,
                  "Read the latest snapshot at or before TIME (ISO 8601 or epoch ms)");
  sub->add_option("--columns", args->columns, "Attribute columns to return (a,b); default all");
  sub->add_option("--format", args->format, "geojson|geojsonseq|csv|parquet|fgb|gpkg")
      ->capture_default_str();
  sub->add_option("-o,--output", args->output, "Output file (default: stdout, text formats)");
  sub->add_option("--limit", args->limit, "Return at most N rows")->check(CLI::NonNegativeNumber);
  sub->add_flag("--explain", args->explain,
                "Print what each level considered and pruned, and bytes read (rows only with -o)");
  sub->add_flag("--json", args->json, "With --explain: one JSON object");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse,
                             OpenWarehouse(global, /*with_memory=*/true, /*read_only=*/true));
    return FinishCommand(global, warehouse.get(), RunQuery(*warehouse, *args));
  };
}

}  // namespace geolake::cli
