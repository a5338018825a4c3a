#include "geolake/sources/geoparquet_source.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/io/file_io.h"
#include "geolake/sources/discover.h"
#include "geolake/sources/unit_reader.h"
#include "geolake/testing/testing.h"

namespace geolake::sources {
namespace {

using geoparquet::FeatureBatch;
using geoparquet::FieldType;

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// Files written by DuckDB (a third-party GeoParquet writer), once for the whole suite.
class GeoParquetSourceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("geolake_gpq_source_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string oracles = ::geolake::testing::OraclesDir();
    if (::geolake::testing::MissingOracle("node_modules/@duckdb/node-api")) return;
    const std::string d = dir_.string();
    // typed: 10 rows, every attribute type, a null geometry every 5th row.
    // covering: DuckDB's WKB BLOB with "geo" and a bbox struct; v2: GEOMETRY logical type and
    // no "geo" key; plain: a WKB BLOB without any geo hint (not GeoParquet).
    const std::string script = R"(
import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const dir = process.argv[2];
await con.run(`COPY (select i::bigint as id, 'n' || i as name, (i % 7)::integer as category,
  DATE '2024-02-29' + i::integer as d, TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i) as ts,
  (i * 0.5)::float as f, (i / 4)::decimal(10,2) as dec, (i % 2 = 0) as b,
  case when i % 5 = 0 then null else ('POINT(' || i || ' ' || (i * 2) || ')')::GEOMETRY end as geom
  from range(10) t(i)) TO '${dir}/typed.parquet' (FORMAT parquet)`);
const base = `select i::bigint as id, ('POINT(' || i || ' 1)')::GEOMETRY as g, i::double as x
  from range(5000) t(i)`;
await con.run(`COPY (select id, ST_AsWKB(g) as geometry, {'xmin': x, 'ymin': 1.0, 'xmax': x,
  'ymax': 1.0} as bbox from (${base})) TO '${dir}/covering.parquet' (FORMAT parquet,
  ROW_GROUP_SIZE 1000, KV_METADATA {geo: '{"version":"1.1.0","primary_column":"geometry",
  "columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"],"covering":{"bbox":{
  "xmin":["bbox","xmin"],"ymin":["bbox","ymin"],"xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}}'})`);
await con.run(`COPY (select id, g as geom from (${base})) TO '${dir}/v2.parquet'
  (FORMAT parquet, GEOPARQUET_VERSION 'NONE')`);
await con.run(`COPY (select id, ST_AsWKB(g) as geometry from (${base})) TO '${dir}/plain.parquet'
  (FORMAT parquet)`);
await con.run(`COPY (select id, g as geometry, 'q' || (id % 4) as geo_cell, id * 7 as geo_hilbert
  from (${base})) TO '${dir}/layout.parquet' (FORMAT parquet)`);
await con.run(`COPY (select id, g as geometry, (id % 4)::integer as geo_cell from (${base}))
  TO '${dir}/user_cell.parquet' (FORMAT parquet)`);
)";
    // ESM resolves packages from the script's folder: a hidden folder (skipped by the folder
    // walk below) holds the script and a link to the oracles' node_modules.
    const fs::path gen = dir_ / ".gen";
    fs::create_directories(gen);
    fs::create_directory_symlink(oracles + "/node_modules", gen / "node_modules");
    std::ofstream(gen / "gen.mjs") << script;
    const std::string cmd = "node '" + (gen / "gen.mjs").string() + "' '" + d + "' >'" +
                            (gen / "gen.log").string() + "' 2>&1";
    generated_ = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    if (!std::getenv("KEEP")) fs::remove_all(dir_);
  }

  void SetUp() override {
    if (auto why = ::geolake::testing::MissingOracle("node_modules/@duckdb/node-api")) {
      GTEST_SKIP() << *why;
    }
    ASSERT_TRUE(generated_) << "the DuckDB oracle failed to write the sample files";
  }

  static std::string Path(const std::string& name) { return (dir_ / name).string(); }

  static inline fs::path dir_;
  static inline bool generated_ = false;
};

std::vector<std::uint8_t> PointWkb(double x, double y) {
  std::vector<std::uint8_t> wkb = {1, 1, 0, 0, 0};
  wkb.resize(21);
  std::memcpy(wkb.data() + 5, &x, 8);
  std::memcpy(wkb.data() + 13, &y, 8);
  return wkb;
}

TEST_F(GeoParquetSourceTest, ReadsDuckDbTypesAndWkb) {
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(Path("typed.parquet")));
  EXPECT_EQ(source->num_rows(), 10);
  EXPECT_EQ(source->crs_authority(), "OGC:CRS84");
  const std::vector<std::pair<std::string, FieldType>> expected_fields = {
      {"id", FieldType::kInt64},   {"name", FieldType::kString},  {"category", FieldType::kInt64},
      {"d", FieldType::kDate},     {"ts", FieldType::kTimestamp}, {"f", FieldType::kDouble},
      {"dec", FieldType::kDouble}, {"b", FieldType::kBool}};
  ASSERT_EQ(source->fields().size(), expected_fields.size());
  for (std::size_t i = 0; i < expected_fields.size(); ++i) {
    EXPECT_EQ(source->fields()[i].name, expected_fields[i].first);
    EXPECT_EQ(source->fields()[i].type, expected_fields[i].second) << expected_fields[i].first;
  }
  FeatureBatch batch;
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> index;
  while (true) {
    ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(4, &batch));
    if (rows == 0) break;
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto row = static_cast<std::size_t>(r);
      const std::int64_t i = batch.columns[0].ints[row];
      ids.push_back(i);
      index.push_back(batch.feature_index[row]);
      EXPECT_EQ(batch.columns[1].StringAt(row), "n" + std::to_string(i));
      EXPECT_EQ(batch.columns[2].ints[row], i % 7);
      EXPECT_EQ(batch.columns[3].ints[row], 19782 + i);  // 2024-02-29 is day 19782
      EXPECT_EQ(batch.columns[4].ints[row], (19723 * 86400LL + i) * 1000000);  // 2024-01-01
      EXPECT_EQ(batch.columns[5].doubles[row], i * 0.5);
      EXPECT_DOUBLE_EQ(batch.columns[6].doubles[row], static_cast<double>(i) / 4);
      EXPECT_EQ(batch.columns[7].ints[row], i % 2 == 0 ? 1 : 0);
      if (i % 5 == 0) {
        EXPECT_EQ(batch.geometry_valid[row], 0);
        EXPECT_TRUE(batch.GeometryAt(row).empty());
      } else {
        EXPECT_EQ(batch.geometry_valid[row], 1);
        const auto wkb = batch.GeometryAt(row);
        EXPECT_EQ(std::vector<std::uint8_t>(wkb.begin(), wkb.end()),
                  PointWkb(static_cast<double>(i), 2.0 * static_cast<double>(i)));
      }
    }
  }
  std::vector<std::int64_t> expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(index, expected);

  // Seek into the middle of a row group.
  ASSERT_OK(source->Seek(4));
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(3, &batch));
  ASSERT_EQ(rows, 3);
  EXPECT_EQ(batch.feature_index, (std::vector<std::int64_t>{4, 5, 6}));
  EXPECT_EQ(batch.columns[0].ints, (std::vector<std::int64_t>{4, 5, 6}));
  EXPECT_EQ(batch.columns[1].StringAt(2), "n6");
  ASSERT_OK(source->Seek(10));
  ASSERT_OK_AND_ASSIGN(rows, source->ReadBatch(3, &batch));
  EXPECT_EQ(rows, 0);
}

TEST_F(GeoParquetSourceTest, DiscoverCutsWholeRowGroups) {
  // DuckDB writes row groups in multiples of its 2048-row vectors: 5000 rows come as
  // 2048 + 2048 + 904, whatever ROW_GROUP_SIZE asks for.
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(Path("covering.parquet")));
  ASSERT_EQ(source->num_row_groups(), 3);
  ASSERT_EQ(source->row_group_rows(0), 2048);
  DiscoverOptions options;
  options.unit_rows = 3000;  // two row groups reach it: units {0, 1} and {2}
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({Path("covering.parquet")}, options));
  ASSERT_EQ(sources.size(), 1u);
  const DiscoveredSource& s = sources[0];
  EXPECT_EQ(s.driver, "GeoParquet");
  EXPECT_EQ(s.feature_count, 5000);
  EXPECT_EQ(s.crs_authority, "OGC:CRS84");
  ASSERT_EQ(s.units.size(), 2u);
  EXPECT_EQ(s.units[0].first_row, 0);
  EXPECT_EQ(s.units[0].row_count, 4096);
  EXPECT_EQ(s.units[1].first_row, 4096);
  EXPECT_EQ(s.units[1].row_count, -1);
  options.unit_rows = 1;  // one unit per row group, never less
  ASSERT_OK_AND_ASSIGN(sources, DiscoverSources({Path("covering.parquet")}, options));
  ASSERT_EQ(sources[0].units.size(), 3u);
  std::vector<std::int64_t> index;
  for (const SourceUnit& unit : sources[0].units) {
    ASSERT_OK_AND_ASSIGN(auto reader, UnitReader::Open(unit));
    FeatureBatch batch;
    while (true) {
      ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(1000, &batch));
      if (rows == 0) break;
      index.insert(index.end(), batch.feature_index.begin(), batch.feature_index.end());
      EXPECT_EQ(batch.columns[0].ints, batch.feature_index);
    }
  }
  std::vector<std::int64_t> expected(5000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(index, expected);
}

TEST_F(GeoParquetSourceTest, BatchesStopAtTheWkbByteLimitAcrossRowGroups) {
  // 21-byte points, row groups of 2048 rows: a 210-byte limit gives batches of 10 rows, the
  // attribute columns cut at the same row, and the batch spanning a row-group boundary too.
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(Path("covering.parquet")));
  ASSERT_OK(source->Seek(2040));
  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(1000, &batch, 210));
  ASSERT_EQ(rows, 10);
  EXPECT_EQ(batch.wkb.size(), 210u);
  EXPECT_EQ(batch.columns[0].ints, batch.feature_index);
  EXPECT_EQ(batch.feature_index.back(), 2049);
  std::int64_t total = 10;
  std::int64_t next = 2050;
  while (true) {
    ASSERT_OK_AND_ASSIGN(rows, source->ReadBatch(1000, &batch, 210));
    if (rows == 0) break;
    EXPECT_LE(rows, 10);
    EXPECT_EQ(batch.columns[0].ints, batch.feature_index);
    EXPECT_EQ(batch.feature_index.front(), next);
    next += rows;
    total += rows;
  }
  EXPECT_EQ(total, 5000 - 2040);
}

TEST_F(GeoParquetSourceTest, CoveringStructIsNotAnAttribute) {
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(Path("covering.parquet")));
  ASSERT_EQ(source->fields().size(), 1u);
  EXPECT_EQ(source->fields()[0].name, "id");
  ASSERT_OK(source->Seek(4321));
  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(10, &batch));
  ASSERT_EQ(rows, 10);
  EXPECT_EQ(batch.columns[0].ints[0], 4321);
  const auto wkb = batch.GeometryAt(9);
  EXPECT_EQ(std::vector<std::uint8_t>(wkb.begin(), wkb.end()), PointWkb(4330, 1));
}

TEST_F(GeoParquetSourceTest, GeometryLogicalTypeWithoutGeoMetadata) {
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(Path("v2.parquet")));
  EXPECT_EQ(source->num_rows(), 5000);
  FeatureBatch batch;
  std::int64_t total = 0;
  std::vector<std::uint8_t> last_wkb;
  while (true) {
    ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(1024, &batch));
    if (rows == 0) break;
    total += rows;
    const auto wkb = batch.GeometryAt(static_cast<std::size_t>(rows - 1));
    last_wkb.assign(wkb.begin(), wkb.end());
  }
  EXPECT_EQ(total, 5000);
  EXPECT_EQ(last_wkb, PointWkb(4999, 1));
}

TEST_F(GeoParquetSourceTest, RefusesWhatIsNotGeoParquet) {
  EXPECT_THAT(GeoParquetSource::Open(Path("plain.parquet")), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(DiscoverSources({Path("plain.parquet")}, {}), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(GeoParquetSource::Open(Path("missing.parquet")), IsError(ErrorCode::kNotFound));
  std::ofstream(Path("broken.parquet"), std::ios::binary) << "PAR1 not really parquet PAR1";
  EXPECT_THAT(GeoParquetSource::Open(Path("broken.parquet")), IsError(ErrorCode::kCorruptData));
  // A damaged file in a folder walk stops the walk naming it: skipping it would drop its rows.
  EXPECT_THAT(DiscoverSources({dir_.string()}, {}),
              IsErrorWith(ErrorCode::kCorruptData, "broken.parquet"));
  fs::remove(Path("broken.parquet"));
  // In a folder walk, a Parquet file without geometry is skipped, the others are found.
  ASSERT_OK_AND_ASSIGN(auto sources, DiscoverSources({dir_.string()}, {}));
  std::vector<std::string> names;
  for (const auto& s : sources) names.push_back(fs::path(s.path).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"covering.parquet", "layout.parquet", "typed.parquet",
                                             "user_cell.parquet", "v2.parquet"}));
}

// Another writer's file with the layout's geo_cell (text) and geo_hilbert (int64): derived
// columns, not read as attributes, so a table made from it computes its own. A geo_cell of
// another type is the user's column and stays an attribute (the layout then refuses it).
TEST_F(GeoParquetSourceTest, LayoutColumnsAreNotAttributesUnlessOfAnotherType) {
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(Path("layout.parquet")));
  ASSERT_EQ(source->fields().size(), 1u);
  EXPECT_EQ(source->fields()[0].name, "id");
  FeatureBatch batch;
  ASSERT_OK_AND_ASSIGN(std::int64_t rows, source->ReadBatch(3, &batch));
  ASSERT_EQ(rows, 3);
  EXPECT_EQ(batch.columns.size(), 1u);
  EXPECT_EQ(batch.columns[0].ints, (std::vector<std::int64_t>{0, 1, 2}));
  ASSERT_OK_AND_ASSIGN(SourceInfo info, DescribeLayer(Path("layout.parquet")));
  ASSERT_EQ(info.fields.size(), 1u);
  EXPECT_EQ(info.fields[0].name, "id");

  ASSERT_OK_AND_ASSIGN(auto user, GeoParquetSource::Open(Path("user_cell.parquet")));
  ASSERT_EQ(user->fields().size(), 2u);
  EXPECT_EQ(user->fields()[1].name, "geo_cell");
  EXPECT_EQ(user->fields()[1].type, FieldType::kInt64);
}

TEST_F(GeoParquetSourceTest, DescribeLayerReadsParquetWithOurReader) {
  ASSERT_OK_AND_ASSIGN(SourceInfo info, DescribeLayer(Path("typed.parquet")));
  EXPECT_EQ(info.driver, kGeoParquetDriver);
  EXPECT_EQ(info.feature_count, 10);
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(Path("typed.parquet")));
  ASSERT_EQ(info.fields.size(), source->fields().size());
  for (std::size_t i = 0; i < info.fields.size(); ++i) {
    EXPECT_EQ(info.fields[i].name, source->fields()[i].name);
    EXPECT_EQ(info.fields[i].type, source->fields()[i].type);
  }
  EXPECT_EQ(info.crs_authority, source->crs_authority());
  // One unnamed layer; what is not GeoParquet is refused as the reader refuses it.
  EXPECT_THAT(DescribeLayer(Path("typed.parquet"), "typed"), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(DescribeLayer(Path("plain.parquet")), IsError(ErrorCode::kInvalidArgument));
}

// geolake's own writer: the geo_hilbert column it adds is not an attribute of the file.
TEST(GeoParquetSourceOwnFileTest, HilbertColumnOfOurWriterIsNotAnAttribute) {
  const fs::path dir =
      fs::temp_directory_path() / ("geolake_gpq_own_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "own.parquet").string();
  geoparquet::FeatureBatch batch;
  batch.fields = {{"name", FieldType::kString}};
  batch.columns.assign(1, geoparquet::Column{});
  batch.columns[0].type = FieldType::kString;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "p" + std::to_string(i);
    batch.columns[0].valid.push_back(1);
    batch.columns[0].bytes += name;
    batch.columns[0].offsets.push_back(static_cast<std::int64_t>(batch.columns[0].bytes.size()));
    const std::vector<std::uint8_t> wkb = PointWkb(i, -i);
    batch.wkb.append(wkb.begin(), wkb.end());
    batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
    batch.geometry_valid.push_back(1);
    batch.feature_index.push_back(i);
  }
  {
    auto io = io::MakeLocalFileIO();
    ASSERT_OK_AND_ASSIGN(auto stream, io->OpenWrite(path, /*overwrite=*/true));
    geoparquet::SourceLayout layout;
    layout.fields = batch.fields;
    ASSERT_OK_AND_ASSIGN(auto writer, geoparquet::GeoParquetFileWriter::Open(stream.get(), layout));
    ASSERT_OK(writer->Add(std::move(batch)));
    ASSERT_OK(writer->Finish().status());
    ASSERT_OK(stream->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto source, GeoParquetSource::Open(path));
  ASSERT_EQ(source->fields().size(), 1u);
  EXPECT_EQ(source->fields()[0].name, "name");
  ASSERT_OK_AND_ASSIGN(SourceInfo info, DescribeLayer(path));
  EXPECT_EQ(info.driver, kGeoParquetDriver);
  EXPECT_EQ(info.feature_count, 5);
  ASSERT_EQ(info.fields.size(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace geolake::sources
