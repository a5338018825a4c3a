#include "geolake/pipeline/commit_coordinator.h"

#include <gtest/gtest.h>

#include <map>

#include "geolake/table/location.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::pipeline {
namespace {

using ::geolake::testing::IsErrorWith;

// Two runs of one source, as two processes ingesting it at once would be: each coordinator
// plans against the table as it was when its run started, and the other commits meanwhile.
// Issue 17, item 3: before, both committed every unit (2 processes gave 2x the rows).
class CommitCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    id_ = table::TableIdentifier::Parse("ns.t").value();
    table::NewTableOptions o;
    o.location = table::DefaultTableLocation(dir_.path(), id_).value();
    o.schema = std::make_shared<const table::Schema>(
        0, std::vector<table::NestedField>{
               table::NestedField::Required(1, "id", table::Type::Long())});
    ASSERT_OK(table::EnsureNamespace(*catalog_, id_.ns));
    ASSERT_OK(table::CreateTable(*catalog_, *io_, id_, o).status());
  }

  std::unique_ptr<CommitCoordinator> Coordinator(const std::string& run_id) {
    CommitOptions options;
    options.run_id = run_id;
    options.commit_rows = 1 << 30;  // only Finish commits: one batch
    options.commit_interval = std::chrono::hours(1);
    const table::Table base = table::LoadTable(*catalog_, *io_, id_).value();
    if (const table::Snapshot* s = base.metadata.current_snapshot(); s != nullptr) {
      options.base_snapshot_id = s->snapshot_id;
    }
    SourcePlan plan;
    plan.fingerprint = "src";
    plan.path = "/data/src.gpkg";
    plan.unit_count = 4;
    plan.unit_rows = 10;
    std::vector<SourcePlan> plans{plan};
    auto c = std::make_unique<CommitCoordinator>(catalog_.get(), io_.get(), id_, options,
                                                 std::move(plans), nullptr, &metrics_);
    c->Start([] {});
    return c;
  }

  static UnitOutcome Unit(std::int64_t unit) {
    UnitOutcome o;
    o.source = "src";
    o.source_path = "/data/src.gpkg";
    o.unit = unit;
    o.rows_read = 10;
    o.rows_written = 9;
    o.rows_rejected = 1;
    return o;
  }

  // How many snapshots of the current lineage name each unit of "src".
  std::map<std::int64_t, int> UnitCommits() {
    std::map<std::int64_t, int> out;
    const table::TableMetadata m = table::LoadTable(*catalog_, *io_, id_)->metadata;
    for (const table::Snapshot* s = m.current_snapshot(); s != nullptr;
         s = s->parent_snapshot_id ? m.SnapshotById(*s->parent_snapshot_id) : nullptr) {
      table::TableMetadata one = m;
      one.current_snapshot_id = s->snapshot_id;
      one.snapshots = {*s};
      one.snapshots[0].parent_snapshot_id.reset();
      // Kept in a variable: a range-for over a member of a temporary reads freed memory.
      CommittedUnits committed = ReadCommittedUnits(one);
      for (std::int64_t unit : committed.units["src"]) ++out[unit];
    }
    return out;
  }

  ::geolake::testing::TempDir dir_{"coordinator"};
  std::unique_ptr<table::Catalog> catalog_ = table::MakeInMemoryCatalog();
  std::unique_ptr<io::FileIO> io_ = io::MakeLocalFileIO();
  table::TableIdentifier id_;
  Metrics metrics_;
};

TEST_F(CommitCoordinatorTest, AUnitAnotherRunCommittedMeanwhileIsNotCommittedAgain) {
  auto mine = Coordinator("mine");
  auto other = Coordinator("other");  // same base: neither sees the other at its start
  other->Submit(Unit(0));
  other->Submit(Unit(1));
  ASSERT_OK(other->Finish());

  mine->Submit(Unit(1));  // committed by the other run meanwhile
  mine->Submit(Unit(2));
  ASSERT_OK(mine->Finish());
  EXPECT_EQ(mine->units_committed_elsewhere(), 1);
  EXPECT_EQ(mine->rows_committed_elsewhere(), 10);
  EXPECT_EQ(mine->rows_committed(), 9);
  EXPECT_EQ(mine->rows_rejected_committed(), 1);
  EXPECT_EQ(mine->rows_uncommitted(), 0);
  EXPECT_EQ(mine->commits(), 1);
  EXPECT_EQ(UnitCommits(), (std::map<std::int64_t, int>{{0, 1}, {1, 1}, {2, 1}}));

  // A batch made only of units committed elsewhere commits nothing at all.
  auto late = Coordinator("late");
  auto again = Coordinator("again");
  again->Submit(Unit(3));
  ASSERT_OK(again->Finish());
  late->Submit(Unit(3));
  ASSERT_OK(late->Finish());
  EXPECT_EQ(late->commits(), 0);
  EXPECT_EQ(late->units_committed_elsewhere(), 1);
  EXPECT_EQ(UnitCommits(), (std::map<std::int64_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
}

// Units handed over together share files, so a unit packed with one committed elsewhere cannot
// be committed alone: it is counted as not committed and Finish says to run again.
TEST_F(CommitCoordinatorTest, UnitsPackedWithOneCommittedElsewhereAreLeftForTheNextRun) {
  auto mine = Coordinator("mine");
  auto other = Coordinator("other");
  other->Submit(Unit(0));
  ASSERT_OK(other->Finish());

  std::vector<UnitOutcome> packed;
  packed.push_back(Unit(0));
  packed.push_back(Unit(1));
  mine->Submit(std::move(packed));
  mine->Submit(Unit(2));
  EXPECT_THAT(mine->Finish(), IsErrorWith(ErrorCode::kCommitConflict, "run the ingest again"));
  EXPECT_EQ(mine->units_committed_elsewhere(), 1);
  EXPECT_EQ(mine->rows_committed_elsewhere(), 10);
  EXPECT_EQ(mine->rows_uncommitted(), 10);  // unit 1
  EXPECT_EQ(mine->rows_committed(), 9);     // unit 2
  EXPECT_EQ(UnitCommits(), (std::map<std::int64_t, int>{{0, 1}, {2, 1}}));
}

TEST_F(CommitCoordinatorTest, ReadCommittedUnitsSinceASnapshotSeesOnlyLaterCommits) {
  auto first = Coordinator("first");
  first->Submit(Unit(0));
  ASSERT_OK(first->Finish());
  const table::TableMetadata at_first = table::LoadTable(*catalog_, *io_, id_)->metadata;
  auto second = Coordinator("second");
  second->Submit(Unit(1));
  ASSERT_OK(second->Finish());
  const table::TableMetadata now = table::LoadTable(*catalog_, *io_, id_)->metadata;
  EXPECT_EQ(ReadCommittedUnits(now).units["src"], (std::set<std::int64_t>{0, 1}));
  EXPECT_EQ(ReadCommittedUnits(now, at_first.current_snapshot_id).units["src"],
            (std::set<std::int64_t>{1}));
}

}  // namespace
}  // namespace geolake::pipeline
