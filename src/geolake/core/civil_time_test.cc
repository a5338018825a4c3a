#include "geolake/core/civil_time.h"

#include <gtest/gtest.h>

namespace geolake {
namespace {

TEST(CivilTimeTest, DatesAroundTheEpochAndLeapDays) {
  EXPECT_EQ(CivilDateText(0), "1970-01-01");
  EXPECT_EQ(CivilDateText(-1), "1969-12-31");
  EXPECT_EQ(CivilDateText(19723), "2024-01-01");
  EXPECT_EQ(CivilDateText(19723 + 59), "2024-02-29");
  EXPECT_EQ(CivilDateText(11016), "2000-02-29");
  EXPECT_EQ(CivilDateText(-719468), "0000-03-01");
}

// ISO 8601 years before 0001: four digits after the sign, as `cat` always printed them; query's
// CSV printed "-001-01-01" for 2 BC before both used this function (issue 16 §3).
TEST(CivilTimeTest, YearsBeforeOneHaveFourDigitsAfterTheSign) {
  EXPECT_EQ(CivilDateText(-719528), "0000-01-01");         // 1 BC, a leap year
  EXPECT_EQ(CivilDateText(-719528 - 365), "-0001-01-01");  // 2 BC, not a leap year
  EXPECT_EQ(CivilDateText(-719528 - 1), "-0001-12-31");
  EXPECT_EQ(CivilDateText(-719528 - 3652), "-0010-01-01");  // 10 years, leap -4 and -8
  EXPECT_EQ(CivilDateText(-719528 - 3652 - 1), "-0011-12-31");
  EXPECT_EQ(TimestampMicrosText(std::int64_t{-719528 - 365} * 86400000000),
            "-0001-01-01T00:00:00.000000Z");
  // Far from the epoch both ways: five-digit years keep their digits.
  EXPECT_EQ(CivilDateText(2932896), "9999-12-31");
  EXPECT_EQ(CivilDateText(2932897), "10000-01-01");
}

TEST(CivilTimeTest, TimestampsKeepMicrosecondsAndFloorBeforeTheEpoch) {
  EXPECT_EQ(TimestampMicrosText(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(TimestampMicrosText(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(TimestampMicrosText(std::int64_t{19723} * 86400000000 + 3723000456),
            "2024-01-01T01:02:03.000456Z");
}

}  // namespace
}  // namespace geolake
