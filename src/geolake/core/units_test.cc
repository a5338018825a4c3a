#include "geolake/core/units.h"

#include <chrono>
#include <cstdint>
#include <limits>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using std::chrono::milliseconds;

std::int64_t Size(std::string_view text) {
  Result<std::int64_t> r = ParseSize(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
  return r.value_or(-1);
}

std::int64_t DurationMs(std::string_view text) {
  Result<milliseconds> r = ParseDuration(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
  return r.ok() ? r->count() : -1;
}

TEST(ParseSizeTest, WorkedExamples) {
  EXPECT_EQ(Size("4096"), 4096);
  EXPECT_EQ(Size("0"), 0);
  EXPECT_EQ(Size("128MiB"), 128ll * 1024 * 1024);
  EXPECT_EQ(Size("1.5GB"), 1'500'000'000);
  EXPECT_EQ(Size("64k"), 65536);
  EXPECT_EQ(Size("64K"), 65536);
  EXPECT_EQ(Size("64KB"), 64000);
  EXPECT_EQ(Size("64kib"), 65536);
  EXPECT_EQ(Size("2G"), 2ll << 30);
  EXPECT_EQ(Size("2Gi"), 2ll << 30);
  EXPECT_EQ(Size("1TiB"), 1ll << 40);
  EXPECT_EQ(Size("3TB"), 3'000'000'000'000);
  EXPECT_EQ(Size("10B"), 10);
  EXPECT_EQ(Size(" 512 MiB "), 512ll << 20);
  EXPECT_EQ(Size("0.5k"), 512);
  EXPECT_EQ(Size("1.5MiB"), 1572864);
  EXPECT_EQ(Size("+7"), 7);
  // Fractions round to the nearest byte.
  EXPECT_EQ(Size("0.0001k"), 0);
  EXPECT_EQ(Size("0.0005k"), 1);
  EXPECT_EQ(Size("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
}

TEST(ParseSizeTest, ErrorsNameTheText) {
  EXPECT_THAT(ParseSize(""), IsErrorWith(ErrorCode::kInvalidArgument, "empty"));
  EXPECT_THAT(ParseSize("12XB"), IsErrorWith(ErrorCode::kInvalidArgument, "'12XB'"));
  EXPECT_THAT(ParseSize("12XB"), IsErrorWith(ErrorCode::kInvalidArgument, "unknown unit 'XB'"));
  EXPECT_THAT(ParseSize("-1MiB"), IsErrorWith(ErrorCode::kInvalidArgument, "negative"));
  EXPECT_THAT(ParseSize("MiB"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("1."), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize(".5k"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("1e3"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("1 2"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("9223372036854775808"),
              IsErrorWith(ErrorCode::kInvalidArgument, "too large"));
  EXPECT_THAT(ParseSize("9000000TiB"), IsErrorWith(ErrorCode::kInvalidArgument, "too large"));
}

TEST(ParseDurationTest, WorkedExamples) {
  EXPECT_EQ(DurationMs("30d"), 30ll * 86'400'000);
  EXPECT_EQ(DurationMs("12h"), 12ll * 3'600'000);
  EXPECT_EQ(DurationMs("90s"), 90'000);
  EXPECT_EQ(DurationMs("1500ms"), 1500);
  EXPECT_EQ(DurationMs("1h30m"), 90 * 60'000);
  EXPECT_EQ(DurationMs("1.5h"), 90 * 60'000);
  EXPECT_EQ(DurationMs("2w"), 14ll * 86'400'000);
  EXPECT_EQ(DurationMs("1d2h3m4s5ms"), 86'400'000 + 2 * 3'600'000 + 3 * 60'000 + 4000 + 5);
  EXPECT_EQ(DurationMs("0"), 0);
  EXPECT_EQ(DurationMs("0s"), 0);
  EXPECT_EQ(DurationMs("10M"), 600'000);  // units are case-insensitive; M is minutes
  EXPECT_EQ(DurationMs(" 5m "), 300'000);
}

TEST(ParseDurationTest, ErrorsNameTheText) {
  EXPECT_THAT(ParseDuration(""), IsErrorWith(ErrorCode::kInvalidArgument, "empty"));
  EXPECT_THAT(ParseDuration("30"), IsErrorWith(ErrorCode::kInvalidArgument, "missing unit"));
  EXPECT_THAT(ParseDuration("30"), IsErrorWith(ErrorCode::kInvalidArgument, "'30'"));
  EXPECT_THAT(ParseDuration("3y"), IsErrorWith(ErrorCode::kInvalidArgument, "unknown unit 'y'"));
  EXPECT_THAT(ParseDuration("-5s"), IsErrorWith(ErrorCode::kInvalidArgument, "negative"));
  EXPECT_THAT(ParseDuration("h"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseDuration("1h 30m"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseDuration("1h30"), IsErrorWith(ErrorCode::kInvalidArgument, "missing unit"));
  EXPECT_THAT(ParseDuration("99999999999999999w"),
              IsErrorWith(ErrorCode::kInvalidArgument, "too large"));
}

TEST(FormatSizeTest, WorkedExamples) {
  EXPECT_EQ(FormatSize(0), "0 B");
  EXPECT_EQ(FormatSize(512), "512 B");
  EXPECT_EQ(FormatSize(1023), "1023 B");
  EXPECT_EQ(FormatSize(1024), "1.0 KiB");
  EXPECT_EQ(FormatSize(1536), "1.5 KiB");
  EXPECT_EQ(FormatSize(128ll << 20), "128 MiB");
  EXPECT_EQ(FormatSize(2ll << 30), "2.0 GiB");
  EXPECT_EQ(FormatSize((1ll << 20) - 1), "1.0 MiB");  // not "1024.0 KiB"
  EXPECT_EQ(FormatSize(-1536), "-1.5 KiB");
  EXPECT_EQ(FormatSize(std::numeric_limits<std::int64_t>::max()), "8.0 EiB");
  EXPECT_EQ(FormatSize(std::numeric_limits<std::int64_t>::min()), "-8.0 EiB");
}

TEST(FormatDurationTest, WorkedExamples) {
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0ms");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(FormatDuration(milliseconds(1234)), "1.234s");
  EXPECT_EQ(FormatDuration(milliseconds(59'000)), "59s");
  EXPECT_EQ(FormatDuration(milliseconds(90'000)), "1m30s");
  EXPECT_EQ(FormatDuration(milliseconds(2 * 3'600'000 + 5 * 60'000 + 7000)), "2h05m");
  EXPECT_EQ(FormatDuration(milliseconds(3 * 86'400'000ll + 4 * 3'600'000ll)), "3d04h");
  EXPECT_EQ(FormatDuration(milliseconds(-1500)), "-1.5s");
}

TEST(UnitsTest, FormattedValuesParseBack) {
  for (std::int64_t ms : {0ll, 7ll, 999ll, 1500ll, 59'999ll, 90'000ll, 3'600'000ll + 120'000ll,
                          86'400'000ll * 3 + 3'600'000ll * 4}) {
    EXPECT_EQ(DurationMs(FormatDuration(milliseconds(ms))), ms) << ms;
  }
  for (std::int64_t bytes : {0ll, 1023ll, 1024ll, 1536ll, 128ll << 20, 3ll << 30}) {
    EXPECT_EQ(Size(FormatSize(bytes)), bytes) << bytes;
  }
}

}  // namespace
}  // namespace geolake
