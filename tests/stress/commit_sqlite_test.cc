// Transactions (table/transaction.h) on the SQLite catalog: the same rules the in-memory catalog
// tests check in table/transaction_test.cc, here through real database connections, including
// two catalog instances on one file standing in for two processes.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "geolake/catalog/sql_catalog.h"
#include "geolake/table/scan.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"
#include "stress_files.h"

namespace geolake::stress {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using table::AppendFiles;
using table::CommitResult;
using table::DeleteFiles;
using table::ReplaceFiles;
using table::SetProperties;

class SqliteCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::geolake::testing::BuildDir() + "/commit_sqlite_test/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    io_ = io::MakeLocalFileIO();
    catalog_ = Open();
    id_ = table::TableIdentifier{table::Namespace{{"stress"}}, "t"};
    ASSERT_OK(table::EnsureNamespace(*catalog_, id_.ns));
  }
  // A second, independent catalog on the same database file (another "process").
  std::unique_ptr<table::Catalog> Open() {
    return catalog::OpenCatalog("sqlite:" + dir_ + "/catalog.db", dir_).value();
  }
  void Create(std::map<std::string, std::string> properties = {}) {
    table::NewTableOptions options;
    options.location = dir_ + "/stress/t";
    options.schema = StressSchema();
    options.properties = std::move(properties);
    options.properties["commit.retry.min-wait-ms"] = "1";
    ASSERT_OK(table::CreateTable(*catalog_, *io_, id_, options).status());
  }
  table::DataFile File(std::int64_t thread, std::int64_t seq) {
    return WriteStressFile(*io_, dir_ + "/stress/t", *StressSchema(), 0, thread, seq, 3).value();
  }
  table::Table Load() { return table::LoadTable(*catalog_, *io_, id_).value(); }
  std::vector<std::string> Live() {
    const table::ScanPlan plan = table::PlanScan(*io_, Load().metadata).value();
    std::vector<std::string> paths;
    for (const auto& e : plan.data_files) paths.push_back(e.data_file.file_path);
    std::sort(paths.begin(), paths.end());
    return paths;
  }

  std::string dir_;
  std::unique_ptr<io::FileIO> io_;
  std::unique_ptr<table::Catalog> catalog_;
  table::TableIdentifier id_;
};

TEST_F(SqliteCommitTest, EveryTransactionCommitsAndTheCatalogRecordsThePreviousFile) {
  Create();
  const table::DataFile a = File(0, 0), b = File(0, 1), c = File(0, 2);
  AppendFiles append(catalog_.get(), io_.get(), id_);
  append.AddFile(a).AddFile(b);
  ASSERT_OK_AND_ASSIGN(CommitResult r1, append.Commit());

  ReplaceFiles replace(catalog_.get(), io_.get(), id_);
  replace.DeleteFile(a.file_path).AddFile(c);
  ASSERT_OK_AND_ASSIGN(CommitResult r2, replace.Commit());
  ASSERT_OK_AND_ASSIGN(table::TableEntry entry, catalog_->LoadTableEntry(id_));
  EXPECT_EQ(entry.metadata_location, r2.metadata_location);
  EXPECT_EQ(entry.previous_metadata_location, r1.metadata_location);
  EXPECT_EQ(Live(), (std::vector<std::string>{b.file_path, c.file_path}));

  DeleteFiles del(catalog_.get(), io_.get(), id_);
  del.DeleteFile(b.file_path);
  ASSERT_OK(del.Commit().status());
  SetProperties props(catalog_.get(), io_.get(), id_);
  props.Set("owner", "stress");
  ASSERT_OK(props.Commit().status());

  const table::Table t = Load();
  EXPECT_EQ(t.metadata.properties.at("owner"), "stress");
  ASSERT_EQ(t.metadata.snapshots.size(), 3u);
  EXPECT_EQ(t.metadata.snapshots[1].operation(), "replace");
  EXPECT_EQ(t.metadata.snapshots[2].operation(), "delete");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-records"), "3");
  EXPECT_EQ(Live(), (std::vector<std::string>{c.file_path}));
  EXPECT_EQ(table::ParseMetadataVersion(t.metadata_location).value(), 5);
}

TEST_F(SqliteCommitTest, ThreadsOnTwoCatalogsAppendEveryFileExactlyOnce) {
  Create({{"commit.retry.num-retries", "100"}, {"commit.retry.max-wait-ms", "50"}});
  auto second = Open();
  constexpr int kThreads = 4, kAppends = 6;
  std::atomic<int> attempts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      table::Catalog* cat = t % 2 == 0 ? catalog_.get() : second.get();
      for (int i = 0; i < kAppends; ++i) {
        AppendFiles append(cat, io_.get(), id_);
        append.AddFile(File(t, i));
        auto r = append.Commit();
        EXPECT_OK(r.status());
        if (r.ok()) attempts += r->attempts;
      }
    });
  }
  for (auto& th : threads) th.join();
  const table::Table t = Load();
  EXPECT_EQ(t.metadata.snapshots.size(), static_cast<std::size_t>(kThreads * kAppends));
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-data-files"),
            std::to_string(kThreads * kAppends));
  const table::ScanPlan plan = table::PlanScan(*io_, t.metadata).value();
  std::set<std::int64_t> ids;
  for (const auto& e : plan.data_files) {
    std::int64_t rows = 0;
    ASSERT_OK_AND_ASSIGN(std::int64_t id, FooterId(*io_, e.data_file.file_path, &rows));
    EXPECT_TRUE(ids.insert(id).second) << id;
    EXPECT_EQ(rows, 3);
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kThreads * kAppends));
  EXPECT_GE(attempts.load(), kThreads * kAppends);
  std::printf("attempts=%d conflicts=%d\n", attempts.load(), attempts.load() - kThreads * kAppends);
}

TEST_F(SqliteCommitTest, ReplaceLosingToADeleteOnAnotherConnectionConflicts) {
  Create();
  const table::DataFile a = File(0, 0), b = File(0, 1);
  AppendFiles append(catalog_.get(), io_.get(), id_);
  append.AddFile(a).AddFile(b);
  ASSERT_OK(append.Commit().status());
  auto other = Open();
  ReplaceFiles replace(catalog_.get(), io_.get(), id_);
  replace.DeleteFile(a.file_path).AddFile(File(0, 2));
  // The other "process" deletes `a` between our load and our swap.
  replace.SetCommitHook([&](table::CommitPhase phase, int attempt) {
    if (phase != table::CommitPhase::kBeforeSwap || attempt != 1) return;
    DeleteFiles del(other.get(), io_.get(), id_);
    del.DeleteFile(a.file_path);
    ASSERT_OK(del.Commit().status());
  });
  EXPECT_THAT(replace.Commit(), IsErrorWith(ErrorCode::kCommitConflict, a.file_path));
  EXPECT_EQ(Live(), (std::vector<std::string>{b.file_path}));
  EXPECT_EQ(Load().metadata.current_snapshot()->operation(), "delete");
}

TEST_F(SqliteCommitTest, DeleteAfterCommitKeepsExactlyTheLoggedVersions) {
  Create({{"write.metadata.previous-versions-max", "3"},
          {"write.metadata.delete-after-commit.enabled", "true"}});
  for (int i = 0; i < 6; ++i) {
    AppendFiles append(catalog_.get(), io_.get(), id_);
    append.AddFile(File(0, i));
    ASSERT_OK(append.Commit().status());
  }
  const table::Table t = Load();
  ASSERT_EQ(t.metadata.metadata_log.size(), 3u);
  // Each kept version under both its names: NNNNN-<uuid> and the published v<N>.
  const std::string metadata_dir = dir_ + "/stress/t/metadata/";
  std::set<std::string> expected;
  auto expect_version = [&](const std::string& file) {
    expected.insert(file);
    expected.insert(metadata_dir +
                    table::HintedMetadataFileName(table::ParseMetadataVersion(file).value()));
  };
  expect_version(t.metadata_location);
  for (const auto& e : t.metadata.metadata_log) expect_version(e.metadata_file);
  std::set<std::string> present;
  for (const auto& f : std::filesystem::directory_iterator(dir_ + "/stress/t/metadata")) {
    if (f.path().string().ends_with(".metadata.json")) present.insert(f.path().string());
  }
  EXPECT_EQ(present, expected);
  EXPECT_EQ(table::ParseMetadataVersion(t.metadata_location).value(), 7);
  ASSERT_OK_AND_ASSIGN(table::Table by_path, table::LoadTableFromPath(*io_, dir_ + "/stress/t"));
  EXPECT_EQ(by_path.metadata_location, t.metadata_location);
  DeleteFiles none(catalog_.get(), io_.get(), id_);
  EXPECT_THAT(none.Commit(), IsError(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace geolake::stress
