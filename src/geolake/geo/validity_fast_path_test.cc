#include "geolake/geo/validity_fast_path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
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

// ISO WKB of a MultiPolygon of these polygons.
std::string MultiPolygonWkb(const std::vector<std::vector<Ring>>& polygons) {
  std::string out;
  out.push_back('\x01');
  AppendU32(&out, 6);
  AppendU32(&out, static_cast<std::uint32_t>(polygons.size()));
  for (const std::vector<Ring>& rings : polygons) out += PolygonWkb(rings);
  return out;
}

const Ring kSquare4{{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 0}};

// A closed ring of `n` distinct vertices on a circle, counter-clockwise.
Ring Circle(double cx, double cy, double radius, int n) {
  Ring ring;
  for (int v = 0; v < n; ++v) {
    const double a = 2 * M_PI * v / n;
    ring.emplace_back(cx + radius * std::cos(a), cy + radius * std::sin(a));
  }
  ring.push_back(ring.front());
  return ring;
}

// The ring with vertices i and j (both below the closing point) swapped: it crosses itself.
Ring SwapVertices(Ring ring, std::size_t i, std::size_t j) {
  std::swap(ring[i], ring[j]);
  if (i == 0 || j == 0) ring.back() = ring.front();
  return ring;
}

// The ring with a spike out of vertex k and back (k > 0).
Ring Spiked(Ring ring, std::size_t k) {
  const auto [x, y] = ring[k];
  ring.insert(ring.begin() + static_cast<std::ptrdiff_t>(k) + 1, {{x * 2, y * 2}, {x, y}});
  return ring;
}

// The ring with vertex j moved onto vertex i (i < j, both inside): it touches itself there.
Ring TouchingItself(Ring ring, std::size_t i, std::size_t j) {
  ring[j] = ring[i];
  return ring;
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
  int certainly_invalid = 0;
};

// The properties: proved valid => GEOS says valid; certainly invalid => GEOS says invalid.
// Counts how often each side says so.
void Check(GeoContext& ctx, const std::string& wkb, Tally* tally) {
  const bool proved = ProvablyValidPolygon(AsBytes(wkb));
  const bool broken = CertainlyInvalidPolygon(AsBytes(wkb));
  const bool geos = GeosValid(ctx, wkb);
  ++tally->cases;
  tally->geos_valid += geos ? 1 : 0;
  tally->proved += proved ? 1 : 0;
  tally->certainly_invalid += broken ? 1 : 0;
  if (proved && !geos) ADD_FAILURE() << "proved valid, GEOS says invalid: " << WktOf(wkb);
  if (broken && geos) ADD_FAILURE() << "certainly invalid, GEOS says valid: " << WktOf(wkb);
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
  // Vertices on a straight run (a border along a parallel), exactly and nearly collinear.
  EXPECT_TRUE(ProvablyValidPolygon(
      AsBytes(PolygonWkb({{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {1, 1 + 1e-15}, {0, 1}, {0, 0}}}))));
  // Holes, and a multipolygon of a polygon with a hole and a separate square.
  const Ring shell{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}};
  const Ring hole1{{1, 1}, {2, 1}, {2, 2}, {1, 1}};
  const Ring hole2{{5, 5}, {5, 8}, {8, 8}, {8, 5}, {5, 5}};
  EXPECT_TRUE(ProvablyValidPolygon(AsBytes(PolygonWkb({shell, hole1, hole2}))));
  EXPECT_TRUE(ProvablyValidPolygon(AsBytes(
      MultiPolygonWkb({{shell, hole1}, {{{20, 0}, {30, 0}, {30, 10}, {20, 10}, {20, 0}}}}))));
  // A ring of 100,000 vertices (the general check, not the small-ring one), with a hole.
  EXPECT_TRUE(ProvablyValidPolygon(AsBytes(PolygonWkb({Circle(5, 5, 4, 100000)}))));
  EXPECT_TRUE(
      ProvablyValidPolygon(AsBytes(PolygonWkb({Circle(5, 5, 4, 100000), Circle(5, 5, 1, 5000)}))));
}

TEST_F(FastValidTest, LeavesEverythingElseToGeos) {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"bowtie", PolygonWkb({{{0, 0}, {1, 1}, {1, 0}, {0, 1}, {0, 0}}})},
      {"spike", PolygonWkb({{{0, 0}, {2, 0}, {2, 2}, {2, 3}, {2, 2}, {0, 2}, {0, 0}}})},
      {"repeated point (valid for GEOS, not proved)",
       PolygonWkb({{{0, 0}, {1, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}})},
      {"self-touching ring", PolygonWkb({{{0, 0}, {4, 0}, {4, 4}, {2, 0}, {0, 4}, {0, 0}}})},
      {"unclosed", PolygonWkb({{{0, 0}, {1, 0}, {1, 1}, {0, 1}}})},
      {"too few points", PolygonWkb({{{0, 0}, {1, 0}, {0, 0}}})},
      {"NaN", PolygonWkb({{{0, 0}, {NAN, 0}, {1, 1}, {0, 1}, {0, 0}}})},
      {"Inf", PolygonWkb({{{0, 0}, {INFINITY, 0}, {1, 1}, {0, 1}, {0, 0}}})},
      {"hole touching the shell (valid for GEOS, not proved)",
       PolygonWkb({kSquare4, {{0, 0}, {2, 1}, {1, 2}, {0, 0}}})},
      {"hole outside the shell", PolygonWkb({kSquare4, {{5, 5}, {6, 5}, {6, 6}, {5, 5}}})},
      {"hole crossing the shell", PolygonWkb({kSquare4, {{3, 3}, {5, 3}, {5, 5}, {3, 3}}})},
      {"hole around the shell",
       PolygonWkb({kSquare4, {{-1, -1}, {5, -1}, {5, 5}, {-1, 5}, {-1, -1}}})},
      {"nested holes", PolygonWkb({{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}},
                                   {{1, 1}, {9, 1}, {9, 9}, {1, 9}, {1, 1}},
                                   {{2, 2}, {3, 2}, {3, 3}, {2, 2}}})},
      {"overlapping polygons", MultiPolygonWkb({{kSquare4}, {{{2, 2}, {6, 2}, {6, 6}, {2, 2}}}})},
      {"polygon inside another", MultiPolygonWkb({{kSquare4}, {{{1, 1}, {2, 1}, {2, 2}, {1, 1}}}})},
      {"island in a lake (valid for GEOS, not proved)",
       MultiPolygonWkb({{{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}},
                         {{1, 1}, {9, 1}, {9, 9}, {1, 9}, {1, 1}}},
                        {{{2, 2}, {3, 2}, {3, 3}, {2, 2}}}})},
      {"polygons sharing an edge",
       MultiPolygonWkb({{kSquare4}, {{{4, 0}, {8, 0}, {8, 4}, {4, 4}, {4, 0}}}})},
      {"polygons touching at a point (valid for GEOS, not proved)",
       MultiPolygonWkb({{kSquare4}, {{{4, 4}, {8, 4}, {8, 8}, {4, 4}}}})},
      {"large ring crossing itself", PolygonWkb({SwapVertices(Circle(0, 0, 1, 1000), 10, 600)})},
      {"large ring with a spike", PolygonWkb({Spiked(Circle(0, 0, 1, 1000), 300)})},
      {"large ring touching itself", PolygonWkb({TouchingItself(Circle(0, 0, 1, 1000), 100, 400)})},
      {"empty polygon (valid for GEOS, not proved)", PolygonWkb({})},
      {"empty multipolygon (valid for GEOS, not proved)", MultiPolygonWkb({})},
  };
  for (const auto& [name, wkb] : cases) {
    EXPECT_FALSE(ProvablyValidPolygon(AsBytes(wkb))) << name;
    // Each case is what its name says.
    const bool valid_for_geos = std::string_view(name).find("valid for GEOS") != std::string::npos;
    EXPECT_EQ(GeosValid(*ctx_, wkb), valid_for_geos) << name;
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
  std::printf("fast-valid: %d cases, %d valid for GEOS, %d proved valid, %d certainly invalid\n",
              tally.cases, tally.geos_valid, tally.proved, tally.certainly_invalid);
  EXPECT_EQ(tally.cases, 80000);
  EXPECT_GT(tally.geos_valid, 20000);
  EXPECT_GT(tally.proved, tally.geos_valid / 2);
  // Small grids repeat vertices often: a good share of the invalid rings is caught.
  EXPECT_GT(tally.certainly_invalid, (tally.cases - tally.geos_valid) / 10);
}

// Random layouts for the general check: star-shaped rings of up to a few thousand vertices
// (sometimes snapped to a coarse grid, so that vertices and edges coincide exactly), holes and
// further polygons placed at random (inside, outside, crossing, touching, nested), and large
// rings with one defect (two vertices swapped, a spike, a vertex moved onto another, a repeated
// vertex). Whatever the shortcut proves valid, GEOS must find valid, and it must prove most of
// the valid ones.
TEST_F(FastValidTest, AgreesWithGeosOnRandomLayouts) {
  std::mt19937_64 rng(20261130);
  const auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const auto real = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  // A star-shaped ring around (cx, cy): radius r * [0.6, 1] at n increasing angles; snapped to
  // multiples of `grid` when grid > 0 (which can make it touch or cross itself).
  const auto star = [&](double cx, double cy, double r, int n, double grid) {
    Ring ring;
    for (int v = 0; v < n; ++v) {
      const double a = 2 * M_PI * (v + real(0, 0.9)) / n;
      const double rr = r * real(0.6, 1.0);
      double x = cx + rr * std::cos(a);
      double y = cy + rr * std::sin(a);
      if (grid > 0) {
        x = std::round(x / grid) * grid;
        y = std::round(y / grid) * grid;
      }
      ring.emplace_back(x, y);
    }
    ring.push_back(ring.front());
    return ring;
  };
  Tally tally;
  for (int iter = 0; iter < 3000; ++iter) {
    const int kind = uniform(0, 3);
    const double grid = uniform(0, 3) == 0 ? real(0.05, 0.5) : 0.0;
    const int big = uniform(65, iter % 20 == 0 ? 4000 : 400);
    if (kind == 0) {  // a polygon with holes placed at random
      std::vector<Ring> rings{star(0, 0, 10, big, grid)};
      const int holes = uniform(1, 6);
      for (int h = 0; h < holes; ++h) {
        rings.push_back(star(real(-10, 10), real(-10, 10), real(0.2, 4), uniform(3, 80), grid));
      }
      Check(*ctx_, PolygonWkb(rings), &tally);
    } else if (kind == 1) {  // polygons placed at random, some with a hole
      std::vector<std::vector<Ring>> polygons;
      const int count = uniform(2, 8);
      for (int q = 0; q < count; ++q) {
        const double cx = real(-30, 30);
        const double cy = real(-30, 30);
        const double r = real(1, 8);
        std::vector<Ring> rings{star(cx, cy, r, uniform(3, big), grid)};
        if (uniform(0, 2) == 0) rings.push_back(star(cx, cy, r * 0.3, uniform(3, 50), grid));
        polygons.push_back(rings);
      }
      Check(*ctx_, MultiPolygonWkb(polygons), &tally);
    } else {  // one large ring, with a defect in half of them
      Ring ring = star(real(-100, 100), real(-50, 50), std::pow(10.0, uniform(-6, 2)), big, grid);
      const std::size_t n = ring.size() - 1;
      const std::size_t i = static_cast<std::size_t>(uniform(1, static_cast<int>(n) - 2));
      const std::size_t j = static_cast<std::size_t>(uniform(1, static_cast<int>(n) - 2));
      switch (kind == 2 ? uniform(0, 4) : 4) {
        case 0:
          ring = SwapVertices(ring, i, j);
          break;
        case 1:
          ring = Spiked(ring, i);
          break;
        case 2:
          if (i + 1 < j) ring = TouchingItself(ring, i, j);
          break;
        case 3:
          ring.insert(ring.begin() + static_cast<std::ptrdiff_t>(i), ring[i]);
          break;
        default:
          break;
      }
      Check(*ctx_, PolygonWkb({ring}, /*multi=*/uniform(0, 1) == 0), &tally);
    }
  }
  std::printf(
      "fast-valid layouts: %d cases, %d valid for GEOS, %d proved valid, %d certainly invalid\n",
      tally.cases, tally.geos_valid, tally.proved, tally.certainly_invalid);
  EXPECT_EQ(tally.cases, 3000);
  EXPECT_GT(tally.geos_valid, 600);
  EXPECT_GT(tally.proved, tally.geos_valid * 3 / 4);
  EXPECT_GT(tally.certainly_invalid, 50);  // the spikes and the rings touching themselves
}

// A ring through one point twice is certainly invalid; everything else is left to GEOS, and
// each label is checked against GEOS.
TEST_F(FastValidTest, CertainlyInvalidOnlyForRepeatedVertices) {
  const std::vector<std::pair<const char*, std::string>> invalid = {
      {"spike", PolygonWkb({{{0, 0}, {2, 0}, {2, 2}, {2, 3}, {2, 2}, {0, 2}, {0, 0}}})},
      {"ring touching itself at a vertex",
       PolygonWkb({{{0, 0}, {2, 0}, {4, 0}, {4, 4}, {2, 0}, {0, 4}, {0, 0}}})},
      {"ring back through its start",
       PolygonWkb({{{0, 0}, {4, 0}, {4, 4}, {0, 0}, {-4, 4}, {-4, 0}, {0, 0}}})},
      {"large ring touching itself", PolygonWkb({TouchingItself(Circle(0, 0, 1, 1000), 100, 400)})},
      {"hole touching itself",
       PolygonWkb({{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}},
                   {{1, 1}, {3, 1}, {2, 2}, {3, 3}, {1, 3}, {2, 2}, {1, 1}}})},
      {"second part touching itself",
       MultiPolygonWkb(
           {{kSquare4}, {{{10, 0}, {12, 0}, {14, 0}, {14, 4}, {12, 0}, {10, 4}, {10, 0}}}})},
  };
  for (const auto& [name, wkb] : invalid) {
    EXPECT_TRUE(CertainlyInvalidPolygon(AsBytes(wkb))) << name;
    EXPECT_FALSE(GeosValid(*ctx_, wkb)) << name;
  }
  const std::vector<std::pair<const char*, std::string>> unknown = {
      {"square (valid)", PolygonWkb({kSquare4})},
      {"repeated consecutive point (valid)",
       PolygonWkb({{{0, 0}, {1, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}})},
      {"first point repeated before the closing one (valid)",
       PolygonWkb({{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}, {0, 0}}})},
      {"bowtie (invalid, no repeated vertex)",
       PolygonWkb({{{0, 0}, {1, 1}, {1, 0}, {0, 1}, {0, 0}}})},
      {"ring touching its own edge (invalid, no repeated vertex)",
       PolygonWkb({{{0, 0}, {4, 0}, {4, 4}, {2, 0}, {0, 4}, {0, 0}}})},
      {"unclosed with a repeat (invalid, GEOS's reason)",
       PolygonWkb({{{0, 0}, {4, 0}, {4, 4}, {2, 0}, {0, 4}}})},
      {"polygons touching at a point (valid)",
       MultiPolygonWkb({{kSquare4}, {{{4, 4}, {8, 4}, {8, 8}, {4, 4}}}})},
      {"hole touching the shell (valid)", PolygonWkb({kSquare4, {{0, 0}, {2, 1}, {1, 2}, {0, 0}}})},
      {"NaN twice (invalid)", PolygonWkb({{{0, 0}, {NAN, 0}, {1, 1}, {NAN, 0}, {0, 1}, {0, 0}}})},
  };
  for (const auto& [name, wkb] : unknown) {
    EXPECT_FALSE(CertainlyInvalidPolygon(AsBytes(wkb))) << name;
    EXPECT_EQ(GeosValid(*ctx_, wkb), std::string_view(name).find("(valid") != std::string::npos)
        << name;
  }
  EXPECT_FALSE(CertainlyInvalidPolygon({}));
}

TEST_F(FastValidTest, MultiPolygonMembersAreThePolygonsBytes) {
  const Ring shell{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}};
  const Ring hole{{1, 1}, {2, 1}, {2, 2}, {1, 1}};
  const Ring other{{20, 0}, {30, 0}, {30, 10}, {20, 0}};
  const std::string multi = MultiPolygonWkb({{shell, hole}, {other}, {}});
  std::vector<std::span<const std::uint8_t>> members;
  ASSERT_TRUE(MultiPolygonMembers(AsBytes(multi), &members));
  ASSERT_EQ(members.size(), 3u);
  const auto text = [](std::span<const std::uint8_t> b) {
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  EXPECT_EQ(text(members[0]), PolygonWkb({shell, hole}));
  EXPECT_EQ(text(members[1]), PolygonWkb({other}));
  EXPECT_EQ(text(members[2]), PolygonWkb({}));
  EXPECT_TRUE(MultiPolygonMembers(AsBytes(MultiPolygonWkb({})), &members));
  EXPECT_TRUE(members.empty());
  // Refused: a Polygon, bytes missing or left over, big-endian, a member that is not a Polygon.
  EXPECT_FALSE(MultiPolygonMembers(AsBytes(PolygonWkb({shell})), &members));
  EXPECT_FALSE(MultiPolygonMembers(AsBytes(multi.substr(0, multi.size() - 1)), &members));
  EXPECT_FALSE(MultiPolygonMembers(AsBytes(multi + "x"), &members));
  std::string big_endian = multi;
  big_endian[0] = '\x00';
  EXPECT_FALSE(MultiPolygonMembers(AsBytes(big_endian), &members));
  std::string point_member = multi;
  point_member[10] = '\x01';  // the first member's type: 1 (Point) instead of 3
  EXPECT_FALSE(MultiPolygonMembers(AsBytes(point_member), &members));
  std::string many = multi;
  many[5] = '\x7f';  // a count far beyond the bytes
  EXPECT_FALSE(MultiPolygonMembers(AsBytes(many), &members));
}

}  // namespace
}  // namespace geolake::geo
