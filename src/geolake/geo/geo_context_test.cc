#include "geolake/geo/geo_context.h"

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <random>
#include <thread>
#include <vector>

#include "geolake/geo/crs.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/proj.h"
#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;
using Clock = std::chrono::steady_clock;

// `count` discs of radius 1.5 at seeded random centres in a 100 x 100 square. Their union
// takes GEOS 1 s (4000 discs) to 4 s (16000 discs) on the build machine.
Result<std::vector<Geometry>> OverlappingDiscs(GeoContext& ctx, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> coord(0, 100);
  std::vector<Geometry> discs;
  for (int i = 0; i < count; ++i) {
    const double x = coord(rng);
    const double y = coord(rng);
    GEOLAKE_ASSIGN_OR_RETURN(Geometry p, Geometry::FromWkt(ctx, "POINT (" + std::to_string(x) +
                                                                    " " + std::to_string(y) + ")"));
    GEOLAKE_ASSIGN_OR_RETURN(Geometry disc, p.Buffer(1.5, 16));
    discs.push_back(std::move(disc));
  }
  return discs;
}

TEST(GeoContextTest, StoresLastGeosAndProjMessages) {
  ASSERT_OK_AND_ASSIGN(auto ctx, GeoContext::Make());
  EXPECT_EQ(ctx->last_geos_message(), "");
  EXPECT_FALSE(Geometry::FromWkt(*ctx, "NOT WKT").ok());
  EXPECT_NE(ctx->last_geos_message(), "");
  EXPECT_FALSE(Crs::Make(*ctx, "EPSG:999999").ok());
  EXPECT_NE(ctx->last_proj_message(), "");
}

TEST(GeoContextTest, FiredTokenCancelsBeforeEnteringGeos) {
  std::stop_source stop;
  ASSERT_OK_AND_ASSIGN(auto ctx, GeoContext::Make(stop.get_token()));
  ASSERT_OK_AND_ASSIGN(Geometry a, Geometry::FromWkt(*ctx, "POLYGON ((0 0, 1 0, 1 1, 0 0))"));
  ASSERT_OK_AND_ASSIGN(Geometry b, a.Clone());
  stop.request_stop();
  EXPECT_THAT(Geometry::FromWkt(*ctx, "POINT (0 0)"), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.ToWkb(), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.IsValid(), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.MakeValid(), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.Area(), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.Intersects(b), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.Intersection(b), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.Buffer(1), IsError(ErrorCode::kCancelled));
  EXPECT_THAT(a.Simplify(1), IsError(ErrorCode::kCancelled));

  // A fresh token makes the context usable again.
  ctx->set_stop_token(std::stop_token());
  EXPECT_OK(a.Intersects(b));
}

TEST(GeoContextTest, StopDuringLongUnionReturnsCancelledQuickly) {
  std::stop_source stop;
  ASSERT_OK_AND_ASSIGN(auto ctx, GeoContext::Make(stop.get_token()));
  ASSERT_OK_AND_ASSIGN(std::vector<Geometry> discs, OverlappingDiscs(*ctx, 10000, 7));
  Clock::time_point fired;
  std::thread firer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fired = Clock::now();
    stop.request_stop();
  });
  const Clock::time_point start = Clock::now();
  auto result = Geometry::UnionAll(*ctx, std::move(discs));
  const Clock::time_point done = Clock::now();
  firer.join();
  ASSERT_THAT(result, IsError(ErrorCode::kCancelled));
  ASSERT_GT(done, fired) << "the union finished before the token fired";
  const double latency_s = std::chrono::duration<double>(done - fired).count();
  std::printf("union cancelled %.1f ms after stop (ran %.1f ms)\n", latency_s * 1e3,
              std::chrono::duration<double>(done - start).count() * 1e3);
  EXPECT_LT(latency_s, 1.0);
}

TEST(GeoContextTest, CancellingOneThreadLeavesAnotherAlone) {
  // GEOS 3.11's interrupt flag is process-wide; our callback is per thread. Thread A's token
  // fires mid-union; thread B's union over the same input must still succeed.
  std::stop_source stop_a;
  std::stop_source stop_b;
  std::latch inputs_ready(3);
  Status status_a;
  Status status_b;
  double area_b = 0;
  auto run = [&inputs_ready](std::stop_token token, Status* status, double* area) {
    auto ctx = GeoContext::Make(token);
    auto discs = ctx.ok() ? OverlappingDiscs(**ctx, 4000, 11) : ctx.status();
    inputs_ready.arrive_and_wait();
    if (!discs.ok()) {
      *status = discs.status();
      return;
    }
    auto u = Geometry::UnionAll(**ctx, std::move(discs).value());
    *status = u.status();
    if (u.ok() && area != nullptr) *area = u->Area().value_or(-1);
  };
  std::thread a(run, stop_a.get_token(), &status_a, nullptr);
  std::thread b(run, stop_b.get_token(), &status_b, &area_b);
  inputs_ready.arrive_and_wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop_a.request_stop();
  a.join();
  b.join();
  EXPECT_THAT(status_a, IsError(ErrorCode::kCancelled));
  EXPECT_OK(status_b);
  EXPECT_GT(area_b, 0);
}

// One pass of mixed GEOS and PROJ work; every number it produces goes into `out`.
Status Workload(GeoContext& ctx, int seed, std::vector<double>* out) {
  // A bowtie scaled by k has two lobes of area k^2 / 4 each.
  for (int k = 1; k <= 5; ++k) {
    const std::string s = std::to_string(k);
    GEOLAKE_ASSIGN_OR_RETURN(Geometry bowtie,
                             Geometry::FromWkt(ctx, "POLYGON ((0 0, " + s + " " + s + ", " + s +
                                                        " 0, 0 " + s + ", 0 0))"));
    GEOLAKE_ASSIGN_OR_RETURN(Geometry fixed, bowtie.MakeValid());
    GEOLAKE_ASSIGN_OR_RETURN(double area, fixed.Area());
    out->push_back(area);
    GEOLAKE_ASSIGN_OR_RETURN(Geometry probe, Geometry::FromWkt(ctx, "POINT (0.5 0.2)"));
    GEOLAKE_ASSIGN_OR_RETURN(bool hit, fixed.Intersects(probe));
    out->push_back(hit ? 1 : 0);
  }
  GEOLAKE_ASSIGN_OR_RETURN(Crs wgs84, Crs::Make(ctx, "EPSG:4326"));
  GEOLAKE_ASSIGN_OR_RETURN(Crs utm33, Crs::Make(ctx, "EPSG:32633"));
  GEOLAKE_ASSIGN_OR_RETURN(Transformer forward, Transformer::Make(ctx, wgs84, utm33));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<double> lon(12, 18);
  std::uniform_real_distribution<double> lat(40, 55);
  std::vector<double> x(200);
  std::vector<double> y(200);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = lon(rng);
    y[i] = lat(rng);
  }
  GEOLAKE_RETURN_NOT_OK(forward.Transform(x, y));
  out->insert(out->end(), x.begin(), x.end());
  out->insert(out->end(), y.begin(), y.end());
  return Status::OK();
}

TEST(GeoContextTest, EightThreadsMatchSingleThreadedRun) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  std::vector<std::vector<double>> expected(kRounds);
  {
    ASSERT_OK_AND_ASSIGN(auto ctx, GeoContext::Make());
    for (int round = 0; round < kRounds; ++round)
      ASSERT_OK(Workload(*ctx, round, &expected[round]));
  }
  std::vector<std::vector<std::vector<double>>> got(kThreads,
                                                    std::vector<std::vector<double>>(kRounds));
  std::vector<Status> status(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &got, &status] {
      auto ctx = GeoContext::Make();
      if (!ctx.ok()) {
        status[t] = ctx.status();
        return;
      }
      for (int round = 0; round < kRounds && status[t].ok(); ++round) {
        status[t] = Workload(**ctx, round, &got[t][round]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_OK(status[t]) << "thread " << t;
    for (int round = 0; round < kRounds; ++round) {
      EXPECT_EQ(got[t][round], expected[round]) << "thread " << t << " round " << round;
    }
  }
}

}  // namespace
}  // namespace geolake::geo
