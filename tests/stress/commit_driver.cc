// geolake_commit_driver: drives concurrent and crashing commits against one Iceberg table, and
// checks afterwards that the table holds exactly the commits that were reported. Used by
// tests/stress/*.sh (see tests/stress/README.md).
//
//   create --catalog URI --warehouse DIR --table NS.T [--property K=V]...
//   append --catalog URI --warehouse DIR --table NS.T --process P --threads T --appends N
//          [--rows R] [--crash-at PHASE[:K]]
//   check  --catalog URI --warehouse DIR --table NS.T --log FILE...
//
// append: T threads each commit N appends; append i of thread t holds one small Parquet file of
// R rows whose `id` column is P*10^9 + t*10^6 + i (all rows of a file share it). After each
// successful commit one line is printed and flushed:
//   commit P T I SNAPSHOT_ID ATTEMPTS
// The first line is "start P T N CRASH" and the last (if not killed) "done P commits=...
// attempts=... conflicts=... failed=...".
//
// --crash-at (or the environment variable GEOLAKE_TEST_CRASH_AT) kills the process with SIGKILL
// the K-th time (default 1) any thread reaches PHASE: one of table::CommitPhaseName's names
// (manifest-written, manifest-list-written, metadata-written, before-swap, after-swap), or
// "during-swap" (a helper thread sends SIGKILL 0-2 ms after before-swap, so the process dies
// while the catalog's compare-and-swap is in flight or just done), or "random" (nothing here;
// the calling script kills the process at a random time).
//
// check: loads the table through the catalog and verifies, from the logs of every driver run
// against it: the lineage of the current snapshot holds one `append` snapshot per live data
// file and every reported snapshot id; every live file's footer (not the manifest) has min(id)
// = max(id) and num_rows = record_count; no id is live twice; per (process, thread) the live
// ids are exactly 0..n-1 where n = the reported count, or one more for a process that was
// killed at a phase at or after the swap (after-swap exactly one more); total-records in the
// summary equals the sum of footer rows. Prints "ok ..." and the current metadata location, or
// "FAIL: ..." lines and exits 1.

#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "geolake/catalog/sql_catalog.h"
#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/io/file_io.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/scan.h"
#include "geolake/table/transaction.h"
#include "stress_files.h"

namespace {

using geolake::Result;
using geolake::Status;
using geolake::stress::FooterId;
using geolake::stress::kProcessFactor;
using geolake::stress::kThreadFactor;
using geolake::stress::StressSchema;
using geolake::stress::WriteStressFile;
namespace table = geolake::table;
namespace parquet = geolake::parquet;

struct Common {
  std::string catalog_uri;
  std::string warehouse;
  std::string table_name;
};

std::string TableLocation(const Common& c, const table::TableIdentifier& id) {
  std::string loc = c.warehouse;
  for (const auto& level : id.ns.levels) loc += "/" + level;
  return loc + "/" + id.name;
}

// Print one line to stdout and flush it, whole, even with many threads printing.
void Emit(const std::string& line) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

int Fail(const Status& st) {
  std::fprintf(stderr, "geolake_commit_driver: %s\n", st.ToString().c_str());
  return 1;
}

Result<std::unique_ptr<table::Catalog>> Open(const Common& c) {
  return geolake::catalog::OpenCatalog(c.catalog_uri, c.warehouse);
}

// The table as the catalog has it now, with the catalog and FileIO it was loaded through.
struct Session {
  table::TableIdentifier id;
  std::unique_ptr<table::Catalog> catalog;
  std::unique_ptr<geolake::io::FileIO> io;
  table::Table table;
};

Result<Session> OpenSession(const Common& c) {
  Session s;
  GEOLAKE_ASSIGN_OR_RETURN(s.id, table::TableIdentifier::Parse(c.table_name));
  GEOLAKE_ASSIGN_OR_RETURN(s.catalog, Open(c));
  s.io = geolake::io::MakeLocalFileIO();
  GEOLAKE_ASSIGN_OR_RETURN(s.table, table::LoadTable(*s.catalog, *s.io, s.id));
  return s;
}

int RunCreate(const Common& c, const std::vector<std::string>& properties) {
  auto id = table::TableIdentifier::Parse(c.table_name);
  if (!id.ok()) return Fail(id.status());
  auto catalog = Open(c);
  if (!catalog.ok()) return Fail(catalog.status());
  auto io = geolake::io::MakeLocalFileIO();
  if (Status st = table::EnsureNamespace(**catalog, id->ns); !st.ok()) return Fail(st);
  table::NewTableOptions options;
  options.location = TableLocation(c, *id);
  options.schema = StressSchema();
  for (const auto& kv : properties) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return Fail(Status::InvalidArgument("not K=V: " + kv));
    options.properties[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto created = table::CreateTable(**catalog, *io, *id, options);
  if (!created.ok()) return Fail(created.status());
  Emit("created " + created->metadata_location);
  return 0;
}

// ---- append ---------------------------------------------------------------------------------

struct CrashPlan {
  std::string phase = "none";  // a CommitPhaseName, "during-swap", "random" or "none"
  int nth = 1;
  std::atomic<int> seen{0};
};

void InstallCrashHook(table::Transaction& txn, CrashPlan* plan) {
  if (plan->phase == "none" || plan->phase == "random") return;
  txn.SetCommitHook([plan](table::CommitPhase phase, int) {
    const std::string_view name = table::CommitPhaseName(phase);
    const bool during = plan->phase == "during-swap" && name == "before-swap";
    if (name != plan->phase && !during) return;
    if (plan->seen.fetch_add(1) + 1 != plan->nth) return;
    if (!during) {
      ::raise(SIGKILL);
      return;
    }
    std::thread([] {
      thread_local std::mt19937 gen(std::random_device{}());
      std::this_thread::sleep_for(
          std::chrono::microseconds(std::uniform_int_distribution<int>(0, 2000)(gen)));
      ::raise(SIGKILL);
    }).detach();
  });
}

int RunAppend(const Common& c, int process, int threads, int appends, int rows,
              const std::string& crash_at) {
  auto session = OpenSession(c);
  if (!session.ok()) return Fail(session.status());
  const table::TableIdentifier& id = session->id;
  table::Catalog* catalog = session->catalog.get();
  const geolake::io::FileIO* io = session->io.get();
  const table::SchemaPtr schema = session->table.metadata.current_schema();
  const std::string location = session->table.metadata.location;

  CrashPlan plan;
  if (!crash_at.empty()) {
    const auto colon = crash_at.find(':');
    plan.phase = crash_at.substr(0, colon);
    if (colon != std::string::npos) plan.nth = std::stoi(crash_at.substr(colon + 1));
    const bool known = plan.phase == "during-swap" || plan.phase == "random" ||
                       plan.phase == "none" || table::ParseCommitPhase(plan.phase).ok();
    if (!known) return Fail(table::ParseCommitPhase(plan.phase).status());
  }
  Emit("start " + std::to_string(process) + " " + std::to_string(threads) + " " +
       std::to_string(appends) + " " + plan.phase);

  std::atomic<std::int64_t> commits{0}, attempts{0}, failed{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < appends; ++i) {
        auto file = WriteStressFile(*io, location, *schema, process, t, i, rows);
        if (!file.ok()) {
          std::fprintf(stderr, "write %d/%d/%d: %s\n", process, t, i,
                       file.status().ToString().c_str());
          ++failed;
          continue;
        }
        table::AppendFiles append(catalog, io, id);
        append.AddFile(std::move(*file));
        InstallCrashHook(append, &plan);
        auto r = append.Commit();
        if (!r.ok()) {
          std::fprintf(stderr, "commit %d/%d/%d: %s\n", process, t, i,
                       r.status().ToString().c_str());
          ++failed;
          continue;
        }
        ++commits;
        attempts += r->attempts;
        Emit("commit " + std::to_string(process) + " " + std::to_string(t) + " " +
             std::to_string(i) + " " + std::to_string(r->snapshot_id) + " " +
             std::to_string(r->attempts));
      }
    });
  }
  for (auto& w : workers) w.join();
  Emit("done " + std::to_string(process) + " commits=" + std::to_string(commits.load()) +
       " attempts=" + std::to_string(attempts.load()) +
       " conflicts=" + std::to_string(attempts.load() - commits.load()) +
       " failed=" + std::to_string(failed.load()));
  return failed.load() == 0 ? 0 : 1;
}

// ---- check ----------------------------------------------------------------------------------

struct ProcessLog {
  int threads = 0;
  int appends = 0;
  std::string crash = "none";
  bool done = false;
  std::map<int, std::set<int>> reported;  // thread -> reported seqs
};

int RunCheck(const Common& c, const std::vector<std::string>& logs) {
  std::vector<std::string> failures;
  auto fail = [&](const std::string& m) { failures.push_back(m); };

  std::map<int, ProcessLog> procs;
  std::set<std::int64_t> reported_snapshots;
  std::int64_t total_attempts = 0, total_reported = 0;
  for (const auto& log : logs) {
    std::ifstream in(log);
    if (!in) return Fail(Status::IOError("cannot read log " + log));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string kind;
      ls >> kind;
      if (kind == "start") {
        int p;
        ProcessLog pl;
        ls >> p >> pl.threads >> pl.appends >> pl.crash;
        if (procs.count(p) != 0) fail("process " + std::to_string(p) + " started twice");
        procs[p] = pl;
      } else if (kind == "commit") {
        int p, t, i, att;
        std::int64_t snap;
        ls >> p >> t >> i >> snap >> att;
        if (!procs[p].reported[t].insert(i).second) {
          fail("commit " + std::to_string(p) + "/" + std::to_string(t) + "/" + std::to_string(i) +
               " reported twice");
        }
        if (!reported_snapshots.insert(snap).second) {
          fail("snapshot " + std::to_string(snap) + " reported twice");
        }
        total_attempts += att;
        ++total_reported;
      } else if (kind == "done") {
        int p;
        ls >> p;
        procs[p].done = true;
      }
    }
  }

  auto session = OpenSession(c);
  if (!session.ok()) return Fail(session.status());
  const geolake::io::FileIO* io = session->io.get();
  const table::Table& loaded = session->table;
  const table::TableMetadata& m = loaded.metadata;

  // The lineage of the current snapshot.
  std::map<std::string, int> ops;
  std::set<std::int64_t> lineage;
  for (const table::Snapshot* s = m.current_snapshot(); s != nullptr;
       s = s->parent_snapshot_id ? m.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    if (!lineage.insert(s->snapshot_id).second) {
      fail("snapshot lineage has a cycle");
      break;
    }
    ++ops[s->operation()];
  }
  for (std::int64_t snap : reported_snapshots) {
    if (lineage.count(snap) == 0) fail("reported snapshot " + std::to_string(snap) + " is lost");
  }

  // Live files, identified by their footers.
  auto plan = table::PlanScan(*io, m);
  if (!plan.ok()) return Fail(plan.status());
  std::map<std::pair<int, int>, std::set<int>> live;
  std::set<std::int64_t> ids;
  std::int64_t footer_rows = 0;
  for (const auto& e : plan->data_files) {
    std::int64_t rows = 0;
    auto fid = FooterId(*io, e.data_file.file_path, &rows);
    if (!fid.ok()) {
      fail(fid.status().ToString());
      continue;
    }
    if (rows != e.data_file.record_count) fail("record_count differs: " + e.data_file.file_path);
    footer_rows += rows;
    if (!ids.insert(*fid).second) fail("id " + std::to_string(*fid) + " is live twice");
    const int p = static_cast<int>(*fid / kProcessFactor);
    const int t = static_cast<int>((*fid % kProcessFactor) / kThreadFactor);
    live[{p, t}].insert(static_cast<int>(*fid % kThreadFactor));
  }
  if (ops["append"] != static_cast<int>(plan->data_files.size())) {
    fail(std::to_string(ops["append"]) + " append snapshots but " +
         std::to_string(plan->data_files.size()) + " live files");
  }
  const table::Snapshot* current = m.current_snapshot();
  const std::string total = current ? current->summary.at("total-records") : "0";
  if (total != std::to_string(footer_rows)) {
    fail("total-records " + total + " but footers hold " + std::to_string(footer_rows));
  }

  std::int64_t extras = 0;
  std::set<std::pair<int, int>> accounted;
  for (const auto& [p, pl] : procs) {
    for (int t = 0; t < pl.threads; ++t) {
      accounted.insert({p, t});
      const auto it = pl.reported.find(t);
      const int reported = it == pl.reported.end() ? 0 : static_cast<int>(it->second.size());
      const std::set<int>& have = live[{p, t}];
      const int n = static_cast<int>(have.size());
      const std::string who = std::to_string(p) + "/" + std::to_string(t);
      if (n > 0 && (*have.begin() != 0 || *have.rbegin() != n - 1)) {
        fail(who + ": live seqs are not 0.." + std::to_string(n - 1));
      }
      if (reported > 0 && (*it->second.rbegin() != reported - 1)) {
        fail(who + ": reported seqs are not 0.." + std::to_string(reported - 1));
      }
      // A commit killed at or after the swap may be in the table without having been reported.
      const bool may_have_extra = !pl.done && (pl.crash == "after-swap" ||
                                               pl.crash == "during-swap" || pl.crash == "random");
      const bool must_have_extra = !pl.done && pl.crash == "after-swap";
      const int extra = n - reported;
      if (pl.done && reported != pl.appends) {
        fail(who + ": finished with " + std::to_string(reported) + " of " +
             std::to_string(pl.appends) + " appends reported");
      }
      if (extra < 0 || extra > (may_have_extra ? 1 : 0) || (must_have_extra && extra != 1)) {
        fail(who + " (" + pl.crash + (pl.done ? ", done" : ", killed") +
             "): " + std::to_string(reported) + " reported, " + std::to_string(n) + " live");
      }
      extras += std::max(0, extra);
    }
  }
  for (const auto& [key, seqs] : live) {
    if (accounted.count(key) == 0 && !seqs.empty()) {
      fail("live files of unknown writer " + std::to_string(key.first) + "/" +
           std::to_string(key.second));
    }
  }

  for (const auto& f : failures) std::printf("FAIL: %s\n", f.c_str());
  std::printf(
      "%s: snapshots=%zu appends=%d live_files=%zu reported=%lld unreported_live=%lld "
      "records=%lld attempts=%lld conflicts=%lld\n",
      failures.empty() ? "ok" : "failed", lineage.size(), ops["append"], plan->data_files.size(),
      static_cast<long long>(total_reported), static_cast<long long>(extras),
      static_cast<long long>(footer_rows), static_cast<long long>(total_attempts),
      static_cast<long long>(total_attempts - total_reported));
  std::printf("metadata %s\n", loaded.metadata_location.c_str());
  std::fflush(stdout);
  return failures.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"geolake commit stress driver"};
  app.require_subcommand(1);
  Common c;
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("--catalog", c.catalog_uri, "catalog URI (default sqlite in warehouse)");
    sub->add_option("--warehouse", c.warehouse, "warehouse directory")->required();
    sub->add_option("--table", c.table_name, "namespace.table")->required();
  };
  std::vector<std::string> properties, logs;
  int process = 0, threads = 1, appends = 1, rows = 3;
  std::string crash_at;
  if (const char* env = std::getenv("GEOLAKE_TEST_CRASH_AT")) crash_at = env;

  auto* create = app.add_subcommand("create", "create the stress table");
  add_common(create);
  create->add_option("--property", properties, "table property K=V");
  auto* append = app.add_subcommand("append", "commit appends from many threads");
  add_common(append);
  append->add_option("--process", process)->required();
  append->add_option("--threads", threads)->check(CLI::Range(1, 999));
  append->add_option("--appends", appends)->check(CLI::Range(0, 999999));
  append->add_option("--rows", rows)->check(CLI::Range(1, 1000000));
  append->add_option("--crash-at", crash_at, "PHASE[:K]");
  auto* check = app.add_subcommand("check", "verify the table against driver logs");
  add_common(check);
  check->add_option("--log", logs, "stdout of a driver run")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (create->parsed()) return RunCreate(c, properties);
  if (append->parsed()) return RunAppend(c, process, threads, appends, rows, crash_at);
  return RunCheck(c, logs);
}
