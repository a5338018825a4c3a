#include "geolake/geo/shared_boundary.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;

class SharedBoundaryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(ctx_, GeoContext::Make()); }
  Geometry Wkt(const std::string& wkt) { return Geometry::FromWkt(*ctx_, wkt).value(); }
  double Shared(const std::string& a, const std::string& b) {
    return SharedBoundaryLength(Wkt(a), Wkt(b)).value();
  }
  std::unique_ptr<GeoContext> ctx_;
};

TEST_F(SharedBoundaryTest, CountsCommonEdgesNotPointTouches) {
  const std::string square = "POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))";
  // An edge in common.
  EXPECT_DOUBLE_EQ(Shared(square, "POLYGON ((1 0, 3 0, 3 1, 1 1, 1 0))"), 1.0);
  // A corner only: no border.
  EXPECT_DOUBLE_EQ(Shared(square, "POLYGON ((1 1, 2 1, 2 2, 1 2, 1 1))"), 0.0);
  // Apart.
  EXPECT_DOUBLE_EQ(Shared(square, "POLYGON ((5 5, 6 5, 6 6, 5 6, 5 5))"), 0.0);
  // Part of an edge, the neighbour's vertices not on the square's (a T-junction at 0.25 and
  // 0.75): the overlay nodes the boundaries.
  EXPECT_DOUBLE_EQ(Shared(square, "POLYGON ((1 0.25, 2 0.25, 2 0.75, 1 0.75, 1 0.25))"), 0.5);
  // Two sides of an L-shaped neighbour.
  EXPECT_DOUBLE_EQ(Shared(square, "POLYGON ((1 0, 2 0, 2 2, 0 2, 0 1, 1 1, 1 0))"), 2.0);
  // Symmetric, and a hole's ring is boundary too (an island inside a hole shares it whole).
  const std::string with_hole =
      "POLYGON ((-1 -1, 2 -1, 2 2, -1 2, -1 -1), (0 0, 0 1, 1 1, 1 0, 0 0))";
  EXPECT_DOUBLE_EQ(Shared(square, with_hole), 4.0);
  EXPECT_DOUBLE_EQ(Shared(with_hole, square), 4.0);
}

TEST_F(SharedBoundaryTest, ReusesAGivenBoundary) {
  Geometry a = Wkt("MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), ((3 0, 4 0, 4 1, 3 1, 3 0)))");
  Geometry b = Wkt("POLYGON ((1 0, 3 0, 3 1, 1 1, 1 0))");
  ASSERT_OK_AND_ASSIGN(Geometry boundary, Boundary(a));
  ASSERT_OK_AND_ASSIGN(double length, SharedBoundaryLength(a, b, &boundary));
  EXPECT_DOUBLE_EQ(length, 2.0);
  ASSERT_OK_AND_ASSIGN(double length_of_line, boundary.Length());
  EXPECT_DOUBLE_EQ(length_of_line, 8.0);
}

TEST_F(SharedBoundaryTest, ACollectionHasNoBoundary) {
  Geometry collection =
      Wkt("GEOMETRYCOLLECTION (POLYGON ((0 0, 1 0, 1 1, 0 0)), LINESTRING (0 0, 2 2))");
  EXPECT_THAT(Boundary(collection), IsError(ErrorCode::kGeometryError));
  EXPECT_THAT(SharedBoundaryLength(collection, Wkt("POLYGON ((1 0, 2 0, 2 1, 1 0))")),
              IsError(ErrorCode::kGeometryError));
  auto other = GeoContext::Make().value();
  Geometry elsewhere = Geometry::FromWkt(*other, "POLYGON ((1 0, 2 0, 2 1, 1 0))").value();
  EXPECT_THAT(SharedBoundaryLength(Wkt("POLYGON ((0 0, 1 0, 1 1, 0 0))"), elsewhere),
              IsError(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace geolake::geo
