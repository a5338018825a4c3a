#include "geolake/formats/parquet/thrift_compact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "geolake/core/hex.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using thrift::CompactDecoder;
using thrift::CompactEncoder;
using thrift::CType;

std::string Hex(const std::string& bytes) { return HexEncode(bytes, HexCase::kUpper, " "); }

TEST(ThriftCompactTest, EncodesVarintsAndZigZag) {
  CompactEncoder enc;
  enc.WriteI32(0);
  enc.WriteI32(-1);
  enc.WriteI32(1);
  enc.WriteI32(-64);
  enc.WriteI32(64);
  enc.WriteI64(std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Hex(enc.buffer()), "00 01 02 7F 80 01 FF FF FF FF FF FF FF FF FF 01");

  CompactDecoder dec(enc.buffer());
  EXPECT_EQ(*dec.ReadI32(), 0);
  EXPECT_EQ(*dec.ReadI32(), -1);
  EXPECT_EQ(*dec.ReadI32(), 1);
  EXPECT_EQ(*dec.ReadI32(), -64);
  EXPECT_EQ(*dec.ReadI32(), 64);
  EXPECT_EQ(*dec.ReadI64(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(dec.remaining(), 0u);
}

TEST(ThriftCompactTest, DoubleIsLittleEndianAndI8IsRaw) {
  CompactEncoder enc;
  enc.WriteDouble(1.0);
  enc.WriteI8(-2);
  EXPECT_EQ(Hex(enc.buffer()), "00 00 00 00 00 00 F0 3F FE");
  CompactDecoder dec(enc.buffer());
  EXPECT_EQ(*dec.ReadDouble(), 1.0);
  EXPECT_EQ(*dec.ReadI8(), -2);
}

TEST(ThriftCompactTest, FieldHeadersUseShortAndLongForm) {
  CompactEncoder enc;
  enc.BeginStruct();
  enc.WriteI32Field(1, 3);   // delta 1: short
  enc.WriteI32Field(17, 4);  // delta 16: long
  enc.WriteBoolField(18, true);
  enc.WriteBoolField(5, false);  // negative delta: long
  enc.BeginStructField(6);
  enc.WriteI32Field(2, 1);  // nested struct restarts at id 0
  enc.EndStruct();
  enc.WriteI32Field(7, 9);  // back in the outer struct: delta from 6
  enc.EndStruct();
  EXPECT_EQ(Hex(enc.buffer()), "15 06 05 22 08 11 02 0A 1C 25 02 00 15 12 00");

  CompactDecoder dec(enc.buffer());
  ASSERT_OK(dec.BeginStruct());
  auto h = *dec.ReadFieldHeader();
  EXPECT_EQ(h.id, 1);
  EXPECT_EQ(*dec.ReadI32(), 3);
  h = *dec.ReadFieldHeader();
  EXPECT_EQ(h.id, 17);
  EXPECT_EQ(*dec.ReadI32(), 4);
  h = *dec.ReadFieldHeader();
  EXPECT_EQ(h.id, 18);
  EXPECT_TRUE(CompactDecoder::BoolFieldValue(h));
  h = *dec.ReadFieldHeader();
  EXPECT_EQ(h.id, 5);
  EXPECT_FALSE(CompactDecoder::BoolFieldValue(h));
  h = *dec.ReadFieldHeader();
  EXPECT_EQ(h.id, 6);
  EXPECT_EQ(h.type, CType::kStruct);
  ASSERT_OK(dec.Skip(h.type));
  h = *dec.ReadFieldHeader();
  EXPECT_EQ(h.id, 7);
  EXPECT_EQ(*dec.ReadI32(), 9);
  h = *dec.ReadFieldHeader();
  EXPECT_EQ(h.type, CType::kStop);
  dec.EndStruct();
  EXPECT_EQ(dec.remaining(), 0u);
}

TEST(ThriftCompactTest, ListHeadersShortLongAndBoolElements) {
  CompactEncoder enc;
  enc.WriteListHeader(CType::kI32, 3);
  enc.WriteListHeader(CType::kBinary, 15);
  enc.WriteListHeader(CType::kBoolTrue, 2);
  enc.WriteBool(true);
  enc.WriteBool(false);
  EXPECT_EQ(Hex(enc.buffer()), "35 F8 0F 21 01 02");

  // Readers accept element type 2 and value 0 as false too.
  std::string other("\x22\x01\x00", 3);
  CompactDecoder dec(other);
  auto lh = *dec.ReadListHeader();
  EXPECT_EQ(lh.size, 2u);
  EXPECT_TRUE(*dec.ReadBool());
  EXPECT_FALSE(*dec.ReadBool());
}

TEST(ThriftCompactTest, WorkedSchemaElementExampleBytes) {
  // parquet.thrift SchemaElement, compact protocol: optional BYTE_ARRAY `geom`, field_id 5,
  // GEOMETRY without crs.
  SchemaElement e;
  e.type = PhysicalType::kByteArray;
  e.repetition_type = Repetition::kOptional;
  e.name = "geom";
  e.field_id = 5;
  e.logical_type = LogicalType::Geometry();
  const std::string bytes = SerializeThrift(e);
  EXPECT_EQ(Hex(bytes), "15 0C 25 02 18 04 67 65 6F 6D 55 0A 1C 0C 22 00 00 00");

  SchemaElement back;
  ASSERT_OK(DeserializeThrift(bytes, &back));
  EXPECT_EQ(back, e);
}

TEST(ThriftCompactTest, SkipsEveryTypeIncludingMapsAndNestedLists) {
  CompactEncoder enc;
  enc.BeginStruct();
  enc.WriteI8Field(1, 7);
  enc.WriteI16Field(2, -300);
  enc.WriteI64Field(3, 1LL << 40);
  enc.WriteDoubleField(4, 2.5);
  enc.WriteBinaryField(5, "hello");
  enc.BeginListField(6, CType::kList, 2);
  enc.WriteListHeader(CType::kI32, 1);
  enc.WriteI32(1);
  enc.WriteListHeader(CType::kBoolTrue, 1);
  enc.WriteBool(true);
  enc.WriteFieldHeader(7, CType::kMap);
  enc.WriteVarint(2);
  enc.WriteI8(static_cast<std::int8_t>((8 << 4) | 5));  // binary -> i32
  enc.WriteBinary("a");
  enc.WriteI32(1);
  enc.WriteBinary("b");
  enc.WriteI32(2);
  enc.WriteFieldHeader(8, CType::kMap);
  enc.WriteVarint(0);  // empty map: one byte
  enc.WriteFieldHeader(9, CType::kUuid);
  for (int i = 0; i < 16; ++i) enc.WriteI8(static_cast<std::int8_t>(i));
  enc.WriteBoolField(10, true);
  enc.WriteI32Field(11, 42);
  enc.EndStruct();

  CompactDecoder dec(enc.buffer());
  ASSERT_OK(dec.BeginStruct());
  while (true) {
    auto h = dec.ReadFieldHeader();
    ASSERT_OK(h);
    if (h->type == CType::kStop) break;
    if (h->id == 11) {
      EXPECT_EQ(*dec.ReadI32(), 42);
    } else {
      ASSERT_OK(dec.Skip(h->type)) << "field " << h->id;
    }
  }
  dec.EndStruct();
  EXPECT_EQ(dec.remaining(), 0u);
}

TEST(ThriftCompactTest, HugeCountsAndLengthsAreCorrupt) {
  // list<i32> claiming 2^31 elements in 6 bytes.
  std::string list("\xF5\x80\x80\x80\x80\x08", 6);
  CompactDecoder d1(list);
  EXPECT_THAT(d1.ReadListHeader(), IsErrorWith(ErrorCode::kCorruptData, "byte offset 0"));
  // binary of length 1000 with 2 bytes behind it.
  std::string bin("\xE8\x07xy", 4);
  CompactDecoder d2(bin);
  EXPECT_THAT(d2.ReadBinary(), IsError(ErrorCode::kCorruptData));
  // varint that never ends.
  std::string varint(12, '\xFF');
  CompactDecoder d3(varint);
  EXPECT_THAT(d3.ReadI64(), IsError(ErrorCode::kCorruptData));
  // i32 field holding a value past 32 bits.
  std::string wide("\xFF\xFF\xFF\xFF\x7F", 5);
  CompactDecoder d4(wide);
  EXPECT_THAT(d4.ReadI32(), IsError(ErrorCode::kCorruptData));
}

TEST(ThriftCompactTest, DeepNestingIsCorrupt) {
  // 100 nested structs: field 1 of type struct, repeated.
  std::string deep(100, '\x1C');
  deep.append(101, '\0');
  CompactDecoder dec(deep);
  FileMetaData md;
  EXPECT_THAT(md.Read(dec), IsErrorWith(ErrorCode::kCorruptData, "nesting"));

  // Lists of lists: F9 = long-form list of lists... use short form 1 element each.
  std::string lists = "\x19";                             // field 1, list
  for (int i = 0; i < 100; ++i) lists.push_back('\x19');  // list of 1 list
  CompactDecoder dec2(lists);
  ASSERT_OK(dec2.BeginStruct());
  auto h = dec2.ReadFieldHeader();
  ASSERT_OK(h);
  EXPECT_THAT(dec2.Skip(h->type), IsError(ErrorCode::kCorruptData));
}

TEST(ThriftCompactTest, UnknownFieldTypeNibbleIsCorrupt) {
  std::string bad("\x1E", 1);  // type 14 does not exist
  CompactDecoder dec(bad);
  ASSERT_OK(dec.BeginStruct());
  EXPECT_THAT(dec.ReadFieldHeader(), IsError(ErrorCode::kCorruptData));
}

}  // namespace
}  // namespace geolake::parquet
