#include "geolake/formats/geoparquet/geo_column_stats.h"

#include <string>
#include <thread>
#include <vector>

#include "geolake/geo/wkb.h"
#include "geolake/geo/wkt.h"
#include "geolake/testing/testing.h"

namespace geolake::geoparquet {
namespace {

using ::geolake::testing::IsError;

std::string Wkb(const char* wkt) {
  auto wkb = geo::WktToWkb(wkt);
  EXPECT_OK(wkb);
  return wkb.ok() ? *wkb : std::string();
}

TEST(GeoColumnStatsTest, CollectsExactTypesAndBbox) {
  GeoColumnStats stats;
  ASSERT_OK(stats.Add(geo::AsBytes(Wkb("MULTIPOLYGON (((10 10, 11 10, 11 12, 10 10)))"))));
  ASSERT_OK(stats.Add(geo::AsBytes(Wkb("POLYGON ((0 0, 2 0, 2 3, 0 0))"))));
  ASSERT_OK(stats.Add(geo::AsBytes(Wkb("POINT Z (5 -5 1)"))));
  ASSERT_OK(stats.Add(geo::AsBytes(Wkb("POLYGON ((1 1, 2 1, 2 2, 1 1))"))));
  ASSERT_OK(stats.Add(geo::AsBytes(Wkb("POINT EMPTY"))));  // a type, but no extent
  stats.AddNull();
  EXPECT_EQ(stats.GeoParquetTypeNames(),
            (std::vector<std::string>{"Point", "Point Z", "Polygon", "MultiPolygon"}));
  EXPECT_EQ(stats.envelope(), (geo::Envelope{0, -5, 11, 12}));
  EXPECT_EQ(stats.num_values(), 5);
  EXPECT_EQ(stats.num_nulls(), 1);
  EXPECT_FALSE(stats.has_m());

  GeoColumnMetadata column;
  stats.FillColumn(&column);
  EXPECT_EQ(column.geometry_types, stats.GeoParquetTypeNames());
  EXPECT_EQ(column.bbox, (std::vector<double>{0, -5, 11, 12}));
}

TEST(GeoColumnStatsTest, CorruptValueIsAnErrorAndLeavesNoTrace) {
  GeoColumnStats stats;
  ASSERT_OK(stats.Add(geo::AsBytes(Wkb("POINT (1 2)"))));
  std::string bad = Wkb("LINESTRING (100 100, 200 200)");
  bad.pop_back();
  EXPECT_THAT(stats.Add(geo::AsBytes(bad)), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(stats.Add(std::span<const std::uint8_t>()), IsError(ErrorCode::kCorruptData));
  EXPECT_EQ(stats.GeoParquetTypeNames(), (std::vector<std::string>{"Point"}));
  EXPECT_EQ(stats.envelope(), (geo::Envelope{1, 2, 1, 2}));
  EXPECT_EQ(stats.num_values(), 1);
}

TEST(GeoColumnStatsTest, AddingSummariesEqualsAddingBytes) {
  GeoColumnStats from_bytes;
  GeoColumnStats from_summaries;
  for (const char* wkt : {"POINT Z (1 2 3)", "MULTILINESTRING ((0 0, -4 9))", "POLYGON EMPTY"}) {
    const std::string wkb = Wkb(wkt);
    ASSERT_OK(from_bytes.Add(geo::AsBytes(wkb)));
    geo::WkbSummary summary;
    ASSERT_OK(geo::NormalizeWkb(geo::AsBytes(wkb), &summary));
    from_summaries.Add(summary);
  }
  EXPECT_EQ(from_summaries.GeoParquetTypeNames(), from_bytes.GeoParquetTypeNames());
  EXPECT_EQ(from_summaries.GeoParquetTypeNames(),
            (std::vector<std::string>{"Point Z", "Polygon", "MultiLineString"}));
  EXPECT_EQ(from_summaries.envelope(), from_bytes.envelope());
  EXPECT_EQ(from_summaries.envelope(), (geo::Envelope{-4, 0, 1, 9}));
  EXPECT_EQ(from_summaries.num_values(), 3);
}

TEST(GeoColumnStatsTest, EmptyStatsFillNoBbox) {
  GeoColumnStats stats;
  stats.AddNull();
  GeoColumnMetadata column;
  column.bbox = {1, 2, 3, 4};
  stats.FillColumn(&column);
  EXPECT_TRUE(column.geometry_types.empty());
  EXPECT_TRUE(column.bbox.empty());
}

TEST(GeoColumnStatsTest, ReportsMTypes) {
  GeoColumnStats stats;
  ASSERT_OK(stats.Add(geo::AsBytes(Wkb("LINESTRING ZM (0 0 1 2, 1 1 1 2)"))));
  EXPECT_TRUE(stats.has_m());
  EXPECT_EQ(stats.GeoParquetTypeNames(), (std::vector<std::string>{"LineString ZM"}));
}

TEST(GeoColumnStatsTest, MergeAcrossThreadsEqualsOneSerialPass) {
  // Four threads, each with its own accumulator over a slice of points on a diagonal.
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::vector<GeoColumnStats> partial(kThreads);
  std::vector<std::thread> threads;
  for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
    threads.emplace_back([&partial, thread_idx] {
      for (int value_idx = 0; value_idx < kPerThread; ++value_idx) {
        const int k = thread_idx * kPerThread + value_idx;
        const geo::FlatGeometry point = geo::FlatGeometry::MakePoint(k, -k);
        const std::string wkb = geo::WriteWkb(point);
        if (!partial[thread_idx].Add(geo::AsBytes(wkb)).ok()) return;
      }
      if (thread_idx == 2) partial[thread_idx].AddNull();
    });
  }
  for (std::thread& thread : threads) thread.join();

  GeoColumnStats merged;
  for (const GeoColumnStats& stats : partial) merged.Merge(stats);
  EXPECT_EQ(merged.num_values(), kThreads * kPerThread);
  EXPECT_EQ(merged.num_nulls(), 1);
  EXPECT_EQ(merged.envelope(),
            (geo::Envelope{0, -(kThreads * kPerThread - 1.0), kThreads * kPerThread - 1.0, 0}));
  EXPECT_EQ(merged.GeoParquetTypeNames(), (std::vector<std::string>{"Point"}));
}

}  // namespace
}  // namespace geolake::geoparquet
