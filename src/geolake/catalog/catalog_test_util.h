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
#include <unistd.h>

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

#include "geolake/core/result.h"
#include "geolake/table/catalog.h"

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
    static std::atomic<int> counter{0};
    dir_ = std::string(GEOLAKE_BINARY_DIR) + "/pg-test/" + std::to_string(getpid()) + "-" +
           std::to_string(counter++);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(dir_).parent_path(), ec);
    const std::string script = std::string(GEOLAKE_SOURCE_DIR) + "/scripts/pg-test-server.sh";
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
    const std::string cmd = "bash '" + std::string(GEOLAKE_SOURCE_DIR) +
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

}  // namespace geolake::catalog::testing
