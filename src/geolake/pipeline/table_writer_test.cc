#include "geolake/pipeline/table_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/wkt.h"
#include "geolake/testing/testing.h"

namespace geolake::pipeline {
namespace {

namespace fs = std::filesystem;
using geoparquet::FieldType;

class TableWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("geolake_table_writer_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    io_ = io::MakeLocalFileIO();
    layout::LayoutOptions layout;
    layout.partition = {layout::PartitionKind::kQuadkey, 1};
    auto created =
        layout::LayoutNewTable({{"name", FieldType::kString}, {"n", FieldType::kInt64}}, layout);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    created->location = dir_.string();
    auto metadata = table::NewTableMetadata(*created);
    ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
    auto options = TableWriteOptionsFor(*metadata);
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    options_ = std::move(*options);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `rows` points around (x, y), in the table's attribute layout.
  static std::pair<geoparquet::FeatureBatch, std::vector<geo::WkbSummary>> Points(int rows,
                                                                                  double x,
                                                                                  double y) {
    geoparquet::FeatureBatch batch;
    batch.fields = {{"name", FieldType::kString}, {"n", FieldType::kInt64}};
    batch.columns.resize(2);
    batch.columns[0].type = FieldType::kString;
    batch.columns[1].type = FieldType::kInt64;
    std::vector<geo::WkbSummary> summaries;
    for (int i = 0; i < rows; ++i) {
      batch.columns[0].valid.push_back(1);
      batch.columns[0].bytes += "p" + std::to_string(i);
      batch.columns[0].offsets.push_back(static_cast<std::int64_t>(batch.columns[0].bytes.size()));
      batch.columns[1].valid.push_back(1);
      batch.columns[1].ints.push_back(i);
      const std::string wkb = geo::WriteWkb(geo::FlatGeometry::MakePoint(x + i * 1e-3, y));
      batch.wkb += wkb;
      batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
      batch.geometry_valid.push_back(1);
      batch.feature_index.push_back(i);
      summaries.push_back(*geo::SummarizeWkb(geo::AsBytes(wkb)));
    }
    return {std::move(batch), std::move(summaries)};
  }

  fs::path dir_;
  std::unique_ptr<io::FileIO> io_;
  TableWriteOptions options_;
};

TEST_F(TableWriterTest, WritesOneFilePerCellWithTableFieldIdsAndPartitionValues) {
  MemoryBudget budget(64 << 20);
  PartitionedWriter writer(&options_, io_.get(), &budget, 64 << 20);
  for (const auto& [cell, x] : std::vector<std::pair<std::string, double>>{{"1", 10}, {"0", -10}}) {
    auto [batch, summaries] = Points(100, x, 10);
    ASSERT_OK(writer.Add(cell, std::move(batch), std::move(summaries)));
  }
  ASSERT_OK(writer.FinishAll());
  EXPECT_EQ(budget.reserved_bytes(), 0);
  const std::vector<WrittenFile> files = writer.TakeWritten();
  ASSERT_EQ(files.size(), 2u);
  for (const WrittenFile& file : files) {
    EXPECT_EQ(file.rows, 100);
    EXPECT_THAT(file.path, ::testing::HasSubstr("/data/geo_cell="));
    ASSERT_EQ(file.data_file.partition.size(), 1u);
    const std::string cell = std::get<std::string>(file.data_file.partition[0]);
    EXPECT_THAT(file.path, ::testing::HasSubstr("geo_cell=" + cell + "/"));
    ASSERT_OK_AND_ASSIGN(auto input, io_->OpenRead(file.path));
    ASSERT_OK_AND_ASSIGN(auto reader, parquet::FileReader::Open(input.get()));
    // Every leaf carries the id of the table column of the same name.
    for (const parquet::LeafColumn& leaf : reader->schema().leaves()) {
      const table::NestedField* field = options_.schema->FindField(leaf.dotted_path());
      ASSERT_NE(field, nullptr) << leaf.dotted_path();
      EXPECT_EQ(leaf.field_id, field->id) << leaf.dotted_path();
    }
    const int cell_leaf = reader->schema().LeafIndex("geo_cell");
    ASSERT_OK_AND_ASSIGN(auto column, reader->ReadColumn(0, cell_leaf));
    EXPECT_EQ(column.bytes_at(0), cell);
    EXPECT_EQ(file.data_file.record_count, 100);
  }
}

TEST_F(TableWriterTest, RollsAtTargetSizeAndFlushesEarlyUnderAFullBudget) {
  options_.target_file_size_bytes = 4000;
  MemoryBudget budget(64 << 20);
  PartitionedWriter rolling(&options_, io_.get(), &budget, 64 << 20);
  for (int b = 0; b < 10; ++b) {
    auto [batch, summaries] = Points(50, 10, 10);
    ASSERT_OK(rolling.Add(std::string("1"), std::move(batch), std::move(summaries)));
  }
  ASSERT_OK(rolling.FinishAll());
  const auto rolled = rolling.TakeWritten();
  EXPECT_GE(rolled.size(), 3u);
  std::int64_t rows = 0;
  for (const auto& f : rolled) rows += f.rows;
  EXPECT_EQ(rows, 500);

  // A budget of about two batches: the writer finishes its largest file instead of growing.
  options_.target_file_size_bytes = std::int64_t{1} << 30;
  auto [probe, probe_summaries] = Points(50, 10, 10);
  const std::int64_t batch_bytes = probe.ByteSize();
  MemoryBudget small(batch_bytes * 5 / 2);
  PartitionedWriter pressed(&options_, io_.get(), &small, std::int64_t{1} << 30);
  for (int b = 0; b < 6; ++b) {
    auto [batch, summaries] = Points(50, b % 2 == 0 ? 10 : -10, 10);
    ASSERT_OK(
        pressed.Add(std::string(b % 2 == 0 ? "1" : "0"), std::move(batch), std::move(summaries)));
    EXPECT_LE(small.reserved_bytes(), small.capacity_bytes());
  }
  ASSERT_OK(pressed.FinishAll());
  EXPECT_LE(small.peak_bytes(), small.capacity_bytes());
  EXPECT_GE(pressed.TakeWritten().size(), 3u);
}

TEST_F(TableWriterTest, AbortPublishesNothing) {
  MemoryBudget budget(64 << 20);
  {
    PartitionedWriter writer(&options_, io_.get(), &budget, 64 << 20);
    auto [batch, summaries] = Points(10, 10, 10);
    ASSERT_OK(writer.Add(std::string("1"), std::move(batch), std::move(summaries)));
    writer.Abort();
    EXPECT_TRUE(writer.TakeWritten().empty());
  }
  EXPECT_EQ(budget.reserved_bytes(), 0);
  std::int64_t parquet_files = 0;
  if (fs::exists(dir_)) {
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      if (entry.path().extension() == ".parquet") ++parquet_files;
    }
  }
  EXPECT_EQ(parquet_files, 0);
}

TEST(ParquetSchemaForTableTest, RefusesTypesIngestCannotWrite) {
  table::Schema schema(0, {table::NestedField::Optional(
                              1, "tags", table::Type::List(2, false, table::Type::String()))});
  EXPECT_THAT(ParquetSchemaForTable(schema).status(),
              ::geolake::testing::IsError(ErrorCode::kNotImplemented));
}

}  // namespace
}  // namespace geolake::pipeline
