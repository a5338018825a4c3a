#include "geolake/formats/avro/schema.h"

#include <gtest/gtest.h>

#include "geolake/formats/avro/container.h"
#include "geolake/formats/avro/test_util.h"
#include "geolake/testing/testing.h"

namespace geolake::avro {
namespace {

using ::geolake::testing::IsErrorWith;

TEST(SchemaTest, PrimitivesParseAndPrintAsBareNames) {
  for (std::string_view name :
       {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}) {
    ASSERT_OK_AND_ASSIGN(Schema schema, Schema::Parse("\"" + std::string(name) + "\""));
    EXPECT_EQ(TypeName(schema.root().type), name);
    EXPECT_EQ(schema.ToJson(), "\"" + std::string(name) + "\"");
    ASSERT_OK_AND_ASSIGN(Schema object_form,
                         Schema::Parse("{\"type\":\"" + std::string(name) + "\"}"));
    EXPECT_EQ(object_form.ToJson(), "\"" + std::string(name) + "\"");
  }
}

TEST(SchemaTest, IcebergAttributesAreKeptInOrder) {
  const std::string json =
      R"({"type":"record","name":"r2","fields":[)"
      R"({"name":"column_sizes","type":["null",{"type":"array","items":{"type":"record","name":"k117_v118","fields":[{"name":"key","type":"int","field-id":117},{"name":"value","type":"long","field-id":118}]},"logicalType":"map"}],"doc":"Map of column id to total size on disk","default":null,"field-id":108},)"
      R"({"name":"split_offsets","type":["null",{"type":"array","items":"long","element-id":133}],"default":null,"field-id":132},)"
      R"({"name":"props","type":{"type":"map","values":"string","key-id":7,"value-id":8},"field-id":6},)"
      R"({"name":"ts","type":{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":false},"field-id":9},)"
      R"({"name":"_1x","type":"int","field-id":1000,"iceberg-field-name":"1x"}]})";
  ASSERT_OK_AND_ASSIGN(Schema schema, Schema::Parse(json));
  EXPECT_EQ(schema.ToJson(), json);
  const Node& root = schema.root();
  ASSERT_EQ(root.fields.size(), 5u);
  EXPECT_EQ(root.fields[0].field_id(), 108);
  EXPECT_EQ(root.fields[0].doc, "Map of column id to total size on disk");
  EXPECT_EQ(root.fields[0].default_json, "null");
  const Node* sizes = root.fields[0].type->NonNullBranch();
  ASSERT_NE(sizes, nullptr);
  EXPECT_EQ(sizes->type, Type::kArray);
  EXPECT_EQ(sizes->logical_type(), "map");
  EXPECT_EQ(sizes->items->fields[1].field_id(), 118);
  EXPECT_EQ(root.fields[1].type->NonNullBranch()->attributes.GetInt("element-id"), 133);
  EXPECT_EQ(root.fields[2].type->attributes.GetInt("key-id"), 7);
  EXPECT_EQ(root.fields[2].type->attributes.GetInt("value-id"), 8);
  EXPECT_EQ(root.fields[3].type->logical_type(), "timestamp-micros");
  EXPECT_EQ(root.fields[3].type->attributes.Get("adjust-to-utc"), "false");
  EXPECT_EQ(root.fields[4].attributes.GetString("iceberg-field-name"), "1x");
  EXPECT_EQ(root.FieldIndexById(132), 1u);
  EXPECT_EQ(root.FieldIndexById(1000), 4u);
  EXPECT_EQ(root.FieldIndexById(55), std::nullopt);
  EXPECT_EQ(root.FieldIndex("props"), 2u);
}

TEST(SchemaTest, EmptyRecordAliasesNamespacesAndDefaultsRoundTrip) {
  const std::string json =
      R"({"type":"record","name":"outer","namespace":"a.b","doc":"d","aliases":["old"],"fields":[)"
      R"({"name":"p","type":{"type":"record","name":"r102","fields":[]}},)"
      R"({"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"],"default":"X"},"default":"Y","aliases":["e0"]},)"
      R"({"name":"f","type":{"type":"fixed","name":"c.F","size":16,"logicalType":"uuid"}},)"
      R"({"name":"again","type":"E"},{"name":"again_fixed","type":"c.F"},)"
      R"({"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2},"default":"\u00ff"}]})";
  ASSERT_OK_AND_ASSIGN(Schema schema, Schema::Parse(json));
  const Node& root = schema.root();
  EXPECT_EQ(root.full_name, "a.b.outer");
  EXPECT_EQ(root.fields[0].type->fields.size(), 0u);
  EXPECT_EQ(root.fields[0].type->full_name, "a.b.r102");
  EXPECT_EQ(root.fields[2].type->full_name, "c.F");
  // References resolve to the same node, relative to the enclosing namespace.
  EXPECT_EQ(root.fields[3].type, root.fields[1].type);
  EXPECT_EQ(root.fields[4].type, root.fields[2].type);
  EXPECT_EQ(root.fields[1].type->enum_default, "X");
  EXPECT_EQ(root.fields[5].type->attributes.GetInt("precision"), 9);
  // Written back with references as full names; otherwise identical.
  std::string expected = json;
  expected.replace(expected.find(R"("type":"E")"), 10, R"("type":"a.b.E")");
  expected.replace(expected.find(R"("\u00ff")"), 8, "\"\xc3\xbf\"");
  EXPECT_EQ(schema.ToJson(), expected);
  ASSERT_OK_AND_ASSIGN(Schema again, Schema::Parse(schema.ToJson()));
  EXPECT_EQ(again.ToJson(), schema.ToJson());
}

TEST(SchemaTest, RecursiveTypesWriteTheirNameOnSecondUse) {
  const std::string json =
      R"({"type":"record","name":"node","fields":[{"name":"next","type":["null","node"]}]})";
  ASSERT_OK_AND_ASSIGN(Schema schema, Schema::Parse(json));
  EXPECT_EQ(schema.root().fields[0].type->branches[1], &schema.root());
  EXPECT_EQ(schema.ToJson(), json);
}

TEST(SchemaTest, BuildByHand) {
  Schema schema;
  Node record;
  record.type = Type::kRecord;
  record.name = "manifest_file";
  Field path;
  path.name = "manifest_path";
  path.type = schema.AddPrimitive(Type::kString);
  path.attributes.SetInt("field-id", 500);
  Field key_metadata;
  key_metadata.name = "key_metadata";
  key_metadata.type = schema.AddOptional(schema.AddPrimitive(Type::kBytes));
  key_metadata.default_json = "null";
  key_metadata.attributes.SetInt("field-id", 519);
  record.fields = {path, key_metadata};
  schema.set_root(schema.Add(std::move(record)));
  EXPECT_EQ(
      schema.ToJson(),
      R"({"type":"record","name":"manifest_file","fields":[{"name":"manifest_path","type":"string","field-id":500},{"name":"key_metadata","type":["null","bytes"],"default":null,"field-id":519}]})");
  EXPECT_EQ(schema.root().full_name, "manifest_file");
  EXPECT_EQ(schema.root().FieldIndexById(519), 1u);
}

TEST(SchemaTest, InvalidSchemasAreRejected) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "invalid JSON"},
      {"{\"type\":", "invalid JSON"},
      {"\"integer\"", "unknown type 'integer'"},
      {"42", "expected a string, array or object"},
      {R"({"name":"x"})", "without \"type\""},
      {R"({"type":"record","fields":[]})", "without a \"name\""},
      {R"({"type":"record","name":"r"})", "without a \"fields\" array"},
      {R"({"type":"record","name":"r","fields":[{"type":"int"}]})", "without a \"name\""},
      {R"({"type":"record","name":"r","fields":[{"name":"a"}]})", "without a \"type\""},
      {R"({"type":"record","name":"r","fields":[{"name":"a","type":"nope"}]})",
       "field 'r.a': avro schema: unknown type 'nope'"},
      {R"(["null",["int"]])", "union may not directly contain a union"},
      {R"({"type":"array"})", "without \"items\""},
      {R"({"type":"map"})", "without \"values\""},
      {R"({"type":"fixed","name":"f","size":-1})", "non-negative integer"},
      {R"({"type":"enum","name":"e","symbols":[1]})", "not a string"},
      {R"(["int",{"type":"enum","name":"e","symbols":[]},{"type":"fixed","name":"e","size":1}])",
       "defined twice"},
      {std::string(5000, '[') + std::string(5000, ']'), "nested deeper than"},
  };
  for (const auto& [json, text] : cases) {
    EXPECT_THAT(Schema::Parse(json), IsErrorWith(ErrorCode::kInvalidArgument, text)) << json;
  }
  std::string deep_schema;
  for (int i = 0; i < 70; ++i) deep_schema += R"({"type":"array","items":)";
  deep_schema += "\"int\"" + std::string(70, '}');
  EXPECT_THAT(Schema::Parse(deep_schema),
              IsErrorWith(ErrorCode::kInvalidArgument, "nested deeper than 64"));
}

// Every manifest and manifest list in the third-party fixtures (Java, Spark, Athena writers):
// the "avro.schema" header parses and is written back byte for byte.
TEST(SchemaTest, FixtureHeaderSchemasRoundTripExactly) {
  if (auto why = ::geolake::testing::MissingIcebergFixtures()) GTEST_SKIP() << *why;
  const auto files = testing::FixtureAvroFiles();
  ASSERT_GE(files.size(), 20u) << "fixtures incomplete under "
                               << ::geolake::testing::IcebergFixturesDir();
  int manifests = 0;
  int lists = 0;
  for (const auto& file : files) {
    ASSERT_OK_AND_ASSIGN(auto reader, ContainerReader::Open(testing::ReadFileBytes(file)));
    const std::string original(*reader->GetMetadata("avro.schema"));
    EXPECT_EQ(reader->schema()->ToJson(), original) << file;
    const Node& root = reader->schema()->root();
    if (root.name == "manifest_entry") {
      ++manifests;
      // status (0), snapshot_id (1), data_file (2) resolve by field id.
      EXPECT_EQ(root.FieldIndexById(0), root.FieldIndex("status")) << file;
      auto data_file = root.FieldIndexById(2);
      ASSERT_TRUE(data_file.has_value()) << file;
      const Node& r2 = *root.fields[*data_file].type;
      EXPECT_EQ(r2.name, "r2");
      EXPECT_TRUE(r2.FieldIndexById(100).has_value()) << file;  // file_path
      auto lower = r2.FieldIndexById(125);                      // lower_bounds
      ASSERT_TRUE(lower.has_value()) << file;
      const Node* map = r2.fields[*lower].type->NonNullBranch();
      ASSERT_NE(map, nullptr);
      EXPECT_EQ(map->logical_type(), "map");
      EXPECT_EQ(map->items->fields[0].field_id(), 126);
      EXPECT_EQ(map->items->fields[1].field_id(), 127);
    } else {
      ++lists;
      EXPECT_EQ(root.name, "manifest_file") << file;
      EXPECT_TRUE(root.FieldIndexById(500).has_value()) << file;
      auto partitions = root.FieldIndexById(507);
      ASSERT_TRUE(partitions.has_value()) << file;
      const Node* list = root.fields[*partitions].type->NonNullBranch();
      ASSERT_NE(list, nullptr);
      EXPECT_EQ(list->attributes.GetInt("element-id"), 508);
      EXPECT_EQ(list->items->name, "r508");
    }
  }
  EXPECT_EQ(manifests, 12);
  EXPECT_EQ(lists, 10);
}

TEST(SchemaTest, AttributesReadEscapesAndEditInPlace) {
  ASSERT_OK_AND_ASSIGN(
      Schema schema,
      Schema::Parse(R"({"type":"string","note":"a\"b\u00e9","field-id":"12","n":null})"));
  Attributes attributes = schema.root().attributes;
  EXPECT_EQ(attributes.GetString("note"), "a\"b\xc3\xa9");
  EXPECT_EQ(attributes.GetInt("field-id"), 12);  // a numeric string, read tolerantly
  EXPECT_EQ(attributes.GetInt("note"), std::nullopt);
  EXPECT_EQ(attributes.GetString("n"), std::nullopt);
  EXPECT_EQ(attributes.Get("n"), "null");
  attributes.SetInt("field-id", 13);
  attributes.SetString("x", "q\"");
  EXPECT_TRUE(attributes.Remove("n"));
  EXPECT_FALSE(attributes.Remove("n"));
  ASSERT_EQ(attributes.items().size(), 3u);
  EXPECT_EQ(attributes.items()[1].key, "field-id");
  EXPECT_EQ(attributes.items()[1].json, "13");
  EXPECT_EQ(attributes.items()[2].json, "\"q\\\"\"");
}

}  // namespace
}  // namespace geolake::avro
