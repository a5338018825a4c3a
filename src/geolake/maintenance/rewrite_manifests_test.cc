#include "geolake/maintenance/rewrite_manifests.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <stop_token>
#include <tuple>

#include "geolake/maintenance/compact_test_util.h"
#include "geolake/maintenance/orphans.h"
#include "geolake/testing/testing.h"

namespace geolake::maintenance {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using namespace ::geolake::maintenance::testing;  // NOLINT(google-build-using-namespace)

class RewriteManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    warehouse_ =
        ::geolake::testing::BuildDir() + "/maintenance_rewrite_manifests_test/" + info->name();
    fs::remove_all(warehouse_);
    fs::create_directories(warehouse_);
    location_ = warehouse_ + "/ns/t";
    id_ = table::TableIdentifier::Parse("ns.t").value();
  }

  // `files` appends of one small file each (one manifest per commit). Partitioned: the cells
  // cycle 3, 1, 2, 0, ... so the manifests' order is not the partition order.
  void Build(int files, bool partitioned) {
    ASSERT_OK(CreateTestTable(*catalog_, *io_, id_, location_, partitioned).status());
    static const char* kCells[] = {"3", "1", "2", "0"};
    for (int f = 0; f < files; ++f) {
      const std::string cell = partitioned ? kCells[f % 4] : "";
      ASSERT_OK(AppendSmallFile(*catalog_, *io_, id_, f * 20, 20, cell, f + 1).status());
    }
  }

  table::Table Load() { return table::LoadTable(*catalog_, *io_, id_).value(); }

  std::vector<table::ManifestFile> CurrentManifests() {
    const table::Table t = Load();
    return table::ReadManifestList(*io_, t.metadata.current_snapshot()->manifest_list).value();
  }

  // Every live entry of the current snapshot by data file path.
  std::map<std::string, table::ManifestEntry> LiveEntries() {
    std::map<std::string, table::ManifestEntry> out;
    for (const table::ManifestFile& mf : CurrentManifests()) {
      const std::vector<table::ManifestEntry> entries = table::ReadManifest(*io_, mf).value();
      for (const table::ManifestEntry& e : entries) {
        if (e.status != table::ManifestEntryStatus::kDeleted) out[e.data_file.file_path] = e;
      }
    }
    return out;
  }

  std::vector<ManifestToRewrite> Inputs() {
    std::vector<ManifestToRewrite> out;
    for (const table::ManifestFile& mf : CurrentManifests()) {
      out.push_back({mf, table::ReadManifest(*io_, mf).value()});
    }
    return out;
  }

  std::map<std::string, fs::file_time_type> FilesUnder(const std::string& sub) {
    std::map<std::string, fs::file_time_type> out;
    for (const auto& e : fs::recursive_directory_iterator(location_ + "/" + sub)) {
      if (e.is_regular_file()) out[e.path().string()] = e.last_write_time();
    }
    return out;
  }

  // Files under the table that nothing references (what remove-orphans would delete now).
  std::vector<std::string> Unreferenced() {
    OrphanOptions oo;
    oo.warehouse = warehouse_;
    oo.older_than = std::chrono::milliseconds(0);
    oo.dry_run = true;
    oo.now_ms = table::NowMillis() + 60000;
    auto r = RemoveOrphanFiles(*catalog_, *io_, Load(), oo);
    EXPECT_OK(r.status());
    std::vector<std::string> out;
    if (r.ok()) {
      for (const auto& f : r->removed) out.push_back(f.path);
    }
    return out;
  }

  std::string warehouse_, location_;
  table::TableIdentifier id_;
  std::unique_ptr<io::FileIO> io_ = io::MakeLocalFileIO();
  std::unique_ptr<table::Catalog> catalog_ = table::MakeInMemoryCatalog();
};

// ---- Planning -------------------------------------------------------------------------------

TEST_F(RewriteManifestsTest, PlanOrdersEntriesByPartitionAndCutsAtTheTarget) {
  Build(12, true);
  const table::Table t = Load();
  const std::vector<ManifestToRewrite> inputs = Inputs();
  ASSERT_EQ(inputs.size(), 12u);

  // A large target: one manifest, entries in partition order ("0" .. "3"), 3 per cell.
  ASSERT_OK_AND_ASSIGN(ManifestRewritePlan one,
                       PlanManifestRewrite(t.metadata, inputs, kDefaultManifestTargetSizeBytes));
  ASSERT_EQ(one.manifests.size(), 1u);
  EXPECT_EQ(one.input_manifests, 12);
  EXPECT_EQ(one.live_entries, 12);
  EXPECT_EQ(one.manifests[0].entries.size(), 12u);
  EXPECT_EQ(one.manifests[0].first_partition, "0");
  EXPECT_EQ(one.manifests[0].last_partition, "3");
  std::vector<std::string> cells;
  for (const table::ManifestEntry& e : one.manifests[0].entries) {
    EXPECT_EQ(e.status, table::ManifestEntryStatus::kExisting);
    cells.push_back(std::get<std::string>(e.data_file.partition.at(0)));
  }
  EXPECT_EQ(cells,
            (std::vector<std::string>{"0", "0", "0", "1", "1", "1", "2", "2", "2", "3", "3", "3"}));
  EXPECT_EQ(one.manifests[0].rows, 12 * 20);

  // A target that fits each cell's 3 entries as one manifest exactly (measured by encoding
  // them): 4 manifests of 3 entries, each a contiguous partition range, each within the target.
  table::ManifestWriteOptions wo;
  wo.format_version = t.metadata.format_version;
  wo.schema = t.metadata.current_schema();
  wo.spec = t.metadata.default_spec();
  std::int64_t target = 0;
  for (std::size_t cell = 0; cell < 4; ++cell) {
    const auto& all = one.manifests[0].entries;
    const std::vector<table::ManifestEntry> part(all.begin() + cell * 3,
                                                 all.begin() + cell * 3 + 3);
    ASSERT_OK_AND_ASSIGN(table::EncodedManifest encoded, table::EncodeManifest(wo, part, "x"));
    target = std::max(target, encoded.entry.manifest_length);
  }
  ASSERT_OK_AND_ASSIGN(ManifestRewritePlan four, PlanManifestRewrite(t.metadata, inputs, target));
  ASSERT_EQ(four.manifests.size(), 4u);
  for (std::size_t i = 0; i < four.manifests.size(); ++i) {
    const PlannedManifest& pm = four.manifests[i];
    EXPECT_EQ(pm.entries.size(), 3u);
    EXPECT_EQ(pm.first_partition, std::to_string(i));
    EXPECT_EQ(pm.last_partition, std::to_string(i));
    EXPECT_LE(pm.bytes, target);
  }
  // Entries are never split finer than one per manifest.
  ASSERT_OK_AND_ASSIGN(ManifestRewritePlan tiny, PlanManifestRewrite(t.metadata, inputs, 1));
  EXPECT_EQ(tiny.manifests.size(), 12u);
  EXPECT_THAT(PlanManifestRewrite(t.metadata, inputs, 0), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(RewriteManifestsTest, PlanDropsDeletedEntriesAndRefusesEntriesWithoutNumbers) {
  Build(3, false);
  const table::Table t = Load();
  std::vector<ManifestToRewrite> inputs = Inputs();
  inputs[0].entries[0].status = table::ManifestEntryStatus::kDeleted;
  ASSERT_OK_AND_ASSIGN(ManifestRewritePlan plan,
                       PlanManifestRewrite(t.metadata, inputs, kDefaultManifestTargetSizeBytes));
  EXPECT_EQ(plan.live_entries, 2);
  EXPECT_EQ(plan.deleted_entries, 1);
  inputs[1].entries[0].sequence_number.reset();
  EXPECT_THAT(PlanManifestRewrite(t.metadata, inputs, kDefaultManifestTargetSizeBytes),
              IsErrorWith(ErrorCode::kCorruptData, inputs[1].manifest.manifest_path));
}

// ---- Rewriting a table ----------------------------------------------------------------------

TEST_F(RewriteManifestsTest, ManyManifestsBecomeOneAndEveryEntryKeepsItsNumbers) {
  Build(20, false);
  const table::Table before = Load();
  ASSERT_EQ(CurrentManifests().size(), 20u);
  const auto entries_before = LiveEntries();
  const auto data_before = FilesUnder("data");
  ASSERT_OK_AND_ASSIGN(auto rows_before, SortedRows(*catalog_, *io_, id_));

  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport r,
                       RewriteManifests(*catalog_, *io_, id_, RewriteManifestsOptions{}));
  EXPECT_FALSE(r.noop);
  EXPECT_EQ(r.commit_attempts, 1);
  EXPECT_EQ(r.plan.input_manifests, 20);
  EXPECT_EQ(r.plan.live_entries, 20);
  ASSERT_EQ(r.plan.manifests.size(), 1u);
  EXPECT_GT(r.output_bytes, 0);
  EXPECT_LT(r.output_bytes, r.plan.input_bytes);

  const table::Table after = Load();
  const table::Snapshot* snap = after.metadata.current_snapshot();
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->snapshot_id, r.snapshot_id);
  EXPECT_EQ(snap->parent_snapshot_id, before.metadata.current_snapshot_id);
  EXPECT_EQ(snap->summary.at("operation"), "replace");
  EXPECT_EQ(snap->summary.at("manifests-replaced"), "20");
  EXPECT_EQ(snap->summary.at("manifests-created"), "1");
  EXPECT_EQ(snap->summary.at("entries-processed"), "20");
  EXPECT_EQ(snap->summary.at("total-records"),
            before.metadata.current_snapshot()->summary.at("total-records"));
  EXPECT_EQ(snap->summary.count("added-data-files"), 0u);

  // One manifest of EXISTING entries; each keeps the snapshot id and the data and file
  // sequence numbers it had (Iceberg spec: a data sequence number never changes), and its file.
  const std::vector<table::ManifestFile> manifests = CurrentManifests();
  ASSERT_EQ(manifests.size(), 1u);
  EXPECT_EQ(manifests[0].existing_files_count, 20);
  EXPECT_EQ(manifests[0].added_files_count, 0);
  EXPECT_EQ(manifests[0].added_snapshot_id, r.snapshot_id);
  EXPECT_EQ(manifests[0].sequence_number, snap->sequence_number);
  EXPECT_EQ(manifests[0].min_sequence_number, 1);
  const auto entries_after = LiveEntries();
  ASSERT_EQ(entries_after.size(), entries_before.size());
  std::set<std::int64_t> seqs;
  for (const auto& [path, e] : entries_after) {
    const table::ManifestEntry& old = entries_before.at(path);
    EXPECT_EQ(e.status, table::ManifestEntryStatus::kExisting);
    EXPECT_EQ(e.snapshot_id, old.snapshot_id) << path;
    EXPECT_EQ(e.sequence_number, old.sequence_number) << path;
    EXPECT_EQ(e.file_sequence_number, old.file_sequence_number) << path;
    EXPECT_EQ(e.data_file, old.data_file) << path;
    seqs.insert(*e.sequence_number);
  }
  EXPECT_EQ(seqs.size(), 20u);  // 20 appends, 20 distinct numbers, none the rewrite's
  EXPECT_EQ(seqs.count(snap->sequence_number), 0u);
  // Data files untouched; the same rows now and in every older snapshot (time travel).
  EXPECT_EQ(FilesUnder("data"), data_before);
  ASSERT_OK_AND_ASSIGN(auto rows_after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(rows_after, rows_before);
  ASSERT_OK_AND_ASSIGN(auto at_fifth,
                       SortedRows(*catalog_, *io_, id_, before.metadata.snapshots[4].snapshot_id));
  EXPECT_EQ(at_fifth.size(), 5u * 20);
  EXPECT_TRUE(Unreferenced().empty());

  // Now one manifest within the target: a second run changes nothing.
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport again,
                       RewriteManifests(*catalog_, *io_, id_, RewriteManifestsOptions{}));
  EXPECT_TRUE(again.noop);
  EXPECT_NE(again.noop_reason.find("one manifest"), std::string::npos) << again.noop_reason;
  EXPECT_EQ(Load().metadata_location, after.metadata_location);
}

TEST_F(RewriteManifestsTest, PartitionedTableGetsManifestsOfContiguousPartitionsNearTheTarget) {
  Build(16, true);
  ASSERT_OK_AND_ASSIGN(auto rows_before, SortedRows(*catalog_, *io_, id_));
  RewriteManifestsOptions probe;
  probe.dry_run = true;
  probe.target_manifest_size_bytes = kDefaultManifestTargetSizeBytes;
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport dry, RewriteManifests(*catalog_, *io_, id_, probe));
  ASSERT_EQ(dry.plan.manifests.size(), 1u);
  // Target: the header and 9 of the 16 entries -> two manifests of 8, cells 0-1 and 2-3.
  const table::Table t = Load();
  table::ManifestWriteOptions wo;
  wo.format_version = t.metadata.format_version;
  wo.schema = t.metadata.current_schema();
  wo.spec = t.metadata.default_spec();
  ASSERT_OK_AND_ASSIGN(table::EncodedManifest empty, table::EncodeManifest(wo, {}, "x"));
  const std::int64_t header = empty.entry.manifest_length;
  RewriteManifestsOptions o;
  o.target_manifest_size_bytes = header + (dry.plan.manifests[0].bytes - header) * 9 / 16;
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport r, RewriteManifests(*catalog_, *io_, id_, o));
  ASSERT_EQ(r.plan.manifests.size(), 2u);
  EXPECT_EQ(r.plan.manifests[0].first_partition, "0");
  EXPECT_EQ(r.plan.manifests[0].last_partition, "1");
  EXPECT_EQ(r.plan.manifests[1].first_partition, "2");
  EXPECT_EQ(r.plan.manifests[1].last_partition, "3");
  const std::vector<table::ManifestFile> manifests = CurrentManifests();
  ASSERT_EQ(manifests.size(), 2u);
  for (const table::ManifestFile& mf : manifests) {
    EXPECT_EQ(mf.existing_files_count, 8);
    // Written sizes stay within the target (Java's writers may pass it by one entry).
    EXPECT_LE(mf.manifest_length, *o.target_manifest_size_bytes) << mf.manifest_path;
    // Each manifest's partition summary covers only its own cells: planning can skip it.
    ASSERT_EQ(mf.partitions.size(), 1u);
  }
  ASSERT_OK_AND_ASSIGN(auto rows_after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(rows_after, rows_before);
}

TEST_F(RewriteManifestsTest, TheTablePropertyIsTheDefaultTarget) {
  Build(8, true);
  ASSERT_OK(table::SetProperties(catalog_.get(), io_.get(), id_)
                .Set("commit.manifest.target-size-bytes", "1")
                .Commit()
                .status());
  RewriteManifestsOptions o;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport r, RewriteManifests(*catalog_, *io_, id_, o));
  EXPECT_EQ(r.plan.target_bytes, 1);
  EXPECT_EQ(r.plan.manifests.size(), 8u);
  o.target_manifest_size_bytes = 0;
  EXPECT_THAT(RewriteManifests(*catalog_, *io_, id_, o), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(RewriteManifestsTest, DryRunPlansAndChangesNothing) {
  Build(5, false);
  const std::string location = Load().metadata_location;
  const auto files = FilesUnder("");
  RewriteManifestsOptions o;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport r, RewriteManifests(*catalog_, *io_, id_, o));
  EXPECT_TRUE(r.dry_run);
  EXPECT_FALSE(r.noop);
  EXPECT_EQ(r.plan.input_manifests, 5);
  EXPECT_EQ(r.plan.manifests.size(), 1u);
  EXPECT_EQ(r.snapshot_id, 0);
  EXPECT_EQ(Load().metadata_location, location);
  EXPECT_EQ(FilesUnder(""), files);
}

TEST_F(RewriteManifestsTest, ASingleManifestOrAnEmptyTableIsANoop) {
  ASSERT_OK(CreateTestTable(*catalog_, *io_, id_, location_, false).status());
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport empty,
                       RewriteManifests(*catalog_, *io_, id_, RewriteManifestsOptions{}));
  EXPECT_TRUE(empty.noop);
  EXPECT_EQ(empty.noop_reason, "the table has no snapshot");
  ASSERT_OK(AppendSmallFile(*catalog_, *io_, id_, 0, 20, "", 1).status());
  const auto files = FilesUnder("");
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport one,
                       RewriteManifests(*catalog_, *io_, id_, RewriteManifestsOptions{}));
  EXPECT_TRUE(one.noop);
  EXPECT_EQ(one.snapshot_id, 0);
  EXPECT_EQ(Load().metadata.snapshots.size(), 1u);
  EXPECT_EQ(FilesUnder(""), files);
  EXPECT_THAT(RewriteManifests(*catalog_, *io_, table::TableIdentifier::Parse("ns.nope").value(),
                               RewriteManifestsOptions{}),
              IsError(ErrorCode::kNotFound));
}

TEST_F(RewriteManifestsTest, AConcurrentAppendIsRewrittenOnTheRetryAndTheLostAttemptDeleted) {
  Build(6, false);
  RacingCatalog racing(catalog_.get());
  std::string appended;
  racing.before_commit = [&] {
    auto f = AppendSmallFile(*catalog_, *io_, id_, 1000, 20, "", 77);
    ASSERT_OK(f.status());
    appended = f->data_file.file_path;
  };
  RewriteManifestsOptions o;
  ASSERT_OK_AND_ASSIGN(RewriteManifestsReport r, RewriteManifests(racing, *io_, id_, o));
  EXPECT_EQ(r.commit_attempts, 2);
  // Planned again on the new base: the appended file is in the one new manifest.
  EXPECT_EQ(r.plan.input_manifests, 7);
  EXPECT_EQ(r.plan.live_entries, 7);
  const auto entries = LiveEntries();
  EXPECT_EQ(entries.size(), 7u);
  EXPECT_EQ(entries.count(appended), 1u);
  EXPECT_EQ(CurrentManifests().size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto rows, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(rows.size(), 7u * 20);
  // The first attempt's manifest list and manifests are gone: nothing is left unreferenced.
  EXPECT_TRUE(Unreferenced().empty());
  EXPECT_EQ(Load().metadata.snapshots.size(), 8u);
}

TEST_F(RewriteManifestsTest, ADamagedManifestIsRefusedNamingItAndNothingChanges) {
  Build(4, false);
  const table::Table t = Load();
  const std::string victim = CurrentManifests()[2].manifest_path;
  ASSERT_OK(io_->WriteAll(victim, "garbage", /*overwrite=*/true));
  const auto files = FilesUnder("");
  EXPECT_THAT(RewriteManifests(*catalog_, *io_, id_, RewriteManifestsOptions{}),
              IsErrorWith(ErrorCode::kCorruptData, victim));
  EXPECT_EQ(Load().metadata_location, t.metadata_location);
  EXPECT_EQ(FilesUnder(""), files);  // nothing written, nothing deleted
  // A missing one too.
  ASSERT_OK(io_->Delete(victim));
  EXPECT_THAT(RewriteManifests(*catalog_, *io_, id_, RewriteManifestsOptions{}),
              IsErrorWith(ErrorCode::kCorruptData, victim));
  EXPECT_EQ(Load().metadata_location, t.metadata_location);
}

TEST_F(RewriteManifestsTest, AManifestListWhoseCountsDisagreeIsRefusedAndItsWritesDeleted) {
  Build(3, false);
  const table::Table t = Load();
  const table::Snapshot& s = *t.metadata.current_snapshot();
  // The list claims one live file more than its first manifest holds.
  std::vector<table::ManifestFile> list = CurrentManifests();
  list[0].added_files_count += 1;
  ASSERT_OK_AND_ASSIGN(
      std::string bytes,
      table::EncodeManifestList(t.metadata.format_version, s.snapshot_id, s.parent_snapshot_id,
                                s.sequence_number, s.first_row_id, list));
  ASSERT_OK(io_->WriteAll(s.manifest_list, bytes, /*overwrite=*/true));
  const auto files = FilesUnder("");
  EXPECT_THAT(RewriteManifests(*catalog_, *io_, id_, RewriteManifestsOptions{}),
              IsErrorWith(ErrorCode::kCorruptData, "same live files"));
  EXPECT_EQ(Load().metadata_location, t.metadata_location);
  EXPECT_EQ(FilesUnder(""), files);  // the manifest it had written is deleted again
}

TEST_F(RewriteManifestsTest, AStopBeforeTheSwapCommitsNothingAndLeavesNoFile) {
  Build(4, false);
  const table::Table t = Load();
  const auto files = FilesUnder("");
  std::stop_source stop;
  RewriteManifestsOptions o;
  o.commit_hook = [&](table::CommitPhase phase, int) {
    if (phase == table::CommitPhase::kMetadataWritten) stop.request_stop();
  };
  EXPECT_THAT(RewriteManifests(*catalog_, *io_, id_, o, stop.get_token()),
              IsError(ErrorCode::kCancelled));
  EXPECT_EQ(Load().metadata_location, t.metadata_location);
  EXPECT_EQ(FilesUnder(""), files);
}

}  // namespace
}  // namespace geolake::maintenance
