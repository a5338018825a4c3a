#include "geolake/query/output.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake::query {
namespace {

using ::geolake::testing::IsError;

// A stream that accepts `limit` bytes, then fails every write as a full disk does.
class LimitedStream final : public io::OutputStream {
 public:
  LimitedStream(std::unique_ptr<io::OutputStream> inner, std::uint64_t limit)
      : inner_(std::move(inner)), limit_(limit) {}
  Status Write(std::span<const std::uint8_t> data) override {
    if (inner_->Tell() + data.size() > limit_) return Status::IOError("write: No space left");
    return inner_->Write(data);
  }
  std::uint64_t Tell() const override { return inner_->Tell(); }
  Status Close() override { return inner_->Close(); }
  void Abort() override { inner_->Abort(); }

 private:
  std::unique_ptr<io::OutputStream> inner_;
  std::uint64_t limit_;
};

// The local disk, with room for only `limit` bytes per written file.
class FullDiskIO final : public io::FileIO {
 public:
  explicit FullDiskIO(std::uint64_t limit) : local_(io::MakeLocalFileIO()), limit_(limit) {}
  Result<std::unique_ptr<io::RandomAccessFile>> OpenRead(const std::string& p) const override {
    return local_->OpenRead(p);
  }
  Result<std::unique_ptr<io::OutputStream>> OpenWrite(const std::string& p,
                                                      bool overwrite) const override {
    GEOLAKE_ASSIGN_OR_RETURN(auto inner, local_->OpenWrite(p, overwrite));
    return std::unique_ptr<io::OutputStream>(
        std::make_unique<LimitedStream>(std::move(inner), limit_));
  }
  Result<io::FileInfo> Stat(const std::string& p) const override { return local_->Stat(p); }
  Result<bool> Exists(const std::string& p) const override { return local_->Exists(p); }
  Status Delete(const std::string& p) const override { return local_->Delete(p); }
  Result<std::vector<io::FileInfo>> List(const std::string& d) const override {
    return local_->List(d);
  }
  Status CreateDirs(const std::string& d) const override { return local_->CreateDirs(d); }

 private:
  std::unique_ptr<io::FileIO> local_;
  std::uint64_t limit_;
};

// `n` points with a name each.
geoparquet::FeatureBatch Points(int n) {
  geoparquet::FeatureBatch b;
  b.fields = {{"name", geoparquet::FieldType::kString}};
  b.columns.resize(1);
  b.columns[0].type = geoparquet::FieldType::kString;
  for (int i = 0; i < n; ++i) {
    const std::string name = "feature number " + std::to_string(i);
    b.columns[0].valid.push_back(1);
    b.columns[0].bytes += name;
    b.columns[0].offsets.push_back(static_cast<std::int64_t>(b.columns[0].bytes.size()));
    std::string wkb("\x01\x01\x00\x00\x00", 5);
    const double xy[2] = {i * 0.001, 45.0 + i * 0.001};
    wkb.append(reinterpret_cast<const char*>(xy), sizeof(xy));
    b.wkb += wkb;
    b.wkb_offsets.push_back(static_cast<std::int64_t>(b.wkb.size()));
    b.geometry_valid.push_back(1);
    b.feature_index.push_back(i);
  }
  return b;
}

class OutputSinkTest : public ::testing::TestWithParam<OutputFormat> {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "geolake-out-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    return names;
  }
  // Begin, one batch, Finish: the first error.
  static Status WriteAll(RowSink* sink, const geoparquet::FeatureBatch& rows) {
    OutputLayout layout;
    layout.fields = rows.fields;
    layout.crs = "EPSG:4326";
    layout.layer_name = "query";
    GEOLAKE_RETURN_NOT_OK(sink->Begin(layout));
    GEOLAKE_RETURN_NOT_OK(sink->Write("f.parquet", rows));
    return sink->Finish();
  }
  std::string dir_;
};

// Issue 17 item 6: a write that fails (a full disk) is an I/O error, and nothing is left: not
// the file under its name, not a temporary file beside it. Before, the GeoJSON and GeoJSONSeq
// sinks wrote through GDAL, which ignores failed writes: exit 0 and a truncated file.
TEST_P(OutputSinkTest, AFullDiskIsAnIOErrorAndLeavesNoFile) {
  const FullDiskIO io(10 * 1024);
  const std::string path = dir_ + "/out.txt";
  auto sink = MakeOutputSink(GetParam(), path, io);
  ASSERT_OK(sink.status());
  const Status st = WriteAll(sink->get(), Points(5000));
  sink->reset();
  EXPECT_THAT(st, IsError(ErrorCode::kIOError));
  EXPECT_TRUE(Names().empty()) << Names()[0];
}

TEST_P(OutputSinkTest, WithRoomTheFileIsComplete) {
  const FullDiskIO io(std::uint64_t{1} << 30);
  const std::string path = dir_ + "/out.txt";
  auto sink = MakeOutputSink(GetParam(), path, io);
  ASSERT_OK(sink.status());
  ASSERT_OK(WriteAll(sink->get(), Points(5000)));
  sink->reset();
  EXPECT_EQ(Names(), std::vector<std::string>{"out.txt"});
  ASSERT_OK_AND_ASSIGN(std::string text, io.ReadAll(path));
  EXPECT_NE(text.find("feature number 4999"), std::string::npos);
  if (GetParam() == OutputFormat::kGeoJson) {
    EXPECT_TRUE(text.ends_with("]\n}\n")) << text;
  }
}

// Issue 17 item 7: -o onto a symlink writes its target; the link stays.
TEST_P(OutputSinkTest, ASymlinkIsKeptPointingAtTheNewFile) {
  const auto io = io::MakeLocalFileIO();
  const std::string target = dir_ + "/target.txt";
  ASSERT_OK(io->WriteAll(target, "old", true));
  std::filesystem::create_symlink("target.txt", dir_ + "/link.txt");
  auto sink = MakeOutputSink(GetParam(), dir_ + "/link.txt", *io);
  ASSERT_OK(sink.status());
  ASSERT_OK(WriteAll(sink->get(), Points(10)));
  sink->reset();
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ + "/link.txt"));
  ASSERT_OK_AND_ASSIGN(std::string text, io->ReadAll(target));
  EXPECT_NE(text.find("feature number 9"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(TextFormats, OutputSinkTest,
                         ::testing::Values(OutputFormat::kGeoJson, OutputFormat::kGeoJsonSeq,
                                           OutputFormat::kCsv),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case OutputFormat::kGeoJson:
                               return std::string("GeoJson");
                             case OutputFormat::kGeoJsonSeq:
                               return std::string("GeoJsonSeq");
                             default:
                               return std::string("Csv");
                           }
                         });

}  // namespace
}  // namespace geolake::query
