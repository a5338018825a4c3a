#include "geolake/pipeline/run_journal.h"

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <unordered_map>
#include <utility>

#include "geolake/geo/wkb.h"

namespace geolake::pipeline {

std::string RunDirectory(const std::string& warehouse, const std::string& run_id) {
  return warehouse + "/.geolake/runs/" + run_id;
}

std::string NewRunId() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &utc);
  std::random_device device;
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "%08x", static_cast<unsigned>(device()));
  return std::string(stamp) + "-" + suffix;
}

RunJournal::RunJournal(const io::FileIO* io, std::string run_dir, std::string header)
    : io_(io), run_dir_(std::move(run_dir)), header_(std::move(header)) {}

Result<std::unique_ptr<RunJournal>> RunJournal::Open(const io::FileIO* io, std::string run_dir,
                                                     std::string run_id, std::string table) {
  GEOLAKE_RETURN_NOT_OK_CTX(io->CreateDirs(run_dir), "run folder '" + run_dir + "'");
  const nlohmann::json header = {{"run_id", std::move(run_id)}, {"table", std::move(table)}};
  auto journal =
      std::unique_ptr<RunJournal>(new RunJournal(io, std::move(run_dir), header.dump()));
  std::lock_guard lock(journal->mu_);
  GEOLAKE_RETURN_NOT_OK(journal->WriteLocked());
  return journal;
}

Status RunJournal::WriteLocked() {
  std::string text = header_ + "\n";
  for (const JournalEntry& e : entries_) {
    nlohmann::json line = {{"file", e.path},       {"source", e.source},
                           {"unit", e.unit},       {"rows", e.rows},
                           {"committed", e.committed}};
    if (e.committed) line["snapshot_id"] = e.snapshot_id;
    if (!e.packed_with.empty()) line["packed_with"] = e.packed_with;
    text += line.dump() + "\n";
  }
  return io_->WriteAll(journal_path(), text, /*overwrite=*/true).WithContext("run journal");
}

Status RunJournal::FilesWritten(const std::vector<JournalEntry>& entries) {
  if (entries.empty()) return Status::OK();
  std::lock_guard lock(mu_);
  entries_.insert(entries_.end(), entries.begin(), entries.end());
  return WriteLocked();
}

Status RunJournal::FilesCommitted(const std::vector<std::string>& paths,
                                  std::int64_t snapshot_id) {
  std::lock_guard lock(mu_);
  std::unordered_map<std::string_view, JournalEntry*> by_path;
  for (JournalEntry& e : entries_) by_path.emplace(e.path, &e);
  for (const std::string& path : paths) {
    const auto found = by_path.find(path);
    if (found == by_path.end()) continue;
    found->second->committed = true;
    found->second->snapshot_id = snapshot_id;
  }
  return WriteLocked();
}

void RunJournal::AddRejects(const std::string& source_path,
                            const std::vector<RejectedRow>& rejects) {
  std::string text;
  for (const RejectedRow& reject : rejects) {
    nlohmann::json properties = {{"source", source_path},
                                 {"feature_index", reject.feature_index},
                                 {"reason", reject.reason}};
    if (!reject.wkb.empty()) {
      // WKT rather than a GeoJSON geometry: a rejected geometry may be malformed or invalid,
      // and WKT shows it as it came.
      Result<std::string> wkt = geo::WkbToWkt(geo::AsBytes(reject.wkb));
      properties["wkt"] = wkt.ok() ? *wkt : std::string("(unreadable WKB)");
    }
    const nlohmann::json feature = {
        {"type", "Feature"}, {"geometry", nullptr}, {"properties", std::move(properties)}};
    text += feature.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::lock_guard lock(mu_);
  rejects_ += text;
}

Status RunJournal::WriteRejects() {
  std::lock_guard lock(mu_);
  return io_->WriteAll(rejects_path(), rejects_, /*overwrite=*/true).WithContext("rejects");
}

std::vector<JournalEntry> RunJournal::entries() const {
  std::lock_guard lock(mu_);
  return entries_;
}

}  // namespace geolake::pipeline
