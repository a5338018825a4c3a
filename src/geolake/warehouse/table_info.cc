// Warehouse::Describe and Files: what a table's current (or a given) snapshot holds, as data:
// each live data file with its partition values and its bbox from the manifest bounds, and the
// totals of a snapshot.
#include <set>
#include <string>
#include <utility>
#include <variant>

#include "geolake/geolake.h"
#include "geolake/layout/table_layout.h"
#include "geolake/table/scan.h"
#include "geolake/warehouse/table_info_internal.h"

namespace geolake {
namespace internal {

std::vector<PartitionValue> PartitionValues(const table::TableMetadata& metadata,
                                            const table::DataFile& file) {
  std::vector<PartitionValue> out;
  const table::PartitionSpecPtr spec = metadata.default_spec();
  const table::SchemaPtr schema = metadata.current_schema();
  // Names and types from the table's default spec when its arity matches (geolake tables have
  // one spec); otherwise positional names and no type.
  if (spec != nullptr && schema != nullptr && spec->fields().size() == file.partition.size()) {
    Result<table::TypePtr> type = spec->PartitionType(*schema);
    if (type.ok()) {
      const std::vector<table::NestedField>& fields = (*type)->fields();
      for (std::size_t i = 0; i < fields.size(); ++i) {
        out.push_back(PartitionValue{fields[i].name, fields[i].type, file.partition[i]});
      }
      return out;
    }
  }
  for (std::size_t i = 0; i < file.partition.size(); ++i) {
    out.push_back(PartitionValue{"p" + std::to_string(i), nullptr, file.partition[i]});
  }
  return out;
}

std::optional<geo::Envelope> DataFileBbox(const Result<layout::TableLayout>& layout,
                                          const table::DataFile& file) {
  if (!layout.ok()) return std::nullopt;
  const auto bound = [](const std::map<std::int32_t, std::string>& bounds,
                        std::int32_t id) -> std::optional<double> {
    auto it = bounds.find(id);
    if (it == bounds.end()) return std::nullopt;
    Result<table::Value> v = table::DeserializeValue(*table::Type::Double(), it->second);
    if (!v.ok() || !std::holds_alternative<double>(*v)) return std::nullopt;
    return std::get<double>(*v);
  };
  const auto xmin = bound(file.lower_bounds, layout->bbox_xmin_id);
  const auto ymin = bound(file.lower_bounds, layout->bbox_ymin_id);
  const auto xmax = bound(file.upper_bounds, layout->bbox_xmax_id);
  const auto ymax = bound(file.upper_bounds, layout->bbox_ymax_id);
  if (!xmin || !ymin || !xmax || !ymax) return std::nullopt;
  return geo::Envelope{*xmin, *ymin, *xmax, *ymax};
}

}  // namespace internal

std::string PartitionText(const std::vector<PartitionValue>& partition) {
  std::string out;
  for (const PartitionValue& p : partition) {
    if (!out.empty()) out += "/";
    std::string text = "null";
    if (!table::IsNull(p.value)) text = p.type ? table::ValueToString(*p.type, p.value) : "?";
    out += p.name + "=" + text;
  }
  return out;
}

Result<TableDescription> Warehouse::Describe(std::string_view table) {
  TableDescription out;
  GEOLAKE_ASSIGN_OR_RETURN(out.table, LoadTable(table));
  const table::TableMetadata& md = out.table.metadata;
  GEOLAKE_ASSIGN_OR_RETURN(table::ScanPlan plan, table::PlanScan(*io_, md));
  std::set<std::string> partitions;
  const Result<layout::TableLayout> layout = layout::ReadTableLayout(md);
  bool bbox_known = layout.ok();
  geo::Envelope bbox;
  for (const table::ManifestEntry& e : plan.data_files) {
    const table::DataFile& f = e.data_file;
    ++out.data_files;
    out.records += f.record_count;
    out.bytes += f.file_size_in_bytes;
    partitions.insert(PartitionText(internal::PartitionValues(md, f)));
    if (!bbox_known || f.record_count == 0) continue;
    const std::optional<geo::Envelope> box = internal::DataFileBbox(layout, f);
    // A file of only null geometries has no bounds and adds nothing; a file with values but
    // no bounds makes the union unknown.
    const auto nulls = f.null_value_counts.find(layout->bbox_xmin_id);
    const bool all_null = nulls != f.null_value_counts.end() && nulls->second == f.record_count;
    if (box) {
      bbox.Expand(*box);
    } else if (!all_null) {
      bbox_known = false;
    }
  }
  if (bbox_known && !bbox.IsEmpty()) out.bbox = bbox;
  out.partitions = static_cast<std::int64_t>(partitions.size());
  return out;
}

Result<TableFiles> Warehouse::Files(std::string_view table,
                                    std::optional<std::int64_t> snapshot_id) {
  TableFiles out;
  GEOLAKE_ASSIGN_OR_RETURN(out.table, LoadTable(table));
  const table::TableMetadata& md = out.table.metadata;
  GEOLAKE_ASSIGN_OR_RETURN(table::ScanPlan plan, table::PlanScan(*io_, md, snapshot_id));
  const Result<layout::TableLayout> layout = layout::ReadTableLayout(md);
  out.snapshot_id = plan.snapshot_id;
  out.records = plan.DataRecordCount();
  for (table::ManifestEntry& e : plan.data_files) {
    out.bytes += e.data_file.file_size_in_bytes;
    DataFileInfo info;
    info.partition = internal::PartitionValues(md, e.data_file);
    info.bbox = internal::DataFileBbox(layout, e.data_file);
    info.entry = std::move(e);
    out.files.push_back(std::move(info));
  }
  return out;
}

}  // namespace geolake
