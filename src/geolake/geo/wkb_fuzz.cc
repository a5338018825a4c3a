/// \file
/// libFuzzer entry point for the WKB codec: every reader must either fail cleanly with
/// kCorruptData or agree with the others. The validity shortcuts run on the same bytes. Built by
/// hand (see the seed corpus in tests/data/fuzz/wkb/), e.g.
///   clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
///     src/geolake/geo/wkb_fuzz.cc src/geolake/geo/wkb.cc src/geolake/geo/wkt.cc \
///     src/geolake/geo/geometry_type.cc src/geolake/core/result.cc -lfmt -o wkb_fuzz
///   ./wkb_fuzz -max_total_time=60 tests/data/fuzz/wkb

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "geolake/geo/validity_fast_path.h"
#include "geolake/geo/wkb.h"
#include "geolake/geo/wkt.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace geolake;
  using namespace geolake::geo;
  const std::span<const uint8_t> input(data, size);

  // The validity shortcuts read any bytes safely and never contradict one another; the parts
  // of a multipolygon are back-to-back views of the whole; a spike repair is proved valid.
  const bool proved = ProvablyValidPolygon(input);
  Check(!(proved && CertainlyInvalidPolygon(input)));
  std::vector<std::span<const uint8_t>> members;
  if (MultiPolygonMembers(input, &members)) {
    const uint8_t* next = data + 9;
    for (const auto& member : members) {
      Check(member.data() == next);
      next += member.size();
    }
    Check(next == data + size);
  }
  std::string despiked;
  if (RepairSpikes(input, &despiked)) Check(ProvablyValidPolygon(AsBytes(despiked)));

  auto parsed = ParseWkb(input);
  auto envelope = WkbEnvelope(input);
  auto normalized = NormalizeWkb(input);
  auto wkt = WkbToWkt(input);
  (void)PeekWkbType(input);

  // All whole-value readers accept exactly the same inputs, and fail only with kCorruptData.
  Check(parsed.ok() == envelope.ok() && parsed.ok() == normalized.ok() && parsed.ok() == wkt.ok());
  if (!parsed.ok()) {
    Check(parsed.status().code() == ErrorCode::kCorruptData);
    return 0;
  }

  // The normalized bytes are what WriteWkb produces, and they read back to the same value.
  const std::string written = WriteWkb(*parsed);
  Check(written == *normalized);
  auto reparsed = ParseWkb(AsBytes(written));
  Check(reparsed.ok() && *reparsed == *parsed);
  Check(*envelope == parsed->GetEnvelope());

  // The WKT text reads back to the same structure (coordinates round-trip exactly, since the
  // writer's default is the shortest round-trip form).
  auto from_wkt = ParseWkt(*wkt);
  Check(from_wkt.ok());
  return 0;
}
