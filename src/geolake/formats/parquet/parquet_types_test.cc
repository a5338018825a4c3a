#include "geolake/formats/parquet/parquet_types.h"

#include <gtest/gtest.h>

#include <string>

#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/schema.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

Schema TestSchema() {
  auto bbox = Field::Group("bbox", Repetition::kOptional, 10,
                           {Field::Leaf("xmin", PhysicalType::kDouble, Repetition::kRequired, 11),
                            Field::Leaf("ymin", PhysicalType::kDouble, Repetition::kRequired, 12),
                            Field::Leaf("xmax", PhysicalType::kDouble, Repetition::kRequired, 13),
                            Field::Leaf("ymax", PhysicalType::kDouble, Repetition::kRequired, 14)});
  auto schema = Schema::Make({
      Field::Leaf("id", PhysicalType::kInt64, Repetition::kRequired, 1),
      Field::Leaf("name", PhysicalType::kByteArray, Repetition::kOptional, 2,
                  LogicalType::String()),
      Field::Leaf("day", PhysicalType::kInt32, Repetition::kOptional, 3, LogicalType::Date()),
      Field::Leaf("ts", PhysicalType::kInt64, Repetition::kOptional, 4,
                  LogicalType::Timestamp(true, TimeUnit::kMicros)),
      Field::Leaf("price", PhysicalType::kInt64, Repetition::kOptional, 5,
                  LogicalType::Decimal(18, 2)),
      Field::Leaf("small", PhysicalType::kInt32, Repetition::kOptional, 6,
                  LogicalType::Integer(16, false)),
      Field::Leaf("geometry", PhysicalType::kByteArray, Repetition::kOptional, 7,
                  LogicalType::Geography("OGC:CRS84", EdgeInterpolationAlgorithm::kKarney)),
      bbox,
  });
  EXPECT_OK(schema);
  return *schema;
}

FileMetaData TestFileMetaData() {
  FileMetaData md;
  md.schema = TestSchema().ToElements();
  md.num_rows = 1234567890123LL;
  RowGroup rg;
  rg.num_rows = 100;
  rg.total_byte_size = 4096;
  rg.file_offset = 4;
  rg.total_compressed_size = 2000;
  rg.ordinal = 0;
  rg.sorting_columns.push_back({1, true, false});
  ColumnChunk cc;
  cc.file_offset = 0;
  ColumnMetaData cmd;
  cmd.type = PhysicalType::kByteArray;
  cmd.encodings = {Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary};
  cmd.path_in_schema = {"name"};
  cmd.codec = CompressionCodec::kZstd;
  cmd.num_values = 100;
  cmd.total_uncompressed_size = 3000;
  cmd.total_compressed_size = 1500;
  cmd.data_page_offset = 40;
  cmd.dictionary_page_offset = 4;
  Statistics st;
  st.null_count = 3;
  st.min_value = "aa";
  st.max_value = std::string("z\0z", 3);
  st.is_max_value_exact = false;
  st.is_min_value_exact = true;
  cmd.statistics = st;
  cmd.encoding_stats.push_back({PageType::kDataPage, Encoding::kRleDictionary, 2});
  SizeStatistics ss;
  ss.unencoded_byte_array_data_bytes = 777;
  ss.definition_level_histogram = {3, 97};
  cmd.size_statistics = ss;
  GeospatialStatistics gs;
  gs.bbox =
      BoundingBox{-10.5, 30.25, 35.0, 60.0, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  gs.geospatial_types = std::vector<std::int32_t>{3, 6, 1003};
  cmd.geospatial_statistics = gs;
  cc.meta_data = cmd;
  cc.offset_index_offset = 9000;
  cc.offset_index_length = 25;
  cc.column_index_offset = 8000;
  cc.column_index_length = 40;
  rg.columns.push_back(cc);
  md.row_groups.push_back(rg);
  md.row_groups.push_back(rg);
  md.key_value_metadata.push_back({"geo", std::string("{\"version\":\"1.1.0\"}")});
  md.key_value_metadata.push_back({"novalue", std::nullopt});
  md.created_by = "geolake version 0.1.0 (build test)";
  md.column_orders.assign(TestSchema().leaves().size(), ColumnOrder{});
  return md;
}

TEST(ParquetTypesTest, FileMetaDataRoundTrips) {
  const FileMetaData md = TestFileMetaData();
  const std::string bytes = SerializeThrift(md);
  FileMetaData back;
  std::size_t used = 0;
  ASSERT_OK(DeserializeThrift(bytes, &back, &used));
  EXPECT_EQ(used, bytes.size());
  EXPECT_EQ(back, md);
}

TEST(ParquetTypesTest, TruncationAtEveryOffsetIsCorruptData) {
  const std::string bytes = SerializeThrift(TestFileMetaData());
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    FileMetaData back;
    EXPECT_THAT(DeserializeThrift(std::string_view(bytes).substr(0, len), &back),
                IsError(ErrorCode::kCorruptData))
        << "prefix of " << len << " bytes";
  }
}

TEST(ParquetTypesTest, RandomByteFlipsNeverCrash) {
  const std::string bytes = SerializeThrift(TestFileMetaData());
  std::uint32_t seed = 12345;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string mutated = bytes;
    for (int k = 0; k < 3; ++k) {
      seed = seed * 1664525u + 1013904223u;
      mutated[(seed >> 8) % mutated.size()] = static_cast<char>(seed >> 24);
    }
    FileMetaData back;
    (void)DeserializeThrift(mutated, &back);  // any Status is fine; no crash, no huge alloc
  }
}

TEST(ParquetTypesTest, PageHeadersRoundTrip) {
  PageHeader ph;
  ph.type = PageType::kDataPage;
  ph.uncompressed_page_size = 100;
  ph.compressed_page_size = 60;
  ph.crc = -12345;
  DataPageHeader dph;
  dph.num_values = 10;
  dph.encoding = Encoding::kRleDictionary;
  Statistics st;
  st.null_count = 0;
  dph.statistics = st;
  ph.data_page_header = dph;
  std::string bytes = SerializeThrift(ph);
  const std::size_t header_size = bytes.size();
  bytes += "BODY";
  PageHeader back;
  std::size_t used = 0;
  ASSERT_OK(DeserializeThrift(bytes, &back, &used));
  EXPECT_EQ(used, header_size);
  EXPECT_EQ(back, ph);

  PageHeader v2;
  v2.type = PageType::kDataPageV2;
  DataPageHeaderV2 h2;
  h2.num_values = 5;
  h2.num_nulls = 1;
  h2.num_rows = 5;
  h2.encoding = Encoding::kDeltaBinaryPacked;
  h2.definition_levels_byte_length = 2;
  h2.is_compressed = false;
  v2.data_page_header_v2 = h2;
  ASSERT_OK(DeserializeThrift(SerializeThrift(v2), &back));
  EXPECT_EQ(back, v2);

  PageHeader dict;
  dict.type = PageType::kDictionaryPage;
  dict.dictionary_page_header = DictionaryPageHeader{7, Encoding::kPlain, true};
  ASSERT_OK(DeserializeThrift(SerializeThrift(dict), &back));
  EXPECT_EQ(back, dict);
}

TEST(ParquetTypesTest, PageIndexRoundTrips) {
  ColumnIndex ci;
  ci.null_pages = {false, true, false};
  ci.min_values = {"a", "", "c"};
  ci.max_values = {"b", "", "d"};
  ci.boundary_order = BoundaryOrder::kAscending;
  ci.null_counts = {0, 10, 2};
  const std::string bytes = SerializeThrift(ci);
  // null_pages list header: 3 elements of type 1, then 2 1 2 (false true false).
  EXPECT_EQ(bytes.substr(0, 5), std::string("\x19\x31\x02\x01\x02", 5));
  ColumnIndex back;
  ASSERT_OK(DeserializeThrift(bytes, &back));
  EXPECT_EQ(back, ci);

  OffsetIndex oi;
  oi.page_locations = {{4, 100, 0}, {104, 90, 1000}};
  OffsetIndex oback;
  ASSERT_OK(DeserializeThrift(SerializeThrift(oi), &oback));
  EXPECT_EQ(oback, oi);
}

TEST(ParquetTypesTest, MissingRequiredFieldIsCorrupt) {
  // A KeyValue with only field 2 (value).
  thrift::CompactEncoder enc;
  enc.BeginStruct();
  enc.WriteBinaryField(2, "v");
  enc.EndStruct();
  KeyValue kv;
  EXPECT_THAT(DeserializeThrift(enc.buffer(), &kv),
              IsErrorWith(ErrorCode::kCorruptData, "KeyValue lacks required field 1"));
}

TEST(ParquetTypesTest, UnknownFieldsAndUnionMembersAreSkipped) {
  thrift::CompactEncoder enc;
  enc.BeginStruct();
  enc.WriteI32Field(1, 6);  // type BYTE_ARRAY
  enc.WriteBinaryField(4, "f");
  enc.BeginStructField(10);  // logicalType
  enc.BeginStructField(19);  // FILE (unreleased, unknown here)
  enc.WriteI64Field(3, 99);
  enc.EndStruct();
  enc.EndStruct();
  enc.WriteDoubleField(200, 1.5);    // unknown field
  enc.WriteBinaryField(32767, "x");  // extension point
  enc.EndStruct();
  SchemaElement e;
  ASSERT_OK(DeserializeThrift(enc.buffer(), &e));
  EXPECT_EQ(e.name, "f");
  ASSERT_TRUE(e.logical_type.has_value());
  EXPECT_EQ(e.logical_type->kind, LogicalType::Kind::kUnrecognized);

  // A field with the wrong wire type is skipped, not misread.
  thrift::CompactEncoder enc2;
  enc2.BeginStruct();
  enc2.WriteBinaryField(1, "not an int");
  enc2.WriteBinaryField(4, "g");
  enc2.EndStruct();
  ASSERT_OK(DeserializeThrift(enc2.buffer(), &e));
  EXPECT_FALSE(e.type.has_value());
  EXPECT_EQ(e.name, "g");
}

TEST(ParquetTypesTest, LogicalTypesRoundTrip) {
  for (const LogicalType& t :
       {LogicalType::String(), LogicalType::Date(), LogicalType::Json(),
        LogicalType::Decimal(38, 9), LogicalType::Timestamp(false, TimeUnit::kMicros),
        LogicalType::Timestamp(true, TimeUnit::kNanos), LogicalType::Time(true, TimeUnit::kMillis),
        LogicalType::Integer(8, true), LogicalType::Integer(64, false), LogicalType::Geometry(),
        LogicalType::Geometry("EPSG:3857"), LogicalType::Geography(),
        LogicalType::Geography("OGC:CRS84", EdgeInterpolationAlgorithm::kVincenty)}) {
    LogicalType back;
    ASSERT_OK(DeserializeThrift(SerializeThrift(t), &back));
    EXPECT_EQ(back, t) << static_cast<int>(t.kind);
  }
}

TEST(SchemaTest, FlattensAndRoundTripsThroughElements) {
  const Schema schema = TestSchema();
  ASSERT_EQ(schema.num_leaves(), 11);
  const LeafColumn& xmax = schema.leaves()[9];
  EXPECT_EQ(xmax.dotted_path(), "bbox.xmax");
  EXPECT_EQ(xmax.max_definition_level, 1);
  EXPECT_EQ(xmax.max_repetition_level, 0);
  EXPECT_EQ(xmax.field_id, 13);
  EXPECT_EQ(xmax.top_level_field, 7);
  EXPECT_EQ(schema.leaves()[0].max_definition_level, 0);
  EXPECT_EQ(schema.LeafIndex("geometry"), 6);
  EXPECT_EQ(schema.LeafIndex("nope"), -1);

  const auto elements = schema.ToElements();
  ASSERT_EQ(elements.size(), 13u);
  EXPECT_EQ(elements[0].num_children, 8);
  EXPECT_FALSE(elements[0].repetition_type.has_value());
  EXPECT_EQ(elements[2].converted_type, ConvertedType::kUtf8);
  EXPECT_EQ(elements[4].converted_type, ConvertedType::kTimestampMicros);
  EXPECT_EQ(elements[5].converted_type, ConvertedType::kDecimal);
  EXPECT_EQ(elements[5].precision, 18);
  EXPECT_EQ(elements[5].scale, 2);
  EXPECT_EQ(elements[6].converted_type, ConvertedType::kUint16);
  EXPECT_FALSE(elements[7].converted_type.has_value());  // GEOGRAPHY has none
  EXPECT_EQ(elements[8].num_children, 4);
  EXPECT_FALSE(elements[8].type.has_value());

  ASSERT_OK_AND_ASSIGN(Schema back, Schema::FromElements(elements));
  EXPECT_EQ(back, schema);
  EXPECT_EQ(back.ToElements(), elements);
}

TEST(SchemaTest, LegacyConvertedTypeBecomesLogicalType) {
  std::vector<SchemaElement> elements(2);
  elements[0].name = "root";
  elements[0].num_children = 1;
  elements[0].repetition_type = Repetition::kRequired;  // some writers set it
  elements[1].name = "s";
  elements[1].type = PhysicalType::kByteArray;
  elements[1].repetition_type = Repetition::kOptional;
  elements[1].converted_type = ConvertedType::kUtf8;
  ASSERT_OK_AND_ASSIGN(Schema s, Schema::FromElements(elements));
  ASSERT_TRUE(s.leaves()[0].logical_type.has_value());
  EXPECT_EQ(s.leaves()[0].logical_type->kind, LogicalType::Kind::kString);
}

TEST(SchemaTest, RejectsBadTrees) {
  EXPECT_THAT(Schema::Make({Field::Group("g", Repetition::kOptional, 1, {})}),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Schema::Make({Field::Leaf("", PhysicalType::kInt32, Repetition::kOptional, 1)}),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(
      Schema::Make({Field::Leaf("f", PhysicalType::kFixedLenByteArray, Repetition::kOptional, 1)}),
      IsError(ErrorCode::kInvalidArgument));

  std::vector<SchemaElement> elements(2);
  elements[0].name = "root";
  elements[0].num_children = 5;
  elements[1].name = "x";
  elements[1].type = PhysicalType::kInt32;
  EXPECT_THAT(Schema::FromElements(elements), IsError(ErrorCode::kCorruptData));
  elements[0].num_children = 1;
  elements.push_back(elements[1]);
  EXPECT_THAT(Schema::FromElements(elements), IsErrorWith(ErrorCode::kCorruptData, "beyond"));
}

TEST(ColumnDataTest, AppendsValuesAndNullsAndValidates) {
  const Schema schema = TestSchema();
  Batch batch = Batch::ForSchema(schema);
  for (int row = 0; row < 3; ++row) {
    batch.columns[0].AppendInt64(row);
    if (row == 1) {
      batch.columns[1].AppendNull();
    } else {
      batch.columns[1].AppendBytes("name" + std::to_string(row));
    }
    for (int c = 2; c < 7; ++c) batch.columns[c].AppendNull();
    for (int c = 7; c < 11; ++c) batch.columns[c].AppendDouble(row);
  }
  batch.num_rows = 3;
  ASSERT_OK(batch.Validate(schema));
  EXPECT_EQ(batch.columns[1].num_values(), 2);
  EXPECT_EQ(batch.columns[1].null_count(), 1);
  EXPECT_EQ(batch.columns[1].bytes_at(1), "name2");
  EXPECT_EQ(batch.columns[1].num_levels(), 3);

  batch.num_rows = 4;
  EXPECT_THAT(batch.Validate(schema), IsErrorWith(ErrorCode::kInvalidArgument, "'id'"));
  batch.num_rows = 3;
  batch.columns[0].int32_values.push_back(1);
  EXPECT_THAT(batch.Validate(schema), IsErrorWith(ErrorCode::kInvalidArgument, "int32_values"));
  batch.columns[0].int32_values.clear();
  batch.columns[1].def_levels[0] = 0;
  EXPECT_THAT(batch.Validate(schema), IsErrorWith(ErrorCode::kInvalidArgument, "defined levels"));
}

}  // namespace
}  // namespace geolake::parquet
