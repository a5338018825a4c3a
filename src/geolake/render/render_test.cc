#include "geolake/render/render.h"

#include <cairo.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "geolake/catalog/sql_catalog.h"
#include "geolake/geo/wkb.h"
#include "geolake/maintenance/real_table_test_util.h"
#include "geolake/sources/gdal_source.h"
#include "geolake/testing/testing.h"

namespace geolake::render {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::CommandResult;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::geolake::testing::RunCommand;

const std::string kStates = ::geolake::testing::DataPath("us_states.gpkg");

std::string TestDir(const std::string& name) {
  const std::string dir = ::geolake::testing::BuildDir() + "/render_test/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A decoded PNG and the projection RenderTable used, to look up the pixel of a lon/lat.
class Picture {
 public:
  explicit Picture(const std::string& path)
      : surface_(cairo_image_surface_create_from_png(path.c_str())) {}
  ~Picture() { cairo_surface_destroy(surface_); }
  Picture(const Picture&) = delete;
  Picture& operator=(const Picture&) = delete;

  bool ok() const { return cairo_surface_status(surface_) == CAIRO_STATUS_SUCCESS; }
  int width() const { return cairo_image_surface_get_width(surface_); }
  int height() const { return cairo_image_surface_get_height(surface_); }

  // ARGB of pixel (px, py) as cairo stores it (premultiplied; opaque here).
  std::uint32_t At(int px, int py) const {
    cairo_surface_flush(surface_);
    const unsigned char* data = cairo_image_surface_get_data(surface_);
    const int stride = cairo_image_surface_get_stride(surface_);
    std::uint32_t v;
    std::memcpy(&v, data + static_cast<std::ptrdiff_t>(py) * stride + px * 4, 4);
    return v;
  }

  // The pixel that lon/lat (x, y) falls in, by the same equirectangular fit as RenderTable:
  // one scale for both axes, view centred.
  std::uint32_t AtLonLat(const RenderSummary& s, double x, double y) const {
    const double scale = std::min(s.width_px / s.view.Width(), s.height_px / s.view.Height());
    const double ox = (s.width_px - s.view.Width() * scale) / 2;
    const double oy = (s.height_px - s.view.Height() * scale) / 2;
    const int px = static_cast<int>(ox + (x - s.view.xmin) * scale);
    const int py = static_cast<int>(oy + (s.view.ymax - y) * scale);
    EXPECT_TRUE(px >= 0 && px < width() && py >= 0 && py < height()) << x << "," << y;
    return At(std::clamp(px, 0, width() - 1), std::clamp(py, 0, height() - 1));
  }

  bool SameAs(const Picture& other) const {
    if (width() != other.width() || height() != other.height()) return false;
    for (int y = 0; y < height(); ++y) {
      for (int x = 0; x < width(); ++x) {
        if (At(x, y) != other.At(x, y)) return false;
      }
    }
    return true;
  }

 private:
  cairo_surface_t* surface_;
};

constexpr std::uint32_t kWhite = 0xFFFFFFFF;

// Points well inside a state (≥ 1° from any border) and points in open water.
struct LonLat {
  const char* what;
  double x;
  double y;
};
const LonLat kInside[] = {{"Kansas", -98.4, 38.5},
                          {"Texas", -99.5, 31.5},
                          {"Montana", -109.6, 47.0},
                          {"Nevada", -116.9, 39.3}};
const LonLat kWater[] = {
    {"Pacific", -140, 20}, {"Atlantic", -45, 33}, {"Gulf of Mexico", -90, 25.5}};

class RenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = ::geolake::testing::MissingData("us_states.gpkg")) GTEST_SKIP() << *why;
    dir_ = TestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    auto id = table::TableIdentifier::Parse("geo.states").value();
    auto t =
        maintenance::testing::BuildRealTable(*catalog_, *io_, id, kStates, dir_ + "/wh/geo/states");
    ASSERT_OK(t.status());
    table_ = std::move(*t);
  }

  std::unique_ptr<table::Catalog> catalog_ = table::MakeInMemoryCatalog();
  std::unique_ptr<io::FileIO> io_ = io::MakeLocalFileIO();
  std::string dir_;
  table::Table table_;
};

TEST_F(RenderTest, PaintsStatesAndLeavesTheOceanBlank) {
  RenderOptions o;
  o.output = dir_ + "/states.png";
  ASSERT_OK_AND_ASSIGN(RenderSummary s, RenderTable(*io_, table_.metadata, o));
  EXPECT_EQ(s.features_drawn, 56);
  EXPECT_EQ(s.files_drawn, s.files_total);
  EXPECT_GT(s.files_total, 3);
  // The view is the table's extent (manifest bounds of bbox.*) plus a 2% margin.
  EXPECT_LT(s.view.xmin, -179.1);
  EXPECT_GT(s.view.xmax, 179.7);
  EXPECT_EQ(s.width_px, 1024);
  EXPECT_NEAR(static_cast<double>(s.height_px) / s.width_px, s.view.Height() / s.view.Width(),
              0.01);
  Picture png(o.output);
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(png.width(), s.width_px);
  EXPECT_EQ(png.height(), s.height_px);
  for (const LonLat& p : kInside) EXPECT_NE(png.AtLonLat(s, p.x, p.y), kWhite) << p.what;
  for (const LonLat& p : kWater) EXPECT_EQ(png.AtLonLat(s, p.x, p.y), kWhite) << p.what;
}

TEST_F(RenderTest, BboxZoomsInAndSkipsFilesOutsideIt) {
  RenderOptions o;
  o.output = dir_ + "/conus.png";
  o.bbox = geo::Envelope{-125, 24, -66, 50};
  o.width_px = 800;
  o.height_px = 600;  // wider aspect than the box: letterboxed, still one scale
  ASSERT_OK_AND_ASSIGN(RenderSummary s, RenderTable(*io_, table_.metadata, o));
  EXPECT_LT(s.files_drawn, s.files_total);  // Hawaii, Alaska, Puerto Rico files are skipped
  EXPECT_GT(s.files_drawn, 0);
  EXPECT_LT(s.features_drawn, 56);
  Picture png(o.output);
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(png.height(), 600);
  for (const LonLat& p : kInside) EXPECT_NE(png.AtLonLat(s, p.x, p.y), kWhite) << p.what;
  EXPECT_EQ(png.AtLonLat(s, -123, 30), kWhite) << "Pacific";
  EXPECT_EQ(png.AtLonLat(s, -70, 30), kWhite) << "Atlantic";
  EXPECT_EQ(png.At(400, 5), kWhite) << "letterbox band above the box";
}

TEST_F(RenderTest, FilesOverlayDrawsBoxesAndReportsOverlap) {
  RenderOptions o;
  o.output = dir_ + "/plain.png";
  ASSERT_OK_AND_ASSIGN(RenderSummary plain, RenderTable(*io_, table_.metadata, o));
  o.output = dir_ + "/files.png";
  o.files = true;
  ASSERT_OK_AND_ASSIGN(RenderSummary files, RenderTable(*io_, table_.metadata, o));
  // One file per quadkey cell, so as many partitions as files.
  EXPECT_EQ(files.partitions, files.files_drawn);
  EXPECT_GT(files.overlap_ratio, 0.0);
  EXPECT_EQ(files.overlap_ratio, plain.overlap_ratio);
  Picture a(dir_ + "/plain.png");
  Picture b(dir_ + "/files.png");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(a.SameAs(b));
  // Still the same features underneath.
  EXPECT_NE(b.AtLonLat(files, -98.4, 38.5), kWhite);
}

// Points are small dots: the pixel of a real zip-code centroid is painted, most of the canvas
// around it stays blank.
TEST(RenderPointsTest, DrawsPointsAsDots) {
  if (auto why = ::geolake::testing::MissingData("us_zipcodes.gpkg")) GTEST_SKIP() << *why;
  const std::string zips = ::geolake::testing::DataPath("us_zipcodes.gpkg");
  const std::string dir = TestDir("points");
  auto catalog = table::MakeInMemoryCatalog();
  auto io = io::MakeLocalFileIO();
  ASSERT_OK_AND_ASSIGN(table::Table t,
                       maintenance::testing::BuildRealTable(
                           *catalog, *io, table::TableIdentifier::Parse("geo.zips").value(), zips,
                           dir + "/wh/geo/zips"));
  // The first centroid of the source, read independently of the table.
  ASSERT_OK_AND_ASSIGN(auto source, sources::GdalSource::Open(zips));
  geoparquet::FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t n, source->ReadBatch(1, &batch));
  ASSERT_EQ(n, 1);
  ASSERT_OK_AND_ASSIGN(geo::Envelope point, geo::WkbEnvelope(batch.GeometryAt(0)));

  RenderOptions o;
  o.output = dir + "/zips.png";
  o.bbox = geo::Envelope{point.xmin - 0.5, point.ymin - 0.5, point.xmax + 0.5, point.ymax + 0.5};
  o.width_px = 400;
  ASSERT_OK_AND_ASSIGN(RenderSummary s, RenderTable(*io, t.metadata, o));
  EXPECT_GT(s.features_drawn, 0);
  EXPECT_EQ(s.height_px, 400);
  Picture png(o.output);
  ASSERT_TRUE(png.ok());
  EXPECT_NE(png.AtLonLat(s, point.xmin, point.ymin), kWhite);
  std::int64_t blank = 0;
  for (int y = 0; y < png.height(); ++y) {
    for (int x = 0; x < png.width(); ++x) blank += png.At(x, y) == kWhite ? 1 : 0;
  }
  EXPECT_GT(blank, png.width() * png.height() / 2);
}

TEST(PartitionColourTest, StablePerValueAndDistinctAcrossValues) {
  const Rgb a = PartitionColour("geo_cell=021");
  const Rgb a2 = PartitionColour("geo_cell=021");
  const Rgb b = PartitionColour("geo_cell=023");
  EXPECT_EQ(a.r, a2.r);
  EXPECT_EQ(a.g, a2.g);
  EXPECT_EQ(a.b, a2.b);
  EXPECT_FALSE(a.r == b.r && a.g == b.g && a.b == b.b);
  for (double c : {a.r, a.g, a.b, b.r, b.g, b.b}) {
    EXPECT_GE(c, 0.0);
    EXPECT_LE(c, 1.0);
  }
}

TEST(ParseBboxTest, AcceptsFourOrderedNumbersOnly) {
  ASSERT_OK_AND_ASSIGN(geo::Envelope e, ParseBbox("-125,24.5,-66,50"));
  EXPECT_EQ(e, (geo::Envelope{-125, 24.5, -66, 50}));
  for (const char* bad :
       {"", "1,2,3", "1,2,3,4,5", "3,2,1,4", "1,4,3,2", "a,b,c,d", "1,2,3,4x", "1,2,inf,4"}) {
    EXPECT_THAT(ParseBbox(bad), IsError(ErrorCode::kInvalidArgument)) << bad;
  }
}

TEST_F(RenderTest, Errors) {
  RenderOptions o;
  o.output = dir_ + "/x.png";
  o.snapshot_id = 12345;
  EXPECT_THAT(RenderTable(*io_, table_.metadata, o), IsError(ErrorCode::kNotFound));
  o.snapshot_id.reset();
  o.width_px = 0;
  EXPECT_THAT(RenderTable(*io_, table_.metadata, o), IsError(ErrorCode::kInvalidArgument));
  o.width_px = 100;
  // A regular file where a folder should be: the PNG cannot be written.
  ASSERT_OK(io_->WriteAll(dir_ + "/file", "x", /*overwrite=*/true));
  o.output = dir_ + "/file/x.png";
  EXPECT_THAT(RenderTable(*io_, table_.metadata, o), IsErrorWith(ErrorCode::kIOError, "x.png"));
  EXPECT_FALSE(fs::exists(dir_ + "/x.png"));
}

// ---- The command line, run as a user would, on a table in an SQLite catalog ------------------

TEST(RenderCliTest, WritesPngsAndMapsErrorsToExitCodes) {
  if (auto why = ::geolake::testing::MissingData("us_states.gpkg")) GTEST_SKIP() << *why;
  const std::string bin = ::geolake::testing::BuildDir() + "/src/geolake/cli/geolake";
  ASSERT_TRUE(fs::exists(bin)) << bin;
  const std::string dir = TestDir("cli");
  const std::string wh = dir + "/wh";
  {
    ASSERT_OK_AND_ASSIGN(auto catalog, catalog::OpenCatalog("", wh));
    auto io = io::MakeLocalFileIO();
    ASSERT_OK(maintenance::testing::BuildRealTable(
                  *catalog, *io, table::TableIdentifier::Parse("geo.states").value(), kStates,
                  wh + "/geo/states")
                  .status());
  }
  const std::string geolake = bin + " --warehouse " + wh + " render ";

  CommandResult r = RunCommand(geolake + "geo.states -o " + dir + "/a.png --width 600");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("56 features"), std::string::npos) << r.output;
  EXPECT_TRUE(Picture(dir + "/a.png").ok());

  r = RunCommand(geolake + "geo.states -o " + dir + "/b.png --files --bbox -125,24,-66,50");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sum of file-bbox areas / table-bbox area = "), std::string::npos)
      << r.output;
  EXPECT_TRUE(Picture(dir + "/b.png").ok());

  r = RunCommand(geolake + "geo.nope -o " + dir + "/c.png");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  r = RunCommand(geolake + "geo.states -o " + dir + "/c.png --bbox 1,2,3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bbox '1,2,3'"), std::string::npos) << r.output;
  r = RunCommand(geolake + "geo.states -o " + dir + "/a.png/c.png");
  EXPECT_EQ(r.exit_code, 5) << r.output;
  r = RunCommand(geolake + "geo.states -o " + dir + "/c.png --snapshot 42");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/c.png"));
}

}  // namespace
}  // namespace geolake::render
