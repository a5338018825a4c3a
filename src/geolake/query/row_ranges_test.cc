#include "geolake/query/row_ranges.h"

#include <gtest/gtest.h>

namespace geolake::query::internal {
namespace {

TEST(RowRangesTest, IntersectKeepsRowsInBoth) {
  EXPECT_EQ(Intersect({{0, 10}, {20, 30}}, {{5, 25}}), (Ranges{{5, 10}, {20, 25}}));
  EXPECT_EQ(Intersect({{0, 10}}, {{10, 20}}), Ranges{});
  EXPECT_EQ(Intersect({}, {{0, 5}}), Ranges{});
}

TEST(RowRangesTest, UnionMergesOverlappingAndTouchingRanges) {
  EXPECT_EQ(Union({{20, 30}, {0, 5}}, {{5, 8}, {25, 40}}), (Ranges{{0, 8}, {20, 40}}));
  EXPECT_EQ(Union({}, {{3, 4}}), (Ranges{{3, 4}}));
}

TEST(RowRangesTest, SubtractRemovesRowsOfTheSecond) {
  EXPECT_EQ(Subtract({{0, 100}}, {{10, 20}, {50, 60}}), (Ranges{{0, 10}, {20, 50}, {60, 100}}));
  EXPECT_EQ(Subtract({{0, 10}, {20, 30}}, {{0, 30}}), Ranges{});
  EXPECT_EQ(Subtract({{0, 10}}, {}), (Ranges{{0, 10}}));
}

}  // namespace
}  // namespace geolake::query::internal
