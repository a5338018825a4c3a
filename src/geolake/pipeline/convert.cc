#include "geolake/pipeline/convert.h"

#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/utf8.h"
#include "geolake/io/file_io.h"
#include "geolake/pipeline/transform.h"
#include "geolake/sources/gdal_source.h"

namespace geolake::pipeline {
namespace {

// Aborts the output stream unless it was published, so no error path forgets it.
class StreamGuard {
 public:
  explicit StreamGuard(io::OutputStream* stream) : stream_(stream) {}
  ~StreamGuard() {
    if (stream_ != nullptr) stream_->Abort();
  }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  Status Publish() {
    io::OutputStream* stream = std::exchange(stream_, nullptr);
    return stream->Close();
  }

 private:
  io::OutputStream* stream_;
};

// Passes writes through to the output stream until a stop is requested, then fails them with
// kCancelled: Finish() sorts and writes every held row at once (seconds for a large source), and
// its writes are where a SIGINT during that phase is noticed.
class StoppableStream final : public io::OutputStream {
 public:
  StoppableStream(io::OutputStream* inner, std::stop_token stop)
      : inner_(inner), stop_(std::move(stop)) {}
  Status Write(std::span<const std::uint8_t> data) override {
    if (stop_.stop_requested()) return Status::Cancelled("stopped while writing the file");
    return inner_->Write(data);
  }
  std::uint64_t Tell() const override { return inner_->Tell(); }
  Status Close() override { return inner_->Close(); }
  void Abort() override { inner_->Abort(); }

 private:
  io::OutputStream* inner_;
  std::stop_token stop_;
};

}  // namespace

Result<ConvertSummary> ConvertToGeoParquet(const std::string& source, const std::string& output,
                                           const ConvertOptions& options, Metrics* metrics,
                                           std::stop_token stop) {
  const auto started = std::chrono::steady_clock::now();
  if (options.read_batch_rows <= 0) {
    return Status::InvalidArgument("read batch rows must be positive");
  }
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, sources::GdalSource::Open(source, options.layer));
  const sources::SourceInfo& info = reader->info();

  auto io = io::MakeLocalFileIO();
  auto opened = io->OpenWrite(output, /*overwrite=*/true);
  if (!opened.ok()) return opened.status().WithContext("output '" + output + "'");
  std::unique_ptr<io::OutputStream> stream = std::move(*opened);
  StreamGuard guard(stream.get());
  StoppableStream stoppable(stream.get(), stop);

  // Field names and string values that are not UTF-8 (no encoding GDAL knows) are written with
  // each invalid byte replaced by U+FFFD, never as they came: DuckDB and arrow-rs refuse a
  // whole file for one such value.
  std::vector<geoparquet::FieldDef> fields = info.fields;
  for (geoparquet::FieldDef& field : fields) {
    if (IsValidUtf8(field.name)) continue;
    Log(LogLevel::kWarn, "source '{}': field name '{}' is not valid UTF-8; written as '{}'", source,
        EscapeForMessage(field.name), ReplaceInvalidUtf8(field.name));
    field.name = ReplaceInvalidUtf8(field.name);
  }
  std::vector<std::int64_t> utf8_replaced(fields.size(), 0);
  geoparquet::SourceLayout layout{fields, info.crs_projjson, info.crs_authority};
  auto made = geoparquet::GeoParquetFileWriter::Open(&stoppable, std::move(layout), options.file);
  if (!made.ok()) return made.status().WithContext("source '" + source + "'");
  std::unique_ptr<geoparquet::GeoParquetFileWriter> writer = std::move(*made);

  StageMetrics* read_stage = metrics != nullptr ? metrics->stage("read") : nullptr;
  StageMetrics* write_stage = metrics != nullptr ? metrics->stage("write") : nullptr;
  if (read_stage != nullptr) read_stage->Start();
  if (write_stage != nullptr) write_stage->Start();

  ConvertSummary summary;
  summary.source_driver = info.driver;
  geoparquet::FeatureBatch batch;
  while (true) {
    if (stop.stop_requested()) {
      return Status::Cancelled("convert '" + source + "': stopped after " +
                               std::to_string(summary.rows_read) + " features");
    }
    std::int64_t rows = 0;
    {
      std::optional<StageMetrics::Timer> timer;
      if (read_stage != nullptr) timer.emplace(read_stage);
      GEOLAKE_ASSIGN_OR_RETURN(rows, reader->ReadBatch(options.read_batch_rows, &batch));
    }
    if (rows == 0) break;
    summary.rows_read += rows;
    if (read_stage != nullptr) {
      read_stage->AddRowsOut(rows);
      read_stage->AddBytesOut(batch.ByteSize());
    }
    {
      std::optional<StageMetrics::Timer> timer;
      if (write_stage != nullptr) timer.emplace(write_stage);
      if (write_stage != nullptr) write_stage->AddRowsIn(rows);
      batch.fields = fields;
      const std::vector<std::int64_t> replaced = ReplaceInvalidUtf8InStrings(&batch);
      for (std::size_t col = 0; col < replaced.size(); ++col) utf8_replaced[col] += replaced[col];
      GEOLAKE_RETURN_NOT_OK_CTX(writer->Add(std::move(batch)), "source '" + source + "'");
    }
    batch = geoparquet::FeatureBatch{};
  }
  if (read_stage != nullptr) read_stage->Finish();
  {
    std::optional<StageMetrics::Timer> timer;
    if (write_stage != nullptr) timer.emplace(write_stage);
    auto finished = writer->Finish();
    if (stop.stop_requested()) {
      return Status::Cancelled("convert '" + source + "': stopped while writing '" + output +
                               "' after reading " + std::to_string(summary.rows_read) +
                               " features");
    }
    if (!finished.ok()) return finished.status().WithContext("output '" + output + "'");
    summary.file = std::move(*finished);
    GEOLAKE_RETURN_NOT_OK_CTX(guard.Publish(), "output '" + output + "'");
  }
  if (write_stage != nullptr) {
    write_stage->AddRowsOut(summary.file.rows);
    write_stage->AddBytesOut(summary.file.file_bytes);
    write_stage->Finish();
    metrics->counter("null_geometries")->Add(summary.file.null_geometries);
  }
  for (std::size_t col = 0; col < fields.size(); ++col) {
    if (utf8_replaced[col] == 0) continue;
    Log(LogLevel::kWarn,
        "source '{}': field '{}': {} values were not valid UTF-8 (no encoding declared that GDAL "
        "knows); each invalid byte was replaced by U+FFFD",
        source, fields[col].name, utf8_replaced[col]);
    summary.values_utf8_replaced += utf8_replaced[col];
  }
  summary.elapsed = std::chrono::steady_clock::now() - started;
  return summary;
}

}  // namespace geolake::pipeline
