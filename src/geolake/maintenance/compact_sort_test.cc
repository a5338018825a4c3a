// The sort and hilbert strategies of compaction (compact_sort.cc): order, spilling within the
// budget, sorted-run detection and its fallback, --sort-order parsing.
#include <gtest/gtest.h>

#include <filesystem>

#include "geolake/core/thread_pool.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/hilbert.h"
#include "geolake/maintenance/compact.h"
#include "geolake/maintenance/compact_test_util.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/scan.h"
#include "geolake/testing/on_write_io.h"
#include "geolake/testing/testing.h"

namespace geolake::maintenance {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using namespace ::geolake::maintenance::testing;  // NOLINT(google-build-using-namespace)

// A file's values of one leaf column, in row order (nullopt = null).
struct ColumnValues {
  std::vector<std::optional<std::int64_t>> ints;
  std::vector<std::optional<std::string>> strings;
};

ColumnValues ReadColumn(const io::FileIO& io, const std::string& path, const std::string& leaf) {
  ColumnValues out;
  auto file = io.OpenRead(path).value();
  auto reader =
      parquet::FileReader::Open(std::shared_ptr<const io::RandomAccessFile>(std::move(file)))
          .value();
  const int l = reader->schema().LeafIndex(leaf);
  EXPECT_GE(l, 0) << leaf;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    parquet::ColumnData d = reader->ReadColumn(rg, l).value();
    std::int64_t vi = 0;
    for (std::int64_t r = 0; r < d.num_levels(); ++r) {
      const bool present = d.max_definition_level == 0 || d.def_levels[r] == d.max_definition_level;
      if (d.type == parquet::PhysicalType::kByteArray) {
        out.strings.push_back(present ? std::optional(std::string(d.bytes_at(vi))) : std::nullopt);
      } else {
        out.ints.push_back(present ? std::optional(d.int64_values[vi]) : std::nullopt);
      }
      if (present) ++vi;
    }
  }
  return out;
}

class CompactSortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    warehouse_ = ::geolake::testing::BuildDir() + "/maintenance_compact_sort_test/" + info->name();
    fs::remove_all(warehouse_);
    fs::create_directories(warehouse_);
    location_ = warehouse_ + "/ns/t";
    id_ = table::TableIdentifier::Parse("ns.t").value();
  }

  void Build(int files, int rows, bool unsorted_table = false) {
    BuildAt(id_, location_, files, rows, unsorted_table);
  }
  void BuildAt(const table::TableIdentifier& id, const std::string& location, int files, int rows,
               bool unsorted_table = false) {
    ASSERT_OK(CreateTestTable(*catalog_, *io_, id, location, false, {}, unsorted_table).status());
    for (int f = 0; f < files; ++f) {
      ASSERT_OK(AppendSmallFile(*catalog_, *io_, id, std::int64_t{f} * rows, rows, "",
                                static_cast<std::uint64_t>(f + 1))
                    .status());
    }
  }

  table::Table Load(const table::TableIdentifier& id) {
    return table::LoadTable(*catalog_, *io_, id).value();
  }
  table::Table Load() { return Load(id_); }
  std::vector<table::ManifestEntry> LiveFiles(const table::TableIdentifier& id) {
    return table::PlanScan(*io_, Load(id).metadata).value().data_files;
  }
  std::vector<table::ManifestEntry> LiveFiles() { return LiveFiles(id_); }

  // The ids of a table's live files, file after file, each in row order.
  std::vector<std::optional<std::int64_t>> IdsInFileOrder(const table::TableIdentifier& id) {
    std::vector<std::optional<std::int64_t>> ids;
    for (const auto& e : LiveFiles(id)) {
      const ColumnValues v = ReadColumn(*io_, e.data_file.file_path, "id");
      ids.insert(ids.end(), v.ints.begin(), v.ints.end());
    }
    return ids;
  }

  CompactOptions Options(CompactStrategy strategy) {
    CompactOptions o;
    o.strategy = strategy;
    o.plan.target_file_size_bytes = 64 << 20;
    o.memory_bytes = 64 << 20;
    o.temp_dir = warehouse_ + "/.geolake-tmp";
    return o;
  }

  // Every live file's geo_hilbert keys are ascending (nulls last) and its footer says so.
  void ExpectHilbertSorted() {
    for (const auto& e : LiveFiles()) {
      const ColumnValues keys = ReadColumn(*io_, e.data_file.file_path, "geo_hilbert");
      std::int64_t last = -1;
      bool seen_null = false;
      for (const auto& k : keys.ints) {
        if (!k) {
          seen_null = true;
          continue;
        }
        EXPECT_FALSE(seen_null) << "a key after a null";
        EXPECT_GE(*k, last);
        last = *k;
      }
      auto file = io_->OpenRead(e.data_file.file_path).value();
      auto reader =
          parquet::FileReader::Open(std::shared_ptr<const io::RandomAccessFile>(std::move(file)))
              .value();
      ASSERT_GT(reader->num_row_groups(), 0);
      EXPECT_EQ(reader->row_group(0).sorting_columns.size(), 1u);
    }
  }

  std::vector<std::string> TempFolders() {
    std::vector<std::string> out;
    if (!fs::exists(warehouse_ + "/.geolake-tmp")) return out;
    for (const auto& e : fs::directory_iterator(warehouse_ + "/.geolake-tmp")) {
      out.push_back(e.path().string());
    }
    return out;
  }

  std::string warehouse_, location_;
  table::TableIdentifier id_;
  std::unique_ptr<io::FileIO> io_ = io::MakeLocalFileIO();
  std::unique_ptr<table::Catalog> catalog_ = table::MakeInMemoryCatalog();
};

TEST_F(CompactSortTest, HilbertMergesSortedFilesAsRunsWithoutSpilling) {
  Build(10, 300);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  ASSERT_OK_AND_ASSIGN(CompactReport r,
                       Compact(*catalog_, *io_, id_, Options(CompactStrategy::kHilbert)));
  ASSERT_OK(r.status);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].runs, 10);  // every ingest file is a Hilbert-sorted run
  EXPECT_EQ(r.groups[0].spilled_runs, 0);
  const auto live = LiveFiles();
  ASSERT_EQ(live.size(), 1u);
  // The layout's sort order (geo_hilbert ASC NULLS LAST) is order 1: the file says it follows it.
  EXPECT_EQ(live[0].data_file.sort_order_id, Load().metadata.default_sort_order_id);
  ExpectHilbertSorted();
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);
  EXPECT_TRUE(TempFolders().empty());
}

TEST_F(CompactSortTest, HilbertSpillsMergePassesWithinASmallBudget) {
  Build(12, 2000);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  CompactOptions o = Options(CompactStrategy::kHilbert);
  o.memory_bytes = 2 << 20;  // the runs' row groups together need several times this
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.groups[0].runs, 12);
  EXPECT_GT(r.groups[0].spilled_runs, 0);  // merge passes spilled longer runs
  EXPECT_LE(r.peak_reserved_bytes, 2 << 20);
  ExpectHilbertSorted();
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);
  EXPECT_TRUE(TempFolders().empty());  // spilled runs are removed
}

// With an executor of two threads the runs' first row groups load in parallel and each chunk is
// written by a task while the merge gathers the next: the rows must leave in exactly the order
// one thread gives, with merge passes (a small budget) and without.
TEST_F(CompactSortTest, AnExecutorLoadsAndWritesBesideTheMergeInTheSameOrder) {
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(2));
  for (const std::int64_t memory : {std::int64_t{2} << 20, std::int64_t{64} << 20}) {
    SCOPED_TRACE(memory);
    const std::string suffix = std::to_string(memory);
    const auto serial = table::TableIdentifier::Parse("ns.serial" + suffix).value();
    const auto parallel = table::TableIdentifier::Parse("ns.parallel" + suffix).value();
    BuildAt(serial, warehouse_ + "/ns/serial" + suffix, 12, 2000);
    BuildAt(parallel, warehouse_ + "/ns/parallel" + suffix, 12, 2000);
    CompactOptions o = Options(CompactStrategy::kHilbert);
    o.memory_bytes = memory;
    ASSERT_OK_AND_ASSIGN(CompactReport one, Compact(*catalog_, *io_, serial, o));
    ASSERT_OK(one.status);
    o.executor = pool.get();
    ASSERT_OK_AND_ASSIGN(CompactReport two, Compact(*catalog_, *io_, parallel, o));
    ASSERT_OK(two.status);
    EXPECT_EQ(two.groups[0].runs, 12);
    EXPECT_EQ(two.groups[0].spilled_runs, one.groups[0].spilled_runs);
    if (memory == (std::int64_t{2} << 20)) {
      EXPECT_GT(two.groups[0].spilled_runs, 0);
    }
    const auto ids = IdsInFileOrder(parallel);
    EXPECT_EQ(ids.size(), 24000u);
    EXPECT_EQ(ids, IdsInFileOrder(serial));
  }
  EXPECT_TRUE(TempFolders().empty());
}

// A stop while a merge pass's first spilled run is being written by a task on the executor:
// the merge stops, waits for that task, and leaves nothing: no commit, no data file, no spill.
TEST_F(CompactSortTest, AStopDuringAMergeOnTheExecutorLeavesNothing) {
  Build(12, 2000);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  const std::string location = Load().metadata_location;
  const auto count_data_files = [&] {
    std::size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(location_ + "/data")) {
      n += e.is_regular_file() ? 1 : 0;
    }
    return n;
  };
  const std::size_t data_files = count_data_files();
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(2));
  std::stop_source stop;
  ::geolake::testing::OnWriteIO io(io_.get(), [&stop](const std::string& path) {
    if (path.ends_with(".parquet")) stop.request_stop();
  });
  CompactOptions o = Options(CompactStrategy::kHilbert);
  o.memory_bytes = 2 << 20;  // merge passes: the first file written is a spilled run
  o.executor = pool.get();
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, io, id_, o, stop.get_token()));
  EXPECT_THAT(r.status, IsError(ErrorCode::kCancelled));
  EXPECT_EQ(r.commits, 0);
  EXPECT_EQ(Load().metadata_location, location);
  EXPECT_EQ(count_data_files(), data_files);  // the spilled run and any output were deleted
  EXPECT_TRUE(TempFolders().empty());
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);
}

TEST_F(CompactSortTest, UnsortedInputsAreSortedInRunsThatFitAndSpilled) {
  Build(12, 2000);
  // Binpack output keeps row order and does not claim Hilbert order.
  CompactOptions bin = Options(CompactStrategy::kBinpack);
  bin.plan.target_file_size_bytes = 64 << 10;  // several files
  ASSERT_OK_AND_ASSIGN(CompactReport b, Compact(*catalog_, *io_, id_, bin));
  ASSERT_OK(b.status);
  ASSERT_GT(LiveFiles().size(), 3u);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));

  CompactOptions o = Options(CompactStrategy::kHilbert);
  o.plan.rewrite_all = true;
  o.memory_bytes = 2 << 20;
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  EXPECT_GT(r.groups[0].spilled_runs, 1);
  EXPECT_LE(r.peak_reserved_bytes, 2 << 20);
  ExpectHilbertSorted();
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);

  // With room for everything the rows are sorted in memory: no spill.
  o.memory_bytes = 256 << 20;
  ASSERT_OK_AND_ASSIGN(r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.groups[0].spilled_runs, 0);
}

TEST_F(CompactSortTest, AFileClaimingAnOrderItLacksIsSortedInstead) {
  Build(5, 200);
  // A file sorted over its own extent (as a plain GeoParquet writer without the table's
  // extent sorts): its footer claims geo_hilbert order, but the table's keys disagree.
  {
    const table::Table t = Load();
    auto options = pipeline::TableWriteOptionsFor(t.metadata).value();
    const std::string path = location_ + "/data/foreign.parquet";
    auto stream = io_->OpenWrite(path, false).value();
    geoparquet::GeoParquetOptions g;
    g.schema = options.parquet_schema;
    auto writer =
        geoparquet::GeoParquetFileWriter::Open(
            stream.get(), {options.fields, options.crs_projjson, options.crs_authority}, g)
            .value();
    auto [batch, summaries] = RandomPoints(50000, 400, geo::Envelope{0, 0, 1, 1}, 77);
    ASSERT_OK(writer->AddNormalized(std::move(batch), std::move(summaries)));
    auto summary = writer->Finish().value();
    ASSERT_OK(stream->Close());
    table::AppendFiles append(catalog_.get(), io_.get(), id_);
    append.AddFile(table::DataFileFromParquet(summary.metadata, path, summary.file_bytes,
                                              *t.metadata.current_schema(), {})
                       .value());
    ASSERT_OK(append.Commit().status());
  }
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  ASSERT_OK_AND_ASSIGN(CompactReport r,
                       Compact(*catalog_, *io_, id_, Options(CompactStrategy::kHilbert)));
  ASSERT_OK(r.status);
  ExpectHilbertSorted();
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);
}

TEST_F(CompactSortTest, SortOrderOrdersRowsByTheGivenColumns) {
  Build(6, 100);
  ASSERT_OK_AND_ASSIGN(auto before, SortedRows(*catalog_, *io_, id_));
  CompactOptions o = Options(CompactStrategy::kSort);
  o.sort_order = "name DESC NULLS LAST, id";
  o.memory_bytes = 1 << 20;  // small: the rows are spilled in sorted runs and merged
  ASSERT_OK_AND_ASSIGN(CompactReport r, Compact(*catalog_, *io_, id_, o));
  ASSERT_OK(r.status);
  const auto live = LiveFiles();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_FALSE(live[0].data_file.sort_order_id.has_value());  // not a table order
  const ColumnValues names = ReadColumn(*io_, live[0].data_file.file_path, "name");
  const ColumnValues ids = ReadColumn(*io_, live[0].data_file.file_path, "id");
  ASSERT_EQ(names.strings.size(), 600u);
  // Names descending, then the nulls (every 7th id), those by id ascending.
  std::size_t first_null = 0;
  while (first_null < names.strings.size() && names.strings[first_null]) ++first_null;
  EXPECT_EQ(first_null, 600u - 86u);  // ids 0..599: 86 multiples of 7
  for (std::size_t i = 1; i < names.strings.size(); ++i) {
    if (i < first_null) {
      EXPECT_GT(*names.strings[i - 1], *names.strings[i]) << "row " << i;
    } else {
      EXPECT_FALSE(names.strings[i].has_value()) << "a value after the nulls, row " << i;
      if (i > first_null) {
        EXPECT_LT(*ids.ints[i - 1], *ids.ints[i]) << "row " << i;
      }
    }
  }
  EXPECT_FALSE(names.strings.back().has_value());
  ASSERT_OK_AND_ASSIGN(auto after, SortedRows(*catalog_, *io_, id_));
  EXPECT_EQ(after, before);
}

TEST_F(CompactSortTest, SortWithoutSortOrderUsesTheTablesOrder) {
  Build(6, 100);
  ASSERT_OK_AND_ASSIGN(CompactReport r,
                       Compact(*catalog_, *io_, id_, Options(CompactStrategy::kSort)));
  ASSERT_OK(r.status);
  const auto live = LiveFiles();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].data_file.sort_order_id, Load().metadata.default_sort_order_id);
  ExpectHilbertSorted();
}

TEST_F(CompactSortTest, SortOnAnUnsortedTableNeedsASortOrder) {
  Build(6, 20, /*unsorted_table=*/true);
  EXPECT_THAT(Compact(*catalog_, *io_, id_, Options(CompactStrategy::kSort)),
              IsErrorWith(ErrorCode::kInvalidArgument, "the table has no sort order"));
  // Hilbert needs none: the key comes from each geometry.
  ASSERT_OK_AND_ASSIGN(CompactReport r,
                       Compact(*catalog_, *io_, id_, Options(CompactStrategy::kHilbert)));
  ASSERT_OK(r.status);
  EXPECT_FALSE(LiveFiles()[0].data_file.sort_order_id.has_value());
  ExpectHilbertSorted();
}

TEST_F(CompactSortTest, BadSortOrdersAreRefused) {
  Build(1, 5);
  CompactOptions o = Options(CompactStrategy::kSort);
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"nope", "sort column 'nope'"},
           {"id UP", "not 'id UP'"},
           {"id ASC NULLS FIRST x", "unexpected 'x'"},
           {"id ASC NULLS", "expected 'COL [ASC|DESC] [NULLS FIRST|LAST]'"},
           {"id,,name", "empty sort field"},
           {"zorder(id,name)", "zorder is not supported"},
           {"geometry", "sort column 'geometry'"}}) {
    o.sort_order = text;
    EXPECT_THAT(Compact(*catalog_, *io_, id_, o), IsErrorWith(ErrorCode::kInvalidArgument, message))
        << text;
  }
  o.sort_order = "bbox.xmin DESC, geo_hilbert";
  EXPECT_OK(Compact(*catalog_, *io_, id_, o).status());
}

TEST_F(CompactSortTest, StaleSpillFoldersOfDeadProcessesAreRemoved) {
  Build(6, 50);
  // pid 2^22+ is above Linux's pid_max default: no such process.
  const std::string stale = warehouse_ + "/.geolake-tmp/compact-4194999-dead";
  const std::string alive =
      warehouse_ + "/.geolake-tmp/compact-" + std::to_string(::getpid()) + "-alive";
  fs::create_directories(stale);
  fs::create_directories(alive);
  ASSERT_OK(io_->WriteAll(stale + "/run.parquet", "x", false));
  ASSERT_OK_AND_ASSIGN(CompactReport r,
                       Compact(*catalog_, *io_, id_, Options(CompactStrategy::kHilbert)));
  ASSERT_OK(r.status);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(alive));
}

}  // namespace
}  // namespace geolake::maintenance
