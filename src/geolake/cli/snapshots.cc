// `geolake snapshots TABLE [--json]`: the table's snapshots, oldest first: id, parent,
// sequence number, time (ISO 8601 UTC), operation and the summary's counts. The current
// snapshot is marked.
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/cli/table_cli.h"

namespace geolake::cli {
namespace {

using nlohmann::ordered_json;

struct SnapshotsArgs {
  std::string table;
  bool json = false;
};

// The summary keys shown in the text listing, with their short headers.
constexpr std::pair<const char*, const char*> kHighlights[] = {
    {"added-data-files", "added files"},
    {"added-records", "added records"},
    {"total-data-files", "total files"},
    {"total-records", "total records"},
};

std::string SummaryValue(const table::Snapshot& s, const char* key) {
  auto it = s.summary.find(key);
  return it == s.summary.end() ? "-" : it->second;
}

// Summary values are strings in Iceberg; numbers are printed as numbers in JSON.
ordered_json SummaryJson(const std::map<std::string, std::string>& summary) {
  ordered_json j = ordered_json::object();
  for (const auto& [key, value] : summary) {
    const ordered_json number = ordered_json::parse(value, nullptr, false);
    j[key] = key != "operation" && number.is_number_integer() ? number : ordered_json(value);
  }
  return j;
}

Status RunSnapshots(Warehouse& warehouse, const SnapshotsArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, warehouse.Snapshots(args.table));
  const table::TableMetadata& md = t.metadata;
  if (args.json) {
    ordered_json list = ordered_json::array();
    for (const table::Snapshot& s : md.snapshots) {
      ordered_json j;
      j["snapshot_id"] = s.snapshot_id;
      j["parent_snapshot_id"] =
          s.parent_snapshot_id ? ordered_json(*s.parent_snapshot_id) : ordered_json(nullptr);
      j["sequence_number"] = s.sequence_number;
      j["timestamp_ms"] = s.timestamp_ms;
      j["timestamp"] = IsoTimeUtc(s.timestamp_ms);
      j["operation"] = s.operation();
      j["current"] = md.current_snapshot_id == s.snapshot_id;
      j["manifest_list"] = s.manifest_list;
      j["summary"] = SummaryJson(s.summary);
      list.push_back(std::move(j));
    }
    PrintJson({{"table", t.id.ToString()}, {"snapshots", std::move(list)}});
    return Status::OK();
  }
  if (md.snapshots.empty()) {
    std::fputs(("no snapshots in " + t.id.ToString() + "\n").c_str(), stdout);
    return Status::OK();
  }
  std::string out;
  for (const table::Snapshot& s : md.snapshots) {
    out += "snapshot " + std::to_string(s.snapshot_id) +
           (md.current_snapshot_id == s.snapshot_id ? " (current)" : "") + "\n";
    out += "  parent       " +
           (s.parent_snapshot_id ? std::to_string(*s.parent_snapshot_id) : "none") + "\n";
    out += "  sequence     " + std::to_string(s.sequence_number) + "\n";
    out += "  time         " + IsoTimeUtc(s.timestamp_ms) + "\n";
    out += "  operation    " + s.operation() + "\n";
    std::string counts;
    for (const auto& [key, header] : kHighlights) {
      counts += (counts.empty() ? "" : ", ") + std::string(header) + " " + SummaryValue(s, key);
    }
    out += "  summary      " + counts + "\n";
  }
  std::fputs(out.c_str(), stdout);
  return Status::OK();
}

}  // namespace

void RegisterSnapshots(CLI::App* sub, Action* action) {
  auto args = std::make_shared<SnapshotsArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_flag("--json", args->json, "JSON output");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse,
                             OpenWarehouse(global, /*with_memory=*/false, /*read_only=*/true));
    return FinishCommand(global, warehouse.get(), RunSnapshots(*warehouse, *args));
  };
}

}  // namespace geolake::cli
