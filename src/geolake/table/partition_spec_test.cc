#include "geolake/table/partition_spec.h"

#include <gtest/gtest.h>

#include "geolake/table/sort_order.h"
#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

TEST(TransformTest, ParsesAndPrintsNames) {
  for (const char* name :
       {"identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"}) {
    Transform t = Transform::Parse(name);
    EXPECT_NE(t.kind(), TransformKind::kUnknown) << name;
    EXPECT_EQ(t.ToString(), name);
  }
  EXPECT_EQ(Transform::Parse("bucket[16]").param(), 16);
  Transform unknown = Transform::Parse("zorder(a,b)");
  EXPECT_EQ(unknown.kind(), TransformKind::kUnknown);
  EXPECT_EQ(unknown.ToString(), "zorder(a,b)");
  EXPECT_EQ(Transform::Parse("bucket[0]").kind(), TransformKind::kUnknown);
}

// Test vectors from the Iceberg spec, Appendix B.
TEST(TransformTest, BucketHashMatchesSpecVectors) {
  EXPECT_EQ(BucketHash(*Type::Int(), Value(std::int32_t{34})).value(), 2017239379);
  EXPECT_EQ(BucketHash(*Type::Long(), Value(std::int64_t{34})).value(), 2017239379);
  EXPECT_EQ(BucketHash(*Type::Decimal(4, 2).value(), Value(DecimalValue{1420})).value(),
            -500754589);
  EXPECT_EQ(BucketHash(*Type::Date(), Value(std::int32_t{17486})).value(), -653330422);
  EXPECT_EQ(BucketHash(*Type::Time(), Value(std::int64_t{81068000000})).value(), -662762989);
  EXPECT_EQ(BucketHash(*Type::Timestamp(), Value(std::int64_t{1510871468000000})).value(),
            -2047944441);
  EXPECT_EQ(BucketHash(*Type::TimestampTz(), Value(std::int64_t{1510871468000001})).value(),
            -1207196810);
  EXPECT_EQ(BucketHash(*Type::TimestampNs(), Value(std::int64_t{1510871468000001001})).value(),
            -1207196810);
  EXPECT_EQ(BucketHash(*Type::String(), Value(std::string("iceberg"))).value(), 1210000089);
  EXPECT_EQ(BucketHash(*Type::String(), Value(std::string("34"))).value(), -427558391);
  EXPECT_EQ(BucketHash(*Type::Uuid(),
                       Value(UuidValue::FromString("f79c3e09-677c-4bbd-a479-3f349cb785e7").value()))
                .value(),
            1488055340);
  EXPECT_EQ(BucketHash(*Type::Binary(), Value(Bytes{0, 1, 2, 3})).value(), -188683207);
  EXPECT_THAT(BucketHash(*Type::Double(), Value(1.0)), IsError(ErrorCode::kInvalidArgument));
}

TEST(TransformTest, AppliesTransforms) {
  const Transform bucket = Transform::Bucket(4);
  // (2017239379 & INT_MAX) % 4 = 3.
  EXPECT_EQ(std::get<std::int32_t>(bucket.Apply(Type::Int(), Value(std::int32_t{34})).value()), 3);
  EXPECT_EQ(std::get<std::int32_t>(
                Transform::Truncate(10).Apply(Type::Int(), Value(std::int32_t{-1})).value()),
            -10);
  EXPECT_EQ(
      std::get<DecimalValue>(Transform::Truncate(50)
                                 .Apply(Type::Decimal(9, 2).value(), Value(DecimalValue{1065}))
                                 .value())
          .unscaled,
      1050);
  EXPECT_EQ(
      std::get<std::string>(Transform::Truncate(2)
                                .Apply(Type::String(), Value(std::string("\xC3\xA9t\xC3\xA9")))
                                .value()),
      "\xC3\xA9t");
  // 1969-12-31 is year -1, month -1, day -1 (floor semantics).
  EXPECT_EQ(std::get<std::int32_t>(
                Transform::Year().Apply(Type::Date(), Value(std::int32_t{-1})).value()),
            -1);
  EXPECT_EQ(std::get<std::int32_t>(
                Transform::Month().Apply(Type::Date(), Value(std::int32_t{-1})).value()),
            -1);
  EXPECT_EQ(std::get<std::int32_t>(
                Transform::Day().Apply(Type::Timestamp(), Value(std::int64_t{-1})).value()),
            -1);
  EXPECT_EQ(std::get<std::int32_t>(
                Transform::Hour().Apply(Type::Timestamp(), Value(std::int64_t{-1})).value()),
            -1);
  // 2017-11-16T22:31:08 -> year 47, month 574, hour 419686.
  const Value ts(std::int64_t{1510871468000000});
  EXPECT_EQ(std::get<std::int32_t>(Transform::Year().Apply(Type::Timestamp(), ts).value()), 47);
  EXPECT_EQ(std::get<std::int32_t>(Transform::Month().Apply(Type::Timestamp(), ts).value()), 574);
  EXPECT_EQ(std::get<std::int32_t>(Transform::Hour().Apply(Type::Timestamp(), ts).value()), 419686);
  EXPECT_EQ(Transform::Identity().Apply(Type::String(), Value(std::string("x"))).value(),
            Value(std::string("x")));
  EXPECT_TRUE(IsNull(Transform::Void().Apply(Type::Long(), Value(std::int64_t{5})).value()));
  EXPECT_TRUE(IsNull(bucket.Apply(Type::Int(), Value()).value()));
}

TEST(TransformTest, RejectsInvalidSources) {
  EXPECT_THAT(Transform::Identity().ResultType(Type::Geometry()),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Transform::Hour().ResultType(Type::Date()), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Transform::Parse("foo").ResultType(Type::Int()), IsError(ErrorCode::kNotImplemented));
  EXPECT_THAT(Transform::Identity().Apply(Type::Long(), Value(std::int32_t{1})),
              IsError(ErrorCode::kInvalidArgument));
}

TEST(PartitionSpecTest, JsonRoundTripAndPartitionType) {
  ASSERT_OK_AND_ASSIGN(auto spec, PartitionSpec::FromJson(R"({"spec-id":0,"fields":[
      {"name":"id_bucket","transform":"bucket[4]","source-id":1,"field-id":1000},
      {"name":"date","transform":"identity","source-id":3,"field-id":1001}]})"));
  EXPECT_EQ(
      spec->ToJson(),
      R"({"spec-id":0,"fields":[{"name":"id_bucket","transform":"bucket[4]","source-id":1,)"
      R"("field-id":1000},{"name":"date","transform":"identity","source-id":3,"field-id":1001}]})");
  EXPECT_EQ(spec->LastAssignedFieldId(), 1001);
  Schema schema(0, {NestedField::Optional(1, "id", Type::Int()),
                    NestedField::Optional(3, "date", Type::Date())});
  ASSERT_OK_AND_ASSIGN(TypePtr type, spec->PartitionType(schema));
  ASSERT_EQ(type->fields().size(), 2u);
  EXPECT_EQ(type->fields()[0].id, 1000);
  EXPECT_EQ(type->fields()[0].type->id(), TypeId::kInt);
  EXPECT_FALSE(type->fields()[0].required);
  EXPECT_EQ(type->fields()[1].type->id(), TypeId::kDate);
  EXPECT_OK(spec->Validate(schema));
  Schema missing(0, {NestedField::Optional(1, "id", Type::Int())});
  EXPECT_THAT(spec->PartitionType(missing), IsErrorWith(ErrorCode::kInvalidArgument, "source"));
}

TEST(PartitionSpecTest, UnpartitionedAndFailurePaths) {
  EXPECT_TRUE(PartitionSpec::Unpartitioned()->is_unpartitioned());
  EXPECT_EQ(PartitionSpec::Unpartitioned()->LastAssignedFieldId(), 999);
  EXPECT_EQ(PartitionSpec::Unpartitioned()->ToJson(), R"({"spec-id":0,"fields":[]})");
  EXPECT_THAT(PartitionSpec::FromJson(R"({"fields":[]})"),
              IsErrorWith(ErrorCode::kCorruptData, "'spec-id'"));
  EXPECT_THAT(PartitionSpec::FromJson(R"({"spec-id":0,"fields":[{"name":"a","source-id":1}]})"),
              IsErrorWith(ErrorCode::kCorruptData, "'transform'"));
  Schema schema(0, {NestedField::Optional(1, "g", Type::Geometry())});
  PartitionSpec on_geometry(0, {{1, {}, 1000, "g", Transform::Identity()}});
  EXPECT_THAT(on_geometry.Validate(schema), IsError(ErrorCode::kInvalidArgument));
  PartitionSpec low_id(0, {{1, {}, 5, "g", Transform::Void()}});
  EXPECT_THAT(low_id.Validate(schema), IsErrorWith(ErrorCode::kInvalidArgument, "1000"));
}

TEST(PartitionSpecTest, MultiArgumentSourceIds) {
  ASSERT_OK_AND_ASSIGN(auto spec, PartitionSpec::FromJson(R"({"spec-id":1,"fields":[
      {"name":"z","transform":"zorder","source-ids":[1,2],"field-id":1000}]})"));
  EXPECT_EQ(spec->fields()[0].source_id, 1);
  EXPECT_EQ(spec->fields()[0].source_ids, (std::vector<std::int32_t>{1, 2}));
  EXPECT_NE(spec->ToJson().find(R"("source-ids":[1,2])"), std::string::npos);
}

TEST(SortOrderTest, JsonRoundTripAndValidation) {
  const char* json = R"({"order-id":1,"fields":[{"transform":"identity","source-id":2,)"
                     R"("direction":"desc","null-order":"nulls-last"}]})";
  ASSERT_OK_AND_ASSIGN(auto order, SortOrder::FromJson(json));
  EXPECT_EQ(order->order_id(), 1);
  ASSERT_EQ(order->fields().size(), 1u);
  EXPECT_EQ(order->fields()[0].direction, SortDirection::kDescending);
  EXPECT_EQ(order->fields()[0].null_order, NullOrder::kNullsLast);
  EXPECT_EQ(order->ToJson(), json);
  Schema schema(0, {NestedField::Optional(2, "h", Type::Long())});
  EXPECT_OK(order->Validate(schema));
  EXPECT_OK(SortOrder::Unsorted()->Validate(schema));
  EXPECT_THAT(SortOrder(0, order->fields()).Validate(schema),
              IsErrorWith(ErrorCode::kInvalidArgument, "reserved"));
  EXPECT_THAT(SortOrder::FromJson(R"({"order-id":1,"fields":[{"transform":"identity",)"
                                  R"("source-id":2,"direction":"up","null-order":"nulls-last"}]})"),
              IsErrorWith(ErrorCode::kCorruptData, "up"));
}

}  // namespace
}  // namespace geolake::table
