// `geolake compact TABLE [--strategy binpack|sort|hilbert] [--sort-order "COL ASC, ..."]
// [--target-file-size SIZE] [--min-file-size SIZE] [--max-file-size SIZE] [--min-input-files N]
// [--max-file-group-size SIZE] [--max-concurrent-groups N] [--partial-progress [--max-commits N]]
// [--where EXPR | --bbox X1,Y1,X2,Y2] [--rewrite-all] [--dry-run]`: rewrite small files into
// files near the target size (maintenance/compact.h, docs/maintenance.md).
#include "geolake/maintenance/compact.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/units.h"
#include "geolake/maintenance/orphans.h"
#include "geolake/pipeline/progress.h"
#include "geolake/render/render.h"

namespace geolake::cli {
namespace {

struct CompactArgs {
  std::string table;
  std::string strategy = "binpack";
  std::string sort_order;
  std::string target_file_size;
  std::string min_file_size;
  std::string max_file_size;
  std::int64_t min_input_files = maintenance::kDefaultMinInputFiles;
  std::string max_file_group_size;
  std::int64_t max_concurrent_groups = 5;
  bool partial_progress = false;
  std::int64_t max_commits = 10;
  std::string where;
  std::string bbox;
  bool rewrite_all = false;
  bool dry_run = false;
};

Result<std::optional<std::int64_t>> OptionalSize(const std::string& text, const char* flag) {
  if (text.empty()) return std::optional<std::int64_t>();
  GEOLAKE_ASSIGN_OR_RETURN(std::int64_t v, ParseSize(text).WithContext(flag));
  return std::optional<std::int64_t>(v);
}

// "1 file", "2 files".
std::string Count(std::int64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Relative(const std::string& path, const std::string& location) {
  if (path.size() > location.size() + 1 && path.compare(0, location.size(), location) == 0 &&
      path[location.size()] == '/') {
    return path.substr(location.size() + 1);
  }
  return path;
}

void PrintPlan(const maintenance::CompactReport& r, const std::string& table,
               const std::string& location, bool list_files) {
  const maintenance::CompactionPlan& p = r.plan;
  std::printf(
      "%s %s (%s): %s of %s (%s) from %s, %lld candidates; target %s, min %s, max %s; "
      "%s skipped (%s)\n",
      r.dry_run ? "would compact" : "compact", table.c_str(),
      std::string(maintenance::CompactStrategyName(r.strategy)).c_str(),
      Count(static_cast<std::int64_t>(p.groups.size()), "group").c_str(),
      Count(p.InputFiles(), "file").c_str(), FormatSize(p.InputBytes()).c_str(),
      Count(p.files_scanned, "live file").c_str(), static_cast<long long>(p.candidate_files),
      FormatSize(p.sizes.target).c_str(), FormatSize(p.sizes.min).c_str(),
      FormatSize(p.sizes.max).c_str(), Count(p.groups_skipped, "group").c_str(),
      Count(p.files_skipped_in_groups, "file").c_str());
  for (std::size_t i = 0; i < p.groups.size(); ++i) {
    const maintenance::FileGroup& g = p.groups[i];
    const maintenance::GroupResult& res = r.groups[i];
    std::string outcome;
    if (r.dry_run) {
      outcome = "~" + Count(g.expected_output_files, "file");
    } else {
      outcome = std::string(maintenance::GroupOutcomeName(res.outcome));
      if (res.outcome == maintenance::GroupOutcome::kCommitted) {
        outcome += ": " + Count(res.output_files, "file") + ", " + FormatSize(res.output_bytes) +
                   ", snapshot " + std::to_string(res.snapshot_id);
      } else if (!res.error.empty()) {
        outcome += ": " + res.error;
      }
    }
    std::printf("group %d %s: %s, %s, %s (%s) -> %s\n", g.index, g.partition_text.c_str(),
                Count(static_cast<std::int64_t>(g.files.size()), "file").c_str(),
                FormatSize(g.input_bytes).c_str(), Count(g.input_rows, "row").c_str(),
                g.reason.c_str(), outcome.c_str());
    if (!list_files) continue;
    for (const maintenance::CandidateFile& c : g.files) {
      std::printf("  %s %lld bytes (%s)\n", Relative(c.file.file_path, location).c_str(),
                  static_cast<long long>(c.file.file_size_in_bytes),
                  std::string(maintenance::FileReasonText(c.reason)).c_str());
    }
  }
}

Status Run(const GlobalOptions& global, const CompactArgs& args, Warehouse& warehouse) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
  maintenance::CompactOptions o;
  GEOLAKE_ASSIGN_OR_RETURN(o.strategy, maintenance::ParseCompactStrategy(args.strategy));
  o.sort_order = args.sort_order;
  GEOLAKE_ASSIGN_OR_RETURN(o.plan.target_file_size_bytes,
                           OptionalSize(args.target_file_size, "--target-file-size"));
  GEOLAKE_ASSIGN_OR_RETURN(o.plan.min_file_size_bytes,
                           OptionalSize(args.min_file_size, "--min-file-size"));
  GEOLAKE_ASSIGN_OR_RETURN(o.plan.max_file_size_bytes,
                           OptionalSize(args.max_file_size, "--max-file-size"));
  GEOLAKE_ASSIGN_OR_RETURN(auto group_size,
                           OptionalSize(args.max_file_group_size, "--max-file-group-size"));
  if (group_size) o.plan.max_file_group_size_bytes = *group_size;
  o.plan.min_input_files = args.min_input_files;
  o.plan.rewrite_all = args.rewrite_all;
  o.max_concurrent_groups = args.max_concurrent_groups;
  o.partial_progress = args.partial_progress;
  o.max_commits = args.max_commits;
  o.where = args.where;
  if (!args.bbox.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(o.bbox, render::ParseBbox(args.bbox).WithContext("--bbox"));
  }
  o.dry_run = args.dry_run;
  std::unique_ptr<pipeline::ProgressDisplay> progress;
  if (!args.dry_run) {
    GEOLAKE_ASSIGN_OR_RETURN(progress,
                             pipeline::ProgressDisplay::Start(global.progress, &warehouse.metrics(),
                                                              warehouse.options().memory_bytes));
  }
  auto report = warehouse.Compact(id.ToString(), o);
  if (progress) progress->Stop();
  if (!report.ok()) return report.status();
  const maintenance::CompactReport& r = *report;
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, warehouse.LoadTable(id.ToString()));
  const std::string location = maintenance::NormalizeLocalPath(t.metadata.location).value_or("");
  PrintPlan(r, args.table, location, args.dry_run);
  if (!r.dry_run) {
    std::printf(
        "rewrote %lld of %s (%lld failed, %lld dropped): %s (%s) -> %s (%s), %s in, %s "
        "out; %s, %s, %s; %.2f s wall, %.2f s busy\n",
        static_cast<long long>(r.groups_rewritten),
        Count(static_cast<std::int64_t>(r.groups.size()), "group").c_str(),
        static_cast<long long>(r.groups_failed), static_cast<long long>(r.groups_dropped),
        Count(r.files_in, "file").c_str(), FormatSize(r.bytes_in).c_str(),
        Count(r.files_out, "file").c_str(), FormatSize(r.bytes_out).c_str(),
        Count(r.rows_in, "row").c_str(), Count(r.rows_out, "row").c_str(),
        Count(r.commits, "commit").c_str(), Count(r.commit_attempts, "attempt").c_str(),
        Count(r.commit_conflicts, "conflict").c_str(), r.wall_seconds, r.busy_seconds);
  }
  Metrics& metrics = warehouse.metrics();
  metrics.gauge("compact.wall_ms")->Set(static_cast<std::int64_t>(r.wall_seconds * 1000));
  metrics.gauge("compact.busy_ms")->Set(static_cast<std::int64_t>(r.busy_seconds * 1000));
  return r.status;
}

}  // namespace

void RegisterCompact(CLI::App* sub, Action* action) {
  auto args = std::make_shared<CompactArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("--strategy", args->strategy, "binpack (keep row order), sort or hilbert")
      ->capture_default_str();
  sub->add_option("--sort-order", args->sort_order,
                  "sort strategy: \"COL ASC|DESC [NULLS FIRST|LAST], ...\" (default: the table's)");
  sub->add_option("--target-file-size", args->target_file_size,
                  "Output file size (default: write.target-file-size-bytes, else 512MiB)");
  sub->add_option("--min-file-size", args->min_file_size,
                  "Files below this are rewritten (default 0.75 x target)");
  sub->add_option("--max-file-size", args->max_file_size,
                  "Files above this are rewritten (default 1.8 x target)");
  sub->add_option("--min-input-files", args->min_input_files,
                  "A group with this many files is rewritten")
      ->capture_default_str();
  sub->add_option("--max-file-group-size", args->max_file_group_size,
                  "Bytes of one group at most (default 100GiB)");
  sub->add_option("--max-concurrent-groups", args->max_concurrent_groups,
                  "Groups rewritten at once")
      ->capture_default_str();
  sub->add_flag("--partial-progress", args->partial_progress,
                "Commit finished groups in batches while running");
  sub->add_option("--max-commits", args->max_commits,
                  "With --partial-progress: commits the groups are spread over")
      ->capture_default_str();
  sub->add_option("--where", args->where, "Only files that may hold rows matching EXPR")
      ->check(NonEmptyFilter());
  sub->add_option("--bbox", args->bbox, "Only files that may hold rows in X1,Y1,X2,Y2")
      ->check(NonEmptyFilter());
  sub->add_flag("--rewrite-all", args->rewrite_all, "Rewrite every selected file");
  sub->add_flag("--dry-run", args->dry_run, "Print the plan, change nothing");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global, /*with_memory=*/true));
    return FinishCommand(global, warehouse.get(), Run(global, *args, *warehouse));
  };
}

}  // namespace geolake::cli
