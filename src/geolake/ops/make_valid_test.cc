// make-valid on the runner: the cases of tests/cases/ops/make_valid (README.md there), each run
// with GEOS on the whole and with the ring-by-ring repair forced; valid rows must come out byte
// for byte, repaired rows equal to GEOS's own whole-geometry make-valid (computed here by one
// GEOSMakeValidWithParams call, geo::GeosMakeValid, with the case's method).
#include "geolake/ops/make_valid.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/geos.h"
#include "geolake/ops/op_test_util.h"
#include "geolake/table/catalog.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsErrorWith;
using ::testing::HasSubstr;

struct MakeValidCase {
  std::string name;
  std::string method = "linework";
  bool keep_collapsed = false;
  std::vector<std::pair<std::string, std::string>> input;  // id, WKT ("NULL": none)
  std::map<std::string, std::string> expect;               // id -> valid|repaired|...
  std::optional<std::int64_t> parts_dropped;
};

MakeValidCase ParseCase(const fs::path& path) {
  MakeValidCase c;
  c.name = path.stem().string();
  std::ifstream in(path);
  std::string line;
  std::string section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("method:")) {
      c.method = line.substr(line.find(':') + 2);
    } else if (line.starts_with("keep_collapsed:")) {
      c.keep_collapsed = line.substr(line.find(':') + 2) == "true";
    } else if (line.starts_with("parts_dropped:")) {
      c.parts_dropped = std::stoll(line.substr(line.find(':') + 2));
    } else if (line == "input:" || line == "expect:") {
      section = line.substr(0, line.size() - 1);
    } else {
      const std::size_t space = line.find(' ');
      const std::string id = line.substr(0, space);
      const std::string rest = line.substr(space + 1);
      if (section == "input") c.input.emplace_back(id, rest);
      if (section == "expect") c.expect[id] = rest;
    }
  }
  return c;
}

// Every row of a source or file: id -> WKB (nullopt for no geometry), read by the runner's own
// Input (so the input's bytes are the ones the operation received).
class Collect final : public Input::Visitor {
 public:
  Status Batch(const InputUnit&, geoparquet::FeatureBatch batch) override {
    std::size_t id_col = 0;
    for (std::size_t i = 0; i < batch.fields.size(); ++i) {
      if (batch.fields[i].name == "id") id_col = i;
    }
    const geoparquet::Column& col = batch.columns[id_col];
    for (std::size_t r = 0; r < static_cast<std::size_t>(batch.num_rows()); ++r) {
      const std::string id = col.type == geoparquet::FieldType::kInt64
                                 ? std::to_string(col.ints[r])
                                 : std::string(col.StringAt(r));
      if (batch.geometry_valid[r] == 0) {
        rows[id] = std::nullopt;
      } else {
        const auto g = batch.GeometryAt(r);
        rows[id] = std::string(reinterpret_cast<const char*>(g.data()), g.size());
      }
    }
    return Status::OK();
  }
  Status UnitEnd(const InputUnit&) override { return Status::OK(); }
  std::map<std::string, std::optional<std::string>> rows;
};

class MakeValidOpTest : public OpTestBase {
 protected:
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

  std::map<std::string, std::optional<std::string>> ReadRows(const std::string& path) {
    auto input = Input::Open(env_, ResolveInput(path).value());
    EXPECT_OK(input);
    Collect collect;
    if (input.ok()) {
      EXPECT_OK((*input)->Read(Input::ReadOptions{}, pool_.get(), &collect, {}));
    }
    return collect.rows;
  }

  RunnerOptions Options() const {
    RunnerOptions options;
    options.memory_bytes = 64 << 20;
    options.batch_rows = 2;  // several tasks even for a case's few rows
    return options;
  }

  // GEOS's whole-geometry make-valid of `wkb`, and its polygonal part unless keep_collapsed.
  geo::Geometry Expected(const std::string& wkb, geo::MakeValidMethod method, bool keep_collapsed,
                         std::int64_t* dropped) {
    geo::Geometry in = geo::Geometry::FromWkb(*geo_, wkb).value();
    geo::Geometry fixed = geo::GeosMakeValid(in, {method, true}).value();
    if (keep_collapsed || !geo::IsPolygonal(in).value()) return fixed;
    return geo::PolygonalPart(fixed, dropped).value();
  }

  // `ours` covers the same points as `expected` and is valid, of the same dimension.
  void ExpectSameAsGeos(const std::string& ours_wkb, const geo::Geometry& expected,
                        const std::string& label) {
    ASSERT_OK_AND_ASSIGN(geo::Geometry ours, geo::Geometry::FromWkb(*geo_, ours_wkb));
    EXPECT_TRUE(ours.IsValid().value()) << label << ": " << ours.ToWkt().value();
    const double area = expected.Area().value();
    EXPECT_NEAR(ours.Area().value(), area, 1e-9 * std::max(area, 1.0)) << label;
    EXPECT_NEAR(ours.Length().value(), expected.Length().value(),
                1e-9 * std::max(expected.Length().value(), 1.0))
        << label;
    // The symmetric difference's area: the polygonal parts of both must coincide.
    std::int64_t ignored = 0;
    geo::Geometry pa = geo::PolygonalPart(ours, &ignored).value();
    geo::Geometry pb = geo::PolygonalPart(expected, &ignored).value();
    const double sym =
        pa.Union(pb).value().Area().value() - pa.Intersection(pb).value().Area().value();
    EXPECT_LE(std::abs(sym), 1e-9 * std::max(area, 1.0))
        << label << ": ours " << ours.ToWkt().value() << " GEOS " << expected.ToWkt().value();
  }
};

TEST_F(MakeValidOpTest, CasesEqualGeosWholeGeometryMakeValid) {
  const fs::path cases = fs::path(::geolake::testing::SourceDir()) / "tests/cases/ops/make_valid";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".case") continue;
    const MakeValidCase c = ParseCase(entry.path());
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.input.empty());
    ASSERT_EQ(c.expect.size(), c.input.size());
    const std::string source = WriteCsv(c.name + ".csv", c.input);
    const auto in_rows = ReadRows(source);
    for (const std::int64_t ring_level : {std::int64_t{20000}, std::int64_t{0}}) {
      SCOPED_TRACE(ring_level == 0 ? "ring by ring" : "default");
      MakeValidOptions options;
      ASSERT_OK_AND_ASSIGN(options.method, geo::ParseMakeValidMethod(c.method));
      options.keep_collapsed = c.keep_collapsed;
      options.ring_level_min_vertices = ring_level;
      const std::string out =
          (dir_ / (c.name + "_" + std::to_string(ring_level) + ".parquet")).string();
      RunSummary summary;
      MakeValidReport report;
      ASSERT_OK(RunMakeValid(env_, ResolveInput(source).value(), options, ParseOutput(out).value(),
                             Options(), &summary, &report));
      const auto out_rows = ReadRows(out);
      std::int64_t valid = 0, repaired = 0, collapsed = 0, dropped = 0;
      for (const auto& [id, kind] : c.expect) {
        SCOPED_TRACE("row " + id);
        ASSERT_TRUE(in_rows.count(id));
        if (kind == "collapsed") {
          ++repaired;
          ++collapsed;
          EXPECT_FALSE(out_rows.count(id));
          Expected(*in_rows.at(id), options.method, c.keep_collapsed, &dropped);
          continue;
        }
        ASSERT_TRUE(out_rows.count(id));
        if (kind == "null") {
          EXPECT_FALSE(out_rows.at(id).has_value());
          continue;
        }
        ASSERT_TRUE(out_rows.at(id).has_value());
        if (kind == "valid") {
          ++valid;
          EXPECT_EQ(*out_rows.at(id), *in_rows.at(id)) << "not passed through byte for byte";
          continue;
        }
        ASSERT_EQ(kind, "repaired");
        ++repaired;
        EXPECT_NE(*out_rows.at(id), *in_rows.at(id));
        const geo::Geometry expected =
            Expected(*in_rows.at(id), options.method, c.keep_collapsed, &dropped);
        ExpectSameAsGeos(*out_rows.at(id), expected, c.name + " row " + id);
      }
      EXPECT_EQ(report.rows_valid, valid);
      EXPECT_EQ(report.rows_repaired, repaired);
      EXPECT_EQ(report.rows_collapsed, collapsed);
      EXPECT_EQ(report.parts_dropped, dropped);
      if (c.parts_dropped) {
        EXPECT_EQ(report.parts_dropped, *c.parts_dropped);
      }
      EXPECT_EQ(summary.invariant.size(), 2u);
      EXPECT_THAT(FormatMakeValidReport(report), HasSubstr("make-valid (" + c.method));
    }
    ++ran;
  }
  EXPECT_GE(ran, 8);
}

TEST_F(MakeValidOpTest, ParametersGoIntoTheResumeKey) {
  const std::string source = WriteCsv("in.csv", {{"1", "POLYGON ((0 0, 10 10, 10 0, 0 10, 0 0))"}});
  RunSummary linework, structure;
  MakeValidOptions options;
  ASSERT_OK(RunMakeValid(env_, ResolveInput(source).value(), options,
                         ParseOutput((dir_ / "a.geojsonl").string()).value(), Options(), &linework,
                         nullptr));
  options.method = geo::MakeValidMethod::kStructure;
  ASSERT_OK(RunMakeValid(env_, ResolveInput(source).value(), options,
                         ParseOutput((dir_ / "b.geojsonl").string()).value(), Options(), &structure,
                         nullptr));
  EXPECT_NE(linework.run_key, structure.run_key);
}

TEST_F(MakeValidOpTest, RejectsABadMethodAndThreshold) {
  EXPECT_THAT(geo::ParseMakeValidMethod("buffer"),
              IsErrorWith(ErrorCode::kInvalidArgument, "linework or structure"));
  MakeValidOptions options;
  options.ring_level_min_vertices = -1;
  RunSummary summary;
  EXPECT_THAT(RunMakeValid(env_, ResolveInput(WriteCsv("in.csv", {{"1", "POINT (0 0)"}})).value(),
                           options, ParseOutput((dir_ / "o.geojsonl").string()).value(), Options(),
                           &summary, nullptr),
              IsErrorWith(ErrorCode::kInvalidArgument, "threshold"));
}

}  // namespace
}  // namespace geolake::ops
