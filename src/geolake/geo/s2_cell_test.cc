#include "geolake/geo/s2_cell.h"

#include <gtest/gtest.h>

#include <random>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;

// Derivation for lon/lat (0, 0), by hand from the S2 cell id layout (3 face bits, 2 bits per
// level along the Hilbert curve, then a 1 marker bit):
// (0, 0) is the unit vector (1, 0, 0), the centre of face 0, so u = v = 0, s = t = 0.5 and the
// leaf coordinates are i = j = 2^29: the top bits are (1, 1) and all lower bits are 0.
// On face 0 (orientation 0) the quadrant (i=1, j=1) is Hilbert position 2 and leaves the
// orientation unchanged; quadrant (0, 0) is position 0 in either orientation. So level 1 is
// face 000, position 10, marker 1 -> 0x1400000000000000 (token "14"), and level 10 is
// 000 10 00*9 1 -> bits 0b10 << 59 | 1 << 40 = 0x1000010000000000 (token "100001").
TEST(S2CellTest, KnownCellsAtTheOrigin) {
  ASSERT_OK_AND_ASSIGN(uint64_t level1, S2CellIdForLonLat(0, 0, 1));
  EXPECT_EQ(level1, 0x1400000000000000u);
  EXPECT_EQ(S2CellToken(level1).value(), "14");
  ASSERT_OK_AND_ASSIGN(uint64_t level10, S2CellIdForLonLat(0, 0, 10));
  EXPECT_EQ(level10, 0x1000010000000000u);
  EXPECT_EQ(S2CellToken(level10).value(), "100001");
  EXPECT_EQ(S2CellLevel(level10).value(), 10);
  EXPECT_EQ(S2CellIdFromToken("100001").value(), level10);
  // Level 0 is the face itself: face 0, marker at bit 60.
  EXPECT_EQ(S2CellIdForLonLat(0, 0, 0).value(), 0x1000000000000000u);
}

TEST(S2CellTest, CellContainsItsPointAndHasItsLevel) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> lon(-180, 180);
  std::uniform_real_distribution<double> lat(-90, 90);
  for (int i = 0; i < 500; ++i) {
    const double x = lon(rng);
    const double y = lat(rng);
    for (int level : {0, 5, 12, 20, 30}) {
      ASSERT_OK_AND_ASSIGN(uint64_t id, S2CellIdForLonLat(x, y, level));
      EXPECT_EQ(S2CellLevel(id).value(), level);
      ASSERT_OK_AND_ASSIGN(Envelope box, S2CellBounds(id));
      EXPECT_TRUE(box.Contains(x, y)) << x << " " << y << " level " << level;
      ASSERT_OK_AND_ASSIGN(std::string token, S2CellToken(id));
      EXPECT_EQ(S2CellIdFromToken(token).value(), id);
      // Parent cells contain children: the level-5 cell's id range holds the level-12 one.
      if (level == 12) {
        ASSERT_OK_AND_ASSIGN(uint64_t coarse, S2CellIdForLonLat(x, y, 5));
        const uint64_t lsb = coarse & (~coarse + 1);
        EXPECT_GE(id, coarse - (lsb - 1));
        EXPECT_LE(id, coarse + (lsb - 1));
      }
    }
  }
}

TEST(S2CellTest, BoundsOfCellsNearAntimeridianAreFullWidth) {
  // Level-0 face 2 holds the north pole; its bound spans all longitudes.
  ASSERT_OK_AND_ASSIGN(uint64_t polar, S2CellIdForLonLat(0, 89, 0));
  ASSERT_OK_AND_ASSIGN(Envelope box, S2CellBounds(polar));
  EXPECT_EQ(box.xmin, -180);
  EXPECT_EQ(box.xmax, 180);
  EXPECT_EQ(box.ymax, 90);
}

TEST(S2CellTest, LongitudeWraps) {
  EXPECT_EQ(S2CellIdForLonLat(190, 10, 12).value(), S2CellIdForLonLat(-170, 10, 12).value());
}

TEST(S2CellTest, RejectsInvalidInput) {
  EXPECT_THAT(S2CellIdForLonLat(0, 0, 31), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(S2CellIdForLonLat(0, 0, -1), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(S2CellIdForLonLat(0, 91, 5), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(S2CellIdForLonLat(NAN, 0, 5), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(S2CellIdFromToken("xyz"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(S2CellIdFromToken(""), IsError(ErrorCode::kInvalidArgument));
  // Id 0 and an id without a marker bit in a valid position are not cells.
  EXPECT_THAT(S2CellToken(0), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(S2CellLevel(0x1800000000000000u), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(S2CellBounds(0xE000000000000000u), IsError(ErrorCode::kInvalidArgument));
}

TEST(S2CellTest, Int64KeepsBits) {
  ASSERT_OK_AND_ASSIGN(uint64_t id, S2CellIdForLonLat(100, -80, 10));  // a high face
  EXPECT_EQ(static_cast<uint64_t>(S2CellIdToInt64(id)), id);
}

}  // namespace
}  // namespace geolake::geo
