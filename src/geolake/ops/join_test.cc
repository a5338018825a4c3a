#include "geolake/ops/join.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/wkb.h"
#include "geolake/ops/op_test_util.h"
#include "geolake/ops/point_in_polygon.h"
#include "geolake/query/output.h"
#include "geolake/table/catalog.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::testing::HasSubstr;

// One tests/cases/ops/join/*.case file (README.md there gives the format).
struct JoinCase {
  std::string name;
  std::string predicate;
  std::string how = "inner";
  std::vector<std::pair<std::string, std::string>> left, right;  // id, WKT ("NULL": none)
  std::multiset<std::string> expect;                             // "L R" or "L -"
};

JoinCase ParseCase(const fs::path& path) {
  JoinCase c;
  c.name = path.stem().string();
  std::ifstream in(path);
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("predicate:")) {
      c.predicate = line.substr(line.find(':') + 2);
    } else if (line.starts_with("how:")) {
      c.how = line.substr(line.find(':') + 2);
    } else if (line == "left:" || line == "right:" || line == "expect:") {
      section = line.substr(0, line.size() - 1);
    } else {
      const std::size_t space = line.find(' ');
      const std::string id = line.substr(0, space);
      const std::string rest = line.substr(space + 1);
      if (section == "left") c.left.emplace_back(id, rest);
      if (section == "right") c.right.emplace_back(id, rest);
      if (section == "expect") c.expect.insert(id + " " + rest);
    }
  }
  return c;
}

// The features of a GeoJSONSeq file (RS-separated or not), parsed.
std::vector<nlohmann::json> FeaturesIn(const std::string& path) {
  std::vector<nlohmann::json> features;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t brace = line.find('{');
    if (brace != std::string::npos) features.push_back(nlohmann::json::parse(line.substr(brace)));
  }
  return features;
}

class JoinTest : public OpTestBase {
 protected:
  // A CSV source of (id, WKT) rows; GDAL reads the WKT column as the geometry.
  std::string WriteCsv(const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& rows) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    out << "id,WKT\n";
    for (const auto& [id, wkt] : rows) {
      out << id << ",\"" << (wkt == "NULL" ? "" : wkt) << "\"\n";
    }
    return path;
  }

  // The (id, id_right) pairs of a GeoJSONSeq join output, "-" for a null right id.
  static std::multiset<std::string> PairsOf(const std::string& path, std::string_view right_id) {
    std::multiset<std::string> pairs;
    for (const nlohmann::json& j : FeaturesIn(path)) {
      const auto& p = j["properties"];
      const std::string l = p["id"].dump();
      const std::string r =
          p[std::string(right_id)].is_null() ? "-" : p[std::string(right_id)].dump();
      pairs.insert(l + " " + r);
    }
    return pairs;
  }

  RunnerOptions Options() const {
    RunnerOptions options;
    options.memory_bytes = 64 << 20;
    options.batch_rows = 3;  // several tasks even for a case's few rows
    options.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
    return options;
  }
};

TEST_F(JoinTest, CasesGiveTheirPairsWhicheverSideIsIndexed) {
  const fs::path cases = fs::path(::geolake::testing::SourceDir()) / "tests/cases/ops/join";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".case") continue;
    const JoinCase c = ParseCase(entry.path());
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.predicate.empty());
    ASSERT_FALSE(c.left.empty());
    const std::string left = WriteCsv(c.name + "_left.csv", c.left);
    const std::string right = WriteCsv(c.name + "_right.csv", c.right);
    JoinOptions options;
    ASSERT_OK(ParseJoinPredicate(c.predicate, &options));
    ASSERT_OK_AND_ASSIGN(options.how, ParseJoinHow(c.how));
    for (const JoinIndexSide side :
         {JoinIndexSide::kLeft, JoinIndexSide::kRight, JoinIndexSide::kAuto}) {
      options.index = side;
      SCOPED_TRACE(side == JoinIndexSide::kLeft    ? "index left"
                   : side == JoinIndexSide::kRight ? "index right"
                                                   : "index auto");
      const std::string out =
          (dir_ / (c.name + "_" + std::to_string(static_cast<int>(side)) + ".geojsonl")).string();
      RunSummary summary;
      JoinReport report;
      if (options.predicate == JoinPredicate::kLargestOverlap && side == JoinIndexSide::kLeft) {
        EXPECT_THAT(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                            ParseOutput(out).value(), Options(), &summary, &report),
                    IsErrorWith(ErrorCode::kInvalidArgument, "--index left"));
        continue;
      }
      ASSERT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                        ParseOutput(out).value(), Options(), &summary, &report));
      EXPECT_EQ(PairsOf(out, "id_right"), c.expect);
      EXPECT_EQ(summary.invariant.size(), 2u);
      if (side != JoinIndexSide::kAuto) {
        EXPECT_EQ(report.index_left, side == JoinIndexSide::kLeft);
      }
    }
    ++ran;
  }
  EXPECT_GE(ran, 16);
}

TEST_F(JoinTest, LargestOverlapGivesTheAreaAndFraction) {
  const std::string left = WriteCsv("l.csv", {{"1", "POLYGON ((0 0, 4 0, 4 1, 0 1, 0 0))"},
                                              {"2", "POLYGON ((1 0, 2 0, 2 1, 1 1, 1 0))"}});
  const std::string right = WriteCsv("r.csv", {{"10", "POLYGON ((-1 -1, 1 -1, 1 2, -1 2, -1 -1))"},
                                               {"11", "POLYGON ((1 -1, 5 -1, 5 2, 1 2, 1 -1))"}});
  JoinOptions options;
  ASSERT_OK(ParseJoinPredicate("largest-overlap", &options));
  const std::string out = (dir_ / "out.geojsonl").string();
  RunSummary summary;
  ASSERT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                    ParseOutput(out).value(), Options(), &summary, nullptr));
  std::ifstream in(out);
  std::string line;
  std::map<std::int64_t, nlohmann::json> rows;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line.substr(line.find('{')));
    rows[j["properties"]["id"].get<std::int64_t>()] = j["properties"];
  }
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["id_right"], 11);
  EXPECT_DOUBLE_EQ(rows[1]["overlap_area"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(rows[1]["overlap_fraction"].get<double>(), 0.75);
  // Inside 11 whole: the overlap is its own area.
  EXPECT_EQ(rows[2]["id_right"], 11);
  EXPECT_DOUBLE_EQ(rows[2]["overlap_area"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(rows[2]["overlap_fraction"].get<double>(), 1.0);
}

// A right polygon of 40,000 vertices (over the subdivision threshold) is cut into pieces;
// every left box and diamond along its wavy edge gets the area GEOS's overlay gives for the
// whole polygon, and the same right id.
TEST_F(JoinTest, LargestOverlapWithAHugePolygonSumsItsPieces) {
  constexpr int kVertices = 40000;
  constexpr double kPi = 3.14159265358979323846;
  std::ostringstream ring;
  ring.precision(17);
  ring << "POLYGON ((";
  for (int i = 0; i <= kVertices; ++i) {
    const double a = 2 * kPi * (i % kVertices) / kVertices;
    const double r = 10 * (1 + 0.02 * std::sin(200 * a));
    ring << (i > 0 ? ", " : "") << r * std::cos(a) << " " << r * std::sin(a);
  }
  ring << "))";
  const std::string big = ring.str();
  std::vector<std::pair<std::string, std::string>> squares;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(0, 2 * kPi), radius(9.6, 10.4);
  for (int i = 0; i < 400; ++i) {
    const double a = angle(rng), r = radius(rng);
    const double x = r * std::cos(a), y = r * std::sin(a), s = 0.05;
    std::ostringstream w;
    w.precision(17);
    if (i % 2 == 0) {  // a box: the pieces are clipped to it
      w << "POLYGON ((" << x << " " << y << ", " << x + s << " " << y << ", " << x + s << " "
        << y + s << ", " << x << " " << y + s << ", " << x << " " << y << "))";
    } else {  // a diamond: overlaid with the pieces
      w << "POLYGON ((" << x << " " << y - s << ", " << x + s << " " << y << ", " << x << " "
        << y + s << ", " << x - s << " " << y << ", " << x << " " << y - s << "))";
    }
    squares.emplace_back(std::to_string(i), w.str());
  }
  const std::string left = WriteCsv("squares.csv", squares);
  // A small neighbour so that some shapes have a choice.
  const std::string right =
      WriteCsv("big.csv", {{"1", big}, {"2", "POLYGON ((9 -1, 13 -1, 13 1, 9 1, 9 -1))"}});
  JoinOptions options;
  ASSERT_OK(ParseJoinPredicate("largest-overlap", &options));
  const std::string out = (dir_ / "huge.geojsonl").string();
  RunSummary summary;
  JoinReport report;
  ASSERT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                    ParseOutput(out).value(), Options(), &summary, &report));
  EXPECT_EQ(report.subdivided, 1);
  EXPECT_GE(report.pieces, kVertices / 2048);

  auto geo = geo::GeoContext::Make().value();
  const geo::Geometry whole = geo::Geometry::FromWkt(*geo, big).value();
  const geo::Geometry box =
      geo::Geometry::FromWkt(*geo, "POLYGON ((9 -1, 13 -1, 13 1, 9 1, 9 -1))").value();
  // The CSV reader types a column from a sample of its text: the ids may come back as text.
  const auto as_int = [](const nlohmann::json& v) {
    return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<std::int64_t>();
  };
  std::ifstream in(out);
  std::string line;
  int rows = 0, on_edge[2] = {0, 0};
  while (std::getline(in, line)) {
    const nlohmann::json p = nlohmann::json::parse(line.substr(line.find('{')))["properties"];
    const auto id = static_cast<std::size_t>(as_int(p["id"]));
    SCOPED_TRACE("square " + std::to_string(id));
    const geo::Geometry sq = geo::Geometry::FromWkt(*geo, squares[id].second).value();
    const double a1 = whole.Intersection(sq).value().Area().value();
    const double a2 = box.Intersection(sq).value().Area().value();
    const double square_area = sq.Area().value();
    EXPECT_EQ(as_int(p["id_right"]), a2 > a1 ? 2 : 1);
    const double expect = std::max(a1, a2);
    EXPECT_NEAR(p["overlap_area"].get<double>(), expect, 1e-9 * expect);
    if (a1 > 0 && a1 < square_area * 0.999) ++on_edge[id % 2];
    ++rows;
  }
  EXPECT_GT(rows, 200);  // about half the squares lie outside both polygons
  // Shapes the edge crosses: the pieces decided these, by clipping and by overlays.
  EXPECT_GT(on_edge[0], 25);
  EXPECT_GT(on_edge[1], 25);
}

// Cancelling a largest-overlap join while it prepares huge indexed polygons (validity, the
// point-in-polygon index, cutting into pieces: seconds for two polygons of 1.6M vertices, one
// per worker) stops it within 2 s (the mission's bound), well before the preparation would end.
// The polygons come from GeoParquet, read in a fraction of that time. (The cutting stops both
// through its own checks and through GEOS's interrupt on the worker's context.)
TEST_F(JoinTest, CancelStopsThePreparationOfHugeIndexedPolygons) {
  constexpr int kPolygons = 2;  // one for each worker: each polygon is cut by one
  constexpr int kVertices = 1600000;
  constexpr double kPi = 3.14159265358979323846;
  geoparquet::FeatureBatch batch;
  batch.fields = {{"id", geoparquet::FieldType::kInt64}};
  batch.columns.resize(1);
  batch.columns[0].type = geoparquet::FieldType::kInt64;
  const auto put = [&batch](const auto& v) {
    batch.wkb.append(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  std::vector<std::pair<std::string, std::string>> squares;
  for (int p = 0; p < kPolygons; ++p) {
    const double cx = 100.0 * p;
    put(std::uint8_t{1});
    put(std::uint32_t{3});
    put(std::uint32_t{1});
    put(static_cast<std::uint32_t>(kVertices + 1));
    for (int i = 0; i <= kVertices; ++i) {
      const double a = 2 * kPi * (i % kVertices) / kVertices;
      const double r = 10 * (1 + 0.02 * std::sin(1200 * a));
      put(cx + r * std::cos(a));
      put(r * std::sin(a));
    }
    batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
    batch.geometry_valid.push_back(1);
    batch.feature_index.push_back(p);
    batch.columns[0].valid.push_back(1);
    batch.columns[0].ints.push_back(p);
    std::ostringstream w;  // a square across the polygon's edge
    w << "POLYGON ((" << cx + 9.5 << " -0.5, " << cx + 10.5 << " -0.5, " << cx + 10.5 << " 0.5, "
      << cx + 9.5 << " 0.5, " << cx + 9.5 << " -0.5))";
    squares.emplace_back(std::to_string(p), w.str());
  }
  const std::string right = (dir_ / "huge.parquet").string();
  {
    ASSERT_OK_AND_ASSIGN(auto sink,
                         query::MakeOutputSink(query::OutputFormat::kParquet, right, *io_));
    ASSERT_OK(sink->Begin(query::OutputLayout{batch.fields, "", "huge"}));
    ASSERT_OK(sink->Write(right, batch));
    ASSERT_OK(sink->Finish());
  }
  const std::string left = WriteCsv("squares.csv", squares);
  JoinOptions options;
  ASSERT_OK(ParseJoinPredicate("largest-overlap", &options));
  RunnerOptions runner = Options();
  runner.memory_bytes = std::int64_t{1} << 30;  // the 51 MB indexed side fits its share

  // Uncancelled: both polygons are cut, which takes seconds.
  RunSummary summary;
  JoinReport report;
  auto start = std::chrono::steady_clock::now();
  ASSERT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                    ParseOutput((dir_ / "whole.geojsonl").string()).value(), runner, &summary,
                    &report));
  const double whole =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(report.subdivided, kPolygons);
  ASSERT_GT(whole, 1.5) << "the cutting must take seconds for this test to mean anything: make "
                           "the polygons larger";

  // Cancelled a quarter of the way in (at most 0.5 s: the polygons are being prepared).
  const auto after = std::chrono::duration<double>(std::min(0.5, whole / 4));
  std::stop_source stop;
  env_.stop = stop.get_token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(after);
    stop.request_stop();
  });
  start = std::chrono::steady_clock::now();
  const Status cancelled = RunJoin(
      env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
      ParseOutput((dir_ / "cancelled.geojsonl").string()).value(), runner, &summary, nullptr);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  canceller.join();
  EXPECT_THAT(cancelled, IsError(ErrorCode::kCancelled));
  // Within the bound, and well before the uncancelled run would have ended.
  EXPECT_LT(took - after.count(), std::min(2.0, (whole - after.count()) / 2))
      << "whole run " << whole << " s";
  EXPECT_FALSE(fs::exists(dir_ / "cancelled.geojsonl"));
  std::printf("whole run %.2f s; stop requested at %.2f s, run ended at %.2f s\n", whole,
              after.count(), took);
}

// The fast path decides only what it can certify, and then as GEOS does: random points (many
// on vertices and edges, on a grid the polygons share) against polygons with holes.
TEST(PointInPolygonTest, AgreesWithGeosWhereverItAnswers) {
  auto geo = geo::GeoContext::Make().value();
  const std::vector<std::string> polygons = {
      "POLYGON ((0 0, 8 0, 8 8, 0 8, 0 0), (2 2, 6 2, 6 6, 2 6, 2 2))",
      "POLYGON ((0 0, 4 1, 8 0, 7 4, 8 8, 4 7, 0 8, 1 4, 0 0))",
      "MULTIPOLYGON (((0 0, 3 0, 3 3, 0 3, 0 0)), ((4 4, 8 4, 8 8, 4 8, 4 4), (5 5, 7 5, 6 7, 5 "
      "5)))",
      "POLYGON ((0 0, 8 8, 0 8, 0 0))",
  };
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> any(-1, 9);
  std::uniform_int_distribution<int> grid(-1, 18);
  std::int64_t decided = 0, unsure = 0;
  for (const std::string& wkt : polygons) {
    SCOPED_TRACE(wkt);
    auto g = geo::Geometry::FromWkt(*geo, wkt).value();
    const std::string wkb = g.ToWkb().value();
    auto pip = PointInPolygon::Build(geo::ParseWkb(geo::AsBytes(wkb)).value()).value();
    for (int i = 0; i < 4000; ++i) {
      const double x = i % 2 == 0 ? any(rng) : grid(rng) * 0.5;
      const double y = i % 2 == 0 ? any(rng) : grid(rng) * 0.5;
      const auto point = geo::Geometry::FromWkt(
                             *geo, "POINT (" + std::to_string(x) + " " + std::to_string(y) + ")")
                             .value();
      const bool contains = g.Contains(point).value();
      const bool intersects = g.Intersects(point).value();
      switch (pip.Locate(x, y)) {
        case PointInPolygon::Location::kInterior:
          EXPECT_TRUE(contains) << x << " " << y;
          ++decided;
          break;
        case PointInPolygon::Location::kExterior:
          EXPECT_FALSE(intersects) << x << " " << y;
          ++decided;
          break;
        case PointInPolygon::Location::kUnsure:
          // Only a boundary point (or one within rounding of an edge) is left to GEOS.
          EXPECT_TRUE(intersects && !contains) << x << " " << y;
          ++unsure;
          break;
      }
    }
  }
  EXPECT_GT(decided, 10000);
  EXPECT_GT(unsure, 100);  // the grid puts many points on the boundary
}

TEST(PointInPolygonTest, RefusesWhatIsNotAPolygon) {
  EXPECT_THAT(PointInPolygon::Build(geo::FlatGeometry::MakePoint(1, 2)),
              IsError(ErrorCode::kInvalidArgument));
}

TEST(JoinParseTest, PredicatesHowAndIndex) {
  JoinOptions o;
  ASSERT_OK(ParseJoinPredicate("dwithin:2.5", &o));
  EXPECT_EQ(o.predicate, JoinPredicate::kDWithin);
  EXPECT_EQ(o.distance, 2.5);
  EXPECT_EQ(JoinPredicateName(o), "dwithin:2.5");
  ASSERT_OK(ParseJoinPredicate("covered-by", &o));
  EXPECT_EQ(JoinPredicateName(o), "covered-by");
  EXPECT_THAT(ParseJoinPredicate("dwithin:-1", &o), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseJoinPredicate("dwithin:", &o), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseJoinPredicate("dwithin:1x", &o), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseJoinPredicate("overlaps", &o),
              IsErrorWith(ErrorCode::kInvalidArgument, "covered-by"));
  EXPECT_THAT(ParseJoinHow("outer"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseJoinIndexSide("both"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(ParseJoinIndexSide("left").value(), JoinIndexSide::kLeft);
}

TEST_F(JoinTest, ColumnsSuffixAndBadInputs) {
  const std::string left = WriteCsv("l.csv", {{"1", "POINT (1 1)"}});
  const std::string right = WriteCsv("r.csv", {{"7", "POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))"}});
  JoinOptions options;
  options.suffix = "_county";
  options.columns = {"id_county"};
  const std::string out = (dir_ / "out.geojsonl").string();
  RunSummary summary;
  ASSERT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                    ParseOutput(out).value(), Options(), &summary, nullptr));
  std::ifstream in(out);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const nlohmann::json row = nlohmann::json::parse(line.substr(line.find('{')));
  EXPECT_EQ(row["properties"], (nlohmann::json{{"id_county", 7}}));

  options.columns = {"nope"};
  EXPECT_THAT(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                      ParseOutput(out).value(), Options(), &summary, nullptr),
              IsErrorWith(ErrorCode::kInvalidArgument, "id_county"));
  // Inputs in different CRSs are refused before anything is read.
  const std::string geojson = (dir_ / "r.geojsonl").string();
  std::ofstream(geojson)
      << R"({"type":"Feature","properties":{"id":1},"geometry":{"type":"Point","coordinates":[1,1]}})"
      << "\n";
  EXPECT_THAT(RunJoin(env_, ResolveInput(left).value(), ResolveInput(geojson).value(), {},
                      ParseOutput(out).value(), Options(), &summary, nullptr),
              IsErrorWith(ErrorCode::kInvalidArgument, "CRS"));
  EXPECT_THAT(RunJoin(env_, ResolveInput(left).value(),
                      ResolveInput(dir_.string() + "/missing.csv").value(), {},
                      ParseOutput(out).value(), Options(), &summary, nullptr),
              IsError(ErrorCode::kNotFound));
}

// Points in polygons with aggregates: one row per polygon, the right's columns, then the
// aggregates of the matching points (a point on the shared edge counts for both polygons).
TEST_F(JoinTest, AggregatesGroupThePairsByTheRightFeature) {
  const std::string left = (dir_ / "points.csv").string();
  std::ofstream(left) << "id,v,w,s,WKT\n"
                      << "1,1,0.5,a,\"POINT (1 1)\"\n"
                      << "2,2,1.5,b,\"POINT (2 2)\"\n"
                      << "3,3,1.0,c,\"POINT (5 5)\"\n"
                      << "4,10,2.0,d,\"POINT (15 5)\"\n"
                      << "5,100,4.0,e,\"POINT (10 5)\"\n"
                      << "6,7,9.0,f,\"POINT (50 50)\"\n";
  const std::string right = (dir_ / "polygons.csv").string();
  std::ofstream(right) << "id,name,WKT\n"
                       << "10,A,\"POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))\"\n"
                       << "11,B,\"POLYGON ((10 0, 20 0, 20 10, 10 10, 10 0))\"\n"
                       << "12,C,\"POLYGON ((30 30, 40 30, 40 40, 30 40, 30 30))\"\n";
  JoinOptions options;
  for (const char* text : {"count", "sum:v", "min:v", "max:v", "mean:w", "sum:w"}) {
    options.aggregates.push_back(ParseJoinAggregate(text).value());
  }
  auto run = [&](JoinHow how, const std::string& name) {
    options.how = how;
    const std::string out = (dir_ / name).string();
    RunSummary summary;
    JoinReport report;
    EXPECT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                      ParseOutput(out).value(), Options(), &summary, &report));
    EXPECT_EQ(report.pairs, 6);
    EXPECT_EQ(summary.totals.rows_in, 6);
    EXPECT_EQ(summary.totals.rows_dropped["no match"], 1);
    EXPECT_THAT(summary.invariant.back(), HasSubstr("sum to 6 = pairs 6"));
    std::map<std::int64_t, nlohmann::json> rows;
    std::ifstream in(out);
    std::string line;
    while (std::getline(in, line)) {
      const nlohmann::json j = nlohmann::json::parse(line.substr(line.find('{')));
      rows[j["properties"]["id"].get<std::int64_t>()] = j;
    }
    return rows;
  };
  std::map<std::int64_t, nlohmann::json> rows = run(JoinHow::kInner, "inner.geojsonl");
  ASSERT_EQ(rows.size(), 2u);
  const nlohmann::json& a = rows[10]["properties"];
  EXPECT_EQ(a["name"], "A");
  EXPECT_EQ(a["count"], 4);
  EXPECT_EQ(a["sum_v"], 106);
  EXPECT_EQ(a["min_v"], 1);
  EXPECT_EQ(a["max_v"], 100);
  EXPECT_DOUBLE_EQ(a["mean_w"].get<double>(), 7.0 / 4);
  EXPECT_DOUBLE_EQ(a["sum_w"].get<double>(), 7.0);
  const nlohmann::json& b = rows[11]["properties"];
  EXPECT_EQ(b["count"], 2);
  EXPECT_EQ(b["sum_v"], 110);
  EXPECT_EQ(b["min_v"], 10);
  EXPECT_DOUBLE_EQ(b["mean_w"].get<double>(), 3.0);
  // The geometry is the right feature's.
  EXPECT_EQ(rows[11]["geometry"]["type"], "Polygon");
  // --how left keeps the polygon without points, with count 0 and null sums.
  rows = run(JoinHow::kLeft, "left.geojsonl");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[12]["properties"]["count"], 0);
  EXPECT_TRUE(rows[12]["properties"]["sum_v"].is_null());
  EXPECT_TRUE(rows[12]["properties"]["mean_w"].is_null());
  EXPECT_EQ(rows[10]["properties"]["count"], 4);

  // --columns picks among the right's columns and the aggregates.
  options.columns = {"count", "name"};
  options.how = JoinHow::kInner;
  const std::string picked = (dir_ / "picked.geojsonl").string();
  RunSummary summary;
  ASSERT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                    ParseOutput(picked).value(), Options(), &summary, nullptr));
  std::ifstream in(picked);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const nlohmann::json first = nlohmann::json::parse(line.substr(line.find('{')));
  EXPECT_EQ(first["properties"].size(), 2u);
  EXPECT_TRUE(first["properties"].contains("count"));
}

TEST_F(JoinTest, AggregatesRefuseWhatTheyCannotCompute) {
  const std::string left = (dir_ / "points.csv").string();
  std::ofstream(left) << "id,v,s,WKT\n1,1,a,\"POINT (1 1)\"\n";
  const std::string right = (dir_ / "polygons.csv").string();
  std::ofstream(right) << "id,count,WKT\n10,3,\"POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))\"\n";
  const std::string out = (dir_ / "out.geojsonl").string();
  auto run = [&](std::vector<std::string> texts, JoinIndexSide side = JoinIndexSide::kAuto,
                 RunnerOptions runner = RunnerOptions{}) {
    JoinOptions options;
    options.index = side;
    for (const auto& t : texts) options.aggregates.push_back(ParseJoinAggregate(t).value());
    if (runner.memory_bytes == 0) runner = Options();
    RunSummary summary;
    return RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                   ParseOutput(out).value(), runner, &summary, nullptr);
  };
  EXPECT_THAT(run({"sum:nope"}), IsErrorWith(ErrorCode::kInvalidArgument, "no column 'nope'"));
  EXPECT_THAT(run({"sum:s"}), IsErrorWith(ErrorCode::kInvalidArgument, "sum and mean take"));
  EXPECT_THAT(run({"max:s"}), IsErrorWith(ErrorCode::kInvalidArgument, "min and max take"));
  // The right already has a column named count.
  EXPECT_THAT(run({"count"}), IsErrorWith(ErrorCode::kInvalidArgument, "'count' is already"));
  EXPECT_THAT(run({"sum:v", "sum:v"}), IsErrorWith(ErrorCode::kInvalidArgument, "'sum_v'"));
  EXPECT_THAT(run({"sum:v"}, JoinIndexSide::kLeft),
              IsErrorWith(ErrorCode::kInvalidArgument, "--index left"));
  RunnerOptions sharded = Options();
  sharded.shard = Shard{0, 2};
  EXPECT_THAT(run({"sum:v"}, JoinIndexSide::kAuto, sharded), IsError(ErrorCode::kInvalidArgument));
  EXPECT_OK(run({"sum:v", "min:v"}));

  EXPECT_THAT(ParseJoinAggregate("avg:v"), IsErrorWith(ErrorCode::kInvalidArgument, "mean:COL"));
  EXPECT_THAT(ParseJoinAggregate("sum:"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(ParseJoinAggregate("mean:x").value().OutputName(), "mean_x");
}

// Points on a grid against squares, enough rows for many tasks on both workers.
class JoinGridTest : public JoinTest {
 protected:
  void WriteGrid(int squares_per_side, int points_per_side) {
    std::vector<std::pair<std::string, std::string>> squares, points;
    for (int i = 0; i < squares_per_side; ++i) {
      for (int j = 0; j < squares_per_side; ++j) {
        const int x = i * 10, y = j * 10;
        squares.emplace_back(std::to_string(i * squares_per_side + j),
                             "POLYGON ((" + std::to_string(x) + " " + std::to_string(y) + ", " +
                                 std::to_string(x + 10) + " " + std::to_string(y) + ", " +
                                 std::to_string(x + 10) + " " + std::to_string(y + 10) + ", " +
                                 std::to_string(x) + " " + std::to_string(y + 10) + ", " +
                                 std::to_string(x) + " " + std::to_string(y) + "))");
      }
    }
    const double step = squares_per_side * 10.0 / points_per_side;
    for (int i = 0; i < points_per_side; ++i) {
      for (int j = 0; j < points_per_side; ++j) {
        points.emplace_back(std::to_string(i * points_per_side + j),
                            "POINT (" + std::to_string(i * step + step / 3) + " " +
                                std::to_string(j * step + step / 3) + ")");
      }
    }
    points_ = WriteCsv("points.csv", points);
    squares_ = WriteCsv("squares.csv", squares);
  }
  // A budget that cuts the squares of WriteGrid(10, ...) into cells.
  RunnerOptions InCells() const {
    RunnerOptions options = Options();
    options.memory_bytes = 64 << 10;
    options.batch_rows = 100;
    return options;
  }
  std::string points_, squares_;
};

TEST_F(JoinGridTest, EveryPointFindsItsSquareByTheFastPath) {
  WriteGrid(10, 60);  // 3600 points, 100 squares, no point on an edge
  JoinOptions options;
  options.predicate = JoinPredicate::kWithin;
  RunSummary summary;
  JoinReport report;
  const std::string out = (dir_ / "out.geojsonl").string();
  RunnerOptions runner = Options();
  runner.batch_rows = 256;
  ASSERT_OK(RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                    ParseOutput(out).value(), runner, &summary, &report));
  EXPECT_FALSE(report.index_left);  // the squares are fewer
  EXPECT_EQ(report.pairs, 3600);
  EXPECT_EQ(summary.totals.rows_out, 3600);
  EXPECT_EQ(report.fast_path, report.candidates);  // no point needed GEOS
  // Each point is in the square its coordinates name.
  const auto pairs = PairsOf(out, "id_right");
  const double step = 100.0 / 60;
  for (const std::string& pair : pairs) {
    std::istringstream in(pair);
    int p = 0, s = 0;
    in >> p >> s;
    const int i = p / 60, j = p % 60;
    const int si = static_cast<int>((i * step + step / 3) / 10);
    const int sj = static_cast<int>((j * step + step / 3) / 10);
    ASSERT_EQ(s, si * 10 + sj) << pair;
  }
}

TEST_F(JoinGridTest, ShardsIntoOneTableGiveTheRowsOfOneRun) {
  WriteGrid(4, 20);
  JoinOptions options;
  // Two source files on the streamed side, so that there are units to share.
  std::vector<std::pair<std::string, std::string>> more;
  for (int i = 0; i < 50; ++i) {
    more.emplace_back(std::to_string(1000 + i), "POINT (" + std::to_string(i * 0.8 + 0.1) + " 5)");
  }
  InputSpec stream = ResolveInput(points_).value();
  stream.sources.push_back(WriteCsv("more.csv", more));
  RunSummary whole;
  ASSERT_OK(RunJoin(env_, stream, ResolveInput(squares_).value(), options,
                    ParseOutput("j.whole").value(), Options(), &whole, nullptr));
  std::int64_t rows = 0;
  for (int shard = 0; shard < 2; ++shard) {
    RunnerOptions runner = Options();
    runner.shard = Shard{shard, 2};
    RunSummary part;
    ASSERT_OK(RunJoin(env_, stream, ResolveInput(squares_).value(), options,
                      ParseOutput("j.sharded").value(), runner, &part, nullptr));
    rows += part.totals.rows_out;
  }
  EXPECT_EQ(rows, whole.totals.rows_out);
  EXPECT_EQ(whole.totals.rows_out, 450);
  // The same run again into the sharded table: everything is committed, nothing is added.
  RunSummary again;
  ASSERT_OK(RunJoin(env_, stream, ResolveInput(squares_).value(), options,
                    ParseOutput("j.sharded").value(), Options(), &again, nullptr));
  EXPECT_EQ(again.totals.rows_out, 0);
  EXPECT_EQ(again.totals.units_skipped, 2);
}

TEST_F(JoinGridTest, ConcurrentJoinsOnOneExecutorEachGiveTheirRows) {
  WriteGrid(5, 30);
  std::vector<std::thread> runs;
  std::vector<Status> results(3);
  std::vector<std::int64_t> out_rows(3);
  for (int k = 0; k < 3; ++k) {
    runs.emplace_back([&, k] {
      JoinOptions options;
      options.predicate = k == 0 ? JoinPredicate::kIntersects : JoinPredicate::kWithin;
      options.how = k == 2 ? JoinHow::kLeft : JoinHow::kInner;
      RunSummary summary;
      results[k] =
          RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                  ParseOutput("c.out" + std::to_string(k)).value(), Options(), &summary, nullptr);
      out_rows[k] = summary.totals.rows_out;
    });
  }
  for (auto& t : runs) t.join();
  for (int k = 0; k < 3; ++k) {
    EXPECT_OK(results[k]);
    EXPECT_EQ(out_rows[k], 900);
  }
}

TEST_F(JoinGridTest, CancelStopsTheJoin) {
  WriteGrid(10, 200);  // 40000 points
  JoinOptions options;
  std::stop_source stop;
  env_.stop = stop.get_token();
  stop.request_stop();
  RunSummary summary;
  EXPECT_THAT(
      RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
              ParseOutput((dir_ / "out.geojsonl").string()).value(), Options(), &summary, nullptr),
      IsError(ErrorCode::kCancelled));
  EXPECT_FALSE(fs::exists(dir_ / "out.geojsonl"));
}

// A partitioned join into a table resumes as any run does, with the same cells; a re-run whose
// budget cuts the plane otherwise (or not at all) is refused instead of mixing two cuts' units.
TEST_F(JoinGridTest, APartitionedJoinResumesOnlyWithTheSameCells) {
  WriteGrid(10, 40);
  JoinOptions options;
  options.predicate = JoinPredicate::kWithin;
  const RunnerOptions small = InCells();
  RunSummary summary;
  JoinReport report;
  ASSERT_OK(RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                    ParseOutput("j.cells").value(), small, &summary, &report));
  EXPECT_GE(report.cells, 2);
  EXPECT_EQ(summary.totals.rows_out, 1600);
  // The same run again: every unit of every pass is committed.
  RunSummary again;
  ASSERT_OK(RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                    ParseOutput("j.cells").value(), small, &again, &report));
  EXPECT_EQ(again.totals.rows_out, 0);
  EXPECT_EQ(again.totals.units_skipped, report.cells);  // one source unit per pass
  // Another budget: the index fits whole, so the passes differ.
  RunSummary other;
  EXPECT_THAT(
      RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
              ParseOutput("j.cells").value(), Options(), &other, nullptr),
      IsErrorWith(ErrorCode::kInvalidArgument, "re-run with the --memory of the first run"));
  // And the other way round.
  ASSERT_OK(RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                    ParseOutput("j.whole").value(), Options(), &other, nullptr));
  EXPECT_THAT(RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                      ParseOutput("j.whole").value(), small, &other, nullptr),
              IsErrorWith(ErrorCode::kInvalidArgument, "passes were cut otherwise"));
}

// A partitioned join into a table stopped after its first commit ends kCancelled; run again,
// it commits the passes that were missing, and the table then holds exactly the rows of one
// run: none lost, none twice.
TEST_F(JoinGridTest, APartitionedJoinStoppedAfterItsFirstCommitAndRunAgainGivesTheRowsOfOneRun) {
  WriteGrid(10, 40);
  JoinOptions options;
  options.predicate = JoinPredicate::kWithin;
  RunnerOptions small = InCells();
  small.commit_rows = 1;  // each pass commits its unit as soon as it is written
  RunSummary whole;
  JoinReport report;
  ASSERT_OK(RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                    ParseOutput("j.whole").value(), small, &whole, &report));
  ASSERT_GE(report.cells, 4);  // passes remain after the one the first commit lands in
  const std::multiset<std::string> expected = TableLines(*catalog_, *io_, "j.whole", dir_);
  ASSERT_EQ(expected.size(), 1600u);

  // Stopped as the first commit writes its table metadata (the first pass's rows; the table's
  // creation wrote the first metadata file). The commit coordinator does not look at the stop,
  // so that commit lands; the run ends in a later pass.
  std::stop_source stop;
  std::atomic<int> metadata_files{0};
  OnWriteIO stopping(io_.get(), [&](const std::string& path) {
    if (path.ends_with(".metadata.json") && ++metadata_files == 2) stop.request_stop();
  });
  OpEnv env = env_;
  env.io = &stopping;
  env.stop = stop.get_token();
  RunSummary cancelled;
  EXPECT_THAT(RunJoin(env, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                      ParseOutput("j.resumed").value(), small, &cancelled, nullptr),
              IsError(ErrorCode::kCancelled));
  const std::size_t partial = TableLines(*catalog_, *io_, "j.resumed", dir_).size();
  EXPECT_GT(partial, 0u);  // the first pass was committed
  EXPECT_LT(partial, 1600u);

  RunSummary resumed;
  ASSERT_OK(RunJoin(env_, ResolveInput(points_).value(), ResolveInput(squares_).value(), options,
                    ParseOutput("j.resumed").value(), small, &resumed, nullptr));
  EXPECT_GT(resumed.totals.units_skipped, 0);
  EXPECT_EQ(static_cast<std::size_t>(resumed.totals.rows_out) + partial, 1600u);
  EXPECT_EQ(TableLines(*catalog_, *io_, "j.resumed", dir_), expected);
}

// A budget that no cell of the indexed side fits, or an indexed side whose rows cannot be cut
// apart, is refused with what to do, and nothing is written.
TEST_F(JoinGridTest, AnIndexedSideNoCellOfWhichFitsIsRefusedClearly) {
  WriteGrid(10, 10);
  JoinOptions options;
  options.index = JoinIndexSide::kLeft;
  RunnerOptions runner = Options();
  runner.memory_bytes = 4096;  // 1.5 KiB for the index
  RunSummary summary;
  const std::string out = (dir_ / "out.geojsonl").string();
  // Small squares around one polygon of 400 vertices (6.4 KiB of WKB alone).
  std::vector<std::pair<std::string, std::string>> rows;
  for (int i = 0; i < 20; ++i) {
    const std::string x = std::to_string(i * 5);
    rows.emplace_back(std::to_string(i),
                      "POLYGON ((" + x + " 0, " + x + ".5 0, " + x + " 1, " + x + " 0))");
  }
  std::ostringstream circle;
  circle << "POLYGON ((";
  for (int k = 0; k <= 400; ++k) {
    const double a = 2 * M_PI * (k % 400) / 400;
    circle << (k > 0 ? ", " : "") << 50 + 10 * std::cos(a) << " " << 50 + 10 * std::sin(a);
  }
  circle << "))";
  rows.emplace_back("20", circle.str());
  const std::string big = WriteCsv("big.csv", rows);
  EXPECT_THAT(RunJoin(env_, ResolveInput(big).value(), ResolveInput(points_).value(), options,
                      ParseOutput(out).value(), runner, &summary, nullptr),
              IsErrorWith(ErrorCode::kNotImplemented, "cut further; raise --memory"));
  EXPECT_FALSE(fs::exists(out));
  // Twenty copies of one triangle: a cell cannot split them.
  std::vector<std::pair<std::string, std::string>> same;
  for (int i = 0; i < 20; ++i)
    same.emplace_back(std::to_string(i), "POLYGON ((0 0, 1 0, 1 1, 0 0))");
  const std::string copies = WriteCsv("copies.csv", same);
  EXPECT_THAT(RunJoin(env_, ResolveInput(copies).value(), ResolveInput(points_).value(), options,
                      ParseOutput(out).value(), runner, &summary, nullptr),
              IsErrorWith(ErrorCode::kNotImplemented, "share one centre); raise --memory"));
  EXPECT_FALSE(fs::exists(out));
}

// --reproject-right: the right side in Web Mercator (a GeoJSON "crs" member) is transformed
// into the left's lon/lat as it is read, whichever side is indexed and also in cells; the pairs
// are those of the same polygons given in lon/lat. Without the flag the CRSs are refused.
TEST_F(JoinTest, ReprojectRightGivesThePairsOfTheSameCrs) {
  auto mercator = [](double lon, double lat) {
    constexpr double kR = 6378137.0;
    return std::pair{kR * lon * M_PI / 180, kR * std::log(std::tan(M_PI / 4 + lat * M_PI / 360))};
  };
  auto collection = [](const std::string& crs, const std::vector<std::string>& features) {
    std::string text = "{\"type\": \"FeatureCollection\", " + crs + "\"features\": [";
    for (std::size_t i = 0; i < features.size(); ++i) text += (i ? ", " : "") + features[i];
    return text + "]}";
  };
  std::vector<std::string> lonlat, projected, points;
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) {
      std::ostringstream a, b;
      a.precision(17);
      b.precision(17);
      a << "{\"type\": \"Feature\", \"properties\": {\"id\": " << i * 10 + j
        << "}, \"geometry\": {\"type\": \"Polygon\", \"coordinates\": [[";
      b << a.str();
      const int corners[5][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}};
      for (int k = 0; k < 5; ++k) {
        const double lon = i + corners[k][0], lat = 40 + j + corners[k][1];
        const auto [x, y] = mercator(lon, lat);
        a << (k ? ", " : "") << "[" << lon << ", " << lat << "]";
        b << (k ? ", " : "") << "[" << x << ", " << y << "]";
      }
      lonlat.push_back(a.str() + "]]}}");
      projected.push_back(b.str() + "]]}}");
    }
  }
  for (int k = 0; k < 900; ++k) {
    std::ostringstream p;
    p << "{\"type\": \"Feature\", \"properties\": {\"id\": " << 1000 + k
      << "}, \"geometry\": {\"type\": \"Point\", \"coordinates\": [" << (k % 30) / 3.0 + 0.17
      << ", " << 40 + (k / 30) / 3.0 + 0.17 << "]}}";
    points.push_back(p.str());
  }
  const std::string left = (dir_ / "points.geojson").string();
  const std::string same = (dir_ / "squares.geojson").string();
  const std::string mercator_squares = (dir_ / "squares_3857.geojson").string();
  std::ofstream(left) << collection("", points);
  std::ofstream(same) << collection("", lonlat);
  std::ofstream(mercator_squares) << collection(
      "\"crs\": {\"type\": \"name\", \"properties\": {\"name\": \"EPSG:3857\"}}, ", projected);
  JoinOptions options;
  options.predicate = JoinPredicate::kWithin;
  auto run = [&](const std::string& right, JoinIndexSide index, std::int64_t memory,
                 const std::string& name) {
    options.index = index;
    RunnerOptions runner = Options();
    runner.batch_rows = 100;
    runner.memory_bytes = memory;
    const std::string out = (dir_ / name).string();
    RunSummary summary;
    JoinReport report;
    EXPECT_OK(RunJoin(env_, ResolveInput(left).value(), ResolveInput(right).value(), options,
                      ParseOutput(out).value(), runner, &summary, &report));
    return std::pair{PairsOf(out, "id_right"), report.cells};
  };
  const auto [expected, no_cells] = run(same, JoinIndexSide::kRight, 64 << 20, "same.geojsonl");
  ASSERT_EQ(expected.size(), 900u);
  EXPECT_EQ(no_cells, 0);
  RunSummary summary;
  EXPECT_THAT(RunJoin(env_, ResolveInput(left).value(), ResolveInput(mercator_squares).value(),
                      options, ParseOutput((dir_ / "refused.geojsonl").string()).value(), Options(),
                      &summary, nullptr),
              IsErrorWith(ErrorCode::kInvalidArgument, "--reproject-right"));
  options.reproject_right = true;
  for (const JoinIndexSide side : {JoinIndexSide::kRight, JoinIndexSide::kLeft}) {
    SCOPED_TRACE(side == JoinIndexSide::kRight ? "right indexed" : "right streamed");
    const std::string tag = side == JoinIndexSide::kRight ? "r" : "l";
    EXPECT_EQ(run(mercator_squares, side, 64 << 20, tag + ".geojsonl").first, expected);
    // In cells: the indexed side's boxes (lon/lat) filter rows only once transformed.
    const auto [cells_pairs, cells] = run(mercator_squares, side, 96 << 10, tag + "c.geojsonl");
    EXPECT_EQ(cells_pairs, expected);
    EXPECT_GE(cells, 2);
  }
}

// Every output feature of a GeoJSONSeq file (properties and geometry), as canonical text.
std::multiset<std::string> FeaturesOf(const std::string& path) {
  std::multiset<std::string> features;
  for (const nlohmann::json& j : FeaturesIn(path)) {
    features.insert(j["properties"].dump() + " " + j["geometry"].dump());
  }
  return features;
}

// An indexed side over its share of --memory is cut into cells, one pass each; whichever side
// places the rows (the streamed side for largest-overlap and --how left over a streamed left,
// else the indexed side), the output is the one an index over the whole side gives: same rows,
// same values, none twice.
TEST_F(JoinTest, AnIndexedSideOverTheBudgetIsJoinedCellByCell) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> at(0, 1000), size(1, 30), big(100, 220);
  auto rectangle = [](double x, double y, double w, double h) {
    std::ostringstream wkt;
    wkt << "POLYGON ((" << x << " " << y << ", " << x + w << " " << y << ", " << x + w << " "
        << y + h << ", " << x << " " << y + h << ", " << x << " " << y << "))";
    return wkt.str();
  };
  std::vector<std::pair<std::string, std::string>> a, b, points;
  for (int i = 0; i < 1500; ++i) {
    const double w = i % 150 == 0 ? big(random) : size(random);
    a.emplace_back(std::to_string(i), rectangle(at(random), at(random), w, size(random)));
    // Triangles on the other side, so overlaps are not all boxes.
    const double x = at(random), y = at(random), s = size(random);
    std::ostringstream wkt;
    wkt << "POLYGON ((" << x << " " << y << ", " << x + s << " " << y << ", " << x << " " << y + s
        << ", " << x << " " << y << "))";
    b.emplace_back(std::to_string(10000 + i), wkt.str());
  }
  for (int i = 0; i < 3000; ++i) {
    std::ostringstream wkt;
    wkt << "POINT (" << at(random) << " " << at(random) << ")";
    points.emplace_back(std::to_string(20000 + i), wkt.str());
  }
  for (auto* side : {&a, &b, &points}) side->emplace_back(std::to_string(side->size()), "NULL");
  const std::string rects = WriteCsv("rects.csv", a);
  const std::string triangles = WriteCsv("triangles.csv", b);
  const std::string pts = WriteCsv("points.csv", points);

  struct Mode {
    std::string name, left, right, predicate;
    JoinHow how = JoinHow::kInner;
    JoinIndexSide index = JoinIndexSide::kRight;
    std::vector<std::string> aggregates;
  };
  const std::vector<Mode> modes = {
      {"intersects", rects, triangles, "intersects", JoinHow::kInner, JoinIndexSide::kRight, {}},
      {"within", pts, rects, "within", JoinHow::kInner, JoinIndexSide::kRight, {}},
      {"dwithin", pts, triangles, "dwithin:4", JoinHow::kInner, JoinIndexSide::kRight, {}},
      {"largest-overlap",
       rects,
       triangles,
       "largest-overlap",
       JoinHow::kInner,
       JoinIndexSide::kRight,
       {}},
      {"left-streamed", pts, rects, "intersects", JoinHow::kLeft, JoinIndexSide::kRight, {}},
      {"left-indexed", rects, pts, "contains", JoinHow::kLeft, JoinIndexSide::kLeft, {}},
      {"aggregates",
       pts,
       rects,
       "within",
       JoinHow::kLeft,
       JoinIndexSide::kRight,
       {"count", "sum:id"}},
  };
  for (const Mode& mode : modes) {
    SCOPED_TRACE(mode.name);
    JoinOptions options;
    ASSERT_OK(ParseJoinPredicate(mode.predicate, &options));
    options.how = mode.how;
    options.index = mode.index;
    for (const std::string& text : mode.aggregates) {
      options.aggregates.push_back(ParseJoinAggregate(text).value());
    }
    auto run = [&](std::int64_t memory, const std::string& out, JoinReport* report) {
      RunnerOptions runner = Options();
      runner.batch_rows = 200;
      if (memory > 0) runner.memory_bytes = memory;
      RunSummary summary;
      EXPECT_OK(RunJoin(env_, ResolveInput(mode.left).value(), ResolveInput(mode.right).value(),
                        options, ParseOutput(out).value(), runner, &summary, report));
      return summary.totals.rows_out;
    };
    const std::string whole = (dir_ / (mode.name + "_whole.geojsonl")).string();
    const std::string cells = (dir_ / (mode.name + "_cells.geojsonl")).string();
    JoinReport whole_report, cells_report;
    const std::int64_t whole_rows = run(0, whole, &whole_report);
    const std::int64_t cell_rows = run(std::int64_t{256} << 10, cells, &cells_report);
    EXPECT_EQ(whole_report.cells, 0);
    EXPECT_GE(cells_report.cells, 3);
    EXPECT_GT(whole_rows, 0);
    EXPECT_EQ(cell_rows, whole_rows);
    EXPECT_EQ(cells_report.pairs, whole_report.pairs);
    EXPECT_EQ(cells_report.unmatched_left, whole_report.unmatched_left);
    const std::multiset<std::string> expected = FeaturesOf(whole);
    EXPECT_EQ(static_cast<std::int64_t>(expected.size()), whole_rows);
    EXPECT_TRUE(FeaturesOf(cells) == expected);
  }
}

}  // namespace
}  // namespace geolake::ops
