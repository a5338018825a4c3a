// `geolake remove-orphans TABLE [--older-than DURATION] [--dry-run]`: delete the files under
// the table's data/ and metadata/ folders that no snapshot references (maintenance/orphans.h).
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/catalog/sql_catalog.h"
#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/units.h"
#include "geolake/maintenance/orphans.h"
#include "geolake/table/transaction.h"

namespace geolake::cli {
namespace {

struct RemoveOrphansArgs {
  std::string table;
  std::string older_than = "3d";
  bool dry_run = false;
};

// Paths below the table location print relative to it: shorter, and stable across machines.
std::string Relative(const std::string& path, const std::string& location) {
  if (path.size() > location.size() + 1 && path.compare(0, location.size(), location) == 0 &&
      path[location.size()] == '/') {
    return path.substr(location.size() + 1);
  }
  return path;
}

Status Run(const GlobalOptions& global, const RemoveOrphansArgs& args, Runtime* runtime) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  GEOLAKE_ASSIGN_OR_RETURN(std::chrono::milliseconds age,
                           ParseDuration(args.older_than).WithContext("--older-than"));
  GEOLAKE_ASSIGN_OR_RETURN(auto catalog, catalog::OpenCatalog(global.catalog, global.warehouse));
  const std::unique_ptr<io::FileIO> io = io::MakeLocalFileIO();
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(*catalog, *io, id));

  maintenance::OrphanOptions options;
  options.warehouse = global.warehouse;
  options.older_than = age;
  options.dry_run = args.dry_run;
  GEOLAKE_ASSIGN_OR_RETURN(
      maintenance::OrphanReport report,
      maintenance::RemoveOrphanFiles(*catalog, *io, t, options, runtime->stop->token())
          .WithContext("table '" + args.table + "'"));

  const std::string location = maintenance::NormalizeLocalPath(t.metadata.location).value_or("");
  const char* verb = args.dry_run ? "would remove" : "removed";
  for (const maintenance::OrphanFile& f : report.removed) {
    std::printf("%s %s (%lld bytes%s)\n", verb, Relative(f.path, location).c_str(),
                static_cast<long long>(f.size_bytes), f.temp_file ? ", temporary file" : "");
  }
  std::printf("%s %zu orphan files, %lld bytes (%s) from %s; kept %lld referenced files and "
              "%lld unreferenced files newer than %s\n",
              verb, report.removed.size(), static_cast<long long>(report.removed_bytes),
              FormatSize(report.removed_bytes).c_str(), args.table.c_str(),
              static_cast<long long>(report.files_referenced),
              static_cast<long long>(report.files_too_new), args.older_than.c_str());
  if (report.files_in_flight + report.files_other_tables > 0) {
    std::printf(
        "kept %lld files a running ingest may still commit and %lld files of other "
        "tables\n",
        static_cast<long long>(report.files_in_flight),
        static_cast<long long>(report.files_other_tables));
  }
  runtime->metrics.counter("orphans.files_listed")->Add(report.files_listed);
  runtime->metrics.counter("orphans.files_removed")
      ->Add(args.dry_run ? 0 : static_cast<std::int64_t>(report.removed.size()));
  runtime->metrics.counter("orphans.bytes_removed")->Add(args.dry_run ? 0 : report.removed_bytes);
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
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto runtime, StartRuntime(global));
    Status st = Run(global, *args, runtime.get());
    return FinishRuntime(global, runtime.get(), std::move(st));
  };
}

}  // namespace geolake::cli
