#include "geolake/maintenance/expire.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stop_token>

#include "geolake/core/thread_pool.h"
#include "geolake/maintenance/compact.h"
#include "geolake/maintenance/compact_test_util.h"
#include "geolake/maintenance/orphans.h"
#include "geolake/table/scan.h"
#include "geolake/testing/testing.h"

namespace geolake::maintenance {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using namespace ::geolake::maintenance::testing;  // NOLINT(google-build-using-namespace)

// ---- Which snapshots expire (pure) ----------------------------------------------------------

// A metadata value with snapshots `ids` (timestamps id * 1000, each the child of the previous
// one unless `parents` says otherwise) and main at the last.
table::TableMetadata Chain(const std::vector<std::int64_t>& ids,
                           const std::map<std::int64_t, std::int64_t>& parents = {}) {
  table::TableMetadata m;
  std::optional<std::int64_t> prev;
  for (std::int64_t id : ids) {
    table::Snapshot s;
    s.snapshot_id = id;
    s.timestamp_ms = id * 1000;
    const auto p = parents.find(id);
    s.parent_snapshot_id = p != parents.end() ? std::optional<std::int64_t>(p->second) : prev;
    if (p != parents.end() && p->second == 0) s.parent_snapshot_id.reset();
    m.snapshots.push_back(s);
    prev = id;
  }
  m.current_snapshot_id = ids.back();
  m.refs["main"] = table::SnapshotRef{ids.back(), true, {}, {}, {}};
  return m;
}

std::vector<std::int64_t> Expired(const table::TableMetadata& m, std::int64_t older_than,
                                  std::int64_t retain_last, std::int64_t now = 100000) {
  ExpireOptions o;
  o.older_than_ms = older_than;
  o.retain_last = retain_last;
  auto sel = SelectSnapshotsToExpire(m, o, now);
  EXPECT_OK(sel.status());
  if (!sel.ok()) return {};
  return sel->expired;
}

TEST(SelectSnapshotsTest, MainKeepsAncestorsWhileYoungerThanTheCutoffOrUnderRetainLast) {
  const table::TableMetadata m = Chain({1, 2, 3, 4, 5});
  // Cutoff 3500: 5 and 4 are younger; 3 is older and one is already kept: stop.
  EXPECT_EQ(Expired(m, 3500, 1), (std::vector<std::int64_t>{1, 2, 3}));
  // retain-last 4 wins over an all-expiring cutoff.
  EXPECT_EQ(Expired(m, 99999, 4), (std::vector<std::int64_t>{1}));
  // The current snapshot is always kept.
  EXPECT_EQ(Expired(m, 99999, 1), (std::vector<std::int64_t>{1, 2, 3, 4}));
  // A snapshot exactly at the cutoff is not older than it.
  EXPECT_EQ(Expired(m, 3000, 1), (std::vector<std::int64_t>{1, 2}));
}

TEST(SelectSnapshotsTest, DefaultsComeFromTheTableProperties) {
  table::TableMetadata m = Chain({1, 2, 3, 4, 5});
  ExpireOptions o;
  // Iceberg's defaults: 5 days, keep 1. With "now" 5 days after snapshot 3: 1 and 2 expire.
  const std::int64_t now = 3000 + kDefaultMaxSnapshotAgeMs;
  ASSERT_OK_AND_ASSIGN(ExpireSelection sel, SelectSnapshotsToExpire(m, o, now));
  EXPECT_EQ(sel.expired, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(sel.cutoff_ms, 3000);
  EXPECT_EQ(sel.retain_last, 1);
  m.properties["history.expire.max-snapshot-age-ms"] = "500";
  m.properties["history.expire.min-snapshots-to-keep"] = "2";
  ASSERT_OK_AND_ASSIGN(sel, SelectSnapshotsToExpire(m, o, 4800));
  EXPECT_EQ(sel.expired, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(sel.retained, 2);
}

TEST(SelectSnapshotsTest, RetainLastBelowOneIsRefused) {
  ExpireOptions o;
  o.retain_last = 0;
  EXPECT_THAT(SelectSnapshotsToExpire(Chain({1, 2}), o, 1),
              IsErrorWith(ErrorCode::kInvalidArgument, "at least 1"));
  table::TableMetadata m = Chain({1, 2});
  m.properties["history.expire.min-snapshots-to-keep"] = "0";
  EXPECT_THAT(SelectSnapshotsToExpire(m, ExpireOptions{}, 1), IsError(ErrorCode::kInvalidArgument));
}

TEST(SelectSnapshotsTest, TagsAndBranchesKeepTheirSnapshots) {
  // 1-2-3-4-5 on main; branch "b" at 6 (child of 2); tag "t" at 1.
  table::TableMetadata m = Chain({1, 2, 3, 4, 5, 6}, {{6, 2}});
  m.current_snapshot_id = 5;
  m.refs["main"].snapshot_id = 5;
  m.refs["b"] = table::SnapshotRef{6, true, {}, {}, {}};
  m.refs["t"] = table::SnapshotRef{1, false, {}, {}, {}};
  // Everything is older than the cutoff: each branch keeps its head, the tag its snapshot.
  EXPECT_EQ(Expired(m, 99999, 1), (std::vector<std::int64_t>{2, 3, 4}));
  // A branch's own min-snapshots-to-keep wins over retain-last: b keeps 6 and 2.
  m.refs["b"].min_snapshots_to_keep = 2;
  EXPECT_EQ(Expired(m, 99999, 1), (std::vector<std::int64_t>{3, 4}));
  // ... and its own max-snapshot-age-ms over the cutoff (now 100000: 6 and 2 are old, 3+ not
  // on b).
  m.refs["b"].min_snapshots_to_keep.reset();
  m.refs["b"].max_snapshot_age_ms = 100000 - 1500;  // keeps snapshots from ts 1500 on: 6, 2
  EXPECT_EQ(Expired(m, 99999, 1), (std::vector<std::int64_t>{3, 4}));
}

TEST(SelectSnapshotsTest, RefsOlderThanTheirMaxAgeAreDroppedButMainNever) {
  table::TableMetadata m = Chain({1, 2, 3});
  m.refs["old-tag"] = table::SnapshotRef{1, false, {}, {}, 50000};
  m.refs["young-tag"] = table::SnapshotRef{2, false, {}, {}, 99000};
  m.refs["main"].max_ref_age_ms = 1;  // ignored for main
  ExpireOptions o;
  o.older_than_ms = 99999;
  o.retain_last = 1;
  ASSERT_OK_AND_ASSIGN(ExpireSelection sel, SelectSnapshotsToExpire(m, o, 100000));
  EXPECT_EQ(sel.refs_removed, (std::vector<std::string>{"old-tag"}));
  EXPECT_EQ(sel.expired, (std::vector<std::int64_t>{1}));
  // The table-wide default applies to refs without their own.
  m.refs["young-tag"].max_ref_age_ms.reset();
  m.properties["history.expire.max-ref-age-ms"] = "1000";
  ASSERT_OK_AND_ASSIGN(sel, SelectSnapshotsToExpire(m, o, 100000));
  EXPECT_EQ(sel.refs_removed, (std::vector<std::string>{"old-tag", "young-tag"}));
  EXPECT_EQ(sel.expired, (std::vector<std::int64_t>{1, 2}));
}

TEST(SelectSnapshotsTest, UnreferencedSnapshotsAreKeptOnlyWhileYoungerThanTheCutoff) {
  // 7 and 8 are on no branch (rolled back / staged): children of 2.
  const table::TableMetadata m = Chain({1, 2, 3, 7, 8}, {{3, 2}, {7, 2}, {8, 2}});
  table::TableMetadata t = m;
  t.current_snapshot_id = 3;
  t.refs["main"].snapshot_id = 3;
  EXPECT_EQ(Expired(t, 7500, 1), (std::vector<std::int64_t>{1, 2, 7}));
}

// ---- Expiring a real table --------------------------------------------------------------------

class ExpireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    warehouse_ = ::geolake::testing::BuildDir() + "/maintenance_expire_test/" + info->name();
    fs::remove_all(warehouse_);
    fs::create_directories(warehouse_);
    location_ = warehouse_ + "/ns/t";
    id_ = table::TableIdentifier::Parse("ns.t").value();
  }

  // `files` appends of one small file each, then (optionally) a compaction of them all.
  void Build(int files, bool compact) {
    ASSERT_OK(CreateTestTable(*catalog_, *io_, id_, location_, false).status());
    for (int f = 0; f < files; ++f) {
      ASSERT_OK(AppendSmallFile(*catalog_, *io_, id_, f * 50, 50, "", f + 1).status());
    }
    if (compact) {
      CompactOptions o;
      o.plan.target_file_size_bytes = 1 << 20;
      o.plan.min_input_files = 2;
      ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
      ASSERT_OK(r.status);
      ASSERT_EQ(r.groups_rewritten, 1);
    }
  }

  table::Table Load() { return table::LoadTable(*catalog_, *io_, id_).value(); }

  // Point ref `name` (a tag unless `branch`) at `snapshot_id`, swapped in through the catalog
  // as any other writer's commit would be.
  void SetRef(const std::string& name, std::int64_t snapshot_id, bool branch) {
    const table::Table t = Load();
    table::TableMetadata m = t.metadata;
    m.refs[name] = table::SnapshotRef{snapshot_id, branch, {}, {}, {}};
    ASSERT_OK_AND_ASSIGN(std::string json, m.ToJson());
    const std::string next = location_ + "/metadata/ref-" + name + ".metadata.json";
    ASSERT_OK(io_->WriteAll(next, json, /*overwrite=*/false));
    ASSERT_OK(catalog_->CommitTable(id_, t.metadata_location, next));
  }

  std::set<std::string> FilesUnder(const std::string& sub) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(location_ + "/" + sub)) {
      if (e.is_regular_file()) out.insert(e.path().string());
    }
    return out;
  }

  // Expire everything but the newest `keep` snapshots.
  ExpireOptions KeepLast(std::int64_t keep) {
    ExpireOptions o;
    o.older_than_ms = table::NowMillis() + 1000;
    o.retain_last = keep;
    return o;
  }

  std::string warehouse_, location_;
  table::TableIdentifier id_;
  std::unique_ptr<io::FileIO> io_ = io::MakeLocalFileIO();
  std::unique_ptr<table::Catalog> catalog_ = table::MakeInMemoryCatalog();
};

TEST_F(ExpireTest, AfterAppendsOnlyManifestListsGoAndEveryRetainedSnapshotStillReads) {
  Build(5, false);
  const table::Table t = Load();
  ASSERT_EQ(t.metadata.snapshots.size(), 5u);
  ASSERT_OK_AND_ASSIGN(auto rows, SortedRows(*catalog_, *io_, id_));
  const auto data_before = FilesUnder("data");
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(*catalog_, *io_, id_, KeepLast(3)));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.selection.expired.size(), 2u);
  EXPECT_EQ(r.selection.retained, 3);
  // Fast appends reuse every manifest: only the two manifest lists are unreachable now.
  EXPECT_EQ(r.deleted_manifest_lists, 2);
  EXPECT_EQ(r.deleted_manifests, 0);
  EXPECT_EQ(r.deleted_data_files, 0);
  EXPECT_GT(r.deleted_bytes, 0);
  for (const table::Snapshot& s : t.metadata.snapshots) {
    const bool expired =
        s.snapshot_id == r.selection.expired[0] || s.snapshot_id == r.selection.expired[1];
    EXPECT_EQ(fs::exists(s.manifest_list), !expired) << s.manifest_list;
  }
  const table::Table after = Load();
  EXPECT_EQ(after.metadata.snapshots.size(), 3u);
  EXPECT_EQ(FilesUnder("data"), data_before);
  // Time travel to every retained snapshot still works: each holds its appends' rows.
  std::size_t expect_rows = 150;
  for (const table::Snapshot& s : after.metadata.snapshots) {
    ASSERT_OK_AND_ASSIGN(auto at, SortedRows(*catalog_, *io_, id_, s.snapshot_id));
    EXPECT_EQ(at.size(), expect_rows);
    expect_rows += 50;
  }
  ASSERT_OK_AND_ASSIGN(auto now_rows, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(now_rows, rows);
}

TEST_F(ExpireTest, FilesOnlyExpiredSnapshotsReachAreDeletedAndNothingReachableIs) {
  Build(6, true);  // 6 appends, then one replace: the 6 small files live only in the past
  const auto data_before = FilesUnder("data");
  ASSERT_EQ(data_before.size(), 7u);
  ASSERT_OK_AND_ASSIGN(auto rows, SortedRows(*catalog_, *io_, id_));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ThreadPool> pool, ThreadPool::Make(2));
  ExpireOptions o = KeepLast(1);
  o.executor = pool.get();
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.selection.expired.size(), 6u);
  EXPECT_EQ(r.deleted_data_files, 6);
  EXPECT_EQ(r.deleted_manifest_lists, 6);
  EXPECT_GE(r.deleted_manifests, 6);  // one per append, plus the replaced ones
  EXPECT_EQ(FilesUnder("data").size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, rows);
  // What is left is exactly what the table references: remove-orphans finds nothing.
  const table::Table t = Load();
  OrphanOptions oo;
  oo.warehouse = warehouse_;
  oo.older_than = std::chrono::milliseconds(0);
  oo.dry_run = true;
  oo.now_ms = table::NowMillis() + 60000;
  ASSERT_OK_AND_ASSIGN(OrphanReport orphans, RemoveOrphanFiles(*catalog_, *io_, t, oo));
  EXPECT_TRUE(orphans.removed.empty()) << orphans.removed.front().path;
  // A second run has nothing to do.
  ASSERT_OK_AND_ASSIGN(ExpireReport again, ExpireSnapshots(*catalog_, *io_, id_, o));
  EXPECT_TRUE(again.selection.expired.empty());
  EXPECT_TRUE(again.deleted.empty());
}

TEST_F(ExpireTest, DryRunReportsTheSameAndChangesNothing) {
  Build(4, true);
  const std::string location = Load().metadata_location;
  const auto files = FilesUnder("");
  ExpireOptions o = KeepLast(1);
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(ExpireReport dry, ExpireSnapshots(*catalog_, *io_, id_, o));
  EXPECT_EQ(Load().metadata_location, location);
  EXPECT_EQ(FilesUnder(""), files);
  EXPECT_TRUE(dry.metadata_location.empty());
  o.dry_run = false;
  ASSERT_OK_AND_ASSIGN(ExpireReport real, ExpireSnapshots(*catalog_, *io_, id_, o));
  EXPECT_EQ(dry.deleted, real.deleted);
  EXPECT_EQ(dry.deleted_bytes, real.deleted_bytes);
  EXPECT_EQ(dry.selection.expired, real.selection.expired);
  EXPECT_EQ(real.deleted_data_files, 4);
}

TEST_F(ExpireTest, AConcurrentAppendIsKeptAndItsFilesAreNotDeleted) {
  Build(4, true);
  RacingCatalog racing(catalog_.get());
  std::string appended;
  racing.before_commit = [&] {
    auto f = AppendSmallFile(*catalog_, *io_, id_, 1000, 20, "", 77);
    ASSERT_OK(f.status());
    appended = f->path;
  };
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(racing, *io_, id_, KeepLast(1)));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.commit_attempts, 2);
  EXPECT_TRUE(fs::exists(appended));
  ASSERT_OK_AND_ASSIGN(auto rows, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(rows.size(), 4u * 50 + 20);
  // Chosen again on the new base: only its head (the append) is kept.
  EXPECT_EQ(Load().metadata.snapshots.size(), 1u);
  EXPECT_EQ(r.deleted_data_files, 4);
}

TEST_F(ExpireTest, AnUnreadableRetainedManifestDeletesNoDataFile) {
  Build(4, true);
  const auto data_before = FilesUnder("data");
  RacingCatalog racing(catalog_.get());
  // Another writer appends during the commit: its manifest is new to this run...
  racing.before_commit = [&] {
    ASSERT_OK(AppendSmallFile(*catalog_, *io_, id_, 1000, 20, "", 78).status());
  };
  ExpireOptions o = KeepLast(2);
  // ... and is damaged before the cleanup reads it.
  o.hook = [&](ExpirePoint) {
    const table::Table t = Load();
    auto list = table::ReadManifestList(*io_, t.metadata.current_snapshot()->manifest_list);
    ASSERT_OK(list.status());
    for (const table::ManifestFile& mf : *list) {
      if (mf.added_snapshot_id == t.metadata.current_snapshot()->snapshot_id) {
        ASSERT_OK(io_->WriteAll(mf.manifest_path, "garbage", /*overwrite=*/true));
      }
    }
  };
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(racing, *io_, id_, o));
  EXPECT_THAT(r.status, IsErrorWith(ErrorCode::kCorruptData, "none is deleted"));
  EXPECT_NE(r.data_files_kept.find("manifest"), std::string::npos) << r.data_files_kept;
  EXPECT_EQ(r.deleted_data_files, 0);
  EXPECT_GT(r.deleted_manifest_lists, 0);  // unreachable lists still go
  // Every data file is still there (the 4 small ones are due but kept), plus the append's.
  EXPECT_EQ(FilesUnder("data").size(), data_before.size() + 1);
}

TEST_F(ExpireTest, ADamagedTableIsRefusedBeforeAnythingChanges) {
  Build(3, false);
  const table::Table t = Load();
  auto list = table::ReadManifestList(*io_, t.metadata.snapshots[0].manifest_list).value();
  const std::string victim = list[0].manifest_path;
  ASSERT_OK_AND_ASSIGN(std::string good, io_->ReadAll(victim));
  ASSERT_OK(io_->WriteAll(victim, "garbage", /*overwrite=*/true));
  EXPECT_THAT(ExpireSnapshots(*catalog_, *io_, id_, KeepLast(1)),
              IsErrorWith(ErrorCode::kCorruptData, victim));
  EXPECT_EQ(Load().metadata_location, t.metadata_location);
  // A missing manifest list too.
  ASSERT_OK(io_->WriteAll(victim, good, /*overwrite=*/true));
  ASSERT_OK(io_->Delete(t.metadata.snapshots[1].manifest_list));
  EXPECT_THAT(ExpireSnapshots(*catalog_, *io_, id_, KeepLast(1)),
              IsErrorWith(ErrorCode::kCorruptData, t.metadata.snapshots[1].manifest_list));
  EXPECT_EQ(Load().metadata.snapshots.size(), 3u);
}

TEST_F(ExpireTest, GcDisabledIsRefused) {
  Build(2, false);
  table::SetProperties set(catalog_.get(), io_.get(), id_);
  set.Set("gc.enabled", "false");
  ASSERT_OK(set.Commit().status());
  EXPECT_THAT(ExpireSnapshots(*catalog_, *io_, id_, KeepLast(1)),
              IsErrorWith(ErrorCode::kInvalidArgument, "GC is disabled"));
  EXPECT_EQ(Load().metadata.snapshots.size(), 2u);
}

TEST_F(ExpireTest, NothingToExpireCommitsNothing) {
  Build(2, false);
  const std::string location = Load().metadata_location;
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(*catalog_, *io_, id_, ExpireOptions{}));
  EXPECT_TRUE(r.selection.expired.empty());  // both younger than 5 days
  EXPECT_EQ(Load().metadata_location, location);
}

TEST_F(ExpireTest, ATaggedOldSnapshotKeepsItsFilesAndStillReads) {
  Build(4, true);  // snapshots 1..4 appends, 5 the replace
  const table::Table t = Load();
  const std::int64_t tagged = t.metadata.snapshots[1].snapshot_id;  // the second append
  SetRef("audit", tagged, /*branch=*/false);
  ASSERT_OK_AND_ASSIGN(auto tagged_rows, SortedRows(*catalog_, *io_, id_, tagged));
  ASSERT_EQ(tagged_rows.size(), 100u);
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(*catalog_, *io_, id_, KeepLast(1)));
  ASSERT_OK(r.status);
  // Snapshots 1, 3, 4 expire; the tag keeps 2, main keeps the replace.
  EXPECT_EQ(r.selection.expired.size(), 3u);
  EXPECT_EQ(r.selection.retained, 2);
  // The two small files the tagged snapshot reads stay; the other two go.
  EXPECT_EQ(r.deleted_data_files, 2);
  EXPECT_EQ(FilesUnder("data").size(), 3u);
  ASSERT_OK_AND_ASSIGN(auto again, SortedRows(*catalog_, *io_, id_, tagged));
  EXPECT_EQ(again, tagged_rows);
  EXPECT_EQ(Load().metadata.refs.count("audit"), 1u);
}

TEST_F(ExpireTest, ABranchKeepsItsHeadAndItsFiles) {
  Build(3, true);
  const table::Table t = Load();
  const std::int64_t head = t.metadata.snapshots[2].snapshot_id;  // the third append
  SetRef("dev", head, /*branch=*/true);
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(*catalog_, *io_, id_, KeepLast(1)));
  ASSERT_OK(r.status);
  // dev keeps its head (retain-last 1), so the three small files it reads stay.
  EXPECT_EQ(r.deleted_data_files, 0);
  EXPECT_EQ(FilesUnder("data").size(), 4u);
  ASSERT_OK_AND_ASSIGN(auto rows, SortedRows(*catalog_, *io_, id_, head));
  EXPECT_EQ(rows.size(), 150u);
}

TEST_F(ExpireTest, FilesOfAnUncommittedWriteAreNeverTouched) {
  Build(3, true);
  // A running ingest's file: written, not committed yet (no snapshot references it).
  const std::string pending = location_ + "/data/pending-ingest.parquet";
  ASSERT_OK(io_->WriteAll(pending, "not yet committed", /*overwrite=*/false));
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(*catalog_, *io_, id_, KeepLast(1)));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.deleted_data_files, 3);
  EXPECT_TRUE(fs::exists(pending));
  EXPECT_EQ(std::count(r.deleted.begin(), r.deleted.end(), pending), 0);
}

TEST_F(ExpireTest, AStopBeforeTheStartChangesNothing) {
  Build(3, true);
  const std::string location = Load().metadata_location;
  std::stop_source stop;
  stop.request_stop();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ThreadPool> pool, ThreadPool::Make(2));
  ExpireOptions o = KeepLast(1);
  o.executor = pool.get();
  auto r = ExpireSnapshots(*catalog_, *io_, id_, o, stop.get_token());
  EXPECT_THAT(r, IsError(ErrorCode::kCancelled));
  EXPECT_EQ(Load().metadata_location, location);
  EXPECT_EQ(FilesUnder("data").size(), 4u);
}

TEST_F(ExpireTest, AStopAfterTheCommitKeepsTheCommitAndLeavesOnlyOrphans) {
  Build(3, true);
  ASSERT_OK_AND_ASSIGN(auto rows, SortedRows(*catalog_, *io_, id_));
  std::stop_source stop;
  ExpireOptions o = KeepLast(1);
  o.hook = [&](ExpirePoint) { stop.request_stop(); };
  ASSERT_OK_AND_ASSIGN(ExpireReport r, ExpireSnapshots(*catalog_, *io_, id_, o, stop.get_token()));
  EXPECT_THAT(r.status, IsError(ErrorCode::kCancelled));
  EXPECT_FALSE(r.metadata_location.empty());
  EXPECT_EQ(Load().metadata.snapshots.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, rows);
  // What it did not delete and no snapshot names is an orphan: the 3 expired manifest lists
  // and the 3 appends' manifests. The 3 small data files stay: the retained replace
  // snapshot's rewritten manifests still name them (as DELETED entries), and remove-orphans
  // counts every entry as a reference, so they go only once those manifests leave the table.
  const table::Table t = Load();
  OrphanOptions oo;
  oo.warehouse = warehouse_;
  oo.older_than = std::chrono::milliseconds(0);
  oo.no_running_writers = true;
  oo.now_ms = table::NowMillis() + 60000;
  ASSERT_OK_AND_ASSIGN(OrphanReport orphans, RemoveOrphanFiles(*catalog_, *io_, t, oo));
  std::set<std::string> removed;
  for (const OrphanFile& f : orphans.removed) removed.insert(f.path);
  EXPECT_TRUE(r.deleted.empty());
  EXPECT_EQ(removed.size(), 6u);
  for (const std::string& p : removed) {
    EXPECT_NE(p.find("/metadata/"), std::string::npos) << p;
  }
  EXPECT_EQ(FilesUnder("data").size(), 4u);
  ASSERT_OK_AND_ASSIGN(after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, rows);
}

}  // namespace
}  // namespace geolake::maintenance
