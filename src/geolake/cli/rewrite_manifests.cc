// `geolake rewrite-manifests TABLE [--target-manifest-size SIZE] [--dry-run]`: rewrite the
// current snapshot's data manifests into few, clustered by partition, in one `replace` snapshot
// that changes manifests only (maintenance/rewrite_manifests.h).
#include "geolake/maintenance/rewrite_manifests.h"

#include <cstdio>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/units.h"

namespace geolake::cli {
namespace {

struct RewriteManifestsArgs {
  std::string table;
  std::string target_manifest_size;  // empty: commit.manifest.target-size-bytes, else 8MiB
  bool dry_run = false;
};

// "1 manifest", "2 manifests"; "1 entry", "2 entries".
std::string Count(std::int64_t n, const std::string& noun) {
  if (n == 1) return "1 " + noun;
  if (noun.back() == 'y') return std::to_string(n) + " " + noun.substr(0, noun.size() - 1) + "ies";
  return std::to_string(n) + " " + noun + "s";
}

Status Run(Warehouse& warehouse, const RewriteManifestsArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  maintenance::RewriteManifestsOptions o;
  if (!args.target_manifest_size.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(
        o.target_manifest_size_bytes,
        ParseSize(args.target_manifest_size).WithContext("--target-manifest-size"));
  }
  o.dry_run = args.dry_run;
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::RewriteManifestsReport r,
                           warehouse.RewriteManifests(id.ToString(), o));
  const maintenance::ManifestRewritePlan& p = r.plan;
  if (r.noop) {
    std::printf("nothing to rewrite in %s: %s\n", args.table.c_str(), r.noop_reason.c_str());
    return Status::OK();
  }
  const auto written = static_cast<std::int64_t>(p.manifests.size());
  std::printf("%s %s: %s (%s) -> %s (%s), %s%s; target %s; %s kept%s\n",
              r.dry_run ? "would rewrite manifests of" : "rewrote manifests of", args.table.c_str(),
              Count(p.input_manifests, "data manifest").c_str(), FormatSize(p.input_bytes).c_str(),
              Count(written, "manifest").c_str(), FormatSize(r.output_bytes).c_str(),
              Count(p.live_entries, "entry").c_str(),
              p.deleted_entries > 0
                  ? (" (" + std::to_string(p.deleted_entries) + " deleted entries dropped)").c_str()
                  : "",
              FormatSize(p.target_bytes).c_str(),
              Count(r.manifests_kept, "delete manifest").c_str(),
              r.dry_run ? ""
                        : ("; snapshot " + std::to_string(r.snapshot_id) + ", " +
                           Count(r.commit_attempts, "commit attempt"))
                              .c_str());
  for (std::size_t i = 0; i < p.manifests.size(); ++i) {
    const maintenance::PlannedManifest& m = p.manifests[i];
    std::string range = m.first_partition == m.last_partition
                            ? m.first_partition
                            : m.first_partition + " .. " + m.last_partition;
    if (range.empty()) range = "unpartitioned";
    std::printf("manifest %zu spec %d [%s]: %s, %s, %s%s\n", i, m.spec_id, range.c_str(),
                Count(static_cast<std::int64_t>(m.entries.size()), "entry").c_str(),
                Count(m.rows, "row").c_str(), FormatSize(m.bytes).c_str(),
                r.dry_run ? " (estimated)" : "");
  }
  return Status::OK();
}

}  // namespace

void RegisterRewriteManifests(CLI::App* sub, Action* action) {
  auto args = std::make_shared<RewriteManifestsArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("--target-manifest-size", args->target_manifest_size,
                  "Size of a new manifest at most (default: commit.manifest.target-size-bytes, "
                  "else 8MiB)");
  sub->add_flag("--dry-run", args->dry_run, "Print the plan, change nothing");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), Run(*warehouse, *args));
  };
}

}  // namespace geolake::cli
