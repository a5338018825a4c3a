#include "geolake/geo/wkb.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "geolake/core/hex.h"
#include "geolake/geo/wkt.h"
#include "geolake/testing/testing.h"

// Allocation probe: while armed, remember the largest single allocation request. Replacing the
// global operator new is the only way to observe what ParseWkb asks the allocator for; it is
// test-only and the counters are atomics.
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables)
static std::atomic<bool> g_probe_armed{false};
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables)
static std::atomic<std::size_t> g_probe_largest{0};

// g++ 12 with optimization flags the free() inside these replacements as a mismatch with
// operator new (-Wmismatched-new-delete), although both sides are replaced together here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
  if (g_probe_armed.load(std::memory_order_relaxed)) {
    std::size_t seen = g_probe_largest.load(std::memory_order_relaxed);
    while (size > seen && !g_probe_largest.compare_exchange_weak(seen, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// Every other unaligned form goes to malloc/free too: the sanitizers' runtime would otherwise
// allocate through its own operator (say nothrow new in a library) and free through ours.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

std::string Hex(std::string_view bytes) { return HexEncode(bytes); }

// Test input is well-formed hex; a typo fails the test loudly.
std::string Unhex(std::string_view hex) {
  Result<std::string> bytes = HexDecode(hex);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *std::move(bytes) : std::string();
}

// An encoder written independently of wkb.cc, to produce the input variants the reader must
// accept: either byte order, ISO codes or EWKB flags, an optional SRID on the outer header.
class VariantEncoder {
 public:
  VariantEncoder(const FlatGeometry& geometry, bool big_endian, bool ewkb,
                 std::optional<uint32_t> srid)
      : g_(geometry), big_endian_(big_endian), ewkb_(ewkb), srid_(srid) {}

  std::string Encode() {
    Part(0, true);
    return out_;
  }

 private:
  void U32(uint32_t v) {
    for (int byte_idx = 0; byte_idx < 4; ++byte_idx) {
      const int shift = big_endian_ ? 8 * (3 - byte_idx) : 8 * byte_idx;
      out_.push_back(static_cast<char>((v >> shift) & 0xff));
    }
  }
  void F64(double d) {
    uint64_t v;
    std::memcpy(&v, &d, 8);
    for (int byte_idx = 0; byte_idx < 8; ++byte_idx) {
      const int shift = big_endian_ ? 8 * (7 - byte_idx) : 8 * byte_idx;
      out_.push_back(static_cast<char>((v >> shift) & 0xff));
    }
  }
  void Coords(uint32_t first, uint32_t count) {
    for (uint32_t idx = 0; idx < count; ++idx) {
      for (double d : g_.coordinate(first + idx)) F64(d);
    }
  }
  uint32_t Part(uint32_t idx, bool outer) {
    const GeometryPart& part = g_.parts[idx];
    out_.push_back(big_endian_ ? '\x00' : '\x01');
    uint32_t code;
    if (ewkb_) {
      code = static_cast<uint32_t>(part.type);
      if (HasZ(g_.dims)) code |= 0x80000000u;
      if (HasM(g_.dims)) code |= 0x40000000u;
      if (outer && srid_) code |= 0x20000000u;
    } else {
      code = IsoWkbCode(part.type, g_.dims);
    }
    U32(code);
    if (ewkb_ && outer && srid_) U32(*srid_);
    switch (part.type) {
      case GeometryType::kPoint:
        Coords(part.offset, 1);
        break;
      case GeometryType::kLineString:
        U32(part.count);
        Coords(part.offset, part.count);
        break;
      case GeometryType::kPolygon:
        U32(part.count);
        for (uint32_t ring_idx = 0; ring_idx < part.count; ++ring_idx) {
          const GeometryRing& ring = g_.rings[part.offset + ring_idx];
          U32(ring.count);
          Coords(ring.offset, ring.count);
        }
        break;
      default: {
        U32(part.count);
        uint32_t child = idx + 1;
        for (uint32_t member_idx = 0; member_idx < part.count; ++member_idx) {
          child = Part(child, false);
        }
      }
    }
    return part.end;
  }

  const FlatGeometry& g_;
  bool big_endian_;
  bool ewkb_;
  std::optional<uint32_t> srid_;
  std::string out_;
};

// Coordinates for the type x dimension matrix: distinct values so that a swapped or dropped
// ordinate shows up.
std::string Coord(Dimensions dims, int seed) {
  std::string out = std::to_string(seed) + " " + std::to_string(-seed - 0.5);
  if (HasZ(dims)) out += " " + std::to_string(seed * 10 + 0.25);
  if (HasM(dims)) out += " " + std::to_string(seed * 100 + 1);
  return out;
}

std::string Tag(Dimensions dims) {
  switch (dims) {
    case Dimensions::kXY:
      return "";
    case Dimensions::kXYZ:
      return " Z";
    case Dimensions::kXYM:
      return " M";
    case Dimensions::kXYZM:
      return " ZM";
  }
  return "";
}

std::string SampleWkt(GeometryType type, Dimensions dims) {
  auto c = [&](int seed) { return Coord(dims, seed); };
  const std::string ring = "(" + c(0) + ", " + c(1) + ", " + c(2) + ", " + c(0) + ")";
  const std::string ring2 = "(" + c(5) + ", " + c(6) + ", " + c(7) + ", " + c(5) + ")";
  const std::string tag = Tag(dims);
  switch (type) {
    case GeometryType::kPoint:
      return "POINT" + tag + " (" + c(3) + ")";
    case GeometryType::kLineString:
      return "LINESTRING" + tag + " (" + c(1) + ", " + c(2) + ", " + c(3) + ")";
    case GeometryType::kPolygon:
      return "POLYGON" + tag + " (" + ring + ", " + ring2 + ")";
    case GeometryType::kMultiPoint:
      return "MULTIPOINT" + tag + " ((" + c(1) + "), (" + c(2) + "))";
    case GeometryType::kMultiLineString:
      return "MULTILINESTRING" + tag + " ((" + c(1) + ", " + c(2) + "), EMPTY, (" + c(3) + ", " +
             c(4) + "))";
    case GeometryType::kMultiPolygon:
      return "MULTIPOLYGON" + tag + " ((" + ring + "), (" + ring2 + ", " + ring + "))";
    case GeometryType::kGeometryCollection:
      return "GEOMETRYCOLLECTION" + tag + " (POINT" + tag + " (" + c(9) + "), MULTIPOLYGON" + tag +
             " ((" + ring + ")), GEOMETRYCOLLECTION" + tag + " (LINESTRING" + tag + " (" + c(1) +
             ", " + c(8) + ")), POINT" + tag + " EMPTY)";
  }
  return "";
}

constexpr GeometryType kAllTypes[] = {GeometryType::kPoint,
                                      GeometryType::kLineString,
                                      GeometryType::kPolygon,
                                      GeometryType::kMultiPoint,
                                      GeometryType::kMultiLineString,
                                      GeometryType::kMultiPolygon,
                                      GeometryType::kGeometryCollection};
constexpr Dimensions kAllDims[] = {Dimensions::kXY, Dimensions::kXYZ, Dimensions::kXYM,
                                   Dimensions::kXYZM};

Envelope BruteForceEnvelope(const FlatGeometry& g) {
  double xmin = std::numeric_limits<double>::infinity(), ymin = xmin, xmax = -xmin, ymax = -xmin;
  for (std::size_t idx = 0; idx < g.num_coordinates(); ++idx) {
    const auto c = g.coordinate(idx);
    if (std::isnan(c[0])) continue;
    xmin = std::min(xmin, c[0]);
    xmax = std::max(xmax, c[0]);
    ymin = std::min(ymin, c[1]);
    ymax = std::max(ymax, c[1]);
  }
  return Envelope{xmin, ymin, xmax, ymax};
}

TEST(WkbTest, WritesPointExactly) {
  EXPECT_EQ(Hex(WriteWkb(FlatGeometry::MakePoint(1, 2))),
            "0101000000000000000000f03f0000000000000040");
}

TEST(WkbTest, WritesIsoCodesForZAndM) {
  ASSERT_OK_AND_ASSIGN(auto z, WktToWkb("POINT Z (1 2 3)"));
  EXPECT_EQ(Hex(z.substr(0, 5)), "01e9030000");  // 1001
  ASSERT_OK_AND_ASSIGN(auto m, WktToWkb("LINESTRING M EMPTY"));
  EXPECT_EQ(Hex(m), "01d207000000000000");  // 2002, 0 points
  ASSERT_OK_AND_ASSIGN(auto zm, WktToWkb("MULTIPOLYGON ZM EMPTY"));
  EXPECT_EQ(Hex(zm), "01be0b000000000000");  // 3006
}

TEST(WkbTest, RoundTripsEveryTypeAndDimension) {
  for (GeometryType type : kAllTypes) {
    for (Dimensions dims : kAllDims) {
      const std::string wkt = SampleWkt(type, dims);
      SCOPED_TRACE(wkt);
      ASSERT_OK_AND_ASSIGN(FlatGeometry geometry, ParseWkt(wkt));
      EXPECT_EQ(geometry.type(), type);
      EXPECT_EQ(geometry.dims, dims);
      const std::string wkb = WriteWkb(geometry);
      ASSERT_OK_AND_ASSIGN(FlatGeometry back, ParseWkb(AsBytes(wkb)));
      EXPECT_EQ(back, geometry);
      EXPECT_EQ(WriteWkb(back), wkb);

      ASSERT_OK_AND_ASSIGN(WkbHeader header, PeekWkbType(AsBytes(wkb)));
      EXPECT_EQ(header.type, type);
      EXPECT_EQ(header.dims, dims);
      EXPECT_FALSE(header.big_endian);
      EXPECT_FALSE(header.has_srid);

      ASSERT_OK_AND_ASSIGN(Envelope envelope, WkbEnvelope(AsBytes(wkb)));
      EXPECT_EQ(envelope, BruteForceEnvelope(geometry));
      EXPECT_EQ(envelope, geometry.GetEnvelope());
      EXPECT_FALSE(envelope.IsEmpty());

      ASSERT_OK_AND_ASSIGN(std::string normalized, NormalizeWkb(AsBytes(wkb)));
      EXPECT_EQ(normalized, wkb);
      EXPECT_TRUE(IsCanonicalWkb(AsBytes(wkb)));
      EXPECT_FALSE(IsCanonicalWkb(AsBytes(wkb).first(wkb.size() - 1)));
    }
  }
}

TEST(WkbTest, ReadsBigEndianAndEwkbVariants) {
  for (GeometryType type : kAllTypes) {
    for (Dimensions dims : kAllDims) {
      ASSERT_OK_AND_ASSIGN(FlatGeometry geometry, ParseWkt(SampleWkt(type, dims)));
      const std::string iso_le = WriteWkb(geometry);
      for (bool big_endian : {false, true}) {
        for (bool ewkb : {false, true}) {
          for (std::optional<uint32_t> srid : {std::optional<uint32_t>(), std::optional(4326u)}) {
            if (srid && !ewkb) continue;
            SCOPED_TRACE(SampleWkt(type, dims) + (big_endian ? " BE" : " LE") +
                         (ewkb ? " EWKB" : " ISO") + (srid ? " SRID" : ""));
            const std::string input = VariantEncoder(geometry, big_endian, ewkb, srid).Encode();
            ASSERT_OK_AND_ASSIGN(FlatGeometry back, ParseWkb(AsBytes(input)));
            EXPECT_EQ(back, geometry);
            ASSERT_OK_AND_ASSIGN(std::string normalized, NormalizeWkb(AsBytes(input)));
            EXPECT_EQ(Hex(normalized), Hex(iso_le));
            EXPECT_EQ(IsCanonicalWkb(AsBytes(input)), input == iso_le);
            ASSERT_OK_AND_ASSIGN(Envelope envelope, WkbEnvelope(AsBytes(input)));
            EXPECT_EQ(envelope, geometry.GetEnvelope());
            WkbSummary summary;
            ASSERT_OK_AND_ASSIGN(normalized, NormalizeWkb(AsBytes(input), &summary));
            EXPECT_EQ(normalized, iso_le);
            EXPECT_EQ(summary.envelope, envelope);
            EXPECT_EQ(summary.header.type, type);
            EXPECT_EQ(summary.header.dims, dims);
            EXPECT_EQ(summary.header.big_endian, big_endian);
            EXPECT_EQ(summary.header.srid, srid.value_or(0));
            ASSERT_OK_AND_ASSIGN(WkbSummary again, SummarizeWkb(AsBytes(input)));
            EXPECT_EQ(again.envelope, envelope);
            EXPECT_EQ(again.header.type, type);
            ASSERT_OK_AND_ASSIGN(WkbHeader header, PeekWkbType(AsBytes(input)));
            EXPECT_EQ(header.type, type);
            EXPECT_EQ(header.dims, dims);
            EXPECT_EQ(header.big_endian, big_endian);
            EXPECT_EQ(header.has_srid, srid.has_value());
            EXPECT_EQ(header.srid, srid.value_or(0));
          }
        }
      }
    }
  }
}

TEST(WkbTest, ReadsPostgisEwkbLiteral) {
  // PostGIS: SELECT ST_AsEWKB('SRID=4326;POINT(1 2)'::geometry)
  const std::string ewkb = Unhex("0101000020e6100000000000000000f03f0000000000000040");
  ASSERT_OK_AND_ASSIGN(WkbHeader header, PeekWkbType(AsBytes(ewkb)));
  EXPECT_TRUE(header.has_srid);
  EXPECT_EQ(header.srid, 4326u);
  ASSERT_OK_AND_ASSIGN(std::string wkt, WkbToWkt(AsBytes(ewkb)));
  EXPECT_EQ(wkt, "POINT (1 2)");
  ASSERT_OK_AND_ASSIGN(std::string iso, NormalizeWkb(AsBytes(ewkb)));
  EXPECT_EQ(Hex(iso), "0101000000000000000000f03f0000000000000040");
  // Big-endian ISO POINT Z (1 2 3).
  const std::string be = Unhex("00000003e93ff000000000000040000000000000004008000000000000");
  ASSERT_OK_AND_ASSIGN(wkt, WkbToWkt(AsBytes(be)));
  EXPECT_EQ(wkt, "POINT Z (1 2 3)");
}

TEST(WkbTest, EmptyGeometries) {
  ASSERT_OK_AND_ASSIGN(std::string point, WktToWkb("POINT EMPTY"));
  EXPECT_EQ(Hex(point), "0101000000000000000000f87f000000000000f87f");
  ASSERT_OK_AND_ASSIGN(FlatGeometry g, ParseWkb(AsBytes(point)));
  EXPECT_TRUE(g.IsEmpty());
  ASSERT_OK_AND_ASSIGN(Envelope envelope, WkbEnvelope(AsBytes(point)));
  EXPECT_TRUE(envelope.IsEmpty());
  ASSERT_OK_AND_ASSIGN(std::string wkt, WkbToWkt(AsBytes(point)));
  EXPECT_EQ(wkt, "POINT EMPTY");

  ASSERT_OK_AND_ASSIGN(std::string collection, WktToWkb("GEOMETRYCOLLECTION EMPTY"));
  EXPECT_EQ(Hex(collection), "010700000000000000");
  ASSERT_OK_AND_ASSIGN(g, ParseWkb(AsBytes(collection)));
  EXPECT_EQ(g.parts.size(), 1u);
  EXPECT_EQ(g.parts[0].count, 0u);
  EXPECT_TRUE(g.IsEmpty());

  // An empty member does not widen the envelope.
  ASSERT_OK_AND_ASSIGN(std::string mixed, WktToWkb("MULTIPOINT (EMPTY, (3 4), (-1 7))"));
  ASSERT_OK_AND_ASSIGN(envelope, WkbEnvelope(AsBytes(mixed)));
  EXPECT_EQ(envelope, (Envelope{-1, 4, 3, 7}));
  // A NaN ordinate is skipped on its own axis only (as Parquet geospatial statistics do).
  ASSERT_OK_AND_ASSIGN(std::string partial, WktToWkb("MULTIPOINT ((nan 5), (1 2))"));
  ASSERT_OK_AND_ASSIGN(envelope, WkbEnvelope(AsBytes(partial)));
  EXPECT_EQ(envelope, (Envelope{1, 2, 1, 5}));
}

TEST(WkbTest, TruncationAtEveryByteIsCorruptData) {
  for (const char* wkt :
       {"POINT (1 2)", "LINESTRING Z (1 2 3, 4 5 6)", "POLYGON ((0 0, 1 0, 1 1, 0 0))",
        "MULTIPOLYGON M (((0 0 1, 1 0 1, 1 1 1, 0 0 1)), EMPTY)",
        "GEOMETRYCOLLECTION (POINT (1 2), MULTIPOINT ((1 1), (2 2)), LINESTRING EMPTY)"}) {
    ASSERT_OK_AND_ASSIGN(FlatGeometry geometry, ParseWkt(wkt));
    for (const std::string& wkb :
         {WriteWkb(geometry), VariantEncoder(geometry, true, true, 3857u).Encode()}) {
      for (std::size_t size = 0; size < wkb.size(); ++size) {
        SCOPED_TRACE(std::string(wkt) + " cut at " + std::to_string(size));
        const auto cut = AsBytes(std::string_view(wkb).substr(0, size));
        EXPECT_THAT(ParseWkb(cut), IsErrorWith(ErrorCode::kCorruptData, "at byte"));
        EXPECT_THAT(WkbEnvelope(cut), IsError(ErrorCode::kCorruptData));
        EXPECT_THAT(NormalizeWkb(cut), IsError(ErrorCode::kCorruptData));
        EXPECT_THAT(WkbToWkt(cut), IsError(ErrorCode::kCorruptData));
        EXPECT_THAT(SummarizeWkb(cut), IsError(ErrorCode::kCorruptData));
      }
    }
  }
}

TEST(WkbTest, HugeCountIsRefusedWithoutAllocating) {
  // LINESTRING claiming 2^31 points, followed by one point's worth of bytes.
  std::string wkb = Unhex("010200000000000080");
  wkb.append(16, '\0');
  g_probe_largest = 0;
  g_probe_armed = true;
  auto parsed = ParseWkb(AsBytes(wkb));
  auto envelope = WkbEnvelope(AsBytes(wkb));
  g_probe_armed = false;
  EXPECT_THAT(parsed, IsErrorWith(ErrorCode::kCorruptData, "2147483648 points at byte 5"));
  EXPECT_THAT(envelope, IsError(ErrorCode::kCorruptData));
  // Only the error message and the (small) FlatGeometry vectors may have been allocated.
  EXPECT_LT(g_probe_largest.load(), 1024u);

  // The same for a collection claiming 2^32 - 1 members, and a polygon with 2^31 rings.
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("0107000000ffffffff0101000000"))),
              IsErrorWith(ErrorCode::kCorruptData, "4294967295 members at byte 5"));
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("01030000000000008000000000"))),
              IsErrorWith(ErrorCode::kCorruptData, "rings"));
}

TEST(WkbTest, DeepNestingIsRefused) {
  auto nested = [](int levels) {
    std::string wkb;
    for (int level = 1; level < levels; ++level) wkb += Unhex("010700000001000000");
    wkb += Unhex("0101000000000000000000f03f0000000000000040");
    return wkb;
  };
  ASSERT_OK_AND_ASSIGN(FlatGeometry ok, ParseWkb(AsBytes(nested(kMaxGeometryDepth))));
  EXPECT_EQ(ok.parts.size(), static_cast<std::size_t>(kMaxGeometryDepth));
  EXPECT_THAT(ParseWkb(AsBytes(nested(kMaxGeometryDepth + 1))),
              IsErrorWith(ErrorCode::kCorruptData, "nested deeper than 32"));
  EXPECT_THAT(WkbEnvelope(AsBytes(nested(10000))), IsError(ErrorCode::kCorruptData));
}

TEST(WkbTest, MalformedHeadersAreCorruptData) {
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("0201000000"))),
              IsErrorWith(ErrorCode::kCorruptData, "bad byte order marker 0x02 at byte 0"));
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("0108000000"))),
              IsErrorWith(ErrorCode::kCorruptData, "unknown geometry type code 8"));
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("01a00f0000"))),  // 4000
              IsErrorWith(ErrorCode::kCorruptData, "unknown geometry type"));
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("0100000000"))),
              IsErrorWith(ErrorCode::kCorruptData, "unknown geometry type code 0"));
  // MultiPolygon holding a LineString.
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("010600000001000000010200000000000000"))),
              IsErrorWith(ErrorCode::kCorruptData, "LineString at byte 9 inside a MultiPolygon"));
  // MultiPoint (XY) holding a Point Z.
  EXPECT_THAT(ParseWkb(AsBytes(Unhex("01040000000100000001e9030000" + std::string(48, '0')))),
              IsErrorWith(ErrorCode::kCorruptData, "dimensions"));
  // Trailing byte.
  EXPECT_THAT(
      ParseWkb(AsBytes(Unhex("0101000000000000000000f03f000000000000004000"))),
      IsErrorWith(ErrorCode::kCorruptData, "1 trailing bytes after the geometry at byte 21"));
  EXPECT_THAT(NormalizeWkb(AsBytes(Unhex("ff"))), IsError(ErrorCode::kCorruptData));
}

TEST(WkbTest, PeekWkbTypeReadsOnlyTheHeader) {
  // A valid header followed by garbage: Peek does not look further.
  ASSERT_OK_AND_ASSIGN(WkbHeader header, PeekWkbType(AsBytes(Unhex("01060000a0e6100000ff"))));
  EXPECT_EQ(header.type, GeometryType::kMultiPolygon);
  EXPECT_EQ(header.dims, Dimensions::kXYZ);
  EXPECT_TRUE(header.has_srid);
  EXPECT_EQ(header.srid, 4326u);
  EXPECT_THAT(PeekWkbType(AsBytes(Unhex("010600"))),
              IsErrorWith(ErrorCode::kCorruptData, "truncated at byte 0"));
  EXPECT_THAT(PeekWkbType(AsBytes(Unhex("0101000020e610"))),
              IsErrorWith(ErrorCode::kCorruptData, "SRID"));
}

TEST(WkbTest, WkbToWktHonoursPrecision) {
  ASSERT_OK_AND_ASSIGN(std::string wkb, WktToWkb("POINT (0.1 123456.789)"));
  ASSERT_OK_AND_ASSIGN(std::string shortest, WkbToWkt(AsBytes(wkb)));
  EXPECT_EQ(shortest, "POINT (0.1 123456.789)");
  ASSERT_OK_AND_ASSIGN(std::string four, WkbToWkt(AsBytes(wkb), 4));
  EXPECT_EQ(four, "POINT (0.1 1.235e+05)");
  ASSERT_OK_AND_ASSIGN(std::string seventeen, WkbToWkt(AsBytes(wkb), 17));
  EXPECT_EQ(seventeen, "POINT (0.10000000000000001 123456.789)");
  EXPECT_THAT(WkbToWkt(AsBytes(Unhex("01"))), IsError(ErrorCode::kCorruptData));
}

TEST(WkbTest, NormalizeFastPathCopiesCanonicalInput) {
  ASSERT_OK_AND_ASSIGN(std::string wkb, WktToWkb("POLYGON ((0 0, 10 0, 10 10, 0 0))"));
  ASSERT_OK_AND_ASSIGN(std::string normalized, NormalizeWkb(AsBytes(wkb)));
  EXPECT_EQ(normalized, wkb);
  // A big-endian member inside a little-endian collection is not canonical and is rewritten.
  const std::string mixed = Unhex(
      "010400000001000000"
      "0000000001"
      "3ff0000000000000"
      "4000000000000000");
  ASSERT_OK_AND_ASSIGN(normalized, NormalizeWkb(AsBytes(mixed)));
  EXPECT_EQ(Hex(normalized),
            "010400000001000000"
            "0101000000000000000000f03f0000000000000040");
}

}  // namespace
}  // namespace geolake::geo
