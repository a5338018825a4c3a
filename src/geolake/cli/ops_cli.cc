#include "geolake/cli/ops_cli.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "geolake/cli/runtime.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/progress.h"
#include "geolake/render/render.h"

namespace geolake::cli {

void AddOpOptions(CLI::App* sub, OpArgs* args) {
  sub->add_option("-o,--output", args->output,
                  "A table (namespace.name) or a file: .parquet, .fgb, .gpkg, .geojson, "
                  ".geojsonl, .csv")
      ->required();
  sub->add_option("--bbox", args->bbox, "X1,Y1,X2,Y2: only input rows whose bbox overlaps it")
      ->check(NonEmptyFilter());
  sub->add_option("--where", args->where, "Filter the input table's rows (as query --where)")
      ->check(NonEmptyFilter());
  sub->add_option("--snapshot", args->snapshot, "Read this snapshot of the input table")
      ->each([args](const std::string&) { args->has_snapshot = true; });
  sub->add_option("--shard", args->shard,
                  "I/N: process only the input units of shard I of N (array jobs)");
  sub->add_option("--on-error", args->on_error,
                  "A GEOS error on one feature: skip (into the rejects file) or stop")
      ->check(CLI::IsMember({"skip", "stop"}))
      ->capture_default_str();
  sub->add_option("--partition", args->partition,
                  "A new output table: quadkey:Z | s2:L | none (default: from the input size)");
  sub->add_flag("--append", args->append,
                "Add the rows to an output table that holds rows of another run");
  sub->add_option("--commit-rows", args->commit_rows, "Commit after this many rows")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--commit-seconds", args->commit_seconds, "Commit after this many seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

Result<ops::InputSpec> OpInput(const std::string& text, const OpArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec spec, ops::ResolveInput(text));
  if (!args.bbox.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(spec.bbox, render::ParseBbox(args.bbox));
  }
  spec.where = args.where;
  if (args.has_snapshot) spec.snapshot_id = args.snapshot;
  if (!spec.sources.empty() && args.has_snapshot) {
    return Status::InvalidArgument("--snapshot needs a table input, not '" + text + "'");
  }
  return spec;
}

Result<ops::RunnerOptions> OpRunnerOptions(const OpArgs& args) {
  ops::RunnerOptions options;  // memory_bytes 0: the warehouse's --memory, else the default
  if (!args.shard.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.shard, ops::ParseShard(args.shard));
  }
  GEOLAKE_ASSIGN_OR_RETURN(options.on_error, ops::ParseFeatureErrorPolicy(args.on_error));
  if (!args.partition.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.partition, layout::ParsePartitionScheme(args.partition));
  }
  options.append = args.append;
  options.commit_rows = args.commit_rows;
  options.commit_seconds = args.commit_seconds;
  return options;
}

Status RunOpCommand(const GlobalOptions& global, const OpArgs& args, const OpRunFn& run) {
  GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global, /*with_memory=*/true));
  const auto started = std::chrono::steady_clock::now();
  ops::RunSummary summary;
  std::unique_ptr<pipeline::ProgressDisplay> progress;
  Status st = [&]() -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(ops::RunnerOptions options, OpRunnerOptions(args));
    const std::int64_t budget = warehouse->options().memory_bytes > 0
                                    ? warehouse->options().memory_bytes
                                    : pipeline::DefaultMemoryBudget();
    GEOLAKE_ASSIGN_OR_RETURN(
        progress, pipeline::ProgressDisplay::Start(global.progress, &warehouse->metrics(), budget));
    Status ran = run(*warehouse, options, &summary);
    if (progress != nullptr) progress->Stop();
    if (!summary.run_id.empty() && (ran.ok() || summary.totals.rows_in > 0)) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fputs(ops::FormatRunSummary(summary).c_str(), stdout);
      std::printf("%.2f s\n", seconds);
      if (ran.code() == ErrorCode::kInternal) std::fputs("FAIL\n", stdout);
      std::fflush(stdout);
    }
    return ran;
  }();
  return FinishCommand(global, warehouse.get(), st);
}

}  // namespace geolake::cli
