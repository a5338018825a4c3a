#include "geolake/geo/proj.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

class TransformerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(ctx_, GeoContext::Make()); }

  Crs MakeCrs(std::string_view definition) {
    auto crs = Crs::Make(*ctx_, definition);
    EXPECT_OK(crs);
    return std::move(crs).value();
  }

  Transformer MakeTransformer(std::string_view from, std::string_view to) {
    auto t = Transformer::Make(*ctx_, MakeCrs(from), MakeCrs(to));
    EXPECT_OK(t);
    return std::move(t).value();
  }

  std::unique_ptr<GeoContext> ctx_;
};

// Web Mercator uses the sphere of radius a = 6378137 m: x = a * lon_rad, so lon 180 gives
// a * pi = 20037508.342789244; y = a * ln(tan(pi/4 + lat_rad/2)), so lat 45 gives
// 6378137 * ln(tan(67.5 deg)) = 6378137 * 0.88137358701954... = 5621521.486192066.
TEST_F(TransformerTest, WebMercatorKnownValuesInLonLatOrder) {
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  EXPECT_FALSE(t.is_identity());
  std::vector<double> x = {180.0, 0.0};
  std::vector<double> y = {0.0, 45.0};
  ASSERT_OK(t.Transform(x, y));
  EXPECT_NEAR(x[0], 20037508.342789244, 1e-6);
  EXPECT_NEAR(y[0], 0.0, 1e-6);
  EXPECT_NEAR(x[1], 0.0, 1e-6);
  EXPECT_NEAR(y[1], 6378137 * std::log(std::tan(std::numbers::pi / 4 + std::numbers::pi / 8)),
              1e-6);
}

TEST_F(TransformerTest, UtmRoundTripWithinNanodegree) {
  // (15 E, 0 N) is where zone 33's central meridian meets the equator: easting is the false
  // easting 500000 m and northing 0.
  Transformer forward = MakeTransformer("EPSG:4326", "EPSG:32633");
  Transformer back = MakeTransformer("EPSG:32633", "EPSG:4326");
  std::vector<double> x = {15.0, 13.4050, 16.3738, 12.0, 17.9};
  std::vector<double> y = {0.0, 52.5200, 48.2082, 1.5, 70.0};
  const std::vector<double> lon = x;
  const std::vector<double> lat = y;
  ASSERT_OK(forward.Transform(x, y));
  EXPECT_NEAR(x[0], 500000.0, 1e-6);
  EXPECT_NEAR(y[0], 0.0, 1e-6);
  for (size_t i = 1; i < x.size(); ++i) {
    EXPECT_GT(x[i], 100000.0) << i;  // eastings, not degrees
    EXPECT_GT(y[i], 100000.0) << i;
  }
  ASSERT_OK(back.Transform(x, y));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(x[i], lon[i], 1e-9) << i;
    EXPECT_NEAR(y[i], lat[i], 1e-9) << i;
  }
}

TEST_F(TransformerTest, EquivalentCrsIsIdentity) {
  // EPSG:4326 (lat/lon officially) and OGC:CRS84 (lon/lat) differ only in axis order, which
  // the normalisation removes.
  Transformer t = MakeTransformer("EPSG:4326", "OGC:CRS84");
  EXPECT_TRUE(t.is_identity());
  std::vector<double> x = {1.25, -70.5};
  std::vector<double> y = {2.5, 33.0};
  ASSERT_OK(t.Transform(x, y));
  EXPECT_EQ(x, (std::vector<double>{1.25, -70.5}));
  EXPECT_EQ(y, (std::vector<double>{2.5, 33.0}));
  Transformer same = MakeTransformer("EPSG:32633", "EPSG:32633");
  EXPECT_TRUE(same.is_identity());
}

TEST_F(TransformerTest, EquivalentCrsIgnoresGeographicAxisOrderOnly) {
  EXPECT_TRUE(EquivalentCrs(*ctx_, "EPSG:4326", "OGC:CRS84").value());
  EXPECT_TRUE(EquivalentCrs(*ctx_, "OGC:CRS84", "EPSG:4326").value());
  EXPECT_TRUE(EquivalentCrs(*ctx_, "EPSG:5070", "EPSG:5070").value());
  EXPECT_FALSE(EquivalentCrs(*ctx_, "EPSG:4326", "EPSG:3857").value());
  EXPECT_FALSE(EquivalentCrs(*ctx_, "EPSG:4326", "EPSG:4269").value());  // NAD83: another datum
  EXPECT_FALSE(EquivalentCrs(*ctx_, "", "EPSG:4326").value());
  EXPECT_FALSE(EquivalentCrs(*ctx_, "EPSG:4326", "not a crs").value());
}

TEST_F(TransformerTest, NonFiniteResultNamesThePoint) {
  // Latitude 95 is off the sphere; PROJ marks the point with HUGE_VAL.
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  std::vector<double> x = {0.0, 10.0, 0.0};
  std::vector<double> y = {0.0, 10.0, 95.0};
  EXPECT_THAT(t.Transform(x, y), IsErrorWith(ErrorCode::kGeometryError, "point 2 "));
  // A NaN input is reported even on the identity path.
  Transformer id = MakeTransformer("EPSG:4326", "EPSG:4326");
  std::vector<double> nx = {0.0, NAN};
  std::vector<double> ny = {0.0, 0.0};
  EXPECT_THAT(id.Transform(nx, ny), IsErrorWith(ErrorCode::kGeometryError, "point 1 "));
}

TEST_F(TransformerTest, RejectsUnequalArrays) {
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  std::vector<double> x = {0.0, 1.0};
  std::vector<double> y = {0.0};
  EXPECT_THAT(t.Transform(x, y), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(TransformerTest, NoOperationToEngineeringCrs) {
  // A local engineering CRS has no datum relation to WGS 84.
  Crs local = MakeCrs(
      "ENGCRS[\"site grid\",EDATUM[\"site\"],CS[Cartesian,2],AXIS[\"x\",east,ORDER[1],"
      "LENGTHUNIT[\"metre\",1]],AXIS[\"y\",north,ORDER[2],LENGTHUNIT[\"metre\",1]]]");
  EXPECT_THAT(Transformer::Make(*ctx_, MakeCrs("EPSG:4326"), local),
              IsError(ErrorCode::kInvalidArgument));
}

TEST_F(TransformerTest, StopTokenCancelsBatch) {
  std::stop_source stop;
  ctx_->set_stop_token(stop.get_token());
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  std::vector<double> x(10, 1.0);
  std::vector<double> y(10, 1.0);
  stop.request_stop();
  EXPECT_THAT(t.Transform(x, y), IsError(ErrorCode::kCancelled));
}

TEST_F(TransformerTest, TransformWkbReprojectsEveryCoordinateAndKeepsZ) {
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  ASSERT_OK_AND_ASSIGN(Geometry line, Geometry::FromWkt(*ctx_, "LINESTRING Z (0 0 5, 180 0 7)"));
  ASSERT_OK_AND_ASSIGN(std::string wkb, line.ToWkb());
  ASSERT_OK_AND_ASSIGN(std::string out,
                       t.TransformWkb(std::span<const uint8_t>(
                           reinterpret_cast<const uint8_t*>(wkb.data()), wkb.size())));
  ASSERT_OK_AND_ASSIGN(Geometry back, Geometry::FromWkb(*ctx_, out));
  ASSERT_OK_AND_ASSIGN(std::string wkt, back.ToWkt(3));
  EXPECT_EQ(wkt, "LINESTRING Z (0 0 5, 20037508.343 0 7)");
  ASSERT_OK_AND_ASSIGN(std::string out_from_string, t.TransformWkb(std::string_view(wkb)));
  EXPECT_EQ(out_from_string, out);

  // A polygon with a hole: every ring is visited; the area grows by the Mercator scale.
  ASSERT_OK_AND_ASSIGN(Geometry square,
                       Geometry::FromWkt(*ctx_,
                                         "POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0), "
                                         "(0.25 0.25, 0.75 0.25, 0.75 0.75, 0.25 0.25))"));
  ASSERT_OK_AND_ASSIGN(Geometry projected, t.Transform(square));
  ASSERT_OK_AND_ASSIGN(Envelope box, projected.Bounds());
  EXPECT_NEAR(box.xmax, 20037508.342789244 / 180, 1e-6);
  EXPECT_NEAR(box.xmin, 0, 1e-6);
  EXPECT_NEAR(box.ymin, 0, 1e-6);
  EXPECT_GT(box.ymax, box.xmax);  // Mercator stretches north-south: 1 deg lat > 1 deg lon
  // 2D stays 2D: ISO type 3 (polygon), not 1003 (polygon Z).
  ASSERT_OK_AND_ASSIGN(std::string projected_wkb, projected.ToWkb());
  EXPECT_EQ(projected_wkb.substr(0, 5), std::string("\x01\x03\x00\x00\x00", 5));
}

TEST_F(TransformerTest, TransformWkbFailures) {
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  const uint8_t garbage[] = {0x01, 0x02, 0x00};
  EXPECT_THAT(t.TransformWkb(garbage), IsError(ErrorCode::kGeometryError));
  EXPECT_THAT(t.TransformWkb(std::string_view("\x01\x01\x00", 3)),
              IsError(ErrorCode::kGeometryError));
  ASSERT_OK_AND_ASSIGN(Geometry pole, Geometry::FromWkt(*ctx_, "LINESTRING (0 0, 0 95)"));
  EXPECT_THAT(t.Transform(pole), IsErrorWith(ErrorCode::kGeometryError, "point 1 "));
  ASSERT_OK_AND_ASSIGN(auto other_ctx, GeoContext::Make());
  ASSERT_OK_AND_ASSIGN(Geometry foreign, Geometry::FromWkt(*other_ctx, "POINT (0 0)"));
  EXPECT_THAT(t.Transform(foreign), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(TransformerTest, EmptyGeometriesAndArraysPassThrough) {
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  ASSERT_OK_AND_ASSIGN(Geometry empty, Geometry::FromWkt(*ctx_, "POINT EMPTY"));
  ASSERT_OK_AND_ASSIGN(Geometry out, t.Transform(empty));
  EXPECT_EQ(out.ToWkt().value(), "POINT EMPTY");
  ASSERT_OK_AND_ASSIGN(Geometry empty_poly, Geometry::FromWkt(*ctx_, "POLYGON EMPTY"));
  ASSERT_OK_AND_ASSIGN(std::string wkb, empty_poly.ToWkb());
  ASSERT_OK_AND_ASSIGN(std::string out_wkb, t.TransformWkb(std::string_view(wkb)));
  EXPECT_EQ(out_wkb, wkb);
  std::vector<double> none;
  EXPECT_OK(t.Transform(std::span<double>(none), std::span<double>(none)));
  // A collection with an empty member stays 2D (ISO type 7, not 1007).
  ASSERT_OK_AND_ASSIGN(Geometry mixed,
                       Geometry::FromWkt(*ctx_, "GEOMETRYCOLLECTION (POINT (1 1), POLYGON EMPTY)"));
  ASSERT_OK_AND_ASSIGN(Geometry mixed_out, t.Transform(mixed));
  ASSERT_OK_AND_ASSIGN(std::string mixed_wkb, mixed_out.ToWkb());
  EXPECT_EQ(mixed_wkb.substr(0, 5), std::string("\x01\x07\x00\x00\x00", 5));
}

TEST_F(TransformerTest, IdentityTransformOfGeometryCopies) {
  Transformer t = MakeTransformer("OGC:CRS84", "EPSG:4326");
  ASSERT_OK_AND_ASSIGN(Geometry p, Geometry::FromWkt(*ctx_, "POINT (10 20)"));
  ASSERT_OK_AND_ASSIGN(Geometry q, t.Transform(p));
  EXPECT_EQ(q.ToWkt().value(), "POINT (10 20)");
}

// The interleaved form (FlatGeometry's x, y, z per coordinate) gives exactly what the x/y
// arrays give, leaves Z alone, and names the first coordinate that does not transform.
TEST_F(TransformerTest, InterleavedMatchesArraysAndKeepsZ) {
  Transformer t = MakeTransformer("EPSG:4326", "EPSG:3857");
  std::vector<double> x = {-120.5, 2.25, 179.0};
  std::vector<double> y = {35.0, 48.75, -60.0};
  std::vector<double> xyz = {x[0], y[0], 7.0, x[1], y[1], 8.0, x[2], y[2], 9.0};
  ASSERT_OK(t.Transform(x, y));
  ASSERT_OK(t.TransformInterleaved(xyz.data(), 3, 3));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(xyz[i * 3], x[i]) << i;
    EXPECT_EQ(xyz[i * 3 + 1], y[i]) << i;
    EXPECT_EQ(xyz[i * 3 + 2], 7.0 + static_cast<double>(i)) << i;
  }
  std::vector<double> bad = {10.0, 10.0, 10.0, 95.0};  // latitude 95 is outside the sphere
  size_t first_bad = 99;
  EXPECT_THAT(t.TransformInterleaved(bad.data(), 2, 2, &first_bad),
              IsErrorWith(ErrorCode::kGeometryError, "point 1 has no finite result"));
  EXPECT_EQ(first_bad, 1u);
  EXPECT_THAT(t.TransformInterleaved(bad.data(), 1, 1), IsError(ErrorCode::kInvalidArgument));
}

// From OGC:CRS84 the operation is EPSG:4326's: the values below are GDAL 3.6.2's
// `echo "-120 49" | gdaltransform -s_srs OGC:CRS84 -t_srs EPSG:5070` (the same with
// -s_srs EPSG:4326). PROJ 9.1 alone picks an ESRI Helmert for OGC:CRS84, 0.9 m away.
TEST_F(TransformerTest, Crs84UsesTheOperationsOfEpsg4326) {
  for (const char* from : {"OGC:CRS84", "EPSG:4326"}) {
    SCOPED_TRACE(from);
    Transformer t = MakeTransformer(from, "EPSG:5070");
    std::vector<double> x = {-120.0};
    std::vector<double> y = {49.0};
    ASSERT_OK(t.Transform(x, y));
    EXPECT_NEAR(x[0], -1759245.21298792, 1e-6);
    EXPECT_NEAR(y[0], 3111553.14530244, 1e-6);
  }
}

}  // namespace
}  // namespace geolake::geo
