// `geolake expire-snapshots TABLE [--older-than DURATION] [--retain-last N] [--dry-run]`: drop
// old snapshots, then delete the files only they reached (maintenance/expire.h).
#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/cli/table_cli.h"
#include "geolake/core/units.h"

namespace geolake::cli {
namespace {

struct ExpireArgs {
  std::string table;
  std::string older_than;        // empty: history.expire.max-snapshot-age-ms
  std::int64_t retain_last = 0;  // 0: history.expire.min-snapshots-to-keep
  bool dry_run = false;
  bool list = false;
};

Status Run(Warehouse& warehouse, const ExpireArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  maintenance::ExpireOptions o;
  o.now_ms = table::NowMillis();
  if (!args.older_than.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(std::chrono::milliseconds age,
                             ParseDuration(args.older_than).WithContext("--older-than"));
    o.older_than_ms = o.now_ms - age.count();
  }
  if (args.retain_last != 0) o.retain_last = args.retain_last;
  o.dry_run = args.dry_run;
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::ExpireReport r,
                           warehouse.ExpireSnapshots(id.ToString(), o));

  const char* verb = r.dry_run ? "would delete" : "deleted";
  if (args.list) {
    for (const std::string& path : r.deleted) std::printf("%s %s\n", verb, path.c_str());
  }
  std::printf(
      "%s %s: %zu of %lld snapshots%s (older than %s, retain last %lld)%s\n",
      r.dry_run ? "would expire" : "expired", args.table.c_str(), r.selection.expired.size(),
      static_cast<long long>(r.selection.retained +
                             static_cast<std::int64_t>(r.selection.expired.size())),
      r.selection.refs_removed.empty()
          ? ""
          : (", " + std::to_string(r.selection.refs_removed.size()) + " refs").c_str(),
      IsoTimeUtc(r.selection.cutoff_ms).c_str(), static_cast<long long>(r.selection.retain_last),
      r.commit_attempts > 1
          ? ("; " + std::to_string(r.commit_attempts) + " commit attempts").c_str()
          : "");
  std::printf(
      "%s %lld data files, %lld manifests, %lld manifest lists, %lld statistics files: "
      "%lld bytes (%s)%s\n",
      verb, static_cast<long long>(r.deleted_data_files),
      static_cast<long long>(r.deleted_manifests), static_cast<long long>(r.deleted_manifest_lists),
      static_cast<long long>(r.deleted_statistics_files), static_cast<long long>(r.deleted_bytes),
      FormatSize(r.deleted_bytes).c_str(),
      r.delete_failures > 0
          ? ("; " + std::to_string(r.delete_failures) + " could not be deleted").c_str()
          : "");
  if (!r.data_files_kept.empty()) std::printf("%s\n", r.data_files_kept.c_str());
  return r.status;
}

}  // namespace

void RegisterExpireSnapshots(CLI::App* sub, Action* action) {
  auto args = std::make_shared<ExpireArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("--older-than", args->older_than,
                  "Snapshots older than this may expire (e.g. 7d, 12h; default: "
                  "history.expire.max-snapshot-age-ms, else 5d)");
  sub->add_option("--retain-last", args->retain_last,
                  "Snapshots each branch keeps at least (default: "
                  "history.expire.min-snapshots-to-keep, else 1)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--dry-run", args->dry_run, "Only report what would be expired and deleted");
  sub->add_flag("--list", args->list, "Print every file deleted");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), Run(*warehouse, *args));
  };
}

}  // namespace geolake::cli
