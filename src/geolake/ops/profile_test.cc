#include "geolake/ops/profile.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

using ::geolake::testing::IsError;

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("geolake_profile_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// Four features: a valid 1x1 degree square at the equator, the classic bowtie (invalid; make-
// valid splits it into two triangles), a point, and a feature without geometry.
constexpr const char* kFeatures = R"({"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":1},
 "geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}},
{"type":"Feature","properties":{"id":2},
 "geometry":{"type":"Polygon","coordinates":[[[10,10],[11,11],[11,10],[10,11],[10,10]]]}},
{"type":"Feature","properties":{"id":3},"geometry":{"type":"Point","coordinates":[-120,45]}},
{"type":"Feature","properties":{"id":4},"geometry":null}
]})";

TEST_F(ProfileTest, CountsTypesValidityAreaAndCells) {
  const std::string path = (dir_ / "four.geojson").string();
  std::ofstream(path) << kFeatures;
  ASSERT_OK_AND_ASSIGN(auto executor, ThreadPool::Make(3));
  ProfileOptions options;
  options.executor = executor.get();
  options.quadkey_zoom = 1;
  Metrics metrics;
  ASSERT_OK_AND_ASSIGN(ProfileReport r, ProfileSource(path, options, &metrics));
  EXPECT_EQ(r.features, 4);
  EXPECT_EQ(r.null_geometries, 1);
  EXPECT_EQ(r.geometry_types["Polygon"], 2);
  EXPECT_EQ(r.geometry_types["Point"], 1);
  EXPECT_EQ(r.vertices, 5 + 5 + 1);
  EXPECT_EQ(r.invalid, 1);
  EXPECT_EQ(r.repaired, 1);
  EXPECT_EQ(r.extent.xmin, -120);
  EXPECT_EQ(r.extent.ymax, 45);
  // A 1x1 degree cell at the equator is about 111.32 km x 110.57 km = 12,309 km2; the bowtie's
  // two triangles together cover half of a similar cell near 10N (about 6,060 km2).
  EXPECT_NEAR(r.area_km2, 12309 + 6060, 60);
  // Zoom 1 quadrants: "0" north-west, "1" north-east, "2" south-west, "3" south-east. The
  // square's centre (0.5, 0.5) and the bowtie's (10.5, 10.5) are north-east; the point is
  // north-west.
  EXPECT_EQ(r.cells["1"], 2);
  EXPECT_EQ(r.cells["0"], 1);
  EXPECT_LE(r.hilbert_min, r.hilbert_max);
  const MetricsSnapshot snap = metrics.Snapshot();
  ASSERT_FALSE(snap.stages.empty());
  EXPECT_EQ(snap.stages[0].name, "read");
  EXPECT_EQ(snap.stages[0].rows_out, 4);
  EXPECT_NE(FormatProfile(r).find("invalid         1  (repaired by make-valid: 1)"),
            std::string::npos);
}

TEST_F(ProfileTest, WithoutAnExecutorTheCallingThreadGivesTheSameReport) {
  const std::string path = (dir_ / "four.geojson").string();
  std::ofstream(path) << kFeatures;
  ASSERT_OK_AND_ASSIGN(auto executor, ThreadPool::Make(3));
  ProfileOptions options;
  options.quadkey_zoom = 1;
  ASSERT_OK_AND_ASSIGN(ProfileReport alone, ProfileSource(path, options));
  options.executor = executor.get();
  ASSERT_OK_AND_ASSIGN(ProfileReport parallel, ProfileSource(path, options));
  EXPECT_EQ(alone.features, parallel.features);
  EXPECT_EQ(alone.invalid, parallel.invalid);
  EXPECT_EQ(alone.repaired, parallel.repaired);
  EXPECT_EQ(alone.vertices, parallel.vertices);
  EXPECT_EQ(alone.cells, parallel.cells);
  EXPECT_EQ(alone.geometry_types, parallel.geometry_types);
  EXPECT_NEAR(alone.area_km2, parallel.area_km2, 1e-6);
  // A stop is seen on the calling thread too.
  std::stop_source stop;
  stop.request_stop();
  options.executor = nullptr;
  options.stop = stop.get_token();
  EXPECT_THAT(ProfileSource(path, options), IsError(ErrorCode::kCancelled));
}

TEST_F(ProfileTest, MissingSourceIsNotFound) {
  EXPECT_THAT(ProfileSource((dir_ / "missing.gpkg").string(), ProfileOptions{}),
              IsError(ErrorCode::kNotFound));
}

TEST_F(ProfileTest, StopBeforeStartIsCancelled) {
  const std::string path = (dir_ / "four.geojson").string();
  std::ofstream(path) << kFeatures;
  std::stop_source stop;
  stop.request_stop();
  ProfileOptions options;
  options.stop = stop.get_token();
  EXPECT_THAT(ProfileSource(path, options), IsError(ErrorCode::kCancelled));
}

}  // namespace
}  // namespace geolake::ops
