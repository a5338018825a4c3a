#include "geolake/pipeline/commit_coordinator.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/table/transaction.h"

namespace geolake::pipeline {

bool CommittedUnits::UnitDone(const std::string& fingerprint, std::int64_t unit) const {
  if (sources.contains(fingerprint)) return true;
  const auto found = units.find(fingerprint);
  return found != units.end() && found->second.contains(unit);
}

CommittedUnits ReadCommittedUnits(const table::TableMetadata& metadata,
                                  std::optional<std::int64_t> since_snapshot_id) {
  CommittedUnits done;
  const table::Snapshot* snapshot = metadata.current_snapshot();
  std::set<std::int64_t> seen;  // a malformed lineage must not loop
  while (snapshot != nullptr && snapshot->snapshot_id != since_snapshot_id &&
         seen.insert(snapshot->snapshot_id).second) {
    const auto units = snapshot->summary.find(std::string(kUnitsSummary));
    if (units != snapshot->summary.end()) {
      const nlohmann::json j = nlohmann::json::parse(units->second, nullptr, false);
      bool ok = j.is_array();
      for (const nlohmann::json& entry : ok ? j : nlohmann::json::array()) {
        if (!entry.is_object() || !entry.contains("source") || !entry["source"].is_string() ||
            !entry.contains("units") || !entry["units"].is_array()) {
          ok = false;
          continue;
        }
        const std::string fingerprint = entry["source"].get<std::string>();
        for (const nlohmann::json& unit : entry["units"]) {
          if (unit.is_number_integer()) done.units[fingerprint].insert(unit.get<std::int64_t>());
        }
        if (entry.contains("unit_rows") && entry["unit_rows"].is_number_integer()) {
          done.unit_rows.emplace(fingerprint, entry["unit_rows"].get<std::int64_t>());
        }
        if (entry.contains("path") && entry["path"].is_string()) {
          done.fingerprints_by_path[entry["path"].get<std::string>()].insert(fingerprint);
        }
      }
      if (!ok) {
        Log(LogLevel::kWarn, "snapshot {}: malformed {} summary ignored", snapshot->snapshot_id,
            kUnitsSummary);
      }
    }
    const auto sources = snapshot->summary.find(std::string(kSourcesSummary));
    if (sources != snapshot->summary.end()) {
      const nlohmann::json j = nlohmann::json::parse(sources->second, nullptr, false);
      if (j.is_array()) {
        for (const nlohmann::json& fingerprint : j) {
          if (fingerprint.is_string()) done.sources.insert(fingerprint.get<std::string>());
        }
      } else {
        Log(LogLevel::kWarn, "snapshot {}: malformed {} summary ignored", snapshot->snapshot_id,
            kSourcesSummary);
      }
    }
    snapshot = snapshot->parent_snapshot_id.has_value()
                   ? metadata.SnapshotById(*snapshot->parent_snapshot_id)
                   : nullptr;
  }
  return done;
}

CommitCoordinator::CommitCoordinator(table::Catalog* catalog, const io::FileIO* io,
                                     table::TableIdentifier id, CommitOptions options,
                                     std::vector<SourcePlan> sources, RunJournal* journal,
                                     Metrics* metrics)
    : catalog_(catalog),
      io_(io),
      id_(std::move(id)),
      options_(std::move(options)),
      journal_(journal),
      stage_(metrics->stage("commit")) {
  for (SourcePlan& plan : sources) {
    std::string key = plan.fingerprint;
    sources_.emplace(std::move(key), std::move(plan));
  }
}

CommitCoordinator::~CommitCoordinator() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      finishing_ = true;
      pending_.clear();  // never commit from a destructor: only Finish commits
    }
    wake_.notify_all();
    thread_.join();
  }
}

void CommitCoordinator::Start(std::function<void()> on_error) {
  on_error_ = std::move(on_error);
  stage_->Start();
  thread_ = std::thread([this] { Run(); });
}

void CommitCoordinator::Submit(UnitOutcome outcome) {
  std::vector<UnitOutcome> one;
  one.push_back(std::move(outcome));
  Submit(std::move(one));
}

void CommitCoordinator::Submit(std::vector<UnitOutcome> outcomes) {
  {
    // Under one lock: Run takes everything pending at once, so these are never split.
    std::lock_guard lock(mu_);
    const std::int64_t work_item = next_work_item_++;
    for (UnitOutcome& outcome : outcomes) {
      outcome.work_item = work_item;
      stage_->AddRowsIn(outcome.rows_written);
      pending_rows_ += outcome.rows_written;
      pending_.push_back(std::move(outcome));
    }
  }
  wake_.notify_all();
}

void CommitCoordinator::Run() {
  auto last_commit = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (true) {
    const auto due = last_commit + options_.commit_interval;
    // After an error only Finish wakes the thread: waking for the error itself made this loop
    // spin without ever releasing mu_, so a worker's Submit (and Finish) waited forever.
    wake_.wait_until(lock, due, [&] {
      return finishing_ || (error_.ok() && pending_rows_ >= options_.commit_rows);
    });
    const bool time_up = std::chrono::steady_clock::now() >= due;
    const bool commit_now =
        !pending_.empty() && (finishing_ || pending_rows_ >= options_.commit_rows || time_up);
    if (commit_now && error_.ok()) {
      std::vector<UnitOutcome> batch = std::exchange(pending_, {});
      pending_rows_ = 0;
      lock.unlock();
      Status st = Commit(std::move(batch));
      last_commit = std::chrono::steady_clock::now();
      lock.lock();
      if (!st.ok() && error_.ok()) {
        error_ = st;
        if (on_error_) {
          lock.unlock();
          on_error_();
          lock.lock();
        }
      }
      continue;
    }
    if (time_up) last_commit = std::chrono::steady_clock::now();
    if (finishing_ && (pending_.empty() || !error_.ok())) return;
  }
}

Status CommitCoordinator::Commit(std::vector<UnitOutcome> outcomes) {
  // Each round that finds units committed elsewhere takes at least one work item out of the
  // batch, so this ends.
  while (!outcomes.empty()) {
    Elsewhere elsewhere;
    Status st = CommitOnce(outcomes, &elsewhere);
    if (elsewhere.units.empty()) {
      if (!st.ok()) {
        std::lock_guard lock(mu_);
        for (const UnitOutcome& outcome : outcomes) rows_uncommitted_ += outcome.rows_read;
        return st;
      }
      return Status::OK();
    }
    std::vector<UnitOutcome> kept;
    std::int64_t units = 0, rows = 0, files = 0, packed_units = 0, packed_rows = 0;
    for (UnitOutcome& outcome : outcomes) {
      if (!elsewhere.work_items.contains(outcome.work_item)) {
        kept.push_back(std::move(outcome));
        continue;
      }
      files += static_cast<std::int64_t>(outcome.files.size());
      if (elsewhere.units.contains({outcome.source, outcome.unit})) {
        ++units;
        rows += outcome.rows_read;
        // Committed after all: a later commit of this run may complete the source.
        const auto plan = sources_.find(outcome.source);
        if (plan != sources_.end()) plan->second.committed_units.insert(outcome.unit);
      } else {
        ++packed_units;
        packed_rows += outcome.rows_read;
      }
    }
    Log(LogLevel::kWarn,
        "commit '{}': {} units ({} rows read) were committed by another run meanwhile; not "
        "committed again, their {} files are orphans (remove-orphans deletes them)",
        id_.ToString(), units, rows, files);
    stage_->counter("units_committed_elsewhere")->Add(units);
    std::lock_guard lock(mu_);
    units_elsewhere_ += units;
    rows_elsewhere_ += rows;
    rows_uncommitted_ += packed_rows;
    // Not an error that stops the run: the other units still commit; Finish reports it.
    if (packed_units > 0 && deferred_error_.ok()) {
      deferred_error_ = Status::CommitConflict(
          "commit '" + id_.ToString() + "': " + std::to_string(packed_units) + " units (" +
          std::to_string(packed_rows) +
          " rows) share files with units another run committed meanwhile and were not "
          "committed; run the ingest again to load them");
    }
    outcomes = std::move(kept);
  }
  return Status::OK();
}

Status CommitCoordinator::CommitOnce(const std::vector<UnitOutcome>& outcomes,
                                     Elsewhere* elsewhere) {
  // Only this thread touches sources_ once Start() ran.
  table::AppendFiles append(catalog_, io_, id_);
  std::vector<std::string> paths;
  std::int64_t rows = 0;
  std::int64_t rejected = 0;
  std::map<std::string, std::pair<std::string, std::set<std::int64_t>>> units;
  for (const UnitOutcome& outcome : outcomes) {
    for (const WrittenFile& file : outcome.files) {
      paths.push_back(file.path);
      append.AddFile(file.data_file);  // a copy: a later round may commit these outcomes again
    }
    rows += outcome.rows_written;
    rejected += outcome.rows_rejected;
    auto& entry = units[outcome.source];
    entry.first = outcome.source_path;
    entry.second.insert(outcome.unit);
  }
  nlohmann::json units_json = nlohmann::json::array();
  nlohmann::json sources_json = nlohmann::json::array();
  for (const auto& [fingerprint, entry] : units) {
    nlohmann::json unit_entry = {
        {"source", fingerprint}, {"path", entry.first}, {"units", entry.second}};
    const auto plan = sources_.find(fingerprint);
    if (plan != sources_.end() && plan->second.unit_rows > 0) {
      unit_entry["unit_rows"] = plan->second.unit_rows;
    }
    units_json.push_back(std::move(unit_entry));
    if (plan == sources_.end()) continue;
    std::set<std::int64_t> done = plan->second.committed_units;
    done.insert(entry.second.begin(), entry.second.end());
    if (static_cast<std::int64_t>(done.size()) >= plan->second.unit_count) {
      sources_json.push_back(fingerprint);
    }
  }
  for (const auto& [key, value] : options_.extra_summary) append.SetSummary(key, value);
  append.SetSummary(std::string(kRunIdSummary), options_.run_id);
  append.SetSummary(std::string(kUnitsSummary), units_json.dump());
  append.SetSummary(std::string(kSourcesSummary), sources_json.dump());

  // Checked on every attempt against the base that attempt swaps from, so no commit that wins
  // meanwhile can slip between the check and the swap (the swap fails then, and the next
  // attempt checks again).
  append.SetValidation([&](const table::Table& base) -> Status {
    const CommittedUnits done = ReadCommittedUnits(base.metadata, options_.base_snapshot_id);
    for (const UnitOutcome& outcome : outcomes) {
      if (done.UnitDone(outcome.source, outcome.unit)) {
        elsewhere->work_items.insert(outcome.work_item);
        elsewhere->units.emplace(outcome.source, outcome.unit);
      }
    }
    if (elsewhere->units.empty()) return Status::OK();
    return Status::CommitConflict(std::to_string(elsewhere->units.size()) +
                                  " units were committed by another run meanwhile");
  });

  std::optional<StageMetrics::Timer> timer;
  timer.emplace(stage_);
  Result<table::CommitResult> committed = append.Commit();
  timer.reset();
  stage_->counter("attempts")->Add(committed.ok() ? committed->attempts : 1);
  if (!committed.ok()) {
    if (!elsewhere->units.empty()) return committed.status();  // Commit takes them out
    if (committed.status().code() == ErrorCode::kCommitConflict) {
      stage_->counter("conflicts")->Add(1);
    }
    return committed.status().WithContext("commit '" + id_.ToString() + "'");
  }
  stage_->counter("conflicts")->Add(committed->attempts - 1);
  stage_->counter("commits")->Add(1);
  stage_->AddRowsOut(rows);
  stage_->counter("files")->Add(static_cast<std::int64_t>(paths.size()));
  for (const auto& [fingerprint, entry] : units) {
    const auto plan = sources_.find(fingerprint);
    if (plan != sources_.end()) {
      plan->second.committed_units.insert(entry.second.begin(), entry.second.end());
    }
  }
  Log(LogLevel::kInfo, "committed snapshot {}: {} rows in {} files ({} units)",
      committed->snapshot_id, rows, paths.size(), outcomes.size());
  {
    std::lock_guard lock(mu_);
    rows_committed_ += rows;
    rows_rejected_committed_ += rejected;
    ++commits_;
  }
  if (journal_ != nullptr) {
    GEOLAKE_RETURN_NOT_OK(journal_->FilesCommitted(paths, committed->snapshot_id));
  }
  return Status::OK();
}

Status CommitCoordinator::Finish() {
  {
    std::lock_guard lock(mu_);
    finishing_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  stage_->Finish();
  std::lock_guard lock(mu_);
  // Left pending when a commit error stopped the thread: handed over, never committed.
  for (const UnitOutcome& outcome : pending_) rows_uncommitted_ += outcome.rows_read;
  pending_.clear();
  return error_.ok() ? deferred_error_ : error_;
}

std::int64_t CommitCoordinator::rows_committed() const {
  std::lock_guard lock(mu_);
  return rows_committed_;
}

std::int64_t CommitCoordinator::rows_rejected_committed() const {
  std::lock_guard lock(mu_);
  return rows_rejected_committed_;
}

std::int64_t CommitCoordinator::commits() const {
  std::lock_guard lock(mu_);
  return commits_;
}

std::int64_t CommitCoordinator::units_committed_elsewhere() const {
  std::lock_guard lock(mu_);
  return units_elsewhere_;
}

std::int64_t CommitCoordinator::rows_committed_elsewhere() const {
  std::lock_guard lock(mu_);
  return rows_elsewhere_;
}

std::int64_t CommitCoordinator::rows_uncommitted() const {
  std::lock_guard lock(mu_);
  return rows_uncommitted_;
}

}  // namespace geolake::pipeline
