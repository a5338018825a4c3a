#include "geolake/ops/eliminate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/shared_boundary.h"
#include "geolake/ops/op_test_util.h"
#include "geolake/table/catalog.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// One tests/cases/ops/eliminate/*.case file (README.md there gives the format).
struct EliminateCase {
  std::string name;
  EliminateOptions options;
  std::map<std::string, std::int64_t> counts;  // rounds, merged, islands, ... to check
  std::vector<std::string> input;              // "ID CLS VAL WKT"
  struct Row {
    std::string id;
    double area = 0;
    std::string wkt;  // "EMPTY" for a null geometry
  };
  std::vector<Row> expect;
};

EliminateCase ParseCase(const fs::path& path) {
  EliminateCase c;
  c.name = path.stem().string();
  std::ifstream in(path);
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t colon = line.find(':');
    const std::string key = line.substr(0, colon);
    const std::string rest = colon == std::string::npos ? "" : line.substr(colon + 1);
    if (line == "input:" || line == "expect:") {
      section = line;
    } else if (section == "input:") {
      c.input.push_back(line);
    } else if (section == "expect:") {
      EliminateCase::Row row;
      const std::size_t bar = line.find(" | ");
      row.wkt = line.substr(bar + 3);
      std::istringstream words(line.substr(0, bar));
      words >> row.id >> row.area;
      c.expect.push_back(std::move(row));
    } else if (key == "area-below") {
      c.options.area_below = std::stod(rest);
    } else if (key == "merge-into") {
      c.options.merge_into = ParseMergeInto(rest.substr(1)).value();
    } else if (key == "within") {
      c.options.within = rest.substr(1);
    } else if (key == "max-iterations") {
      c.options.max_iterations = std::stoll(rest);
    } else {
      c.counts[key] = std::stoll(rest);
    }
  }
  return c;
}

std::string FileText(const std::string& path) {
  std::ifstream text(path);
  return std::string(std::istreambuf_iterator<char>(text), {});
}

class EliminateTest : public OpTestBase {
 protected:
  // A CSV source of "ID CLS VAL WKT" lines ("-": null value, "NULL": no geometry).
  std::string WriteCsv(const std::string& name, const std::vector<std::string>& lines) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    out << "id,cls,val,WKT\n";
    for (const std::string& line : lines) {
      std::istringstream in(line);
      std::string id, cls, val, wkt;
      in >> id >> cls >> val;
      std::getline(in >> std::ws, wkt);
      out << id << "," << (cls == "-" ? "" : cls) << "," << (val == "-" ? "" : val) << ",\""
          << (wkt == "NULL" ? "" : wkt) << "\"\n";
    }
    return path;
  }

  RunnerOptions Options(std::int64_t batch_rows = 3) const {
    RunnerOptions options;
    options.memory_bytes = 64 << 20;
    options.batch_rows = batch_rows;
    options.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
    return options;
  }

  Status Run(const std::string& input, const EliminateOptions& options, const std::string& out,
             EliminateReport* report, std::optional<RunnerOptions> runner = std::nullopt,
             RunSummary* summary = nullptr) {
    RunSummary local;
    return RunEliminate(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                        runner.value_or(Options()), summary != nullptr ? summary : &local, report);
  }

  double SymDiffArea(const std::string& a, const std::string& b) {
    geo::Geometry ga = geo::Geometry::FromWkt(*geo_, a).value();
    geo::Geometry gb = geo::Geometry::FromWkt(*geo_, b).value();
    const double u = ga.Union(gb).value().Area().value();
    const double i = ga.Intersection(gb).value().Area().value();
    return u - i;
  }
};

std::int64_t ReportCount(const EliminateReport& r, const std::string& name) {
  if (name == "rounds") return r.rounds;
  if (name == "merged") return r.merged;
  if (name == "islands") return r.islands;
  if (name == "blocked") return r.blocked;
  if (name == "capped") return r.capped;
  if (name == "repaired") return r.repaired;
  ADD_FAILURE() << "unknown count '" << name << "'";
  return -1;
}

TEST_F(EliminateTest, CasesGiveTheirRowsEveryWay) {
  const fs::path cases = fs::path(::geolake::testing::SourceDir()) / "tests/cases/ops/eliminate";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".case") continue;
    const EliminateCase c = ParseCase(entry.path());
    ASSERT_FALSE(c.expect.empty()) << c.name;
    const std::string input = WriteCsv(c.name + ".csv", c.input);
    for (const int threads : {1, 2}) {
      UsePool(threads);
      for (const std::int64_t batch_rows : {1, 100}) {
        SCOPED_TRACE(c.name + " (" + std::to_string(threads) + " threads, " +
                     std::to_string(batch_rows) + " rows per batch)");
        const std::string out = (dir_ / (c.name + "_" + std::to_string(ran) + ".csv")).string();
        EliminateReport report;
        RunSummary summary;
        ASSERT_OK(Run(input, c.options, out, &report, Options(batch_rows), &summary));
        for (const auto& [name, want] : c.counts)
          EXPECT_EQ(ReportCount(report, name), want) << name;
        EXPECT_EQ(summary.totals.rows_out,
                  static_cast<std::int64_t>(c.input.size()) - report.merged);
        const auto rows = ReadCsvRows(out);
        ASSERT_EQ(rows.size(), c.expect.size()) << FileText(out);
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const EliminateCase::Row& want = c.expect[i];
          const auto& got = rows[i];
          SCOPED_TRACE("row " + std::to_string(i) + " id " + want.id);
          EXPECT_EQ(got.at("id"), want.id);
          const std::string& wkt = got.at("geometry");
          if (want.wkt == "EMPTY") {
            EXPECT_EQ(wkt, "");
            continue;
          }
          ASSERT_FALSE(wkt.empty());
          geo::Geometry g = geo::Geometry::FromWkt(*geo_, wkt).value();
          EXPECT_TRUE(g.IsValid().value()) << wkt;
          EXPECT_NEAR(g.Area().value(), want.area, 1e-9) << wkt;
          EXPECT_LE(SymDiffArea(wkt, want.wkt), 1e-9 * std::max(want.area, 1.0))
              << wkt << " vs " << want.wkt;
        }
        ++ran;
      }
    }
  }
  EXPECT_GE(ran, 4 * 9);
}

// A coverage of n x n quadrilaterals whose shared corners are jittered at random: areas and
// border lengths all differ, so no tie decides anything. Cell (x, y) is row y * n + x.
struct Cell {
  std::string wkt;
  std::int64_t value = 0;
};

std::vector<Cell> JitteredGrid(int n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> jitter(-0.4, 0.4);
  std::vector<std::vector<std::pair<double, double>>> corner(
      n + 1, std::vector<std::pair<double, double>>(n + 1));
  for (int y = 0; y <= n; ++y) {
    for (int x = 0; x <= n; ++x) {
      const bool edge_x = x == 0 || x == n;
      const bool edge_y = y == 0 || y == n;
      corner[y][x] = {x + (edge_x ? 0 : jitter(random)), y + (edge_y ? 0 : jitter(random))};
    }
  }
  std::vector<Cell> cells;
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      std::ostringstream wkt;
      wkt.precision(17);
      const std::pair<double, double> ring[] = {
          corner[y][x], corner[y][x + 1], corner[y + 1][x + 1], corner[y + 1][x], corner[y][x]};
      wkt << "POLYGON ((";
      for (int k = 0; k < 5; ++k) {
        wkt << (k > 0 ? ", " : "") << ring[k].first << " " << ring[k].second;
      }
      wkt << "))";
      cells.push_back({wkt.str(), static_cast<std::int64_t>(random() % 2)});
    }
  }
  return cells;
}

// The rule of eliminate.h applied literally on geometries: each round unions the regions and
// measures borders with GEOS on the unions (the operation sums pair borders instead).
// Returns the surviving ids (row positions) with their areas.
std::map<std::int64_t, double> Reference(geo::GeoContext& geo, const std::vector<Cell>& cells,
                                         const EliminateOptions& options) {
  struct Region {
    geo::Geometry g;
    double area;
    std::int64_t value;
  };
  std::map<std::int64_t, Region> regions;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    geo::Geometry g = geo::Geometry::FromWkt(geo, cells[i].wkt).value();
    const double area = g.Area().value();
    regions.emplace(static_cast<std::int64_t>(i), Region{std::move(g), area, cells[i].value});
  }
  auto eligible = [&](std::int64_t a, std::int64_t b) {
    return options.within.empty() || regions.at(a).value == regions.at(b).value;
  };
  auto before = [&](std::int64_t a, std::int64_t b) {
    const double aa = regions.at(a).area, ab = regions.at(b).area;
    return aa != ab ? aa < ab : a < b;
  };
  while (true) {
    std::map<std::int64_t, std::int64_t> target;
    for (const auto& [r, region] : regions) {
      if (region.area >= options.area_below) continue;
      std::int64_t best = -1;
      double best_length = 0;
      for (const auto& [u, other] : regions) {
        if (u == r || !eligible(r, u)) continue;
        const double length = geo::SharedBoundaryLength(region.g, other.g).value();
        if (length <= 0) continue;
        bool better = best < 0;
        if (!better && options.merge_into == MergeInto::kLargestArea &&
            other.area != regions.at(best).area) {
          better = other.area > regions.at(best).area;
        } else if (!better) {
          better = length != best_length ? length > best_length : u < best;
        }
        if (better) {
          best = u;
          best_length = length;
        }
      }
      if (best >= 0) target[r] = best;
    }
    if (target.empty()) break;
    std::map<std::int64_t, std::int64_t> pointer = target;
    for (const auto& [r, t] : target) {
      if (target.contains(t) && target.at(t) == r && before(t, r)) pointer.erase(r);
    }
    std::map<std::int64_t, std::vector<std::int64_t>> absorbed;
    for (const auto& [r, t] : pointer) {
      std::int64_t root = t;
      while (pointer.contains(root)) root = pointer.at(root);
      absorbed[root].push_back(r);
    }
    for (auto& [root, members] : absorbed) {
      for (const std::int64_t m : members) {
        Region& into = regions.at(root);
        into.g = into.g.Union(regions.at(m).g).value();
        into.area += regions.at(m).area;
        regions.erase(m);
      }
    }
  }
  std::map<std::int64_t, double> out;
  for (const auto& [r, region] : regions) out[r] = region.area;
  return out;
}

TEST_F(EliminateTest, AJitteredCoverageMatchesTheRuleAppliedOnGeometries) {
  const std::vector<Cell> cells = JitteredGrid(10, 20261204);
  std::vector<std::string> lines;
  double total = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    lines.push_back(std::to_string(i) + " c " + std::to_string(cells[i].value) + " " +
                    cells[i].wkt);
    total += geo::Geometry::FromWkt(*geo_, cells[i].wkt).value().Area().value();
  }
  const std::string input = WriteCsv("grid.csv", lines);
  // Reversed: row ids change, but without ties nothing else may.
  const std::string reversed =
      WriteCsv("reversed.csv", std::vector<std::string>(lines.rbegin(), lines.rend()));
  struct Config {
    const char* name;
    MergeInto merge_into;
    const char* within;
  };
  for (const Config config : {Config{"longest-border", MergeInto::kLongestBorder, ""},
                              Config{"largest-area", MergeInto::kLargestArea, ""},
                              Config{"within val", MergeInto::kLongestBorder, "val"}}) {
    SCOPED_TRACE(config.name);
    EliminateOptions options;
    options.area_below = 0.75;
    options.merge_into = config.merge_into;
    options.within = config.within;
    const std::map<std::int64_t, double> want = Reference(*geo_, cells, options);
    ASSERT_LT(want.size(), cells.size() - 10);  // plenty merged
    for (const std::string& source : {input, reversed}) {
      const std::string out = (dir_ / "out.csv").string();
      EliminateReport report;
      ASSERT_OK(Run(source, options, out, &report, Options(7)));
      EXPECT_EQ(report.merged, static_cast<std::int64_t>(cells.size() - want.size()));
      EXPECT_GE(report.rounds, 1);
      EXPECT_NEAR(report.area_out, total, 1e-9 * total);
      EXPECT_NEAR(report.overlap_area, 0, 1e-9 * total);
      std::map<std::int64_t, double> got;
      for (const auto& row : ReadCsvRows(out)) {
        geo::Geometry g = geo::Geometry::FromWkt(*geo_, row.at("geometry")).value();
        EXPECT_TRUE(g.IsValid().value());
        got[std::stoll(row.at("id"))] = g.Area().value();
      }
      ASSERT_EQ(got.size(), want.size());
      for (const auto& [id, area] : want) {
        ASSERT_TRUE(got.contains(id)) << "id " << id << " should survive";
        EXPECT_NEAR(got.at(id), area, 1e-9) << "id " << id;
      }
    }
  }
}

// Three eliminations at once on the one executor (the Warehouse runs every operation on one
// pool) each give what the rule gives alone.
TEST_F(EliminateTest, ConcurrentRunsOnOneExecutorEachGiveTheRulesResult) {
  const std::vector<Cell> cells = JitteredGrid(10, 20261204);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    lines.push_back(std::to_string(i) + " c " + std::to_string(cells[i].value) + " " +
                    cells[i].wkt);
  }
  const std::string input = WriteCsv("grid.csv", lines);
  std::vector<EliminateOptions> configs(3);
  configs[1].merge_into = MergeInto::kLargestArea;
  configs[2].within = "val";
  for (EliminateOptions& c : configs) c.area_below = 0.75;
  std::vector<Status> results(configs.size());
  std::vector<EliminateReport> reports(configs.size());
  std::vector<std::thread> runs;
  for (std::size_t k = 0; k < configs.size(); ++k) {
    runs.emplace_back([&, k] {
      results[k] = Run(input, configs[k], (dir_ / ("out" + std::to_string(k) + ".csv")).string(),
                       &reports[k], Options(2));
    });
  }
  for (std::thread& t : runs) t.join();
  for (std::size_t k = 0; k < configs.size(); ++k) {
    SCOPED_TRACE("run " + std::to_string(k));
    ASSERT_OK(results[k]);
    const std::map<std::int64_t, double> want = Reference(*geo_, cells, configs[k]);
    EXPECT_EQ(reports[k].merged, static_cast<std::int64_t>(cells.size() - want.size()));
    std::map<std::int64_t, double> got;
    for (const auto& row : ReadCsvRows((dir_ / ("out" + std::to_string(k) + ".csv")).string())) {
      got[std::stoll(row.at("id"))] =
          geo::Geometry::FromWkt(*geo_, row.at("geometry")).value().Area().value();
    }
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [id, area] : want) {
      ASSERT_TRUE(got.contains(id)) << "id " << id << " should survive";
      EXPECT_NEAR(got.at(id), area, 1e-9) << "id " << id;
    }
  }
  // The three rules differ on this grid, so the runs did not give each other's rows.
  EXPECT_NE(Reference(*geo_, cells, configs[0]), Reference(*geo_, cells, configs[2]));
}

TEST_F(EliminateTest, MaxIterationsStopsAfterThatManyRounds) {
  // chains.case needs two rounds; with one, the region of 6 (area 5) is left below the
  // threshold with an eligible neighbour: counted as capped, kept with 5 merged into it.
  const std::string input =
      WriteCsv("in.csv", {"4 b 4 POLYGON ((100 0, 110 0, 110 10, 100 10, 100 0))",
                          "5 b 5 POLYGON ((110 0, 112 0, 112 1, 110 1, 110 0))",
                          "6 b 6 POLYGON ((110 1, 112 1, 112 2.5, 110 2.5, 110 1))"});
  EliminateOptions options;
  options.area_below = 15;
  options.max_iterations = 1;
  const std::string out = (dir_ / "out.csv").string();
  EliminateReport report;
  ASSERT_OK(Run(input, options, out, &report));
  EXPECT_EQ(report.rounds, 1);
  EXPECT_EQ(report.capped, 1);
  EXPECT_EQ(report.merged, 1);
  const auto rows = ReadCsvRows(out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("id"), "6");
  EXPECT_NEAR(geo::Geometry::FromWkt(*geo_, rows[1].at("geometry")).value().Area().value(), 5,
              1e-12);
  options.max_iterations = 0;
  ASSERT_OK(Run(input, options, out, &report));
  EXPECT_EQ(report.rounds, 2);
  EXPECT_EQ(report.capped, 0);
  EXPECT_EQ(ReadCsvRows(out).size(), 1u);
}

TEST_F(EliminateTest, AreaCrsMeasuresInItsUnits) {
  // Lon/lat: A has 2 square degrees at 80°N (about 4.3e9 m² in EPSG:6933), B one square degree
  // at the equator (about 1.2e10 m²). In degrees B is the smaller; in m² A is.
  const std::string input = (dir_ / "ll.geojsonl").string();
  std::ofstream(input)
      << R"({"type":"Feature","properties":{"id":1},"geometry":{"type":"Polygon","coordinates":[[[0,80],[2,80],[2,81],[0,81],[0,80]]]}})"
      << "\n"
      << R"({"type":"Feature","properties":{"id":2},"geometry":{"type":"Polygon","coordinates":[[[10,0],[11,0],[11,1],[10,1],[10,0]]]}})"
      << "\n";
  const std::string out = (dir_ / "out.csv").string();
  EliminateOptions options;
  options.area_below = 1.5;
  EliminateReport report;
  ASSERT_OK(Run(input, options, out, &report));
  EXPECT_EQ(report.small, 1);
  EXPECT_EQ(report.island_rows, std::vector<std::int64_t>{1});
  options.area_below = 8e9;
  options.area_crs = "EPSG:6933";
  ASSERT_OK(Run(input, options, out, &report));
  EXPECT_EQ(report.small, 1);
  EXPECT_EQ(report.island_rows, std::vector<std::int64_t>{0});
  // The output stays in the input's CRS.
  EXPECT_NEAR(report.area_out, 3, 1e-9);
  options.area_crs = "EPSG:999999";
  EXPECT_THAT(Run(input, options, out, &report),
              IsErrorWith(ErrorCode::kInvalidArgument, "--area-crs"));
}

TEST_F(EliminateTest, BadOptionsAreInvalidArguments) {
  const std::string input = WriteCsv("in.csv", {"1 a 1 POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))",
                                                "2 a 1 POLYGON ((1 0, 2 0, 2 1, 1 1, 1 0))"});
  const std::string out = (dir_ / "o.csv").string();
  EliminateReport report;
  EliminateOptions options;
  for (const double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    options.area_below = bad;
    EXPECT_THAT(Run(input, options, out, &report),
                IsErrorWith(ErrorCode::kInvalidArgument, "--area-below"));
  }
  options.area_below = 1;
  options.max_iterations = -1;
  EXPECT_THAT(Run(input, options, out, &report),
              IsErrorWith(ErrorCode::kInvalidArgument, "--max-iterations"));
  options.max_iterations = 0;
  options.within = "nope";
  EXPECT_THAT(Run(input, options, out, &report),
              IsErrorWith(ErrorCode::kInvalidArgument, "'nope'"));
  options.within.clear();
  // A CSV has no CRS to measure from.
  options.area_crs = "EPSG:6933";
  EXPECT_THAT(Run(input, options, out, &report), IsErrorWith(ErrorCode::kInvalidArgument, "CRS"));
  options.area_crs.clear();
  RunnerOptions sharded = Options();
  sharded.shard = Shard{0, 2};
  EXPECT_THAT(Run(input, options, out, &report, sharded),
              IsErrorWith(ErrorCode::kInvalidArgument, "--shard"));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_THAT(ParseMergeInto("smallest-area"),
              IsErrorWith(ErrorCode::kInvalidArgument, "largest-area"));
  EXPECT_EQ(MergeIntoName(ParseMergeInto("largest-area").value()), "largest-area");
}

TEST_F(EliminateTest, NonPolygonsAreFeatureErrors) {
  const std::string input = WriteCsv(
      "in.csv", {"1 a 1 POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))", "2 a 1 LINESTRING (10 0, 10 10)",
                 "3 a 1 POLYGON ((10 0, 11 0, 11 10, 10 10, 10 0))"});
  const std::string out = (dir_ / "o.csv").string();
  EliminateOptions options;
  options.area_below = 15;
  EliminateReport report;
  RunSummary summary;
  // Skipped (the default): recorded as a reject, the rest goes on.
  ASSERT_OK(Run(input, options, out, &report, Options(), &summary));
  EXPECT_EQ(summary.totals.rows_rejected, 1);
  EXPECT_EQ(report.merged, 1);
  ASSERT_EQ(ReadCsvRows(out).size(), 1u);
  EXPECT_NE(FileText(summary.rejects_path).find("not polygonal"), std::string::npos);
  RunnerOptions stop = Options();
  stop.on_error = FeatureErrorPolicy::kStop;
  fs::remove(out);
  EXPECT_THAT(Run(input, options, out, &report, stop),
              IsErrorWith(ErrorCode::kGeometryError, "LineString is not polygonal"));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(EliminateTest, FeaturesBeyondTheMemoryShareAreRefused) {
  std::vector<std::string> lines;
  for (int i = 0; i < 4000; ++i) {
    lines.push_back(std::to_string(i) + " a 1 POLYGON ((" + std::to_string(i) + " 0, " +
                    std::to_string(i + 1) + " 0, " + std::to_string(i + 1) + " 1, " +
                    std::to_string(i) + " 1, " + std::to_string(i) + " 0))");
  }
  const std::string input = WriteCsv("big.csv", lines);
  RunnerOptions runner = Options(256);
  runner.memory_bytes = 1 << 20;
  EliminateOptions options;
  options.area_below = 2;
  EliminateReport report;
  EXPECT_THAT(Run(input, options, (dir_ / "o.csv").string(), &report, runner),
              IsErrorWith(ErrorCode::kNotImplemented, "--memory"));
  EXPECT_FALSE(fs::exists(dir_ / "o.csv"));
}

TEST_F(EliminateTest, OverlapOfMergedPolygonsIsReportedNotLost) {
  // Not a coverage: the small rectangle 2 overlaps square 1 by 1 and shares its bottom edge
  // from x 9 to 10 with it. Merged, the overlap counts once: area out 101 = 102 - 1.
  const std::string input = WriteCsv("in.csv", {"1 a 1 POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))",
                                                "2 a 1 POLYGON ((9 0, 11 0, 11 1, 9 1, 9 0))"});
  EliminateOptions options;
  options.area_below = 5;
  const std::string out = (dir_ / "o.csv").string();
  EliminateReport report;
  ASSERT_OK(Run(input, options, out, &report));
  EXPECT_EQ(report.merged, 1);
  EXPECT_DOUBLE_EQ(report.area_in, 102);
  EXPECT_DOUBLE_EQ(report.area_out, 101);
  EXPECT_DOUBLE_EQ(report.overlap_area, 1);
  EXPECT_NE(FormatEliminateReport(report).find("not a coverage"), std::string::npos);
  const auto rows = ReadCsvRows(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_LE(
      SymDiffArea(rows[0].at("geometry"), "POLYGON ((0 0, 11 0, 11 1, 10 1, 10 10, 0 10, 0 0))"),
      1e-12);
}

TEST_F(EliminateTest, StopEndsALongRunWithinTwoSeconds) {
  // 40,000 jittered cells, a quarter below the threshold: measuring their borders alone takes
  // seconds in a debug build.
  const std::vector<Cell> cells = JitteredGrid(200, 7);
  std::vector<std::string> lines;
  lines.reserve(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    lines.push_back(std::to_string(i) + " c 1 " + cells[i].wkt);
  }
  const std::string input = WriteCsv("long.csv", lines);
  std::stop_source stop;
  env_.stop = stop.get_token();
  EliminateOptions options;
  options.area_below = 0.75;
  EliminateReport report;
  Status st;
  const std::string out = (dir_ / "o.csv").string();
  std::thread run([&] { st = Run(input, options, out, &report, Options(1024)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto stopped = std::chrono::steady_clock::now();
  stop.request_stop();
  run.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  EXPECT_THAT(st, IsError(ErrorCode::kCancelled));
  EXPECT_LT(seconds, 2.0);
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace geolake::ops
