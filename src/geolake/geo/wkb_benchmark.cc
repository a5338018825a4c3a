// Throughput of the WKB codec on a typical feature: a polygon ring of 1,000 points (about
// 16 KB of WKB). Bytes processed are input bytes.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <string>

#include "geolake/geo/wkb.h"
#include "geolake/geo/wkt.h"

namespace geolake::geo {
namespace {

constexpr int kRingPoints = 1000;

FlatGeometry Circle() {
  FlatGeometry g;
  g.parts.push_back({GeometryType::kPolygon, 1, 0, 1});
  g.rings.push_back({0, kRingPoints});
  for (int idx = 0; idx < kRingPoints; ++idx) {
    const double angle = 2 * M_PI * (idx % (kRingPoints - 1)) / (kRingPoints - 1);
    g.coords.push_back(10 + std::cos(angle));
    g.coords.push_back(50 + std::sin(angle));
  }
  return g;
}

// The same polygon, big-endian (every 4- and 8-byte field reversed).
std::string BigEndian(const std::string& le) {
  std::string be = le;
  be[0] = '\x00';
  auto reverse = [&](std::size_t at, std::size_t width) {
    for (std::size_t idx = 0; idx < width / 2; ++idx)
      std::swap(be[at + idx], be[at + width - 1 - idx]);
  };
  reverse(1, 4);  // type
  reverse(5, 4);  // ring count
  reverse(9, 4);  // point count
  for (std::size_t at = 13; at < be.size(); at += 8) reverse(at, 8);
  return be;
}

void BM_ParseWkb(benchmark::State& state) {
  const std::string wkb = WriteWkb(Circle());
  for (auto _ : state) benchmark::DoNotOptimize(ParseWkb(AsBytes(wkb)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wkb.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseWkb);

void BM_WkbEnvelope(benchmark::State& state) {
  const std::string wkb = WriteWkb(Circle());
  for (auto _ : state) benchmark::DoNotOptimize(WkbEnvelope(AsBytes(wkb)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wkb.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WkbEnvelope);

void BM_NormalizeWkbCanonical(benchmark::State& state) {
  const std::string wkb = WriteWkb(Circle());
  for (auto _ : state) benchmark::DoNotOptimize(NormalizeWkb(AsBytes(wkb)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wkb.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NormalizeWkbCanonical);

void BM_NormalizeWkbBigEndian(benchmark::State& state) {
  const std::string wkb = BigEndian(WriteWkb(Circle()));
  for (auto _ : state) benchmark::DoNotOptimize(NormalizeWkb(AsBytes(wkb)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wkb.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NormalizeWkbBigEndian);

void BM_WriteWkb(benchmark::State& state) {
  const FlatGeometry geometry = Circle();
  for (auto _ : state) benchmark::DoNotOptimize(WriteWkb(geometry));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 8 * geometry.coords.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WriteWkb);

void BM_WkbToWkt(benchmark::State& state) {
  const std::string wkb = WriteWkb(Circle());
  for (auto _ : state) benchmark::DoNotOptimize(WkbToWkt(AsBytes(wkb)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wkb.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WkbToWkt);

void BM_ParseWkt(benchmark::State& state) {
  const std::string wkt = WriteWkt(Circle());
  for (auto _ : state) benchmark::DoNotOptimize(ParseWkt(wkt));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wkt.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseWkt);

}  // namespace
}  // namespace geolake::geo

BENCHMARK_MAIN();
