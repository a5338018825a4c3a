#include "geolake/geo/validity_fast_path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "geolake/geo/geos.h"
#include "geolake/geo/wkb.h"
#include "geolake/geo/wkt.h"

namespace geolake::geo {
namespace {

using Ring = std::vector<std::pair<double, double>>;

void AppendU32(std::string* out, std::uint32_t v) {
  char buf[4];
  std::memcpy(buf, &v, 4);
  out->append(buf, 4);
}

void AppendRing(std::string* out, const Ring& ring) {
  AppendU32(out, static_cast<std::uint32_t>(ring.size()));
  for (const auto& [x, y] : ring) {
    out->append(reinterpret_cast<const char*>(&x), 8);
    out->append(reinterpret_cast<const char*>(&y), 8);
  }
}

// ISO WKB of a polygon with `rings` (the first is the shell); wrapped in a MultiPolygon of one
// when `multi`.
std::string PolygonWkb(const std::vector<Ring>& rings, bool multi = false) {
  std::string out;
  if (multi) {
    out.push_back('\x01');
    AppendU32(&out, 6);
    AppendU32(&out, 1);
  }
  out.push_back('\x01');
  AppendU32(&out, 3);
  AppendU32(&out, static_cast<std::uint32_t>(rings.size()));
  for (const Ring& ring : rings) AppendRing(&out, ring);
  return out;
}

std::string WktOf(const std::string& wkb) {
  auto wkt = WkbToWkt(AsBytes(wkb));
  return wkt.ok() ? *wkt : "<" + wkt.status().ToString() + ">";
}

// GEOS's verdict: parse + isValid; a geometry GEOS cannot even read counts as invalid.
bool GeosValid(GeoContext& ctx, const std::string& wkb) {
  auto geometry = Geometry::FromWkb(ctx, std::string_view(wkb));
  if (!geometry.ok()) return false;
  auto valid = geometry->IsValid();
  EXPECT_TRUE(valid.ok()) << valid.status().ToString();
  return valid.ok() && *valid;
}

struct Tally {
  int cases = 0;
  int geos_valid = 0;
  int proved = 0;
};

// The property: proved valid => GEOS says valid. Counts how often each side says so.
void Check(GeoContext& ctx, const std::string& wkb, Tally* tally) {
  const bool proved = ProvablyValidPolygon(AsBytes(wkb));
  const bool geos = GeosValid(ctx, wkb);
  ++tally->cases;
  tally->geos_valid += geos ? 1 : 0;
  tally->proved += proved ? 1 : 0;
  if (proved && !geos) ADD_FAILURE() << "proved valid, GEOS says invalid: " << WktOf(wkb);
}

class FastValidTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = GeoContext::Make();
    ASSERT_TRUE(made.ok());
    ctx_ = std::move(*made);
  }
  std::unique_ptr<GeoContext> ctx_;
};

TEST_F(FastValidTest, ProvesSimpleShapesValid) {
  EXPECT_TRUE(
      ProvablyValidPolygon(AsBytes(PolygonWkb({{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}}))));
  EXPECT_TRUE(ProvablyValidPolygon(AsBytes(PolygonWkb({{{0, 0}, {1, 0}, {0, 1}, {0, 0}}}))));
  // Concave, and clockwise.
  EXPECT_TRUE(ProvablyValidPolygon(
      AsBytes(PolygonWkb({{{0, 0}, {0, 4}, {2, 1}, {4, 4}, {4, 0}, {0, 0}}}))));
  EXPECT_TRUE(ProvablyValidPolygon(
      AsBytes(PolygonWkb({{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}}, /*multi=*/true))));
}

TEST_F(FastValidTest, LeavesEverythingElseToGeos) {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"bowtie", PolygonWkb({{{0, 0}, {1, 1}, {1, 0}, {0, 1}, {0, 0}}})},
      {"spike", PolygonWkb({{{0, 0}, {2, 0}, {2, 2}, {2, 3}, {2, 2}, {0, 2}, {0, 0}}})},
      {"repeated point (valid for GEOS, not proved)",
       PolygonWkb({{{0, 0}, {1, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}})},
      {"collinear vertex (valid for GEOS, not proved)",
       PolygonWkb({{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {0, 1}, {0, 0}}})},
      {"self-touching ring", PolygonWkb({{{0, 0}, {4, 0}, {4, 4}, {2, 0}, {0, 4}, {0, 0}}})},
      {"unclosed", PolygonWkb({{{0, 0}, {1, 0}, {1, 1}, {0, 1}}})},
      {"too few points", PolygonWkb({{{0, 0}, {1, 0}, {0, 0}}})},
      {"NaN", PolygonWkb({{{0, 0}, {NAN, 0}, {1, 1}, {0, 1}, {0, 0}}})},
      {"Inf", PolygonWkb({{{0, 0}, {INFINITY, 0}, {1, 1}, {0, 1}, {0, 0}}})},
      {"hole (not examined)",
       PolygonWkb({{{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 0}}, {{1, 1}, {2, 1}, {2, 2}, {1, 1}}})},
  };
  for (const auto& [name, wkb] : cases) {
    EXPECT_FALSE(ProvablyValidPolygon(AsBytes(wkb))) << name;
  }
  // Truncated and non-polygon input.
  const std::string square = PolygonWkb({{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}});
  EXPECT_FALSE(ProvablyValidPolygon(AsBytes(square.substr(0, square.size() - 1))));
  EXPECT_FALSE(ProvablyValidPolygon(AsBytes(square + "x")));
  EXPECT_FALSE(ProvablyValidPolygon({}));
  auto point = ParseWkt("POINT (1 2)");
  ASSERT_TRUE(point.ok());
  EXPECT_FALSE(ProvablyValidPolygon(AsBytes(WriteWkb(*point))));
}

// Random rings built to hit GEOS's corner cases: vertices on a small integer grid (so that
// collinear overlaps, self-touching vertices, spikes and repeated points are frequent), the
// same in tiny and huge magnitudes, points perturbed by one ulp off a line, NaN and infinity,
// holes touching the shell, and MultiPolygon wrapping. Every ring the shortcut proves valid
// must be valid for GEOS, and the shortcut must prove a good share of GEOS's valid rings.
TEST_F(FastValidTest, AgreesWithGeosOnRandomRings) {
  std::mt19937_64 rng(20261130);
  Tally tally;
  const auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int iter = 0; iter < 60000; ++iter) {
    const int num_vertices = uniform(3, iter % 10 == 0 ? 40 : 8);
    const int grid = uniform(2, 6);
    const int style = uniform(0, 9);
    const double scale = style == 7 ? 1e-90 : style == 8 ? 1e90 : style == 9 ? 1e-7 : 1.0;
    const double offset = style == 9 ? 179.123456789 : 0.0;
    Ring ring;
    for (int v = 0; v < num_vertices; ++v) {
      double x = uniform(0, grid);
      double y = uniform(0, grid);
      if (style == 1) {  // random reals
        x = std::uniform_real_distribution<double>(0, 1)(rng);
        y = std::uniform_real_distribution<double>(0, 1)(rng);
      }
      ring.emplace_back(offset + x * scale, offset + y * scale);
    }
    if (style == 2 && num_vertices >= 3) {  // a vertex one ulp off the line of its neighbours
      const std::size_t k = static_cast<std::size_t>(uniform(1, num_vertices - 2));
      const auto& [ax, ay] = ring[k - 1];
      const auto& [bx, by] = ring[k + 1];
      double mx = (ax + bx) / 2;
      double my = (ay + by) / 2;
      if (uniform(0, 1) == 0) mx = std::nextafter(mx, uniform(0, 1) ? 1e300 : -1e300);
      if (uniform(0, 1) == 0) my = std::nextafter(my, uniform(0, 1) ? 1e300 : -1e300);
      ring[k] = {mx, my};
    }
    if (style == 3) {  // a repeated vertex or a spike
      const std::size_t k = static_cast<std::size_t>(uniform(0, num_vertices - 1));
      ring.insert(ring.begin() + static_cast<std::ptrdiff_t>(k), ring[k]);
      if (uniform(0, 1) == 0 && k + 2 < ring.size()) ring.insert(ring.begin() + k + 2, ring[k]);
    }
    if (style == 4) {  // NaN or infinity somewhere
      const std::size_t k = static_cast<std::size_t>(uniform(0, num_vertices - 1));
      const double bad = uniform(0, 1) ? std::numeric_limits<double>::quiet_NaN()
                                       : std::numeric_limits<double>::infinity();
      (uniform(0, 1) ? ring[k].first : ring[k].second) = bad;
    }
    if (uniform(0, 19) != 0) ring.push_back(ring.front());  // close it (mostly)
    std::vector<Ring> rings{ring};
    if (style == 5) {  // a hole that may touch or cross the shell
      Ring hole;
      for (int v = 0; v < 3; ++v) hole.emplace_back(uniform(0, grid), uniform(0, grid));
      hole.push_back(hole.front());
      rings.push_back(hole);
    }
    Check(*ctx_, PolygonWkb(rings, /*multi=*/style == 6), &tally);
  }
  // Convex polygons around a random centre, the shape the shortcut is for.
  for (int iter = 0; iter < 20000; ++iter) {
    const int num_vertices = uniform(3, 60);
    const double cx = std::uniform_real_distribution<double>(-180, 180)(rng);
    const double cy = std::uniform_real_distribution<double>(-90, 90)(rng);
    const double radius = std::pow(10.0, uniform(-9, 2));
    std::vector<double> angles;
    for (int v = 0; v < num_vertices; ++v) {
      angles.push_back(std::uniform_real_distribution<double>(0, 2 * M_PI)(rng));
    }
    std::sort(angles.begin(), angles.end());
    Ring ring;
    for (const double a : angles) {
      ring.emplace_back(cx + radius * std::cos(a), cy + radius * std::sin(a));
    }
    ring.push_back(ring.front());
    Check(*ctx_, PolygonWkb({ring}), &tally);
  }
  std::printf("fast-valid: %d cases, %d valid for GEOS, %d proved valid\n", tally.cases,
              tally.geos_valid, tally.proved);
  EXPECT_EQ(tally.cases, 80000);
  EXPECT_GT(tally.geos_valid, 20000);
  EXPECT_GT(tally.proved, tally.geos_valid / 2);
}

}  // namespace
}  // namespace geolake::geo
