#include "geolake/geo/wkt.h"

#include <cmath>
#include <string>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

struct WktExample {
  const char* input;
  const char* canonical;
};

// Input text (in the many spellings readers meet) and what WriteWkt prints for it.
constexpr WktExample kExamples[] = {
    {"POINT (1 2)", "POINT (1 2)"},
    {"point(1.5 -2.25)", "POINT (1.5 -2.25)"},
    {"POINT Z (1 2 3)", "POINT Z (1 2 3)"},
    {"POINTZ(1 2 3)", "POINT Z (1 2 3)"},
    {"POINT (1 2 3)", "POINT Z (1 2 3)"},
    {"POINT M (1 2 4)", "POINT M (1 2 4)"},
    {"POINT ZM (1 2 3 4)", "POINT ZM (1 2 3 4)"},
    {"POINT (1 2 3 4)", "POINT ZM (1 2 3 4)"},
    {"POINT EMPTY", "POINT EMPTY"},
    {"POINT Z EMPTY", "POINT Z EMPTY"},
    {"SRID=4326;POINT(1e3 +2E-1)", "POINT (1000 0.2)"},
    {"LINESTRING (30 10, 10 30, 40 40)", "LINESTRING (30 10, 10 30, 40 40)"},
    {"LINESTRING EMPTY", "LINESTRING EMPTY"},
    {"POLYGON ((35 10, 45 45, 15 40, 10 20, 35 10), (20 30, 35 35, 30 20, 20 30))",
     "POLYGON ((35 10, 45 45, 15 40, 10 20, 35 10), (20 30, 35 35, 30 20, 20 30))"},
    {"POLYGON EMPTY", "POLYGON EMPTY"},
    {"POLYGON ((0 0, 1 0, 1 1, 0 0), EMPTY)", "POLYGON ((0 0, 1 0, 1 1, 0 0), EMPTY)"},
    {"MULTIPOINT (10 40, 40 30)", "MULTIPOINT ((10 40), (40 30))"},
    {"MULTIPOINT ((10 40), EMPTY, (40 30))", "MULTIPOINT ((10 40), EMPTY, (40 30))"},
    {"MULTILINESTRING ((10 10, 20 20), (40 40, 30 30))",
     "MULTILINESTRING ((10 10, 20 20), (40 40, 30 30))"},
    {"MULTIPOLYGON Z (((0 0 1, 1 0 1, 1 1 1, 0 0 1)), EMPTY)",
     "MULTIPOLYGON Z (((0 0 1, 1 0 1, 1 1 1, 0 0 1)), EMPTY)"},
    {"MULTIPOLYGON EMPTY", "MULTIPOLYGON EMPTY"},
    {"GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10))",
     "GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10))"},
    {"GeometryCollection M (Point M (1 2 3), GeometryCollection M EMPTY)",
     "GEOMETRYCOLLECTION M (POINT M (1 2 3), GEOMETRYCOLLECTION M EMPTY)"},
    {"GEOMETRYCOLLECTION (POINT EMPTY, POINT Z (1 2 3))",
     "GEOMETRYCOLLECTION Z (POINT Z EMPTY, POINT Z (1 2 3))"},
    {"  POLYGON\n((0 0,1 0,1 1,0 0))  ", "POLYGON ((0 0, 1 0, 1 1, 0 0))"},
};

TEST(WktTest, WorkedExamplesParseAndWrite) {
  for (const WktExample& example : kExamples) {
    SCOPED_TRACE(example.input);
    ASSERT_OK_AND_ASSIGN(FlatGeometry geometry, ParseWkt(example.input));
    EXPECT_EQ(WriteWkt(geometry), example.canonical);
    // The canonical text reads back to the same geometry.
    ASSERT_OK_AND_ASSIGN(FlatGeometry again, ParseWkt(example.canonical));
    EXPECT_EQ(again, geometry);
  }
}

TEST(WktTest, BuildsTheFlatLayout) {
  ASSERT_OK_AND_ASSIGN(FlatGeometry g,
                       ParseWkt("MULTIPOLYGON (((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2, 1 1)), "
                                "((10 10, 11 10, 11 11, 10 10)))"));
  EXPECT_EQ(g.dims, Dimensions::kXY);
  ASSERT_EQ(g.parts.size(), 3u);
  EXPECT_EQ(g.parts[0].type, GeometryType::kMultiPolygon);
  EXPECT_EQ(g.parts[0].count, 2u);
  EXPECT_EQ(g.parts[0].end, 3u);
  EXPECT_EQ(g.parts[1].type, GeometryType::kPolygon);
  EXPECT_EQ(g.parts[1].count, 2u);
  EXPECT_EQ(g.parts[1].offset, 0u);
  EXPECT_EQ(g.parts[1].end, 2u);
  EXPECT_EQ(g.parts[2].offset, 2u);
  ASSERT_EQ(g.rings.size(), 3u);
  EXPECT_EQ(g.rings[1].offset, 4u);
  EXPECT_EQ(g.rings[1].count, 4u);
  EXPECT_EQ(g.rings[2].offset, 8u);
  EXPECT_EQ(g.num_coordinates(), 12u);
  EXPECT_EQ(g.coordinate(9)[0], 11);
  EXPECT_EQ(g.GetEnvelope(), (Envelope{0, 0, 11, 11}));
}

TEST(WktTest, EmptyPointIsNaN) {
  ASSERT_OK_AND_ASSIGN(FlatGeometry g, ParseWkt("POINT EMPTY"));
  ASSERT_EQ(g.coords.size(), 2u);
  EXPECT_TRUE(std::isnan(g.coords[0]));
  EXPECT_TRUE(std::isnan(g.coords[1]));
  EXPECT_TRUE(g.IsEmpty());
  EXPECT_TRUE(g.GetEnvelope().IsEmpty());
}

TEST(WktTest, ShortestRoundTripAndFixedPrecision) {
  ASSERT_OK_AND_ASSIGN(FlatGeometry g, ParseWkt("POINT (0.30000000000000004 -179.99999999999997)"));
  EXPECT_EQ(WriteWkt(g), "POINT (0.30000000000000004 -179.99999999999997)");
  EXPECT_EQ(WriteWkt(g, 6), "POINT (0.3 -180)");
  ASSERT_OK_AND_ASSIGN(FlatGeometry back, ParseWkt(WriteWkt(g)));
  EXPECT_EQ(back, g);
}

TEST(WktTest, MalformedTextIsInvalidArgument) {
  EXPECT_THAT(ParseWkt(""), IsErrorWith(ErrorCode::kInvalidArgument, "geometry keyword"));
  EXPECT_THAT(ParseWkt("CIRCLE (1 2)"),
              IsErrorWith(ErrorCode::kInvalidArgument, "geometry keyword at position 0"));
  EXPECT_THAT(ParseWkt("POINT (1)"), IsErrorWith(ErrorCode::kInvalidArgument, "a coordinate"));
  EXPECT_THAT(ParseWkt("POINT (1 2 3 4 5)"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseWkt("POINT (1 2"), IsErrorWith(ErrorCode::kInvalidArgument, "')'"));
  EXPECT_THAT(ParseWkt("POINT (1 2) x"), IsErrorWith(ErrorCode::kInvalidArgument, "end of text"));
  EXPECT_THAT(ParseWkt("POINT Z (1 2)"),
              IsErrorWith(ErrorCode::kInvalidArgument, "has 2 numbers, expected 3"));
  EXPECT_THAT(ParseWkt("LINESTRING (1 2, 1 2 3)"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseWkt("GEOMETRYCOLLECTION Z (POINT M (1 2 3))"),
              IsErrorWith(ErrorCode::kInvalidArgument, "dimensions 'M'"));
  EXPECT_THAT(ParseWkt("POLYGON (0 0, 1 1)"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseWkt("SRID=4326 POINT (1 2)"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(WktToWkb("MULTIPOINT ()"), IsError(ErrorCode::kInvalidArgument));

  std::string deep;
  for (int level = 0; level < 40; ++level) deep += "GEOMETRYCOLLECTION (";
  deep += "POINT (1 2)";
  for (int level = 0; level < 40; ++level) deep += ")";
  EXPECT_THAT(ParseWkt(deep), IsErrorWith(ErrorCode::kInvalidArgument, "nested deeper"));
}

TEST(WktTest, WriteOfEmptyGeometryValueIsEmptyText) { EXPECT_EQ(WriteWkt(FlatGeometry{}), ""); }

}  // namespace
}  // namespace geolake::geo
