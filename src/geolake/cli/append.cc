// `geolake append TABLE FILE.parquet... [--json] [--trust-footers]`: commit existing Parquet
// data files to a table in ONE append snapshot (Warehouse::Append: every page is decoded and
// checked unless --trust-footers; each file must fit the table's schema, CRS and
// partitioning). Files may live outside the table location; paths are stored absolute.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/cli/table_cli.h"

namespace geolake::cli {
namespace {

using nlohmann::ordered_json;

struct AppendArgs {
  std::string table;
  std::vector<std::string> files;
  bool json = false;
  AppendOptions options;
};

Status RunAppend(Warehouse& warehouse, const AppendArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(AppendResult result,
                           warehouse.Append(args.table, args.files, args.options));
  const std::string table = result.table.ToString();
  if (args.json) {
    ordered_json listed = ordered_json::array();
    for (const AppendedFile& f : result.files) {
      listed.push_back({{"path", f.path},
                        {"partition", PartitionJson(f.partition)},
                        {"record_count", f.record_count},
                        {"file_size_in_bytes", f.file_size_in_bytes}});
    }
    PrintJson({{"table", table},
               {"snapshot_id", result.commit.snapshot_id},
               {"sequence_number", result.commit.sequence_number},
               {"metadata_location", result.commit.metadata_location},
               {"attempts", result.commit.attempts},
               {"added_files", result.files.size()},
               {"added_records", result.records},
               {"added_bytes", result.bytes},
               {"files", std::move(listed)}});
  } else {
    std::fprintf(stdout, "appended %zu files, %lld records, %lld bytes to %s\n",
                 result.files.size(), static_cast<long long>(result.records),
                 static_cast<long long>(result.bytes), table.c_str());
    std::fprintf(stdout, "  snapshot %lld (sequence %lld), %d attempt%s\n",
                 static_cast<long long>(result.commit.snapshot_id),
                 static_cast<long long>(result.commit.sequence_number), result.commit.attempts,
                 result.commit.attempts == 1 ? "" : "s");
  }
  return Status::OK();
}

}  // namespace

void RegisterAppend(CLI::App* sub, Action* action) {
  auto args = std::make_shared<AppendArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("files", args->files, "Parquet data files to commit")->required();
  sub->add_flag("--json", args->json, "JSON output");
  sub->add_flag("--trust-footers", args->options.trust_footers,
                "Check only footers and schemas, not every page (fast; for files you wrote)");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), RunAppend(*warehouse, *args));
  };
}

}  // namespace geolake::cli
