/// \file
/// Helpers of the FileWriter tests (file_writer_test.cc, file_writer_slow_test.cc; include only
/// from those): an in-memory OutputStream, a schema with every supported type and a batch of it,
/// writing and re-reading files, the column-option variants, and running verify_parquet.mjs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet::file_writer_testing {

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

inline std::string TempDir() {
  static const std::string dir = [] {
    auto p = std::filesystem::temp_directory_path() /
             ("geolake_parquet_writer_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return dir;
}

inline std::string WriteToDisk(const std::string& name, const std::string& bytes) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

using ::geolake::testing::CommandResult;
inline CommandResult Run(const std::string& command) {
  return ::geolake::testing::RunCommand(command);
}

inline std::string OracleScript() { return ::geolake::testing::OraclePath("verify_parquet.mjs"); }

// Runs the three independent readers; fails the test if they are not installed.
inline CommandResult Verify(const std::string& path, const std::string& args) {
  if (!std::filesystem::exists(OracleScript()) || Run("node --version").exit_code != 0) {
    ADD_FAILURE() << "oracle readers missing: need node and " << OracleScript()
                  << " (run `make test`, which installs them)";
    return {};
  }
  return Run("node " + OracleScript() + " " + path + " " + args);
}

// ---------------------------------------------------------------------------------------------
// A schema with every supported type, required and optional.

inline Field Leaf(const std::string& name, PhysicalType type, Repetition rep, std::int32_t id,
                  std::optional<LogicalType> lt = std::nullopt) {
  return Field::Leaf(name, type, rep, id, std::move(lt));
}

inline Schema AllTypesSchema() {
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
inline Batch AllTypesBatch(const Schema& schema, std::int64_t rows, std::int64_t first_row = 0) {
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

inline std::string WriteFile(const Schema& schema, const WriterOptions& options,
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
inline Result<std::unique_ptr<FileReader>> OpenFile(const std::string& path) {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> file,
                           io::MakeLocalFileIO()->OpenRead(path));
  return FileReader::Open(std::shared_ptr<const io::RandomAccessFile>(std::move(file)));
}

inline FileMetaData ReadFooter(const std::string& file) {
  FileMetaData md;
  EXPECT_GE(file.size(), 12u);
  EXPECT_EQ(file.substr(0, 4), "PAR1");
  EXPECT_EQ(file.substr(file.size() - 4), "PAR1");
  std::uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  EXPECT_OK(DeserializeThrift(std::string_view(file).substr(file.size() - 8 - len, len), &md));
  return md;
}

inline const std::vector<CompressionCodec>& AllCodecs() {
  static const std::vector<CompressionCodec> codecs = {
      CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
      CompressionCodec::kZstd,         CompressionCodec::kLz4Raw, CompressionCodec::kBrotli};
  return codecs;
}

// The value encoding to test for a leaf in the "alternative encodings" variant.
inline Encoding AltEncoding(const LeafColumn& leaf) {
  switch (leaf.physical_type) {
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
      return Encoding::kDeltaBinaryPacked;
    case PhysicalType::kFloat:
    case PhysicalType::kDouble:
      return Encoding::kByteStreamSplit;
    case PhysicalType::kByteArray:
      return leaf.path[0].starts_with("str") ? Encoding::kDeltaLengthByteArray
                                             : Encoding::kDeltaByteArray;
    default:
      return Encoding::kPlain;
  }
}

enum class Variant { kDictionary, kPlain, kAlternative };

inline ColumnWriteOptions VariantOptions(Variant v, const LeafColumn& leaf,
                                         CompressionCodec codec) {
  ColumnWriteOptions o;
  o.max_rows_per_page = 250;
  o.codec = codec;
  o.dictionary = v == Variant::kDictionary;
  if (v == Variant::kAlternative) o.encoding = AltEncoding(leaf);
  return o;
}

}  // namespace geolake::parquet::file_writer_testing
