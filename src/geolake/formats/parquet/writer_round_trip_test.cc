// Round trips: files written by FileWriter, read back by FileReader, compared value by value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet {
namespace {

class StringOutputStream : public io::OutputStream {
 public:
  Status Write(std::span<const std::uint8_t> data) override {
    buffer_.append(reinterpret_cast<const char*>(data.data()), data.size());
    return Status::OK();
  }
  using io::OutputStream::Write;
  std::uint64_t Tell() const override { return buffer_.size(); }
  Status Close() override { return Status::OK(); }
  void Abort() override {}
  std::string& buffer() { return buffer_; }

 private:
  std::string buffer_;
};

class StringFile : public io::RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  std::uint64_t size() const override { return data_.size(); }
  Status ReadAt(std::uint64_t offset, std::uint64_t length, std::string* out) const override {
    if (offset > data_.size() || length > data_.size() - offset) {
      return Status::CorruptData("read past the end");
    }
    out->assign(data_, offset, length);
    return Status::OK();
  }
  const std::string& path() const override { return path_; }

 private:
  std::string data_;
  std::string path_ = "memory.parquet";
};

// Rows [begin, end) of a non-repeated column.
ColumnData Slice(const ColumnData& c, std::int64_t begin, std::int64_t end) {
  ColumnData out;
  out.type = c.type;
  out.max_definition_level = c.max_definition_level;
  std::int64_t v0 = begin;
  std::int64_t v1 = end;
  if (c.max_definition_level > 0) {
    out.def_levels.assign(c.def_levels.begin() + begin, c.def_levels.begin() + end);
    v0 = 0;
    for (std::int64_t i = 0; i < begin; ++i) v0 += c.def_levels[i] == c.max_definition_level;
    v1 = v0;
    for (std::int16_t d : out.def_levels) v1 += d == c.max_definition_level;
  }
  auto copy = [&](const auto& src, auto& dst) {
    if (!src.empty()) dst.assign(src.begin() + v0, src.begin() + v1);
  };
  copy(c.bool_values, out.bool_values);
  copy(c.int32_values, out.int32_values);
  copy(c.int64_values, out.int64_values);
  copy(c.float_values, out.float_values);
  copy(c.double_values, out.double_values);
  for (std::int64_t v = v0; v < v1 && c.byte_offsets.size() > 1; ++v) {
    out.byte_data.append(c.bytes_at(v));
    out.byte_offsets.push_back(static_cast<std::int64_t>(out.byte_data.size()));
  }
  return out;
}

template <typename T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

void ExpectSameColumn(const ColumnData& expected, const ColumnData& actual,
                      const std::string& what) {
  EXPECT_EQ(actual.def_levels, expected.def_levels) << what;
  EXPECT_EQ(actual.bool_values, expected.bool_values) << what;
  EXPECT_EQ(actual.int32_values, expected.int32_values) << what;
  EXPECT_EQ(actual.int64_values, expected.int64_values) << what;
  EXPECT_TRUE(SameBits(actual.float_values, expected.float_values)) << what;
  EXPECT_TRUE(SameBits(actual.double_values, expected.double_values)) << what;
  EXPECT_EQ(actual.byte_data, expected.byte_data) << what;
  EXPECT_EQ(actual.num_values(), expected.num_values()) << what;
}

Schema MixedSchema() {
  Field fixed = Field::Leaf("fixed", PhysicalType::kFixedLenByteArray, Repetition::kOptional, 7);
  fixed.type_length = 16;
  return *Schema::Make({
      Field::Leaf("b", PhysicalType::kBoolean, Repetition::kOptional, 1),
      Field::Leaf("i32", PhysicalType::kInt32, Repetition::kRequired, 2),
      Field::Leaf("i64", PhysicalType::kInt64, Repetition::kOptional, 3),
      Field::Leaf("f32", PhysicalType::kFloat, Repetition::kOptional, 4),
      Field::Leaf("f64", PhysicalType::kDouble, Repetition::kRequired, 5),
      Field::Leaf("s", PhysicalType::kByteArray, Repetition::kOptional, 6, LogicalType::String()),
      fixed,
      Field::Group("bbox", Repetition::kOptional, 8,
                   {Field::Leaf("xmin", PhysicalType::kDouble, Repetition::kRequired, 9),
                    Field::Leaf("xmax", PhysicalType::kDouble, Repetition::kRequired, 10)}),
  });
}

Batch MixedBatch(const Schema& schema, std::int64_t rows) {
  Batch b = Batch::ForSchema(schema);
  b.num_rows = rows;
  const float specials_f[] = {std::numeric_limits<float>::quiet_NaN(), -0.0f, 0.0f,
                              std::numeric_limits<float>::infinity(), -1e30f};
  const double specials_d[] = {-0.0, std::numeric_limits<double>::quiet_NaN(), 1e300,
                               -std::numeric_limits<double>::infinity(), 0.5};
  for (std::int64_t k = 0; k < rows; ++k) {
    const bool null = k % 11 == 5;
    if (null) {
      b.columns[0].AppendNull();
    } else {
      b.columns[0].AppendBool((k * 7) % 3 == 1);
    }
    b.columns[1].AppendInt32(static_cast<std::int32_t>((k * 2654435761u) & 0x7FFFFFFF) -
                             1000000000);
    if (null) {
      b.columns[2].AppendNull();
    } else {
      b.columns[2].AppendInt64(k % 3 == 0 ? std::numeric_limits<std::int64_t>::min() + k : k * k);
    }
    if (k % 4 == 0) {
      b.columns[3].AppendNull();
    } else {
      b.columns[3].AppendFloat(specials_f[k % 5]);
    }
    b.columns[4].AppendDouble(k % 2 == 0 ? specials_d[k % 5] : static_cast<double>(k) / 3.0);
    if (null) {
      b.columns[5].AppendNull();
    } else {
      b.columns[5].AppendBytes(k % 13 == 0 ? std::string()
                                           : std::string(k % 40, 'a' + k % 26) + "ü");
    }
    if (null) {
      b.columns[6].AppendNull();
    } else {
      std::string f(16, '\0');
      std::memcpy(f.data(), &k, sizeof(k));
      b.columns[6].AppendBytes(f);
    }
    if (k % 9 == 0) {
      b.columns[7].AppendNull();
      b.columns[8].AppendNull();
    } else {
      b.columns[7].AppendDouble(static_cast<double>(k));
      b.columns[8].AppendDouble(static_cast<double>(k) + 1);
    }
  }
  return b;
}

void RoundTrip(const WriterOptions& options, const std::string& label) {
  SCOPED_TRACE(label);
  const Schema schema = MixedSchema();
  const Batch batch = MixedBatch(schema, 5000);
  StringOutputStream out;
  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema, options));
  // Several batches of uneven sizes.
  std::int64_t row = 0;
  for (std::int64_t n : {1, 999, 2000, 2000}) {
    Batch part = Batch::ForSchema(schema);
    part.num_rows = n;
    for (std::size_t c = 0; c < batch.columns.size(); ++c)
      part.columns[c] = Slice(batch.columns[c], row, row + n);
    ASSERT_OK(writer->WriteBatch(part));
    row += n;
  }
  ASSERT_OK_AND_ASSIGN(FileMetaData written, writer->Close());

  auto file = std::make_shared<StringFile>(out.buffer());
  ASSERT_OK_AND_ASSIGN(auto reader, FileReader::Open(file));
  EXPECT_EQ(reader->metadata(), written);
  EXPECT_EQ(reader->schema(), schema);
  std::int64_t first = 0;
  for (int g = 0; g < reader->num_row_groups(); ++g) {
    const std::int64_t n = reader->row_group(g).num_rows;
    ASSERT_OK_AND_ASSIGN(Batch got, reader->ReadRowGroup(g));
    ASSERT_EQ(got.columns.size(), batch.columns.size());
    for (std::size_t c = 0; c < batch.columns.size(); ++c) {
      ExpectSameColumn(Slice(batch.columns[c], first, first + n), got.columns[c],
                       "row group " + std::to_string(g) + " column " + std::to_string(c));
    }
    first += n;
  }
  EXPECT_EQ(first, 5000);
}

TEST(WriterRoundTripTest, DefaultOptions) { RoundTrip(WriterOptions{}, "default"); }

TEST(WriterRoundTripTest, PlainSmallPagesManyRowGroupsEveryCodec) {
  for (CompressionCodec codec :
       {CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
        CompressionCodec::kZstd, CompressionCodec::kLz4Raw, CompressionCodec::kBrotli}) {
    WriterOptions o;
    o.row_group_rows = 1300;
    o.column.dictionary = false;
    o.column.max_rows_per_page = 97;
    o.column.codec = codec;
    RoundTrip(o, std::string(CodecName(codec)));
  }
}

TEST(WriterRoundTripTest, AlternativeEncodingsAndDictionaryFallback) {
  WriterOptions o;
  o.row_group_rows = 2500;
  o.column.dictionary_page_size_limit = 2000;  // forces fallback mid-chunk
  o.column.max_rows_per_page = 300;
  o.column_options["i32"].encoding = Encoding::kDeltaBinaryPacked;
  o.column_options["i64"].encoding = Encoding::kDeltaBinaryPacked;
  o.column_options["i64"].dictionary = false;
  o.column_options["f32"].encoding = Encoding::kByteStreamSplit;
  o.column_options["f32"].dictionary = false;
  o.column_options["f64"].encoding = Encoding::kByteStreamSplit;
  o.column_options["s"].encoding = Encoding::kDeltaByteArray;
  o.column_options["s"].dictionary_page_size_limit = 200;
  o.column_options["bbox.xmin"].encoding = Encoding::kByteStreamSplit;
  RoundTrip(o, "alternative");
}

TEST(WriterRoundTripTest, DataPageV2) {
  for (CompressionCodec codec : {CompressionCodec::kUncompressed, CompressionCodec::kZstd}) {
    WriterOptions o;
    o.row_group_rows = 1700;
    o.column.max_rows_per_page = 200;
    o.column.data_page_v2 = true;
    o.column.codec = codec;
    o.column_options["f64"] = o.column;
    o.column_options["f64"].encoding = Encoding::kByteStreamSplit;
    o.column_options["f64"].dictionary = false;
    RoundTrip(o, "v2 " + std::string(CodecName(codec)));
  }
}

TEST(WriterRoundTripTest, PageIndexLetsTheReaderSkipPages) {
  const Schema schema =
      *Schema::Make({Field::Leaf("v", PhysicalType::kInt64, Repetition::kRequired, 1)});
  WriterOptions o;
  o.column.max_rows_per_page = 1000;
  Batch b = Batch::ForSchema(schema);
  b.num_rows = 10000;
  for (int k = 0; k < 10000; ++k) b.columns[0].AppendInt64(k);
  StringOutputStream out;
  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema, o));
  ASSERT_OK(writer->WriteBatch(b));
  ASSERT_OK(writer->Close());
  auto file = std::make_shared<StringFile>(out.buffer());
  ASSERT_OK_AND_ASSIGN(auto reader, FileReader::Open(file));
  ASSERT_OK_AND_ASSIGN(auto ci, reader->ReadColumnIndex(0, 0));
  ASSERT_TRUE(ci.has_value());
  ASSERT_EQ(ci->min_values.size(), 10u);
  EXPECT_EQ(ci->boundary_order, BoundaryOrder::kAscending);
  std::int64_t lo = 0;
  std::memcpy(&lo, ci->min_values[3].data(), 8);
  EXPECT_EQ(lo, 3000);
  ASSERT_OK_AND_ASSIGN(PageSelection sel, reader->ReadColumnPages(0, 0, {{3500, 3600}}));
  EXPECT_EQ(sel.pages_read, 1);
  EXPECT_EQ(sel.pages_skipped, 9);
  ASSERT_EQ(sel.data.int64_values.size(), 1000u);
  EXPECT_EQ(sel.data.int64_values[0], 3000);
}

TEST(WriterRoundTripTest, AllNaNPageSuppressesTheColumnIndex) {
  const Schema schema =
      *Schema::Make({Field::Leaf("d", PhysicalType::kDouble, Repetition::kRequired, 1)});
  WriterOptions o;
  o.column.max_rows_per_page = 10;
  Batch b = Batch::ForSchema(schema);
  b.num_rows = 30;
  for (int k = 0; k < 30; ++k) {
    b.columns[0].AppendDouble(k >= 10 && k < 20 ? std::numeric_limits<double>::quiet_NaN() : k);
  }
  StringOutputStream out;
  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema, o));
  ASSERT_OK(writer->WriteBatch(b));
  ASSERT_OK_AND_ASSIGN(FileMetaData md, writer->Close());
  const ColumnChunk& cc = md.row_groups[0].columns[0];
  EXPECT_FALSE(cc.column_index_offset.has_value());
  EXPECT_TRUE(cc.offset_index_offset.has_value());
  double lo = 0;
  double hi = 0;
  std::memcpy(&lo, cc.meta_data->statistics->min_value->data(), 8);
  std::memcpy(&hi, cc.meta_data->statistics->max_value->data(), 8);
  EXPECT_TRUE(lo == 0.0 && std::signbit(lo));
  EXPECT_EQ(hi, 29.0);
}

}  // namespace
}  // namespace geolake::parquet
