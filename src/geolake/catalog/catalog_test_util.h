/// \file
/// Helpers shared by the catalog tests (include only from *_test.cc): temporary directories, a
/// throwaway PostgreSQL server started through scripts/pg-test-server.sh, and the commit race
/// used by the concurrency tests on every backend.
///
/// The race: every new metadata location encodes the sequence number of the location it
/// replaces plus one ("s17-p2-t3-c5" follows some "s16-..."). If every swap is a true
/// compare-and-swap, the successful commits carry exactly the numbers 1..N and the final
/// location carries N; a lost update (two writers swapping from the same predecessor) would
/// produce a duplicate number and a final number below N.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "geolake/catalog/sql_catalog.h"
#include "geolake/core/result.h"
#include "geolake/table/catalog.h"
#include "geolake/testing/environment.h"

namespace geolake::catalog::testing {

/// A directory removed (recursively) on destruction.
class TempDir {
 public:
  TempDir() {
    std::string templ =
        (std::filesystem::temp_directory_path() / "geolake-catalog-XXXXXX").string();
    if (mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A PostgreSQL 15 server for one test suite, started and stopped with
/// scripts/pg-test-server.sh. Start() fails with the script's stderr when no server can run.
class PgTestServer {
 public:
  Status Start() {
    // Under /tmp, not the build tree: the server runs as the geolake-pg user when we are root,
    // and must be able to reach its directory (a build tree under /root would not be).
    std::string templ = "/tmp/geolake-pg-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      return Status::IOError("cannot create a directory for the PostgreSQL test server");
    }
    dir_ = templ;
    std::error_code ec;
    const std::string script = ::geolake::testing::SourceDir() + "/scripts/pg-test-server.sh";
    const std::string out = dir_ + ".uri";
    const std::string err = dir_ + ".err";
    const std::string cmd =
        "bash '" + script + "' start '" + dir_ + "' >'" + out + "' 2>'" + err + "'";
    const int rc = std::system(cmd.c_str());
    std::string uri = ReadFileOrEmpty(out);
    while (!uri.empty() && (uri.back() == '\n' || uri.back() == ' ')) uri.pop_back();
    const std::string stderr_text = ReadFileOrEmpty(err);
    std::filesystem::remove(out, ec);
    std::filesystem::remove(err, ec);
    if (rc != 0 || uri.empty()) {
      return Status::IOError("cannot start a PostgreSQL test server with " + script +
                             " (exit status " + std::to_string(rc) + "): " + stderr_text +
                             " -- install postgresql-15 (make test does) or run as a user that "
                             "may create the geolake-pg system user");
    }
    uri_ = uri;
    return Status::OK();
  }

  void Stop() {
    if (dir_.empty()) return;
    const std::string cmd = "bash '" + ::geolake::testing::SourceDir() +
                            "/scripts/pg-test-server.sh' stop '" + dir_ + "' >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    if (rc != 0) std::fprintf(stderr, "pg-test-server.sh stop %s failed\n", dir_.c_str());
    dir_.clear();
    uri_.clear();
  }

  const std::string& uri() const { return uri_; }

 private:
  std::string dir_;
  std::string uri_;
};

/// The sequence number encoded in a race location ("s17-..." -> 17), or -1.
inline std::int64_t LocationSequence(const std::string& location) {
  if (location.size() < 2 || location[0] != 's') return -1;
  std::int64_t n = 0;
  std::size_t i = 1;
  for (; i < location.size() && location[i] >= '0' && location[i] <= '9'; ++i) {
    n = n * 10 + (location[i] - '0');
  }
  return i == 1 ? -1 : n;
}

/// What one or more racing writers did.
struct RaceStats {
  std::int64_t attempts = 0;                      // CommitTable calls
  std::int64_t conflicts = 0;                     // of which kCommitConflict
  std::vector<std::int64_t> committed_sequences;  // one per successful swap
  std::string error;                              // first unexpected failure, if any
};

/// Run `threads` writers, each making `commits_per_thread` successful commits on `id` by
/// load-and-retry, with locations tagged by `process_tag`.
inline RaceStats RaceCommits(table::Catalog& catalog, const table::TableIdentifier& id, int threads,
                             int commits_per_thread, int process_tag) {
  RaceStats total;
  std::mutex mu;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t]() {
      RaceStats mine;
      for (int c = 0; c < commits_per_thread && mine.error.empty(); ++c) {
        while (true) {
          Result<std::string> current = catalog.LoadTable(id);
          if (!current.ok()) {
            mine.error = current.status().ToString();
            break;
          }
          const std::int64_t seq = LocationSequence(*current);
          if (seq < 0) {
            mine.error = "unexpected location " + *current;
            break;
          }
          const std::string next = "s" + std::to_string(seq + 1) + "-p" +
                                   std::to_string(process_tag) + "-t" + std::to_string(t) + "-c" +
                                   std::to_string(c);
          ++mine.attempts;
          Status st = catalog.CommitTable(id, *current, next);
          if (st.ok()) {
            mine.committed_sequences.push_back(seq + 1);
            break;
          }
          if (st.code() != ErrorCode::kCommitConflict) {
            mine.error = st.ToString();
            break;
          }
          ++mine.conflicts;
        }
      }
      std::lock_guard lock(mu);
      total.attempts += mine.attempts;
      total.conflicts += mine.conflicts;
      total.committed_sequences.insert(total.committed_sequences.end(),
                                       mine.committed_sequences.begin(),
                                       mine.committed_sequences.end());
      if (total.error.empty()) total.error = mine.error;
    });
  }
  for (std::thread& w : workers) w.join();
  return total;
}

/// "" when the race kept every swap: the successful commits carry exactly the sequence numbers
/// 1..expected_commits, attempts = commits + conflicts, and the table's current and previous
/// locations carry the last two numbers. Otherwise what is wrong.
inline std::string VerifyRace(const RaceStats& stats, std::int64_t expected_commits,
                              const table::TableEntry& final_entry) {
  if (!stats.error.empty()) return "writer failed: " + stats.error;
  std::vector<std::int64_t> seqs = stats.committed_sequences;
  std::sort(seqs.begin(), seqs.end());
  if (static_cast<std::int64_t>(seqs.size()) != expected_commits) {
    return std::to_string(seqs.size()) + " successful commits, expected " +
           std::to_string(expected_commits);
  }
  for (std::int64_t i = 0; i < expected_commits; ++i) {
    if (seqs[static_cast<std::size_t>(i)] != i + 1) {
      return "sequence " + std::to_string(i + 1) + " missing or duplicated (lost swap)";
    }
  }
  if (stats.attempts != expected_commits + stats.conflicts) {
    return "attempts " + std::to_string(stats.attempts) + " != commits + conflicts";
  }
  if (LocationSequence(final_entry.metadata_location) != expected_commits ||
      LocationSequence(final_entry.previous_metadata_location) != expected_commits - 1) {
    return "final locations " + final_entry.metadata_location + " / " +
           final_entry.previous_metadata_location;
  }
  return "";
}

/// Run the race in `processes` forked processes with `threads` threads each, every process
/// opening its own catalog on `uri` (so nothing is shared but the database). The parent must
/// hold no open connection to the database and run no other threads while forking. Children
/// report through files in `report_dir`; the result merges all of them.
inline RaceStats RaceCommitsInProcesses(const std::string& uri, const std::string& catalog_name,
                                        const table::TableIdentifier& id, int processes,
                                        int threads, int commits_per_thread,
                                        const std::string& report_dir) {
  RaceStats total;
  std::vector<pid_t> children;
  std::fflush(nullptr);  // nothing buffered may be written twice
  for (int p = 0; p < processes; ++p) {
    const pid_t pid = fork();
    if (pid < 0) {
      total.error = "fork failed";
      break;
    }
    if (pid == 0) {
      // Child: plain code only (no gtest), leave through _exit so no parent state is torn down.
      std::ofstream out(report_dir + "/p" + std::to_string(p) + ".txt");
      SqlCatalogOptions options;
      options.catalog_name = catalog_name;
      Result<std::unique_ptr<table::Catalog>> catalog = OpenCatalog(uri, "", options);
      if (!catalog.ok()) {
        out << "error " << catalog.status().ToString() << "\n";
        out.close();
        _exit(1);
      }
      const RaceStats stats = RaceCommits(**catalog, id, threads, commits_per_thread, p + 1);
      catalog->reset();
      out << "attempts " << stats.attempts << "\nconflicts " << stats.conflicts << "\n";
      for (const std::int64_t seq : stats.committed_sequences) out << "seq " << seq << "\n";
      if (!stats.error.empty()) out << "error " << stats.error << "\n";
      out.close();
      _exit(stats.error.empty() && out.good() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    int wstatus = 0;
    if (waitpid(children[i], &wstatus, 0) != children[i] || !WIFEXITED(wstatus) ||
        WEXITSTATUS(wstatus) != 0) {
      if (total.error.empty()) total.error = "process " + std::to_string(i) + " failed";
    }
    std::ifstream in(report_dir + "/p" + std::to_string(i) + ".txt");
    std::string key;
    while (in >> key) {
      if (key == "error") {
        std::string rest;
        std::getline(in, rest);
        total.error += " [process " + std::to_string(i) + ":" + rest + "]";
      } else {
        std::int64_t value = 0;
        in >> value;
        if (key == "attempts") total.attempts += value;
        if (key == "conflicts") total.conflicts += value;
        if (key == "seq") total.committed_sequences.push_back(value);
      }
    }
  }
  return total;
}

}  // namespace geolake::catalog::testing
