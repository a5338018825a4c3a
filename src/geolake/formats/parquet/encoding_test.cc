#include "geolake/formats/parquet/encoding.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "geolake/core/hex.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet {
namespace {

using ::geolake::testing::IsError;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

std::string Hex(const std::string& s) { return HexEncode(s, HexCase::kUpper, " "); }

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

TEST(EncodingBitPackTest, SpecExampleZeroToSevenAtWidthThree) {
  const std::uint32_t values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::string out;
  PackBits(values, 8, 3, &out);
  EXPECT_EQ(Hex(out), "88 C6 FA");
  std::uint32_t back[8];
  UnpackBits(AsBytes(out).data(), out.size(), 8, 3, back);
  EXPECT_THAT(back, ElementsAreArray(values));
}

TEST(EncodingBitPackTest, RoundTripsEveryWidth) {
  std::mt19937_64 rng(42);
  for (int w = 0; w <= 32; ++w) {
    std::vector<std::uint32_t> values(1000);
    for (auto& v : values) v = static_cast<std::uint32_t>(rng()) & (w == 32 ? ~0u : (1u << w) - 1);
    std::string out;
    PackBits(values.data(), values.size(), w, &out);
    ASSERT_EQ(out.size(), (values.size() * w + 7) / 8);
    std::vector<std::uint32_t> back(values.size());
    UnpackBits(AsBytes(out).data(), out.size(), back.size(), w, back.data());
    EXPECT_EQ(back, values) << "width " << w;
  }
  for (int w = 0; w <= 64; ++w) {
    std::vector<std::uint64_t> values(333);
    for (auto& v : values) v = rng() & (w == 64 ? ~0ull : (1ull << w) - 1);
    std::string out;
    PackBits64(values.data(), values.size(), w, &out);
    ASSERT_EQ(out.size(), (values.size() * w + 7) / 8);
    std::vector<std::uint64_t> back(values.size());
    UnpackBits64(AsBytes(out).data(), out.size(), back.size(), w, back.data());
    EXPECT_EQ(back, values) << "width " << w;
  }
}

TEST(EncodingRleTest, SpecExampleTenNonNullDefinitionLevels) {
  const std::int16_t levels[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::string out;
  EncodeRleBitPackedWithLength(levels, 10, 1, &out);
  EXPECT_EQ(Hex(out), "02 00 00 00 14 01");
  ByteSpan body;
  std::size_t consumed;
  ASSERT_OK(ReadLengthPrefixed(AsBytes(out), &body, &consumed));
  EXPECT_EQ(consumed, 6u);
  std::int16_t back[10];
  RleBitPackedDecoder decoder(body, 1);
  ASSERT_OK(decoder.Decode(back, 10));
  EXPECT_THAT(back, ElementsAreArray(levels));
}

TEST(EncodingRleTest, BitPackedRunOfSpecExample) {
  // Header (1 group << 1 | 1) = 0x03, then 0..7 packed at width 3.
  const std::uint32_t values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::string out;
  EncodeRleBitPacked(values, 8, 3, &out);
  EXPECT_EQ(Hex(out), "03 88 C6 FA");
}

TEST(EncodingRleTest, MixesRleRunsAndLiteralGroups) {
  // 3 literals, then 20 sevens, then 5 literals: the encoder borrows 5 sevens to fill the first
  // literal group, emits an RLE run of 15, then a padded literal group.
  std::vector<std::uint32_t> values = {1, 2, 3};
  values.insert(values.end(), 20, 7);
  for (std::uint32_t v : {4u, 5u, 6u, 1u, 2u}) values.push_back(v);
  std::string out;
  EncodeRleBitPacked(values.data(), values.size(), 3, &out);
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 0x03);     // one literal group
  EXPECT_EQ(static_cast<unsigned char>(out[4]), 15 << 1);  // RLE run of 15
  EXPECT_EQ(static_cast<unsigned char>(out[5]), 7);        // its value
  EXPECT_EQ(static_cast<unsigned char>(out[6]), 0x03);     // one padded literal group
  EXPECT_EQ(out.size(), 10u);
  std::vector<std::uint32_t> back(values.size());
  RleBitPackedDecoder decoder(AsBytes(out), 3);
  ASSERT_OK(decoder.Decode(back.data(), back.size()));
  EXPECT_EQ(back, values);
}

TEST(EncodingRleTest, RoundTripsRandomRunsAtEveryWidth) {
  std::mt19937_64 rng(7);
  for (int w = 0; w <= 32; ++w) {
    const std::uint64_t mask = w == 32 ? 0xFFFFFFFFull : (1ull << w) - 1;
    std::vector<std::uint32_t> values;
    while (values.size() < 5000) {
      const auto v = static_cast<std::uint32_t>(rng() & mask);
      const std::size_t run = rng() % 3 == 0 ? rng() % 40 : 1;
      values.insert(values.end(), run, v);
    }
    std::string out;
    EncodeRleBitPacked(values.data(), values.size(), w, &out);
    std::vector<std::uint32_t> back(values.size());
    RleBitPackedDecoder decoder(AsBytes(out), w);
    // Decode in uneven slices to exercise resuming inside runs.
    std::size_t done = 0;
    while (done < back.size()) {
      const std::size_t take = std::min<std::size_t>(back.size() - done, 1 + rng() % 37);
      ASSERT_OK(decoder.Decode(back.data() + done, take));
      done += take;
    }
    EXPECT_EQ(back, values) << "width " << w;
    EXPECT_EQ(decoder.bytes_consumed(), out.size());
  }
}

TEST(EncodingRleTest, LongConstantRunIsTiny) {
  std::vector<std::uint8_t> values(1'000'000, 1);
  std::string out;
  EncodeRleBitPacked(values.data(), values.size(), 1, &out);
  EXPECT_LE(out.size(), 4u);
}

TEST(EncodingRleTest, AcceptsUnpaddedLastBitPackedGroup) {
  // Header says one group of 8 at width 8 but only 3 bytes follow; 3 values are readable.
  const std::string in = Bytes({0x03, 10, 20, 30});
  RleBitPackedDecoder decoder(AsBytes(in), 8);
  std::uint32_t out[3];
  ASSERT_OK(decoder.Decode(out, 3));
  EXPECT_THAT(out, ElementsAre(10u, 20u, 30u));
  std::uint32_t more;
  EXPECT_THAT(decoder.Decode(&more, 1), IsError(ErrorCode::kCorruptData));
}

TEST(EncodingRleTest, RejectsMalformedInput) {
  std::uint32_t out[16];
  {                                              // runs end before the requested count
    const std::string in = Bytes({0x08, 0x01});  // RLE run of 4
    RleBitPackedDecoder decoder(AsBytes(in), 1);
    EXPECT_THAT(decoder.Decode(out, 5), IsError(ErrorCode::kCorruptData));
  }
  {  // bit width beyond 32
    const std::string in = Bytes({0x02, 0, 0, 0, 0, 0});
    RleBitPackedDecoder decoder(AsBytes(in), 33);
    EXPECT_THAT(decoder.Decode(out, 1), IsError(ErrorCode::kCorruptData));
  }
  {  // RLE value wider than the bit width
    const std::string in = Bytes({0x02, 0x05});
    RleBitPackedDecoder decoder(AsBytes(in), 2);
    EXPECT_THAT(decoder.Decode(out, 1), IsError(ErrorCode::kCorruptData));
  }
  {  // truncated varint header
    const std::string in = Bytes({0x80, 0x80});
    RleBitPackedDecoder decoder(AsBytes(in), 1);
    EXPECT_THAT(decoder.Decode(out, 1), IsError(ErrorCode::kCorruptData));
  }
  {  // truncated RLE value
    const std::string in = Bytes({0x02, 0x05});
    RleBitPackedDecoder decoder(AsBytes(in), 16);
    EXPECT_THAT(decoder.Decode(out, 1), IsError(ErrorCode::kCorruptData));
  }
  {  // huge declared run: decoding a bounded count is fine and allocates nothing
    const std::string in = Bytes({0xFE, 0xFF, 0xFF, 0xFF, 0x0F, 0x01});
    RleBitPackedDecoder decoder(AsBytes(in), 1);
    ASSERT_OK(decoder.Decode(out, 16));
    EXPECT_EQ(out[15], 1u);
  }
  {  // an out-of-range level for the output type
    const std::string in = Bytes({0x02, 0xFF, 0xFF, 0x00, 0x00});
    RleBitPackedDecoder decoder(AsBytes(in), 32);
    std::int16_t level;
    EXPECT_THAT(decoder.Decode(&level, 1), IsError(ErrorCode::kCorruptData));
  }
  ByteSpan body;
  std::size_t consumed;
  EXPECT_THAT(ReadLengthPrefixed(AsBytes(Bytes({5, 0, 0, 0, 1})), &body, &consumed),
              IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(ReadLengthPrefixed(AsBytes(Bytes({5, 0})), &body, &consumed),
              IsError(ErrorCode::kCorruptData));
}

TEST(EncodingPlainTest, RoundTripsFixedWidthEdgeValues) {
  const std::vector<std::int32_t> i32 = {0, 1, -1, std::numeric_limits<std::int32_t>::min(),
                                         std::numeric_limits<std::int32_t>::max()};
  const std::vector<std::int64_t> i64 = {0, -1, std::numeric_limits<std::int64_t>::min(),
                                         std::numeric_limits<std::int64_t>::max()};
  const std::vector<double> f64 = {0.0,
                                   -0.0,
                                   std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -1e308,
                                   5e-324};
  std::string out;
  EncodePlain(i32.data(), i32.size(), &out);
  EXPECT_EQ(out.size(), 20u);
  EXPECT_EQ(Hex(out.substr(4, 8)), "01 00 00 00 FF FF FF FF");
  std::vector<std::int32_t> i32_back(i32.size());
  std::size_t consumed = 0;
  ASSERT_OK(DecodePlain(AsBytes(out), i32.size(), i32_back.data(), &consumed));
  EXPECT_EQ(i32_back, i32);
  EXPECT_EQ(consumed, 20u);

  out.clear();
  EncodePlain(i64.data(), i64.size(), &out);
  std::vector<std::int64_t> i64_back(i64.size());
  ASSERT_OK(DecodePlain(AsBytes(out), i64.size(), i64_back.data()));
  EXPECT_EQ(i64_back, i64);

  out.clear();
  EncodePlain(f64.data(), f64.size(), &out);
  std::vector<double> f64_back(f64.size());
  ASSERT_OK(DecodePlain(AsBytes(out), f64.size(), f64_back.data()));
  EXPECT_EQ(std::memcmp(f64_back.data(), f64.data(), f64.size() * 8), 0);
  EXPECT_TRUE(std::signbit(f64_back[1]));
  EXPECT_TRUE(std::isnan(f64_back[2]));

  EXPECT_THAT(DecodePlain(AsBytes(out), f64.size() + 1, f64_back.data()),
              IsError(ErrorCode::kCorruptData));
  // A count whose byte size overflows must not wrap around.
  EXPECT_THAT(DecodePlain(AsBytes(out), std::size_t{1} << 62, f64_back.data()),
              IsError(ErrorCode::kCorruptData));
}

TEST(EncodingPlainTest, BooleansAreBitPackedLsbFirst) {
  const std::uint8_t values[10] = {1, 0, 1, 1, 0, 0, 0, 1, 1, 1};
  std::string out;
  EncodePlainBoolean(values, 10, &out);
  EXPECT_EQ(Hex(out), "8D 03");
  std::uint8_t back[10];
  std::size_t consumed;
  ASSERT_OK(DecodePlainBoolean(AsBytes(out), 10, back, &consumed));
  EXPECT_THAT(back, ElementsAreArray(values));
  EXPECT_EQ(consumed, 2u);
  EXPECT_THAT(DecodePlainBoolean(AsBytes(out), 17, back), IsError(ErrorCode::kCorruptData));
}

TEST(EncodingPlainTest, Int96TimestampFromSparkLayout) {
  // 2000-01-01 00:00:01 UTC: Julian day 2451545, 1e9 ns into the day.
  Int96 v;
  const std::uint64_t nanos = 1'000'000'000;
  v.words[0] = static_cast<std::uint32_t>(nanos);
  v.words[1] = static_cast<std::uint32_t>(nanos >> 32);
  v.words[2] = 2451545;
  EXPECT_EQ(Int96ToUnixNanos(v), 946684801LL * 1'000'000'000);
  std::string out;
  EncodePlain(&v, 1, &out);
  ASSERT_EQ(out.size(), 12u);
  Int96 back;
  ASSERT_OK(DecodePlain(AsBytes(out), 1, &back));
  EXPECT_EQ(back, v);
}

TEST(EncodingPlainTest, ByteArraysRoundTripIncludingEmpty) {
  const std::vector<std::int32_t> offsets = {0, 3, 3, 8};
  const std::string data = "abchello";
  std::string out;
  EncodePlainByteArray(offsets.data(), reinterpret_cast<const std::uint8_t*>(data.data()), 3, &out);
  EXPECT_EQ(out.size(), 12u + 8u);
  EXPECT_EQ(Hex(out.substr(0, 7)), "03 00 00 00 61 62 63");
  std::vector<std::int64_t> back_offsets = {0};
  std::string back_data;
  std::size_t consumed;
  ASSERT_OK(DecodePlainByteArray(AsBytes(out), 3, {&back_offsets, &back_data}, &consumed));
  EXPECT_THAT(back_offsets, ElementsAre(0, 3, 3, 8));
  EXPECT_EQ(back_data, data);
  EXPECT_EQ(consumed, out.size());

  // A length running past the end, and a count no input could hold.
  std::string bad = out;
  bad[0] = 100;
  back_offsets = {0};
  back_data.clear();
  EXPECT_THAT(DecodePlainByteArray(AsBytes(bad), 3, {&back_offsets, &back_data}),
              IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(DecodePlainByteArray(AsBytes(out), 1'000'000'000, {&back_offsets, &back_data}),
              IsError(ErrorCode::kCorruptData));
}

TEST(EncodingPlainTest, FixedLenByteArray) {
  const std::string in = "abcdefgh";
  std::uint8_t out[8];
  ASSERT_OK(DecodePlainFixed(AsBytes(in), 2, 4, out));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 8), in);
  EXPECT_THAT(DecodePlainFixed(AsBytes(in), 3, 4, out), IsError(ErrorCode::kCorruptData));
}

TEST(EncodingDictionaryTest, AssignsIndicesInFirstSeenOrder) {
  DictionaryBuilder<std::int64_t> dict;
  const std::int64_t values[] = {5, 7, 5, std::numeric_limits<std::int64_t>::min(), 7, 9};
  std::uint32_t indices[6];
  dict.InsertBatch(values, 6, indices);
  EXPECT_THAT(indices, ElementsAre(0u, 1u, 0u, 2u, 1u, 3u));
  EXPECT_EQ(dict.size(), 4u);
  EXPECT_EQ(dict.byte_size(), 32u);
  std::string page;
  dict.WriteDictionaryPage(&page);
  std::vector<std::int64_t> back(4);
  ASSERT_OK(DecodePlain(AsBytes(page), 4, back.data()));
  EXPECT_THAT(back, ElementsAre(5, 7, std::numeric_limits<std::int64_t>::min(), 9));
}

TEST(EncodingDictionaryTest, FloatsAreKeyedByBits) {
  DictionaryBuilder<double> dict;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(dict.Insert(0.0), 0u);
  EXPECT_EQ(dict.Insert(-0.0), 1u);
  EXPECT_EQ(dict.Insert(nan), 2u);
  EXPECT_EQ(dict.Insert(nan), 2u);
  EXPECT_EQ(dict.Insert(0.0), 0u);
}

TEST(EncodingDictionaryTest, GrowsPastManyEntries) {
  DictionaryBuilder<std::int32_t> dict;
  for (std::int32_t i = 0; i < 100000; ++i) ASSERT_EQ(dict.Insert(i * 7919), std::uint32_t(i));
  for (std::int32_t i = 0; i < 100000; i += 997) ASSERT_EQ(dict.Insert(i * 7919), std::uint32_t(i));
  EXPECT_EQ(dict.size(), 100000u);
  dict.Clear();
  EXPECT_EQ(dict.size(), 0u);
  EXPECT_EQ(dict.Insert(3), 0u);
}

TEST(EncodingDictionaryTest, ByteArraysTrackPlainSize) {
  ByteArrayDictionaryBuilder dict;
  EXPECT_EQ(dict.Insert("foo"), 0u);
  EXPECT_EQ(dict.Insert(""), 1u);
  EXPECT_EQ(dict.Insert("barbaz"), 2u);
  EXPECT_EQ(dict.Insert("foo"), 0u);
  EXPECT_EQ(dict.Insert(""), 1u);
  EXPECT_EQ(dict.size(), 3u);
  EXPECT_EQ(dict.byte_size(), 3u * 4 + 9);
  std::string page;
  dict.WriteDictionaryPage(&page);
  EXPECT_EQ(page.size(), dict.byte_size());
  std::vector<std::int64_t> offsets = {0};
  std::string data;
  ASSERT_OK(DecodePlainByteArray(AsBytes(page), 3, {&offsets, &data}));
  EXPECT_EQ(data, "foobarbaz");
  EXPECT_THAT(offsets, ElementsAre(0, 3, 3, 9));

  ByteArrayDictionaryBuilder fixed(2);
  fixed.Insert("ab");
  fixed.Insert("cd");
  fixed.Insert("ab");
  EXPECT_EQ(fixed.byte_size(), 4u);
  page.clear();
  fixed.WriteDictionaryPage(&page);
  EXPECT_EQ(page, "abcd");

  ByteArrayDictionaryBuilder many;
  for (int i = 0; i < 50000; ++i) ASSERT_EQ(many.Insert(std::to_string(i)), std::uint32_t(i));
  EXPECT_EQ(many.Insert("49999"), 49999u);
}

TEST(EncodingDictionaryTest, IndicesRoundTripAndAreValidated) {
  std::vector<std::uint32_t> indices;
  for (std::uint32_t i = 0; i < 1000; ++i) indices.push_back((i * 31) % 300);
  std::string out;
  EncodeDictionaryIndices(indices.data(), indices.size(), 300, &out);
  EXPECT_EQ(out[0], 9);  // 299 needs 9 bits
  std::vector<std::uint32_t> back(indices.size());
  ASSERT_OK(DecodeDictionaryIndices(AsBytes(out), back.size(), 300, back.data()));
  EXPECT_EQ(back, indices);
  EXPECT_THAT(DecodeDictionaryIndices(AsBytes(out), back.size(), 299, back.data()),
              IsError(ErrorCode::kCorruptData));
  std::string bad = out;
  bad[0] = 33;
  EXPECT_THAT(DecodeDictionaryIndices(AsBytes(bad), back.size(), 300, back.data()),
              IsError(ErrorCode::kCorruptData));
  // A one-entry dictionary still gets a width of 1.
  out.clear();
  const std::uint32_t zeros[4] = {0, 0, 0, 0};
  EncodeDictionaryIndices(zeros, 4, 1, &out);
  EXPECT_EQ(out[0], 1);
  // Width 0 from other writers decodes as all zeros.
  const std::string width0 = Bytes({0x00, 0x08});
  ASSERT_OK(DecodeDictionaryIndices(AsBytes(width0), 4, 1, back.data()));
  EXPECT_EQ(back[3], 0u);
}

TEST(EncodingDeltaTest, FormatsExampleOneToFive) {
  // Encodings.md example 1: 1 2 3 4 5 -> deltas all 1, min delta 1, bit width 0.
  const std::int32_t values[5] = {1, 2, 3, 4, 5};
  std::string out;
  EncodeDeltaBinaryPacked(values, 5, &out);
  // header: 128, 4, 5, zigzag(1)=2; block: min delta zigzag(1)=2, widths 0 0 0 0.
  EXPECT_EQ(Hex(out), "80 01 04 05 02 02 00 00 00 00");
  std::int32_t back[5];
  std::size_t consumed;
  ASSERT_OK(DecodeDeltaBinaryPacked(AsBytes(out), 5, back, &consumed));
  EXPECT_THAT(back, ElementsAreArray(values));
  EXPECT_EQ(consumed, out.size());
}

TEST(EncodingDeltaTest, FormatsExampleTwo) {
  // Encodings.md example 2: 7 5 3 1 2 3 4 5 -> deltas -2 -2 -2 1 1 1 1, min -2, packed
  // 0 0 0 3 3 3 3 at width 2.
  const std::int64_t values[8] = {7, 5, 3, 1, 2, 3, 4, 5};
  std::string out;
  EncodeDeltaBinaryPacked(values, 8, &out);
  ASSERT_GE(out.size(), 10u);
  EXPECT_EQ(Hex(out.substr(0, 10)), "80 01 04 08 0E 03 02 00 00 00");
  // 32 values at width 2 = 8 bytes: 0,0,0,3 -> 0xC0; 3,3,3,0 -> 0x3F; then zero padding.
  EXPECT_EQ(Hex(out.substr(10)), "C0 3F 00 00 00 00 00 00");
  std::int64_t back[8];
  ASSERT_OK(DecodeDeltaBinaryPacked(AsBytes(out), 8, back));
  EXPECT_THAT(back, ElementsAreArray(values));
}

template <typename T>
void DeltaRoundTrip(const std::vector<T>& values) {
  std::string out;
  EncodeDeltaBinaryPacked(values.data(), values.size(), &out);
  std::vector<T> back(values.size());
  std::size_t consumed = 0;
  ASSERT_OK(DecodeDeltaBinaryPacked(AsBytes(out), values.size(), back.data(), &consumed));
  EXPECT_EQ(back, values);
  EXPECT_EQ(consumed, out.size());
}

TEST(EncodingDeltaTest, RoundTripsEdgeAndRandomValues) {
  using L64 = std::numeric_limits<std::int64_t>;
  using L32 = std::numeric_limits<std::int32_t>;
  DeltaRoundTrip<std::int64_t>({});
  DeltaRoundTrip<std::int64_t>({42});
  DeltaRoundTrip<std::int64_t>({L64::min(), L64::max(), L64::min(), 0, L64::max(), -1});
  DeltaRoundTrip<std::int32_t>({L32::min(), L32::max(), L32::min(), 0, L32::max(), -1});
  std::mt19937_64 rng(3);
  for (std::size_t n : {2u, 31u, 32u, 33u, 128u, 129u, 1000u, 4097u}) {
    std::vector<std::int64_t> a(n);
    std::vector<std::int32_t> b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<std::int64_t>(rng()) >> (rng() % 64);
      b[i] = static_cast<std::int32_t>(i * 3 + rng() % 5);
    }
    DeltaRoundTrip(a);
    DeltaRoundTrip(b);
  }
}

TEST(EncodingDeltaTest, RejectsMalformedStreams) {
  std::int32_t out[200];
  // block size not a multiple of 128
  EXPECT_THAT(DecodeDeltaBinaryPacked(AsBytes(Bytes({0x40, 0x04, 0x01, 0x00})), 1, out),
              IsError(ErrorCode::kCorruptData));
  // miniblock size 128/3 not a multiple of 32
  EXPECT_THAT(DecodeDeltaBinaryPacked(AsBytes(Bytes({0x80, 0x01, 0x03, 0x01, 0x00})), 1, out),
              IsError(ErrorCode::kCorruptData));
  // a billion values declared in 7 bytes
  EXPECT_THAT(DecodeDeltaBinaryPacked(
                  AsBytes(Bytes({0x80, 0x01, 0x04, 0x80, 0x94, 0xEB, 0xDC, 0x03, 0x00})), 2, out),
              IsError(ErrorCode::kCorruptData));
  // miniblock bit width 33 for int32
  EXPECT_THAT(
      DecodeDeltaBinaryPacked(
          AsBytes(Bytes({0x80, 0x01, 0x04, 0x03, 0x00, 0x00, 33, 0, 0, 0, 1, 2, 3, 4})), 3, out),
      IsError(ErrorCode::kCorruptData));
  // miniblock data missing
  EXPECT_THAT(DecodeDeltaBinaryPacked(
                  AsBytes(Bytes({0x80, 0x01, 0x04, 0x03, 0x00, 0x00, 8, 0, 0, 0, 1})), 3, out),
              IsError(ErrorCode::kCorruptData));
  // fewer values than requested
  EXPECT_THAT(DecodeDeltaBinaryPacked(AsBytes(Bytes({0x80, 0x01, 0x04, 0x01, 0x00})), 2, out),
              IsError(ErrorCode::kCorruptData));
  // truncated header
  EXPECT_THAT(DecodeDeltaBinaryPacked(AsBytes(Bytes({0x80})), 1, out),
              IsError(ErrorCode::kCorruptData));
}

std::pair<std::vector<std::int64_t>, std::string> MakeStrings(
    const std::vector<std::string>& strings) {
  std::vector<std::int64_t> offsets = {0};
  std::string data;
  for (const auto& s : strings) {
    data += s;
    offsets.push_back(static_cast<std::int64_t>(data.size()));
  }
  return {offsets, data};
}

TEST(EncodingDeltaTest, DeltaLengthByteArrayRoundTrip) {
  const std::vector<std::string> strings = {"Hello", "World", "Foobar", "ABCDEF", "", "x"};
  auto [offsets, data] = MakeStrings(strings);
  std::string out;
  EncodeDeltaLengthByteArray(offsets.data(), reinterpret_cast<const std::uint8_t*>(data.data()),
                             strings.size(), &out);
  EXPECT_EQ(out.substr(out.size() - data.size()), data);
  std::vector<std::int64_t> back_offsets = {0};
  std::string back_data;
  std::size_t consumed;
  ASSERT_OK(DecodeDeltaLengthByteArray(AsBytes(out), strings.size(), {&back_offsets, &back_data},
                                       &consumed));
  EXPECT_EQ(back_offsets, offsets);
  EXPECT_EQ(back_data, data);
  EXPECT_EQ(consumed, out.size());
  // Cut the bytes short.
  back_offsets = {0};
  EXPECT_THAT(DecodeDeltaLengthByteArray(AsBytes(out).first(out.size() - 1), strings.size(),
                                         {&back_offsets, &back_data}),
              IsError(ErrorCode::kCorruptData));
}

TEST(EncodingDeltaTest, DeltaByteArrayRoundTripSharesPrefixes) {
  const std::vector<std::string> strings = {"axis", "axle", "babble", "babyhood",
                                            "",     "babe", "babe"};
  auto [offsets, data] = MakeStrings(strings);
  std::string out;
  EncodeDeltaByteArray(offsets.data(), reinterpret_cast<const std::uint8_t*>(data.data()),
                       strings.size(), &out);
  std::vector<std::int64_t> back_offsets = {0};
  std::string back_data;
  std::size_t consumed;
  ASSERT_OK(DecodeDeltaByteArray(AsBytes(out), strings.size(), {&back_offsets, &back_data}, 1 << 20,
                                 &consumed));
  EXPECT_EQ(back_offsets, offsets);
  EXPECT_EQ(back_data, data);
  EXPECT_EQ(consumed, out.size());
  // The output cap is enforced.
  back_offsets = {0};
  back_data.clear();
  EXPECT_THAT(DecodeDeltaByteArray(AsBytes(out), strings.size(), {&back_offsets, &back_data}, 10),
              IsError(ErrorCode::kCorruptData));
}

TEST(EncodingDeltaTest, DeltaByteArrayRejectsPrefixLongerThanPrevious) {
  // prefixes {0, 5}, suffix lengths {2, 0}, bytes "ab": the second value claims 5 bytes of "ab".
  std::string out;
  const std::int32_t prefixes[2] = {0, 5};
  const std::int32_t lengths[2] = {2, 0};
  EncodeDeltaBinaryPacked(prefixes, 2, &out);
  EncodeDeltaBinaryPacked(lengths, 2, &out);
  out += "ab";
  std::vector<std::int64_t> offsets = {0};
  std::string data;
  EXPECT_THAT(DecodeDeltaByteArray(AsBytes(out), 2, {&offsets, &data}, 1 << 20),
              IsError(ErrorCode::kCorruptData));
}

TEST(EncodingByteStreamSplitTest, SplitsBytesIntoStreams) {
  const float values[3] = {1.0f, -2.5f, std::numeric_limits<float>::quiet_NaN()};
  std::string out;
  EncodeByteStreamSplit(reinterpret_cast<const std::uint8_t*>(values), 3, 4, &out);
  ASSERT_EQ(out.size(), 12u);
  // 1.0f = 00 00 80 3F; stream 3 (the high bytes) starts at byte 9.
  EXPECT_EQ(static_cast<unsigned char>(out[9]), 0x3F);
  EXPECT_EQ(static_cast<unsigned char>(out[6]), 0x80);
  float back[3];
  ASSERT_OK(DecodeByteStreamSplit(AsBytes(out), 3, 4, reinterpret_cast<std::uint8_t*>(back)));
  EXPECT_EQ(std::memcmp(back, values, sizeof(values)), 0);

  std::mt19937_64 rng(11);
  for (int width : {2, 3, 8, 16}) {
    std::string raw(width * 101, '\0');
    for (auto& c : raw) c = static_cast<char>(rng());
    std::string enc;
    EncodeByteStreamSplit(reinterpret_cast<const std::uint8_t*>(raw.data()), 101, width, &enc);
    std::string dec(raw.size(), '\0');
    ASSERT_OK(DecodeByteStreamSplit(AsBytes(enc), 101, width,
                                    reinterpret_cast<std::uint8_t*>(dec.data())));
    EXPECT_EQ(dec, raw) << "width " << width;
  }
  EXPECT_THAT(
      DecodeByteStreamSplit(AsBytes(out).first(11), 3, 4, reinterpret_cast<std::uint8_t*>(back)),
      IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(DecodeByteStreamSplit(AsBytes(out), 4, 4, reinterpret_cast<std::uint8_t*>(back)),
              IsError(ErrorCode::kCorruptData));
}

}  // namespace
}  // namespace geolake::parquet
