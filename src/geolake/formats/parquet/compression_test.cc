#include "geolake/formats/parquet/compression.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake::parquet {
namespace {

using ::geolake::testing::IsError;

std::string SampleText() {
  std::string s;
  for (int i = 0; i < 5000; ++i) s += "row " + std::to_string(i % 97) + " geolake;";
  return s;
}

TEST(CompressionTest, EveryWritableCodecRoundTrips) {
  const std::string input = SampleText();
  for (CompressionCodec codec :
       {CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
        CompressionCodec::kZstd, CompressionCodec::kLz4Raw, CompressionCodec::kBrotli}) {
    std::string compressed;
    ASSERT_OK(Compress(codec, input, &compressed)) << CodecName(codec);
    if (codec != CompressionCodec::kUncompressed) {
      EXPECT_LT(compressed.size(), input.size() / 3) << CodecName(codec);
    }
    std::string back;
    ASSERT_OK(Decompress(codec, compressed, static_cast<std::int64_t>(input.size()), &back))
        << CodecName(codec);
    EXPECT_EQ(back, input) << CodecName(codec);
    // Empty pages too.
    ASSERT_OK(Compress(codec, "", &compressed));
    ASSERT_OK(Decompress(codec, compressed, 0, &back)) << CodecName(codec);
    EXPECT_TRUE(back.empty());
  }
}

TEST(CompressionTest, GzipIsAGzipStreamAndMembersConcatenate) {
  std::string a;
  std::string b;
  ASSERT_OK(Compress(CompressionCodec::kGzip, "hello ", &a));
  ASSERT_OK(Compress(CompressionCodec::kGzip, "world", &b));
  EXPECT_EQ(a.substr(0, 2), "\x1F\x8B");  // RFC 1952 magic
  std::string back;
  ASSERT_OK(Decompress(CompressionCodec::kGzip, a + b, 11, &back));
  EXPECT_EQ(back, "hello world");
}

TEST(CompressionTest, ZstdLevelIsApplied) {
  const std::string input = SampleText();
  std::string fast;
  std::string strong;
  CompressionOptions o;
  o.zstd_level = 1;
  ASSERT_OK(Compress(CompressionCodec::kZstd, input, &fast, o));
  o.zstd_level = 19;
  ASSERT_OK(Compress(CompressionCodec::kZstd, input, &strong, o));
  EXPECT_LE(strong.size(), fast.size());
}

TEST(CompressionTest, BombsAndWrongSizesAreCorrupt) {
  const std::string input(1 << 20, 'x');  // 1 MiB of one byte compresses to almost nothing
  for (CompressionCodec codec :
       {CompressionCodec::kSnappy, CompressionCodec::kGzip, CompressionCodec::kZstd,
        CompressionCodec::kLz4Raw, CompressionCodec::kBrotli}) {
    std::string compressed;
    ASSERT_OK(Compress(codec, input, &compressed));
    std::string out;
    // Declared smaller than the real output: refused, and nothing beyond it is produced.
    EXPECT_THAT(Decompress(codec, compressed, 1000, &out), IsError(ErrorCode::kCorruptData))
        << CodecName(codec);
    EXPECT_LE(out.size(), 1000u);
    // Declared larger than the real output.
    EXPECT_THAT(Decompress(codec, compressed, (1 << 20) + 1, &out),
                IsError(ErrorCode::kCorruptData))
        << CodecName(codec);
    // Garbage.
    EXPECT_THAT(Decompress(codec, "\xFF\xFF\xFF\xFF garbage", 100, &out),
                IsError(ErrorCode::kCorruptData))
        << CodecName(codec);
  }
  std::string out;
  EXPECT_THAT(Decompress(CompressionCodec::kZstd, "", std::int64_t{1} << 40, &out),
              IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(Decompress(CompressionCodec::kUncompressed, "abc", 4, &out),
              IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(Decompress(CompressionCodec::kLzo, "abc", 3, &out),
              IsError(ErrorCode::kNotImplemented));
  EXPECT_THAT(Compress(CompressionCodec::kLz4, "abc", &out), IsError(ErrorCode::kNotImplemented));
}

TEST(CompressionTest, ReadsHadoopFramedAndRawLz4) {
  const std::string input = SampleText();
  std::string block;
  ASSERT_OK(Compress(CompressionCodec::kLz4Raw, input, &block));
  // Hadoop framing: big-endian uncompressed size, big-endian compressed size, block.
  auto be32 = [](std::uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xFF);
    return s;
  };
  const std::string hadoop = be32(static_cast<std::uint32_t>(input.size())) +
                             be32(static_cast<std::uint32_t>(block.size())) + block;
  std::string back;
  ASSERT_OK(
      Decompress(CompressionCodec::kLz4, hadoop, static_cast<std::int64_t>(input.size()), &back));
  EXPECT_EQ(back, input);
  ASSERT_OK(
      Decompress(CompressionCodec::kLz4, block, static_cast<std::int64_t>(input.size()), &back));
  EXPECT_EQ(back, input);
}

TEST(CompressionTest, PageCompressorReusesStateAcrossPages) {
  for (CompressionCodec codec : {CompressionCodec::kZstd, CompressionCodec::kSnappy}) {
    PageCompressor compressor(codec, CompressionOptions{});
    EXPECT_EQ(compressor.codec(), codec);
    for (int page = 0; page < 3; ++page) {
      const std::string input = SampleText() + std::to_string(page);
      std::string compressed;
      ASSERT_OK(compressor.Compress(input, &compressed));
      std::string expected;
      ASSERT_OK(Compress(codec, input, &expected));
      EXPECT_EQ(compressed, expected) << "same bytes as the one-shot API";
      std::string back;
      ASSERT_OK(Decompress(codec, compressed, static_cast<std::int64_t>(input.size()), &back));
      EXPECT_EQ(back, input);
    }
  }
}

// Every ZSTD page of a thread goes through one context: pages of other levels and sizes
// compressed in between, and the same done on another thread at the same time, must not change
// a page's bytes (they equal a fresh context's) nor its round trip.
TEST(CompressionTest, ZstdCompressorsShareAThreadContextWithoutSharingState) {
  std::vector<std::string> inputs;
  for (const std::size_t size : {std::size_t{90}, std::size_t{32} << 10, std::size_t{400} << 10}) {
    std::string input;
    for (std::size_t i = 0; input.size() < size; ++i) {
      input += std::to_string(i * 2654435761U % 1000003) + (i % 7 == 0 ? "\n" : ",");
    }
    input.resize(size);
    inputs.push_back(std::move(input));
  }
  const std::vector<int> levels = {1, 3, 9};
  const auto run = [&](int rounds, std::vector<std::string>* failures) {
    std::vector<std::unique_ptr<PageCompressor>> compressors;
    for (const int level : levels) {
      CompressionOptions options;
      options.zstd_level = level;
      compressors.push_back(std::make_unique<PageCompressor>(CompressionCodec::kZstd, options));
    }
    std::string compressed;
    std::string back;
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t l = 0; l < levels.size(); ++l) {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          const std::string& input = inputs[(i + static_cast<std::size_t>(round)) % inputs.size()];
          const std::string label =
              "level " + std::to_string(levels[l]) + ", " + std::to_string(input.size()) + " B";
          if (!compressors[l]->Compress(input, &compressed).ok()) {
            failures->push_back(label + ": compress failed");
            continue;
          }
          std::string fresh(ZSTD_compressBound(input.size()), '\0');
          fresh.resize(
              ZSTD_compress(fresh.data(), fresh.size(), input.data(), input.size(), levels[l]));
          if (compressed != fresh) failures->push_back(label + ": differs from a fresh context");
          if (!Decompress(CompressionCodec::kZstd, compressed,
                          static_cast<std::int64_t>(input.size()), &back)
                   .ok() ||
              back != input) {
            failures->push_back(label + ": does not round-trip");
          }
        }
      }
    }
  };
  std::vector<std::string> here;
  std::vector<std::string> there;
  std::thread other([&] { run(4, &there); });
  run(4, &here);
  other.join();
  EXPECT_TRUE(here.empty()) << here.front();
  EXPECT_TRUE(there.empty()) << there.front();
}

TEST(CompressionTest, PageDecompressorReusesStateAndRefusesBombs) {
  PageDecompressor decompressor;
  for (CompressionCodec codec : {CompressionCodec::kZstd, CompressionCodec::kGzip}) {
    for (int page = 0; page < 3; ++page) {
      const std::string input = SampleText() + std::to_string(page);
      std::string compressed;
      ASSERT_OK(Compress(codec, input, &compressed));
      std::string back;
      ASSERT_OK(decompressor.Decompress(codec, compressed, static_cast<std::int64_t>(input.size()),
                                        &back));
      EXPECT_EQ(back, input);
      // Declaring fewer bytes than the stream holds is a bomb; more is a short stream.
      EXPECT_THAT(decompressor.Decompress(codec, compressed,
                                          static_cast<std::int64_t>(input.size()) - 1, &back),
                  IsError(ErrorCode::kCorruptData));
      EXPECT_THAT(decompressor.Decompress(codec, compressed,
                                          static_cast<std::int64_t>(input.size()) + 1, &back),
                  IsError(ErrorCode::kCorruptData));
      EXPECT_THAT(decompressor.Decompress(codec, compressed, 100, &back, /*max=*/10),
                  IsError(ErrorCode::kCorruptData));
    }
  }
}

}  // namespace
}  // namespace geolake::parquet
