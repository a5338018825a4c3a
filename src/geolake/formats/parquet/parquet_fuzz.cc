// libFuzzer entry point for the Parquet reader: the input is a whole file, read through an
// in-memory RandomAccessFile. Everything a caller can reach is exercised: the footer and schema,
// every column chunk of the first row groups (pages, levels, values, dictionaries, codecs), the
// page index and page-skipping reads. Limits are lowered so that a valid-but-huge claim fails
// fast instead of exhausting the fuzzer's memory budget.
//
// Build by hand (see the report in the repository history), e.g.:
//   clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     src/geolake/formats/parquet/parquet_fuzz.cc <parquet and core sources> \
//     -lz -lsnappy -lzstd -llz4 -lbrotlidec -lbrotlienc -o parquet_fuzz
//   ./parquet_fuzz -max_len=65536 tests/data/fuzz/parquet

#include <cstddef>
#include <cstdint>
#include <string>

#include "geolake/formats/parquet/reader.h"

namespace {

using geolake::Status;

class FuzzFile : public geolake::io::RandomAccessFile {
 public:
  FuzzFile(const std::uint8_t* data, std::size_t size)
      : data_(reinterpret_cast<const char*>(data), size) {}
  std::uint64_t size() const override { return data_.size(); }
  Status ReadAt(std::uint64_t offset, std::uint64_t length, std::string* out) const override {
    if (offset > data_.size() || length > data_.size() - offset) {
      return Status::CorruptData("fuzz.parquet: read past the end");
    }
    out->assign(data_, offset, length);
    return Status::OK();
  }
  const std::string& path() const override { return path_; }

 private:
  std::string data_;
  std::string path_ = "fuzz.parquet";
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace geolake::parquet;
  FuzzFile file(data, size);
  ReaderOptions options;
  options.max_page_bytes = 16 << 20;
  options.max_decoded_bytes = 64 << 20;
  options.max_footer_bytes = 1 << 20;
  auto reader = FileReader::Open(&file, options);
  if (!reader.ok()) return 0;
  const FileReader& r = **reader;
  const int row_groups = std::min(r.num_row_groups(), 16);
  const int leaves = std::min(r.schema().num_leaves(), 64);
  for (int rg = 0; rg < row_groups; ++rg) {
    for (int leaf = 0; leaf < leaves; ++leaf) {
      (void)r.column_statistics(rg, leaf);
      (void)r.ReadColumn(rg, leaf);
      (void)r.ReadColumnIndex(rg, leaf);
      (void)r.ReadColumnPages(rg, leaf, {RowRange{0, 1}, RowRange{5, 9}});
    }
  }
  return 0;
}
