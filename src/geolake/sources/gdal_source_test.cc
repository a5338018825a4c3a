#include "geolake/sources/gdal_source.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "geolake/testing/testing.h"

namespace geolake::sources {
namespace {

using geoparquet::FeatureBatch;
using geoparquet::FieldType;

using ::geolake::testing::IsError;

class GdalSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("geolake_gdal_source_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

constexpr const char* kThreeFeatures = R"({"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"name":"a","pop":12,"area":1.5,"day":"2024-02-29"},
 "geometry":{"type":"Point","coordinates":[10.5,-3.25]}},
{"type":"Feature","properties":{"name":null,"pop":9007199254740993,"area":2.0,"day":null},
 "geometry":{"type":"Polygon","coordinates":[[[0,0],[2,0],[2,1],[0,0]]]}},
{"type":"Feature","properties":{"name":"c","pop":3,"area":null,"day":"1969-12-31"},
 "geometry":null}
]})";

TEST_F(GdalSourceTest, ReadsAttributesAndIsoWkb) {
  const std::string path = Write("three.geojson", kThreeFeatures);
  ASSERT_OK_AND_ASSIGN(auto source, GdalSource::Open(path));
  const SourceInfo& info = source->info();
  EXPECT_EQ(info.driver, "GeoJSON");
  EXPECT_EQ(info.feature_count, 3);
  EXPECT_EQ(info.crs_authority, "EPSG:4326");
  ASSERT_EQ(info.fields.size(), 4u);
  EXPECT_EQ(info.fields[0].name, "name");
  EXPECT_EQ(info.fields[0].type, FieldType::kString);
  EXPECT_EQ(info.fields[1].type, FieldType::kInt64);
  EXPECT_EQ(info.fields[2].type, FieldType::kDouble);
  EXPECT_EQ(info.fields[3].type, FieldType::kDate);

  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(10, &batch));
  ASSERT_EQ(rows, 3);
  EXPECT_EQ(batch.columns[0].StringAt(0), "a");
  EXPECT_EQ(batch.columns[0].valid[1], 0);
  EXPECT_EQ(batch.columns[1].ints[1], 9007199254740993LL);  // int64 survives exactly
  EXPECT_EQ(batch.columns[2].valid[2], 0);
  EXPECT_EQ(batch.columns[3].ints[0], 19782);  // 2024-02-29 is day 19782 after 1970-01-01
  EXPECT_EQ(batch.columns[3].ints[2], -1);

  // Point (10.5, -3.25): little-endian byte order, ISO type 1, then x and y.
  auto point = batch.GeometryAt(0);
  ASSERT_EQ(point.size(), 21u);
  EXPECT_EQ(point[0], 1);
  EXPECT_EQ(point[1], 1);
  double x = 0, y = 0;
  std::memcpy(&x, point.data() + 5, 8);
  std::memcpy(&y, point.data() + 13, 8);
  EXPECT_EQ(x, 10.5);
  EXPECT_EQ(y, -3.25);
  EXPECT_EQ(batch.GeometryAt(1)[1], 3);  // polygon
  EXPECT_EQ(batch.geometry_valid[2], 0);
  EXPECT_EQ(batch.GeometryAt(2).size(), 0u);
  EXPECT_EQ(batch.feature_index[2], 2);

  ASSERT_OK_AND_ASSIGN(rows, source->ReadBatch(10, &batch));
  EXPECT_EQ(rows, 0);
}

// Issue 17 item 13: a CSV row whose WKT does not parse is that row's problem: it comes back as
// an unreadable row (rejected by ingest under every policy) naming the right feature, and the
// rows after it are read. Before, GDAL's error stuck and the whole file failed at its end,
// naming the feature after the last one.
TEST_F(GdalSourceTest, UnparseableCsvWktFailsOnlyItsRow) {
  const std::string path = Write("bad.csv",
                                 "name,WKT\na,\"POINT (1 2)\"\nb,\"POINT (1\"\nc,\"POINT (3 4)\"\n"
                                 "d,\"POINT (5 6)\"\n");
  ASSERT_OK_AND_ASSIGN(auto source, GdalSource::Open(path));
  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t n, source->ReadBatch(100, &batch));
  ASSERT_EQ(n, 4);
  EXPECT_EQ(batch.geometry_valid, (std::vector<std::uint8_t>{1, 0, 1, 1}));
  ASSERT_EQ(batch.unreadable.size(), 1u);
  EXPECT_EQ(batch.unreadable[0].row, 1);
  EXPECT_THAT(batch.unreadable[0].reason, ::testing::StartsWith("feature 1: "));
  ASSERT_OK_AND_ASSIGN(n, source->ReadBatch(100, &batch));
  EXPECT_EQ(n, 0);
}

TEST_F(GdalSourceTest, SeekReadsARange) {
  const std::string path = Write("three.geojson", kThreeFeatures);
  ASSERT_OK_AND_ASSIGN(auto source, GdalSource::Open(path));
  ASSERT_OK(source->Seek(1));
  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(1, &batch));
  ASSERT_EQ(rows, 1);
  EXPECT_EQ(batch.feature_index[0], 1);
  EXPECT_EQ(batch.columns[1].ints[0], 9007199254740993LL);
  EXPECT_THAT(source->Seek(-1), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GdalSourceTest, MissingFileIsNotFound) {
  EXPECT_THAT(GdalSource::Open((dir_ / "nope.gpkg").string()), IsError(ErrorCode::kNotFound));
}

TEST_F(GdalSourceTest, MissingLayerIsNotFound) {
  const std::string path = Write("three.geojson", kThreeFeatures);
  EXPECT_THAT(GdalSource::Open(path, "no_such_layer"), IsError(ErrorCode::kNotFound));
}

TEST_F(GdalSourceTest, GarbageIsRefused) {
  const std::string path = Write("garbage.geojson", "{\"type\": \"FeatureCollection\", \"feat");
  EXPECT_FALSE(GdalSource::Open(path).ok());
}

}  // namespace
}  // namespace geolake::sources
