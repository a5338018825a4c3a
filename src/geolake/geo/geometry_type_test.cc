#include "geolake/geo/geometry_type.h"

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsErrorWith;

static_assert(IsoWkbCode(GeometryType::kPolygon, Dimensions::kXYZ) == 1003);
static_assert(IsoWkbCode(GeometryType::kMultiLineString, Dimensions::kXYZM) == 3005);
static_assert(CoordinateSize(Dimensions::kXYM) == 3);
static_assert(MakeDimensions(true, true) == Dimensions::kXYZM);

TEST(GeometryTypeTest, Names) {
  EXPECT_EQ(GeometryTypeName(GeometryType::kMultiPolygon), "MultiPolygon");
  EXPECT_EQ(WktKeyword(GeometryType::kGeometryCollection), "GEOMETRYCOLLECTION");
  EXPECT_EQ(GeoParquetTypeName(GeometryType::kPoint, Dimensions::kXY), "Point");
  EXPECT_EQ(GeoParquetTypeName(GeometryType::kMultiPolygon, Dimensions::kXYZ), "MultiPolygon Z");
  EXPECT_EQ(GeoParquetTypeName(GeometryType::kLineString, Dimensions::kXYZM), "LineString ZM");
  EXPECT_EQ(GeometryTypeName(static_cast<GeometryType>(42)), "Unknown");
}

TEST(GeometryTypeTest, ParseGeoParquetNamesRoundTrip) {
  for (int type_idx = 1; type_idx <= 7; ++type_idx) {
    for (int dim_idx = 0; dim_idx < 4; ++dim_idx) {
      const TypedDimensions typed{static_cast<GeometryType>(type_idx),
                                  static_cast<Dimensions>(dim_idx)};
      ASSERT_OK_AND_ASSIGN(TypedDimensions back,
                           ParseGeoParquetTypeName(GeoParquetTypeName(typed.type, typed.dims)));
      EXPECT_EQ(back, typed);
    }
  }
}

TEST(GeometryTypeTest, ParseRejectsOtherSpellings) {
  for (const char* bad :
       {"point", "Point z", "PointZ", "Polygon  Z", "", "Curve", "MultiPoint Q"}) {
    EXPECT_THAT(ParseGeoParquetTypeName(bad),
                IsErrorWith(ErrorCode::kInvalidArgument, "unknown GeoParquet geometry type"))
        << bad;
  }
}

}  // namespace
}  // namespace geolake::geo
