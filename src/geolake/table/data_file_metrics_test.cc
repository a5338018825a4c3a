#include "geolake/table/data_file_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "geolake/formats/parquet/file_writer.h"
#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;

TEST(TruncateTest, StringsKeepCodePointsAndIncrementUpper) {
  EXPECT_EQ(TruncateLowerString("abc", 16), "abc");
  EXPECT_EQ(TruncateUpperString("abc", 16), "abc");
  EXPECT_EQ(TruncateLowerString("abcdef", 3), "abc");
  EXPECT_EQ(TruncateUpperString("abcdef", 3), "abd");
  // "é" is 2 bytes: truncation counts code points, not bytes.
  EXPECT_EQ(TruncateLowerString("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(TruncateUpperString("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xC3\xAA");
  // U+10FFFF cannot be incremented: carry into the previous code point.
  EXPECT_EQ(TruncateUpperString("a\xF4\x8F\xBF\xBFz", 2), "b");
  EXPECT_EQ(TruncateUpperString("\xF4\x8F\xBF\xBF\xF4\x8F\xBF\xBFz", 2), std::nullopt);
  // U+D7FF + 1 skips the surrogates to U+E000.
  EXPECT_EQ(TruncateUpperString("\xED\x9F\xBFzz", 1), "\xEE\x80\x80");
}

TEST(TruncateTest, BinaryIncrementsLastByteBelowFF) {
  EXPECT_EQ(TruncateLowerBinary(std::string("\x01\x02\x03", 3), 2), std::string("\x01\x02", 2));
  EXPECT_EQ(TruncateUpperBinary(std::string("\x01\x02\x03", 3), 2), std::string("\x01\x03", 2));
  EXPECT_EQ(TruncateUpperBinary(std::string("\x01\xFF\x03", 3), 2), std::string("\x02", 1));
  EXPECT_EQ(TruncateUpperBinary(std::string("\xFF\xFF\x03", 3), 2), std::nullopt);
  EXPECT_EQ(TruncateUpperBinary(std::string("\xFF\xFF", 2), 2), std::string("\xFF\xFF", 2));
}

class MemoryStream : public io::OutputStream {
 public:
  Status Write(std::span<const std::uint8_t> data) override {
    buffer_.append(reinterpret_cast<const char*>(data.data()), data.size());
    return Status::OK();
  }
  std::uint64_t Tell() const override { return buffer_.size(); }
  Status Close() override { return Status::OK(); }
  void Abort() override {}
  const std::string& buffer() const { return buffer_; }

 private:
  std::string buffer_;
};

TEST(DataFileFromParquetTest, MetricsAcrossRowGroups) {
  // Iceberg schema: id long, name string, value double, bbox struct<xmin double>, geometry.
  Schema schema(
      0, {NestedField::Required(1, "id", Type::Long()),
          NestedField::Optional(2, "name", Type::String()),
          NestedField::Optional(3, "value", Type::Double()),
          NestedField::Optional(4, "bbox",
                                Type::Struct({NestedField::Required(5, "xmin", Type::Double())})),
          NestedField::Optional(6, "geometry", Type::Geometry()),
          NestedField::Optional(7, "price", Type::Decimal(9, 2).value())});
  parquet::LogicalType string_type;
  string_type.kind = parquet::LogicalType::Kind::kString;
  parquet::LogicalType decimal_type;
  decimal_type.kind = parquet::LogicalType::Kind::kDecimal;
  decimal_type.precision = 9;
  decimal_type.scale = 2;
  using parquet::Field;
  using parquet::PhysicalType;
  using parquet::Repetition;
  ASSERT_OK_AND_ASSIGN(
      auto pschema,
      parquet::Schema::Make(
          {Field::Leaf("id", PhysicalType::kInt64, Repetition::kRequired, 1),
           Field::Leaf("name", PhysicalType::kByteArray, Repetition::kOptional, 2, string_type),
           Field::Leaf("value", PhysicalType::kDouble, Repetition::kOptional, 3),
           Field::Group("bbox", Repetition::kOptional, 4,
                        {Field::Leaf("xmin", PhysicalType::kDouble, Repetition::kRequired, 5)}),
           Field::Leaf("geometry", PhysicalType::kByteArray, Repetition::kOptional, 6),
           Field::Leaf("price", PhysicalType::kInt32, Repetition::kOptional, 7, decimal_type),
           Field::Leaf("no_id", PhysicalType::kInt32, Repetition::kOptional, std::nullopt)}));
  parquet::WriterOptions options;
  options.row_group_rows = 10;  // 25 rows -> 3 row groups
  MemoryStream out;
  ASSERT_OK_AND_ASSIGN(auto writer, parquet::FileWriter::Open(&out, pschema, options));
  parquet::Batch batch = parquet::Batch::ForSchema(pschema);
  for (int i = 0; i < 25; ++i) {
    batch.columns[0].AppendInt64(100 - i);
    if (i % 5 == 0) {
      batch.columns[1].AppendNull();
    } else {
      batch.columns[1].AppendBytes("a-very-long-street-name-" + std::to_string(10 + i));
    }
    batch.columns[2].AppendDouble(i == 3 ? std::nan("") : 0.25 * i);
    batch.columns[3].AppendDouble(-10.0 + i);
    batch.columns[4].AppendBytes(std::string("\x01\x01\x00\x00\x00", 5));
    batch.columns[5].AppendInt32(i == 7 ? -1234 : 500 + i);
    batch.columns[6].AppendInt32(i);
  }
  batch.num_rows = 25;
  ASSERT_OK(writer->WriteBatch(batch));
  ASSERT_OK_AND_ASSIGN(parquet::FileMetaData md, writer->Close());
  ASSERT_EQ(md.row_groups.size(), 3u);

  ParquetMetricsOptions metrics;
  metrics.nan_value_counts[3] = 1;
  ASSERT_OK_AND_ASSIGN(
      DataFile f,
      DataFileFromParquet(md, "/t/data/f.parquet", static_cast<std::int64_t>(out.buffer().size()),
                          schema, {}, metrics));
  EXPECT_EQ(f.record_count, 25);
  EXPECT_EQ(f.split_offsets.size(), 3u);
  EXPECT_EQ(f.split_offsets[0], 4);  // right after the magic
  EXPECT_TRUE(std::is_sorted(f.split_offsets.begin(), f.split_offsets.end()));
  // Leaves 1,2,3,5,6,7 have ids in the schema; the id-less column is skipped.
  EXPECT_EQ(f.column_sizes.size(), 6u);
  EXPECT_EQ(f.value_counts.at(1), 25);
  EXPECT_EQ(f.null_value_counts.at(2), 5);
  EXPECT_EQ(f.nan_value_counts.at(3), 1);
  EXPECT_EQ(f.lower_bounds.at(1), SerializeValue(*Type::Long(), Value(std::int64_t{76})).value());
  EXPECT_EQ(f.upper_bounds.at(1), SerializeValue(*Type::Long(), Value(std::int64_t{100})).value());
  // Strings truncated to 16 code points; the upper bound's last code point incremented.
  EXPECT_EQ(f.lower_bounds.at(2), "a-very-long-stre");
  EXPECT_EQ(f.upper_bounds.at(2), "a-very-long-strf");
  // NaN is never a bound. A zero minimum is written as -0.0 by the Parquet writer (Parquet's
  // rule), which is a valid, conservative Iceberg lower bound.
  EXPECT_EQ(f.lower_bounds.at(3), SerializeValue(*Type::Double(), Value(-0.0)).value());
  EXPECT_EQ(f.upper_bounds.at(3), SerializeValue(*Type::Double(), Value(6.0)).value());
  // Nested struct leaf gets bounds too (what bbox pruning relies on).
  EXPECT_EQ(f.lower_bounds.at(5), SerializeValue(*Type::Double(), Value(-10.0)).value());
  EXPECT_EQ(f.upper_bounds.at(5), SerializeValue(*Type::Double(), Value(14.0)).value());
  // Geometry: counts but no bounds, as Java does.
  EXPECT_EQ(f.value_counts.at(6), 25);
  EXPECT_EQ(f.lower_bounds.count(6), 0u);
  // Decimal stored as INT32 becomes minimal big-endian: -12.34 -> FB 2E, 5.24 -> 02 0C.
  EXPECT_EQ(f.lower_bounds.at(7), std::string("\xFB\x2E", 2));
  EXPECT_EQ(f.upper_bounds.at(7), std::string("\x02\x0C", 2));
}

std::string PointWkb(double x, double y) {
  std::string wkb("\x01\x01\x00\x00\x00", 5);
  wkb.append(reinterpret_cast<const char*>(&x), 8);
  wkb.append(reinterpret_cast<const char*>(&y), 8);
  return wkb;
}

TEST(DataFileFromParquetTest, GeometryBoundsFromGeospatialStatistics) {
  Schema schema(0, {NestedField::Optional(1, "geometry", Type::Geometry())});
  ASSERT_OK_AND_ASSIGN(
      auto pschema,
      parquet::Schema::Make({parquet::Field::Leaf("geometry", parquet::PhysicalType::kByteArray,
                                                  parquet::Repetition::kOptional, 1)}));
  parquet::WriterOptions options;
  options.row_group_rows = 2;
  options.geometry_logical_type_column = "geometry";
  MemoryStream out;
  ASSERT_OK_AND_ASSIGN(auto writer, parquet::FileWriter::Open(&out, pschema, options));
  parquet::Batch batch = parquet::Batch::ForSchema(writer->schema());
  // lon/lat (x, y) points in two row groups.
  batch.columns[0].AppendBytes(PointWkb(10, 50));
  batch.columns[0].AppendBytes(PointWkb(-3, 40));
  batch.columns[0].AppendNull();
  batch.columns[0].AppendBytes(PointWkb(7, 60.5));
  batch.num_rows = 4;
  ASSERT_OK(writer->WriteBatch(batch));
  ASSERT_OK_AND_ASSIGN(parquet::FileMetaData md, writer->Close());
  ParquetMetricsOptions metrics;
  ASSERT_OK_AND_ASSIGN(DataFile plain,
                       DataFileFromParquet(md, "/f.parquet", 1, schema, {}, metrics));
  EXPECT_EQ(plain.lower_bounds.count(1), 0u);  // off by default, like Java
  EXPECT_EQ(plain.null_value_counts.at(1), 1);
  metrics.geometry_bounds = true;
  ASSERT_OK_AND_ASSIGN(DataFile f, DataFileFromParquet(md, "/f.parquet", 1, schema, {}, metrics));
  ASSERT_OK_AND_ASSIGN(Value lo, DeserializeValue(*Type::Geometry(), f.lower_bounds.at(1)));
  ASSERT_OK_AND_ASSIGN(Value hi, DeserializeValue(*Type::Geometry(), f.upper_bounds.at(1)));
  EXPECT_EQ(f.lower_bounds.at(1).size(), 16u);  // x:y only
  EXPECT_EQ(std::get<BoundPoint>(lo), (BoundPoint{-3, 40}));
  EXPECT_EQ(std::get<BoundPoint>(hi), (BoundPoint{10, 60.5}));
}

TEST(DataFileFromParquetTest, MalformedFooterIsCorruptData) {
  parquet::FileMetaData md;
  md.schema.resize(1);
  md.schema[0].num_children = 3;  // claims children that are not there
  Schema schema(0, {NestedField::Required(1, "id", Type::Long())});
  EXPECT_THAT(DataFileFromParquet(md, "/x.parquet", 10, schema, {}),
              IsError(ErrorCode::kCorruptData));
}

}  // namespace
}  // namespace geolake::table
