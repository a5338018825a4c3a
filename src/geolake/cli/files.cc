// `geolake files TABLE [--snapshot ID] [--json]`: the live data files of a snapshot (default
// the current one), as the scan planner lists them: path, partition, records, size and, for
// tables with geolake's layout, each file's bbox from its manifest bounds.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/cli/table_cli.h"
#include "geolake/layout/table_layout.h"
#include "geolake/table/scan.h"

namespace geolake::cli {
namespace {

using nlohmann::ordered_json;

struct FilesArgs {
  std::string table;
  std::optional<std::int64_t> snapshot;
  bool json = false;
};

std::optional<geo::Envelope> FileBbox(const Result<layout::TableLayout>& layout,
                                      const table::DataFile& f) {
  if (!layout.ok()) return std::nullopt;
  return DataFileBbox(*layout, f);
}

Status RunFiles(const GlobalOptions& global, const FilesArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(TableSession session, OpenTableSession(global));
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, LoadNamedTable(session, args.table));
  GEOLAKE_ASSIGN_OR_RETURN(table::ScanPlan plan,
                           table::PlanScan(*session.io, t.metadata, args.snapshot));
  const Result<layout::TableLayout> layout = layout::ReadTableLayout(t.metadata);
  if (args.json) {
    ordered_json files = ordered_json::array();
    for (const table::ManifestEntry& e : plan.data_files) {
      const table::DataFile& f = e.data_file;
      ordered_json j;
      j["path"] = f.file_path;
      j["partition"] = PartitionJson(t.metadata, f);
      j["record_count"] = f.record_count;
      j["file_size_in_bytes"] = f.file_size_in_bytes;
      j["snapshot_id"] = e.snapshot_id ? ordered_json(*e.snapshot_id) : ordered_json(nullptr);
      j["sequence_number"] =
          e.sequence_number ? ordered_json(*e.sequence_number) : ordered_json(nullptr);
      const std::optional<geo::Envelope> box = FileBbox(layout, f);
      j["bbox"] =
          box ? ordered_json{box->xmin, box->ymin, box->xmax, box->ymax} : ordered_json(nullptr);
      files.push_back(std::move(j));
    }
    PrintJson({{"table", t.id.ToString()},
               {"snapshot_id", plan.snapshot_id},
               {"data_files", files.size()},
               {"records", plan.DataRecordCount()},
               {"files", std::move(files)}});
    return Status::OK();
  }
  std::string out;
  std::int64_t bytes = 0;
  for (const table::ManifestEntry& e : plan.data_files) {
    const table::DataFile& f = e.data_file;
    bytes += f.file_size_in_bytes;
    out += f.file_path + "\n";
    const std::string partition = PartitionText(t.metadata, f);
    out += "  " + (partition.empty() ? std::string("unpartitioned") : partition) + ", " +
           std::to_string(f.record_count) + " records, " + std::to_string(f.file_size_in_bytes) +
           " bytes";
    if (const std::optional<geo::Envelope> box = FileBbox(layout, f); box) {
      out += ", bbox " + layout::FormatExtent(*box);
    }
    out += "\n";
  }
  out += std::to_string(plan.data_files.size()) + " data files, " +
         std::to_string(plan.DataRecordCount()) + " records, " + std::to_string(bytes) + " bytes\n";
  std::fputs(out.c_str(), stdout);
  return Status::OK();
}

}  // namespace

void RegisterFiles(CLI::App* sub, Action* action) {
  auto args = std::make_shared<FilesArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("--snapshot", args->snapshot, "Snapshot id (default: the current one)");
  sub->add_flag("--json", args->json, "JSON output");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto runtime, StartRuntime(global));
    return FinishRuntime(global, runtime.get(), RunFiles(global, *args));
  };
}

}  // namespace geolake::cli
