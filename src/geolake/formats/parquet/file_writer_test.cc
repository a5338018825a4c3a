#include "geolake/formats/parquet/file_writer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "geolake/core/testing.h"
#include "geolake/formats/parquet/compression.h"
#include "geolake/formats/parquet/encoding.h"
#include "geolake/formats/parquet/statistics.h"

namespace geolake::parquet {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// An OutputStream into memory (LocalFileIO is tested in io/; here the bytes matter).
class MemoryOutputStream : public io::OutputStream {
 public:
  Status Write(std::span<const std::uint8_t> data) override {
    if (fail_after_ >= 0 && static_cast<std::int64_t>(buffer_.size() + data.size()) > fail_after_) {
      return Status::IOError("disk full (test)");
    }
    buffer_.append(reinterpret_cast<const char*>(data.data()), data.size());
    return Status::OK();
  }
  using io::OutputStream::Write;
  std::uint64_t Tell() const override { return buffer_.size(); }
  Status Close() override { return Status::OK(); }
  void Abort() override { buffer_.clear(); }

  const std::string& buffer() const { return buffer_; }
  void set_fail_after(std::int64_t bytes) { fail_after_ = bytes; }

 private:
  std::string buffer_;
  std::int64_t fail_after_ = -1;
};

std::string TempDir() {
  static const std::string dir = [] {
    auto p = std::filesystem::temp_directory_path() /
             ("geolake_parquet_writer_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return dir;
}

std::string WriteToDisk(const std::string& name, const std::string& bytes) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult Run(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string OracleScript() {
  return std::string(GEOLAKE_SOURCE_DIR) + "/build/oracles/verify_parquet.mjs";
}

// Runs the three independent readers; fails the test if they are not installed.
CommandResult Verify(const std::string& path, const std::string& args) {
  if (!std::filesystem::exists(OracleScript()) || Run("node --version").exit_code != 0) {
    ADD_FAILURE() << "oracle readers missing: need node and " << OracleScript()
                  << " (run `make test`, which installs them)";
    return {};
  }
  return Run("node " + OracleScript() + " " + path + " " + args);
}

// ---------------------------------------------------------------------------------------------
// A schema with every supported type, required and optional.

Field Leaf(const std::string& name, PhysicalType type, Repetition rep, std::int32_t id,
           std::optional<LogicalType> lt = std::nullopt) {
  return Field::Leaf(name, type, rep, id, std::move(lt));
}

Schema AllTypesSchema() {
  std::vector<Field> fields;
  std::int32_t id = 1;
  for (Repetition rep : {Repetition::kRequired, Repetition::kOptional}) {
    const std::string s = rep == Repetition::kRequired ? "_req" : "_opt";
    fields.push_back(Leaf("b" + s, PhysicalType::kBoolean, rep, id++));
    fields.push_back(Leaf("i32" + s, PhysicalType::kInt32, rep, id++));
    fields.push_back(Leaf("i64" + s, PhysicalType::kInt64, rep, id++));
    fields.push_back(Leaf("f32" + s, PhysicalType::kFloat, rep, id++));
    fields.push_back(Leaf("f64" + s, PhysicalType::kDouble, rep, id++));
    fields.push_back(Leaf("str" + s, PhysicalType::kByteArray, rep, id++, LogicalType::String()));
    fields.push_back(Leaf("bin" + s, PhysicalType::kByteArray, rep, id++));
    fields.push_back(Leaf("date" + s, PhysicalType::kInt32, rep, id++, LogicalType::Date()));
    fields.push_back(Leaf("ts_utc" + s, PhysicalType::kInt64, rep, id++,
                          LogicalType::Timestamp(true, TimeUnit::kMicros)));
    fields.push_back(Leaf("ts_local" + s, PhysicalType::kInt64, rep, id++,
                          LogicalType::Timestamp(false, TimeUnit::kMicros)));
    fields.push_back(Leaf("dec" + s, PhysicalType::kInt64, rep, id++, LogicalType::Decimal(18, 3)));
  }
  const std::int32_t struct_id = id++;
  fields.push_back(
      Field::Group("bbox", Repetition::kOptional, struct_id,
                   {Leaf("xmin", PhysicalType::kDouble, Repetition::kRequired, id),
                    Leaf("ymin", PhysicalType::kDouble, Repetition::kRequired, id + 1),
                    Leaf("xmax", PhysicalType::kDouble, Repetition::kRequired, id + 2),
                    Leaf("ymax", PhysicalType::kDouble, Repetition::kRequired, id + 3)}));
  auto schema = Schema::Make(std::move(fields));
  EXPECT_OK(schema);
  return *schema;
}

// Deterministic rows; optional columns are null every 7th row, the struct every 5th.
Batch AllTypesBatch(const Schema& schema, std::int64_t rows, std::int64_t first_row = 0) {
  Batch b = Batch::ForSchema(schema);
  b.num_rows = rows;
  for (std::int64_t k = first_row; k < first_row + rows; ++k) {
    int c = 0;
    for (int pass = 0; pass < 2; ++pass) {
      const bool null = pass == 1 && k % 7 == 3;
      auto next = [&]() -> ColumnData* {
        ColumnData* col = &b.columns[c++];
        if (null) {
          col->AppendNull();
          return nullptr;
        }
        return col;
      };
      if (auto* col = next()) col->AppendBool(k % 3 == 0);
      if (auto* col = next()) col->AppendInt32(static_cast<std::int32_t>(k * 7 - 1000));
      if (auto* col = next()) col->AppendInt64(k * 1000003LL - 5000000000LL);
      if (auto* col = next()) col->AppendFloat(static_cast<float>(k) * 0.5f - 100.0f);
      if (auto* col = next()) col->AppendDouble(static_cast<double>(k) * 0.25 - 3.5);
      if (auto* col = next()) col->AppendBytes("s" + std::to_string(k % 50) + "é");
      if (auto* col = next()) col->AppendBytes(std::string("\x00\xFF", 2) + std::to_string(k));
      if (auto* col = next()) col->AppendInt32(static_cast<std::int32_t>(19000 + k % 1000));
      if (auto* col = next()) col->AppendInt64(1700000000000000LL + k * 1000000LL);
      if (auto* col = next()) col->AppendInt64(1600000000000000LL + k);
      if (auto* col = next()) col->AppendInt64(k * 1234 - 99999);
    }
    const bool bbox_null = k % 5 == 4;
    for (int j = 0; j < 4; ++j) {
      if (bbox_null) {
        b.columns[c++].AppendNull();
      } else {
        b.columns[c++].AppendDouble(static_cast<double>(k) + (j >= 2 ? 1.0 : 0.0));
      }
    }
  }
  return b;
}

std::string WriteFile(const Schema& schema, const WriterOptions& options,
                      const std::vector<Batch>& batches, FileMetaData* md_out = nullptr) {
  MemoryOutputStream out;
  auto writer = FileWriter::Open(&out, schema, options);
  EXPECT_OK(writer);
  if (!writer.ok()) return {};
  for (const auto& batch : batches) EXPECT_OK((*writer)->WriteBatch(batch));
  auto md = (*writer)->Close();
  EXPECT_OK(md);
  if (md_out != nullptr && md.ok()) *md_out = *md;
  return out.buffer();
}

// Read the footer back with our own Thrift code.
FileMetaData ReadFooter(const std::string& file) {
  FileMetaData md;
  EXPECT_GE(file.size(), 12u);
  EXPECT_EQ(file.substr(0, 4), "PAR1");
  EXPECT_EQ(file.substr(file.size() - 4), "PAR1");
  std::uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  EXPECT_OK(DeserializeThrift(std::string_view(file).substr(file.size() - 8 - len, len), &md));
  return md;
}

TEST(FileWriterTest, FooterDescribesRowGroupsPagesAndStatistics) {
  const Schema schema = AllTypesSchema();
  WriterOptions options;
  options.row_group_rows = 1000;
  options.column.max_rows_per_page = 300;
  options.key_value_metadata.push_back({"k", std::string("v")});
  FileMetaData written;
  const std::string file = WriteFile(
      schema, options, {AllTypesBatch(schema, 1500), AllTypesBatch(schema, 1000, 1500)}, &written);
  const FileMetaData md = ReadFooter(file);
  EXPECT_EQ(md, written);
  EXPECT_EQ(md.num_rows, 2500);
  ASSERT_EQ(md.row_groups.size(), 3u);
  EXPECT_EQ(md.row_groups[0].num_rows, 1000);
  EXPECT_EQ(md.row_groups[2].num_rows, 500);
  EXPECT_EQ(md.created_by, "geolake version 0.1.0 (build dev)");
  EXPECT_EQ(md.column_orders.size(), 26u);
  ASSERT_EQ(md.key_value_metadata.size(), 1u);

  // i64_req in row group 0: values k*1000003 - 5e9 for k in [0, 1000).
  const ColumnChunk& cc = md.row_groups[0].columns[2];
  ASSERT_TRUE(cc.meta_data.has_value());
  const ColumnMetaData& cmd = *cc.meta_data;
  EXPECT_EQ(cmd.path_in_schema, std::vector<std::string>{"i64_req"});
  EXPECT_EQ(cmd.num_values, 1000);
  EXPECT_EQ(cmd.codec, CompressionCodec::kZstd);
  ASSERT_TRUE(cmd.statistics.has_value());
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::memcpy(&lo, cmd.statistics->min_value->data(), 8);
  std::memcpy(&hi, cmd.statistics->max_value->data(), 8);
  EXPECT_EQ(lo, -5000000000LL);
  EXPECT_EQ(hi, 999 * 1000003LL - 5000000000LL);
  EXPECT_EQ(cmd.statistics->null_count, 0);

  // The optional string column: nulls counted, bounds exact.
  const ColumnMetaData& str = *md.row_groups[0].columns[16].meta_data;
  EXPECT_EQ(str.path_in_schema, std::vector<std::string>{"str_opt"});
  EXPECT_EQ(str.statistics->null_count, 143);  // k % 7 == 3 for k < 1000
  EXPECT_EQ(*str.statistics->min_value, "s0é");
  EXPECT_EQ(*str.statistics->max_value, "s9é");
  EXPECT_TRUE(std::count(str.encodings.begin(), str.encodings.end(), Encoding::kRleDictionary));
  ASSERT_TRUE(str.dictionary_page_offset.has_value());
  EXPECT_LT(*str.dictionary_page_offset, str.data_page_offset);

  // Struct leaves: path and nulls.
  const ColumnMetaData& xmax = *md.row_groups[0].columns[24].meta_data;
  EXPECT_EQ(xmax.path_in_schema, (std::vector<std::string>{"bbox", "xmax"}));
  EXPECT_EQ(xmax.statistics->null_count, 200);

  // Page index: 4 pages of <= 300 rows per chunk of 1000, offsets matching the file.
  ASSERT_TRUE(cc.offset_index_offset.has_value());
  OffsetIndex oi;
  ASSERT_OK(DeserializeThrift(
      std::string_view(file).substr(*cc.offset_index_offset, *cc.offset_index_length), &oi));
  ASSERT_EQ(oi.page_locations.size(), 4u);
  EXPECT_EQ(oi.page_locations[0].offset, cmd.data_page_offset);
  EXPECT_EQ(oi.page_locations[1].first_row_index, 300);
  PageHeader ph;
  ASSERT_OK(DeserializeThrift(std::string_view(file).substr(oi.page_locations[1].offset), &ph));
  EXPECT_EQ(ph.type, PageType::kDataPage);
  EXPECT_EQ(ph.data_page_header->num_values, 300);
  ColumnIndex ci;
  ASSERT_TRUE(cc.column_index_offset.has_value());
  ASSERT_OK(DeserializeThrift(
      std::string_view(file).substr(*cc.column_index_offset, *cc.column_index_length), &ci));
  EXPECT_EQ(ci.boundary_order, BoundaryOrder::kAscending);
  EXPECT_EQ(ci.null_pages, std::vector<bool>(4, false));
}

TEST(FileWriterTest, AllTypesEncodingsCodecsReadByIndependentReaders) {
  const Schema schema = AllTypesSchema();
  struct Variant {
    std::string name;
    bool dictionary;
    bool alt_encodings;
  };
  const std::vector<Variant> variants = {
      {"dict", true, false}, {"plain", false, false}, {"delta_bss", false, true}};
  const std::vector<CompressionCodec> codecs = {
      CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
      CompressionCodec::kZstd,         CompressionCodec::kLz4Raw, CompressionCodec::kBrotli};
  for (const auto& variant : variants) {
    for (CompressionCodec codec : codecs) {
      WriterOptions options;
      options.row_group_rows = 700;
      options.column.max_rows_per_page = 250;
      options.column.codec = codec;
      options.column.dictionary = variant.dictionary;
      if (variant.alt_encodings) {
        for (const auto& leaf : schema.leaves()) {
          ColumnWriteOptions o = options.column;
          switch (leaf.physical_type) {
            case PhysicalType::kInt32:
            case PhysicalType::kInt64:
              o.encoding = Encoding::kDeltaBinaryPacked;
              break;
            case PhysicalType::kFloat:
            case PhysicalType::kDouble:
              o.encoding = Encoding::kByteStreamSplit;
              break;
            case PhysicalType::kByteArray:
              o.encoding = leaf.path[0].starts_with("str") ? Encoding::kDeltaLengthByteArray
                                                           : Encoding::kDeltaByteArray;
              break;
            default:
              break;
          }
          options.column_options[leaf.dotted_path()] = o;
        }
      }
      const std::string name =
          "all_" + variant.name + "_" + std::string(CodecName(codec)) + ".parquet";
      const std::string path =
          WriteToDisk(name, WriteFile(schema, options, {AllTypesBatch(schema, 2000)}));
      const CommandResult r = Verify(path, "--strict-values --quiet");
      EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.output;
    }
  }
}

}  // namespace
}  // namespace geolake::parquet
