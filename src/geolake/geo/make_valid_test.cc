// Geometry::MakeValid against GEOS's own whole-geometry structure repair: the part-wise
// shortcut (make_valid.cc) must give a valid geometry of GEOS's type covering the same point
// set (GEOSEquals, or a symmetric difference of floating-point noise) as
// GEOSMakeValidWithParams on the whole, for hand-made cases of each path and for every
// invalid polygon of the real data sets. The reference runs in a GEOS context of its own.
#include <gdal.h>
#include <geos_c.h>
#include <gtest/gtest.h>
#include <ogr_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "geolake/geo/geos.h"
#include "geolake/geo/validity_fast_path.h"
#include "geolake/geo/wkb.h"
#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

// A GEOS context of the test's own, and GEOS's whole-geometry repair in it.
class Reference {
 public:
  Reference() : h_(GEOS_init_r()) {}
  ~Reference() { GEOS_finish_r(h_); }
  Reference(const Reference&) = delete;
  Reference& operator=(const Reference&) = delete;

  GEOSGeometry* Read(std::string_view wkb) const {
    return GEOSGeomFromWKB_buf_r(h_, reinterpret_cast<const unsigned char*>(wkb.data()),
                                 wkb.size());
  }
  GEOSGeometry* Repair(const GEOSGeometry* g) const {
    GEOSMakeValidParams* p = GEOSMakeValidParams_create_r(h_);
    GEOSMakeValidParams_setMethod_r(h_, p, GEOS_MAKE_VALID_STRUCTURE);
    GEOSMakeValidParams_setKeepCollapsed_r(h_, p, 0);
    GEOSGeometry* out = GEOSMakeValidWithParams_r(h_, g, p);
    GEOSMakeValidParams_destroy_r(h_, p);
    return out;
  }
  GEOSContextHandle_t h() const { return h_; }

 private:
  GEOSContextHandle_t h_;
};

class MakeValidTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(ctx_, GeoContext::Make()); }

  // Repairs `wkb` both ways and expects: ours valid, the same type name as GEOS's, and equal
  // point sets. Returns false (after reporting) when they differ.
  bool SameAsGeos(std::string_view wkb, const std::string& label) {
    auto ours = Geometry::FromWkb(*ctx_, wkb);
    EXPECT_OK(ours) << label;
    if (!ours.ok()) return false;
    auto fixed = ours->MakeValid();
    EXPECT_OK(fixed) << label;
    if (!fixed.ok()) return false;
    auto fixed_valid = fixed->IsValid();
    EXPECT_TRUE(fixed_valid.ok() && *fixed_valid) << label << ": ours is not valid";
    auto fixed_wkb = fixed->ToWkb();
    EXPECT_OK(fixed_wkb) << label;
    if (!fixed_wkb.ok()) return false;
    return MatchesGeosRepair(wkb, *fixed_wkb, label);
  }

  // `fixed_wkb` has the type of GEOS's whole repair of `wkb` and covers the same points. With
  // `max_shift` > 0, GEOS's answer may also differ by moving boundary points up to that far
  // (a symmetric difference up to the perimeter times max_shift).
  bool MatchesGeosRepair(std::string_view wkb, std::string_view fixed_wkb, const std::string& label,
                         double max_shift = 0) {
    const GEOSContextHandle_t h = ref_.h();
    GEOSGeometry* input = ref_.Read(wkb);
    GEOSGeometry* expected = ref_.Repair(input);
    GEOSGeometry* got = ref_.Read(fixed_wkb);
    bool same = expected != nullptr && got != nullptr;
    if (same) {
      char* want_type = GEOSGeomType_r(h, expected);
      char* got_type = GEOSGeomType_r(h, got);
      EXPECT_STREQ(got_type, want_type) << label;
      GEOSFree_r(h, want_type);
      GEOSFree_r(h, got_type);
      const bool both_empty = GEOSisEmpty_r(h, expected) == 1 && GEOSisEmpty_r(h, got) == 1;
      same = both_empty || GEOSEquals_r(h, expected, got) == 1;
      if (!same) {
        // Unioning a group of parts instead of all of them may compute a crossing point in
        // another order, a last-bit difference: allow a symmetric difference of at most 1e-12
        // of the area (ne_countries fid 49: 3.6e-13 square degrees of 3277), same part count.
        double want_area = 0, got_area = 0, diff_area = -1;
        GEOSArea_r(h, expected, &want_area);
        GEOSArea_r(h, got, &got_area);
        GEOSGeometry* diff = GEOSSymDifference_r(h, expected, got);
        if (diff != nullptr) {
          GEOSArea_r(h, diff, &diff_area);
          GEOSGeom_destroy_r(h, diff);
        }
        double perimeter = 0;
        GEOSLength_r(h, got, &perimeter);
        same = diff_area >= 0 && diff_area <= std::max(1e-12 * want_area, perimeter * max_shift) &&
               GEOSGetNumGeometries_r(h, got) == GEOSGetNumGeometries_r(h, expected);
        if (!same) {
          ADD_FAILURE() << label << ": area " << got_area << " vs GEOS " << want_area
                        << ", symmetric difference " << diff_area << ", parts "
                        << GEOSGetNumGeometries_r(h, got) << " vs "
                        << GEOSGetNumGeometries_r(h, expected);
        }
      }
    }
    EXPECT_TRUE(same) << label << ": not the point set of GEOS's whole repair";
    for (GEOSGeometry* g : {input, expected, got}) {
      if (g != nullptr) GEOSGeom_destroy_r(h, g);
    }
    return same;
  }

  // Calls `visit(wkb, label, invalid)` for every geometry of the real data sets (ISO WKB as
  // GDAL exports it, "NAME fid N", whether GEOS finds it invalid); returns how many of the
  // files were there.
  int ForEachRealGeometry(
      const std::function<void(const std::string&, const std::string&, bool)>& visit) {
    GDALAllRegister();
    int files = 0;
    for (const char* name : {"ne_countries_10m", "us_states", "us_counties"}) {
      const std::string path = ::geolake::testing::DataPath(std::string(name) + ".gpkg");
      GDALDatasetH ds =
          GDALOpenEx(path.c_str(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr);
      if (ds == nullptr) continue;
      ++files;
      OGRLayerH layer = GDALDatasetGetLayer(ds, 0);
      OGRFeatureH feature;
      while ((feature = OGR_L_GetNextFeature(layer)) != nullptr) {
        OGRGeometryH g = OGR_F_GetGeometryRef(feature);
        if (g != nullptr) {
          std::string wkb(static_cast<std::size_t>(OGR_G_WkbSize(g)), '\0');
          OGR_G_ExportToIsoWkb(g, wkbNDR, reinterpret_cast<unsigned char*>(wkb.data()));
          GEOSGeometry* parsed = ref_.Read(wkb);
          const bool invalid = parsed != nullptr && GEOSisValid_r(ref_.h(), parsed) == 0;
          if (parsed != nullptr) GEOSGeom_destroy_r(ref_.h(), parsed);
          visit(wkb, std::string(name) + " fid " + std::to_string(OGR_F_GetFID(feature)), invalid);
        }
        OGR_F_Destroy(feature);
      }
      GDALClose(ds);
    }
    return files;
  }

  std::string WkbOf(std::string_view wkt) {
    auto g = Geometry::FromWkt(*ctx_, wkt);
    EXPECT_OK(g);
    auto wkb = g->ToWkb();
    EXPECT_OK(wkb);
    return *wkb;
  }

  std::unique_ptr<GeoContext> ctx_;
  Reference ref_;
};

TEST_F(MakeValidTest, HandMadeCasesOfEachPathMatchGeos) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // A bowtie part beside a valid square: only the bowtie is repaired, parts stay apart.
      {"bowtie beside a square",
       "MULTIPOLYGON (((0 0, 1 1, 1 0, 0 1, 0 0)), ((5 5, 6 5, 6 6, 5 6, 5 5)))"},
      // Two valid squares overlapping: the assembly is invalid, the box group is unioned.
      {"overlapping parts",
       "MULTIPOLYGON (((0 0, 2 0, 2 2, 0 2, 0 0)), ((1 1, 3 1, 3 3, 1 3, 1 1)),"
       " ((10 10, 11 10, 11 11, 10 11, 10 10)))"},
      // Two squares sharing an edge: GEOS's union merges them into one polygon.
      {"parts sharing an edge",
       "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), ((1 0, 2 0, 2 1, 1 1, 1 0)))"},
      // Two squares touching at a corner: valid as they are, stay two parts.
      {"parts touching at a point",
       "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), ((1 1, 2 1, 2 2, 1 2, 1 1)),"
       " ((3 3, 4 4, 4 3, 3 4, 3 3)))"},
      // A part that collapses to a line is dropped; one polygon is left (GEOS gives Polygon).
      {"collapsed part", "MULTIPOLYGON (((0 0, 1 1, 2 2, 0 0)), ((5 5, 6 5, 6 6, 5 6, 5 5)))"},
      // Every part collapses: GEOS's own answer (empty).
      {"all parts collapse", "MULTIPOLYGON (((0 0, 1 1, 2 2, 0 0)), ((5 5, 6 6, 7 7, 5 5)))"},
      // A repaired bowtie overlapping a valid part: the group is unioned after the repair.
      {"repaired part overlaps another",
       "MULTIPOLYGON (((0 0, 2 2, 2 0, 0 2, 0 0)), ((0.5 0 , 1.5 0, 1.5 0.4, 0.5 0.4, 0.5 0)))"},
      // A hole outside its shell in one part.
      {"hole outside shell",
       "MULTIPOLYGON (((0 0, 4 0, 4 4, 0 4, 0 0), (5 5, 6 5, 6 6, 5 6, 5 5)),"
       " ((10 0, 11 0, 11 1, 10 1, 10 0)))"},
      // A single polygon goes to GEOS unchanged.
      {"polygon", "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"},
  };
  for (const auto& [label, wkt] : cases) SameAsGeos(WkbOf(wkt), label);
}

// Every invalid polygon of the real data sets (the Natural Earth countries hold dozens of
// multipolygons with self-touching rings and overlapping islands).
TEST_F(MakeValidTest, RealInvalidPolygonsMatchGeos) {
  int invalid = 0, same = 0;
  const int files =
      ForEachRealGeometry([&](const std::string& wkb, const std::string& label, bool is_invalid) {
        if (!is_invalid) return;
        ++invalid;
        same += SameAsGeos(wkb, label) ? 1 : 0;
      });
  if (files < 3)
    GTEST_SKIP() << ::geolake::testing::MissingDataReason(
        "ne_countries_10m, us_states and us_counties .gpkg");
  std::printf("make-valid on real data (%d files): %d invalid geometries, %d same as GEOS\n", files,
              invalid, same);
  EXPECT_GT(invalid, 0);
  EXPECT_EQ(same, invalid);
}

// RepairIfInvalid: nullopt exactly when GEOS calls the whole valid, otherwise MakeValid()'s
// repair, byte for byte, whether or not the parts' WKB is given (without it only for the
// invalid real geometries, to keep the test short). The hand-made repairs are also compared
// with GEOS's whole repair (MakeValid() is, on real data, by RealInvalidPolygonsMatchGeos).
TEST_F(MakeValidTest, RepairIfInvalidDecidesAsGeosDoes) {
  int checked = 0, repaired = 0;
  const auto check = [&](const std::string& wkb, const std::string& label, bool invalid) {
    ASSERT_OK_AND_ASSIGN(Geometry g, Geometry::FromWkb(*ctx_, wkb));
    for (const bool with_wkb : {true, false}) {
      if (!with_wkb && !invalid && label.find(" fid ") != std::string::npos) continue;
      const std::string which = label + (with_wkb ? " (with WKB)" : " (without WKB)");
      auto result = g.RepairIfInvalid(with_wkb ? AsBytes(wkb) : std::span<const std::uint8_t>());
      ASSERT_OK(result) << which;
      ++checked;
      EXPECT_EQ(result->has_value(), invalid) << which;
      if (!result->has_value()) continue;
      ++repaired;
      ASSERT_OK_AND_ASSIGN(bool valid, (*result)->IsValid());
      EXPECT_TRUE(valid) << which << ": the repair is not valid";
      ASSERT_OK_AND_ASSIGN(std::string fixed_wkb, (*result)->ToWkb());
      ASSERT_OK_AND_ASSIGN(Geometry made_valid, g.MakeValid());
      ASSERT_OK_AND_ASSIGN(std::string made_valid_wkb, made_valid.ToWkb());
      EXPECT_EQ(fixed_wkb, made_valid_wkb) << which;
      if (label.find(" fid ") == std::string::npos) MatchesGeosRepair(wkb, fixed_wkb, which);
    }
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"valid polygon", "POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))"},
      {"bowtie polygon", "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"},
      {"parts apart", "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))"},
      {"parts touching at a point",
       "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), ((1 1, 2 1, 2 2, 1 2, 1 1)))"},
      {"parts sharing an edge",
       "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), ((1 0, 2 0, 2 1, 1 1, 1 0)))"},
      {"overlapping parts",
       "MULTIPOLYGON (((0 0, 2 0, 2 2, 0 2, 0 0)), ((1 1, 3 1, 3 3, 1 3, 1 1)))"},
      {"part touching itself at a vertex",
       "MULTIPOLYGON (((0 0, 2 0, 4 0, 4 4, 2 0, 0 4, 0 0)), ((9 9, 10 9, 10 10, 9 9)))"},
      {"part with a hole touching its shell (valid)",
       "MULTIPOLYGON (((0 0, 4 0, 4 4, 0 4, 0 0), (0 0, 2 1, 1 2, 0 0)), ((9 9, 10 9, 10 10, 9 "
       "9)))"},
      {"empty part beside a valid one", "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), EMPTY)"},
      {"empty part beside a bowtie", "MULTIPOLYGON (((0 0, 1 1, 1 0, 0 1, 0 0)), EMPTY)"},
  };
  for (const auto& [label, wkt] : cases) {
    const std::string wkb = WkbOf(wkt);
    GEOSGeometry* parsed = ref_.Read(wkb);
    ASSERT_NE(parsed, nullptr) << label;
    const bool invalid = GEOSisValid_r(ref_.h(), parsed) == 0;
    GEOSGeom_destroy_r(ref_.h(), parsed);
    check(wkb, label, invalid);
  }
  EXPECT_EQ(repaired, 2 * 5);  // each invalid case, both ways
  const int files = ForEachRealGeometry(check);
  std::printf("RepairIfInvalid: %d calls, %d repairs\n", checked, repaired);
  if (files < 3)
    GTEST_SKIP() << ::geolake::testing::MissingDataReason(
        "ne_countries_10m, us_states and us_counties .gpkg");
  EXPECT_GT(repaired, 2 * 5 + 2 * 50);  // the Natural Earth countries alone have 52 invalid
}

// RepairSpikes (validity_fast_path.h) against GEOS's structure repair: whenever it answers,
// its answer is valid for GEOS, of GEOS's type and covers GEOS's point set; and it answers the
// spike cases it is for.
class RepairSpikesTest : public MakeValidTest {
 protected:
  // Returns whether RepairSpikes answered; checks the answer when it did.
  bool Check(std::string_view wkb, const std::string& label) {
    std::string out;
    if (!RepairSpikes(AsBytes(wkb), &out)) return false;
    GEOSGeometry* got = ref_.Read(out);
    EXPECT_NE(got, nullptr) << label;
    if (got == nullptr) return true;
    EXPECT_EQ(GEOSisValid_r(ref_.h(), got), 1) << label << ": not valid for GEOS";
    GEOSGeom_destroy_r(ref_.h(), got);
    // GEOS's structure repair of a polygon whose spike crosses its ring can fall back to
    // reduced precision: in random case 190 below it rounded 192 vertices of one part to
    // multiples of 1e-10, where ours keeps every input vertex as it is.
    MatchesGeosRepair(wkb, out, label, /*max_shift=*/1e-9);
    return true;
  }
};

TEST_F(RepairSpikesTest, RepairsSpikesAsGeosDoes) {
  const std::vector<std::pair<std::string, std::string>> repaired = {
      {"outward spike", "POLYGON ((0 0, 4 0, 4 2, 6 2, 4 2, 4 4, 0 4, 0 0))"},
      {"inward spike", "POLYGON ((0 0, 4 0, 4 2, 2 2, 4 2, 4 4, 0 4, 0 0))"},
      {"spike crossing the ring", "POLYGON ((0 0, 4 0, 4 2, -1 2, 4 2, 4 4, 0 4, 0 0))"},
      {"spike of a spike", "POLYGON ((0 0, 4 0, 4 2, 5 2, 6 3, 5 2, 4 2, 4 4, 0 4, 0 0))"},
      {"spike with repeated points",
       "POLYGON ((0 0, 4 0, 4 0, 4 2, 6 2, 6 2, 4 2, 4 4, 0 4, 0 0))"},
      {"tip at the closing point", "POLYGON ((6 2, 4 2, 4 4, 0 4, 0 0, 4 0, 4 2, 6 2))"},
      {"tip just after the closing point", "POLYGON ((4 2, 6 2, 4 2, 4 4, 0 4, 0 0, 4 0, 4 2))"},
      {"spike in a hole",
       "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 4 2, 4 3, 5 3, 4 3, 4 4, 2 4, 2 2))"},
      {"spike in one part",
       "MULTIPOLYGON (((0 0, 4 0, 4 2, 6 2, 4 2, 4 4, 0 4, 0 0)), ((10 0, 11 0, 11 1, 10 0)))"},
      {"one part with a spike", "MULTIPOLYGON (((0 0, 4 0, 4 2, 6 2, 4 2, 4 4, 0 4, 0 0)))"},
      {"partial fold along y", "POLYGON ((0 0, 4 0, 4 2, 6 2, 5 2, 5 4, 0 4, 0 0))"},
      {"fold along x overshooting its start", "POLYGON ((0 0, 4 0, 4 3, 4 5, 4 1, 0 4, 0 0))"},
  };
  for (const auto& [label, wkt] : repaired) EXPECT_TRUE(Check(WkbOf(wkt), label)) << label;
  const std::vector<std::pair<std::string, std::string>> declined = {
      {"no spike (bowtie)", "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"},
      {"repeated points only (valid)", "POLYGON ((0 0, 4 0, 4 0, 4 4, 0 4, 0 0))"},
      {"a spike and a bowtie", "POLYGON ((0 0, 4 0, 4 2, 6 2, 4 2, 0 4, 4 4, 0 0))"},
      {"collapses to a line", "POLYGON ((0 0, 4 0, 0 0, 4 0, 0 0))"},
      {"spike part overlapping another part",
       "MULTIPOLYGON (((0 0, 4 0, 4 2, 6 2, 4 2, 4 4, 0 4, 0 0)), ((1 1, 2 1, 2 2, 1 1)))"},
      {"partial fold on a slanted line (not provably collinear)",
       "POLYGON ((0 0, 4 0, 4 2, 6 4, 5 3, 5 5, 0 4, 0 0))"},
  };
  for (const auto& [label, wkt] : declined) EXPECT_FALSE(Check(WkbOf(wkt), label)) << label;
}

// Star-shaped rings with spikes stuck in at random vertices, pointing anywhere and of any
// length (so many cross the ring or another part), sometimes with a repeated tip, sometimes
// folds along an axis that come back short of their start or past it.
TEST_F(RepairSpikesTest, RandomSpikesMatchGeos) {
  std::mt19937_64 rng(20261130);
  const auto real = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int answered = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int parts = uniform(1, 3);
    std::string wkt = parts > 1 ? "MULTIPOLYGON (" : "POLYGON ";
    for (int part = 0; part < parts; ++part) {
      const double cx = part * 30.0 + real(-2, 2);
      const int n = uniform(5, 200);
      std::vector<std::pair<double, double>> ring;
      for (int v = 0; v < n; ++v) {
        const double a = 2 * M_PI * (v + real(0, 0.9)) / n;
        const double r = 10 * real(0.6, 1.0);
        ring.emplace_back(cx + r * std::cos(a), r * std::sin(a));
      }
      const int spikes = uniform(0, 3);
      for (int k = 0; k < spikes; ++k) {
        const std::size_t at =
            static_cast<std::size_t>(uniform(0, static_cast<int>(ring.size()) - 1));
        const auto base = ring[at];
        const double len = std::pow(10.0, real(-3, 1.5));
        const double dir = real(0, 2 * M_PI);
        std::vector<std::pair<double, double>> spike{
            {base.first + len * std::cos(dir), base.second + len * std::sin(dir)}, base};
        if (uniform(0, 2) == 0) {  // a fold along an axis, coming back short of or past `base`
          const bool along_x = uniform(0, 1) == 0;
          const double sign = uniform(0, 1) ? 1.0 : -1.0;
          const double back = len * real(-0.5, 0.9);
          spike = {
              {base.first + (along_x ? sign * len : 0), base.second + (along_x ? 0 : sign * len)},
              {base.first + (along_x ? sign * back : 0),
               base.second + (along_x ? 0 : sign * back)}};
        }
        if (uniform(0, 3) == 0) spike.insert(spike.begin() + 1, spike[0]);  // a repeated tip
        ring.insert(ring.begin() + static_cast<std::ptrdiff_t>(at) + 1, spike.begin(), spike.end());
      }
      ring.push_back(ring.front());
      std::string text = "((";
      for (std::size_t v = 0; v < ring.size(); ++v) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%s%.17g %.17g", v == 0 ? "" : ", ", ring[v].first,
                      ring[v].second);
        text += buf;
      }
      text += "))";
      wkt += (part == 0 ? "" : ", ") + text;
    }
    if (parts > 1) wkt += ")";
    answered += Check(WkbOf(wkt), "random " + std::to_string(iter)) ? 1 : 0;
  }
  std::printf("repair-spikes: answered %d of 400 random polygons\n", answered);
  EXPECT_GT(answered, 100);
}

// Every invalid geometry of the real data sets that RepairSpikes answers for matches GEOS;
// Natural Earth's countries have dozens of spikes.
TEST_F(RepairSpikesTest, RealInvalidPolygonsMatchGeos) {
  int invalid = 0, answered = 0;
  const int files =
      ForEachRealGeometry([&](const std::string& wkb, const std::string& label, bool is_invalid) {
        invalid += is_invalid ? 1 : 0;
        const bool did = Check(wkb, label);
        EXPECT_TRUE(!did || is_invalid) << label << ": repaired a valid geometry";
        answered += did ? 1 : 0;
      });
  if (files < 3)
    GTEST_SKIP() << ::geolake::testing::MissingDataReason(
        "ne_countries_10m, us_states and us_counties .gpkg");
  std::printf("repair-spikes on real data (%d files): %d invalid geometries, %d answered\n", files,
              invalid, answered);
  EXPECT_GT(answered, invalid / 4);
}

}  // namespace
}  // namespace geolake::geo
