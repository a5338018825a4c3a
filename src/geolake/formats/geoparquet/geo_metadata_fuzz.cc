/// \file
/// libFuzzer entry point for the "geo" metadata parser: any input either fails with
/// kCorruptData/kNotImplemented or parses to a value whose accessors are safe, and whose JSON,
/// when it validates, parses back to the same value. Built by hand, e.g.
///   clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
///     src/geolake/formats/geoparquet/geo_metadata_fuzz.cc \
///     src/geolake/formats/geoparquet/geo_metadata.cc src/geolake/geo/geometry_type.cc \
///     src/geolake/core/result.cc -lfmt -o geo_metadata_fuzz
///   ./geo_metadata_fuzz -max_total_time=60 src/geolake/formats/geoparquet/testdata

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "geolake/formats/geoparquet/geo_metadata.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace geolake;
  using namespace geolake::geoparquet;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = GeoMetadata::Parse(text);
  if (!parsed.ok()) {
    Check(parsed.status().code() == ErrorCode::kCorruptData ||
          parsed.status().code() == ErrorCode::kNotImplemented);
    return 0;
  }
  for (const auto& [name, column] : parsed->columns) {
    (void)column.BboxEnvelope();
    (void)column.DecodedGeometryTypes();
    (void)column.IsDefaultCrs();
  }
  auto json = parsed->ToJson();
  if (json.ok()) {
    auto again = GeoMetadata::Parse(*json);
    Check(again.ok() && *again == *parsed);
  }
  return 0;
}
