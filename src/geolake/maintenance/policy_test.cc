#include "geolake/maintenance/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace geolake::maintenance {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr std::int64_t kDayMs = std::int64_t{24} * 3600 * 1000;
constexpr const char* kTeamsPolicy =
    R"({"crs": "EPSG:4326", "retention_days": 30, "max_concurrent_compactions": 4})";

// The one error line of `json`, which must be refused with exactly one.
std::string OnlyError(const std::string& json) {
  PolicyCheck check = ParsePolicy(json);
  EXPECT_FALSE(check.policy.has_value()) << json;
  EXPECT_THAT(check.errors, SizeIs(1)) << json;
  return check.errors.empty() ? "" : check.errors.front();
}

// The teams' policy with `extra` keys added (a JSON fragment starting with a comma).
std::string With(const std::string& extra) {
  std::string base = kTeamsPolicy;
  base.pop_back();
  return base + extra + "}";
}

TEST(PolicyTest, TheThreeKeyPolicyTeamsKeepIsValidWithEveryDefault) {
  PolicyCheck check = ParsePolicy(kTeamsPolicy);
  ASSERT_TRUE(check.policy.has_value()) << ::testing::PrintToString(check.errors);
  const MaintenancePolicy& p = *check.policy;
  EXPECT_EQ(p.crs, "EPSG:4326");
  EXPECT_EQ(p.retention_days, 30);
  EXPECT_EQ(p.max_concurrent_compactions, 4);
  EXPECT_EQ(p.compaction_strategy, CompactStrategy::kHilbert);
  EXPECT_FALSE(p.target_file_size_bytes.has_value());
  EXPECT_EQ(p.small_file_count, 5);
  EXPECT_EQ(p.max_manifests_per_snapshot, 50);
  EXPECT_EQ(p.max_snapshots, 100);
  EXPECT_EQ(p.orphan_min_age_hours, 72);
}

TEST(PolicyTest, EveryKeyIsRead) {
  PolicyCheck check = ParsePolicy(With(
      R"(, "compaction_strategy": "binpack", "target_file_size": "64MiB",
      "small_file_count": 9, "small_file_ratio": 0.25, "min_average_file_size": 1048576,
      "max_manifests_per_snapshot": 7, "max_snapshots": 40, "max_snapshot_age_days": 45,
      "min_snapshots_to_keep": 3, "max_metadata_files": 20, "max_orphan_bytes": "1KiB",
      "orphan_min_age_hours": 24)"));
  ASSERT_TRUE(check.policy.has_value()) << ::testing::PrintToString(check.errors);
  const MaintenancePolicy& p = *check.policy;
  EXPECT_EQ(p.compaction_strategy, CompactStrategy::kBinpack);
  EXPECT_EQ(p.target_file_size_bytes, std::int64_t{64} << 20);
  EXPECT_EQ(p.small_file_count, 9);
  EXPECT_DOUBLE_EQ(p.small_file_ratio, 0.25);
  EXPECT_EQ(p.min_average_file_size_bytes, std::int64_t{1} << 20);
  EXPECT_EQ(p.max_manifests_per_snapshot, 7);
  EXPECT_EQ(p.max_snapshots, 40);
  EXPECT_EQ(p.max_snapshot_age_days, 45);
  EXPECT_EQ(p.min_snapshots_to_keep, 3);
  EXPECT_EQ(p.max_metadata_files, 20);
  EXPECT_EQ(p.max_orphan_bytes, 1024);
  EXPECT_EQ(p.orphan_min_age_hours, 24);
}

TEST(PolicyTest, EachRuleHasItsOwnErrorLine) {
  EXPECT_THAT(OnlyError("[1, 2]"), HasSubstr("must be a JSON object"));
  EXPECT_THAT(OnlyError("{\"crs\": "), HasSubstr("not valid JSON"));
  EXPECT_THAT(OnlyError(With(R"(, "retention": 30)")),
              HasSubstr("unknown key \"retention\" (known: crs, retention_days"));
  EXPECT_THAT(OnlyError(R"({"crs": "EPSG:4326", "retention_days": 30})"),
              HasSubstr("\"max_concurrent_compactions\" is required"));
  EXPECT_THAT(OnlyError(R"({"crs": "EPSG:99999999", "retention_days": 30,
                             "max_concurrent_compactions": 4})"),
              HasSubstr("\"crs\" \"EPSG:99999999\" is not a CRS PROJ knows"));
  EXPECT_THAT(OnlyError(R"({"crs": "EPSG:4326", "retention_days": 13,
                             "max_concurrent_compactions": 4})"),
              HasSubstr("\"retention_days\" is 13: it must be at least 14"));
  EXPECT_THAT(OnlyError(R"({"crs": "EPSG:4326", "retention_days": 30,
                             "max_concurrent_compactions": 6})"),
              HasSubstr("\"max_concurrent_compactions\" is 6: it must be between 1 and 5"));
  EXPECT_THAT(OnlyError(R"({"crs": "EPSG:4326", "retention_days": "30",
                             "max_concurrent_compactions": 4})"),
              HasSubstr("\"retention_days\" must be an integer, not \"30\""));
  EXPECT_THAT(OnlyError(With(R"(, "compaction_strategy": "zorder")")),
              HasSubstr("expected binpack, sort or hilbert"));
  EXPECT_THAT(OnlyError(With(R"(, "target_file_size": "12 parsecs")")),
              HasSubstr("\"target_file_size\""));
  EXPECT_THAT(OnlyError(With(R"(, "target_file_size": 0)")),
              HasSubstr("\"target_file_size\" is 0: it must be above 0"));
  EXPECT_THAT(OnlyError(With(R"(, "small_file_ratio": 1.5)")),
              HasSubstr("\"small_file_ratio\" is 1.5: it must be above 0 and at most 1"));
  EXPECT_THAT(OnlyError(With(R"(, "target_file_size": "64MiB", "min_average_file_size": "1GiB")")),
              HasSubstr("is above \"target_file_size\""));
  EXPECT_THAT(OnlyError(With(R"(, "max_snapshot_age_days": 7)")),
              HasSubstr("\"max_snapshot_age_days\" (7) is below \"retention_days\" (30)"));
  EXPECT_THAT(OnlyError(With(R"(, "max_snapshots": 2, "min_snapshots_to_keep": 5)")),
              HasSubstr("\"max_snapshots\" (2) is below \"min_snapshots_to_keep\" (5)"));
  EXPECT_THAT(OnlyError(With(R"(, "orphan_min_age_hours": 0)")),
              HasSubstr("\"orphan_min_age_hours\" is 0: it must be at least 1"));
  EXPECT_THAT(OnlyError(With(R"(, "orphan_min_age_hours": 2000)")),
              HasSubstr("is above \"retention_days\" x 24 (720)"));
}

TEST(PolicyTest, AllProblemsAreReportedAtOnce) {
  PolicyCheck check = ParsePolicy(
      R"({"crs": "EPSG:4326", "retention_days": 7, "max_concurrent_compactions": 9, "x": 1})");
  EXPECT_FALSE(check.policy.has_value());
  EXPECT_THAT(check.errors, SizeIs(3));
}

TEST(PolicyTest, CrsMismatchComparesCodesIgnoringCase) {
  MaintenancePolicy p = *ParsePolicy(kTeamsPolicy).policy;
  EXPECT_FALSE(CrsMismatch(p, "ns.t", "epsg:4326").has_value());
  EXPECT_THAT(CrsMismatch(p, "ns.t", "EPSG:5070").value_or(""),
              HasSubstr("table 'ns.t' has CRS EPSG:5070, the policy expects EPSG:4326"));
  EXPECT_THAT(CrsMismatch(p, "ns.t", "").value_or(""), HasSubstr("has CRS (none)"));
}

// A table that needs nothing under the teams' policy.
TableMeasurement Healthy() {
  TableMeasurement m;
  m.table = "ns.t";
  m.live_files = 4;
  m.live_bytes = std::int64_t{4} * (400 << 20);
  m.small_files = 0;
  m.target_file_size_bytes = std::int64_t{512} << 20;
  m.min_file_size_bytes = std::int64_t{384} << 20;
  m.manifests = 3;
  m.snapshots = 10;
  m.oldest_snapshot_age_ms = 3 * kDayMs;
  m.metadata_files = 11;
  m.previous_versions_max = 100;
  return m;
}

std::vector<bool> Runs(const std::vector<TaskDecision>& decisions) {
  std::vector<bool> out;
  for (const TaskDecision& d : decisions) out.push_back(d.run);
  return out;
}

TEST(PolicyTest, NothingRunsOnAHealthyTable) {
  MaintenancePolicy p = *ParsePolicy(kTeamsPolicy).policy;
  std::vector<TaskDecision> d = Decide(p, Healthy());
  ASSERT_THAT(d, SizeIs(4));
  EXPECT_EQ(d[0].task, MaintenanceTask::kCompact);
  EXPECT_EQ(d[1].task, MaintenanceTask::kRewriteManifests);
  EXPECT_EQ(d[2].task, MaintenanceTask::kExpireSnapshots);
  EXPECT_EQ(d[3].task, MaintenanceTask::kRemoveOrphans);
  EXPECT_THAT(Runs(d), ElementsAre(false, false, false, false));
  EXPECT_THAT(d[0].why, HasSubstr("no threshold crossed"));
}

TEST(PolicyTest, EachThresholdRunsOnlyItsTask) {
  MaintenancePolicy p = *ParsePolicy(kTeamsPolicy).policy;

  TableMeasurement m = Healthy();
  m.live_files = 20;
  m.small_files = 5;
  m.compaction_groups = 1;
  EXPECT_THAT(Runs(Decide(p, m)), ElementsAre(true, false, false, false));
  EXPECT_THAT(Decide(p, m)[0].why, HasSubstr("5 small files >= small_file_count 5"));

  m = Healthy();
  m.live_files = 6;
  m.small_files = 3;  // below the count, but half of the files
  m.compaction_groups = 1;
  EXPECT_THAT(Decide(p, m)[0].why, HasSubstr("small-file ratio 0.50 >= small_file_ratio 0.50"));
  EXPECT_TRUE(Decide(p, m)[0].run);

  m = Healthy();
  m.live_bytes = 4 * (32 << 20);  // average 32 MiB < 512 MiB / 8
  m.compaction_groups = 1;
  EXPECT_THAT(Decide(p, m)[0].why,
              HasSubstr("average file 32.0 MiB < min_average_file_size 64.0 MiB (1 group)"));

  m = Healthy();
  m.manifests = 51;
  EXPECT_THAT(Runs(Decide(p, m)), ElementsAre(false, true, false, false));

  m = Healthy();
  m.snapshots = 101;
  m.expirable_snapshots = 12;
  EXPECT_THAT(Runs(Decide(p, m)), ElementsAre(false, false, true, false));
  EXPECT_THAT(Decide(p, m)[2].why, HasSubstr("101 snapshots > max_snapshots 100 (12 older"));

  m = Healthy();
  m.oldest_snapshot_age_ms = 31 * kDayMs;
  m.expirable_snapshots = 1;
  EXPECT_THAT(Runs(Decide(p, m)), ElementsAre(false, false, true, false));

  m = Healthy();
  m.orphan_files = 2;
  m.orphan_bytes = 10;
  EXPECT_THAT(Runs(Decide(p, m)), ElementsAre(false, false, false, true));

  m = Healthy();
  m.metadata_files = 102;  // previous-versions-max 100 keeps 101
  m.orphan_files = 1;
  m.orphan_bytes = 0;
  EXPECT_THAT(Runs(Decide(p, m)), ElementsAre(false, false, false, true));
  EXPECT_THAT(Decide(p, m)[3].why, HasSubstr("102 metadata files > previous-versions-max + 1"));
}

TEST(PolicyTest, ACrossedThresholdWithNothingToDoDoesNotRun) {
  MaintenancePolicy p = *ParsePolicy(kTeamsPolicy).policy;
  TableMeasurement m = Healthy();
  m.live_files = 20;
  m.small_files = 20;
  m.compaction_groups = 0;  // e.g. one small file per partition
  EXPECT_FALSE(Decide(p, m)[0].run);
  EXPECT_THAT(Decide(p, m)[0].why, HasSubstr("no file group qualifies"));

  m = Healthy();
  m.snapshots = 500;
  m.expirable_snapshots = 0;  // all younger than the retention
  EXPECT_FALSE(Decide(p, m)[2].run);
  EXPECT_THAT(Decide(p, m)[2].why, HasSubstr("none is older than retention_days 30"));

  m = Healthy();
  m.metadata_files = 300;
  m.orphan_files = 0;  // too young to remove
  EXPECT_FALSE(Decide(p, m)[3].run);
  EXPECT_THAT(Decide(p, m)[3].why, HasSubstr("no orphan is older than orphan_min_age_hours 72"));
}

}  // namespace
}  // namespace geolake::maintenance
