#include "geolake/pipeline/ingest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "geolake/geo/wkb.h"
#include "geolake/layout/table_layout.h"
#include "geolake/pipeline/commit_coordinator.h"
#include "geolake/pipeline/run_journal.h"
#include "geolake/sources/discover.h"
#include "geolake/sources/geoparquet_source.h"
#include "geolake/table/location.h"
#include "geolake/table/scan.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::pipeline {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("geolake_ingest_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    warehouse_ = (dir_ / "wh").string();
    catalog_ = table::MakeInMemoryCatalog();
    io_ = io::MakeLocalFileIO();
    id_ = *table::TableIdentifier::Parse("test.places");
    executor_ = *ThreadPool::Make(2);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A GeoJSONSeq of `n` features: points on a grid over the world, every 10th a polygon, a
  // bowtie (invalid) at index 7, a null geometry at index 3 (when `with_bad`).
  std::string WriteSource(const std::string& name, int n, bool with_bad,
                          const std::string& name_type = "string") {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (int i = 0; i < n; ++i) {
      const double x = -170.0 + (i * 7) % 340;
      const double y = -80.0 + (i * 3) % 160;
      nlohmann::json geometry;
      if (with_bad && i == 3) {
        geometry = nullptr;
      } else if (with_bad && i == 7) {
        geometry = {{"type", "Polygon"},
                    {"coordinates", {{{0, 0}, {1, 1}, {1, 0}, {0, 1}, {0, 0}}}}};
      } else if (i % 10 == 0) {
        geometry = {{"type", "Polygon"},
                    {"coordinates", {{{x, y}, {x + 1, y}, {x + 1, y + 1}, {x, y + 1}, {x, y}}}}};
      } else {
        geometry = {{"type", "Point"}, {"coordinates", {x, y}}};
      }
      nlohmann::json properties = {{"id", i}, {"score", i * 0.5}};
      if (name_type == "string") {
        properties["name"] = "place " + std::to_string(i);
      } else {
        properties["name"] = i;
      }
      // "type" first: GDAL tells GeoJSONSeq from GeoJSON by how a line starts.
      out << R"({"type":"Feature","properties":)" << properties.dump() << R"(,"geometry":)"
          << geometry.dump() << "}\n";
    }
    return path;
  }

  // A GeoJSONSeq of `n` self-intersecting 31-point stars (make-valid work) with id = index.
  std::string WriteStars(const std::string& name, int n) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (int i = 0; i < n; ++i) {
      const double cx = -170.0 + (i * 7) % 340;
      const double cy = -80.0 + (i * 3) % 160;
      nlohmann::json ring = nlohmann::json::array();
      for (int v = 0; v <= 31; ++v) {
        const double a = 2 * M_PI * ((v * 15) % 31) / 31.0;  // step 15 of 31: a star
        ring.push_back({cx + std::cos(a), cy + std::sin(a)});
      }
      const nlohmann::json geometry = {{"type", "Polygon"}, {"coordinates", {ring}}};
      out << R"({"type":"Feature","properties":{"id":)" << i << R"(},"geometry":)"
          << geometry.dump() << "}\n";
    }
    return path;
  }

  IngestOptions Options() const {
    IngestOptions options;
    options.warehouse = warehouse_;
    options.create = true;
    options.executor = executor_.get();  // two workers
    options.memory_bytes = 64 << 20;
    options.read_batch_rows = 100;
    // Four cells: every (unit, cell) pair is one fsynced file, so few cells keep this fast.
    options.layout.partition = layout::PartitionScheme{layout::PartitionKind::kQuadkey, 1};
    return options;
  }

  static std::string LocalPath(std::string path) {
    if (path.rfind("file://", 0) == 0) path = path.substr(7);
    return path;
  }

  // The first attribute (the id) of every row of the table's current snapshot, sorted.
  std::vector<std::int64_t> TableIds(const table::TableIdentifier& id) {
    std::vector<std::int64_t> ids;
    auto loaded = table::LoadTable(*catalog_, *io_, id);
    EXPECT_TRUE(loaded.ok());
    if (!loaded.ok()) return ids;
    auto plan = table::PlanScan(*io_, loaded->metadata);
    EXPECT_TRUE(plan.ok());
    if (!plan.ok()) return ids;
    for (const table::ManifestEntry& entry : plan->data_files) {
      auto reader = sources::GeoParquetSource::Open(LocalPath(entry.data_file.file_path));
      EXPECT_TRUE(reader.ok());
      if (!reader.ok()) return ids;
      geoparquet::FeatureBatch batch;
      while (true) {
        auto rows = (*reader)->ReadBatch(4096, &batch);
        EXPECT_TRUE(rows.ok());
        if (!rows.ok() || *rows == 0) break;
        ids.insert(ids.end(), batch.columns[0].ints.begin(), batch.columns[0].ints.end());
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  std::int64_t TableRows() {
    auto loaded = table::LoadTable(*catalog_, *io_, id_);
    EXPECT_TRUE(loaded.ok());
    auto plan = table::PlanScan(*io_, loaded->metadata);
    EXPECT_TRUE(plan.ok());
    return plan->DataRecordCount();
  }

  fs::path dir_;
  std::string warehouse_;
  std::unique_ptr<table::Catalog> catalog_;
  std::unique_ptr<io::FileIO> io_;
  table::TableIdentifier id_;
  std::unique_ptr<ThreadPool> executor_;
};

TEST_F(IngestTest, CommitsEveryRowOnceAndRejectsWithReasons) {
  const std::string source = WriteSource("a.geojsonl", 500, /*with_bad=*/true);
  IngestOptions options = Options();
  options.on_invalid = InvalidPolicy::kReject;
  IngestSummary summary;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {source}, options, &summary));
  EXPECT_TRUE(summary.table_created);
  EXPECT_EQ(summary.rows_read, 500);
  EXPECT_EQ(summary.rows_rejected, 2);  // the null and the bowtie
  EXPECT_EQ(summary.rows_committed, 498);
  EXPECT_EQ(TableRows(), 498);
  EXPECT_EQ(summary.files_committed, summary.files_written);

  // The rejects name source, feature index and reason.
  std::ifstream rejects(summary.run_dir + "/rejects.geojsonseq");
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(rejects, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  std::set<std::int64_t> indices;
  for (const auto& feature : lines) {
    EXPECT_EQ(feature["properties"]["source"], fs::absolute(source).lexically_normal().string());
    indices.insert(feature["properties"]["feature_index"].get<std::int64_t>());
    EXPECT_FALSE(feature["properties"]["reason"].get<std::string>().empty());
  }
  EXPECT_EQ(indices, (std::set<std::int64_t>{3, 7}));

  // The snapshot summary records the run, the unit and the completed source.
  auto loaded = table::LoadTable(*catalog_, *io_, id_);
  ASSERT_OK(loaded.status());
  const CommittedUnits done = ReadCommittedUnits(loaded->metadata);
  EXPECT_EQ(done.sources.size(), 1u);
  EXPECT_EQ(loaded->metadata.current_snapshot()->summary.at("geolake.run-id"), summary.run_id);
}

// A table's own data files carry geo_cell (quadkey:1 here) and geo_hilbert: as a source they
// create a table whose layout columns are recomputed for it (another partitioning, CRS and
// Hilbert extent), instead of being refused as fields named like the columns geolake adds.
TEST_F(IngestTest, DataFilesOfATableIngestWithTheirLayoutColumnsRecomputed) {
  const std::string source = WriteSource("a.geojsonl", 400, /*with_bad=*/false);
  IngestSummary first;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {source}, Options(), &first));
  ASSERT_OK_AND_ASSIGN(table::Table a, table::LoadTable(*catalog_, *io_, id_));
  ASSERT_OK_AND_ASSIGN(table::ScanPlan a_plan, table::PlanScan(*io_, a.metadata));
  std::vector<std::string> a_files;
  for (const table::ManifestEntry& e : a_plan.data_files) {
    a_files.push_back(LocalPath(e.data_file.file_path));
    ASSERT_EQ(std::get<std::string>(e.data_file.partition[0]).size(), 1u);  // quadkey:1
  }
  ASSERT_GE(a_files.size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto described, sources::DiscoverSources(a_files, {}));
  for (const sources::DiscoveredSource& d : described) {
    for (const geoparquet::FieldDef& f : d.fields) {
      EXPECT_NE(f.name, "geo_cell");
      EXPECT_NE(f.name, "geo_hilbert");
    }
  }

  for (const auto& [name, partition, crs] :
       {std::tuple{"quadkey3", layout::PartitionScheme{layout::PartitionKind::kQuadkey, 3},
                   std::string("EPSG:4326")},
        std::tuple{"mercator", layout::PartitionScheme{layout::PartitionKind::kNone, 0},
                   std::string("EPSG:3857")}}) {
    SCOPED_TRACE(name);
    const table::TableIdentifier b_id = *table::TableIdentifier::Parse(std::string("test.") + name);
    IngestOptions options = Options();
    options.layout.partition = partition;
    options.layout.crs = crs;
    IngestSummary summary;
    ASSERT_OK(Ingest(*catalog_, *io_, b_id, a_files, options, &summary));
    EXPECT_EQ(summary.rows_committed, 400);
    EXPECT_EQ(summary.rows_rejected, 0);
    ASSERT_OK_AND_ASSIGN(table::Table b, table::LoadTable(*catalog_, *io_, b_id));
    // The schema is A's: the attributes once, the layout columns as the partition needs them.
    std::vector<std::string> columns;
    for (const table::NestedField& f : b.metadata.current_schema()->fields()) {
      columns.push_back(f.name);
    }
    const bool partitioned = partition.kind != layout::PartitionKind::kNone;
    std::vector<std::string> want = {"id", "name", "score", "geometry", "bbox"};
    if (partitioned) want.push_back("geo_cell");
    want.push_back("geo_hilbert");
    EXPECT_EQ(columns, want);
    ASSERT_OK_AND_ASSIGN(table::ScanPlan plan, table::PlanScan(*io_, b.metadata));
    EXPECT_EQ(plan.DataRecordCount(), 400);
    for (const table::ManifestEntry& e : plan.data_files) {
      if (partitioned) {
        EXPECT_EQ(std::get<std::string>(e.data_file.partition[0]).size(), 3u);  // quadkey:3
      } else {
        EXPECT_TRUE(e.data_file.partition.empty());
      }
    }
    // Reprojected: in EPSG:3857 the coordinates are metres, far beyond any lon/lat degree
    // (the source grid reaches 170 degrees east and west).
    double max_abs_x = 0;
    for (const table::ManifestEntry& e : plan.data_files) {
      ASSERT_OK_AND_ASSIGN(auto file,
                           sources::GeoParquetSource::Open(LocalPath(e.data_file.file_path)));
      EXPECT_EQ(file->fields().size(), 3u);
      geoparquet::FeatureBatch batch;
      while (true) {
        ASSERT_OK_AND_ASSIGN(std::int64_t rows, file->ReadBatch(1000, &batch));
        if (rows == 0) break;
        for (std::int64_t r = 0; r < rows; ++r) {
          ASSERT_OK_AND_ASSIGN(geo::Envelope box,
                               geo::WkbEnvelope(batch.GeometryAt(static_cast<std::size_t>(r))));
          max_abs_x = std::max({max_abs_x, std::abs(box.xmin), std::abs(box.xmax)});
        }
      }
    }
    if (crs == "EPSG:3857") {
      EXPECT_GT(max_abs_x, 1e7);
    } else {
      EXPECT_LE(max_abs_x, 180.0);
      EXPECT_GT(max_abs_x, 100.0);
    }
  }
}

TEST_F(IngestTest, MakeValidRepairsTheBowtieAndKeepsTheNull) {
  const std::string source = WriteSource("a.geojsonl", 50, /*with_bad=*/true);
  IngestSummary summary;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {source}, Options(), &summary));
  EXPECT_EQ(summary.rows_rejected, 0);
  EXPECT_EQ(summary.rows_committed, 50);
  EXPECT_EQ(TableRows(), 50);
}

TEST_F(IngestTest, ResumeSkipsCommittedSourcesAndRefusesChangedOnes) {
  const std::string source = WriteSource("a.geojsonl", 200, /*with_bad=*/false);
  IngestSummary first;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {source}, Options(), &first));
  EXPECT_EQ(first.rows_committed, 200);

  IngestSummary again;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {source}, Options(), &again));
  EXPECT_EQ(again.sources_skipped, 1);
  EXPECT_EQ(again.rows_read, 0);
  EXPECT_EQ(TableRows(), 200);

  // The same path with other bytes is refused, then accepted with the flag.
  WriteSource("a.geojsonl", 210, /*with_bad=*/false);
  IngestSummary changed;
  EXPECT_THAT(Ingest(*catalog_, *io_, id_, {source}, Options(), &changed),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(TableRows(), 200);
  IngestOptions allow = Options();
  allow.allow_changed_sources = true;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {source}, allow, &changed));
  EXPECT_EQ(TableRows(), 410);
}

TEST_F(IngestTest, PartlyCommittedSourceResumesOnlyWithItsUnitRows) {
  // A GeoPackage of 200 features is cut into 4 units of 50 rows. An earlier run committed
  // unit 0 only (here: the coordinator commits it, with no files, as a cancelled run would
  // have left it). Resuming with other --unit-rows would name other row ranges by the same
  // unit indices, so it is refused; with the recorded 50, units 1-3 (150 rows) are ingested.
  const std::string seq = WriteSource("a.geojsonl", 200, /*with_bad=*/false);
  const std::string gpkg = (dir_ / "a.gpkg").string();
  const testing::CommandResult made =
      testing::RunCommand("ogr2ogr -f GPKG '" + gpkg + "' '" + seq + "'");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  IngestOptions options = Options();
  options.unit_rows = 50;
  sources::DiscoverOptions discover;
  discover.unit_rows = options.unit_rows;
  ASSERT_OK_AND_ASSIGN(auto found, sources::DiscoverSources({gpkg}, discover));
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found[0].units.size(), 4u);
  const std::string fingerprint = found[0].fingerprint.ToString();

  ASSERT_OK_AND_ASSIGN(table::NewTableOptions create,
                       layout::LayoutNewTable(found[0].fields, options.layout));
  ASSERT_OK_AND_ASSIGN(create.location, table::DefaultTableLocation(warehouse_, id_));
  ASSERT_OK(table::EnsureNamespace(*catalog_, id_.ns));
  ASSERT_OK(table::CreateTable(*catalog_, *io_, id_, create).status());
  {
    const std::string run_id = NewRunId();
    ASSERT_OK_AND_ASSIGN(auto journal, RunJournal::Open(io_.get(), RunDirectory(warehouse_, run_id),
                                                        run_id, id_.ToString()));
    SourcePlan plan;
    plan.fingerprint = fingerprint;
    plan.path = found[0].path;
    plan.unit_count = 4;
    plan.unit_rows = 50;
    CommitOptions commit;
    commit.run_id = run_id;
    Metrics metrics;
    std::vector<SourcePlan> plans;
    plans.push_back(plan);
    CommitCoordinator coordinator(catalog_.get(), io_.get(), id_, commit, std::move(plans),
                                  journal.get(), &metrics);
    coordinator.Start([] {});
    UnitOutcome unit0;
    unit0.source = fingerprint;
    unit0.source_path = found[0].path;
    unit0.unit = 0;
    coordinator.Submit(std::move(unit0));
    ASSERT_OK(coordinator.Finish());
  }
  ASSERT_OK_AND_ASSIGN(auto loaded, table::LoadTable(*catalog_, *io_, id_));
  const CommittedUnits done = ReadCommittedUnits(loaded.metadata);
  EXPECT_EQ(done.unit_rows.at(fingerprint), 50);
  EXPECT_FALSE(done.sources.contains(fingerprint));

  IngestOptions other = options;
  other.unit_rows = 100;
  IngestSummary refused;
  EXPECT_THAT(Ingest(*catalog_, *io_, id_, {gpkg}, other, &refused),
              ::geolake::testing::IsErrorWith(ErrorCode::kInvalidArgument, "--unit-rows 50"));
  EXPECT_EQ(refused.rows_read, 0);
  EXPECT_EQ(TableRows(), 0);

  IngestSummary resumed;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {gpkg}, options, &resumed));
  EXPECT_EQ(resumed.units_skipped, 1);
  EXPECT_EQ(resumed.rows_read, 150);
  EXPECT_EQ(resumed.rows_committed, 150);
  EXPECT_EQ(TableRows(), 150);
}

TEST_F(IngestTest, IncompatibleFieldTypesFailBeforeAnyRowIsWritten) {
  const std::string good = WriteSource("a.geojsonl", 20, /*with_bad=*/false);
  const std::string bad = WriteSource("b.geojsonl", 20, /*with_bad=*/false, "int");
  IngestSummary summary;
  EXPECT_THAT(Ingest(*catalog_, *io_, id_, {good, bad}, Options(), &summary),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(summary.rows_read, 0);
  EXPECT_EQ(TableRows(), 0);
}

// Issue 17 item 8: a Latin-1 CSV (GDAL's CSV driver declares no encoding) is ingested with its
// invalid bytes replaced and counted per field; under reject its rows go to the rejects file
// naming the field. Before, the bytes reached the data file as they were.
TEST_F(IngestTest, Latin1CsvIsReplacedAndCountedOrRejected) {
  const std::string path = (dir_ / "latin1.csv").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "name,lon,lat\nZ\xfcrich,8.54,47.37\nBern,7.44,46.95\nGen\xe8ve,6.14,46.2\n";
  }
  IngestOptions options = Options();
  options.layout.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
  IngestSummary summary;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {path}, options, &summary));
  EXPECT_EQ(summary.rows_committed, 3);
  EXPECT_EQ(summary.values_utf8_replaced, 2);
  // What the data file holds is UTF-8: read it back.
  auto loaded = table::LoadTable(*catalog_, *io_, id_);
  ASSERT_OK(loaded.status());
  auto plan = table::PlanScan(*io_, loaded->metadata);
  ASSERT_OK(plan.status());
  std::set<std::string> names;
  for (const table::ManifestEntry& entry : plan->data_files) {
    ASSERT_OK_AND_ASSIGN(auto reader,
                         sources::GeoParquetSource::Open(LocalPath(entry.data_file.file_path)));
    geoparquet::FeatureBatch batch;
    ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(100, &batch));
    for (std::int64_t row = 0; row < rows; ++row) {
      names.insert(std::string(batch.columns[0].StringAt(static_cast<std::size_t>(row))));
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"Z\xef\xbf\xbdrich", "Bern", "Gen\xef\xbf\xbdve"}));

  const table::TableIdentifier rejected = *table::TableIdentifier::Parse("test.rejected");
  options.on_invalid = InvalidPolicy::kReject;
  ASSERT_OK(Ingest(*catalog_, *io_, rejected, {path}, options, &summary));
  EXPECT_EQ(summary.rows_read, 3);
  EXPECT_EQ(summary.rows_committed, 1);
  EXPECT_EQ(summary.rows_rejected, 2);
  std::ifstream rejects(summary.run_dir + "/rejects.geojsonseq");
  std::string line;
  int named = 0;
  while (std::getline(rejects, line)) {
    const auto reason = nlohmann::json::parse(line)["properties"]["reason"].get<std::string>();
    named += reason.rfind("invalid UTF-8 in field 'name': ", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(named, 2);
}

// Issue 17 item 18: a source without some table columns is committed with nulls, but counted
// (and warned about); --strict-schema refuses it, and a source with a field the table lacks,
// before any row is written. Before, the missing columns went by without a word.
TEST_F(IngestTest, MissingColumnsAreCountedAndStrictSchemaRefusesThem) {
  const std::string full = WriteSource("a.geojsonl", 20, /*with_bad=*/false);
  const std::string path = (dir_ / "b.geojsonl").string();
  {
    std::ofstream out(path);
    for (int i = 0; i < 5; ++i) {
      out << R"({"type":"Feature","properties":{"id":)" << 100 + i
          << R"(},"geometry":{"type":"Point","coordinates":[1,2]}})"
          << "\n";
    }
  }
  IngestSummary summary;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {full}, Options(), &summary));
  EXPECT_EQ(summary.sources_missing_columns, 0);

  IngestOptions strict = Options();
  strict.strict_schema = true;
  Status refused = Ingest(*catalog_, *io_, id_, {path}, strict, &summary);
  EXPECT_THAT(refused, IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("table columns missing from the source"));
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("name, score"));
  EXPECT_EQ(summary.rows_read, 0);
  EXPECT_EQ(TableRows(), 20);

  ASSERT_OK(Ingest(*catalog_, *io_, id_, {path}, Options(), &summary));
  EXPECT_EQ(summary.sources_missing_columns, 1);
  EXPECT_EQ(summary.rows_missing_columns, 5);
  EXPECT_EQ(summary.rows_committed, 5);
  EXPECT_EQ(TableRows(), 25);

  // A field the table lacks: dropped with a warning, refused under --strict-schema.
  const std::string extra = (dir_ / "c.geojsonl").string();
  {
    std::ofstream out(extra);
    out << R"({"type":"Feature","properties":{"id":1,"score":1.5,"name":"x","more":2},)"
        << R"("geometry":{"type":"Point","coordinates":[1,2]}})"
        << "\n";
  }
  refused = Ingest(*catalog_, *io_, id_, {extra}, strict, &summary);
  EXPECT_THAT(refused, IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("fields not in the table: more"));
}

// Issue 17 item 18: a source without a CRS whose coordinates are projected metres cannot be
// in the table's EPSG:4326: it is refused before any row is written, with a message that says
// so. A CRS-less source in degrees goes in, and its one stray row outside lon/lat range is
// rejected with the reason. Before, the metres were committed as degrees.
TEST_F(IngestTest, CrsLessSourceInMetresIsRefusedForAGeographicTable) {
  const std::string metres = (dir_ / "metres.csv").string();
  {
    std::ofstream out(metres);
    out << "name,x,y\n";
    for (int i = 0; i < 10; ++i) out << "p" << i << "," << 500000 + i * 1000 << ",4649776\n";
  }
  IngestOptions options = Options();
  options.layout.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
  IngestSummary summary;
  Status refused = Ingest(*catalog_, *io_, id_, {metres}, options, &summary);
  EXPECT_THAT(refused, IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("the source has no CRS and 10 of its first "
                                                      "10 geometries lie outside lon [-180, 180]"));
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("EPSG:4326"));
  EXPECT_EQ(summary.rows_read, 0);
  EXPECT_THAT(table::LoadTable(*catalog_, *io_, id_), IsError(ErrorCode::kNotFound));  // not made

  const std::string degrees = (dir_ / "degrees.csv").string();
  {
    std::ofstream out(degrees);
    out << "name,x,y\n";
    for (int i = 0; i < 9; ++i) out << "p" << i << "," << 5 + i << ",45\n";
    out << "stray,500000,4649776\n";
  }
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {degrees}, options, &summary));
  EXPECT_EQ(summary.rows_read, 10);
  EXPECT_EQ(summary.rows_committed, 9);
  EXPECT_EQ(summary.rows_rejected, 1);
  std::ifstream rejects(summary.run_dir + "/rejects.geojsonseq");
  std::string line;
  ASSERT_TRUE(std::getline(rejects, line));
  EXPECT_THAT(nlohmann::json::parse(line)["properties"]["reason"].get<std::string>(),
              ::testing::HasSubstr("outside lon [-180, 180] x lat [-90, 90] of the table CRS "
                                   "EPSG:4326 and the source has no CRS"));
}

TEST_F(IngestTest, MissingTableWithoutCreateIsNotFound) {
  const std::string source = WriteSource("a.geojsonl", 5, /*with_bad=*/false);
  IngestOptions options = Options();
  options.create = false;
  IngestSummary summary;
  EXPECT_THAT(Ingest(*catalog_, *io_, id_, {source}, options, &summary),
              IsError(ErrorCode::kNotFound));
}

TEST_F(IngestTest, StopBeforeStartCommitsNothing) {
  const std::string source = WriteSource("a.geojsonl", 100, /*with_bad=*/false);
  std::stop_source stop;
  stop.request_stop();
  IngestSummary summary;
  EXPECT_THAT(
      Ingest(*catalog_, *io_, id_, {source}, Options(), &summary, nullptr, stop.get_token()),
      IsError(ErrorCode::kCancelled));
  EXPECT_EQ(summary.rows_committed, 0);
  // Discovery sees the stop, before the table would be created: nothing is made.
  EXPECT_THAT(table::LoadTable(*catalog_, *io_, id_).status(), IsError(ErrorCode::kNotFound));
}

// Forwards to a real catalog, but refuses every CommitTable the way a locked or read-only
// SQLite catalog does: kIOError marked "(not committed)" (table::CommitNotApplied).
class RefusingCatalog final : public table::Catalog {
 public:
  explicit RefusingCatalog(table::Catalog* inner) : inner_(inner) {}
  const std::string& name() const override { return inner_->name(); }
  Status CreateNamespace(const table::Namespace& ns, const table::NamespaceProperties& p) override {
    return inner_->CreateNamespace(ns, p);
  }
  Result<std::vector<table::Namespace>> ListNamespaces(const table::Namespace& p) override {
    return inner_->ListNamespaces(p);
  }
  Result<bool> NamespaceExists(const table::Namespace& ns) override {
    return inner_->NamespaceExists(ns);
  }
  Status DropNamespace(const table::Namespace& ns) override { return inner_->DropNamespace(ns); }
  Result<table::NamespaceProperties> LoadNamespaceProperties(const table::Namespace& ns) override {
    return inner_->LoadNamespaceProperties(ns);
  }
  Status UpdateNamespaceProperties(const table::Namespace& ns, const table::NamespaceProperties& u,
                                   const std::vector<std::string>& r) override {
    return inner_->UpdateNamespaceProperties(ns, u, r);
  }
  Status CreateTable(const table::TableIdentifier& id, const std::string& loc) override {
    return inner_->CreateTable(id, loc);
  }
  Result<std::string> LoadTable(const table::TableIdentifier& id) override {
    return inner_->LoadTable(id);
  }
  Result<table::TableEntry> LoadTableEntry(const table::TableIdentifier& id) override {
    return inner_->LoadTableEntry(id);
  }
  Result<bool> TableExists(const table::TableIdentifier& id) override {
    return inner_->TableExists(id);
  }
  Result<std::vector<table::TableIdentifier>> ListTables(const table::Namespace& ns) override {
    return inner_->ListTables(ns);
  }
  Status DropTable(const table::TableIdentifier& id) override { return inner_->DropTable(id); }
  Status RenameTable(const table::TableIdentifier& a, const table::TableIdentifier& b) override {
    return inner_->RenameTable(a, b);
  }
  Status CommitTable(const table::TableIdentifier& id, const std::string&,
                     const std::string&) override {
    return Status::IOError("commit '" + id.ToString() + "' " +
                           std::string(table::kNotCommittedMark) +
                           ": sqlite catalog.db: database is locked (database is locked)");
  }

 private:
  table::Catalog* inner_;
};

// Issue 17, item 16: a locked or read-only catalog made ingest say "commit outcome unknown"
// when the swap was never applied, and the summary did not balance (the batch's rows were in
// no count). The outcome is known, and read = committed + rejected + not committed.
TEST_F(IngestTest, ACatalogThatRefusesTheSwapIsNotCommittedAndTheSummaryBalances) {
  const std::string a = WriteSource("a.geojsonl", 300, /*with_bad=*/true);
  const std::string b = WriteSource("b.geojsonl", 200, /*with_bad=*/false);
  IngestOptions options = Options();
  options.executor = nullptr;  // one worker: this thread
  options.unit_rows = 300;
  options.commit_rows = 1;  // a commit per unit: the first fails, the second never runs
  {
    IngestSummary made;  // the table, created through the real catalog, holding nothing yet
    IngestOptions create = options;
    ASSERT_OK(
        Ingest(*catalog_, *io_, id_, {WriteSource("empty.geojsonl", 1, false)}, create, &made));
  }
  RefusingCatalog refusing(catalog_.get());
  IngestSummary summary;
  const Status st = Ingest(refusing, *io_, id_, {a, b}, options, &summary);
  EXPECT_THAT(st, ::geolake::testing::IsErrorWith(ErrorCode::kIOError, "not committed"));
  EXPECT_EQ(st.message().find("outcome unknown"), std::string::npos) << st.ToString();
  EXPECT_GT(summary.rows_read, 0);
  EXPECT_EQ(summary.rows_committed, 0);
  EXPECT_EQ(summary.rows_read,
            summary.rows_committed + summary.rows_rejected + summary.rows_uncommitted)
      << "read " << summary.rows_read << ", uncommitted " << summary.rows_uncommitted;
  EXPECT_EQ(TableRows(), 1);
}

TEST_F(IngestTest, SmallCommitRowsGiveSeveralSnapshotsOfWholeUnits) {
  // Two sources, one unit each (GeoJSONSeq is not cut), commit after every unit. Together
  // they are more than --unit-rows, so they are not packed into one work item.
  const std::string a = WriteSource("a.geojsonl", 300, /*with_bad=*/false);
  const std::string b = WriteSource("b.geojsonl", 300, /*with_bad=*/false);
  IngestOptions options = Options();
  options.commit_rows = 1;
  options.executor = nullptr;  // one worker: this thread
  options.unit_rows = 300;
  IngestSummary summary;
  Metrics metrics;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {a, b}, options, &summary, &metrics));
  EXPECT_EQ(summary.commits, 2);
  EXPECT_EQ(TableRows(), 600);
  const MetricsSnapshot snapshot = metrics.Snapshot();
  bool saw_commit = false;
  for (const auto& stage : snapshot.stages) {
    if (stage.name != "commit") continue;
    saw_commit = true;
    EXPECT_EQ(stage.rows_out, 600);
  }
  EXPECT_TRUE(saw_commit);
  // Each snapshot completes exactly one source.
  auto loaded = table::LoadTable(*catalog_, *io_, id_);
  ASSERT_OK(loaded.status());
  for (const table::Snapshot& s : loaded->metadata.snapshots) {
    EXPECT_EQ(nlohmann::json::parse(s.summary.at("geolake.sources")).size(), 1u);
  }
}

TEST_F(IngestTest, SmallSourcesShareFilesAndAreCommittedTogether) {
  // 20 sources of 40 rows and --unit-rows 100: packed in path order two by two (a third would
  // make 120 rows), so 10 files instead of 20 (no partitioning: one file per work item). A
  // pack's sources are committed in one snapshot; rejects still name their own source. More
  // sources than a worker keeps transformers for (16).
  std::vector<std::string> paths;
  for (int i = 0; i < 20; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "s%02d.geojsonl", i);
    paths.push_back(WriteSource(name, 40, /*with_bad=*/i == 5));
  }
  IngestOptions options = Options();
  options.layout.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
  options.unit_rows = 100;
  options.read_batch_rows = 16;
  options.commit_rows = 1;  // commit as soon as any work item is done
  options.on_invalid = InvalidPolicy::kReject;
  IngestSummary summary;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {(dir_ / "s*.geojsonl").string()}, options, &summary));
  EXPECT_EQ(summary.units, 20);
  EXPECT_EQ(summary.rows_read, 800);
  EXPECT_EQ(summary.rows_rejected, 2);  // source 5's null and bowtie
  EXPECT_EQ(summary.rows_committed, 798);
  EXPECT_EQ(summary.files_written, 10);
  EXPECT_EQ(summary.files_committed, 10);
  EXPECT_GE(summary.commits, 1);
  EXPECT_LE(summary.commits, 10);  // the coordinator may take several finished packs at once
  EXPECT_EQ(TableRows(), 798);

  auto loaded = table::LoadTable(*catalog_, *io_, id_);
  ASSERT_OK(loaded.status());
  const CommittedUnits done = ReadCommittedUnits(loaded->metadata);
  EXPECT_EQ(done.sources.size(), 20u);
  // Sources 2k and 2k + 1 share files, so they complete in the same snapshot.
  std::map<int, std::int64_t> snapshot_of;  // source number -> snapshot that completed it
  for (const table::Snapshot& s : loaded->metadata.snapshots) {
    const auto units = nlohmann::json::parse(s.summary.at("geolake.units"));
    EXPECT_EQ(units.size() % 2, 0u);
    for (const auto& unit : units) {
      const std::string path = unit["path"].get<std::string>();
      snapshot_of[std::stoi(fs::path(path).stem().string().substr(1))] = s.snapshot_id;
    }
  }
  ASSERT_EQ(snapshot_of.size(), 20u);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(snapshot_of[2 * k], snapshot_of[2 * k + 1]) << k;

  std::ifstream rejects(summary.run_dir + "/rejects.geojsonseq");
  std::string line;
  int reject_lines = 0;
  while (std::getline(rejects, line)) {
    ++reject_lines;
    EXPECT_EQ(nlohmann::json::parse(line)["properties"]["source"],
              fs::absolute(paths[5]).lexically_normal().string());
  }
  EXPECT_EQ(reject_lines, 2);

  // The journal names, for each file, its pack's first source and the other one.
  std::ifstream journal(summary.run_dir + "/journal.jsonl");
  std::getline(journal, line);  // the header
  int file_lines = 0;
  while (std::getline(journal, line)) {
    ++file_lines;
    const auto entry = nlohmann::json::parse(line);
    EXPECT_TRUE(entry["committed"].get<bool>());
    ASSERT_TRUE(entry.contains("packed_with")) << line;
    EXPECT_EQ(entry["packed_with"].size(), 1u) << line;
    EXPECT_NE(entry["packed_with"][0], entry["source"]) << line;
  }
  EXPECT_EQ(file_lines, 10);

  // Resume: every source is recorded as complete.
  IngestSummary again;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {(dir_ / "s*.geojsonl").string()}, options, &again));
  EXPECT_EQ(again.sources_skipped, 20);
  EXPECT_EQ(again.rows_read, 0);
  EXPECT_EQ(TableRows(), 798);
}

TEST_F(IngestTest, OneUnitSourceIsTransformedByEveryWorkerWithEachRowOnce) {
  // One GeoJSONSeq (never cut into units) of self-intersecting 31-point stars: make-valid
  // keeps each batch of 3 busy long enough that both workers take batches of the one unit.
  constexpr int kFeatures = 300;
  const std::string path = WriteStars("stars.geojsonl", kFeatures);
  IngestOptions options = Options();
  options.read_batch_rows = 3;
  IngestSummary summary;
  ASSERT_OK(Ingest(*catalog_, *io_, id_, {path}, options, &summary));
  EXPECT_EQ(summary.units, 1);
  EXPECT_EQ(summary.transform_threads, 2);
  EXPECT_EQ(summary.rows_read, kFeatures);
  EXPECT_EQ(summary.rows_committed, kFeatures);
  EXPECT_EQ(summary.rows_rejected, 0);
  // Read the table's files back: every id exactly once.
  auto loaded = table::LoadTable(*catalog_, *io_, id_);
  ASSERT_OK(loaded.status());
  ASSERT_OK_AND_ASSIGN(auto plan, table::PlanScan(*io_, loaded->metadata));
  std::vector<std::int64_t> ids;
  for (const table::ManifestEntry& entry : plan.data_files) {
    std::string file = entry.data_file.file_path;
    if (file.rfind("file://", 0) == 0) file = file.substr(7);
    ASSERT_OK_AND_ASSIGN(auto reader, sources::GeoParquetSource::Open(file));
    ASSERT_EQ(reader->fields().front().name, "id");
    geoparquet::FeatureBatch batch;
    while (true) {
      ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(4096, &batch));
      if (rows == 0) break;
      ids.insert(ids.end(), batch.columns[0].ints.begin(), batch.columns[0].ints.end());
    }
  }
  std::sort(ids.begin(), ids.end());
  std::vector<std::int64_t> expected(kFeatures);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(ids, expected);
}

TEST_F(IngestTest, StopWhileWorkersShareOneUnitCommitsNothingOfIt) {
  // Both workers are inside the one unit (reading, transforming, writing) when the stop
  // comes: the run ends within the stated 2 s, nothing of the unit is committed, and every
  // row read is accounted as not committed.
  const std::string path = WriteStars("stars.geojsonl", 600);
  IngestOptions options = Options();
  options.read_batch_rows = 3;
  std::stop_source stop;
  IngestSummary summary;
  Status status;
  Metrics metrics;
  std::chrono::steady_clock::time_point stopped;
  std::thread run([&] {
    status = Ingest(*catalog_, *io_, id_, {path}, options, &summary, &metrics, stop.get_token());
  });
  // Stop once the unit is being read (a fixed 500 ms sleep stopped some runs on a loaded
  // machine before discovery and table creation were done, with nothing read yet).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const auto rows_read = [&metrics] {
    for (const auto& stage : metrics.Snapshot().stages) {
      if (stage.name == "read") return stage.rows_out;
    }
    return std::int64_t{0};
  };
  while (rows_read() < 30 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stopped = std::chrono::steady_clock::now();
  stop.request_stop();
  run.join();
  const auto took = std::chrono::steady_clock::now() - stopped;
  EXPECT_LT(took, std::chrono::seconds(2));
  ASSERT_THAT(status, IsError(ErrorCode::kCancelled));
  EXPECT_GT(summary.rows_read, 0);
  EXPECT_LT(summary.rows_read, 600);
  EXPECT_EQ(summary.rows_committed, 0);
  EXPECT_EQ(summary.rows_uncommitted, summary.rows_read);
  EXPECT_EQ(TableRows(), 0);
}

// FlatGeobuf and GeoJSONSeq are cut into units by geolake's own readers (issue 22): a stop in
// the middle of a run leaves whole units committed, and the resumed run reads only the others,
// so the table ends with every feature exactly once.
TEST_F(IngestTest, StopInsideCutFlatGeobufOrGeoJsonSeqThenResumeCommitsEachRowOnce) {
  constexpr int kFeatures = 600;
  const std::string seq = WriteStars("stars.geojsonl", kFeatures);
  const std::string fgb = (dir_ / "stars.fgb").string();
  const testing::CommandResult made =
      testing::RunCommand("ogr2ogr -f FlatGeobuf '" + fgb + "' '" + seq + "'");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  for (const std::string& path : {seq, fgb}) {
    id_ = *table::TableIdentifier::Parse(fs::path(path).extension() == ".fgb" ? "test.fgb"
                                                                              : "test.seq");
    IngestOptions options = Options();
    options.unit_rows = 100;  // 6 units
    options.read_batch_rows = 3;
    options.commit_rows = 1;  // every finished unit is committed at once
    std::stop_source stop;
    IngestSummary first;
    Status status;
    std::thread run([&] {
      status = Ingest(*catalog_, *io_, id_, {path}, options, &first, nullptr, stop.get_token());
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    const auto stopped = std::chrono::steady_clock::now();
    stop.request_stop();
    run.join();
    EXPECT_LT(std::chrono::steady_clock::now() - stopped, std::chrono::seconds(2)) << path;
    EXPECT_EQ(first.units, 6) << path;
    if (status.ok()) {
      GTEST_LOG_(INFO) << path << ": the run finished before the stop; resume has nothing left";
    } else {
      ASSERT_THAT(status, IsError(ErrorCode::kCancelled)) << path;
    }
    const std::int64_t committed_first = TableRows();
    EXPECT_EQ(committed_first % 100, 0) << path << ": whole units only";

    IngestOptions resume = options;
    resume.create = false;
    IngestSummary second;
    ASSERT_OK(Ingest(*catalog_, *io_, id_, {path}, resume, &second));
    EXPECT_EQ(second.units_skipped, committed_first / 100) << path;
    EXPECT_EQ(second.rows_read, kFeatures - committed_first) << path;
    EXPECT_EQ(TableRows(), kFeatures) << path;

    auto loaded = table::LoadTable(*catalog_, *io_, id_);
    ASSERT_OK(loaded.status());
    ASSERT_OK_AND_ASSIGN(auto plan, table::PlanScan(*io_, loaded->metadata));
    std::vector<std::int64_t> ids;
    for (const table::ManifestEntry& entry : plan.data_files) {
      std::string file = entry.data_file.file_path;
      if (file.rfind("file://", 0) == 0) file = file.substr(7);
      ASSERT_OK_AND_ASSIGN(auto reader, sources::GeoParquetSource::Open(file));
      geoparquet::FeatureBatch batch;
      while (true) {
        ASSERT_OK_AND_ASSIGN(std::int64_t rows, reader->ReadBatch(4096, &batch));
        if (rows == 0) break;
        ids.insert(ids.end(), batch.columns[0].ints.begin(), batch.columns[0].ints.end());
      }
    }
    std::sort(ids.begin(), ids.end());
    std::vector<std::int64_t> expected(kFeatures);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(ids, expected) << path;
  }
}

// `--shard I/N` (issue 15): three concurrent runs with shards 0/3, 1/3 and 2/3 of twelve small
// sources and one source cut into ten units load every row exactly once; each took only its
// own units; a re-run of a shard finds nothing left; and a run of the whole job after two of
// the three shards takes exactly the third's units.
TEST_F(IngestTest, ShardsTakeDisjointUnitsThatTogetherLoadEveryRowOnce) {
  std::vector<std::string> paths;
  std::int64_t next_id = 0;
  const auto write = [&](const std::string& name, int n) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (int i = 0; i < n; ++i, ++next_id) {
      out << R"({"type":"Feature","properties":{"id":)" << next_id
          << R"(},"geometry":{"type":"Point","coordinates":[)" << (-170 + (next_id * 7) % 340)
          << "," << (-80 + (next_id * 3) % 160) << "]}}\n";
    }
    paths.push_back(path);
  };
  for (int f = 0; f < 12; ++f) write("small" + std::to_string(f) + ".geojsonl", 30);
  write("large.geojsonl", 1000);  // 10 units of 100
  IngestOptions base = Options();
  base.unit_rows = 100;
  base.executor = nullptr;  // one worker each: the calling thread
  const table::TableIdentifier all_id = *table::TableIdentifier::Parse("test.all");
  const table::TableIdentifier part_id = *table::TableIdentifier::Parse("test.part");

  std::vector<IngestSummary> summaries(3);
  std::vector<Status> statuses(3);
  {
    std::vector<std::thread> runs;
    for (int s = 0; s < 3; ++s) {
      runs.emplace_back([&, s] {
        IngestOptions options = base;
        options.shard = Shard{s, 3};
        statuses[s] = Ingest(*catalog_, *io_, all_id, paths, options, &summaries[s]);
      });
    }
    for (std::thread& run : runs) run.join();
  }
  std::int64_t units = 0;
  for (int s = 0; s < 3; ++s) {
    ASSERT_OK(statuses[s]);
    EXPECT_EQ(summaries[s].units + summaries[s].units_other_shards, 22) << s;
    EXPECT_GT(summaries[s].units, 0) << s;  // 22 units: each shard has some
    units += summaries[s].units;
  }
  EXPECT_EQ(units, 22);
  std::vector<std::int64_t> expected(static_cast<std::size_t>(next_id));
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(TableIds(all_id), expected);

  // Resume per shard: nothing is left for any shard.
  for (int s = 0; s < 3; ++s) {
    IngestOptions options = base;
    options.shard = Shard{s, 3};
    IngestSummary again;
    ASSERT_OK(Ingest(*catalog_, *io_, all_id, paths, options, &again));
    EXPECT_EQ(again.rows_read, 0) << s;
    EXPECT_EQ(again.units, 0) << s;
  }
  EXPECT_EQ(TableIds(all_id), expected);

  // Shards 0 and 2, then the whole job: it reads exactly shard 1's units.
  for (int s : {0, 2}) {
    IngestOptions options = base;
    options.shard = Shard{s, 3};
    IngestSummary summary;
    ASSERT_OK(Ingest(*catalog_, *io_, part_id, paths, options, &summary));
    EXPECT_EQ(summary.units, summaries[s].units) << s;
  }
  IngestSummary rest;
  ASSERT_OK(Ingest(*catalog_, *io_, part_id, paths, base, &rest));
  EXPECT_EQ(rest.units, summaries[1].units);
  EXPECT_EQ(rest.rows_read, summaries[1].rows_read);
  EXPECT_EQ(TableIds(part_id), expected);
}

}  // namespace
}  // namespace geolake::pipeline
