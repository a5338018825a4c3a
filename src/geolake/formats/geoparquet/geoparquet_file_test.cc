#include "geolake/formats/geoparquet/geoparquet_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/hilbert.h"
#include "geolake/geo/wkb.h"
#include "geolake/geo/wkt.h"
#include "geolake/io/file_io.h"
#include "geolake/testing/testing.h"

namespace geolake::geoparquet {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using geoparquet::FieldType;
using parquet::LogicalType;
using parquet::PhysicalType;
using ::testing::ElementsAre;

// A temporary folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "geolake_gpq_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string Wkb(const std::string& wkt) {
  auto wkb = geo::WktToWkb(wkt);
  EXPECT_OK(wkb);
  return wkb.ok() ? *wkb : std::string();
}

// Builds FeatureBatches row by row for a fixed field list.
class BatchBuilder {
 public:
  explicit BatchBuilder(std::vector<geoparquet::FieldDef> fields) {
    batch_.fields = std::move(fields);
    for (const auto& f : batch_.fields) {
      geoparquet::Column c;
      c.type = f.type;
      batch_.columns.push_back(std::move(c));
    }
  }
  // One row: `values` per field as text ("" = null), parsed by type; `wkt` empty = null.
  void Row(const std::vector<std::string>& values, const std::string& wkt) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      geoparquet::Column& c = batch_.columns[i];
      const bool present = !values[i].empty();
      c.valid.push_back(present ? 1 : 0);
      switch (c.type) {
        case FieldType::kBool:
        case FieldType::kInt64:
        case FieldType::kDate:
        case FieldType::kTimestamp:
          c.ints.push_back(present ? std::stoll(values[i]) : 0);
          break;
        case FieldType::kDouble:
          c.doubles.push_back(present ? std::stod(values[i]) : 0.0);
          break;
        case FieldType::kString:
        case FieldType::kBinary:
          if (present) c.bytes += values[i];
          c.offsets.push_back(static_cast<std::int64_t>(c.bytes.size()));
          break;
      }
    }
    RawGeometry(wkt.empty() ? std::string() : Wkb(wkt), !wkt.empty());
  }
  void RawGeometry(const std::string& wkb, bool valid) {
    batch_.wkb += wkb;
    batch_.wkb_offsets.push_back(static_cast<std::int64_t>(batch_.wkb.size()));
    batch_.geometry_valid.push_back(valid ? 1 : 0);
    batch_.feature_index.push_back(next_index_++);
  }
  // Attributes all null, geometry as given bytes (for corrupt input).
  void RowWithRawGeometry(const std::string& wkb) {
    for (geoparquet::Column& c : batch_.columns) {
      c.valid.push_back(0);
      if (c.type == FieldType::kDouble) {
        c.doubles.push_back(0);
      } else if (c.type == FieldType::kString || c.type == FieldType::kBinary) {
        c.offsets.push_back(static_cast<std::int64_t>(c.bytes.size()));
      } else {
        c.ints.push_back(0);
      }
    }
    RawGeometry(wkb, true);
  }
  geoparquet::FeatureBatch Take() {
    geoparquet::FeatureBatch out = batch_;
    batch_.Clear();
    return out;
  }

 private:
  geoparquet::FeatureBatch batch_;
  std::int64_t next_index_ = 0;
};

struct Written {
  GeoParquetFileSummary summary;
  std::unique_ptr<parquet::FileReader> reader;
};

Result<Written> WriteFile(const std::string& path, SourceLayout layout,
                          std::vector<geoparquet::FeatureBatch> batches,
                          const GeoParquetOptions& options) {
  auto io = io::MakeLocalFileIO();
  GEOLAKE_ASSIGN_OR_RETURN(auto stream, io->OpenWrite(path, /*overwrite=*/true));
  auto writer = GeoParquetFileWriter::Open(stream.get(), std::move(layout), options);
  if (!writer.ok()) {
    stream->Abort();
    return writer.status();
  }
  for (auto& batch : batches) {
    Status st = (*writer)->Add(std::move(batch));
    if (!st.ok()) {
      stream->Abort();
      return st;
    }
  }
  auto summary = (*writer)->Finish();
  if (!summary.ok()) {
    stream->Abort();
    return summary.status();
  }
  GEOLAKE_RETURN_NOT_OK(stream->Close());
  Written w;
  w.summary = std::move(*summary);
  GEOLAKE_ASSIGN_OR_RETURN(std::shared_ptr<const io::RandomAccessFile> file, io->OpenRead(path));
  GEOLAKE_ASSIGN_OR_RETURN(w.reader, parquet::FileReader::Open(std::move(file)));
  return w;
}

std::string GeoValue(const parquet::FileReader& reader) {
  for (const auto& kv : reader.metadata().key_value_metadata) {
    if (kv.key == "geo") return kv.value.value_or("");
  }
  return "";
}

const std::vector<geoparquet::FieldDef> kAllTypes = {
    {"flag", FieldType::kBool},    {"id", FieldType::kInt64},    {"value", FieldType::kDouble},
    {"name", FieldType::kString},  {"blob", FieldType::kBinary}, {"day", FieldType::kDate},
    {"at", FieldType::kTimestamp},
};

TEST(GeoParquetSchemaTest, FieldIdsInIcebergFreshIdOrderAndTypesPerSourceType) {
  ASSERT_OK_AND_ASSIGN(parquet::Schema schema, GeoParquetSchema(kAllTypes, true));
  std::vector<std::string> paths;
  std::vector<std::int32_t> ids;
  for (const auto& leaf : schema.leaves()) {
    paths.push_back(leaf.dotted_path());
    ids.push_back(*leaf.field_id);
  }
  EXPECT_THAT(paths,
              ElementsAre("flag", "id", "value", "name", "blob", "day", "at", "geometry",
                          "bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax", "geo_hilbert"));
  // Top-level columns first (bbox 9, geo_hilbert 10), then the bbox children 11..14, as
  // Iceberg's AssignFreshIds numbers a table created from the same fields.
  EXPECT_THAT(ids, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 10));
  EXPECT_EQ(schema.fields()[8].field_id, 9);
  EXPECT_EQ(schema.fields()[8].repetition, parquet::Repetition::kOptional);

  const auto& leaves = schema.leaves();
  EXPECT_EQ(leaves[0].physical_type, PhysicalType::kBoolean);
  EXPECT_EQ(leaves[1].physical_type, PhysicalType::kInt64);
  EXPECT_EQ(leaves[2].physical_type, PhysicalType::kDouble);
  EXPECT_EQ(leaves[3].logical_type, LogicalType::String());
  EXPECT_EQ(leaves[4].physical_type, PhysicalType::kByteArray);
  EXPECT_FALSE(leaves[4].logical_type.has_value());
  EXPECT_EQ(leaves[5].physical_type, PhysicalType::kInt32);
  EXPECT_EQ(leaves[5].logical_type, LogicalType::Date());
  EXPECT_EQ(leaves[6].logical_type, LogicalType::Timestamp(true, parquet::TimeUnit::kMicros));
  EXPECT_EQ(leaves[7].physical_type, PhysicalType::kByteArray);
  EXPECT_EQ(leaves[8].repetition, parquet::Repetition::kRequired);
  EXPECT_EQ(leaves[8].max_definition_level, 1);
  EXPECT_EQ(leaves[12].physical_type, PhysicalType::kInt64);

  ASSERT_OK_AND_ASSIGN(parquet::Schema plain, GeoParquetSchema(kAllTypes, false));
  EXPECT_EQ(plain.num_leaves(), 12);
}

TEST(GeoParquetSchemaTest, RejectsFieldsNamedLikeAddedColumnsOrTwice) {
  EXPECT_THAT(GeoParquetSchema({{"bbox", FieldType::kString}}, true),
              IsErrorWith(ErrorCode::kInvalidArgument, "'bbox'"));
  EXPECT_THAT(GeoParquetSchema({{"geometry", FieldType::kBinary}}, false),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(GeoParquetSchema({{"geo_hilbert", FieldType::kInt64}}, true),
              IsError(ErrorCode::kInvalidArgument));
  // Without a sort key column of its own, a file may carry a table's geo_hilbert (and
  // geo_cell) as attributes: `query --format parquet --columns geo_cell,geo_hilbert`.
  ASSERT_OK_AND_ASSIGN(
      parquet::Schema carried,
      GeoParquetSchema({{"geo_cell", FieldType::kString}, {"geo_hilbert", FieldType::kInt64}},
                       false));
  EXPECT_EQ(carried.leaves()[1].path.front(), "geo_hilbert");
  EXPECT_THAT(GeoParquetSchema({{"a", FieldType::kInt64}, {"a", FieldType::kString}}, true),
              IsErrorWith(ErrorCode::kInvalidArgument, "twice"));
}

// A query's output of a table's geo_cell and geo_hilbert (unsorted, no sort key column of the
// file's own): written as plain attributes after which geometry and bbox follow.
TEST(GeoParquetFileWriterTest, WritesTheLayoutColumnsOfATableAsAttributes) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"geo_cell", FieldType::kString},
                                                    {"geo_hilbert", FieldType::kInt64}};
  BatchBuilder b(fields);
  b.Row({"03", "77"}, "POINT (-10 5)");
  b.Row({"12", "5"}, "POINT (10 -5)");
  GeoParquetOptions options;
  options.order = RowOrder::kNone;
  ASSERT_OK_AND_ASSIGN(
      Written w, WriteFile(dir.File("q.parquet"), {fields, "", "EPSG:4326"}, {b.Take()}, options));
  EXPECT_EQ(w.summary.rows, 2);
  std::vector<std::string> leaves;
  for (const auto& leaf : w.reader->schema().leaves()) leaves.push_back(leaf.dotted_path());
  EXPECT_THAT(leaves, ElementsAre("geo_cell", "geo_hilbert", "geometry", "bbox.xmin", "bbox.ymin",
                                  "bbox.xmax", "bbox.ymax"));
  // Hilbert-sorted files have a geo_hilbert of their own: a field of that name is refused.
  BatchBuilder sorted(fields);
  sorted.Row({"03", "77"}, "POINT (-10 5)");
  EXPECT_THAT(WriteFile(dir.File("s.parquet"), {fields, "", "EPSG:4326"}, {sorted.Take()}, {}),
              IsErrorWith(ErrorCode::kInvalidArgument, "geo_hilbert"));
}

TEST(CompressionTest, ParsesCodecsAndLevels) {
  ASSERT_OK_AND_ASSIGN(Compression z, ParseCompression("zstd"));
  EXPECT_EQ(z.codec, parquet::CompressionCodec::kZstd);
  ASSERT_OK_AND_ASSIGN(Compression z9, ParseCompression("zstd:9"));
  EXPECT_EQ(z9.options.zstd_level, 9);
  EXPECT_EQ(z9.ToString(), "zstd:9");
  ASSERT_OK_AND_ASSIGN(Compression g, ParseCompression("gzip:2"));
  EXPECT_EQ(g.codec, parquet::CompressionCodec::kGzip);
  EXPECT_EQ(g.options.gzip_level, 2);
  ASSERT_OK_AND_ASSIGN(Compression s, ParseCompression("snappy"));
  EXPECT_EQ(s.codec, parquet::CompressionCodec::kSnappy);
  ASSERT_OK_AND_ASSIGN(Compression n, ParseCompression("none"));
  EXPECT_EQ(n.codec, parquet::CompressionCodec::kUncompressed);
  EXPECT_EQ(n.ToString(), "none");

  for (const char* bad : {"", "lz4", "zstd:", "zstd:0", "zstd:23", "zstd:x", "zstd:3x", "gzip:10",
                          "snappy:1", "ZSTD"}) {
    EXPECT_THAT(ParseCompression(bad), IsError(ErrorCode::kInvalidArgument)) << bad;
  }
  EXPECT_THAT(ParseRowOrder("random"), IsErrorWith(ErrorCode::kInvalidArgument, "random"));
}

TEST(GeoParquetFileWriterTest, WritesEveryTypeAndNullsAndReadsBack) {
  TempDir dir;
  BatchBuilder b(kAllTypes);
  // 2024-05-01 is day 19844; 2024-05-01T12:30:00Z is 1714566600 s.
  b.Row({"1", "42", "2.5", "Zürich", "\x01\x02", "19844", "1714566600000000"}, "POINT (8.5 47.4)");
  b.Row({"", "", "", "", "", "", ""}, "");
  b.Row({"0", "-7", "-0.25", "", "", "0", "0"}, "POLYGON ((0 0, 2 0, 2 1, 0 1, 0 0))");
  GeoParquetOptions options;
  options.order = RowOrder::kNone;
  ASSERT_OK_AND_ASSIGN(Written w,
                       WriteFile(dir.File("t.parquet"), {kAllTypes, "", ""}, {b.Take()}, options));
  EXPECT_EQ(w.summary.rows, 3);
  EXPECT_EQ(w.summary.null_geometries, 1);
  EXPECT_EQ(w.summary.row_groups, 1);
  EXPECT_EQ(w.reader->num_rows(), 3);
  EXPECT_EQ(w.reader->schema().num_leaves(), 12);  // no geo_hilbert without Hilbert order

  ASSERT_OK_AND_ASSIGN(parquet::Batch batch, w.reader->ReadRowGroup(0));
  const auto& cols = batch.columns;
  EXPECT_THAT(cols[0].bool_values, ElementsAre(1, 0));
  EXPECT_THAT(cols[0].def_levels, ElementsAre(1, 0, 1));
  EXPECT_THAT(cols[1].int64_values, ElementsAre(42, -7));
  EXPECT_THAT(cols[2].double_values, ElementsAre(2.5, -0.25));
  ASSERT_EQ(cols[3].num_values(), 1);
  EXPECT_EQ(cols[3].bytes_at(0), "Zürich");
  EXPECT_EQ(cols[4].bytes_at(0), std::string("\x01\x02"));
  EXPECT_THAT(cols[5].int32_values, ElementsAre(19844, 0));
  EXPECT_THAT(cols[6].int64_values, ElementsAre(1714566600000000, 0));
  // Geometry: ISO WKB of the input; the null row is null.
  EXPECT_THAT(cols[7].def_levels, ElementsAre(1, 0, 1));
  EXPECT_EQ(cols[7].bytes_at(0), Wkb("POINT (8.5 47.4)"));
  // bbox: a null struct for the null geometry (definition level 0).
  EXPECT_THAT(cols[8].def_levels, ElementsAre(1, 0, 1));
  EXPECT_THAT(cols[8].double_values, ElementsAre(8.5, 0.0));    // xmin
  EXPECT_THAT(cols[9].double_values, ElementsAre(47.4, 0.0));   // ymin
  EXPECT_THAT(cols[10].double_values, ElementsAre(8.5, 2.0));   // xmax
  EXPECT_THAT(cols[11].double_values, ElementsAre(47.4, 1.0));  // ymax

  // Field ids survive the round trip.
  EXPECT_EQ(w.reader->schema().leaves()[11].field_id, 13);  // bbox.ymax
}

TEST(GeoParquetFileWriterTest, GeoMetadataHasExactTypesBboxCoveringAndDefaultCrs) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  BatchBuilder b(fields);
  b.Row({"1"}, "POINT (-10 5)");
  b.Row({"2"}, "MULTIPOLYGON (((0 0, 3 0, 3 4, 0 0)))");
  b.Row({"3"}, "POINT Z (1 2 3)");
  b.Row({"4"}, "");
  ASSERT_OK_AND_ASSIGN(
      Written w, WriteFile(dir.File("g.parquet"), {fields, "{}", "EPSG:4326"}, {b.Take()}, {}));
  ASSERT_OK_AND_ASSIGN(auto geo, geoparquet::GeoMetadata::Parse(GeoValue(*w.reader)));
  EXPECT_EQ(geo.version, "1.1.0");
  EXPECT_EQ(geo.primary_column, "geometry");
  const auto* column = geo.FindColumn("geometry");
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(column->encoding, "WKB");
  EXPECT_THAT(column->geometry_types, ElementsAre("Point", "Point Z", "MultiPolygon"));
  EXPECT_THAT(column->bbox, ElementsAre(-10, 0, 3, 5));
  EXPECT_EQ(column->crs_mode, geoparquet::CrsMode::kOmitted);
  ASSERT_TRUE(column->covering.has_value());
  EXPECT_EQ(*column->covering, geoparquet::BboxCovering::ForColumn("bbox"));
  EXPECT_EQ(w.summary.geo_json, GeoValue(*w.reader));
  EXPECT_THAT(w.summary.geometry_types, ElementsAre("Point", "Point Z", "MultiPolygon"));
}

TEST(GeoParquetFileWriterTest, CrsIsProjJsonForOtherCrsAndNullWhenUnknown) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  ASSERT_OK_AND_ASSIGN(geo::Crs mercator, geo::Crs::Make("EPSG:3857"));
  {
    BatchBuilder b(fields);
    b.Row({"1"}, "POINT (1000 2000)");
    ASSERT_OK_AND_ASSIGN(
        Written w, WriteFile(dir.File("m.parquet"), {fields, mercator.projjson(), "EPSG:3857"},
                             {b.Take()}, {}));
    ASSERT_OK_AND_ASSIGN(auto geo, geoparquet::GeoMetadata::Parse(GeoValue(*w.reader)));
    const auto* column = geo.FindColumn("geometry");
    ASSERT_NE(column, nullptr);
    EXPECT_EQ(column->crs_mode, geoparquet::CrsMode::kProjJson);
    EXPECT_THAT(column->crs_projjson, ::testing::HasSubstr("3857"));
    EXPECT_FALSE(column->IsDefaultCrs());
  }
  {
    BatchBuilder b(fields);
    b.Row({"1"}, "POINT (1 2)");
    ASSERT_OK_AND_ASSIGN(Written w,
                         WriteFile(dir.File("u.parquet"), {fields, "", ""}, {b.Take()}, {}));
    ASSERT_OK_AND_ASSIGN(auto geo, geoparquet::GeoMetadata::Parse(GeoValue(*w.reader)));
    EXPECT_EQ(geo.FindColumn("geometry")->crs_mode, geoparquet::CrsMode::kNull);
  }
}

TEST(GeoParquetFileWriterTest, HilbertOrderSortsAcrossBatchesWithNullsLast) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  // A 20 x 20 grid of points in row-major order, spread over three batches, plus null and
  // empty geometries that must come last.
  std::vector<geoparquet::FeatureBatch> batches;
  BatchBuilder b(fields);
  std::int64_t id = 0;
  for (int y = 0; y < 20; ++y) {
    for (int x = 0; x < 20; ++x) {
      b.Row({std::to_string(id++)}, "POINT (" + std::to_string(x) + " " + std::to_string(y) + ")");
      if (id % 150 == 0) batches.push_back(b.Take());
    }
  }
  b.Row({std::to_string(id++)}, "");
  b.Row({std::to_string(id++)}, "POINT EMPTY");
  batches.push_back(b.Take());
  GeoParquetOptions options;
  options.row_group_rows = 100;
  ASSERT_OK_AND_ASSIGN(
      Written w, WriteFile(dir.File("h.parquet"), {fields, "", ""}, std::move(batches), options));
  EXPECT_EQ(w.summary.rows, 402);
  EXPECT_EQ(w.summary.row_groups, 5);
  EXPECT_EQ(w.summary.null_geometries, 1);
  EXPECT_EQ(w.summary.empty_geometries, 1);
  ASSERT_EQ(w.reader->num_row_groups(), 5);
  ASSERT_EQ(w.reader->schema().leaves().back().dotted_path(), "geo_hilbert");
  ASSERT_EQ(w.reader->row_group(0).sorting_columns.size(), 1u);
  EXPECT_EQ(w.reader->row_group(0).sorting_columns[0].column_idx, 6);

  ASSERT_OK_AND_ASSIGN(geo::HilbertCurve curve,
                       geo::HilbertCurve::Make(geo::Envelope{0, 0, 19, 19}, 16));
  std::int64_t previous = -1;
  std::int64_t rows_seen = 0;
  std::vector<std::int64_t> ids;
  for (int rg = 0; rg < w.reader->num_row_groups(); ++rg) {
    ASSERT_OK_AND_ASSIGN(parquet::Batch batch, w.reader->ReadRowGroup(rg));
    const parquet::ColumnData& idc = batch.columns[0];
    const parquet::ColumnData& xmin = batch.columns[2];
    const parquet::ColumnData& ymin = batch.columns[3];
    const parquet::ColumnData& key = batch.columns[6];
    for (std::size_t i = 0; i < key.int64_values.size(); ++i) {
      EXPECT_GE(key.int64_values[i], previous);
      previous = key.int64_values[i];
      // The key is the Hilbert index of the point over the file's extent.
      EXPECT_EQ(static_cast<std::uint64_t>(key.int64_values[i]),
                curve.Index(xmin.double_values[i], ymin.double_values[i]));
    }
    ids.insert(ids.end(), idc.int64_values.begin(), idc.int64_values.end());
    rows_seen += batch.num_rows;
    if (rg == w.reader->num_row_groups() - 1) {
      // The last two rows: null then empty geometry (source order), both without a key.
      EXPECT_THAT(std::vector<std::int16_t>(key.def_levels.end() - 2, key.def_levels.end()),
                  ElementsAre(0, 0));
      EXPECT_THAT(std::vector<std::int64_t>(ids.end() - 2, ids.end()), ElementsAre(400, 401));
    }
  }
  EXPECT_EQ(rows_seen, 402);
  // The curve starts at the origin corner: point (0, 0), id 0, comes first.
  EXPECT_EQ(ids.front(), 0);
  std::vector<std::int64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 402; ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i);
}

TEST(GeoParquetFileWriterTest, AsGivenKeepsRowOrderAndWritesEachRowsKeyOverTheExtent) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  BatchBuilder b(fields);
  // Deliberately not in Hilbert order; a null geometry in the middle.
  b.Row({"0"}, "POINT (9 9)");
  b.Row({"1"}, "POINT (0 0)");
  b.Row({"2"}, "");
  b.Row({"3"}, "POINT (5 1)");
  GeoParquetOptions options;
  options.order = RowOrder::kAsGiven;
  options.hilbert_extent = geo::Envelope{0, 0, 10, 10};
  ASSERT_OK_AND_ASSIGN(Written w,
                       WriteFile(dir.File("g.parquet"), {fields, "", ""}, {b.Take()}, options));
  ASSERT_EQ(w.reader->schema().leaves().back().dotted_path(), "geo_hilbert");
  // Not declared sorted: the rows are in the caller's order.
  EXPECT_TRUE(w.reader->row_group(0).sorting_columns.empty());
  ASSERT_OK_AND_ASSIGN(parquet::Batch batch, w.reader->ReadRowGroup(0));
  EXPECT_THAT(batch.columns[0].int64_values, ElementsAre(0, 1, 2, 3));
  ASSERT_OK_AND_ASSIGN(geo::HilbertCurve curve,
                       geo::HilbertCurve::Make(geo::Envelope{0, 0, 10, 10}, 16));
  EXPECT_THAT(batch.columns[6].def_levels, ElementsAre(1, 1, 0, 1));
  EXPECT_THAT(batch.columns[6].int64_values,
              ElementsAre(static_cast<std::int64_t>(curve.Index(9, 9)),
                          static_cast<std::int64_t>(curve.Index(0, 0)),
                          static_cast<std::int64_t>(curve.Index(5, 1))));

  // Without an extent the key of a streamed row is unknown.
  options.hilbert_extent.reset();
  EXPECT_THAT(WriteFile(dir.File("x.parquet"), {fields, "", ""}, {}, options),
              IsErrorWith(ErrorCode::kInvalidArgument, "hilbert extent"));
}

TEST(GeoParquetFileWriterTest, AsGivenSortedInputIsDeclaredAndChecked) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  ASSERT_OK_AND_ASSIGN(geo::HilbertCurve curve,
                       geo::HilbertCurve::Make(geo::Envelope{0, 0, 10, 10}, 16));
  // Points in ascending key order across two batches, a null geometry last.
  std::vector<std::pair<std::uint64_t, std::string>> points;
  for (int x = 0; x < 10; ++x) {
    for (int y = 0; y < 10; ++y) {
      points.emplace_back(curve.Index(x, y),
                          "POINT (" + std::to_string(x) + " " + std::to_string(y) + ")");
    }
  }
  std::sort(points.begin(), points.end());
  BatchBuilder b(fields);
  std::vector<geoparquet::FeatureBatch> batches;
  for (std::size_t i = 0; i < points.size(); ++i) {
    b.Row({std::to_string(i)}, points[i].second);
    if (i == 49) batches.push_back(b.Take());
  }
  b.Row({"100"}, "");
  batches.push_back(b.Take());
  GeoParquetOptions options;
  options.order = RowOrder::kAsGiven;
  options.hilbert_sorted_input = true;
  options.hilbert_extent = geo::Envelope{0, 0, 10, 10};
  ASSERT_OK_AND_ASSIGN(
      Written w, WriteFile(dir.File("s.parquet"), {fields, "", ""}, std::move(batches), options));
  ASSERT_EQ(w.reader->row_group(0).sorting_columns.size(), 1u);
  EXPECT_EQ(w.reader->row_group(0).sorting_columns[0].column_idx, 6);
  EXPECT_EQ(w.summary.rows, 101);

  // A key below its predecessor (here: after the null, which sorts last) is refused.
  BatchBuilder bad(fields);
  bad.Row({"0"}, "POINT (1 1)");
  bad.Row({"1"}, "");
  bad.Row({"2"}, "POINT (2 2)");
  EXPECT_THAT(WriteFile(dir.File("bad.parquet"), {fields, "", ""}, {bad.Take()}, options),
              IsErrorWith(ErrorCode::kInvalidArgument, "not in Hilbert order: row 2"));
}

TEST(GeoParquetFileWriterTest, RejectsCorruptWkbNamingTheFeature) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  BatchBuilder b(fields);
  b.Row({"1"}, "POINT (1 2)");
  b.RowWithRawGeometry(std::string("\x01\x03\x00\x00\x00\xff\xff", 7));
  EXPECT_THAT(WriteFile(dir.File("bad.parquet"), {fields, "", ""}, {b.Take()}, {}),
              IsErrorWith(ErrorCode::kCorruptData, "feature 1"));
}

TEST(GeoParquetFileWriterTest, RejectsBatchesThatDoNotMatchTheLayout) {
  TempDir dir;
  BatchBuilder b({{"id", FieldType::kString}});
  b.Row({"x"}, "POINT (1 2)");
  EXPECT_THAT(
      WriteFile(dir.File("m.parquet"), {{{"id", FieldType::kInt64}}, "", ""}, {b.Take()}, {}),
      IsErrorWith(ErrorCode::kInvalidArgument, "'id'"));
  GeoParquetOptions zero;
  zero.row_group_rows = 0;
  EXPECT_THAT(WriteFile(dir.File("z.parquet"), {{}, "", ""}, {}, zero),
              IsError(ErrorCode::kInvalidArgument));
}

TEST(GeoParquetFileWriterTest, CompressionOptionReachesEveryChunk) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  for (const char* text : {"snappy", "gzip", "none", "zstd:15"}) {
    BatchBuilder b(fields);
    for (int i = 0; i < 50; ++i) b.Row({std::to_string(i)}, "POINT (1 2)");
    GeoParquetOptions options;
    ASSERT_OK_AND_ASSIGN(options.compression, ParseCompression(text));
    ASSERT_OK_AND_ASSIGN(Written w,
                         WriteFile(dir.File("c.parquet"), {fields, "", ""}, {b.Take()}, options));
    for (const auto& chunk : w.reader->row_group(0).columns) {
      EXPECT_EQ(chunk.meta_data->codec, options.compression.codec) << text;
    }
  }
}

TEST(GeoParquetFileWriterTest, GeometryLogicalTypeOption) {
  TempDir dir;
  const std::vector<geoparquet::FieldDef> fields = {{"id", FieldType::kInt64}};
  BatchBuilder b(fields);
  b.Row({"1"}, "POINT (1 2)");
  GeoParquetOptions options;
  options.geometry_logical_type = true;
  ASSERT_OK_AND_ASSIGN(Written w, WriteFile(dir.File("l.parquet"), {fields, "{}", "EPSG:4326"},
                                            {b.Take()}, options));
  const auto& leaf = w.reader->schema().leaves()[1];
  ASSERT_TRUE(leaf.logical_type.has_value());
  EXPECT_EQ(leaf.logical_type->kind, LogicalType::Kind::kGeometry);
  EXPECT_FALSE(leaf.logical_type->crs.has_value());  // OGC:CRS84 default
}

}  // namespace
}  // namespace geolake::geoparquet
