// `geolake describe TABLE [--json]`: what a table is: location, format, current snapshot,
// schema with field ids, partition spec, sort order, properties, and the size of the current
// snapshot (data files, records, bytes, partitions, and the union of the files' bbox bounds
// when the table has geolake's layout), as Warehouse::Describe gives them.
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/cli/table_cli.h"
#include "geolake/layout/table_layout.h"

namespace geolake::cli {
namespace {

using nlohmann::ordered_json;

struct DescribeArgs {
  std::string table;
  bool json = false;
};

// `text` padded with spaces to `width` (at least one space follows it).
std::string Pad(const std::string& text, std::size_t width) {
  return text + std::string(text.size() < width ? width - text.size() : 1, ' ');
}

void AddFieldRows(const table::NestedField& f, int depth, std::string* out) {
  *out += "  " + Pad(std::to_string(f.id), 5) + Pad(std::string(2 * depth, ' ') + f.name, 24) +
          f.type->ToString() + (f.required ? " required" : "") + "\n";
  if (f.type->id() == table::TypeId::kStruct) {
    for (const table::NestedField& child : f.type->fields()) AddFieldRows(child, depth + 1, out);
  }
}

ordered_json FieldJson(const table::NestedField& f) {
  ordered_json j;
  j["id"] = f.id;
  j["name"] = f.name;
  j["required"] = f.required;
  j["type"] = f.type->ToString();
  if (f.type->id() == table::TypeId::kStruct) {
    j["fields"] = ordered_json::array();
    for (const table::NestedField& child : f.type->fields())
      j["fields"].push_back(FieldJson(child));
  }
  return j;
}

std::string SortFieldText(const table::Schema& schema, const table::SortField& f) {
  std::string name = schema.FindColumnName(f.source_id);
  if (name.empty()) name = "#" + std::to_string(f.source_id);
  if (f.transform.kind() != table::TransformKind::kIdentity) {
    name = f.transform.ToString() + "(" + name + ")";
  }
  return name + (f.direction == table::SortDirection::kAscending ? " asc" : " desc") +
         (f.null_order == table::NullOrder::kNullsFirst ? " nulls first" : " nulls last");
}

std::string PartitionFieldText(const table::Schema& schema, const table::PartitionField& f) {
  std::string source = schema.FindColumnName(f.source_id);
  if (source.empty()) source = "#" + std::to_string(f.source_id);
  return f.name + " = " + f.transform.ToString() + "(" + source + ")";
}

std::string RenderText(const TableDescription& d) {
  const table::Table& t = d.table;
  const table::TableMetadata& md = t.metadata;
  const table::SchemaPtr schema = md.current_schema();
  std::string out;
  out += "table             " + t.id.ToString() + "\n";
  out += "location          " + md.location + "\n";
  out += "metadata          " + t.metadata_location + "\n";
  out += "format version    " + std::to_string(md.format_version) + "\n";
  out += "uuid              " + md.table_uuid + "\n";
  out += "current snapshot  " +
         (md.current_snapshot_id ? std::to_string(*md.current_snapshot_id) : "none") + "\n";
  out += "\nschema " + std::to_string(schema->schema_id()) + " (" +
         std::to_string(schema->fields().size()) + " columns)\n";
  for (const table::NestedField& f : schema->fields()) AddFieldRows(f, 0, &out);

  const table::PartitionSpecPtr spec = md.default_spec();
  out += "\npartition spec " + std::to_string(md.default_spec_id);
  if (spec == nullptr || spec->is_unpartitioned()) {
    out += ": unpartitioned\n";
  } else {
    out += "\n";
    for (const table::PartitionField& f : spec->fields()) {
      out += "  " + std::to_string(f.field_id) + "  " + PartitionFieldText(*schema, f) + "\n";
    }
  }
  const table::SortOrderPtr order = md.default_sort_order();
  out += "\nsort order " + std::to_string(md.default_sort_order_id);
  if (order == nullptr || order->is_unsorted()) {
    out += ": unsorted\n";
  } else {
    out += "\n";
    for (const table::SortField& f : order->fields())
      out += "  " + SortFieldText(*schema, f) + "\n";
  }
  out += "\nproperties (" + std::to_string(md.properties.size()) + ")\n";
  for (const auto& [key, value] : md.properties) out += "  " + key + " = " + value + "\n";

  out += "\ndata files        " + std::to_string(d.data_files) + "\n";
  out += "records           " + std::to_string(d.records) + "\n";
  out += "bytes             " + std::to_string(d.bytes) + "\n";
  out += "partitions        " + std::to_string(d.partitions) + "\n";
  out += "bbox              " + (d.bbox ? layout::FormatExtent(*d.bbox) : std::string("unknown")) +
         "\n";
  return out;
}

ordered_json RenderJson(const TableDescription& d) {
  const table::Table& t = d.table;
  const table::TableMetadata& md = t.metadata;
  const table::SchemaPtr schema = md.current_schema();
  ordered_json j;
  j["table"] = t.id.ToString();
  j["location"] = md.location;
  j["metadata_location"] = t.metadata_location;
  j["format_version"] = md.format_version;
  j["table_uuid"] = md.table_uuid;
  j["current_snapshot_id"] =
      md.current_snapshot_id ? ordered_json(*md.current_snapshot_id) : ordered_json(nullptr);
  j["schema"] = {{"schema_id", schema->schema_id()}, {"fields", ordered_json::array()}};
  for (const table::NestedField& f : schema->fields())
    j["schema"]["fields"].push_back(FieldJson(f));
  ordered_json spec_fields = ordered_json::array();
  if (const table::PartitionSpecPtr spec = md.default_spec(); spec != nullptr) {
    for (const table::PartitionField& f : spec->fields()) {
      spec_fields.push_back({{"field_id", f.field_id},
                             {"name", f.name},
                             {"transform", f.transform.ToString()},
                             {"source_id", f.source_id}});
    }
  }
  j["partition_spec"] = {{"spec_id", md.default_spec_id}, {"fields", spec_fields}};
  ordered_json sort_fields = ordered_json::array();
  if (const table::SortOrderPtr order = md.default_sort_order(); order != nullptr) {
    for (const table::SortField& f : order->fields()) {
      sort_fields.push_back(
          {{"source_id", f.source_id},
           {"transform", f.transform.ToString()},
           {"direction", f.direction == table::SortDirection::kAscending ? "asc" : "desc"},
           {"null_order",
            f.null_order == table::NullOrder::kNullsFirst ? "nulls-first" : "nulls-last"}});
    }
  }
  j["sort_order"] = {{"order_id", md.default_sort_order_id}, {"fields", sort_fields}};
  j["properties"] = ordered_json::object();
  for (const auto& [key, value] : md.properties) j["properties"][key] = value;
  j["data_files"] = d.data_files;
  j["records"] = d.records;
  j["bytes"] = d.bytes;
  j["partitions"] = d.partitions;
  j["bbox"] = d.bbox ? ordered_json{d.bbox->xmin, d.bbox->ymin, d.bbox->xmax, d.bbox->ymax}
                     : ordered_json(nullptr);
  return j;
}

Status RunDescribe(Warehouse& warehouse, const DescribeArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(TableDescription described, warehouse.Describe(args.table));
  if (args.json) {
    PrintJson(RenderJson(described));
  } else {
    std::fputs(RenderText(described).c_str(), stdout);
  }
  return Status::OK();
}

}  // namespace

void RegisterDescribe(CLI::App* sub, Action* action) {
  auto args = std::make_shared<DescribeArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_flag("--json", args->json, "JSON output");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse,
                             OpenWarehouse(global, /*with_memory=*/false, /*read_only=*/true));
    return FinishCommand(global, warehouse.get(), RunDescribe(*warehouse, *args));
  };
}

}  // namespace geolake::cli
