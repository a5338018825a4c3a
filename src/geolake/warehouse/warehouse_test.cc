#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "geolake/geolake.h"
#include "geolake/table/single_value.h"
#include "geolake/testing/environment.h"
#include "geolake/testing/testing.h"

namespace geolake {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

// Counts the rows a query returns and keeps their "name" values.
class CollectSink : public query::RowSink {
 public:
  Status Begin(const query::OutputLayout& layout) override {
    for (std::size_t i = 0; i < layout.fields.size(); ++i) {
      if (layout.fields[i].name == "name") name_column_ = static_cast<int>(i);
    }
    return Status::OK();
  }
  Status Write(std::string_view /*file_path*/, const geoparquet::FeatureBatch& rows) override {
    rows_ += rows.num_rows();
    if (name_column_ >= 0) {
      const geoparquet::Column& column = rows.columns[static_cast<std::size_t>(name_column_)];
      for (std::int64_t row = 0; row < rows.num_rows(); ++row) {
        names_.insert(std::string(column.StringAt(static_cast<std::size_t>(row))));
      }
    }
    return Status::OK();
  }
  Status Finish() override { return Status::OK(); }

  std::int64_t rows() const { return rows_; }
  const std::set<std::string>& names() const { return names_; }

 private:
  int name_column_ = -1;
  std::int64_t rows_ = 0;
  std::set<std::string> names_;
};

// Option structs spelled out (designated initializers would leave -Wmissing-field-initializers
// to complain about every field not named).
WarehouseOptions Engine(int workers, bool handle_signals = false) {
  WarehouseOptions options;
  options.workers = workers;
  options.handle_signals = handle_signals;
  return options;
}

CreateTableOptions FromSource(const std::string& source, const std::string& partition = "") {
  CreateTableOptions options;
  options.from = source;
  options.partition = partition;
  return options;
}

IngestOptions Creating(std::int64_t unit_rows = 100000, const std::string& partition = "") {
  IngestOptions options;
  options.create = true;
  options.unit_rows = unit_rows;
  options.partition = partition;
  return options;
}

class WarehouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("geolake_warehouse_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    location_ = (dir_ / "wh").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Warehouse> Open(WarehouseOptions options = {}) {
    if (options.workers == 0) options.workers = 2;
    auto opened = Warehouse::Open(location_, options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }

  // A GeoJSONSeq of `n` points named "place <i>" at x = i - n/2, y = i / 10.
  std::string WritePoints(const std::string& name, int n) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (int i = 0; i < n; ++i) {
      // "type" first: GDAL tells GeoJSONSeq from GeoJSON by how a line starts.
      out << R"({"type":"Feature","properties":{"name":"place )" << i << R"(","pop":)" << i * 10
          << R"(},"geometry":{"type":"Point","coordinates":[)" << (i - n / 2) << "," << i / 10.0
          << "]}}\n";
    }
    return path;
  }

  fs::path dir_;
  std::string location_;
};

TEST_F(WarehouseTest, OpenStartsTheEngineAndConnectsTheCatalogOnFirstUse) {
  auto wh = Open(Engine(3));
  ASSERT_NE(wh, nullptr);
  EXPECT_EQ(wh->executor()->size(), 3);
  EXPECT_EQ(wh->location(), location_);
  EXPECT_FALSE(wh->stop_token().stop_requested());
  // Nothing is created on disk until a table operation needs the catalog.
  EXPECT_FALSE(fs::exists(location_));
  ASSERT_OK_AND_ASSIGN(table::Catalog * catalog, wh->catalog());
  ASSERT_NE(catalog, nullptr);
  EXPECT_TRUE(fs::exists(fs::path(location_) / "catalog.db"));
  ASSERT_OK_AND_ASSIGN(table::Catalog * again, wh->catalog());
  EXPECT_EQ(again, catalog);
}

TEST_F(WarehouseTest, OpenRefusesBadOptions) {
  EXPECT_THAT(Warehouse::Open(location_, Engine(-1)), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Warehouse::Open("", {}), IsError(ErrorCode::kInvalidArgument));
  WarehouseOptions negative_memory;
  negative_memory.memory_bytes = -5;
  EXPECT_THAT(Warehouse::Open(location_, negative_memory), IsError(ErrorCode::kInvalidArgument));
  WarehouseOptions bad_timeout;
  bad_timeout.timeout = std::chrono::milliseconds(-1);
  EXPECT_THAT(Warehouse::Open(location_, bad_timeout), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(WarehouseTest, OnlyOneWarehouseHandlesSignals) {
  auto first = Open(Engine(1, /*handle_signals=*/true));
  ASSERT_NE(first, nullptr);
  EXPECT_THAT(Warehouse::Open(location_, Engine(1, /*handle_signals=*/true)),
              IsError(ErrorCode::kAlreadyExists));
  // Without signals any number can be open at once.
  auto second = Open(Engine(1));
  EXPECT_NE(second, nullptr);
}

TEST_F(WarehouseTest, BadCatalogUriFailsTableOperationsNotOpen) {
  WarehouseOptions options = Engine(1);
  options.catalog = "mysql://nowhere";
  auto wh = Open(options);
  ASSERT_NE(wh, nullptr);
  EXPECT_THAT(wh->catalog(), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(wh->LoadTable("geo.places"), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(WarehouseTest, CreateDescribeAndLoadATableFromASource) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 20);
  ASSERT_OK_AND_ASSIGN(CreatedTable created,
                       wh->CreateTable("geo.places", FromSource(source, "none")));
  EXPECT_EQ(created.table.id.ToString(), "geo.places");
  EXPECT_EQ(created.table.metadata.location,
            (fs::absolute(location_) / "geo" / "places").lexically_normal().string());
  EXPECT_TRUE(created.partition_reason.empty());  // given, not chosen
  ASSERT_OK_AND_ASSIGN(TableDescription described, wh->Describe("geo.places"));
  EXPECT_EQ(described.data_files, 0);
  EXPECT_EQ(described.records, 0);
  EXPECT_FALSE(described.bbox.has_value());
  ASSERT_NE(described.table.metadata.current_schema(), nullptr);
  EXPECT_NE(described.table.metadata.current_schema()->FindColumnName(1), "");

  EXPECT_THAT(wh->CreateTable("geo.places", FromSource(source)),
              IsError(ErrorCode::kAlreadyExists));
  EXPECT_THAT(wh->LoadTable("geo.missing"), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(wh->LoadTable("no_namespace"), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(WarehouseTest, CreateTableChoosesThePartitionFromTheSourceSize) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 20);
  ASSERT_OK_AND_ASSIGN(CreatedTable created, wh->CreateTable("geo.auto", FromSource(source)));
  EXPECT_THAT(created.partition_reason, ::testing::HasSubstr("512 MiB"));
  EXPECT_EQ(created.table.metadata.properties.at("geolake.partition"), "none");
}

TEST_F(WarehouseTest, CreateTableRefusesBadOptions) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 5);
  EXPECT_THAT(wh->CreateTable("geo.t", {}), IsError(ErrorCode::kInvalidArgument));
  CreateTableOptions layer_only;
  layer_only.layer = "x";
  EXPECT_THAT(wh->CreateTable("geo.t", layer_only), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(wh->CreateTable("geo.t", FromSource(source, "hexagons:3")),
              IsError(ErrorCode::kInvalidArgument));
  CreateTableOptions with_crs = FromSource(source);
  with_crs.properties = {{"geolake.crs", "x"}};
  EXPECT_THAT(wh->CreateTable("geo.t", with_crs),
              IsErrorWith(ErrorCode::kInvalidArgument, "geolake.crs"));
  CreateTableOptions bad_order = FromSource(source);
  bad_order.properties = {{"geolake.hilbert.order", "x"}};
  EXPECT_THAT(wh->CreateTable("geo.t", bad_order),
              IsErrorWith(ErrorCode::kInvalidArgument, "not a number"));
  EXPECT_THAT(wh->CreateTable("geo.t", FromSource((dir_ / "missing.gpkg").string())),
              IsError(ErrorCode::kNotFound));
  // None of these created the table.
  EXPECT_THAT(wh->LoadTable("geo.t"), IsError(ErrorCode::kNotFound));
}

TEST_F(WarehouseTest, CreateTableFromASchemaAddsTheLayoutWhenItHasTheColumns) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 5);
  ASSERT_OK_AND_ASSIGN(CreatedTable from_source,
                       wh->CreateTable("geo.a", FromSource(source, "none")));
  // The same schema, given directly, gives the same layout.
  CreateTableOptions with_schema;
  with_schema.schema = from_source.table.metadata.current_schema();
  ASSERT_OK_AND_ASSIGN(CreatedTable from_schema, wh->CreateTable("geo.b", with_schema));
  EXPECT_EQ(from_schema.table.metadata.properties, from_source.table.metadata.properties);
  ASSERT_NE(from_schema.table.metadata.default_sort_order(), nullptr);
  EXPECT_FALSE(from_schema.table.metadata.default_sort_order()->is_unsorted());
}

TEST_F(WarehouseTest, IngestQueryFilesAndSnapshots) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 100);
  ASSERT_OK_AND_ASSIGN(std::optional<ChosenPartition> chosen,
                       wh->IngestPartition("geo.places", {source}));
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->partition, "none");
  pipeline::IngestSummary summary;
  ASSERT_OK(wh->Ingest("geo.places", {source}, Creating(), &summary));
  EXPECT_TRUE(summary.table_created);
  EXPECT_EQ(summary.rows_read, 100);
  EXPECT_EQ(summary.rows_committed, 100);
  EXPECT_EQ(wh->metrics().counter("rows_committed")->value(), 100);
  // The table exists now: it keeps its own partition.
  ASSERT_OK_AND_ASSIGN(chosen, wh->IngestPartition("geo.places", {source}));
  EXPECT_FALSE(chosen.has_value());

  ASSERT_OK_AND_ASSIGN(TableDescription described, wh->Describe("geo.places"));
  EXPECT_EQ(described.records, 100);
  EXPECT_GE(described.data_files, 1);
  ASSERT_TRUE(described.bbox.has_value());
  EXPECT_DOUBLE_EQ(described.bbox->xmin, -50);
  EXPECT_DOUBLE_EQ(described.bbox->xmax, 49);

  ASSERT_OK_AND_ASSIGN(TableFiles files, wh->Files("geo.places"));
  EXPECT_EQ(files.records, 100);
  EXPECT_EQ(static_cast<std::int64_t>(files.files.size()), described.data_files);
  EXPECT_EQ(files.snapshot_id, *described.table.metadata.current_snapshot_id);
  for (const DataFileInfo& f : files.files) {
    EXPECT_TRUE(f.bbox.has_value());
    EXPECT_EQ(PartitionText(f.partition), "");  // unpartitioned
  }
  EXPECT_THAT(wh->Files("geo.places", 12345), IsError(ErrorCode::kNotFound));

  // x = i - 50 in [-5, 5] and y = i / 10 in [0, 10]: i = 45..55.
  CollectSink sink;
  query::QueryOptions bbox_query;
  bbox_query.bbox = geo::Envelope{-5, 0, 5, 10};
  ASSERT_OK_AND_ASSIGN(query::QueryExplain explain, wh->Query("geo.places", bbox_query, &sink));
  EXPECT_EQ(sink.rows(), 11);
  EXPECT_EQ(explain.rows_returned, 11);
  EXPECT_TRUE(sink.names().contains("place 45"));
  EXPECT_TRUE(sink.names().contains("place 55"));
  EXPECT_EQ(wh->metrics().counter("query.rows_returned")->value(), 11);

  query::QueryOptions bad;
  bad.where = "pop >>> 3";
  EXPECT_THAT(wh->Query("geo.places", bad, nullptr),
              IsErrorWith(ErrorCode::kInvalidArgument, "query 'geo.places': "));

  // A re-run skips the committed source; the table has one snapshot.
  ASSERT_OK(wh->Ingest("geo.places", {source}, {}, &summary));
  EXPECT_EQ(summary.sources_skipped, 1);
  ASSERT_OK_AND_ASSIGN(table::Table t, wh->Snapshots("geo.places"));
  EXPECT_EQ(t.metadata.snapshots.size(), 1u);
}

// docs/table-layout.md "Format version 3": a v3 table's geometry column is Iceberg's
// geometry(C); its data files carry the Parquet GEOMETRY type with GeospatialStatistics, from
// which each manifest entry gets geometry lower/upper bound points (Iceberg spec Appendix D)
// equal to its bbox bounds; a bbox query prunes files on them.
TEST_F(WarehouseTest, FormatVersion3TableHasGeometryBoundsAndQueriesPruneOnThem) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 100);
  CreateTableOptions create = FromSource(source, "none");
  create.format_version = 3;
  ASSERT_OK_AND_ASSIGN(CreatedTable created, wh->CreateTable("geo.v3", create));
  EXPECT_EQ(created.table.metadata.format_version, 3);
  const table::SchemaPtr schema = created.table.metadata.current_schema();
  const table::NestedField* geometry = schema->FindField("geometry");
  ASSERT_NE(geometry, nullptr);
  EXPECT_EQ(geometry->type->ToString(), "geometry(srid:4326)");
  ASSERT_NE(schema->FindField("bbox.xmin"), nullptr);

  IngestOptions ingest;
  ingest.unit_rows = 25;  // rows in source order: four files with disjoint x ranges
  pipeline::IngestSummary summary;
  ASSERT_OK(wh->Ingest("geo.v3", {source}, ingest, &summary));
  EXPECT_EQ(summary.rows_committed, 100);
  ASSERT_OK_AND_ASSIGN(TableFiles files, wh->Files("geo.v3"));
  ASSERT_GE(files.files.size(), 2u);
  for (const DataFileInfo& f : files.files) {
    const table::DataFile& df = f.entry.data_file;
    ASSERT_TRUE(df.lower_bounds.contains(geometry->id)) << df.file_path;
    ASSERT_TRUE(df.upper_bounds.contains(geometry->id)) << df.file_path;
    // Points have x and y only: 16 bytes, two little-endian doubles.
    EXPECT_EQ(df.lower_bounds.at(geometry->id).size(), 16u);
    ASSERT_OK_AND_ASSIGN(table::Value lo, table::DeserializeValue(
                                              *geometry->type, df.lower_bounds.at(geometry->id)));
    ASSERT_OK_AND_ASSIGN(table::Value hi, table::DeserializeValue(
                                              *geometry->type, df.upper_bounds.at(geometry->id)));
    ASSERT_TRUE(f.bbox.has_value());
    EXPECT_EQ(std::get<table::BoundPoint>(lo).x, f.bbox->xmin);
    EXPECT_EQ(std::get<table::BoundPoint>(lo).y, f.bbox->ymin);
    EXPECT_EQ(std::get<table::BoundPoint>(hi).x, f.bbox->xmax);
    EXPECT_EQ(std::get<table::BoundPoint>(hi).y, f.bbox->ymax);
  }

  // x = i - 50 in [10, 20]: i = 60..70, all in one file.
  CollectSink sink;
  query::QueryOptions bbox_query;
  bbox_query.bbox = geo::Envelope{10, 0, 20, 10};
  ASSERT_OK_AND_ASSIGN(query::QueryExplain explain, wh->Query("geo.v3", bbox_query, &sink));
  EXPECT_EQ(sink.rows(), 11);
  EXPECT_TRUE(sink.names().contains("place 60"));
  EXPECT_TRUE(sink.names().contains("place 70"));
  EXPECT_EQ(explain.files_with_geometry_bounds, static_cast<std::int64_t>(files.files.size()));
  EXPECT_EQ(explain.files_pruned_by_geometry_bounds,
            static_cast<std::int64_t>(files.files.size()) - 1);
  EXPECT_EQ(explain.files.pruned, explain.files_pruned_by_geometry_bounds);
  EXPECT_NE(explain.ToText().find("pruned by geometry bounds"), std::string::npos);
}

// `ingest --create --format-version 3` makes the same v3 table as `create --format-version 3`
// (LayoutNewTable with the version): geometry(C) column, geometry bounds in the manifests. A
// later ingest asking for another version appends to the table as it is.
TEST_F(WarehouseTest, IngestCreatesAFormatVersion3Table) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 40);
  IngestOptions ingest = Creating(20, "none");
  ingest.format_version = 3;
  pipeline::IngestSummary summary;
  ASSERT_OK(wh->Ingest("geo.v3", {source}, ingest, &summary));
  EXPECT_EQ(summary.rows_committed, 40);
  ASSERT_OK_AND_ASSIGN(TableFiles files, wh->Files("geo.v3"));
  ASSERT_OK_AND_ASSIGN(table::Table loaded, wh->LoadTable("geo.v3"));
  EXPECT_EQ(loaded.metadata.format_version, 3);
  const table::SchemaPtr schema = loaded.metadata.current_schema();
  const table::NestedField* geometry = schema->FindField("geometry");
  ASSERT_NE(geometry, nullptr);
  EXPECT_EQ(geometry->type->ToString(), "geometry(srid:4326)");
  ASSERT_EQ(files.files.size(), 2u);
  for (const DataFileInfo& f : files.files) {
    EXPECT_TRUE(f.entry.data_file.lower_bounds.contains(geometry->id))
        << f.entry.data_file.file_path;
    EXPECT_TRUE(f.entry.data_file.upper_bounds.contains(geometry->id))
        << f.entry.data_file.file_path;
  }

  const std::string more = WritePoints("more.geojsonl", 5);
  IngestOptions again = Creating(20, "none");
  again.format_version = 2;
  ASSERT_OK(wh->Ingest("geo.v3", {more}, again, &summary));
  ASSERT_OK_AND_ASSIGN(loaded, wh->LoadTable("geo.v3"));
  EXPECT_EQ(loaded.metadata.format_version, 3);

  IngestOptions bad = Creating();
  bad.format_version = 4;
  EXPECT_THAT(wh->Ingest("geo.v4", {source}, bad, &summary),
              IsErrorWith(ErrorCode::kInvalidArgument, "format version 4"));
}

TEST_F(WarehouseTest, IngestRefusesBadInput) {
  auto wh = Open();
  pipeline::IngestSummary summary;
  EXPECT_THAT(
      wh->Ingest("geo.places", {(dir_ / "nothing_here.gpkg").string()}, Creating(), &summary),
      IsError(ErrorCode::kNotFound));
  const std::string source = WritePoints("places.geojsonl", 3);
  EXPECT_THAT(wh->Ingest("geo.missing", {source}, {}, &summary), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(wh->Ingest("geo.t", {source}, Creating(100000, "cells"), &summary),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(wh->Ingest("bad name", {source}, {}, &summary), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(WarehouseTest, AStopCancelsOperationsWithItsReason) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 50);
  wh->RequestStop();
  EXPECT_TRUE(wh->stop_token().stop_requested());
  EXPECT_THAT(wh->StopStatus(), IsErrorWith(ErrorCode::kCancelled, "stop requested"));
  pipeline::IngestSummary summary;
  const Status st = wh->Ingest("geo.places", {source}, Creating(), &summary);
  EXPECT_THAT(st, IsErrorWith(ErrorCode::kCancelled, "ingest cancelled"));
  EXPECT_THAT(st, IsErrorWith(ErrorCode::kCancelled, "stop requested"));
  EXPECT_EQ(summary.rows_committed, 0);
  EXPECT_EQ(wh->SignalExitCode(), 0);
}

TEST_F(WarehouseTest, ADeadlineStopsTheEngine) {
  WarehouseOptions options;
  options.workers = 1;
  options.timeout = std::chrono::milliseconds(1);
  auto wh = Open(options);
  ASSERT_NE(wh, nullptr);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!wh->stop_token().stop_requested() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_THAT(wh->StopStatus(), IsErrorWith(ErrorCode::kCancelled, "deadline"));
}

TEST_F(WarehouseTest, AppendCommitsConvertedFilesOnce) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 10);
  ASSERT_OK(wh->CreateTable("geo.places", FromSource(source, "none")).status());
  const std::string file = (dir_ / "places.parquet").string();
  ASSERT_OK_AND_ASSIGN(pipeline::ConvertSummary converted, wh->Convert(source, file, {}));
  EXPECT_EQ(converted.file.rows, 10);
  ASSERT_OK_AND_ASSIGN(AppendResult appended, wh->Append("geo.places", {file}));
  EXPECT_EQ(appended.records, 10);
  ASSERT_EQ(appended.files.size(), 1u);
  EXPECT_EQ(appended.files[0].path, file);
  EXPECT_EQ(appended.commit.attempts, 1);
  EXPECT_THAT(wh->Append("geo.places", {file}),
              IsErrorWith(ErrorCode::kInvalidArgument, "already in table"));
  EXPECT_THAT(wh->Append("geo.places", {(dir_ / "missing.parquet").string()}),
              IsError(ErrorCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(TableDescription described, wh->Describe("geo.places"));
  EXPECT_EQ(described.records, 10);
}

TEST_F(WarehouseTest, RemoveOrphansAndRender) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 30);
  pipeline::IngestSummary summary;
  ASSERT_OK(wh->Ingest("geo.places", {source}, Creating(), &summary));
  ASSERT_OK_AND_ASSIGN(table::Table t, wh->LoadTable("geo.places"));
  const std::string orphan = t.metadata.location + "/data/stray.parquet";
  { std::ofstream(orphan) << "not referenced"; }
  maintenance::OrphanOptions orphans;
  orphans.older_than = std::chrono::milliseconds(0);
  orphans.no_running_writers = true;  // the test is the only writer
  orphans.dry_run = true;
  ASSERT_OK_AND_ASSIGN(maintenance::OrphanReport report, wh->RemoveOrphans("geo.places", orphans));
  ASSERT_EQ(report.removed.size(), 1u);
  EXPECT_EQ(report.removed[0].path, orphan);
  EXPECT_TRUE(fs::exists(orphan));
  orphans.dry_run = false;
  ASSERT_OK(wh->RemoveOrphans("geo.places", orphans).status());
  EXPECT_FALSE(fs::exists(orphan));

  render::RenderOptions picture;
  picture.output = (dir_ / "places.png").string();
  picture.width_px = 64;
  ASSERT_OK_AND_ASSIGN(render::RenderSummary drawn, wh->Render("geo.places", picture));
  EXPECT_EQ(drawn.features_drawn, 30);
  EXPECT_TRUE(fs::exists(picture.output));
  EXPECT_THAT(wh->Render("geo.missing", picture), IsError(ErrorCode::kNotFound));
}

TEST_F(WarehouseTest, CompactRewritesSmallFilesOnTheExecutor) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 100);
  pipeline::IngestSummary summary;
  ASSERT_OK(wh->Ingest("geo.places", {source}, Creating(/*unit_rows=*/10), &summary));
  ASSERT_OK_AND_ASSIGN(TableFiles before, wh->Files("geo.places"));
  ASSERT_GE(before.files.size(), 5u) << "one small file per unit";

  maintenance::CompactOptions options;
  options.plan.rewrite_all = true;
  options.dry_run = true;
  ASSERT_OK_AND_ASSIGN(maintenance::CompactReport plan, wh->Compact("geo.places", options));
  EXPECT_EQ(plan.plan.InputFiles(), static_cast<std::int64_t>(before.files.size()));
  EXPECT_EQ(plan.commits, 0);

  options.dry_run = false;
  ASSERT_OK_AND_ASSIGN(maintenance::CompactReport report, wh->Compact("geo.places", options));
  ASSERT_OK(report.status);
  EXPECT_EQ(report.files_in, static_cast<std::int64_t>(before.files.size()));
  EXPECT_EQ(report.files_out, 1);
  EXPECT_EQ(report.rows_out, 100);
  ASSERT_OK_AND_ASSIGN(TableFiles after, wh->Files("geo.places"));
  EXPECT_EQ(after.files.size(), 1u);
  EXPECT_EQ(after.records, 100);
  EXPECT_EQ(wh->metrics().counter("compact.rows_out")->value(), 100);

  EXPECT_THAT(wh->Compact("geo.missing", options), IsError(ErrorCode::kNotFound));
  maintenance::CompactOptions bad = options;
  bad.where = "pop > 1";
  bad.bbox = geo::Envelope{0, 0, 1, 1};
  EXPECT_THAT(wh->Compact("geo.places", bad), IsError(ErrorCode::kInvalidArgument));
  wh->RequestStop();
  auto stopped = wh->Compact("geo.places", options);
  const Status st = stopped.ok() ? stopped->status : stopped.status();
  EXPECT_THAT(st, IsErrorWith(ErrorCode::kCancelled, "stop requested"));
}

TEST_F(WarehouseTest, ExpireSnapshotsDropsTheReplacedFilesOnTheExecutor) {
  auto wh = Open();
  const std::string source = WritePoints("places.geojsonl", 100);
  pipeline::IngestSummary summary;
  ASSERT_OK(wh->Ingest("geo.places", {source}, Creating(/*unit_rows=*/10), &summary));
  ASSERT_OK_AND_ASSIGN(TableFiles small, wh->Files("geo.places"));
  maintenance::CompactOptions compact;
  compact.plan.rewrite_all = true;
  ASSERT_OK_AND_ASSIGN(maintenance::CompactReport compacted, wh->Compact("geo.places", compact));
  ASSERT_OK(compacted.status);

  maintenance::ExpireOptions options;
  options.older_than_ms = table::NowMillis() + 1000;  // every snapshot is old enough
  options.dry_run = true;
  ASSERT_OK_AND_ASSIGN(maintenance::ExpireReport dry, wh->ExpireSnapshots("geo.places", options));
  EXPECT_EQ(dry.deleted_data_files, static_cast<std::int64_t>(small.files.size()));
  for (const DataFileInfo& f : small.files) EXPECT_TRUE(fs::exists(f.entry.data_file.file_path));

  options.dry_run = false;
  ASSERT_OK_AND_ASSIGN(maintenance::ExpireReport r, wh->ExpireSnapshots("geo.places", options));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.deleted, dry.deleted);
  for (const DataFileInfo& f : small.files) EXPECT_FALSE(fs::exists(f.entry.data_file.file_path));
  ASSERT_OK_AND_ASSIGN(table::Table t, wh->Snapshots("geo.places"));
  EXPECT_EQ(t.metadata.snapshots.size(), 1u);
  ASSERT_OK_AND_ASSIGN(TableFiles after, wh->Files("geo.places"));
  EXPECT_EQ(after.records, 100);
  EXPECT_EQ(wh->metrics().counter("expire.data_files_deleted")->value(),
            static_cast<std::int64_t>(small.files.size()));

  EXPECT_THAT(wh->ExpireSnapshots("geo.missing", options), IsError(ErrorCode::kNotFound));
  maintenance::ExpireOptions bad = options;
  bad.retain_last = 0;
  EXPECT_THAT(wh->ExpireSnapshots("geo.places", bad), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK(wh->Ingest("geo.places", {WritePoints("more.geojsonl", 20)}, Creating(), &summary));
  wh->RequestStop();
  auto stopped = wh->ExpireSnapshots("geo.places", options);
  const Status st = stopped.ok() ? stopped->status : stopped.status();
  EXPECT_THAT(st, IsErrorWith(ErrorCode::kCancelled, "stop requested"));
}

TEST_F(WarehouseTest, RewriteManifestsMergesTheIngestsManifestsAndCountsThem) {
  auto wh = Open();
  pipeline::IngestSummary summary;
  ASSERT_OK(wh->Ingest("geo.places", {WritePoints("a.geojsonl", 30)}, Creating(), &summary));
  ASSERT_OK(wh->Ingest("geo.places", {WritePoints("b.geojsonl", 20)}, Creating(), &summary));
  ASSERT_OK(wh->Ingest("geo.places", {WritePoints("c.geojsonl", 10)}, Creating(), &summary));
  ASSERT_OK_AND_ASSIGN(table::Table before, wh->Snapshots("geo.places"));
  const std::size_t snapshots = before.metadata.snapshots.size();
  ASSERT_GE(snapshots, 3u);

  ASSERT_OK_AND_ASSIGN(maintenance::RewriteManifestsReport r,
                       wh->RewriteManifests("geo.places", maintenance::RewriteManifestsOptions{}));
  EXPECT_FALSE(r.noop);
  EXPECT_GE(r.plan.input_manifests, 3);
  EXPECT_EQ(r.plan.manifests.size(), 1u);
  ASSERT_OK_AND_ASSIGN(table::Table after, wh->Snapshots("geo.places"));
  EXPECT_EQ(after.metadata.snapshots.size(), snapshots + 1);
  EXPECT_EQ(after.metadata.current_snapshot()->summary.at("operation"), "replace");
  ASSERT_OK_AND_ASSIGN(TableFiles files, wh->Files("geo.places"));
  EXPECT_EQ(files.records, 60);
  EXPECT_EQ(wh->metrics().counter("rewrite_manifests.manifests_before")->value(),
            r.plan.input_manifests);
  EXPECT_EQ(wh->metrics().counter("rewrite_manifests.manifests_after")->value(), 1);

  EXPECT_THAT(wh->RewriteManifests("geo.missing", maintenance::RewriteManifestsOptions{}),
              IsError(ErrorCode::kNotFound));
  maintenance::RewriteManifestsOptions bad;
  bad.target_manifest_size_bytes = -1;
  EXPECT_THAT(wh->RewriteManifests("geo.places", bad), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK(wh->Ingest("geo.places", {WritePoints("d.geojsonl", 5)}, Creating(), &summary));
  wh->RequestStop();
  EXPECT_THAT(wh->RewriteManifests("geo.places", maintenance::RewriteManifestsOptions{}),
              IsErrorWith(ErrorCode::kCancelled, "stop requested"));
  ASSERT_OK_AND_ASSIGN(table::Table stopped, wh->Snapshots("geo.places"));
  EXPECT_EQ(stopped.metadata.snapshots.size(), snapshots + 2);  // the ingest, no rewrite
}

TEST_F(WarehouseTest, MaintainRunsExactlyTheCrossedThresholds) {
  auto wh = Open();
  pipeline::IngestSummary summary;
  for (const char* name : {"a.geojsonl", "b.geojsonl", "c.geojsonl"}) {
    ASSERT_OK(
        wh->Ingest("geo.places", {WritePoints(name, 30)}, Creating(/*unit_rows=*/10), &summary));
  }
  ASSERT_OK_AND_ASSIGN(TableFiles before, wh->Files("geo.places"));
  ASSERT_GE(before.files.size(), 6u) << "one small file per unit";
  ASSERT_OK_AND_ASSIGN(table::Table t, wh->LoadTable("geo.places"));
  const std::string stray = t.metadata.location + "/data/stray.parquet";
  { std::ofstream(stray) << "not referenced"; }

  maintenance::PolicyCheck check = maintenance::ParsePolicy(
      R"({"crs": "EPSG:4326", "retention_days": 14, "max_concurrent_compactions": 2,
          "max_manifests_per_snapshot": 2})");
  ASSERT_TRUE(check.policy.has_value()) << ::testing::PrintToString(check.errors);
  const maintenance::MaintenancePolicy& policy = *check.policy;
  auto runs = [](const maintenance::MaintainReport& r) {
    std::vector<bool> out;
    for (const maintenance::TaskDecision& d : r.decisions) out.push_back(d.run);
    return out;
  };

  // Now: the small files and the manifests cross their thresholds; the snapshots and the stray
  // file are too young. A dry run changes nothing.
  ASSERT_OK_AND_ASSIGN(maintenance::MaintainReport dry,
                       wh->Maintain("geo.places", policy, {.dry_run = true}));
  EXPECT_THAT(runs(dry), ::testing::ElementsAre(true, true, false, false));
  EXPECT_EQ(dry.measurement.live_files, static_cast<std::int64_t>(before.files.size()));
  EXPECT_EQ(dry.measurement.small_files, dry.measurement.live_files);
  EXPECT_GE(dry.measurement.manifests, 3);
  EXPECT_EQ(dry.measurement.snapshots, 3);
  EXPECT_EQ(dry.measurement.expirable_snapshots, 0);
  EXPECT_EQ(dry.measurement.orphan_files, 0);
  EXPECT_EQ(dry.measurement.metadata_files, 4);  // create + three ingests
  EXPECT_FALSE(dry.compact.has_value());
  ASSERT_OK_AND_ASSIGN(TableFiles unchanged, wh->Files("geo.places"));
  EXPECT_EQ(unchanged.files.size(), before.files.size());

  ASSERT_OK_AND_ASSIGN(maintenance::MaintainReport now, wh->Maintain("geo.places", policy));
  ASSERT_OK(now.status);
  EXPECT_THAT(runs(now), ::testing::ElementsAre(true, true, false, false));
  ASSERT_TRUE(now.compact.has_value());
  EXPECT_EQ(now.compact->rows_out, 90);
  ASSERT_TRUE(now.rewrite_manifests.has_value());
  EXPECT_FALSE(now.expire.has_value());
  EXPECT_FALSE(now.orphans.has_value());
  ASSERT_OK_AND_ASSIGN(TableFiles compacted, wh->Files("geo.places"));
  EXPECT_EQ(compacted.files.size(), 1u);
  EXPECT_EQ(compacted.records, 90);
  EXPECT_TRUE(fs::exists(stray));
  EXPECT_EQ(wh->metrics().counter("maintain.ran.compact")->value(), 1);
  EXPECT_EQ(wh->metrics().counter("maintain.ran.expire-snapshots")->value(), 0);

  // Twenty days on: nothing is small any more, but every snapshot but the newest is older than
  // the retention and the stray file older than 72 hours.
  const std::int64_t later = table::NowMillis() + std::int64_t{20} * 24 * 3600 * 1000;
  ASSERT_OK_AND_ASSIGN(maintenance::MaintainReport aged,
                       wh->Maintain("geo.places", policy, {.now_ms = later}));
  ASSERT_OK(aged.status);
  EXPECT_THAT(runs(aged), ::testing::ElementsAre(false, false, true, true));
  EXPECT_EQ(aged.measurement.orphan_files, 1);
  ASSERT_TRUE(aged.expire.has_value());
  EXPECT_EQ(static_cast<std::int64_t>(aged.expire->selection.expired.size()),
            aged.measurement.snapshots - 1);
  ASSERT_TRUE(aged.orphans.has_value());
  EXPECT_FALSE(fs::exists(stray));
  for (const DataFileInfo& f : before.files) EXPECT_FALSE(fs::exists(f.entry.data_file.file_path));
  ASSERT_OK_AND_ASSIGN(table::Table after, wh->Snapshots("geo.places"));
  EXPECT_EQ(after.metadata.snapshots.size(), 1u);
  ASSERT_OK_AND_ASSIGN(TableFiles kept, wh->Files("geo.places"));
  EXPECT_EQ(kept.records, 90);

  // A policy for another CRS touches nothing.
  maintenance::MaintenancePolicy albers = policy;
  albers.crs = "EPSG:5070";
  EXPECT_THAT(wh->Maintain("geo.places", albers),
              IsErrorWith(ErrorCode::kInvalidArgument, "the policy expects EPSG:5070"));
  EXPECT_THAT(wh->Maintain("geo.missing", policy), IsError(ErrorCode::kNotFound));
}

TEST_F(WarehouseTest, JoinRunsOnTheRunnerWithTheWarehouseEngine) {
  auto wh = Open();
  const std::string points = WritePoints("places.geojsonl", 100);
  // One square over x in [-5, 5], y in [0, 10]: places 45..55.
  const std::string zones = (dir_ / "zones.geojsonl").string();
  {
    std::ofstream out(zones);
    out << R"({"type":"Feature","properties":{"zone":"centre"},"geometry":{"type":"Polygon",)"
        << R"("coordinates":[[[-5,0],[5,0],[5,10],[-5,10],[-5,0]]]}})"
        << "\n";
  }
  ops::InputSpec left;
  left.sources = {points};
  ops::InputSpec right;
  right.sources = {zones};
  ops::JoinOptions join;  // intersects, inner
  ops::OutputSpec output;
  output.table = "geo.places_in_zones";
  ops::RunSummary summary;
  ops::JoinReport report;
  ASSERT_OK(wh->Join(left, right, join, output, {}, &summary, &report));
  EXPECT_EQ(report.pairs, 11);
  EXPECT_EQ(summary.totals.rows_out, 11);
  EXPECT_TRUE(summary.table_created);
  ASSERT_OK_AND_ASSIGN(TableDescription described, wh->Describe("geo.places_in_zones"));
  EXPECT_EQ(described.records, 11);
  EXPECT_GE(wh->metrics().counter("rows_in")->value(), 100);

  // A re-run finds its units committed and adds nothing.
  ASSERT_OK(wh->Join(left, right, join, output, {}, &summary, nullptr));
  ASSERT_OK_AND_ASSIGN(described, wh->Describe("geo.places_in_zones"));
  EXPECT_EQ(described.records, 11);

  ops::JoinOptions bad = join;
  bad.predicate = ops::JoinPredicate::kDWithin;
  bad.distance = -1;
  EXPECT_THAT(wh->Join(left, right, bad, output, {}, &summary, nullptr),
              IsError(ErrorCode::kInvalidArgument));
  wh->RequestStop();
  output.table = "geo.other";
  EXPECT_THAT(wh->Join(left, right, join, output, {}, &summary, nullptr),
              IsErrorWith(ErrorCode::kCancelled, "stop requested"));
}

TEST_F(WarehouseTest, ProfileRunsOnTheExecutor) {
  auto wh = Open(Engine(2));
  const std::string source = WritePoints("places.geojsonl", 40);
  ASSERT_OK_AND_ASSIGN(ops::ProfileReport report, wh->Profile(source, {}));
  EXPECT_EQ(report.features, 40);
  EXPECT_THAT(wh->Profile((dir_ / "missing.gpkg").string(), {}), IsError(ErrorCode::kNotFound));
  // A file-only use never touched the catalog.
  EXPECT_FALSE(fs::exists(fs::path(location_) / "catalog.db"));
}

// Methods may be called concurrently: ingests into two tables and queries at once share one
// executor and one catalog, and every row arrives exactly once.
TEST_F(WarehouseTest, ConcurrentOperationsShareTheEngine) {
  auto wh = Open(Engine(2));
  const std::string a = WritePoints("a.geojsonl", 200);
  const std::string b = WritePoints("b.geojsonl", 300);
  std::vector<Status> results(4);
  {
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
      pipeline::IngestSummary s;
      results[0] = wh->Ingest("geo.a", {a}, Creating(50), &s);
    });
    threads.emplace_back([&] {
      pipeline::IngestSummary s;
      results[1] = wh->Ingest("geo.b", {b}, Creating(50), &s);
    });
    for (std::thread& t : threads) t.join();
  }
  ASSERT_OK(results[0]);
  ASSERT_OK(results[1]);
  std::vector<std::int64_t> rows(2, 0);
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        CollectSink sink;
        Result<query::QueryExplain> explain = wh->Query(i == 0 ? "geo.a" : "geo.b", {}, &sink);
        results[2 + i] = explain.status();
        rows[i] = sink.rows();
      });
    }
    for (std::thread& t : threads) t.join();
  }
  EXPECT_OK(results[2]);
  EXPECT_OK(results[3]);
  EXPECT_EQ(rows[0], 200);
  EXPECT_EQ(rows[1], 300);
}

// The rule of docs/api.md "Threads", checked over the source tree as its grep checks it: only
// the executor (core/thread_pool) and the documented service threads start threads, and only
// the Warehouse makes an executor. Tests and their helpers are exempt (they play several
// processes at once).
TEST(ThreadRuleTest, OnlyTheExecutorAndServiceThreadsStartThreads) {
  const fs::path root = fs::path(::geolake::testing::SourceDir()) / "src" / "geolake";
  // std::thread::id only names a thread (ops/reproject.cc counts the threads a feature used).
  const std::regex starts_threads(
      R"(std::(thread|jthread)\b(?!::id)|std::async|pthread_create|tbb::|ThreadPool::Make)");
  const std::regex comment(R"(^\s*//)");
  const std::regex exempt(R"((_test\.cc|test_util\.h|testing\.h)$)");
  const std::set<std::string> allowed = {"core/thread_pool.h",
                                         "core/thread_pool.cc",  // the executor
                                         "core/stop.h",
                                         "core/stop.cc",  // signal and deadline watcher
                                         "pipeline/progress.h",
                                         "pipeline/progress.cc",  // the status line
                                         "pipeline/commit_coordinator.h",
                                         "pipeline/commit_coordinator.cc",  // one per ingest
                                         "warehouse/warehouse.cc"};  // makes the one executor
  std::set<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || std::regex_search(name, exempt)) continue;
    if (entry.path().extension() != ".cc" && entry.path().extension() != ".h") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (std::regex_search(line, comment) || !std::regex_search(line, starts_threads)) continue;
      found.insert(entry.path().lexically_relative(root).string());
      break;
    }
  }
  ASSERT_FALSE(ec) << ec.message();
  for (const std::string& file : found) {
    EXPECT_TRUE(allowed.contains(file))
        << file << " starts a thread or an executor of its own: take the caller's "
        << "ThreadPool* executor (docs/api.md \"Threads\")";
  }
  // The check reads what it thinks it reads.
  EXPECT_TRUE(found.contains("core/thread_pool.cc"));
  EXPECT_TRUE(found.contains("pipeline/commit_coordinator.cc"));
}

}  // namespace
}  // namespace geolake
