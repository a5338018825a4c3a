#include "geolake/table/transaction.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "geolake/core/testing.h"
#include "geolake/formats/parquet/file_writer.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/scan.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

std::string TestDir(const std::string& name) {
  const std::string dir = std::string(GEOLAKE_BINARY_DIR) + "/table_transaction_test/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::shared_ptr<const Schema> TableSchema() {
  return std::make_shared<const Schema>(
      0, std::vector<NestedField>{NestedField::Required(1, "id", Type::Long()),
                                  NestedField::Optional(2, "geo_cell", Type::String()),
                                  NestedField::Optional(3, "value", Type::Double())});
}

NewTableOptions Options(const std::string& location, int format_version = 2) {
  NewTableOptions o;
  o.location = location;
  o.schema = TableSchema();
  o.spec = std::make_shared<const PartitionSpec>(
      0, std::vector<PartitionField>{{2, {}, 0, "geo_cell", Transform::Identity()}});
  o.format_version = format_version;
  o.properties = {{"commit.retry.min-wait-ms", "1"}};
  return o;
}

// Write a real Parquet data file (ids first_id.., one partition cell) and describe it.
DataFile WriteDataFile(const io::FileIO& io, const std::string& path, std::int64_t first_id,
                       std::int64_t rows, const std::string& cell) {
  parquet::LogicalType string_type;
  string_type.kind = parquet::LogicalType::Kind::kString;
  auto schema =
      parquet::Schema::Make({parquet::Field::Leaf("id", parquet::PhysicalType::kInt64,
                                                  parquet::Repetition::kRequired, 1),
                             parquet::Field::Leaf("geo_cell", parquet::PhysicalType::kByteArray,
                                                  parquet::Repetition::kOptional, 2, string_type),
                             parquet::Field::Leaf("value", parquet::PhysicalType::kDouble,
                                                  parquet::Repetition::kOptional, 3)})
          .value();
  auto out = io.OpenWrite(path, /*overwrite=*/false).value();
  auto writer = parquet::FileWriter::Open(out.get(), schema).value();
  parquet::Batch batch = parquet::Batch::ForSchema(schema);
  for (std::int64_t i = 0; i < rows; ++i) {
    batch.columns[0].AppendInt64(first_id + i);
    batch.columns[1].AppendBytes(cell);
    batch.columns[2].AppendDouble(0.5 * static_cast<double>(i));
  }
  batch.num_rows = rows;
  EXPECT_OK(writer->WriteBatch(batch));
  parquet::FileMetaData md = writer->Close().value();
  EXPECT_OK(out->Close());
  const auto size = static_cast<std::int64_t>(io.Stat(path).value().size_bytes);
  ParquetMetricsOptions metrics;
  metrics.nan_value_counts[3] = 0;
  DataFile f = DataFileFromParquet(md, path, size, *AssignFreshIds(*TableSchema()).schema,
                                   {Value(cell)}, metrics)
                   .value();
  f.sort_order_id = 0;
  // The bounds come from the writer's statistics.
  EXPECT_EQ(f.lower_bounds.at(1), SerializeValue(*Type::Long(), Value(first_id)).value());
  EXPECT_EQ(f.upper_bounds.at(2), cell);
  return f;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Forwards to a real catalog; before the first CommitTable it lets `before_commit` run (a
// competing writer), so that our commit loses the race.
class RacingCatalog : public Catalog {
 public:
  explicit RacingCatalog(Catalog* inner) : inner_(inner) {}
  std::function<void()> before_commit;
  int always_conflict = 0;  // > 0: report a conflict this many times without trying
  int commits = 0;

  const std::string& name() const override { return inner_->name(); }
  Status CreateNamespace(const Namespace& ns, const NamespaceProperties& p) override {
    return inner_->CreateNamespace(ns, p);
  }
  Result<std::vector<Namespace>> ListNamespaces(const Namespace& p) override {
    return inner_->ListNamespaces(p);
  }
  Result<bool> NamespaceExists(const Namespace& ns) override { return inner_->NamespaceExists(ns); }
  Status DropNamespace(const Namespace& ns) override { return inner_->DropNamespace(ns); }
  Result<NamespaceProperties> LoadNamespaceProperties(const Namespace& ns) override {
    return inner_->LoadNamespaceProperties(ns);
  }
  Status UpdateNamespaceProperties(const Namespace& ns, const NamespaceProperties& u,
                                   const std::vector<std::string>& r) override {
    return inner_->UpdateNamespaceProperties(ns, u, r);
  }
  Status CreateTable(const TableIdentifier& id, const std::string& loc) override {
    return inner_->CreateTable(id, loc);
  }
  Result<std::string> LoadTable(const TableIdentifier& id) override {
    return inner_->LoadTable(id);
  }
  Result<TableEntry> LoadTableEntry(const TableIdentifier& id) override {
    return inner_->LoadTableEntry(id);
  }
  Result<bool> TableExists(const TableIdentifier& id) override { return inner_->TableExists(id); }
  Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) override {
    return inner_->ListTables(ns);
  }
  Status DropTable(const TableIdentifier& id) override { return inner_->DropTable(id); }
  Status RenameTable(const TableIdentifier& a, const TableIdentifier& b) override {
    return inner_->RenameTable(a, b);
  }
  Status CommitTable(const TableIdentifier& id, const std::string& expected,
                     const std::string& next) override {
    ++commits;
    if (always_conflict > 0) {
      --always_conflict;
      return Status::CommitConflict("injected conflict");
    }
    if (before_commit) {
      auto f = std::move(before_commit);
      before_commit = nullptr;
      f();
    }
    return inner_->CommitTable(id, expected, next);
  }

 private:
  Catalog* inner_;
};

// Runs build/oracles/verify_iceberg.mjs (icebird, avsc, DuckDB; see shared/oracles/README.md)
// on a table we wrote and expects no problems and `rows` rows everywhere.
void ExpectOracleAgrees(const std::string& dir, std::int64_t rows) {
  const std::string oracle = std::string(GEOLAKE_SOURCE_DIR) + "/build/oracles/verify_iceberg.mjs";
  if (!std::filesystem::exists(oracle)) {
    GTEST_SKIP() << "oracle not installed: " << oracle;
  }
  const CommandResult v = RunCommand("node " + oracle + " " + dir + " --quiet");
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("\"ok\": true"), std::string::npos) << v.output;
  const std::string n = std::to_string(rows);
  EXPECT_NE(v.output.find("\"manifest_record_count_sum\": \"" + n + "\""), std::string::npos)
      << v.output;
  EXPECT_NE(v.output.find("\"icebird_rows_read\": " + n), std::string::npos) << v.output;
  EXPECT_NE(v.output.find("\"duckdb_row_count\": \"" + n + "\""), std::string::npos) << v.output;
}

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io_ = io::MakeLocalFileIO();
    catalog_ = MakeInMemoryCatalog();
    ASSERT_OK(catalog_->CreateNamespace(Namespace{{"ns"}}));
    id_ = TableIdentifier{Namespace{{"ns"}}, "t"};
  }

  std::unique_ptr<io::FileIO> io_;
  std::unique_ptr<Catalog> catalog_;
  TableIdentifier id_;
};

TEST_F(TransactionTest, RetryPolicyFromProperties) {
  CommitRetryPolicy defaults = CommitRetryPolicy::FromProperties({});
  EXPECT_EQ(defaults.num_retries, 4);
  EXPECT_EQ(defaults.min_wait_ms, 100);
  EXPECT_EQ(defaults.max_wait_ms, 60000);
  EXPECT_EQ(defaults.total_timeout_ms, 1800000);
  CommitRetryPolicy p =
      CommitRetryPolicy::FromProperties({{"commit.retry.num-retries", "2"},
                                         {"commit.retry.min-wait-ms", "1000"},
                                         {"commit.retry.max-wait-ms", "3000"},
                                         {"commit.retry.total-timeout-ms", "junk"}});
  EXPECT_EQ(p.num_retries, 2);
  EXPECT_EQ(p.total_timeout_ms, 1800000);
  // 1000, 2000, 3000 (capped), each plus at most 10% jitter.
  for (int retry = 1; retry <= 4; ++retry) {
    const std::int64_t base = std::min<std::int64_t>(1000LL << (retry - 1), 3000);
    const std::int64_t w = p.WaitMillis(retry);
    EXPECT_GE(w, base);
    EXPECT_LE(w, base + base / 10);
  }
}

TEST_F(TransactionTest, CreateAppendTwiceAndVerifyWithOracle) {
  const std::string dir = TestDir("append");
  ASSERT_OK_AND_ASSIGN(Table created, CreateTable(*catalog_, *io_, id_, Options(dir)));
  EXPECT_EQ(created.metadata_location, dir + "/metadata/v1.metadata.json");
  EXPECT_THAT(CreateTable(*catalog_, *io_, id_, Options(dir)), IsError(ErrorCode::kAlreadyExists));

  AppendFiles first(catalog_.get(), io_.get(), id_);
  first.AddFile(WriteDataFile(*io_, dir + "/data/geo_cell=03/a.parquet", 0, 100, "03"));
  first.AddFile(WriteDataFile(*io_, dir + "/data/geo_cell=12/b.parquet", 100, 50, "12"));
  ASSERT_OK_AND_ASSIGN(CommitResult r1, first.Commit());
  EXPECT_EQ(r1.attempts, 1);
  EXPECT_EQ(r1.sequence_number, 1);
  EXPECT_EQ(r1.metadata_location, dir + "/metadata/v2.metadata.json");

  AppendFiles second(catalog_.get(), io_.get(), id_);
  second.AddFile(WriteDataFile(*io_, dir + "/data/geo_cell=03/c.parquet", 150, 7, "03"));
  ASSERT_OK_AND_ASSIGN(CommitResult r2, second.Commit());
  EXPECT_EQ(r2.sequence_number, 2);

  ASSERT_OK_AND_ASSIGN(Table t, LoadTable(*catalog_, *io_, id_));
  EXPECT_EQ(t.metadata_location, dir + "/metadata/v3.metadata.json");
  EXPECT_EQ(t.metadata.snapshots.size(), 2u);
  EXPECT_EQ(t.metadata.current_snapshot()->parent_snapshot_id, r1.snapshot_id);
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-records"), "157");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-data-files"), "3");
  EXPECT_EQ(t.metadata.metadata_log.size(), 2u);
  ASSERT_OK_AND_ASSIGN(std::string hint, io_->ReadAll(dir + "/metadata/version-hint.text"));
  EXPECT_EQ(hint, "3");
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, PlanScan(*io_, t.metadata));
  EXPECT_EQ(plan.manifests.size(), 2u);
  EXPECT_EQ(plan.data_files.size(), 3u);
  EXPECT_EQ(plan.DataRecordCount(), 157);

  // Independent readers (icebird, avsc, DuckDB) must agree with what we wrote.
  ExpectOracleAgrees(dir, 157);
}

TEST_F(TransactionTest, V3TableAssignsRowIdsAndPassesOracle) {
  const std::string dir = TestDir("v3");
  ASSERT_OK(CreateTable(*catalog_, *io_, id_, Options(dir, 3)).status());
  for (int i = 0; i < 2; ++i) {
    AppendFiles append(catalog_.get(), io_.get(), id_);
    append.AddFile(
        WriteDataFile(*io_, dir + "/data/f" + std::to_string(i) + ".parquet", i * 10, 10, "03"));
    ASSERT_OK(append.Commit().status());
  }
  ASSERT_OK_AND_ASSIGN(Table t, LoadTable(*catalog_, *io_, id_));
  EXPECT_EQ(t.metadata.next_row_id, 20);
  EXPECT_EQ(t.metadata.current_snapshot()->first_row_id, 10);
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, PlanScan(*io_, t.metadata));
  std::vector<std::int64_t> first_row_ids;
  for (const auto& e : plan.data_files) first_row_ids.push_back(*e.data_file.first_row_id);
  std::sort(first_row_ids.begin(), first_row_ids.end());
  EXPECT_EQ(first_row_ids, (std::vector<std::int64_t>{0, 10}));
  ExpectOracleAgrees(dir, 20);
}

TEST_F(TransactionTest, LostRaceIsRetriedOnTheNewBase) {
  const std::string dir = TestDir("race");
  ASSERT_OK(CreateTable(*catalog_, *io_, id_, Options(dir)).status());
  RacingCatalog racing(catalog_.get());
  std::vector<std::int64_t> sleeps;
  racing.before_commit = [&] {
    AppendFiles other(catalog_.get(), io_.get(), id_);
    other.AddFile(WriteDataFile(*io_, dir + "/data/other.parquet", 1000, 5, "12"));
    ASSERT_OK(other.Commit().status());
  };
  AppendFiles mine(&racing, io_.get(), id_);
  mine.SetSleep([&](std::int64_t ms) { sleeps.push_back(ms); });
  mine.AddFile(WriteDataFile(*io_, dir + "/data/mine.parquet", 0, 20, "03"));
  ASSERT_OK_AND_ASSIGN(CommitResult r, mine.Commit());
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(sleeps.size(), 1u);
  EXPECT_EQ(r.sequence_number, 2);  // re-assigned on retry
  ASSERT_OK_AND_ASSIGN(Table t, LoadTable(*catalog_, *io_, id_));
  ASSERT_EQ(t.metadata.snapshots.size(), 2u);
  EXPECT_EQ(t.metadata.current_snapshot()->parent_snapshot_id, t.metadata.snapshots[0].snapshot_id);
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-records"), "25");
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, PlanScan(*io_, t.metadata));
  EXPECT_EQ(plan.DataRecordCount(), 25);
  // Our first attempt wrote v2 (from base v1); the competitor found v2 taken and committed v3;
  // our v2 was removed after the lost CAS and the retry, based on v3, wrote v4.
  EXPECT_EQ(t.metadata_location, dir + "/metadata/v4.metadata.json");
  EXPECT_FALSE(io_->Exists(dir + "/metadata/v2.metadata.json").value());
  // Every manifest list in the directory belongs to a snapshot: attempt 1's list was removed.
  int lists = 0;
  ASSERT_OK_AND_ASSIGN(auto listing, io_->List(dir + "/metadata"));
  for (const auto& f : listing) {
    if (f.path.find("/snap-") != std::string::npos) ++lists;
  }
  EXPECT_EQ(lists, 2);
  ExpectOracleAgrees(dir, 25);
}

TEST_F(TransactionTest, GivesUpAfterRetriesAndCleansUp) {
  const std::string dir = TestDir("give_up");
  NewTableOptions options = Options(dir);
  options.properties["commit.retry.num-retries"] = "2";
  ASSERT_OK(CreateTable(*catalog_, *io_, id_, options).status());
  RacingCatalog racing(catalog_.get());
  racing.always_conflict = 100;
  AppendFiles append(&racing, io_.get(), id_);
  int sleeps = 0;
  append.SetSleep([&](std::int64_t) { ++sleeps; });
  append.AddFile(WriteDataFile(*io_, dir + "/data/a.parquet", 0, 3, "03"));
  EXPECT_THAT(append.Commit(), IsErrorWith(ErrorCode::kCommitConflict, "3 attempts"));
  EXPECT_EQ(racing.commits, 3);
  EXPECT_EQ(sleeps, 2);
  // Only the table's first metadata file and its hint remain under metadata/.
  std::vector<std::string> names;
  ASSERT_OK_AND_ASSIGN(auto listing, io_->List(dir + "/metadata"));
  for (const auto& f : listing) {
    names.push_back(std::filesystem::path(f.path).filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"v1.metadata.json", "version-hint.text"}));
}

TEST_F(TransactionTest, FindsCurrentMetadataByPathLikeReaders) {
  const std::string fixtures = std::string(GEOLAKE_SHARED_DIR) + "/oracles/fixtures/";
  // Numeric hint, stem hint, and no hint at all (highest NNNNN- version).
  const std::pair<const char*, const char*> cases[] = {
      {"icebird/hyperparam-iceberg/java/bunnies", "v5.metadata.json"},
      {"duckdb-iceberg/data/persistent/uuid/",
       "00001-43fda1f4-1c96-4376-ad16-91beb71d0759.metadata.json"},
      {"icebird/hyperparam-iceberg/athena/example",
       "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json"},
  };
  for (const auto& [table, file] : cases) {
    ASSERT_OK_AND_ASSIGN(std::string found, FindCurrentMetadataFile(*io_, fixtures + table));
    EXPECT_TRUE(found.ends_with(std::string("/metadata/") + file)) << found;
  }
  ASSERT_OK_AND_ASSIGN(
      Table t, LoadTableFromPath(*io_, fixtures + "icebird/hyperparam-iceberg/java/bunnies"));
  EXPECT_EQ(t.metadata.current_snapshot_id, 9158179788527662767LL);
  EXPECT_THAT(FindCurrentMetadataFile(*io_, TestDir("empty")), IsError(ErrorCode::kNotFound));
}

TEST_F(TransactionTest, RejectsFilesThatDoNotFitAndUnknownTables) {
  const std::string dir = TestDir("reject");
  ASSERT_OK(CreateTable(*catalog_, *io_, id_, Options(dir)).status());
  AppendFiles append(catalog_.get(), io_.get(), id_);
  DataFile bad;
  bad.file_path = dir + "/data/x.parquet";
  bad.partition = {Value(std::int64_t{5})};  // geo_cell is a string
  append.AddFile(bad);
  EXPECT_THAT(append.Commit(), IsError(ErrorCode::kInvalidArgument));
  AppendFiles missing(catalog_.get(), io_.get(), TableIdentifier{Namespace{{"ns"}}, "nope"});
  EXPECT_THAT(missing.Commit(), IsError(ErrorCode::kNotFound));
}

}  // namespace
}  // namespace geolake::table
