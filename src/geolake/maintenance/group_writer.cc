#include "geolake/maintenance/group_writer.h"

#include <optional>
#include <utility>

#include "geolake/table/data_file_metrics.h"

namespace geolake::maintenance {

GroupWriter::GroupWriter(GroupWriterOptions options, const io::FileIO* io)
    : options_(std::move(options)), io_(io) {}

GroupWriter::~GroupWriter() { Abort(); }

std::int64_t GroupWriter::bytes_written() const {
  std::int64_t n = 0;
  for (const pipeline::WrittenFile& f : files_) n += f.bytes;
  return n;
}

Status GroupWriter::OpenFile() {
  const pipeline::TableWriteOptions& t = *options_.table;
  const bool partitioned = t.layout.partition.kind != layout::PartitionKind::kNone;
  path_ = options_.folder.empty()
              ? pipeline::DataFilePath(t.table_location, partitioned, options_.cell)
              : options_.folder + "/" + table::NewUuid() + ".parquet";
  GEOLAKE_ASSIGN_OR_RETURN(stream_, io_->OpenWrite(path_, /*overwrite=*/false));
  geoparquet::GeoParquetOptions o;
  o.order = geoparquet::RowOrder::kAsGiven;
  o.hilbert_sorted_input = options_.hilbert_sorted;
  o.hilbert_order = t.layout.hilbert_order;
  o.hilbert_extent = t.layout.hilbert_extent;
  o.row_group_rows = options_.row_group_rows;
  o.row_group_bytes = options_.row_group_bytes;
  o.compression = options_.compression.value_or(t.compression);
  o.executor = t.executor;
  o.schema = t.parquet_schema;
  o.cell_value = options_.cell;
  geoparquet::SourceLayout layout{t.fields, t.crs_projjson, t.crs_authority};
  auto writer = geoparquet::GeoParquetFileWriter::Open(stream_.get(), std::move(layout), o);
  if (!writer.ok()) {
    stream_->Abort();
    stream_.reset();
    return writer.status().WithContext("data file '" + path_ + "'");
  }
  writer_ = std::move(*writer);
  return Status::OK();
}

Status GroupWriter::Add(RowBatch batch) {
  if (batch.num_rows() == 0) return Status::OK();
  std::optional<StageMetrics::Timer> timer;
  if (options_.stage != nullptr) timer.emplace(options_.stage);
  if (writer_ == nullptr) GEOLAKE_RETURN_NOT_OK(OpenFile());
  const std::int64_t rows = batch.num_rows();
  GEOLAKE_RETURN_NOT_OK_CTX(
      writer_->AddNormalized(std::move(batch.rows), std::move(batch.summaries)),
      "data file '" + path_ + "'");
  rows_written_ += rows;
  if (options_.split_bytes > 0 && writer_->file_bytes_so_far() >= options_.split_bytes) {
    // The estimate counts open pages uncompressed: close the row group to know the real size,
    // and cut the file only when that reached the split (files come out near their target
    // rather than short by the compression ratio; a few row groups near the cut are smaller).
    GEOLAKE_RETURN_NOT_OK_CTX(writer_->FlushRowGroup(), "data file '" + path_ + "'");
    if (writer_->file_bytes_so_far() >= options_.split_bytes) return FinishFile();
  }
  return Status::OK();
}

Status GroupWriter::FinishFile() {
  if (writer_ == nullptr) return Status::OK();
  auto summary = writer_->Finish();
  writer_.reset();
  if (!summary.ok()) {
    stream_->Abort();
    stream_.reset();
    return summary.status().WithContext("data file '" + path_ + "'");
  }
  Status closed = stream_->Close();
  stream_.reset();
  GEOLAKE_RETURN_NOT_OK_CTX(closed, "data file '" + path_ + "'");
  std::vector<table::Value> partition;
  const pipeline::TableWriteOptions& t = *options_.table;
  if (t.layout.partition.kind != layout::PartitionKind::kNone) {
    partition.push_back(options_.cell ? table::Value(*options_.cell) : table::Value());
  }
  table::ParquetMetricsOptions metrics;
  metrics.geometry_bounds = t.geometry_bounds;
  auto data_file = table::DataFileFromParquet(summary->metadata, path_, summary->file_bytes,
                                              *t.schema, std::move(partition), metrics);
  if (!data_file.ok()) {
    (void)io_->Delete(path_);
    return data_file.status().WithContext("data file '" + path_ + "'");
  }
  data_file->sort_order_id = options_.sort_order_id;
  if (options_.stage != nullptr) {
    options_.stage->AddRowsOut(summary->rows);
    options_.stage->AddBytesOut(summary->file_bytes);
    options_.stage->counter("files")->Add(1);
  }
  files_.push_back(
      pipeline::WrittenFile{path_, std::move(*data_file), summary->rows, summary->file_bytes});
  return Status::OK();
}

Status GroupWriter::Finish() {
  std::optional<StageMetrics::Timer> timer;
  if (options_.stage != nullptr) timer.emplace(options_.stage);
  return FinishFile();
}

void GroupWriter::Abort() {
  writer_.reset();
  if (stream_ != nullptr) stream_->Abort();
  stream_.reset();
  for (const pipeline::WrittenFile& f : files_) (void)io_->Delete(f.path);
  files_.clear();
}

std::vector<pipeline::WrittenFile> GroupWriter::Release() { return std::exchange(files_, {}); }

}  // namespace geolake::maintenance
