#include "geolake/table/transaction.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "geolake/formats/parquet/file_writer.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/scan.h"
#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::CommandResult;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::geolake::testing::RunCommand;

std::string TestDir(const std::string& name) {
  const std::string dir = ::geolake::testing::BuildDir() + "/table_transaction_test/" + name;
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

// Runs verify_iceberg.mjs (icebird, avsc, DuckDB; tests/oracles/README.md) on a table we wrote
// and expects no problems and `rows` rows everywhere.
void ExpectOracleAgrees(const std::string& dir, std::int64_t rows) {
  if (auto why = ::geolake::testing::MissingOracle("verify_iceberg.mjs")) GTEST_SKIP() << *why;
  const std::string oracle = ::geolake::testing::OraclePath("verify_iceberg.mjs");
  const CommandResult v = RunCommand("node " + oracle + " " + dir + " --quiet");
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("\"ok\": true"), std::string::npos) << v.output;
  const std::string n = std::to_string(rows);
  EXPECT_NE(v.output.find("\"manifest_record_count_sum\": \"" + n + "\""), std::string::npos)
      << v.output;
  EXPECT_NE(v.output.find("\"icebird_rows_read\": " + n), std::string::npos) << v.output;
  EXPECT_NE(v.output.find("\"duckdb_row_count\": \"" + n + "\""), std::string::npos) << v.output;
}

// `path` is <dir>/metadata/NNNNN-<uuid>.metadata.json of `version` (as Iceberg Java and PyIceberg
// name them).
void ExpectMetadataFile(const std::string& path, const std::string& dir, std::int64_t version) {
  const std::string prefix = dir + "/metadata/";
  ASSERT_TRUE(path.starts_with(prefix)) << path;
  const std::string name = path.substr(prefix.size());
  char digits[8];
  std::snprintf(digits, sizeof(digits), "%05lld-", static_cast<long long>(version));
  EXPECT_TRUE(name.starts_with(digits)) << name;
  EXPECT_EQ(name.size(), 6 + 36 + std::string(".metadata.json").size()) << name;
  EXPECT_TRUE(name.ends_with(".metadata.json")) << name;
  EXPECT_EQ(ParseMetadataVersion(path).value(), version);
}

// The *.metadata.json files under <dir>/metadata, sorted.
// The NNNNN-<uuid>.metadata.json files under metadata/ (not their published v<N> names).
std::vector<std::string> MetadataFileNames(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/metadata")) {
    const std::string n = e.path().filename().string();
    if (n.ends_with(".metadata.json") && !n.starts_with("v")) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The versions N of the published v<N>.metadata.json names under metadata/, ascending.
std::vector<std::int64_t> PublishedVersions(const std::string& dir) {
  std::vector<std::int64_t> versions;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/metadata")) {
    const std::string n = e.path().filename().string();
    if (n.starts_with("v") && n.ends_with(".metadata.json")) {
      versions.push_back(ParseMetadataVersion(n).value());
    }
  }
  std::sort(versions.begin(), versions.end());
  return versions;
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
  ExpectMetadataFile(created.metadata_location, dir, 1);
  EXPECT_THAT(CreateTable(*catalog_, *io_, id_, Options(dir)), IsError(ErrorCode::kAlreadyExists));

  AppendFiles first(catalog_.get(), io_.get(), id_);
  first.AddFile(WriteDataFile(*io_, dir + "/data/geo_cell=03/a.parquet", 0, 100, "03"));
  first.AddFile(WriteDataFile(*io_, dir + "/data/geo_cell=12/b.parquet", 100, 50, "12"));
  ASSERT_OK_AND_ASSIGN(CommitResult r1, first.Commit());
  EXPECT_EQ(r1.attempts, 1);
  EXPECT_EQ(r1.sequence_number, 1);
  ExpectMetadataFile(r1.metadata_location, dir, 2);

  AppendFiles second(catalog_.get(), io_.get(), id_);
  second.AddFile(WriteDataFile(*io_, dir + "/data/geo_cell=03/c.parquet", 150, 7, "03"));
  ASSERT_OK_AND_ASSIGN(CommitResult r2, second.Commit());
  EXPECT_EQ(r2.sequence_number, 2);

  ASSERT_OK_AND_ASSIGN(Table t, LoadTable(*catalog_, *io_, id_));
  ExpectMetadataFile(t.metadata_location, dir, 3);
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
  // Our first attempt wrote a version-2 file (from base 1) and so did the competitor, under
  // another uuid; ours was removed after the lost CAS and the retry, based on the competitor's
  // version 2, wrote version 3.
  ExpectMetadataFile(t.metadata_location, dir, 3);
  EXPECT_EQ(MetadataFileNames(dir).size(), 3u);
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
  // Only the table's first metadata file, its published name and the hint remain under
  // metadata/: a writer that never won a swap publishes nothing.
  std::vector<std::string> names;
  ASSERT_OK_AND_ASSIGN(auto listing, io_->List(dir + "/metadata"));
  for (const auto& f : listing) {
    names.push_back(std::filesystem::path(f.path).filename().string());
  }
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 3u);
  EXPECT_TRUE(names[0].starts_with("00001-")) << names[0];
  EXPECT_EQ(names[1], "v1.metadata.json");
  EXPECT_EQ(names[2], "version-hint.text");
}

TEST_F(TransactionTest, FindsCurrentMetadataByPathLikeReaders) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  const std::string fixtures = ::geolake::testing::IcebergFixturesDir() + "/";
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

// ---- Replace, delete, properties, retention, hooks -------------------------------------------

// The live data file paths of the current snapshot, sorted.
std::vector<std::string> LivePaths(const io::FileIO& io, const TableMetadata& m) {
  std::vector<std::string> paths;
  const ScanPlan plan = PlanScan(io, m).value();
  for (const auto& e : plan.data_files) paths.push_back(e.data_file.file_path);
  std::sort(paths.begin(), paths.end());
  return paths;
}

class TransactionOpsTest : public TransactionTest {
 protected:
  // A table with a.parquet + b.parquet (one commit, one manifest) and c.parquet (a second).
  void MakeTable(const std::string& name,
                 const std::map<std::string, std::string>& properties = {}) {
    dir_ = TestDir(name);
    NewTableOptions options = Options(dir_);
    for (const auto& [k, v] : properties) options.properties[k] = v;
    ASSERT_OK(CreateTable(*catalog_, *io_, id_, options).status());
    AppendFiles ab(catalog_.get(), io_.get(), id_);
    ab.AddFile(File("a", 0, 10, "03")).AddFile(File("b", 10, 20, "12"));
    ASSERT_OK(ab.Commit().status());
    AppendFiles c(catalog_.get(), io_.get(), id_);
    c.AddFile(File("c", 30, 5, "03"));
    ASSERT_OK(c.Commit().status());
  }
  DataFile File(const std::string& name, std::int64_t first_id, std::int64_t rows,
                const std::string& cell) {
    return WriteDataFile(*io_, Path(name), first_id, rows, cell);
  }
  std::string Path(const std::string& name) const { return dir_ + "/data/" + name + ".parquet"; }
  Table Load() { return LoadTable(*catalog_, *io_, id_).value(); }

  std::string dir_;
};

TEST_F(TransactionOpsTest, ReplaceRewritesTheAffectedManifestAndSummarizes) {
  MakeTable("replace");
  const Table before = Load();
  ReplaceFiles replace(catalog_.get(), io_.get(), id_);
  replace.DeleteFile(Path("a")).AddFile(File("ab", 0, 10, "03"));
  ASSERT_OK_AND_ASSIGN(CommitResult r, replace.Commit());
  EXPECT_EQ(r.attempts, 1);
  const Table t = Load();
  const Snapshot* snap = t.metadata.current_snapshot();
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->snapshot_id, r.snapshot_id);
  EXPECT_EQ(snap->parent_snapshot_id, before.metadata.current_snapshot_id);
  const std::map<std::string, std::string> expected = {
      {"operation", "replace"},  {"added-data-files", "1"},        {"deleted-data-files", "1"},
      {"added-records", "10"},   {"deleted-records", "10"},        {"total-records", "35"},
      {"total-data-files", "3"}, {"changed-partition-count", "1"}, {"manifests-created", "2"},
      {"manifests-kept", "1"},   {"manifests-replaced", "1"},      {"total-delete-files", "0"}};
  for (const auto& [k, v] : expected) EXPECT_EQ(snap->summary.at(k), v) << k;
  const std::int64_t removed = std::stoll(snap->summary.at("removed-files-size"));
  EXPECT_EQ(removed, static_cast<std::int64_t>(io_->Stat(Path("a")).value().size_bytes));
  EXPECT_EQ(std::stoll(snap->summary.at("total-files-size")),
            std::stoll(before.metadata.current_snapshot()->summary.at("total-files-size")) -
                removed + std::stoll(snap->summary.at("added-files-size")));
  EXPECT_EQ(LivePaths(*io_, t.metadata),
            (std::vector<std::string>{Path("ab"), Path("b"), Path("c")}));

  // The rewritten manifest: a is DELETED by the new snapshot with its original sequence
  // number; b is EXISTING and keeps the numbers of the snapshot that added it.
  ASSERT_OK_AND_ASSIGN(auto manifests, ReadManifestList(*io_, snap->manifest_list));
  ASSERT_EQ(manifests.size(), 3u);
  EXPECT_EQ(manifests[0].added_files_count, 1);  // the new manifest comes first
  const ManifestFile& rewritten = manifests[1];
  EXPECT_EQ(rewritten.added_snapshot_id, r.snapshot_id);
  EXPECT_EQ(rewritten.sequence_number, r.sequence_number);
  EXPECT_EQ(rewritten.deleted_files_count, 1);
  EXPECT_EQ(rewritten.existing_files_count, 1);
  EXPECT_EQ(rewritten.min_sequence_number, 1);
  ASSERT_OK_AND_ASSIGN(auto entries, ReadManifest(*io_, rewritten));
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& e : entries) {
    if (e.data_file.file_path == Path("a")) {
      EXPECT_EQ(e.status, ManifestEntryStatus::kDeleted);
      EXPECT_EQ(e.snapshot_id, r.snapshot_id);
    } else {
      EXPECT_EQ(e.status, ManifestEntryStatus::kExisting);
      EXPECT_EQ(e.snapshot_id, before.metadata.snapshots[0].snapshot_id);
    }
    EXPECT_EQ(e.sequence_number, 1);
    EXPECT_EQ(e.file_sequence_number, 1);
  }
  ExpectOracleAgrees(dir_, 35);
}

// Files removed from two manifests: both are rewritten into one (entries keep the sequence
// numbers and snapshot ids of the commits that added them), unless the table's
// commit.manifest.target-size-bytes is smaller than the two together.
class ReplaceMergeTest : public TransactionOpsTest {
 protected:
  void Check(bool merge) {
    std::map<std::string, std::string> properties;
    if (!merge) properties["commit.manifest.target-size-bytes"] = "1";
    MakeTable(merge ? "replace_merge" : "replace_no_merge", properties);
    const Table before = Load();
    ReplaceFiles replace(catalog_.get(), io_.get(), id_);
    replace.DeleteFile(Path("a")).DeleteFile(Path("c")).AddFile(File("ac", 0, 15, "03"));
    ASSERT_OK_AND_ASSIGN(CommitResult r, replace.Commit());
    const Table t = Load();
    const Snapshot* snap = t.metadata.current_snapshot();
    ASSERT_NE(snap, nullptr);
    EXPECT_EQ(snap->summary.at("manifests-replaced"), "2");
    EXPECT_EQ(snap->summary.at("manifests-created"), merge ? "2" : "3");
    EXPECT_EQ(LivePaths(*io_, t.metadata), (std::vector<std::string>{Path("ac"), Path("b")}));
    ASSERT_OK_AND_ASSIGN(auto manifests, ReadManifestList(*io_, snap->manifest_list));
    ASSERT_EQ(manifests.size(), merge ? 2u : 3u);
    std::map<std::string, ManifestEntry> by_path;
    for (std::size_t i = 1; i < manifests.size(); ++i) {
      EXPECT_EQ(manifests[i].added_snapshot_id, r.snapshot_id);
      ASSERT_OK_AND_ASSIGN(auto entries, ReadManifest(*io_, manifests[i]));
      for (auto& e : entries) by_path[e.data_file.file_path] = e;
    }
    if (merge) {
      EXPECT_EQ(manifests[1].deleted_files_count, 2);
      EXPECT_EQ(manifests[1].existing_files_count, 1);
      EXPECT_EQ(manifests[1].min_sequence_number, 1);
    }
    ASSERT_EQ(by_path.size(), 3u);
    const auto& snapshots = before.metadata.snapshots;
    EXPECT_EQ(by_path[Path("a")].status, ManifestEntryStatus::kDeleted);
    EXPECT_EQ(by_path[Path("a")].snapshot_id, r.snapshot_id);
    EXPECT_EQ(by_path[Path("a")].sequence_number, 1);
    EXPECT_EQ(by_path[Path("b")].status, ManifestEntryStatus::kExisting);
    EXPECT_EQ(by_path[Path("b")].snapshot_id, snapshots[0].snapshot_id);
    EXPECT_EQ(by_path[Path("b")].sequence_number, 1);
    EXPECT_EQ(by_path[Path("c")].status, ManifestEntryStatus::kDeleted);
    EXPECT_EQ(by_path[Path("c")].snapshot_id, r.snapshot_id);
    EXPECT_EQ(by_path[Path("c")].sequence_number, 2);
    EXPECT_EQ(by_path[Path("c")].file_sequence_number, 2);
    ExpectOracleAgrees(dir_, 35);
  }
};

TEST_F(ReplaceMergeTest, RewrittenManifestsAreMerged) { Check(true); }

TEST_F(ReplaceMergeTest, NotMergedBeyondTheTargetSize) { Check(false); }

TEST_F(TransactionOpsTest, ManifestsWithoutLiveFilesAreNotCarriedForward) {
  MakeTable("drop_empty_manifest");
  DeleteFiles del(catalog_.get(), io_.get(), id_);
  del.DeleteFile(Path("c"));
  ASSERT_OK(del.Commit().status());
  Table t = Load();
  EXPECT_EQ(t.metadata.current_snapshot()->operation(), "delete");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("deleted-data-files"), "1");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("deleted-records"), "5");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-records"), "30");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.count("added-data-files"), 0u);
  // The deleting snapshot lists c's manifest with c DELETED (readers see what it removed) ...
  ASSERT_OK_AND_ASSIGN(auto lists,
                       ReadManifestList(*io_, t.metadata.current_snapshot()->manifest_list));
  EXPECT_EQ(lists.size(), 2u);
  EXPECT_EQ(LivePaths(*io_, t.metadata), (std::vector<std::string>{Path("a"), Path("b")}));
  // ... and the next snapshot no longer carries a manifest with nothing live in it.
  AppendFiles append(catalog_.get(), io_.get(), id_);
  append.AddFile(File("d", 40, 1, "12"));
  ASSERT_OK(append.Commit().status());
  t = Load();
  ASSERT_OK_AND_ASSIGN(lists, ReadManifestList(*io_, t.metadata.current_snapshot()->manifest_list));
  EXPECT_EQ(lists.size(), 2u);
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-data-files"), "3");
  EXPECT_EQ(LivePaths(*io_, t.metadata),
            (std::vector<std::string>{Path("a"), Path("b"), Path("d")}));
  ExpectOracleAgrees(dir_, 31);
}

TEST_F(TransactionOpsTest, ReplaceOfAFileAlreadyGoneConflictsWithoutRetry) {
  MakeTable("replace_gone");
  DeleteFiles del(catalog_.get(), io_.get(), id_);
  del.DeleteFile(Path("a"));
  ASSERT_OK(del.Commit().status());
  const std::vector<std::string> files_before = MetadataFileNames(dir_);

  RacingCatalog racing(catalog_.get());
  ReplaceFiles replace(&racing, io_.get(), id_);
  int sleeps = 0;
  replace.SetSleep([&](std::int64_t) { ++sleeps; });
  replace.DeleteFile(Path("a")).AddFile(File("a2", 0, 10, "03"));
  EXPECT_THAT(replace.Commit(), IsErrorWith(ErrorCode::kCommitConflict, "no longer in the table"));
  EXPECT_EQ(racing.commits, 0);  // validation failed before any swap
  EXPECT_EQ(sleeps, 0);
  EXPECT_EQ(MetadataFileNames(dir_), files_before);
  // The manifest written for a2 was removed again: only manifests of committed snapshots stay.
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/metadata")) {
    const std::string n = e.path().filename().string();
    if (!n.ends_with("-m0.avro")) continue;
    bool referenced = false;
    for (const auto& s : Load().metadata.snapshots) {
      // A named list: a range-for over .value() of a temporary Result would dangle.
      const std::vector<ManifestFile> list = ReadManifestList(*io_, s.manifest_list).value();
      for (const auto& mf : list) {
        referenced |= mf.manifest_path == e.path().string();
      }
    }
    EXPECT_TRUE(referenced) << n;
  }
}

TEST_F(TransactionOpsTest, ReplaceNamesEveryFileNoLongerLive) {
  MakeTable("replace_missing_all");
  DeleteFiles del(catalog_.get(), io_.get(), id_);
  del.DeleteFile(Path("a")).DeleteFile(Path("c"));
  ASSERT_OK(del.Commit().status());
  ReplaceFiles replace(catalog_.get(), io_.get(), id_);
  replace.DeleteFile(Path("a")).DeleteFile(Path("b")).DeleteFile(Path("c"));
  replace.AddFile(File("abc", 0, 35, "03"));
  EXPECT_THAT(replace.Commit(),
              IsErrorWith(ErrorCode::kCommitConflict, "and 1 more are no longer"));
  EXPECT_EQ(replace.missing_files(), (std::vector<std::string>{Path("a"), Path("c")}));
  EXPECT_EQ(LivePaths(*io_, Load().metadata), (std::vector<std::string>{Path("b")}));
}

TEST_F(TransactionOpsTest, ReplaceFailsOnDeleteFilesOnlyWhenAsked) {
  MakeTable("replace_deletes");
  // Another engine commits a position-delete file (hand-made: geolake writes none).
  {
    const Table base = Load();
    const Snapshot* parent = base.metadata.current_snapshot();
    std::vector<ManifestFile> manifests = ReadManifestList(*io_, parent->manifest_list).value();
    ManifestEntry e;
    e.data_file.content = DataFileContent::kPositionDeletes;
    e.data_file.file_path = dir_ + "/data/pos-deletes.parquet";
    e.data_file.record_count = 1;
    e.data_file.file_size_in_bytes = 100;
    e.data_file.partition = {Value(std::string("03"))};
    ManifestWriteOptions mo;
    mo.format_version = base.metadata.format_version;
    const std::int64_t snapshot_id = NewSnapshotId(base.metadata);
    mo.snapshot_id = snapshot_id;
    mo.schema = base.metadata.current_schema();
    mo.spec = base.metadata.default_spec();
    mo.content = ManifestContent::kDeletes;
    const std::string mpath = dir_ + "/metadata/deletes-m0.avro";
    EncodedManifest enc = EncodeManifest(mo, {e}, mpath).value();
    ASSERT_OK(io_->WriteAll(mpath, enc.bytes, false));
    const std::int64_t seq = base.metadata.last_sequence_number + 1;
    enc.entry.sequence_number = enc.entry.min_sequence_number = seq;
    enc.entry.added_snapshot_id = snapshot_id;
    manifests.push_back(enc.entry);
    const std::string list = dir_ + "/metadata/snap-deletes.avro";
    ASSERT_OK(io_->WriteAll(list,
                            EncodeManifestList(base.metadata.format_version, snapshot_id,
                                               parent->snapshot_id, seq, std::nullopt, manifests)
                                .value(),
                            false));
    Snapshot snap;
    snap.snapshot_id = snapshot_id;
    snap.parent_snapshot_id = parent->snapshot_id;
    snap.sequence_number = seq;
    snap.timestamp_ms = NowMillis();
    snap.manifest_list = list;
    snap.summary["operation"] = "delete";
    TableMetadataBuilder b(base.metadata, base.metadata_location);
    ASSERT_OK(b.AddSnapshot(snap));
    ASSERT_OK(b.SetBranchSnapshot(snapshot_id));
    TableMetadata next = b.Build().value();
    const std::string location = dir_ + "/metadata/" + MetadataFileName(4, NewUuid());
    ASSERT_OK(io_->WriteAll(location, next.ToJson().value(), false));
    ASSERT_OK(catalog_->CommitTable(id_, base.metadata_location, location));
  }
  ReplaceFiles strict(catalog_.get(), io_.get(), id_);
  strict.DeleteFile(Path("a")).AddFile(File("a2", 0, 10, "03")).FailOnDeleteFiles();
  EXPECT_THAT(strict.Commit(), IsErrorWith(ErrorCode::kCommitConflict, "delete files"));
  EXPECT_TRUE(strict.missing_files().empty());
  // Without the flag the replace goes through (the old behaviour, kept for other callers).
  ReplaceFiles lax(catalog_.get(), io_.get(), id_);
  lax.DeleteFile(Path("a")).AddFile(File("a3", 0, 10, "03"));
  EXPECT_OK(lax.Commit().status());
}

TEST_F(TransactionOpsTest, ReplaceIsRevalidatedAfterALostRace) {
  MakeTable("replace_race");
  RacingCatalog racing(catalog_.get());
  racing.before_commit = [&] {
    DeleteFiles other(catalog_.get(), io_.get(), id_);
    other.DeleteFile(Path("b"));
    ASSERT_OK(other.Commit().status());
  };
  ReplaceFiles replace(&racing, io_.get(), id_);
  int sleeps = 0;
  replace.SetSleep([&](std::int64_t) { ++sleeps; });
  replace.DeleteFile(Path("a")).DeleteFile(Path("b")).AddFile(File("ab", 0, 30, "03"));
  EXPECT_THAT(replace.Commit(), IsErrorWith(ErrorCode::kCommitConflict, Path("b")));
  EXPECT_EQ(racing.commits, 1);
  EXPECT_EQ(sleeps, 1);
  const Table t = Load();
  EXPECT_EQ(t.metadata.current_snapshot()->operation(), "delete");
  EXPECT_EQ(LivePaths(*io_, t.metadata), (std::vector<std::string>{Path("a"), Path("c")}));
  // Nothing of the failed replace stays under metadata/: 4 metadata files, 4 manifest lists.
  EXPECT_EQ(MetadataFileNames(dir_).size(), 4u);
  int avro = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/metadata")) {
    avro += e.path().extension() == ".avro";
  }
  // lists: 3 snapshots; manifests: ab, c, the delete's rewrite of ab.
  EXPECT_EQ(avro, 6);
}

TEST_F(TransactionOpsTest, ReplaceRetriesOverAConcurrentAppend) {
  MakeTable("replace_append_race");
  RacingCatalog racing(catalog_.get());
  racing.before_commit = [&] {
    AppendFiles other(catalog_.get(), io_.get(), id_);
    other.AddFile(File("x", 100, 3, "12"));
    ASSERT_OK(other.Commit().status());
  };
  ReplaceFiles replace(&racing, io_.get(), id_);
  replace.SetSleep([](std::int64_t) {});
  replace.DeleteFile(Path("a")).DeleteFile(Path("c")).AddFile(File("ac", 0, 15, "03"));
  ASSERT_OK_AND_ASSIGN(CommitResult r, replace.Commit());
  EXPECT_EQ(r.attempts, 2);
  const Table t = Load();
  EXPECT_EQ(LivePaths(*io_, t.metadata),
            (std::vector<std::string>{Path("ac"), Path("b"), Path("x")}));
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("total-records"), "38");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("deleted-data-files"), "2");
  ExpectOracleAgrees(dir_, 38);
}

TEST_F(TransactionOpsTest, DeleteAndReplaceRejectEmptyAndUnknownInput) {
  MakeTable("delete_input");
  DeleteFiles none(catalog_.get(), io_.get(), id_);
  EXPECT_THAT(none.Commit(), IsError(ErrorCode::kInvalidArgument));
  ReplaceFiles nothing_removed(catalog_.get(), io_.get(), id_);
  nothing_removed.AddFile(File("n", 0, 1, "03"));
  EXPECT_THAT(nothing_removed.Commit(), IsError(ErrorCode::kInvalidArgument));
  DataFile same_path = File("a_copy", 0, 1, "03");
  same_path.file_path = Path("a");
  ReplaceFiles both(catalog_.get(), io_.get(), id_);
  both.DeleteFile(Path("a")).AddFile(same_path);
  EXPECT_THAT(both.Commit(), IsErrorWith(ErrorCode::kInvalidArgument, "both added and removed"));
  DeleteFiles unknown(catalog_.get(), io_.get(), id_);
  unknown.DeleteFile(dir_ + "/data/never.parquet");
  EXPECT_THAT(unknown.Commit(), IsErrorWith(ErrorCode::kCommitConflict, "never.parquet"));
  EXPECT_EQ(Load().metadata.snapshots.size(), 2u);
}

TEST_F(TransactionOpsTest, SetPropertiesWritesNoSnapshotAndRetries) {
  MakeTable("properties");
  const Table before = Load();
  RacingCatalog racing(catalog_.get());
  racing.before_commit = [&] {
    SetProperties other(catalog_.get(), io_.get(), id_);
    other.Set("owner", "someone").Set("team", "geo");
    ASSERT_OK(other.Commit().status());
  };
  SetProperties props(&racing, io_.get(), id_);
  props.SetSleep([](std::int64_t) {});
  props.Set("owner", "me").Remove("team").Remove("absent");
  ASSERT_OK_AND_ASSIGN(CommitResult r, props.Commit());
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.snapshot_id, *before.metadata.current_snapshot_id);
  const Table t = Load();
  EXPECT_EQ(t.metadata.snapshots, before.metadata.snapshots);
  EXPECT_EQ(t.metadata.properties.at("owner"), "me");
  EXPECT_EQ(t.metadata.properties.count("team"), 0u);
  ExpectMetadataFile(t.metadata_location, dir_, 5);

  SetProperties reserved(catalog_.get(), io_.get(), id_);
  reserved.Set("format-version", "3");
  EXPECT_THAT(reserved.Commit(), IsErrorWith(ErrorCode::kInvalidArgument, "reserved"));
  SetProperties contradictory(catalog_.get(), io_.get(), id_);
  contradictory.Set("k", "v").Remove("k");
  EXPECT_THAT(contradictory.Commit(), IsErrorWith(ErrorCode::kInvalidArgument, "both set"));
}

TEST_F(TransactionOpsTest, MetadataLogIsCappedAndOldFilesKeptByDefault) {
  MakeTable("retention_keep", {{"write.metadata.previous-versions-max", "2"}});
  for (int i = 0; i < 3; ++i) {
    SetProperties p(catalog_.get(), io_.get(), id_);
    p.Set("round", std::to_string(i));
    ASSERT_OK(p.Commit().status());
  }
  const Table t = Load();
  ExpectMetadataFile(t.metadata_location, dir_, 6);
  ASSERT_EQ(t.metadata.metadata_log.size(), 2u);
  EXPECT_EQ(ParseMetadataVersion(t.metadata.metadata_log[0].metadata_file).value(), 4);
  EXPECT_EQ(ParseMetadataVersion(t.metadata.metadata_log[1].metadata_file).value(), 5);
  // delete-after-commit is off by default: every version is still on disk.
  EXPECT_EQ(MetadataFileNames(dir_).size(), 6u);
}

TEST_F(TransactionOpsTest, DeleteAfterCommitRemovesOnlyFilesThatLeftTheLog) {
  MakeTable("retention_delete", {{"write.metadata.previous-versions-max", "2"}});
  EXPECT_EQ(MetadataFileNames(dir_).size(), 3u);
  // Enabling it takes effect in the same commit (the new metadata's property decides).
  SetProperties enable(catalog_.get(), io_.get(), id_);
  enable.Set("write.metadata.delete-after-commit.enabled", "true");
  ASSERT_OK(enable.Commit().status());
  std::vector<std::string> names = MetadataFileNames(dir_);
  ASSERT_EQ(names.size(), 3u);  // version 1 left the log and was deleted, with its v1 name
  EXPECT_TRUE(names[0].starts_with("00002-")) << names[0];
  EXPECT_EQ(PublishedVersions(dir_), (std::vector<std::int64_t>{2, 3, 4}));

  // A commit that never wins the swap deletes nothing; at the swap the old files still exist.
  RacingCatalog racing(catalog_.get());
  racing.always_conflict = 100;
  AppendFiles losing(&racing, io_.get(), id_);
  losing.SetSleep([](std::int64_t) {});
  losing.AddFile(File("lost", 0, 1, "03"));
  EXPECT_THAT(losing.Commit(), IsError(ErrorCode::kCommitConflict));
  EXPECT_EQ(MetadataFileNames(dir_), names);

  AppendFiles append(catalog_.get(), io_.get(), id_);
  bool old_present_at_swap = false;
  const std::string oldest = dir_ + "/metadata/" + names[0];
  append.SetCommitHook([&](CommitPhase phase, int) {
    if (phase == CommitPhase::kBeforeSwap) old_present_at_swap = std::filesystem::exists(oldest);
  });
  append.AddFile(File("d", 50, 2, "12"));
  ASSERT_OK(append.Commit().status());
  EXPECT_TRUE(old_present_at_swap);
  EXPECT_FALSE(std::filesystem::exists(oldest));
  const Table t = Load();
  ASSERT_EQ(t.metadata.metadata_log.size(), 2u);
  for (const auto& e : t.metadata.metadata_log) {
    EXPECT_TRUE(std::filesystem::exists(e.metadata_file)) << e.metadata_file;
  }
  EXPECT_EQ(MetadataFileNames(dir_).size(), 3u);
  ASSERT_OK_AND_ASSIGN(Table by_path, LoadTableFromPath(*io_, dir_));
  EXPECT_EQ(by_path.metadata_location, t.metadata_location);
  ExpectOracleAgrees(dir_, 37);
}

// Issue 17, item 4: remove-orphans with a young cutoff deleted a file an ingest had written and
// not yet committed; the ingest then committed a snapshot referencing it and every query of the
// table failed. The commit now checks its files right before the swap: the commit fails, the
// table stays as it was.
// write.metadata.compression-codec=gzip (Iceberg's table property): every metadata file is a
// gzip stream named NNNNN-<uuid>.gz.metadata.json, published as v<N>.gz.metadata.json; loads
// by catalog and by folder gunzip it; independent readers read the table.
TEST_F(TransactionOpsTest, GzipMetadataFilesAreWrittenLoadedAndPublished) {
  MakeTable("gzip_metadata", {{"write.metadata.compression-codec", "gzip"}});
  const Table t = Load();
  EXPECT_EQ(ParseMetadataVersion(t.metadata_location).value(), 3);
  const std::string name = std::filesystem::path(t.metadata_location).filename().string();
  EXPECT_TRUE(name.starts_with("00003-") && name.ends_with(".gz.metadata.json")) << name;
  EXPECT_TRUE(IsGzipMetadataFileName(name));
  const std::string raw = io_->ReadAll(t.metadata_location).value();
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x8b);
  const std::string json = ReadMetadataFile(*io_, t.metadata_location).value();
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json, t.metadata.ToJson().value());
  // Every version is gzip, and each is published under its v<N>.gz name.
  for (std::int64_t v = 1; v <= 3; ++v) {
    EXPECT_TRUE(std::filesystem::exists(dir_ + "/metadata/" + HintedMetadataFileName(v, true)))
        << v;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/metadata/" + HintedMetadataFileName(v))) << v;
  }
  EXPECT_EQ(io_->ReadAll(dir_ + "/metadata/version-hint.text").value(), "3");
  EXPECT_EQ(FindCurrentMetadataFile(*io_, dir_).value(), t.metadata_location);
  ASSERT_OK_AND_ASSIGN(const Table by_path, LoadTableFromPath(*io_, dir_));
  EXPECT_EQ(by_path.metadata.current_snapshot_id, t.metadata.current_snapshot_id);
  ExpectOracleAgrees(dir_, 35);

  // Switching back to uncompressed files mid-life: the next file is plain, and with
  // delete-after-commit the gzip files that left the log go with their published names.
  SetProperties plain(catalog_.get(), io_.get(), id_);
  plain.Set("write.metadata.compression-codec", "none")
      .Set("write.metadata.delete-after-commit.enabled", "true")
      .Set("write.metadata.previous-versions-max", "1");
  ASSERT_OK(plain.Commit().status());
  const Table after = Load();
  EXPECT_FALSE(IsGzipMetadataFileName(after.metadata_location)) << after.metadata_location;
  EXPECT_EQ(io_->ReadAll(after.metadata_location).value().front(), '{');
  ASSERT_EQ(after.metadata.metadata_log.size(), 1u);
  EXPECT_EQ(after.metadata.metadata_log[0].metadata_file, t.metadata_location);
  EXPECT_TRUE(std::filesystem::exists(t.metadata_location));
  for (std::int64_t v : {1, 2}) {
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/metadata/" + HintedMetadataFileName(v, true)))
        << v;
  }
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/metadata/" + HintedMetadataFileName(3, true)));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/metadata/" + HintedMetadataFileName(4)));
  EXPECT_EQ(FindCurrentMetadataFile(*io_, dir_).value(), after.metadata_location);
  ExpectOracleAgrees(dir_, 35);
}

TEST_F(TransactionTest, MetadataCodecsOtherThanNoneAndGzipAreRefused) {
  const std::string dir = TestDir("zstd_metadata");
  NewTableOptions options = Options(dir);
  options.properties["write.metadata.compression-codec"] = "zstd";
  EXPECT_THAT(CreateTable(*catalog_, *io_, id_, options),
              IsErrorWith(ErrorCode::kInvalidArgument, "accept only 'none' and 'gzip'"));
  EXPECT_THAT(LoadTable(*catalog_, *io_, id_), IsError(ErrorCode::kNotFound));

  options.properties["write.metadata.compression-codec"] = "GZIP";  // any case, as Java
  ASSERT_OK_AND_ASSIGN(const Table t, CreateTable(*catalog_, *io_, id_, options));
  EXPECT_TRUE(IsGzipMetadataFileName(t.metadata_location)) << t.metadata_location;
  for (const char* codec : {"zstd", "snappy", ""}) {
    SetProperties set(catalog_.get(), io_.get(), id_);
    set.Set("write.metadata.compression-codec", codec);
    EXPECT_THAT(set.Commit(), IsErrorWith(ErrorCode::kInvalidArgument, "'none' and 'gzip'"))
        << codec;
  }
  EXPECT_EQ(LoadTable(*catalog_, *io_, id_).value().metadata_location, t.metadata_location);
}

TEST_F(TransactionTest, ABrokenGzipMetadataFileIsCorruptDataNamingIt) {
  const std::string dir = TestDir("broken_gzip_metadata");
  NewTableOptions options = Options(dir);
  options.properties["write.metadata.compression-codec"] = "gzip";
  ASSERT_OK_AND_ASSIGN(const Table t, CreateTable(*catalog_, *io_, id_, options));
  const std::string raw = io_->ReadAll(t.metadata_location).value();
  // Truncated, then with a flipped byte in the deflate data (the CRC32 trailer catches it).
  ASSERT_OK(io_->WriteAll(t.metadata_location, raw.substr(0, raw.size() / 2), true));
  EXPECT_THAT(LoadTable(*catalog_, *io_, id_),
              IsErrorWith(ErrorCode::kCorruptData, t.metadata_location));
  std::string flipped = raw;
  flipped[raw.size() / 2] = static_cast<char>(flipped[raw.size() / 2] ^ 0x10);
  ASSERT_OK(io_->WriteAll(t.metadata_location, flipped, true));
  EXPECT_THAT(LoadTable(*catalog_, *io_, id_),
              IsErrorWith(ErrorCode::kCorruptData, t.metadata_location));
  ASSERT_OK(io_->WriteAll(t.metadata_location, raw, true));
  EXPECT_OK(LoadTable(*catalog_, *io_, id_).status());
}

TEST_F(TransactionOpsTest, AFileRemovedBeforeTheSwapFailsTheCommitNotTheTable) {
  MakeTable("vanished");
  const Table before = Load();
  AppendFiles append(catalog_.get(), io_.get(), id_);
  append.AddFile(File("kept", 100, 3, "03")).AddFile(File("gone", 200, 4, "12"));
  append.SetCommitHook([&](CommitPhase phase, int) {
    if (phase == CommitPhase::kBeforeSwap) {
      ASSERT_OK(io_->Delete(Path("gone")));
    }
  });
  EXPECT_THAT(append.Commit(), IsErrorWith(ErrorCode::kNotFound, Path("gone")));
  const Table after = Load();
  EXPECT_EQ(after.metadata_location, before.metadata_location);
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, PlanScan(*io_, after.metadata));
  EXPECT_EQ(plan.DataRecordCount(), 35);
  for (const ManifestEntry& e : plan.data_files) {
    EXPECT_TRUE(std::filesystem::exists(e.data_file.file_path)) << e.data_file.file_path;
  }
  // What the failed commit wrote (its manifest, list and metadata) is gone again.
  EXPECT_EQ(MetadataFileNames(dir_).size(), 3u);
}

// The validation runs on every attempt against the base that attempt swaps from: a commit that
// wins meanwhile is seen by the retry.
TEST_F(TransactionOpsTest, ValidationRunsOnEveryAttemptAgainstItsBase) {
  MakeTable("validation");
  RacingCatalog racing(catalog_.get());
  racing.before_commit = [&] {
    AppendFiles other(catalog_.get(), io_.get(), id_);
    other.SetSummary("marker", "other run");
    other.AddFile(File("other", 300, 2, "03"));
    ASSERT_OK(other.Commit().status());
  };
  std::vector<std::string> seen;  // the marker of each attempt's base snapshot
  AppendFiles append(&racing, io_.get(), id_);
  append.SetSleep([](std::int64_t) {});
  append.AddFile(File("mine", 400, 1, "03"));
  append.SetValidation([&](const Table& base) -> Status {
    const Snapshot* s = base.metadata.current_snapshot();
    const auto it = s->summary.find("marker");
    seen.push_back(it == s->summary.end() ? "-" : it->second);
    if (seen.back() == "other run") return Status::CommitConflict("the other run was first");
    return Status::OK();
  });
  EXPECT_THAT(append.Commit(), IsErrorWith(ErrorCode::kCommitConflict, "the other run was first"));
  EXPECT_EQ(seen, (std::vector<std::string>{"-", "other run"}));
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, PlanScan(*io_, Load().metadata));
  EXPECT_EQ(plan.DataRecordCount(), 37);  // 35 + the other run's 2, not mine
}

TEST_F(TransactionOpsTest, CommitHookSeesEveryPhaseOfEveryAttempt) {
  MakeTable("hook");
  RacingCatalog racing(catalog_.get());
  racing.always_conflict = 1;
  AppendFiles append(&racing, io_.get(), id_);
  append.SetSleep([](std::int64_t) {});
  std::vector<std::string> seen;
  append.SetCommitHook([&](CommitPhase phase, int attempt) {
    seen.push_back(std::string(CommitPhaseName(phase)) + "/" + std::to_string(attempt));
  });
  append.AddFile(File("h", 0, 1, "03"));
  ASSERT_OK(append.Commit().status());
  EXPECT_EQ(seen, (std::vector<std::string>{"manifest-written/1", "manifest-list-written/1",
                                            "metadata-written/1", "before-swap/1",
                                            "manifest-list-written/2", "metadata-written/2",
                                            "before-swap/2", "after-swap/2"}));
  for (CommitPhase p :
       {CommitPhase::kManifestWritten, CommitPhase::kManifestListWritten,
        CommitPhase::kMetadataWritten, CommitPhase::kBeforeSwap, CommitPhase::kAfterSwap}) {
    EXPECT_EQ(ParseCommitPhase(CommitPhaseName(p)).value(), p);
  }
  EXPECT_THAT(ParseCommitPhase("during-lunch"),
              IsErrorWith(ErrorCode::kInvalidArgument, "before-swap"));
}

TEST_F(TransactionTest, LegacyVersionNamedTablesStillLoadAndCommit) {
  const std::string dir = TestDir("legacy");
  ASSERT_OK_AND_ASSIGN(TableMetadata m, NewTableMetadata(Options(dir)));
  const std::string legacy = dir + "/metadata/v1.metadata.json";
  ASSERT_OK(io_->WriteAll(legacy, m.ToJson().value(), false));
  ASSERT_OK(io_->WriteAll(dir + "/metadata/version-hint.text", "1", false));
  ASSERT_OK(catalog_->CreateTable(id_, legacy));
  EXPECT_EQ(FindCurrentMetadataFile(*io_, dir).value(), legacy);
  AppendFiles append(catalog_.get(), io_.get(), id_);
  append.AddFile(WriteDataFile(*io_, dir + "/data/a.parquet", 0, 4, "03"));
  ASSERT_OK_AND_ASSIGN(CommitResult r, append.Commit());
  ExpectMetadataFile(r.metadata_location, dir, 2);
  EXPECT_EQ(r.metadata.metadata_log.back().metadata_file, legacy);
  EXPECT_EQ(io_->ReadAll(dir + "/metadata/version-hint.text").value(), "2");
  EXPECT_EQ(FindCurrentMetadataFile(*io_, dir).value(), r.metadata_location);
  ExpectOracleAgrees(dir, 4);
}

TEST_F(TransactionTest, HintedVersionWithAnOrphanOfTheSameVersionPicksTheNewest) {
  const std::string dir = TestDir("orphan_version");
  ASSERT_OK(CreateTable(*catalog_, *io_, id_, Options(dir)).status());
  // A killed writer left a version-2 file that never became current ...
  const std::string orphan = dir + "/metadata/" + MetadataFileName(2, NewUuid());
  ASSERT_OK(io_->WriteAll(orphan, "{}", false));
  std::filesystem::last_write_time(
      orphan, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  // ... then the real version 2 was committed and hinted.
  AppendFiles append(catalog_.get(), io_.get(), id_);
  append.AddFile(WriteDataFile(*io_, dir + "/data/a.parquet", 0, 4, "03"));
  ASSERT_OK_AND_ASSIGN(CommitResult r, append.Commit());
  EXPECT_EQ(FindCurrentMetadataFile(*io_, dir).value(), r.metadata_location);
  // A hint never goes backwards past a published version (as a concurrent winner of a later
  // version leaves it: its v<N> exists).
  ASSERT_OK(io_->WriteAll(dir + "/metadata/v7.metadata.json", "{}", false));
  ASSERT_OK(io_->WriteAll(dir + "/metadata/version-hint.text", "7", true));
  AppendFiles again(catalog_.get(), io_.get(), id_);
  again.AddFile(WriteDataFile(*io_, dir + "/data/b.parquet", 4, 4, "03"));
  ASSERT_OK(again.Commit().status());
  EXPECT_EQ(io_->ReadAll(dir + "/metadata/version-hint.text").value(), "7");
}

TEST_F(TransactionTest, PublishesEachCommittedVersionForPathBasedReaders) {
  const std::string dir = TestDir("published");
  ASSERT_OK(CreateTable(*catalog_, *io_, id_, Options(dir)).status());
  for (int i = 0; i < 2; ++i) {
    AppendFiles append(catalog_.get(), io_.get(), id_);
    append.AddFile(
        WriteDataFile(*io_, dir + "/data/p" + std::to_string(i) + ".parquet", 10 * i, 10, "03"));
    ASSERT_OK(append.Commit().status());
  }
  // A writer that loses every swap publishes nothing.
  RacingCatalog racing(catalog_.get());
  racing.always_conflict = 100;
  AppendFiles losing(&racing, io_.get(), id_);
  losing.SetSleep([](std::int64_t) {});
  losing.AddFile(WriteDataFile(*io_, dir + "/data/lost.parquet", 0, 1, "03"));
  EXPECT_THAT(losing.Commit(), IsError(ErrorCode::kCommitConflict));

  ASSERT_OK_AND_ASSIGN(const Table t, LoadTable(*catalog_, *io_, id_));
  ExpectMetadataFile(t.metadata_location, dir, 3);
  EXPECT_EQ(PublishedVersions(dir), (std::vector<std::int64_t>{1, 2, 3}));
  // v3 is the current file under a second name (a hard link: one inode), and the hint says 3.
  const std::string v3 = dir + "/metadata/v3.metadata.json";
  EXPECT_EQ(io_->ReadAll(v3).value(), io_->ReadAll(t.metadata_location).value());
  EXPECT_TRUE(std::filesystem::equivalent(v3, t.metadata_location));
  EXPECT_EQ(io_->ReadAll(dir + "/metadata/version-hint.text").value(), "3");
  // A reader that knows only the folder finds the current version, under the catalog's name.
  EXPECT_EQ(FindCurrentMetadataFile(*io_, dir).value(), t.metadata_location);
  ExpectOracleAgrees(dir, 20);

  // A v4 name left by an earlier table at this location is never replaced, and never hinted.
  ASSERT_OK(io_->WriteAll(dir + "/metadata/v4.metadata.json", "{\"stale\": true}", false));
  AppendFiles next(catalog_.get(), io_.get(), id_);
  next.AddFile(WriteDataFile(*io_, dir + "/data/p2.parquet", 20, 5, "03"));
  ASSERT_OK(next.Commit().status());
  EXPECT_EQ(io_->ReadAll(dir + "/metadata/v4.metadata.json").value(), "{\"stale\": true}");
  EXPECT_EQ(io_->ReadAll(dir + "/metadata/version-hint.text").value(), "3");
  // The next commit publishes and hints again.
  AppendFiles after(catalog_.get(), io_.get(), id_);
  after.AddFile(WriteDataFile(*io_, dir + "/data/p3.parquet", 25, 5, "03"));
  ASSERT_OK(after.Commit().status());
  EXPECT_EQ(io_->ReadAll(dir + "/metadata/version-hint.text").value(), "5");
  EXPECT_EQ(FindCurrentMetadataFile(*io_, dir).value(),
            LoadTable(*catalog_, *io_, id_).value().metadata_location);
}

TEST_F(TransactionTest, HintThatIsNoVersionFallsBackToTheHighestVersion) {
  const std::string dir = TestDir("bad_hint");
  ASSERT_OK(CreateTable(*catalog_, *io_, id_, Options(dir)).status());
  AppendFiles append(catalog_.get(), io_.get(), id_);
  append.AddFile(WriteDataFile(*io_, dir + "/data/a.parquet", 0, 4, "03"));
  ASSERT_OK(append.Commit().status());
  for (const char* hint : {"99999999999999999999999", "-3", "7x", ""}) {
    ASSERT_OK(io_->WriteAll(dir + "/metadata/version-hint.text", hint, true));
    ASSERT_OK_AND_ASSIGN(std::string found, FindCurrentMetadataFile(*io_, dir));
    EXPECT_EQ(ParseMetadataVersion(found).value(), 2) << "hint '" << hint << "': " << found;
  }
  // A hint past every version (no v9 file) does not stick: the next commit hints its own
  // version, so path-based readers find the table again. A newer hint whose v<N> exists (a
  // concurrent winner published first) is kept; PublishesEachCommittedVersion... covers that.
  ASSERT_OK(io_->WriteAll(dir + "/metadata/version-hint.text", "9", true));
  AppendFiles next(catalog_.get(), io_.get(), id_);
  next.AddFile(WriteDataFile(*io_, dir + "/data/b.parquet", 4, 4, "03"));
  ASSERT_OK(next.Commit().status());
  EXPECT_EQ(io_->ReadAll(dir + "/metadata/version-hint.text").value(), "3");
}

}  // namespace
}  // namespace geolake::table
