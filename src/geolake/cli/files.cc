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

namespace geolake::cli {
namespace {

using nlohmann::ordered_json;

struct FilesArgs {
  std::string table;
  std::optional<std::int64_t> snapshot;
  bool json = false;
};

Status RunFiles(Warehouse& warehouse, const FilesArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(TableFiles listed, warehouse.Files(args.table, args.snapshot));
  const table::Table& t = listed.table;
  if (args.json) {
    ordered_json files = ordered_json::array();
    for (const DataFileInfo& info : listed.files) {
      const table::ManifestEntry& e = info.entry;
      const table::DataFile& f = e.data_file;
      ordered_json j;
      j["path"] = f.file_path;
      j["partition"] = PartitionJson(info.partition);
      j["record_count"] = f.record_count;
      j["file_size_in_bytes"] = f.file_size_in_bytes;
      j["snapshot_id"] = e.snapshot_id ? ordered_json(*e.snapshot_id) : ordered_json(nullptr);
      j["sequence_number"] =
          e.sequence_number ? ordered_json(*e.sequence_number) : ordered_json(nullptr);
      j["bbox"] = info.bbox ? ordered_json{info.bbox->xmin, info.bbox->ymin, info.bbox->xmax,
                                           info.bbox->ymax}
                            : ordered_json(nullptr);
      files.push_back(std::move(j));
    }
    PrintJson({{"table", t.id.ToString()},
               {"snapshot_id", listed.snapshot_id},
               {"data_files", files.size()},
               {"records", listed.records},
               {"files", std::move(files)}});
    return Status::OK();
  }
  std::string out;
  for (const DataFileInfo& info : listed.files) {
    const table::DataFile& f = info.entry.data_file;
    out += f.file_path + "\n";
    const std::string partition = PartitionText(info.partition);
    out += "  " + (partition.empty() ? std::string("unpartitioned") : partition) + ", " +
           std::to_string(f.record_count) + " records, " + std::to_string(f.file_size_in_bytes) +
           " bytes";
    if (info.bbox) out += ", bbox " + layout::FormatExtent(*info.bbox);
    out += "\n";
  }
  out += std::to_string(listed.files.size()) + " data files, " + std::to_string(listed.records) +
         " records, " + std::to_string(listed.bytes) + " bytes\n";
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
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse,
                             OpenWarehouse(global, /*with_memory=*/false, /*read_only=*/true));
    return FinishCommand(global, warehouse.get(), RunFiles(*warehouse, *args));
  };
}

}  // namespace geolake::cli
