#include "geolake/core/result.h"

#include <memory>
#include <string>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::geolake::testing::IsOk;

Result<int> ParsePositive(int v) {
  if (v <= 0) return Status::InvalidArgument("value " + std::to_string(v) + " is not positive");
  return v;
}

Result<int> Doubled(int v) {
  GEOLAKE_ASSIGN_OR_RETURN(int x, ParsePositive(v));
  return 2 * x;
}

Status CheckBoth(int a, int b) {
  GEOLAKE_RETURN_NOT_OK(ParsePositive(a));
  GEOLAKE_RETURN_NOT_OK_CTX(ParsePositive(b), "second");
  return Status::OK();
}

TEST(ResultTest, HoldsValueOrError) {
  EXPECT_THAT(Doubled(4), IsOk());
  EXPECT_EQ(*Doubled(4), 8);
  EXPECT_THAT(Doubled(-1), IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(Doubled(-1).status().message(), "value -1 is not positive");
}

TEST(ResultTest, ReturnNotOkPropagatesAndAddsContext) {
  EXPECT_OK(CheckBoth(1, 2));
  EXPECT_THAT(CheckBoth(0, 2), IsErrorWith(ErrorCode::kInvalidArgument, "value 0"));
  EXPECT_EQ(CheckBoth(1, -3).message(), "second: value -3 is not positive");
}

TEST(ResultTest, OkStatusInResultBecomesInternalError) {
  Result<int> r = Status::OK();
  EXPECT_THAT(r, IsError(ErrorCode::kInternal));
}

TEST(ResultTest, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<int> p, std::move(r));
  EXPECT_EQ(*p, 7);
}

TEST(StatusTest, ToStringNamesTheCode) {
  EXPECT_EQ(Status::OK().ToString(), "ok");
  EXPECT_EQ(Status::CommitConflict("table 'a.b' moved").ToString(),
            "commit conflict: table 'a.b' moved");
  EXPECT_EQ(Status::NotFound("x").WithContext("load").ToString(), "not found: load: x");
  EXPECT_OK(Status::OK().WithContext("ignored"));
}

}  // namespace
}  // namespace geolake
