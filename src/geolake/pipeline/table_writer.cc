#include "geolake/pipeline/table_writer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "geolake/geo/crs.h"
#include "geolake/pipeline/transform.h"
#include "geolake/table/data_file_metrics.h"

namespace geolake::pipeline {

using parquet::Field;
using parquet::LogicalType;
using parquet::PhysicalType;
using parquet::Repetition;

namespace {

Result<Field> ParquetField(const table::NestedField& field,
                           const std::map<std::string, std::string>& properties) {
  const Repetition rep = field.required ? Repetition::kRequired : Repetition::kOptional;
  const std::int32_t id = field.id;
  switch (field.type->id()) {
    case table::TypeId::kBoolean:
      return Field::Leaf(field.name, PhysicalType::kBoolean, rep, id);
    case table::TypeId::kInt:
      return Field::Leaf(field.name, PhysicalType::kInt32, rep, id);
    case table::TypeId::kLong:
      return Field::Leaf(field.name, PhysicalType::kInt64, rep, id);
    case table::TypeId::kFloat:
      return Field::Leaf(field.name, PhysicalType::kFloat, rep, id);
    case table::TypeId::kDouble:
      return Field::Leaf(field.name, PhysicalType::kDouble, rep, id);
    case table::TypeId::kDate:
      return Field::Leaf(field.name, PhysicalType::kInt32, rep, id, LogicalType::Date());
    case table::TypeId::kTimestamp:
    case table::TypeId::kTimestampTz:
      return Field::Leaf(field.name, PhysicalType::kInt64, rep, id,
                         LogicalType::Timestamp(field.type->id() == table::TypeId::kTimestampTz,
                                                parquet::TimeUnit::kMicros));
    case table::TypeId::kString:
      return Field::Leaf(field.name, PhysicalType::kByteArray, rep, id, LogicalType::String());
    case table::TypeId::kBinary:
      return Field::Leaf(field.name, PhysicalType::kByteArray, rep, id);
    case table::TypeId::kGeometry: {
      // Iceberg spec Appendix A: geometry is BYTE_ARRAY (WKB) with GEOMETRY(crs); the column
      // writer then adds the chunk's GeospatialStatistics.
      GEOLAKE_ASSIGN_OR_RETURN(std::optional<std::string> crs,
                               layout::ParquetCrsOf(*field.type, properties));
      return Field::Leaf(field.name, PhysicalType::kByteArray, rep, id,
                         LogicalType::Geometry(std::move(crs)));
    }
    case table::TypeId::kStruct: {
      std::vector<Field> children;
      for (const table::NestedField& child : field.type->fields()) {
        GEOLAKE_ASSIGN_OR_RETURN(Field made, ParquetField(child, properties));
        children.push_back(std::move(made));
      }
      return Field::Group(field.name, rep, id, std::move(children));
    }
    default:
      return Status::NotImplemented("column '" + field.name + "' of type " +
                                    field.type->ToString() + ": not written by ingest");
  }
}

}  // namespace

Result<parquet::Schema> ParquetSchemaForTable(
    const table::Schema& schema, const std::map<std::string, std::string>& properties) {
  std::vector<Field> fields;
  for (const table::NestedField& field : schema.fields()) {
    GEOLAKE_ASSIGN_OR_RETURN(Field made, ParquetField(field, properties));
    fields.push_back(std::move(made));
  }
  return parquet::Schema::Make(std::move(fields));
}

Result<TableWriteOptions> TableWriteOptionsFor(const table::TableMetadata& metadata) {
  TableWriteOptions options;
  options.table_location = metadata.location;
  options.schema = metadata.current_schema();
  if (options.schema == nullptr) return Status::CorruptData("table has no current schema");
  GEOLAKE_ASSIGN_OR_RETURN(options.layout, layout::ReadTableLayout(metadata));
  GEOLAKE_ASSIGN_OR_RETURN(options.parquet_schema,
                           ParquetSchemaForTable(*options.schema, metadata.properties));
  options.geometry_bounds = metadata.format_version >= 3;
  const auto& columns = options.schema->fields();
  for (int i = 0; i < options.layout.attribute_count; ++i) {
    const table::NestedField& column = columns[static_cast<std::size_t>(i)];
    Result<geoparquet::FieldType> type = FieldTypeOfIceberg(*column.type);
    if (!type.ok()) return type.status().WithContext("table column '" + column.name + "'");
    options.fields.push_back(geoparquet::FieldDef{column.name, *type});
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs crs, geo::Crs::Make(options.layout.crs));
  options.crs_projjson = crs.projjson();
  options.crs_authority = crs.id().value_or("");
  options.target_file_size_bytes = std::max<std::int64_t>(
      1, metadata.PropertyAsInt("write.target-file-size-bytes", options.target_file_size_bytes));
  options.row_group_bytes = std::max<std::int64_t>(
      1 << 20,
      metadata.PropertyAsInt("write.parquet.row-group-size-bytes", options.row_group_bytes));
  const auto codec = metadata.properties.find("write.parquet.compression-codec");
  if (codec != metadata.properties.end()) {
    std::string text = codec->second;
    const auto level = metadata.properties.find("write.parquet.compression-level");
    if (level != metadata.properties.end() && !level->second.empty()) text += ":" + level->second;
    GEOLAKE_ASSIGN_OR_RETURN(options.compression, geoparquet::ParseCompression(text));
  }
  return options;
}

Status WriteTransformedBatch(TransformedBatch* transformed, PartitionedWriter* writer) {
  const std::size_t num_rows = transformed->cell_ids.size();
  if (num_rows == 0) return Status::OK();
  const auto cell_of = [&](std::int32_t id) {
    return id < 0 ? std::optional<std::string>()
                  : std::optional<std::string>(transformed->cells[static_cast<std::size_t>(id)]);
  };
  const std::int32_t first = transformed->cell_ids[0];
  bool one_cell = true;
  for (const std::int32_t id : transformed->cell_ids) one_cell = one_cell && id == first;
  if (one_cell) {
    return writer->Add(cell_of(first), std::move(transformed->batch),
                       std::move(transformed->summaries));
  }
  std::map<std::int32_t, std::vector<std::uint32_t>> rows_by_cell;
  for (std::size_t row = 0; row < num_rows; ++row) {
    rows_by_cell[transformed->cell_ids[row]].push_back(static_cast<std::uint32_t>(row));
  }
  for (const auto& [id, rows] : rows_by_cell) {
    geoparquet::FeatureBatch part;
    std::vector<geo::WkbSummary> summaries;
    TakeRows(*transformed, rows, &part, &summaries);
    GEOLAKE_RETURN_NOT_OK(writer->Add(cell_of(id), std::move(part), std::move(summaries)));
  }
  return Status::OK();
}

std::string DataFilePath(const std::string& table_location, bool partitioned,
                         const std::optional<std::string>& cell) {
  std::string path = table_location + "/data/";
  if (partitioned) path += "geo_cell=" + cell.value_or("null") + "/";
  return path + table::NewUuid() + ".parquet";
}

namespace {

// What a held batch really occupies: buffer capacities (a batch built by appending can hold up
// to twice its size), plus the envelope the file writer keeps per row.
std::int64_t HeldBytes(const geoparquet::FeatureBatch& batch) {
  std::size_t total = batch.wkb.capacity() + batch.wkb_offsets.capacity() * 8 +
                      batch.geometry_valid.capacity() + batch.feature_index.capacity() * 8 +
                      batch.feature_index.size() * sizeof(geo::Envelope);
  for (const geoparquet::Column& c : batch.columns) {
    total += c.valid.capacity() + c.ints.capacity() * 8 + c.doubles.capacity() * 8 +
             c.bytes.capacity() + c.offsets.capacity() * 8;
  }
  return static_cast<std::int64_t>(total);
}

}  // namespace

struct PartitionedWriter::OpenFile {
  std::string path;
  std::unique_ptr<io::OutputStream> stream;
  std::unique_ptr<geoparquet::GeoParquetFileWriter> writer;
  Reservation reservation;
  std::int64_t held_bytes = 0;
};

PartitionedWriter::PartitionedWriter(const TableWriteOptions* options, const io::FileIO* io,
                                     MemoryBudget* budget, std::int64_t share_bytes,
                                     StageMetrics* stage, std::stop_token stop)
    : options_(options),
      io_(io),
      budget_(budget),
      share_bytes_(std::max<std::int64_t>(share_bytes, 1)),
      stage_(stage),
      stop_(std::move(stop)) {}

PartitionedWriter::~PartitionedWriter() { Abort(); }

void PartitionedWriter::Abort() {
  for (auto& [cell, file] : open_) {
    if (file->stream != nullptr) file->stream->Abort();
  }
  open_.clear();
  held_bytes_ = 0;
}

Result<PartitionedWriter::OpenFile*> PartitionedWriter::FileFor(
    const std::optional<std::string>& cell) {
  auto found = open_.find(cell);
  if (found != open_.end()) return found->second.get();
  auto file = std::make_unique<OpenFile>();
  const bool partitioned = options_->layout.partition.kind != layout::PartitionKind::kNone;
  file->path = DataFilePath(options_->table_location, partitioned, cell);
  GEOLAKE_ASSIGN_OR_RETURN(file->stream, io_->OpenWrite(file->path, /*overwrite=*/false));
  geoparquet::GeoParquetOptions geo_options;
  geo_options.hilbert_order = options_->layout.hilbert_order;
  geo_options.hilbert_extent = options_->layout.hilbert_extent;
  geo_options.row_group_rows = options_->row_group_rows;
  geo_options.row_group_bytes = options_->row_group_bytes;
  geo_options.compression = options_->compression;
  geo_options.executor = options_->executor;
  geo_options.schema = options_->parquet_schema;
  geo_options.cell_value = cell;
  geoparquet::SourceLayout layout{options_->fields, options_->crs_projjson,
                                  options_->crs_authority};
  GEOLAKE_ASSIGN_OR_RETURN(
      file->writer, geoparquet::GeoParquetFileWriter::Open(file->stream.get(), std::move(layout),
                                                           std::move(geo_options)));
  file->reservation = Reservation(budget_, 0);
  OpenFile* raw = file.get();
  open_.emplace(cell, std::move(file));
  return raw;
}

Status PartitionedWriter::Add(const std::optional<std::string>& cell,
                              geoparquet::FeatureBatch batch,
                              std::vector<geo::WkbSummary> summaries) {
  const std::int64_t cost = HeldBytes(batch);
  // Make room: our own held rows go first (a smaller file), then wait for other workers.
  while (held_bytes_ > 0 && held_bytes_ + cost > share_bytes_) {
    GEOLAKE_RETURN_NOT_OK(FinishLargest());
  }
  while (!budget_->TryReserve(cost)) {
    if (held_bytes_ > 0) {
      GEOLAKE_RETURN_NOT_OK(FinishLargest());
    } else {
      GEOLAKE_RETURN_NOT_OK(budget_->Reserve(cost, stop_));
      break;
    }
  }
  Reservation reserved(budget_, cost);
  auto file = FileFor(cell);
  if (!file.ok()) return file.status();
  OpenFile* open = *file;
  if (stage_ != nullptr) stage_->AddRowsIn(batch.num_rows());
  GEOLAKE_RETURN_NOT_OK(open->writer->AddNormalized(std::move(batch), std::move(summaries)));
  // The reservation now belongs to the file.
  open->reservation.Grow(reserved.Take());
  open->held_bytes += cost;
  held_bytes_ += cost;
  if (open->held_bytes >= options_->target_file_size_bytes) return Finish(cell);
  return Status::OK();
}

Status PartitionedWriter::FinishLargest() {
  auto largest = open_.end();
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    if (largest == open_.end() || it->second->held_bytes > largest->second->held_bytes) {
      largest = it;
    }
  }
  if (largest == open_.end()) return Status::OK();
  return Finish(largest->first);
}

Status PartitionedWriter::Finish(const std::optional<std::string>& which) {
  // A copy: `which` may be the key of the entry erased below.
  const std::optional<std::string> cell = which;
  auto found = open_.find(cell);
  if (found == open_.end()) return Status::OK();
  std::unique_ptr<OpenFile> file = std::move(found->second);
  open_.erase(found);
  held_bytes_ -= file->held_bytes;
  std::optional<StageMetrics::Timer> timer;
  if (stage_ != nullptr) timer.emplace(stage_);
  auto summary = file->writer->Finish();
  if (!summary.ok()) {
    file->stream->Abort();
    return summary.status().WithContext("data file '" + file->path + "'");
  }
  file->writer.reset();
  GEOLAKE_RETURN_NOT_OK_CTX(file->stream->Close(), "data file '" + file->path + "'");
  file->stream.reset();
  file->reservation.Reset();
  std::vector<table::Value> partition;
  if (options_->layout.partition.kind != layout::PartitionKind::kNone) {
    partition.push_back(cell.has_value() ? table::Value(*cell) : table::Value());
  }
  table::ParquetMetricsOptions metrics;
  metrics.geometry_bounds = options_->geometry_bounds;
  GEOLAKE_ASSIGN_OR_RETURN(
      table::DataFile data_file,
      table::DataFileFromParquet(summary->metadata, file->path, summary->file_bytes,
                                 *options_->schema, std::move(partition), metrics));
  if (stage_ != nullptr) {
    stage_->AddRowsOut(summary->rows);
    stage_->AddBytesOut(summary->file_bytes);
    stage_->counter("files")->Add(1);
  }
  written_.push_back(
      WrittenFile{file->path, std::move(data_file), summary->rows, summary->file_bytes});
  return Status::OK();
}

Status PartitionedWriter::FinishAll() {
  while (!open_.empty()) GEOLAKE_RETURN_NOT_OK(Finish(open_.begin()->first));
  return Status::OK();
}

std::vector<WrittenFile> PartitionedWriter::TakeWritten() { return std::exchange(written_, {}); }

}  // namespace geolake::pipeline
