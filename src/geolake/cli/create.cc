// `geolake create TABLE (--schema FILE.json | --from SOURCE) [...]`: make a new Iceberg table
// (Warehouse::CreateTable). With --from the columns come from a vector source and the whole
// geolake layout is applied (docs/table-layout.md); with --schema the Iceberg schema JSON is
// taken as given, plus the layout's spec, sort order and properties when it has the layout's
// columns.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/cli/table_cli.h"
#include "geolake/layout/table_layout.h"
#include "geolake/table/schema.h"

namespace geolake::cli {
namespace {

struct CreateArgs {
  std::string table;
  std::string schema_file;
  std::string from;
  std::string layer;
  std::string partition;  // empty = the default (see FromSource and FromSchemaFile)
  std::string crs = "EPSG:4326";
  int format_version = table::kDefaultFormatVersion;
  std::vector<std::string> properties;
  std::string location;
  bool json = false;
};

Result<std::map<std::string, std::string>> ParseProperties(const std::vector<std::string>& kvs) {
  std::map<std::string, std::string> out;
  for (const std::string& kv : kvs) {
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--property '" + kv + "': want KEY=VALUE");
    }
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

// The Iceberg schema of --schema FILE.json; a malformed file is the user's argument, not
// corrupt table data.
Result<table::SchemaPtr> ReadSchemaFile(const io::FileIO& io, const std::string& path) {
  GEOLAKE_ASSIGN_OR_RETURN(std::string text, io.ReadAll(path));
  Result<table::SchemaPtr> parsed = table::Schema::FromJson(text);
  if (!parsed.ok()) {
    return Status::InvalidArgument("schema '" + path + "': " + parsed.status().message());
  }
  GEOLAKE_RETURN_NOT_OK((*parsed)->Validate().WithContext("schema '" + path + "'"));
  return *parsed;
}

Status RunCreate(Warehouse& warehouse, const CreateArgs& args) {
  if (args.schema_file.empty() == args.from.empty()) {
    return Status::InvalidArgument("give exactly one of --schema FILE.json and --from SOURCE");
  }
  if (!args.layer.empty() && args.from.empty()) {
    return Status::InvalidArgument("--layer needs --from");
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  CreateTableOptions options;
  GEOLAKE_ASSIGN_OR_RETURN(options.properties, ParseProperties(args.properties));
  options.from = args.from;
  options.layer = args.layer;
  if (!args.schema_file.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.schema, ReadSchemaFile(warehouse.io(), args.schema_file));
  }
  options.partition = args.partition;
  options.crs = args.crs;
  options.format_version = args.format_version;
  options.location = args.location;
  GEOLAKE_ASSIGN_OR_RETURN(CreatedTable created, warehouse.CreateTable(id.ToString(), options));

  const table::TableMetadata& md = created.table.metadata;
  const std::string partition_key(layout::kPartitionProperty);
  if (args.json) {
    nlohmann::ordered_json j;
    j["table"] = id.ToString();
    j["location"] = md.location;
    j["metadata_location"] = created.table.metadata_location;
    j["format_version"] = md.format_version;
    j["table_uuid"] = md.table_uuid;
    j["columns"] = md.current_schema()->fields().size();
    j["partition"] = md.properties.contains(partition_key)
                         ? nlohmann::ordered_json(md.properties.at(partition_key))
                         : nlohmann::ordered_json(nullptr);
    if (!created.partition_reason.empty()) j["partition_reason"] = created.partition_reason;
    if (!created.outside_warehouse.empty()) j["outside_warehouse"] = true;
    PrintJson(j);
  } else {
    std::string text = "created " + id.ToString() + "\n";
    text += "  location  " + md.location + "\n";
    if (!created.outside_warehouse.empty()) {
      text += "  note      the location is outside the warehouse " + created.outside_warehouse +
              " (given with --location)\n";
    }
    text += "  metadata  " + created.table.metadata_location + "\n";
    if (!created.partition_reason.empty()) {
      text += "  partition " + md.properties.at(partition_key) + " (" + created.partition_reason +
              ")\n";
    }
    std::fputs(text.c_str(), stdout);
  }
  return Status::OK();
}

}  // namespace

void RegisterCreate(CLI::App* sub, Action* action) {
  auto args = std::make_shared<CreateArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("--schema", args->schema_file, "Iceberg schema JSON file");
  sub->add_option("--from", args->from, "Take the columns from this vector source");
  sub->add_option("--layer", args->layer, "Layer of --from (default: the first)");
  sub->add_option("--partition", args->partition,
                  "quadkey:Z | s2:L | none (default with --from: chosen from the source's size "
                  "as ingest --create chooses it, none below 512 MiB; with --schema: quadkey:4 "
                  "when the schema has geo_cell, else none)");
  sub->add_option("--crs", args->crs, "Table CRS")->capture_default_str();
  sub->add_option("--format-version", args->format_version, "Iceberg format version")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str();
  sub->add_option("--property", args->properties, "Table property KEY=VALUE (repeatable)");
  sub->add_option("--location", args->location,
                  "Table location (default <warehouse>/<namespace>/<name>)");
  sub->add_flag("--json", args->json, "JSON output");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), RunCreate(*warehouse, *args));
  };
}

}  // namespace geolake::cli
