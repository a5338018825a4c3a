#include "geolake/sources/discover.h"

#include <gdal.h>
#include <ogr_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "geolake/sources/gpkg_source.h"
#include "geolake/sources/source_info_testing.h"
#include "geolake/sources/unit_reader.h"
#include "geolake/testing/testing.h"

namespace geolake::sources {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldType;

namespace fs = std::filesystem;
using ::geolake::testing::IsError;

fs::path MakeTempDir(const std::string& tag) {
  const fs::path dir =
      fs::temp_directory_path() / ("geolake_discover_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void WriteText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Run ogr2ogr quietly; the tests build every binary format from a GeoJSON text with it.
bool Ogr2Ogr(const std::string& args) {
  const std::string cmd = "ogr2ogr " + args + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Read every unit of every source; returns all batches' rows appended into one batch-like
// record of (feature_index, attribute text, wkb type).
struct ReadBack {
  std::vector<std::int64_t> feature_index;
  std::vector<std::string> names;  // the "name" attribute ("<null>" for null)
  // The "num" attribute (-1 for null). Not "id": ogr2ogr makes a GeoJSON "id" property the
  // FID column of a GeoPackage, and GDAL does not list the FID among the attributes.
  std::vector<std::int64_t> ids;
  std::vector<std::uint32_t> wkb_types;
};

ReadBack ReadAll(const DiscoveredSource& source, std::int64_t batch_rows = 7) {
  ReadBack out;
  for (const SourceUnit& unit : source.units) {
    auto reader = UnitReader::Open(unit);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return out;
    int name_col = -1;
    int id_col = -1;
    for (std::size_t i = 0; i < (*reader)->fields().size(); ++i) {
      if ((*reader)->fields()[i].name == "name") name_col = static_cast<int>(i);
      if ((*reader)->fields()[i].name == "num") id_col = static_cast<int>(i);
    }
    FeatureBatch batch;
    while (true) {
      auto rows = (*reader)->ReadBatch(batch_rows, &batch);
      EXPECT_TRUE(rows.ok()) << rows.status().ToString();
      if (!rows.ok() || *rows == 0) break;
      EXPECT_EQ(batch.num_rows(), *rows);
      for (std::int64_t r = 0; r < *rows; ++r) {
        const auto row = static_cast<std::size_t>(r);
        out.feature_index.push_back(batch.feature_index[row]);
        if (name_col >= 0) {
          const Column& c = batch.columns[static_cast<std::size_t>(name_col)];
          out.names.push_back(c.valid[row] ? std::string(c.StringAt(row)) : "<null>");
        }
        if (id_col >= 0) {
          const Column& c = batch.columns[static_cast<std::size_t>(id_col)];
          out.ids.push_back(!c.valid[row] ? -1
                            : c.type == FieldType::kDouble
                                ? static_cast<std::int64_t>(c.doubles[row])
                                : c.ints[row]);
        }
        std::uint32_t type = 0;
        if (batch.geometry_valid[row]) {
          auto wkb = batch.GeometryAt(row);
          EXPECT_GE(wkb.size(), 5u);
          EXPECT_EQ(wkb[0], 1);  // little-endian
          std::memcpy(&type, wkb.data() + 1, 4);
        }
        out.wkb_types.push_back(type);
      }
    }
  }
  return out;
}

// Three points: ids 1..3, names a, b, null.
constexpr const char* kPoints = R"({"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"num":1,"name":"a"},"geometry":{"type":"Point","coordinates":[1,2]}},
{"type":"Feature","properties":{"num":2,"name":"b"},"geometry":{"type":"Point","coordinates":[3,4]}},
{"type":"Feature","properties":{"num":3,"name":null},"geometry":{"type":"Point","coordinates":[5,6]}}
]})";

struct FormatCase {
  std::string label;
  std::string driver;
  std::string file;
  // How the file is made from kPoints at `src` (GeoJSON) into `dst`; empty = written as text.
  std::string ogr_args;
  std::string text;
};

std::string PrintCase(const ::testing::TestParamInfo<FormatCase>& info) { return info.param.label; }

class DiscoverFormatTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(DiscoverFormatTest, YieldsEveryFeatureWithAttributes) {
  const FormatCase& c = GetParam();
  const fs::path dir = MakeTempDir("fmt_" + c.label);
  const fs::path src = dir / "src.geojson";
  WriteText(src, kPoints);
  const fs::path dst = dir / "out" / c.file;
  fs::create_directories(dst.parent_path());
  if (c.ogr_args.empty()) {
    WriteText(dst, c.text);
  } else {
    ASSERT_TRUE(Ogr2Ogr(c.ogr_args + " '" + dst.string() + "' '" + src.string() + "'"));
  }
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({(dir / "out").string()}, {}));
  ASSERT_EQ(sources.size(), 1u) << sources[0].path;
  const DiscoveredSource& s = sources[0];
  EXPECT_EQ(s.driver, c.driver);
  EXPECT_EQ(s.path, fs::absolute(dst).lexically_normal().string());
  EXPECT_EQ(s.fingerprint.path, s.path);
  EXPECT_EQ(s.fingerprint.size, static_cast<std::int64_t>(fs::file_size(dst)));
  EXPECT_NE(s.fingerprint.hash, 0u);
  ASSERT_EQ(s.units.size(), 1u);
  const ReadBack back = ReadAll(s, 2);
  EXPECT_EQ(back.feature_index, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(back.ids, (std::vector<std::int64_t>{1, 2, 3}));
  // CSV has no null text: an empty field reads as empty or null depending on quoting.
  ASSERT_EQ(back.names.size(), 3u);
  EXPECT_EQ(back.names[0], "a");
  EXPECT_EQ(back.names[1], "b");
  EXPECT_TRUE(back.names[2] == "<null>" || back.names[2].empty()) << back.names[2];
  EXPECT_EQ(back.wkb_types, (std::vector<std::uint32_t>{1, 1, 1}));
}

// TopoJSON: three points in one GeometryCollection object (quantization off).
constexpr const char* kTopoJson =
    R"({"type":"Topology","objects":{"pts":{"type":"GeometryCollection",
"geometries":[
{"type":"Point","coordinates":[1,2],"properties":{"num":1,"name":"a"}},
{"type":"Point","coordinates":[3,4],"properties":{"num":2,"name":"b"}},
{"type":"Point","coordinates":[5,6],"properties":{"num":3}}]}},"arcs":[]})";

// OSM XML is read by the same GDAL driver (OSM) as OSM PBF; three tagged nodes land in the
// "points" layer, the first layer, with the OSM id as osm_id.
constexpr const char* kOsm = R"(<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6" generator="test">
 <node id="1" lat="2" lon="1" version="1"><tag k="name" v="a"/><tag k="amenity" v="x"/></node>
 <node id="2" lat="4" lon="3" version="1"><tag k="name" v="b"/><tag k="amenity" v="x"/></node>
 <node id="3" lat="6" lon="5" version="1"><tag k="amenity" v="x"/></node>
</osm>
)";

INSTANTIATE_TEST_SUITE_P(
    Formats, DiscoverFormatTest,
    ::testing::Values(
        FormatCase{"Shapefile", "ESRI Shapefile", "p.shp", "-f 'ESRI Shapefile'", ""},
        FormatCase{"GeoPackage", "GPKG", "p.gpkg", "-f GPKG", ""},
        FormatCase{"FlatGeobuf", "FlatGeobuf", "p.fgb", "-f FlatGeobuf -lco SPATIAL_INDEX=NO", ""},
        FormatCase{"GeoJSON", "GeoJSON", "p.geojson", "-f GeoJSON", ""},
        FormatCase{"GeoJSONSeq", "GeoJSONSeq", "p.geojsonl", "-f GeoJSONSeq", ""},
        FormatCase{"CsvWkt", "CSV", "p.csv", "",
                   "num,name,WKT\n1,a,POINT (1 2)\n2,b,POINT (3 4)\n3,,POINT (5 6)\n"},
        FormatCase{"CsvGeometryColumn", "CSV", "p.csv", "",
                   "num,name,geometry\n1,a,POINT (1 2)\n2,b,POINT (3 4)\n3,,POINT (5 6)\n"},
        FormatCase{"CsvLonLat", "CSV", "p.csv", "", "num,name,lon,lat\n1,a,1,2\n2,b,3,4\n3,,5,6\n"},
        FormatCase{"TopoJson", "TopoJSON", "p.topojson", "", kTopoJson}),
    PrintCase);

TEST(DiscoverOsmTest, ReadsPointsLayerOrAllLayers) {
  const fs::path dir = MakeTempDir("osm");
  WriteText(dir / "t.osm", kOsm);
  ASSERT_OK_AND_ASSIGN(auto first, DiscoverSources({(dir / "t.osm").string()}, {}));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].driver, "OSM");
  EXPECT_EQ(first[0].layer, "points");
  const ReadBack back = ReadAll(first[0]);
  EXPECT_EQ(back.names, (std::vector<std::string>{"a", "b", "<null>"}));
  EXPECT_EQ(back.wkb_types, (std::vector<std::uint32_t>{1, 1, 1}));

  DiscoverOptions all;
  all.all_layers = true;
  ASSERT_OK_AND_ASSIGN(auto layers, DiscoverSources({(dir / "t.osm").string()}, all));
  ASSERT_EQ(layers.size(), 5u);
  EXPECT_EQ(layers[1].layer, "lines");
  EXPECT_EQ(layers[3].layer, "multipolygons");
  EXPECT_TRUE(ReadAll(layers[1]).feature_index.empty());
}

// Expect two discoveries of one source to agree: what it is, its fields and CRS, and its units
// (their rows, layer and driver; how they are read is the caller's to compare).
void ExpectSameSource(const DiscoveredSource& a, const DiscoveredSource& b, const std::string& at) {
  EXPECT_EQ(a.path, b.path) << at;
  EXPECT_EQ(a.layer, b.layer) << at;
  EXPECT_EQ(a.driver, b.driver) << at;
  EXPECT_EQ(a.fingerprint, b.fingerprint) << at;
  ExpectSameFields(a.fields, b.fields, at);
  EXPECT_EQ(a.crs_projjson, b.crs_projjson) << at;
  EXPECT_EQ(a.crs_authority, b.crs_authority) << at;
  EXPECT_EQ(a.feature_count, b.feature_count) << at;
  ASSERT_EQ(a.units.size(), b.units.size()) << at;
  for (std::size_t u = 0; u < a.units.size(); ++u) {
    EXPECT_EQ(a.units[u].index, b.units[u].index) << at;
    EXPECT_EQ(a.units[u].first_row, b.units[u].first_row) << at;
    EXPECT_EQ(a.units[u].row_count, b.units[u].row_count) << at;
    EXPECT_EQ(a.units[u].layer, b.units[u].layer) << at;
    EXPECT_EQ(a.units[u].driver, b.units[u].driver) << at;
  }
}

// A grid of n features with id = feature index, written to `format` at `path`.
void WriteNumbered(const fs::path& dir, int n, const std::string& format, const fs::path& path) {
  std::string seq;
  for (int i = 0; i < n; ++i) {
    seq += R"({"type":"Feature","properties":{"num":)" + std::to_string(i) + R"(,"name":"f)" +
           std::to_string(i) + R"("},"geometry":{"type":"Point","coordinates":[)" +
           std::to_string(i % 100) + "," + std::to_string(i / 100) + "]}}\n";
  }
  const fs::path src = dir / "numbered.geojsonl";
  WriteText(src, seq);
  ASSERT_TRUE(Ogr2Ogr("-f '" + format + "' '" + path.string() + "' '" + src.string() + "'"));
  fs::remove(src);
}

class DiscoverUnitsTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(DiscoverUnitsTest, CutsFastSeekingLayersIntoExactRanges) {
  const auto& [format, file] = GetParam();
  const fs::path dir = MakeTempDir("units_" + file.substr(2));
  WriteNumbered(dir, 1000, format, dir / file);
  DiscoverOptions options;
  options.unit_rows = 300;
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({(dir / file).string()}, options));
  ASSERT_EQ(sources.size(), 1u);
  const DiscoveredSource& s = sources[0];
  EXPECT_EQ(s.feature_count, 1000);
  ASSERT_EQ(s.units.size(), 4u);
  EXPECT_EQ(s.units[0].first_row, 0);
  EXPECT_EQ(s.units[1].first_row, 250);
  EXPECT_EQ(s.units[0].row_count, 250);
  EXPECT_EQ(s.units[3].row_count, -1);
  for (std::size_t i = 0; i < s.units.size(); ++i) EXPECT_EQ(s.units[i].index, (std::int64_t)i);
  // Reading the units one after the other gives every feature once, in order, and the id
  // attribute equals the feature index: the seeks land exactly.
  const ReadBack back = ReadAll(s, 64);
  std::vector<std::int64_t> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(back.feature_index, expected);
  EXPECT_EQ(back.ids, expected);
  // A unit read on its own (the last one) starts at its first row.
  SourceUnit last = s.units[3];
  last.driver.clear();  // detect on open
  ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(last));
  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(1000, &batch));
  EXPECT_EQ(rows, 250);
  EXPECT_EQ(batch.feature_index.front(), 750);
  EXPECT_EQ(batch.columns[0].ints.front(), 750);
  ASSERT_OK_AND_ASSIGN(rows, reader->ReadBatch(1000, &batch));
  EXPECT_EQ(rows, 0);
  EXPECT_EQ(batch.num_rows(), 0);
}

TEST(DiscoverTest, BatchesStopAtTheWkbByteLimit) {
  // Points are 21 bytes of ISO WKB: a 100-byte limit cuts batches after 5 features (105
  // bytes), well before the 64-row limit; across unit boundaries every feature comes once.
  const fs::path dir = MakeTempDir("bytes");
  WriteNumbered(dir, 1000, "GPKG", dir / "n.gpkg");
  DiscoverOptions options;
  options.unit_rows = 300;
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({(dir / "n.gpkg").string()}, options));
  ASSERT_EQ(sources[0].units.size(), 4u);
  std::vector<std::int64_t> index;
  for (const SourceUnit& unit : sources[0].units) {
    ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(unit));
    FeatureBatch batch;
    while (true) {
      ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(64, 100, &batch));
      if (rows == 0) break;
      EXPECT_LE(rows, 5);
      EXPECT_EQ(batch.wkb.size(), static_cast<std::size_t>(rows) * 21);
      index.insert(index.end(), batch.feature_index.begin(), batch.feature_index.end());
    }
  }
  std::vector<std::int64_t> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(index, expected);
  // A limit below one geometry still takes one feature per batch; 0 means no byte limit.
  ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(sources[0].units[0]));
  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(64, 1, &batch));
  EXPECT_EQ(rows, 1);
  ASSERT_OK_AND_ASSIGN(rows, reader->ReadBatch(64, 0, &batch));
  EXPECT_EQ(rows, 64);
  EXPECT_EQ(batch.feature_index.front(), 1);
  fs::remove_all(dir);
}

TEST(DiscoverTest, DeletedShapefileRecordsDoNotShiftRanges) {
  const fs::path dir = MakeTempDir("deleted");
  WriteNumbered(dir, 1000, "ESRI Shapefile", dir / "n.shp");
  {  // Mark records 100 and 600 deleted in the .dbf (GDAL skips them when reading); without
     // AUTO_REPACK=NO GDAL would rewrite the file without them on close.
    GDALAllRegister();
    const char* const open_options[] = {"AUTO_REPACK=NO", nullptr};
    GDALDatasetH ds = GDALOpenEx((dir / "n.shp").c_str(), GDAL_OF_VECTOR | GDAL_OF_UPDATE, nullptr,
                                 open_options, nullptr);
    ASSERT_NE(ds, nullptr);
    OGRLayerH layer = GDALDatasetGetLayer(ds, 0);
    EXPECT_EQ(OGR_L_DeleteFeature(layer, 100), OGRERR_NONE);
    EXPECT_EQ(OGR_L_DeleteFeature(layer, 600), OGRERR_NONE);
    GDALClose(ds);
  }
  DiscoverOptions options;
  options.unit_rows = 300;
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({(dir / "n.shp").string()}, options));
  ASSERT_EQ(sources[0].units.size(), 4u);
  // Every remaining feature exactly once, its index its record number (= its num attribute).
  const ReadBack back = ReadAll(sources[0], 64);
  std::vector<std::int64_t> expected;
  for (std::int64_t i = 0; i < 1000; ++i) {
    if (i != 100 && i != 600) expected.push_back(i);
  }
  ASSERT_EQ(back.feature_index.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(back.feature_index[i], expected[i]) << "at " << i;
  }
  EXPECT_EQ(back.ids, expected);
}

TEST(DiscoverTest, UnitsOfOneFileReadConcurrently) {
  const fs::path dir = MakeTempDir("threads");
  WriteNumbered(dir, 4000, "GPKG", dir / "n.gpkg");
  DiscoverOptions options;
  options.unit_rows = 500;
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({(dir / "n.gpkg").string()}, options));
  ASSERT_EQ(sources[0].units.size(), 8u);
  // Four threads take units from a shared counter, as the ingest workers do; every feature
  // must come back exactly once with its own attributes.
  std::vector<int> seen(4000, 0);
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (std::size_t u = next++; u < sources[0].units.size(); u = next++) {
        auto reader = UnitReader::Open(sources[0].units[u]);
        if (!reader.ok()) {
          ++errors;
          return;
        }
        FeatureBatch batch;
        while (true) {
          auto rows = (*reader)->ReadBatch(97, &batch);
          if (!rows.ok()) ++errors;
          if (!rows.ok() || *rows == 0) break;
          std::lock_guard lock(mutex);
          for (std::int64_t r = 0; r < *rows; ++r) {
            const std::int64_t index = batch.feature_index[static_cast<std::size_t>(r)];
            if (batch.columns[0].ints[static_cast<std::size_t>(r)] != index) ++errors;
            ++seen[static_cast<std::size_t>(index)];
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 4000);
}

INSTANTIATE_TEST_SUITE_P(FastSeek, DiscoverUnitsTest,
                         ::testing::Values(std::make_pair("GPKG", "n.gpkg"),
                                           std::make_pair("ESRI Shapefile", "n.shp")));

TEST(DiscoverTest, SlowSeekingLayersStayOneUnit) {
  const fs::path dir = MakeTempDir("slow");
  WriteNumbered(dir, 500, "GeoJSONSeq", dir / "n.geojsonl");
  WriteNumbered(dir, 500, "FlatGeobuf", dir / "n.fgb");
  WriteNumbered(dir, 500, "GPKG", dir / "gaps.gpkg");
  // A GeoPackage whose FIDs have a gap cannot map feature index to FID.
  ASSERT_EQ(std::system(("ogrinfo -q '" + (dir / "gaps.gpkg").string() +
                         "' -sql 'DELETE FROM numbered WHERE fid = 7' >/dev/null 2>&1")
                            .c_str()),
            0);
  // FlatGeobuf and GeoJSONSeq stay one unit when GDAL reads them (its FlatGeobuf driver reaches
  // feature i by reading the features before it); geolake's own readers cut them.
  DiscoverOptions options;
  options.unit_rows = 100;
  options.native_fgb = false;
  options.native_geojsonseq = false;
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({dir.string()}, options));
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources[0].driver, "GPKG");
  EXPECT_EQ(sources[1].driver, "FlatGeobuf");
  EXPECT_EQ(sources[2].driver, "GeoJSONSeq");
  const std::vector<std::size_t> expected_rows = {499, 500, 500};
  for (std::size_t i = 0; i < sources.size(); ++i) {
    EXPECT_EQ(sources[i].units.size(), 1u) << sources[i].path;
    EXPECT_EQ(sources[i].units[0].row_count, -1);
    const ReadBack back = ReadAll(sources[i], 128);
    EXPECT_EQ(back.feature_index.size(), expected_rows[i]) << sources[i].path;
    EXPECT_EQ(back.feature_index.back(), static_cast<std::int64_t>(expected_rows[i]) - 1);
  }
  options.native_fgb = true;
  options.native_geojsonseq = true;
  ASSERT_OK_AND_ASSIGN(auto native, DiscoverSources({dir.string()}, options));
  ASSERT_EQ(native.size(), 3u);
  EXPECT_EQ(native[0].units.size(), 1u);
  for (std::size_t i = 1; i < native.size(); ++i) {
    EXPECT_EQ(native[i].driver, sources[i].driver);
    EXPECT_EQ(native[i].units.size(), 5u) << native[i].path;
    const ReadBack back = ReadAll(native[i], 128);
    ASSERT_EQ(back.feature_index.size(), 500u) << native[i].path;
    for (std::size_t row = 0; row < 500; ++row) {
      ASSERT_EQ(back.feature_index[row], static_cast<std::int64_t>(row)) << native[i].path;
    }
  }
}

TEST(DiscoverTest, FoldersSkipHiddenTempAndSidecarFiles) {
  const fs::path dir = MakeTempDir("folder");
  WriteText(dir / "in.geojson", kPoints);
  fs::create_directories(dir / "tree/a");
  ASSERT_TRUE(Ogr2Ogr("-f 'ESRI Shapefile' '" + (dir / "tree/a/p.shp").string() + "' '" +
                      (dir / "in.geojson").string() + "'"));
  ASSERT_TRUE(Ogr2Ogr("-f GPKG '" + (dir / "tree/b.gpkg").string() + "' '" +
                      (dir / "in.geojson").string() + "'"));
  WriteText(dir / "tree/.hidden.geojson", kPoints);
  WriteText(dir / "tree/.git/x.geojson", kPoints);
  WriteText(dir / "tree/c.geojson.geolake-tmp", kPoints);
  WriteText(dir / "tree/b.gpkg-wal", "junk");
  WriteText(dir / "tree/p.aux.xml", "<x/>");
  WriteText(dir / "tree/README.txt", "not a source");
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({(dir / "tree").string()}, {}));
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(fs::path(sources[0].path).filename(), "p.shp");  // "a/p.shp" < "b.gpkg"
  EXPECT_EQ(fs::path(sources[1].path).filename(), "b.gpkg");
}

TEST(DiscoverTest, GlobsSortAndDeduplicate) {
  const fs::path dir = MakeTempDir("glob");
  WriteText(dir / "b.geojson", kPoints);
  WriteText(dir / "a.geojson", kPoints);
  WriteText(dir / "c.json", kPoints);
  ASSERT_OK_AND_ASSIGN(
      auto sources,
      DiscoverSources({(dir / "*.geojson").string(), (dir / "a.geojson").string()}, {}));
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(fs::path(sources[0].path).filename(), "a.geojson");
  EXPECT_EQ(fs::path(sources[1].path).filename(), "b.geojson");
  // Same bytes, different paths: same hash, different fingerprints.
  EXPECT_EQ(sources[0].fingerprint.hash, sources[1].fingerprint.hash);
  EXPECT_NE(sources[0].fingerprint.ToString(), sources[1].fingerprint.ToString());
}

TEST(DiscoverTest, ErrorsNameTheSpec) {
  const fs::path dir = MakeTempDir("errors");
  EXPECT_THAT(DiscoverSources({(dir / "missing.gpkg").string()}, {}),
              IsError(ErrorCode::kNotFound));
  EXPECT_THAT(DiscoverSources({(dir / "*.nothing").string()}, {}), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(DiscoverSources({dir.string()}, {}), IsError(ErrorCode::kNotFound));  // empty
  WriteText(dir / "notes.txt", "hello");
  EXPECT_THAT(DiscoverSources({(dir / "notes.txt").string()}, {}),
              IsError(ErrorCode::kInvalidArgument));
  // A folder with only non-sources is kNotFound, not an error about one of its files.
  EXPECT_THAT(DiscoverSources({dir.string()}, {}), IsError(ErrorCode::kNotFound));
  WriteText(dir / "p.geojson", kPoints);
  DiscoverOptions options;
  options.layer = "no_such_layer";
  EXPECT_THAT(DiscoverSources({(dir / "p.geojson").string()}, options),
              IsError(ErrorCode::kNotFound));
  options = {};
  options.unit_rows = 0;
  EXPECT_THAT(DiscoverSources({(dir / "p.geojson").string()}, options),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(UnitReader::Open(SourceUnit{(dir / "gone.gpkg").string(), "", 0, 0, -1, ""}),
              IsError(ErrorCode::kNotFound));
}

// A GeoPackage is described without GDAL (GpkgSource::Describe) unless native_gpkg is false;
// both ways give the same sources, units and unit descriptions: on every real GeoPackage (all
// layers) and on one with a second table, a point table made by ogr2ogr and an attribute
// table (listed by both, described by GDAL).
TEST(DiscoverTest, NativeGeoPackageDescriptionEqualsGdals) {
  const fs::path dir = MakeTempDir("native_gpkg");
  WriteText(dir / "src.geojson", kPoints);
  ASSERT_TRUE(Ogr2Ogr("-f GPKG -nln first " + (dir / "two.gpkg").string() + " " +
                      (dir / "src.geojson").string()));
  ASSERT_TRUE(Ogr2Ogr("-update -f GPKG -nln second -t_srs EPSG:3857 " +
                      (dir / "two.gpkg").string() + " " + (dir / "src.geojson").string()));
  ASSERT_TRUE(Ogr2Ogr("-update -f GPKG -nln attrs -nlt NONE " + (dir / "two.gpkg").string() + " " +
                      (dir / "src.geojson").string()));
  ASSERT_OK_AND_ASSIGN(auto two_layers, GpkgSource::LayerNames((dir / "two.gpkg").string()));
  EXPECT_EQ(two_layers, (std::vector<std::string>{"first", "second", "attrs"}));
  std::vector<std::string> specs = {(dir / "two.gpkg").string()};
  if (auto why = ::geolake::testing::MissingData("us_states.gpkg")) GTEST_SKIP() << *why;
  const std::string data = ::geolake::testing::DataDir();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(data, ec)) {
    if (entry.path().extension() == ".gpkg") specs.push_back(entry.path().string());
  }
  std::vector<DiscoveredSource> found[2];
  for (bool native : {false, true}) {
    DiscoverOptions options;
    options.unit_rows = 20000;
    options.all_layers = true;
    options.native_gpkg = native;
    ASSERT_OK_AND_ASSIGN(found[native], DiscoverSources(specs, options));
  }
  ASSERT_EQ(found[0].size(), found[1].size());
  EXPECT_GE(found[0].size(), 3u);
  for (std::size_t i = 0; i < found[0].size(); ++i) {
    const DiscoveredSource& gdal = found[0][i];
    const DiscoveredSource& native = found[1][i];
    const std::string at = gdal.path + " layer " + gdal.layer;
    ExpectSameSource(gdal, native, at);
    if (gdal.units.size() != native.units.size()) continue;
    for (std::size_t u = 0; u < gdal.units.size(); ++u) {
      const SourceUnit& a = gdal.units[u];
      const SourceUnit& b = native.units[u];
      EXPECT_FALSE(a.native_gpkg) << at;
      EXPECT_TRUE(b.native_gpkg) << at;
      ASSERT_EQ(a.gdal_info == nullptr, b.gdal_info == nullptr) << at;
      if (a.gdal_info != nullptr) ExpectSameInfo(*a.gdal_info, *b.gdal_info, at);
    }
  }
  fs::remove_all(dir);
}

// Candidates described by several threads give what one thread gives, in the same order, and
// the same error when a named file is not a source.
TEST(DiscoverTest, ThreadsDescribeAFolderAsOneThreadDoes) {
  const fs::path dir = MakeTempDir("threads");
  WriteText(dir / "in.geojson", kPoints);
  fs::create_directories(dir / "tree/shp");
  if (auto why = ::geolake::testing::MissingData("us_states.gpkg")) GTEST_SKIP() << *why;
  const std::string data = ::geolake::testing::DataDir();
  int copies = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(data, ec)) {
    if (entry.path().extension() != ".gpkg" && entry.path().extension() != ".fgb") continue;
    for (int i = 0; i < 3; ++i) {
      fs::copy_file(entry.path(),
                    dir / "tree" / (std::to_string(i) + "_" + entry.path().filename().string()),
                    fs::copy_options::overwrite_existing, ec);
      ASSERT_FALSE(ec) << ec.message();
      ++copies;
    }
  }
  ASSERT_GE(copies, 3);
  ASSERT_TRUE(Ogr2Ogr("-f 'ESRI Shapefile' '" + (dir / "tree/shp/p.shp").string() + "' '" +
                      (dir / "in.geojson").string() + "'"));
  ASSERT_TRUE(Ogr2Ogr("-f GPKG -nln first " + (dir / "tree/two.gpkg").string() + " " +
                      (dir / "in.geojson").string()));
  ASSERT_TRUE(Ogr2Ogr("-update -f GPKG -nln second -t_srs EPSG:3857 " +
                      (dir / "tree/two.gpkg").string() + " " + (dir / "in.geojson").string()));
  WriteText(dir / "tree/a.geojson", kPoints);
  WriteText(dir / "tree/README.txt", "not a source");
  WriteText(dir / "tree/z_notes.txt", "not a source either");

  // Without an executor (this thread alone), and on an executor of 4 threads.
  ASSERT_OK_AND_ASSIGN(auto executor, ThreadPool::Make(4));
  std::vector<DiscoveredSource> found[2];
  for (int t : {0, 1}) {
    DiscoverOptions options;
    options.unit_rows = 500;
    options.all_layers = true;
    options.executor = t == 0 ? nullptr : executor.get();
    ASSERT_OK_AND_ASSIGN(found[t], DiscoverSources({(dir / "tree").string()}, options));
  }
  ASSERT_EQ(found[0].size(), found[1].size());
  std::printf("%zu sources from %d copies of the real datasets and 4 made here\n", found[0].size(),
              copies);
  // Every copy, the shapefile, both layers of two.gpkg, a.geojson; the text files skipped.
  EXPECT_GE(found[0].size(), static_cast<std::size_t>(copies) + 4);
  for (std::size_t i = 0; i < found[0].size(); ++i) {
    ExpectSameSource(found[0][i], found[1][i], found[0][i].path + " layer " + found[0][i].layer);
  }
  // Named, a text file is an error, whichever thread met it and whatever came before it.
  Status errors[2];
  for (int t : {0, 1}) {
    DiscoverOptions options;
    options.executor = t == 0 ? nullptr : executor.get();
    errors[t] =
        DiscoverSources({(dir / "tree").string(), (dir / "tree/z_notes.txt").string()}, options)
            .status();
  }
  EXPECT_THAT(errors[0], IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(errors[0].ToString(), errors[1].ToString());
  fs::remove_all(dir);
}

TEST(FingerprintTest, SeesChangesAtBothEndsButNotMtimeAlone) {
  const fs::path dir = MakeTempDir("fp");
  std::string bytes(300 * 1024, 'x');
  WriteText(dir / "f.bin", bytes);
  ASSERT_OK_AND_ASSIGN(SourceFingerprint base, FingerprintFile((dir / "f.bin").string()));
  EXPECT_EQ(base.size, 300 * 1024);
  EXPECT_GT(base.mtime_ns, 0);
  EXPECT_EQ(base.ToString().substr(0, 5), "xxh3:");
  char hex[17] = {};
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(base.hash));
  EXPECT_EQ(base.ToString(),
            std::string("xxh3:") + hex + ":307200:" + (dir / "f.bin").lexically_normal().string());

  bytes.back() = 'y';  // last block changes
  WriteText(dir / "f.bin", bytes);
  ASSERT_OK_AND_ASSIGN(SourceFingerprint tail, FingerprintFile((dir / "f.bin").string()));
  EXPECT_NE(tail.hash, base.hash);
  bytes.back() = 'x';
  bytes.front() = 'y';  // first block changes
  WriteText(dir / "f.bin", bytes);
  ASSERT_OK_AND_ASSIGN(SourceFingerprint head, FingerprintFile((dir / "f.bin").string()));
  EXPECT_NE(head.hash, base.hash);
  EXPECT_NE(head.hash, tail.hash);
  bytes.front() = 'x';
  bytes[150 * 1024] = 'y';  // the middle is not hashed: by design, size and ends only
  WriteText(dir / "f.bin", bytes);
  ASSERT_OK_AND_ASSIGN(SourceFingerprint middle, FingerprintFile((dir / "f.bin").string()));
  EXPECT_EQ(middle.hash, base.hash);
  EXPECT_THAT(FingerprintFile((dir / "none").string()), IsError(ErrorCode::kNotFound));
}

TEST(InputBytesTest, FilesFoldersAndGlobsCountWhatIsMissingCountsZero) {
  const std::string dir = MakeTempDir("input_bytes").string();
  const auto write = [](const std::string& path, std::size_t bytes) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
  };
  write(dir + "/a.gpkg", 1000);
  write(dir + "/b.geojsonl", 300);
  write(dir + "/shp/roads.shp", 50);
  write(dir + "/shp/roads.dbf", 70);  // attributes: part of the size
  write(dir + "/shp/.hidden", 5000);
  write(dir + "/shp/.git/objects", 5000);
  write(dir + "/shp/sub/more.fgb", 9);
  EXPECT_EQ(InputBytes({dir + "/a.gpkg"}), 1000);
  EXPECT_EQ(InputBytes({dir + "/a.gpkg", dir + "/b.geojsonl"}), 1300);
  EXPECT_EQ(InputBytes({dir + "/shp"}), 50 + 70 + 9);
  EXPECT_EQ(InputBytes({dir + "/*.g*"}), 1300);
  EXPECT_EQ(InputBytes({dir + "/s*"}), 50 + 70 + 9);  // a glob matching a folder walks it
  EXPECT_EQ(InputBytes({dir + "/missing.gpkg", dir + "/*.none", "/vsizip/x.zip/a.shp", ""}), 0);
  EXPECT_EQ(InputBytes({}), 0);
}

}  // namespace
}  // namespace geolake::sources
