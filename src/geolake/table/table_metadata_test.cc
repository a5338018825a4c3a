#include "geolake/table/table_metadata.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "geolake/table/json_internal.h"
#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Third-party Iceberg tables (Spark, Iceberg Java, Athena, DuckDB writers), only in the shared
// folder; the tests that read them skip when it is absent.
const std::string kFixtures = ::geolake::testing::IcebergFixturesDir() + "/";

// The current metadata file of each third-party fixture, with the numbers that
// `node build/oracles/verify_iceberg.mjs <fixture> --relocate --quiet` reported (run by hand on
// 2026-11-29): format_version, current_snapshot_id, snapshots.
struct FixtureExpectation {
  const char* metadata;
  int format_version;
  std::int64_t current_snapshot_id;
  std::size_t snapshots;
};
const FixtureExpectation kFixtureTables[] = {
    {"icebird/hyperparam-iceberg/spark/bunnies/metadata/v5.metadata.json", 2, 2701171901096418979LL,
     3},
    {"icebird/hyperparam-iceberg/java/bunnies/metadata/v5.metadata.json", 2, 9158179788527662767LL,
     3},
    {"icebird/hyperparam-iceberg/spark/rename_column/metadata/v3.metadata.json", 2,
     5276958600260276572LL, 1},
    {"icebird/hyperparam-iceberg/athena/example/metadata/"
     "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json",
     2, 6838723292707092922LL, 1},
    {"duckdb-iceberg/data/persistent/uuid/metadata/"
     "00001-43fda1f4-1c96-4376-ad16-91beb71d0759.metadata.json",
     2, 3974286791591741252LL, 1},
    {"duckdb-iceberg/data/persistent/partition_binary/metadata/v2.metadata.json", 2,
     7057859339050714145LL, 1},
};

TEST(TableMetadataTest, ReadsEveryFixtureTable) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  for (const auto& fx : kFixtureTables) {
    SCOPED_TRACE(fx.metadata);
    const std::string text = ReadText(kFixtures + fx.metadata);
    ASSERT_FALSE(text.empty());
    ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::FromJson(text));
    EXPECT_EQ(m.format_version, fx.format_version);
    ASSERT_TRUE(m.current_snapshot_id.has_value());
    EXPECT_EQ(*m.current_snapshot_id, fx.current_snapshot_id);
    EXPECT_EQ(m.snapshots.size(), fx.snapshots);
    ASSERT_NE(m.current_snapshot(), nullptr);
    EXPECT_EQ(m.refs.at("main").snapshot_id, fx.current_snapshot_id);
    ASSERT_NE(m.current_schema(), nullptr);
    ASSERT_NE(m.default_spec(), nullptr);
    ASSERT_NE(m.default_sort_order(), nullptr);
    // What we read, we can write again, and reading that gives the same metadata.
    ASSERT_OK_AND_ASSIGN(std::string json, m.ToJson());
    ASSERT_OK_AND_ASSIGN(TableMetadata again, TableMetadata::FromJson(json));
    ASSERT_OK_AND_ASSIGN(std::string json2, again.ToJson());
    EXPECT_EQ(json, json2);
    EXPECT_EQ(again.snapshots, m.snapshots);
    EXPECT_EQ(again.metadata_log, m.metadata_log);
    EXPECT_EQ(again.snapshot_log, m.snapshot_log);
  }
}

TEST(TableMetadataTest, JavaFixtureDetails) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  const std::string text =
      ReadText(kFixtures + "icebird/hyperparam-iceberg/java/bunnies/metadata/v5.metadata.json");
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::FromJson(text));
  EXPECT_EQ(m.table_uuid, "eee3ca77-1713-442c-8c2f-ad98d8d36a9b");
  EXPECT_EQ(m.location, "s3a://hyperparam-iceberg/java/bunnies");
  EXPECT_EQ(m.last_sequence_number, 3);
  EXPECT_EQ(m.last_updated_ms, 1743410800565);
  EXPECT_EQ(m.last_column_id, 9);
  EXPECT_EQ(m.current_schema_id, 1);
  EXPECT_EQ(m.schemas.size(), 2u);
  EXPECT_EQ(m.current_schema()->FindField(9)->name, "__happy__");
  EXPECT_EQ(m.last_partition_id, 999);
  EXPECT_TRUE(m.default_spec()->is_unpartitioned());
  EXPECT_EQ(m.properties.at("write.parquet.compression-codec"), "zstd");
  const Snapshot* s = m.SnapshotById(6458828015811002920LL);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->parent_snapshot_id, 4951213507629824583LL);
  EXPECT_EQ(s->sequence_number, 2);
  EXPECT_EQ(s->operation(), "delete");
  EXPECT_EQ(s->summary.at("added-position-deletes"), "6");
  EXPECT_EQ(s->schema_id, 1);
  ASSERT_EQ(m.metadata_log.size(), 4u);
  EXPECT_EQ(m.metadata_log[0].metadata_file,
            "s3a://hyperparam-iceberg/java/bunnies/metadata/v1.metadata.json");
  EXPECT_EQ(m.snapshot_log.back().snapshot_id, 9158179788527662767LL);
  // Partitioned fixture: bucket + identity.
  ASSERT_OK_AND_ASSIGN(
      TableMetadata p,
      TableMetadata::FromJson(ReadText(
          kFixtures + "icebird/hyperparam-iceberg/spark/rename_column/metadata/v3.metadata.json")));
  ASSERT_EQ(p.default_spec()->fields().size(), 2u);
  EXPECT_EQ(p.default_spec()->fields()[0].transform, Transform::Bucket(4));
  EXPECT_EQ(p.last_partition_id, 1001);
  EXPECT_EQ(p.current_schema()->FindField(4)->type->ToString(), "decimal(10, 2)");
}

TEST(TableMetadataTest, ReadsV1Metadata) {
  // v1: single `schema` and `partition-spec`, no uuid/sequence numbers/sort orders, -1 snapshot.
  const char* v1 = R"({
    "format-version": 1, "location": "/tmp/t", "last-updated-ms": 5, "last-column-id": 2,
    "schema": {"type": "struct", "fields": [
      {"id": 1, "name": "a", "required": true, "type": "int"},
      {"id": 2, "name": "b", "required": false, "type": "string"}]},
    "partition-spec": [{"name": "a", "transform": "identity", "source-id": 1}],
    "current-snapshot-id": -1,
    "snapshots": [{"snapshot-id": 7, "timestamp-ms": 5, "manifests": ["/tmp/t/m.avro"]}]
  })";
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::FromJson(v1));
  EXPECT_EQ(m.format_version, 1);
  EXPECT_FALSE(m.current_snapshot_id.has_value());
  EXPECT_EQ(m.schemas.size(), 1u);
  EXPECT_EQ(m.default_spec()->fields()[0].field_id, 1000);
  EXPECT_EQ(m.last_partition_id, 1000);
  EXPECT_TRUE(m.default_sort_order()->is_unsorted());
  ASSERT_EQ(m.snapshots.size(), 1u);
  EXPECT_EQ(m.snapshots[0].manifests, std::vector<std::string>{"/tmp/t/m.avro"});
  EXPECT_EQ(m.snapshots[0].sequence_number, 0);
  // We never write v1.
  EXPECT_THAT(m.ToJson(), IsError(ErrorCode::kNotImplemented));
}

std::shared_ptr<const Schema> TestSchema() {
  return std::make_shared<const Schema>(0,
                                        std::vector<NestedField>{
                                            NestedField::Required(100, "id", Type::Long()),
                                            NestedField::Optional(200, "geo_cell", Type::String()),
                                            NestedField::Optional(300, "geo_hilbert", Type::Long()),
                                            NestedField::Optional(400, "geometry", Type::Binary()),
                                        });
}

TableMetadata NewTestTable(int format_version = 2) {
  NewTableOptions options;
  options.location = "/warehouse/ns/t/";
  options.schema = TestSchema();
  options.spec = std::make_shared<const PartitionSpec>(
      0, std::vector<PartitionField>{{200, {}, 0, "geo_cell", Transform::Identity()}});
  options.sort_order = std::make_shared<const SortOrder>(
      1, std::vector<SortField>{
             {Transform::Identity(), 300, SortDirection::kAscending, NullOrder::kNullsFirst}});
  options.properties = {{"write.metadata.previous-versions-max", "2"}};
  options.format_version = format_version;
  options.now_ms = 1000;
  return NewTableMetadata(options).value();
}

TEST(TableMetadataTest, NewTableAssignsIdsAndWritesEveryRequiredKey) {
  TableMetadata m = NewTestTable();
  EXPECT_EQ(m.location, "/warehouse/ns/t");
  EXPECT_EQ(m.table_uuid.size(), 36u);
  EXPECT_EQ(m.table_uuid[14], '4');  // version 4 UUID
  EXPECT_EQ(m.last_column_id, 4);
  EXPECT_EQ(m.current_schema()->FindField("geo_cell")->id, 2);
  ASSERT_EQ(m.default_spec()->fields().size(), 1u);
  EXPECT_EQ(m.default_spec()->fields()[0].source_id, 2);
  EXPECT_EQ(m.default_spec()->fields()[0].field_id, 1000);
  EXPECT_EQ(m.last_partition_id, 1000);
  EXPECT_EQ(m.default_sort_order_id, 1);
  EXPECT_EQ(m.default_sort_order()->fields()[0].source_id, 3);
  EXPECT_EQ(m.sort_orders.size(), 2u);  // unsorted order 0 is always kept
  ASSERT_OK_AND_ASSIGN(std::string json, m.ToJson());
  ASSERT_OK_AND_ASSIGN(auto j, internal::ParseJson(json, "test"));
  for (const char* key :
       {"format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
        "last-column-id", "current-schema-id", "schemas", "default-spec-id", "partition-specs",
        "last-partition-id", "default-sort-order-id", "sort-orders", "properties",
        "current-snapshot-id", "refs", "snapshots", "snapshot-log", "metadata-log"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["current-snapshot-id"], -1);
  EXPECT_FALSE(j.contains("next-row-id"));
  EXPECT_FALSE(j.contains("schema"));  // the deprecated v1 keys are not written
  EXPECT_FALSE(j.contains("partition-spec"));
}

Snapshot MakeSnapshot(const TableMetadata& m, std::int64_t id, std::int64_t ts) {
  Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = m.current_snapshot_id;
  s.sequence_number = m.last_sequence_number + 1;
  s.timestamp_ms = ts;
  s.manifest_list = m.location + "/metadata/snap-" + std::to_string(id) + ".avro";
  s.summary = {{"operation", "append"}, {"added-records", "10"}};
  s.schema_id = m.current_schema_id;
  if (m.format_version >= 3) {
    s.first_row_id = m.next_row_id.value_or(0);
    s.added_rows = 10;
  }
  return s;
}

TEST(TableMetadataTest, BuilderAddsSnapshotsAndTrimsMetadataLog) {
  TableMetadata m = NewTestTable();
  std::string location = "/warehouse/ns/t/metadata/00000-a.metadata.json";
  // 64-bit ids above 2^53 must stay exact.
  const std::int64_t ids[] = {9158179788527662767LL, 9158179788527662766LL, 42};
  std::int64_t now = 2000;
  for (std::int64_t id : ids) {
    TableMetadataBuilder b(m, location);
    ASSERT_OK(b.AddSnapshot(MakeSnapshot(m, id, now)));
    ASSERT_OK(b.SetBranchSnapshot(id));
    ASSERT_OK_AND_ASSIGN(m, b.Build(now + 1));
    location = "/warehouse/ns/t/metadata/" + std::to_string(now) + ".metadata.json";
    now += 1000;
  }
  EXPECT_EQ(m.current_snapshot_id, 42);
  EXPECT_EQ(m.last_sequence_number, 3);
  EXPECT_EQ(m.snapshots.size(), 3u);
  EXPECT_EQ(m.snapshots[1].parent_snapshot_id, 9158179788527662767LL);
  EXPECT_EQ(m.snapshot_log.size(), 3u);
  // previous-versions-max = 2: the first (00000-a) entry was dropped.
  ASSERT_EQ(m.metadata_log.size(), 2u);
  EXPECT_EQ(m.metadata_log[0].metadata_file, "/warehouse/ns/t/metadata/2000.metadata.json");
  EXPECT_EQ(m.metadata_log[0].timestamp_ms, 2001);
  EXPECT_EQ(m.last_updated_ms, 4001);
  ASSERT_OK_AND_ASSIGN(std::string json, m.ToJson());
  EXPECT_NE(json.find("\"snapshot-id\": 9158179788527662767"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(TableMetadata back, TableMetadata::FromJson(json));
  EXPECT_EQ(back.snapshots, m.snapshots);
  EXPECT_EQ(back.refs, m.refs);
  EXPECT_EQ(back.properties, m.properties);
}

TEST(TableMetadataTest, RemoveSnapshotsDropsRefsStatisticsAndTheLogBeforeTheGap) {
  TableMetadata m = NewTestTable();
  for (std::int64_t id = 1; id <= 4; ++id) {
    TableMetadataBuilder b(m, "");
    ASSERT_OK(b.AddSnapshot(MakeSnapshot(m, id, id * 1000)));
    ASSERT_OK(b.SetBranchSnapshot(id));
    ASSERT_OK_AND_ASSIGN(m, b.Build(id * 1000 + 1));
  }
  m.refs["tag2"] = SnapshotRef{2, false, {}, {}, {}};
  m.refs["tag3"] = SnapshotRef{3, false, {}, {}, {}};
  m.statistics_json =
      R"([{"snapshot-id":2,"statistics-path":"/s2.puffin"},{"snapshot-id":4,"statistics-path":"/s4.puffin"}])";
  TableMetadataBuilder b(m, "");
  EXPECT_THAT(b.RemoveSnapshots({4}), IsErrorWith(ErrorCode::kInvalidArgument, "current"));
  EXPECT_THAT(b.RemoveSnapshots({9}), IsErrorWith(ErrorCode::kInvalidArgument, "unknown"));
  EXPECT_THAT(b.RemoveRefs({"main"}), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK(b.RemoveRefs({"tag3", "no-such-ref"}));
  ASSERT_OK(b.RemoveSnapshots({1, 2}));
  ASSERT_OK_AND_ASSIGN(TableMetadata out, b.Build(9000));
  ASSERT_EQ(out.snapshots.size(), 2u);
  EXPECT_EQ(out.snapshots[0].snapshot_id, 3);
  EXPECT_EQ(out.snapshots[0].parent_snapshot_id, 2);  // children keep their parent id
  EXPECT_EQ(out.refs.size(), 1u);                     // tag2 pointed at 2, tag3 removed
  EXPECT_EQ(out.refs.count("main"), 1u);
  // The log keeps only what follows the newest removed entry (2): 3, 4.
  ASSERT_EQ(out.snapshot_log.size(), 2u);
  EXPECT_EQ(out.snapshot_log[0].snapshot_id, 3);
  EXPECT_EQ(out.statistics_json, R"([{"snapshot-id":4,"statistics-path":"/s4.puffin"}])");
  ASSERT_OK_AND_ASSIGN(std::string json, out.ToJson());
  ASSERT_OK_AND_ASSIGN(TableMetadata back, TableMetadata::FromJson(json));
  EXPECT_EQ(back.snapshots, out.snapshots);
}

TEST(TableMetadataTest, BuilderRejectsBadSnapshots) {
  TableMetadata m = NewTestTable();
  TableMetadataBuilder b(m, "");
  Snapshot s = MakeSnapshot(m, 5, 10);
  ASSERT_OK(b.AddSnapshot(s));
  EXPECT_THAT(b.AddSnapshot(s), IsErrorWith(ErrorCode::kInvalidArgument, "already exists"));
  Snapshot stale = MakeSnapshot(m, 6, 10);  // same sequence number as snapshot 5
  EXPECT_THAT(b.AddSnapshot(stale), IsErrorWith(ErrorCode::kInvalidArgument, "sequence-number"));
  Snapshot orphan = MakeSnapshot(b.current(), 7, 10);
  orphan.parent_snapshot_id = 12345;
  EXPECT_THAT(b.AddSnapshot(orphan), IsErrorWith(ErrorCode::kInvalidArgument, "parent"));
  EXPECT_THAT(b.SetBranchSnapshot(99), IsError(ErrorCode::kInvalidArgument));
  b.SetProperties({{"owner", "me"}}).RemoveProperties({"write.metadata.previous-versions-max"});
  ASSERT_OK_AND_ASSIGN(TableMetadata out, b.Build(20));
  EXPECT_EQ(out.properties.size(), 1u);
  EXPECT_FALSE(out.current_snapshot_id.has_value());  // added but no branch moved
  EXPECT_TRUE(out.metadata_log.empty());
}

TEST(TableMetadataTest, V3RowLineageAndNullCurrentSnapshot) {
  TableMetadata m = NewTestTable(3);
  EXPECT_EQ(m.next_row_id, 0);
  ASSERT_OK_AND_ASSIGN(std::string empty_json, m.ToJson());
  EXPECT_NE(empty_json.find("\"current-snapshot-id\": null"), std::string::npos);
  EXPECT_NE(empty_json.find("\"next-row-id\": 0"), std::string::npos);
  TableMetadataBuilder b(m, "/x/00000-a.metadata.json");
  Snapshot s = MakeSnapshot(m, 77, 10);
  ASSERT_OK(b.AddSnapshot(s));
  ASSERT_OK(b.SetBranchSnapshot(77));
  ASSERT_OK_AND_ASSIGN(TableMetadata out, b.Build(20));
  EXPECT_EQ(out.next_row_id, 10);
  ASSERT_OK_AND_ASSIGN(std::string json, out.ToJson());
  ASSERT_OK_AND_ASSIGN(TableMetadata back, TableMetadata::FromJson(json));
  EXPECT_EQ(back.snapshots[0].first_row_id, 0);
  EXPECT_EQ(back.snapshots[0].added_rows, 10);
  Snapshot wrong = MakeSnapshot(out, 78, 30);
  wrong.first_row_id = 3;
  TableMetadataBuilder b2(out, "");
  EXPECT_THAT(b2.AddSnapshot(wrong), IsErrorWith(ErrorCode::kInvalidArgument, "first-row-id"));
}

TEST(TableMetadataTest, MissingOrMalformedKeysAreCorruptData) {
  ASSERT_OK_AND_ASSIGN(std::string good, NewTestTable().ToJson());
  ASSERT_OK_AND_ASSIGN(auto j, internal::ParseJson(good, "test"));
  for (const char* key :
       {"format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
        "last-column-id", "schemas", "current-schema-id", "partition-specs", "default-spec-id",
        "last-partition-id", "sort-orders", "default-sort-order-id"}) {
    auto copy = j;
    copy.erase(key);
    EXPECT_THAT(TableMetadata::FromJson(copy.dump()),
                IsErrorWith(ErrorCode::kCorruptData, std::string("'") + key + "'"))
        << key;
  }
  auto wrong_type = j;
  wrong_type["last-column-id"] = "four";
  EXPECT_THAT(TableMetadata::FromJson(wrong_type.dump()),
              IsErrorWith(ErrorCode::kCorruptData, "last-column-id"));
  auto future = j;
  future["format-version"] = 4;
  EXPECT_THAT(TableMetadata::FromJson(future.dump()), IsError(ErrorCode::kNotImplemented));
  EXPECT_THAT(TableMetadata::FromJson("{\"format-version\": 2,"),
              IsErrorWith(ErrorCode::kCorruptData, "malformed"));
  EXPECT_THAT(TableMetadata::FromJson("[]"), IsError(ErrorCode::kCorruptData));
  // A v2 snapshot without a summary operation.
  auto no_op = j;
  no_op["snapshots"] = internal::Json::parse(
      R"([{"snapshot-id":1,"sequence-number":1,"timestamp-ms":1,"manifest-list":"m","summary":{}}])");
  EXPECT_THAT(TableMetadata::FromJson(no_op.dump()),
              IsErrorWith(ErrorCode::kCorruptData, "'operation'"));
  // Unknown keys are ignored.
  auto extra = j;
  extra["some-future-key"] = internal::Json::object();
  EXPECT_OK(TableMetadata::FromJson(extra.dump()));
}

TEST(TableMetadataTest, WriteValidatesConsistency) {
  TableMetadata m = NewTestTable();
  TableMetadata bad = m;
  bad.current_schema_id = 9;
  EXPECT_THAT(bad.ToJson(), IsErrorWith(ErrorCode::kInvalidArgument, "current-schema-id"));
  bad = m;
  bad.last_column_id = 1;
  EXPECT_THAT(bad.ToJson(), IsErrorWith(ErrorCode::kInvalidArgument, "last-column-id"));
  bad = m;
  bad.current_snapshot_id = 5;
  EXPECT_THAT(bad.ToJson(), IsErrorWith(ErrorCode::kInvalidArgument, "current-snapshot-id"));
  bad = m;
  bad.table_uuid.clear();
  EXPECT_THAT(bad.ToJson(), IsErrorWith(ErrorCode::kInvalidArgument, "table-uuid"));
}

TEST(TableMetadataTest, FileNames) {
  EXPECT_EQ(MetadataFileName(1, "abc"), "00001-abc.metadata.json");
  EXPECT_EQ(HintedMetadataFileName(3), "v3.metadata.json");
  EXPECT_EQ(ParseMetadataVersion("/t/metadata/00012-9f.metadata.json").value(), 12);
  EXPECT_EQ(ParseMetadataVersion("v3.metadata.json").value(), 3);
  EXPECT_EQ(ParseMetadataVersion("00002-x.gz.metadata.json").value(), 2);
  EXPECT_THAT(ParseMetadataVersion("snap-1.avro"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseMetadataVersion("abc-x.metadata.json"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(VersionHintContent(7), "7");
  EXPECT_EQ(ManifestListFileName(5, 1, "u"), "snap-5-1-u.avro");
  EXPECT_EQ(ManifestFileName("u", 0), "u-m0.avro");
  TableMetadata m = NewTestTable();
  const std::int64_t id = NewSnapshotId(m);
  EXPECT_GT(id, 0);
  EXPECT_NE(NewUuid(), NewUuid());
}

}  // namespace
}  // namespace geolake::table
