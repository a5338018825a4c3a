// The ring-level make-valid (ring_repair.cc) against GEOS's make-valid of the whole geometry,
// for both methods: on generated polygons shaped like OSM's giant land polygons
// (ring_repair_testing.h), on hand-made cases of each kind of broken ring, and on the invalid
// countries of Natural Earth. The answer must be valid and cover the same points (symmetric
// difference below 1e-9 of the area); the rings that are valid alone and touch nothing must
// come back untouched; a stop must end the work quickly; what the path does not handle must
// fall back to GEOS whole. The reference runs in a GEOS context of its own.
#include <gdal.h>
#include <geos_c.h>
#include <gtest/gtest.h>
#include <ogr_api.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/make_valid.h"
#include "geolake/geo/ring_repair_internal.h"
#include "geolake/geo/ring_repair_testing.h"
#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using testing::HoleyPolygon;
using testing::HoleyPolygonSpec;
using testing::MakeHoleyPolygon;

// A GEOS context of the test's own: GEOS whole as the reference, and the comparisons.
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
  GEOSGeometry* Repair(const GEOSGeometry* g, const MakeValidParams& params) const {
    GEOSMakeValidParams* p = GEOSMakeValidParams_create_r(h_);
    GEOSMakeValidParams_setMethod_r(h_, p,
                                    params.method == MakeValidMethod::kStructure
                                        ? GEOS_MAKE_VALID_STRUCTURE
                                        : GEOS_MAKE_VALID_LINEWORK);
    GEOSMakeValidParams_setKeepCollapsed_r(h_, p, params.keep_collapsed ? 1 : 0);
    GEOSGeometry* out = GEOSMakeValidWithParams_r(h_, g, p);
    GEOSMakeValidParams_destroy_r(h_, p);
    return out;
  }
  // The polygons of `g` (collections flattened) as one MultiPolygon; `g` is consumed.
  GEOSGeometry* Polygonal(GEOSGeometry* g) const {
    std::vector<GEOSGeometry*> polygons;
    Collect(g, &polygons);
    GEOSGeom_destroy_r(h_, g);
    return GEOSGeom_createCollection_r(h_, GEOS_MULTIPOLYGON, polygons.data(),
                                       static_cast<unsigned>(polygons.size()));
  }
  GEOSContextHandle_t h() const { return h_; }

 private:
  void Collect(const GEOSGeometry* g, std::vector<GEOSGeometry*>* out) const {
    const int type = GEOSGeomTypeId_r(h_, g);
    if (type == GEOS_POLYGON) {
      if (GEOSisEmpty_r(h_, g) == 0) out->push_back(GEOSGeom_clone_r(h_, g));
      return;
    }
    if (type == GEOS_MULTIPOLYGON || type == GEOS_GEOMETRYCOLLECTION) {
      for (int i = 0; i < GEOSGetNumGeometries_r(h_, g); ++i) {
        Collect(GEOSGetGeometryN_r(h_, g, i), out);
      }
    }
  }

  GEOSContextHandle_t h_;
};

class RingRepairTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(ctx_, GeoContext::Make()); }

  // Repairs `wkb` with MakeValidWith (ring level forced) and with GEOS whole; expects ours
  // valid and covering the same points (symmetric difference < 1e-9 of the area; the same
  // number of polygons). Returns the stats, or nullopt after a failure.
  std::optional<MakeValidStats> CheckSameAsGeos(std::string_view wkb, const MakeValidParams& params,
                                                const std::string& label,
                                                ThreadPool* executor = nullptr) {
    auto input = Geometry::FromWkb(*ctx_, wkb);
    EXPECT_OK(input) << label;
    if (!input.ok()) return std::nullopt;
    MakeValidOptions options;
    options.params = params;
    options.executor = executor;
    options.ring_level_min_vertices = 0;
    MakeValidStats stats;
    auto fixed = MakeValidWith(*input, options, &stats);
    EXPECT_OK(fixed) << label;
    if (!fixed.ok()) return std::nullopt;
    auto valid = fixed->IsValid();
    EXPECT_TRUE(valid.ok() && *valid) << label << ": not valid: " << *fixed->IsValidReason();
    auto fixed_wkb = fixed->ToWkb();
    EXPECT_OK(fixed_wkb);
    if (!fixed_wkb.ok()) return std::nullopt;

    const GEOSContextHandle_t h = ref_.h();
    GEOSGeometry* in = ref_.Read(wkb);
    GEOSGeometry* expected = ref_.Polygonal(ref_.Repair(in, params));
    GEOSGeometry* got = ref_.Polygonal(ref_.Read(*fixed_wkb));
    double want_area = 0, got_area = 0, diff_area = -1;
    GEOSArea_r(h, expected, &want_area);
    GEOSArea_r(h, got, &got_area);
    GEOSGeometry* diff = GEOSSymDifference_r(h, expected, got);
    if (diff != nullptr) {
      GEOSArea_r(h, diff, &diff_area);
      GEOSGeom_destroy_r(h, diff);
    }
    const int want_parts = GEOSGetNumGeometries_r(h, expected);
    const int got_parts = GEOSGetNumGeometries_r(h, got);
    EXPECT_GE(diff_area, 0) << label;
    EXPECT_LE(diff_area, 1e-9 * std::max(want_area, 1e-300))
        << label << ": area " << got_area << " vs GEOS " << want_area;
    EXPECT_EQ(got_parts, want_parts) << label;
    for (GEOSGeometry* g : {in, expected, got}) GEOSGeom_destroy_r(h, g);
    return stats;
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

constexpr MakeValidParams kLinework{MakeValidMethod::kLinework, true};
constexpr MakeValidParams kStructure{MakeValidMethod::kStructure, false};

TEST_F(RingRepairTest, GeneratedPolygonsMatchGeosWhole) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ThreadPool> pool, ThreadPool::Make(2));
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    HoleyPolygonSpec spec;
    spec.seed = seed;
    spec.shell_loops = static_cast<int>(seed % 3);  // 0: the shell is kept as it is
    spec.holes_touching_shell = seed == 3 ? 0 : 2;
    spec.holes_crossing_shell = seed == 3 ? 0 : 2;
    const HoleyPolygon polygon = MakeHoleyPolygon(spec);
    for (const MakeValidParams& params :
         {kLinework, kStructure, MakeValidParams{MakeValidMethod::kStructure, true}}) {
      const std::string label = "seed " + std::to_string(seed) + " " +
                                std::string(MakeValidMethodName(params.method)) +
                                (params.keep_collapsed ? " keep" : "");
      ThreadPool* executor = seed % 2 == 0 ? pool.get() : nullptr;
      std::optional<MakeValidStats> stats = CheckSameAsGeos(polygon.wkb, params, label, executor);
      ASSERT_TRUE(stats.has_value()) << label;
      EXPECT_EQ(stats->ring_level, 1) << label;
      EXPECT_EQ(stats->whole_fallbacks, 0) << label;
      EXPECT_EQ(stats->rings, static_cast<std::int64_t>(polygon.rings.size())) << label;
      EXPECT_EQ(stats->rings_kept, polygon.isolated_valid_rings) << label;
      EXPECT_EQ(stats->rings_kept + stats->rings_repaired, stats->rings) << label;
    }
  }
}

TEST_F(RingRepairTest, HandMadePolygonsMatchGeosWhole) {
  struct Case {
    std::string label;
    std::string wkt;
  };
  const std::vector<Case> cases = {
      {"bowtie", "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"},
      {"figure eight shell with a hole in each lobe",
       "POLYGON ((0 0, 4 4, 4 0, 0 4, 0 0), (0.5 1.8, 1 1.8, 1 2.2, 0.5 2.2, 0.5 1.8),"
       " (3 1.8, 3.5 1.8, 3.5 2.2, 3 2.2, 3 1.8))"},
      {"hole outside the shell",
       "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0), (5 5, 6 5, 6 6, 5 6, 5 5),"
       " (1 1, 2 1, 2 2, 1 2, 1 1))"},
      {"hole touching the shell at a vertex",
       "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0), (0 0, 1 2, 2 1, 0 0), (3 3, 3.5 3, 3.5 3.5, 3 3))"},
      {"hole crossing the shell", "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0), (3 1, 5 1, 5 2, 3 2, 3 1))"},
      {"overlapping holes",
       "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (1 1, 4 1, 4 4, 1 4, 1 1),"
       " (3 3, 6 3, 6 6, 3 6, 3 3), (8 8, 9 8, 9 9, 8 9, 8 8))"},
      {"hole inside a hole",
       "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (1 1, 6 1, 6 6, 1 6, 1 1),"
       " (2 2, 3 2, 3 3, 2 3, 2 2))"},
      {"hole inside a broken hole",
       "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (1 1, 6 6, 6 1, 1 6, 1 1),"
       " (4.5 3, 5 3, 5 3.5, 4.5 3.5, 4.5 3))"},
      {"hole larger than the shell",
       "POLYGON ((2 2, 3 2, 3 3, 2 3, 2 2), (0 0, 10 0, 10 10, 0 10, 0 0))"},
      {"collapsed hole and spike",
       "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (1 1, 2 1, 3 1, 1 1),"
       " (5 5, 6 5, 6 6, 5 6, 5 5))"},
      {"overlapping parts",
       "MULTIPOLYGON (((0 0, 2 0, 2 2, 0 2, 0 0)), ((1 1, 3 1, 3 3, 1 3, 1 1)),"
       " ((10 10, 11 10, 11 11, 10 11, 10 10)))"},
      {"island in a lake, one broken",
       "MULTIPOLYGON (((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 8 2, 8 8, 2 8, 2 2)),"
       " ((4 4, 6 6, 6 4, 4 6, 4 4)))"},
      {"part inside another part",
       "MULTIPOLYGON (((0 0, 10 0, 10 10, 0 10, 0 0)), ((4 4, 5 4, 5 5, 4 5, 4 4)),"
       " ((20 0, 21 1, 21 0, 20 1, 20 0)))"},
      {"parts touching at a point",
       "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), ((1 1, 2 1, 2 2, 1 2, 1 1)),"
       " ((3 3, 4 4, 4 3, 3 4, 3 3)))"},
      {"valid polygon with holes",
       "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (1 1, 2 1, 2 2, 1 2, 1 1),"
       " (5 5, 6 5, 6 6, 5 6, 5 5))"},
  };
  for (const Case& c : cases) {
    for (const MakeValidParams& params :
         {kLinework, kStructure, MakeValidParams{MakeValidMethod::kStructure, true}}) {
      const std::string label = c.label + " (" + std::string(MakeValidMethodName(params.method)) +
                                (params.keep_collapsed ? ", keep collapsed)" : ")");
      std::optional<MakeValidStats> stats = CheckSameAsGeos(WkbOf(c.wkt), params, label);
      ASSERT_TRUE(stats.has_value()) << label;
      // Every case is answered ring by ring, except where nothing is left (structure of a
      // shell inside its hole): an empty answer is left to GEOS (POLYGON EMPTY).
      const bool empty =
          c.label == "hole larger than the shell" && params.method == MakeValidMethod::kStructure;
      EXPECT_EQ(stats->ring_level, empty ? 0 : 1) << label;
      EXPECT_EQ(stats->whole_fallbacks, empty ? 1 : 0) << label;
    }
  }
}

// The normal holes of a generated polygon come back with exactly their coordinates, as holes,
// with both methods; the broken rings do not.
TEST_F(RingRepairTest, KeepsIsolatedValidRingsAsTheyAre) {
  HoleyPolygonSpec spec;
  spec.seed = 11;
  spec.holes = 500;
  const HoleyPolygon polygon = MakeHoleyPolygon(spec);
  for (const MakeValidParams& params : {kLinework, kStructure}) {
    ASSERT_OK_AND_ASSIGN(Geometry input, Geometry::FromWkb(*ctx_, polygon.wkb));
    MakeValidOptions options;
    options.params = params;
    options.ring_level_min_vertices = 0;
    MakeValidStats stats;
    ASSERT_OK_AND_ASSIGN(Geometry fixed, MakeValidWith(input, options, &stats));
    ASSERT_EQ(stats.ring_level, 1);
    ASSERT_OK_AND_ASSIGN(std::string wkb, fixed.ToWkb());
    const GEOSContextHandle_t h = ref_.h();
    GEOSGeometry* got = ref_.Polygonal(ref_.Read(wkb));
    std::set<std::vector<double>> holes;
    for (int p = 0; p < GEOSGetNumGeometries_r(h, got); ++p) {
      const GEOSGeometry* polygon_n = GEOSGetGeometryN_r(h, got, p);
      for (int r = 0; r < GEOSGetNumInteriorRings_r(h, polygon_n); ++r) {
        const GEOSCoordSequence* seq =
            GEOSGeom_getCoordSeq_r(h, GEOSGetInteriorRingN_r(h, polygon_n, r));
        unsigned size = 0;
        GEOSCoordSeq_getSize_r(h, seq, &size);
        std::vector<double> xy(2 * size);
        GEOSCoordSeq_copyToBuffer_r(h, seq, xy.data(), 0, 0);
        holes.insert(std::move(xy));
      }
    }
    GEOSGeom_destroy_r(h, got);
    for (std::int64_t i = 1; i <= polygon.normal_holes; ++i) {
      EXPECT_TRUE(holes.contains(polygon.rings[static_cast<std::size_t>(i)]))
          << MakeValidMethodName(params.method) << ": hole " << i << " changed";
    }
    // The bowtie right after the normal holes is repaired, so it is not kept as it was.
    EXPECT_FALSE(holes.contains(polygon.rings[static_cast<std::size_t>(polygon.normal_holes + 1)]));
  }
}

TEST_F(RingRepairTest, StopTokenCancelsQuickly) {
  HoleyPolygonSpec spec;
  spec.seed = 5;
  spec.holes = 40000;
  spec.shell_vertices = 40000;
  const HoleyPolygon polygon = MakeHoleyPolygon(spec);
  ASSERT_OK_AND_ASSIGN(Geometry input, Geometry::FromWkb(*ctx_, polygon.wkb));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ThreadPool> pool, ThreadPool::Make(2));
  MakeValidOptions options;
  options.executor = pool.get();
  options.ring_level_min_vertices = 0;

  // Stopped before the start: nothing runs.
  std::stop_source stopped;
  stopped.request_stop();
  options.stop = stopped.get_token();
  EXPECT_THAT(MakeValidWith(input, options), ::geolake::testing::IsError(ErrorCode::kCancelled));

  // Stopped while running: the tasks see it between pieces, GEOS inside one.
  for (const MakeValidParams& params : {kLinework, kStructure}) {
    std::stop_source source;
    options.stop = source.get_token();
    options.params = params;
    const auto start = std::chrono::steady_clock::now();
    std::jthread stopper([&source] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      source.request_stop();
    });
    MakeValidStats stats;
    auto result = MakeValidWith(input, options, &stats);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_THAT(result, ::geolake::testing::IsError(ErrorCode::kCancelled))
        << MakeValidMethodName(params.method);
    EXPECT_LT(seconds, 2.0) << MakeValidMethodName(params.method);
    EXPECT_EQ(stats.ring_level, 0);
  }
}

TEST_F(RingRepairTest, ZPolygonFallsBackToGeosWhole) {
  const std::string wkb = WkbOf("POLYGON Z ((0 0 1, 1 1 1, 1 0 1, 0 1 1, 0 0 1))");
  ASSERT_OK_AND_ASSIGN(Geometry input, Geometry::FromWkb(*ctx_, wkb));
  // The internal path says "no answer" without an error...
  {
    const GEOSContextHandle_t h = ref_.h();
    GEOSGeometry* g = ref_.Read(wkb);
    MakeValidOptions options;
    options.ring_level_min_vertices = 0;
    Status error = Status::Internal("not set");
    GEOSGeometry* out = internal::RingLevelRepair(h, g, options, nullptr, &error);
    EXPECT_EQ(out, nullptr);
    EXPECT_OK(error);
    GEOSGeom_destroy_r(h, g);
  }
  // ...and MakeValidWith answers with GEOS whole, counted as a fallback.
  MakeValidOptions options;
  options.ring_level_min_vertices = 0;
  MakeValidStats stats;
  ASSERT_OK_AND_ASSIGN(Geometry fixed, MakeValidWith(input, options, &stats));
  EXPECT_EQ(stats.ring_level, 0);
  EXPECT_EQ(stats.whole_fallbacks, 1);
  ASSERT_OK_AND_ASSIGN(Geometry expected, GeosMakeValid(input, options.params));
  ASSERT_OK_AND_ASSIGN(std::string got_wkt, fixed.ToWkt());
  ASSERT_OK_AND_ASSIGN(std::string want_wkt, expected.ToWkt());
  EXPECT_EQ(got_wkt, want_wkt);
}

// Below the threshold nothing goes ring by ring.
TEST_F(RingRepairTest, SmallPolygonsGoToGeosWhole) {
  ASSERT_OK_AND_ASSIGN(Geometry input,
                       Geometry::FromWkt(*ctx_, "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"));
  MakeValidStats stats;
  ASSERT_OK_AND_ASSIGN(Geometry fixed, MakeValidWith(input, MakeValidOptions{}, &stats));
  EXPECT_EQ(stats.ring_level, 0);
  EXPECT_EQ(stats.whole_fallbacks, 0);
  ASSERT_OK_AND_ASSIGN(bool valid, fixed.IsValid());
  EXPECT_TRUE(valid);
}

// The ingest's structure repair (Geometry::MakeValid, RepairIfInvalid) takes the ring-level
// path above 20k vertices; its answer is GEOS's point set.
TEST_F(RingRepairTest, IngestRepairOfLargePolygonMatchesGeos) {
  HoleyPolygonSpec spec;
  spec.seed = 21;
  spec.holes = 4000;
  spec.shell_vertices = 6000;
  const HoleyPolygon polygon = MakeHoleyPolygon(spec);
  ASSERT_GE(polygon.vertices, MakeValidOptions{}.ring_level_min_vertices);
  ASSERT_OK_AND_ASSIGN(Geometry input, Geometry::FromWkb(*ctx_, polygon.wkb));
  ASSERT_OK_AND_ASSIGN(Geometry fixed, input.MakeValid());
  ASSERT_OK_AND_ASSIGN(std::optional<Geometry> repaired, input.RepairIfInvalid());
  ASSERT_TRUE(repaired.has_value());
  for (const Geometry* g : {&fixed, &*repaired}) {
    ASSERT_OK_AND_ASSIGN(bool valid, g->IsValid());
    EXPECT_TRUE(valid);
    ASSERT_OK_AND_ASSIGN(std::string wkb, g->ToWkb());
    const GEOSContextHandle_t h = ref_.h();
    GEOSGeometry* in = ref_.Read(polygon.wkb);
    GEOSGeometry* expected = ref_.Polygonal(ref_.Repair(in, kStructure));
    GEOSGeometry* got = ref_.Polygonal(ref_.Read(wkb));
    GEOSGeometry* diff = GEOSSymDifference_r(h, expected, got);
    double want_area = 0, diff_area = -1;
    GEOSArea_r(h, expected, &want_area);
    GEOSArea_r(h, diff, &diff_area);
    EXPECT_GE(diff_area, 0);
    EXPECT_LE(diff_area, 1e-9 * want_area);
    for (GEOSGeometry* x : {in, expected, got, diff}) GEOSGeom_destroy_r(h, x);
  }
}

// Every invalid polygon of Natural Earth's countries, ring by ring.
TEST_F(RingRepairTest, RealInvalidPolygonsMatchGeosWhole) {
  GDALAllRegister();
  const std::string path = ::geolake::testing::DataPath("ne_countries_10m.gpkg");
  GDALDatasetH ds =
      GDALOpenEx(path.c_str(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr);
  if (ds == nullptr) GTEST_SKIP() << ::geolake::testing::MissingDataReason("ne_countries_10m.gpkg");
  OGRLayerH layer = GDALDatasetGetLayer(ds, 0);
  OGRFeatureH feature;
  int invalid = 0, ring_level = 0;
  while ((feature = OGR_L_GetNextFeature(layer)) != nullptr) {
    OGRGeometryH g = OGR_F_GetGeometryRef(feature);
    if (g != nullptr) {
      std::string wkb(static_cast<std::size_t>(OGR_G_WkbSize(g)), '\0');
      OGR_G_ExportToIsoWkb(g, wkbNDR, reinterpret_cast<unsigned char*>(wkb.data()));
      GEOSGeometry* parsed = ref_.Read(wkb);
      const bool is_invalid = parsed != nullptr && GEOSisValid_r(ref_.h(), parsed) == 0;
      if (parsed != nullptr) GEOSGeom_destroy_r(ref_.h(), parsed);
      if (is_invalid) {
        ++invalid;
        // One method per country, alternating, to keep the unit suite short (both methods on
        // every country took 24 s in a debug build; all pass).
        const std::int64_t fid = OGR_F_GetFID(feature);
        const std::string label = "ne_countries fid " + std::to_string(fid);
        std::optional<MakeValidStats> stats =
            CheckSameAsGeos(wkb, fid % 2 == 0 ? kLinework : kStructure, label);
        if (stats) ring_level += static_cast<int>(stats->ring_level);
      }
    }
    OGR_F_Destroy(feature);
  }
  GDALClose(ds);
  std::printf("ring-level make-valid on %d invalid countries: %d answered ring by ring\n", invalid,
              ring_level);
  EXPECT_GT(invalid, 0);
  EXPECT_EQ(ring_level, invalid);
}

}  // namespace
}  // namespace geolake::geo
