#include "geolake/geo/spatial_key.h"

#include <gtest/gtest.h>

#include <random>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;

TEST(MortonTest, InterleavesXOnEvenBits) {
  EXPECT_EQ(MortonEncode(0, 0), 0u);
  EXPECT_EQ(MortonEncode(1, 0), 1u);
  EXPECT_EQ(MortonEncode(0, 1), 2u);
  EXPECT_EQ(MortonEncode(1, 1), 3u);
  EXPECT_EQ(MortonEncode(2, 0), 4u);
  // x = 011, y = 101 -> y2 x2 y1 x1 y0 x0 = 1 0 0 1 1 1 = 39.
  EXPECT_EQ(MortonEncode(3, 5), 39u);
  EXPECT_EQ(MortonEncode(0xFFFFFFFF, 0), 0x5555555555555555u);
  EXPECT_EQ(MortonEncode(0, 0xFFFFFFFF), 0xAAAAAAAAAAAAAAAAu);
}

TEST(MortonTest, DecodeInvertsEncode) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 10000; ++i) {
    const uint32_t x = static_cast<uint32_t>(rng());
    const uint32_t y = static_cast<uint32_t>(rng());
    ASSERT_EQ(MortonDecode(MortonEncode(x, y)), (std::pair<uint32_t, uint32_t>{x, y}));
  }
}

TEST(QuadkeyTest, BingExample) {
  // Bing Maps Tile System: tile (3, 5) at level 3 is quadkey "213" (x = 011, y = 101; digit
  // per level = x bit + 2 * y bit: 0 + 2, 1 + 0, 1 + 2).
  const Tile tile{3, 5, 3};
  ASSERT_OK_AND_ASSIGN(std::string key, Quadkey(tile));
  EXPECT_EQ(key, "213");
  ASSERT_OK_AND_ASSIGN(int64_t value, QuadkeyInt(tile));
  EXPECT_EQ(value, 2 * 16 + 1 * 4 + 3);
  ASSERT_OK_AND_ASSIGN(Tile back, TileFromQuadkey("213"));
  EXPECT_EQ(back, tile);
  ASSERT_OK_AND_ASSIGN(Tile back_int, TileFromQuadkeyInt(39, 3));
  EXPECT_EQ(back_int, tile);
  ASSERT_OK_AND_ASSIGN(std::string root, Quadkey(Tile{0, 0, 0}));
  EXPECT_EQ(root, "");
}

TEST(QuadkeyTest, TileForLonLat) {
  // Seattle (-122.33, 47.61) at zoom 3: x = (57.67 / 360) * 8 = 1.28 -> 1;
  // y = (0.5 - ln((1 + sin 47.61) / (1 - sin 47.61)) / (4 pi)) * 8 = 2.79 -> 2.
  ASSERT_OK_AND_ASSIGN(Tile seattle, TileForLonLat(-122.33, 47.61, 3));
  EXPECT_EQ(seattle, (Tile{1, 2, 3}));
  EXPECT_EQ(Quadkey(seattle).value(), "021");
  // (0, 0) sits on the corner of the four zoom-1 tiles; it belongs to the south-east one.
  EXPECT_EQ(TileForLonLat(0, 0, 1).value(), (Tile{1, 1, 1}));
  // Clamping: the poles go to the first/last row, lon 180 to the last column.
  EXPECT_EQ(TileForLonLat(180, 90, 4).value(), (Tile{15, 0, 4}));
  EXPECT_EQ(TileForLonLat(-180, -90, 4).value(), (Tile{0, 15, 4}));
  EXPECT_EQ(TileForLonLat(-200, 0, 2).value().x, 0u);
}

TEST(QuadkeyTest, TileBoundsContainThePointAndMatchMercatorLimits) {
  // The zoom-0 tile spans the whole Mercator square: lat +-85.0511287798...
  ASSERT_OK_AND_ASSIGN(Envelope world, TileBounds(Tile{0, 0, 0}));
  EXPECT_DOUBLE_EQ(world.xmin, -180);
  EXPECT_DOUBLE_EQ(world.xmax, 180);
  EXPECT_NEAR(world.ymax, kMaxMercatorLatitude, 1e-8);
  EXPECT_NEAR(world.ymin, -kMaxMercatorLatitude, 1e-8);
  // Tile (1, 1) at zoom 1 is the south-east quarter: lon [0, 180], lat [-85.05, 0].
  ASSERT_OK_AND_ASSIGN(Envelope se, TileBounds(Tile{1, 1, 1}));
  EXPECT_NEAR(se.xmin, 0, 1e-12);
  EXPECT_NEAR(se.ymax, 0, 1e-12);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> lon(-180, 180);
  std::uniform_real_distribution<double> lat(-85, 85);
  for (int i = 0; i < 1000; ++i) {
    const double x = lon(rng);
    const double y = lat(rng);
    for (int zoom : {1, 7, 15, 23}) {
      ASSERT_OK_AND_ASSIGN(Tile tile, TileForLonLat(x, y, zoom));
      ASSERT_OK_AND_ASSIGN(Envelope box, TileBounds(tile));
      EXPECT_TRUE(box.Contains(x, y)) << x << " " << y << " zoom " << zoom;
      ASSERT_OK_AND_ASSIGN(std::string key, Quadkey(tile));
      EXPECT_EQ(TileFromQuadkey(key).value(), tile);
    }
  }
}

TEST(QuadkeyTest, RejectsInvalidInput) {
  EXPECT_THAT(TileForLonLat(NAN, 0, 3), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TileForLonLat(0, 0, 32), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TileForLonLat(0, 0, -1), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Quadkey(Tile{8, 0, 3}), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(QuadkeyInt(Tile{0, 8, 3}), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TileBounds(Tile{0, 0, 40}), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TileFromQuadkey("0124"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TileFromQuadkey(std::string(32, '0')), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TileFromQuadkeyInt(64, 3), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TileFromQuadkeyInt(-1, 3), IsError(ErrorCode::kInvalidArgument));
}

TEST(QuadkeyTest, Zoom31FitsInt64) {
  const Tile corner{0x7FFFFFFF, 0x7FFFFFFF, 31};
  ASSERT_OK_AND_ASSIGN(int64_t value, QuadkeyInt(corner));
  EXPECT_EQ(value, (int64_t{1} << 62) - 1);
  EXPECT_EQ(Quadkey(corner).value(), std::string(31, '3'));
  EXPECT_EQ(TileFromQuadkeyInt(value, 31).value(), corner);
}

}  // namespace
}  // namespace geolake::geo
