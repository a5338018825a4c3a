// Memory: 1,000 batches of wide polygons (more bytes than the budget) ingested with a 256 MiB
// budget; the process's peak RSS (VmHWM, reset before the ingest) stays under the budget plus
// a stated overhead.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/pipeline/ingest.h"
#include "geolake/testing/testing.h"

namespace geolake::pipeline {
namespace {

namespace fs = std::filesystem;

std::int64_t StatusKiB(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  }
  return -1;
}

// One batch of `rows` polygons of `vertices` vertices each (a circle around a point).
geoparquet::FeatureBatch WidePolygons(int batch_idx, int rows, int vertices) {
  geoparquet::FeatureBatch batch;
  batch.fields = {{"id", geoparquet::FieldType::kInt64}};
  batch.columns.resize(1);
  batch.columns[0].type = geoparquet::FieldType::kInt64;
  for (int r = 0; r < rows; ++r) {
    const std::int64_t id = static_cast<std::int64_t>(batch_idx) * rows + r;
    batch.columns[0].valid.push_back(1);
    batch.columns[0].ints.push_back(id);
    const double cx = -170.0 + static_cast<double>(id % 340);
    const double cy = -80.0 + static_cast<double>((id * 7) % 160);
    geo::FlatGeometry polygon;
    polygon.parts.push_back({geo::GeometryType::kPolygon, 1, 0, 1});
    polygon.rings.push_back({0, static_cast<std::uint32_t>(vertices + 1)});
    for (int v = 0; v <= vertices; ++v) {
      const double a = 2 * M_PI * (v % vertices) / vertices;
      polygon.coords.push_back(cx + 0.4 * std::cos(a));
      polygon.coords.push_back(cy + 0.4 * std::sin(a));
    }
    batch.wkb += geo::WriteWkb(polygon);
    batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
    batch.geometry_valid.push_back(1);
    batch.feature_index.push_back(id);
  }
  return batch;
}

TEST(IngestMemoryTest, PeakRssStaysWithinTheBudgetPlusAStatedOverhead) {
  constexpr int kBatches = 1000;
  constexpr int kRows = 6;
  constexpr int kVertices = 3000;  // 48 KB of WKB per polygon: 1,000 x 6 x 48 KB = 288 MB
  constexpr std::int64_t kBudget = std::int64_t{256} << 20;
  const fs::path dir =
      fs::temp_directory_path() / ("geolake_ingest_memory_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto io = io::MakeLocalFileIO();

  // The source: a GeoParquet file with one row group per batch, streamed (no sort), so
  // writing it holds one batch at a time.
  const std::string source = (dir / "wide.parquet").string();
  {
    ASSERT_OK_AND_ASSIGN(auto stream, io->OpenWrite(source, /*overwrite=*/true));
    geoparquet::GeoParquetOptions options;
    options.order = geoparquet::RowOrder::kNone;
    options.row_group_rows = kRows;
    options.compression.codec = parquet::CompressionCodec::kUncompressed;
    geoparquet::SourceLayout layout{{{"id", geoparquet::FieldType::kInt64}}, "", "EPSG:4326"};
    ASSERT_OK_AND_ASSIGN(auto writer,
                         geoparquet::GeoParquetFileWriter::Open(stream.get(), layout, options));
    for (int b = 0; b < kBatches; ++b) ASSERT_OK(writer->Add(WidePolygons(b, kRows, kVertices)));
    ASSERT_OK(writer->Finish().status());
    ASSERT_OK(stream->Close());
  }
  const std::int64_t source_bytes = static_cast<std::int64_t>(fs::file_size(source));
  ASSERT_GT(source_bytes, kBudget);  // more data than the budget holds

  constexpr int kWorkers = 2;
  auto executor = ThreadPool::Make(kWorkers);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  // Reset the high-water mark (Linux >= 4.0) so only the ingest counts.
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  const std::int64_t before_kib = StatusKiB("VmRSS");

  auto catalog = table::MakeInMemoryCatalog();
  IngestOptions options;
  options.warehouse = (dir / "wh").string();
  options.create = true;
  options.layout.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
  options.executor = executor->get();
  options.memory_bytes = kBudget;
  options.on_invalid = InvalidPolicy::kKeep;
  // Two units of 144 MB for two workers: each worker's rows outgrow its 128 MiB share, so the
  // writers must finish files early instead of holding the whole unit.
  options.unit_rows = kBatches * kRows / 2;
  options.read_batch_rows = kRows;
  IngestSummary summary;
  Metrics metrics;
  ASSERT_OK(Ingest(*catalog, *io, *table::TableIdentifier::Parse("t.wide"), {source}, options,
                   &summary, &metrics));
  const std::int64_t peak_kib = StatusKiB("VmHWM");
  EXPECT_EQ(summary.rows_committed, kBatches * kRows);
  EXPECT_LE(summary.peak_inflight_bytes, kBudget);
  EXPECT_GT(summary.peak_inflight_bytes, kBudget / 4);  // the budget was really in use

  // The limit: the process as it stood before the ingest (test binary, GDAL/PROJ/GEOS state;
  // measured, about 37 MiB), plus the budget, plus per worker what lives outside it while a
  // file is written: the open Parquet row group (capped at budget / 8 / workers = 16 MiB,
  // counting the pages still being compressed at their codec bound), the pages being
  // compressed (at most 4 MiB uncompressed, plus their output buffers), the 8 MiB gather batch
  // of the sorted write, the read batch and its transformed copy (~0.3 MB each), zstd
  // contexts, and glibc's per-thread arena keeping freed blocks (up to ~16 MiB seen): 48 MiB
  // per worker. Measured (debug build, 2 workers): peak RSS 343,400-350,212 KiB against a limit
  // of ~397,500 KiB; heaptrack puts the heap at its peak at 317 MB, 201 MB of them in-flight
  // batches.
  constexpr std::int64_t kPerWorkerKiB = 48 << 10;
  const std::int64_t limit_kib = before_kib + (kBudget >> 10) + kWorkers * kPerWorkerKiB;
  std::printf(
      "peak RSS %lld KiB (RSS before ingest %lld KiB), limit %lld KiB; peak in flight "
      "%lld bytes; source %lld bytes\n",
      static_cast<long long>(peak_kib), static_cast<long long>(before_kib),
      static_cast<long long>(limit_kib), static_cast<long long>(summary.peak_inflight_bytes),
      static_cast<long long>(source_bytes));
  EXPECT_GT(peak_kib, 0);
  fs::remove_all(dir);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The ingest and its in-flight accounting ran above; only the RSS bound is left out. The
  // sanitizer runtimes add memory the budget does not govern (shadow memory, ASan's 256 MiB
  // quarantine, TSan's access history): under TSan this ingest peaked at 1,560,076 KiB against
  // the limit of 486,200 KiB. The debug build (`make test`) checks the bound.
  GTEST_SKIP() << "[skip:sanitizer] peak RSS " << peak_kib << " KiB not compared with the limit "
               << limit_kib << " KiB: a sanitizer runtime's own memory is not in the budget";
#else
  EXPECT_LE(peak_kib, limit_kib);
#endif
}

}  // namespace
}  // namespace geolake::pipeline
