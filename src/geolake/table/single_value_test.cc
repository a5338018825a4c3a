#include "geolake/table/single_value.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TypePtr Dec(int p, int s) { return Type::Decimal(p, s).value(); }

TEST(SingleValueTest, WorkedExamples) {
  EXPECT_EQ(SerializeValue(*Type::Long(), Value(std::int64_t{1})).value(),
            Bytes({1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(SerializeValue(*Type::Int(), Value(std::int32_t{-2})).value(),
            Bytes({0xFE, 0xFF, 0xFF, 0xFF}));
  // decimal 12.34 with scale 2: unscaled 1234 = 0x04D2.
  EXPECT_EQ(SerializeValue(*Dec(9, 2), Value(DecimalValue{1234})).value(), Bytes({0x04, 0xD2}));
  EXPECT_EQ(SerializeValue(*Dec(9, 2), Value(DecimalValue{0})).value(), Bytes({0x00}));
  EXPECT_EQ(SerializeValue(*Dec(9, 2), Value(DecimalValue{-1})).value(), Bytes({0xFF}));
  EXPECT_EQ(SerializeValue(*Dec(9, 2), Value(DecimalValue{128})).value(), Bytes({0x00, 0x80}));
  EXPECT_EQ(SerializeValue(*Dec(9, 2), Value(DecimalValue{-129})).value(), Bytes({0xFF, 0x7F}));
  EXPECT_EQ(SerializeValue(*Type::Boolean(), Value(true)).value(), Bytes({1}));
  EXPECT_EQ(SerializeValue(*Type::Double(), Value(1.0)).value(),
            Bytes({0, 0, 0, 0, 0, 0, 0xF0, 0x3F}));
  EXPECT_EQ(SerializeValue(*Type::Float(), Value(1.0f)).value(), Bytes({0, 0, 0x80, 0x3F}));
  EXPECT_EQ(SerializeValue(*Type::String(), Value(std::string("héllo"))).value(), "h\xC3\xA9llo");
  // date 2017-11-16 = day 17486 = 0x444E.
  EXPECT_EQ(SerializeValue(*Type::Date(), Value(std::int32_t{17486})).value(),
            Bytes({0x4E, 0x44, 0, 0}));
  ASSERT_OK_AND_ASSIGN(auto uuid, UuidValue::FromString("f79c3e09-677c-4bbd-a479-3f349cb785e7"));
  EXPECT_EQ(SerializeValue(*Type::Uuid(), Value(uuid)).value(),
            Bytes({0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c,
                   0xb7, 0x85, 0xe7}));
  EXPECT_EQ(uuid.ToString(), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
}

TEST(SingleValueTest, GeometryBoundPoints) {
  BoundPoint xy{1.0, 2.0};
  EXPECT_EQ(SerializeValue(*Type::Geometry(), Value(xy)).value().size(), 16u);
  BoundPoint xyz{1.0, 2.0, 3.0};
  EXPECT_EQ(SerializeValue(*Type::Geometry(), Value(xyz)).value().size(), 24u);
  BoundPoint xym{1.0, 2.0};
  xym.m = 4.0;
  // x:y:NaN:m when there is an m but no z.
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeValue(*Type::Geography(), Value(xym)));
  ASSERT_EQ(bytes.size(), 32u);
  ASSERT_OK_AND_ASSIGN(Value back, DeserializeValue(*Type::Geography(), bytes));
  const auto& p = std::get<BoundPoint>(back);
  EXPECT_EQ(p.x, 1.0);
  EXPECT_EQ(p.y, 2.0);
  EXPECT_TRUE(std::isnan(p.z));
  EXPECT_EQ(p.m, 4.0);
}

TEST(SingleValueTest, RoundTripsEveryPrimitive) {
  const std::vector<std::pair<TypePtr, Value>> cases = {
      {Type::Boolean(), Value(false)},
      {Type::Int(), Value(std::int32_t{-123456})},
      {Type::Long(), Value(std::int64_t{-9007199254740993LL})},
      {Type::Float(), Value(-0.0f)},
      {Type::Double(), Value(3.141592653589793)},
      {Type::Date(), Value(std::int32_t{-1})},
      {Type::Time(), Value(std::int64_t{81068000000})},
      {Type::Timestamp(), Value(std::int64_t{1510871468000001})},
      {Type::TimestampTzNs(), Value(std::int64_t{1510871468000001001})},
      {Type::String(), Value(std::string("iceberg"))},
      {Type::Binary(), Value(table::Bytes{0, 1, 2, 255})},
      {Type::Fixed(3).value(), Value(table::Bytes{9, 8, 7})},
      {Dec(38, 0), Value(DecimalValue{-(static_cast<Int128>(1) << 100)})},
      {Dec(10, 2), Value(DecimalValue{-1234})},
      {Type::Uuid(), Value(UuidValue{})},
  };
  for (const auto& [type, value] : cases) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeValue(*type, value));
    ASSERT_OK_AND_ASSIGN(Value back, DeserializeValue(*type, bytes));
    EXPECT_EQ(back, value) << type->ToString();
  }
}

TEST(SingleValueTest, PromotedBoundsDecodeByLength) {
  // An int bound read as long, a float bound as double, a date bound as timestamp.
  ASSERT_OK_AND_ASSIGN(Value l, DeserializeValue(*Type::Long(), Bytes({0xFF, 0xFF, 0xFF, 0xFF})));
  EXPECT_EQ(std::get<std::int64_t>(l), -1);
  ASSERT_OK_AND_ASSIGN(Value d, DeserializeValue(*Type::Double(), Bytes({0, 0, 0xC0, 0x3F})));
  EXPECT_EQ(std::get<double>(d), 1.5);
  ASSERT_OK_AND_ASSIGN(Value ts, DeserializeValue(*Type::Timestamp(), Bytes({1, 0, 0, 0})));
  EXPECT_EQ(std::get<std::int64_t>(ts), 86400000000LL);
}

TEST(SingleValueTest, FailurePaths) {
  EXPECT_THAT(DeserializeValue(*Type::Int(), Bytes({1, 2})), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(DeserializeValue(*Type::Uuid(), Bytes({1})), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(DeserializeValue(*Type::Fixed(4).value(), Bytes({1})),
              IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(SerializeValue(*Type::Long(), Value(std::int32_t{1})),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(SerializeValue(*Type::Long(), Value()), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(SerializeValue(*Type::Struct({}), Value(true)), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(UuidValue::FromString("not-a-uuid"), IsError(ErrorCode::kInvalidArgument));
}

TEST(SingleValueTest, RendersValuesForHumans) {
  EXPECT_EQ(ValueToString(*Type::Date(), Value(std::int32_t{17486})), "2017-11-16");
  EXPECT_EQ(ValueToString(*Type::Date(), Value(std::int32_t{-1})), "1969-12-31");
  EXPECT_EQ(ValueToString(*Type::Timestamp(), Value(std::int64_t{1510871468000001})),
            "2017-11-16T22:31:08.000001");
  EXPECT_EQ(ValueToString(*Dec(10, 2), Value(DecimalValue{1234})), "12.34");
  EXPECT_EQ(ValueToString(*Dec(10, 2), Value(DecimalValue{-5})), "-0.05");
  EXPECT_EQ(ValueToString(*Type::Binary(), Value(table::Bytes{0xAB, 0x01})), "ab01");
}

TEST(SingleValueTest, ComparesInIcebergOrder) {
  EXPECT_EQ(CompareValues(*Type::Double(), Value(-0.0), Value(0.0)).value(), -1);
  EXPECT_EQ(CompareValues(*Type::Double(), Value(std::nan("")), Value(1e300)).value(), 1);
  EXPECT_EQ(CompareValues(*Type::String(), Value(std::string("a")), Value(std::string("\xC3\xA9")))
                .value(),
            -1);
  EXPECT_EQ(CompareValues(*Dec(9, 2), Value(DecimalValue{-3}), Value(DecimalValue{2})).value(), -1);
  EXPECT_THAT(CompareValues(*Type::Long(), Value(std::int64_t{1}), Value(1.0)),
              IsError(ErrorCode::kInvalidArgument));
}

// The one TypeId -> Value alternative mapping (single_value.h) that CheckValueType and
// CompareValues visit instead of each switching over every id.
TEST(SingleValueTest, VisitValueAlternativeMapsEachTypeToItsStorage) {
  const auto alternative_of = [](TypeId id) {
    return VisitValueAlternative(id, [](auto alternative) -> std::string {
      using T = typename decltype(alternative)::type;
      if constexpr (std::is_void_v<T>) {
        return "none";
      } else {
        return std::to_string(Value(T{}).index());
      }
    });
  };
  // Value's alternatives: 1 bool, 2 int32, 3 int64, 4 float, 5 double, 6 string, 7 Bytes,
  // 8 DecimalValue, 9 UuidValue, 10 BoundPoint.
  EXPECT_EQ(alternative_of(TypeId::kBoolean), "1");
  EXPECT_EQ(alternative_of(TypeId::kInt), "2");
  EXPECT_EQ(alternative_of(TypeId::kDate), "2");
  for (TypeId id : {TypeId::kLong, TypeId::kTime, TypeId::kTimestamp, TypeId::kTimestampTz,
                    TypeId::kTimestampNs, TypeId::kTimestampTzNs}) {
    EXPECT_EQ(alternative_of(id), "3");
  }
  EXPECT_EQ(alternative_of(TypeId::kFloat), "4");
  EXPECT_EQ(alternative_of(TypeId::kDouble), "5");
  EXPECT_EQ(alternative_of(TypeId::kString), "6");
  EXPECT_EQ(alternative_of(TypeId::kBinary), "7");
  EXPECT_EQ(alternative_of(TypeId::kFixed), "7");
  EXPECT_EQ(alternative_of(TypeId::kDecimal), "8");
  EXPECT_EQ(alternative_of(TypeId::kUuid), "9");
  EXPECT_EQ(alternative_of(TypeId::kGeometry), "10");
  EXPECT_EQ(alternative_of(TypeId::kGeography), "10");
  for (TypeId id :
       {TypeId::kUnknown, TypeId::kVariant, TypeId::kStruct, TypeId::kList, TypeId::kMap}) {
    EXPECT_EQ(alternative_of(id), "none");
  }
}

}  // namespace
}  // namespace geolake::table
