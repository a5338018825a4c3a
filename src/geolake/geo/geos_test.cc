#include "geolake/geo/geos.h"

#include <geos_c.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "geolake/geo/geo_context_internal.h"
#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

class GeosTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(ctx_, GeoContext::Make()); }

  Geometry Wkt(std::string_view wkt) {
    auto g = Geometry::FromWkt(*ctx_, wkt);
    EXPECT_OK(g);
    return std::move(g).value();
  }

  std::unique_ptr<GeoContext> ctx_;
};

// ISO WKB of POINT (1 2), little endian: byte order 01, type 1 as uint32 LE, then two doubles.
// 1.0 = 0x3FF0000000000000, 2.0 = 0x4000000000000000, written least significant byte first.
const std::string kPointWkb(
    "\x01\x01\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\xf0\x3f"
    "\x00\x00\x00\x00\x00\x00\x00\x40",
    21);

TEST_F(GeosTest, ReadsAndWritesIsoWkb) {
  ASSERT_OK_AND_ASSIGN(Geometry g, Geometry::FromWkb(*ctx_, kPointWkb));
  ASSERT_OK_AND_ASSIGN(std::string wkt, g.ToWkt());
  EXPECT_EQ(wkt, "POINT (1 2)");
  ASSERT_OK_AND_ASSIGN(std::string wkb, g.ToWkb());
  EXPECT_EQ(wkb, kPointWkb);
}

TEST_F(GeosTest, WritesIsoTypeCodeForZ) {
  // ISO WKB gives POINT Z type 1001 = 0x03E9, i.e. bytes E9 03 00 00 (EWKB would set a flag
  // bit 0x80000000 instead).
  Geometry g = Wkt("POINT Z (1 2 3)");
  ASSERT_OK_AND_ASSIGN(std::string wkb, g.ToWkb());
  ASSERT_EQ(wkb.size(), 1u + 4 + 3 * 8);
  EXPECT_EQ(wkb.substr(0, 5), std::string("\x01\xe9\x03\x00\x00", 5));
  ASSERT_OK_AND_ASSIGN(Geometry back, Geometry::FromWkb(*ctx_, wkb));
  ASSERT_OK_AND_ASSIGN(std::string wkt, back.ToWkt());
  EXPECT_EQ(wkt, "POINT Z (1 2 3)");
}

// Geometry::ToWkb writes 2D points, lines and polygons itself (internal::FastWkb): the bytes
// must be those of GEOS's own writer, and everything else must be left to GEOS.
TEST_F(GeosTest, FastWkbWritesWhatGeosWrites) {
  GEOSContextHandle_t h = ctx_->impl().geos;
  GEOSWKBWriter* writer = GEOSWKBWriter_create_r(h);
  ASSERT_NE(writer, nullptr);
  GEOSWKBWriter_setFlavor_r(h, writer, GEOS_WKB_ISO);
  GEOSWKBWriter_setByteOrder_r(h, writer, GEOS_WKB_NDR);
  GEOSWKBWriter_setOutputDimension_r(h, writer, 3);
  GEOSWKBWriter_setIncludeSRID_r(h, writer, 0);
  const auto geos_bytes = [&](const Geometry& g) {
    std::size_t size = 0;
    unsigned char* buf = GEOSWKBWriter_write_r(h, writer, internal::GeometryHandle(g), &size);
    std::string bytes(reinterpret_cast<const char*>(buf), size);
    GEOSFree_r(h, buf);
    return bytes;
  };
  for (std::string_view wkt : {
           "POINT (1 2)",
           "LINESTRING (0 0, 1.5 -2, 1e300 3)",
           "POLYGON ((0 0, 4 0, 4 3, 0 3, 0 0))",
           "POLYGON ((0 0, 4 0, 4 3, 0 3, 0 0), (1 1, 2 1, 2 2, 1 1), (3 1, 3.5 1, 3 2, 3 1))",
           "MULTIPOINT ((1 2), (3 4))",
           "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3, 4 2))",
           "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5), (5.5 5.2, 5.8 5.2, "
           "5.8 5.5, 5.5 5.2)))",
       }) {
    SCOPED_TRACE(wkt);
    Geometry g = Wkt(wkt);
    std::string fast;
    ASSERT_TRUE(internal::FastWkb(h, internal::GeometryHandle(g), &fast));
    EXPECT_EQ(fast, geos_bytes(g));
    ASSERT_OK_AND_ASSIGN(std::string wkb, g.ToWkb());
    EXPECT_EQ(wkb, fast);
  }
  // Left to GEOS's writer, and ToWkb still writes GEOS's bytes.
  for (std::string_view wkt : {
           "POINT EMPTY",
           "POLYGON EMPTY",
           "POINT Z (1 2 3)",
           "POLYGON Z ((0 0 1, 1 0 1, 1 1 1, 0 0 1))",
           "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), EMPTY)",
           "GEOMETRYCOLLECTION (POINT (1 2))",
       }) {
    SCOPED_TRACE(wkt);
    Geometry g = Wkt(wkt);
    std::string fast;
    EXPECT_FALSE(internal::FastWkb(h, internal::GeometryHandle(g), &fast));
    ASSERT_OK_AND_ASSIGN(std::string wkb, g.ToWkb());
    EXPECT_EQ(wkb, geos_bytes(g));
  }
  GEOSWKBWriter_destroy_r(h, writer);
}

TEST_F(GeosTest, PolygonRoundTripsThroughWkb) {
  Geometry g = Wkt("POLYGON ((0 0, 4 0, 4 3, 0 3, 0 0), (1 1, 2 1, 2 2, 1 1))");
  ASSERT_OK_AND_ASSIGN(std::string wkb, g.ToWkb());
  ASSERT_OK_AND_ASSIGN(Geometry back, Geometry::FromWkb(*ctx_, wkb));
  ASSERT_OK_AND_ASSIGN(std::string a, g.ToWkt());
  ASSERT_OK_AND_ASSIGN(std::string b, back.ToWkt());
  EXPECT_EQ(a, b);
  ASSERT_OK_AND_ASSIGN(std::string name, back.TypeName());
  EXPECT_EQ(name, "Polygon");
}

TEST_F(GeosTest, GarbageWkbIsGeometryErrorWithGeosMessage) {
  // A point header with only 3 of its 16 coordinate bytes.
  const std::string truncated = kPointWkb.substr(0, 8);
  auto r = Geometry::FromWkb(*ctx_, truncated);
  EXPECT_THAT(r, IsErrorWith(ErrorCode::kGeometryError, "from WKB: "));
  EXPECT_THAT(r, IsErrorWith(ErrorCode::kGeometryError, "ParseException"));
  EXPECT_EQ(ctx_->last_geos_message(),
            r.status().message().substr(std::string("from WKB: ").size()));
  // An unknown geometry type code (99).
  const std::string bad_type("\x01\x63\x00\x00\x00", 5);
  EXPECT_THAT(Geometry::FromWkb(*ctx_, bad_type), IsError(ErrorCode::kGeometryError));
  EXPECT_THAT(Geometry::FromWkb(*ctx_, std::string()), IsError(ErrorCode::kGeometryError));
}

TEST_F(GeosTest, GarbageWktIsGeometryError) {
  EXPECT_THAT(Geometry::FromWkt(*ctx_, "POLYGON ((0 0, 1"),
              IsErrorWith(ErrorCode::kGeometryError, "from WKT: "));
}

TEST_F(GeosTest, ToWktRejectsBadPrecision) {
  Geometry g = Wkt("POINT (1 2)");
  EXPECT_THAT(g.ToWkt(-1), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(std::string wkt, Wkt("POINT (1.23456 2)").ToWkt(2));
  EXPECT_EQ(wkt, "POINT (1.23 2)");
}

TEST_F(GeosTest, BowtieIsInvalidAndMakeValidSplitsIt) {
  // The bowtie (0 0, 1 1, 1 0, 0 1, 0 0) crosses itself where y = x meets y = 1 - x, at
  // (0.5, 0.5). Its two lobes are the triangles (0 0, 0.5 0.5, 1 0) and (0 1, 0.5 0.5, 1 1),
  // each with base 1 and height 0.5, so area 0.25 each and 0.5 together.
  Geometry bowtie = Wkt("POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))");
  ASSERT_OK_AND_ASSIGN(bool valid, bowtie.IsValid());
  EXPECT_FALSE(valid);
  ASSERT_OK_AND_ASSIGN(std::string reason, bowtie.IsValidReason());
  EXPECT_EQ(reason, "Self-intersection[0.5 0.5]");

  ASSERT_OK_AND_ASSIGN(Geometry fixed, bowtie.MakeValid());
  ASSERT_OK_AND_ASSIGN(bool fixed_valid, fixed.IsValid());
  EXPECT_TRUE(fixed_valid);
  ASSERT_OK_AND_ASSIGN(std::string type, fixed.TypeName());
  EXPECT_EQ(type, "MultiPolygon");
  ASSERT_OK_AND_ASSIGN(double area, fixed.Area());
  EXPECT_DOUBLE_EQ(area, 0.5);
  ASSERT_OK_AND_ASSIGN(std::string fixed_reason, fixed.IsValidReason());
  EXPECT_EQ(fixed_reason, "Valid Geometry");
  // Written as 2D ISO WKB: MultiPolygon type 6, two polygons.
  ASSERT_OK_AND_ASSIGN(std::string wkb, fixed.ToWkb());
  EXPECT_EQ(wkb.substr(0, 9), std::string("\x01\x06\x00\x00\x00\x02\x00\x00\x00", 9));
}

TEST_F(GeosTest, MakeValidDropsCollapsedParts) {
  // A zero-area polygon collapses to a line; with keep-collapsed = false the structure method
  // drops it and returns an empty polygon.
  Geometry flat = Wkt("POLYGON ((0 0, 1 1, 2 2, 0 0))");
  ASSERT_OK_AND_ASSIGN(Geometry fixed, flat.MakeValid());
  ASSERT_OK_AND_ASSIGN(bool empty, fixed.IsEmpty());
  EXPECT_TRUE(empty);
}

TEST_F(GeosTest, AreaAndLengthOfKnownShapes) {
  // A 4 x 3 rectangle: area 12, perimeter 14; a 3-4-5 segment: length 5.
  Geometry rect = Wkt("POLYGON ((0 0, 4 0, 4 3, 0 3, 0 0))");
  ASSERT_OK_AND_ASSIGN(double area, rect.Area());
  EXPECT_DOUBLE_EQ(area, 12.0);
  ASSERT_OK_AND_ASSIGN(double perimeter, rect.Length());
  EXPECT_DOUBLE_EQ(perimeter, 14.0);
  ASSERT_OK_AND_ASSIGN(double len, Wkt("LINESTRING (0 0, 3 4)").Length());
  EXPECT_DOUBLE_EQ(len, 5.0);
  ASSERT_OK_AND_ASSIGN(double point_area, Wkt("POINT (1 1)").Area());
  EXPECT_EQ(point_area, 0.0);
}

TEST_F(GeosTest, Predicates) {
  Geometry big = Wkt("POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))");
  Geometry inner = Wkt("POLYGON ((2 2, 3 2, 3 3, 2 3, 2 2))");
  Geometry beside = Wkt("POLYGON ((10 0, 11 0, 11 1, 10 1, 10 0))");  // shares an edge part
  Geometry far = Wkt("POINT (20 20)");
  EXPECT_EQ(big.Intersects(inner).value(), true);
  EXPECT_EQ(big.Contains(inner).value(), true);
  EXPECT_EQ(inner.Within(big).value(), true);
  EXPECT_EQ(big.Within(inner).value(), false);
  EXPECT_EQ(big.Touches(beside).value(), true);
  EXPECT_EQ(big.Touches(inner).value(), false);
  EXPECT_EQ(big.Intersects(far).value(), false);
}

TEST_F(GeosTest, BinaryOperationsRejectOperandsFromAnotherContext) {
  ASSERT_OK_AND_ASSIGN(auto other_ctx, GeoContext::Make());
  Geometry a = Wkt("POINT (0 0)");
  ASSERT_OK_AND_ASSIGN(Geometry b, Geometry::FromWkt(*other_ctx, "POINT (0 0)"));
  EXPECT_THAT(a.Intersects(b), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a.Contains(b), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a.Within(b), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a.Touches(b), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a.Intersection(b), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(a.Union(b), IsError(ErrorCode::kInvalidArgument));
  std::vector<Geometry> parts;
  parts.push_back(std::move(b));
  EXPECT_THAT(Geometry::UnionAll(*ctx_, std::move(parts)), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, IntersectionAndUnionOfOverlappingSquares) {
  // Unit-offset 2x2 squares overlap in the 1x1 square (1 1, 2 2): union area 4 + 4 - 1 = 7.
  Geometry a = Wkt("POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))");
  Geometry b = Wkt("POLYGON ((1 1, 3 1, 3 3, 1 3, 1 1))");
  ASSERT_OK_AND_ASSIGN(Geometry inter, a.Intersection(b));
  EXPECT_DOUBLE_EQ(inter.Area().value(), 1.0);
  ASSERT_OK_AND_ASSIGN(Envelope box, inter.Bounds());
  EXPECT_EQ(box, (Envelope{1, 1, 2, 2}));
  ASSERT_OK_AND_ASSIGN(Geometry uni, a.Union(b));
  EXPECT_DOUBLE_EQ(uni.Area().value(), 7.0);
}

TEST_F(GeosTest, OverlayOnInvalidInputIsGeometryError) {
  // Overlay of a self-crossing polygon throws a TopologyException inside GEOS.
  Geometry bowtie = Wkt("POLYGON ((0 0, 10 10, 10 0, 0 10, 0 0))");
  Geometry square = Wkt("POLYGON ((2 1, 8 1, 8 3, 2 3, 2 1))");
  EXPECT_THAT(bowtie.Intersection(square),
              IsErrorWith(ErrorCode::kGeometryError, "intersection: "));
  EXPECT_THAT(bowtie.Union(square), IsErrorWith(ErrorCode::kGeometryError, "union: "));
}

TEST_F(GeosTest, UnionAllDissolvesTouchingSquares) {
  // Three unit squares in a row dissolve to one 3 x 1 rectangle.
  std::vector<Geometry> parts;
  for (int i = 0; i < 3; ++i) {
    parts.push_back(Wkt("POLYGON ((" + std::to_string(i) + " 0, " + std::to_string(i + 1) + " 0, " +
                        std::to_string(i + 1) + " 1, " + std::to_string(i) + " 1, " +
                        std::to_string(i) + " 0))"));
  }
  ASSERT_OK_AND_ASSIGN(Geometry all, Geometry::UnionAll(*ctx_, std::move(parts)));
  EXPECT_EQ(all.TypeName().value(), "Polygon");
  EXPECT_DOUBLE_EQ(all.Area().value(), 3.0);
  EXPECT_DOUBLE_EQ(all.Length().value(), 8.0);

  ASSERT_OK_AND_ASSIGN(Geometry none, Geometry::UnionAll(*ctx_, {}));
  EXPECT_TRUE(none.IsEmpty().value());

  ASSERT_OK_AND_ASSIGN(Geometry dissolved, Wkt("MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)), "
                                               "((1 0, 2 0, 2 1, 1 1, 1 0)))")
                                               .UnaryUnion());
  EXPECT_EQ(dissolved.TypeName().value(), "Polygon");
}

TEST_F(GeosTest, UnionAllOnAGridSnapsTheParts) {
  // Squares 1e-4 apart close their gap on a grid of 0.01; without a grid they stay two parts.
  auto parts = [&] {
    std::vector<Geometry> v;
    v.push_back(Wkt("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))"));
    v.push_back(Wkt("POLYGON ((1.0001 0, 2 0, 2 1, 1.0001 1, 1.0001 0))"));
    return v;
  };
  ASSERT_OK_AND_ASSIGN(Geometry floating, Geometry::UnionAll(*ctx_, parts()));
  EXPECT_EQ(floating.TypeName().value(), "MultiPolygon");
  ASSERT_OK_AND_ASSIGN(Geometry snapped, Geometry::UnionAll(*ctx_, parts(), 0.01));
  EXPECT_EQ(snapped.TypeName().value(), "Polygon");
  EXPECT_DOUBLE_EQ(snapped.Area().value(), 2.0);
  EXPECT_THAT(Geometry::UnionAll(*ctx_, parts(), -1), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, FromWkbsParsesEachInOrderAndFailsOnTheFirstBadOne) {
  Geometry square = Wkt("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))");
  ASSERT_OK_AND_ASSIGN(std::string square_wkb, square.ToWkb());
  const std::vector<std::string_view> wkbs = {kPointWkb, square_wkb};
  ASSERT_OK_AND_ASSIGN(std::vector<Geometry> parsed, Geometry::FromWkbs(*ctx_, wkbs));
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].ToWkt().value(), "POINT (1 2)");
  EXPECT_DOUBLE_EQ(parsed[1].Area().value(), 1.0);
  const std::vector<std::string_view> bad = {square_wkb, std::string_view(kPointWkb).substr(0, 9)};
  EXPECT_THAT(Geometry::FromWkbs(*ctx_, bad), IsErrorWith(ErrorCode::kGeometryError, "from WKB"));
}

TEST_F(GeosTest, UnionWkbsSnappingRetriesOnCoarserGridsOnlyWhenGeosFails) {
  std::atomic<std::int64_t> retries{0};
  auto wkb = [&](std::string_view wkt) { return Wkt(wkt).ToWkb().value(); };
  // Valid parts: one union, no retry, on the given grid.
  const std::string a = wkb("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))");
  const std::string b = wkb("POLYGON ((1.0001 0, 2 0, 2 1, 1.0001 1, 1.0001 0))");
  const std::vector<std::string_view> valid = {a, b};
  ASSERT_OK_AND_ASSIGN(Geometry floating, Geometry::UnionWkbsSnapping(*ctx_, valid, 0, &retries));
  EXPECT_EQ(floating.TypeName().value(), "MultiPolygon");
  ASSERT_OK_AND_ASSIGN(Geometry snapped, Geometry::UnionWkbsSnapping(*ctx_, valid, 0.01, &retries));
  EXPECT_DOUBLE_EQ(snapped.Area().value(), 2.0);
  EXPECT_EQ(retries.load(), 0);
  // A self-crossing part makes GEOS throw on every grid: three retries, then its error.
  const std::string bowtie = wkb("POLYGON ((0 0, 10 10, 10 0, 0 10, 0 0))");
  const std::string square = wkb("POLYGON ((2 1, 8 1, 8 3, 2 3, 2 1))");
  const std::vector<std::string_view> invalid = {bowtie, square};
  EXPECT_THAT(Geometry::UnionWkbsSnapping(*ctx_, invalid, 0, &retries),
              IsErrorWith(ErrorCode::kGeometryError, "union all"));
  EXPECT_EQ(retries.load(), 3);
  EXPECT_THAT(Geometry::UnionWkbsSnapping(*ctx_, valid, -1), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, CoverageUnionNeedsMatchingEdges) {
  // Two squares sharing the edge x = 1 with the same vertices: the shared edge cancels.
  std::vector<Geometry> coverage;
  coverage.push_back(Wkt("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))"));
  coverage.push_back(Wkt("POLYGON ((1 0, 2 0, 2 1, 1 1, 1 0))"));
  ASSERT_OK_AND_ASSIGN(Geometry all, Geometry::CoverageUnionAll(*ctx_, std::move(coverage)));
  EXPECT_EQ(all.TypeName().value(), "Polygon");
  EXPECT_DOUBLE_EQ(all.Area().value(), 2.0);
  // A T-junction (a vertex at 1 0.5 on one side only) does not node: GEOS 3.11 throws.
  std::vector<Geometry> t_junction;
  t_junction.push_back(Wkt("POLYGON ((0 0, 1 0, 1 0.5, 1 1, 0 1, 0 0))"));
  t_junction.push_back(Wkt("POLYGON ((1 0, 2 0, 2 1, 1 1, 1 0))"));
  EXPECT_THAT(Geometry::CoverageUnionAll(*ctx_, std::move(t_junction)),
              IsErrorWith(ErrorCode::kGeometryError, "coverage union: "));
  // Overlapping squares: GEOS 3.11 may answer without an error, but not with their union (area
  // 7), which is why a caller not sure of its coverage validates the result.
  std::vector<Geometry> overlapping;
  overlapping.push_back(Wkt("POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))"));
  overlapping.push_back(Wkt("POLYGON ((1 1, 3 1, 3 3, 1 3, 1 1))"));
  Result<Geometry> wrong = Geometry::CoverageUnionAll(*ctx_, std::move(overlapping));
  if (wrong.ok()) {
    EXPECT_FALSE(wrong->IsValid().value() && std::abs(wrong->Area().value() - 7) < 1e-9)
        << wrong->ToWkt().value();
  }
}

TEST_F(GeosTest, SetPrecisionSnapsToTheGrid) {
  ASSERT_OK_AND_ASSIGN(Geometry g,
                       Wkt("POLYGON ((0.1 0.1, 2.04 0, 2 1.96, 0 2, 0.1 0.1))").SetPrecision(1));
  EXPECT_DOUBLE_EQ(g.Area().value(), 4.0);
  EXPECT_EQ(g.Bounds().value(), (Envelope{0, 0, 2, 2}));
  EXPECT_THAT(g.SetPrecision(0), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, BufferOfPointApproachesCircle) {
  // A buffer is a regular polygon inscribed in the circle: with 4*q segments its area is
  // (n/2) r^2 sin(2 pi / n). For r = 1, q = 8 (n = 32): 16 sin(pi/16) = 3.121445...
  ASSERT_OK_AND_ASSIGN(Geometry disc, Wkt("POINT (0 0)").Buffer(1.0, 8));
  const double expected = 16 * std::sin(std::numbers::pi / 16);
  EXPECT_NEAR(disc.Area().value(), expected, 1e-12);
  EXPECT_THAT(Wkt("POINT (0 0)").Buffer(NAN), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Wkt("POINT (0 0)").Buffer(1.0, 0), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, SimplifyRemovesSmallWiggleButKeepsTopology) {
  // The middle vertex is 0.01 off the straight line; tolerance 0.1 removes it.
  Geometry line = Wkt("LINESTRING (0 0, 5 0.01, 10 0)");
  ASSERT_OK_AND_ASSIGN(Geometry simple, line.Simplify(0.1));
  EXPECT_EQ(simple.ToWkt().value(), "LINESTRING (0 0, 10 0)");
  // A polygon with a hole: simplification must not let the hole escape the shell.
  Geometry holed = Wkt("POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (1 1, 2 1, 2 2, 1 2, 1 1))");
  ASSERT_OK_AND_ASSIGN(Geometry holed_simple, holed.Simplify(5.0));
  EXPECT_TRUE(holed_simple.IsValid().value());
  EXPECT_THAT(line.Simplify(-1), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(line.Simplify(INFINITY), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, BoundsOfGeometryAndEmpty) {
  ASSERT_OK_AND_ASSIGN(Envelope box, Wkt("LINESTRING (3 -1, -2 4)").Bounds());
  EXPECT_EQ(box, (Envelope{-2, -1, 3, 4}));
  ASSERT_OK_AND_ASSIGN(Envelope empty, Wkt("POLYGON EMPTY").Bounds());
  EXPECT_TRUE(empty.IsEmpty());
}

TEST_F(GeosTest, CloneIsIndependent) {
  Geometry a = Wkt("POINT (1 2)");
  ASSERT_OK_AND_ASSIGN(Geometry b, a.Clone());
  a = Wkt("POINT (5 6)");
  EXPECT_EQ(b.ToWkt().value(), "POINT (1 2)");
}

TEST_F(GeosTest, PreparedGeometryAnswersLikePlain) {
  ASSERT_OK_AND_ASSIGN(PreparedGeometry prepared,
                       PreparedGeometry::Make(Wkt("POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))")));
  // Moving must keep the prepared handle valid.
  PreparedGeometry moved = std::move(prepared);
  for (int i = -2; i <= 12; ++i) {
    Geometry p = Wkt("POINT (" + std::to_string(i) + " 5)");
    ASSERT_OK_AND_ASSIGN(bool plain, moved.base().Intersects(p));
    ASSERT_OK_AND_ASSIGN(bool fast, moved.Intersects(p));
    EXPECT_EQ(plain, fast) << i;
    EXPECT_EQ(moved.Contains(p).value(), i > 0 && i < 10) << i;
    EXPECT_EQ(moved.Touches(p).value(), i == 0 || i == 10) << i;
  }
  EXPECT_TRUE(moved.Within(Wkt("POLYGON ((-1 -1, 11 -1, 11 11, -1 11, -1 -1))")).value());
  ASSERT_OK_AND_ASSIGN(auto other_ctx, GeoContext::Make());
  ASSERT_OK_AND_ASSIGN(Geometry foreign, Geometry::FromWkt(*other_ctx, "POINT (1 1)"));
  EXPECT_THAT(moved.Intersects(foreign), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, CoversCoveredByAndDistanceWithinCountTheBoundary) {
  Geometry square = Wkt("POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))");
  Geometry edge = Wkt("POINT (4 2)");
  Geometry far = Wkt("POINT (7 2)");
  // A point on the edge is covered but not within (the boundary is not the interior).
  EXPECT_TRUE(square.Covers(edge).value());
  EXPECT_TRUE(edge.CoveredBy(square).value());
  EXPECT_FALSE(edge.Within(square).value());
  EXPECT_FALSE(square.Covers(far).value());
  EXPECT_TRUE(square.DistanceWithin(far, 3).value());
  EXPECT_FALSE(square.DistanceWithin(far, 2.999).value());
  EXPECT_THAT(square.DistanceWithin(far, -1), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(PreparedGeometry prepared, PreparedGeometry::Make(square.Clone().value()));
  EXPECT_TRUE(prepared.Covers(edge).value());
  EXPECT_FALSE(prepared.CoveredBy(edge).value());
  EXPECT_TRUE(prepared.DistanceWithin(far, 3).value());
  EXPECT_FALSE(prepared.DistanceWithin(far, 2.5).value());
  EXPECT_THAT(prepared.DistanceWithin(far, std::nan("")), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(GeosTest, ClipByRectKeepsThePartInsideTheBox) {
  Geometry square = Wkt("POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))");
  ASSERT_OK_AND_ASSIGN(Geometry left, square.ClipByRect(Envelope{-1, -1, 2, 5}));
  EXPECT_DOUBLE_EQ(left.Area().value(), 8.0);
  ASSERT_OK_AND_ASSIGN(Geometry none, square.ClipByRect(Envelope{10, 10, 11, 11}));
  EXPECT_TRUE(none.IsEmpty().value());
  EXPECT_EQ(square.NumCoordinates().value(), 5);
}

TEST_F(GeosTest, PreparedGeometryFailsWhenCancelled) {
  std::stop_source stop;
  ctx_->set_stop_token(stop.get_token());
  Geometry square = Wkt("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))");
  stop.request_stop();
  EXPECT_THAT(PreparedGeometry::Make(std::move(square)), IsError(ErrorCode::kCancelled));
}

}  // namespace
}  // namespace geolake::geo
