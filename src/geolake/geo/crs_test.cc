#include "geolake/geo/crs.h"

#include <gtest/gtest.h>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

class CrsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(ctx_, GeoContext::Make()); }
  std::unique_ptr<GeoContext> ctx_;
};

TEST_F(CrsTest, Epsg4326IsGeographicWithCode) {
  ASSERT_OK_AND_ASSIGN(Crs crs, Crs::Make(*ctx_, "EPSG:4326"));
  EXPECT_TRUE(crs.is_geographic());
  EXPECT_EQ(crs.epsg(), 4326);
  EXPECT_EQ(crs.id(), "EPSG:4326");
  EXPECT_EQ(crs.name(), "WGS 84");
  EXPECT_EQ(crs.definition(), "EPSG:4326");
  // Single-line PROJJSON of a geographic CRS with its identifier.
  EXPECT_EQ(crs.projjson().find('\n'), std::string::npos);
  EXPECT_NE(crs.projjson().find("\"GeographicCRS\""), std::string::npos) << crs.projjson();
  EXPECT_NE(crs.projjson().find("\"code\":4326"), std::string::npos) << crs.projjson();
}

TEST_F(CrsTest, Crs84IsGeographicWithoutEpsgCode) {
  ASSERT_OK_AND_ASSIGN(Crs crs, Crs::Make(*ctx_, "OGC:CRS84"));
  EXPECT_TRUE(crs.is_geographic());
  EXPECT_EQ(crs.id(), "OGC:CRS84");
  EXPECT_EQ(crs.epsg(), std::nullopt);
}

TEST_F(CrsTest, UtmZoneIsProjected) {
  ASSERT_OK_AND_ASSIGN(Crs crs, Crs::Make(*ctx_, "EPSG:32633"));
  EXPECT_FALSE(crs.is_geographic());
  EXPECT_EQ(crs.epsg(), 32633);
  EXPECT_EQ(crs.name(), "WGS 84 / UTM zone 33N");
}

TEST_F(CrsTest, ProjjsonRoundTrips) {
  ASSERT_OK_AND_ASSIGN(Crs utm, Crs::Make(*ctx_, "EPSG:32633"));
  ASSERT_OK_AND_ASSIGN(Crs again, Crs::Make(*ctx_, utm.projjson()));
  EXPECT_EQ(again.epsg(), 32633);
  EXPECT_FALSE(again.is_geographic());
  EXPECT_EQ(again.projjson(), utm.projjson());
  EXPECT_TRUE(again == utm);
}

TEST_F(CrsTest, WktWithoutIdentifierIsIdentified) {
  // WKT2 of WGS 84 / Pseudo-Mercator's base without any ID: PROJ identifies EPSG:4326.
  const char* wkt =
      "GEOGCRS[\"WGS 84\",DATUM[\"World Geodetic System 1984\",ELLIPSOID[\"WGS 84\",6378137,"
      "298.257223563,LENGTHUNIT[\"metre\",1]]],PRIMEM[\"Greenwich\",0,ANGLEUNIT[\"degree\","
      "0.0174532925199433]],CS[ellipsoidal,2],AXIS[\"geodetic latitude (Lat)\",north,ORDER[1],"
      "ANGLEUNIT[\"degree\",0.0174532925199433]],AXIS[\"geodetic longitude (Lon)\",east,"
      "ORDER[2],ANGLEUNIT[\"degree\",0.0174532925199433]]]";
  ASSERT_OK_AND_ASSIGN(Crs crs, Crs::Make(*ctx_, wkt));
  EXPECT_TRUE(crs.is_geographic());
  EXPECT_EQ(crs.name(), "WGS 84");
  EXPECT_EQ(crs.epsg(), 4326);
}

TEST_F(CrsTest, LooksThroughCompoundAndBoundCrs) {
  // WGS 84 + EGM96 height: compound, horizontal part geographic.
  ASSERT_OK_AND_ASSIGN(Crs compound, Crs::Make(*ctx_, "EPSG:4326+5773"));
  EXPECT_TRUE(compound.is_geographic());
  // A PROJ string with +towgs84 makes a BoundCRS around a geographic CRS.
  ASSERT_OK_AND_ASSIGN(Crs bound,
                       Crs::Make(*ctx_, "+proj=longlat +ellps=GRS80 +towgs84=0,0,0 +type=crs"));
  EXPECT_TRUE(bound.is_geographic());
  ASSERT_OK_AND_ASSIGN(
      Crs bound_utm, Crs::Make(*ctx_, "+proj=utm +zone=33 +ellps=GRS80 +towgs84=0,0,0 +type=crs"));
  EXPECT_FALSE(bound_utm.is_geographic());
}

TEST_F(CrsTest, RejectsEmptyUnknownAndNonCrsDefinitions) {
  EXPECT_THAT(Crs::Make(*ctx_, ""), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Crs::Make(*ctx_, "EPSG:999999"),
              IsErrorWith(ErrorCode::kInvalidArgument, "crs 'EPSG:999999': "));
  EXPECT_THAT(Crs::Make(*ctx_, "not a crs at all"), IsError(ErrorCode::kInvalidArgument));
  // A bare projection method is a conversion, not a CRS.
  EXPECT_THAT(Crs::Make(*ctx_, "+proj=merc"),
              IsErrorWith(ErrorCode::kInvalidArgument, "not a coordinate reference system"));
}

TEST(CrsStandaloneTest, MakesWithItsOwnContext) {
  ASSERT_OK_AND_ASSIGN(Crs crs, Crs::Make("EPSG:3857"));
  EXPECT_EQ(crs.epsg(), 3857);
  EXPECT_FALSE(crs.is_geographic());
  EXPECT_THAT(Crs::Make("EPSG:0"), IsError(ErrorCode::kInvalidArgument));
}

// GDAL's export of an EPSG code: multi-line PROJJSON naming the code; code 0 is GDAL's
// undefined geographic SRS; deprecated and unknown codes are refused with their reason.
TEST_F(CrsTest, GdalProjjsonOfEpsgIsMultiLineAndRefusesDeprecatedAndUnknownCodes) {
  ASSERT_OK_AND_ASSIGN(std::string wgs84, Crs::GdalProjjsonOfEpsg(*ctx_, 4326));
  EXPECT_NE(wgs84.find('\n'), std::string::npos);
  EXPECT_NE(wgs84.find("\"code\": 4326"), std::string::npos) << wgs84;
  ASSERT_OK_AND_ASSIGN(Crs same, Crs::Make(*ctx_, wgs84));  // still a CRS PROJ reads
  EXPECT_EQ(same.epsg(), 4326);
  ASSERT_OK_AND_ASSIGN(std::string undefined, Crs::GdalProjjsonOfEpsg(*ctx_, 0));
  EXPECT_NE(undefined.find("Undefined geographic SRS"), std::string::npos) << undefined;
  EXPECT_THAT(Crs::GdalProjjsonOfEpsg(*ctx_, 3785),  // Popular Visualisation CRS / Mercator
              IsErrorWith(ErrorCode::kInvalidArgument, "EPSG:3785 is deprecated"));
  EXPECT_THAT(Crs::GdalProjjsonOfEpsg(*ctx_, 999999),
              IsErrorWith(ErrorCode::kNotFound, "EPSG:999999"));
}

TEST(GdalProjjsonCacheTest, KeepsTheFirstAnswerForEachCode) {
  ASSERT_OK_AND_ASSIGN(auto cache, GdalProjjsonCache::Make());
  ASSERT_OK_AND_ASSIGN(auto ctx, GeoContext::Make());
  ASSERT_OK_AND_ASSIGN(std::string direct, Crs::GdalProjjsonOfEpsg(*ctx, 32633));
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK_AND_ASSIGN(std::string cached, cache->Get(32633));
    EXPECT_EQ(cached, direct);
    EXPECT_THAT(cache->Get(3785), IsError(ErrorCode::kInvalidArgument));
  }
}

}  // namespace
}  // namespace geolake::geo
