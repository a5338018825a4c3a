// Polygonize against gdal_polygonize.py over the whole raster (GDAL's own tool, run as a
// separate process): same polygon count, same area per value, and every polygon equal (area of
// the symmetric difference 0, matched by value and envelope), on small rasters written here
// with GDAL: 4/8 connectivity, nodata, holes, regions crossing 1, 2 and 4 window edges, windows
// of one pixel row, windows not aligned to blocks.
#include "geolake/ops/polygonize.h"

#include <gdal.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ogr_api.h>
#include <ogr_srs_api.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/wkb.h"
#include "geolake/layout/table_layout.h"
#include "geolake/ops/op_test_util.h"
#include "geolake/query/scan.h"
#include "geolake/table/catalog.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsErrorWith;

constexpr const char* kGdalPolygonize = "/usr/bin/gdal_polygonize.py";

struct Polygon {
  double value = 0;
  std::string wkb;
  geo::Envelope box;
};

struct RasterSpec {
  int width = 0, height = 0;
  int block = 16;  // tiled GeoTIFF blocks (multiples of 16); 0 = strips of one row
  GDALDataType type = GDT_Int16;
  std::optional<double> nodata;
  std::function<double(int col, int row)> value;
};

class PolygonizeTest : public OpTestBase {
 protected:
  void SetUp() override {
    GDALAllRegister();
    OpTestBase::SetUp();
  }

  // A GeoTIFF in UTM 33N with a non-trivial geotransform (origin and pixel size not integers).
  std::string WriteRaster(const std::string& name, const RasterSpec& spec) {
    const std::string path = (dir_ / name).string();
    std::vector<std::string> opts;
    if (spec.block > 0) {
      opts = {"TILED=YES", "BLOCKXSIZE=" + std::to_string(spec.block),
              "BLOCKYSIZE=" + std::to_string(spec.block)};
    } else {
      opts = {"BLOCKYSIZE=1"};
    }
    std::vector<char*> copts;
    for (std::string& o : opts) copts.push_back(o.data());
    copts.push_back(nullptr);
    GDALDatasetH ds = GDALCreate(GDALGetDriverByName("GTiff"), path.c_str(), spec.width,
                                 spec.height, 1, spec.type, copts.data());
    EXPECT_NE(ds, nullptr);
    double gt[6] = {500000.25, 30.5, 0, 4649776.75, 0, -30.5};
    GDALSetGeoTransform(ds, gt);
    OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
    OSRImportFromEPSG(srs, 32633);
    GDALSetSpatialRef(ds, srs);
    OSRDestroySpatialReference(srs);
    GDALRasterBandH band = GDALGetRasterBand(ds, 1);
    if (spec.nodata) GDALSetRasterNoDataValue(band, *spec.nodata);
    std::vector<double> values(static_cast<std::size_t>(spec.width) * spec.height);
    for (int r = 0; r < spec.height; ++r) {
      for (int c = 0; c < spec.width; ++c) {
        values[static_cast<std::size_t>(r) * spec.width + c] = spec.value(c, r);
      }
    }
    EXPECT_EQ(GDALRasterIO(band, GF_Write, 0, 0, spec.width, spec.height, values.data(), spec.width,
                           spec.height, GDT_Float64, 0, 0),
              CE_None);
    GDALClose(ds);
    return path;
  }

  static std::vector<Polygon> ReadLayer(const std::string& path, std::string* crs = nullptr) {
    std::vector<Polygon> out;
    GDALDatasetH ds = GDALOpenEx(path.c_str(), GDAL_OF_VECTOR, nullptr, nullptr, nullptr);
    EXPECT_NE(ds, nullptr) << path;
    if (ds == nullptr) return out;
    OGRLayerH layer = GDALDatasetGetLayer(ds, 0);
    if (crs != nullptr) {
      OGRSpatialReferenceH srs = OGR_L_GetSpatialRef(layer);
      *crs = srs == nullptr ? ""
                            : std::string(OSRGetAuthorityName(srs, nullptr)) + ":" +
                                  OSRGetAuthorityCode(srs, nullptr);
    }
    while (OGRFeatureH f = OGR_L_GetNextFeature(layer)) {
      Polygon p;
      p.value = OGR_F_GetFieldAsDouble(f, 0);
      OGRGeometryH g = OGR_F_GetGeometryRef(f);
      p.wkb.resize(static_cast<std::size_t>(OGR_G_WkbSizeEx(g)));
      OGR_G_ExportToIsoWkb(g, wkbNDR, reinterpret_cast<unsigned char*>(p.wkb.data()));
      p.box = geo::WkbEnvelope(geo::AsBytes(p.wkb)).value();
      out.push_back(std::move(p));
      OGR_F_Destroy(f);
    }
    GDALClose(ds);
    return out;
  }

  // gdal_polygonize.py over the whole raster.
  std::vector<Polygon> Oracle(const std::string& raster, int connectedness) {
    EXPECT_TRUE(fs::exists(kGdalPolygonize)) << "the oracle " << kGdalPolygonize << " is missing";
    const std::string out = (dir_ / ("oracle" + std::to_string(oracle_runs_++) + ".gpkg")).string();
    const std::string cmd = std::string("/usr/bin/python3 ") + kGdalPolygonize +
                            (connectedness == 8 ? " -8" : "") + " -q '" + raster + "' -f GPKG '" +
                            out + "' oracle DN";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return ReadLayer(out);
  }

  Status Run(const std::string& raster, const PolygonizeOptions& options, const std::string& out,
             PolygonizeReport* report) {
    RunnerOptions runner;
    runner.memory_bytes = 64 << 20;
    RunSummary summary;
    OutputSpec output;
    output.path = out;
    return RunPolygonize(env_, raster, options, output, runner, &summary, report);
  }

  double SymDiffArea(const Polygon& a, const Polygon& b) {
    geo::Geometry ga = geo::Geometry::FromWkb(*geo_, a.wkb).value().MakeValid().value();
    geo::Geometry gb = geo::Geometry::FromWkb(*geo_, b.wkb).value().MakeValid().value();
    const double u = ga.Union(gb).value().Area().value();
    const double i = ga.Intersection(gb).value().Area().value();
    return u - i;
  }
  double Area(const Polygon& p) {
    return geo::Geometry::FromWkb(*geo_, p.wkb).value().MakeValid().value().Area().value();
  }

  // Ours equals the oracle: count, area per value, each polygon matched and equal.
  void ExpectSame(const std::vector<Polygon>& ours, const std::vector<Polygon>& oracle) {
    ASSERT_EQ(ours.size(), oracle.size());
    std::map<double, double> area_ours, area_oracle;
    for (const Polygon& p : ours) area_ours[p.value] += Area(p);
    for (const Polygon& p : oracle) area_oracle[p.value] += Area(p);
    ASSERT_EQ(area_ours.size(), area_oracle.size());
    for (const auto& [value, area] : area_oracle) {
      EXPECT_NEAR(area_ours[value], area, 1e-9 * area) << "value " << value;
    }
    std::vector<bool> used(ours.size(), false);
    for (const Polygon& want : oracle) {
      bool found = false;
      for (std::size_t i = 0; i < ours.size() && !found; ++i) {
        const Polygon& got = ours[i];
        if (used[i] || got.value != want.value || got.box.xmin != want.box.xmin ||
            got.box.xmax != want.box.xmax || got.box.ymin != want.box.ymin ||
            got.box.ymax != want.box.ymax) {
          continue;
        }
        if (SymDiffArea(got, want) == 0) {
          used[i] = true;
          found = true;
        }
      }
      EXPECT_TRUE(found) << "no equal polygon for value " << want.value << ": "
                         << geo::WkbToWkt(geo::AsBytes(want.wkb)).value();
    }
  }

  // Polygonize `raster` with `options` and compare with the oracle; returns the report.
  PolygonizeReport Compare(const std::string& raster, const PolygonizeOptions& options) {
    PolygonizeReport report;
    const std::string out = (dir_ / ("ours" + std::to_string(runs_++) + ".gpkg")).string();
    Status st = Run(raster, options, out, &report);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return report;
    std::string crs;
    const std::vector<Polygon> ours = ReadLayer(out, &crs);
    EXPECT_EQ(crs, "EPSG:32633");
    ExpectSame(ours, Oracle(raster, options.connectedness));
    return report;
  }

  int runs_ = 0;
  int oracle_runs_ = 0;
};

// Classes in blobs of a few pixels (a coarse random grid, jittered), so regions cross seams.
std::function<double(int, int)> Blobs(unsigned seed, int classes, int cell) {
  auto grid = std::make_shared<std::map<std::pair<int, int>, int>>();
  auto rng = std::make_shared<std::mt19937>(seed);
  auto noise = std::make_shared<std::map<std::pair<int, int>, int>>();
  return [=](int c, int r) {
    auto pick = [&](std::map<std::pair<int, int>, int>& m, std::pair<int, int> key, int n) {
      auto it = m.find(key);
      if (it == m.end()) it = m.emplace(key, static_cast<int>((*rng)() % n)).first;
      return it->second;
    };
    const int jitter = pick(*noise, {c, r}, 7);
    if (jitter == 0) return static_cast<double>(pick(*noise, {-c - 1, r}, classes));
    return static_cast<double>(pick(*grid, {c / cell, r / cell}, classes));
  };
}

PolygonizeOptions Tile(int connectedness, const std::string& tile) {
  PolygonizeOptions o;
  o.connectedness = connectedness;
  EXPECT_TRUE(ParseTileSize(tile, &o).ok());
  return o;
}

TEST_F(PolygonizeTest, RandomClassesFourAndEightConnected) {
  RasterSpec spec{48, 40, 16, GDT_Int16, std::nullopt, Blobs(7, 4, 5)};
  const std::string raster = WriteRaster("blobs.tif", spec);
  for (int conn : {4, 8}) {
    SCOPED_TRACE("connectedness " + std::to_string(conn));
    const PolygonizeReport r = Compare(raster, Tile(conn, "16"));
    EXPECT_EQ(r.windows, 9);
    EXPECT_GT(r.merged, 5);  // regions crossing seams were merged
  }
}

TEST_F(PolygonizeTest, WindowsOfOnePixelRowAndUnalignedWindows) {
  RasterSpec spec{37, 23, 16, GDT_Byte, std::nullopt, Blobs(11, 3, 4)};
  const std::string raster = WriteRaster("rows.tif", spec);
  for (int conn : {4, 8}) {
    SCOPED_TRACE("connectedness " + std::to_string(conn));
    const PolygonizeReport rows = Compare(raster, Tile(conn, "64x1"));  // wider than the raster
    EXPECT_EQ(rows.windows, 23);
    EXPECT_EQ(rows.tile_height, 1);
    const PolygonizeReport odd = Compare(raster, Tile(conn, "5x7"));  // smaller than a block
    EXPECT_EQ(odd.windows, 8 * 4);
  }
}

TEST_F(PolygonizeTest, RegionsCrossingOneTwoAndFourWindowEdgesWithHoles) {
  // 32x32, windows of 16: seams x=16, y=16.
  auto value = [](int c, int r) -> double {
    if (r >= 2 && r < 6 && c >= 4 && c < 22) return 1;  // crosses x=16 once
    // An L over three windows: crosses x=16 (top) and y=16 (right).
    if ((r >= 8 && r < 11 && c >= 2 && c < 28) || (c >= 25 && c < 28 && r >= 8 && r < 30)) {
      return 2;
    }
    // An annulus around the 4-window corner (crosses all four half-seams) whose hole, also
    // around the corner, holds value 4 with a nodata hole in its middle.
    if (c >= 12 && c < 22 && r >= 12 && r < 22) {
      if (c >= 14 && c < 19 && r >= 14 && r < 19) {
        if (c >= 15 && c < 17 && r >= 15 && r < 17) return 0;  // nodata
        return 4;
      }
      return 3;
    }
    return 5;
  };
  RasterSpec spec{32, 32, 16, GDT_Int16, 0.0, value};
  const std::string raster = WriteRaster("shapes.tif", spec);
  for (int conn : {4, 8}) {
    SCOPED_TRACE("connectedness " + std::to_string(conn));
    const PolygonizeReport r = Compare(raster, Tile(conn, "16"));
    EXPECT_EQ(r.windows, 4);
    EXPECT_EQ(r.polygons, 5);  // 1, 2, 3 (with a hole), 4 (with a nodata hole), 5 (holes)
    EXPECT_EQ(r.interior, 0);
  }
}

TEST_F(PolygonizeTest, NodataAndMaskAsGdalPolygonize) {
  // Many nodata pixels (value 9) in blobs and single pixels; a strip layout (block 0).
  auto blobs = Blobs(5, 4, 3);
  auto value = [blobs](int c, int r) {
    const double v = blobs(c, r);
    return v == 3 ? 9.0 : v;
  };
  RasterSpec spec{40, 30, 0, GDT_UInt16, 9.0, value};
  const std::string raster = WriteRaster("nodata.tif", spec);
  for (int conn : {4, 8}) {
    SCOPED_TRACE("connectedness " + std::to_string(conn));
    Compare(raster, Tile(conn, "13x8"));
  }
}

TEST_F(PolygonizeTest, NodataOptionReplacesTheBandMask) {
  // No nodata in the file; --nodata 2 must equal gdal_polygonize of the file with nodata 2.
  RasterSpec spec{30, 30, 16, GDT_Int16, std::nullopt, Blobs(3, 4, 4)};
  const std::string raster = WriteRaster("plain.tif", spec);
  spec.nodata = 2.0;
  const std::string with_nodata = WriteRaster("with_nodata.tif", spec);
  PolygonizeOptions options = Tile(4, "16");
  options.nodata = 2;
  PolygonizeReport report;
  const std::string out = (dir_ / "nodata_option.gpkg").string();
  ASSERT_OK(Run(raster, options, out, &report));
  ExpectSame(ReadLayer(out), Oracle(with_nodata, 4));
}

TEST_F(PolygonizeTest, FloatBandRefusedUnlessTolerance) {
  auto value = [](int c, int r) { return 0.1 * ((c / 5 + r / 7) % 4) + 0.001 * ((c * r) % 3); };
  RasterSpec spec{32, 32, 16, GDT_Float32, std::nullopt, value};
  const std::string raster = WriteRaster("float.tif", spec);
  PolygonizeReport report;
  EXPECT_THAT(Run(raster, Tile(4, "16"), (dir_ / "f.gpkg").string(), &report),
              IsErrorWith(ErrorCode::kInvalidArgument, "Float32"));
  // With a tolerance: classes round(v / 0.1), as gdal_polygonize of those classes gives.
  PolygonizeOptions options = Tile(4, "16");
  options.float_tolerance = 0.1;
  const std::string out = (dir_ / "f.gpkg").string();
  ASSERT_OK(Run(raster, options, out, &report));
  RasterSpec classes = spec;
  classes.type = GDT_Int16;
  classes.value = [value](int c, int r) {
    return std::nearbyint(static_cast<double>(static_cast<float>(value(c, r))) / 0.1);
  };
  std::vector<Polygon> ours = ReadLayer(out);
  for (Polygon& p : ours) p.value = std::nearbyint(p.value / 0.1);
  ExpectSame(ours, Oracle(WriteRaster("classes.tif", classes), 4));
}

TEST_F(PolygonizeTest, StopEndsTheRunWithinTwoSeconds) {
  // Speckle everywhere: a few seconds of GDALPolygonize per window in a debug build.
  auto speckle = [](int c, int r) {
    return static_cast<double>(
        ((static_cast<unsigned>(c) * 73856093U) ^ (static_cast<unsigned>(r) * 19349663U)) % 6U);
  };
  RasterSpec spec{1536, 1536, 256, GDT_Byte, std::nullopt, speckle};
  const std::string raster = WriteRaster("big.tif", spec);
  std::stop_source stop;
  env_.stop = stop.get_token();
  PolygonizeReport report;
  Status st;
  std::chrono::steady_clock::time_point stopped;
  std::thread run([&] { st = Run(raster, Tile(4, "768"), (dir_ / "big.gpkg").string(), &report); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stopped = std::chrono::steady_clock::now();
  stop.request_stop();
  run.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  EXPECT_EQ(st.code(), ErrorCode::kCancelled) << st.ToString();
  EXPECT_LT(seconds, 2.0);
  EXPECT_FALSE(fs::exists(dir_ / "big.gpkg"));
}

TEST_F(PolygonizeTest, TableOutputHasTheRasterCrsAndIsNotWrittenTwice) {
  RasterSpec spec{40, 24, 16, GDT_Int16, 0.0, Blobs(21, 4, 4)};
  const std::string raster = WriteRaster("table.tif", spec);
  RunnerOptions runner;
  runner.memory_bytes = 64 << 20;
  runner.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
  const OutputSpec output = ParseOutput("geo.classes").value();
  RunSummary summary;
  PolygonizeReport report;
  ASSERT_OK(RunPolygonize(env_, raster, Tile(4, "16"), output, runner, &summary, &report));
  EXPECT_EQ(summary.commits, 1);
  EXPECT_EQ(summary.totals.rows_out, report.polygons);
  auto t = table::LoadTable(*catalog_, *io_, *table::TableIdentifier::Parse("geo.classes"));
  ASSERT_OK(t.status());
  ASSERT_OK_AND_ASSIGN(layout::TableLayout table_layout, layout::ReadTableLayout(t->metadata));
  EXPECT_EQ(table_layout.crs, "EPSG:32633");
  // The table's rows are the oracle's polygons.
  class Rows final : public query::RowSink {
   public:
    Status Begin(const query::OutputLayout&) override { return Status::OK(); }
    Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
      for (std::size_t r = 0; r < rows.columns[0].size(); ++r) {
        Polygon p;
        p.value = static_cast<double>(rows.columns[0].ints[r]);
        p.wkb = std::string(reinterpret_cast<const char*>(rows.GeometryAt(r).data()),
                            rows.GeometryAt(r).size());
        p.box = geo::WkbEnvelope(rows.GeometryAt(r)).value();
        polygons.push_back(std::move(p));
      }
      return Status::OK();
    }
    Status Finish() override { return Status::OK(); }
    std::vector<Polygon> polygons;
  } rows;
  ASSERT_OK(query::RunQuery(*io_, t->metadata, {}, &rows).status());
  ExpectSame(rows.polygons, Oracle(raster, 4));

  // The same run again finds it committed; another run into the table is refused.
  RunSummary again;
  ASSERT_OK(RunPolygonize(env_, raster, Tile(4, "16"), output, runner, &again, &report));
  EXPECT_EQ(again.commits, 0);
  EXPECT_EQ(again.totals.rows_in, 0);
  EXPECT_THAT(RunPolygonize(env_, raster, Tile(8, "16"), output, runner, &again, &report),
              IsErrorWith(ErrorCode::kAlreadyExists, "another polygonize run"));
}

TEST_F(PolygonizeTest, BadArguments) {
  RasterSpec spec{16, 16, 16, GDT_Byte, std::nullopt, [](int, int) { return 1.0; }};
  const std::string raster = WriteRaster("one.tif", spec);
  PolygonizeReport report;
  PolygonizeOptions band = Tile(4, "16");
  band.band = 2;
  EXPECT_THAT(Run(raster, band, (dir_ / "a.gpkg").string(), &report),
              IsErrorWith(ErrorCode::kInvalidArgument, "out of range"));
  PolygonizeOptions conn = Tile(6, "16");
  EXPECT_THAT(Run(raster, conn, (dir_ / "a.gpkg").string(), &report),
              IsErrorWith(ErrorCode::kInvalidArgument, "4 or 8"));
  EXPECT_THAT(
      Run((dir_ / "missing.tif").string(), Tile(4, "16"), (dir_ / "a.gpkg").string(), &report),
      IsErrorWith(ErrorCode::kNotFound, "missing.tif"));
  PolygonizeOptions tile;
  EXPECT_FALSE(ParseTileSize("0", &tile).ok());
  EXPECT_FALSE(ParseTileSize("12x", &tile).ok());
  ASSERT_OK(ParseTileSize("12x3", &tile));
  EXPECT_EQ(tile.tile_width, 12);
  EXPECT_EQ(tile.tile_height, 3);
}

}  // namespace
}  // namespace geolake::ops
