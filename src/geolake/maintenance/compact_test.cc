#include "geolake/maintenance/compact.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "geolake/core/thread_pool.h"
#include "geolake/maintenance/compact_test_util.h"
#include "geolake/maintenance/data_file_reader.h"
#include "geolake/table/scan.h"
#include "geolake/testing/testing.h"

namespace geolake::maintenance {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using namespace ::geolake::maintenance::testing;  // NOLINT(google-build-using-namespace)

class CompactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    warehouse_ = ::geolake::testing::BuildDir() + "/maintenance_compact_test/" + info->name();
    fs::remove_all(warehouse_);
    fs::create_directories(warehouse_);
    location_ = warehouse_ + "/ns/t";
    id_ = table::TableIdentifier::Parse("ns.t").value();
  }

  // A table of `files_per_cell` files of `rows` rows in each of `cells` ("" = unpartitioned).
  void Build(const std::vector<std::string>& cells, int files_per_cell, int rows,
             const std::map<std::string, std::string>& props = {}) {
    const bool partitioned = !cells.empty() && !cells[0].empty();
    ASSERT_OK(CreateTestTable(*catalog_, *io_, id_, location_, partitioned, props).status());
    std::int64_t next_id = 0;
    std::uint64_t seed = 1;
    for (int f = 0; f < files_per_cell; ++f) {
      for (const std::string& cell : cells) {
        ASSERT_OK(AppendSmallFile(*catalog_, *io_, id_, next_id, rows, cell, seed++).status());
        next_id += rows;
      }
    }
  }

  table::Table Load() { return table::LoadTable(*catalog_, *io_, id_).value(); }

  std::vector<table::ManifestEntry> LiveFiles() {
    return table::PlanScan(*io_, Load().metadata).value().data_files;
  }

  // The ids of a data file's rows in file order.
  std::vector<std::int64_t> FileIds(const std::string& path) {
    ReadColumns columns;
    const table::Table t = Load();
    columns.attribute_ids = {t.metadata.current_schema()->fields()[0].id};
    columns.fields = {{"id", FieldType::kInt64}};
    columns.geometry_id = t.metadata.current_schema()->fields()[3].id;
    auto reader = DataFileReader::Open(*io_, path, columns).value();
    std::vector<std::int64_t> ids;
    RowBatch b;
    while (reader->Next(&b).value() > 0) {
      ids.insert(ids.end(), b.rows.columns[0].ints.begin(), b.rows.columns[0].ints.end());
    }
    return ids;
  }

  // Files under data/ (recursively).
  std::set<std::string> DataFolderFiles() {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(location_ + "/data")) {
      if (e.is_regular_file()) out.insert(e.path().string());
    }
    return out;
  }

  CompactOptions Options(std::int64_t target = 16 << 10) {
    CompactOptions o;
    o.plan.target_file_size_bytes = target;
    o.memory_bytes = 64 << 20;
    return o;
  }

  std::string warehouse_, location_;
  table::TableIdentifier id_;
  std::unique_ptr<io::FileIO> io_ = io::MakeLocalFileIO();
  std::unique_ptr<table::Catalog> catalog_ = table::MakeInMemoryCatalog();
};

TEST_F(CompactTest, BinpackRewritesSmallFilesKeepingEveryRowInFileOrder) {
  Build({""}, 12, 200);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  const auto inputs = LiveFiles();
  ASSERT_EQ(inputs.size(), 12u);
  std::int64_t input_bytes = 0;
  for (const auto& e : inputs) input_bytes += e.data_file.file_size_in_bytes;
  const std::int64_t before_snapshot = *Load().metadata.current_snapshot_id;

  // A target of about a third of the table: three or four files.
  CompactOptions o = Options(input_bytes / 3);
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  ASSERT_EQ(r.plan.groups.size(), 1u);
  EXPECT_EQ(r.groups_rewritten, 1);
  EXPECT_EQ(r.files_in, 12);
  EXPECT_EQ(r.rows_in, 2400);
  EXPECT_EQ(r.rows_out, 2400);
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.starting_snapshot_id, before_snapshot);

  const table::Table t = Load();
  EXPECT_EQ(t.metadata.current_snapshot()->operation(), "replace");
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("geolake.compact.strategy"), "binpack");
  EXPECT_EQ(t.metadata.current_snapshot()->snapshot_id, r.snapshot_ids.at(0));
  const auto outputs = LiveFiles();
  EXPECT_EQ(static_cast<std::int64_t>(outputs.size()), r.files_out);
  EXPECT_GE(outputs.size(), 2u);
  EXPECT_LE(outputs.size(), 4u);
  // Every file but the last reached the split size (a file is cut once it passes it).
  for (std::size_t i = 0; i + 1 < outputs.size(); ++i) {
    EXPECT_GE(outputs[i].data_file.file_size_in_bytes, r.plan.groups[0].split_size_bytes)
        << outputs[i].data_file.file_path;
  }
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);

  // Binpack keeps row order: the outputs, concatenated, hold the inputs' rows in plan order.
  std::vector<std::int64_t> in_order, out_order;
  for (const CandidateFile& c : r.plan.groups[0].files) {
    auto ids = FileIds(c.file.file_path);
    in_order.insert(in_order.end(), ids.begin(), ids.end());
  }
  std::vector<std::string> paths;
  for (const auto& e : outputs) paths.push_back(e.data_file.file_path);
  // The new manifest lists the files in the order they were written.
  for (const std::string& p : paths) {
    auto ids = FileIds(p);
    out_order.insert(out_order.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(out_order, in_order);

  // Time travel to the snapshot before still reads the small files.
  ASSERT_OK_AND_ASSIGN(auto old, SortedRows(*catalog_, *io_, id_, before_snapshot));
  EXPECT_EQ(old, before);
  // A second run finds nothing to do (the new files are within [min, max] or too few).
  ASSERT_OK_AND_ASSIGN(CompactReport again, Compact(*catalog_, *io_, id_, o));
  EXPECT_TRUE(again.plan.groups.empty());
}

TEST_F(CompactTest, DryRunPlansAndChangesNothing) {
  Build({"0", "1"}, 6, 50);
  const std::string location = Load().metadata_location;
  const auto files = DataFolderFiles();
  CompactOptions o = Options();
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  EXPECT_TRUE(r.dry_run);
  ASSERT_EQ(r.plan.groups.size(), 2u);
  EXPECT_EQ(r.plan.groups[0].reason, "6 files >= min-input-files 5");
  for (const GroupResult& g : r.groups) EXPECT_EQ(g.outcome, GroupOutcome::kPlanned);
  EXPECT_EQ(Load().metadata_location, location);
  EXPECT_EQ(DataFolderFiles(), files);
}

TEST_F(CompactTest, GroupsArePerPartitionAndRunConcurrentlyOnTheExecutor) {
  Build({"0", "1", "2", "3"}, 6, 100);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(3));
  CompactOptions o = Options(1 << 20);
  o.executor = pool.get();
  o.max_concurrent_groups = 3;
  Metrics metrics;
  o.metrics = &metrics;
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.groups_rewritten, 4);
  EXPECT_EQ(r.commits, 1);  // without partial progress: one commit
  const auto outputs = LiveFiles();
  ASSERT_EQ(outputs.size(), 4u);  // one file per cell
  std::set<std::string> cells;
  for (const auto& e : outputs) {
    cells.insert(std::get<std::string>(e.data_file.partition.at(0)));
    EXPECT_NE(e.data_file.file_path.find(
                  "/data/geo_cell=" + std::get<std::string>(e.data_file.partition.at(0)) + "/"),
              std::string::npos);
  }
  EXPECT_EQ(cells, (std::set<std::string>{"0", "1", "2", "3"}));
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);
  const MetricsSnapshot snap = metrics.Snapshot();
  auto counter = [&](const std::string& name) {
    for (const auto& c : snap.counters) {
      if (c.name == name) return c.value;
    }
    return std::int64_t{-1};
  };
  EXPECT_EQ(counter("compact.groups_planned"), 4);
  EXPECT_EQ(counter("compact.rows_out"), 2400);
  EXPECT_EQ(counter("compact.files_in"), 24);
  EXPECT_LE(r.peak_reserved_bytes, 64 << 20);
  EXPECT_GT(r.peak_reserved_bytes, 0);
}

TEST_F(CompactTest, ConcurrentAppendIsKeptAndTheCommitRetries) {
  Build({""}, 6, 100);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  CompactOptions o = Options(1 << 20);
  bool appended = false;
  RacingCatalog racing(catalog_.get());
  racing.before_commit = [&] {
    // Another writer appends between the replace's base load and its swap.
    appended = true;
    ASSERT_OK(AppendSmallFile(*catalog_, *io_, id_, 100000, 30, "", 99).status());
  };
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(racing, *io_, id_, o));
  ASSERT_OK(r.status);
  EXPECT_TRUE(appended);
  EXPECT_EQ(r.groups_rewritten, 1);
  EXPECT_GE(r.commit_attempts, 2);  // lost the race once, re-applied on the new base
  EXPECT_GE(r.commit_conflicts, 1);
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after.size(), before.size() + 30);
  const auto live = LiveFiles();
  EXPECT_EQ(live.size(), 2u);  // the compacted file and the appended one
}

TEST_F(CompactTest, GroupWhoseInputAnotherCommitRemovedIsDroppedAndTheRestCommits) {
  Build({"0", "1"}, 5, 40);
  const auto before_files = DataFolderFiles();
  CompactOptions o = Options(1 << 20);
  std::string removed;
  o.hook = [&](CompactPoint point, int) {
    if (point != CompactPoint::kBeforeCommit || !removed.empty()) return;
    // Another engine deletes one file of cell 0 (e.g. a row-level delete rewrote it).
    for (const auto& e : LiveFiles()) {
      if (std::get<std::string>(e.data_file.partition[0]) == "0") {
        removed = e.data_file.file_path;
        break;
      }
    }
    table::DeleteFiles del(catalog_.get(), io_.get(), id_);
    del.DeleteFile(removed);
    ASSERT_OK(del.Commit().status());
  };
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups_dropped, 1);
  EXPECT_EQ(r.groups_rewritten, 1);
  const GroupResult& dropped =
      r.groups[0].outcome == GroupOutcome::kDropped ? r.groups[0] : r.groups[1];
  EXPECT_EQ(dropped.partition_text, "geo_cell=0");
  EXPECT_NE(dropped.error.find(removed), std::string::npos) << dropped.error;
  // Cell 0 keeps its 4 remaining small files; cell 1 is one file now.
  int cell0 = 0, cell1 = 0;
  for (const auto& e : LiveFiles()) {
    (std::get<std::string>(e.data_file.partition[0]) == "0" ? cell0 : cell1)++;
  }
  EXPECT_EQ(cell0, 4);
  EXPECT_EQ(cell1, 1);
  // The dropped group's new file was deleted: data/ holds the old files and cell 1's new one.
  const auto after_files = DataFolderFiles();
  EXPECT_EQ(after_files.size(), before_files.size() + 1);
}

TEST_F(CompactTest, PartialProgressCommitsBatchesOfGroups) {
  Build({"0", "1", "2", "3"}, 5, 30);
  CompactOptions o = Options(1 << 20);
  o.partial_progress = true;
  o.max_commits = 2;  // 4 groups -> 2 per commit
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.commits, 2);
  ASSERT_EQ(r.snapshot_ids.size(), 2u);
  EXPECT_EQ(r.groups[0].snapshot_id, r.groups[1].snapshot_id);
  EXPECT_EQ(r.groups[2].snapshot_id, r.groups[3].snapshot_id);
  EXPECT_NE(r.groups[0].snapshot_id, r.groups[2].snapshot_id);
  const table::Table t = Load();
  EXPECT_EQ(t.metadata.current_snapshot()->summary.at("geolake.compact.groups"), "2");
}

TEST_F(CompactTest, StopKeepsCommittedGroupsAndAReRunDoesTheRest) {
  Build({"0", "1", "2", "3"}, 5, 30);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  CompactOptions o = Options(1 << 20);
  o.partial_progress = true;
  o.max_commits = 4;  // one group per commit
  std::stop_source stop;
  o.hook = [&](CompactPoint point, int commit) {
    if (point == CompactPoint::kAfterCommit && commit == 0) stop.request_stop();
  };
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o, stop.get_token()));
  EXPECT_THAT(r.status, IsError(ErrorCode::kCancelled));
  EXPECT_EQ(r.commits, 1);
  EXPECT_EQ(r.groups_rewritten, 1);
  ASSERT_OK_AND_ASSIGN(auto mid, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(mid, before);
  // Nothing half-done: the live files are 1 compacted + 15 small, and data/ holds no others
  // but the 20 small files still referenced by older snapshots.
  EXPECT_EQ(LiveFiles().size(), 16u);
  EXPECT_EQ(DataFolderFiles().size(), 21u);

  o.hook = nullptr;
  ASSERT_OK_AND_ASSIGN(CompactReport rest, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(rest.status);
  EXPECT_EQ(rest.plan.groups.size(), 3u);  // only what was left
  EXPECT_EQ(LiveFiles().size(), 4u);
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);
}

TEST_F(CompactTest, UnreadableDataFileRefusesNamingItAndDeletesNothing) {
  Build({""}, 6, 50);
  const auto live = LiveFiles();
  const std::string victim = live[2].data_file.file_path;
  ASSERT_OK(io_->WriteAll(victim, "garbage", /*overwrite=*/true));
  const std::string location = Load().metadata_location;
  const auto files = DataFolderFiles();
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, Options(1 << 20)));
  EXPECT_THAT(r.status, IsErrorWith(ErrorCode::kCorruptData, victim));
  EXPECT_EQ(r.groups_failed, 1);
  EXPECT_EQ(Load().metadata_location, location);
  EXPECT_EQ(DataFolderFiles(), files);  // the group's partial output is gone, the victim stays

  fs::remove(victim);
  ASSERT_OK_AND_ASSIGN(r, Compact(*catalog_, *io_, id_, Options(1 << 20)));
  EXPECT_THAT(r.status, IsErrorWith(ErrorCode::kCorruptData, victim));
}

TEST_F(CompactTest, MissingManifestRefusesBeforeWriting) {
  Build({""}, 6, 20);
  const table::Table t = Load();
  auto manifests =
      table::ReadManifestList(*io_, t.metadata.current_snapshot()->manifest_list).value();
  fs::remove(manifests.back().manifest_path);
  EXPECT_THAT(Compact(*catalog_, *io_, id_, Options()),
              IsErrorWith(ErrorCode::kCorruptData, manifests.back().manifest_path));
}

TEST_F(CompactTest, BadOptionsAreRefused) {
  Build({""}, 1, 10);
  CompactOptions o = Options();
  o.max_concurrent_groups = 0;
  EXPECT_THAT(Compact(*catalog_, *io_, id_, o),
              IsErrorWith(ErrorCode::kInvalidArgument, "max-concurrent-groups"));
  o = Options();
  o.partial_progress = true;
  o.max_commits = 0;
  EXPECT_THAT(Compact(*catalog_, *io_, id_, o),
              IsErrorWith(ErrorCode::kInvalidArgument, "max-commits"));
  o = Options();
  o.sort_order = "id ASC";
  EXPECT_THAT(Compact(*catalog_, *io_, id_, o), IsErrorWith(ErrorCode::kInvalidArgument, "sort"));
  o = Options();
  o.where = "id > 3";
  o.bbox = geo::Envelope{0, 0, 1, 1};
  EXPECT_THAT(Compact(*catalog_, *io_, id_, o),
              IsErrorWith(ErrorCode::kInvalidArgument, "not both"));
  o = Options();
  o.where = "nope > 3";
  EXPECT_THAT(Compact(*catalog_, *io_, id_, o), IsError(ErrorCode::kInvalidArgument));
  o = Options();
  o.plan.min_input_files = 0;
  EXPECT_THAT(Compact(*catalog_, *io_, id_, o),
              IsErrorWith(ErrorCode::kInvalidArgument, "min-input-files"));
  EXPECT_THAT(Compact(*catalog_, *io_, table::TableIdentifier::Parse("ns.nope").value(), Options()),
              IsError(ErrorCode::kNotFound));
}

TEST_F(CompactTest, BboxAndWhereSelectOnlyTheFilesThatMayMatch) {
  Build({"0", "1", "2", "3"}, 5, 20);
  CompactOptions o = Options(1 << 20);
  o.bbox = geo::Envelope{20, 20, 30, 30};  // inside cell 1 (NE)
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  ASSERT_EQ(r.plan.groups.size(), 1u);
  EXPECT_EQ(r.plan.groups[0].partition_text, "geo_cell=1");
  EXPECT_EQ(LiveFiles().size(), 16u);
  o.bbox.reset();
  o.where = "id < 40";  // the first file of cells 0 and 1 only (ids 0..19, 20..39)
  ASSERT_OK_AND_ASSIGN(r, Compact(*catalog_, *io_, id_, o));
  EXPECT_EQ(r.plan.files_scanned, 2);
  EXPECT_TRUE(r.plan.groups.empty());  // one file per cell: nothing to merge
}

TEST_F(CompactTest, EmptyTableHasNothingToDo) {
  ASSERT_OK(CreateTestTable(*catalog_, *io_, id_, location_, false).status());
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, Options()));
  EXPECT_OK(r.status);
  EXPECT_EQ(r.starting_snapshot_id, 0);
  EXPECT_TRUE(r.plan.groups.empty());
}

}  // namespace
}  // namespace geolake::maintenance
