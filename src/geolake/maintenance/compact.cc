#include "geolake/maintenance/compact.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/thread_pool.h"
#include "geolake/formats/geoparquet/layout_columns.h"
#include "geolake/maintenance/compact_internal.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/query/scan.h"
#include "geolake/table/transaction.h"

namespace geolake::maintenance {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What the committing thread knows about a group that finished rewriting.
struct Finished {
  int index = 0;
  Status status;
  GroupOutput output;
  double seconds = 0;
};

// Finished groups handed from the group tasks to the committing thread.
class FinishedQueue {
 public:
  void Push(Finished f) {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(std::move(f));
    ready_.notify_one();
  }
  Finished Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return !items_.empty(); });
    Finished f = std::move(items_.front());
    items_.pop_front();
    return f;
  }

 private:
  std::mutex mu_;  // guards items_
  std::condition_variable ready_;
  std::deque<Finished> items_;
};

void DeleteFiles(const io::FileIO& io, const std::vector<pipeline::WrittenFile>& files) {
  for (const pipeline::WrittenFile& f : files) (void)io.Delete(f.path);
}

}  // namespace

Result<CompactStrategy> ParseCompactStrategy(std::string_view text) {
  if (text == "binpack") return CompactStrategy::kBinpack;
  if (text == "sort") return CompactStrategy::kSort;
  if (text == "hilbert") return CompactStrategy::kHilbert;
  return Status::InvalidArgument("strategy '" + std::string(text) +
                                 "': expected binpack, sort or hilbert");
}

std::string_view CompactStrategyName(CompactStrategy strategy) {
  switch (strategy) {
    case CompactStrategy::kBinpack:
      return "binpack";
    case CompactStrategy::kSort:
      return "sort";
    case CompactStrategy::kHilbert:
      return "hilbert";
  }
  return "?";
}

std::string_view GroupOutcomeName(GroupOutcome outcome) {
  switch (outcome) {
    case GroupOutcome::kPlanned:
      return "planned";
    case GroupOutcome::kCommitted:
      return "committed";
    case GroupOutcome::kDropped:
      return "dropped";
    case GroupOutcome::kFailed:
      return "failed";
  }
  return "?";
}

Result<std::vector<ScanFile>> LiveDataFiles(const io::FileIO& io,
                                            const table::TableMetadata& metadata,
                                            std::int64_t snapshot_id, ThreadPool* executor) {
  const table::Snapshot* snapshot = metadata.SnapshotById(snapshot_id);
  if (snapshot == nullptr) {
    return Status::NotFound("snapshot " + std::to_string(snapshot_id) + " does not exist");
  }
  if (snapshot->manifest_list.empty()) {
    return Status::NotImplemented("snapshot " + std::to_string(snapshot_id) +
                                  " has no manifest list (format v1)");
  }
  auto list = table::ReadManifestList(io, snapshot->manifest_list);
  if (!list.ok()) {
    return Status::CorruptData("manifest list '" + snapshot->manifest_list +
                               "' cannot be read: " + list.status().ToString());
  }
  // Read (in parallel when there is an executor), then taken in list order: the same files
  // and the same first error either way.
  std::vector<Result<std::vector<table::ManifestEntry>>> read(
      list->size(), Status::Internal("manifest not read"));
  const auto read_one = [&](std::int64_t i) {
    const auto k = static_cast<std::size_t>(i);
    read[k] = table::ReadManifest(io, (*list)[k]);
    return Status::OK();
  };
  if (executor != nullptr && executor->size() > 1 && list->size() > 1) {
    GEOLAKE_RETURN_NOT_OK(executor->ParallelFor(static_cast<std::int64_t>(list->size()), read_one));
  } else {
    for (std::size_t i = 0; i < list->size(); ++i) (void)read_one(static_cast<std::int64_t>(i));
  }
  std::vector<ScanFile> out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const table::ManifestFile& mf = (*list)[i];
    auto& entries = read[i];
    if (!entries.ok()) {
      return Status::CorruptData("manifest '" + mf.manifest_path +
                                 "' cannot be read: " + entries.status().ToString());
    }
    for (table::ManifestEntry& e : *entries) {
      if (e.status == table::ManifestEntryStatus::kDeleted) continue;
      if (mf.content == table::ManifestContent::kDeletes ||
          e.data_file.content != table::DataFileContent::kData) {
        return Status::NotImplemented(
            "the table has delete files (e.g. '" + e.data_file.file_path +
            "'), which geolake does not apply yet; compact it with an engine that does");
      }
      out.push_back(ScanFile{std::move(e.data_file), mf.partition_spec_id});
    }
  }
  return out;
}

// ---- Rewriting one group ----------------------------------------------------------------

Result<GroupOutput> RewriteBinpack(const FileGroup& group, const RewriteContext& ctx,
                                   const std::stop_token& stop) {
  GroupWriterOptions wo = ctx.OutputOptions(group);
  GroupWriter writer(std::move(wo), ctx.io);
  GroupOutput out;
  RowBatch batch = RowBatch::Empty(ctx.columns);
  for (const CandidateFile& input : group.files) {
    if (stop.stop_requested()) return Status::Cancelled("compaction stopped");
    GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<DataFileReader> reader, ctx.OpenInput(input.file));
    // One row group decoded at a time, plus the writer's open row group.
    pipeline::Reservation held(ctx.budget, 0);
    const std::int64_t need = reader->max_row_group_bytes() + ctx.writer_bytes;
    GEOLAKE_RETURN_NOT_OK(ctx.budget->Reserve(need, stop));
    held.Grow(need);
    while (true) {
      if (stop.stop_requested()) return Status::Cancelled("compaction stopped");
      std::int64_t n = 0;
      {
        std::optional<StageMetrics::Timer> timer;
        if (ctx.read_stage != nullptr) timer.emplace(ctx.read_stage);
        GEOLAKE_ASSIGN_OR_RETURN(n, reader->Next(&batch));
        if (ctx.read_stage != nullptr) ctx.read_stage->AddRowsIn(n);
      }
      if (n == 0) break;
      GEOLAKE_RETURN_NOT_OK(writer.Add(std::move(batch)));
      batch = RowBatch::Empty(ctx.columns);
    }
    GEOLAKE_RETURN_NOT_OK(ctx.CheckRowsRead(*reader, input.file));
    out.rows_read += reader->rows_read();
  }
  GEOLAKE_RETURN_NOT_OK(writer.Finish());
  out.rows_written = writer.rows_written();
  out.runs = static_cast<std::int64_t>(group.files.size());
  out.files = writer.Release();
  return out;
}

GroupWriterOptions RewriteContext::OutputOptions(const FileGroup& group) const {
  GroupWriterOptions o;
  o.table = &write;
  if (!group.partition.empty() && std::holds_alternative<std::string>(group.partition[0])) {
    o.cell = std::get<std::string>(group.partition[0]);
  }
  o.split_bytes = group.split_size_bytes;
  o.row_group_bytes = writer_bytes;
  if (strategy != CompactStrategy::kBinpack) {
    o.hilbert_sorted = sort_keys.empty();
    o.sort_order_id = sort_order_id;
  }
  o.stage = write_stage;
  return o;
}

Result<std::unique_ptr<DataFileReader>> RewriteContext::OpenInput(
    const table::DataFile& file) const {
  auto reader = DataFileReader::Open(*io, file.file_path, columns);
  if (!reader.ok()) {
    // A live file that cannot be read is damage: say so, never skip it.
    return Status(reader.status().code() == ErrorCode::kNotFound ? ErrorCode::kCorruptData
                                                                 : reader.status().code(),
                  "data file '" + file.file_path +
                      "' of the table cannot be read: " + reader.status().message());
  }
  if ((*reader)->num_rows() != file.record_count) {
    return Status::CorruptData("data file '" + file.file_path + "' holds " +
                               std::to_string((*reader)->num_rows()) + " rows, its manifest says " +
                               std::to_string(file.record_count));
  }
  return reader;
}

Status RewriteContext::CheckRowsRead(const DataFileReader& reader,
                                     const table::DataFile& file) const {
  if (reader.rows_read() != file.record_count) {
    return Status::CorruptData("data file '" + file.file_path + "': read " +
                               std::to_string(reader.rows_read()) + " rows of " +
                               std::to_string(file.record_count));
  }
  return Status::OK();
}

namespace {

Result<GroupOutput> RewriteGroup(const FileGroup& group, const RewriteContext& ctx,
                                 const std::stop_token& stop) {
  if (group.older_specs && ctx.write.layout.partition.kind != layout::PartitionKind::kNone) {
    return Status::NotImplemented(
        "rewriting files of an older partition spec into the partitioned current spec");
  }
  GroupOutput out;
  switch (ctx.strategy) {
    case CompactStrategy::kBinpack: {
      GEOLAKE_ASSIGN_OR_RETURN(out, RewriteBinpack(group, ctx, stop));
      break;
    }
    case CompactStrategy::kSort:
    case CompactStrategy::kHilbert: {
      GEOLAKE_ASSIGN_OR_RETURN(out, RewriteSorted(group, ctx, stop));
      break;
    }
  }
  if (out.rows_read != group.input_rows || out.rows_written != group.input_rows) {
    DeleteFiles(*ctx.io, out.files);
    return Status::Internal("group " + std::to_string(group.index) + ": " +
                            std::to_string(group.input_rows) + " rows in the manifests, " +
                            std::to_string(out.rows_read) + " read, " +
                            std::to_string(out.rows_written) + " written");
  }
  return out;
}

// Commits batches of finished groups and keeps the report's commit numbers.
class Committer {
 public:
  Committer(table::Catalog& catalog, const io::FileIO& io, table::TableIdentifier id,
            const CompactOptions& options, CompactReport* report, StageMetrics* stage)
      : catalog_(catalog),
        io_(io),
        id_(std::move(id)),
        options_(options),
        report_(report),
        stage_(stage) {}

  // Commit `batch` (each with its outputs); groups whose inputs are gone are dropped and the
  // rest retried. Returns the commit's error when it failed for another reason.
  Status Commit(std::vector<Finished> batch) {
    std::optional<StageMetrics::Timer> timer;
    if (stage_ != nullptr) timer.emplace(stage_);
    while (!batch.empty()) {
      const int commit_number = static_cast<int>(report_->commits + report_->commits_failed);
      table::ReplaceFiles tx(&catalog_, &io_, id_);
      tx.FailOnDeleteFiles();
      tx.SetSummary("geolake.compact.strategy",
                    std::string(CompactStrategyName(options_.strategy)));
      tx.SetSummary("geolake.compact.groups", std::to_string(batch.size()));
      for (const Finished& f : batch) {
        for (const CandidateFile& c :
             report_->plan.groups[static_cast<std::size_t>(f.index)].files) {
          tx.DeleteFile(c.file.file_path);
        }
        for (const pipeline::WrittenFile& w : f.output.files) tx.AddFile(w.data_file);
      }
      if (options_.hook) options_.hook(CompactPoint::kBeforeCommit, commit_number);
      auto committed = tx.Commit();
      if (committed.ok()) {
        ++report_->commits;
        report_->commit_attempts += committed->attempts;
        report_->commit_conflicts += committed->attempts - 1;
        report_->snapshot_ids.push_back(committed->snapshot_id);
        if (stage_ != nullptr) {
          stage_->counter("commits")->Add(1);
          stage_->counter("attempts")->Add(committed->attempts);
          stage_->counter("conflicts")->Add(committed->attempts - 1);
        }
        for (Finished& f : batch) {
          GroupResult& g = report_->groups[static_cast<std::size_t>(f.index)];
          g.outcome = GroupOutcome::kCommitted;
          g.snapshot_id = committed->snapshot_id;
        }
        if (options_.hook) options_.hook(CompactPoint::kAfterCommit, commit_number);
        return Status::OK();
      }
      const std::vector<std::string>& missing = tx.missing_files();
      ++report_->commit_attempts;
      if (committed.status().code() != ErrorCode::kCommitConflict || missing.empty()) {
        for (Finished& f : batch) {
          DeleteFiles(io_, f.output.files);
          GroupResult& g = report_->groups[static_cast<std::size_t>(f.index)];
          g.outcome = GroupOutcome::kFailed;
          g.error = committed.status().ToString();
        }
        ++report_->commits_failed;
        if (stage_ != nullptr) stage_->counter("failed")->Add(1);
        return committed.status();
      }
      // Another commit removed inputs of some groups: those are dropped, the rest go in.
      ++report_->commit_conflicts;
      if (stage_ != nullptr) stage_->counter("conflicts")->Add(1);
      const std::set<std::string> gone(missing.begin(), missing.end());
      std::vector<Finished> rest;
      for (Finished& f : batch) {
        const FileGroup& planned = report_->plan.groups[static_cast<std::size_t>(f.index)];
        std::string lost;
        for (const CandidateFile& c : planned.files) {
          if (gone.count(c.file.file_path) != 0) {
            lost = c.file.file_path;
            break;
          }
        }
        if (lost.empty()) {
          rest.push_back(std::move(f));
          continue;
        }
        DeleteFiles(io_, f.output.files);
        GroupResult& g = report_->groups[static_cast<std::size_t>(f.index)];
        g.outcome = GroupOutcome::kDropped;
        g.error = "input '" + lost + "' was removed by another commit";
        GEOLAKE_LOG_INFO("compact: group {} dropped: {}", f.index, g.error);
      }
      batch = std::move(rest);
    }
    return Status::OK();
  }

 private:
  table::Catalog& catalog_;
  const io::FileIO& io_;
  table::TableIdentifier id_;
  const CompactOptions& options_;
  CompactReport* report_;
  StageMetrics* stage_;
};

}  // namespace

Result<CompactReport> Compact(table::Catalog& catalog, const io::FileIO& io,
                              const table::TableIdentifier& id, const CompactOptions& options,
                              const std::stop_token& stop) {
  const auto started = Clock::now();
  if (options.max_concurrent_groups < 1) {
    return Status::InvalidArgument("max-concurrent-groups " +
                                   std::to_string(options.max_concurrent_groups) +
                                   ": must be at least 1");
  }
  if (options.partial_progress && options.max_commits < 1) {
    return Status::InvalidArgument("max-commits " + std::to_string(options.max_commits) +
                                   ": must be at least 1");
  }
  if (!options.sort_order.empty() && options.strategy != CompactStrategy::kSort) {
    return Status::InvalidArgument("--sort-order is only used by the sort strategy");
  }
  if (options.bbox && !options.where.empty()) {
    return Status::InvalidArgument("give --where or --bbox, not both");
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(catalog, io, id));
  const std::string what = "compact '" + id.ToString() + "'";

  RewriteContext ctx;
  ctx.io = &io;
  ctx.strategy = options.strategy;
  {
    auto write = pipeline::TableWriteOptionsFor(t.metadata);
    if (!write.ok()) return write.status().WithContext(what + ": not a geolake table layout");
    ctx.write = std::move(*write);
  }
  for (int i = 0; i < ctx.write.layout.attribute_count; ++i) {
    ctx.columns.attribute_ids.push_back(ctx.write.schema->fields()[static_cast<std::size_t>(i)].id);
  }
  ctx.columns.fields = ctx.write.fields;
  ctx.columns.geometry_id = ctx.write.layout.geometry.field_id;
  GEOLAKE_RETURN_NOT_OK_CTX(PrepareSort(options, t.metadata, &ctx), what);

  CompactReport report;
  report.strategy = options.strategy;
  report.dry_run = options.dry_run;
  std::vector<ScanFile> files;
  if (t.metadata.current_snapshot_id) {
    report.starting_snapshot_id = *t.metadata.current_snapshot_id;
    GEOLAKE_ASSIGN_OR_RETURN(
        files, LiveDataFiles(io, t.metadata, report.starting_snapshot_id, options.executor)
                   .WithContext(what));
  }
  if (options.bbox || !options.where.empty()) {
    query::QueryOptions q;
    q.bbox = options.bbox;
    q.where = options.where;
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<std::string> selected,
                             query::SelectDataFiles(io, t.metadata, q).WithContext(what));
    const std::set<std::string> keep(selected.begin(), selected.end());
    std::erase_if(files, [&](const ScanFile& f) { return keep.count(f.file.file_path) == 0; });
  }
  GEOLAKE_ASSIGN_OR_RETURN(report.plan,
                           PlanFileGroups(files, t.metadata, options.plan).WithContext(what));
  for (const FileGroup& g : report.plan.groups) {
    GroupResult r;
    r.index = g.index;
    r.partition_text = g.partition_text;
    r.input_files = static_cast<std::int64_t>(g.files.size());
    r.input_bytes = g.input_bytes;
    r.input_rows = g.input_rows;
    report.groups.push_back(std::move(r));
  }
  Metrics* metrics = options.metrics;
  if (metrics != nullptr) {
    metrics->counter("compact.groups_planned")
        ->Add(static_cast<std::int64_t>(report.groups.size()));
  }
  if (options.dry_run || report.plan.groups.empty()) {
    report.wall_seconds = SecondsSince(started);
    return report;
  }

  RemoveStaleSpills(options.temp_dir);
  // The engine's parts for this run.
  const std::int64_t budget_bytes =
      options.memory_bytes > 0 ? options.memory_bytes : pipeline::DefaultMemoryBudget();
  pipeline::MemoryBudget budget(
      budget_bytes, metrics != nullptr ? metrics->gauge("compact.reserved_bytes") : nullptr);
  // The file writers compress large pages as tasks on the same executor the groups run on.
  ctx.write.executor = options.executor;
  const auto n = static_cast<std::int64_t>(report.plan.groups.size());
  const std::int64_t concurrency =
      options.executor != nullptr ? std::min<std::int64_t>(options.max_concurrent_groups, n) : 1;
  ctx.budget = &budget;
  ctx.group_share_bytes = std::max<std::int64_t>(budget_bytes / concurrency, 1);
  // The writer's open row group is a quarter of a group's share (at least 1 MiB, at most
  // the table's own row-group size): the rest is for the rows being read and merged.
  ctx.writer_bytes = std::clamp<std::int64_t>(
      ctx.group_share_bytes / 4, std::int64_t{1} << 20,
      std::max<std::int64_t>(ctx.write.row_group_bytes, std::int64_t{1} << 20));
  ctx.temp_dir = options.temp_dir;
  if (metrics != nullptr) {
    ctx.read_stage = metrics->stage("read");
    ctx.write_stage = metrics->stage("write");
  }
  StageMetrics* commit_stage = metrics != nullptr ? metrics->stage("commit") : nullptr;

  // Groups run under a stop of their own: the caller's stop, or a failure that ends the run.
  std::stop_source abort;
  std::stop_callback<std::function<void()>> forward(stop, [&abort] { abort.request_stop(); });
  const std::int64_t per_commit =
      options.partial_progress ? (n + options.max_commits - 1) / options.max_commits : n;
  const std::int64_t max_failed_commits =
      options.max_failed_commits >= 0 ? options.max_failed_commits : options.max_commits;

  FinishedQueue queue;
  std::vector<std::future<Status>> tasks;
  auto run_group = [&](int index) {
    const FileGroup& g = report.plan.groups[static_cast<std::size_t>(index)];
    const auto group_start = Clock::now();
    Finished f;
    f.index = index;
    auto out = RewriteGroup(g, ctx, abort.get_token());
    if (out.ok()) {
      f.output = std::move(*out);
      if (options.hook) options.hook(CompactPoint::kGroupWritten, index);
    } else {
      f.status = out.status().WithContext("group " + std::to_string(index) + " (" +
                                          g.partition_text + ")");
    }
    f.seconds = SecondsSince(group_start);
    queue.Push(std::move(f));
  };

  Committer committer(catalog, io, id, options, &report, commit_stage);
  std::vector<Finished> pending;
  Status first_error;
  std::int64_t next = 0, running = 0;
  auto record_error = [&](const Status& st) {
    if (first_error.ok()) first_error = st;
  };
  while (next < n || running > 0) {
    while (running < concurrency && next < n && !abort.stop_requested()) {
      const int index = static_cast<int>(next++);
      ++running;
      Result<std::future<Status>> submitted = Status::Cancelled("no executor");
      if (options.executor != nullptr) {
        submitted = options.executor->Submit([&run_group, index]() -> Status {
          run_group(index);
          return Status::OK();
        });
      }
      if (submitted.ok()) {
        tasks.push_back(std::move(*submitted));
      } else {
        run_group(index);  // no executor (or it is shutting down): on this thread
      }
    }
    if (running == 0) break;
    Finished f = queue.Pop();
    --running;
    report.busy_seconds += f.seconds;
    GroupResult& g = report.groups[static_cast<std::size_t>(f.index)];
    g.runs = f.output.runs;
    g.spilled_runs = f.output.spilled_runs;
    if (!f.status.ok()) {
      if (f.status.code() == ErrorCode::kCancelled && abort.stop_requested()) {
        g.outcome = GroupOutcome::kPlanned;  // stopped, not failed
      } else {
        g.outcome = GroupOutcome::kFailed;
        g.error = f.status.ToString();
        record_error(f.status);
        // Without partial progress one failure ends the job (Iceberg's rule), with it the
        // other groups go on.
        if (!options.partial_progress) abort.request_stop();
      }
      continue;
    }
    g.output_files = static_cast<std::int64_t>(f.output.files.size());
    g.output_rows = f.output.rows_written;
    for (const pipeline::WrittenFile& w : f.output.files) g.output_bytes += w.bytes;
    pending.push_back(std::move(f));
    if (options.partial_progress && static_cast<std::int64_t>(pending.size()) >= per_commit &&
        !abort.stop_requested()) {
      Status st = committer.Commit(std::exchange(pending, {}));
      if (!st.ok()) {
        record_error(st.WithContext(what));
        if (report.commits_failed > max_failed_commits) abort.request_stop();
      }
    }
  }
  for (std::future<Status>& task : tasks) (void)task.get();

  if (!pending.empty()) {
    if (abort.stop_requested()) {
      // Stopped or failed: the finished but uncommitted groups are abandoned whole.
      for (Finished& f : pending) DeleteFiles(io, f.output.files);
    } else {
      Status st = committer.Commit(std::move(pending));
      if (!st.ok()) {
        record_error(options.partial_progress
                         ? st.WithContext(what)
                         : st.WithContext(what + " (with --partial-progress finished groups "
                                                 "commit in batches)"));
      }
    }
  }
  if (first_error.ok() && stop.stop_requested()) {
    first_error =
        Status::Cancelled(what + ": stopped; " + std::to_string(report.commits) + " commits kept");
  }
  if (options.partial_progress && report.commits_failed > max_failed_commits && first_error.ok()) {
    first_error = Status::CommitConflict(what + ": " + std::to_string(report.commits_failed) +
                                         " commits failed");
  }

  for (const GroupResult& g : report.groups) {
    switch (g.outcome) {
      case GroupOutcome::kCommitted:
        ++report.groups_rewritten;
        report.files_in += g.input_files;
        report.bytes_in += g.input_bytes;
        report.rows_in += g.input_rows;
        report.files_out += g.output_files;
        report.bytes_out += g.output_bytes;
        report.rows_out += g.output_rows;
        break;
      case GroupOutcome::kFailed:
        ++report.groups_failed;
        break;
      case GroupOutcome::kDropped:
        ++report.groups_dropped;
        break;
      case GroupOutcome::kPlanned:
        break;
    }
  }
  report.status = first_error;
  report.peak_reserved_bytes = budget.peak_bytes();
  report.wall_seconds = SecondsSince(started);
  if (metrics != nullptr) {
    metrics->counter("compact.groups_rewritten")->Add(report.groups_rewritten);
    metrics->counter("compact.groups_failed")->Add(report.groups_failed);
    metrics->counter("compact.groups_dropped")->Add(report.groups_dropped);
    metrics->counter("compact.files_in")->Add(report.files_in);
    metrics->counter("compact.files_out")->Add(report.files_out);
    metrics->counter("compact.bytes_in")->Add(report.bytes_in);
    metrics->counter("compact.bytes_out")->Add(report.bytes_out);
    metrics->counter("compact.rows_in")->Add(report.rows_in);
    metrics->counter("compact.rows_out")->Add(report.rows_out);
    metrics->counter("compact.commits")->Add(report.commits);
    metrics->counter("compact.commit_attempts")->Add(report.commit_attempts);
    metrics->counter("compact.commit_conflicts")->Add(report.commit_conflicts);
  }
  return report;
}

}  // namespace geolake::maintenance
