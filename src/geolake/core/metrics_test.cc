#include "geolake/core/metrics.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(MetricsTest, CountersAreSharedByName) {
  Metrics metrics;
  Counter* a = metrics.counter("files_written");
  a->Add();
  a->Add(4);
  EXPECT_EQ(metrics.counter("files_written"), a);
  EXPECT_EQ(metrics.counter("files_written")->value(), 5);
  EXPECT_EQ(metrics.counter("other")->value(), 0);
}

TEST(MetricsTest, GaugeTracksPeak) {
  Metrics metrics;
  Gauge* g = metrics.gauge("bytes_in_flight");
  g->Add(100);
  g->Add(50);
  g->Add(-120);
  EXPECT_EQ(g->value(), 30);
  EXPECT_EQ(g->peak(), 150);
  g->Set(10);
  EXPECT_EQ(g->value(), 10);
  EXPECT_EQ(g->peak(), 150);
  g->Set(200);
  EXPECT_EQ(g->peak(), 200);
}

TEST(MetricsTest, ConcurrentUpdatesAreExact) {
  Metrics metrics;
  Counter* rows = metrics.counter("rows");
  Gauge* inflight = metrics.gauge("inflight");
  StageMetrics* write = metrics.stage("write");
  constexpr int kThreads = 8;
  constexpr int kIters = 20'000;
  {
    std::vector<std::jthread> threads;
    threads.reserve(8);
    for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
      threads.emplace_back([&] {
        Counter* attempts = write->counter("commit_attempts");
        for (int iter = 0; iter < kIters; ++iter) {
          rows->Add();
          inflight->Add(1);
          write->AddRowsIn(2);
          write->AddBytesOut(3);
          attempts->Add();
          inflight->Add(-1);
        }
      });
    }
  }
  MetricsSnapshot snap = metrics.Snapshot();
  EXPECT_EQ(rows->value(), kThreads * kIters);
  EXPECT_EQ(inflight->value(), 0);
  EXPECT_GE(inflight->peak(), 1);
  EXPECT_LE(inflight->peak(), kThreads);
  ASSERT_EQ(snap.stages.size(), 1u);
  EXPECT_EQ(snap.stages[0].rows_in, 2 * kThreads * kIters);
  EXPECT_EQ(snap.stages[0].bytes_out, 3 * kThreads * kIters);
  ASSERT_EQ(snap.stages[0].counters.size(), 1u);
  EXPECT_EQ(snap.stages[0].counters[0].value, kThreads * kIters);
}

TEST(MetricsTest, StageWallAndBusyTime) {
  Metrics metrics;
  StageMetrics* transform = metrics.stage("transform");
  {
    // Two threads busy for ~30 ms at the same time: busy ~60 ms, wall ~30 ms.
    std::vector<std::jthread> threads;
    threads.reserve(8);
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&] {
        StageMetrics::Timer timer = transform->Time();
        std::this_thread::sleep_for(30ms);
      });
    }
  }
  MetricsSnapshot snap = metrics.Snapshot();
  ASSERT_EQ(snap.stages.size(), 1u);
  EXPECT_GE(snap.stages[0].busy_ms, 60);
  EXPECT_GE(snap.stages[0].wall_ms, 30);
  EXPECT_LT(snap.stages[0].wall_ms, snap.stages[0].busy_ms);

  // A stage that never started has zero times; a started one extends to now.
  StageMetrics* commit = metrics.stage("commit");
  EXPECT_EQ(metrics.Snapshot().stages[1].wall_ms, 0);
  commit->Start();
  std::this_thread::sleep_for(20ms);
  EXPECT_GE(metrics.Snapshot().stages[1].wall_ms, 20);
  commit->Finish();
  const std::int64_t finished = metrics.Snapshot().stages[1].wall_ms;
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(metrics.Snapshot().stages[1].wall_ms, finished);
}

MetricsSnapshot Example() {
  Metrics metrics;
  StageMetrics* discover = metrics.stage("discover");
  discover->AddRowsOut(3);
  StageMetrics* write = metrics.stage("write");
  write->AddRowsIn(1'000'000);
  write->AddRowsOut(999'990);
  write->AddBytesIn(3ll << 30);
  write->AddBytesOut(128ll << 20);
  write->counter("files")->Add(12);
  StageMetrics* commit = metrics.stage("commit");
  commit->counter("commit_attempts")->Add(3);
  commit->counter("commit_conflicts")->Add(2);
  metrics.counter("rows_rejected")->Add(10);
  metrics.gauge("memory_bytes")->Add(512 << 20);
  metrics.gauge("memory_bytes")->Add(-(256 << 20));
  return metrics.Snapshot();
}

TEST(MetricsSnapshotTest, JsonParsesBackWithAnIndependentParser) {
  const MetricsSnapshot snap = Example();
  const std::string text = snap.ToJson();
  const nlohmann::json j = nlohmann::json::parse(text);
  ASSERT_EQ(j["stages"].size(), 3u);
  EXPECT_EQ(j["stages"][0]["name"], "discover");
  EXPECT_EQ(j["stages"][1]["name"], "write");
  EXPECT_EQ(j["stages"][1]["rows_in"], 1'000'000);
  EXPECT_EQ(j["stages"][1]["bytes_in"], 3ll << 30);
  EXPECT_EQ(j["stages"][1]["counters"]["files"], 12);
  EXPECT_EQ(j["stages"][2]["counters"]["commit_attempts"], 3);
  EXPECT_EQ(j["stages"][2]["counters"]["commit_conflicts"], 2);
  EXPECT_EQ(j["counters"]["rows_rejected"], 10);
  EXPECT_EQ(j["gauges"]["memory_bytes"]["value"], 256 << 20);
  EXPECT_EQ(j["gauges"]["memory_bytes"]["peak"], 512 << 20);
  EXPECT_TRUE(j["elapsed_ms"].is_number_integer());
}

TEST(MetricsSnapshotTest, JsonRoundTrips) {
  const MetricsSnapshot snap = Example();
  ASSERT_OK_AND_ASSIGN(MetricsSnapshot back, MetricsSnapshot::FromJson(snap.ToJson()));
  EXPECT_EQ(back, snap);
  ASSERT_OK_AND_ASSIGN(back, MetricsSnapshot::FromJson(MetricsSnapshot{}.ToJson()));
  EXPECT_EQ(back, MetricsSnapshot{});
}

TEST(MetricsSnapshotTest, FromJsonRejectsMalformedInput) {
  EXPECT_THAT(MetricsSnapshot::FromJson("{"), IsErrorWith(ErrorCode::kInvalidArgument, "JSON"));
  EXPECT_THAT(MetricsSnapshot::FromJson("[]"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(MetricsSnapshot::FromJson(R"({"stages": []})"),
              IsErrorWith(ErrorCode::kInvalidArgument, "elapsed_ms"));
  EXPECT_THAT(MetricsSnapshot::FromJson(R"({"elapsed_ms": 1})"),
              IsErrorWith(ErrorCode::kInvalidArgument, "stages"));
  EXPECT_THAT(MetricsSnapshot::FromJson(R"({"elapsed_ms": 1, "stages": [{"name": "w"}]})"),
              IsErrorWith(ErrorCode::kInvalidArgument, "stage 'w' needs an integer 'rows_in'"));
  EXPECT_THAT(
      MetricsSnapshot::FromJson(R"({"elapsed_ms": 1, "stages": [], "counters": {"a": "x"}})"),
      IsErrorWith(ErrorCode::kInvalidArgument, "'a'"));
  EXPECT_THAT(MetricsSnapshot::FromJson(
                  R"({"elapsed_ms": 1, "stages": [], "gauges": {"g": {"value": 1}}})"),
              IsErrorWith(ErrorCode::kInvalidArgument, "gauge 'g'"));
}

TEST(MetricsSnapshotTest, TableIsAligned) {
  MetricsSnapshot snap = Example();
  snap.elapsed_ms = 90'000;
  for (auto& s : snap.stages) {
    s.wall_ms = 1500;
    s.busy_ms = 3000;
  }
  const std::string table = snap.ToTable();
  EXPECT_EQ(table,
            "stage     rows in  rows out  bytes in  bytes out  wall  busy  counters\n"
            "discover        0         3       0 B        0 B  1.5s    3s\n"
            "write     1000000    999990   3.0 GiB    128 MiB  1.5s    3s  files=12\n"
            "commit          0         0       0 B        0 B  1.5s    3s  "
            "commit_attempts=3, commit_conflicts=2\n"
            "\n"
            "counter        value\n"
            "rows_rejected     10\n"
            "\n"
            "gauge             value       peak\n"
            "memory_bytes  268435456  536870912\n"
            "\n"
            "elapsed 1m30s\n");
  EXPECT_THAT(MetricsSnapshot{}.ToTable(), HasSubstr("elapsed 0ms"));
}

}  // namespace
}  // namespace geolake
