#include "geolake/table/time_travel.h"

#include <gtest/gtest.h>

#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;

TEST(ParseTimestampTest, IsoAndEpoch) {
  EXPECT_EQ(*ParseTimestampMillis("0"), 0);
  EXPECT_EQ(*ParseTimestampMillis("1700000000123"), 1700000000123);
  EXPECT_EQ(*ParseTimestampMillis("1970-01-02"), 86400000);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14T22:13:20Z"), 1700000000000);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-14T22:13:20.5Z"), 1700000000500);
  EXPECT_EQ(*ParseTimestampMillis("2023-11-15T00:13:20+02:00"), 1700000000000);
  EXPECT_EQ(ParseTimestampMillis("yesterday").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseTimestampMillis("2023-13-01").status().code(), ErrorCode::kInvalidArgument);
}

// Snapshots 10 (t=1000), 20 (t=2000), 30 (t=3000), current 30.
TableMetadata ThreeSnapshots() {
  TableMetadata m;
  for (std::int64_t i = 1; i <= 3; ++i) {
    Snapshot s;
    s.snapshot_id = 10 * i;
    s.timestamp_ms = 1000 * i;
    m.snapshots.push_back(s);
    m.snapshot_log.push_back({1000 * i, 10 * i});
  }
  m.current_snapshot_id = 30;
  return m;
}

TEST(ResolveSnapshotTest, IdThenTimeThenCurrent) {
  const TableMetadata m = ThreeSnapshots();
  EXPECT_EQ(*ResolveSnapshot(m, 20, std::nullopt), std::optional<std::int64_t>(20));
  EXPECT_THAT(ResolveSnapshot(m, 25, std::nullopt), IsError(ErrorCode::kNotFound));
  EXPECT_EQ(*ResolveSnapshot(m, std::nullopt, 2500), std::optional<std::int64_t>(20));
  EXPECT_EQ(*ResolveSnapshot(m, std::nullopt, 2000), std::optional<std::int64_t>(20));
  EXPECT_THAT(ResolveSnapshot(m, std::nullopt, 999), IsError(ErrorCode::kNotFound));
  EXPECT_EQ(*ResolveSnapshot(m, std::nullopt, std::nullopt), std::optional<std::int64_t>(30));
  EXPECT_EQ(*ResolveSnapshot(TableMetadata{}, std::nullopt, std::nullopt), std::nullopt);
}

}  // namespace
}  // namespace geolake::table
