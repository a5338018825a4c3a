#include "geolake/formats/avro/binary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "geolake/core/hex.h"
#include "geolake/testing/testing.h"

namespace geolake::avro {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

std::string Hex(std::string_view bytes) { return HexEncode(bytes, HexCase::kLower, " "); }

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

Schema MustParse(std::string_view json) {
  auto schema = Schema::Parse(json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return std::move(schema).value();
}

std::string EncodeOrDie(const Datum& datum, const Node& node) {
  std::string out;
  Status st = Encode(datum, node, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// The zigzag table from the Avro specification ("Primitive Types" / "Binary Encoding").
TEST(BinaryTest, ZigZagVarintsMatchTheSpecTable) {
  const std::vector<std::pair<std::int64_t, std::string>> cases = {
      {0, "00"},
      {-1, "01"},
      {1, "02"},
      {-2, "03"},
      {2, "04"},
      {-64, "7f"},
      {64, "80 01"},
      {8192, "80 80 01"},
      {-8193, "81 80 01"},
      {std::numeric_limits<std::int64_t>::max(), "fe ff ff ff ff ff ff ff ff 01"},
      {std::numeric_limits<std::int64_t>::min(), "ff ff ff ff ff ff ff ff ff 01"},
  };
  Schema schema = MustParse("\"long\"");
  for (const auto& [value, hex] : cases) {
    std::string out;
    AppendLong(value, &out);
    EXPECT_EQ(Hex(out), hex) << value;
    ASSERT_OK_AND_ASSIGN(Datum back, Decode(out, schema.root()));
    EXPECT_EQ(back.int64(), value);
  }
}

TEST(BinaryTest, StringFooIsLengthPrefixed) {
  Schema schema = MustParse("\"string\"");
  EXPECT_EQ(Hex(EncodeOrDie(Datum::String("foo"), schema.root())), "06 66 6f 6f");
  ASSERT_OK_AND_ASSIGN(Datum back, Decode(Bytes({0x06, 'f', 'o', 'o'}), schema.root()));
  EXPECT_EQ(back.string(), "foo");
  EXPECT_EQ(back.type(), Type::kString);
}

// The spec's record example: {"a": 27, "b": "foo"} -> 36 06 66 6f 6f.
TEST(BinaryTest, SpecRecordExample) {
  Schema schema = MustParse(
      R"({"type":"record","name":"test","fields":[{"name":"a","type":"long"},{"name":"b","type":"string"}]})");
  Datum record = Datum::Record({Datum::Long(27), Datum::String("foo")});
  EXPECT_EQ(Hex(EncodeOrDie(record, schema.root())), "36 06 66 6f 6f");
  ASSERT_OK_AND_ASSIGN(Datum back, Decode(Bytes({0x36, 0x06, 'f', 'o', 'o'}), schema.root()));
  EXPECT_EQ(back, record);
  ASSERT_NE(back.FieldByName(schema.root(), "b"), nullptr);
  EXPECT_EQ(back.FieldByName(schema.root(), "b")->string(), "foo");
  EXPECT_EQ(back.FieldByName(schema.root(), "zzz"), nullptr);
}

// The spec's array example: [3, 27] -> 04 06 36 00, and the same items in a block with a
// negative count followed by the block's byte size.
TEST(BinaryTest, SpecArrayExampleAndNegativeBlockCount) {
  Schema schema = MustParse(R"({"type":"array","items":"long"})");
  Datum array = Datum::Array({Datum::Long(3), Datum::Long(27)});
  EXPECT_EQ(Hex(EncodeOrDie(array, schema.root())), "04 06 36 00");
  ASSERT_OK_AND_ASSIGN(Datum back, Decode(Bytes({0x04, 0x06, 0x36, 0x00}), schema.root()));
  EXPECT_EQ(back, array);
  // count -2 (zigzag 03), byte size 2 (04), items, end.
  ASSERT_OK_AND_ASSIGN(Datum blocked, Decode(Bytes({0x03, 0x04, 0x06, 0x36, 0x00}), schema.root()));
  EXPECT_EQ(blocked, array);
  // Two blocks of one item each.
  ASSERT_OK_AND_ASSIGN(Datum two, Decode(Bytes({0x02, 0x06, 0x02, 0x36, 0x00}), schema.root()));
  EXPECT_EQ(two, array);
}

// The spec's union example: ["null","string"] with "a" -> 02 02 61, null -> 00.
TEST(BinaryTest, SpecUnionExample) {
  Schema schema = MustParse(R"(["null","string"])");
  EXPECT_EQ(Hex(EncodeOrDie(Datum::String("a"), schema.root())), "02 02 61");
  EXPECT_EQ(Hex(EncodeOrDie(Datum::Null(), schema.root())), "00");
  ASSERT_OK_AND_ASSIGN(Datum back, Decode(Bytes({0x02, 0x02, 'a'}), schema.root()));
  EXPECT_EQ(back.branch(), 1);
  EXPECT_EQ(back.string(), "a");
  ASSERT_OK_AND_ASSIGN(Datum null, Decode(Bytes({0x00}), schema.root()));
  EXPECT_TRUE(null.is_null());
  EXPECT_EQ(null.branch(), 0);
}

TEST(BinaryTest, FloatsAreLittleEndianIeee) {
  Schema f = MustParse("\"float\"");
  Schema d = MustParse("\"double\"");
  EXPECT_EQ(Hex(EncodeOrDie(Datum::Float(1.0f), f.root())), "00 00 80 3f");
  EXPECT_EQ(Hex(EncodeOrDie(Datum::Double(-2.5), d.root())), "00 00 00 00 00 00 04 c0");
  // An int datum is promoted for a long schema, a float for a double schema.
  EXPECT_EQ(Hex(EncodeOrDie(Datum::Float(1.0f), d.root())), "00 00 00 00 00 00 f0 3f");
  ASSERT_OK_AND_ASSIGN(Datum nan, Decode(Bytes({0, 0, 0xc0, 0x7f}), f.root()));
  EXPECT_TRUE(std::isnan(nan.float32()));
}

TEST(BinaryTest, EveryTypeRoundTrips) {
  Schema schema = MustParse(R"({"type":"record","name":"all","fields":[
    {"name":"n","type":"null"},{"name":"b","type":"boolean"},{"name":"i","type":"int"},
    {"name":"l","type":"long"},{"name":"f","type":"float"},{"name":"d","type":"double"},
    {"name":"by","type":"bytes"},{"name":"s","type":"string"},
    {"name":"fx","type":{"type":"fixed","name":"f4","size":4}},
    {"name":"e","type":{"type":"enum","name":"color","symbols":["RED","GREEN"]}},
    {"name":"a","type":{"type":"array","items":["null","int"]}},
    {"name":"m","type":{"type":"map","values":"f4"}},
    {"name":"u","type":["null","long","string"]}]})");
  Datum value = Datum::Record({
      Datum::Null(),
      Datum::Boolean(true),
      Datum::Int(-123456),
      Datum::Long(1LL << 40),
      Datum::Float(0.25f),
      Datum::Double(1e300),
      Datum::Bytes(std::string("\x00\xff", 2)),
      Datum::String("h\xc3\xa9llo"),
      Datum::Fixed("abcd"),
      Datum::Enum(1),
      Datum::Array({Datum::Union(1, Datum::Int(7)), Datum::Union(0, Datum::Null())}),
      Datum::Map({{"x", Datum::Fixed("1234")}, {"y", Datum::Fixed("5678")}}),
      Datum::Union(2, Datum::String("z")),
  });
  std::string bytes = EncodeOrDie(value, schema.root());
  ASSERT_OK_AND_ASSIGN(Datum back, Decode(bytes, schema.root()));
  EXPECT_EQ(back, value);
}

TEST(BinaryTest, EncodeRejectsValuesThatDoNotFitAndNamesTheField) {
  Schema schema = MustParse(
      R"({"type":"record","name":"r","fields":[{"name":"x","type":{"type":"array","items":"int"}},{"name":"fx","type":{"type":"fixed","name":"f2","size":2}}]})");
  std::string out;
  EXPECT_THAT(Encode(Datum::Record({Datum::Array({Datum::String("no")}), Datum::Fixed("ab")}),
                     schema.root(), &out),
              IsErrorWith(ErrorCode::kInvalidArgument, "field 'x': item 0: expected int"));
  EXPECT_THAT(Encode(Datum::Record({Datum::Array({}), Datum::Fixed("abc")}), schema.root(), &out),
              IsErrorWith(ErrorCode::kInvalidArgument, "needs 2 bytes"));
  EXPECT_THAT(Encode(Datum::Record({Datum::Array({})}), schema.root(), &out),
              IsErrorWith(ErrorCode::kInvalidArgument, "has 2 fields, got 1"));
  Schema optional = MustParse(R"(["null","long"])");
  EXPECT_THAT(Encode(Datum::String("x"), optional.root(), &out),
              IsErrorWith(ErrorCode::kInvalidArgument, "no union branch"));
  EXPECT_THAT(Encode(Datum::Union(5, Datum::Null()), optional.root(), &out),
              IsErrorWith(ErrorCode::kInvalidArgument, "no branch 5"));
  Schema enum_schema = MustParse(R"({"type":"enum","name":"e","symbols":["A"]})");
  EXPECT_THAT(Encode(Datum::Enum(1), enum_schema.root(), &out),
              IsErrorWith(ErrorCode::kInvalidArgument, "no symbol 1"));
}

TEST(BinaryTest, MalformedInputIsCorruptDataWithOffset) {
  Schema lng = MustParse("\"long\"");
  Schema str = MustParse("\"string\"");
  Schema integer = MustParse("\"int\"");
  EXPECT_THAT(Decode(Bytes({0x80, 0x80}), lng.root()),
              IsErrorWith(ErrorCode::kCorruptData, "truncated varint at byte offset 2"));
  EXPECT_THAT(
      Decode(Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}), lng.root()),
      IsErrorWith(ErrorCode::kCorruptData, "overflows 64 bits"));
  EXPECT_THAT(Decode(Bytes({0x80, 0x80, 0x80, 0x80, 0x10}), integer.root()),
              IsErrorWith(ErrorCode::kCorruptData, "int out of 32-bit range at byte offset 0"));
  EXPECT_THAT(Decode(Bytes({0x08, 'a'}), str.root()),
              IsErrorWith(ErrorCode::kCorruptData, "length 4 exceeds"));
  EXPECT_THAT(Decode(Bytes({0x01}), str.root()),
              IsErrorWith(ErrorCode::kCorruptData, "length -1 exceeds"));
  EXPECT_THAT(
      Decode(Bytes({0x02, 0x00}), lng.root()),
      IsErrorWith(ErrorCode::kCorruptData, "trailing bytes after the value at byte offset 1"));
  Schema boolean = MustParse("\"boolean\"");
  EXPECT_THAT(Decode(Bytes({0x02}), boolean.root()), IsError(ErrorCode::kCorruptData));
  Schema u = MustParse(R"(["null","int"])");
  EXPECT_THAT(Decode(Bytes({0x04}), u.root()),
              IsErrorWith(ErrorCode::kCorruptData, "union branch 2 out of range"));
  Schema e = MustParse(R"({"type":"enum","name":"e","symbols":["A"]})");
  EXPECT_THAT(Decode(Bytes({0x02}), e.root()), IsErrorWith(ErrorCode::kCorruptData, "enum index"));
  Schema fx = MustParse(R"({"type":"fixed","name":"f","size":16})");
  EXPECT_THAT(Decode(Bytes({1, 2, 3}), fx.root()), IsError(ErrorCode::kCorruptData));
}

TEST(BinaryTest, HugeCountsAreRejectedBeforeAllocating) {
  Schema longs = MustParse(R"({"type":"array","items":"long"})");
  std::string huge;
  AppendLong(std::int64_t{1} << 60, &huge);
  huge += Bytes({0x02, 0x02});
  EXPECT_THAT(Decode(huge, longs.root()), IsErrorWith(ErrorCode::kCorruptData, "block count"));
  // Items that encode to zero bytes: the count cannot be bounded by the input, so it is capped.
  Schema nulls = MustParse(R"({"type":"array","items":"null"})");
  std::string zero_size;
  AppendLong(std::int64_t{1} << 40, &zero_size);
  zero_size.push_back('\0');
  EXPECT_THAT(Decode(zero_size, nulls.root()), IsErrorWith(ErrorCode::kCorruptData, "block count"));
  std::string few;
  AppendLong(1000, &few);
  few.push_back('\0');
  ASSERT_OK_AND_ASSIGN(Datum thousand, Decode(few, nulls.root()));
  EXPECT_EQ(thousand.items().size(), 1000u);
  // A negative block count whose byte size runs past the end.
  EXPECT_THAT(Decode(Bytes({0x03, 0x7e, 0x06, 0x36, 0x00}), longs.root()),
              IsErrorWith(ErrorCode::kCorruptData, "block byte size"));
  Schema map = MustParse(R"({"type":"map","values":"null"})");
  std::string map_bytes;
  AppendLong(1000, &map_bytes);
  map_bytes.push_back('\0');
  EXPECT_THAT(Decode(map_bytes, map.root()), IsError(ErrorCode::kCorruptData));
}

TEST(BinaryTest, RecursiveSchemaDepthIsBounded) {
  Schema list = MustParse(
      R"({"type":"record","name":"node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","node"]}]})");
  // A list of three: 1 -> 2 -> 3.
  ASSERT_OK_AND_ASSIGN(Datum three,
                       Decode(Bytes({0x02, 0x02, 0x04, 0x02, 0x06, 0x00}), list.root()));
  EXPECT_EQ(three.fields()[1].fields()[1].fields()[0].int32(), 3);
  // Ten thousand levels are rejected, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += Bytes({0x02, 0x02});
  deep += Bytes({0x02, 0x00});
  EXPECT_THAT(Decode(deep, list.root()), IsErrorWith(ErrorCode::kCorruptData, "nested too deeply"));
}

TEST(BinaryTest, MapsUseBlocksToo) {
  Schema schema = MustParse(R"({"type":"map","values":"int"})");
  Datum map = Datum::Map({{"a", Datum::Int(1)}, {"b", Datum::Int(-1)}});
  // count 2, "a" 1, "b" -1, end.
  EXPECT_EQ(Hex(EncodeOrDie(map, schema.root())), "04 02 61 02 02 62 01 00");
  // The same entries in one block with a negative count (-2 -> 03) and its byte size 6.
  ASSERT_OK_AND_ASSIGN(
      Datum back,
      Decode(Bytes({0x03, 0x0c, 0x02, 'a', 0x02, 0x02, 'b', 0x01, 0x00}), schema.root()));
  EXPECT_EQ(back, map);
  EXPECT_EQ(Hex(EncodeOrDie(Datum::Map({}), schema.root())), "00");
}

TEST(BinaryTest, TaggedUnionBranchMustFitTheValue) {
  Schema schema = MustParse(R"(["null","long"])");
  std::string out;
  EXPECT_THAT(Encode(Datum::Union(0, Datum::Long(3)), schema.root(), &out),
              IsErrorWith(ErrorCode::kInvalidArgument, "expected null, got long"));
  // An int value is promoted into the long branch.
  EXPECT_EQ(Hex(EncodeOrDie(Datum::Int(3), schema.root())), "02 06");
}

}  // namespace
}  // namespace geolake::avro
