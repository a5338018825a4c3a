#include "geolake/core/json_read.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsErrorWith;
using Json = nlohmann::json;

const Json kDoc = Json::parse(R"({
  "name": "roads", "count": 3, "big": 9223372036854775807, "huge": 18446744073709551615,
  "wide": 3000000000, "ratio": 0.5, "ok": true, "nothing": null, "list": [1]
})");

TEST(JsonReadTest, ReadsEachType) {
  ASSERT_OK_AND_ASSIGN(std::string name, JsonRequired<std::string>(kDoc, "name", "table"));
  EXPECT_EQ(name, "roads");
  ASSERT_OK_AND_ASSIGN(std::int32_t count, JsonRequired<std::int32_t>(kDoc, "count", "table"));
  EXPECT_EQ(count, 3);
  ASSERT_OK_AND_ASSIGN(std::int64_t big, JsonRequired<std::int64_t>(kDoc, "big", "table"));
  EXPECT_EQ(big, std::numeric_limits<std::int64_t>::max());
  ASSERT_OK_AND_ASSIGN(double ratio, JsonRequired<double>(kDoc, "ratio", "table"));
  EXPECT_EQ(ratio, 0.5);
  ASSERT_OK_AND_ASSIGN(double count_as_double, JsonRequired<double>(kDoc, "count", "table"));
  EXPECT_EQ(count_as_double, 3.0);
  ASSERT_OK_AND_ASSIGN(bool ok, JsonRequired<bool>(kDoc, "ok", "table"));
  EXPECT_TRUE(ok);
}

TEST(JsonReadTest, MissingKeysNameTheObject) {
  EXPECT_THAT(JsonRequired<std::string>(kDoc, "location", "table 'roads'"),
              IsErrorWith(ErrorCode::kCorruptData, "table 'roads' has no 'location'"));
}

TEST(JsonReadTest, WrongTypesNameThePathAndWhatWasFound) {
  EXPECT_THAT(JsonRequired<std::string>(kDoc, "count", "table"),
              IsErrorWith(ErrorCode::kCorruptData, "table.count must be a string, found a number"));
  EXPECT_THAT(
      JsonRequired<std::int64_t>(kDoc, "ratio", "table"),
      IsErrorWith(ErrorCode::kCorruptData, "table.ratio must be an integer, found a number"));
  EXPECT_THAT(JsonRequired<bool>(kDoc, "nothing", "table"),
              IsErrorWith(ErrorCode::kCorruptData, "table.nothing must be a boolean, found null"));
  EXPECT_THAT(JsonRequired<double>(kDoc, "list", "table"),
              IsErrorWith(ErrorCode::kCorruptData, "table.list must be a number, found an array"));
  EXPECT_THAT(JsonRequired<std::string>(kDoc["list"], "x", "the list"),
              IsErrorWith(ErrorCode::kCorruptData, "the list must be an object, found an array"));
}

TEST(JsonReadTest, IntegersOutOfRangeAreErrors) {
  EXPECT_THAT(
      JsonRequired<std::int32_t>(kDoc, "wide", "t"),
      IsErrorWith(ErrorCode::kCorruptData, "t.wide must be a 32-bit integer, found 3000000000"));
  EXPECT_THAT(JsonRequired<std::int64_t>(kDoc, "huge", "t"),
              IsErrorWith(ErrorCode::kCorruptData, "t.huge must be a 64-bit integer"));
}

TEST(JsonReadTest, OptionalKeysTreatAbsentAndNullAlike) {
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> absent,
                       JsonOptional<std::string>(kDoc, "comment", "table"));
  EXPECT_FALSE(absent.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<std::int64_t> null,
                       JsonOptional<std::int64_t>(kDoc, "nothing", "table"));
  EXPECT_FALSE(null.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<std::int64_t> present,
                       JsonOptional<std::int64_t>(kDoc, "count", "table"));
  EXPECT_EQ(present, 3);
  EXPECT_THAT(JsonOptional<std::string>(kDoc, "ok", "table"),
              IsErrorWith(ErrorCode::kCorruptData, "table.ok must be a string, found a boolean"));
  EXPECT_EQ(JsonFind(kDoc, "nothing"), nullptr);
  EXPECT_EQ(JsonFind(kDoc["list"], "x"), nullptr);
  ASSERT_NE(JsonFind(kDoc, "name"), nullptr);
}

TEST(JsonReadTest, WorksWithOrderedJson) {
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(R"({"b": 1, "a": "x"})");
  ASSERT_OK_AND_ASSIGN(std::string a, JsonRequired<std::string>(doc, "a", "doc"));
  EXPECT_EQ(a, "x");
}

}  // namespace
}  // namespace geolake
