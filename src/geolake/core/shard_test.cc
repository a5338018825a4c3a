#include "geolake/core/shard.h"

#include <string>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsErrorWith;

// The published FNV-1a 64 test vectors (the FNV reference's test suite), so the hash is the
// standard one and not just self-consistent.
TEST(StableHash64Test, IsFnv1a64) {
  EXPECT_EQ(StableHash64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(StableHash64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(StableHash64("foobar"), 0x85944171f73967e8ULL);
}

TEST(ShardTest, EveryKeyBelongsToExactlyOneShardAndTheyAreBalanced) {
  constexpr int kShards = 3;
  std::vector<int> per_shard(kShards, 0);
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "xxh3:0123456789abcdef:1000:/data/f" + std::to_string(i) + "#0";
    int owners = 0;
    for (int s = 0; s < kShards; ++s) {
      if (Shard{s, kShards}.Owns(key)) {
        ++owners;
        ++per_shard[s];
        EXPECT_EQ(ShardOfKey(key, kShards), s);
      }
    }
    EXPECT_EQ(owners, 1) << key;
    EXPECT_TRUE(Shard{}.Owns(key));
  }
  for (int s = 0; s < kShards; ++s) {
    EXPECT_GT(per_shard[s], 900) << s;  // 1000 expected; a bad hash mod 3 would skew far more
    EXPECT_LT(per_shard[s], 1100) << s;
  }
  EXPECT_EQ(ShardOfKey("anything", 1), 0);
  EXPECT_EQ(ShardOfKey("anything", 0), 0);
}

TEST(ParseShardTest, TakesIOfNAndNamesWhatIsWrong) {
  ASSERT_OK_AND_ASSIGN(Shard s, ParseShard("2/3"));
  EXPECT_EQ(s, (Shard{2, 3}));
  EXPECT_EQ(s.ToString(), "2/3");
  ASSERT_OK_AND_ASSIGN(s, ParseShard("0/1"));
  EXPECT_TRUE(s.whole());
  EXPECT_THAT(ParseShard("3/3"),
              IsErrorWith(ErrorCode::kInvalidArgument,
                          "--shard '3/3': the shard index I must be in 0..2 for 3 shards"));
  EXPECT_THAT(ParseShard("-1/3"), IsErrorWith(ErrorCode::kInvalidArgument, "in 0..2"));
  EXPECT_THAT(ParseShard("0/0"),
              IsErrorWith(ErrorCode::kInvalidArgument,
                          "--shard '0/0': the shard count N must be at least 1"));
  EXPECT_THAT(ParseShard("0/-2"), IsErrorWith(ErrorCode::kInvalidArgument, "at least 1"));
  for (const char* bad : {"", "1", "1/", "/3", "a/3", "1/3x", "1 /3", "1/3/4", "+1/3"}) {
    EXPECT_THAT(ParseShard(bad), IsErrorWith(ErrorCode::kInvalidArgument, "expected I/N")) << bad;
  }
}

}  // namespace
}  // namespace geolake
