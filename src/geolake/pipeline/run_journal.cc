#include "geolake/pipeline/run_journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "geolake/core/json_read.h"
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

namespace {

std::string EntryLine(const JournalEntry& e) {
  nlohmann::json line = {{"file", e.path},
                         {"source", e.source},
                         {"unit", e.unit},
                         {"rows", e.rows},
                         {"committed", e.committed}};
  if (e.committed) line["snapshot_id"] = e.snapshot_id;
  if (!e.packed_with.empty()) line["packed_with"] = e.packed_with;
  return line.dump() + "\n";
}

Result<JournalEntry> ParseEntry(const std::string& text, const std::string& where) {
  const nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](const Status& why) {
    return Status::CorruptData(where + ": not a journal entry (" + why.message() + "): " + text);
  };
  const auto read = [&]() -> Result<JournalEntry> {
    JournalEntry e;
    GEOLAKE_ASSIGN_OR_RETURN(e.path, JsonRequired<std::string>(line, "file", "entry"));
    GEOLAKE_ASSIGN_OR_RETURN(e.source, JsonRequired<std::string>(line, "source", "entry"));
    GEOLAKE_ASSIGN_OR_RETURN(e.unit, JsonRequired<std::int64_t>(line, "unit", "entry"));
    GEOLAKE_ASSIGN_OR_RETURN(e.rows, JsonRequired<std::int64_t>(line, "rows", "entry"));
    GEOLAKE_ASSIGN_OR_RETURN(e.committed, JsonRequired<bool>(line, "committed", "entry"));
    if (e.committed) {
      GEOLAKE_ASSIGN_OR_RETURN(e.snapshot_id,
                               JsonRequired<std::int64_t>(line, "snapshot_id", "entry"));
    }
    const auto packed = line.find("packed_with");
    if (packed != line.end()) {
      if (!packed->is_array()) return JsonWrongType("entry.packed_with", "an array", *packed);
      for (const nlohmann::json& file : *packed) {
        GEOLAKE_ASSIGN_OR_RETURN(std::string path,
                                 JsonAs<std::string>(file, "entry.packed_with[]"));
        e.packed_with.push_back(std::move(path));
      }
    }
    return e;
  };
  Result<JournalEntry> entry = read();
  if (!entry.ok()) return bad(entry.status());
  return entry;
}

// Puts `e` in `entries`, in place of the entry of the same file if there is one; returns its
// position. `index` maps each file to its position.
std::size_t Upsert(JournalEntry e, std::vector<JournalEntry>* entries,
                   std::unordered_map<std::string, std::size_t>* index) {
  const auto [it, added] = index->emplace(e.path, entries->size());
  if (added) {
    entries->push_back(std::move(e));
  } else {
    (*entries)[it->second] = std::move(e);
  }
  return it->second;
}

constexpr std::string_view kLockName = "running.lock";
constexpr std::string_view kChangePrefix = "journal-";
constexpr std::string_view kChangeSuffix = ".jsonl";

std::string ChangePath(const std::string& run_dir, std::int64_t n) {
  char name[48];  // "journal-" + up to 20 digits + ".jsonl"
  std::snprintf(name, sizeof(name), "journal-%06lld.jsonl", static_cast<long long>(n));
  return run_dir + "/" + name;
}

// The change files of the run in `run_dir`, in the order they were written.
Result<std::vector<std::string>> ChangeFiles(const io::FileIO* io, const std::string& run_dir) {
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<io::FileInfo> files, io->List(run_dir));
  std::vector<std::pair<std::int64_t, std::string>> found;
  for (const io::FileInfo& f : files) {
    const std::string_view name = std::string_view(f.path).substr(f.path.rfind('/') + 1);
    if (!name.starts_with(kChangePrefix) || !name.ends_with(kChangeSuffix)) continue;
    if (f.path != run_dir + "/" + std::string(name)) continue;  // in a subfolder: not ours
    const std::string digits(name.substr(
        kChangePrefix.size(), name.size() - kChangePrefix.size() - kChangeSuffix.size()));
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    found.emplace_back(std::stoll(digits), f.path);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  paths.reserve(found.size());
  for (auto& [n, path] : found) paths.push_back(std::move(path));
  return paths;
}

}  // namespace

Result<std::unique_ptr<RunJournal>> RunJournal::Open(const io::FileIO* io, std::string run_dir,
                                                     std::string run_id, std::string table) {
  GEOLAKE_RETURN_NOT_OK_CTX(io->CreateDirs(run_dir), "run folder '" + run_dir + "'");
  const std::int64_t started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count();
  const nlohmann::json header = {
      {"run_id", std::move(run_id)}, {"table", std::move(table)}, {"started_ms", started_ms}};
  auto journal = std::unique_ptr<RunJournal>(new RunJournal(io, std::move(run_dir), header.dump()));
  // The lock first: from the moment the journal exists, the run is live to remove-orphans.
  const std::string lock_path = journal->run_dir_ + "/" + std::string(kLockName);
  journal->lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (journal->lock_fd_ < 0 || ::flock(journal->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::IOError("run journal: cannot lock '" + lock_path + "': " + std::strerror(errno));
  }
  GEOLAKE_RETURN_NOT_OK(
      io->WriteAll(journal->journal_path(), journal->header_ + "\n", /*overwrite=*/true)
          .WithContext("run journal"));
  return journal;
}

RunJournal::~RunJournal() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

Result<std::vector<LiveRun>> ListLiveRuns(const io::FileIO* io, const std::string& warehouse,
                                          const std::string& table) {
  std::vector<LiveRun> live;
  const std::string runs = warehouse + "/.geolake/runs";
  GEOLAKE_ASSIGN_OR_RETURN(const bool exists, io->Exists(runs));
  if (!exists) return live;
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<io::FileInfo> files, io->List(runs));
  for (const io::FileInfo& f : files) {
    // List is recursive: the lock files name the run folders.
    if (!f.path.ends_with("/" + std::string(kLockName))) continue;
    const std::string run_dir = f.path.substr(0, f.path.size() - kLockName.size() - 1);
    const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // finished meanwhile
    const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    if (!held) continue;
    Result<std::string> text = io->ReadAll(run_dir + "/journal.jsonl");
    if (!text.ok()) continue;  // locked but not yet written: its files come later
    const nlohmann::json header =
        nlohmann::json::parse(text->substr(0, text->find('\n')), nullptr, false);
    if (!header.is_object() || !header.contains("table") || !header["table"].is_string() ||
        header["table"].get<std::string>() != table) {
      continue;
    }
    LiveRun run;
    run.run_dir = run_dir;
    if (header.contains("run_id") && header["run_id"].is_string()) {
      run.run_id = header["run_id"].get<std::string>();
    }
    if (header.contains("started_ms") && header["started_ms"].is_number_integer()) {
      run.started_ms = header["started_ms"].get<std::int64_t>();
    }
    Result<std::vector<JournalEntry>> entries = RunJournal::Read(io, run_dir);
    if (entries.ok()) {
      for (const JournalEntry& e : *entries) {
        if (!e.committed) run.uncommitted_files.push_back(e.path);
      }
    }
    live.push_back(std::move(run));
  }
  return live;
}

Result<std::vector<JournalEntry>> RunJournal::Read(const io::FileIO* io,
                                                   const std::string& run_dir) {
  std::vector<JournalEntry> entries;
  std::unordered_map<std::string, std::size_t> index;
  // Folds the entry lines of `text` (read from `path`) into `entries`.
  const auto fold = [&](std::string_view text, const std::string& path) -> Status {
    while (!text.empty()) {
      const std::size_t end = std::min(text.find('\n'), text.size());
      const std::string line(text.substr(0, end));
      text.remove_prefix(std::min(end + 1, text.size()));
      if (line.empty()) continue;
      GEOLAKE_ASSIGN_OR_RETURN(JournalEntry e, ParseEntry(line, path));
      Upsert(std::move(e), &entries, &index);
    }
    return Status::OK();
  };
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<std::string> changes, ChangeFiles(io, run_dir));
  for (const std::string& path : changes) {
    GEOLAKE_ASSIGN_OR_RETURN(std::string text, io->ReadAll(path));
    GEOLAKE_RETURN_NOT_OK(fold(text, path));
  }
  // journal.jsonl last: past its header line it is empty during a run and the final state of
  // every file after Finish(), which then wins over any change file a failed delete left.
  const std::string main_path = run_dir + "/journal.jsonl";
  GEOLAKE_ASSIGN_OR_RETURN(std::string main_text, io->ReadAll(main_path));
  const std::size_t header_end = std::min(main_text.find('\n'), main_text.size());
  GEOLAKE_RETURN_NOT_OK(fold(std::string_view(main_text).substr(header_end), main_path));
  return entries;
}

Status RunJournal::WriteChangeLocked(const std::vector<std::size_t>& changed) {
  if (changed.empty()) return Status::OK();
  std::string text;
  for (const std::size_t i : changed) text += EntryLine(entries_[i]);
  return io_->WriteAll(ChangePath(run_dir_, ++changes_), text, /*overwrite=*/true)
      .WithContext("run journal");
}

Status RunJournal::FilesWritten(const std::vector<JournalEntry>& entries) {
  if (entries.empty()) return Status::OK();
  std::lock_guard lock(mu_);
  std::vector<std::size_t> changed;
  changed.reserve(entries.size());
  for (const JournalEntry& e : entries) changed.push_back(Upsert(e, &entries_, &index_));
  return WriteChangeLocked(changed);
}

Status RunJournal::FilesCommitted(const std::vector<std::string>& paths, std::int64_t snapshot_id) {
  std::lock_guard lock(mu_);
  std::vector<std::size_t> changed;
  for (const std::string& path : paths) {
    const auto found = index_.find(path);
    if (found == index_.end()) continue;
    JournalEntry& e = entries_[found->second];
    e.committed = true;
    e.snapshot_id = snapshot_id;
    changed.push_back(found->second);
  }
  return WriteChangeLocked(changed);
}

Status RunJournal::Finish() {
  std::lock_guard lock(mu_);
  std::string text = header_ + "\n";
  for (const JournalEntry& e : entries_) text += EntryLine(e);
  GEOLAKE_RETURN_NOT_OK(
      io_->WriteAll(journal_path(), text, /*overwrite=*/true).WithContext("run journal"));
  // journal.jsonl now holds every file's final line, and Read() applies it after any change
  // file a failed delete leaves behind: the change files may go.
  for (std::int64_t n = 1; n <= changes_; ++n) {
    GEOLAKE_RETURN_NOT_OK(io_->Delete(ChangePath(run_dir_, n)).WithContext("run journal"));
  }
  changes_ = 0;
  if (lock_fd_ >= 0) {
    // Delete before unlocking, so no reader finds the file and takes it for a live run.
    (void)io_->Delete(run_dir_ + "/" + std::string(kLockName));
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  return Status::OK();
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
