// FgbSource and GeoJsonSeqSource against GdalSource: the same sources, units that cover every
// feature once for any unit size, the same rows and values as GDAL gives; and GeoJSONSeq's
// text cases (CRLF, blank lines, no final newline, BOM, RFC 8142 separators, malformed records).
#include <gdal.h>
#include <gdal_utils.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stop_token>
#include <string>
#include <tuple>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/sources/discover.h"
#include "geolake/sources/fgb_source.h"
#include "geolake/sources/geojsonseq_source.h"
#include "geolake/sources/unit_reader.h"
#include "geolake/testing/environment.h"
#include "geolake/testing/temp_dir.h"
#include "geolake/testing/testing.h"

namespace geolake::sources {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;
using geoparquet::UnreadableRow;

namespace fs = std::filesystem;

using ::geolake::testing::DataDir;

std::vector<std::string> DataFiles(const std::string& extension) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(DataDir(), ec)) {
    if (entry.path().extension() == extension) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A scratch folder of this test, removed at the end.
class TempDir {
 public:
  TempDir() : dir_("stream-sources") { EXPECT_TRUE(dir_.ok()); }
  std::string File(const std::string& name) const { return dir_.Join(name); }

 private:
  ::geolake::testing::TempDir dir_;
};

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// One row, every value as text, for comparisons with readable failure messages.
struct Row {
  std::int64_t feature_index = 0;
  bool has_geometry = false;
  std::string wkb;
  std::vector<std::string> values;  // "null" or the value
  bool operator==(const Row&) const = default;
};

std::string ValueText(const Column& col, std::size_t row) {
  if (col.valid[row] == 0) return "null";
  switch (col.type) {
    case FieldType::kDouble: {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.17g", col.doubles[row]);
      return buf;
    }
    case FieldType::kString:
    case FieldType::kBinary:
      return "'" + std::string(col.StringAt(row)) + "'";
    default:
      return std::to_string(col.ints[row]);
  }
}

struct ReadResult {
  std::vector<FieldDef> fields;
  std::vector<Row> rows;
  std::vector<std::string> unreadable;  // "feature_index: reason"
};

// Read every unit of `source` in order with small batches (so batch ends fall everywhere).
ReadResult ReadAll(const DiscoveredSource& source, std::int64_t batch_rows = 97) {
  ReadResult out;
  out.fields = source.fields;
  FeatureBatch batch;
  for (const SourceUnit& unit : source.units) {
    auto reader = UnitReader::Open(unit);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return out;
    for (;;) {
      auto rows = (*reader)->ReadBatch(batch_rows, 64 * 1024, &batch);
      EXPECT_TRUE(rows.ok()) << rows.status().ToString();
      if (!rows.ok() || *rows == 0) break;
      EXPECT_EQ(batch.num_rows(), *rows);
      for (const UnreadableRow& u : batch.unreadable) {
        out.unreadable.push_back(std::to_string(batch.feature_index[u.row]) + ": " + u.reason);
      }
      for (std::int64_t r = 0; r < *rows; ++r) {
        const auto row = static_cast<std::size_t>(r);
        Row got;
        got.feature_index = batch.feature_index[row];
        got.has_geometry = batch.geometry_valid[row] != 0;
        const auto wkb = batch.GeometryAt(row);
        got.wkb.assign(reinterpret_cast<const char*>(wkb.data()), wkb.size());
        for (const Column& col : batch.columns) got.values.push_back(ValueText(col, row));
        out.rows.push_back(std::move(got));
      }
    }
  }
  return out;
}

DiscoveredSource DiscoverOne(const std::string& path, bool native, std::int64_t unit_rows) {
  DiscoverOptions options;
  options.unit_rows = unit_rows;
  options.native_fgb = native;
  options.native_geojsonseq = native;
  options.native_geojson_min_bytes = 0;  // every FeatureCollection, however small
  // GeoJSONSeq is scanned in blocks on an executor of two threads, as ingest's is.
  auto executor = ThreadPool::Make(2);
  EXPECT_TRUE(executor.ok());
  if (!executor.ok()) return {};
  options.executor = executor->get();
  auto sources = DiscoverSources({path}, options);
  EXPECT_TRUE(sources.ok()) << path << ": " << sources.status().ToString();
  if (!sources.ok() || sources->size() != 1) return {};
  return std::move(sources->front());
}

void ExpectSameRows(const ReadResult& gdal, const ReadResult& native, const std::string& at) {
  ASSERT_EQ(gdal.fields.size(), native.fields.size()) << at;
  for (std::size_t i = 0; i < gdal.fields.size(); ++i) {
    EXPECT_EQ(gdal.fields[i].name, native.fields[i].name) << at;
    EXPECT_EQ(gdal.fields[i].type, native.fields[i].type) << at;
  }
  ASSERT_EQ(gdal.rows.size(), native.rows.size()) << at;
  int reported = 0;
  for (std::size_t i = 0; i < gdal.rows.size() && reported < 5; ++i) {
    const Row& g = gdal.rows[i];
    const Row& n = native.rows[i];
    if (g == n) continue;
    ++reported;
    EXPECT_EQ(g.feature_index, n.feature_index) << at << " row " << i;
    EXPECT_EQ(g.has_geometry, n.has_geometry) << at << " row " << i;
    EXPECT_EQ(g.wkb.size(), n.wkb.size()) << at << " row " << i;
    EXPECT_TRUE(g.wkb == n.wkb) << at << " row " << i << ": WKB differs";
    EXPECT_EQ(g.values, n.values) << at << " row " << i;
  }
  EXPECT_EQ(reported, 0) << at;
}

// Every feature index 0..n-1 exactly once, in order.
void ExpectEachFeatureOnce(const ReadResult& read, std::int64_t n, const std::string& at) {
  ASSERT_EQ(static_cast<std::int64_t>(read.rows.size()), n) << at;
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(read.rows[static_cast<std::size_t>(i)].feature_index, i) << at;
  }
}

void CompareWithGdal(const std::string& path, std::int64_t unit_rows) {
  const DiscoveredSource gdal = DiscoverOne(path, false, unit_rows);
  const DiscoveredSource native = DiscoverOne(path, true, unit_rows);
  const std::string at = path + " (unit_rows " + std::to_string(unit_rows) + ")";
  ASSERT_FALSE(native.units.empty()) << at;
  EXPECT_GE(native.units.front().first_byte, 0) << at << ": not read natively";
  EXPECT_EQ(gdal.layer, native.layer) << at;
  EXPECT_EQ(gdal.driver, native.driver) << at;
  EXPECT_EQ(gdal.feature_count, native.feature_count) << at;
  EXPECT_EQ(gdal.crs_projjson, native.crs_projjson) << at;
  EXPECT_EQ(gdal.crs_authority, native.crs_authority) << at;
  const std::int64_t count = native.feature_count;
  if (count > unit_rows) {
    EXPECT_EQ(static_cast<std::int64_t>(native.units.size()), (count + unit_rows - 1) / unit_rows)
        << at;
  }
  const ReadResult from_gdal = ReadAll(gdal);
  const ReadResult from_native = ReadAll(native);
  ExpectSameRows(from_gdal, from_native, at);
  ExpectEachFeatureOnce(from_native, count, at);
  EXPECT_TRUE(from_native.unreadable.empty()) << at << ": " << from_native.unreadable.front();
}

TEST(StreamSourcesTest, EveryFlatGeobufInBuildDataReadsAsGdalReadsIt) {
  const auto files = DataFiles(".fgb");
  if (files.empty()) GTEST_SKIP() << ::geolake::testing::MissingDataReason("*.fgb");
  for (const std::string& path : files) CompareWithGdal(path, 50000);
}

TEST(StreamSourcesTest, EveryGeoJsonSeqInBuildDataReadsAsGdalReadsIt) {
  const auto files = DataFiles(".geojsonl");
  if (files.empty()) GTEST_SKIP() << ::geolake::testing::MissingDataReason("*.geojsonl");
  for (const std::string& path : files) CompareWithGdal(path, 50000);
}

// Convert `from` with GDAL (ogr2ogr's library form) to `to` with the given creation options.
void Translate(const std::string& from, const std::string& to, const std::string& format,
               const std::vector<std::string>& extra) {
  GDALAllRegister();
  std::vector<std::string> args = {"-f", format};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  GDALVectorTranslateOptions* options = GDALVectorTranslateOptionsNew(argv.data(), nullptr);
  ASSERT_NE(options, nullptr);
  GDALDatasetH src = GDALOpenEx(from.c_str(), GDAL_OF_VECTOR, nullptr, nullptr, nullptr);
  ASSERT_NE(src, nullptr) << from;
  int usage_error = 0;
  GDALDatasetH out = GDALVectorTranslate(to.c_str(), nullptr, 1, &src, options, &usage_error);
  GDALVectorTranslateOptionsFree(options);
  ASSERT_NE(out, nullptr) << to;
  GDALClose(out);
  GDALClose(src);
}

std::string SmallInput() {
  const std::string path = DataDir() + "/us_states.gpkg";
  return fs::exists(path) ? path : "";
}

TEST(StreamSourcesTest, UnitsCoverEveryFeatureOnceForAnyUnitSize) {
  const std::string input = SmallInput();
  if (input.empty()) GTEST_SKIP() << ::geolake::testing::MissingDataReason("us_states.gpkg");
  TempDir dir;
  const std::string indexed = dir.File("indexed.fgb");
  const std::string plain = dir.File("plain.fgb");
  const std::string seq = dir.File("states.geojsonl");
  Translate(input, indexed, "FlatGeobuf", {"-lco", "SPATIAL_INDEX=YES"});
  Translate(input, plain, "FlatGeobuf", {"-lco", "SPATIAL_INDEX=NO"});
  Translate(input, seq, "GeoJSONSeq", {});
  {
    auto a = FgbSource::Open(indexed);
    auto b = FgbSource::Open(plain);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE((*a)->has_index());
    EXPECT_FALSE((*b)->has_index());
  }
  for (const std::string& path : {indexed, plain, seq}) {
    const std::int64_t n = DiscoverOne(path, true, 1000000).feature_count;
    ASSERT_EQ(n, 56) << path;
    for (const std::int64_t unit_rows : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, n}) {
      const DiscoveredSource source = DiscoverOne(path, true, unit_rows);
      EXPECT_EQ(static_cast<std::int64_t>(source.units.size()), (n + unit_rows - 1) / unit_rows)
          << path;
      CompareWithGdal(path, unit_rows);
    }
  }
}

TEST(StreamSourcesTest, FlatGeobufRefusalsGoToGdal) {
  TempDir dir;
  const std::string path = dir.File("not.fgb");
  const std::string magic3 = std::string("fgb") + '\x03' + "fgb" + '\0';
  const std::string magic2 = std::string("fgb") + '\x02' + "fgb" + '\0';
  WriteText(path, magic3 + " and then nothing that parses");
  auto opened = FgbSource::Open(path);
  EXPECT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), ErrorCode::kCorruptData);
  WriteText(path, magic2 + std::string(16, '\0'));
  opened = FgbSource::Open(path);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), ErrorCode::kNotImplemented);
  EXPECT_FALSE(FgbSource::Open(dir.File("missing.fgb")).ok());
}

TEST(StreamSourcesTest, FlatGeobufWithZAndEmptyAttributesReadsAsGdalReadsIt) {
  TempDir dir;
  const std::string json = dir.File("z.geojson");
  WriteText(json,
            R"({"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"a":1,"b":"x","c":1.5,"d":true},"geometry":{"type":"LineString","coordinates":[[1,2,3],[4,5,6]]}},
{"type":"Feature","properties":{"a":null,"b":null,"c":null,"d":false},"geometry":null},
{"type":"Feature","properties":{"a":3,"b":"","c":-0.0,"d":null},"geometry":{"type":"LineString","coordinates":[[7,8,9],[1,1,1],[2,2,2]]}}]})");
  for (const char* index : {"SPATIAL_INDEX=YES", "SPATIAL_INDEX=NO"}) {
    const std::string fgb = dir.File(std::string("z-") + index + ".fgb");
    Translate(json, fgb, "FlatGeobuf", {"-lco", index});
    for (const std::int64_t unit_rows : {std::int64_t{1}, std::int64_t{2}, std::int64_t{10}}) {
      CompareWithGdal(fgb, unit_rows);
    }
  }
  const std::string multi = dir.File("multi.geojson");
  WriteText(multi,
            R"({"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"n":1},"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]],[[0.1,0.1],[0.2,0.1],[0.2,0.2],[0.1,0.1]]],[[[5,5],[6,5],[6,6],[5,5]]]]}},
{"type":"Feature","properties":{"n":2},"geometry":{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]},{"type":"LineString","coordinates":[[0,0],[1,1]]}]}},
{"type":"Feature","properties":{"n":3},"geometry":{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}},
{"type":"Feature","properties":{"n":4},"geometry":{"type":"MultiLineString","coordinates":[[[1,2],[3,4]],[[5,6],[7,8],[9,9]]]}},
{"type":"Feature","properties":{"n":5},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}]})");
  const std::string fgb = dir.File("multi.fgb");
  Translate(multi, fgb, "FlatGeobuf", {"-lco", "SPATIAL_INDEX=NO"});
  CompareWithGdal(fgb, 2);
}

// ---- GeoJSONSeq text cases

const char* const kLineA =
    R"({"type":"Feature","properties":{"name":"a","n":1,"x":0.5},"geometry":{"type":"Point","coordinates":[1.0,2.0]}})";
const char* const kLineB =
    R"({"type":"Feature","properties":{"name":"b","n":2,"x":1},"geometry":{"coordinates":[[0,0],[1,1.5,2]],"type":"LineString"}})";
const char* const kLineC =
    R"({"type":"Feature","geometry":null,"properties":{"name":null,"n":-3,"x":-2.25e3}})";

TEST(StreamSourcesTest, GeoJsonSeqTextVariantsReadAsGdalReadsThem) {
  TempDir dir;
  const std::string a = kLineA, b = kLineB, c = kLineC;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"lf", a + "\n" + b + "\n" + c + "\n"},
      {"crlf", a + "\r\n" + b + "\r\n" + c + "\r\n"},
      {"blank-lines", "\n" + a + "\n\n\n" + b + "\n\n" + c + "\n\n"},
      {"no-final-newline", a + "\n" + b + "\n" + c},
      {"rs", "\x1e" + a + "\n\x1e" + b + "\n\x1e" + c + "\n"},
  };
  for (const auto& [name, text] : cases) {
    const std::string path = dir.File(name + ".geojsonl");
    WriteText(path, text);
    for (const std::int64_t unit_rows : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}}) {
      CompareWithGdal(path, unit_rows);
    }
  }
}

// GDAL 3.6 stops at a line of only spaces or tabs ("JSON parsing error"); geolake skips it like
// an empty line, and a BOM opening the file, so these read as the plain file does.
TEST(StreamSourcesTest, GeoJsonSeqWithByteOrderMarkOrBlankLinesReadsAsWithout) {
  TempDir dir;
  const std::string plain = dir.File("plain.geojsonl");
  const std::string a = kLineA, b = kLineB, c = kLineC;
  WriteText(plain, a + "\n" + b + "\n" + c + "\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bom", "\xEF\xBB\xBF" + a + "\n" + b + "\n" + c + "\n"},
      {"bom-crlf-rs", "\xEF\xBB\xBF\x1e" + a + "\r\n\x1e" + b + "\r\n\x1e" + c},
      {"spaces", "  \n" + a + "\n \t \n" + b + "  \n\r\n" + c + "\n   "},
  };
  for (const auto& [name, text] : cases) {
    const std::string path = dir.File(name + ".geojsonl");
    WriteText(path, text);
    for (const std::int64_t unit_rows : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}}) {
      const ReadResult expected = ReadAll(DiscoverOne(plain, true, unit_rows));
      const ReadResult got = ReadAll(DiscoverOne(path, true, unit_rows));
      ASSERT_EQ(expected.rows.size(), 3u);
      ExpectSameRows(expected, got, name);
      EXPECT_TRUE(got.unreadable.empty()) << name;
    }
  }
}

// A stop given to the unit's reader ends the parse of one long geometry (here 20,000 positions,
// the check runs every 4,096): ReadBatch fails with kCancelled instead of finishing the record,
// in a GeoJSONSeq file and in a FeatureCollection. Without a stop the same record reads whole.
TEST(StreamSourcesTest, GeoJsonSeqStopEndsTheParseOfALongGeometry) {
  TempDir dir;
  std::string feature =
      "{\"type\":\"Feature\",\"properties\":{\"n\":1},"
      "\"geometry\":{\"type\":\"LineString\",\"coordinates\":[";
  for (int i = 0; i < 20000; ++i) {
    feature += (i > 0 ? ",[" : "[") + std::to_string(i) + ".5," + std::to_string(i % 7) + "]";
  }
  feature += "]}}";
  const std::string seq = dir.File("long.geojsonl");
  WriteText(seq, feature + "\n" + feature + "\n");
  const std::string collection = dir.File("long.geojson");
  WriteText(collection,
            "{\"type\":\"FeatureCollection\",\"features\":[" + feature + "," + feature + "]}\n");
  for (const auto& [path, driver, message] :
       {std::tuple<std::string, std::string, std::string>{seq, "GeoJSONSeq",
                                                          "stopped inside record 0"},
        {collection, "GeoJSON", "stopped inside the feature at byte"}}) {
    SCOPED_TRACE(driver);
    const DiscoveredSource source = DiscoverOne(path, true, 100);
    ASSERT_EQ(source.units.size(), 1u);
    ASSERT_EQ(source.units[0].driver, driver);
    ASSERT_GE(source.units[0].first_byte, 0);  // read by the native reader, not GDAL
    FeatureBatch batch;
    {
      ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(source.units[0]));
      ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(10, &batch));
      EXPECT_EQ(rows, 2);
      ASSERT_EQ(batch.geometry_valid[0], 1);
      EXPECT_GT(batch.GeometryAt(0).size(), 20000u * 16);
    }
    std::stop_source stop;
    stop.request_stop();
    ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(source.units[0]));
    reader->SetStop(stop.get_token());
    EXPECT_THAT(reader->ReadBatch(10, &batch),
                ::geolake::testing::IsErrorWith(ErrorCode::kCancelled, message));
  }
}

TEST(StreamSourcesTest, GeoJsonSeqMalformedRecordsAreUnreadableRowsWithTheirLineNumbers) {
  TempDir dir;
  const std::string path = dir.File("bad.geojsonl");
  WriteText(path, std::string(kLineA) + "\n\n{\"type\":\"Feature\",\"properties\":{\"n\":\n" +
                      kLineB + "\n[1,2]\n" + kLineC + "\n" + kLineA + " trailing\n");
  for (const std::int64_t unit_rows : {std::int64_t{1}, std::int64_t{2}, std::int64_t{100}}) {
    const DiscoveredSource source = DiscoverOne(path, true, unit_rows);
    ASSERT_EQ(source.feature_count, 6);
    ASSERT_EQ(source.fields.size(), 3u);
    const ReadResult read = ReadAll(source);
    ExpectEachFeatureOnce(read, 6, path);
    ASSERT_EQ(read.unreadable.size(), 3u);
    // "feature index: line N: why", N counted from 1 over every line, blank ones included.
    EXPECT_EQ(read.unreadable[0].rfind("1: line 3: ", 0), 0u) << read.unreadable[0];
    EXPECT_EQ(read.unreadable[1].rfind("3: line 5: not a JSON object", 0), 0u)
        << read.unreadable[1];
    EXPECT_EQ(read.unreadable[2].rfind("5: line 7: ", 0), 0u) << read.unreadable[2];
    // The readable records keep their values.
    EXPECT_EQ(read.rows[0].values, (std::vector<std::string>{"'a'", "1", "0.5"}));
    EXPECT_EQ(read.rows[2].values, (std::vector<std::string>{"'b'", "2", "1"}));
    EXPECT_EQ(read.rows[4].values, (std::vector<std::string>{"null", "-3", "-2250"}));
    EXPECT_EQ(read.rows[1].values, (std::vector<std::string>{"null", "null", "null"}));
    EXPECT_FALSE(read.rows[1].has_geometry);
  }
}

// Latin-1 text in a record (not UTF-8, so not JSON by RFC 8259): the record is read, with one
// 0xFF byte for each invalid byte, which the transform then replaces or rejects by the
// --on-invalid policy, naming the field (tests/e2e/non_utf8_sources.sh). Before, the whole
// record was unreadable ("not JSON"). Invalid bytes anywhere but in property values and the
// names of the fields they fill still make the record unreadable.
TEST(StreamSourcesTest, GeoJsonSeqLatin1TextIsReadWithTheInvalidBytesMarked) {
  TempDir dir;
  const std::string path = dir.File("latin1.geojsonl");
  WriteText(path,
            std::string(kLineA) + "\n" +
                "{\"type\":\"Feature\",\"properties\":{\"name\":\"Z\xfcrich \xe9\",\"n\":7,"
                "\"x\":1.5},\"geometry\":{\"type\":\"Point\",\"coordinates\":[8.5,47.4]}}\n" +
                kLineB + "\n" +
                // Latin-1 in a key: read on, it would lose its properties silently.
                "{\"type\":\"Feature\",\"proper\xfcties\":{\"name\":\"c\"},\"geometry\":null}\n");
  for (const std::int64_t unit_rows : {std::int64_t{1}, std::int64_t{100}}) {
    const DiscoveredSource source = DiscoverOne(path, true, unit_rows);
    ASSERT_EQ(source.feature_count, 4);
    ASSERT_EQ(source.fields.size(), 3u);
    const ReadResult read = ReadAll(source);
    ExpectEachFeatureOnce(read, 4, path);
    ASSERT_EQ(read.unreadable.size(), 1u);
    EXPECT_EQ(read.unreadable[0].rfind("3: line 4: not UTF-8 outside property values", 0), 0u)
        << read.unreadable[0];
    EXPECT_EQ(read.rows[1].values, (std::vector<std::string>{"'Z\xffrich \xff'", "7", "1.5"}));
    EXPECT_TRUE(read.rows[1].has_geometry);
    EXPECT_EQ(read.rows[0].values, (std::vector<std::string>{"'a'", "1", "0.5"}));
  }
}

TEST(StreamSourcesTest, GeoJsonSeqSchemasGdalWouldTypeOtherwiseGoToGdal) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"array", R"({"type":"Feature","properties":{"a":[1,2]},"geometry":null})"},
      {"object", R"({"type":"Feature","properties":{"a":{"b":1}},"geometry":null})"},
      {"date", R"({"type":"Feature","properties":{"a":"2020-01-02"},"geometry":null})"},
      {"mixed",
       "{\"type\":\"Feature\",\"properties\":{\"a\":1},\"geometry\":null}\n"
       "{\"type\":\"Feature\",\"properties\":{\"a\":\"x\"},\"geometry\":null}"},
      {"null", R"({"type":"Feature","properties":{"a":null},"geometry":null})"},
      {"case", R"({"type":"Feature","properties":{"a":1,"A":2},"geometry":null})"},
      {"order",
       "{\"type\":\"Feature\",\"properties\":{\"a\":1,\"c\":1},\"geometry\":null}\n"
       "{\"type\":\"Feature\",\"properties\":{\"b\":1,\"c\":1},\"geometry\":null}"},
      {"string-id", R"({"type":"Feature","id":"x","properties":{"a":1},"geometry":null})"},
  };
  for (const auto& [name, text] : refused) {
    const std::string path = dir.File(name + ".geojsonl");
    WriteText(path, text + "\n");
    auto scan = GeoJsonSeqSource::Scan(path);
    ASSERT_FALSE(scan.ok()) << name;
    EXPECT_EQ(scan.status().code(), ErrorCode::kNotImplemented) << name;
    // Discovery then reads it through GDAL, as one unit.
    const DiscoveredSource source = DiscoverOne(path, true, 1);
    ASSERT_EQ(source.units.size(), 1u) << name;
    EXPECT_EQ(source.units.front().first_byte, -1) << name;
  }
  // Accepted: a new key after the known ones, integers and reals mixed (a double field).
  const std::string path = dir.File("accepted.geojsonl");
  WriteText(
      path,
      "{\"type\":\"Feature\",\"id\":7,\"properties\":{\"a\":1,\"c\":1},\"geometry\":null}\n"
      "{\"type\":\"Feature\",\"properties\":{\"a\":2.5,\"c\":1,\"d\":true},\"geometry\":null}\n");
  auto scan = GeoJsonSeqSource::Scan(path);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  ASSERT_EQ(scan->fields.size(), 3u);
  EXPECT_EQ(scan->fields[0].type, FieldType::kDouble);
  EXPECT_EQ(scan->fields[1].type, FieldType::kInt64);
  EXPECT_EQ(scan->fields[2].type, FieldType::kBool);
  CompareWithGdal(path, 1);
}

TEST(StreamSourcesTest, GeoJsonSeqGeometriesReadAsGdalReadsThem) {
  TempDir dir;
  const std::string path = dir.File("geoms.geojsonl");
  std::string text;
  const std::vector<std::string> geometries = {
      R"({"type":"Point","coordinates":[1,2,3]})",
      R"({"type":"MultiPoint","coordinates":[[1,2],[3,4,5]]})",
      R"({"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]],[[0.1,0.1],[0.2,0.1],[0.2,0.2],[0.1,0.1]]]})",
      R"({"type":"MultiLineString","coordinates":[[[1,2],[3,4]],[[5,6],[7,8]]]})",
      R"({"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[6,6],[5,5]]]]})",
      R"({"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]},{"type":"LineString","coordinates":[[0,0],[1,1,1]]}]})",
      R"({"type":"LineString","coordinates":[]})",
      R"({"type":"Polygon","coordinates":[]})",
      R"({"type":"Point","coordinates":[1.5,2.5,3.5,4.5]})",
      R"({"type":"Unknown","coordinates":[1,2]})",
  };
  for (std::size_t i = 0; i < geometries.size(); ++i) {
    text += R"({"type":"Feature","properties":{"i":)" + std::to_string(i) + R"(},"geometry":)" +
            geometries[i] + "}\n";
  }
  WriteText(path, text);
  CompareWithGdal(path, 3);
}

// A GeoJSON FeatureCollection is cut at feature boundaries and reads as GDAL's GeoJSON driver
// reads it (written here by GDAL from the GeoPackages, one line per feature, and as one line).
TEST(StreamSourcesTest, GeoJsonFeatureCollectionsReadAsGdalReadsThem) {
  TempDir dir;
  int compared = 0;
  for (const char* name : {"us_states", "us_counties", "ne_countries_10m"}) {
    const std::string gpkg = DataDir() + "/" + name + ".gpkg";
    if (!fs::exists(gpkg)) continue;
    const std::string json = dir.File(std::string(name) + ".geojson");
    Translate(gpkg, json, "GeoJSON", {});
    CompareWithGdal(json, 1000);
    ++compared;
  }
  if (compared == 0)
    GTEST_SKIP() << ::geolake::testing::MissingDataReason(
        "us_states, us_counties, ne_countries_10m .gpkg");
  const std::string one_line = dir.File("one-line.geojson");
  WriteText(one_line, std::string(R"({"type": "FeatureCollection", "features": [)") + kLineA +
                          ",\n" + kLineB + " , " + kLineC + R"(], "bbox": [0, 0, 1, 1]})");
  for (const std::int64_t unit_rows : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}}) {
    CompareWithGdal(one_line, unit_rows);
  }
}

TEST(StreamSourcesTest, GeoJsonFeatureCollectionsGdalReadsOtherwiseGoToGdal) {
  TempDir dir;
  const std::string feature = kLineA;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"crs",
       R"({"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3857"}},"features":[)" +
           feature + "]}"},
      {"name", R"({"type":"FeatureCollection","name":{"a":1},"features":[)" + feature + "]}"},
      {"feature", feature},
      {"not-object", R"({"type":"FeatureCollection","features":[1,)" + feature + "]}"},
      {"truncated", R"({"type":"FeatureCollection","features":[)" + feature},
  };
  for (const auto& [name, text] : refused) {
    const std::string path = dir.File(name + ".geojson");
    WriteText(path, text);
    auto scan = GeoJsonSeqSource::ScanFeatureCollection(path);
    ASSERT_FALSE(scan.ok()) << name;
    EXPECT_EQ(scan.status().code(), ErrorCode::kNotImplemented) << name;
  }
  // A "name" is the layer's name, as GDAL names it.
  const std::string named = dir.File("named.geojson");
  WriteText(named, R"({"type":"FeatureCollection","name":"places","features":[)" + feature + "]}");
  CompareWithGdal(named, 1);
  // Below the size threshold GDAL reads it, as before.
  const std::string small = dir.File("small.geojson");
  WriteText(small, R"({"type":"FeatureCollection","features":[)" + feature + "," + kLineB + "]}");
  DiscoverOptions options;
  options.unit_rows = 1;
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({small}, options));
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].units[0].first_byte, -1);
}

}  // namespace
}  // namespace geolake::sources
