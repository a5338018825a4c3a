#include "geolake/core/hex.h"

#include <gtest/gtest.h>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsError;

TEST(HexTest, EncodesEveryByteAsTwoLowerCaseDigits) {
  EXPECT_EQ(HexEncode(std::string_view("\x00\x01\x7f\x80\xff", 5)), "00017f80ff");
  EXPECT_EQ(HexEncode(std::string_view()), "");
}

TEST(HexTest, EncodesUpperCaseWithASeparator) {
  EXPECT_EQ(HexEncode(std::string_view("\x88\xc6\xfa", 3), HexCase::kUpper, " "), "88 C6 FA");
  EXPECT_EQ(HexEncode(std::string_view("\x0a", 1), HexCase::kLower, " "), "0a");
}

TEST(HexTest, EncodesAByteSpan) {
  const std::uint8_t bytes[] = {0x01, 0xe9, 0x03};
  EXPECT_EQ(HexEncode(std::span<const std::uint8_t>(bytes)), "01e903");
}

TEST(HexTest, AppendsOneByte) {
  std::string out = "\\x";
  AppendHexByte(0x1f, &out);
  AppendHexByte(0xab, &out, HexCase::kUpper);
  EXPECT_EQ(out, "\\x1fAB");
}

TEST(HexTest, UuidTextGroupsTheDigits) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, HexDecode("f79c3e09677c4bbda4793f349cb785e7"));
  EXPECT_EQ(UuidText(bytes), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
}

TEST(HexTest, DigitValuesOfEitherCase) {
  EXPECT_EQ(HexDigitValue('0'), 0);
  EXPECT_EQ(HexDigitValue('9'), 9);
  EXPECT_EQ(HexDigitValue('a'), 10);
  EXPECT_EQ(HexDigitValue('F'), 15);
  EXPECT_EQ(HexDigitValue('g'), -1);
  EXPECT_EQ(HexDigitValue('-'), -1);
}

TEST(HexTest, DecodesWhatItEncodes) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  ASSERT_OK_AND_ASSIGN(std::string lower, HexDecode(HexEncode(all)));
  EXPECT_EQ(lower, all);
  ASSERT_OK_AND_ASSIGN(std::string upper, HexDecode(HexEncode(all, HexCase::kUpper)));
  EXPECT_EQ(upper, all);
  ASSERT_OK_AND_ASSIGN(std::string empty, HexDecode(""));
  EXPECT_EQ(empty, "");
}

TEST(HexTest, RejectsOddLengthsAndNonDigits) {
  EXPECT_THAT(HexDecode("abc"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(HexDecode("0g"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(HexDecode("0 1f"), IsError(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace geolake
