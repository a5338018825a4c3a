#include "geolake/table/manifest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "geolake/formats/avro/container.h"
#include "geolake/table/scan.h"
#include "geolake/table/table_metadata.h"
#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// Third-party Iceberg tables (Spark, Iceberg Java, Athena, DuckDB writers), only in the shared
// folder; the tests that read them skip when it is absent.
const std::string kFixtures = ::geolake::testing::IcebergFixturesDir() + "/";

std::shared_ptr<const Schema> TestSchema() {
  return std::make_shared<const Schema>(
      0, std::vector<NestedField>{
             NestedField::Required(1, "id", Type::Long()),
             NestedField::Optional(2, "geo_cell", Type::String()),
             NestedField::Optional(3, "price", Type::Decimal(10, 2).value()),
             NestedField::Optional(4, "day", Type::Date()),
         });
}

std::shared_ptr<const PartitionSpec> TestSpec() {
  return std::make_shared<const PartitionSpec>(
      0, std::vector<PartitionField>{{2, {}, 1000, "geo_cell", Transform::Identity()},
                                     {1, {}, 1001, "id_bucket", Transform::Bucket(8)},
                                     {3, {}, 1002, "price", Transform::Identity()}});
}

DataFile MakeFile(std::string path, Value cell, std::int32_t bucket, Value price,
                  std::int64_t rows) {
  DataFile f;
  f.file_path = std::move(path);
  f.partition = {std::move(cell), Value(bucket), std::move(price)};
  f.record_count = rows;
  f.file_size_in_bytes = 1000 + rows;
  f.column_sizes = {{1, 100}, {2, 50}};
  f.value_counts = {{1, rows}, {2, rows}};
  f.null_value_counts = {{1, 0}, {2, 1}};
  f.nan_value_counts = {};
  f.lower_bounds = {{1, SerializeValue(*Type::Long(), Value(std::int64_t{1})).value()}};
  f.upper_bounds = {{1, SerializeValue(*Type::Long(), Value(rows)).value()}};
  f.split_offsets = {4};
  f.sort_order_id = 0;
  return f;
}

TEST(ManifestTest, RoundTripWithPartitionSummariesAndInheritance) {
  ManifestWriteOptions options;
  options.snapshot_id = 9158179788527662767LL;
  options.schema = TestSchema();
  options.spec = TestSpec();
  std::vector<ManifestEntry> entries(3);
  entries[0].data_file =
      MakeFile("/t/data/a.parquet", Value(std::string("031")), 3, Value(DecimalValue{1234}), 10);
  entries[1].data_file = MakeFile("/t/data/b.parquet", Value(), 5, Value(DecimalValue{-5}), 20);
  entries[2].status = ManifestEntryStatus::kExisting;
  entries[2].snapshot_id = 7;
  entries[2].sequence_number = 1;
  entries[2].file_sequence_number = 1;
  entries[2].data_file =
      MakeFile("/t/data/c.parquet", Value(std::string("120")), 0, Value(DecimalValue{99999}), 5);
  ASSERT_OK_AND_ASSIGN(EncodedManifest encoded,
                       EncodeManifest(options, entries, "/t/metadata/u-m0.avro"));
  const ManifestFile& m = encoded.entry;
  EXPECT_EQ(m.manifest_length, static_cast<std::int64_t>(encoded.bytes.size()));
  EXPECT_EQ(m.added_snapshot_id, 9158179788527662767LL);
  EXPECT_EQ(m.added_files_count, 2);
  EXPECT_EQ(m.existing_files_count, 1);
  EXPECT_EQ(m.added_rows_count, 30);
  EXPECT_EQ(m.existing_rows_count, 5);
  EXPECT_EQ(m.min_sequence_number, 1);
  ASSERT_EQ(m.partitions.size(), 3u);
  EXPECT_TRUE(m.partitions[0].contains_null);
  EXPECT_EQ(m.partitions[0].lower_bound, "031");
  EXPECT_EQ(m.partitions[0].upper_bound, "120");
  EXPECT_FALSE(m.partitions[1].contains_null);
  EXPECT_EQ(m.partitions[1].lower_bound, std::string("\0\0\0\0", 4));
  // decimal bounds: -0.05 -> FB, 999.99 -> 01 86 9F.
  EXPECT_EQ(m.partitions[2].lower_bound, std::string("\xFB"));
  EXPECT_EQ(m.partitions[2].upper_bound, std::string("\x01\x86\x9F"));

  // The Avro header carries Iceberg's keys and a schema with field ids.
  ASSERT_OK_AND_ASSIGN(auto reader, avro::ContainerReader::Open(encoded.bytes));
  EXPECT_EQ(reader->GetMetadata("format-version"), "2");
  EXPECT_EQ(reader->GetMetadata("content"), "data");
  EXPECT_EQ(reader->GetMetadata("partition-spec-id"), "0");
  EXPECT_EQ(reader->codec(), avro::Codec::kDeflate);
  const std::string avro_schema = reader->schema()->ToJson();
  EXPECT_NE(avro_schema.find(R"("name":"r102")"), std::string::npos);
  EXPECT_NE(avro_schema.find(R"("name":"k126_v127")"), std::string::npos);
  EXPECT_NE(avro_schema.find(R"("logicalType":"decimal")"), std::string::npos);

  // Decoding with the list entry fills in inherited numbers for ADDED entries only.
  ManifestFile list_entry = m;
  list_entry.sequence_number = 4;
  ManifestHeader header;
  ASSERT_OK_AND_ASSIGN(auto back, DecodeManifest(encoded.bytes, &list_entry, &header));
  EXPECT_EQ(header.format_version, 2);
  EXPECT_EQ(header.partition_spec_id, 0);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].snapshot_id, 9158179788527662767LL);
  EXPECT_EQ(back[0].sequence_number, 4);
  EXPECT_EQ(back[0].file_sequence_number, 4);
  EXPECT_EQ(back[2].snapshot_id, 7);
  EXPECT_EQ(back[2].sequence_number, 1);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(back[i].data_file, entries[i].data_file) << i;
  // Without a list entry, nothing is inherited.
  ASSERT_OK_AND_ASSIGN(auto raw, DecodeManifest(encoded.bytes, nullptr));
  EXPECT_FALSE(raw[0].sequence_number.has_value());
  EXPECT_FALSE(raw[0].snapshot_id.has_value());
}

// Each primitive type that can be an identity partition value is written with its Avro type
// (binary as bytes, fixed and uuid as fixed, decimal as fixed of the precision's size) and read
// back as the value it was; a geometry cannot be a partition value.
TEST(ManifestTest, EveryPartitionValueTypeRoundTrips) {
  std::vector<TypePtr> types = {
      Type::Boolean(),        Type::Int(),       Type::Long(),
      Type::Float(),          Type::Double(),    Type::Date(),
      Type::Time(),           Type::Timestamp(), Type::TimestampTz(),
      Type::TimestampNs(),    Type::String(),    Type::Binary(),
      Type::Fixed(3).value(), Type::Uuid(),      Type::Decimal(20, 4).value()};
  UuidValue uuid;
  for (std::size_t i = 0; i < uuid.bytes.size(); ++i)
    uuid.bytes[i] = static_cast<std::uint8_t>(i * 17);
  std::vector<Value> values = {Value(true),
                               Value(std::int32_t{-7}),
                               Value(std::int64_t{1} << 40),
                               Value(1.5F),
                               Value(-2.25),
                               Value(std::int32_t{19000}),
                               Value(std::int64_t{3600000000}),
                               Value(std::int64_t{1700000000000000}),
                               Value(std::int64_t{-1}),
                               Value(std::int64_t{1700000000000000123}),
                               Value(std::string("k\xC3\xB6ln")),
                               Value(Bytes{0x00, 0xFF, 0x10}),
                               Value(Bytes{0xAA, 0xBB, 0xCC}),
                               Value(uuid),
                               Value(DecimalValue{-123456789012345})};
  std::vector<NestedField> fields;
  std::vector<PartitionField> partition_fields;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const int id = static_cast<int>(i) + 1;
    fields.push_back(NestedField::Optional(id, "c" + std::to_string(id), types[i]));
    partition_fields.push_back(
        {id, {}, 1000 + id, "c" + std::to_string(id), Transform::Identity()});
  }
  ManifestWriteOptions options;
  options.snapshot_id = 1;
  options.schema = std::make_shared<const Schema>(0, fields);
  options.spec = std::make_shared<const PartitionSpec>(0, partition_fields);
  std::vector<ManifestEntry> entries(2);
  for (auto& e : entries) {
    e.data_file.file_path = "/t/data/x.parquet";
    e.data_file.record_count = 1;
    e.data_file.file_size_in_bytes = 10;
  }
  entries[0].data_file.partition = values;
  entries[1].data_file.partition = std::vector<Value>(values.size(), Value());
  ASSERT_OK_AND_ASSIGN(EncodedManifest encoded, EncodeManifest(options, entries, "/t/m.avro"));
  ASSERT_OK_AND_ASSIGN(auto reader, avro::ContainerReader::Open(encoded.bytes));
  const std::string avro_schema = reader->schema()->ToJson();
  EXPECT_NE(avro_schema.find(R"("name":"c12","type":["null","bytes"])"), std::string::npos)
      << avro_schema;
  ASSERT_OK_AND_ASSIGN(auto back, DecodeManifest(encoded.bytes, nullptr));
  ASSERT_EQ(back.size(), 2u);
  ASSERT_EQ(back[0].data_file.partition.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(back[0].data_file.partition[i], values[i]) << types[i]->ToString();
    EXPECT_TRUE(IsNull(back[1].data_file.partition[i])) << types[i]->ToString();
  }

  options.schema = std::make_shared<const Schema>(
      0, std::vector<NestedField>{NestedField::Optional(1, "g", Type::Geometry())});
  options.spec = std::make_shared<const PartitionSpec>(
      0, std::vector<PartitionField>{{1, {}, 1000, "g", Transform::Identity()}});
  entries.resize(1);
  entries[0].data_file.partition = {Value(BoundPoint{})};
  EXPECT_FALSE(EncodeManifest(options, entries, "/t/m.avro").ok());
}

TEST(ManifestTest, RejectsMismatchedEntries) {
  ManifestWriteOptions options;
  options.snapshot_id = 1;
  options.schema = TestSchema();
  options.spec = TestSpec();
  ManifestEntry e;
  e.data_file.file_path = "/x.parquet";
  e.data_file.partition = {Value(std::string("a"))};  // spec has 3 fields
  EXPECT_THAT(EncodeManifest(options, {e}, "/m.avro"),
              IsErrorWith(ErrorCode::kInvalidArgument, "partition values"));
  e.data_file.partition = {Value(std::int32_t{1}), Value(std::int32_t{1}), Value()};
  EXPECT_THAT(EncodeManifest(options, {e}, "/m.avro"), IsError(ErrorCode::kInvalidArgument));
  e.data_file.partition = {Value(), Value(std::int32_t{1}), Value()};
  e.data_file.content = DataFileContent::kPositionDeletes;
  EXPECT_THAT(EncodeManifest(options, {e}, "/m.avro"),
              IsErrorWith(ErrorCode::kInvalidArgument, "content"));
  e.data_file.content = DataFileContent::kData;
  e.status = ManifestEntryStatus::kDeleted;
  EXPECT_THAT(EncodeManifest(options, {e}, "/m.avro"),
              IsErrorWith(ErrorCode::kInvalidArgument, "explicit"));
  options.format_version = 1;
  EXPECT_THAT(EncodeManifest(options, {}, "/m.avro"), IsError(ErrorCode::kNotImplemented));
}

TEST(ManifestTest, CorruptInputIsCorruptData) {
  EXPECT_THAT(DecodeManifest("not avro", nullptr), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(DecodeManifestList("Obj\x01garbage"), IsError(ErrorCode::kCorruptData));
  // A manifest list is not a manifest: its records lack the data_file field.
  ASSERT_OK_AND_ASSIGN(std::string list,
                       EncodeManifestList(2, 1, std::nullopt, 1, std::nullopt, {}));
  EXPECT_THAT(DecodeManifest(list, nullptr), IsErrorWith(ErrorCode::kCorruptData, "data_file"));
}

// Found by manifest_fuzz: a field whose Avro type differs from Iceberg's (here key_metadata)
// must be kCorruptData, not a failed type check inside the Avro datum.
TEST(ManifestTest, MistypedFieldIsCorruptDataNotACrash) {
  auto io = io::MakeLocalFileIO();
  ASSERT_OK_AND_ASSIGN(std::string bytes,
                       io->ReadAll(::geolake::testing::SourceDir() +
                                   "/tests/data/fuzz/manifest/regression_key_metadata_type.avro"));
  EXPECT_THAT(DecodeManifest(bytes, nullptr), IsError(ErrorCode::kCorruptData));
}

TEST(ManifestListTest, RoundTripV2AndV3) {
  ManifestFile a;
  a.manifest_path = "/t/metadata/u-m0.avro";
  a.manifest_length = 1234;
  a.sequence_number = 3;
  a.min_sequence_number = 1;
  a.added_snapshot_id = 9158179788527662767LL;
  a.added_files_count = 2;
  a.added_rows_count = 30;
  a.partitions = {FieldSummary{true, false, "031", "120"},
                  FieldSummary{false, std::nullopt, {}, {}}};
  ManifestFile b = a;
  b.manifest_path = "/t/metadata/u-m1.avro";
  b.content = ManifestContent::kDeletes;
  b.partitions.clear();
  for (int version : {2, 3}) {
    SCOPED_TRACE(version);
    std::vector<ManifestFile> in = {a, b};
    if (version == 3) in[0].first_row_id = 100;
    ASSERT_OK_AND_ASSIGN(
        std::string bytes,
        EncodeManifestList(version, 9158179788527662767LL, 42, 3,
                           version == 3 ? std::optional<std::int64_t>(100) : std::nullopt, in));
    ASSERT_OK_AND_ASSIGN(auto reader, avro::ContainerReader::Open(bytes));
    EXPECT_EQ(reader->GetMetadata("snapshot-id"), "9158179788527662767");
    EXPECT_EQ(reader->GetMetadata("parent-snapshot-id"), "42");
    EXPECT_EQ(reader->GetMetadata("sequence-number"), "3");
    EXPECT_EQ(reader->GetMetadata("format-version"), std::to_string(version));
    ASSERT_OK_AND_ASSIGN(auto out, DecodeManifestList(bytes));
    EXPECT_EQ(out, in);
  }
}

// Maps the foreign paths recorded in the fixtures to the read-only copies here.
std::string Relocate(std::string_view path) {
  for (std::string_view prefix : {"s3a://hyperparam-iceberg/", "s3://hyperparam-iceberg/"}) {
    if (path.starts_with(prefix)) {
      return kFixtures + "icebird/hyperparam-iceberg/" + std::string(path.substr(prefix.size()));
    }
  }
  if (path.starts_with("data/persistent/")) {
    return kFixtures + "duckdb-iceberg/" + std::string(path);
  }
  return std::string(path);
}

std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Live files per fixture, as `node build/oracles/verify_iceberg.mjs <fixture> --relocate`
// (avsc decoding of manifest list + manifests) reported them, run by hand on 2026-11-29.
struct ExpectedFile {
  const char* name;
  DataFileContent content;
  std::int64_t record_count;
  std::int64_t file_size_in_bytes;
  std::int64_t sequence_number;
};
struct FixtureScan {
  const char* metadata;
  std::size_t manifests;
  std::vector<ExpectedFile> files;
  std::int64_t data_records;  // verify_iceberg "manifest_record_count_sum"
};

TEST(ScanTest, PlansEveryFixtureTableLikeTheOracle) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  using C = DataFileContent;
  const std::vector<FixtureScan> fixtures = {
      {"icebird/hyperparam-iceberg/spark/bunnies/metadata/v5.metadata.json",
       3,
       {{"00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet", C::kData, 20, 3560, 3},
        {"00000-3-6fdcdaeb-591f-4ae0-a39a-75c7fba53907-00001-deletes.parquet", C::kPositionDeletes,
         1, 1437, 2}},
       20},
      {"icebird/hyperparam-iceberg/java/bunnies/metadata/v5.metadata.json",
       4,
       {{"bunnies-updated-new-zealand.parquet", C::kData, 1, 2962, 3},
        {"bunnies-initial.parquet", C::kData, 21, 3407, 1},
        {"bunnies-eq-delete-new-zealand.parquet", C::kEqualityDeletes, 1, 2529, 3},
        {"bunnies-pos-deletes.parquet", C::kPositionDeletes, 6, 1376, 2}},
       22},
      {"icebird/hyperparam-iceberg/spark/rename_column/metadata/v3.metadata.json",
       1,
       {{"00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00002.parquet", C::kData, 1, 1353, 1},
        {"00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00003.parquet", C::kData, 1, 1368, 1},
        {"00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00001.parquet", C::kData, 2, 1430, 1}},
       4},
      {"icebird/hyperparam-iceberg/athena/example/metadata/"
       "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json",
       1,
       {{"20250401_023623_00108_u4nkm-ee75816e-a3dd-4356-97b3-1c6d0128a41f.parquet", C::kData, 2,
         345, 1}},
       2},
      {"duckdb-iceberg/data/persistent/uuid/metadata/"
       "00001-43fda1f4-1c96-4376-ad16-91beb71d0759.metadata.json",
       1,
       {{"00000-0-dc76d6b0-77d0-4fd4-b3e9-555a901bc481-00001.parquet", C::kData, 5, 551, 1},
        {"00000-0-07b11d9e-e7ff-4093-acb3-743bf8b2e5cc-00001.parquet", C::kData, 5, 551, 1}},
       10},
      {"duckdb-iceberg/data/persistent/partition_binary/metadata/v2.metadata.json",
       1,
       {{"00000-12-7975607a-81e3-4d90-af3c-e0b7efc0101f-00002.parquet", C::kData, 1, 975, 1},
        {"00000-12-7975607a-81e3-4d90-af3c-e0b7efc0101f-00001.parquet", C::kData, 1, 954, 1}},
       2},
  };
  auto io = io::MakeLocalFileIO();
  for (const auto& fx : fixtures) {
    SCOPED_TRACE(fx.metadata);
    ASSERT_OK_AND_ASSIGN(std::string text, io->ReadAll(kFixtures + fx.metadata));
    ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::FromJson(text));
    ASSERT_OK_AND_ASSIGN(ScanPlan plan, PlanScan(*io, m, std::nullopt, Relocate));
    EXPECT_EQ(plan.manifests.size(), fx.manifests);
    EXPECT_EQ(plan.DataRecordCount(), fx.data_records);
    std::vector<ManifestEntry> all = plan.data_files;
    all.insert(all.end(), plan.delete_files.begin(), plan.delete_files.end());
    ASSERT_EQ(all.size(), fx.files.size());
    for (const auto& want : fx.files) {
      auto it = std::find_if(all.begin(), all.end(), [&](const ManifestEntry& e) {
        return Basename(e.data_file.file_path) == want.name;
      });
      ASSERT_NE(it, all.end()) << want.name;
      EXPECT_EQ(it->data_file.content, want.content) << want.name;
      EXPECT_EQ(it->data_file.record_count, want.record_count) << want.name;
      EXPECT_EQ(it->data_file.file_size_in_bytes, want.file_size_in_bytes) << want.name;
      EXPECT_EQ(it->sequence_number, want.sequence_number) << want.name;
      EXPECT_EQ(it->data_file.file_format, "PARQUET");
    }
  }
}

TEST(ScanTest, FixturePartitionValuesAndBounds) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  auto io = io::MakeLocalFileIO();
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      io->ReadAll(kFixtures +
                  "icebird/hyperparam-iceberg/spark/rename_column/metadata/v3.metadata.json"));
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::FromJson(text));
  ASSERT_OK_AND_ASSIGN(ScanPlan plan, PlanScan(*io, m, std::nullopt, Relocate));
  // verify_iceberg: {"id_bucket": 0, "date": 18993} for ...-00001 (2 rows); date null for -00002.
  for (const auto& e : plan.data_files) {
    const auto& f = e.data_file;
    ASSERT_EQ(f.partition.size(), 2u);
    if (Basename(f.file_path).ends_with("-00001.parquet")) {
      EXPECT_EQ(f.partition[0], Value(std::int32_t{0}));
      EXPECT_EQ(f.partition[1], Value(std::int32_t{18993}));
      // Column 2 ("name") has string bounds; decode them with the schema's type.
      ASSERT_TRUE(f.lower_bounds.count(4));
      ASSERT_OK_AND_ASSIGN(Value lower, DeserializeValue(*m.current_schema()->FindField(4)->type,
                                                         f.lower_bounds.at(4)));
      EXPECT_TRUE(std::holds_alternative<DecimalValue>(lower));
    }
    if (Basename(f.file_path).ends_with("-00002.parquet")) {
      EXPECT_EQ(f.partition[0], Value(std::int32_t{3}));
      EXPECT_TRUE(IsNull(f.partition[1]));
    }
  }
  ASSERT_OK_AND_ASSIGN(auto list,
                       ReadManifestList(*io, Relocate(m.current_snapshot()->manifest_list)));
  ASSERT_EQ(list.size(), 1u);
  ASSERT_EQ(list[0].partitions.size(), 2u);
  EXPECT_TRUE(list[0].partitions[1].contains_null);
  EXPECT_EQ(list[0].added_files_count, 3);
  EXPECT_EQ(list[0].added_rows_count, 4);
  // A binary identity partition (duckdb-iceberg fixture): values "aabbcc" and "010203" (hex).
  ASSERT_OK_AND_ASSIGN(
      std::string text2,
      io->ReadAll(kFixtures +
                  "duckdb-iceberg/data/persistent/partition_binary/metadata/v2.metadata.json"));
  ASSERT_OK_AND_ASSIGN(TableMetadata m2, TableMetadata::FromJson(text2));
  ASSERT_OK_AND_ASSIGN(ScanPlan plan2, PlanScan(*io, m2, std::nullopt, Relocate));
  std::vector<Value> values;
  for (const auto& e : plan2.data_files) values.push_back(e.data_file.partition.at(0));
  EXPECT_NE(std::find(values.begin(), values.end(), Value(Bytes{0xaa, 0xbb, 0xcc})), values.end());
  EXPECT_NE(std::find(values.begin(), values.end(), Value(Bytes{0x01, 0x02, 0x03})), values.end());
  EXPECT_THAT(PlanScan(*io, m2, 12345, Relocate), IsError(ErrorCode::kNotFound));
}

}  // namespace
}  // namespace geolake::table
