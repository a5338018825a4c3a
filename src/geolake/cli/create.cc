// `geolake create TABLE (--schema FILE.json | --from SOURCE) [...]`: make a new Iceberg table.
// With --from the columns come from a vector source and the whole geolake layout is applied
// (docs/table-layout.md, layout/table_layout.h). With --schema the Iceberg schema JSON is
// taken as given; the layout's partition spec, sort order and geolake.* properties are added
// when the schema has the layout's columns, so a hand-written layout schema gives the same
// table as --from.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/cli/table_cli.h"
#include "geolake/layout/table_layout.h"
#include "geolake/sources/discover.h"
#include "geolake/table/location.h"
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

bool HasTopLevel(const table::Schema& schema, std::string_view name) {
  for (const table::NestedField& f : schema.fields()) {
    if (f.name == name) return true;
  }
  return false;
}

// The layout options: --partition/--crs plus the geolake.* properties given with --property
// (which are validated here rather than stored blindly).
Result<layout::LayoutOptions> LayoutOptionsFor(const CreateArgs& args,
                                               std::map<std::string, std::string>* user,
                                               const std::string& default_partition) {
  layout::LayoutOptions options;
  GEOLAKE_ASSIGN_OR_RETURN(
      options.partition,
      layout::ParsePartitionScheme(args.partition.empty() ? default_partition : args.partition));
  options.crs = args.crs;
  if (auto it = user->find(std::string(layout::kHilbertExtentProperty)); it != user->end()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.hilbert_extent, layout::ParseExtent(it->second));
    user->erase(it);
  }
  if (auto it = user->find(std::string(layout::kHilbertOrderProperty)); it != user->end()) {
    try {
      std::size_t used = 0;
      options.hilbert_order = std::stoi(it->second, &used);
      if (used != it->second.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      return Status::InvalidArgument("--property geolake.hilbert.order='" + it->second +
                                     "': not a number");
    }
    user->erase(it);
  }
  for (std::string_view key : {layout::kCrsProperty, layout::kPartitionProperty}) {
    if (user->contains(std::string(key))) {
      return Status::InvalidArgument("--property " + std::string(key) + ": use --" +
                                     (key == layout::kCrsProperty ? "crs" : "partition"));
    }
  }
  return options;
}

// The table options for --from: the source's fields in the full layout. Without --partition
// the partition is chosen from the source's bytes as `ingest --create` chooses it, so that
// `create --from X` then `ingest X` gives the table `ingest --create X` gives; `*chosen` then
// holds the reason (else it is left empty).
Result<table::NewTableOptions> FromSource(const CreateArgs& args,
                                          std::map<std::string, std::string>* user,
                                          std::string* chosen) {
  GEOLAKE_ASSIGN_OR_RETURN(const sources::SourceInfo source,
                           sources::DescribeLayer(args.from, args.layer));
  std::string default_partition;
  if (args.partition.empty()) {
    // The target the table's writers will use: a --property value read as TableMetadata
    // reads it (a malformed one falls back to the default there too).
    table::TableMetadata as_written;
    as_written.properties = *user;
    const layout::PartitionChoice choice = layout::PartitionForInputSize(
        sources::InputBytes({args.from}),
        as_written.PropertyAsInt("write.target-file-size-bytes",
                                 layout::kDefaultTargetFileSizeBytes));
    default_partition = choice.scheme.ToString();
    *chosen = choice.reason;
  }
  GEOLAKE_ASSIGN_OR_RETURN(layout::LayoutOptions options,
                           LayoutOptionsFor(args, user, default_partition));
  return layout::LayoutNewTable(source.fields, options).WithContext("source '" + args.from + "'");
}

// The table options for --schema: the schema as given; the layout's spec, sort order and
// properties when the schema has geometry, bbox and geo_hilbert.
Result<table::NewTableOptions> FromSchemaFile(const CreateArgs& args,
                                              std::map<std::string, std::string>* user) {
  auto io = io::MakeLocalFileIO();
  GEOLAKE_ASSIGN_OR_RETURN(std::string text, io->ReadAll(args.schema_file));
  Result<table::SchemaPtr> parsed = table::Schema::FromJson(text);
  if (!parsed.ok()) {
    // A malformed schema file is the user's argument, not corrupt table data.
    return Status::InvalidArgument("schema '" + args.schema_file +
                                   "': " + parsed.status().message());
  }
  table::NewTableOptions out;
  out.schema = *parsed;
  GEOLAKE_RETURN_NOT_OK(out.schema->Validate().WithContext("schema '" + args.schema_file + "'"));
  const bool has_cell = HasTopLevel(*out.schema, geoparquet::kCellColumn);
  GEOLAKE_ASSIGN_OR_RETURN(layout::LayoutOptions options,
                           LayoutOptionsFor(args, user, has_cell ? "quadkey:4" : "none"));
  GEOLAKE_ASSIGN_OR_RETURN(out.spec, layout::LayoutPartitionSpec(*out.schema, options.partition));
  const bool layout = HasTopLevel(*out.schema, geoparquet::kGeometryColumn) &&
                      HasTopLevel(*out.schema, geoparquet::kBboxColumn) &&
                      HasTopLevel(*out.schema, geoparquet::kHilbertColumn);
  if (layout) {
    GEOLAKE_ASSIGN_OR_RETURN(out.sort_order, layout::LayoutSortOrder(*out.schema));
    GEOLAKE_ASSIGN_OR_RETURN(out.properties, layout::LayoutProperties(options));
  }
  return out;
}

Status RunCreate(const GlobalOptions& global, const CreateArgs& args) {
  if (args.schema_file.empty() == args.from.empty()) {
    return Status::InvalidArgument("give exactly one of --schema FILE.json and --from SOURCE");
  }
  if (!args.layer.empty() && args.from.empty()) {
    return Status::InvalidArgument("--layer needs --from");
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  using Properties = std::map<std::string, std::string>;
  GEOLAKE_ASSIGN_OR_RETURN(Properties user, ParseProperties(args.properties));
  table::NewTableOptions options;
  std::string partition_reason;  // set when the partition was chosen from the input size
  if (!args.from.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options, FromSource(args, &user, &partition_reason));
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(options, FromSchemaFile(args, &user));
  }
  for (auto& [key, value] : user) options.properties[key] = value;
  options.format_version = args.format_version;
  // A name never chooses a folder outside the warehouse (table/location.h); only an explicit
  // --location can, and the output says so.
  std::string outside_warehouse;  // the warehouse, when the location is outside it
  if (args.location.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.location, table::DefaultTableLocation(global.warehouse, id));
  } else {
    options.location = args.location;
    while (options.location.size() > 1 && options.location.back() == '/') {
      options.location.pop_back();
    }
    auto location = table::NormalizeLocalPath(options.location);
    auto warehouse = table::NormalizeLocalPath(global.warehouse);
    if (location.ok() && warehouse.ok() &&
        (*location == *warehouse || !table::IsWithinPath(*location, *warehouse))) {
      outside_warehouse = *warehouse;
    }
  }

  GEOLAKE_ASSIGN_OR_RETURN(TableSession session, OpenTableSession(global));
  GEOLAKE_ASSIGN_OR_RETURN(bool exists, session.catalog->TableExists(id));
  if (exists) return Status::AlreadyExists("table '" + id.ToString() + "' already exists");
  GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(*session.catalog, id.ns));
  GEOLAKE_ASSIGN_OR_RETURN(table::Table created,
                           table::CreateTable(*session.catalog, *session.io, id, options));

  const table::TableMetadata& md = created.metadata;
  if (args.json) {
    nlohmann::ordered_json j;
    j["table"] = id.ToString();
    j["location"] = md.location;
    j["metadata_location"] = created.metadata_location;
    j["format_version"] = md.format_version;
    j["table_uuid"] = md.table_uuid;
    j["columns"] = md.current_schema()->fields().size();
    j["partition"] =
        md.properties.contains(std::string(layout::kPartitionProperty))
            ? nlohmann::ordered_json(md.properties.at(std::string(layout::kPartitionProperty)))
            : nlohmann::ordered_json(nullptr);
    if (!partition_reason.empty()) j["partition_reason"] = partition_reason;
    if (!outside_warehouse.empty()) j["outside_warehouse"] = true;
    PrintJson(j);
  } else {
    std::string text = "created " + id.ToString() + "\n";
    text += "  location  " + md.location + "\n";
    if (!outside_warehouse.empty()) {
      text += "  note      the location is outside the warehouse " + outside_warehouse +
              " (given with --location)\n";
    }
    text += "  metadata  " + created.metadata_location + "\n";
    if (!partition_reason.empty()) {
      text += "  partition " + md.properties.at(std::string(layout::kPartitionProperty)) + " (" +
              partition_reason + ")\n";
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
    GEOLAKE_ASSIGN_OR_RETURN(auto runtime, StartRuntime(global));
    return FinishRuntime(global, runtime.get(), RunCreate(global, *args));
  };
}

}  // namespace geolake::cli
