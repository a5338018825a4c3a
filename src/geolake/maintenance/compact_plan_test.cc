#include "geolake/maintenance/compact_plan.h"

#include <gtest/gtest.h>

#include "geolake/testing/testing.h"

namespace geolake::maintenance {
namespace {

using ::geolake::testing::IsErrorWith;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// A table partitioned by identity(geo_cell), target 100 MiB unless a test overrides it.
table::TableMetadata Metadata(std::optional<std::int64_t> target = 100 * kMiB) {
  table::NewTableOptions o;
  o.location = "/w/ns/t";
  o.schema = std::make_shared<const table::Schema>(
      0, std::vector<table::NestedField>{
             table::NestedField::Required(1, "id", table::Type::Long()),
             table::NestedField::Optional(2, "geo_cell", table::Type::String())});
  o.spec = std::make_shared<const table::PartitionSpec>(
      0, std::vector<table::PartitionField>{{2, {}, 0, "geo_cell", table::Transform::Identity()}});
  if (target) o.properties["write.target-file-size-bytes"] = std::to_string(*target);
  return table::NewTableMetadata(o).value();
}

ScanFile File(const std::string& name, std::int64_t bytes, const std::string& cell = "0",
              std::int32_t spec_id = 0) {
  ScanFile f;
  f.file.file_path = "/w/ns/t/data/" + name + ".parquet";
  f.file.file_size_in_bytes = bytes;
  f.file.record_count = bytes / 100;
  f.file.partition = {table::Value(cell)};
  f.spec_id = spec_id;
  return f;
}

std::vector<std::string> Names(const FileGroup& g) {
  std::vector<std::string> out;
  for (const CandidateFile& c : g.files) {
    std::string p = c.file.file_path;
    p = p.substr(p.rfind('/') + 1);
    out.push_back(p.substr(0, p.size() - 8));
  }
  return out;
}

TEST(CompactPlanTest, TargetComesFromTheTablePropertyAndMinMaxFromItsRatios) {
  ASSERT_OK_AND_ASSIGN(SizeThresholds s, ResolveSizes({}, Metadata(100 * kMiB)));
  EXPECT_EQ(s.target, 100 * kMiB);
  EXPECT_EQ(s.min, 75 * kMiB);
  EXPECT_EQ(s.max, 180 * kMiB);
  EXPECT_EQ(s.write_max, 140 * kMiB);  // target + (max - target) / 2
}

TEST(CompactPlanTest, TargetDefaultsToIcebergs512MiBWithoutTheProperty) {
  ASSERT_OK_AND_ASSIGN(SizeThresholds s, ResolveSizes({}, Metadata(std::nullopt)));
  EXPECT_EQ(s.target, 512 * kMiB);
  EXPECT_EQ(s.min, 384 * kMiB);
}

TEST(CompactPlanTest, GivenSizesWinOverTheTable) {
  PlanOptions o;
  o.target_file_size_bytes = 10 * kMiB;
  o.min_file_size_bytes = 1 * kMiB;
  o.max_file_size_bytes = 50 * kMiB;
  ASSERT_OK_AND_ASSIGN(SizeThresholds s, ResolveSizes(o, Metadata()));
  EXPECT_EQ(s.target, 10 * kMiB);
  EXPECT_EQ(s.min, 1 * kMiB);
  EXPECT_EQ(s.max, 50 * kMiB);
  EXPECT_EQ(s.write_max, 30 * kMiB);
}

TEST(CompactPlanTest, RefusesInconsistentSizesNamingTheOption) {
  const auto meta = Metadata();
  PlanOptions o;
  o.target_file_size_bytes = 0;
  EXPECT_THAT(ResolveSizes(o, meta),
              IsErrorWith(ErrorCode::kInvalidArgument, "target-file-size 0"));
  o = {};
  o.min_file_size_bytes = 100 * kMiB;  // == target
  EXPECT_THAT(ResolveSizes(o, meta), IsErrorWith(ErrorCode::kInvalidArgument, "min-file-size"));
  o = {};
  o.min_file_size_bytes = -1;
  EXPECT_THAT(ResolveSizes(o, meta), IsErrorWith(ErrorCode::kInvalidArgument, "negative"));
  o = {};
  o.max_file_size_bytes = 100 * kMiB;  // == target
  EXPECT_THAT(ResolveSizes(o, meta), IsErrorWith(ErrorCode::kInvalidArgument, "max-file-size"));
  o = {};
  o.min_input_files = 0;
  EXPECT_THAT(ResolveSizes(o, meta), IsErrorWith(ErrorCode::kInvalidArgument, "min-input-files"));
  o = {};
  o.max_file_group_size_bytes = 0;
  EXPECT_THAT(ResolveSizes(o, meta),
              IsErrorWith(ErrorCode::kInvalidArgument, "max-file-group-size"));
  o = {};
  o.max_files_to_rewrite = 0;
  EXPECT_THAT(ResolveSizes(o, meta),
              IsErrorWith(ErrorCode::kInvalidArgument, "max-files-to-rewrite"));
  // The plan refuses what ResolveSizes refuses.
  o = {};
  o.max_file_size_bytes = 1;
  EXPECT_THAT(PlanFileGroups({File("a", 1)}, meta, o),
              IsErrorWith(ErrorCode::kInvalidArgument, "max-file-size"));
}

TEST(CompactPlanTest, CandidatesAreStrictlyBelowMinOrStrictlyAboveMax) {
  // min 75 MiB, max 180 MiB; five files of each kind so the group rule keeps them.
  std::vector<ScanFile> files;
  for (int i = 0; i < 5; ++i) {
    files.push_back(File("small" + std::to_string(i), 75 * kMiB - 1));
    files.push_back(File("atmin" + std::to_string(i), 75 * kMiB));
    files.push_back(File("mid" + std::to_string(i), 120 * kMiB));
    files.push_back(File("atmax" + std::to_string(i), 180 * kMiB));
    files.push_back(File("large" + std::to_string(i), 180 * kMiB + 1));
  }
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), {}));
  EXPECT_EQ(plan.files_scanned, 25);
  EXPECT_EQ(plan.candidate_files, 10);
  ASSERT_EQ(plan.groups.size(), 1u);
  for (const CandidateFile& c : plan.groups[0].files) {
    const std::string& p = c.file.file_path;
    const bool small = p.find("small") != std::string::npos;
    EXPECT_TRUE(small || p.find("large") != std::string::npos) << p;
    EXPECT_EQ(c.reason, small ? FileReason::kTooSmall : FileReason::kTooLarge);
  }
}

TEST(CompactPlanTest, GroupRuleNeedsMinInputFilesOrMoreBytesThanTheTargetOrOneOversizedFile) {
  const auto meta = Metadata();
  // Four small files of 10 MiB: 4 < min-input-files 5 and 40 MiB <= target: not rewritten.
  std::vector<ScanFile> four;
  for (int i = 0; i < 4; ++i) four.push_back(File("f" + std::to_string(i), 10 * kMiB));
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(four, meta, {}));
  EXPECT_TRUE(plan.groups.empty());
  EXPECT_EQ(plan.groups_considered, 1);
  EXPECT_EQ(plan.groups_skipped, 1);
  EXPECT_EQ(plan.files_skipped_in_groups, 4);

  // The fifth file makes min-input-files.
  auto five = four;
  five.push_back(File("f4", 10 * kMiB));
  ASSERT_OK_AND_ASSIGN(plan, PlanFileGroups(five, meta, {}));
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].reason, "5 files >= min-input-files 5");

  // min-input-files 4 takes the four.
  PlanOptions o;
  o.min_input_files = 4;
  ASSERT_OK_AND_ASSIGN(plan, PlanFileGroups(four, meta, o));
  EXPECT_EQ(plan.groups.size(), 1u);

  // Two files whose bytes exceed the target: 70 + 70 MiB > 100 MiB.
  ASSERT_OK_AND_ASSIGN(plan,
                       PlanFileGroups({File("a", 70 * kMiB), File("b", 70 * kMiB)}, meta, {}));
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].reason, "2 files, 140 MiB > target 100 MiB");

  // One small file alone is never rewritten, even with min-input-files 1 (it needs > 1 file).
  o.min_input_files = 1;
  ASSERT_OK_AND_ASSIGN(plan, PlanFileGroups({File("a", 10 * kMiB)}, meta, o));
  EXPECT_TRUE(plan.groups.empty());

  // One oversized file alone is (it is split).
  ASSERT_OK_AND_ASSIGN(plan, PlanFileGroups({File("big", 400 * kMiB)}, meta, {}));
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].reason, "400 MiB > max-file-size 180 MiB");
  EXPECT_EQ(plan.groups[0].expected_output_files, 4);  // 400 / 100, remainder 0
}

TEST(CompactPlanTest, GroupsNeverSpanPartitionsAndKeepScanOrder) {
  std::vector<ScanFile> files;
  for (int i = 0; i < 6; ++i) {
    files.push_back(File("b" + std::to_string(i), kMiB, "B"));
    files.push_back(File("a" + std::to_string(i), kMiB, "A"));
  }
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), {}));
  ASSERT_EQ(plan.groups.size(), 2u);
  // Partition B appears first in the scan.
  EXPECT_EQ(plan.groups[0].partition_text, "geo_cell=B");
  EXPECT_EQ(Names(plan.groups[0]), (std::vector<std::string>{"b0", "b1", "b2", "b3", "b4", "b5"}));
  EXPECT_EQ(plan.groups[1].partition_text, "geo_cell=A");
  EXPECT_EQ(plan.groups[1].index, 1);
  EXPECT_EQ(plan.groups[1].partition_index, 0);
}

TEST(CompactPlanTest, NullPartitionIsItsOwnPartition) {
  std::vector<ScanFile> files;
  for (int i = 0; i < 5; ++i) {
    ScanFile f = File("n" + std::to_string(i), kMiB);
    f.file.partition = {table::Value()};
    files.push_back(f);
    files.push_back(File("a" + std::to_string(i), kMiB, "A"));
  }
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), {}));
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].partition_text, "geo_cell=null");
}

TEST(CompactPlanTest, FilesOfOlderSpecsShareOneUnpartitionedBucket) {
  auto meta = Metadata();
  // Spec 1 (current) is unpartitioned; spec 0 files from two cells are treated as one bucket.
  meta.partition_specs.push_back(
      std::make_shared<const table::PartitionSpec>(1, std::vector<table::PartitionField>{}));
  meta.default_spec_id = 1;
  std::vector<ScanFile> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(File("x" + std::to_string(i), kMiB, "X", 0));
    files.push_back(File("y" + std::to_string(i), kMiB, "Y", 0));
  }
  for (int i = 0; i < 5; ++i) {
    ScanFile f = File("cur" + std::to_string(i), kMiB, "", 1);
    f.file.partition.clear();
    files.push_back(f);
  }
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, meta, {}));
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_TRUE(plan.groups[0].older_specs);
  EXPECT_EQ(plan.groups[0].partition_text, "(older partition specs)");
  EXPECT_TRUE(plan.groups[0].partition.empty());
  EXPECT_EQ(plan.groups[0].files.size(), 6u);
  EXPECT_EQ(plan.groups[1].partition_text, "(unpartitioned)");
}

TEST(CompactPlanTest, BinPackingIsNextFitInScanOrderUpToTheGroupSize) {
  PlanOptions o;
  o.max_file_group_size_bytes = 10 * kMiB;
  o.min_input_files = 2;
  // 6 + 3 fit (9); 5 does not (14) and opens a group; 2 fits with 5 (7); 4 does not (11);
  // next-fit never goes back to the first group even though 1 MiB would fit there.
  std::vector<ScanFile> files = {File("a", 6 * kMiB), File("b", 3 * kMiB), File("c", 5 * kMiB),
                                 File("d", 2 * kMiB), File("e", 4 * kMiB), File("f", 1 * kMiB)};
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), o));
  ASSERT_EQ(plan.groups.size(), 3u);
  EXPECT_EQ(Names(plan.groups[0]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Names(plan.groups[1]), (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(Names(plan.groups[2]), (std::vector<std::string>{"e", "f"}));
  EXPECT_EQ(plan.groups[2].partition_index, 2);
}

TEST(CompactPlanTest, AFileLargerThanTheGroupSizeGetsAGroupOfItsOwn) {
  PlanOptions o;
  o.max_file_group_size_bytes = 300 * kMiB;
  std::vector<ScanFile> files = {File("s1", kMiB), File("huge", 500 * kMiB), File("s2", kMiB)};
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), o));
  // [s1] skipped (one small file), [huge] kept (> max-file-size), [s2] skipped.
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(Names(plan.groups[0]), (std::vector<std::string>{"huge"}));
  EXPECT_EQ(plan.groups_considered, 3);
}

TEST(CompactPlanTest, MaxFileGroupInputFilesCapsEachGroup) {
  PlanOptions o;
  o.max_file_group_input_files = 5;
  std::vector<ScanFile> files;
  for (int i = 0; i < 12; ++i) files.push_back(File("f" + std::to_string(i), kMiB));
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), o));
  // 5 + 5 rewritten; the last group of 2 is below min-input-files and 2 MiB <= target.
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups_skipped, 1);
}

TEST(CompactPlanTest, RewriteAllTakesEveryFileAndEveryGroup) {
  PlanOptions o;
  o.rewrite_all = true;
  std::vector<ScanFile> files = {File("mid", 100 * kMiB), File("lonely", kMiB, "B")};
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), o));
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].reason, "rewrite-all");
  EXPECT_EQ(plan.groups[0].files[0].reason, FileReason::kRewriteAll);
  EXPECT_EQ(plan.candidate_files, 2);
}

TEST(CompactPlanTest, MaxFilesToRewriteIsACapOverGroupsInPlanOrder) {
  PlanOptions o;
  o.max_files_to_rewrite = 7;
  std::vector<ScanFile> files;
  for (int i = 0; i < 5; ++i) {
    files.push_back(File("a" + std::to_string(i), kMiB, "A"));
    files.push_back(File("b" + std::to_string(i), kMiB, "B"));
    files.push_back(File("c" + std::to_string(i), kMiB, "C"));
  }
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), o));
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].files.size(), 5u);
  EXPECT_EQ(plan.groups[1].files.size(), 2u);
  EXPECT_EQ(plan.InputFiles(), 7);
  EXPECT_EQ(plan.groups[1].input_bytes, 2 * kMiB);
}

TEST(CompactPlanTest, JobOrderSortsGroups) {
  std::vector<ScanFile> files;
  for (int i = 0; i < 5; ++i) files.push_back(File("a" + std::to_string(i), kMiB, "A"));
  for (int i = 0; i < 7; ++i) files.push_back(File("b" + std::to_string(i), 2 * kMiB, "B"));
  for (int i = 0; i < 6; ++i) files.push_back(File("c" + std::to_string(i), 3 * kMiB, "C"));
  PlanOptions o;
  ASSERT_OK_AND_ASSIGN(o.job_order, ParseRewriteJobOrder("bytes-desc"));
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups(files, Metadata(), o));
  ASSERT_EQ(plan.groups.size(), 3u);
  EXPECT_EQ(plan.groups[0].partition_text, "geo_cell=C");  // 18 MiB
  EXPECT_EQ(plan.groups[1].partition_text, "geo_cell=B");  // 14 MiB
  EXPECT_EQ(plan.groups[0].index, 0);
  ASSERT_OK_AND_ASSIGN(o.job_order, ParseRewriteJobOrder("files-asc"));
  ASSERT_OK_AND_ASSIGN(plan, PlanFileGroups(files, Metadata(), o));
  EXPECT_EQ(plan.groups[0].partition_text, "geo_cell=A");
  EXPECT_EQ(plan.groups[2].partition_text, "geo_cell=B");
  EXPECT_THAT(ParseRewriteJobOrder("size"), IsErrorWith(ErrorCode::kInvalidArgument, "bytes-asc"));
}

TEST(CompactPlanTest, OutputFileCountFollowsIcebergsSizingRule) {
  SizeThresholds s{100, 75, 180, 140};
  EXPECT_EQ(ExpectedOutputFiles(50, s), 1);   // below the target
  EXPECT_EQ(ExpectedOutputFiles(100, s), 1);  // exactly one target, remainder 0
  EXPECT_EQ(ExpectedOutputFiles(180, s), 2);  // remainder 80 > min 75: ceil
  EXPECT_EQ(ExpectedOutputFiles(175, s), 2);  // remainder 75 is not > 75; 175 / 1 >= 110: ceil
  EXPECT_EQ(ExpectedOutputFiles(205, s), 2);  // remainder 5; 205 / 2 = 102.5 < 110: floor
  EXPECT_EQ(ExpectedOutputFiles(230, s), 3);  // remainder 30; 230 / 2 = 115 >= 110: ceil
  EXPECT_EQ(ExpectedOutputFiles(1000, s), 10);
  // Split sizes: bytes / files + 5 KiB, clamped to [target, write_max].
  SizeThresholds big{100 * kMiB, 75 * kMiB, 180 * kMiB, 140 * kMiB};
  EXPECT_EQ(SplitSize(50 * kMiB, big), 100 * kMiB);  // one file below the target
  EXPECT_EQ(SplitSize(205 * kMiB, big), 205 * kMiB / 2 + 5 * 1024);
  EXPECT_EQ(SplitSize(1000 * kMiB, big), 100 * kMiB + 5 * 1024);
}

TEST(CompactPlanTest, EmptyTablePlansNothing) {
  ASSERT_OK_AND_ASSIGN(CompactionPlan plan, PlanFileGroups({}, Metadata(), {}));
  EXPECT_TRUE(plan.groups.empty());
  EXPECT_EQ(plan.InputBytes(), 0);
}

}  // namespace
}  // namespace geolake::maintenance
