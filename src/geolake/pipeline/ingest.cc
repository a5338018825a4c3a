#include "geolake/pipeline/ingest.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/thread_pool.h"
#include "geolake/geo/geo_context.h"
#include "geolake/pipeline/commit_coordinator.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/run_journal.h"
#include "geolake/pipeline/table_writer.h"
#include "geolake/sources/discover.h"
#include "geolake/table/transaction.h"

namespace geolake::pipeline {
namespace {

// One unit to work on, with the index of its source in the plan.
struct WorkItem {
  std::size_t source = 0;
  sources::SourceUnit unit;
};

// What every worker shares.
struct Shared {
  const IngestOptions* options = nullptr;
  const io::FileIO* io = nullptr;
  const TableWriteOptions* write = nullptr;
  std::vector<sources::DiscoveredSource> sources;
  std::vector<FieldMapping> mappings;  // per source
  std::vector<WorkItem> work;
  std::atomic<std::size_t> next{0};
  MemoryBudget* budget = nullptr;
  std::int64_t share_bytes = 0;
  RunJournal* journal = nullptr;
  CommitCoordinator* coordinator = nullptr;
  StageMetrics* read = nullptr;
  StageMetrics* transform = nullptr;
  StageMetrics* write_stage = nullptr;
  Counter* rejected = nullptr;
  Counter* made_valid = nullptr;
  std::atomic<std::int64_t> rows_read{0};
  std::atomic<std::int64_t> rows_uncommitted{0};
  std::atomic<std::int64_t> files_written{0};
};

std::string SourceCrs(const sources::DiscoveredSource& source) {
  return !source.crs_authority.empty() ? source.crs_authority : source.crs_projjson;
}

// Journal the files a unit finished, committed or not.
Status JournalFiles(Shared& shared, const WorkItem& item, const std::vector<WrittenFile>& files) {
  std::vector<JournalEntry> entries;
  for (const WrittenFile& file : files) {
    entries.push_back(JournalEntry{file.path, shared.sources[item.source].fingerprint.ToString(),
                                   item.unit.index, file.rows, false, 0});
  }
  shared.files_written += static_cast<std::int64_t>(files.size());
  return shared.journal->FilesWritten(entries);
}

// Split a transformed batch by partition cell and hand each part to the writer.
Status WriteBatch(TransformedBatch* transformed, PartitionedWriter* writer) {
  const std::size_t num_rows = transformed->cell_ids.size();
  if (num_rows == 0) return Status::OK();
  const auto cell_of = [&](std::int32_t id) {
    return id < 0 ? std::optional<std::string>()
                  : std::optional<std::string>(transformed->cells[static_cast<std::size_t>(id)]);
  };
  const std::int32_t first = transformed->cell_ids[0];
  bool one_cell = true;
  for (const std::int32_t id : transformed->cell_ids) one_cell = one_cell && id == first;
  if (one_cell) {
    return writer->Add(cell_of(first), std::move(transformed->batch),
                       std::move(transformed->summaries));
  }
  std::map<std::int32_t, std::vector<std::uint32_t>> rows_by_cell;
  for (std::size_t row = 0; row < num_rows; ++row) {
    rows_by_cell[transformed->cell_ids[row]].push_back(static_cast<std::uint32_t>(row));
  }
  for (const auto& [id, rows] : rows_by_cell) {
    sources::FeatureBatch part;
    std::vector<geo::WkbSummary> summaries;
    TakeRows(*transformed, rows, &part, &summaries);
    GEOLAKE_RETURN_NOT_OK(writer->Add(cell_of(id), std::move(part), std::move(summaries)));
  }
  return Status::OK();
}

// Read, transform and write one unit; on success hand its files to the coordinator.
Status RunUnit(Shared& shared, const WorkItem& item, geo::GeoContext* ctx,
               std::map<std::size_t, std::unique_ptr<BatchTransformer>>* transformers,
               const std::stop_token& stop) {
  const sources::DiscoveredSource& source = shared.sources[item.source];
  const std::string label = "source '" + source.path + "' unit " + std::to_string(item.unit.index);
  auto& transformer = (*transformers)[item.source];
  if (transformer == nullptr) {
    TransformOptions options;
    options.on_invalid = shared.options->on_invalid;
    options.table_fields = shared.write->fields;
    options.partition = shared.write->layout.partition;
    options.table_crs = shared.write->layout.crs;
    options.source_crs = SourceCrs(source);
    auto made = BatchTransformer::Make(ctx, std::move(options), shared.mappings[item.source]);
    if (!made.ok()) return made.status().WithContext(label);
    transformer = std::move(*made);
  }
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, sources::UnitReader::Open(item.unit));
  PartitionedWriter writer(shared.write, shared.io, shared.budget, shared.share_bytes,
                           shared.write_stage, stop);
  UnitOutcome outcome;
  outcome.source = source.fingerprint.ToString();
  outcome.source_path = source.path;
  outcome.unit = item.unit.index;
  sources::FeatureBatch batch;
  TransformedBatch transformed;
  Status st = [&]() -> Status {
    while (true) {
      if (stop.stop_requested()) return Status::Cancelled(label + ": stopped");
      std::int64_t rows = 0;
      {
        StageMetrics::Timer timer(shared.read);
        GEOLAKE_ASSIGN_OR_RETURN(rows, reader->ReadBatch(shared.options->read_batch_rows, &batch));
      }
      if (rows == 0) break;
      outcome.rows_read += rows;
      shared.rows_read += rows;
      shared.read->AddRowsOut(rows);
      shared.read->AddBytesOut(batch.ByteSize());
      {
        StageMetrics::Timer timer(shared.transform);
        shared.transform->AddRowsIn(rows);
        GEOLAKE_RETURN_NOT_OK(transformer->Apply(batch, &transformed));
        shared.transform->AddRowsOut(transformed.batch.num_rows());
      }
      if (!transformed.rejects.empty()) {
        outcome.rows_rejected += static_cast<std::int64_t>(transformed.rejects.size());
        shared.rejected->Add(static_cast<std::int64_t>(transformed.rejects.size()));
        shared.journal->AddRejects(source.path, transformed.rejects);
      }
      shared.made_valid->Add(transformed.made_valid);
      outcome.rows_written += transformed.batch.num_rows();
      GEOLAKE_RETURN_NOT_OK(WriteBatch(&transformed, &writer));
    }
    return writer.FinishAll();
  }();
  if (!st.ok()) {
    writer.Abort();
    shared.rows_uncommitted += outcome.rows_read;
    Status journaled = JournalFiles(shared, item, writer.TakeWritten());
    if (!journaled.ok()) Log(LogLevel::kWarn, "{}", journaled.ToString());
    return st.WithContext(label);
  }
  outcome.files = writer.TakeWritten();
  GEOLAKE_RETURN_NOT_OK(JournalFiles(shared, item, outcome.files));
  shared.coordinator->Submit(std::move(outcome));
  return Status::OK();
}

Status RunWorker(Shared& shared, const std::stop_token& stop) {
  GEOLAKE_ASSIGN_OR_RETURN(auto ctx, geo::GeoContext::Make(stop));
  std::map<std::size_t, std::unique_ptr<BatchTransformer>> transformers;
  while (true) {
    const std::size_t index = shared.next.fetch_add(1);
    if (index >= shared.work.size()) return Status::OK();
    if (stop.stop_requested()) {
      return Status::Cancelled("ingest stopped");
    }
    GEOLAKE_RETURN_NOT_OK(RunUnit(shared, shared.work[index], ctx.get(), &transformers, stop));
  }
}

Result<table::Table> LoadOrCreate(table::Catalog& catalog, const io::FileIO& io,
                                  const table::TableIdentifier& id,
                                  const std::vector<sources::DiscoveredSource>& sources,
                                  const IngestOptions& options, bool* created) {
  Result<table::Table> loaded = table::LoadTable(catalog, io, id);
  if (loaded.ok() || loaded.status().code() != ErrorCode::kNotFound || !options.create) {
    return loaded;
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::NewTableOptions create,
                           LayoutNewTable(sources.front().fields, options.layout));
  create.location = DefaultTableLocation(options.warehouse, id);
  GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(catalog, id.ns));
  Result<table::Table> made = table::CreateTable(catalog, io, id, create);
  if (made.ok()) {
    *created = true;
    Log(LogLevel::kInfo, "created table {} from {}", id.ToString(), sources.front().path);
    return made;
  }
  if (made.status().code() == ErrorCode::kAlreadyExists) return table::LoadTable(catalog, io, id);
  return made;
}

}  // namespace

std::string DefaultTableLocation(const std::string& warehouse, const table::TableIdentifier& id) {
  std::string location = std::filesystem::absolute(warehouse).lexically_normal().string();
  while (location.size() > 1 && location.back() == '/') location.pop_back();
  for (const std::string& level : id.ns.levels) location += "/" + level;
  return location + "/" + id.name;
}

Status Ingest(table::Catalog& catalog, const io::FileIO& io, const table::TableIdentifier& id,
              const std::vector<std::string>& specs, const IngestOptions& options,
              IngestSummary* summary, Metrics* metrics, std::stop_token stop) {
  Metrics local_metrics;
  if (metrics == nullptr) metrics = &local_metrics;
  *summary = IngestSummary{};
  summary->run_id = options.run_id.empty() ? NewRunId() : options.run_id;
  summary->run_dir = RunDirectory(options.warehouse, summary->run_id);
  if (options.commit_rows <= 0 || options.commit_seconds <= 0 || options.read_batch_rows <= 0) {
    return Status::InvalidArgument("--commit-rows, --commit-seconds and the batch size must be "
                                   "positive");
  }

  // 1. discover
  Shared shared;
  StageMetrics* discover = metrics->stage("discover");
  {
    StageMetrics::Timer timer(discover);
    sources::DiscoverOptions discover_options;
    discover_options.unit_rows = options.unit_rows;
    discover_options.layer = options.layer;
    GEOLAKE_ASSIGN_OR_RETURN(shared.sources, sources::DiscoverSources(specs, discover_options));
  }
  summary->sources = static_cast<std::int64_t>(shared.sources.size());
  discover->AddRowsOut(summary->sources);
  if (shared.sources.empty()) return Status::NotFound("no source to ingest");

  GEOLAKE_ASSIGN_OR_RETURN(
      table::Table table,
      LoadOrCreate(catalog, io, id, shared.sources, options, &summary->table_created));
  Result<TableWriteOptions> write = TableWriteOptionsFor(table.metadata);
  if (!write.ok()) return write.status().WithContext("table '" + id.ToString() + "'");
  // The Parquet writer buffers one row group per file being written, outside the rows the
  // budget counts; cap it so that all workers' open row groups stay a fraction of the budget.
  write->row_group_bytes = std::clamp<std::int64_t>(
      (options.memory_bytes > 0 ? options.memory_bytes : DefaultMemoryBudget()) /
          (8 * std::max(1, options.workers)),
      std::int64_t{1} << 20, write->row_group_bytes);
  shared.write = &*write;

  // Resume: what earlier runs committed. Fields are checked for every source before any row
  // is written.
  const CommittedUnits done = ReadCommittedUnits(table.metadata);
  std::vector<SourcePlan> plans;
  for (std::size_t i = 0; i < shared.sources.size(); ++i) {
    const sources::DiscoveredSource& source = shared.sources[i];
    const std::string fingerprint = source.fingerprint.ToString();
    const std::string label = "source '" + source.path + "'";
    GEOLAKE_ASSIGN_OR_RETURN(FieldMapping mapping,
                             MapFields(source.fields, shared.write->fields, label));
    if (!mapping.dropped.empty() && !done.sources.contains(fingerprint)) {
      std::string names;
      for (const std::string& name : mapping.dropped) names += (names.empty() ? "" : ", ") + name;
      Log(LogLevel::kWarn, "{}: fields not in the table are dropped: {}", label, names);
    }
    shared.mappings.push_back(std::move(mapping));
    if (done.sources.contains(fingerprint)) {
      ++summary->sources_skipped;
      continue;
    }
    const auto by_path = done.fingerprints_by_path.find(source.fingerprint.path);
    const bool changed = by_path != done.fingerprints_by_path.end() &&
                         !by_path->second.contains(fingerprint);
    if (changed && !options.allow_changed_sources) {
      return Status::InvalidArgument(label + " changed since an earlier run committed it (" +
                                     *by_path->second.begin() + " -> " + fingerprint +
                                     "); pass --allow-changed-sources to ingest it again");
    }
    SourcePlan plan;
    plan.fingerprint = fingerprint;
    plan.path = source.path;
    plan.unit_count = static_cast<std::int64_t>(source.units.size());
    for (const sources::SourceUnit& unit : source.units) {
      if (done.UnitDone(fingerprint, unit.index)) {
        plan.committed_units.insert(unit.index);
        ++summary->units_skipped;
      } else {
        shared.work.push_back(WorkItem{i, unit});
      }
    }
    plans.push_back(std::move(plan));
  }
  summary->units = static_cast<std::int64_t>(shared.work.size());
  if (summary->sources_skipped > 0) {
    std::fprintf(stderr, "skipped %lld sources already committed\n",
                 static_cast<long long>(summary->sources_skipped));
  }
  if (summary->units_skipped > 0) {
    Log(LogLevel::kInfo, "skipped {} units already committed", summary->units_skipped);
  }

  // 2-4. transform, write, commit
  GEOLAKE_ASSIGN_OR_RETURN(auto journal, RunJournal::Open(&io, summary->run_dir, summary->run_id,
                                                          id.ToString()));
  summary->memory_bytes = options.memory_bytes > 0 ? options.memory_bytes : DefaultMemoryBudget();
  Gauge* inflight = metrics->gauge("inflight_bytes");
  MemoryBudget budget(summary->memory_bytes, inflight);
  const int workers = std::max(1, std::min<int>(options.workers,
                                                static_cast<int>(shared.work.size())));
  shared.options = &options;
  shared.io = &io;
  shared.budget = &budget;
  shared.share_bytes = summary->memory_bytes / workers;
  shared.journal = journal.get();
  shared.read = metrics->stage("read");
  shared.transform = metrics->stage("transform");
  shared.write_stage = metrics->stage("write");
  shared.rejected = shared.transform->counter("rejected");
  shared.made_valid = shared.transform->counter("made_valid");

  CommitOptions commit_options;
  commit_options.commit_rows = options.commit_rows;
  commit_options.commit_interval = std::chrono::seconds(options.commit_seconds);
  commit_options.run_id = summary->run_id;
  CommitCoordinator coordinator(&catalog, &io, id, commit_options, std::move(plans),
                                journal.get(), metrics);
  shared.coordinator = &coordinator;
  std::stop_source abort;
  std::stop_callback forward(stop, [&abort] { abort.request_stop(); });
  coordinator.Start([&abort] { abort.request_stop(); });

  Status work_status;
  if (!shared.work.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(auto pool, ThreadPool::Make(workers));
    TaskGroup group(pool.get(), abort.get_token());
    const std::stop_token worker_stop = group.stop_token();
    for (int w = 0; w < workers; ++w) {
      group.Spawn([&shared, worker_stop] { return RunWorker(shared, worker_stop); });
    }
    work_status = group.Wait();
  }
  // Whole units finished before a stop are still committed: that loses nothing and keeps
  // the table's state a prefix of the work.
  Status commit_status = coordinator.Finish();
  Status rejects_status = journal->WriteRejects();

  summary->rows_read = shared.rows_read.load();
  summary->rows_committed = coordinator.rows_committed();
  summary->rows_rejected = coordinator.rows_rejected_committed();
  summary->rows_uncommitted = shared.rows_uncommitted.load();
  summary->files_written = shared.files_written.load();
  summary->commits = coordinator.commits();
  for (const JournalEntry& entry : journal->entries()) {
    if (entry.committed) ++summary->files_committed;
  }
  summary->peak_inflight_bytes = budget.peak_bytes();
  metrics->counter("rows_read")->Add(summary->rows_read);
  metrics->counter("rows_committed")->Add(summary->rows_committed);
  metrics->counter("rows_rejected")->Add(summary->rows_rejected);

  if (!commit_status.ok()) return commit_status;
  if (!work_status.ok()) {
    if (stop.stop_requested()) return Status::Cancelled("ingest interrupted");
    return work_status;
  }
  GEOLAKE_RETURN_NOT_OK(rejects_status);
  if (summary->rows_read != summary->rows_committed + summary->rows_rejected) {
    return Status::Internal("rows read (" + std::to_string(summary->rows_read) +
                            ") != rows committed (" + std::to_string(summary->rows_committed) +
                            ") + rows rejected (" + std::to_string(summary->rows_rejected) + ")");
  }
  return Status::OK();
}

}  // namespace geolake::pipeline
