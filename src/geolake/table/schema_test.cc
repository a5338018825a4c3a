#include "geolake/table/schema.h"

#include <gtest/gtest.h>

#include "geolake/table/json_internal.h"
#include "geolake/table/types.h"
#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

TEST(TypeTest, PrimitiveStringsRoundTrip) {
  for (const char* text : {"boolean",        "int",
                           "long",           "float",
                           "double",         "date",
                           "time",           "timestamp",
                           "timestamptz",    "timestamp_ns",
                           "timestamptz_ns", "string",
                           "uuid",           "binary",
                           "unknown",        "variant",
                           "decimal(10, 2)", "fixed[16]",
                           "geometry",       "geometry(EPSG:4326)",
                           "geography",      "geography(OGC:CRS84, karney)"}) {
    ASSERT_OK_AND_ASSIGN(TypePtr t, Type::FromPrimitiveString(text));
    EXPECT_EQ(t->ToString(), text);
  }
}

TEST(TypeTest, ParsesLenientSpellings) {
  ASSERT_OK_AND_ASSIGN(TypePtr d, Type::FromPrimitiveString("decimal(9,2)"));
  EXPECT_EQ(d->id(), TypeId::kDecimal);
  EXPECT_EQ(d->precision(), 9);
  EXPECT_EQ(d->scale(), 2);
  EXPECT_EQ(d->ToString(), "decimal(9, 2)");
  ASSERT_OK_AND_ASSIGN(TypePtr g, Type::FromPrimitiveString("geometry( srid:4326 )"));
  EXPECT_EQ(g->crs(), "srid:4326");
  ASSERT_OK_AND_ASSIGN(TypePtr gg, Type::FromPrimitiveString("geography(srid:4326)"));
  EXPECT_EQ(gg->algorithm(), EdgeAlgorithm::kSpherical);
  ASSERT_OK_AND_ASSIGN(TypePtr p, Type::FromPrimitiveString("geometry(projjson:my_crs)"));
  EXPECT_EQ(p->crs(), "projjson:my_crs");
  // The bare name and the explicit default CRS are the same type.
  EXPECT_TRUE(Type::Geometry()->Equals(*Type::Geometry("OGC:CRS84")));
}

TEST(TypeTest, RejectsMalformedTypes) {
  EXPECT_THAT(Type::FromPrimitiveString("int64"), IsErrorWith(ErrorCode::kCorruptData, "int64"));
  EXPECT_THAT(Type::FromPrimitiveString("decimal(40, 2)"), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(Type::FromPrimitiveString("decimal(x, 2)"), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(Type::FromPrimitiveString("fixed[0]"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Type::FromPrimitiveString("geography(OGC:CRS84, flat)"),
              IsErrorWith(ErrorCode::kCorruptData, "flat"));
  // Inline PROJJSON in a type string is forbidden by the spec.
  EXPECT_THAT(Type::FromPrimitiveString("geometry({\"type\":\"GeographicCRS\"})"),
              IsError(ErrorCode::kCorruptData));
}

constexpr const char* kNestedSchemaJson = R"js({
  "type": "struct", "schema-id": 3, "identifier-field-ids": [1],
  "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long", "doc": "row id"},
    {"id": 2, "name": "bbox", "required": false, "type": {"type": "struct", "fields": [
      {"id": 5, "name": "xmin", "required": true, "type": "double"},
      {"id": 6, "name": "ymin", "required": true, "type": "double"}]}},
    {"id": 3, "name": "tags", "required": false,
     "type": {"type": "list", "element-id": 7, "element-required": false, "element": "string"}},
    {"id": 4, "name": "props", "required": false,
     "type": {"type": "map", "key-id": 8, "key": "string", "value-id": 9,
              "value-required": true, "value": "decimal(9, 2)"}},
    {"id": 10, "name": "geom", "required": false, "type": "geometry(OGC:CRS84)",
     "initial-default": null, "unknown-key": 1}
  ]})js";

TEST(SchemaTest, ParsesNestedSchemaAndIndexesFields) {
  ASSERT_OK_AND_ASSIGN(auto schema, Schema::FromJson(kNestedSchemaJson));
  EXPECT_EQ(schema->schema_id(), 3);
  EXPECT_EQ(schema->identifier_field_ids(), std::vector<std::int32_t>{1});
  EXPECT_EQ(schema->HighestFieldId(), 10);
  ASSERT_EQ(schema->fields().size(), 5u);
  EXPECT_EQ(schema->fields()[0].doc, "row id");
  EXPECT_TRUE(schema->fields()[0].required);
  ASSERT_NE(schema->FindField(6), nullptr);
  EXPECT_EQ(schema->FindField(6)->name, "ymin");
  EXPECT_EQ(schema->FindColumnName(6), "bbox.ymin");
  EXPECT_EQ(schema->FindField("tags.element")->id, 7);
  EXPECT_EQ(schema->FindField("props.value")->type->ToString(), "decimal(9, 2)");
  EXPECT_EQ(schema->FindField(10)->type->id(), TypeId::kGeometry);
  EXPECT_EQ(schema->FindField(99), nullptr);
  EXPECT_OK(schema->Validate());
}

TEST(SchemaTest, JsonRoundTripIsExact) {
  ASSERT_OK_AND_ASSIGN(auto schema, Schema::FromJson(kNestedSchemaJson));
  const std::string json = schema->ToJson();
  ASSERT_OK_AND_ASSIGN(auto again, Schema::FromJson(json));
  EXPECT_TRUE(schema->SameFields(*again));
  EXPECT_EQ(again->ToJson(), json);
  // Spec key order and spellings.
  EXPECT_EQ(
      json.rfind(R"({"type":"struct","schema-id":3,"identifier-field-ids":[1],"fields":[{)", 0),
      0u);
  EXPECT_NE(
      json.find(
          R"("type":{"type":"list","element-id":7,"element":"string","element-required":false})"),
      std::string::npos);
  EXPECT_NE(
      json.find(
          R"js({"type":"map","key-id":8,"key":"string","value-id":9,"value":"decimal(9, 2)","value-required":true})js"),
      std::string::npos);
  EXPECT_NE(json.find(R"("initial-default":null)"), std::string::npos);
}

TEST(SchemaTest, WorkedExampleSerializesExactly) {
  Schema schema(0, {NestedField::Required(1, "id", Type::Long()),
                    NestedField::Optional(2, "name", Type::String(), "the name")});
  EXPECT_EQ(schema.ToJson(),
            R"({"type":"struct","schema-id":0,"fields":[)"
            R"({"id":1,"name":"id","required":true,"type":"long"},)"
            R"({"id":2,"name":"name","required":false,"type":"string","doc":"the name"}]})");
}

TEST(SchemaTest, MissingKeysAreCorruptDataNamingTheKey) {
  EXPECT_THAT(Schema::FromJson(R"({"type":"struct","fields":[{"id":1,"name":"a","type":"int"}]})"),
              IsErrorWith(ErrorCode::kCorruptData, "'required'"));
  EXPECT_THAT(Schema::FromJson(R"({"type":"struct"})"),
              IsErrorWith(ErrorCode::kCorruptData, "'fields'"));
  EXPECT_THAT(Schema::FromJson(R"({"type":"struct","fields":[{"id":1,"name":"a","required":true,
      "type":{"type":"list","element-id":2,"element":"int"}}]})"),
              IsErrorWith(ErrorCode::kCorruptData, "'element-required'"));
  EXPECT_THAT(Schema::FromJson("{not json"), IsErrorWith(ErrorCode::kCorruptData, "malformed"));
  EXPECT_THAT(Schema::FromJson(R"({"type":"struct","fields":[{"id":"x","name":"a"}]})"),
              IsErrorWith(ErrorCode::kCorruptData, "'id'"));
}

TEST(SchemaTest, ValidateRejectsDuplicateIdsAndBadIdentifiers) {
  Schema dup(0, {NestedField::Required(1, "a", Type::Long()),
                 NestedField::Required(1, "b", Type::Long())});
  EXPECT_THAT(dup.Validate(), IsErrorWith(ErrorCode::kInvalidArgument, "duplicate"));
  Schema bad_ident(0, {NestedField::Optional(1, "a", Type::Long())}, {1});
  EXPECT_THAT(bad_ident.Validate(), IsErrorWith(ErrorCode::kInvalidArgument, "identifier"));
}

TEST(SchemaTest, AssignFreshIdsNumbersBreadthFirstPerStruct) {
  // Java order: a struct's own fields first (1..3), then the children of each (4.., 6..).
  Schema input(
      0,
      {NestedField::Required(10, "id", Type::Long()),
       NestedField::Optional(20, "bbox",
                             Type::Struct({NestedField::Required(21, "xmin", Type::Double()),
                                           NestedField::Required(22, "xmax", Type::Double())})),
       NestedField::Optional(30, "tags", Type::List(31, true, Type::String()))},
      {10});
  FreshIds fresh = AssignFreshIds(input, 0);
  EXPECT_EQ(fresh.last_column_id, 6);
  EXPECT_EQ(fresh.schema->FindField("id")->id, 1);
  EXPECT_EQ(fresh.schema->FindField("bbox")->id, 2);
  EXPECT_EQ(fresh.schema->FindField("tags")->id, 3);
  EXPECT_EQ(fresh.schema->FindField("bbox.xmin")->id, 4);
  EXPECT_EQ(fresh.schema->FindField("bbox.xmax")->id, 5);
  EXPECT_EQ(fresh.schema->FindField("tags.element")->id, 6);
  EXPECT_EQ(fresh.schema->identifier_field_ids(), std::vector<std::int32_t>{1});
  EXPECT_EQ(fresh.old_to_new.at(22), 5);
  EXPECT_OK(fresh.schema->Validate());
}

}  // namespace
}  // namespace geolake::table
