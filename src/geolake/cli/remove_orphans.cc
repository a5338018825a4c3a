// `geolake remove-orphans TABLE [--older-than DURATION] [--dry-run] [--no-running-writers]`: delete
// the files under the table's data/ and metadata/ folders that no snapshot references
// (maintenance/orphans.h).
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/units.h"

namespace geolake::cli {
namespace {

struct RemoveOrphansArgs {
  std::string table;
  std::string older_than = "3d";
  bool dry_run = false;
  bool no_running_writers = false;
};

// Paths below the table location print relative to it: shorter, and stable across machines.
std::string Relative(const std::string& path, const std::string& location) {
  if (path.size() > location.size() + 1 && path.compare(0, location.size(), location) == 0 &&
      path[location.size()] == '/') {
    return path.substr(location.size() + 1);
  }
  return path;
}

Status Run(Warehouse& warehouse, const RemoveOrphansArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  maintenance::OrphanOptions options;
  GEOLAKE_ASSIGN_OR_RETURN(options.older_than,
                           ParseDuration(args.older_than).WithContext("--older-than"));
  options.dry_run = args.dry_run;
  options.no_running_writers = args.no_running_writers;
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, warehouse.LoadTable(id.ToString()));
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::OrphanReport report,
                           warehouse.RemoveOrphans(id.ToString(), options));

  const std::string location = maintenance::NormalizeLocalPath(t.metadata.location).value_or("");
  const char* verb = args.dry_run ? "would remove" : "removed";
  for (const maintenance::OrphanFile& f : report.removed) {
    std::printf("%s %s (%lld bytes%s)\n", verb, Relative(f.path, location).c_str(),
                static_cast<long long>(f.size_bytes), f.temp_file ? ", temporary file" : "");
  }
  std::printf(
      "%s %zu orphan files, %lld bytes (%s) from %s; kept %lld referenced files and "
      "%lld unreferenced files newer than %s\n",
      verb, report.removed.size(), static_cast<long long>(report.removed_bytes),
      FormatSize(report.removed_bytes).c_str(), args.table.c_str(),
      static_cast<long long>(report.files_referenced), static_cast<long long>(report.files_too_new),
      args.older_than.c_str());
  if (report.files_in_flight + report.files_other_tables > 0) {
    std::printf(
        "kept %lld files a running ingest may still commit and %lld files of other "
        "tables\n",
        static_cast<long long>(report.files_in_flight),
        static_cast<long long>(report.files_other_tables));
  }
  return Status::OK();
}

}  // namespace

void RegisterRemoveOrphans(CLI::App* sub, Action* action) {
  auto args = std::make_shared<RemoveOrphansArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("--older-than", args->older_than,
                  "Only remove files older than this (e.g. 3d, 12h, 0s)")
      ->capture_default_str();
  sub->add_flag("--dry-run", args->dry_run, "Only list what would be removed");
  sub->add_flag("--no-running-writers", args->no_running_writers,
                "State that nothing writes to the table now, allowing --older-than under 1h");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), Run(*warehouse, *args));
  };
}

}  // namespace geolake::cli
