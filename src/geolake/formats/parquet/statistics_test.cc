#include "geolake/formats/parquet/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "geolake/formats/parquet/geospatial_statistics.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet {
namespace {

using ::geolake::testing::IsError;

LeafColumn MakeLeaf(PhysicalType type, std::optional<LogicalType> lt = std::nullopt) {
  LeafColumn leaf;
  leaf.path = {"c"};
  leaf.physical_type = type;
  leaf.logical_type = std::move(lt);
  leaf.max_definition_level = 1;
  return leaf;
}

template <typename T>
T Decode(const std::string& bytes) {
  T v{};
  EXPECT_EQ(bytes.size(), sizeof(T));
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

TEST(StatisticsTest, SignedAndUnsignedIntegers) {
  ColumnData col = ColumnData::ForLeaf(MakeLeaf(PhysicalType::kInt32));
  for (std::int32_t v : {5, -3, 2000000000, -7}) col.AppendInt32(v);
  col.AppendNull();

  StatisticsAccumulator signed_stats(MakeLeaf(PhysicalType::kInt32));
  signed_stats.UpdateValues(col, 0, 4);
  signed_stats.AddNulls(1);
  const Statistics st = signed_stats.ToThrift(64);
  EXPECT_EQ(Decode<std::int32_t>(*st.min_value), -7);
  EXPECT_EQ(Decode<std::int32_t>(*st.max_value), 2000000000);
  EXPECT_EQ(st.null_count, 1);

  // As UINT_32, -7 (0xFFFFFFF9) is the largest and 5 the smallest.
  StatisticsAccumulator unsigned_stats(
      MakeLeaf(PhysicalType::kInt32, LogicalType::Integer(32, false)));
  unsigned_stats.UpdateValues(col, 0, 4);
  const Statistics ust = unsigned_stats.ToThrift(64);
  EXPECT_EQ(Decode<std::int32_t>(*ust.min_value), 5);
  EXPECT_EQ(Decode<std::int32_t>(*ust.max_value), -3);
}

TEST(StatisticsTest, FloatsIgnoreNaNAndSignZeros) {
  const LeafColumn leaf = MakeLeaf(PhysicalType::kDouble);
  ColumnData col = ColumnData::ForLeaf(leaf);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double v : {nan, 0.0, 3.5, nan}) col.AppendDouble(v);
  StatisticsAccumulator stats(leaf);
  stats.UpdateValues(col, 0, 4);
  EXPECT_EQ(stats.nan_count(), 2);
  Statistics st = stats.ToThrift(64);
  const double lo = Decode<double>(*st.min_value);
  EXPECT_EQ(lo, 0.0);
  EXPECT_TRUE(std::signbit(lo));  // a zero minimum is -0.0
  EXPECT_EQ(Decode<double>(*st.max_value), 3.5);

  ColumnData zeros = ColumnData::ForLeaf(leaf);
  for (double v : {-0.0, -0.0}) zeros.AppendDouble(v);
  StatisticsAccumulator zstats(leaf);
  zstats.UpdateValues(zeros, 0, 2);
  st = zstats.ToThrift(64);
  EXPECT_TRUE(std::signbit(Decode<double>(*st.min_value)));
  EXPECT_FALSE(std::signbit(Decode<double>(*st.max_value)));  // a zero maximum is +0.0

  ColumnData all_nan = ColumnData::ForLeaf(leaf);
  all_nan.AppendDouble(nan);
  StatisticsAccumulator nstats(leaf);
  nstats.UpdateValues(all_nan, 0, 1);
  EXPECT_FALSE(nstats.has_min_max());
  st = nstats.ToThrift(64);
  EXPECT_FALSE(st.min_value.has_value());
  EXPECT_EQ(st.null_count, 0);
}

TEST(StatisticsTest, BooleansOrderFalseBeforeTrue) {
  const LeafColumn leaf = MakeLeaf(PhysicalType::kBoolean);
  ColumnData col = ColumnData::ForLeaf(leaf);
  col.AppendBool(true);
  col.AppendBool(true);
  StatisticsAccumulator stats(leaf);
  stats.UpdateValues(col, 0, 2);
  EXPECT_EQ(stats.min(), std::string(1, '\1'));
  col.AppendBool(false);
  stats.UpdateValues(col, 2, 3);
  EXPECT_EQ(stats.min(), std::string(1, '\0'));
  EXPECT_EQ(stats.max(), std::string(1, '\1'));
}

TEST(StatisticsTest, BinaryIsUnsignedBytewiseAndTruncated) {
  const LeafColumn leaf = MakeLeaf(PhysicalType::kByteArray);
  ColumnData col = ColumnData::ForLeaf(leaf);
  col.AppendBytes("\x7F");
  col.AppendBytes("\x80");  // > 0x7F unsigned
  col.AppendBytes(std::string(100, 'a'));
  StatisticsAccumulator stats(leaf);
  stats.UpdateValues(col, 0, 3);
  Statistics st = stats.ToThrift(8);
  EXPECT_EQ(*st.min_value, std::string(8, 'a'));  // truncated prefix is a lower bound
  EXPECT_EQ(st.is_min_value_exact, false);
  EXPECT_EQ(*st.max_value, "\x80");
  EXPECT_EQ(st.is_max_value_exact, true);
}

TEST(StatisticsTest, UpperBoundRoundsUp) {
  EXPECT_EQ(*TruncateUpperBound("abcdef", 3, false), "abd");
  EXPECT_EQ(*TruncateUpperBound(std::string("ab\xFF\xFFzz", 6), 4, false), "ac");
  EXPECT_FALSE(TruncateUpperBound(std::string(6, '\xFF'), 3, false).has_value());
  EXPECT_EQ(*TruncateUpperBound("ab", 3, false), "ab");
  // UTF-8: "aé€x" = 61 C3A9 E282AC 78; a 4-byte cut keeps "aé" and bumps é (U+E9) to ê.
  EXPECT_EQ(*TruncateUpperBound("a\xC3\xA9\xE2\x82\xACx", 4, true), "a\xC3\xAA");
  EXPECT_EQ(TruncateLowerBound("a\xC3\xA9\xE2\x82\xACx", 4, true), "a\xC3\xA9");
  // U+10FFFF cannot grow: the previous code point is incremented instead.
  EXPECT_EQ(*TruncateUpperBound("b\xF4\x8F\xBF\xBF"
                                "c",
                                5, true),
            "c");
  // U+D7FF + 1 skips the surrogates.
  EXPECT_EQ(*TruncateUpperBound("\xED\x9F\xBF"
                                "zz",
                                3, true),
            "\xEE\x80\x80");
  // Every truncated upper bound is >= the original value.
  const std::string v = "zebra\xC3\xBF\xC3\xBF";
  for (std::size_t n = 1; n < v.size(); ++n) {
    auto hi = TruncateUpperBound(v, n, true);
    ASSERT_TRUE(hi.has_value());
    EXPECT_GT(std::string_view(*hi).compare(v), 0) << n;
  }
}

TEST(StatisticsTest, StringStatisticsStayValidUtf8) {
  const LeafColumn leaf = MakeLeaf(PhysicalType::kByteArray, LogicalType::String());
  ColumnData col = ColumnData::ForLeaf(leaf);
  col.AppendBytes("\xC3\xA9\xC3\xA9\xC3\xA9");  // ééé
  StatisticsAccumulator stats(leaf);
  stats.UpdateValues(col, 0, 1);
  const Statistics st = stats.ToThrift(3);
  EXPECT_EQ(*st.min_value, "\xC3\xA9");
  EXPECT_EQ(*st.max_value, "\xC3\xAA");
}

TEST(StatisticsTest, GeometryHasNoMinMax) {
  const LeafColumn leaf = MakeLeaf(PhysicalType::kByteArray, LogicalType::Geometry());
  EXPECT_EQ(SortOrderOf(leaf), SortOrder::kUndefined);
  ColumnData col = ColumnData::ForLeaf(leaf);
  col.AppendBytes("x");
  StatisticsAccumulator stats(leaf);
  stats.UpdateValues(col, 0, 1);
  stats.AddNulls(2);
  const Statistics st = stats.ToThrift(64);
  EXPECT_FALSE(st.min_value.has_value());
  EXPECT_EQ(st.null_count, 2);
}

TEST(StatisticsTest, MergeCombinesPages) {
  const LeafColumn leaf = MakeLeaf(PhysicalType::kInt64);
  ColumnData col = ColumnData::ForLeaf(leaf);
  for (std::int64_t v : {10, 20, -5, 7}) col.AppendInt64(v);
  StatisticsAccumulator a(leaf), b(leaf), total(leaf);
  a.UpdateValues(col, 0, 2);
  b.UpdateValues(col, 2, 4);
  b.AddNulls(3);
  total.Merge(a);
  total.Merge(b);
  EXPECT_EQ(Decode<std::int64_t>(total.min()), -5);
  EXPECT_EQ(Decode<std::int64_t>(total.max()), 20);
  EXPECT_EQ(total.null_count(), 3);
  EXPECT_EQ(total.num_values(), 4);
}

std::string Le32(std::uint32_t v) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &v, 4);
  return s;
}
std::string LeDouble(double d) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &d, 8);
  return s;
}

TEST(GeospatialStatisticsTest, BoundingBoxAndTypesFromWkb) {
  GeospatialStatisticsAccumulator acc;
  // POINT Z (1 2 3), ISO code 1001.
  ASSERT_OK(acc.Update("\x01" + Le32(1001) + LeDouble(1) + LeDouble(2) + LeDouble(3)));
  // MULTIPOINT ((-5 7), (NaN 9)): NaN x is skipped, y still counts.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ASSERT_OK(acc.Update("\x01" + Le32(4) + Le32(2) + "\x01" + Le32(1) + LeDouble(-5) + LeDouble(7) +
                       "\x01" + Le32(1) + LeDouble(nan) + LeDouble(9)));
  // Big-endian LINESTRING (10 0, 11 1).
  std::string be(1, '\0');  // big-endian byte order marker
  be += std::string("\x00\x00\x00\x02", 4);
  be += std::string("\x00\x00\x00\x02", 4);
  for (double d : {10.0, 0.0, 11.0, 1.0}) {
    std::string le = LeDouble(d);
    be.append(le.rbegin(), le.rend());
  }
  ASSERT_OK(acc.Update(be));
  const auto st = acc.ToThrift();
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(st->bbox.has_value());
  EXPECT_EQ(st->bbox->xmin, -5);
  EXPECT_EQ(st->bbox->xmax, 11);
  EXPECT_EQ(st->bbox->ymin, 0);
  EXPECT_EQ(st->bbox->ymax, 9);
  EXPECT_EQ(st->bbox->zmin, 3);
  EXPECT_EQ(st->bbox->zmax, 3);
  EXPECT_EQ(st->geospatial_types, (std::vector<std::int32_t>{2, 4, 1001}));
}

TEST(GeospatialStatisticsTest, MalformedWkbDisablesStatistics) {
  GeospatialStatisticsAccumulator acc;
  EXPECT_THAT(acc.Update("\x01" + Le32(2) + Le32(1000000)), IsError(ErrorCode::kCorruptData));
  EXPECT_FALSE(acc.ToThrift().has_value());
  GeospatialStatisticsAccumulator deep;
  std::string nested;
  for (int i = 0; i < 100; ++i) nested += "\x01" + Le32(7) + Le32(1);
  EXPECT_THAT(deep.Update(nested), IsError(ErrorCode::kCorruptData));
}

}  // namespace
}  // namespace geolake::parquet
