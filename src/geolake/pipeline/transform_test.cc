#include "geolake/pipeline/transform.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <utility>

#include "geolake/core/utf8.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/validity_fast_path.h"
#include "geolake/geo/wkb.h"
#include "geolake/geo/wkt.h"
#include "geolake/sources/gdal_source.h"
#include "geolake/testing/testing.h"

namespace geolake::pipeline {
namespace {

using ::geolake::testing::IsError;
using geoparquet::FieldDef;
using geoparquet::FieldType;

// A batch with fields (name string, n int64) and the given WKT geometries ("" = null).
geoparquet::FeatureBatch MakeBatch(const std::vector<std::string>& wkts) {
  geoparquet::FeatureBatch batch;
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
                                       layout::PartitionScheme scheme = {
                                           layout::PartitionKind::kQuadkey, 1}) {
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

// A row the source could not decode (FeatureBatch::unreadable: a GeoJSONSeq record that is not
// JSON) is rejected under every policy, with the source's reason; the rows around it are kept.
TEST(TransformTest, UnreadableRowsAreRejectedUnderEveryPolicy) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  const std::vector<FieldDef> fields = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
  for (const InvalidPolicy policy :
       {InvalidPolicy::kKeep, InvalidPolicy::kMakeValid, InvalidPolicy::kReject}) {
    auto t = Make(ctx.get(), policy, fields);
    geoparquet::FeatureBatch in = MakeBatch({"POINT (1 2)", "", "POINT (3 4)", ""});
    in.unreadable.push_back({1, "line 2: not JSON"});
    in.unreadable.push_back({3, "line 5: not JSON"});
    TransformedBatch out;
    ASSERT_OK(t->Apply(in, &out));
    ASSERT_EQ(out.batch.num_rows(), 2);
    EXPECT_EQ(out.batch.feature_index[0], in.feature_index[0]);
    EXPECT_EQ(out.batch.feature_index[1], in.feature_index[2]);
    ASSERT_EQ(out.rejects.size(), 2u);
    EXPECT_EQ(out.rejects[0].feature_index, in.feature_index[1]);
    EXPECT_EQ(out.rejects[0].reason, "unreadable record: line 2: not JSON");
    EXPECT_EQ(out.rejects[1].feature_index, in.feature_index[3]);
  }
}

// Issue 17 item 8: a string value that is not UTF-8 (Latin-1 "Z\xfcrich" from a CSV or a DBF
// whose encoding no one declared) never reaches a string column. make-valid and keep replace
// each invalid byte by U+FFFD and count the values per table column; reject rejects the row
// naming the field. Before, the bytes were copied as they came and DuckDB refused the file.
TEST(TransformTest, InvalidUtf8IsReplacedAndCountedOrRejectedNamingTheField) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  const std::vector<FieldDef> fields = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
  geoparquet::FeatureBatch in = MakeBatch({"POINT (1 2)", "POINT (3 4)", "POINT (5 6)"});
  geoparquet::Column& names = in.columns[0];
  names.bytes.clear();
  names.offsets = {0};
  for (const std::string& value :
       {std::string("Z\xfcrich"), std::string("Gen\xc3\xa8ve"), std::string("\xe9\xe8 \xc3")}) {
    names.bytes += value;
    names.offsets.push_back(static_cast<std::int64_t>(names.bytes.size()));
  }
  for (const InvalidPolicy policy : {InvalidPolicy::kKeep, InvalidPolicy::kMakeValid}) {
    auto t = Make(ctx.get(), policy, fields);
    TransformedBatch out;
    ASSERT_OK(t->Apply(in, &out));
    ASSERT_EQ(out.batch.num_rows(), 3);
    EXPECT_TRUE(out.rejects.empty());
    const geoparquet::Column& col = out.batch.columns[0];
    EXPECT_EQ(col.StringAt(0), "Z\xef\xbf\xbdrich");
    EXPECT_EQ(col.StringAt(1), "Gen\xc3\xa8ve");  // already UTF-8: unchanged
    EXPECT_EQ(col.StringAt(2), "\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd");
    EXPECT_TRUE(IsValidUtf8(col.bytes));
    ASSERT_EQ(out.utf8_replaced.size(), 2u);
    EXPECT_EQ(out.utf8_replaced[0], 2);  // values, not bytes
    EXPECT_EQ(out.utf8_replaced[1], 0);
    EXPECT_EQ(out.batch.columns[1].ints, (std::vector<std::int64_t>{0, 10, 20}));
  }
  auto t = Make(ctx.get(), InvalidPolicy::kReject, fields);
  TransformedBatch out;
  ASSERT_OK(t->Apply(in, &out));
  ASSERT_EQ(out.batch.num_rows(), 1);
  EXPECT_EQ(out.batch.columns[0].StringAt(0), "Gen\xc3\xa8ve");
  ASSERT_EQ(out.rejects.size(), 2u);
  EXPECT_EQ(out.rejects[0].feature_index, in.feature_index[0]);
  EXPECT_EQ(out.rejects[0].reason, "invalid UTF-8 in field 'name': Z\\xfcrich");
  EXPECT_EQ(out.rejects[1].feature_index, in.feature_index[2]);
  EXPECT_TRUE(out.utf8_replaced.empty());

  // The same for a whole batch (convert's path): only string columns, values counted.
  geoparquet::FeatureBatch copy = in;
  const std::vector<std::int64_t> changed = ReplaceInvalidUtf8InStrings(&copy);
  EXPECT_EQ(changed, (std::vector<std::int64_t>{2, 0}));
  EXPECT_TRUE(IsValidUtf8(copy.columns[0].bytes));
  EXPECT_EQ(copy.columns[0].StringAt(1), "Gen\xc3\xa8ve");
}

// ISO WKB (little-endian) of a point and of a line string, any doubles allowed.
std::string PointWkb(double x, double y) {
  std::string wkb("\x01\x01\x00\x00\x00", 5);
  wkb.append(reinterpret_cast<const char*>(&x), 8);
  wkb.append(reinterpret_cast<const char*>(&y), 8);
  return wkb;
}
std::string LineWkb(const std::vector<std::pair<double, double>>& points) {
  std::string wkb("\x01\x02\x00\x00\x00", 5);
  const auto n = static_cast<std::uint32_t>(points.size());
  wkb.append(reinterpret_cast<const char*>(&n), 4);
  for (const auto& [x, y] : points) {
    wkb.append(reinterpret_cast<const char*>(&x), 8);
    wkb.append(reinterpret_cast<const char*>(&y), 8);
  }
  return wkb;
}

// Issue 17 item 12: a non-finite coordinate (NaN or infinity) makes that row invalid under
// every policy: it goes to the rejects with its reason, the other rows are kept, the batch
// does not fail. Before, keep and make-valid kept POINT (nan 1), and an infinite coordinate
// later failed the whole unit (exit 2).
TEST(TransformTest, NonFiniteCoordinatesAreRejectedPerRowUnderEveryPolicy) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  const std::vector<FieldDef> fields = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::string> wkbs = {PointWkb(1, 2),
                                         PointWkb(inf, 0),
                                         PointWkb(nan, 1),
                                         LineWkb({{0, 0}, {inf, 1}}),
                                         LineWkb({{0, 0}, {1, nan}, {2, 2}}),
                                         PointWkb(-inf, nan),
                                         PointWkb(3, 4)};
  for (const InvalidPolicy policy :
       {InvalidPolicy::kKeep, InvalidPolicy::kMakeValid, InvalidPolicy::kReject}) {
    SCOPED_TRACE(static_cast<int>(policy));
    geoparquet::FeatureBatch in = MakeBatch(std::vector<std::string>(wkbs.size(), "POINT (0 0)"));
    in.wkb.clear();
    in.wkb_offsets = {0};
    for (const std::string& w : wkbs) {
      in.wkb += w;
      in.wkb_offsets.push_back(static_cast<std::int64_t>(in.wkb.size()));
    }
    auto t = Make(ctx.get(), policy, fields);
    TransformedBatch out;
    ASSERT_OK(t->Apply(in, &out));
    ASSERT_EQ(out.batch.num_rows(), 2);
    EXPECT_EQ(out.batch.feature_index[0], in.feature_index[0]);
    EXPECT_EQ(out.batch.feature_index[1], in.feature_index[6]);
    ASSERT_EQ(out.rejects.size(), 5u);
    for (std::size_t i = 0; i < out.rejects.size(); ++i) {
      EXPECT_EQ(out.rejects[i].feature_index, in.feature_index[i + 1]);
      EXPECT_THAT(out.rejects[i].reason, ::testing::HasSubstr("non-finite coordinate"));
    }
  }
  // POINT EMPTY (a NaN coordinate in WKB) is empty, not non-finite.
  auto keep = Make(ctx.get(), InvalidPolicy::kKeep, fields);
  TransformedBatch out;
  ASSERT_OK(keep->Apply(MakeBatch({"POINT EMPTY"}), &out));
  EXPECT_EQ(out.batch.num_rows(), 1);
  EXPECT_TRUE(out.rejects.empty());
}

// A spike is repaired by dropping it (RepairSpikes, no GEOS) and counted as made valid, with
// the envelope of what is kept; under `reject` the same polygon is rejected with GEOS's reason.
TEST(TransformTest, MakeValidDropsSpikes) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  const std::vector<FieldDef> fields = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
  const char* spiked = "POLYGON ((0 0, 4 0, 4 2, 9 2, 4 2, 4 4, 0 4, 0 0))";
  TransformedBatch out;
  auto repair = Make(ctx.get(), InvalidPolicy::kMakeValid, fields);
  ASSERT_OK(repair->Apply(MakeBatch({spiked}), &out));
  ASSERT_EQ(out.batch.num_rows(), 1);
  EXPECT_EQ(out.made_valid, 1);
  ASSERT_OK_AND_ASSIGN(std::string wkt, geo::WkbToWkt(geo::AsBytes(out.batch.wkb)));
  EXPECT_EQ(wkt, "POLYGON ((0 0, 4 0, 4 2, 4 4, 0 4, 0 0))");
  EXPECT_EQ(out.summaries[0].envelope.xmax, 4);

  auto reject = Make(ctx.get(), InvalidPolicy::kReject, fields);
  ASSERT_OK(reject->Apply(MakeBatch({spiked}), &out));
  EXPECT_EQ(out.batch.num_rows(), 0);
  ASSERT_EQ(out.rejects.size(), 1u);
  EXPECT_THAT(out.rejects[0].reason, ::testing::HasSubstr("Self-intersection"));
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
  ASSERT_OK_AND_ASSIGN(auto quad, CellForLonLat({layout::PartitionKind::kQuadkey, 2}, 10, 10));
  EXPECT_EQ(quad, std::optional<std::string>("12"));
  ASSERT_OK_AND_ASSIGN(auto none, CellForLonLat({layout::PartitionKind::kNone, 0}, 10, 10));
  EXPECT_FALSE(none.has_value());
  ASSERT_OK_AND_ASSIGN(auto s2, CellForLonLat({layout::PartitionKind::kS2, 3}, 10, 10));
  ASSERT_TRUE(s2.has_value());
  EXPECT_FALSE(s2->empty());
  EXPECT_THAT(CellForLonLat({layout::PartitionKind::kQuadkey, 2}, NAN, 0).status(),
              IsError(ErrorCode::kInvalidArgument));
}

TEST(TransformTest, AppendRowsCopiesValuesNullsAndWidensInts) {
  geoparquet::FeatureBatch in = MakeBatch({"POINT (1 2)", "", "POINT (3 4)", "POINT (5 6)"});
  in.columns[0].valid[2] = 0;  // a null string
  in.columns[1].valid[0] = 0;  // a null int
  const std::vector<std::uint32_t> rows = {3, 0, 2, 2, 1};
  geoparquet::Column ints;
  ints.type = FieldType::kInt64;
  AppendRows(&in.columns[1], rows, &ints);
  EXPECT_EQ(ints.valid, (std::vector<std::uint8_t>{1, 0, 1, 1, 1}));
  EXPECT_EQ(ints.ints, (std::vector<std::int64_t>{30, 0, 20, 20, 10}));
  geoparquet::Column doubles;
  doubles.type = FieldType::kDouble;
  AppendRows(&in.columns[1], rows, &doubles);
  EXPECT_EQ(doubles.valid, ints.valid);
  EXPECT_EQ(doubles.doubles, (std::vector<double>{30, 0, 20, 20, 10}));
  geoparquet::Column strings;
  AppendRows(&in.columns[0], rows, &strings);
  const std::uint32_t one_more[] = {3};
  AppendRows(&in.columns[0], one_more, &strings);  // one more, appended after
  EXPECT_EQ(strings.valid, (std::vector<std::uint8_t>{1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(strings.bytes, "f3f0f1f3");  // row 2 is null
  EXPECT_EQ(strings.offsets, (std::vector<std::int64_t>{0, 2, 4, 4, 4, 6, 8}));
  geoparquet::Column nulls;
  AppendRows(nullptr, rows, &nulls);
  EXPECT_EQ(nulls.valid, (std::vector<std::uint8_t>(5, 0)));
  EXPECT_EQ(nulls.offsets, (std::vector<std::int64_t>(6, 0)));
}

TEST(TransformTest, KeptRowsKeepTheirAttributesAndCellsAreSharedPerBatch) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  auto t = Make(ctx.get(), InvalidPolicy::kReject,
                {{"name", FieldType::kString}, {"n", FieldType::kInt64}}, "",
                {layout::PartitionKind::kQuadkey, 4});
  TransformedBatch out;
  ASSERT_OK(t->Apply(
      MakeBatch({"POLYGON ((10 10, 11 10, 11 11, 10 10))", kBowtie, "POINT (10.5 10.5)", "",
                 "POINT (-120 40)", "POLYGON ((100 -30, 101 -30, 101 -30, 101 -29, 100 -30))"}),
      &out));
  ASSERT_EQ(out.batch.num_rows(), 4);
  EXPECT_EQ(out.batch.feature_index, (std::vector<std::int64_t>{100, 102, 104, 105}));
  EXPECT_EQ(out.batch.columns[0].bytes, "f0f2f4f5");
  EXPECT_EQ(out.batch.columns[1].ints, (std::vector<std::int64_t>{0, 20, 40, 50}));
  // Rows 0 and 2 share a cell, named once; the repeated-point triangle is valid for GEOS.
  ASSERT_EQ(out.cells.size(), 3u);
  EXPECT_EQ(out.cell_ids[0], out.cell_ids[1]);
  EXPECT_NE(out.cell_ids[0], out.cell_ids[2]);
  ASSERT_OK_AND_ASSIGN(auto expected,
                       CellForLonLat({layout::PartitionKind::kQuadkey, 4}, 10.5, 10.5));
  EXPECT_EQ(out.cells[static_cast<std::size_t>(out.cell_ids[0])], *expected);
  // Each kept geometry's bytes are its own ISO WKB.
  for (std::int64_t row = 0; row < out.batch.num_rows(); ++row) {
    ASSERT_OK_AND_ASSIGN(auto summary,
                         geo::SummarizeWkb(out.batch.GeometryAt(static_cast<std::size_t>(row))));
    EXPECT_EQ(summary.envelope, out.summaries[static_cast<std::size_t>(row)].envelope);
  }
  ASSERT_EQ(out.rejects.size(), 2u);
  EXPECT_EQ(out.rejects[0].feature_index, 101);
  EXPECT_EQ(out.rejects[1].reason, "null geometry");

  // TakeRows gives the same rows as a transform of just those rows.
  geoparquet::FeatureBatch part;
  std::vector<geo::WkbSummary> summaries;
  TakeRows(out, {2, 0}, &part, &summaries);
  TransformedBatch direct;
  ASSERT_OK(
      t->Apply(MakeBatch({"POINT (-120 40)", "POLYGON ((10 10, 11 10, 11 11, 10 10))"}), &direct));
  EXPECT_EQ(part.feature_index, (std::vector<std::int64_t>{104, 100}));
  EXPECT_EQ(part.columns[0].bytes, "f4f0");
  EXPECT_EQ(part.columns[1].ints, (std::vector<std::int64_t>{40, 0}));
  EXPECT_EQ(part.wkb, direct.batch.wkb);
  EXPECT_EQ(part.wkb_offsets, direct.batch.wkb_offsets);
  EXPECT_EQ(part.geometry_valid, direct.batch.geometry_valid);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[1].envelope, direct.summaries[1].envelope);
}

// The validity shortcut against GEOS on real coordinates: every polygon of the real data sets,
// every ring of them as a polygon of its own, and windows of 3..63 consecutive vertices of
// each ring closed into a polygon (so real-world spikes, repeats and near-collinear runs).
// Whatever the shortcut proves valid, GEOS must find valid.
TEST(TransformTest, ValidityShortcutAgreesWithGeosOnRealData) {
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  std::int64_t cases = 0, proved = 0, geos_valid = 0;
  std::int64_t features = 0, features_proved = 0, features_valid = 0;
  // Returns {proved, valid for GEOS}.
  const auto check = [&](const std::string& wkb) -> std::pair<bool, bool> {
    const bool fast = geo::ProvablyValidPolygon(geo::AsBytes(wkb));
    auto geometry = geo::Geometry::FromWkb(*ctx, std::string_view(wkb));
    bool valid = false;
    if (geometry.ok()) {
      auto is_valid = geometry->IsValid();
      EXPECT_TRUE(is_valid.ok());
      valid = is_valid.ok() && *is_valid;
    }
    ++cases;
    proved += fast ? 1 : 0;
    geos_valid += valid ? 1 : 0;
    if (fast && !valid) {
      ADD_FAILURE() << "proved valid, GEOS says invalid: " << *geo::WkbToWkt(geo::AsBytes(wkb));
    }
    return {fast, valid};
  };
  const auto ring_polygon = [](const std::vector<double>& coords, std::size_t first,
                               std::size_t count, int stride) {
    geo::FlatGeometry polygon;
    polygon.parts.push_back({geo::GeometryType::kPolygon, 1, 0, 1});
    polygon.rings.push_back({0, static_cast<std::uint32_t>(count + 1)});
    for (std::size_t idx = 0; idx <= count; ++idx) {
      const std::size_t at = (first + (idx == count ? 0 : idx)) * static_cast<std::size_t>(stride);
      polygon.coords.push_back(coords[at]);
      polygon.coords.push_back(coords[at + 1]);
    }
    return geo::WriteWkb(polygon);
  };
  int files = 0;
  for (const char* name : {"us_states", "ne_countries_10m", "us_counties"}) {
    const std::string path = ::geolake::testing::DataPath(std::string(name) + ".gpkg");
    auto source = sources::GdalSource::Open(path);
    if (!source.ok()) continue;
    ++files;
    geoparquet::FeatureBatch batch;
    while (true) {
      ASSERT_OK_AND_ASSIGN(std::int64_t rows, (*source)->ReadBatch(1024, &batch));
      if (rows == 0) break;
      for (std::size_t row = 0; row < static_cast<std::size_t>(rows); ++row) {
        if (batch.geometry_valid[row] == 0) continue;
        const auto wkb = batch.GeometryAt(row);
        const auto [fast, valid] =
            check(std::string(reinterpret_cast<const char*>(wkb.data()), wkb.size()));
        ++features;
        features_proved += fast ? 1 : 0;
        features_valid += valid ? 1 : 0;
        ASSERT_OK_AND_ASSIGN(geo::FlatGeometry flat, geo::ParseWkb(wkb));
        if (flat.dims != geo::Dimensions::kXY) continue;
        for (const geo::GeometryRing& ring : flat.rings) {
          if (ring.count < 4) continue;
          std::vector<double> coords(flat.coords.begin() + ring.offset * 2,
                                     flat.coords.begin() + (ring.offset + ring.count) * 2);
          const std::size_t distinct = ring.count - 1;
          check(ring_polygon(coords, 0, distinct, 2));
          for (const std::size_t window : {3u, 4u, 5u, 7u, 12u, 24u, 63u}) {
            if (window >= distinct) continue;
            for (std::size_t first = 0; first + window <= distinct; first += window * 3) {
              check(ring_polygon(coords, first, window, 2));
            }
          }
        }
      }
    }
  }
  if (files < 3)
    GTEST_SKIP() << ::geolake::testing::MissingDataReason(
        "us_states, ne_countries_10m and us_counties .gpkg");
  std::printf(
      "validity shortcut on real data (%d files): %lld cases, %lld valid for GEOS, "
      "%lld proved valid\n",
      files, static_cast<long long>(cases), static_cast<long long>(geos_valid),
      static_cast<long long>(proved));
  std::printf("  whole features: %lld, %lld valid for GEOS, %lld proved valid\n",
              static_cast<long long>(features), static_cast<long long>(features_valid),
              static_cast<long long>(features_proved));
  EXPECT_GT(proved, geos_valid / 4);
  EXPECT_GT(features_proved, features_valid * 9 / 10);
}

TEST(TransformTest, ParsesPolicies) {
  ASSERT_OK_AND_ASSIGN(auto p, ParseInvalidPolicy("reject"));
  EXPECT_EQ(p, InvalidPolicy::kReject);
  EXPECT_THAT(ParseInvalidPolicy("drop").status(), IsError(ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace geolake::pipeline
