#include "geolake/ops/dissolve.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/geos.h"
#include "geolake/ops/make_valid.h"
#include "geolake/ops/op_test_util.h"
#include "geolake/table/catalog.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// One tests/cases/ops/dissolve/*.case file (README.md there gives the format).
struct DissolveCase {
  std::string name;
  std::string by;
  std::vector<std::string> aggregates;
  double precision = 0;
  int fallbacks = -1;    // -1: not checked
  int edge_pieces = -1;  // -1: not checked
  bool touching = false;
  std::string tile_column;
  std::string tile_grid;
  std::vector<std::string> input;  // "ID CLS VAL WKT"
  struct Row {
    std::string key;
    double area = 0;
    std::map<std::string, std::string> values;
    std::string wkt;  // "EMPTY" for a null geometry
  };
  std::vector<Row> expect;
};

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

DissolveCase ParseCase(const fs::path& path) {
  DissolveCase c;
  c.name = path.stem().string();
  std::ifstream in(path);
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string rest = line.substr(line.find(':') + 1);
    if (line.starts_with("by:")) {
      c.by = rest.substr(1);
    } else if (line.starts_with("aggregate:")) {
      c.aggregates = Split(rest.substr(1), ',');
    } else if (line.starts_with("precision:")) {
      c.precision = std::stod(rest);
    } else if (line.starts_with("touching:")) {
      c.touching = rest == " yes";
    } else if (line.starts_with("edge-pieces:")) {
      c.edge_pieces = std::stoi(rest);
    } else if (line.starts_with("tile-grid:")) {
      c.tile_grid = rest.substr(1);
    } else if (line.starts_with("tile-column:")) {
      c.tile_column = rest.substr(1);
    } else if (line.starts_with("fallbacks:")) {
      c.fallbacks = std::stoi(rest);
    } else if (line == "input:" || line == "expect:") {
      section = line;
    } else if (section == "input:") {
      c.input.push_back(line);
    } else if (section == "expect:") {
      DissolveCase::Row row;
      const std::size_t bar = line.find(" | ");
      row.wkt = line.substr(bar + 3);
      const std::vector<std::string> words = Split(line.substr(0, bar), ' ');
      row.key = words.at(0);
      row.area = std::stod(words.at(1));
      for (std::size_t i = 2; i < words.size(); ++i) {
        const std::size_t eq = words[i].find('=');
        row.values[words[i].substr(0, eq)] = words[i].substr(eq + 1);
      }
      c.expect.push_back(std::move(row));
    }
  }
  return c;
}

class DissolveTest : public OpTestBase {
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

  RunnerOptions Options() const {
    RunnerOptions options;
    options.memory_bytes = 64 << 20;
    options.batch_rows = 3;  // several tasks even for a case's few rows
    options.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
    return options;
  }

  // A dissolve of `input` at --memory `memory` into dir_/NAME.csv, its rows as sorted text
  // (passes write each pass's groups in order, one pass all of them).
  Result<std::vector<std::string>> SortedRows(const std::string& input,
                                              const DissolveOptions& options, std::int64_t memory,
                                              const std::string& name, DissolveReport* report) {
    RunnerOptions runner = Options();
    runner.memory_bytes = memory;
    runner.batch_rows = 256;
    const std::string out = (dir_ / (name + ".csv")).string();
    RunSummary summary;
    GEOLAKE_RETURN_NOT_OK(RunDissolve(env_, ResolveInput(input).value(), options,
                                      ParseOutput(out).value(), runner, &summary, report));
    std::vector<std::string> rows;
    for (const auto& row : ReadCsvRows(out)) {
      std::string text;
      for (const auto& [column, value] : row) text += column + "=" + value + ";";
      rows.push_back(text);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // The rows of dir_/NAME.csv (as SortedRows writes them): each row's other columns as text,
  // to its geometry's WKT.
  std::map<std::string, std::string> RowsByKey(const std::string& name) {
    std::map<std::string, std::string> rows;
    for (auto row : ReadCsvRows((dir_ / (name + ".csv")).string())) {
      const std::string wkt = row.at("geometry");
      row.erase("geometry");
      std::string key;
      for (const auto& [column, value] : row) key += column + "=" + value + ";";
      EXPECT_TRUE(rows.emplace(key, wkt).second) << key;
    }
    return rows;
  }

  // The outputs NAME and WANT have the same rows, their geometries equal up to a symmetric
  // difference of 1e-9 of their area (a union in another order gives other vertex orders).
  void ExpectSameGroups(const std::string& name, const std::string& want) {
    const std::map<std::string, std::string> got = RowsByKey(name);
    const std::map<std::string, std::string> expected = RowsByKey(want);
    ASSERT_EQ(got.size(), expected.size());
    ASSERT_FALSE(got.empty());
    for (auto g = got.begin(), e = expected.begin(); g != got.end(); ++g, ++e) {
      ASSERT_EQ(g->first, e->first);
      const double area = geo::Geometry::FromWkt(*geo_, e->second).value().Area().value();
      EXPECT_LE(SymDiffArea(g->second, e->second), 1e-9 * area) << g->first;
    }
  }

  // Area of the symmetric difference of two WKT geometries.
  double SymDiffArea(const std::string& a, const std::string& b) {
    geo::Geometry ga = geo::Geometry::FromWkt(*geo_, a).value();
    geo::Geometry gb = geo::Geometry::FromWkt(*geo_, b).value();
    const double u = ga.Union(gb).value().Area().value();
    const double i = ga.Intersection(gb).value().Area().value();
    return u - i;
  }
};

TEST_F(DissolveTest, CasesGiveTheirGroupsEveryWay) {
  const fs::path cases = fs::path(::geolake::testing::SourceDir()) / "tests/cases/ops/dissolve";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".case") continue;
    const DissolveCase c = ParseCase(entry.path());
    ASSERT_FALSE(c.expect.empty()) << c.name;
    const std::string input = WriteCsv(c.name + ".csv", c.input);
    struct Mode {
      const char* name;
      bool coverage;
      std::int64_t leaf_pieces;
    };
    for (const Mode mode : {Mode{"default", true, 0}, Mode{"unary only", false, 0},
                            Mode{"one geometry per leaf", true, 1}}) {
      SCOPED_TRACE(c.name + " (" + mode.name + ")");
      DissolveOptions options;
      if (!c.by.empty()) options.by = {c.by};
      for (const std::string& a : c.aggregates) {
        ASSERT_OK_AND_ASSIGN(DissolveAggregate agg, ParseDissolveAggregate(a));
        options.aggregates.push_back(agg);
      }
      options.precision = c.precision;
      options.touching = c.touching;
      options.tile_column = c.tile_column;
      if (!c.tile_grid.empty()) options.tile_grid = ParseTileGrid(c.tile_grid).value();
      options.coverage = mode.coverage;
      options.leaf_pieces = mode.leaf_pieces;
      const std::string out = (dir_ / (c.name + "_" + std::to_string(ran) + ".csv")).string();
      RunSummary summary;
      DissolveReport report;
      ASSERT_OK(RunDissolve(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                            Options(), &summary, &report));
      EXPECT_EQ(report.groups, static_cast<std::int64_t>(c.expect.size()));
      EXPECT_EQ(report.rows, static_cast<std::int64_t>(c.input.size()));
      if (c.fallbacks >= 0 && mode.coverage && mode.leaf_pieces == 0) {
        EXPECT_EQ(report.coverage_fallbacks, c.fallbacks);
      }
      if (!mode.coverage) {
        EXPECT_EQ(report.coverage_fallbacks, 0);
      }
      if (c.edge_pieces >= 0) {
        EXPECT_EQ(report.edge_pieces, c.edge_pieces);
      }
      const auto rows = ReadCsvRows(out);
      ASSERT_EQ(rows.size(), c.expect.size()) << [&] {
        std::ifstream text(out);
        return std::string(std::istreambuf_iterator<char>(text), {});
      }();
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const DissolveCase::Row& want = c.expect[i];
        const auto& got = rows[i];
        SCOPED_TRACE("row " + std::to_string(i) + " key " + want.key);
        if (!c.by.empty()) {
          EXPECT_EQ(got.at(c.by), want.key == "-" ? "" : want.key);
        }
        for (const auto& [name, value] : want.values) {
          ASSERT_TRUE(got.contains(name)) << name;
          if (value.find_first_not_of("0123456789.-") == std::string::npos &&
              !got.at(name).empty()) {
            EXPECT_DOUBLE_EQ(std::stod(got.at(name)), std::stod(value)) << name;
          } else {
            EXPECT_EQ(got.at(name), value) << name;
          }
        }
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
  EXPECT_GE(ran, 3 * 12);
}

// A grid of n x n unit squares with shared vertices (a coverage), ids row by row; `shift`
// moves every other square right by a fraction, so that neighbours overlap (no coverage).
std::vector<std::string> Grid(int n, const std::string& cls, double shift = 0) {
  std::vector<std::string> lines;
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const double x0 = x + ((x + y) % 2 == 1 ? shift : 0);
      std::ostringstream wkt;
      wkt.precision(17);
      wkt << "POLYGON ((" << x0 << " " << y << ", " << x0 + 1 << " " << y << ", " << x0 + 1 << " "
          << y + 1 << ", " << x0 << " " << y + 1 << ", " << x0 << " " << y << "))";
      lines.push_back(std::to_string(y * n + x) + " " + cls + " 1 " + wkt.str());
    }
  }
  return lines;
}

TEST_F(DissolveTest, OneHugeGroupUsesEveryWorker) {
  // 3,600 squares in one group: 57 leaves of 64 and their merges spread over both workers.
  for (const double shift : {0.0, 0.25}) {
    SCOPED_TRACE(shift == 0 ? "coverage" : "overlapping");
    const std::string input = WriteCsv("grid.csv", Grid(60, "a", shift));
    DissolveOptions options;
    options.aggregates = {ParseDissolveAggregate("count").value()};
    const std::string out = (dir_ / "grid_out.csv").string();
    RunSummary summary;
    DissolveReport report;
    RunnerOptions runner = Options();
    runner.batch_rows = 256;
    ASSERT_OK(RunDissolve(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                          runner, &summary, &report));
    EXPECT_EQ(report.groups, 1);
    EXPECT_EQ(report.largest_group, 3600);
    EXPECT_EQ(report.leaves, 57);
    EXPECT_EQ(report.merges, 56);
    EXPECT_EQ(report.coverage_groups, shift == 0 ? 1 : 0);
    EXPECT_EQ(report.coverage_fallbacks, shift == 0 ? 0 : 1);
    ASSERT_EQ(report.worker_busy_seconds.size(), 2u);
    EXPECT_GT(report.worker_busy_seconds[0], 0);
    EXPECT_GT(report.worker_busy_seconds[1], 0);
    const auto rows = ReadCsvRows(out);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("count"), "3600");
    geo::Geometry g = geo::Geometry::FromWkt(*geo_, rows[0].at("geometry")).value();
    EXPECT_TRUE(g.IsValid().value());
    // The expected area, row by row: the union of the row's x intervals (sorted by start).
    double area = 0;
    for (int y = 0; y < 60; ++y) {
      double end = -1;
      for (int x = 0; x < 60; ++x) {
        const double x0 = x + ((x + y) % 2 == 1 ? shift : 0);
        area += std::max(0.0, x0 + 1 - std::max(x0, end));
        end = std::max(end, x0 + 1);
      }
    }
    EXPECT_NEAR(g.Area().value(), area, 1e-9 * area);
    // The metrics carry the busy time per worker.
    const MetricsSnapshot snapshot = metrics_.Snapshot();
    EXPECT_NE(snapshot.ToJson().find("busy_ms_worker_1"), std::string::npos);
  }
}

TEST_F(DissolveTest, TouchingGivesTheComponentsOfTheIntersectsGraph) {
  // 1,500 random axis-aligned rectangles in two groups: two rectangles intersect exactly when
  // their closed boxes do, so a brute-force pass over all pairs gives the components apart.
  std::mt19937_64 random(20261202);
  std::uniform_real_distribution<double> corner(0, 100), side(0.2, 3);
  struct Box {
    double x0, y0, x1, y1;
    int cls;
  };
  std::vector<Box> boxes;
  std::vector<std::string> lines;
  for (int i = 0; i < 1500; ++i) {
    // Quarter-unit coordinates: exact in binary, and many boxes touch along an edge or corner.
    const double x0 = std::round(corner(random) * 4) / 4;
    const double y0 = std::round(corner(random) * 4) / 4;
    const double x1 = x0 + std::round(side(random) * 4) / 4;
    const double y1 = y0 + std::round(side(random) * 4) / 4;
    const int cls = i % 2;
    boxes.push_back({x0, y0, x1, y1, cls});
    std::ostringstream wkt;
    wkt << i << " " << (cls == 0 ? "even" : "odd") << " 1 POLYGON ((" << x0 << " " << y0 << ", "
        << x1 << " " << y0 << ", " << x1 << " " << y1 << ", " << x0 << " " << y1 << ", " << x0
        << " " << y0 << "))";
    lines.push_back(wkt.str());
  }
  std::vector<bool> seen(boxes.size(), false);
  std::map<std::pair<int, int>, int> sizes;  // (cls, smallest id) -> members
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (seen[i]) continue;
    std::vector<std::size_t> stack{i};
    seen[i] = true;
    while (!stack.empty()) {
      const std::size_t a = stack.back();
      stack.pop_back();
      ++sizes[{boxes[i].cls, static_cast<int>(i)}];
      for (std::size_t b = 0; b < boxes.size(); ++b) {
        if (seen[b] || boxes[b].cls != boxes[a].cls) continue;
        if (boxes[a].x0 <= boxes[b].x1 && boxes[b].x0 <= boxes[a].x1 &&
            boxes[a].y0 <= boxes[b].y1 && boxes[b].y0 <= boxes[a].y1) {
          seen[b] = true;
          stack.push_back(b);
        }
      }
    }
  }
  const std::string input = WriteCsv("boxes.csv", lines);
  DissolveOptions options;
  options.by = {"cls"};
  options.touching = true;
  options.aggregates = {ParseDissolveAggregate("count").value(),
                        ParseDissolveAggregate("min:id").value()};
  options.leaf_pieces = 8;
  const std::string out = (dir_ / "boxes_out.csv").string();
  RunSummary summary;
  DissolveReport report;
  RunnerOptions runner = Options();
  runner.batch_rows = 100;
  ASSERT_OK(RunDissolve(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                        runner, &summary, &report));
  EXPECT_EQ(report.groups, static_cast<std::int64_t>(sizes.size()));
  EXPECT_GT(report.pairs, 0);
  EXPECT_GE(report.candidates, report.pairs);
  std::map<std::pair<int, int>, int> got;
  std::string last_cls;
  int last_min = -1;
  for (const auto& row : ReadCsvRows(out)) {
    const int cls = row.at("cls") == "even" ? 0 : 1;
    const int min_id = std::stoi(row.at("min_id"));
    got[{cls, min_id}] = std::stoi(row.at("count"));
    // Ordered by the key, then by each component's earliest row (here its smallest id).
    if (row.at("cls") == last_cls) {
      EXPECT_GT(min_id, last_min);
    }
    last_cls = row.at("cls");
    last_min = min_id;
    geo::Geometry g = geo::Geometry::FromWkt(*geo_, row.at("geometry")).value();
    EXPECT_TRUE(g.IsValid().value());
  }
  EXPECT_EQ(got, sizes);
}

TEST_F(DissolveTest, TileEdgesGiveBackPolygonsCutByATileGrid) {
  // Six star-shaped polygons in two groups, apart from each other, cut by a grid of 3 x 3
  // tiles (GEOS intersection with each tile's rectangle: a piece per polygon and tile, a
  // MultiPolygon where spikes fall apart). The tile-edge dissolve joins the pieces back: each
  // polygon comes back whole, as one feature, and the result equals a global --touching
  // dissolve of the pieces.
  std::mt19937_64 random(20261204);
  std::uniform_real_distribution<double> radius(2.5, 6);
  struct Star {
    std::string wkt;
    std::string cls;
  };
  std::vector<Star> stars;
  for (int k = 0; k < 6; ++k) {
    const double cx = 15.0 * (k % 3) + 7, cy = 15.0 * (k / 3) + 7;
    std::ostringstream wkt;
    wkt.precision(17);
    wkt << "POLYGON ((";
    constexpr int kPoints = 24;
    std::string first;
    for (int p = 0; p < kPoints; ++p) {
      const double angle = 2 * M_PI * p / kPoints;
      const double r = radius(random);
      std::ostringstream point;
      point.precision(17);
      point << cx + r * std::cos(angle) << " " << cy + r * std::sin(angle);
      if (p == 0) first = point.str();
      wkt << point.str() << ", ";
    }
    wkt << first << "))";
    stars.push_back({wkt.str(), k % 2 == 0 ? "even" : "odd"});
  }
  std::vector<std::string> lines;
  int pieces = 0;
  for (const Star& star : stars) {
    geo::Geometry g = geo::Geometry::FromWkt(*geo_, star.wkt).value();
    for (int ty = 0; ty < 12; ++ty) {
      for (int tx = 0; tx < 15; ++tx) {
        std::ostringstream rect;
        rect << "POLYGON ((" << tx * 3 << " " << ty * 3 << ", " << tx * 3 + 3 << " " << ty * 3
             << ", " << tx * 3 + 3 << " " << ty * 3 + 3 << ", " << tx * 3 << " " << ty * 3 + 3
             << ", " << tx * 3 << " " << ty * 3 << "))";
        geo::Geometry cut =
            g.Intersection(geo::Geometry::FromWkt(*geo_, rect.str()).value()).value();
        if (cut.IsEmpty().value() || cut.Area().value() == 0) continue;
        lines.push_back(std::to_string(pieces++) + " " + star.cls + " " +
                        std::to_string(ty * 100 + tx) + " " + cut.ToWkt(17).value());
      }
    }
  }
  ASSERT_GT(pieces, 40);
  const std::string input = WriteCsv("tiles.csv", lines);
  auto run = [&](DissolveOptions options, const std::string& name) {
    options.by = {"cls"};
    options.aggregates = {ParseDissolveAggregate("count").value()};
    const std::string out = (dir_ / name).string();
    RunSummary summary;
    DissolveReport report;
    EXPECT_OK(RunDissolve(env_, ResolveInput(input).value(), options, ParseOutput(out).value(),
                          Options(), &summary, &report));
    return std::make_pair(report, ReadCsvRows(out));
  };
  DissolveOptions tiled;
  tiled.tile_column = "val";
  const auto [report, rows] = run(tiled, "tiled.csv");
  DissolveOptions touching;
  touching.touching = true;
  const auto [touching_report, touching_rows] = run(touching, "touching.csv");
  EXPECT_GT(report.tiles, 20);
  EXPECT_GT(report.pairs, 0);
  EXPECT_LE(report.edge_pieces, pieces);
  ASSERT_EQ(rows.size(), stars.size());
  ASSERT_EQ(touching_rows.size(), stars.size());
  std::int64_t counted = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    counted += std::stoll(rows[i].at("count"));
    EXPECT_EQ(rows[i].at("count"), touching_rows[i].at("count"));
    geo::Geometry g = geo::Geometry::FromWkt(*geo_, rows[i].at("geometry")).value();
    EXPECT_TRUE(g.IsValid().value());
    EXPECT_EQ(g.TypeName().value(), "Polygon");
    const double area = g.Area().value();
    EXPECT_LE(SymDiffArea(rows[i].at("geometry"), touching_rows[i].at("geometry")), 1e-9 * area);
    // The star it came from: the one whose area is within 1e-9.
    int matched = 0;
    for (const Star& star : stars) {
      if (star.cls != rows[i].at("cls")) continue;
      if (SymDiffArea(rows[i].at("geometry"), star.wkt) <= 1e-9 * area) ++matched;
    }
    EXPECT_EQ(matched, 1) << rows[i].at("geometry");
  }
  EXPECT_EQ(counted, pieces);
  // The cutting grid as --tile-grid: the same features, no more pieces paired.
  DissolveOptions gridded = tiled;
  gridded.tile_grid = TileGrid{3, 0, 0};
  const auto [grid_report, grid_rows] = run(gridded, "gridded.csv");
  EXPECT_LE(grid_report.edge_pieces, report.edge_pieces);
  EXPECT_EQ(grid_report.pairs, report.pairs);
  ASSERT_EQ(grid_rows.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(grid_rows[i].at("count"), rows[i].at("count"));
    EXPECT_EQ(grid_rows[i].at("geometry"), rows[i].at("geometry"));
  }
}

TEST_F(DissolveTest, BadOptionsAreInvalidArguments) {
  const std::string input = WriteCsv("in.csv", Grid(2, "a"));
  const OutputSpec out = ParseOutput((dir_ / "o.csv").string()).value();
  auto run = [&](DissolveOptions options, RunnerOptions runner) {
    RunSummary summary;
    DissolveReport report;
    return RunDissolve(env_, ResolveInput(input).value(), options, out, runner, &summary, &report);
  };
  DissolveOptions unknown;
  unknown.by = {"nope"};
  EXPECT_THAT(run(unknown, Options()), IsErrorWith(ErrorCode::kInvalidArgument, "'nope'"));
  DissolveOptions sum_of_text;
  sum_of_text.aggregates = {ParseDissolveAggregate("sum:cls").value()};
  EXPECT_THAT(run(sum_of_text, Options()), IsErrorWith(ErrorCode::kInvalidArgument, "int64"));
  DissolveOptions missing_column;
  missing_column.aggregates = {ParseDissolveAggregate("max:nope").value()};
  EXPECT_THAT(run(missing_column, Options()), IsError(ErrorCode::kInvalidArgument));
  DissolveOptions twice;
  twice.aggregates = {ParseDissolveAggregate("count").value(),
                      ParseDissolveAggregate("count").value()};
  EXPECT_THAT(run(twice, Options()), IsErrorWith(ErrorCode::kInvalidArgument, "'count'"));
  DissolveOptions negative;
  negative.precision = -1;
  EXPECT_THAT(run(negative, Options()), IsError(ErrorCode::kInvalidArgument));
  negative.precision = std::nan("");
  EXPECT_THAT(run(negative, Options()), IsError(ErrorCode::kInvalidArgument));
  RunnerOptions sharded = Options();
  sharded.shard = Shard{0, 2};
  EXPECT_THAT(run(DissolveOptions{}, sharded), IsErrorWith(ErrorCode::kInvalidArgument, "--shard"));
  DissolveOptions no_tile;
  no_tile.tile_column = "tile";
  EXPECT_THAT(run(no_tile, Options()), IsErrorWith(ErrorCode::kInvalidArgument, "'tile'"));
  DissolveOptions both;
  both.tile_column = "val";
  both.touching = true;
  EXPECT_THAT(run(both, Options()), IsErrorWith(ErrorCode::kInvalidArgument, "--tile-column"));
  DissolveOptions grid_alone;
  grid_alone.tile_grid = TileGrid{10, 0, 0};
  EXPECT_THAT(run(grid_alone, Options()), IsErrorWith(ErrorCode::kInvalidArgument, "--tile-grid"));
  DissolveOptions zero_grid;
  zero_grid.tile_column = "val";
  zero_grid.tile_grid = TileGrid{0, 0, 0};
  EXPECT_THAT(run(zero_grid, Options()), IsErrorWith(ErrorCode::kInvalidArgument, "--tile-grid"));
  for (const char* bad : {"", "0", "-1", "1,2", "1,2,3,4", "x", "1,,2", "nan", "inf"}) {
    EXPECT_THAT(ParseTileGrid(bad), IsErrorWith(ErrorCode::kInvalidArgument, "SIZE")) << bad;
  }
  ASSERT_OK_AND_ASSIGN(TileGrid grid, ParseTileGrid("2.5,-180,-90"));
  EXPECT_EQ(grid.size, 2.5);
  EXPECT_EQ(grid.x0, -180);
  EXPECT_EQ(grid.y0, -90);
  EXPECT_FALSE(fs::exists(dir_ / "o.csv"));

  EXPECT_THAT(ParseDissolveAggregate("median:val"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseDissolveAggregate("sum"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseDissolveAggregate("sum:"), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(DissolveAggregate mean, ParseDissolveAggregate("mean:pop"));
  EXPECT_EQ(DissolveAggregateName(mean), "mean_pop");
}

// Groups over the operation's share of --memory are dissolved in passes, each over the groups
// whose --by values hash to it; every way of grouping gives what one pass gives. Without --by
// there is one group, which passes cannot divide: with --touching, refused, nothing written.
TEST_F(DissolveTest, GroupsBeyondTheMemoryShareAreDissolvedInPasses) {
  // 80 x 80 unit squares (~190 bytes held each, 1.2 MB: over the half of a 1 MiB budget the
  // operation has) in 64 blocks of 10 x 10 (cls), with holes so that --touching finds several
  // components per block, and tiles of 5 x 5 (val) for the tile-edge dissolve.
  std::vector<std::string> lines;
  for (int y = 0; y < 80; ++y) {
    for (int x = 0; x < 80; ++x) {
      if ((x * 7 + y * 3) % 11 == 0) continue;
      std::ostringstream wkt;
      wkt << "POLYGON ((" << x << " " << y << ", " << x + 1 << " " << y << ", " << x + 1 << " "
          << y + 1 << ", " << x << " " << y + 1 << ", " << x << " " << y << "))";
      lines.push_back(std::to_string(y * 80 + x) + " b" + std::to_string(x / 10 * 8 + y / 10) +
                      " " + std::to_string(x / 5 * 100 + y / 5) + " " + wkt.str());
    }
  }
  const std::string input = WriteCsv("big.csv", lines);
  auto run = [&](const DissolveOptions& options, std::int64_t memory, DissolveReport* report) {
    Result<std::vector<std::string>> rows =
        SortedRows(input, options, memory, "o" + std::to_string(memory), report);
    EXPECT_OK(rows.status());
    return rows.ok() ? *rows : std::vector<std::string>{};
  };
  DissolveOptions by;
  by.by = {"cls"};
  by.aggregates = {ParseDissolveAggregate("count").value(),
                   ParseDissolveAggregate("sum:val").value(),
                   ParseDissolveAggregate("first:id").value()};
  DissolveOptions touching = by;
  touching.touching = true;
  DissolveOptions tiles = by;
  tiles.tile_column = "val";
  for (const auto& [name, options] :
       {std::pair{"by", by}, std::pair{"touching", touching}, std::pair{"tile-column", tiles}}) {
    SCOPED_TRACE(name);
    DissolveReport one, passes;
    const std::vector<std::string> expected = run(options, 64 << 20, &one);
    const std::vector<std::string> got = run(options, 1 << 20, &passes);
    EXPECT_EQ(one.passes, 1);
    EXPECT_GE(passes.passes, 3);
    EXPECT_GE(expected.size(), 64u);
    EXPECT_EQ(got, expected);
    EXPECT_EQ(passes.groups, one.groups);
    EXPECT_EQ(passes.pieces, one.pieces);
    EXPECT_LT(passes.piece_bytes, one.piece_bytes);  // the most held at once
  }
  // Components need their pieces apart, so one group (no --by) over the share is refused.
  RunnerOptions runner = Options();
  runner.memory_bytes = 1 << 20;
  RunSummary summary;
  DissolveReport report;
  DissolveOptions all_touching;
  all_touching.touching = true;
  EXPECT_THAT(
      RunDissolve(env_, ResolveInput(input).value(), all_touching,
                  ParseOutput((dir_ / "all.csv").string()).value(), runner, &summary, &report),
      IsErrorWith(ErrorCode::kNotImplemented, "one group (no --by)"));
  EXPECT_FALSE(fs::exists(dir_ / "all.csv"));

  // Into a table, stopped as the first pass writes its rows: a dissolve commits once, at its
  // end, so nothing is committed; run again, the table holds the rows of one run in one pass.
  runner.batch_rows = 256;
  RunnerOptions whole = runner;
  whole.memory_bytes = 64 << 20;
  ASSERT_OK(RunDissolve(env_, ResolveInput(input).value(), by, ParseOutput("d.one").value(), whole,
                        &summary, &report));
  std::stop_source stop;
  OnWriteIO stopping(io_.get(), [&](const std::string& path) {
    if (path.ends_with(".parquet")) stop.request_stop();
  });
  OpEnv env = env_;
  env.io = &stopping;
  env.stop = stop.get_token();
  EXPECT_THAT(RunDissolve(env, ResolveInput(input).value(), by, ParseOutput("d.passes").value(),
                          runner, &summary, &report),
              IsError(ErrorCode::kCancelled));
  EXPECT_EQ(summary.commits, 0);
  ASSERT_OK(RunDissolve(env_, ResolveInput(input).value(), by, ParseOutput("d.passes").value(),
                        runner, &summary, &report));
  EXPECT_GE(report.passes, 3);
  EXPECT_EQ(summary.commits, 1);
  EXPECT_EQ(TableLines(*catalog_, *io_, "d.passes", dir_),
            TableLines(*catalog_, *io_, "d.one", dir_));
}

// Groups of very different sizes (one of 2,000 squares beside 220 of 20): the passes are
// planned from the measured size of every hash bucket of keys, so no pass is over the share
// however the keys hash. A group larger than the share gets a pass of its own and is unioned
// in parts as it is read; with --touching, whose components need its pieces apart, it is
// refused before anything is read twice or written.
TEST_F(DissolveTest, UnevenGroupsArePlannedByTheirMeasuredSize) {
  std::vector<std::string> lines;
  for (int i = 0; i < 6400; ++i) {
    const int x = i % 80, y = i / 80;
    const std::string cls = i < 2000 ? "big" : "s" + std::to_string((i - 2000) / 20);
    std::ostringstream wkt;
    wkt << "POLYGON ((" << x << " " << y << ", " << x + 1 << " " << y << ", " << x + 1 << " "
        << y + 1 << ", " << x << " " << y + 1 << ", " << x << " " << y << "))";
    lines.push_back(std::to_string(i) + " " + cls + " 1 " + wkt.str());
  }
  const std::string input = WriteCsv("uneven.csv", lines);
  DissolveOptions by;
  by.by = {"cls"};
  by.aggregates = {ParseDissolveAggregate("count").value()};
  auto run = [&](std::int64_t memory, DissolveReport* report) {
    return SortedRows(input, by, memory, "u" + std::to_string(memory), report);
  };
  DissolveReport one, passes, refused;
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> expected, run(64 << 20, &one));
  EXPECT_EQ(expected.size(), 221u);
  // 1 MiB: a share of 512 KiB; the big group (~380 KiB) fits only in a pass of its own.
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> got, run(1 << 20, &passes));
  EXPECT_GE(passes.passes, 3);
  EXPECT_EQ(passes.chunk_passes, 0);
  EXPECT_EQ(got, expected);
  // 512 KiB: a share of 256 KiB, less than the big group: its pieces go to passes by spatial
  // chunk, after the passes of the small groups.
  DissolveReport chunked;
  ASSERT_OK(run(512 << 10, &chunked).status());
  EXPECT_GE(chunked.chunk_passes, 3);
  EXPECT_GT(chunked.passes, chunked.chunk_passes);
  EXPECT_EQ(chunked.carried, chunked.chunk_passes - 1);
  EXPECT_LE(chunked.piece_bytes, 256 << 10);
  EXPECT_EQ(chunked.pieces, one.pieces);
  EXPECT_EQ(chunked.groups, one.groups);
  ExpectSameGroups("u" + std::to_string(512 << 10), "u" + std::to_string(64 << 20));
  // With --touching: refused up front.
  DissolveOptions touching = by;
  touching.touching = true;
  EXPECT_THAT(SortedRows(input, touching, 512 << 10, "t", &refused).status(),
              IsErrorWith(ErrorCode::kNotImplemented, "one group (or groups whose --by values"));
  EXPECT_FALSE(fs::exists(dir_ / "t.csv"));
}

// One group (no --by) of 6,400 squares, ~1.2 MB held, at a share of 256 KiB: each pass takes
// the pieces whose box centre lies in one run of cells along a Hilbert curve over the group's
// extent (a spatial chunk of at most half the share), unions them and carries the partial union
// to the last pass, which merges them; the result is the union of one pass in memory, with or
// without overlaps. Squares that do not touch do not shrink when unioned: their partial unions
// outgrow the share and the run is refused, nothing written.
TEST_F(DissolveTest, OneGroupOverTheShareIsDissolvedInSpatialChunks) {
  for (const double side : {1.0, 1.5}) {
    SCOPED_TRACE(side == 1 ? "coverage" : "overlapping");
    std::vector<std::string> lines;
    for (int i = 0; i < 6400; ++i) {
      const int column = i % 80, row = i / 80;
      const double x = column, y = row;
      std::ostringstream wkt;
      wkt << "POLYGON ((" << x << " " << y << ", " << x + side << " " << y << ", " << x + side
          << " " << y + side << ", " << x << " " << y + side << ", " << x << " " << y << "))";
      lines.push_back(std::to_string(i) + " a 1 " + wkt.str());
    }
    const std::string input = WriteCsv("one.csv", lines);
    DissolveOptions options;
    options.aggregates = {ParseDissolveAggregate("count").value(),
                          ParseDissolveAggregate("first:id").value()};
    DissolveReport whole, chunked;
    ASSERT_OK(SortedRows(input, options, 64 << 20, "whole", &whole).status());
    ASSERT_OK(SortedRows(input, options, 512 << 10, "chunked", &chunked).status());
    EXPECT_EQ(whole.passes, 1);
    EXPECT_EQ(whole.chunk_passes, 0);
    EXPECT_GE(chunked.chunk_passes, 8);  // 1.2 MB in chunks of at most 128 KiB
    EXPECT_EQ(chunked.passes, chunked.chunk_passes);
    EXPECT_EQ(chunked.carried, chunked.chunk_passes - 1);
    EXPECT_EQ(chunked.pieces, 6400);
    EXPECT_EQ(chunked.groups, 1);
    EXPECT_GT(whole.piece_bytes, 1 << 20);
    EXPECT_LE(chunked.piece_bytes, 256 << 10);
    EXPECT_LT(chunked.largest_group, 6400);  // the last chunk's pieces and the carried unions
    ExpectSameGroups("chunked", "whole");
    const auto rows = ReadCsvRows((dir_ / "chunked.csv").string());
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("count"), "6400");
    EXPECT_EQ(rows[0].at("first_id"), "0");
    geo::Geometry g = geo::Geometry::FromWkt(*geo_, rows[0].at("geometry")).value();
    EXPECT_TRUE(g.IsValid().value());
    const double area = (79 + side) * (79 + side);
    EXPECT_NEAR(g.Area().value(), area, 1e-9 * area);
  }

  std::vector<std::string> apart;
  for (int i = 0; i < 6400; ++i) {
    const int x = 2 * (i % 80), y = 2 * (i / 80);
    std::ostringstream wkt;
    wkt << "POLYGON ((" << x << " " << y << ", " << x + 1 << " " << y << ", " << x + 1 << " "
        << y + 1 << ", " << x << " " << y + 1 << ", " << x << " " << y << "))";
    apart.push_back(std::to_string(i) + " a 1 " + wkt.str());
  }
  DissolveReport refused;
  EXPECT_THAT(
      SortedRows(WriteCsv("apart.csv", apart), DissolveOptions{}, 512 << 10, "apart_out", &refused)
          .status(),
      IsErrorWith(ErrorCode::kNotImplemented, "share of --memory (256 KiB) in pass"));
  EXPECT_FALSE(fs::exists(dir_ / "apart_out.csv"));
}

// A dissolve in spatial chunks from a table: stopped as one of its chunk passes opens the
// table's data file (after at least one partial union was carried), it ends kCancelled and
// writes nothing; two such dissolves at once on the one executor each give one pass's union.
TEST_F(DissolveTest, ChunkPassesStopCleanlyAndRunBesideEachOther) {
  const std::string source = WriteCsv("grid.csv", Grid(80, "a"));
  RunSummary summary;
  MakeValidReport made;
  ASSERT_OK(RunMakeValid(env_, ResolveInput(source).value(), MakeValidOptions{},
                         ParseOutput("c.grid").value(), Options(), &summary, &made));
  const InputSpec input = ResolveInput("c.grid").value();
  DissolveOptions options;
  options.aggregates = {ParseDissolveAggregate("count").value()};
  RunnerOptions chunked = Options();
  chunked.memory_bytes = 512 << 10;
  chunked.batch_rows = 256;
  auto run = [&](const OpEnv& env, const std::string& name, DissolveReport* report) {
    RunSummary s;
    return RunDissolve(env, input, options, ParseOutput((dir_ / (name + ".csv")).string()).value(),
                       chunked, &s, report);
  };
  RunnerOptions whole_options = Options();
  whole_options.batch_rows = 256;
  DissolveReport whole;
  ASSERT_OK(RunDissolve(env_, input, options, ParseOutput((dir_ / "whole.csv").string()).value(),
                        whole_options, &summary, &whole));
  EXPECT_EQ(whole.chunk_passes, 0);

  // The data-file opens of a whole run in chunks; then a run stopped at the open that starts
  // its last chunk pass but one.
  std::atomic<int> opens{0};
  int stop_at = std::numeric_limits<int>::max();
  std::stop_source stop;
  OnWriteIO counting(
      io_.get(), [](const std::string&) {},
      [&](const std::string& path) {
        if (path.ends_with(".parquet") && opens.fetch_add(1) + 1 == stop_at) stop.request_stop();
      });
  OpEnv env = env_;
  env.io = &counting;
  DissolveReport full;
  ASSERT_OK(run(env, "full", &full));
  ASSERT_GE(full.chunk_passes, 8);
  ASSERT_EQ(full.passes, full.chunk_passes);
  ExpectSameGroups("full", "whole");
  const int per_pass = opens.load() / static_cast<int>(full.passes + 2);  // + the two measuring
  ASSERT_GE(per_pass, 1);
  opens = 0;
  stop_at = per_pass * static_cast<int>(full.passes) + 1;  // the last pass but one's first
  env.stop = stop.get_token();
  DissolveReport stopped;
  EXPECT_THAT(run(env, "stopped", &stopped), IsError(ErrorCode::kCancelled));
  EXPECT_GE(stopped.carried, 1);
  EXPECT_LT(stopped.carried, full.carried);
  EXPECT_FALSE(fs::exists(dir_ / "stopped.csv"));

  // Two at once, sharing the executor and the FileIO.
  DissolveReport first, second;
  Status a, b;
  std::thread other([&] { b = run(env_, "second", &second); });
  a = run(env_, "first", &first);
  other.join();
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(first.chunk_passes, full.chunk_passes);
  EXPECT_EQ(second.chunk_passes, full.chunk_passes);
  ExpectSameGroups("first", "whole");
  ExpectSameGroups("second", "whole");
}

TEST_F(DissolveTest, StopEndsALongUnionWithinTwoSeconds) {
  // 40,000 overlapping squares (no coverage): the unary union takes far longer than the stop.
  std::vector<std::string> lines = Grid(200, "a", 0.5);
  const std::string input = WriteCsv("long.csv", lines);
  std::stop_source stop;
  env_.stop = stop.get_token();
  DissolveOptions options;
  options.coverage = false;
  RunSummary summary;
  DissolveReport report;
  Status st;
  std::thread run([&] {
    st = RunDissolve(env_, ResolveInput(input).value(), options,
                     ParseOutput((dir_ / "o.csv").string()).value(), Options(), &summary, &report);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto stopped = std::chrono::steady_clock::now();
  stop.request_stop();
  run.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  EXPECT_THAT(st, IsError(ErrorCode::kCancelled));
  EXPECT_LT(seconds, 2.0);
  EXPECT_FALSE(fs::exists(dir_ / "o.csv"));
}

}  // namespace
}  // namespace geolake::ops
