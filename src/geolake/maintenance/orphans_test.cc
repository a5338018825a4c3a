#include "geolake/maintenance/orphans.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "geolake/formats/parquet/file_writer.h"
#include "geolake/pipeline/run_journal.h"
#include "geolake/table/catalog.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/scan.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::maintenance {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using std::chrono::hours;
using std::chrono::milliseconds;

table::SchemaPtr TableSchema() {
  return std::make_shared<const table::Schema>(
      0, std::vector<table::NestedField>{
             table::NestedField::Required(1, "id", table::Type::Long()),
             table::NestedField::Optional(2, "geo_cell", table::Type::String())});
}

// A table with two append snapshots (three metadata files, two manifests, three data files in
// two partitions) in a warehouse of its own, plus the catalog that knows it.
class OrphansTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    warehouse_ = ::geolake::testing::BuildDir() + "/maintenance_orphans_test/" + info->name();
    fs::remove_all(warehouse_);
    fs::create_directories(warehouse_);
    location_ = warehouse_ + "/ns/t";
    id_ = table::TableIdentifier::Parse("ns.t").value();
    ASSERT_OK(table::EnsureNamespace(*catalog_, id_.ns));
    table::NewTableOptions o;
    o.location = location_;
    o.schema = TableSchema();
    o.spec = std::make_shared<const table::PartitionSpec>(
        0,
        std::vector<table::PartitionField>{{2, {}, 0, "geo_cell", table::Transform::Identity()}});
    ASSERT_OK(table::CreateTable(*catalog_, *io_, id_, o).status());
    Append({{"a", 0, 10}, {"b", 10, 5}});
    Append({{"a", 100, 7}});
  }

  struct Part {
    std::string cell;
    std::int64_t first_id;
    std::int64_t rows;
  };

  void Append(const std::vector<Part>& parts) {
    table::AppendFiles append(catalog_.get(), io_.get(), id_);
    for (const Part& p : parts) append.AddFile(WriteDataFile(p));
    ASSERT_OK(append.Commit().status());
  }

  table::DataFile WriteDataFile(const Part& part) {
    parquet::LogicalType string_type;
    string_type.kind = parquet::LogicalType::Kind::kString;
    auto schema = parquet::Schema::Make(
                      {parquet::Field::Leaf("id", parquet::PhysicalType::kInt64,
                                            parquet::Repetition::kRequired, 1),
                       parquet::Field::Leaf("geo_cell", parquet::PhysicalType::kByteArray,
                                            parquet::Repetition::kOptional, 2, string_type)})
                      .value();
    const std::string path =
        location_ + "/data/geo_cell=" + part.cell + "/" + table::NewUuid() + ".parquet";
    auto out = io_->OpenWrite(path, /*overwrite=*/false).value();
    auto writer = parquet::FileWriter::Open(out.get(), schema).value();
    parquet::Batch batch = parquet::Batch::ForSchema(schema);
    for (std::int64_t i = 0; i < part.rows; ++i) {
      batch.columns[0].AppendInt64(part.first_id + i);
      batch.columns[1].AppendBytes(part.cell);
    }
    batch.num_rows = part.rows;
    EXPECT_OK(writer->WriteBatch(batch));
    parquet::FileMetaData md = writer->Close().value();
    EXPECT_OK(out->Close());
    const auto size = static_cast<std::int64_t>(io_->Stat(path).value().size_bytes);
    return table::DataFileFromParquet(md, path, size, *table::AssignFreshIds(*TableSchema()).schema,
                                      {table::Value(part.cell)})
        .value();
  }

  table::Table Load() { return table::LoadTable(*catalog_, *io_, id_).value(); }

  std::set<std::string> ListAll() {
    std::set<std::string> out;
    for (const char* sub : {"/data", "/metadata"}) {
      const std::vector<io::FileInfo> files = io_->List(location_ + sub).value();
      for (const io::FileInfo& f : files) out.insert(f.path);
    }
    return out;
  }

  std::string Stray(const std::string& relative) {
    const std::string path = location_ + "/" + relative;
    EXPECT_OK(io_->WriteAll(path, "not referenced by anything", /*overwrite=*/true));
    return path;
  }

  OrphanOptions Options(std::chrono::milliseconds age, std::int64_t shift_ms = 0) {
    OrphanOptions o;
    o.warehouse = warehouse_;
    o.older_than = age;
    o.now_ms = table::NowMillis() + shift_ms;
    o.no_running_writers = true;  // the test is the only writer
    return o;
  }

  std::unique_ptr<table::Catalog> catalog_ = table::MakeInMemoryCatalog();
  std::unique_ptr<io::FileIO> io_ = io::MakeLocalFileIO();
  std::string warehouse_;
  std::string location_;
  table::TableIdentifier id_;
};

TEST_F(OrphansTest, ReferencedSetCoversEveryKindOfTableFile) {
  const table::Table t = Load();
  ASSERT_OK_AND_ASSIGN(auto referenced, ReferencedFiles(*io_, t.metadata, t.metadata_location));
  const std::set<std::string> all = ListAll();
  // Everything on disk is referenced: 3 data files, 2 manifests, 2 manifest lists, 3 metadata
  // files, their 3 published v<N> names and the version hint.
  EXPECT_EQ(all.size(), 14u);
  int data = 0, manifests = 0, lists = 0, metadata = 0, hint = 0;
  for (const std::string& path : all) {
    EXPECT_TRUE(referenced.contains(path)) << path;
    const std::string name = fs::path(path).filename().string();
    if (name.ends_with(".parquet")) ++data;
    if (name.starts_with("snap-")) {
      ++lists;
    } else if (name.ends_with(".avro")) {
      ++manifests;
    }
    if (name.ends_with(".metadata.json")) ++metadata;
    if (name == "version-hint.text") ++hint;
  }
  EXPECT_EQ(data, 3);
  EXPECT_EQ(manifests, 2);
  EXPECT_EQ(lists, 2);
  EXPECT_EQ(metadata, 6);
  EXPECT_EQ(hint, 1);
}

TEST_F(OrphansTest, KeepsEveryReferencedFileEvenWithZeroAge) {
  const std::set<std::string> before = ListAll();
  const table::Table t = Load();
  ASSERT_OK_AND_ASSIGN(OrphanReport r,
                       RemoveOrphanFiles(*catalog_, *io_, t, Options(milliseconds(0), 3600000)));
  EXPECT_TRUE(r.removed.empty());
  EXPECT_EQ(r.files_listed, 14);
  EXPECT_EQ(r.files_referenced, 14);
  EXPECT_EQ(ListAll(), before);
}

TEST_F(OrphansTest, RemovesUnreferencedAndTempFilesOnlyPastTheThreshold) {
  const std::set<std::string> live = ListAll();
  const std::string stray_data = Stray("data/geo_cell=a/stray.parquet");
  const std::string stray_manifest = Stray("metadata/0000-stray-m0.avro");
  const std::string stray_metadata = Stray("metadata/v9.metadata.json.bak");
  const std::string temp = Stray("data/geo_cell=b/.x.parquet.123.geolake-tmp");
  const table::Table t = Load();

  // Now: everything is younger than one hour, so nothing goes.
  ASSERT_OK_AND_ASSIGN(OrphanReport young,
                       RemoveOrphanFiles(*catalog_, *io_, t, Options(hours(1))));
  EXPECT_TRUE(young.removed.empty());
  EXPECT_EQ(young.files_too_new, 4);
  EXPECT_TRUE(fs::exists(stray_data));

  // Two hours later, the four strays are old enough; the live files are not touched.
  ASSERT_OK_AND_ASSIGN(OrphanReport old,
                       RemoveOrphanFiles(*catalog_, *io_, t, Options(hours(1), 2 * 3600000)));
  ASSERT_EQ(old.removed.size(), 4u);
  std::set<std::string> removed;
  int temps = 0;
  for (const OrphanFile& f : old.removed) {
    removed.insert(f.path);
    temps += f.temp_file ? 1 : 0;
  }
  EXPECT_EQ(removed, (std::set<std::string>{stray_data, stray_manifest, stray_metadata, temp}));
  EXPECT_EQ(temps, 1);
  EXPECT_EQ(old.removed_bytes, 4 * static_cast<std::int64_t>(26));
  EXPECT_EQ(ListAll(), live);
  // The table still plans and counts every row.
  ASSERT_OK_AND_ASSIGN(table::ScanPlan plan, table::PlanScan(*io_, Load().metadata));
  EXPECT_EQ(plan.DataRecordCount(), 22);
}

TEST_F(OrphansTest, RefusesACutoffUnderAnHourUnlessToldNothingWrites) {
  const std::string stray = Stray("data/geo_cell=a/stray.parquet");
  const table::Table t = Load();
  OrphanOptions o = Options(milliseconds(59 * 60000), 2 * 3600000);
  o.no_running_writers = false;
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, t, o),
              IsErrorWith(ErrorCode::kInvalidArgument, "--no-running-writers"));
  EXPECT_TRUE(fs::exists(stray));
  // A dry run may look with any cutoff; it deletes nothing.
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(OrphanReport listed, RemoveOrphanFiles(*catalog_, *io_, t, o));
  EXPECT_EQ(listed.removed.size(), 1u);
  EXPECT_TRUE(fs::exists(stray));
  // One hour is allowed without the statement; so is a shorter cutoff with it.
  o.dry_run = false;
  o.older_than = hours(1);
  ASSERT_OK_AND_ASSIGN(OrphanReport hour, RemoveOrphanFiles(*catalog_, *io_, t, o));
  EXPECT_EQ(hour.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(stray));
  const std::string second = Stray("data/geo_cell=a/stray2.parquet");
  o.older_than = milliseconds(0);
  o.no_running_writers = true;
  ASSERT_OK_AND_ASSIGN(OrphanReport zero, RemoveOrphanFiles(*catalog_, *io_, t, o));
  EXPECT_EQ(zero.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(second));
}

TEST_F(OrphansTest, DryRunListsButDeletesNothing) {
  const std::string stray = Stray("data/geo_cell=a/stray.parquet");
  const table::Table t = Load();
  OrphanOptions o = Options(milliseconds(0), 1000);
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(OrphanReport r, RemoveOrphanFiles(*catalog_, *io_, t, o));
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_EQ(r.removed[0].path, stray);
  EXPECT_TRUE(r.dry_run);
  EXPECT_TRUE(fs::exists(stray));
}

TEST_F(OrphansTest, CorruptOrMissingManifestDeletesNothing) {
  const std::string stray = Stray("data/geo_cell=a/stray.parquet");
  const table::Table t = Load();
  ASSERT_OK_AND_ASSIGN(table::ScanPlan plan, table::PlanScan(*io_, t.metadata));
  ASSERT_FALSE(plan.manifests.empty());
  const std::string manifest = plan.manifests[0].manifest_path;
  const std::string original = io_->ReadAll(manifest).value();

  ASSERT_OK(io_->WriteAll(manifest, "Obj\x01 garbage", /*overwrite=*/true));
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, t, Options(milliseconds(0), 1000)),
              IsErrorWith(ErrorCode::kCorruptData, manifest));
  EXPECT_TRUE(fs::exists(stray));

  ASSERT_OK(io_->Delete(manifest));
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, t, Options(milliseconds(0), 1000)),
              IsErrorWith(ErrorCode::kCorruptData, manifest));
  EXPECT_TRUE(fs::exists(stray));

  ASSERT_OK(io_->WriteAll(manifest, original, /*overwrite=*/true));
  const std::string list = t.metadata.current_snapshot()->manifest_list;
  ASSERT_OK(io_->Delete(list));
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, t, Options(milliseconds(0), 1000)),
              IsErrorWith(ErrorCode::kCorruptData, list));
  EXPECT_TRUE(fs::exists(stray));
}

TEST_F(OrphansTest, RefusesLocationsOutsideTheWarehouse) {
  const std::string stray = Stray("data/geo_cell=a/stray.parquet");
  table::Table t = Load();
  OrphanOptions o = Options(milliseconds(0), 1000);
  o.warehouse = warehouse_ + "/elsewhere";
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, t, o),
              IsErrorWith(ErrorCode::kInvalidArgument, "below the warehouse"));
  o.warehouse = location_;  // the table location itself is not "below" it
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, t, o), IsError(ErrorCode::kInvalidArgument));
  o.warehouse = "";
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, t, o), IsError(ErrorCode::kInvalidArgument));
  o.warehouse = warehouse_;
  table::TableMetadata remote = t.metadata;
  remote.location = "s3://bucket/ns/t";
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, table::Table{id_, t.metadata_location, remote}, o),
              IsError(ErrorCode::kInvalidArgument));
  // A sibling whose name only starts like the warehouse is outside it.
  remote.location = warehouse_ + "-other/ns/t";
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, table::Table{id_, t.metadata_location, remote}, o),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(fs::exists(stray));
  // The accepted `file:` form of the same location works.
  table::TableMetadata uri = t.metadata;
  uri.location = "file://" + location_;
  ASSERT_OK_AND_ASSIGN(
      OrphanReport r,
      RemoveOrphanFiles(*catalog_, *io_, table::Table{id_, t.metadata_location, uri}, o));
  EXPECT_EQ(r.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(stray));
}

// A table registered the way a catalog written before locations were kept apart could hold it
// (table/location.h refuses this today): its first metadata file under `location`, the catalog
// entry made directly.
void RegisterLegacyTable(table::Catalog& catalog, const io::FileIO& io,
                         const table::TableIdentifier& id, const std::string& location) {
  table::NewTableOptions o;
  o.location = location;
  o.schema = TableSchema();
  o.spec = std::make_shared<const table::PartitionSpec>(
      0, std::vector<table::PartitionField>{{2, {}, 0, "geo_cell", table::Transform::Identity()}});
  const table::TableMetadata m = table::NewTableMetadata(o).value();
  const std::string path = location + "/metadata/00001-" + table::NewUuid() + ".metadata.json";
  ASSERT_OK(io.WriteAll(path, m.ToJson().value(), /*overwrite=*/false));
  ASSERT_OK(table::EnsureNamespace(catalog, id.ns));
  ASSERT_OK(catalog.CreateTable(id, path));
}

// Issue 17, item 1: `a.b.c` and `a/b.c` were one folder, and remove-orphans on one deleted the
// other's data (3,287 rows). Each table's remove-orphans now keeps what the other references.
TEST_F(OrphansTest, KeepsTheFilesOfAnotherTableSharingTheLocation) {
  const table::TableIdentifier twin = table::TableIdentifier::Parse("old.twin").value();
  RegisterLegacyTable(*catalog_, *io_, twin, location_);
  {
    table::AppendFiles append(catalog_.get(), io_.get(), twin);
    append.AddFile(WriteDataFile({"z", 500, 9}));
    ASSERT_OK(append.Commit().status());
  }
  const std::set<std::string> live = ListAll();
  const std::string stray = Stray("data/geo_cell=a/stray.parquet");

  ASSERT_OK_AND_ASSIGN(OrphanReport r,
                       RemoveOrphanFiles(*catalog_, *io_, Load(), Options(milliseconds(0), 1000)));
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_EQ(r.removed[0].path, stray);
  EXPECT_GT(r.files_other_tables, 0);
  EXPECT_EQ(ListAll(), live);

  const table::Table twin_table = table::LoadTable(*catalog_, *io_, twin).value();
  ASSERT_OK_AND_ASSIGN(OrphanReport r2, RemoveOrphanFiles(*catalog_, *io_, twin_table,
                                                          Options(milliseconds(0), 1000)));
  EXPECT_TRUE(r2.removed.empty());
  EXPECT_EQ(ListAll(), live);
  ASSERT_OK_AND_ASSIGN(table::ScanPlan plan, table::PlanScan(*io_, Load().metadata));
  EXPECT_EQ(plan.DataRecordCount(), 22);
  ASSERT_OK_AND_ASSIGN(plan, table::PlanScan(*io_, twin_table.metadata));
  EXPECT_EQ(plan.DataRecordCount(), 9);
}

// `ns.t.data` (namespace ns.t) had the folder <ns/t>/data: inside ns.t's data folder.
TEST_F(OrphansTest, LeavesATableNestedInsideTheLocationAlone) {
  const table::TableIdentifier inner = table::TableIdentifier::Parse("ns.t.data").value();
  RegisterLegacyTable(*catalog_, *io_, inner, location_ + "/data");
  const std::string inner_stray = location_ + "/data/data/geo_cell=q/unreferenced.parquet";
  ASSERT_OK(io_->WriteAll(inner_stray, "the inner table's business", false));
  // Everything under data/ is now the inner table's folder too, so only metadata/ is judged.
  const std::string data_stray = Stray("data/geo_cell=a/stray.parquet");
  const std::string stray = Stray("metadata/0000-stray-m0.avro");

  ASSERT_OK_AND_ASSIGN(OrphanReport r,
                       RemoveOrphanFiles(*catalog_, *io_, Load(), Options(milliseconds(0), 1000)));
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_EQ(r.removed[0].path, stray);
  EXPECT_EQ(r.files_other_tables, 3);  // the inner table's metadata file and both data strays
  EXPECT_TRUE(fs::exists(inner_stray));
  EXPECT_TRUE(fs::exists(data_stray));
}

TEST_F(OrphansTest, ASharingTableWhoseMetadataCannotBeReadStopsTheRun) {
  const table::TableIdentifier twin = table::TableIdentifier::Parse("old.twin").value();
  RegisterLegacyTable(*catalog_, *io_, twin, location_);
  ASSERT_OK(io_->WriteAll(catalog_->LoadTable(twin).value(), "{not json", /*overwrite=*/true));
  const std::string stray = Stray("data/geo_cell=a/stray.parquet");
  EXPECT_THAT(RemoveOrphanFiles(*catalog_, *io_, Load(), Options(milliseconds(0), 1000)),
              IsErrorWith(ErrorCode::kCorruptData, "old.twin"));
  EXPECT_TRUE(fs::exists(stray));
}

// Issue 17, item 4: remove-orphans with a young cutoff deleted files a running ingest had
// written and not yet committed. A live run (its process holds the run's lock) protects the
// files its journal lists and every file modified since it started.
TEST_F(OrphansTest, KeepsTheFilesOfARunningIngestOfTheTable) {
  const std::string journaled = Stray("data/geo_cell=a/written-not-committed.parquet");
  // Older than the run: protected only because the journal lists it.
  fs::last_write_time(journaled, fs::last_write_time(journaled) - hours(1));
  ASSERT_OK_AND_ASSIGN(
      auto run, pipeline::RunJournal::Open(
                    io_.get(), pipeline::RunDirectory(warehouse_, "run-live"), "run-live", "ns.t"));
  pipeline::JournalEntry entry;
  entry.path = journaled;
  entry.source = "src";
  ASSERT_OK(run->FilesWritten({entry}));
  const std::string in_progress = Stray("data/geo_cell=b/.y.parquet.7.geolake-tmp");
  // A run of another table protects nothing here.
  ASSERT_OK_AND_ASSIGN(auto elsewhere, pipeline::RunJournal::Open(
                                           io_.get(), pipeline::RunDirectory(warehouse_, "run-x"),
                                           "run-x", "ns.other"));

  ASSERT_OK_AND_ASSIGN(std::vector<pipeline::LiveRun> live,
                       pipeline::ListLiveRuns(io_.get(), warehouse_, "ns.t"));
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].run_id, "run-live");
  EXPECT_EQ(live[0].uncommitted_files, std::vector<std::string>{journaled});

  ASSERT_OK_AND_ASSIGN(OrphanReport r,
                       RemoveOrphanFiles(*catalog_, *io_, Load(), Options(milliseconds(0), 1000)));
  EXPECT_TRUE(r.removed.empty());
  EXPECT_EQ(r.files_in_flight, 2);
  EXPECT_TRUE(fs::exists(journaled));
  EXPECT_TRUE(fs::exists(in_progress));

  // Once the run has finished (or died: the kernel drops its lock), they are orphans.
  ASSERT_OK(run->Finish());
  run.reset();
  ASSERT_OK_AND_ASSIGN(live, pipeline::ListLiveRuns(io_.get(), warehouse_, "ns.t"));
  EXPECT_TRUE(live.empty());
  ASSERT_OK_AND_ASSIGN(r,
                       RemoveOrphanFiles(*catalog_, *io_, Load(), Options(milliseconds(0), 1000)));
  EXPECT_EQ(r.removed.size(), 2u);
  EXPECT_EQ(r.files_in_flight, 0);
  EXPECT_FALSE(fs::exists(journaled));
}

TEST_F(OrphansTest, ARunThatDiedWithoutFinishingProtectsNothing) {
  const std::string stray = Stray("data/geo_cell=a/stray.parquet");
  {
    ASSERT_OK_AND_ASSIGN(auto run, pipeline::RunJournal::Open(
                                       io_.get(), pipeline::RunDirectory(warehouse_, "run-dead"),
                                       "run-dead", "ns.t"));
    // Destroyed without Finish: as a killed process, whose lock the kernel releases.
  }
  EXPECT_TRUE(fs::exists(pipeline::RunDirectory(warehouse_, "run-dead") + "/running.lock"));
  ASSERT_OK_AND_ASSIGN(std::vector<pipeline::LiveRun> live,
                       pipeline::ListLiveRuns(io_.get(), warehouse_, "ns.t"));
  EXPECT_TRUE(live.empty());
  ASSERT_OK_AND_ASSIGN(OrphanReport r,
                       RemoveOrphanFiles(*catalog_, *io_, Load(), Options(milliseconds(0), 1000)));
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(stray));
}

TEST(NormalizeLocalPathTest, StripsFileUrisAndRefusesOtherSchemes) {
  EXPECT_EQ(NormalizeLocalPath("file:///a/b/../c/").value(), "/a/c");
  EXPECT_EQ(NormalizeLocalPath("file:/a//b").value(), "/a/b");
  EXPECT_EQ(NormalizeLocalPath("/x/./y").value(), "/x/y");
  EXPECT_EQ(NormalizeLocalPath("rel/p").value(), (fs::current_path() / "rel/p").string());
  EXPECT_THAT(NormalizeLocalPath("s3://bucket/key"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(NormalizeLocalPath("file://host/a"), IsError(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace geolake::maintenance
