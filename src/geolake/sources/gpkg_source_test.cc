// GpkgSource must give exactly what GdalSource gives for the same range: every test here reads
// one GeoPackage with both and compares the batches field by field and byte by byte.
#include "geolake/sources/gpkg_source.h"

#include <gdal.h>
#include <ogr_api.h>
#include <ogr_srs_api.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "geolake/sources/discover.h"
#include "geolake/sources/source_info_testing.h"
#include "geolake/sources/unit_reader.h"
#include "geolake/testing/testing.h"

namespace geolake::sources {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;

using ::geolake::testing::IsError;
namespace fs = std::filesystem;

template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Every field, value, validity byte, WKB byte, offset and feature index equal.
void ExpectSameBatch(const FeatureBatch& gdal, const FeatureBatch& native, const std::string& at) {
  ASSERT_EQ(gdal.fields.size(), native.fields.size()) << at;
  for (std::size_t i = 0; i < gdal.fields.size(); ++i) {
    EXPECT_EQ(gdal.fields[i].name, native.fields[i].name) << at;
    EXPECT_EQ(gdal.fields[i].type, native.fields[i].type) << at;
  }
  ASSERT_EQ(gdal.num_rows(), native.num_rows()) << at;
  EXPECT_EQ(gdal.feature_index, native.feature_index) << at;
  ASSERT_EQ(gdal.unreadable.size(), native.unreadable.size()) << at;
  for (std::size_t i = 0; i < gdal.unreadable.size(); ++i) {
    EXPECT_EQ(gdal.unreadable[i].row, native.unreadable[i].row) << at;
    EXPECT_EQ(gdal.unreadable[i].reason, native.unreadable[i].reason) << at;
  }
  EXPECT_EQ(gdal.geometry_valid, native.geometry_valid) << at;
  EXPECT_EQ(gdal.wkb_offsets, native.wkb_offsets) << at;
  if (gdal.wkb != native.wkb) {
    for (std::int64_t row = 0; row < gdal.num_rows(); ++row) {
      const auto a = gdal.GeometryAt(static_cast<std::size_t>(row));
      const auto b = native.GeometryAt(static_cast<std::size_t>(row));
      if (a.size() != b.size() || !std::equal(a.begin(), a.end(), b.begin())) {
        ADD_FAILURE() << at << ": WKB of feature " << gdal.feature_index[row] << " differs";
        break;
      }
    }
    ADD_FAILURE() << at << ": WKB buffers differ";
  }
  ASSERT_EQ(gdal.columns.size(), native.columns.size()) << at;
  for (std::size_t i = 0; i < gdal.columns.size(); ++i) {
    const Column& a = gdal.columns[i];
    const Column& b = native.columns[i];
    const std::string where = at + ", field '" + gdal.fields[i].name + "'";
    EXPECT_EQ(a.valid, b.valid) << where;
    EXPECT_EQ(a.ints, b.ints) << where;
    EXPECT_TRUE(SameBytes(a.doubles, b.doubles)) << where;  // bit for bit, NaN included
    EXPECT_EQ(a.bytes, b.bytes) << where;
    EXPECT_EQ(a.offsets, b.offsets) << where;
  }
}

// Read [start, start + count) with both readers in batches of `max_rows` rows / `max_bytes`
// of WKB, comparing each pair of batches. Returns the rows read.
std::int64_t CompareRange(const std::string& path, std::int64_t start, std::int64_t count,
                          std::int64_t max_rows, std::int64_t max_bytes, GpkgSource* native) {
  auto gdal = GdalSource::Open(path);
  EXPECT_TRUE(gdal.ok()) << gdal.status().ToString();
  if (!gdal.ok()) return -1;
  EXPECT_OK((*gdal)->SeekRange(start, count));
  EXPECT_OK(native->SeekRange(start, count));
  FeatureBatch a, b;
  std::int64_t total = 0;
  const bool failed_before = ::testing::Test::HasFailure();
  for (int batch_idx = 0;; ++batch_idx) {
    const std::string at = path + " [" + std::to_string(start) + ", +" + std::to_string(count) +
                           ") batch " + std::to_string(batch_idx);
    auto got_a = (*gdal)->ReadBatch(max_rows, &a, max_bytes);
    auto got_b = native->ReadBatch(max_rows, &b, max_bytes);
    EXPECT_TRUE(got_a.ok()) << at << ": " << got_a.status().ToString();
    EXPECT_TRUE(got_b.ok()) << at << ": " << got_b.status().ToString();
    if (!got_a.ok() || !got_b.ok()) return -1;
    EXPECT_EQ(*got_a, *got_b) << at;
    ExpectSameBatch(a, b, at);
    if ((!failed_before && ::testing::Test::HasFailure()) || *got_a == 0) break;
    total += *got_a;
  }
  return total;
}

// Read layer `layer` whole with GdalSource and `native`, comparing batch by batch; rows read.
std::int64_t CompareRangeOf(const std::string& path, const std::string& layer, GpkgSource* native) {
  auto gdal = GdalSource::Open(path, layer);
  EXPECT_TRUE(gdal.ok()) << gdal.status().ToString();
  if (!gdal.ok()) return -1;
  FeatureBatch a, b;
  std::int64_t total = 0;
  for (int batch_idx = 0;; ++batch_idx) {
    const std::string at = path + " layer " + layer + " batch " + std::to_string(batch_idx);
    auto got_a = (*gdal)->ReadBatch(3, &a);
    auto got_b = native->ReadBatch(3, &b);
    EXPECT_TRUE(got_a.ok() && got_b.ok()) << at;
    if (!got_a.ok() || !got_b.ok()) return -1;
    EXPECT_EQ(*got_a, *got_b) << at;
    ExpectSameBatch(a, b, at);
    if (*got_a == 0) break;
    total += *got_a;
  }
  return total;
}

using ::geolake::testing::DataDir;

// What CompareDescriptions found: the layers described natively (each equal to GDAL's
// description) and, for each layer refused, the refusal's message.
struct Descriptions {
  std::set<std::string> described;
  std::map<std::string, std::string> refused;
};

// Describe every layer of `path` (and the first layer by "") natively and with GDAL: each one
// described natively must equal GDAL's description; the others must be refused with
// kNotImplemented. The layer list is compared too (or refused, noted under the name "*").
Descriptions CompareDescriptions(const std::string& path) {
  Descriptions out;
  auto gdal_names = GdalSource::LayerNames(path);
  EXPECT_TRUE(gdal_names.ok()) << gdal_names.status().ToString();
  if (!gdal_names.ok()) return out;
  auto native_names = GpkgSource::LayerNames(path);
  if (native_names.ok()) {
    EXPECT_EQ(*native_names, *gdal_names) << path;
  } else {
    EXPECT_THAT(native_names, IsError(ErrorCode::kNotImplemented)) << path;
    out.refused["*"] = native_names.status().message();
  }
  std::vector<std::string> layers = *gdal_names;
  layers.emplace_back();  // the first layer, by default
  for (const std::string& layer : layers) {
    const std::string at = path + " layer '" + layer + "'";
    auto gdal = GdalSource::Open(path, layer);
    EXPECT_TRUE(gdal.ok()) << at << ": " << gdal.status().ToString();
    if (!gdal.ok()) continue;
    auto native = GpkgSource::Describe(path, layer);
    if (!native.ok()) {
      EXPECT_THAT(native, IsError(ErrorCode::kNotImplemented)) << at;
      out.refused[(*gdal)->info().layer] = native.status().message();
      continue;
    }
    ExpectSameInfo((*gdal)->info(), *native, at);
    out.described.insert(native->layer);
  }
  return out;
}

// Why `layer` ("*": the layer list) was refused; empty when it was not.
std::string RefusalOf(const Descriptions& found, const std::string& layer) {
  const auto it = found.refused.find(layer);
  return it == found.refused.end() ? std::string() : it->second;
}

// The refusals, for failure messages.
std::string Why(const Descriptions& found) {
  std::string out;
  for (const auto& [layer, why] : found.refused) out += "\n  refused '" + layer + "': " + why;
  return out;
}

TEST(GpkgSourceRealDataTest, EveryGeoPackageMatchesGdal) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(DataDir(), ec)) {
    if (entry.path().extension() == ".gpkg") files.push_back(entry.path().string());
  }
  if (files.empty()) GTEST_SKIP() << ::geolake::testing::MissingDataReason("*.gpkg");
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    // Described without GDAL, exactly as GDAL describes it (every real file is).
    const Descriptions described = CompareDescriptions(path);
    EXPECT_EQ(described.described.size(), 1u) << Why(described);
    ASSERT_OK_AND_ASSIGN(auto native, GpkgSource::Open(path));
    const std::int64_t count = native->info().feature_count;
    ASSERT_GT(count, 0);
    // Large point files: a third in the middle (the unit cut's shape) and the last rows, to
    // keep the debug suite fast (GEOLAKE_GPKG_COMPARE_WHOLE=1 compares them whole too); smaller
    // ones whole, also with the ingest's 256 KiB batches.
    if (count > 20000 && std::getenv("GEOLAKE_GPKG_COMPARE_WHOLE") == nullptr) {
      EXPECT_EQ(CompareRange(path, count / 3, 20000, 4096, 0, native.get()), 20000);
      EXPECT_EQ(CompareRange(path, count - 5000, -1, 1000, 0, native.get()), 5000);
    } else {
      EXPECT_EQ(CompareRange(path, 0, -1, 8192, 256 * 1024, native.get()), count);
    }
    EXPECT_EQ(native->rows_read_by_gdal(), 0) << "every real row is read natively";
  }
}

// Little-endian / big-endian encodings for hand-made geometry blobs.
std::string Le32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string Bits64(std::uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
std::string Le64(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, 8);
  return Bits64(bits);
}
std::string Be32(std::uint32_t v) { return Le32(__builtin_bswap32(v)); }
std::string Be64(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, 8);
  return Bits64(__builtin_bswap64(bits));
}
std::string PointWkb(const std::string& x, const std::string& y) {
  return std::string("\x01", 1) + Le32(1) + x + y;
}
// A GeoPackage binary header: flags as given, SRS 0, the envelope doubles in the flags' order.
std::string GpHeader(std::uint8_t flags, const std::vector<double>& envelope = {}) {
  const bool little = (flags & 1) != 0;
  std::string out =
      std::string("GP\0", 3) + static_cast<char>(flags) + (little ? Le32(0) : Be32(0));
  for (double v : envelope) out += little ? Le64(v) : Be64(v);
  return out;
}
std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// INSERTs of geometry blobs GDAL's writer does not make but reads: NaN points with payloads
// (empty points), envelopes in either byte order, big-endian WKB, an EWKB Z flag, trailing
// bytes, the empty flag on a non-empty point.
std::vector<std::string> OddGeometryBlobs() {
  const std::string snan = Bits64(0x7FF4000000000001ULL);
  const std::string negative_nan = Bits64(0xFFF8000000000000ULL);
  const std::string one = Le64(1), two = Le64(2);
  const std::string line = std::string("\x01", 1) + Le32(2) + Le32(2) + one + two + two + one;
  const std::vector<std::string> blobs = {
      GpHeader(0x01) + PointWkb(snan, snan),
      GpHeader(0x01) + PointWkb(negative_nan, negative_nan),
      GpHeader(0x01) + PointWkb(snan, one),  // only x NaN: not empty
      GpHeader(0x01) + std::string("\x01", 1) + Le32(1001) + snan + snan + Le64(3),
      GpHeader(0x01) + std::string("\x01", 1) + Le32(4) + Le32(2) + PointWkb(snan, snan) +
          PointWkb(one, two),
      GpHeader(0x01) + std::string("\x01", 1) + Le32(7) + Le32(2) + PointWkb(snan, snan) + line,
      GpHeader(0x03, {1, 1, 2, 2}) + PointWkb(one, two),
      GpHeader(0x02, {1, 1, 2, 2}) + PointWkb(one, two),
      GpHeader(0x01) + std::string("\x00", 1) + Be32(1) + Be64(1) + Be64(2),
      GpHeader(0x01) + std::string("\x01", 1) + Le32(0x80000001u) + one + two + Le64(3),
      GpHeader(0x01) + PointWkb(one, two) + "\xDE\xAD",
      GpHeader(0x11) + PointWkb(one, two),
  };
  std::vector<std::string> statements;
  for (const std::string& blob : blobs) {
    statements.push_back("INSERT INTO types (geom, i32) VALUES (X'" + Hex(blob) + "', 1)");
  }
  return statements;
}

// Builds small GeoPackages with OGR and edits them with SQL (values GDAL's writer would never
// produce but other writers may).
class GpkgSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GDALAllRegister();
    dir_ = fs::temp_directory_path() /
           ("geolake_gpkg_source_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A new GeoPackage with one layer `name` of `geom_type`; its fields are set up by `fields`.
  GDALDatasetH Create(const std::string& file, const char* name, OGRwkbGeometryType geom_type,
                      OGRLayerH* layer) {
    GDALDriverH driver = GDALGetDriverByName("GPKG");
    GDALDatasetH ds = GDALCreate(driver, (dir_ / file).c_str(), 0, 0, 0, GDT_Unknown, nullptr);
    EXPECT_NE(ds, nullptr);
    *layer = GDALDatasetCreateLayer(ds, name, nullptr, geom_type, nullptr);
    EXPECT_NE(*layer, nullptr);
    return ds;
  }
  static void AddField(OGRLayerH layer, const char* name, OGRFieldType type,
                       OGRFieldSubType subtype = OFSTNone, int width = 0) {
    OGRFieldDefnH defn = OGR_Fld_Create(name, type);
    OGR_Fld_SetSubType(defn, subtype);
    if (width > 0) OGR_Fld_SetWidth(defn, width);
    ASSERT_EQ(OGR_L_CreateField(layer, defn, TRUE), OGRERR_NONE);
    OGR_Fld_Destroy(defn);
  }
  static void AddFeature(OGRLayerH layer, const char* wkt,
                         const std::function<void(OGRFeatureH)>& set_fields = nullptr) {
    OGRFeatureH feature = OGR_F_Create(OGR_L_GetLayerDefn(layer));
    if (wkt != nullptr) {
      OGRGeometryH geom = nullptr;
      char* text = const_cast<char*>(wkt);
      ASSERT_EQ(OGR_G_CreateFromWkt(&text, nullptr, &geom), OGRERR_NONE) << wkt;
      OGR_F_SetGeometryDirectly(feature, geom);
    }
    if (set_fields) set_fields(feature);
    ASSERT_EQ(OGR_L_CreateFeature(layer, feature), OGRERR_NONE);
    OGR_F_Destroy(feature);
  }
  // Run SQL statements on the file through GDAL (the GPKG driver hands them to SQLite).
  void Sql(const std::string& file, const std::vector<std::string>& statements) {
    GDALDatasetH ds = GDALOpenEx((dir_ / file).c_str(), GDAL_OF_VECTOR | GDAL_OF_UPDATE, nullptr,
                                 nullptr, nullptr);
    ASSERT_NE(ds, nullptr);
    for (const std::string& sql : statements) {
      CPLErrorReset();
      OGRLayerH result = GDALDatasetExecuteSQL(ds, sql.c_str(), nullptr, nullptr);
      if (result != nullptr) GDALDatasetReleaseResultSet(ds, result);
      EXPECT_LT(CPLGetLastErrorType(), CE_Failure) << sql << ": " << CPLGetLastErrorMsg();
    }
    GDALClose(ds);
  }
  std::string Path(const std::string& file) const { return (dir_ / file).string(); }

  fs::path dir_;
};

// Every attribute type GDAL's writer makes, nulls in each, and every simple geometry type in
// XY, Z, M and ZM, empty and null; then values only other writers make, put in with SQL.
TEST_F(GpkgSourceTest, EveryTypeAndOddValueMatchesGdal) {
  OGRLayerH layer = nullptr;
  GDALDatasetH ds = Create("types.gpkg", "types", wkbUnknown, &layer);
  AddField(layer, "i32", OFTInteger);
  AddField(layer, "i16", OFTInteger, OFSTInt16);
  AddField(layer, "flag", OFTInteger, OFSTBoolean);
  AddField(layer, "i64", OFTInteger64);
  AddField(layer, "real", OFTReal);
  AddField(layer, "f32", OFTReal, OFSTFloat32);
  AddField(layer, "text", OFTString);
  AddField(layer, "text5", OFTString, OFSTNone, 5);
  AddField(layer, "bin", OFTBinary);
  AddField(layer, "day", OFTDate);
  AddField(layer, "ts", OFTDateTime);
  const char* const wkts[] = {
      "POINT (1.5 -2.25)",
      "POINT Z (1 2 3)",
      "POINT M (1 2 4)",
      "POINT ZM (1 2 3 4)",
      "POINT EMPTY",
      "LINESTRING (0 0,1 1,2 0)",
      "LINESTRING Z (0 0 1,1 1 2)",
      "LINESTRING EMPTY",
      "POLYGON ((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 1))",
      "POLYGON ZM ((0 0 1 2,4 0 1 2,4 4 1 2,0 0 1 2))",
      "POLYGON EMPTY",
      "MULTIPOINT ((1 2),(3 4))",
      "MULTIPOINT Z ((1 2 3))",
      "MULTILINESTRING ((0 0,1 1),(2 2,3 3))",
      "MULTIPOLYGON (((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))",
      "MULTIPOLYGON M (((0 0 1,1 0 1,1 1 1,0 0 1)))",
      "MULTIPOLYGON EMPTY",
      "GEOMETRYCOLLECTION (POINT (1 2),LINESTRING (0 0,1 1),POLYGON ((0 0,1 0,1 1,0 0)))",
      "GEOMETRYCOLLECTION EMPTY",
      nullptr,  // no geometry
  };
  int row = 0;
  for (const char* wkt : wkts) {
    AddFeature(layer, wkt, [&](OGRFeatureH f) {
      if (row % 4 == 3) {  // a row of nulls in every field now and then
        for (int i = 0; i < 11; ++i) OGR_F_SetFieldNull(f, i);
        return;
      }
      OGR_F_SetFieldInteger(f, 0, row * 1000 - 7);
      OGR_F_SetFieldInteger(f, 1, -row);
      OGR_F_SetFieldInteger(f, 2, row % 2);
      OGR_F_SetFieldInteger64(f, 3, (1LL << 40) * (row + 1) * (row % 2 == 0 ? 1 : -1));
      OGR_F_SetFieldDouble(f, 4, row / 3.0);
      OGR_F_SetFieldDouble(f, 5, 0.1 * row);
      OGR_F_SetFieldString(f, 6, row == 2 ? "" : "héllo wörld");
      OGR_F_SetFieldString(f, 7, "abc");
      const GByte bytes[] = {0, 1, 2, 0xff};
      OGR_F_SetFieldBinary(f, 8, row % 5, bytes);
      OGR_F_SetFieldDateTimeEx(f, 9, 1900 + row * 7, 1 + row % 12, 1 + row, 0, 0, 0, 0);
      OGR_F_SetFieldDateTimeEx(f, 10, 1969 + row, 12, 31, 23, 59, 59.5f + row / 1000.0f,
                               row % 3 == 0 ? 100 : 0);
    });
    ++row;
  }
  GDALClose(ds);
  Sql("types.gpkg",
      {
          // Declared types GDAL maps but does not write, filled by SQL.
          "ALTER TABLE types ADD COLUMN tiny TINYINT",
          "ALTER TABLE types ADD COLUMN int4 INT",
          "ALTER TABLE types ADD COLUMN dbl DOUBLE",
          "ALTER TABLE types ADD COLUMN flt FLOAT",
          "UPDATE types SET tiny = fid % 7 - 3, int4 = fid * 11, dbl = fid / 7.0, flt = 0.5",
          // Integers beyond int32 in 32-bit fields, reals and text in integer fields, text and
          // integers in real fields, a blob and an embedded NUL in text fields.
          "UPDATE types SET i32 = 1099511627776 + 5, i16 = -70000, flag = 2, int4 = -4294967297 "
          "WHERE fid = 1",
          "UPDATE types SET i32 = 3.75, i64 = 1e30, real = '1.5x', text = X'414243' WHERE fid = 2",
          "UPDATE types SET i32 = '12abc', i64 = -9223372036854775808, real = 7, "
          "text = CAST(X'610062' AS TEXT), bin = 'as text' WHERE fid = 3",
          // Dates and date-times: the nominal forms (read natively) and others (GDAL's parsers).
          "UPDATE types SET day = '2024-02-29', ts = '2024-02-29T12:34:56.789Z' WHERE fid = 5",
          "UPDATE types SET day = '2024-2-9', ts = '2024-02-29T12:34:56' WHERE fid = 6",
          "UPDATE types SET day = '0001-01-01', ts = '2024-02-29T12:34:56+02:00' WHERE fid = 7",
          "UPDATE types SET day = 'garbage', ts = '2024-02-29 12:34:56.5' WHERE fid = 9",
          "UPDATE types SET day = 20240229, ts = 1700000000 WHERE fid = 10",
          "UPDATE types SET day = '2023-02-31', ts = '1969-12-31T23:59:59.999' WHERE fid = 11",
          "UPDATE types SET day = '2024-13-01', ts = '2024-02-29T24:00:00Z' WHERE fid = 13",
          "UPDATE types SET ts = '9999-12-31T23:59:60.999Z' WHERE fid = 14",
          "UPDATE types SET ts = '2024-02-29T12:34Z' WHERE fid = 15",
          // Every millisecond, with and without Z: float seconds must round as GDAL's do.
          "INSERT INTO types (ts, i32) SELECT printf('2001-09-09T01:46:%02d.%03dZ', value % 60, "
          "value), value FROM (WITH RECURSIVE n(value) AS (SELECT 0 UNION ALL SELECT value + 1 "
          "FROM n WHERE value < 999) SELECT value FROM n)",
          "INSERT INTO types (ts, i32) SELECT printf('1950-06-15T13:07:%02d.%03d', value % 61, "
          "value), value FROM (WITH RECURSIVE n(value) AS (SELECT 0 UNION ALL SELECT value + 1 "
          "FROM n WHERE value < 999) SELECT value FROM n)",
      });
  Sql("types.gpkg", OddGeometryBlobs());  // geometry blobs other writers make
  // A curve in the GEOMETRY-typed table, written by GDAL (an extension GDAL registers).
  GDALDatasetH update = GDALOpenEx(Path("types.gpkg").c_str(), GDAL_OF_VECTOR | GDAL_OF_UPDATE,
                                   nullptr, nullptr, nullptr);
  ASSERT_NE(update, nullptr);
  AddFeature(GDALDatasetGetLayer(update, 0), "CIRCULARSTRING (0 0,1 1,2 0)");
  GDALClose(update);
  // Described natively as GDAL describes it, the columns added by SQL included.
  const Descriptions descriptions = CompareDescriptions(Path("types.gpkg"));
  EXPECT_EQ(descriptions.described, (std::set<std::string>{"types"})) << Why(descriptions);

  ASSERT_OK_AND_ASSIGN(auto native, GpkgSource::Open(Path("types.gpkg")));
  const std::int64_t count = native->info().feature_count;
  ASSERT_GT(count, 2000);
  // The rows whose numbers SQLite would coerce (fid 1-3 above) are unreadable in both readers
  // (CompareRange compares the reasons too), the others read.
  {
    FeatureBatch first;
    ASSERT_OK_AND_ASSIGN(auto gdal, GdalSource::Open(Path("types.gpkg")));
    ASSERT_OK(gdal->ReadBatch(8, &first).status());
    std::vector<std::string> reasons;
    for (const geoparquet::UnreadableRow& u : first.unreadable) reasons.push_back(u.reason);
    EXPECT_EQ(reasons, (std::vector<std::string>{
                           "feature 0: field 'i32': integer 1099511627781 does not fit the "
                           "field's 32 bits",
                           "feature 1: field 'i32': real 3.75 in an Integer field",
                           "feature 2: field 'i32': text '12abc' in an Integer field"}));
  }
  EXPECT_EQ(CompareRange(Path("types.gpkg"), 0, -1, 333, 0, native.get()), count);
  // Rows the native reader cannot convert exactly went to GDAL one at a time, and only those.
  const std::int64_t handed = native->rows_read_by_gdal();
  EXPECT_GT(handed, 10);
  EXPECT_LT(handed, 1050);  // the 1,000 rows without Z are nominal
  // The same with GDAL's description handed in, as discover hands it to units: GDAL is then
  // opened only when the first row it must read comes.
  ASSERT_OK_AND_ASSIGN(auto described, GdalSource::Open(Path("types.gpkg")));
  ASSERT_OK_AND_ASSIGN(auto lazy,
                       GpkgSource::Open(Path("types.gpkg"), "",
                                        std::make_shared<const SourceInfo>(described->info())));
  EXPECT_EQ(CompareRange(Path("types.gpkg"), 0, -1, 500, 0, lazy.get()), count);
  EXPECT_EQ(lazy->rows_read_by_gdal(), handed);
  // Ranges, as units cut them, and small batches under a byte limit.
  EXPECT_EQ(CompareRange(Path("types.gpkg"), 7, 20, 3, 0, native.get()), 20);
  EXPECT_EQ(CompareRange(Path("types.gpkg"), 15, 1500, 1000, 200, native.get()), 1500);
}

// Issue 17 item 9: a number SQLite would coerce without a word ('many' in a MEDIUMINT column,
// 1e30 in an INTEGER one: GDAL reads them as 0 and -1) makes its row unreadable, with a reason
// naming the field, in the native reader and through GDAL alike (FeatureBatch::unreadable:
// nulls, no geometry; ingest rejects it). Values SQLite converts exactly are kept. Before,
// both readers gave 0 and INT64_MAX and the row was committed.
TEST_F(GpkgSourceTest, InexactNumbersAreUnreadableRowsInBothReaders) {
  OGRLayerH layer = nullptr;
  GDALDatasetH ds = Create("odd.gpkg", "odd", wkbPoint, &layer);
  AddField(layer, "n", OFTInteger64);
  for (int i = 1; i <= 6; ++i) {
    const std::string wkt = "POINT (" + std::to_string(i) + " 1)";
    AddFeature(layer, wkt.c_str(), [&](OGRFeatureH f) { OGR_F_SetFieldInteger64(f, 0, i); });
  }
  GDALClose(ds);
  Sql("odd.gpkg",
      {"ALTER TABLE odd ADD COLUMN m MEDIUMINT", "ALTER TABLE odd ADD COLUMN r REAL",
       "UPDATE odd SET m = fid, r = fid / 2.0", "UPDATE odd SET m = 'many' WHERE fid = 2",
       "UPDATE odd SET n = 1e30 WHERE fid = 3", "UPDATE odd SET r = 'n/a' WHERE fid = 4",
       "UPDATE odd SET m = 5000000000 WHERE fid = 5",
       "UPDATE odd SET m = ' 17', n = -4.0, r = '2.5e1' WHERE fid = 6"});
  const std::vector<std::string> want = {
      "feature 1: field 'm': text 'many' in an Integer field",
      "feature 2: field 'n': real 1e+30 in an Integer64 field",
      "feature 3: field 'r': text 'n/a' in a Real field",
      "feature 4: field 'm': integer 5000000000 does not fit the field's 32 bits",
  };
  ASSERT_OK_AND_ASSIGN(auto gdal, GdalSource::Open(Path("odd.gpkg")));
  ASSERT_OK_AND_ASSIGN(auto native, GpkgSource::Open(Path("odd.gpkg")));
  for (const bool through_gdal : {true, false}) {
    FeatureBatch batch;
    auto rows = through_gdal ? gdal->ReadBatch(100, &batch) : native->ReadBatch(100, &batch);
    ASSERT_OK(rows.status());
    ASSERT_EQ(*rows, 6) << through_gdal;
    std::vector<std::string> got;
    for (const geoparquet::UnreadableRow& u : batch.unreadable) {
      EXPECT_EQ(batch.feature_index[static_cast<std::size_t>(u.row)], u.row);
      EXPECT_EQ(batch.geometry_valid[static_cast<std::size_t>(u.row)], 0);
      got.push_back(u.reason);
    }
    EXPECT_EQ(got, want) << (through_gdal ? "GDAL" : "native");
    // Exact conversions are kept: ' 17' -> 17, -4.0 -> -4, '2.5e1' -> 25.
    ASSERT_EQ(batch.fields[1].name, "m");
    EXPECT_EQ(batch.columns[1].ints[5], 17);
    EXPECT_EQ(batch.columns[0].ints[5], -4);
    EXPECT_EQ(batch.columns[2].doubles[5], 25.0);
    EXPECT_EQ(batch.columns[1].ints[0], 1);
  }
  EXPECT_EQ(native->rows_read_by_gdal(), 0);
  EXPECT_EQ(CompareRange(Path("odd.gpkg"), 0, -1, 4, 0, native.get()), 6);
}

// Deleted rows leave rowid gaps: indices are then positions (GDAL's SetNextByIndex), not FIDs.
TEST_F(GpkgSourceTest, RowidGapsGivePositionsAsGdalDoes) {
  OGRLayerH layer = nullptr;
  GDALDatasetH ds = Create("gaps.gpkg", "gaps", wkbPoint, &layer);
  AddField(layer, "n", OFTInteger64);
  for (int i = 0; i < 300; ++i) {
    const std::string wkt = "POINT (" + std::to_string(i) + " " + std::to_string(-i) + ")";
    AddFeature(layer, i % 10 == 9 ? nullptr : wkt.c_str(),
               [&](OGRFeatureH f) { OGR_F_SetFieldInteger64(f, 0, i); });
  }
  GDALClose(ds);
  Sql("gaps.gpkg", {"DELETE FROM gaps WHERE fid % 7 = 0 OR fid = 1"});
  const Descriptions described = CompareDescriptions(Path("gaps.gpkg"));
  EXPECT_EQ(described.described, (std::set<std::string>{"gaps"})) << Why(described);
  ASSERT_OK_AND_ASSIGN(auto native, GpkgSource::Open(Path("gaps.gpkg")));
  EXPECT_EQ(native->info().first_fid, -1);
  EXPECT_FALSE(native->info().fast_seek);
  const std::int64_t left = 300 - 300 / 7 - 1;
  EXPECT_EQ(CompareRange(Path("gaps.gpkg"), 0, -1, 64, 0, native.get()), left);
  EXPECT_EQ(CompareRange(Path("gaps.gpkg"), 100, 50, 7, 0, native.get()), 50);
  EXPECT_EQ(CompareRange(Path("gaps.gpkg"), 200, -1, 1000, 0, native.get()), left - 200);
  EXPECT_EQ(native->rows_read_by_gdal(), 0);
}

// A table where most rows need GDAL (every date-time has a UTC offset, which only GDAL's parser
// reads) is handed to GDAL for the rest of the range after 64 rows: the same rows and indices,
// with FIDs in a run and with rowid gaps.
TEST_F(GpkgSourceTest, TableMostlyForGdalIsHandedToGdal) {
  OGRLayerH layer = nullptr;
  GDALDatasetH ds = Create("offsets.gpkg", "offsets", wkbPoint, &layer);
  AddField(layer, "ts", OFTDateTime);
  for (int i = 0; i < 300; ++i) {
    const std::string wkt = "POINT (" + std::to_string(i) + " 1)";
    AddFeature(layer, wkt.c_str());
  }
  GDALClose(ds);
  Sql("offsets.gpkg", {"UPDATE offsets SET ts = printf('2024-02-29T12:%02d:56+02:00', fid % 60)"});
  for (bool gaps : {false, true}) {
    if (gaps) Sql("offsets.gpkg", {"DELETE FROM offsets WHERE fid % 11 = 0"});
    const Descriptions described = CompareDescriptions(Path("offsets.gpkg"));
    EXPECT_EQ(described.described, (std::set<std::string>{"offsets"})) << Why(described);
    const std::int64_t left = gaps ? 300 - 300 / 11 : 300;
    ASSERT_OK_AND_ASSIGN(auto native, GpkgSource::Open(Path("offsets.gpkg")));
    EXPECT_EQ(native->info().fast_seek, !gaps);
    // One row per batch, so that the short batch at the hand-over keeps both readers in step.
    EXPECT_EQ(CompareRange(Path("offsets.gpkg"), 0, -1, 1, 0, native.get()), left);
    EXPECT_EQ(native->rows_read_by_gdal(), left);
    EXPECT_EQ(CompareRange(Path("offsets.gpkg"), 20, 200, 1, 0, native.get()), 200);
    EXPECT_EQ(native->rows_read_by_gdal(), 200);
    // The hand-over shows as the one short batch: the 64th row needing GDAL ends its batch.
    ASSERT_OK(native->Seek(0));
    FeatureBatch batch;
    ASSERT_OK_AND_ASSIGN(std::int64_t rows, native->ReadBatch(50, &batch));
    EXPECT_EQ(rows, 50);
    ASSERT_OK_AND_ASSIGN(rows, native->ReadBatch(50, &batch));
    EXPECT_EQ(rows, 14);
    ASSERT_OK_AND_ASSIGN(rows, native->ReadBatch(50, &batch));
    EXPECT_EQ(rows, 50);
  }
}

// Tables it does not read exactly are refused, and UnitReader then reads them with GDAL.
TEST_F(GpkgSourceTest, RefusesTablesItCannotReadExactlyAndUnitReaderUsesGdal) {
  OGRLayerH layer = nullptr;
  GDALDatasetH ds = Create("curves.gpkg", "curves", wkbCompoundCurve, &layer);
  AddField(layer, "n", OFTInteger);
  AddFeature(layer, "COMPOUNDCURVE (CIRCULARSTRING (0 0,1 1,2 0),(2 0,3 0))",
             [](OGRFeatureH f) { OGR_F_SetFieldInteger(f, 0, 1); });
  OGRLayerH plain = GDALDatasetCreateLayer(ds, "plain", nullptr, wkbNone, nullptr);
  ASSERT_NE(plain, nullptr);
  AddField(plain, "n", OFTInteger);
  AddFeature(plain, nullptr, [](OGRFeatureH f) { OGR_F_SetFieldInteger(f, 0, 5); });
  GDALClose(ds);
  // A view registered as a feature table (GDAL reads those).
  Sql("curves.gpkg",
      {"CREATE VIEW seen AS SELECT fid, geom, n FROM curves",
       "INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) "
       "VALUES ('seen', 'features', 'seen', 0)",
       "INSERT INTO gpkg_geometry_columns VALUES ('seen', 'geom', 'GEOMETRY', 0, 0, 0)"});

  // A curve type, an attribute table and a view: none is described natively either.
  const Descriptions described = CompareDescriptions(Path("curves.gpkg"));
  EXPECT_EQ(described.described, (std::set<std::string>{})) << Why(described);
  EXPECT_EQ(described.refused.size(), 3u) << Why(described);
  for (const auto& [name, reason] :
       std::map<std::string, std::string>{{"curves", "declared geometry type 'COMPOUNDCURVE'"},
                                          {"plain", "an attribute table"},
                                          {"seen", "not a plain table"}}) {
    EXPECT_THAT(RefusalOf(described, name), ::testing::HasSubstr(reason)) << name;
  }
  EXPECT_THAT(GpkgSource::Open(Path("curves.gpkg"), "curves"), IsError(ErrorCode::kNotImplemented));
  EXPECT_THAT(GpkgSource::Open(Path("curves.gpkg"), "plain"), IsError(ErrorCode::kNotImplemented));
  EXPECT_THAT(GpkgSource::Open(Path("curves.gpkg"), "seen"), IsError(ErrorCode::kNotImplemented));
  for (const char* name : {"curves", "plain", "seen"}) {
    SourceUnit unit{Path("curves.gpkg"), name, 0, 0, -1, "GPKG"};
    ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(unit));
    FeatureBatch batch;
    ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(10, &batch));
    EXPECT_EQ(rows, 1) << name;
  }
  // Not a GeoPackage at all.
  const std::string json = Path("one.geojson");
  FILE* file = std::fopen(json.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs(R"({"type":"FeatureCollection","features":[]})", file);
  std::fclose(file);
  EXPECT_THAT(GpkgSource::Open(json), IsError(ErrorCode::kNotImplemented));
  EXPECT_THAT(GpkgSource::Open(Path("missing.gpkg")), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(GpkgSource::Open(Path("curves.gpkg"), "nope"), IsError(ErrorCode::kNotFound));
}

// UnitReader reads discovered GeoPackage units natively with the same rows as through GDAL.
TEST_F(GpkgSourceTest, UnitsReadTheSameWithAndWithoutTheNativeReader) {
  OGRLayerH layer = nullptr;
  GDALDatasetH ds = Create("units.gpkg", "units", wkbPolygon, &layer);
  AddField(layer, "name", OFTString);
  for (int i = 0; i < 500; ++i) {
    const std::string x = std::to_string(i);
    const std::string wkt = "POLYGON ((" + x + " 0," + x + " 1,1 1," + x + " 0))";
    AddFeature(layer, wkt.c_str(), [&](OGRFeatureH f) { OGR_F_SetFieldString(f, 0, x.c_str()); });
  }
  GDALClose(ds);
  std::vector<FeatureBatch> per_mode[2];
  for (bool native : {false, true}) {
    DiscoverOptions options;
    options.unit_rows = 120;
    options.native_gpkg = native;
    ASSERT_OK_AND_ASSIGN(auto found, DiscoverSources({Path("units.gpkg")}, options));
    ASSERT_EQ(found.size(), 1u);
    ASSERT_EQ(found[0].units.size(), 5u);
    for (const SourceUnit& unit : found[0].units) {
      ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(unit));
      while (true) {
        FeatureBatch batch;
        ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(50, 1000, &batch));
        if (rows == 0) break;
        per_mode[native].push_back(std::move(batch));
      }
    }
  }
  ASSERT_EQ(per_mode[0].size(), per_mode[1].size());
  std::int64_t rows = 0;
  for (std::size_t i = 0; i < per_mode[0].size(); ++i) {
    ExpectSameBatch(per_mode[0][i], per_mode[1][i], "batch " + std::to_string(i));
    rows += per_mode[0][i].num_rows();
  }
  EXPECT_EQ(rows, 500);
}

// Layers of every kind GDAL writes (Z/M geometry types, a JSON field, an empty table, an
// attribute table, several EPSG CRSs, a CRS that is not EPSG's) and tables other writers make
// with SQL (each declared type GDAL maps, lower-case names, odd z/m flags, registered in an
// order other than their geometry columns, EPSG entries under another srs_id, a deprecated EPSG
// code, declared types GDAL maps otherwise, a stale or missing gpkg_ogr_contents count, FID
// gaps): each layer is described natively exactly as GDAL describes it, or refused.
TEST_F(GpkgSourceTest, DescribesEveryLayerAsGdalOrRefuses) {
  GDALDatasetH ds = GDALCreate(GDALGetDriverByName("GPKG"), Path("kinds.gpkg").c_str(), 0, 0, 0,
                               GDT_Unknown, nullptr);
  ASSERT_NE(ds, nullptr);
  struct LayerSpec {
    const char* name;
    OGRwkbGeometryType type;
    const char* crs;  // nullptr = none
    const char* wkt;  // of each feature; nullptr = no feature
  };
  const std::vector<LayerSpec> specs = {
      {"zm_lines", wkbLineStringZM, "EPSG:3857", "LINESTRING ZM (0 0 1 2,1 1 1 2)"},
      {"b_attributes", wkbNone, nullptr, ""},
      {"a_polygons", wkbMultiPolygonM, "EPSG:2154", "MULTIPOLYGON M (((0 0 1,1 0 1,1 1 1,0 0 1)))"},
      {"z_points", wkbPoint25D, "EPSG:4979", "POINT Z (1 2 3)"},
      {"empty", wkbPoint, "EPSG:4326", nullptr},
      {"utm", wkbGeometryCollection, "EPSG:32633", "GEOMETRYCOLLECTION (POINT (500000 0))"},
      {"custom", wkbPoint,
       "+proj=lcc +lat_1=40 +lat_2=50 +lat_0=45 +lon_0=10 +ellps=GRS80 +units=m +type=crs",
       "POINT (1 2)"},
  };
  for (const LayerSpec& spec : specs) {
    OGRSpatialReferenceH srs = nullptr;
    if (spec.crs != nullptr) {
      srs = OSRNewSpatialReference(nullptr);
      ASSERT_EQ(OSRSetFromUserInput(srs, spec.crs), OGRERR_NONE) << spec.crs;
    }
    OGRLayerH layer = GDALDatasetCreateLayer(ds, spec.name, srs, spec.type, nullptr);
    if (srs != nullptr) OSRRelease(srs);
    ASSERT_NE(layer, nullptr) << spec.name;
    AddField(layer, "name", OFTString);
    AddField(layer, "props", OFTString, OFSTJSON);
    AddField(layer, "when", OFTDateTime);
    if (spec.wkt == nullptr) continue;
    for (int i = 0; i < 6; ++i) {
      AddFeature(layer, *spec.wkt != '\0' ? spec.wkt : nullptr, [&](OGRFeatureH f) {
        OGR_F_SetFieldString(f, 0, spec.name);
        OGR_F_SetFieldString(f, 1, R"({"a": 1})");
      });
    }
  }
  GDALClose(ds);
  const std::string point_table = " (fid INTEGER PRIMARY KEY, geom POINT, n INTEGER)";
  Sql("kinds.gpkg",
      {
          // A stale count where GDAL keeps one, a table without one, and FID gaps.
          "UPDATE gpkg_ogr_contents SET feature_count = 99 WHERE table_name = 'zm_lines'",
          "DELETE FROM gpkg_ogr_contents WHERE table_name = 'utm'",
          "DELETE FROM a_polygons WHERE fid IN (2, 3)",
          // Every declared type GDAL maps, in upper and lower case, with and without a size.
          "CREATE TABLE declared (fid integer PRIMARY KEY AUTOINCREMENT, geom geometry, "
          "i INTEGER, i2 int, mi MEDIUMINT, si SMALLINT, ti tinyint, b BOOLEAN, f FLOAT, "
          "d DOUBLE, r real, t TEXT, t12 TEXT(12), bl BLOB, bl8 blob(8), dt DATE, "
          "dtm DATETIME, \"Mixed \"\"Name\" Text, js TEXT)",
          "INSERT INTO declared (geom, i, js) VALUES (NULL, 1, '[]'), (NULL, 2, '{}')",
          "CREATE TABLE zopt (id INTEGER PRIMARY KEY, shape POINT, n INTEGER)",
          "CREATE TABLE gopt" + point_table,
          "CREATE TABLE gmix" + point_table,
          "CREATE TABLE gzm" + point_table,
          "CREATE TABLE other_epsg" + point_table,
          "CREATE TABLE deprecated" + point_table,
          "CREATE TABLE undefined_cartesian" + point_table,
          "CREATE TABLE varchar_type (fid INTEGER PRIMARY KEY, geom POINT, v VARCHAR(10))",
          "CREATE TABLE numeric_type (fid INTEGER PRIMARY KEY, geom POINT, v NUMERIC)",
          "CREATE TABLE int8_type (fid INTEGER PRIMARY KEY, geom POINT, v INT8)",
          "CREATE TABLE mediumint_fid (fid MEDIUMINT PRIMARY KEY, geom POINT)",
          // (The custom CRS made GDAL add the WKT2 column definition_12_063.)
          "INSERT INTO gpkg_spatial_ref_sys (srs_name, srs_id, organization, "
          "organization_coordsys_id, definition, definition_12_063) "
          "SELECT 'WGS 84 under another id', 99999, 'EPSG', 4326, definition, "
          "definition_12_063 FROM gpkg_spatial_ref_sys WHERE srs_id = 4326",
          "INSERT INTO gpkg_spatial_ref_sys (srs_name, srs_id, organization, "
          "organization_coordsys_id, definition, definition_12_063) "
          "SELECT 'Popular Visualisation CRS / Mercator', 3785, 'epsg', 3785, definition, "
          "definition_12_063 FROM gpkg_spatial_ref_sys WHERE srs_id = 3857",
          // Registered in one order in gpkg_contents and another in gpkg_geometry_columns:
          // the layer order is then SQLite's plan for GDAL's join, which Describe must follow.
          "INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) VALUES "
          "('zopt', 'features', 'zopt', 4326), ('declared', 'features', 'declared', 4326), "
          "('gopt', 'features', 'gopt', 4326), ('gmix', 'features', 'gmix', 4326), "
          "('gzm', 'features', 'gzm', 4326), ('other_epsg', 'features', 'other_epsg', 99999), "
          "('deprecated', 'features', 'deprecated', 3785), "
          "('undefined_cartesian', 'features', 'undefined_cartesian', -1), "
          "('varchar_type', 'features', 'varchar_type', 4326), "
          "('numeric_type', 'features', 'numeric_type', 4326), "
          "('int8_type', 'features', 'int8_type', 4326), "
          "('mediumint_fid', 'features', 'mediumint_fid', 4326)",
          "INSERT INTO gpkg_geometry_columns VALUES "
          "('declared', 'geom', 'geometry', 4326, 2, 2), "
          "('mediumint_fid', 'geom', 'POINT', 4326, 0, 0), "
          "('int8_type', 'geom', 'POINT', 4326, 0, 0), "
          "('numeric_type', 'geom', 'POINT', 4326, 0, 0), "
          "('varchar_type', 'geom', 'POINT', 4326, 0, 0), "
          "('undefined_cartesian', 'geom', 'POINT', -1, 0, 0), "
          "('deprecated', 'geom', 'POINT', 3785, 0, 0), "
          "('other_epsg', 'geom', 'POINT', 99999, 0, 0), "
          "('gzm', 'geom', 'GEOMETRY', 4326, 1, 1), "
          "('gmix', 'geom', 'GEOMETRY', 4326, 2, 1), "
          "('gopt', 'geom', 'MultiLineString', 4326, 2, 2), "
          "('zopt', 'shape', 'Point', 4326, 2, 0)",
          // JSON by gpkg_data_columns' mime type (the column matched case-insensitively).
          "INSERT INTO gpkg_data_columns (table_name, column_name, mime_type) VALUES "
          "('declared', 'JS', 'Application/JSON'), ('declared', 'i', 'application/json')",
      });
  const Descriptions described = CompareDescriptions(Path("kinds.gpkg"));
  EXPECT_EQ(described.described,
            (std::set<std::string>{"zm_lines", "a_polygons", "z_points", "empty", "utm", "declared",
                                   "zopt", "gopt", "gzm"}))
      << Why(described);
  // Refused, and why: each is a case Describe does not mirror (GDAL describes them).
  const std::map<std::string, std::string> refusals = {
      {"b_attributes", "an attribute table"},
      {"custom", "is not EPSG:"},
      {"gmix", "only one of z/m optional"},
      {"other_epsg", "(organization 'EPSG', id 4326)"},
      {"deprecated", "deprecated"},
      {"undefined_cartesian", "srs_id -1"},
      {"varchar_type", "declared type 'VARCHAR(10)'"},
      {"numeric_type", "declared type 'NUMERIC'"},
      {"int8_type", "declared type 'INT8'"},
      {"mediumint_fid", "the FID is not the rowid"},
  };
  EXPECT_EQ(described.refused.size(), refusals.size()) << Why(described);
  for (const auto& [name, reason] : refusals) {
    EXPECT_THAT(RefusalOf(described, name), ::testing::HasSubstr(reason)) << name;
  }
  // The facts compared above, spelled out once for two layers.
  ASSERT_OK_AND_ASSIGN(const SourceInfo declared,
                       GpkgSource::Describe(Path("kinds.gpkg"), "declared"));
  EXPECT_EQ(declared.geometry_type, "Unknown (any)");
  EXPECT_EQ(declared.field_source_types,
            (std::vector<std::string>{"Integer64", "Integer64", "Integer", "Integer(Int16)",
                                      "Integer", "Integer(Boolean)", "Real(Float32)", "Real",
                                      "Real", "String", "String", "Binary", "Binary", "Date",
                                      "DateTime", "String", "String(JSON)"}));
  ASSERT_OK_AND_ASSIGN(const SourceInfo lines,
                       GpkgSource::Describe(Path("kinds.gpkg"), "zm_lines"));
  EXPECT_EQ(lines.geometry_type, "3D Measured Line String");
  EXPECT_EQ(lines.feature_count, 99);  // gpkg_ogr_contents' count, stale as it is
  EXPECT_FALSE(lines.fast_seek);
  EXPECT_EQ(lines.crs_authority, "EPSG:3857");
  // GpkgSource::Open describes natively too and reads the same rows as GDAL.
  ASSERT_OK_AND_ASSIGN(auto native, GpkgSource::Open(Path("kinds.gpkg"), "a_polygons"));
  EXPECT_EQ(CompareRangeOf(Path("kinds.gpkg"), "a_polygons", native.get()), 4);
}

// Tables GDAL lists that are not registered in gpkg_contents, a GeoPackage under another
// extension and an SQLite file that is not a GeoPackage: refused (GDAL describes them), and
// discovery gives the same sources with and without the native description.
TEST_F(GpkgSourceTest, RefusesFilesWhoseListingItDoesNotMirror) {
  OGRLayerH layer = nullptr;
  GDALDatasetH ds = Create("extra.gpkg", "registered", wkbPoint, &layer);
  AddField(layer, "n", OFTInteger);
  AddFeature(layer, "POINT (1 2)", [](OGRFeatureH f) { OGR_F_SetFieldInteger(f, 0, 7); });
  GDALClose(ds);
  fs::copy_file(dir_ / "extra.gpkg", dir_ / "copy.sqlite");
  EXPECT_TRUE(GpkgSource::IsGeoPackageFile(Path("extra.gpkg")));
  EXPECT_TRUE(GpkgSource::IsGeoPackageFile(Path("copy.sqlite")));
  EXPECT_EQ(CompareDescriptions(Path("extra.gpkg")).described,
            (std::set<std::string>{"registered"}));
  const Descriptions copy = CompareDescriptions(Path("copy.sqlite"));
  EXPECT_TRUE(copy.described.empty());
  EXPECT_THAT(RefusalOf(copy, "*"), ::testing::HasSubstr("extension is not .gpkg"));
  Sql("extra.gpkg", {"CREATE TABLE unregistered (id INTEGER PRIMARY KEY, v TEXT)",
                     "INSERT INTO unregistered (v) VALUES ('x')"});
  const Descriptions extra = CompareDescriptions(Path("extra.gpkg"));
  EXPECT_TRUE(extra.described.empty());
  EXPECT_THAT(RefusalOf(extra, "*"), ::testing::HasSubstr("'unregistered' is not registered"));
  ASSERT_OK_AND_ASSIGN(auto names, GdalSource::LayerNames(Path("extra.gpkg")));
  EXPECT_EQ(names, (std::vector<std::string>{"registered", "unregistered"}));
  for (const std::string& path : {Path("extra.gpkg"), Path("copy.sqlite")}) {
    std::vector<DiscoveredSource> found[2];
    for (bool native : {false, true}) {
      DiscoverOptions options;
      options.all_layers = true;
      options.native_gpkg = native;
      ASSERT_OK_AND_ASSIGN(found[native], DiscoverSources({path}, options));
    }
    ASSERT_EQ(found[0].size(), found[1].size()) << path;
    for (std::size_t i = 0; i < found[0].size(); ++i) {
      EXPECT_EQ(found[0][i].layer, found[1][i].layer);
      EXPECT_EQ(found[0][i].feature_count, found[1][i].feature_count);
    }
  }
  // A plain SQLite database (no GeoPackage application_id) is not one.
  Sql("extra.gpkg", {"PRAGMA application_id = 0"});
  EXPECT_FALSE(GpkgSource::IsGeoPackageFile(Path("extra.gpkg")));
  EXPECT_FALSE(GpkgSource::IsGeoPackageFile(Path("missing.gpkg")));
  EXPECT_THAT(GpkgSource::Describe(Path("missing.gpkg")), IsError(ErrorCode::kNotFound));
}

}  // namespace
}  // namespace geolake::sources
