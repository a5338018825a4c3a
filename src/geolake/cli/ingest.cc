// `geolake ingest TABLE SOURCE...`: load vector sources into a table in parallel, within the
// memory budget, committing whole units as it goes; resumable and cancellable
// (Warehouse::Ingest, pipeline/ingest.h).
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/shard.h"
#include "geolake/core/units.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/progress.h"
#include "geolake/sources/discover.h"

namespace geolake::cli {
namespace {

struct IngestArgs {
  std::string table;
  std::vector<std::string> sources;
  std::string on_invalid = "make-valid";
  std::int64_t commit_rows = 1000000;
  std::int64_t commit_seconds = 30;
  std::string layer;
  bool create = false;
  std::string partition;  // empty = chosen from the input size (see ChoosePartition)
  std::string crs = "EPSG:4326";
  int format_version = table::kDefaultFormatVersion;
  bool allow_changed_sources = false;
  std::int64_t unit_rows = 100000;
  std::string shard;  // "I/N"; empty = the whole job
  bool strict_schema = false;
};

std::string Report(const pipeline::IngestSummary& s, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(s.rows_read) / seconds : 0.0;
  char text[768];
  std::snprintf(text, sizeof(text),
                "run %s: %lld sources (%lld skipped), %lld units (%lld skipped)%s\n"
                "rows read %lld = rows committed %lld + rows rejected %lld%s%s\n"
                "%lld files written, %lld committed in %lld commits; peak in flight %s of %s\n"
                "%.2f s, %.0f rows/s; journal %s/journal.jsonl\n",
                s.run_id.c_str(), static_cast<long long>(s.sources),
                static_cast<long long>(s.sources_skipped), static_cast<long long>(s.units),
                static_cast<long long>(s.units_skipped),
                s.units_other_shards > 0
                    ? (", " + std::to_string(s.units_other_shards) + " for other shards").c_str()
                    : "",
                static_cast<long long>(s.rows_read), static_cast<long long>(s.rows_committed),
                static_cast<long long>(s.rows_rejected),
                s.rows_committed_elsewhere > 0
                    ? (" + rows another run committed meanwhile " +
                       std::to_string(s.rows_committed_elsewhere) + " (" +
                       std::to_string(s.units_committed_elsewhere) + " units)")
                          .c_str()
                    : "",
                s.rows_uncommitted > 0
                    ? (" + rows not committed " + std::to_string(s.rows_uncommitted)).c_str()
                    : "",
                static_cast<long long>(s.files_written), static_cast<long long>(s.files_committed),
                static_cast<long long>(s.commits), FormatSize(s.peak_inflight_bytes).c_str(),
                FormatSize(s.memory_bytes).c_str(), seconds, rate, s.run_dir.c_str());
  return text;
}

Status RunIngest(const GlobalOptions& global, const IngestArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global, /*with_memory=*/true));
  const auto started = std::chrono::steady_clock::now();
  pipeline::IngestSummary summary;
  std::unique_ptr<pipeline::ProgressDisplay> progress;
  Status st = [&]() -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(args.table));
    IngestOptions options;
    GEOLAKE_ASSIGN_OR_RETURN(options.on_invalid, pipeline::ParseInvalidPolicy(args.on_invalid));
    options.commit_rows = args.commit_rows;
    options.commit_seconds = args.commit_seconds;
    options.layer = args.layer;
    options.create = args.create;
    options.partition = args.partition;
    options.crs = args.crs;
    options.format_version = args.format_version;
    options.allow_changed_sources = args.allow_changed_sources;
    options.unit_rows = args.unit_rows;
    options.strict_schema = args.strict_schema;
    if (!args.shard.empty()) {
      GEOLAKE_ASSIGN_OR_RETURN(options.shard, ParseShard(args.shard));
    }
    if (args.create && args.partition.empty()) {
      // Chosen from the sources' bytes when the table does not exist yet; printed with the
      // reason before the run starts. An existing table keeps its own: nothing is printed.
      GEOLAKE_ASSIGN_OR_RETURN(std::optional<ChosenPartition> chosen,
                               warehouse->IngestPartition(id.ToString(), args.sources));
      if (chosen.has_value()) {
        std::printf("partition: %s (%s)\n", chosen->partition.c_str(), chosen->reason.c_str());
        std::fflush(stdout);
        options.partition = chosen->partition;
      }
    }
    const std::int64_t budget = warehouse->options().memory_bytes > 0
                                    ? warehouse->options().memory_bytes
                                    : pipeline::DefaultMemoryBudget();
    GEOLAKE_ASSIGN_OR_RETURN(
        progress, pipeline::ProgressDisplay::Start(global.progress, &warehouse->metrics(), budget));
    Status ingested = warehouse->Ingest(id.ToString(), args.sources, options, &summary);
    if (progress != nullptr) progress->Stop();
    if (!summary.run_dir.empty() && summary.rows_read + summary.sources > 0) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fputs(Report(summary, seconds).c_str(), stdout);
      if (ingested.code() == ErrorCode::kInternal) std::fputs("FAIL\n", stdout);
      std::fflush(stdout);
    }
    return ingested;
  }();
  return FinishCommand(global, warehouse.get(), st);
}

}  // namespace

void RegisterIngest(CLI::App* sub, Action* action) {
  auto args = std::make_shared<IngestArgs>();
  sub->add_option("table", args->table, "Table name, namespace.name")->required();
  sub->add_option("sources", args->sources, "Paths, globs or folders")->required();
  sub->add_option("--on-invalid", args->on_invalid, "Invalid, null and empty geometries")
      ->check(CLI::IsMember({"make-valid", "reject", "keep"}))
      ->capture_default_str();
  sub->add_option("--commit-rows", args->commit_rows, "Commit after this many rows")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--commit-seconds", args->commit_seconds, "Commit after this many seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--layer", args->layer, "Layer to read (default: the first)");
  sub->add_flag("--create", args->create, "Create the table from the first source if missing");
  sub->add_option("--partition", args->partition,
                  "With --create: quadkey:Z | s2:L | none (default: chosen from the input size: "
                  "the largest quadkey:Z, Z <= 4, whose 4^Z cells each get 128 MiB of the "
                  "sources' bytes; none below 512 MiB)");
  sub->add_option("--crs", args->crs, "With --create: the table CRS")->capture_default_str();
  sub->add_option("--format-version", args->format_version,
                  "With --create: the Iceberg format version (3: geometry type)")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str();
  sub->add_flag("--allow-changed-sources", args->allow_changed_sources,
                "Ingest a source again whose file changed since it was committed");
  sub->add_option("--unit-rows", args->unit_rows, "Rows per unit of work")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--shard", args->shard,
                  "I/N: load only shard I of N (0 <= I < N) of the sources' units, by a stable "
                  "hash, so N processes share one job (docs/cli.md)");
  sub->add_flag("--strict-schema", args->strict_schema,
                "Refuse a source that lacks a table column or has a field the table lacks "
                "(default: null / dropped, with a warning)");
  *action = [args](const GlobalOptions& global) { return RunIngest(global, *args); };
}

}  // namespace geolake::cli
