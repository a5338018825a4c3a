#include "geolake/formats/parquet/value_text.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

namespace geolake::parquet {
namespace {

using parquet::LogicalType;
using parquet::PhysicalType;

parquet::LeafColumn Leaf(PhysicalType type, std::optional<LogicalType> logical = std::nullopt) {
  parquet::LeafColumn leaf;
  leaf.path = {"c"};
  leaf.physical_type = type;
  leaf.logical_type = std::move(logical);
  return leaf;
}

template <typename T>
std::string Plain(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

TEST(ValueTextTest, IntegersDatesTimestampsAndDecimals) {
  EXPECT_EQ(PlainValueText(Leaf(PhysicalType::kInt64), Plain<std::int64_t>(-42)).text, "-42");
  EXPECT_FALSE(PlainValueText(Leaf(PhysicalType::kInt64), Plain<std::int64_t>(1)).quoted);

  const auto date = Leaf(PhysicalType::kInt32, LogicalType::Date());
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(19844)).text, "2024-05-01");
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(-1)).text, "1969-12-31");
  EXPECT_TRUE(PlainValueText(date, Plain<std::int32_t>(0)).quoted);

  const auto utc =
      Leaf(PhysicalType::kInt64, LogicalType::Timestamp(true, parquet::TimeUnit::kMicros));
  EXPECT_EQ(PlainValueText(utc, Plain<std::int64_t>(1714566600000000)).text,
            "2024-05-01T12:30:00Z");
  EXPECT_EQ(PlainValueText(utc, Plain<std::int64_t>(-1)).text, "1969-12-31T23:59:59.999999Z");
  const auto local =
      Leaf(PhysicalType::kInt64, LogicalType::Timestamp(false, parquet::TimeUnit::kMillis));
  EXPECT_EQ(PlainValueText(local, Plain<std::int64_t>(1500)).text, "1970-01-01T00:00:01.500");

  const auto dec = Leaf(PhysicalType::kInt32, LogicalType::Decimal(9, 2));
  EXPECT_EQ(PlainValueText(dec, Plain<std::int32_t>(-5)).text, "-0.05");
  EXPECT_EQ(PlainValueText(dec, Plain<std::int32_t>(12345)).text, "123.45");
  const auto fixed_dec = Leaf(PhysicalType::kFixedLenByteArray, LogicalType::Decimal(20, 1));
  EXPECT_EQ(PlainValueText(fixed_dec, std::string("\xff\xff\xff\x9c", 4)).text, "-10.0");

  const auto u8 = Leaf(PhysicalType::kInt32, LogicalType::Integer(32, false));
  EXPECT_EQ(PlainValueText(u8, Plain<std::int32_t>(-1)).text, "4294967295");
}

// Expected texts are DuckDB's for the same values (its "Y (BC)" written as ISO 8601 year 1 - Y):
// SELECT DATE '1970-01-01' + N, make_timestamp(MICROS).
TEST(ValueTextTest, DatesAndTimestampsBeyondYear9999AndBeforeYear1) {
  const auto date = Leaf(PhysicalType::kInt32, LogicalType::Date());
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(2932896)).text, "9999-12-31");
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(10000000)).text, "29349-01-26");
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(-719528)).text, "0000-01-01");
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(-719529)).text, "-0001-12-31");
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(-1000000)).text, "-0768-02-04");
  EXPECT_EQ(PlainValueText(date, Plain<std::int32_t>(11016)).text, "2000-02-29");

  const auto utc =
      Leaf(PhysicalType::kInt64, LogicalType::Timestamp(true, parquet::TimeUnit::kMicros));
  EXPECT_EQ(PlainValueText(utc, Plain<std::int64_t>(9000000000000000000)).text,
            "287168-08-24T16:00:00Z");
  EXPECT_EQ(PlainValueText(utc, Plain<std::int64_t>(-7200000000000000000)).text,
            "-226189-01-31T16:00:00Z");
}

std::string Int96(std::int64_t nanos, std::int32_t julian_day) {
  std::string s(12, '\0');
  std::memcpy(s.data(), &nanos, 8);
  std::memcpy(s.data() + 8, &julian_day, 4);
  return s;
}

TEST(ValueTextTest, Int96CarriesNanosecondsOutsideTheDay) {
  const auto leaf = Leaf(PhysicalType::kInt96);
  EXPECT_EQ(PlainValueText(leaf, Int96(0, 2440588)).text, "1970-01-01T00:00:00");
  EXPECT_EQ(PlainValueText(leaf, Int96(-1, 2440589)).text, "1970-01-01T23:59:59.999999999");
  EXPECT_EQ(PlainValueText(leaf, Int96(86400LL * 1000000000 + 5, 2440588)).text,
            "1970-01-02T00:00:00.000000005");
  // Julian day 0 is 4714-11-24 BC in the proleptic Gregorian calendar.
  EXPECT_EQ(PlainValueText(leaf, Int96(0, 0)).text, "-4713-11-24T00:00:00");
}

TEST(ValueTextTest, FloatsStringsBinaryAndBadWidths) {
  EXPECT_EQ(PlainValueText(Leaf(PhysicalType::kDouble), Plain(0.1)).text, "0.1");
  EXPECT_EQ(
      PlainValueText(Leaf(PhysicalType::kDouble), Plain(std::numeric_limits<double>::quiet_NaN()))
          .text,
      "null");
  EXPECT_EQ(PlainValueText(Leaf(PhysicalType::kFloat), Plain(1.5f)).text, "1.5");
  EXPECT_EQ(PlainValueText(Leaf(PhysicalType::kBoolean), std::string(1, '\1')).text, "true");

  const auto text = Leaf(PhysicalType::kByteArray, LogicalType::String());
  const ValueText s = PlainValueText(text, "Zürich");
  EXPECT_EQ(s.text, "Zürich");
  EXPECT_TRUE(s.quoted);
  EXPECT_EQ(PlainValueText(Leaf(PhysicalType::kByteArray), std::string("\x01\xab", 2)).text,
            "01ab");
  // A 3-byte bound for an INT32 column is not trusted: shown as hex.
  EXPECT_EQ(PlainValueText(Leaf(PhysicalType::kInt32), std::string("\x01\x02\x03", 3)).text,
            "010203");
}

TEST(ValueTextTest, LeafValuesIndexStoredValues) {
  parquet::ColumnData col;
  col.type = PhysicalType::kByteArray;
  col.max_definition_level = 1;
  col.AppendBytes("a");
  col.AppendNull();
  col.AppendBytes("b\"c");
  const auto leaf = Leaf(PhysicalType::kByteArray, LogicalType::String());
  EXPECT_EQ(LeafValueText(leaf, col, 1).text, "b\"c");
}

TEST(ValueTextTest, JsonQuoteEscapesAndRepairsUtf8) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(JsonQuote("Zürich"), "\"Zürich\"");
  // A lone continuation byte and a truncated sequence become U+FFFD.
  EXPECT_EQ(JsonQuote(std::string("x\x80y\xc3", 4)), "\"x\xEF\xBF\xBDy\xEF\xBF\xBD\"");
  // An encoded surrogate is not valid UTF-8.
  EXPECT_EQ(JsonQuote("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

}  // namespace
}  // namespace geolake::parquet
