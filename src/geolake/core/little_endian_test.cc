#include "geolake/core/little_endian.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace geolake {
namespace {

TEST(LittleEndianTest, LoadsIntegersLeastSignificantByteFirst) {
  const unsigned char bytes[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  EXPECT_EQ(LoadLE<std::uint16_t>(bytes), 0x0201);
  EXPECT_EQ(LoadLE<std::uint32_t>(bytes), 0x04030201u);
  EXPECT_EQ(LoadLE<std::uint64_t>(bytes), 0x0807060504030201ull);
  EXPECT_EQ(LoadBE<std::uint32_t>(bytes), 0x01020304u);
  EXPECT_EQ(LoadBE<std::uint64_t>(bytes), 0x0102030405060708ull);
  EXPECT_EQ(LoadEndian<std::uint32_t>(bytes, /*big_endian=*/false), 0x04030201u);
  EXPECT_EQ(LoadEndian<std::uint32_t>(bytes, /*big_endian=*/true), 0x01020304u);
}

TEST(LittleEndianTest, LoadsFromAnyAlignment) {
  const unsigned char bytes[] = {0xAA, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(LoadLE<std::int32_t>(bytes + 1), -1);
}

TEST(LittleEndianTest, DoublesAndFloatsUseTheirIeeeBits) {
  // 1.0 is 0x3FF0000000000000; -2.5f is 0xC0200000.
  const unsigned char one_le[] = {0, 0, 0, 0, 0, 0, 0xF0, 0x3F};
  const unsigned char one_be[] = {0x3F, 0xF0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(LoadLE<double>(one_le), 1.0);
  EXPECT_EQ(LoadBE<double>(one_be), 1.0);
  std::string out;
  AppendLE(-2.5f, &out);
  EXPECT_EQ(out, std::string("\x00\x00\x20\xC0", 4));
}

TEST(LittleEndianTest, AppendAndStoreRoundTripEveryWidth) {
  std::string out;
  AppendLE<std::uint8_t>(0x7F, &out);
  AppendLE<std::int16_t>(-2, &out);
  AppendLE<std::uint32_t>(0xDEADBEEFu, &out);
  AppendLE<std::int64_t>(std::numeric_limits<std::int64_t>::min(), &out);
  AppendLE(0.1, &out);
  ASSERT_EQ(out.size(), 1u + 2 + 4 + 8 + 8);
  EXPECT_EQ(out.substr(0, 7), std::string("\x7F\xFE\xFF\xEF\xBE\xAD\xDE", 7));
  EXPECT_EQ(LoadLE<std::uint8_t>(out.data()), 0x7F);
  EXPECT_EQ(LoadLE<std::int16_t>(out.data() + 1), -2);
  EXPECT_EQ(LoadLE<std::uint32_t>(out.data() + 3), 0xDEADBEEFu);
  EXPECT_EQ(LoadLE<std::int64_t>(out.data() + 7), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(LoadLE<double>(out.data() + 15), 0.1);

  char buf[8] = {};
  StoreLE<std::uint32_t>(0x11223344u, buf + 2);
  EXPECT_EQ(std::string(buf, 8), std::string("\0\0\x44\x33\x22\x11\0\0", 8));
}

}  // namespace
}  // namespace geolake
