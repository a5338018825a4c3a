#include "geolake/formats/parquet/file_writer.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "geolake/core/little_endian.h"

namespace geolake::parquet {
namespace {

constexpr std::string_view kMagic = "PAR1";
// Rows handed to the column writers between two row-group byte checks: small enough that a
// row group overshoots its byte limit by little, large enough to amortize the calls.
constexpr std::int64_t kSliceRows = 8192;

}  // namespace

std::string GeolakeCreatedBy(std::string_view build) {
  return "geolake version 0.1.0 (build " + std::string(build) + ")";
}

FileWriter::FileWriter(io::OutputStream* sink, Schema schema, WriterOptions options)
    : sink_(sink), schema_(std::move(schema)), options_(std::move(options)) {}

FileWriter::~FileWriter() = default;

Result<std::unique_ptr<FileWriter>> FileWriter::Open(io::OutputStream* sink, Schema schema,
                                                     WriterOptions options) {
  if (sink == nullptr) return Status::InvalidArgument("parquet writer: no output stream");
  if (options.row_group_rows <= 0 || options.row_group_bytes <= 0) {
    return Status::InvalidArgument("parquet writer: row group limits must be positive");
  }
  if (schema.num_leaves() == 0) return Status::InvalidArgument("parquet writer: empty schema");

  if (options.geometry_logical_type_column.has_value()) {
    std::vector<Field> fields = schema.fields();
    auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) {
      return f.name == *options.geometry_logical_type_column;
    });
    if (it == fields.end() || it->is_group() || *it->physical_type != PhysicalType::kByteArray) {
      return Status::InvalidArgument("parquet writer: geometry column '" +
                                     *options.geometry_logical_type_column +
                                     "' is not a top-level BYTE_ARRAY column");
    }
    it->logical_type = LogicalType::Geometry(options.geometry_crs);
    GEOLAKE_ASSIGN_OR_RETURN(schema, Schema::Make(std::move(fields), schema.root_name()));
  }

  for (const auto& [path, unused] : options.column_options) {
    if (schema.LeafIndex(path) < 0) {
      return Status::InvalidArgument("parquet writer: column_options names unknown column '" +
                                     path + "'");
    }
  }

  std::unique_ptr<FileWriter> writer(new FileWriter(sink, std::move(schema), std::move(options)));
  for (const auto& leaf : writer->schema_.leaves()) {
    auto it = writer->options_.column_options.find(leaf.dotted_path());
    ColumnWriteOptions col_options =
        it != writer->options_.column_options.end() ? it->second : writer->options_.column;
    if (col_options.expected_chunk_rows <= 0) {
      col_options.expected_chunk_rows = writer->options_.row_group_rows;
    }
    GEOLAKE_ASSIGN_OR_RETURN(auto column,
                             ColumnChunkWriter::Make(leaf, col_options, writer->options_.executor));
    writer->columns_.push_back(std::move(column));
  }
  GEOLAKE_RETURN_NOT_OK_CTX(sink->Write(kMagic), "parquet writer");
  return writer;
}

Status FileWriter::Fail(Status st) {
  if (error_.ok()) error_ = st;
  return st;
}

std::int64_t FileWriter::buffered_bytes() const {
  std::int64_t total = 0;
  for (const auto& c : columns_) total += c->buffered_bytes();
  return total;
}

std::int64_t FileWriter::bytes_written() const { return static_cast<std::int64_t>(sink_->Tell()); }

Status FileWriter::WriteBatch(const Batch& batch) {
  GEOLAKE_RETURN_NOT_OK(error_);
  if (closed_) return Status::InvalidArgument("parquet writer: WriteBatch after Close");
  GEOLAKE_RETURN_NOT_OK_CTX(batch.Validate(schema_), "parquet writer");
  std::vector<std::int64_t> value_cursor(columns_.size(), 0);
  std::int64_t row = 0;
  while (row < batch.num_rows) {
    const std::int64_t n =
        std::min({batch.num_rows - row, options_.row_group_rows - rows_in_group_, kSliceRows});
    GEOLAKE_RETURN_NOT_OK(WriteRows(batch, row, row + n, value_cursor));
    row += n;
    bool full = rows_in_group_ >= options_.row_group_rows;
    if (!full && buffered_bytes() >= options_.row_group_bytes) {
      // buffered_bytes() counts pages still being compressed at their largest possible size;
      // the row group is cut on their real sizes, as without an executor (same file bytes).
      GEOLAKE_RETURN_NOT_OK(SettleColumns());
      full = buffered_bytes() >= options_.row_group_bytes;
    }
    if (full) GEOLAKE_RETURN_NOT_OK(FlushRowGroup());
  }
  // Pages compressed on the executor do not outlive the call: a streaming caller's next batch may
  // be far away, and their buffers would be held meanwhile.
  return SettleColumns();
}

Status FileWriter::SettleColumns() {
  for (auto& column : columns_) {
    Status st = column->Settle();
    if (!st.ok()) return Fail(std::move(st));
  }
  return Status::OK();
}

Status FileWriter::WriteRows(const Batch& batch, std::int64_t row_begin, std::int64_t row_end,
                             std::vector<std::int64_t>& value_cursor) {
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    // Non-repeated columns only: one level entry per row.
    auto consumed = columns_[c]->Append(batch.columns[c], row_begin, row_end, value_cursor[c]);
    if (!consumed.ok()) return Fail(std::move(consumed).status());
    value_cursor[c] += *consumed;
  }
  rows_in_group_ += row_end - row_begin;
  rows_written_ += row_end - row_begin;
  return Status::OK();
}

Status FileWriter::FlushRowGroup() {
  GEOLAKE_RETURN_NOT_OK(error_);
  if (rows_in_group_ == 0) return Status::OK();
  RowGroup rg;
  rg.num_rows = rows_in_group_;
  rg.ordinal = static_cast<std::int16_t>(std::min<std::size_t>(row_groups_.size(), INT16_MAX));
  rg.sorting_columns = options_.sorting_columns;
  std::vector<std::optional<ColumnIndex>> column_indexes;
  std::vector<OffsetIndex> offset_indexes;
  std::int64_t total_compressed = 0;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    auto finished = columns_[c]->Finish();
    if (!finished.ok()) return Fail(std::move(finished).status());
    FinishedChunk& chunk = *finished;
    const auto base = static_cast<std::int64_t>(sink_->Tell());
    if (c == 0) rg.file_offset = base;
    for (std::string& piece : chunk.pieces) {
      Status st = sink_->Write(piece);
      if (!st.ok()) return Fail(std::move(st).WithContext("parquet writer"));
      std::string().swap(piece);  // freed as written: a row group is not held twice
    }

    ColumnMetaData md = std::move(chunk.metadata);
    md.data_page_offset += base;
    if (md.dictionary_page_offset.has_value()) *md.dictionary_page_offset += base;
    rg.total_byte_size += md.total_uncompressed_size;
    total_compressed += md.total_compressed_size;
    ColumnChunk cc;
    cc.file_offset = 0;
    cc.meta_data = std::move(md);
    rg.columns.push_back(std::move(cc));

    OffsetIndex oi;
    oi.page_locations = std::move(chunk.pages);
    for (auto& loc : oi.page_locations) loc.offset += base;
    offset_indexes.push_back(std::move(oi));
    column_indexes.push_back(std::move(chunk.column_index));
  }
  rg.total_compressed_size = total_compressed;
  row_groups_.push_back(std::move(rg));
  column_indexes_.push_back(std::move(column_indexes));
  offset_indexes_.push_back(std::move(offset_indexes));
  rows_in_group_ = 0;
  return Status::OK();
}

void FileWriter::AddKeyValueMetadata(std::string key, std::string value) {
  for (auto& kv : options_.key_value_metadata) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  options_.key_value_metadata.push_back({std::move(key), std::move(value)});
}

Result<FileMetaData> FileWriter::Close() {
  GEOLAKE_RETURN_NOT_OK(error_);
  if (closed_) return Status::InvalidArgument("parquet writer: Close called twice");
  GEOLAKE_RETURN_NOT_OK(FlushRowGroup());

  // Page index: every ColumnIndex, then every OffsetIndex, after the row groups (§1.1).
  for (std::size_t g = 0; g < row_groups_.size(); ++g) {
    for (std::size_t c = 0; c < row_groups_[g].columns.size(); ++c) {
      const auto& ci = column_indexes_[g][c];
      if (!ci.has_value()) continue;  // not asked for, or no valid bounds (§1.8)
      const std::string bytes = SerializeThrift(*ci);
      ColumnChunk& cc = row_groups_[g].columns[c];
      cc.column_index_offset = static_cast<std::int64_t>(sink_->Tell());
      cc.column_index_length = static_cast<std::int32_t>(bytes.size());
      Status st = sink_->Write(bytes);
      if (!st.ok()) return Fail(std::move(st).WithContext("parquet writer"));
    }
  }
  for (std::size_t g = 0; g < row_groups_.size(); ++g) {
    for (std::size_t c = 0; c < row_groups_[g].columns.size(); ++c) {
      const std::string& path = schema_.leaves()[c].dotted_path();
      auto it = options_.column_options.find(path);
      const bool write = it != options_.column_options.end() ? it->second.write_page_index
                                                             : options_.column.write_page_index;
      if (!write) continue;
      const std::string bytes = SerializeThrift(offset_indexes_[g][c]);
      ColumnChunk& cc = row_groups_[g].columns[c];
      cc.offset_index_offset = static_cast<std::int64_t>(sink_->Tell());
      cc.offset_index_length = static_cast<std::int32_t>(bytes.size());
      Status st = sink_->Write(bytes);
      if (!st.ok()) return Fail(std::move(st).WithContext("parquet writer"));
    }
  }

  FileMetaData md;
  md.version = 1;
  md.schema = schema_.ToElements();
  md.num_rows = rows_written_;
  md.row_groups = row_groups_;
  md.key_value_metadata = options_.key_value_metadata;
  md.created_by = options_.created_by;
  md.column_orders.assign(schema_.leaves().size(), ColumnOrder{});

  const std::string footer = SerializeThrift(md);
  std::string tail;
  AppendLE(static_cast<std::uint32_t>(footer.size()), &tail);
  tail.append(kMagic);
  Status st = sink_->Write(footer);
  if (st.ok()) st = sink_->Write(tail);
  if (!st.ok()) return Fail(std::move(st).WithContext("parquet writer"));
  closed_ = true;
  return md;
}

}  // namespace geolake::parquet
