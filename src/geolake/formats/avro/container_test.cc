#include "geolake/formats/avro/container.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "geolake/formats/avro/test_util.h"
#include "geolake/testing/testing.h"

namespace geolake::avro {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using testing::CanonRecords;
using testing::FixtureAvroFiles;
using testing::ReadFileBytes;
using testing::RunAvsc;

std::string TempDir() {
  auto dir =
      std::filesystem::temp_directory_path() / ("geolake_avro_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::shared_ptr<const Schema> MustParse(std::string_view json) {
  auto schema = Schema::Parse(json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return std::make_shared<const Schema>(std::move(schema).value());
}

// A small manifest-list-like schema used by the writer tests.
constexpr std::string_view kListSchema =
    R"({"type":"record","name":"manifest_file","fields":[)"
    R"({"name":"manifest_path","type":"string","field-id":500},)"
    R"({"name":"manifest_length","type":"long","field-id":501},)"
    R"({"name":"added_snapshot_id","type":["null","long"],"default":null,"field-id":503},)"
    R"({"name":"partitions","type":["null",{"type":"array","items":{"type":"record","name":"r508","fields":[{"name":"contains_null","type":"boolean","field-id":509},{"name":"lower_bound","type":["null","bytes"],"default":null,"field-id":510}]},"element-id":508}],"default":null,"field-id":507},)"
    R"({"name":"ratio","type":"double"},{"name":"tags","type":{"type":"map","values":"int"}}]})";

std::vector<Datum> ListRecords(int n) {
  std::vector<Datum> records;
  for (int i = 0; i < n; ++i) {
    records.push_back(Datum::Record({
        Datum::String("s3://bucket/t/metadata/m" + std::to_string(i) + ".avro"),
        Datum::Long(7000 + i),
        i % 3 == 0 ? Datum::Null() : Datum::Long((std::int64_t{1} << 62) + i),
        Datum::Array(
            {Datum::Record({Datum::Boolean(i % 2 == 0),
                            Datum::Bytes(std::string("\x01\x00\xff", 3) + std::to_string(i))})}),
        Datum::Double(i / 8.0),
        Datum::Map({{"k" + std::to_string(i), Datum::Int(-i)}}),
    }));
  }
  return records;
}

Result<std::string> WriteFile(Codec codec, const std::vector<Datum>& records,
                              std::size_t block_size = 64000) {
  WriterOptions options;
  options.codec = codec;
  options.block_size_bytes = block_size;
  options.sync_marker =
      std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  GEOLAKE_ASSIGN_OR_RETURN(
      auto writer,
      ContainerWriter::Make(MustParse(kListSchema),
                            {{"format-version", "2"}, {"snapshot-id", "42"}}, options));
  for (const Datum& record : records) GEOLAKE_RETURN_NOT_OK(writer->Append(record));
  return writer->Finish();
}

// Every .avro in the fixtures decodes; record counts and every value agree with avsc.
TEST(ContainerTest, FixturesDecodeLikeAvsc) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  if (auto why = testing::MissingAvsc()) GTEST_SKIP() << *why;
  const auto files = FixtureAvroFiles();
  ASSERT_GE(files.size(), 20u);
  std::vector<std::string> lines;
  ASSERT_TRUE(RunAvsc(files, &lines));
  std::int64_t total_records = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(auto reader, ContainerReader::Open(ReadFileBytes(files[i])));
    EXPECT_EQ(reader->codec(), Codec::kDeflate) << files[i];
    ASSERT_OK_AND_ASSIGN(auto records, reader->ReadAll());
    total_records += static_cast<std::int64_t>(records.size());
    const std::string ours =
        std::to_string(records.size()) + "\t" + CanonRecords(records, reader->schema()->root());
    EXPECT_EQ(ours, lines[i]) << files[i];
    // Binary round trip: re-encoding each record and decoding it gives the same value.
    for (const Datum& record : records) {
      std::string bytes;
      ASSERT_OK(Encode(record, reader->schema()->root(), &bytes));
      ASSERT_OK_AND_ASSIGN(Datum back, Decode(bytes, reader->schema()->root()));
      EXPECT_EQ(back, record);
    }
  }
  EXPECT_GT(total_records, 22);
}

// Values checked by hand against the avsc dump of duckdb-iceberg's uuid table.
TEST(ContainerTest, FixtureValuesByFieldId) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  const std::string dir =
      ::geolake::testing::IcebergFixturesDir() + "/duckdb-iceberg/data/persistent/uuid/metadata/";
  ASSERT_OK_AND_ASSIGN(
      auto list,
      ContainerReader::Open(ReadFileBytes(
          dir + "snap-3974286791591741252-1-69f1c254-2a62-4b99-93db-aa35863e91ff.avro")));
  EXPECT_EQ(list->GetMetadata("format-version"), "2");
  EXPECT_EQ(list->GetMetadata("snapshot-id"), "3974286791591741252");
  ASSERT_OK_AND_ASSIGN(auto files, list->ReadAll());
  ASSERT_EQ(files.size(), 1u);
  const Node& mf = list->schema()->root();
  EXPECT_EQ(files[0].FieldById(mf, 500)->string(),
            "data/persistent/uuid/metadata/69f1c254-2a62-4b99-93db-aa35863e91ff-m0.avro");
  EXPECT_EQ(files[0].FieldById(mf, 501)->int64(), 7050);
  EXPECT_EQ(files[0].FieldById(mf, 503)->int64(), 3974286791591741252);
  EXPECT_EQ(files[0].FieldById(mf, 504)->int32(), 2);
  EXPECT_EQ(files[0].FieldById(mf, 512)->int64(), 10);
  EXPECT_TRUE(files[0].FieldById(mf, 519)->is_null());

  ASSERT_OK_AND_ASSIGN(
      auto manifest,
      ContainerReader::Open(ReadFileBytes(dir + "69f1c254-2a62-4b99-93db-aa35863e91ff-m0.avro")));
  EXPECT_EQ(manifest->GetMetadata("content"), "data");
  ASSERT_OK_AND_ASSIGN(auto entries, manifest->ReadAll());
  ASSERT_EQ(entries.size(), 2u);
  const Node& entry = manifest->schema()->root();
  const Node& r2 = *entry.fields[*entry.FieldIndexById(2)].type;
  const Datum* data_file = entries[1].FieldById(entry, 2);
  ASSERT_NE(data_file, nullptr);
  EXPECT_EQ(entries[1].FieldById(entry, 0)->int32(), 1);  // ADDED
  EXPECT_EQ(data_file->FieldById(r2, 101)->string(), "PARQUET");
  EXPECT_EQ(data_file->FieldById(r2, 103)->int64(), 5);
  EXPECT_EQ(data_file->FieldById(r2, 104)->int64(), 551);
  const Datum* lower = data_file->FieldById(r2, 125);
  ASSERT_EQ(lower->items().size(), 1u);
  EXPECT_EQ(lower->items()[0].fields()[0].int32(), 1);
  EXPECT_EQ(lower->items()[0].fields()[1].bytes(),
            std::string("\x15\x71\xef\xfb\xfa\xcd\x42\xa3\x90\xe9\x0a\xf5\x22\xe9\xb6\xc2", 16));
}

// A file written with each codec reads back with our reader and with avsc.
TEST(ContainerTest, EachCodecRoundTripsAndAvscAgrees) {
  if (auto why = testing::MissingAvsc()) GTEST_SKIP() << *why;
  const auto records = ListRecords(500);
  const std::string dir = TempDir();
  std::vector<std::string> paths;
  std::vector<std::string> ours;
  for (Codec codec : {Codec::kNull, Codec::kDeflate, Codec::kZstandard, Codec::kSnappy}) {
    // Small blocks so that every file has several.
    ASSERT_OK_AND_ASSIGN(std::string bytes, WriteFile(codec, records, 4096));
    ASSERT_OK_AND_ASSIGN(auto reader, ContainerReader::Open(bytes));
    EXPECT_EQ(reader->codec(), codec);
    EXPECT_EQ(reader->GetMetadata("avro.codec"), CodecName(codec));
    EXPECT_EQ(reader->GetMetadata("snapshot-id"), "42");
    EXPECT_EQ(reader->schema()->ToJson(), std::string(kListSchema));
    ASSERT_OK_AND_ASSIGN(auto back, reader->ReadAll());
    EXPECT_GT(reader->blocks_read(), 3);
    ASSERT_EQ(back.size(), records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
      // Decoded unions carry their branch; compare values through the canonical text.
      EXPECT_EQ(CanonRecords({back[i]}, reader->schema()->root()),
                CanonRecords({records[i]}, reader->schema()->root()));
    }
    paths.push_back(dir + "/codec_" + std::string(CodecName(codec)) + ".avro");
    testing::WriteFileBytes(paths.back(), bytes);
    ours.push_back(std::to_string(back.size()) + "\t" +
                   CanonRecords(back, reader->schema()->root()));
  }
  std::vector<std::string> lines;
  ASSERT_TRUE(RunAvsc(paths, &lines));
  for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(lines[i], ours[i]) << paths[i];
  std::filesystem::remove_all(dir);
}

TEST(ContainerTest, HeaderOnlyFileHasNoRecords) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, WriteFile(Codec::kDeflate, {}));
  ASSERT_OK_AND_ASSIGN(auto reader, ContainerReader::Open(bytes));
  ASSERT_OK_AND_ASSIGN(auto records, reader->ReadAll());
  EXPECT_TRUE(records.empty());
}

TEST(ContainerTest, WriterRejectsBadInput) {
  EXPECT_THAT(ContainerWriter::Make(std::make_shared<const Schema>(), {}),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ContainerWriter::Make(MustParse(kListSchema), {{"avro.codec", "null"}}),
              IsErrorWith(ErrorCode::kInvalidArgument, "reserved"));
  ASSERT_OK_AND_ASSIGN(auto writer, ContainerWriter::Make(MustParse(kListSchema), {}));
  EXPECT_THAT(writer->Append(Datum::Record({Datum::Long(1)})),
              IsErrorWith(ErrorCode::kInvalidArgument, "record 0"));
  ASSERT_OK(writer->Append(ListRecords(1)[0]));
  ASSERT_OK_AND_ASSIGN(std::string bytes, writer->Finish());
  EXPECT_THAT(writer->Append(ListRecords(1)[0]), IsError(ErrorCode::kInvalidArgument));
  // The rejected record left nothing behind.
  ASSERT_OK_AND_ASSIGN(auto reader, ContainerReader::Open(bytes));
  ASSERT_OK_AND_ASSIGN(auto records, reader->ReadAll());
  EXPECT_EQ(records.size(), 1u);
}

TEST(ContainerTest, UnsupportedCodecs) {
  EXPECT_THAT(ParseCodec("bzip2"), IsError(ErrorCode::kNotImplemented));
  EXPECT_THAT(ParseCodec("gzip"), IsError(ErrorCode::kInvalidArgument));
}

// Reads every record of `bytes`; returns the first error.
Status ReadAllStatus(const std::string& bytes, ReaderOptions options = {}) {
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, ContainerReader::Open(bytes, options));
  return reader->ReadAll().status();
}

TEST(ContainerTest, MalformedFilesAreCorruptDataWithOffsets) {
  ASSERT_OK_AND_ASSIGN(std::string good, WriteFile(Codec::kNull, ListRecords(20)));
  ASSERT_OK(ReadAllStatus(good));
  EXPECT_THAT(ReadAllStatus(""), IsErrorWith(ErrorCode::kCorruptData, "bad magic"));
  EXPECT_THAT(ReadAllStatus("Obj\x02" + good.substr(4)),
              IsErrorWith(ErrorCode::kCorruptData, "bad magic) at byte offset 0"));
  // Cut anywhere: an error, never a crash. The one exception is a cut right after the header
  // (at the start of the only block), which leaves a valid file without records.
  ASSERT_OK_AND_ASSIGN(std::string header_only, WriteFile(Codec::kNull, {}));
  ASSERT_EQ(good.substr(0, header_only.size()), header_only);
  for (std::size_t len = 0; len < good.size(); ++len) {
    if (len == header_only.size()) {
      EXPECT_OK(ReadAllStatus(good.substr(0, len)));
      continue;
    }
    EXPECT_THAT(ReadAllStatus(good.substr(0, len)), IsError(ErrorCode::kCorruptData)) << len;
  }
  // A wrong sync marker after the first block.
  std::string bad_sync = good;
  bad_sync[bad_sync.size() - 1] ^= 0x55;
  EXPECT_THAT(ReadAllStatus(bad_sync),
              IsErrorWith(ErrorCode::kCorruptData, "sync marker mismatch at byte offset " +
                                                       std::to_string(good.size() - 16)));
}

// Build a container by hand: header with `codec`, then one block of `count` records whose
// payload is `payload`.
std::string HandMadeFile(std::string_view schema, std::string_view codec, std::int64_t count,
                         std::string_view payload, std::int64_t size_override = -1) {
  std::string out("Obj\x01", 4);
  AppendLong(2, &out);
  AppendBytes("avro.schema", &out);
  AppendBytes(schema, &out);
  AppendBytes("avro.codec", &out);
  AppendBytes(codec, &out);
  AppendLong(0, &out);
  const std::string sync(16, 'S');
  out += sync;
  AppendLong(count, &out);
  AppendLong(size_override >= 0 ? size_override : static_cast<std::int64_t>(payload.size()), &out);
  out.append(payload);
  out += sync;
  return out;
}

TEST(ContainerTest, CountsAndSizesBeyondTheInputAreRejected) {
  // 2^50 records claimed for a 2-byte payload of longs.
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "null", std::int64_t{1} << 50, "\x02\x04")),
              IsErrorWith(ErrorCode::kCorruptData, "block record count"));
  // Records of an empty record type encode to nothing: the count is capped.
  EXPECT_THAT(ReadAllStatus(HandMadeFile(R"({"type":"record","name":"e","fields":[]})", "null",
                                         std::int64_t{1} << 40, "")),
              IsErrorWith(ErrorCode::kCorruptData, "block record count"));
  // A block size past the end of the file.
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "null", 1, "\x02", 1000)),
              IsErrorWith(ErrorCode::kCorruptData, "block byte size 1000 exceeds"));
  // An empty block (count 0) is skipped.
  ASSERT_OK_AND_ASSIGN(auto empty_block,
                       ContainerReader::Open(HandMadeFile("\"long\"", "null", 0, "")));
  ASSERT_OK_AND_ASSIGN(auto none, empty_block->ReadAll());
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(empty_block->blocks_read(), 1);
  // Fewer records than the payload holds.
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "null", 1, "\x02\x04")),
              IsErrorWith(ErrorCode::kCorruptData, "bytes after its last record"));
  // More records than the payload can hold.
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "null", 2, "\x02")),
              IsErrorWith(ErrorCode::kCorruptData, "block record count 2 exceeds"));
  // A string whose length runs past the block: the decoder names the file offset of the
  // length (the payload starts after the 16-byte sync and the two block varints).
  const std::string short_string = HandMadeFile("\"string\"", "null", 1,
                                                "\x08"
                                                "ab");
  const std::size_t payload_offset = short_string.size() - 16 - 3;
  EXPECT_THAT(
      ReadAllStatus(short_string),
      IsErrorWith(ErrorCode::kCorruptData, "length 4 exceeds the 3 bytes left at byte offset " +
                                               std::to_string(payload_offset)));
  // A header map claiming more entries than bytes.
  std::string header("Obj\x01", 4);
  AppendLong(1000000, &header);
  EXPECT_THAT(ReadAllStatus(header), IsErrorWith(ErrorCode::kCorruptData, "header map count"));
  // No schema, an unknown codec, a schema that does not parse.
  std::string no_schema("Obj\x01", 4);
  AppendLong(0, &no_schema);
  no_schema += std::string(16, 'S');
  EXPECT_THAT(ReadAllStatus(no_schema), IsErrorWith(ErrorCode::kCorruptData, "no avro.schema"));
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "lz77", 0, "")),
              IsErrorWith(ErrorCode::kCorruptData, "unknown avro codec"));
  EXPECT_THAT(ReadAllStatus(HandMadeFile("{", "null", 0, "")),
              IsErrorWith(ErrorCode::kCorruptData, "avro.schema"));
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "xz", 0, "")),
              IsError(ErrorCode::kNotImplemented));
}

TEST(ContainerTest, BadCompressedPayloadsAreCorruptData) {
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "deflate", 1, "garbage!")),
              IsErrorWith(ErrorCode::kCorruptData, "deflate"));
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "zstandard", 1, "garbage!")),
              IsErrorWith(ErrorCode::kCorruptData, "zstd"));
  EXPECT_THAT(ReadAllStatus(HandMadeFile("\"long\"", "snappy", 1, "\x01")),
              IsErrorWith(ErrorCode::kCorruptData, "snappy"));
  // A snappy block whose CRC32 does not match: flip a bit of the trailer.
  ASSERT_OK_AND_ASSIGN(std::string snappy, WriteFile(Codec::kSnappy, ListRecords(3)));
  std::string bad_crc = snappy;
  bad_crc[bad_crc.size() - 17] ^= 1;
  EXPECT_THAT(ReadAllStatus(bad_crc), IsErrorWith(ErrorCode::kCorruptData, "CRC32 mismatch"));
  ReaderOptions no_crc;
  no_crc.verify_checksums = false;
  EXPECT_OK(ReadAllStatus(bad_crc, no_crc));
  // Truncated compressed streams.
  for (Codec codec : {Codec::kDeflate, Codec::kZstandard}) {
    ASSERT_OK_AND_ASSIGN(std::string file, WriteFile(codec, ListRecords(50)));
    ASSERT_OK_AND_ASSIGN(auto reader, ContainerReader::Open(file));
    ASSERT_OK(reader->ReadAll().status());
  }
}

// A small deflate payload that inflates to 17 MiB is refused at the (16 MiB) limit.
TEST(ContainerTest, DecompressionBombsStopAtTheLimit) {
  const std::string zeros(17u << 20, '\0');
  std::string deflated;
  {
    z_stream zs{};
    ASSERT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    deflated.resize(deflateBound(&zs, zeros.size()));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    zs.avail_in = static_cast<uInt>(zeros.size());
    zs.next_out = reinterpret_cast<Bytef*>(deflated.data());
    zs.avail_out = static_cast<uInt>(deflated.size());
    ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
    deflated.resize(zs.total_out);
    deflateEnd(&zs);
  }
  EXPECT_LT(deflated.size(), 200000u);
  const std::string file = HandMadeFile("\"long\"", "deflate", 1, deflated);
  EXPECT_THAT(ReadAllStatus(file), IsErrorWith(ErrorCode::kCorruptData, "16777216-byte limit"));
  ReaderOptions small;
  small.max_block_bytes = 1 << 20;
  EXPECT_THAT(ReadAllStatus(file, small),
              IsErrorWith(ErrorCode::kCorruptData, "1048576-byte limit"));
}

}  // namespace
}  // namespace geolake::avro

namespace geolake::avro {
namespace {

TEST(DatumTest, StaysCompact) { EXPECT_LE(sizeof(Datum), 48u); }

// 5000 manifest entries (Java's manifest schema, each entry with 8-column metrics maps)
// write and read back in one file; the time is printed for the record.
TEST(ContainerTest, FiveThousandManifestEntries) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  const std::string file = ::geolake::testing::IcebergFixturesDir() +
                           "/duckdb-iceberg/data/persistent/uuid/metadata/"
                           "69f1c254-2a62-4b99-93db-aa35863e91ff-m0.avro";
  ASSERT_OK_AND_ASSIGN(auto source, ContainerReader::Open(ReadFileBytes(file)));
  ASSERT_OK_AND_ASSIGN(auto entries, source->ReadAll());
  const Node& entry_schema = source->schema()->root();
  const std::size_t data_file_idx = *entry_schema.FieldIndexById(2);
  const Node& r2 = *entry_schema.fields[data_file_idx].type;
  const std::size_t path_idx = *r2.FieldIndexById(100);
  const std::size_t sizes_idx = *r2.FieldIndexById(108);

  constexpr int kEntries = 5000;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(auto writer,
                       ContainerWriter::Make(source->schema(), Metadata{{"content", "data"}}));
  for (int i = 0; i < kEntries; ++i) {
    Datum entry = entries[0];
    Datum& data_file = entry.mutable_fields()[data_file_idx];
    data_file.mutable_fields()[path_idx] =
        Datum::String("s3://b/t/data/" + std::to_string(i) + ".parquet");
    Datum& sizes = data_file.mutable_fields()[sizes_idx];
    for (int col = 2; col <= 8; ++col) {
      sizes.mutable_items().push_back(Datum::Record({Datum::Int(col), Datum::Long(1000 + i)}));
    }
    ASSERT_OK(writer->Append(entry));
  }
  ASSERT_OK_AND_ASSIGN(std::string bytes, writer->Finish());
  const auto written = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(auto reader, ContainerReader::Open(bytes));
  ASSERT_OK_AND_ASSIGN(auto back, reader->ReadAll());
  const auto read = std::chrono::steady_clock::now();
  ASSERT_EQ(back.size(), static_cast<std::size_t>(kEntries));
  const Datum& last = back.back().fields()[data_file_idx];
  EXPECT_EQ(last.fields()[path_idx].string(), "s3://b/t/data/4999.parquet");
  EXPECT_EQ(last.fields()[sizes_idx].items().size(), 8u);
  EXPECT_EQ(last.fields()[sizes_idx].items()[7].fields()[1].int64(), 1000 + kEntries - 1);
  const auto ms = [](auto d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  std::printf("%d entries, %zu bytes deflated: write %lld ms, read %lld ms\n", kEntries,
              bytes.size(), static_cast<long long>(ms(written - start)),
              static_cast<long long>(ms(read - written)));
}

}  // namespace
}  // namespace geolake::avro
