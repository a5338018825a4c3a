#include "geolake/ops/simplify.h"

#include <geos_c.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/ops/op_test_util.h"
#include "geolake/table/catalog.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// GEOS itself, called directly: the expectations of the cases are its answers, not ours.
class Geos {
 public:
  Geos() : h_(GEOS_init_r()) {}
  ~Geos() { GEOS_finish_r(h_); }
  Geos(const Geos&) = delete;
  Geos& operator=(const Geos&) = delete;

  struct Deleter {
    GEOSContextHandle_t h;
    void operator()(GEOSGeometry* g) const { GEOSGeom_destroy_r(h, g); }
  };
  using Ptr = std::unique_ptr<GEOSGeometry, Deleter>;

  Ptr Wkt(const std::string& wkt) {
    GEOSWKTReader* r = GEOSWKTReader_create_r(h_);
    GEOSGeometry* g = GEOSWKTReader_read_r(h_, r, wkt.c_str());
    GEOSWKTReader_destroy_r(h_, r);
    EXPECT_NE(g, nullptr) << wkt;
    return Ptr(g, Deleter{h_});
  }
  Ptr Own(GEOSGeometry* g) {
    EXPECT_NE(g, nullptr);
    return Ptr(g, Deleter{h_});
  }
  std::string ToWkt(const GEOSGeometry* g) {
    GEOSWKTWriter* w = GEOSWKTWriter_create_r(h_);
    GEOSWKTWriter_setTrim_r(h_, w, 1);
    char* text = GEOSWKTWriter_write_r(h_, w, g);
    std::string out = text;
    GEOSFree_r(h_, text);
    GEOSWKTWriter_destroy_r(h_, w);
    return out;
  }
  // What simplify must give for one input, by the rules of simplify.h, with GEOS's own calls.
  Ptr Expected(const std::string& wkt, SimplifyMethod method, double tolerance, bool* repaired) {
    Ptr in = Wkt(wkt);
    *repaired = false;
    if (method == SimplifyMethod::kDouglasPeucker) {
      return Own(GEOSSimplify_r(h_, in.get(), tolerance));
    }
    const int type = GEOSGeomTypeId_r(h_, in.get());
    const bool polygonal = type == GEOS_POLYGON || type == GEOS_MULTIPOLYGON;
    if (polygonal && GEOSisValid_r(h_, in.get()) == 0) {
      GEOSMakeValidParams* p = GEOSMakeValidParams_create_r(h_);
      GEOSMakeValidParams_setMethod_r(h_, p, GEOS_MAKE_VALID_STRUCTURE);
      GEOSMakeValidParams_setKeepCollapsed_r(h_, p, 0);
      in = Own(GEOSMakeValidWithParams_r(h_, in.get(), p));
      GEOSMakeValidParams_destroy_r(h_, p);
      *repaired = true;
    }
    Ptr out = Own(GEOSTopologyPreserveSimplify_r(h_, in.get(), tolerance));
    if (polygonal && GEOSisValid_r(h_, out.get()) == 0) return in;
    return out;
  }
  // The union of clones of `parts`.
  Ptr Union(const std::vector<const GEOSGeometry*>& parts) {
    std::vector<GEOSGeometry*> clones;
    for (const GEOSGeometry* g : parts) clones.push_back(GEOSGeom_clone_r(h_, g));
    GEOSGeometry* c = GEOSGeom_createCollection_r(h_, GEOS_GEOMETRYCOLLECTION, clones.data(),
                                                  static_cast<unsigned>(clones.size()));
    Ptr all = Own(c);
    return Own(GEOSUnaryUnion_r(h_, all.get()));
  }
  double Area(const GEOSGeometry* g) {
    double a = 0;
    EXPECT_EQ(GEOSArea_r(h_, g, &a), 1);
    return a;
  }
  GEOSContextHandle_t h() const { return h_; }

 private:
  GEOSContextHandle_t h_;
};

// One tests/cases/ops/simplify/*.case file (README.md there gives the format).
struct SimplifyCase {
  std::string name;
  SimplifyMethod method = SimplifyMethod::kDouglasPeucker;
  double tolerance = 0;
  std::int64_t collapsed = 0;
  bool exterior_simplified = false;  // coverage: the union's area may change
  std::vector<std::string> input;    // "ID NAME WKT"
  struct Row {
    std::string id;
    std::string wkt;  // "=": only GEOS's answer; "NULL": no geometry
  };
  std::vector<Row> expect;
};

SimplifyCase ParseCase(const fs::path& path) {
  SimplifyCase c;
  c.name = path.stem().string();
  std::ifstream in(path);
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string rest = line.substr(line.find(':') + 1);
    if (line.starts_with("method:")) {
      const std::string m = rest.substr(1);
      c.method = m == "preserve-topology" ? SimplifyMethod::kPreserveTopology
                 : m == "coverage"        ? SimplifyMethod::kCoverage
                                          : SimplifyMethod::kDouglasPeucker;
      EXPECT_TRUE(m == "preserve-topology" || m == "coverage" || m == "douglas-peucker") << m;
    } else if (line.starts_with("tolerance:")) {
      c.tolerance = std::stod(rest);
    } else if (line.starts_with("exterior:")) {
      c.exterior_simplified = rest == " simplified";
    } else if (line.starts_with("collapsed:")) {
      c.collapsed = std::stoll(rest);
    } else if (line == "input:" || line == "expect:") {
      section = line;
    } else if (section == "input:") {
      c.input.push_back(line);
    } else if (section == "expect:") {
      const std::size_t bar = line.find(" | ");
      c.expect.push_back({line.substr(0, bar), line.substr(bar + 3)});
    }
  }
  return c;
}

class SimplifyTest : public OpTestBase {
 protected:
  // A CSV source of "ID NAME WKT" lines ("NULL": no geometry).
  std::string WriteCsv(const std::string& name, const std::vector<std::string>& lines) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    out << "id,name,WKT\n";
    for (const std::string& line : lines) {
      std::istringstream in(line);
      std::string id, label, wkt;
      in >> id >> label;
      std::getline(in >> std::ws, wkt);
      out << id << "," << label << ",\"" << (wkt == "NULL" ? "" : wkt) << "\"\n";
    }
    return path;
  }

  RunnerOptions Options() const {
    RunnerOptions options;
    options.memory_bytes = 64 << 20;
    options.batch_rows = 2;  // several tasks even for a case's few rows
    options.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
    return options;
  }

  Geos geos_;
};

TEST_F(SimplifyTest, CasesGiveGeosAnswers) {
  const fs::path cases = fs::path(::geolake::testing::SourceDir()) / "tests/cases/ops/simplify";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".case") continue;
    const SimplifyCase c = ParseCase(entry.path());
    if (c.method == SimplifyMethod::kCoverage) continue;  // CoverageCases
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.expect.empty());
    const std::string input = WriteCsv(c.name + ".csv", c.input);
    const std::string out = (dir_ / (c.name + "_out.csv")).string();
    SimplifyOptions options;
    options.method = c.method;
    options.tolerance = c.tolerance;
    RunSummary summary;
    SimplifyReport report;
    ASSERT_OK(RunSimplify(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                          Options(), &summary, &report));
    EXPECT_EQ(report.collapsed, c.collapsed);
    const auto it = summary.totals.rows_dropped.find("collapsed to empty");
    EXPECT_EQ(it == summary.totals.rows_dropped.end() ? 0 : it->second, c.collapsed);
    EXPECT_EQ(summary.totals.rows_in, static_cast<std::int64_t>(c.input.size()));
    const auto rows = ReadCsvRows(out);
    ASSERT_EQ(rows.size(), c.expect.size());
    // The inputs by id, to compute GEOS's answers.
    std::map<std::string, std::string> inputs;
    for (const std::string& line : c.input) {
      std::istringstream in(line);
      std::string id, label, wkt;
      in >> id >> label;
      std::getline(in >> std::ws, wkt);
      inputs[id] = wkt;
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const SimplifyCase::Row& want = c.expect[i];
      SCOPED_TRACE("row " + std::to_string(i) + " id " + want.id);
      EXPECT_EQ(rows[i].at("id"), want.id);
      const std::string& got = rows[i].at("geometry");
      if (want.wkt == "NULL") {
        EXPECT_EQ(got, "");
        continue;
      }
      ASSERT_FALSE(got.empty());
      Geos::Ptr g = geos_.Wkt(got);
      bool repaired = false;
      Geos::Ptr expected = geos_.Expected(inputs.at(want.id), c.method, c.tolerance, &repaired);
      // GEOS's own answer: the same coordinates (a repaired input: the same point set).
      if (repaired) {
        EXPECT_EQ(GEOSEquals_r(geos_.h(), g.get(), expected.get()), 1)
            << got << " vs GEOS " << geos_.ToWkt(expected.get());
      } else {
        EXPECT_EQ(GEOSEqualsExact_r(geos_.h(), g.get(), expected.get(), 1e-12), 1)
            << got << " vs GEOS " << geos_.ToWkt(expected.get());
      }
      if (c.method == SimplifyMethod::kPreserveTopology) {
        EXPECT_EQ(GEOSisValid_r(geos_.h(), g.get()), 1) << got;
      }
      // The case's own expectation, worked out by hand: the same point set.
      if (want.wkt != "=") {
        Geos::Ptr hand = geos_.Wkt(want.wkt);
        EXPECT_EQ(GEOSEquals_r(geos_.h(), g.get(), hand.get()), 1) << got << " vs " << want.wkt;
        EXPECT_EQ(GEOSGetNumCoordinates_r(geos_.h(), g.get()),
                  GEOSGetNumCoordinates_r(geos_.h(), hand.get()))
            << got << " vs " << want.wkt;
      }
    }
    ++ran;
  }
  EXPECT_GE(ran, 4);
}

// The checks of a simplified coverage (README.md in tests/cases/ops/simplify): valid polygons,
// no overlaps (sum of areas = union's area; pairwise intersections of zero area), and no gaps
// (the union's area is the input union's, unless `exterior_simplified`).
void ExpectCoverage(Geos& geos, const std::vector<std::string>& in_wkts,
                    const std::vector<std::string>& out_wkts, bool exterior_simplified) {
  std::vector<Geos::Ptr> in, out;
  for (const std::string& w : in_wkts) in.push_back(geos.Wkt(w));
  for (const std::string& w : out_wkts) out.push_back(geos.Wkt(w));
  std::vector<const GEOSGeometry*> in_raw, out_raw;
  double sum = 0;
  for (const Geos::Ptr& g : in) in_raw.push_back(g.get());
  for (const Geos::Ptr& g : out) {
    out_raw.push_back(g.get());
    EXPECT_EQ(GEOSisValid_r(geos.h(), g.get()), 1) << geos.ToWkt(g.get());
    sum += geos.Area(g.get());
  }
  const double in_union = geos.Area(geos.Union(in_raw).get());
  const double out_union = geos.Area(geos.Union(out_raw).get());
  EXPECT_NEAR(sum, out_union, 1e-9 * out_union) << "overlaps";
  if (!exterior_simplified) {
    EXPECT_NEAR(out_union, in_union, 1e-9 * in_union) << "gaps";
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t j = i + 1; j < out.size(); ++j) {
      Geos::Ptr x = geos.Own(GEOSIntersection_r(geos.h(), out[i].get(), out[j].get()));
      EXPECT_LE(geos.Area(x.get()), 1e-9 * out_union) << i << " overlaps " << j;
    }
  }
}

TEST_F(SimplifyTest, CoverageCases) {
  const fs::path cases = fs::path(::geolake::testing::SourceDir()) / "tests/cases/ops/simplify";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".case") continue;
    const SimplifyCase c = ParseCase(entry.path());
    if (c.method != SimplifyMethod::kCoverage) continue;
    SCOPED_TRACE(c.name);
    ASSERT_EQ(c.expect.size(), c.input.size());
    const std::string input = WriteCsv(c.name + ".csv", c.input);
    const std::string out = (dir_ / (c.name + "_out.csv")).string();
    SimplifyOptions options;
    options.method = c.method;
    options.tolerance = c.tolerance;
    RunSummary summary;
    SimplifyReport report;
    ASSERT_OK(RunSimplify(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                          Options(), &summary, &report));
    EXPECT_EQ(report.invalid_inputs, 0);
    EXPECT_LE(report.vertices_out, report.vertices_in);
    const auto rows = ReadCsvRows(out);
    ASSERT_EQ(rows.size(), c.expect.size());
    std::vector<std::string> in_polygons, out_polygons;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const SimplifyCase::Row& want = c.expect[i];
      SCOPED_TRACE("row " + std::to_string(i) + " id " + want.id);
      std::istringstream line(c.input[i]);
      std::string id, label, wkt;
      line >> id >> label;
      std::getline(line >> std::ws, wkt);
      EXPECT_EQ(rows[i].at("id"), id);
      EXPECT_EQ(rows[i].at("name"), label);
      EXPECT_EQ(want.id, id);
      const std::string& got = rows[i].at("geometry");
      if (want.wkt == "NULL") {
        EXPECT_EQ(got, "");
        continue;
      }
      ASSERT_FALSE(got.empty());
      Geos::Ptr g = geos_.Wkt(got);
      Geos::Ptr hand = geos_.Wkt(want.wkt);
      EXPECT_EQ(GEOSEquals_r(geos_.h(), g.get(), hand.get()), 1) << got << " vs " << want.wkt;
      EXPECT_EQ(GEOSGetNumCoordinates_r(geos_.h(), g.get()),
                GEOSGetNumCoordinates_r(geos_.h(), hand.get()))
          << got << " vs " << want.wkt;
      if (wkt.find("POLYGON") != std::string::npos) {
        in_polygons.push_back(wkt);
        out_polygons.push_back(got);
      }
    }
    ExpectCoverage(geos_, in_polygons, out_polygons, c.exterior_simplified);
    ++ran;
  }
  EXPECT_GE(ran, 4);
}

// An n x n grid of unit-10 cells whose shared borders carry `k` inner vertices each, offset
// across the border by up to `amplitude` (the same vertices for both neighbours); the outer
// boundary's inner vertices are collinear.
std::vector<std::string> WigglyGrid(int n, int k, double amplitude) {
  auto offset = [&](int line, int along, int t) {  // deterministic, in [-amplitude, amplitude]
    const unsigned h = static_cast<unsigned>(line * 7919 + along * 104729 + t * 1299709);
    return amplitude * (static_cast<double>((h * 2654435761u) >> 8 & 0xffff) / 32767.5 - 1);
  };
  // Points of the border from corner (x0, y0) to the next corner along x (horizontal) or y.
  auto border = [&](int x0, int y0, bool horizontal) {
    std::vector<std::pair<double, double>> pts;
    const bool outer = horizontal ? (y0 == 0 || y0 == n) : (x0 == 0 || x0 == n);
    for (int t = 1; t <= k; ++t) {
      const double f = 10.0 * t / (k + 1);
      const double d = outer ? 0 : offset(horizontal ? y0 : x0 + 1000, horizontal ? x0 : y0, t);
      pts.push_back(horizontal ? std::make_pair(10.0 * x0 + f, 10.0 * y0 + d)
                               : std::make_pair(10.0 * x0 + d, 10.0 * y0 + f));
    }
    return pts;
  };
  std::vector<std::string> lines;
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      std::vector<std::pair<double, double>> ring{{10.0 * x, 10.0 * y}};
      for (const auto& p : border(x, y, true)) ring.push_back(p);  // bottom, left to right
      ring.emplace_back(10.0 * (x + 1), 10.0 * y);
      for (const auto& p : border(x + 1, y, false)) ring.push_back(p);  // right, upwards
      ring.emplace_back(10.0 * (x + 1), 10.0 * (y + 1));
      auto top = border(x, y + 1, true);  // top, right to left
      for (auto it = top.rbegin(); it != top.rend(); ++it) ring.push_back(*it);
      ring.emplace_back(10.0 * x, 10.0 * (y + 1));
      auto left = border(x, y, false);  // left, downwards
      for (auto it = left.rbegin(); it != left.rend(); ++it) ring.push_back(*it);
      ring.emplace_back(10.0 * x, 10.0 * y);
      std::ostringstream wkt;
      wkt.precision(17);
      wkt << "POLYGON ((";
      for (std::size_t i = 0; i < ring.size(); ++i) {
        wkt << (i ? ", " : "") << ring[i].first << " " << ring[i].second;
      }
      wkt << "))";
      lines.push_back(std::to_string(y * n + x) + " c" + std::to_string(x) + "_" +
                      std::to_string(y) + " " + wkt.str());
    }
  }
  return lines;
}

// An empty geometry is written as it is and counted apart from the features, under every
// method, so that the report's numbers add up to the rows written.
TEST_F(SimplifyTest, EmptyGeometriesAreKeptAndCountedApart) {
  const std::string input = WriteCsv(
      "empty.csv", {"1 a POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))", "2 b POLYGON EMPTY",
                    "3 c POLYGON ((10 0, 20 0, 20 10, 10 10, 10 0))", "4 d MULTIPOLYGON EMPTY"});
  for (const SimplifyMethod method :
       {SimplifyMethod::kDouglasPeucker, SimplifyMethod::kPreserveTopology,
        SimplifyMethod::kCoverage}) {
    SCOPED_TRACE(SimplifyMethodName(method));
    const std::string out =
        (dir_ / (std::string("empty_") + SimplifyMethodName(method) + ".csv")).string();
    SimplifyOptions options;
    options.method = method;
    options.tolerance = 1;
    RunSummary summary;
    SimplifyReport report;
    ASSERT_OK(RunSimplify(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                          Options(), &summary, &report));
    EXPECT_EQ(report.features, 2);
    EXPECT_EQ(report.empty, 2);
    EXPECT_EQ(ReadCsvRows(out).size(), 4u);
    EXPECT_THAT(FormatSimplifyReport(options, report),
                ::testing::HasSubstr("2 features, 10 -> 10 vertices (100.0%), 0 collapsed to empty "
                                     "and dropped, 2 empty geometries kept as they are"));
  }
}

TEST_F(SimplifyTest, CoverageOfAGeneratedGridKeepsItsBorders) {
  // 20 x 20 cells, 12 wiggly vertices per border. Tolerance above the wiggle: every cell
  // becomes its square. Tolerance inside it: borders are simplified partly, the same way on
  // both sides (no gaps or overlaps), each cell valid.
  const std::vector<std::string> lines = WigglyGrid(20, 12, 0.3);
  const std::string input = WriteCsv("grid.csv", lines);
  for (const double tolerance : {0.5, 0.15}) {
    SCOPED_TRACE(tolerance);
    const std::string out = (dir_ / ("grid_" + std::to_string(tolerance) + ".csv")).string();
    SimplifyOptions options;
    options.method = SimplifyMethod::kCoverage;
    options.tolerance = tolerance;
    RunSummary summary;
    SimplifyReport report;
    RunnerOptions runner = Options();
    runner.batch_rows = 7;  // many batches, delivered by both workers in any order
    ASSERT_OK(RunSimplify(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                          runner, &summary, &report));
    EXPECT_EQ(report.features, 400);
    EXPECT_EQ(report.shared_arcs, 2 * 20 * 19);  // every inner border, once
    const auto rows = ReadCsvRows(out);
    ASSERT_EQ(rows.size(), 400u);
    std::vector<std::string> in_wkts, out_wkts;
    std::int64_t coords = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i].at("id"), std::to_string(i));  // input order
      std::istringstream line(lines[i]);
      std::string id, label, wkt;
      line >> id >> label;
      std::getline(line >> std::ws, wkt);
      EXPECT_EQ(rows[i].at("name"), label);
      in_wkts.push_back(wkt);
      out_wkts.push_back(rows[i].at("geometry"));
      Geos::Ptr g = geos_.Wkt(out_wkts.back());
      coords += GEOSGetNumCoordinates_r(geos_.h(), g.get());
      if (tolerance == 0.5) {
        const int x = static_cast<int>(i % 20), y = static_cast<int>(i / 20);
        std::ostringstream square;
        square << "POLYGON ((" << 10 * x << " " << 10 * y << ", " << 10 * x + 10 << " " << 10 * y
               << ", " << 10 * x + 10 << " " << 10 * y + 10 << ", " << 10 * x << " " << 10 * y + 10
               << ", " << 10 * x << " " << 10 * y << "))";
        Geos::Ptr want = geos_.Wkt(square.str());
        EXPECT_EQ(GEOSEquals_r(geos_.h(), g.get(), want.get()), 1) << out_wkts.back();
        EXPECT_EQ(GEOSGetNumCoordinates_r(geos_.h(), g.get()), 5) << out_wkts.back();
      }
    }
    EXPECT_EQ(coords, report.vertices_out);
    EXPECT_LT(report.vertices_out, report.vertices_in * (tolerance == 0.5 ? 0.1 : 0.9));
    ExpectCoverage(geos_, in_wkts, out_wkts, false);
  }
}

TEST_F(SimplifyTest, CoverageRefusesShards) {
  const std::string input = WriteCsv("in.csv", {"1 a POLYGON ((0 0, 1 0, 1 1, 0 0))"});
  SimplifyOptions options;
  options.method = SimplifyMethod::kCoverage;
  options.tolerance = 1;
  RunnerOptions runner = Options();
  runner.shard = Shard{0, 2};
  RunSummary summary;
  EXPECT_THAT(
      RunSimplify(env_, ResolveInput(input).value(), options,
                  ParseOutput((dir_ / "out.csv").string()).value(), runner, &summary, nullptr),
      IsErrorWith(ErrorCode::kInvalidArgument, "--shard"));
}

TEST_F(SimplifyTest, BadOptionsAreRefused) {
  const std::string input = WriteCsv("in.csv", {"1 a POLYGON ((0 0, 1 0, 1 1, 0 0))"});
  const std::string out = (dir_ / "out.csv").string();
  RunSummary summary;
  for (const double t : std::vector<double>{-1.0, std::nan(""), HUGE_VAL}) {
    SimplifyOptions options;
    options.tolerance = t;
    EXPECT_THAT(RunSimplify(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                            Options(), &summary, nullptr),
                IsErrorWith(ErrorCode::kInvalidArgument, "--tolerance"));
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(SimplifyTest, ManyFeaturesInParallelMatchGeosOneByOne) {
  // 400 wiggly polygons, each simplified by both methods: every output equals GEOS's own call.
  std::vector<std::string> lines;
  std::vector<std::string> wkts;
  for (int k = 0; k < 400; ++k) {
    std::ostringstream wkt;
    wkt.precision(17);
    wkt << "POLYGON ((";
    const int n = 50 + k % 37;
    for (int i = 0; i <= n; ++i) {
      const double a = 2 * M_PI * (i % n) / n;
      const double r = 10 + std::sin(7 * a + k) + 0.3 * std::cos(23 * a);
      wkt << (i ? ", " : "") << (k % 20) * 30 + r * std::cos(a) << " "
          << (k / 20) * 30 + r * std::sin(a);
    }
    wkt << "))";
    wkts.push_back(wkt.str());
    lines.push_back(std::to_string(k) + " p " + wkt.str());
  }
  const std::string input = WriteCsv("many.csv", lines);
  for (const SimplifyMethod method :
       {SimplifyMethod::kDouglasPeucker, SimplifyMethod::kPreserveTopology}) {
    SCOPED_TRACE(SimplifyMethodName(method));
    const std::string out = (dir_ / (std::string(SimplifyMethodName(method)) + ".csv")).string();
    SimplifyOptions options;
    options.method = method;
    options.tolerance = 0.4;
    RunSummary summary;
    SimplifyReport report;
    RunnerOptions runner = Options();
    runner.batch_rows = 16;
    ASSERT_OK(RunSimplify(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                          runner, &summary, &report));
    EXPECT_EQ(report.features, 400);
    EXPECT_LT(report.vertices_out, report.vertices_in / 2);
    const auto rows = ReadCsvRows(out);
    ASSERT_EQ(rows.size(), 400u);
    std::int64_t vertices = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i].at("id"), std::to_string(i));  // input order kept
      Geos::Ptr g = geos_.Wkt(rows[i].at("geometry"));
      bool repaired = false;
      Geos::Ptr expected = geos_.Expected(wkts[i], method, 0.4, &repaired);
      EXPECT_FALSE(repaired);
      EXPECT_EQ(GEOSEqualsExact_r(geos_.h(), g.get(), expected.get(), 1e-12), 1) << i;
      vertices += GEOSGetNumCoordinates_r(geos_.h(), g.get());
    }
    EXPECT_EQ(vertices, report.vertices_out);
  }
}

}  // namespace
}  // namespace geolake::ops
