// Warehouse::CreateTable: a new Iceberg table. From a vector source the columns come from the
// source and the whole geolake layout is applied (docs/table-layout.md,
// pipeline/table_layout.h). A given schema is taken as is; the layout's partition spec, sort
// order and geolake.* properties are added when the schema has the layout's columns, so a
// hand-written layout schema gives the same table as the source it was written for.
#include <map>
#include <string>

#include "geolake/geolake.h"
#include "geolake/layout/table_layout.h"
#include "geolake/sources/discover.h"
#include "geolake/table/location.h"

namespace geolake {
namespace {

bool HasTopLevel(const table::Schema& schema, std::string_view name) {
  for (const table::NestedField& f : schema.fields()) {
    if (f.name == name) return true;
  }
  return false;
}

// The layout options: the partition (`partition` or `default_partition`), the CRS, and the
// geolake.hilbert.* properties, which are validated and taken out of `*properties` here rather
// than stored blindly.
Result<layout::LayoutOptions> LayoutOptionsFor(const CreateTableOptions& options,
                                               std::map<std::string, std::string>* properties,
                                               const std::string& default_partition) {
  layout::LayoutOptions layout;
  GEOLAKE_ASSIGN_OR_RETURN(layout.partition, layout::ParsePartitionScheme(options.partition.empty()
                                                                              ? default_partition
                                                                              : options.partition));
  layout.crs = options.crs;
  layout.format_version = options.format_version;
  const std::string extent_key(layout::kHilbertExtentProperty);
  if (auto it = properties->find(extent_key); it != properties->end()) {
    GEOLAKE_ASSIGN_OR_RETURN(layout.hilbert_extent, layout::ParseExtent(it->second));
    properties->erase(it);
  }
  const std::string order_key(layout::kHilbertOrderProperty);
  if (auto it = properties->find(order_key); it != properties->end()) {
    try {
      std::size_t used = 0;
      layout.hilbert_order = std::stoi(it->second, &used);
      if (used != it->second.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      return Status::InvalidArgument("property " + order_key + "='" + it->second +
                                     "': not a number");
    }
    properties->erase(it);
  }
  for (std::string_view key :
       {layout::kCrsProperty, layout::kPartitionProperty, layout::kCrsProjjsonProperty}) {
    if (properties->contains(std::string(key))) {
      return Status::InvalidArgument("property " + std::string(key) + ": give the table's " +
                                     (key == layout::kPartitionProperty ? "partition" : "crs") +
                                     " instead");
    }
  }
  return layout;
}

// The table for a source: its fields in the full layout. Without a partition the partition is
// chosen from the source's bytes as Ingest chooses it, so that creating from X and then
// ingesting X gives the table an ingest with `create` of X gives; `*reason` then says why.
Result<table::NewTableOptions> FromSource(const CreateTableOptions& options,
                                          std::map<std::string, std::string>* properties,
                                          std::string* reason) {
  GEOLAKE_ASSIGN_OR_RETURN(const sources::SourceInfo source,
                           sources::DescribeLayer(options.from, options.layer));
  std::string default_partition;
  if (options.partition.empty()) {
    // The target the table's writers will use: a property value read as TableMetadata reads
    // it (a malformed one falls back to the default there too).
    table::TableMetadata as_written;
    as_written.properties = *properties;
    const layout::PartitionChoice choice = layout::PartitionForInputSize(
        sources::InputBytes({options.from}),
        as_written.PropertyAsInt("write.target-file-size-bytes",
                                 layout::kDefaultTargetFileSizeBytes));
    default_partition = choice.scheme.ToString();
    *reason = choice.reason;
  }
  GEOLAKE_ASSIGN_OR_RETURN(layout::LayoutOptions layout,
                           LayoutOptionsFor(options, properties, default_partition));
  return layout::LayoutNewTable(source.fields, layout).WithContext("source '" + options.from + "'");
}

// The table for a given schema: the schema as is; the layout's spec, sort order and
// properties when the schema has geometry, bbox and geo_hilbert.
Result<table::NewTableOptions> FromSchema(const CreateTableOptions& options,
                                          std::map<std::string, std::string>* properties) {
  table::NewTableOptions out;
  out.schema = options.schema;
  GEOLAKE_RETURN_NOT_OK(out.schema->Validate().WithContext("schema"));
  const bool has_cell = HasTopLevel(*out.schema, geoparquet::kCellColumn);
  GEOLAKE_ASSIGN_OR_RETURN(layout::LayoutOptions layout,
                           LayoutOptionsFor(options, properties, has_cell ? "quadkey:4" : "none"));
  GEOLAKE_ASSIGN_OR_RETURN(out.spec, layout::LayoutPartitionSpec(*out.schema, layout.partition));
  const bool has_layout = HasTopLevel(*out.schema, geoparquet::kGeometryColumn) &&
                          HasTopLevel(*out.schema, geoparquet::kBboxColumn) &&
                          HasTopLevel(*out.schema, geoparquet::kHilbertColumn);
  if (has_layout) {
    GEOLAKE_ASSIGN_OR_RETURN(out.sort_order, layout::LayoutSortOrder(*out.schema));
    GEOLAKE_ASSIGN_OR_RETURN(out.properties, layout::LayoutProperties(layout));
  }
  return out;
}

}  // namespace

Result<CreatedTable> Warehouse::CreateTable(std::string_view name,
                                            const CreateTableOptions& options) {
  if (options.from.empty() == (options.schema == nullptr)) {
    return Status::InvalidArgument("create table: give exactly one of a source and a schema");
  }
  if (!options.layer.empty() && options.from.empty()) {
    return Status::InvalidArgument("create table: a layer needs a source");
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(name));
  std::map<std::string, std::string> properties = options.properties;
  table::NewTableOptions create;
  CreatedTable created;
  if (!options.from.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(create, FromSource(options, &properties, &created.partition_reason));
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(create, FromSchema(options, &properties));
  }
  for (auto& [key, value] : properties) create.properties[key] = value;
  create.format_version = options.format_version;
  // A name never chooses a folder outside the warehouse (table/location.h); only an explicit
  // location can, and the result says so.
  if (options.location.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(create.location, table::DefaultTableLocation(location_, id));
  } else {
    create.location = options.location;
    while (create.location.size() > 1 && create.location.back() == '/') {
      create.location.pop_back();
    }
    auto location = table::NormalizeLocalPath(create.location);
    auto warehouse = table::NormalizeLocalPath(location_);
    if (location.ok() && warehouse.ok() &&
        (*location == *warehouse || !table::IsWithinPath(*location, *warehouse))) {
      created.outside_warehouse = *warehouse;
    }
  }

  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  GEOLAKE_ASSIGN_OR_RETURN(bool exists, catalog->TableExists(id));
  if (exists) return Status::AlreadyExists("table '" + id.ToString() + "' already exists");
  GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(*catalog, id.ns));
  GEOLAKE_ASSIGN_OR_RETURN(created.table, table::CreateTable(*catalog, *io_, id, create));
  return created;
}

}  // namespace geolake
