// sources_bench [--threads N] [--unit-rows N] [--batch-rows N] [--gdal-gpkg] SOURCE...: the
// sources half of an ingest, timed. --gdal-gpkg reads GeoPackages through GDAL instead of the
// native reader (GpkgSource), to compare the two in one run. DiscoverSources, then N threads
// take units from a shared counter and read each one to the end with a UnitReader (what the
// transform stage's workers do before any geometry work). Prints one CSV line:
//   discover_seconds,read_seconds,rows,units,wkb_bytes,checksum,cpu_seconds
// checksum (sum of feature indices and WKB byte counts per source) must not depend on N.
// cpu_seconds (user + system of the whole process) shows the work done apart from waiting
// for a core on a loaded machine.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "geolake/sources/discover.h"
#include "geolake/sources/unit_reader.h"

namespace {

using geolake::geoparquet::FeatureBatch;
using geolake::sources::DiscoveredSource;
using geolake::sources::SourceUnit;
using geolake::sources::UnitReader;

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  std::int64_t batch_rows = 8192;
  geolake::sources::DiscoverOptions options;
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--unit-rows" && i + 1 < argc) {
      options.unit_rows = std::atoll(argv[++i]);
    } else if (arg == "--batch-rows" && i + 1 < argc) {
      batch_rows = std::atoll(argv[++i]);
    } else if (arg == "--gdal-gpkg") {
      options.native_gpkg = false;
    } else {
      specs.push_back(arg);
    }
  }
  if (specs.empty() || threads < 1) {
    std::fprintf(stderr,
                 "usage: sources_bench [--threads N] [--unit-rows N] [--batch-rows N] "
                 "[--gdal-gpkg] SOURCE...\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto discovered = geolake::sources::DiscoverSources(specs, options);
  if (!discovered.ok()) {
    std::fprintf(stderr, "sources_bench: %s\n", discovered.status().ToString().c_str());
    return 1;
  }
  const double discover_seconds = Since(t0);
  std::vector<SourceUnit> units;
  for (const DiscoveredSource& source : *discovered) {
    units.insert(units.end(), source.units.begin(), source.units.end());
  }

  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> rows{0}, wkb_bytes{0}, checksum{0};
  std::mutex error_mutex;
  std::string error;  // guarded by error_mutex
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      FeatureBatch batch;
      for (std::size_t u = next++; u < units.size(); u = next++) {
        auto reader = UnitReader::Open(units[u]);
        if (!reader.ok()) {
          std::lock_guard lock(error_mutex);
          error = reader.status().ToString();
          return;
        }
        while (true) {
          auto got = (*reader)->ReadBatch(batch_rows, &batch);
          if (!got.ok()) {
            std::lock_guard lock(error_mutex);
            error = got.status().ToString();
            return;
          }
          if (*got == 0) break;
          std::int64_t sum = 0;
          for (std::int64_t index : batch.feature_index) sum += index;
          rows += *got;
          wkb_bytes += static_cast<std::int64_t>(batch.wkb.size());
          checksum += sum + static_cast<std::int64_t>(batch.wkb.size());
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double read_seconds = Since(t1);
  if (!error.empty()) {
    std::fprintf(stderr, "sources_bench: %s\n", error.c_str());
    return 1;
  }
  std::printf("%.4f,%.4f,%lld,%zu,%lld,%lld,%.4f\n", discover_seconds, read_seconds,
              static_cast<long long>(rows.load()), units.size(),
              static_cast<long long>(wkb_bytes.load()), static_cast<long long>(checksum.load()),
              CpuSeconds());
  return 0;
}
