#include "geolake/ops/reproject.h"

#include <geos_c.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <proj.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/geo/wkb.h"
#include "geolake/geo/wkt.h"
#include "geolake/layout/table_layout.h"
#include "geolake/ops/op_test_util.h"
#include "geolake/query/output.h"
#include "geolake/query/scan.h"
#include "geolake/table/catalog.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::testing::HasSubstr;

// ---- The independent expectation: PROJ's C API, in the CRSs' own axis order -------------
//
// The test does not use geo::Transformer. It asks PROJ for the operation between the two CRSs
// as the authority defines them (EPSG:4326 is latitude, longitude; EPSG:3035 northing,
// easting), feeds each coordinate in that axis order and reads the result in the target's
// order, then maps both to x = east, y = north. So it checks the always-xy rule rather than
// repeating proj_normalize_for_visualization.
class ProjOracle {
 public:
  ProjOracle(const std::string& from, const std::string& to) {
    ctx_ = proj_context_create();
    PJ* src = proj_create(ctx_, from.c_str());
    PJ* dst = proj_create(ctx_, to.c_str());
    if (src == nullptr || dst == nullptr) {
      ADD_FAILURE() << "PROJ does not know " << from << " or " << to;
    } else {
      swap_from_ = NorthFirst(src);
      swap_to_ = NorthFirst(dst);
      op_ = proj_create_crs_to_crs_from_pj(ctx_, src, dst, nullptr, nullptr);
      if (op_ == nullptr) ADD_FAILURE() << "no PROJ operation " << from << " -> " << to;
    }
    if (src != nullptr) proj_destroy(src);
    if (dst != nullptr) proj_destroy(dst);
  }
  ~ProjOracle() {
    if (op_ != nullptr) proj_destroy(op_);
    proj_context_destroy(ctx_);
  }
  ProjOracle(const ProjOracle&) = delete;
  ProjOracle& operator=(const ProjOracle&) = delete;

  // (east, north) in, (east, north) out; false when PROJ gives no finite result.
  bool Transform(double x, double y, double* ox, double* oy) const {
    if (op_ == nullptr) return false;
    PJ_COORD c = proj_coord(swap_from_ ? y : x, swap_from_ ? x : y, 0, 0);
    PJ_COORD r = proj_trans(op_, PJ_FWD, c);
    const double a = r.v[0];
    const double b = r.v[1];
    *ox = swap_to_ ? b : a;
    *oy = swap_to_ ? a : b;
    return std::isfinite(*ox) && std::isfinite(*oy);
  }
  bool swap_from() const { return swap_from_; }

 private:
  // True when the first axis of the (horizontal part of the) CRS points north or south.
  bool NorthFirst(PJ* crs) {
    PJ* horizontal =
        proj_get_type(crs) == PJ_TYPE_COMPOUND_CRS ? proj_crs_get_sub_crs(ctx_, crs, 0) : nullptr;
    PJ* base = horizontal != nullptr ? horizontal : crs;
    PJ* cs = proj_crs_get_coordinate_system(ctx_, base);
    bool north = false;
    if (cs != nullptr) {
      const char* direction = nullptr;
      proj_cs_get_axis_info(ctx_, cs, 0, nullptr, nullptr, &direction, nullptr, nullptr, nullptr,
                            nullptr);
      north = direction != nullptr &&
              (std::string(direction) == "north" || std::string(direction) == "south");
      proj_destroy(cs);
    }
    if (horizontal != nullptr) proj_destroy(horizontal);
    return north;
  }

  PJ_CONTEXT* ctx_ = nullptr;
  PJ* op_ = nullptr;
  bool swap_from_ = false;
  bool swap_to_ = false;
};

// GEOS's own densify (GEOSDensify_r) of a WKT, for the expectation of --densify cases.
geo::FlatGeometry GeosDensify(const std::string& wkt, double tolerance) {
  GEOSContextHandle_t h = GEOS_init_r();
  GEOSWKTReader* reader = GEOSWKTReader_create_r(h);
  GEOSGeometry* g = GEOSWKTReader_read_r(h, reader, wkt.c_str());
  GEOSGeometry* d = g != nullptr ? GEOSDensify_r(h, g, tolerance) : nullptr;
  geo::FlatGeometry out;
  if (d != nullptr) {
    GEOSWKBWriter* writer = GEOSWKBWriter_create_r(h);
    GEOSWKBWriter_setOutputDimension_r(h, writer, 3);
    std::size_t size = 0;
    unsigned char* bytes = GEOSWKBWriter_write_r(h, writer, d, &size);
    auto parsed = geo::ParseWkb(std::span<const std::uint8_t>(bytes, size));
    EXPECT_OK(parsed);
    if (parsed.ok()) out = std::move(*parsed);
    GEOSFree_r(h, bytes);
    GEOSWKBWriter_destroy_r(h, writer);
    GEOSGeom_destroy_r(h, d);
  } else {
    ADD_FAILURE() << "GEOS cannot densify " << wkt;
  }
  if (g != nullptr) GEOSGeom_destroy_r(h, g);
  GEOSWKTReader_destroy_r(h, reader);
  GEOS_finish_r(h);
  return out;
}

// ---- tests/cases/ops/reproject/*.case (README.md there gives the format) -------------------
struct ReprojectCase {
  std::string name;
  std::string from;
  std::string to;
  double densify = 0;
  std::vector<std::pair<std::string, std::string>> input;  // id, WKT ("NULL": none)
  std::set<std::string> rejected;                          // ids whose coordinates fail
};

ReprojectCase ParseCase(const fs::path& path) {
  ReprojectCase c;
  c.name = path.stem().string();
  std::ifstream in(path);
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("from:")) {
      c.from = line.substr(6);
    } else if (line.starts_with("to:")) {
      c.to = line.substr(4);
    } else if (line.starts_with("densify:")) {
      c.densify = std::stod(line.substr(9));
    } else if (line == "input:" || line == "rejected:") {
      section = line.substr(0, line.size() - 1);
    } else if (section == "input") {
      const std::size_t space = line.find(' ');
      c.input.emplace_back(line.substr(0, space), line.substr(space + 1));
    } else if (section == "rejected") {
      c.rejected.insert(line);
    }
  }
  return c;
}

// id -> WKT ("" for a null geometry) of a CSV output (columns id, geometry).
std::map<std::string, std::string> ReadCsv(const std::string& path) {
  std::map<std::string, std::string> rows;
  std::ifstream in(path);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    const auto f = CsvFields(line);
    rows[f[0]] = f.size() > 1 ? f.back() : "";
  }
  return rows;
}

class ReprojectTest : public OpTestBase {
 protected:
  // A GeoParquet source in `crs` of (id, WKT) rows, written by the query exporter.
  std::string WriteSource(const std::string& name, const std::string& crs,
                          const std::vector<std::pair<std::string, std::string>>& rows) {
    const std::string path = (dir_ / name).string();
    auto sink = query::MakeOutputSink(query::OutputFormat::kParquet, path, *io_);
    EXPECT_OK(sink);
    query::OutputLayout layout;
    layout.fields = {{"id", geoparquet::FieldType::kInt64}};
    layout.crs = crs;
    layout.layer_name = "input";
    EXPECT_OK((*sink)->Begin(layout));
    geoparquet::FeatureBatch batch;
    batch.fields = layout.fields;
    batch.columns.resize(1);
    batch.columns[0].type = geoparquet::FieldType::kInt64;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      batch.columns[0].valid.push_back(1);
      batch.columns[0].ints.push_back(std::stoll(rows[i].first));
      if (rows[i].second == "NULL") {
        batch.geometry_valid.push_back(0);
      } else {
        auto wkb = geo::WktToWkb(rows[i].second);
        EXPECT_OK(wkb) << rows[i].second;
        batch.wkb += *wkb;
        batch.geometry_valid.push_back(1);
      }
      batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
      batch.feature_index.push_back(static_cast<std::int64_t>(i));
    }
    EXPECT_OK((*sink)->Write(path, batch));
    EXPECT_OK((*sink)->Finish());
    return path;
  }

  RunnerOptions Options(FeatureErrorPolicy on_error = FeatureErrorPolicy::kSkip) const {
    RunnerOptions options;
    options.memory_bytes = 64 << 20;
    options.batch_rows = 2;  // several tasks even for a case's few rows
    options.on_error = on_error;
    options.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
    return options;
  }

  // Every coordinate of `got` is PROJ's transform of the same coordinate of `input` (densified
  // by GEOS when `densify` > 0): same structure, each value within 1e-9 relative.
  static void ExpectProjTransform(const ProjOracle& proj, const std::string& input_wkt,
                                  double densify, const std::string& got_wkt) {
    const std::string source = input_wkt;
    geo::FlatGeometry in;
    if (densify > 0) {
      in = GeosDensify(input_wkt, densify);
    } else {
      ASSERT_OK_AND_ASSIGN(in, geo::ParseWkt(input_wkt));
    }
    ASSERT_OK_AND_ASSIGN(geo::FlatGeometry got, geo::ParseWkt(got_wkt));
    ASSERT_EQ(got.parts.size(), in.parts.size()) << got_wkt;
    ASSERT_EQ(got.dims, in.dims) << got_wkt;
    ASSERT_EQ(got.num_coordinates(), in.num_coordinates()) << source << "\n" << got_wkt;
    for (std::size_t i = 0; i < in.num_coordinates(); ++i) {
      const auto a = in.coordinate(i);
      const auto b = got.coordinate(i);
      if (std::isnan(a[0])) {  // POINT EMPTY stays empty
        EXPECT_TRUE(std::isnan(b[0])) << got_wkt;
        continue;
      }
      double x = 0;
      double y = 0;
      ASSERT_TRUE(proj.Transform(a[0], a[1], &x, &y)) << "PROJ fails on " << a[0] << " " << a[1];
      EXPECT_NEAR(b[0], x, 1e-9 * std::max(1.0, std::abs(x))) << i << " of " << got_wkt;
      EXPECT_NEAR(b[1], y, 1e-9 * std::max(1.0, std::abs(y))) << i << " of " << got_wkt;
      for (std::size_t k = 2; k < a.size(); ++k) EXPECT_EQ(b[k], a[k]) << "Z/M kept";
    }
  }
};

TEST_F(ReprojectTest, CasesMatchProjOnEveryCoordinate) {
  const fs::path cases = fs::path(::geolake::testing::SourceDir()) / "tests/cases/ops/reproject";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".case") continue;
    const ReprojectCase c = ParseCase(entry.path());
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.from.empty());
    ASSERT_FALSE(c.to.empty());
    ASSERT_FALSE(c.input.empty());
    const std::string in = WriteSource(c.name + ".parquet", c.from, c.input);
    const std::string out = (dir_ / (c.name + "_out.csv")).string();
    ReprojectOptions options;
    options.to = c.to;
    options.densify = c.densify;
    RunSummary summary;
    ReprojectReport report;
    ASSERT_OK(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(out).value(),
                           Options(), &summary, &report));
    EXPECT_EQ(summary.totals.rows_rejected, static_cast<std::int64_t>(c.rejected.size()));
    EXPECT_EQ(report.failed, static_cast<std::int64_t>(c.rejected.size()));
    const std::map<std::string, std::string> rows = ReadCsv(out);
    ProjOracle proj(c.from, c.to);
    for (const auto& [id, wkt] : c.input) {
      SCOPED_TRACE("feature " + id);
      const auto row = rows.find(id);
      if (c.rejected.contains(id)) {
        EXPECT_EQ(row, rows.end()) << "a rejected feature is not written";
        continue;
      }
      ASSERT_NE(row, rows.end());
      if (wkt == "NULL") {
        EXPECT_EQ(row->second, "");
        continue;
      }
      ExpectProjTransform(proj, wkt, c.densify, row->second);
    }
    EXPECT_EQ(rows.size(), c.input.size() - c.rejected.size());
    // The rejects file names each rejected feature by its index in the source.
    if (!c.rejected.empty()) {
      std::ifstream rejects(summary.rejects_path);
      std::stringstream text;
      text << rejects.rdbuf();
      for (std::size_t i = 0; i < c.input.size(); ++i) {
        if (!c.rejected.contains(c.input[i].first)) continue;
        EXPECT_THAT(text.str(), HasSubstr("\"feature_index\":" + std::to_string(i) +
                                          ",\"reason\":\"coordinate "));
      }
      EXPECT_THAT(text.str(), HasSubstr("does not transform"));
      // With --on-error stop the run ends naming one of them (batches run in parallel, so
      // whichever fails first).
      Status stopped = RunReproject(env_, ResolveInput(in).value(), options,
                                    ParseOutput((dir_ / (c.name + "_stop.csv")).string()).value(),
                                    Options(FeatureErrorPolicy::kStop), &summary, &report);
      EXPECT_EQ(stopped.code(), ErrorCode::kGeometryError) << stopped.ToString();
      bool named = false;
      for (std::size_t i = 0; i < c.input.size(); ++i) {
        named = named || (c.rejected.contains(c.input[i].first) &&
                          stopped.message().find("feature " + std::to_string(i) + ": coordinate") !=
                              std::string::npos);
      }
      EXPECT_TRUE(named) << stopped.ToString();
    }
    ++ran;
  }
  EXPECT_GE(ran, 6);
}

// The file output carries the target CRS as PROJJSON in its GeoParquet metadata.
TEST_F(ReprojectTest, ParquetOutputCarriesTheTargetCrs) {
  const std::string in = WriteSource("in.parquet", "EPSG:4326", {{"1", "POINT (-100 40)"}});
  const std::string out = (dir_ / "out.parquet").string();
  ReprojectOptions options;
  options.to = "EPSG:5070";
  RunSummary summary;
  ASSERT_OK(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(out).value(),
                         Options(), &summary));
  // Read back as a source: its CRS is what the "geo" metadata says.
  const std::string again = (dir_ / "again.csv").string();
  options.to = "EPSG:4326";
  ReprojectReport report;
  ASSERT_OK(RunReproject(env_, ResolveInput(out).value(), options, ParseOutput(again).value(),
                         Options(), &summary, &report));
  EXPECT_EQ(report.from, "EPSG:5070");
  ASSERT_OK_AND_ASSIGN(geo::FlatGeometry p, geo::ParseWkt(ReadCsv(again)["1"]));
  EXPECT_NEAR(p.coords[0], -100.0, 1e-9);
  EXPECT_NEAR(p.coords[1], 40.0, 1e-9);
  // Back to EPSG:4326 as GeoParquet: "crs" omitted (OGC:CRS84), not null (unknown), so the
  // file reads back with a CRS.
  const std::string back = (dir_ / "back.parquet").string();
  ASSERT_OK(RunReproject(env_, ResolveInput(out).value(), options, ParseOutput(back).value(),
                         Options(), &summary, &report));
  options.to = "EPSG:3857";
  ASSERT_OK(RunReproject(env_, ResolveInput(back).value(), options,
                         ParseOutput((dir_ / "m.csv").string()).value(), Options(), &summary,
                         &report));
  EXPECT_EQ(report.from, "OGC:CRS84");
}

// A table output is laid out in the new CRS: geolake.crs, bbox columns and a --bbox query in
// the new CRS's metres return the right rows.
TEST_F(ReprojectTest, TableOutputIsLaidOutInTheTargetCrs) {
  // Two counties' worth of boxes far apart: one in Kansas, one in Maine.
  const std::string in = WriteSource("in.parquet", "EPSG:4326",
                                     {{"1", "POLYGON ((-98 38, -97 38, -97 39, -98 39, -98 38))"},
                                      {"2", "POLYGON ((-69 45, -68 45, -68 46, -69 46, -69 45))"}});
  ReprojectOptions options;
  options.to = "EPSG:5070";
  RunSummary summary;
  RunnerOptions runner = Options();
  runner.partition = layout::PartitionScheme{layout::PartitionKind::kQuadkey, 3};
  ASSERT_OK(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput("geo.out").value(),
                         runner, &summary));
  ASSERT_OK_AND_ASSIGN(table::TableIdentifier id, table::TableIdentifier::Parse("geo.out"));
  ASSERT_OK_AND_ASSIGN(table::Table t, table::LoadTable(*catalog_, *io_, id));
  ASSERT_OK_AND_ASSIGN(layout::TableLayout layout, layout::ReadTableLayout(t.metadata));
  EXPECT_EQ(layout.crs, "EPSG:5070");
  // The Hilbert extent is the CRS's area of use in metres, not degrees.
  EXPECT_GT(layout.hilbert_extent.xmax - layout.hilbert_extent.xmin, 1e6);

  // A box around feature 1's corner (-98, 38) in EPSG:5070, from PROJ.
  ProjOracle proj("EPSG:4326", "EPSG:5070");
  double x = 0;
  double y = 0;
  ASSERT_TRUE(proj.Transform(-97.5, 38.5, &x, &y));
  const std::string out = (dir_ / "query.csv").string();
  InputSpec query;
  query.table = "geo.out";
  query.bbox = geo::Envelope{x - 1000, y - 1000, x + 1000, y + 1000};
  options.to = "EPSG:5070";  // identity: the rows as stored
  ReprojectReport report;
  ASSERT_OK(
      RunReproject(env_, query, options, ParseOutput(out).value(), Options(), &summary, &report));
  EXPECT_TRUE(report.identity);
  const auto rows = ReadCsv(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.begin()->first, "1");
  // The same box in degrees finds nothing: the table is not in degrees any more.
  query.bbox = geo::Envelope{-98, 38, -97, 39};
  ASSERT_OK(
      RunReproject(env_, query, options, ParseOutput(out).value(), Options(), &summary, &report));
  EXPECT_TRUE(ReadCsv(out).empty());

  // Into the same table again from another CRS' view is refused: the table is in EPSG:5070.
  options.to = "EPSG:3857";
  EXPECT_THAT(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput("geo.out").value(),
                           Options(), &summary),
              IsErrorWith(ErrorCode::kInvalidArgument, "has CRS EPSG:5070, not EPSG:3857"));
}

TEST_F(ReprojectTest, UnknownTargetAndMissingSourceCrsAreClearErrors) {
  const std::string in = WriteSource("in.parquet", "EPSG:4326", {{"1", "POINT (1 2)"}});
  const std::string out = (dir_ / "out.csv").string();
  RunSummary summary;
  ReprojectOptions options;
  options.to = "EPSG:999999";
  EXPECT_THAT(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(out).value(),
                           Options(), &summary),
              IsErrorWith(ErrorCode::kInvalidArgument, "reproject --to 'EPSG:999999'"));
  options.to = "";
  EXPECT_THAT(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(out).value(),
                           Options(), &summary),
              IsErrorWith(ErrorCode::kInvalidArgument, "--to is required"));
  options.to = "EPSG:3857";
  options.densify = -1;
  EXPECT_THAT(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(out).value(),
                           Options(), &summary),
              IsErrorWith(ErrorCode::kInvalidArgument, "--densify"));
  // A CSV of WKT has no CRS.
  const std::string csv = (dir_ / "nocrs.csv").string();
  std::ofstream(csv) << "id,WKT\n1,\"POINT (1 2)\"\n";
  options.densify = 0;
  EXPECT_THAT(RunReproject(env_, ResolveInput(csv).value(), options, ParseOutput(out).value(),
                           Options(), &summary),
              IsErrorWith(ErrorCode::kInvalidArgument, "has no CRS"));
  EXPECT_FALSE(fs::exists(out));
}

// DensifyFlat gives GEOSDensify's coordinates (lines, rings of polygons with holes, Z).
TEST_F(ReprojectTest, DensifyMatchesGeos) {
  for (const std::string wkt : {
           "LINESTRING (0 0, 10 0, 10 3.5)",
           "POLYGON ((0 0, 7 0, 7 7, 0 7, 0 0), (1 1, 2 1, 2 2, 1 1))",
           "MULTILINESTRING ((0 0, 0 -9), (5 5, 6 6))",
           "LINESTRING Z (0 0 0, 4 0 8)",
           "GEOMETRYCOLLECTION (POINT (1 1), LINESTRING (0 0, 3 4))",
       }) {
    SCOPED_TRACE(wkt);
    ASSERT_OK_AND_ASSIGN(geo::FlatGeometry g, geo::ParseWkt(wkt));
    const std::size_t before = g.num_coordinates();
    ASSERT_OK_AND_ASSIGN(std::int64_t added, DensifyFlat(&g, 1.5));
    const geo::FlatGeometry want = GeosDensify(wkt, 1.5);
    ASSERT_EQ(g.num_coordinates(), want.num_coordinates());
    EXPECT_EQ(static_cast<std::size_t>(added), g.num_coordinates() - before);
    for (std::size_t i = 0; i < g.coords.size(); ++i) {
      if (std::isnan(want.coords[i]) && i % 3 == 2 && g.stride() == 3) {
        // GEOS 3.11 leaves the Z of added points NaN; ours is interpolated along the
        // segment: z = 2x on this line.
        EXPECT_DOUBLE_EQ(g.coords[i], 2 * g.coords[i - 2]) << i;
        continue;
      }
      EXPECT_NEAR(g.coords[i], want.coords[i], 1e-12) << i;
    }
    if (g.stride() == 2) {
      EXPECT_EQ(geo::WriteWkb(g), geo::WriteWkb(want));
    }
  }
  geo::FlatGeometry g = geo::ParseWkt("LINESTRING (0 0, 1e9 0)").value();
  EXPECT_THAT(DensifyFlat(&g, 1e-3), IsErrorWith(ErrorCode::kInvalidArgument, "more than"));
  EXPECT_THAT(DensifyFlat(&g, 0), IsError(ErrorCode::kInvalidArgument));
}

// --densify: the 49th parallel from -120 to -80 is a straight line in lon/lat and an arc in
// Conus Albers. Without densifying, the output is the chord, whose midpoint is kilometres off
// PROJ's transform of (-100, 49); densified, the midpoint is a vertex equal to PROJ's.
TEST_F(ReprojectTest, DensifiedParallelCurvesInAlbers) {
  const std::string in =
      WriteSource("in.parquet", "EPSG:4326", {{"1", "LINESTRING (-120 49, -80 49)"}});
  ProjOracle proj("EPSG:4326", "EPSG:5070");
  double mx = 0;
  double my = 0;
  ASSERT_TRUE(proj.Transform(-100, 49, &mx, &my));
  auto run = [&](double densify) {
    ReprojectOptions options;
    options.to = "EPSG:5070";
    options.densify = densify;
    const std::string out = (dir_ / ("out_" + std::to_string(densify) + ".csv")).string();
    RunSummary summary;
    EXPECT_OK(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(out).value(),
                           Options(), &summary));
    return geo::ParseWkt(ReadCsv(out)["1"]).value();
  };
  const geo::FlatGeometry chord = run(0);
  ASSERT_EQ(chord.num_coordinates(), 2u);
  const double cx = (chord.coords[0] + chord.coords[2]) / 2;
  const double cy = (chord.coords[1] + chord.coords[3]) / 2;
  EXPECT_GT(std::hypot(cx - mx, cy - my), 50000.0) << "the chord's midpoint is far off the arc";

  const geo::FlatGeometry halves = run(20);
  ASSERT_EQ(halves.num_coordinates(), 3u);
  EXPECT_NEAR(halves.coords[2], mx, 1e-6);
  EXPECT_NEAR(halves.coords[3], my, 1e-6);

  const geo::FlatGeometry degrees = run(1);
  ASSERT_EQ(degrees.num_coordinates(), 41u);
  for (int k = 0; k <= 40; ++k) {
    double x = 0;
    double y = 0;
    ASSERT_TRUE(proj.Transform(-120 + k, 49, &x, &y));
    EXPECT_NEAR(degrees.coords[2 * k], x, 1e-6) << k;
    EXPECT_NEAR(degrees.coords[2 * k + 1], y, 1e-6) << k;
  }
}

// One feature of 200k coordinates, in pieces of 16k (the default is 128k: this keeps the test
// quick in a debug build), is transformed by both workers and gives exactly what one piece
// gives; sampled coordinates equal PROJ's.
TEST_F(ReprojectTest, GiantFeatureInPiecesUsesBothWorkers) {
  constexpr int kVertices = 200000;
  std::string wkt = "POLYGON ((";
  wkt.reserve(std::size_t{kVertices} * 40);
  std::vector<std::pair<double, double>> ring;
  ring.reserve(kVertices + 1);
  for (int i = 0; i < kVertices; ++i) {
    const double t = 2 * M_PI * i / kVertices;
    ring.emplace_back(-100 + 5 * std::cos(t), 40 + 5 * std::sin(t));
  }
  ring.push_back(ring.front());
  for (std::size_t i = 0; i < ring.size(); ++i) {
    char one[64];
    std::snprintf(one, sizeof(one), "%s%.12f %.12f", i ? ", " : "", ring[i].first, ring[i].second);
    wkt += one;
  }
  wkt += "))";
  const std::string in = WriteSource("giant.parquet", "EPSG:4326", {{"1", wkt}, {"2", "NULL"}});
  ReprojectOptions options;
  options.to = "EPSG:5070";
  options.piece_coordinates = 16384;
  RunSummary summary;
  ReprojectReport report;
  const std::string pieces = (dir_ / "pieces.csv").string();
  ASSERT_OK(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(pieces).value(),
                         Options(), &summary, &report));
  EXPECT_EQ(report.pieced_features, 1);
  EXPECT_EQ(report.pieces,
            (kVertices + 1 + options.piece_coordinates - 1) / options.piece_coordinates);
  EXPECT_EQ(report.max_piece_threads, 2) << "both workers transformed pieces";
  EXPECT_EQ(report.coordinates, kVertices + 1);

  options.piece_coordinates = std::int64_t{1} << 40;  // one piece
  const std::string whole = (dir_ / "whole.csv").string();
  ASSERT_OK(RunReproject(env_, ResolveInput(in).value(), options, ParseOutput(whole).value(),
                         Options(), &summary, &report));
  EXPECT_EQ(report.pieced_features, 0);
  const auto a = ReadCsv(pieces);
  const auto b = ReadCsv(whole);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_TRUE(a == b) << "pieces give exactly the whole's coordinates";
  ASSERT_OK_AND_ASSIGN(geo::FlatGeometry got, geo::ParseWkt(a.at("1")));
  ASSERT_OK_AND_ASSIGN(geo::FlatGeometry input, geo::ParseWkt(wkt));
  ASSERT_EQ(got.num_coordinates(), input.num_coordinates());
  ProjOracle proj("EPSG:4326", "EPSG:5070");
  for (std::size_t i = 0; i < input.num_coordinates(); i += 997) {
    double x = 0;
    double y = 0;
    ASSERT_TRUE(proj.Transform(input.coords[2 * i], input.coords[2 * i + 1], &x, &y));
    ASSERT_NEAR(got.coords[2 * i], x, 1e-6) << i;
    ASSERT_NEAR(got.coords[2 * i + 1], y, 1e-6) << i;
  }
}

}  // namespace
}  // namespace geolake::ops
