#include "geolake/pipeline/transform.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "geolake/core/testing.h"
#include "geolake/geo/wkt.h"

namespace geolake::pipeline {
namespace {

using sources::FieldDef;
using sources::FieldType;
using ::geolake::testing::IsError;

// A batch with fields (name string, n int64) and the given WKT geometries ("" = null).
sources::FeatureBatch MakeBatch(const std::vector<std::string>& wkts) {
  sources::FeatureBatch batch;
  batch.fields = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
  batch.columns.resize(2);
  batch.columns[0].type = FieldType::kString;
  batch.columns[1].type = FieldType::kInt64;
  for (std::size_t i = 0; i < wkts.size(); ++i) {
    batch.columns[0].valid.push_back(1);
    batch.columns[0].bytes += "f" + std::to_string(i);
    batch.columns[0].offsets.push_back(static_cast<std::int64_t>(batch.columns[0].bytes.size()));
    batch.columns[1].valid.push_back(1);
    batch.columns[1].ints.push_back(static_cast<std::int64_t>(i) * 10);
    if (!wkts[i].empty()) {
      auto geometry = geo::ParseWkt(wkts[i]);
      EXPECT_TRUE(geometry.ok()) << wkts[i];
      batch.wkb += geo::WriteWkb(*geometry);
    }
    batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
    batch.geometry_valid.push_back(wkts[i].empty() ? 0 : 1);
    batch.feature_index.push_back(static_cast<std::int64_t>(100 + i));
  }
  return batch;
}

constexpr const char* kBowtie = "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))";

std::unique_ptr<BatchTransformer> Make(geo::GeoContext* ctx, InvalidPolicy policy,
                                       std::vector<FieldDef> table_fields,
                                       std::string source_crs = "",
                                       PartitionScheme scheme = {PartitionKind::kQuadkey, 1}) {
  TransformOptions options;
  options.on_invalid = policy;
  options.partition = scheme;
  options.table_crs = "EPSG:4326";
  options.source_crs = std::move(source_crs);
  const std::vector<FieldDef> source = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
  auto mapping = MapFields(source, table_fields, "test");
  EXPECT_TRUE(mapping.ok());
  options.table_fields = std::move(table_fields);
  auto made = BatchTransformer::Make(ctx, std::move(options), *mapping);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return std::move(*made);
}

TEST(TransformTest, RejectPolicyRejectsInvalidNullAndEmptyWithReasons) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  auto t = Make(ctx.get(), InvalidPolicy::kReject,
                {{"name", FieldType::kString}, {"n", FieldType::kInt64}});
  TransformedBatch out;
  ASSERT_OK(t->Apply(MakeBatch({"POINT (10 20)", kBowtie, "", "LINESTRING EMPTY"}), &out));
  EXPECT_EQ(out.batch.num_rows(), 1);
  ASSERT_EQ(out.rejects.size(), 3u);
  EXPECT_EQ(out.rejects[0].feature_index, 101);
  EXPECT_THAT(out.rejects[0].reason, ::testing::HasSubstr("Self-intersection"));
  EXPECT_EQ(out.rejects[1].reason, "null geometry");
  EXPECT_EQ(out.rejects[2].reason, "empty geometry");
}

TEST(TransformTest, MakeValidRepairsAndKeepKeepsAsIs) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  const std::vector<FieldDef> fields = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
  TransformedBatch out;
  auto repair = Make(ctx.get(), InvalidPolicy::kMakeValid, fields);
  ASSERT_OK(repair->Apply(MakeBatch({kBowtie, ""}), &out));
  ASSERT_EQ(out.batch.num_rows(), 2);
  EXPECT_EQ(out.made_valid, 1);
  EXPECT_EQ(out.summaries[0].header.type, geo::GeometryType::kMultiPolygon);
  EXPECT_EQ(out.batch.geometry_valid[1], 0);  // the null stays null
  EXPECT_EQ(out.cell_ids[1], -1);

  auto keep = Make(ctx.get(), InvalidPolicy::kKeep, fields);
  ASSERT_OK(keep->Apply(MakeBatch({kBowtie}), &out));
  ASSERT_EQ(out.batch.num_rows(), 1);
  EXPECT_EQ(out.summaries[0].header.type, geo::GeometryType::kPolygon);
}

TEST(TransformTest, ReprojectsToTheTableCrsAndComputesTheCell) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  auto t = Make(ctx.get(), InvalidPolicy::kMakeValid,
                {{"name", FieldType::kString}, {"n", FieldType::kInt64}}, "EPSG:3857");
  TransformedBatch out;
  // Web Mercator (1113194.9, 1118890.0) is lon/lat (10, 10).
  ASSERT_OK(t->Apply(MakeBatch({"POINT (1113194.9079327357 1118889.9748579594)"}), &out));
  ASSERT_EQ(out.batch.num_rows(), 1);
  EXPECT_NEAR(out.summaries[0].envelope.xmin, 10.0, 1e-6);
  EXPECT_NEAR(out.summaries[0].envelope.ymin, 10.0, 1e-6);
  EXPECT_EQ(out.reprojected, 1);
  ASSERT_EQ(out.cells.size(), 1u);
  EXPECT_EQ(out.cells[out.cell_ids[0]], "1");  // zoom 1: north-east quadrant
}

TEST(TransformTest, MapsFieldsByNameWithNullsForMissingColumns) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  // Table: n as double (int64 widens), an extra column absent from the source; "name" dropped.
  auto t = Make(ctx.get(), InvalidPolicy::kMakeValid,
                {{"n", FieldType::kDouble}, {"extra", FieldType::kString}});
  TransformedBatch out;
  ASSERT_OK(t->Apply(MakeBatch({"POINT (1 2)", "POINT (3 4)"}), &out));
  ASSERT_EQ(out.batch.columns.size(), 2u);
  EXPECT_EQ(out.batch.columns[0].doubles, (std::vector<double>{0.0, 10.0}));
  EXPECT_EQ(out.batch.columns[1].valid, (std::vector<std::uint8_t>{0, 0}));
  EXPECT_EQ(out.batch.columns[1].offsets, (std::vector<std::int64_t>{0, 0, 0}));
}

TEST(TransformTest, IncompatibleTypesAreInvalidArgument) {
  const std::vector<FieldDef> source = {{"name", FieldType::kString}};
  EXPECT_THAT(MapFields(source, {{"name", FieldType::kInt64}}, "src").status(),
              IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(auto mapping, MapFields(source, {{"other", FieldType::kInt64}}, "src"));
  EXPECT_EQ(mapping.source_index, (std::vector<int>{-1}));
  EXPECT_EQ(mapping.dropped, (std::vector<std::string>{"name"}));
}

TEST(TransformTest, CellsForQuadkeyAndS2) {
  ASSERT_OK_AND_ASSIGN(auto quad, CellForLonLat({PartitionKind::kQuadkey, 2}, 10, 10));
  EXPECT_EQ(quad, std::optional<std::string>("12"));
  ASSERT_OK_AND_ASSIGN(auto none, CellForLonLat({PartitionKind::kNone, 0}, 10, 10));
  EXPECT_FALSE(none.has_value());
  ASSERT_OK_AND_ASSIGN(auto s2, CellForLonLat({PartitionKind::kS2, 3}, 10, 10));
  ASSERT_TRUE(s2.has_value());
  EXPECT_FALSE(s2->empty());
  EXPECT_THAT(CellForLonLat({PartitionKind::kQuadkey, 2}, NAN, 0).status(),
              IsError(ErrorCode::kInvalidArgument));
}

TEST(TransformTest, ParsesPolicies) {
  ASSERT_OK_AND_ASSIGN(auto p, ParseInvalidPolicy("reject"));
  EXPECT_EQ(p, InvalidPolicy::kReject);
  EXPECT_THAT(ParseInvalidPolicy("drop").status(), IsError(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace geolake::pipeline
