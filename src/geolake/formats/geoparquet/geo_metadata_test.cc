#include "geolake/formats/geoparquet/geo_metadata.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "geolake/testing/testing.h"

namespace geolake::geoparquet {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(::geolake::testing::SourceDir() + "/src/geolake/formats/geoparquet/testdata/" +
                   name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A worked example of GeoParquet 1.1 "geo" metadata (an Iceberg data file with WKB and a bbox
// covering).
constexpr std::string_view kWorkedExample =
    R"({"version":"1.1.0","primary_column":"geom",)"
    R"("columns":{"geom":{"encoding":"WKB","geometry_types":["Polygon","MultiPolygon"],)"
    R"("bbox":[-10.5,35.0,30.2,60.1],)"
    R"("covering":{"bbox":{"xmin":["bbox","xmin"],"ymin":["bbox","ymin"],)"
    R"("xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}})";

GeoMetadata WorkedExample() {
  GeoMetadata metadata;
  metadata.primary_column = "geom";
  GeoColumnMetadata column;
  column.geometry_types = {"Polygon", "MultiPolygon"};
  column.bbox = {-10.5, 35.0, 30.2, 60.1};
  column.covering = BboxCovering::ForColumn("bbox");
  metadata.columns.emplace_back("geom", column);
  return metadata;
}

TEST(GeoMetadataTest, WritesTheWorkedExampleExactly) {
  ASSERT_OK_AND_ASSIGN(std::string json, WorkedExample().ToJson());
  EXPECT_EQ(json, kWorkedExample);
}

TEST(GeoMetadataTest, ParsesTheWorkedExample) {
  ASSERT_OK_AND_ASSIGN(GeoMetadata metadata, GeoMetadata::Parse(kWorkedExample));
  EXPECT_EQ(metadata, WorkedExample());
  const GeoColumnMetadata* column = metadata.FindColumn("geom");
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(column->covering->column(), "bbox");
  EXPECT_EQ(column->BboxEnvelope(), (geo::Envelope{-10.5, 35.0, 30.2, 60.1}));
  EXPECT_TRUE(column->IsDefaultCrs());
  EXPECT_EQ(metadata.FindColumn("other"), nullptr);
}

TEST(GeoMetadataTest, RoundTripsEveryOptionalField) {
  GeoMetadata metadata = WorkedExample();
  GeoColumnMetadata& geom = metadata.columns[0].second;
  geom.crs_mode = CrsMode::kProjJson;
  geom.crs_projjson = ReadFixture("projjson_epsg_5070.json");
  geom.edges = "spherical";
  geom.orientation = "counterclockwise";
  geom.epoch = 2021.47;
  geom.bbox = {0, 1, 2, 3, 4, 5};
  GeoColumnMetadata unknown_crs;
  unknown_crs.crs_mode = CrsMode::kNull;
  unknown_crs.geometry_types = {"Point Z"};
  metadata.columns.emplace_back("footprint", unknown_crs);

  ASSERT_OK_AND_ASSIGN(std::string json, metadata.ToJson());
  EXPECT_NE(json.find(R"("crs":null)"), std::string::npos) << json;
  ASSERT_OK_AND_ASSIGN(GeoMetadata back, GeoMetadata::Parse(json));
  // The PROJJSON comes back compact, with its keys in the file's order.
  GeoColumnMetadata& back_geom = back.columns[0].second;
  EXPECT_EQ(back_geom.crs_projjson.substr(0, 60),
            R"({"$schema":"https://proj.org/schemas/v0.7/projjson.schema.js)");
  EXPECT_FALSE(back_geom.IsDefaultCrs());
  // (metadata.columns grew since `geom` was taken, so index again.)
  metadata.columns[0].second.crs_projjson = back_geom.crs_projjson;
  EXPECT_EQ(back, metadata);
  ASSERT_OK_AND_ASSIGN(std::string again, back.ToJson());
  EXPECT_EQ(again, json);
}

TEST(GeoMetadataTest, ParsesDuckDbOutput) {
  // Written by DuckDB 1.5.6 (COPY ... TO 'x.parquet') for a Polygon, a MultiPolygon and a
  // Point Z; read back with parquet_kv_metadata().
  ASSERT_OK_AND_ASSIGN(GeoMetadata metadata,
                       GeoMetadata::Parse(ReadFixture("duckdb_1_5_geo.json")));
  EXPECT_EQ(metadata.version, "1.0.0");
  EXPECT_EQ(metadata.primary_column, "geom");
  ASSERT_EQ(metadata.columns.size(), 1u);
  const GeoColumnMetadata& column = metadata.columns[0].second;
  EXPECT_EQ(column.encoding, "WKB");
  EXPECT_EQ(column.crs_mode, CrsMode::kOmitted);
  EXPECT_TRUE(column.IsDefaultCrs());
  ASSERT_OK_AND_ASSIGN(auto types, column.DecodedGeometryTypes());
  ASSERT_EQ(types.size(), 3u);
  EXPECT_EQ(types[2], (geo::TypedDimensions{geo::GeometryType::kPoint, geo::Dimensions::kXYZ}));
  EXPECT_EQ(column.bbox, (std::vector<double>{0, -5, 1, 11, 12, 1}));
  EXPECT_EQ(column.BboxEnvelope(), (geo::Envelope{0, -5, 11, 12}));
  EXPECT_FALSE(column.covering.has_value());
  // A 1.0.0 document is read, but geolake writes only 1.1.0.
  EXPECT_THAT(metadata.ToJson(), IsErrorWith(ErrorCode::kInvalidArgument, "version '1.0.0'"));
  metadata.version = "1.1.0";
  EXPECT_OK(metadata.ToJson());
}

TEST(GeoMetadataTest, RecognisesCrs84ByIdentifier) {
  GeoColumnMetadata column;
  column.crs_mode = CrsMode::kProjJson;
  column.crs_projjson = R"({"type":"GeographicCRS","id":{"authority":"OGC","code":"CRS84"}})";
  EXPECT_TRUE(column.IsDefaultCrs());
  column.crs_projjson = R"({"type":"GeographicCRS","id":{"authority":"EPSG","code":4326}})";
  EXPECT_TRUE(column.IsDefaultCrs());
  column.crs_projjson = R"({"type":"ProjectedCRS","id":{"authority":"EPSG","code":3857}})";
  EXPECT_FALSE(column.IsDefaultCrs());
  column.crs_mode = CrsMode::kNull;
  EXPECT_FALSE(column.IsDefaultCrs());
}

TEST(GeoMetadataTest, IgnoresUnknownKeysAndKeepsUnknownValues) {
  ASSERT_OK_AND_ASSIGN(
      GeoMetadata metadata,
      GeoMetadata::Parse(R"({"version":"1.1.0","primary_column":"g","creator":{"x":1},
        "columns":{"g":{"encoding":"point","geometry_types":["Curve"],"future":true,
                        "covering":{"h3":{}}}}})"));
  const GeoColumnMetadata& column = metadata.columns[0].second;
  EXPECT_EQ(column.encoding, "point");
  EXPECT_FALSE(column.covering.has_value());
  EXPECT_THAT(column.DecodedGeometryTypes(), IsErrorWith(ErrorCode::kCorruptData, "'Curve'"));
  EXPECT_THAT(metadata.ToJson(), IsErrorWith(ErrorCode::kInvalidArgument, "encoding 'point'"));
}

TEST(GeoMetadataTest, MalformedDocumentsAreCorruptData) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {"", "not JSON"},
      {"{\"version\":", "not JSON"},
      {"[1]", "the document must be an object"},
      {R"({"primary_column":"g","columns":{"g":{"encoding":"WKB"}}})", "has no 'version'"},
      {R"({"version":1,"primary_column":"g","columns":{}})", "version must be a string"},
      {R"({"version":"1.1.0","columns":{"g":{"encoding":"WKB"}}})", "has no 'primary_column'"},
      {R"({"version":"1.1.0","primary_column":"g"})", "has no 'columns'"},
      {R"({"version":"1.1.0","primary_column":"g","columns":[]})", "columns must be an object"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{}})", "'columns' is empty"},
      {R"({"version":"1.1.0","primary_column":"h","columns":{"g":{"encoding":"WKB"}}})",
       "primary_column 'h' is not among the columns"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{}}})",
       "column 'g' has no 'encoding'"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "geometry_types":"Point"}}})",
       "geometry_types must be an array"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "crs":"EPSG:4326"}}})",
       "crs must be a PROJJSON object or null"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "bbox":[1,2,3]}}})",
       "bbox must be an array of 4 or 6 numbers"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "bbox":[1,2,"3",4]}}})",
       "found a string"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "epoch":"2020"}}})",
       "epoch must be a number"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "edges":1}}})",
       "edges must be a string"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "covering":{"bbox":{"xmin":["b","xmin"],"ymin":["b","ymin"],"xmax":["b","xmax"]}}}}})",
       "covering.bbox.ymax is missing"},
      {R"({"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB",
          "covering":{"bbox":{"xmin":["b","xmin"],"ymin":["b","ymin"],"xmax":["c","xmax"],
          "ymax":["b","ymax"]}}}}})",
       "different root columns ('b' and 'c')"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(GeoMetadata::Parse(c.json), IsErrorWith(ErrorCode::kCorruptData, c.message))
        << c.json;
  }
  EXPECT_THAT(GeoMetadata::Parse(R"({"version":"2.0.0","primary_column":"g","columns":{}})"),
              IsErrorWith(ErrorCode::kNotImplemented, "version '2.0.0'"));
}

TEST(GeoMetadataTest, ValidateRefusesWhat11CannotSay) {
  auto expect_invalid = [](GeoMetadata metadata, const char* message) {
    EXPECT_THAT(metadata.ToJson(), IsErrorWith(ErrorCode::kInvalidArgument, message));
  };
  GeoMetadata m = WorkedExample();
  m.columns[0].second.geometry_types = {"Point M"};
  expect_invalid(m, "geometry type 'Point M' is not allowed");
  m = WorkedExample();
  m.columns[0].second.geometry_types = {"Point", "Point"};
  expect_invalid(m, "listed twice");
  m = WorkedExample();
  m.columns[0].second.bbox = {0, 0, std::numeric_limits<double>::quiet_NaN(), 1};
  expect_invalid(m, "non-finite");
  m = WorkedExample();
  m.columns[0].second.bbox = {0, 0, 1};
  expect_invalid(m, "bbox has 3 values");
  m = WorkedExample();
  m.columns[0].second.edges = "geodesic";
  expect_invalid(m, "edges 'geodesic'");
  m = WorkedExample();
  m.columns[0].second.orientation = "clockwise";
  expect_invalid(m, "orientation 'clockwise'");
  m = WorkedExample();
  m.columns[0].second.crs_mode = CrsMode::kProjJson;
  m.columns[0].second.crs_projjson = "{not json";
  expect_invalid(m, "crs is not a PROJJSON object");
  m = WorkedExample();
  m.columns[0].second.covering->ymax = {"other", "ymax"};
  expect_invalid(m, "different root columns");
  m = WorkedExample();
  m.primary_column = "nope";
  expect_invalid(m, "primary column 'nope'");
  m = WorkedExample();
  m.columns.clear();
  expect_invalid(m, "no geometry columns");
  m = WorkedExample();
  m.columns.push_back(m.columns[0]);
  expect_invalid(m, "listed twice");
  m = WorkedExample();
  m.columns[0].first = "\xff";
  m.primary_column = "\xff";
  expect_invalid(m, "UTF-8");
}

}  // namespace
}  // namespace geolake::geoparquet
