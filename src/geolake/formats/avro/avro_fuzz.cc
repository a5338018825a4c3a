/// \file
/// libFuzzer entry point for the Avro object container reader: any input must either decode
/// or fail with a Status (kCorruptData for malformed bytes, kNotImplemented for bzip2/xz),
/// never crash, hang or allocate without bound. Decoded values must re-encode to bytes that
/// decode to the same bytes again, and the header schema must print to JSON that parses back to
/// the same JSON. Built by hand (seed corpus in tests/data/fuzz/avro/), e.g.
///   clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
///     src/geolake/formats/avro/avro_fuzz.cc
///     src/geolake/formats/avro/{binary,container,datum,schema}.cc \ src/geolake/core/result.cc -lz
///     -lzstd -lsnappy -o avro_fuzz
///   ./avro_fuzz -max_total_time=60 -rss_limit_mb=2048 tests/data/fuzz/avro

#include <cstdint>
#include <cstdlib>
#include <string>

#include "geolake/formats/avro/binary.h"
#include "geolake/formats/avro/container.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace geolake;
  using namespace geolake::avro;
  ReaderOptions options;
  // Keep each run small; the limit itself is what is being exercised.
  options.max_block_bytes = 1 << 20;
  auto reader =
      ContainerReader::Open(std::string(reinterpret_cast<const char*>(data), size), options);
  if (!reader.ok()) {
    Check(reader.status().code() == ErrorCode::kCorruptData ||
          reader.status().code() == ErrorCode::kNotImplemented);
    return 0;
  }
  const Schema& schema = *(*reader)->schema();
  const std::string json = schema.ToJson();
  auto reparsed = Schema::Parse(json);
  Check(reparsed.ok());
  Check(reparsed->ToJson() == json);

  for (int record_idx = 0; record_idx < 100000; ++record_idx) {
    Datum datum;
    auto more = (*reader)->Next(&datum);
    if (!more.ok()) {
      Check(more.status().code() == ErrorCode::kCorruptData);
      break;
    }
    if (!*more) break;
    std::string bytes;
    Check(Encode(datum, schema.root(), &bytes).ok());
    auto back = Decode(bytes, schema.root());
    Check(back.ok());
    std::string again;
    Check(Encode(*back, schema.root(), &again).ok());
    Check(again == bytes);
  }
  return 0;
}
