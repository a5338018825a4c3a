#include "geolake/core/csv.h"

#include <gtest/gtest.h>

namespace geolake {
namespace {

TEST(CsvTest, PlainTextIsNotQuoted) {
  EXPECT_EQ(CsvField("Alabama"), "Alabama");
  EXPECT_EQ(CsvField("POINT (1 2)"), "POINT (1 2)");
  EXPECT_EQ(CsvField("a b"), "a b");
}

TEST(CsvTest, SeparatorsQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("q\"t"), "\"q\"\"t\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
}

// An empty string is "" so that it differs from a null (an empty cell); text with a leading or
// trailing space is quoted so that readers that trim cells keep the space.
TEST(CsvTest, EmptyTextAndOuterSpacesAreQuoted) {
  EXPECT_EQ(CsvField(""), "\"\"");
  EXPECT_EQ(CsvField(" x"), "\" x\"");
  EXPECT_EQ(CsvField("y "), "\"y \"");
  EXPECT_TRUE(CsvNeedsQuotes(" "));
  EXPECT_FALSE(CsvNeedsQuotes("x y"));
}

TEST(CsvTest, LineSeparatesCellsAndEndsWithLf) {
  std::string out;
  CsvLine line(&out);
  line.Text("name");
  line.Text("a,b");
  line.End();
  line.Literal("42");
  line.Null();
  line.Text("");
  line.End();
  line.Null();
  line.End();
  EXPECT_EQ(out, "name,\"a,b\"\n42,,\"\"\n\n");
}

}  // namespace
}  // namespace geolake
