#include "geolake/ops/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/wkb.h"
#include "geolake/query/scan.h"
#include "geolake/table/scan.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::testing::HasSubstr;

// The skeleton of a per-feature operation, as small as the runner lets it be: the "make-valid"
// operation repairs invalid polygons with GEOS and drops what repairs to nothing. Lines are
// refused with a kGeometryError so that the tests see the runner's error policy at work.
class MakeValidSkeleton final : public PerFeatureOperation {
 public:
  explicit MakeValidSkeleton(std::string tag = "") : tag_(std::move(tag)) {}
  std::string name() const override { return "make-valid"; }
  std::string parameters() const override { return "{\"tag\":\"" + tag_ + "\"}"; }
  Result<std::optional<std::string>> Apply(geo::GeoContext& geo, std::span<const std::uint8_t> wkb,
                                           std::string* drop_reason) const override {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(geo, wkb));
    GEOLAKE_ASSIGN_OR_RETURN(std::string type, g.TypeName());
    if (type == "LineString") return Status::GeometryError("lines are not polygons");
    GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> repaired, g.RepairIfInvalid(wkb));
    const geo::Geometry& out = repaired ? *repaired : g;
    GEOLAKE_ASSIGN_OR_RETURN(bool empty, out.IsEmpty());
    if (empty) {
      *drop_reason = "empty after repair";
      return std::optional<std::string>();
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, out.ToWkb());
    return std::optional<std::string>(std::move(bytes));
  }

 private:
  std::string tag_;
};

// Sleeps `ms` in every feature unless stopped (for the cancel tests).
class SlowOp final : public PerFeatureOperation {
 public:
  explicit SlowOp(int ms = 100) : ms_(ms) {}
  std::string name() const override { return "slow"; }
  std::string parameters() const override { return "{}"; }
  Result<std::optional<std::string>> Apply(geo::GeoContext& geo, std::span<const std::uint8_t> wkb,
                                           std::string*) const override {
    for (int i = 0; i < ms_ && !geo.stop_token().stop_requested(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (geo.stop_token().stop_requested()) return Status::Cancelled("slow op stopped");
    return std::optional<std::string>(
        std::string(reinterpret_cast<const char*>(wkb.data()), wkb.size()));
  }

 private:
  int ms_;
};

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("geolake_runner_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    catalog_ = table::MakeInMemoryCatalog();
    io_ = io::MakeLocalFileIO();
    auto pool = ThreadPool::Make(2);
    ASSERT_TRUE(pool.ok());
    pool_ = std::move(*pool);
    env_.catalog = catalog_.get();
    env_.io = io_.get();
    env_.executor = pool_.get();
    env_.metrics = &metrics_;
    env_.warehouse = (dir_ / "wh").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `n` features: unit squares on a grid, a bowtie (invalid) at 5, a line (the op refuses it)
  // at 9, a null geometry at 2, a degenerate polygon (repairs to empty) at 11.
  std::string WriteSource(const std::string& name, int n, int first_id = 0) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (int i = 0; i < n; ++i) {
      const int id = first_id + i;
      const double x = (id % 20) * 2.0;
      const double y = (id / 20) * 2.0;
      nlohmann::json geometry;
      if (i == 2) {
        geometry = nullptr;
      } else if (i == 5) {
        geometry = {{"type", "Polygon"},
                    {"coordinates", {{{x, y}, {x + 1, y + 1}, {x + 1, y}, {x, y + 1}, {x, y}}}}};
      } else if (i == 9) {
        geometry = {{"type", "LineString"}, {"coordinates", {{x, y}, {x + 1, y + 1}}}};
      } else if (i == 11) {
        geometry = {{"type", "Polygon"},
                    {"coordinates", {{{x, y}, {x + 1, y}, {x + 2, y}, {x, y}}}}};
      } else {
        geometry = {{"type", "Polygon"},
                    {"coordinates", {{{x, y}, {x + 1, y}, {x + 1, y + 1}, {x, y + 1}, {x, y}}}}};
      }
      const nlohmann::json properties = {{"id", id}, {"name", "f" + std::to_string(id)}};
      out << R"({"type":"Feature","properties":)" << properties.dump() << R"(,"geometry":)"
          << geometry.dump() << "}\n";
    }
    return path;
  }

  // The ids of a GeoJSONSeq output, in order.
  static std::vector<std::int64_t> IdsOf(const std::string& path) {
    std::vector<std::int64_t> ids;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '\x1e') line.erase(0, line.find('{'));
      if (line.empty()) continue;
      const nlohmann::json j = nlohmann::json::parse(line);
      ids.push_back(j["properties"]["id"].get<std::int64_t>());
    }
    return ids;
  }

  // The ids of a table's rows (sorted).
  std::multiset<std::int64_t> TableIds(const std::string& name) {
    std::multiset<std::int64_t> ids;
    auto t = table::LoadTable(*catalog_, *io_, *table::TableIdentifier::Parse(name));
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) return ids;
    class Collect final : public query::RowSink {
     public:
      explicit Collect(std::multiset<std::int64_t>* ids) : ids_(ids) {}
      Status Begin(const query::OutputLayout&) override { return Status::OK(); }
      Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
        for (std::size_t c = 0; c < rows.fields.size(); ++c) {
          if (rows.fields[c].name != "id") continue;
          for (std::size_t r = 0; r < rows.columns[c].size(); ++r) {
            ids_->insert(rows.columns[c].ints[r]);
          }
        }
        return Status::OK();
      }
      Status Finish() override { return Status::OK(); }
      std::multiset<std::int64_t>* ids_;
    } sink(&ids);
    EXPECT_OK(query::RunQuery(*io_, t->metadata, {}, &sink));
    return ids;
  }

  RunnerOptions Options() const {
    RunnerOptions options;
    options.memory_bytes = 64 << 20;
    options.batch_rows = 4;  // many tasks even for small inputs
    options.partition = layout::PartitionScheme{layout::PartitionKind::kNone, 0};
    return options;
  }

  fs::path dir_;
  std::unique_ptr<table::Catalog> catalog_;
  std::unique_ptr<io::FileIO> io_;
  std::unique_ptr<ThreadPool> pool_;
  Metrics metrics_;
  OpEnv env_;
};

TEST_F(RunnerTest, PerFeatureOpWritesEveryRowOrSaysWhyNot) {
  const std::string source = WriteSource("in.geojsonl", 30);
  MakeValidSkeleton op;
  RunSummary summary;
  const std::string out = (dir_ / "out.geojsonl").string();
  ASSERT_OK(RunOperation(env_, op, ResolveInput(source).value(), ParseOutput(out).value(),
                         Options(), &summary));
  // 30 in: 28 out (the null geometry kept), the degenerate one dropped, the line rejected.
  EXPECT_EQ(summary.totals.rows_in, 30);
  EXPECT_EQ(summary.totals.rows_out, 28);
  EXPECT_EQ(summary.totals.rows_emitted, 28);
  EXPECT_EQ(summary.totals.rows_rejected, 1);
  EXPECT_EQ(summary.totals.rows_dropped.at("empty after repair"), 1);
  EXPECT_THAT(summary.invariant.front(), HasSubstr("rows in 30 = emitted 28 + dropped 1"));
  // Output in input order, whatever the two workers did.
  std::vector<std::int64_t> expected;
  for (int i = 0; i < 30; ++i) {
    if (i != 9 && i != 11) expected.push_back(i);
  }
  EXPECT_EQ(IdsOf(out), expected);
  // The rejects file names the feature and the reason.
  std::ifstream rejects(summary.rejects_path);
  std::stringstream text;
  text << rejects.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("lines are not polygons"));
  EXPECT_THAT(text.str(), HasSubstr("\"feature_index\":9"));
}

TEST_F(RunnerTest, StopPolicyEndsTheRunNamingTheFeature) {
  const std::string source = WriteSource("in.geojsonl", 30);
  MakeValidSkeleton op;
  RunnerOptions options = Options();
  options.on_error = FeatureErrorPolicy::kStop;
  RunSummary summary;
  const std::string out = (dir_ / "out.geojsonl").string();
  EXPECT_THAT(RunOperation(env_, op, ResolveInput(source).value(), ParseOutput(out).value(),
                           options, &summary),
              IsErrorWith(ErrorCode::kGeometryError, "feature 9"));
  EXPECT_FALSE(fs::exists(out));  // a failed run publishes no file
}

TEST_F(RunnerTest, TableOutputIsResumedAndNotMixedWithOtherRuns) {
  const std::string a = WriteSource("a.geojsonl", 30, 0);
  const std::string b = WriteSource("b.geojsonl", 30, 100);
  InputSpec input;
  input.sources = {a, b};
  MakeValidSkeleton op;
  RunSummary first;
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput("out.valid").value(), Options(), &first));
  EXPECT_TRUE(first.table_created);
  EXPECT_EQ(first.totals.units, 2);
  EXPECT_EQ(first.rows_committed, 56);
  const auto ids = TableIds("out.valid");
  EXPECT_EQ(ids.size(), 56u);

  // The same run again: every unit is skipped and nothing is added.
  RunSummary again;
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput("out.valid").value(), Options(), &again));
  EXPECT_EQ(again.totals.units_skipped, 2);
  EXPECT_EQ(again.totals.rows_in, 0);
  EXPECT_EQ(TableIds("out.valid"), ids);

  // Another operation's parameters into the same table: refused, unless appended on purpose.
  MakeValidSkeleton other("other");
  RunSummary refused;
  EXPECT_THAT(
      RunOperation(env_, other, input, ParseOutput("out.valid").value(), Options(), &refused),
      IsErrorWith(ErrorCode::kAlreadyExists, "--append"));
  RunnerOptions append = Options();
  append.append = true;
  RunSummary appended;
  ASSERT_OK(RunOperation(env_, other, input, ParseOutput("out.valid").value(), append, &appended));
  EXPECT_EQ(TableIds("out.valid").size(), 112u);
}

TEST_F(RunnerTest, ShardsTogetherGiveTheUnshardedRows) {
  InputSpec input;
  for (int f = 0; f < 6; ++f) {
    input.sources.push_back(WriteSource("s" + std::to_string(f) + ".geojsonl", 12, f * 100));
  }
  MakeValidSkeleton op;
  RunSummary whole;
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput("out.whole").value(), Options(), &whole));
  std::int64_t units = 0;
  for (int shard = 0; shard < 3; ++shard) {
    RunnerOptions options = Options();
    options.shard = Shard{shard, 3};
    RunSummary part;
    ASSERT_OK(RunOperation(env_, op, input, ParseOutput("out.sharded").value(), options, &part));
    units += part.totals.units;
  }
  EXPECT_EQ(units, 6);
  EXPECT_EQ(TableIds("out.sharded"), TableIds("out.whole"));
}

TEST_F(RunnerTest, TableInputIsPrunedByBboxAndWhere) {
  const std::string source = WriteSource("in.geojsonl", 40);
  MakeValidSkeleton op;
  RunSummary summary;
  ASSERT_OK(RunOperation(env_, op, ResolveInput(source).value(), ParseOutput("t.base").value(),
                         Options(), &summary));
  // Squares at x = (id % 20) * 2, y = (id / 20) * 2: the box holds ids 0..4 and 20..24, the
  // expression keeps those below 10; 2 has no geometry, so no box matches it.
  InputSpec input = ResolveInput("t.base").value();
  input.bbox = geo::Envelope{0, 0, 8.5, 2.5};
  input.where = "id < 10";
  RunSummary filtered;
  const std::string out = (dir_ / "filtered.geojsonl").string();
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput(out).value(), Options(), &filtered));
  std::vector<std::int64_t> ids = IdsOf(out);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(filtered.totals.rows_in, 4);
}

TEST_F(RunnerTest, CancelStopsWithinTwoSeconds) {
  const std::string source = WriteSource("in.geojsonl", 400);
  SlowOp op;
  std::stop_source stop;
  env_.stop = stop.get_token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.request_stop();
  });
  const auto start = std::chrono::steady_clock::now();
  RunSummary summary;
  Status st = RunOperation(env_, op, ResolveInput(source).value(), ParseOutput("t.slow").value(),
                           Options(), &summary);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_THAT(st, IsError(ErrorCode::kCancelled));
  EXPECT_LT(elapsed, std::chrono::milliseconds(2300));
  EXPECT_LT(summary.totals.rows_in, 400);
  // The rows of the batches the stop discarded are named, not reported as a broken invariant.
  ASSERT_FALSE(summary.invariant.empty());
  EXPECT_THAT(summary.invariant.front(), ::testing::Not(HasSubstr("!=")));
}

TEST_F(RunnerTest, ARunCancelledMidwayAndRunAgainGivesTheRowsOfOneRun) {
  InputSpec input;
  for (int f = 0; f < 8; ++f) {
    input.sources.push_back(WriteSource("s" + std::to_string(f) + ".geojsonl", 12, f * 100));
  }
  RunnerOptions options = Options();
  options.commit_rows = 1;  // every unit commits as soon as it is written
  options.batch_rows = 100;
  SlowOp op(10);  // 8 units of 12 features of 10 ms: ~0.5 s on 2 workers
  std::stop_source stop;
  env_.stop = stop.get_token();
  // Stop once the first unit is committed (the commit stage counts it).
  Counter* commits = metrics_.stage("commit")->counter("commits");
  std::thread canceller([&] {
    while (commits->value() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop.request_stop();
  });
  RunSummary cancelled;
  EXPECT_THAT(RunOperation(env_, op, input, ParseOutput("t.resumed").value(), options, &cancelled),
              IsError(ErrorCode::kCancelled));
  canceller.join();
  const std::size_t partial = TableIds("t.resumed").size();
  EXPECT_GT(partial, 0u);
  EXPECT_LT(partial, 96u);

  env_.stop = {};
  RunSummary resumed;
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput("t.resumed").value(), options, &resumed));
  EXPECT_GT(resumed.totals.units_skipped, 0);
  RunSummary whole;
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput("t.whole").value(), options, &whole));
  EXPECT_EQ(TableIds("t.resumed"), TableIds("t.whole"));
}

TEST_F(RunnerTest, ShardNeedsAnOperationResumableByUnit) {
  class Aggregate final : public Operation {
   public:
    std::string name() const override { return "agg"; }
    std::string parameters() const override { return "{}"; }
    bool resumable_by_unit() const override { return false; }
    Result<OpSchema> Bind(OpContext&, const Input& main) override {
      return OpSchema{{}, main.crs()};
    }
    Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext*) override {
      return Status::Internal("not reached");
    }
  } op;
  RunnerOptions options = Options();
  options.shard = Shard{1, 2};
  RunSummary summary;
  EXPECT_THAT(RunOperation(env_, op, ResolveInput(WriteSource("in.geojsonl", 3)).value(),
                           ParseOutput("t.agg").value(), options, &summary),
              IsErrorWith(ErrorCode::kInvalidArgument, "--shard"));
}

// An operation whose rows need every unit (an aggregate, as the join's --aggregate): it counts
// the features with a geometry per worker and writes one row at the end.
class CountOp final : public Operation {
 public:
  std::string name() const override { return "count"; }
  std::string parameters() const override { return "{}"; }
  bool resumable_by_unit() const override { return false; }
  Result<OpSchema> Bind(OpContext&, const Input& main) override {
    return OpSchema{{{"count", geoparquet::FieldType::kInt64}}, main.crs()};
  }
  Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext*) override {
    class Worker final : public OpWorker {
     public:
      explicit Worker(std::atomic<std::int64_t>* count) : count_(count) {}
      Status Process(const InputUnit&, const geoparquet::FeatureBatch& in, OpOutput* out) override {
        for (std::int64_t r = 0; r < in.num_rows(); ++r) {
          if (in.geometry_valid[static_cast<std::size_t>(r)] == 0) {
            out->Dropped("null geometry");
            continue;
          }
          count_->fetch_add(1);
          out->Emitted();
        }
        return Status::OK();
      }
      std::atomic<std::int64_t>* count_;
    };
    return std::unique_ptr<OpWorker>(std::make_unique<Worker>(&count_));
  }
  Status Finish(OpContext&, geo::GeoContext* geo, OpOutput* out) override {
    ++finished_;
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry point, geo::Geometry::FromWkt(*geo, "POINT (1 2)"));
    GEOLAKE_ASSIGN_OR_RETURN(std::string wkb, point.ToWkb());
    geoparquet::FeatureBatch& rows = out->rows;
    rows.fields = {{"count", geoparquet::FieldType::kInt64}};
    rows.columns.resize(1);
    rows.columns[0].type = geoparquet::FieldType::kInt64;
    rows.columns[0].valid.push_back(1);
    rows.columns[0].ints.push_back(count_.load());
    rows.wkb = wkb;
    rows.wkb_offsets = {0, static_cast<std::int64_t>(wkb.size())};
    rows.geometry_valid = {1};
    rows.feature_index = {0};
    return Status::OK();
  }
  int finished() const { return finished_; }

 private:
  std::atomic<std::int64_t> count_{0};
  int finished_ = 0;
};

TEST_F(RunnerTest, AnAggregateCommitsOnceAtTheEndAndIsNotRunTwice) {
  InputSpec input;
  for (int f = 0; f < 3; ++f) {
    input.sources.push_back(WriteSource("s" + std::to_string(f) + ".geojsonl", 12, f * 100));
  }
  CountOp op;
  RunSummary summary;
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput("t.count").value(), Options(), &summary));
  // 36 rows, one null geometry per source.
  EXPECT_EQ(summary.totals.rows_in, 36);
  EXPECT_EQ(summary.totals.rows_emitted, 33);
  EXPECT_EQ(summary.totals.rows_dropped.at("null geometry"), 3);
  EXPECT_EQ(summary.totals.rows_out, 1);
  EXPECT_EQ(summary.commits, 1);  // the whole run is one unit: never a partial aggregate
  EXPECT_EQ(op.finished(), 1);
  auto t = table::LoadTable(*catalog_, *io_, *table::TableIdentifier::Parse("t.count"));
  ASSERT_OK(t.status());
  class Counts final : public query::RowSink {
   public:
    Status Begin(const query::OutputLayout&) override { return Status::OK(); }
    Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
      for (std::size_t r = 0; r < rows.columns[0].size(); ++r) {
        values.push_back(rows.columns[0].ints[r]);
      }
      return Status::OK();
    }
    Status Finish() override { return Status::OK(); }
    std::vector<std::int64_t> values;
  } counts;
  ASSERT_OK(query::RunQuery(*io_, t->metadata, {}, &counts).status());
  EXPECT_EQ(counts.values, (std::vector<std::int64_t>{33}));

  // The same run again finds it committed and reads nothing.
  CountOp again_op;
  RunSummary again;
  ASSERT_OK(RunOperation(env_, again_op, input, ParseOutput("t.count").value(), Options(), &again));
  EXPECT_EQ(again.totals.rows_in, 0);
  EXPECT_EQ(again_op.finished(), 0);
  t = table::LoadTable(*catalog_, *io_, *table::TableIdentifier::Parse("t.count"));
  ASSERT_OK(t.status());
  Counts recount;
  ASSERT_OK(query::RunQuery(*io_, t->metadata, {}, &recount).status());
  EXPECT_EQ(recount.values, (std::vector<std::int64_t>{33}));
}

TEST_F(RunnerTest, UnitsCarryTheirPositionInReadOrder) {
  // Workers see batches in any order; the unit's ordinal still says which came first.
  class Ordinals final : public Operation {
   public:
    std::string name() const override { return "ordinals"; }
    std::string parameters() const override { return "{}"; }
    bool resumable_by_unit() const override { return false; }
    Result<OpSchema> Bind(OpContext&, const Input& main) override {
      return OpSchema{{}, main.crs()};
    }
    Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext*) override {
      class Worker final : public OpWorker {
       public:
        explicit Worker(Ordinals* op) : op_(op) {}
        Status Process(const InputUnit& unit, const geoparquet::FeatureBatch& in,
                       OpOutput* out) override {
          std::lock_guard lock(op_->mu);
          op_->seen[unit.path].insert(unit.ordinal);
          out->Emitted(in.num_rows());
          return Status::OK();
        }
        Ordinals* op_;
      };
      return std::unique_ptr<OpWorker>(std::make_unique<Worker>(this));
    }
    std::mutex mu;
    std::map<std::string, std::set<std::int64_t>> seen;  // by source path
  } op;
  InputSpec input;
  for (int f = 0; f < 3; ++f) {
    input.sources.push_back(WriteSource("s" + std::to_string(f) + ".geojsonl", 12, f * 100));
  }
  RunSummary summary;
  ASSERT_OK(RunOperation(env_, op, input, ParseOutput((dir_ / "o.geojsonl").string()).value(),
                         Options(), &summary));
  ASSERT_EQ(op.seen.size(), 3u);
  for (int f = 0; f < 3; ++f) {
    EXPECT_EQ(op.seen[input.sources[static_cast<std::size_t>(f)]], (std::set<std::int64_t>{f}));
  }
}

TEST(RunnerParseTest, OutputsShardsAndPolicies) {
  EXPECT_EQ(ParseOutput("a.b").value().table, "a.b");
  EXPECT_EQ(ParseOutput("out/x.parquet").value().path, "out/x.parquet");
  EXPECT_EQ(ParseOutput("x.geojsonl").value().path, "x.geojsonl");
  EXPECT_THAT(ParseOutput("dir/x.txt"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseOutput(""), IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(ParseShard("2/3").value().index, 2);
  EXPECT_THAT(ParseShard("3/3"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseShard("1"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseShard("a/b"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseFeatureErrorPolicy("ignore"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_EQ(ResolveInput("ns.table").value().table, "ns.table");
  EXPECT_EQ(ResolveInput("data/*.gpkg").value().sources.size(), 1u);
  // A unit's shard is FNV-1a (64 bits) of its key modulo N, so that processes of an array job
  // built at different times agree: the values below were computed apart from this code.
  InputUnit unit;
  unit.key = "file:/x/y.parquet";
  EXPECT_EQ(ShardOf(unit, 7), 5);
  EXPECT_EQ(ShardOf(unit, 3), 1);
  EXPECT_EQ(ShardOf(unit, 1), 0);
  std::vector<int> shards;
  for (int i = 0; i < 12; ++i) {
    unit.key = "file:/u" + std::to_string(i);
    shards.push_back(ShardOf(unit, 3));
  }
  EXPECT_EQ(shards, (std::vector<int>{1, 0, 2, 1, 2, 1, 0, 2, 2, 1, 1, 2}));
}

}  // namespace
}  // namespace geolake::ops
