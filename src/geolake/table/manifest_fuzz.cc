/// \file
/// libFuzzer entry point for manifest and manifest-list decoding: any input either fails with
/// a Status or decodes; decoded entries are re-encodable only when they fit a spec, so this
/// target checks safety, not round trips (manifest_test.cc covers those).
/// Seeds: tests/data/fuzz/manifest (manifests and manifest lists we write). Built by the
/// `fuzz` preset.

#include <cstdint>
#include <string>

#include "geolake/table/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace geolake::table;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  ManifestFile list_entry;
  list_entry.sequence_number = 7;
  list_entry.added_snapshot_id = 42;
  list_entry.first_row_id = 0;
  ManifestHeader header;
  auto entries = DecodeManifest(bytes, &list_entry, &header);
  if (entries.ok()) {
    for (const auto& e : *entries) (void)e.data_file.partition.size();
  }
  auto lists = DecodeManifestList(bytes);
  if (lists.ok()) {
    for (const auto& m : *lists) (void)m.partitions.size();
  }
  return 0;
}
