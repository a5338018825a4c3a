#include "geolake/geo/hilbert.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <set>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;

TEST(HilbertTest, OrderOneVisitsUpThenRightThenDown) {
  // The order-1 curve is the "U" opening downwards: (0,0) -> (0,1) -> (1,1) -> (1,0).
  EXPECT_EQ(HilbertEncode(0, 0, 1), 0u);
  EXPECT_EQ(HilbertEncode(0, 1, 1), 1u);
  EXPECT_EQ(HilbertEncode(1, 1, 1), 2u);
  EXPECT_EQ(HilbertEncode(1, 0, 1), 3u);
}

TEST(HilbertTest, OrderTwoCurve) {
  // The order-2 curve replaces each order-1 quadrant by a small U: the first (lower-left)
  // quadrant is transposed (so it exits upward), the top two are copies, and the last
  // (lower-right) is flipped across the anti-diagonal, so it ends at (3, 0):
  //   y=3:  5  6  9 10
  //   y=2:  4  7  8 11
  //   y=1:  3  2 13 12
  //   y=0:  0  1 14 15
  const int expected[4][4] = {{0, 1, 14, 15}, {3, 2, 13, 12}, {4, 7, 8, 11}, {5, 6, 9, 10}};
  for (uint32_t y = 0; y < 4; ++y) {
    for (uint32_t x = 0; x < 4; ++x) {
      EXPECT_EQ(HilbertEncode(x, y, 2), static_cast<uint64_t>(expected[y][x]))
          << "(" << x << ", " << y << ")";
    }
  }
}

TEST(HilbertTest, DecodeInvertsEncodeAndNeighboursAreAdjacent) {
  for (int order = 1; order <= 6; ++order) {
    const uint64_t cells = uint64_t{1} << (2 * order);
    std::set<std::pair<uint32_t, uint32_t>> seen;
    std::pair<uint32_t, uint32_t> previous{0, 0};
    for (uint64_t d = 0; d < cells; ++d) {
      const auto cell = HilbertDecode(d, order);
      ASSERT_EQ(HilbertEncode(cell.first, cell.second, order), d) << "order " << order;
      seen.insert(cell);
      if (d > 0) {
        // Locality: consecutive indexes are edge neighbours (Manhattan distance 1).
        const int dist =
            std::abs(static_cast<int>(cell.first) - static_cast<int>(previous.first)) +
            std::abs(static_cast<int>(cell.second) - static_cast<int>(previous.second));
        ASSERT_EQ(dist, 1) << "order " << order << " d " << d;
      }
      previous = cell;
    }
    EXPECT_EQ(seen.size(), cells);  // a bijection onto the grid
    EXPECT_EQ(HilbertDecode(cells - 1, order),
              (std::pair<uint32_t, uint32_t>{(1u << order) - 1, 0}));  // ends bottom-right
  }
}

TEST(HilbertTest, RoundTripsAtOrder31) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 10000; ++i) {
    const uint32_t x = static_cast<uint32_t>(rng()) & 0x7FFFFFFF;
    const uint32_t y = static_cast<uint32_t>(rng()) & 0x7FFFFFFF;
    const uint64_t d = HilbertEncode(x, y, 31);
    ASSERT_LT(d, uint64_t{1} << 62);
    ASSERT_EQ(HilbertDecode(d, 31), (std::pair<uint32_t, uint32_t>{x, y}));
  }
  EXPECT_EQ(HilbertEncode(0x7FFFFFFF, 0, 31), (uint64_t{1} << 62) - 1);
}

TEST(HilbertCurveTest, MapsExtentToGridAndClamps) {
  // Extent [0, 4] x [0, 4] at order 2: unit cells, so (x, y) falls in cell (floor x, floor y).
  ASSERT_OK_AND_ASSIGN(HilbertCurve curve, HilbertCurve::Make(Envelope{0, 0, 4, 4}, 2));
  EXPECT_EQ(curve.Index(0.5, 0.5), 0u);
  EXPECT_EQ(curve.Index(0.5, 3.5), 5u);
  EXPECT_EQ(curve.Index(3.9, 0.1), 15u);
  EXPECT_EQ(curve.Index(2.5, 2.5), 8u);
  // Outside the extent clamps to the edge cell: (-10, 100) -> cell (0, 3) = 5; (4, 0) -> (3, 0).
  EXPECT_EQ(curve.Index(-10, 100), 5u);
  EXPECT_EQ(curve.Index(4, 0), 15u);
  EXPECT_EQ(curve.Index(NAN, NAN), 0u);
  EXPECT_EQ(curve.CellBounds(8), (Envelope{2, 2, 3, 3}));
  EXPECT_EQ(curve.CellBounds(15), (Envelope{3, 0, 4, 1}));
}

TEST(HilbertCurveTest, IndexIsInverseOfCellBoundsOnLonLat) {
  ASSERT_OK_AND_ASSIGN(HilbertCurve curve, HilbertCurve::Make(Envelope{-180, -90, 180, 90}, 16));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> lon(-180, 180);
  std::uniform_real_distribution<double> lat(-90, 90);
  for (int i = 0; i < 1000; ++i) {
    const double x = lon(rng);
    const double y = lat(rng);
    const Envelope cell = curve.CellBounds(curve.Index(x, y));
    EXPECT_TRUE(cell.Contains(x, y)) << x << " " << y;
    EXPECT_NEAR(cell.Width(), 360.0 / 65536, 1e-9);
  }
}

TEST(HilbertCurveTest, ZeroWidthExtentPutsEverythingInColumnZero) {
  ASSERT_OK_AND_ASSIGN(HilbertCurve curve, HilbertCurve::Make(Envelope{5, 0, 5, 4}, 2));
  EXPECT_EQ(curve.Index(5, 0.5), 0u);
  EXPECT_EQ(curve.Index(5, 3.5), 5u);
}

TEST(HilbertCurveTest, RejectsBadOrderAndExtent) {
  EXPECT_THAT(HilbertCurve::Make(Envelope{0, 0, 1, 1}, 32), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(HilbertCurve::Make(Envelope{0, 0, 1, 1}, -1), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(HilbertCurve::Make(Envelope::Empty(), 4), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(HilbertCurve::Make(Envelope{0, 0, INFINITY, 1}, 4),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(HilbertIndex(0, 0, Envelope::Empty(), 4), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(uint64_t d, HilbertIndex(3.9, 0.1, Envelope{0, 0, 4, 4}, 2));
  EXPECT_EQ(d, 15u);
}

}  // namespace
}  // namespace geolake::geo
