#include "geolake/query/scan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <random>
#include <set>

#include "geolake/core/thread_pool.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/geos.h"
#include "geolake/query/test_table.h"
#include "geolake/table/scan.h"
#include "geolake/testing/testing.h"

namespace geolake::query {
namespace {

// One row of the table, read back independently of the scan (whole files, every row).
struct Row {
  std::string file;
  std::int64_t pos = 0;
  std::optional<std::string> geoid, name, state_fips;
  std::optional<std::int64_t> hilbert;
  bool has_bbox = false;
  double xmin = 0, ymin = 0, xmax = 0, ymax = 0;
  std::string wkb;
};

using RowId = std::pair<std::string, std::int64_t>;

// Collects (file, position) of every returned row, in order.
class CollectSink : public RowSink {
 public:
  Status Begin(const OutputLayout& layout) override {
    fields = layout.fields;
    return Status::OK();
  }
  Status Write(std::string_view file, const geoparquet::FeatureBatch& rows) override {
    if (rows.fields.size() != fields.size()) return Status::Internal("fields differ");
    for (std::int64_t i = 0; i < rows.num_rows(); ++i) {
      ids.emplace_back(std::string(file), rows.feature_index[i]);
      if (!rows.geometry_valid[i]) return Status::Internal("row without geometry");
    }
    return Status::OK();
  }
  Status Finish() override {
    finished = true;
    return Status::OK();
  }
  std::vector<geoparquet::FieldDef> fields;
  std::vector<RowId> ids;
  bool finished = false;
};

class ScanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string source = ::geolake::testing::DataPath("us_counties.gpkg");
    if (!std::filesystem::exists(source)) return;
    dir_ = new std::string(std::filesystem::temp_directory_path() /
                           ("geolake_query_scan_" + std::to_string(::getpid())));
    std::filesystem::remove_all(*dir_);
    io_ = io::MakeLocalFileIO().release();
    catalog_ = table::MakeInMemoryCatalog().release();
    TestTableOptions options;
    options.source = source;
    options.location = *dir_ + "/geo/counties";
    options.rows_per_file = 400;
    options.row_group_rows = 100;
    options.page_rows = 25;
    options.commits = 2;
    auto built =
        BuildTestTable(*catalog_, *io_, *table::TableIdentifier::Parse("geo.counties"), options);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    table_ = new TestTable(std::move(*built));
    rows_ = new std::vector<Row>();
    // Table order: the current snapshot's manifest order (the newest append's files first).
    auto plan = table::PlanScan(*io_, table_->table.metadata);
    ASSERT_TRUE(plan.ok());
    for (const table::ManifestEntry& e : plan->data_files) ReadAll(e.data_file.file_path);
  }
  static void TearDownTestSuite() {
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete table_;
    delete rows_;
    delete catalog_;
    delete io_;
    delete dir_;
  }
  void SetUp() override {
    if (auto why = ::geolake::testing::MissingData("us_counties.gpkg")) GTEST_SKIP() << *why;
    ASSERT_NE(table_, nullptr) << "the test table could not be built";
  }

  static void ReadAll(const std::string& path) {
    auto file = io_->OpenRead(path);
    ASSERT_TRUE(file.ok());
    auto reader =
        parquet::FileReader::Open(std::shared_ptr<io::RandomAccessFile>(std::move(*file)));
    ASSERT_TRUE(reader.ok());
    const parquet::Schema& schema = (*reader)->schema();
    std::int64_t pos = 0;
    for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
      auto batch = (*reader)->ReadRowGroup(rg);
      ASSERT_TRUE(batch.ok());
      std::vector<std::int64_t> cursor(schema.num_leaves(), 0);
      for (std::int64_t r = 0; r < batch->num_rows; ++r) {
        Row row;
        row.file = path;
        row.pos = pos++;
        for (int l = 0; l < schema.num_leaves(); ++l) {
          const parquet::ColumnData& d = batch->columns[l];
          const bool present =
              d.max_definition_level == 0 || d.def_levels[r] == d.max_definition_level;
          if (!present) continue;
          const std::int64_t vi = cursor[l]++;
          const std::string name = schema.leaves()[l].dotted_path();
          if (name == "geoid") row.geoid = std::string(d.bytes_at(vi));
          if (name == "name") row.name = std::string(d.bytes_at(vi));
          if (name == "state_fips") row.state_fips = std::string(d.bytes_at(vi));
          if (name == "geo_hilbert") row.hilbert = d.int64_values[vi];
          if (name == "geometry") row.wkb = std::string(d.bytes_at(vi));
          if (name == "bbox.xmin") row.xmin = d.double_values[vi], row.has_bbox = true;
          if (name == "bbox.ymin") row.ymin = d.double_values[vi];
          if (name == "bbox.xmax") row.xmax = d.double_values[vi];
          if (name == "bbox.ymax") row.ymax = d.double_values[vi];
        }
        rows_->push_back(std::move(row));
      }
    }
  }

  static Result<std::pair<std::vector<RowId>, QueryExplain>> Run(const QueryOptions& options) {
    CollectSink sink;
    GEOLAKE_ASSIGN_OR_RETURN(QueryExplain explain,
                             RunQuery(*io_, table_->table.metadata, options, &sink));
    if (!sink.finished) return Status::Internal("sink not finished");
    return std::make_pair(sink.ids, explain);
  }

  static inline std::string* dir_ = nullptr;
  static inline io::FileIO* io_ = nullptr;
  static inline table::Catalog* catalog_ = nullptr;
  static inline TestTable* table_ = nullptr;
  static inline std::vector<Row>* rows_ = nullptr;
};

// A --where filter and the same predicate written directly in C++ (null = not matched).
struct Filter {
  std::string where;
  std::function<bool(const Row&)> keep;
};

bool SecondCharIs(const std::string& s, char c) {
  if (s.empty()) return false;
  const auto b = static_cast<unsigned char>(s[0]);
  const std::size_t first = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : 4;
  return s.size() > first && s[first] == c;
}

TEST_F(ScanTest, RandomBoxesAndFiltersEqualBruteForce) {
  std::mt19937_64 rng(20261129);
  std::vector<std::int64_t> keys;
  for (const Row& r : *rows_) {
    if (r.hilbert) keys.push_back(*r.hilbert);
  }
  std::sort(keys.begin(), keys.end());
  ASSERT_GT(rows_->size(), 3000u);
  std::int64_t files_pruned = 0, groups_pruned = 0, pages_pruned = 0, nonempty = 0;
  // One, two or three workers: the calling thread alone, or a pool of 2 or 3.
  ASSERT_OK_AND_ASSIGN(auto two, ThreadPool::Make(2));
  ASSERT_OK_AND_ASSIGN(auto three, ThreadPool::Make(3));
  const std::array<ThreadPool*, 3> executors = {nullptr, two.get(), three.get()};
  for (int iter = 0; iter < 60; ++iter) {
    std::uniform_real_distribution<double> ux(-125, -66), uy(24, 50), us(0.05, 8);
    const double cx = ux(rng), cy = uy(rng), w = us(rng), h = us(rng);
    const geo::Envelope box{cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
    const std::int64_t k = keys[rng() % keys.size()];
    const std::string fips = fmt::format("{:02d}", static_cast<int>(rng() % 57));
    const std::vector<Filter> filters = {
        {"", [](const Row&) { return true; }},
        {"state_fips IN ('06', '48', '13')",
         [](const Row& r) {
           return r.state_fips &&
                  (*r.state_fips == "06" || *r.state_fips == "48" || *r.state_fips == "13");
         }},
        {"name LIKE 'S%'", [](const Row& r) { return r.name && r.name->rfind("S", 0) == 0; }},
        {"state_fips >= '" + fips + "'",
         [fips](const Row& r) { return r.state_fips && *r.state_fips >= fips; }},
        {"NOT (name LIKE '%o%') OR state_fips = '36'",
         [](const Row& r) {
           const bool a = r.name && r.name->find('o') == std::string::npos;
           const bool b = r.state_fips && *r.state_fips == "36";
           return a || b;
         }},
        {"geo_hilbert < " + std::to_string(k),
         [k](const Row& r) { return r.hilbert && *r.hilbert < k; }},
        {"name IS NULL", [](const Row& r) { return !r.name; }},
        {"(state_fips < '20' AND name LIKE '_a%') OR geo_hilbert >= " + std::to_string(k),
         [k](const Row& r) {
           const bool a =
               r.state_fips && *r.state_fips < "20" && r.name && SecondCharIs(*r.name, 'a');
           return a || (r.hilbert && *r.hilbert >= k);
         }},
        {"bbox.xmin > -100.5 AND NOT geoid <> '48201'",
         [](const Row& r) {
           return r.has_bbox && r.xmin > -100.5 && r.geoid && *r.geoid == "48201";
         }},
    };
    const Filter& filter = filters[rng() % filters.size()];
    const bool with_box = iter % 7 != 0;
    QueryOptions options;
    if (with_box) options.bbox = box;
    options.where = filter.where;
    options.executor = executors[rng() % 3];
    options.page_pruning = iter % 5 != 4;
    std::vector<RowId> expected;
    for (const Row& r : *rows_) {
      const bool in_box = !with_box || (r.has_bbox && r.xmin <= box.xmax && r.xmax >= box.xmin &&
                                        r.ymin <= box.ymax && r.ymax >= box.ymin);
      if (in_box && filter.keep(r)) expected.emplace_back(r.file, r.pos);
    }
    auto got = Run(options);
    ASSERT_TRUE(got.ok()) << filter.where << ": " << got.status().ToString();
    ASSERT_EQ(got->first, expected) << "box " << box.xmin << "," << box.ymin << "," << box.xmax
                                    << "," << box.ymax << " where " << filter.where;
    const QueryExplain& e = got->second;
    EXPECT_EQ(e.rows_returned, static_cast<std::int64_t>(expected.size()));
    EXPECT_LE(e.bytes_read, e.table_bytes + 65536);
    files_pruned += e.files.pruned;
    groups_pruned += e.row_groups.pruned;
    pages_pruned += e.pages.pruned;
    nonempty += expected.empty() ? 0 : 1;
  }
  // Every level pruned something over the run, and most queries returned rows.
  EXPECT_GT(files_pruned, 0);
  EXPECT_GT(groups_pruned, 0);
  EXPECT_GT(pages_pruned, 0);
  EXPECT_GT(nonempty, 20);
}

TEST_F(ScanTest, SmallBoxReadsFewBytesAndWorkerCountKeepsOrder) {
  QueryOptions options;
  options.bbox = geo::Envelope{-100, 35, -99, 36};
  options.executor = nullptr;  // the calling thread
  ASSERT_OK_AND_ASSIGN(auto one, Run(options));
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(4));
  options.executor = pool.get();
  ASSERT_OK_AND_ASSIGN(auto four, Run(options));
  EXPECT_EQ(one.first, four.first);
  ASSERT_FALSE(one.first.empty());
  EXPECT_LT(one.second.bytes_read * 5, one.second.table_bytes) << one.second.ToText();
  EXPECT_GT(one.second.files.pruned, 0);
}

TEST_F(ScanTest, SelectDataFilesIsWhatTheScanKeepsAndEveryFileWithAMatch) {
  QueryOptions options;
  options.bbox = geo::Envelope{-100, 35, -99, 36};
  options.where = "state_fips >= '10'";
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> selected,
                       SelectDataFiles(*io_, table_->table.metadata, options));
  ASSERT_OK_AND_ASSIGN(auto run, Run(options));
  EXPECT_EQ(static_cast<std::int64_t>(selected.size()), run.second.files.kept());
  EXPECT_GT(run.second.files.pruned, 0);
  // Every file holding a matching row is selected (files that hold none may be too).
  for (const RowId& id : run.first) {
    EXPECT_NE(std::find(selected.begin(), selected.end(), id.first), selected.end()) << id.first;
  }
  options.where = "nope = 1";
  EXPECT_THAT(SelectDataFiles(*io_, table_->table.metadata, options),
              ::geolake::testing::IsError(ErrorCode::kInvalidArgument));
}

TEST_F(ScanTest, IntersectsIsExact) {
  // A thin triangle: many county bboxes overlap it without the county touching it.
  const std::string wkt = "POLYGON((-105 30,-85 44,-104 31,-105 30))";
  QueryOptions options;
  options.intersects_wkt = wkt;
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(2));
  options.executor = pool.get();
  ASSERT_OK_AND_ASSIGN(auto got, Run(options));
  ASSERT_OK_AND_ASSIGN(auto ctx, geo::GeoContext::Make());
  ASSERT_OK_AND_ASSIGN(auto tri, geo::Geometry::FromWkt(*ctx, wkt));
  std::vector<RowId> expected;
  std::int64_t bbox_only = 0;
  for (const Row& r : *rows_) {
    if (r.wkb.empty()) continue;
    ASSERT_OK_AND_ASSIGN(auto g, geo::Geometry::FromWkb(*ctx, r.wkb));
    ASSERT_OK_AND_ASSIGN(bool hit, tri.Intersects(g));
    if (hit) {
      expected.emplace_back(r.file, r.pos);
    } else if (r.xmin <= -85 && r.xmax >= -105 && r.ymin <= 44 && r.ymax >= 30) {
      ++bbox_only;
    }
  }
  EXPECT_EQ(got.first, expected);
  EXPECT_FALSE(expected.empty());
  EXPECT_GT(bbox_only, 0);  // the exact test mattered
}

TEST_F(ScanTest, TimeTravelReturnsTheOlderSnapshotsRows) {
  ASSERT_EQ(table_->snapshot_ids.size(), 2u);
  std::vector<RowId> first, all;
  const std::set<std::string> first_files(table_->commit_files[0].begin(),
                                          table_->commit_files[0].end());
  for (const Row& r : *rows_) {
    all.emplace_back(r.file, r.pos);
    if (first_files.count(r.file)) first.emplace_back(r.file, r.pos);
  }
  ASSERT_LT(first.size(), all.size());
  QueryOptions options;
  ASSERT_OK_AND_ASSIGN(auto current, Run(options));
  EXPECT_EQ(current.first, all);
  options.snapshot_id = table_->snapshot_ids[0];
  ASSERT_OK_AND_ASSIGN(auto by_id, Run(options));
  EXPECT_EQ(by_id.first, first);
  EXPECT_EQ(by_id.second.snapshot_id, table_->snapshot_ids[0]);
  options.snapshot_id.reset();
  options.as_of_ms = table_->snapshot_times_ms[0];
  ASSERT_OK_AND_ASSIGN(auto by_time, Run(options));
  EXPECT_EQ(by_time.first, first);
  options.as_of_ms = table_->snapshot_times_ms[0] - 1;
  EXPECT_EQ(Run(options).status().code(), ErrorCode::kNotFound);
  options.as_of_ms.reset();
  options.snapshot_id = 12345;
  EXPECT_EQ(Run(options).status().code(), ErrorCode::kNotFound);
}

TEST_F(ScanTest, RowGroupFilterSkipsUnitsAndEveryRowGroupReadReachesTheSink) {
  // Every other file is skipped; a box makes some kept row groups match nothing, and those
  // still reach WriteRowGroup (an operation counts them as units read).
  class UnitSink final : public CollectSink {
   public:
    Status WriteRowGroup(std::string_view file, int row_group,
                         geoparquet::FeatureBatch& rows) override {
      groups.emplace_back(std::string(file), row_group);
      return Write(file, rows);
    }
    std::vector<std::pair<std::string, int>> groups;
  };
  std::set<std::string> files;
  for (const Row& row : *rows_) files.insert(row.file);
  std::set<std::string> kept;
  bool take = true;
  for (const std::string& f : files) {
    if (take) kept.insert(f);
    take = !take;
  }
  QueryOptions options;
  options.bbox = geo::Envelope{-100, 30, -90, 40};
  options.page_pruning = false;
  options.row_group_filter = [&](const std::string& path, int) { return kept.contains(path); };
  UnitSink sink;
  ASSERT_OK_AND_ASSIGN(QueryExplain explain,
                       RunQuery(*io_, table_->table.metadata, options, &sink));
  ASSERT_FALSE(sink.groups.empty());
  EXPECT_EQ(static_cast<std::int64_t>(sink.groups.size()), explain.row_groups.kept());
  for (const auto& [file, group] : sink.groups) EXPECT_TRUE(kept.contains(file)) << file;
  // The rows returned are exactly the brute-force matches among the kept files.
  std::vector<RowId> expected;
  for (const Row& row : *rows_) {
    if (kept.contains(row.file) && row.has_bbox && row.xmin <= -90 && row.xmax >= -100 &&
        row.ymin <= 40 && row.ymax >= 30) {
      expected.emplace_back(row.file, row.pos);
    }
  }
  std::vector<RowId> got = sink.ids;
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
}

TEST_F(ScanTest, LimitKeepsTheFirstRowsInTableOrder) {
  QueryOptions options;
  options.bbox = geo::Envelope{-125, 24, -66, 50};
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(3));
  options.executor = pool.get();
  ASSERT_OK_AND_ASSIGN(auto all, Run(options));
  options.limit = 7;
  ASSERT_OK_AND_ASSIGN(auto seven, Run(options));
  ASSERT_EQ(seven.first.size(), 7u);
  EXPECT_TRUE(std::equal(seven.first.begin(), seven.first.end(), all.first.begin()));
}

TEST_F(ScanTest, BadFiltersAreInvalidArgument) {
  QueryOptions options;
  options.where = "nosuch = 1";
  auto r = Run(options);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown column 'nosuch'"), std::string::npos);
  options.where = "name > 3";
  EXPECT_EQ(Run(options).status().code(), ErrorCode::kInvalidArgument);
  options.where = "";
  options.intersects_wkt = "POLYGON((0 0";
  EXPECT_EQ(Run(options).status().code(), ErrorCode::kInvalidArgument);
  options.intersects_wkt = "";
  options.columns = {"nope"};
  EXPECT_EQ(Run(options).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace geolake::query
