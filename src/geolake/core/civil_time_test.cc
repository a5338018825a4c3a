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

TEST(CivilTimeTest, TimestampsKeepMicrosecondsAndFloorBeforeTheEpoch) {
  EXPECT_EQ(TimestampMicrosText(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(TimestampMicrosText(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(TimestampMicrosText(std::int64_t{19723} * 86400000000 + 3723000456),
            "2024-01-01T01:02:03.000456Z");
}

}  // namespace
}  // namespace geolake
