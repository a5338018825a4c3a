/// \file
/// libFuzzer entry point for the table metadata JSON reader: any input either fails with a
/// Status (never crashes, never throws) or parses to metadata whose accessors are safe; when
/// such metadata validates for writing, its JSON reads back and writes again identically.
/// Seeds: tests/data/fuzz/table_metadata (a v1, v2 and v3 file). Built by the `fuzz` preset.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "geolake/table/table_metadata.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace geolake::table;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = TableMetadata::FromJson(text);
  if (!parsed.ok()) return 0;
  const TableMetadata& m = *parsed;
  (void)m.current_schema();
  (void)m.default_spec();
  (void)m.default_sort_order();
  (void)m.current_snapshot();
  auto json = m.ToJson();
  if (!json.ok()) return 0;
  auto again = TableMetadata::FromJson(*json);
  Check(again.ok());
  auto json2 = again->ToJson();
  Check(json2.ok() && *json2 == *json);
  return 0;
}
