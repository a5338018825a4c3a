// Warehouse::Ingest and IngestPartition: the run's options from the Warehouse's engine, and
// the partition of a table that the ingest creates.
#include <utility>

#include "geolake/geolake.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/sources/discover.h"

namespace geolake {
namespace {

// The partition a new table gets from the bytes of its sources (pipeline/table_layout.h).
ChosenPartition ChooseFromInput(const std::vector<std::string>& sources) {
  const layout::PartitionChoice choice = layout::PartitionForInputSize(
      sources::InputBytes(sources), layout::kDefaultTargetFileSizeBytes);
  return ChosenPartition{choice.scheme.ToString(), choice.reason};
}

}  // namespace

Result<std::optional<ChosenPartition>> Warehouse::IngestPartition(
    std::string_view table, const std::vector<std::string>& sources) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(table));
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  GEOLAKE_ASSIGN_OR_RETURN(bool exists, catalog->TableExists(id));
  // The sizes come from the file system, not from discovery: discovering twice would cost the
  // GeoJSON reader's full scan twice (1.6 s of a 5.2 s geonames GeoJSONSeq ingest).
  if (exists) return std::optional<ChosenPartition>();
  return std::optional<ChosenPartition>(ChooseFromInput(sources));
}

Status Warehouse::Ingest(std::string_view table, const std::vector<std::string>& sources,
                         const IngestOptions& options, pipeline::IngestSummary* summary) {
  *summary = pipeline::IngestSummary{};
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(table));
  pipeline::IngestOptions run;
  run.warehouse = location_;
  run.executor = executor_.get();
  run.memory_bytes =
      options_.memory_bytes > 0 ? options_.memory_bytes : pipeline::DefaultMemoryBudget();
  run.on_invalid = options.on_invalid;
  run.commit_rows = options.commit_rows;
  run.commit_seconds = options.commit_seconds;
  run.layer = options.layer;
  run.create = options.create;
  run.allow_changed_sources = options.allow_changed_sources;
  run.unit_rows = options.unit_rows;
  run.run_id = options.run_id;
  run.shard = options.shard;
  run.strict_schema = options.strict_schema;
  run.layout.crs = options.crs;
  if (options.format_version != 2 && options.format_version != 3) {
    return Status::InvalidArgument("ingest: format version " +
                                   std::to_string(options.format_version) +
                                   " is not supported (2 or 3)");
  }
  run.layout.format_version = options.format_version;
  if (!options.partition.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(run.layout.partition, layout::ParsePartitionScheme(options.partition));
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  if (options.create && options.partition.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(std::optional<ChosenPartition> chosen,
                             IngestPartition(table, sources));
    if (chosen.has_value()) {
      GEOLAKE_ASSIGN_OR_RETURN(run.layout.partition,
                               layout::ParsePartitionScheme(chosen->partition));
    }
  }
  Status ingested =
      pipeline::Ingest(*catalog, *io_, id, sources, run, summary, &metrics_, stop_token());
  if (ingested.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext(
        "ingest cancelled; whole units committed so far stay; see the run journal");
  }
  return ingested;
}

}  // namespace geolake
