#include "geolake/formats/parquet/reader.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "geolake/core/hex.h"
#include "geolake/formats/parquet/compression.h"
#include "geolake/formats/parquet/encoding.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// The parquet-testing corpus is third-party and only in the shared folder; tests that read it
// skip (with the reason) when it is absent.
const std::string kCorpus = ::geolake::testing::ParquetCorpusDir();
const std::string kOracles = ::geolake::testing::OraclesDir();

/// A RandomAccessFile over bytes in memory.
class MemoryFile : public io::RandomAccessFile {
 public:
  MemoryFile(std::string data, std::string path) : data_(std::move(data)), path_(std::move(path)) {}
  std::uint64_t size() const override { return data_.size(); }
  Status ReadAt(std::uint64_t offset, std::uint64_t length, std::string* out) const override {
    if (offset > data_.size() || length > data_.size() - offset) {
      return Status::CorruptData("'" + path_ + "': read of " + std::to_string(length) +
                                 " bytes at offset " + std::to_string(offset) + " past the end");
    }
    out->assign(data_, offset, length);
    return Status::OK();
  }
  const std::string& path() const override { return path_; }

 private:
  std::string data_;
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<std::unique_ptr<FileReader>> OpenPath(const std::string& path,
                                             const ReaderOptions& options = {}) {
  auto file = std::make_shared<MemoryFile>(Slurp(path), path);
  return FileReader::Open(std::shared_ptr<const io::RandomAccessFile>(file), options);
}

// Reads every column of every row group, concatenating row groups per leaf.
Status ReadAll(const FileReader& reader, std::vector<std::vector<ColumnData>>* out) {
  out->clear();
  for (int rg = 0; rg < reader.num_row_groups(); ++rg) {
    std::vector<ColumnData> cols;
    for (int leaf = 0; leaf < reader.schema().num_leaves(); ++leaf) {
      GEOLAKE_ASSIGN_OR_RETURN(ColumnData c, reader.ReadColumn(rg, leaf));
      cols.push_back(std::move(c));
    }
    out->push_back(std::move(cols));
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// Failure paths on synthetic bytes.

TEST(ReaderTest, RejectsTinyFile) {
  MemoryFile f("PAR1PAR1", "tiny.parquet");
  EXPECT_THAT(FileReader::Open(&f), IsErrorWith(ErrorCode::kCorruptData, "tiny.parquet"));
}

TEST(ReaderTest, RejectsWrongMagic) {
  std::string bytes = "PAR1" + std::string(20, '\0') + std::string("\x02\0\0\0", 4) + "PAR2";
  MemoryFile f(bytes, "magic.parquet");
  EXPECT_THAT(FileReader::Open(&f), IsErrorWith(ErrorCode::kCorruptData, "magic"));
  bytes = "XXXX" + std::string(20, '\0') + std::string("\x02\0\0\0", 4) + "PAR1";
  MemoryFile g(bytes, "head.parquet");
  EXPECT_THAT(FileReader::Open(&g), IsErrorWith(ErrorCode::kCorruptData, "offset 0"));
}

TEST(ReaderTest, RejectsFooterLengthPastFile) {
  std::string bytes = "PAR1" + std::string(8, '\0') + std::string("\xff\xff\x00\x00", 4) + "PAR1";
  MemoryFile f(bytes, "len.parquet");
  EXPECT_THAT(FileReader::Open(&f), IsErrorWith(ErrorCode::kCorruptData, "footer length 65535"));
}

TEST(ReaderTest, RejectsGarbageFooter) {
  std::string bytes = "PAR1" + std::string(8, '\x7f') + std::string("\x08\0\0\0", 4) + "PAR1";
  MemoryFile f(bytes, "garbage.parquet");
  EXPECT_THAT(FileReader::Open(&f), IsErrorWith(ErrorCode::kCorruptData, "footer at offset 4"));
}

TEST(ReaderTest, EncryptedFooterIsNotImplemented) {
  std::string bytes = "PAR1" + std::string(8, '\0') + std::string("\x04\0\0\0", 4) + "PARE";
  MemoryFile f(bytes, "enc.parquet");
  EXPECT_THAT(FileReader::Open(&f), IsError(ErrorCode::kNotImplemented));
}

TEST(ReaderTest, EveryTruncationOfARealFileFailsCleanly) {
  const std::string path = kCorpus + "/data/alltypes_plain.snappy.parquet";
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  const std::string bytes = Slurp(path);
  for (std::size_t len = 0; len < bytes.size(); len += 7) {
    MemoryFile f(bytes.substr(0, len), "cut.parquet");
    auto reader = FileReader::Open(&f);
    EXPECT_FALSE(reader.ok()) << "length " << len;
    if (!reader.ok()) {
      EXPECT_EQ(reader.status().code(), ErrorCode::kCorruptData) << len;
    }
  }
}

TEST(ReaderTest, FlippedBytesNeverCrash) {
  const std::string path = kCorpus + "/data/alltypes_dictionary.parquet";
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  const std::string bytes = Slurp(path);
  std::mt19937 rng(5);
  ReaderOptions options;
  options.max_decoded_bytes = 64 << 20;
  for (int iter = 0; iter < 2000; ++iter) {
    std::string mutated = bytes;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) {
      mutated[rng() % mutated.size()] = static_cast<char>(rng());
    }
    MemoryFile f(mutated, "flip.parquet");
    auto reader = FileReader::Open(&f, options);
    if (!reader.ok()) continue;
    std::vector<std::vector<ColumnData>> cols;
    (void)ReadAll(**reader, &cols);
  }
}

// Builds a one-column file ("x") from hand-made pages, to reach failure paths that no writer
// produces.
struct TestPage {
  PageHeader header;
  std::string body;
};

std::string BuildFile(PhysicalType type, Repetition repetition, CompressionCodec codec,
                      const std::vector<TestPage>& pages, std::int64_t num_values,
                      std::int64_t num_rows) {
  std::string file = "PAR1";
  for (const TestPage& p : pages) {
    file += SerializeThrift(p.header);
    file += p.body;
  }
  FileMetaData md;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  SchemaElement leaf;
  leaf.name = "x";
  leaf.type = type;
  leaf.repetition_type = repetition;
  md.schema = {root, leaf};
  md.num_rows = num_rows;
  ColumnMetaData cm;
  cm.type = type;
  cm.encodings = {Encoding::kPlain, Encoding::kRle};
  cm.path_in_schema = {"x"};
  cm.codec = codec;
  cm.num_values = num_values;
  cm.total_compressed_size = static_cast<std::int64_t>(file.size()) - 4;
  cm.total_uncompressed_size = cm.total_compressed_size;
  cm.data_page_offset = 4;
  ColumnChunk cc;
  cc.meta_data = cm;
  RowGroup rg;
  rg.columns = {cc};
  rg.num_rows = num_rows;
  rg.total_byte_size = cm.total_uncompressed_size;
  md.row_groups = {rg};
  const std::string footer = SerializeThrift(md);
  file += footer;
  const auto len = static_cast<std::uint32_t>(footer.size());
  file.append(reinterpret_cast<const char*>(&len), 4);
  file += "PAR1";
  return file;
}

TestPage DataPageV1(std::int32_t num_values, Encoding encoding, std::string body,
                    std::int32_t uncompressed_size = -1) {
  TestPage p;
  p.header.type = PageType::kDataPage;
  p.header.compressed_page_size = static_cast<std::int32_t>(body.size());
  p.header.uncompressed_page_size =
      uncompressed_size >= 0 ? uncompressed_size : static_cast<std::int32_t>(body.size());
  DataPageHeader dh;
  dh.num_values = num_values;
  dh.encoding = encoding;
  p.header.data_page_header = dh;
  p.body = std::move(body);
  return p;
}

Status ReadOnlyColumn(const std::string& bytes, const ReaderOptions& options,
                      ColumnData* out = nullptr) {
  MemoryFile f(bytes, "built.parquet");
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, FileReader::Open(&f, options));
  GEOLAKE_ASSIGN_OR_RETURN(ColumnData c, reader->ReadColumn(0, 0));
  if (out != nullptr) *out = std::move(c);
  return Status::OK();
}

TEST(ReaderTest, HandBuiltOptionalColumnDecodes) {
  // Levels 1,0,1 (length-prefixed RLE/bit-packed), then two PLAIN int32 values.
  std::string body;
  const std::int16_t levels[3] = {1, 0, 1};
  EncodeRleBitPackedWithLength(levels, 3, 1, &body);
  const std::int32_t values[2] = {-7, 42};
  EncodePlain(values, 2, &body);
  const std::string file =
      BuildFile(PhysicalType::kInt32, Repetition::kOptional, CompressionCodec::kUncompressed,
                {DataPageV1(3, Encoding::kPlain, body)}, 3, 3);
  ColumnData c;
  ASSERT_OK(ReadOnlyColumn(file, {}, &c));
  EXPECT_EQ(c.def_levels, (std::vector<std::int16_t>{1, 0, 1}));
  EXPECT_EQ(c.int32_values, (std::vector<std::int32_t>{-7, 42}));
}

// Issue 17 item 19: a page whose header carries a CRC is checked against it; a flipped byte in
// an uncompressed body otherwise changed a value silently.
TEST(ReaderTest, PageCrcIsVerifiedWhenPresent) {
  std::string body;
  const std::int32_t values[3] = {1, 2, 3};
  EncodePlain(values, 3, &body);
  TestPage page = DataPageV1(3, Encoding::kPlain, body);
  page.header.crc = static_cast<std::int32_t>(crc32(crc32(0L, Z_NULL, 0),
                                                    reinterpret_cast<const Bytef*>(body.data()),
                                                    static_cast<uInt>(body.size())));
  const auto file = [](const TestPage& p) {
    return BuildFile(PhysicalType::kInt32, Repetition::kRequired, CompressionCodec::kUncompressed,
                     {p}, 3, 3);
  };
  ColumnData c;
  ASSERT_OK(ReadOnlyColumn(file(page), {}, &c));
  EXPECT_EQ(c.int32_values, (std::vector<std::int32_t>{1, 2, 3}));

  TestPage flipped = page;
  flipped.body[4] ^= 0x01;  // the second value: 2 becomes 3
  EXPECT_THAT(ReadOnlyColumn(file(flipped), {}), IsErrorWith(ErrorCode::kCorruptData, "CRC"));
  ReaderOptions trusting;
  trusting.verify_page_crc = false;  // for foreign files with wrong CRCs
  ASSERT_OK(ReadOnlyColumn(file(flipped), trusting, &c));
  EXPECT_EQ(c.int32_values, (std::vector<std::int32_t>{1, 3, 3}));

  TestPage no_crc = flipped;
  no_crc.header.crc.reset();  // the field is optional: nothing to verify
  ASSERT_OK(ReadOnlyColumn(file(no_crc), {}, &c));
}

// Issue 17 item 5: a row group whose declared row count disagrees with its flat columns is
// refused at open; readers iterate and size by that count (an overstated one made a query
// allocate without bound, an understated one returned fewer rows).
TEST(ReaderTest, RowCountsThatDisagreeWithTheColumnsAreRefused) {
  std::string body;
  const std::int32_t values[3] = {1, 2, 3};
  EncodePlain(values, 3, &body);
  const auto open = [&](std::int64_t num_values, std::int64_t num_rows) {
    const std::string file =
        BuildFile(PhysicalType::kInt32, Repetition::kRequired, CompressionCodec::kUncompressed,
                  {DataPageV1(3, Encoding::kPlain, body)}, num_values, num_rows);
    MemoryFile f(file, "rows.parquet");
    return FileReader::Open(&f).status();
  };
  EXPECT_OK(open(3, 3));
  EXPECT_THAT(
      open(3, std::int64_t{1} << 40),
      IsErrorWith(ErrorCode::kCorruptData, "declares 1099511627776 rows, its column 'x' 3"));
  EXPECT_THAT(open(3, 2), IsErrorWith(ErrorCode::kCorruptData, "declares 2 rows"));
}

TEST(ReaderTest, DecompressionBombsAreRefused) {
  const std::string zeros(8 << 20, '\0');
  std::string compressed;
  ASSERT_OK(Compress(CompressionCodec::kZstd, zeros, &compressed));
  ASSERT_LT(compressed.size(), 4096u);
  // Declared honestly, but above the reader's page limit.
  ReaderOptions small;
  small.max_page_bytes = 1 << 20;
  std::string file =
      BuildFile(PhysicalType::kInt32, Repetition::kRequired, CompressionCodec::kZstd,
                {DataPageV1(2 << 20, Encoding::kPlain, compressed, 8 << 20)}, 2 << 20, 2 << 20);
  EXPECT_THAT(ReadOnlyColumn(file, small), IsErrorWith(ErrorCode::kCorruptData, "limit"));
  // Declared small: the stream must not be allowed to expand past the declaration.
  file = BuildFile(PhysicalType::kInt32, Repetition::kRequired, CompressionCodec::kZstd,
                   {DataPageV1(16, Encoding::kPlain, compressed, 64)}, 16, 16);
  EXPECT_THAT(ReadOnlyColumn(file, {}), IsError(ErrorCode::kCorruptData));
}

TEST(ReaderTest, AbsurdCountsAreRefusedWithoutAllocating) {
  ReaderOptions options;
  options.max_decoded_bytes = 16 << 20;
  // 2^31-1 PLAIN values in 8 bytes.
  std::string file = BuildFile(
      PhysicalType::kInt64, Repetition::kRequired, CompressionCodec::kUncompressed,
      {DataPageV1(0x7fffffff, Encoding::kPlain, std::string(8, 'a'))}, 0x7fffffff, 0x7fffffff);
  EXPECT_THAT(ReadOnlyColumn(file, options), IsError(ErrorCode::kCorruptData));
  // 2^31-1 nulls in a 5-byte RLE run: legal in principle, refused by the decoded-size limit.
  // Length prefix 6, run header ULEB((2^31-1) << 1), RLE value 0 (null).
  const std::string body("\x06\x00\x00\x00\xfe\xff\xff\xff\x0f\x00", 10);
  file = BuildFile(PhysicalType::kInt64, Repetition::kOptional, CompressionCodec::kUncompressed,
                   {DataPageV1(0x7fffffff, Encoding::kPlain, body)}, 0x7fffffff, 0x7fffffff);
  EXPECT_THAT(ReadOnlyColumn(file, options), IsErrorWith(ErrorCode::kCorruptData, "limit"));
  // A page whose compressed size runs past the column chunk.
  TestPage page = DataPageV1(1, Encoding::kPlain, std::string(8, 'b'));
  page.header.compressed_page_size = 1000;
  page.header.uncompressed_page_size = 1000;
  file = BuildFile(PhysicalType::kInt64, Repetition::kRequired, CompressionCodec::kUncompressed,
                   {page}, 1, 1);
  EXPECT_THAT(ReadOnlyColumn(file, {}), IsErrorWith(ErrorCode::kCorruptData, "offset 4"));
  // The chunk declares more values than its pages hold.
  file = BuildFile(PhysicalType::kInt64, Repetition::kRequired, CompressionCodec::kUncompressed,
                   {DataPageV1(1, Encoding::kPlain, std::string(8, 'c'))}, 2, 2);
  EXPECT_THAT(ReadOnlyColumn(file, {}), IsErrorWith(ErrorCode::kCorruptData, "declares 2"));
}

TEST(ReaderTest, DictionaryIndexOutOfRangeIsCorrupt) {
  TestPage dict;
  dict.header.type = PageType::kDictionaryPage;
  const std::int32_t entries[2] = {10, 20};
  EncodePlain(entries, 2, &dict.body);
  dict.header.compressed_page_size = static_cast<std::int32_t>(dict.body.size());
  dict.header.uncompressed_page_size = dict.header.compressed_page_size;
  DictionaryPageHeader dh;
  dh.num_values = 2;
  dict.header.dictionary_page_header = dh;
  std::string body;
  const std::uint32_t good[4] = {1, 0, 1, 1};
  EncodeDictionaryIndices(good, 4, 2, &body);
  std::string file =
      BuildFile(PhysicalType::kInt32, Repetition::kRequired, CompressionCodec::kUncompressed,
                {dict, DataPageV1(4, Encoding::kRleDictionary, body)}, 4, 4);
  ColumnData c;
  ASSERT_OK(ReadOnlyColumn(file, {}, &c));
  EXPECT_EQ(c.int32_values, (std::vector<std::int32_t>{20, 10, 20, 20}));
  body.clear();
  const std::uint32_t bad[4] = {1, 0, 3, 1};
  EncodeDictionaryIndices(bad, 4, 4, &body);
  file = BuildFile(PhysicalType::kInt32, Repetition::kRequired, CompressionCodec::kUncompressed,
                   {dict, DataPageV1(4, Encoding::kRleDictionary, body)}, 4, 4);
  EXPECT_THAT(ReadOnlyColumn(file, {}), IsErrorWith(ErrorCode::kCorruptData, "dictionary index"));
  // Dictionary-encoded data without a dictionary page.
  file = BuildFile(PhysicalType::kInt32, Repetition::kRequired, CompressionCodec::kUncompressed,
                   {DataPageV1(4, Encoding::kRleDictionary, body)}, 4, 4);
  EXPECT_THAT(ReadOnlyColumn(file, {}), IsErrorWith(ErrorCode::kCorruptData, "dictionary"));
}

TEST(ReaderTest, ReadsDataPageV2AndExposesStatistics) {
  const std::string path = kCorpus + "/data/datapage_v2.snappy.parquet";
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  ASSERT_OK_AND_ASSIGN(auto reader, OpenPath(path));
  EXPECT_EQ(reader->num_rows(), 5);
  ASSERT_GE(reader->schema().num_leaves(), 2);
  const int a = reader->schema().LeafIndex("a");
  ASSERT_GE(a, 0);
  ASSERT_OK_AND_ASSIGN(ColumnData col, reader->ReadColumn(0, a));
  // DuckDB: abc, abc, abc, NULL, abc.
  ASSERT_EQ(col.num_levels(), 5);
  EXPECT_EQ(col.def_levels, (std::vector<std::int16_t>{1, 1, 1, 0, 1}));
  ASSERT_EQ(col.num_values(), 4);
  EXPECT_EQ(col.bytes_at(0), "abc");
  EXPECT_EQ(col.bytes_at(3), "abc");
  const Statistics* stats = reader->column_statistics(0, a);
  ASSERT_NE(stats, nullptr);
  EXPECT_THAT(reader->ReadColumn(1, a), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(reader->ReadColumn(0, 99), IsError(ErrorCode::kInvalidArgument));
}

// Same length and the same bits (NaN payloads too). memcmp is not given the null data() of an
// empty vector, which UBSan reports.
template <typename T>
bool BitwiseEqual(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

TEST(ReaderTest, ReadIntoReusedBuffersEqualsFreshReads) {
  for (const char* name : {"alltypes_tiny_pages.parquet", "nested_lists.snappy.parquet",
                           "datapage_v2.snappy.parquet"}) {
    const std::string path = kCorpus + "/data/" + name;
    if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
    ASSERT_OK_AND_ASSIGN(auto reader, OpenPath(path));
    Batch reused;
    DecodeBuffers buffers;
    // Every row group twice, columns in two orders, so each buffer held another type before.
    for (int pass = 0; pass < 2; ++pass) {
      for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
        std::vector<int> leaves;
        for (int leaf = 0; leaf < reader->schema().num_leaves(); ++leaf) leaves.push_back(leaf);
        if (pass == 1) std::reverse(leaves.begin(), leaves.end());
        ASSERT_OK(reader->ReadRowGroupInto(rg, leaves, &reused, &buffers));
        ASSERT_OK_AND_ASSIGN(Batch fresh, reader->ReadRowGroup(rg, leaves));
        ASSERT_EQ(reused.num_rows, fresh.num_rows);
        ASSERT_EQ(reused.columns.size(), fresh.columns.size());
        for (std::size_t c = 0; c < fresh.columns.size(); ++c) {
          const ColumnData& a = reused.columns[c];
          const ColumnData& e = fresh.columns[c];
          EXPECT_EQ(a.type, e.type);
          EXPECT_EQ(a.def_levels, e.def_levels) << name << " column " << leaves[c];
          EXPECT_EQ(a.rep_levels, e.rep_levels) << name << " column " << leaves[c];
          EXPECT_EQ(a.bool_values, e.bool_values);
          EXPECT_EQ(a.int32_values, e.int32_values);
          EXPECT_EQ(a.int64_values, e.int64_values);
          EXPECT_EQ(a.byte_data, e.byte_data);
          EXPECT_EQ(a.byte_offsets, e.byte_offsets);
          EXPECT_TRUE(BitwiseEqual(a.float_values, e.float_values));
          EXPECT_TRUE(BitwiseEqual(a.double_values, e.double_values));
        }
      }
    }
    EXPECT_THAT(reader->ReadRowGroupInto(reader->num_row_groups(), {}, &reused, &buffers),
                IsError(ErrorCode::kInvalidArgument));
  }
}

TEST(ReaderTest, ProjectsColumnsOfARowGroup) {
  const std::string path = kCorpus + "/data/alltypes_plain.parquet";
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  ASSERT_OK_AND_ASSIGN(auto reader, OpenPath(path));
  const int id = reader->schema().LeafIndex("id");
  const int dbl = reader->schema().LeafIndex("double_col");
  ASSERT_OK_AND_ASSIGN(Batch batch, reader->ReadRowGroup(0, {dbl, id}));
  ASSERT_EQ(batch.columns.size(), 2u);
  EXPECT_EQ(batch.num_rows, 8);
  EXPECT_EQ(batch.columns[1].int32_values, (std::vector<std::int32_t>{4, 5, 6, 7, 2, 3, 0, 1}));
  EXPECT_EQ(batch.columns[0].double_values[1], 10.1);
}

TEST(ReaderTest, PageIndexSkipsPagesOutsideRowRanges) {
  const std::string path = kCorpus + "/data/alltypes_tiny_pages_plain.parquet";
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  ASSERT_OK_AND_ASSIGN(auto reader, OpenPath(path));
  const int id = reader->schema().LeafIndex("id");
  ASSERT_GE(id, 0);
  ASSERT_OK_AND_ASSIGN(std::optional<OffsetIndex> oi, reader->ReadOffsetIndex(0, id));
  ASSERT_TRUE(oi.has_value());
  ASSERT_GT(oi->page_locations.size(), 10u);
  ASSERT_OK_AND_ASSIGN(std::optional<ColumnIndex> ci, reader->ReadColumnIndex(0, id));
  ASSERT_TRUE(ci.has_value());
  EXPECT_EQ(ci->min_values.size(), oi->page_locations.size());

  ASSERT_OK_AND_ASSIGN(ColumnData full, reader->ReadColumn(0, id));
  const std::vector<RowRange> want = {{100, 110}, {5000, 5001}};
  ASSERT_OK_AND_ASSIGN(PageSelection sel, reader->ReadColumnPages(0, id, want));
  EXPECT_GT(sel.pages_skipped, 0);
  EXPECT_LE(sel.pages_read, 4);
  // The selected pages cover the wanted rows, and their values are the full read's values.
  std::int64_t covered = 0;
  std::size_t value_pos = 0;
  for (const RowRange& r : sel.rows) {
    covered += r.end - r.begin;
    for (std::int64_t row = r.begin; row < r.end; ++row, ++value_pos) {
      ASSERT_LT(value_pos, sel.data.int32_values.size());
      ASSERT_EQ(sel.data.int32_values[value_pos], full.int32_values[row]) << row;
    }
    EXPECT_TRUE(std::any_of(want.begin(), want.end(),
                            [&](const RowRange& w) { return w.begin < r.end && r.begin < w.end; }));
  }
  EXPECT_EQ(static_cast<std::int64_t>(sel.data.int32_values.size()), covered);
  EXPECT_LT(covered, 1000);
}

TEST(ReaderTest, ByteStreamSplitOfEveryTypeEqualsPlain) {
  // DuckDB cannot read BYTE_STREAM_SPLIT on INT32/INT64/FLBA, so the file's PLAIN twin columns
  // are the oracle: <name>_byte_stream_split must equal <name>_plain.
  const std::string path = kCorpus + "/data/byte_stream_split_extended.gzip.parquet";
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  ASSERT_OK_AND_ASSIGN(auto reader, OpenPath(path));
  int pairs = 0;
  const std::string suffix = "_byte_stream_split";
  for (int i = 0; i < reader->schema().num_leaves(); ++i) {
    const std::string name = reader->schema().leaves()[i].dotted_path();
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
    const int twin =
        reader->schema().LeafIndex(name.substr(0, name.size() - suffix.size()) + "_plain");
    ASSERT_GE(twin, 0) << name;
    for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
      ASSERT_OK_AND_ASSIGN(ColumnData a, reader->ReadColumn(rg, i));
      ASSERT_OK_AND_ASSIGN(ColumnData b, reader->ReadColumn(rg, twin));
      EXPECT_GT(a.num_values(), 0) << name;
      EXPECT_EQ(a.def_levels, b.def_levels) << name;
      EXPECT_EQ(a.int32_values, b.int32_values) << name;
      EXPECT_EQ(a.int64_values, b.int64_values) << name;
      EXPECT_TRUE(BitwiseEqual(a.float_values, b.float_values)) << name;
      EXPECT_TRUE(BitwiseEqual(a.double_values, b.double_values)) << name;
      EXPECT_EQ(a.byte_data, b.byte_data) << name;
      EXPECT_EQ(a.byte_offsets, b.byte_offsets) << name;
    }
    ++pairs;
  }
  EXPECT_GE(pairs, 5);
}

// ---------------------------------------------------------------------------------------------
// The parquet-testing corpus against DuckDB.

const char kDuckScript[] = R"JS(
const { createRequire } = require('module');
const req = createRequire(process.argv[2] + '/package.json');
const { DuckDBInstance } = req('@duckdb/node-api');
(async () => {
  const inst = await DuckDBInstance.create(':memory:', {autoinstall_known_extensions: 'false',
                                                        autoload_known_extensions: 'false'});
  const conn = await inst.connect();
  const q = async sql => (await conn.runAndReadAll(sql)).getRowObjectsJS();
  const out = {};
  for (const f of process.argv.slice(3)) {
    const src = `read_parquet('${f.replaceAll("'", "''")}', hive_partitioning=false)`;
    try {
      const cols = await q(`DESCRIBE SELECT * FROM ${src}`);
      const exprs = cols.map(c => {
        const n = '"' + c.column_name.replaceAll('"', '""') + '"';
        const t = c.column_type;
        if (t === 'BLOB') return `hex(${n})`;
        if (t === 'DATE') return `CAST(datediff('day', DATE '1970-01-01', ${n}) AS VARCHAR)`;
        if (t === 'TIMESTAMP_NS') return `CAST(epoch_ns(${n}) AS VARCHAR)`;
        if (t.startsWith('TIMESTAMP')) return `CAST(epoch_us(${n}) AS VARCHAR)`;
        if (t.startsWith('GEOMETRY')) return `hex(ST_AsWKB(${n}))`;
        if (t.includes('[') || t.startsWith('STRUCT') || t.startsWith('MAP') ||
            t.startsWith('UNION')) return `CAST(to_json(${n}) AS VARCHAR)`;
        return `CAST(${n} AS VARCHAR)`;
      });
      const sel = exprs.length ? exprs.map((e, i) => `${e} AS c${i}`).join(', ') : '1';
      const rows = await q(`SELECT ${sel} FROM ${src}`);
      out[f] = { ok: true, columns: cols.map((c, i) => ({ name: c.column_name, type: c.column_type,
                                                            values: rows.map(r => r['c' + i]) })) };
    } catch (e) {
      out[f] = { ok: false, error: String(e.message || e) };
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
)JS";

std::optional<nlohmann::json> RunDuckDb(const std::vector<std::string>& files) {
  if (!fs::exists(kOracles + "/node_modules/@duckdb/node-api")) return std::nullopt;
  const std::string script = ::geolake::testing::BuildDir() + "/pqr_duck_oracle.cjs";
  {
    std::ofstream out(script);
    out << kDuckScript;
  }
  std::string cmd = "node '" + script + "' '" + kOracles + "'";
  for (const auto& f : files) cmd += " '" + f + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string text;
  std::array<char, 65536> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) text.append(buf.data(), n);
  if (pclose(pipe) != 0 || text.empty()) return std::nullopt;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

std::string FormatDecimal(__int128 unscaled, int scale) {
  const bool negative = unscaled < 0;
  unsigned __int128 mag = negative ? -static_cast<unsigned __int128>(unscaled)
                                   : static_cast<unsigned __int128>(unscaled);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(mag % 10)));
    mag /= 10;
  } while (mag != 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) {
      digits.insert(0, static_cast<std::size_t>(scale + 1) - digits.size(), '0');
    }
    digits.insert(digits.size() - static_cast<std::size_t>(scale), ".");
  }
  return negative ? "-" + digits : digits;
}

__int128 BigEndianToInt(std::string_view bytes) {
  unsigned __int128 v = 0;
  for (unsigned char c : bytes) v = (v << 8) | c;
  const std::size_t bits = bytes.size() * 8;
  if (bits > 0 && bits < 128 && (static_cast<unsigned char>(bytes[0]) & 0x80)) {
    v |= ~static_cast<unsigned __int128>(0) << bits;  // sign-extend
  }
  return static_cast<__int128>(v);
}

// Our value of stored value `i` of a flat column, formatted as the DuckDB expression above
// formats it; nullopt when this test does not know how to compare the type.
std::optional<std::string> OurValue(const ColumnData& c, const LeafColumn& leaf, std::size_t i,
                                    const std::string& duck_type) {
  using K = LogicalType::Kind;
  const std::optional<LogicalType>& lt = leaf.logical_type;
  const K kind = lt.has_value() ? lt->kind : K::kUnrecognized;
  if (duck_type.rfind("TIME", 0) == 0 && duck_type.rfind("TIMESTAMP", 0) != 0) return std::nullopt;
  if (duck_type.rfind("INTERVAL", 0) == 0 || duck_type == "UUID") return std::nullopt;
  auto timestamp = [&](std::int64_t v, TimeUnit unit) -> std::string {
    __int128 ns = v;
    if (unit == TimeUnit::kMillis) ns *= 1000000;
    if (unit == TimeUnit::kMicros) ns *= 1000;
    if (duck_type == "TIMESTAMP_NS") return std::to_string(static_cast<std::int64_t>(ns));
    __int128 us = ns / 1000;
    if (ns % 1000 < 0) us -= 1;
    return std::to_string(static_cast<std::int64_t>(us));
  };
  switch (c.type) {
    case PhysicalType::kBoolean:
      return c.bool_values[i] ? "true" : "false";
    case PhysicalType::kInt32: {
      const std::int32_t v = c.int32_values[i];
      if (kind == K::kDecimal) return FormatDecimal(v, lt->scale);
      if (kind == K::kInteger && !lt->is_signed)
        return std::to_string(static_cast<std::uint32_t>(v));
      return std::to_string(v);
    }
    case PhysicalType::kInt64: {
      const std::int64_t v = c.int64_values[i];
      if (kind == K::kDecimal) return FormatDecimal(v, lt->scale);
      if (kind == K::kInteger && !lt->is_signed)
        return std::to_string(static_cast<std::uint64_t>(v));
      if (kind == K::kTimestamp) return timestamp(v, lt->unit);
      return std::to_string(v);
    }
    case PhysicalType::kInt96: {
      Int96 v;
      std::memcpy(&v, c.byte_data.data() + c.byte_offsets[i], 12);
      if (duck_type == "TIMESTAMP_NS") return timestamp(Int96ToUnixNanos(v), TimeUnit::kNanos);
      // Far-future Spark values overflow int64 nanoseconds; compute microseconds directly.
      const std::int64_t nanos_of_day =
          static_cast<std::int64_t>(std::uint64_t{v.words[0]} | (std::uint64_t{v.words[1]} << 32));
      const __int128 us =
          (static_cast<__int128>(v.words[2]) - 2440588) * 86400000000LL + nanos_of_day / 1000;
      return std::to_string(static_cast<std::int64_t>(us));
    }
    case PhysicalType::kFloat:
    case PhysicalType::kDouble:
      return std::nullopt;  // compared numerically by the caller
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      const std::string_view b = c.bytes_at(static_cast<std::int64_t>(i));
      if (kind == K::kDecimal) {
        if (b.size() > 16) return std::nullopt;
        return FormatDecimal(BigEndianToInt(b), lt->scale);
      }
      if (duck_type == "BLOB" || duck_type.rfind("GEOMETRY", 0) == 0)
        return HexEncode(b, HexCase::kUpper);
      if (duck_type == "VARCHAR") return std::string(b);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// ---- Nested columns: reassemble rows from levels into JSON and compare with to_json().

bool IsListNode(const Field& f) {
  return (f.logical_type.has_value() && f.logical_type->kind == LogicalType::Kind::kList) ||
         f.converted_type == ConvertedType::kList;
}
bool IsMapNode(const Field& f) {
  return (f.logical_type.has_value() && f.logical_type->kind == LogicalType::Kind::kMap) ||
         f.converted_type == ConvertedType::kMap;
}

const nlohmann::json kAny = "__any__";

nlohmann::json LeafJson(const ColumnData& c, const Field& f, std::size_t i) {
  using K = LogicalType::Kind;
  const K kind = f.logical_type.has_value() ? f.logical_type->kind : K::kUnrecognized;
  const bool plain_int = kind == K::kUnrecognized || kind == K::kInteger;
  switch (c.type) {
    case PhysicalType::kBoolean:
      return c.bool_values[i] != 0;
    case PhysicalType::kInt32:
      return plain_int ? nlohmann::json(c.int32_values[i]) : kAny;
    case PhysicalType::kInt64:
      return plain_int ? nlohmann::json(c.int64_values[i]) : kAny;
    case PhysicalType::kFloat:
      return std::isnan(c.float_values[i]) ? kAny : nlohmann::json(c.float_values[i]);
    case PhysicalType::kDouble:
      return std::isnan(c.double_values[i]) ? kAny : nlohmann::json(c.double_values[i]);
    case PhysicalType::kByteArray:
      if (kind == K::kString || kind == K::kEnum || kind == K::kJson) {
        return std::string(c.bytes_at(static_cast<std::int64_t>(i)));
      }
      return kAny;
    default:
      return kAny;
  }
}

// Adds one leaf's levels and values to `rows` (one JSON value per row of the top field).
void AssembleLeaf(const std::vector<const Field*>& chain, const ColumnData& c,
                  std::vector<nlohmann::json>* rows, std::size_t first_row) {
  std::vector<std::size_t> idx(chain.size() + 1, 0);
  std::size_t row = first_row - 1;
  std::size_t value = 0;
  const std::size_t n = static_cast<std::size_t>(c.num_levels());
  for (std::size_t l = 0; l < n; ++l) {
    const int r = c.rep_levels.empty() ? 0 : c.rep_levels[l];
    const int d = c.def_levels.empty() ? c.max_definition_level : c.def_levels[l];
    if (r == 0) ++row;
    if (row >= rows->size()) rows->resize(row + 1);
    nlohmann::json* cur = &(*rows)[row];
    int cur_def = 0, cur_rep = 0;
    for (std::size_t k = 0; k < chain.size(); ++k) {
      const Field& node = *chain[k];
      if (node.repetition != Repetition::kRequired) ++cur_def;
      if (node.repetition == Repetition::kRepeated) {
        ++cur_rep;
        if (d < cur_def) {
          if (cur->is_null()) *cur = nlohmann::json::array();
          break;
        }
        if (!cur->is_array()) *cur = nlohmann::json::array();
        if (cur_rep > r) {
          idx[cur_rep] = 0;
        } else if (cur_rep == r) {
          ++idx[cur_rep];
        }
        while (cur->size() <= idx[cur_rep]) cur->push_back(nullptr);
        cur = &(*cur)[idx[cur_rep]];
      } else if (node.repetition == Repetition::kOptional && d < cur_def) {
        break;  // null here (the slot stays null)
      }
      if (k + 1 == chain.size()) {
        *cur = LeafJson(c, node, value++);
        break;
      }
      const Field& child = *chain[k + 1];
      const Field* parent = k > 0 ? chain[k - 1] : nullptr;
      if (IsListNode(node)) {
        continue;  // the repeated child's array fills this slot
      }
      if (IsMapNode(node)) {
        if (!cur->is_object()) *cur = nlohmann::json::object();
        cur = &(*cur)["__map__"];
        continue;
      }
      if (node.repetition == Repetition::kRepeated && parent != nullptr && IsListNode(*parent) &&
          node.children.size() == 1 && node.name != "array" &&
          !(node.name.size() > 6 && node.name.ends_with("_tuple"))) {
        continue;  // 3-level list: the element fills the list entry
      }
      if (!cur->is_object()) *cur = nlohmann::json::object();
      cur = &(*cur)[child.name];
    }
  }
}

void CollectChains(const Field& f, std::vector<const Field*>* path,
                   std::vector<std::vector<const Field*>>* out) {
  path->push_back(&f);
  if (f.is_group()) {
    for (const Field& child : f.children) CollectChains(child, path, out);
  } else {
    out->push_back(*path);
  }
  path->pop_back();
}

// Turns {"__map__": [{"key": k, "value": v}, ...]} into {k: v, ...}, recursively.
void FinishMaps(nlohmann::json* j) {
  if (j->is_array()) {
    for (auto& e : *j) FinishMaps(&e);
  } else if (j->is_object()) {
    for (auto& [key, v] : j->items()) FinishMaps(&v);
    if (j->contains("__map__")) {
      nlohmann::json m = nlohmann::json::object();
      const nlohmann::json pairs = (*j)["__map__"];
      if (pairs.is_array()) {
        for (const auto& p : pairs) {
          if (!p.is_object() || !p.contains("key")) continue;
          const nlohmann::json& k = p["key"];
          m[k.is_string() ? k.get<std::string>() : k.dump()] =
              p.contains("value") ? p["value"] : nlohmann::json();
        }
      }
      *j = m;
    }
  }
}

bool JsonMatches(const nlohmann::json& ours, const nlohmann::json& theirs) {
  if (ours == kAny) return true;
  if (ours.is_null() || theirs.is_null()) return ours.is_null() && theirs.is_null();
  if (ours.is_number() && theirs.is_number()) {
    const double a = ours.get<double>(), b = theirs.get<double>();
    return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b));
  }
  if (ours.is_array() && theirs.is_array()) {
    if (ours.size() != theirs.size()) return false;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      if (!JsonMatches(ours[i], theirs[i])) return false;
    }
    return true;
  }
  if (ours.is_object() && theirs.is_object()) {
    if (ours.size() != theirs.size()) return false;
    for (const auto& [key, v] : ours.items()) {
      if (!theirs.contains(key) || !JsonMatches(v, theirs[key])) return false;
    }
    return true;
  }
  return ours == theirs;
}

// Compares one nested top-level field (index `top`) with DuckDB's to_json() strings.
std::string CompareNested(const FileReader& reader,
                          const std::vector<std::vector<ColumnData>>& data, int top,
                          const nlohmann::json& values) {
  const Schema& schema = reader.schema();
  std::vector<std::vector<const Field*>> chains;
  std::vector<const Field*> path;
  CollectChains(schema.fields()[top], &path, &chains);
  std::vector<int> leaf_ids;
  for (int i = 0; i < schema.num_leaves(); ++i) {
    if (schema.leaves()[i].top_level_field == top) leaf_ids.push_back(i);
  }
  if (leaf_ids.size() != chains.size()) return "leaf count mismatch";
  std::vector<nlohmann::json> rows;
  for (const auto& rg : data) {
    const std::size_t first = rows.size();
    for (std::size_t k = 0; k < chains.size(); ++k) {
      AssembleLeaf(chains[k], rg[leaf_ids[k]], &rows, first);
    }
  }
  if (rows.size() != values.size()) {
    return std::to_string(rows.size()) + " rows, DuckDB " + std::to_string(values.size());
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    FinishMaps(&rows[r]);
    const nlohmann::json theirs =
        values[r].is_null() ? nlohmann::json()
                            : nlohmann::json::parse(values[r].get<std::string>(), nullptr, false);
    if (!JsonMatches(rows[r], theirs)) {
      return "row " + std::to_string(r) + ": ours " + rows[r].dump().substr(0, 150) + ", DuckDB " +
             theirs.dump().substr(0, 150);
    }
  }
  return "";
}

struct FileOutcome {
  bool read_ok = false;
  std::string error;
  int compared_columns = 0;
  int skipped_columns = 0;
  std::vector<std::string> mismatches;
};

// Compares the flat top-level columns of `reader` with DuckDB's output for the file.
void CompareWithDuckDb(const FileReader& reader, const std::vector<std::vector<ColumnData>>& data,
                       const nlohmann::json& duck, FileOutcome* outcome) {
  const Schema& schema = reader.schema();
  for (const auto& col : duck["columns"]) {
    const std::string name = col["name"];
    const std::string type = col["type"];
    const nlohmann::json& values = col["values"];
    const int leaf_idx = schema.LeafIndex(name);
    if (leaf_idx < 0 || schema.leaves()[leaf_idx].max_repetition_level > 0) {
      int top = -1;
      for (std::size_t f = 0; f < schema.fields().size(); ++f) {
        if (schema.fields()[f].name == name) top = static_cast<int>(f);
      }
      if (top < 0) {
        ++outcome->skipped_columns;
        continue;
      }
      const std::string problem = CompareNested(reader, data, top, values);
      if (problem.empty()) {
        ++outcome->compared_columns;
      } else {
        outcome->mismatches.push_back(name + " (" + type + "): " + problem);
      }
      continue;
    }
    const LeafColumn& leaf = schema.leaves()[leaf_idx];
    std::size_t row = 0;
    bool unsupported = false;
    std::string mismatch;
    for (const auto& rg : data) {
      const ColumnData& c = rg[leaf_idx];
      std::size_t value_idx = 0;
      const std::size_t levels = static_cast<std::size_t>(c.num_levels());
      for (std::size_t l = 0; l < levels && mismatch.empty() && !unsupported; ++l, ++row) {
        if (row >= values.size()) {
          mismatch = "more rows than DuckDB";
          break;
        }
        const bool is_null =
            leaf.max_definition_level > 0 && c.def_levels[l] < leaf.max_definition_level;
        const nlohmann::json& expect = values[row];
        if (is_null || expect.is_null()) {
          if (is_null != expect.is_null()) {
            mismatch = "row " + std::to_string(row) + ": null mismatch (ours " +
                       (is_null ? "null" : "value") + ")";
          }
          continue;
        }
        const std::string want = expect;
        if (c.type == PhysicalType::kFloat || c.type == PhysicalType::kDouble) {
          const double ours = c.type == PhysicalType::kFloat ? c.float_values[value_idx]
                                                             : c.double_values[value_idx];
          const double theirs = c.type == PhysicalType::kFloat
                                    ? static_cast<double>(std::strtof(want.c_str(), nullptr))
                                    : std::strtod(want.c_str(), nullptr);
          if (!(ours == theirs || (std::isnan(ours) && std::isnan(theirs)))) {
            if (type != "FLOAT" && type != "DOUBLE") {
              unsupported = true;
            } else {
              mismatch = "row " + std::to_string(row) + ": ours " + std::to_string(ours) +
                         ", DuckDB " + want;
            }
          }
        } else {
          const std::optional<std::string> ours = OurValue(c, leaf, value_idx, type);
          if (!ours.has_value()) {
            unsupported = true;
          } else if (*ours != want) {
            mismatch = "row " + std::to_string(row) + ": ours '" + ours->substr(0, 60) +
                       "', DuckDB '" + want.substr(0, 60) + "'";
          }
        }
        ++value_idx;
      }
      if (!mismatch.empty() || unsupported) break;
    }
    if (unsupported) {
      ++outcome->skipped_columns;
    } else if (!mismatch.empty()) {
      outcome->mismatches.push_back(name + " (" + type + "): " + mismatch);
    } else if (row != values.size()) {
      outcome->mismatches.push_back(name + ": " + std::to_string(row) + " rows, DuckDB " +
                                    std::to_string(values.size()));
    } else {
      ++outcome->compared_columns;
    }
  }
}

std::vector<std::string> CorpusFiles(const std::string& dir) {
  std::vector<std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".parquet") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ReaderCorpusTest, ValuesEqualDuckDb) {
  std::vector<std::string> files = CorpusFiles(kCorpus + "/data");
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  for (const std::string& f : CorpusFiles(kCorpus + "/data/geospatial")) files.push_back(f);
  // DuckDB needs 8+ GiB for large_string_map.brotli.parquet (two rows of ~1 GiB strings).
  std::vector<std::string> duck_files;
  for (const auto& f : files) {
    if (f.find("large_string_map") == std::string::npos) duck_files.push_back(f);
  }
  std::optional<nlohmann::json> duck = RunDuckDb(duck_files);
  if (auto why = ::geolake::testing::MissingOracle("node_modules/@duckdb/node-api")) {
    GTEST_SKIP() << *why;
  }
  ASSERT_TRUE(duck.has_value() && !duck->is_discarded()) << "the DuckDB oracle failed";

  // Files DuckDB reads whose values must all match ours.
  const std::set<std::string> must_pass = {
      "alltypes_dictionary.parquet",
      "alltypes_plain.parquet",
      "alltypes_plain.snappy.parquet",
      "alltypes_tiny_pages.parquet",
      "alltypes_tiny_pages_plain.parquet",
      "byte_stream_split.zstd.parquet",
      "datapage_v2.snappy.parquet",
      "delta_binary_packed.parquet",
      "delta_byte_array.parquet",
      "delta_encoding_optional_column.parquet",
      "delta_encoding_required_column.parquet",
      "delta_length_byte_array.parquet",
      "nulls.snappy.parquet",
      "nested_lists.snappy.parquet",
      "nested_structs.rust.parquet",
  };
  int passed = 0, failed = 0;
  std::ostringstream report;
  for (const std::string& path : files) {
    const std::string name = fs::path(path).filename();
    const nlohmann::json d = duck->contains(path) ? (*duck)[path] : nlohmann::json();
    FileOutcome outcome;
    // The corpus's files with deliberately wrong page CRCs are refused by default (see
    // CorpusPageCrcs); DuckDB does not check CRCs, so their values are compared unchecked.
    ReaderOptions options;
    options.verify_page_crc = name.find("corrupt-checksum") == std::string::npos;
    auto reader = OpenPath(path, options);
    std::vector<std::vector<ColumnData>> data;
    Status st = reader.ok() ? ReadAll(**reader, &data) : reader.status();
    outcome.read_ok = st.ok();
    outcome.error = st.ToString();
    const bool duck_ok = d.is_object() && d["ok"].get<bool>();
    if (outcome.read_ok && duck_ok) CompareWithDuckDb(**reader, data, d, &outcome);
    const bool pass = outcome.read_ok && duck_ok && outcome.mismatches.empty();
    (pass ? passed : failed) += 1;
    report << (pass ? "PASS " : "FAIL ") << name;
    if (outcome.read_ok && duck_ok) {
      report << " (" << outcome.compared_columns << " columns equal, " << outcome.skipped_columns
             << " not compared)";
    }
    if (!outcome.read_ok) report << " ours: " << outcome.error.substr(0, 160);
    if (!duck_ok)
      report << " duckdb: " << (d.is_object() ? d.value("error", "?").substr(0, 100) : "?");
    for (const auto& m : outcome.mismatches) report << "\n    " << m;
    report << "\n";
    if (must_pass.count(name)) {
      EXPECT_TRUE(pass) << name << ": " << outcome.error
                        << (outcome.mismatches.empty() ? "" : " " + outcome.mismatches[0]);
      EXPECT_GT(outcome.compared_columns, 0) << name;
    }
    // Whatever DuckDB reads, we must read too.
    if (duck_ok) {
      EXPECT_TRUE(outcome.read_ok) << name << ": " << outcome.error;
    }
  }
  std::printf("%s%d passed, %d failed\n", report.str().c_str(), passed, failed);
}

// Issue 17 item 19: page CRCs written by other writers (parquet-testing's *checksum* files) are
// verified: the right ones read, the corrupt ones are kCorruptData unless verification is off.
TEST(ReaderCorpusTest, CorpusPageCrcs) {
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  int checked = 0;
  for (const std::string& path : CorpusFiles(kCorpus + "/data")) {
    const std::string name = fs::path(path).filename();
    if (name.find("checksum") == std::string::npos) continue;
    SCOPED_TRACE(name);
    ++checked;
    std::vector<std::vector<ColumnData>> data;
    ASSERT_OK_AND_ASSIGN(auto reader, OpenPath(path));
    if (name.find("corrupt") == std::string::npos) {
      EXPECT_OK(ReadAll(*reader, &data));
      continue;
    }
    EXPECT_THAT(ReadAll(*reader, &data), IsErrorWith(ErrorCode::kCorruptData, "CRC mismatch"));
    ReaderOptions trusting;
    trusting.verify_page_crc = false;
    ASSERT_OK_AND_ASSIGN(auto unchecked, OpenPath(path, trusting));
    EXPECT_OK(ReadAll(*unchecked, &data));
  }
  EXPECT_EQ(checked, 6);
}

TEST(ReaderCorpusTest, BadDataIsRefusedWithCorruptData) {
  const std::vector<std::string> files = CorpusFiles(kCorpus + "/bad_data");
  if (auto why = ::geolake::testing::MissingParquetCorpus()) GTEST_SKIP() << *why;
  for (const std::string& path : files) {
    auto reader = OpenPath(path);
    Status st = reader.status();
    if (reader.ok()) {
      std::vector<std::vector<ColumnData>> data;
      st = ReadAll(**reader, &data);
    }
    const std::string name = fs::path(path).filename();
    std::printf("%s: %s\n", name.c_str(), st.ToString().substr(0, 200).c_str());
    if (name == "ARROW-GH-43605.parquet") {
      // Dictionary indices of bit width 0 into a larger dictionary: they all address entry 0.
      // Arrow once crashed on it; DuckDB reads it (21186 rows, one distinct value) and so do we.
      EXPECT_OK(st);
      continue;
    }
    EXPECT_THAT(st, IsError(ErrorCode::kCorruptData)) << path;
  }
}

}  // namespace
}  // namespace geolake::parquet
