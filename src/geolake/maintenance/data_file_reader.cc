#include "geolake/maintenance/data_file_reader.h"

#include <algorithm>

#include "geolake/formats/geoparquet/layout_columns.h"

namespace geolake::maintenance {
namespace {

using geoparquet::FieldType;
using parquet::PhysicalType;

// Does a stored leaf hold values of the writer's type? Only the representations geolake's
// and Iceberg's writers use for these types (as layout::CheckDataFileSchema admits them).
bool Fits(const parquet::LeafColumn& leaf, FieldType type) {
  if (leaf.max_repetition_level > 0 || leaf.path.size() != 1) return false;
  switch (type) {
    case FieldType::kBool:
      return leaf.physical_type == PhysicalType::kBoolean;
    case FieldType::kInt64:
      return leaf.physical_type == PhysicalType::kInt64 ||
             leaf.physical_type == PhysicalType::kInt32;
    case FieldType::kDouble:
      return leaf.physical_type == PhysicalType::kDouble ||
             leaf.physical_type == PhysicalType::kFloat;
    case FieldType::kString:
    case FieldType::kBinary:
      return leaf.physical_type == PhysicalType::kByteArray;
    case FieldType::kDate:
      return leaf.physical_type == PhysicalType::kInt32;
    case FieldType::kTimestamp:
      return leaf.physical_type == PhysicalType::kInt64;
  }
  return false;
}

// Timestamps are microseconds in the table; a file written in millis or nanos is scaled.
std::int64_t TimestampScale(const parquet::LeafColumn& leaf, bool* divide) {
  *divide = false;
  if (leaf.logical_type && leaf.logical_type->kind == parquet::LogicalType::Kind::kTimestamp) {
    if (leaf.logical_type->unit == parquet::TimeUnit::kMillis) return 1000;
    if (leaf.logical_type->unit == parquet::TimeUnit::kNanos) {
      *divide = true;
      return 1000;
    }
  } else if (leaf.converted_type == parquet::ConvertedType::kTimestampMillis) {
    return 1000;
  }
  return 1;
}

// Fill `col` (cleared) with `rows` nulls.
void FillNulls(std::size_t rows, geoparquet::Column* col) {
  col->valid.assign(rows, 0);
  switch (col->type) {
    case FieldType::kDouble:
      col->doubles.assign(rows, 0.0);
      break;
    case FieldType::kString:
    case FieldType::kBinary:
      col->offsets.assign(rows + 1, 0);
      break;
    default:
      col->ints.assign(rows, 0);
      break;
  }
}

// Convert one decoded leaf (non-null values compacted, definition levels per row) to a
// FeatureBatch column (one slot per row).
void Convert(const parquet::ColumnData& d, const parquet::LeafColumn& leaf, std::size_t rows,
             geoparquet::Column* col) {
  const bool nullable = d.max_definition_level > 0;
  const auto present = [&](std::size_t row) {
    return !nullable || d.def_levels[row] == d.max_definition_level;
  };
  col->valid.resize(rows);
  for (std::size_t row = 0; row < rows; ++row) col->valid[row] = present(row) ? 1 : 0;
  std::size_t vi = 0;
  switch (col->type) {
    case FieldType::kDouble: {
      col->doubles.resize(rows);
      for (std::size_t row = 0; row < rows; ++row) {
        if (col->valid[row] == 0) {
          col->doubles[row] = 0.0;
          continue;
        }
        col->doubles[row] =
            d.type == PhysicalType::kFloat ? d.float_values[vi] : d.double_values[vi];
        ++vi;
      }
      break;
    }
    case FieldType::kString:
    case FieldType::kBinary: {
      col->bytes.assign(d.byte_data);  // the values in order, nulls take no bytes
      col->offsets.resize(rows + 1);
      col->offsets[0] = 0;
      for (std::size_t row = 0; row < rows; ++row) {
        if (col->valid[row] != 0) ++vi;
        col->offsets[row + 1] = d.byte_offsets[vi];
      }
      break;
    }
    default: {
      bool divide = false;
      const std::int64_t scale =
          col->type == FieldType::kTimestamp ? TimestampScale(leaf, &divide) : 1;
      col->ints.resize(rows);
      for (std::size_t row = 0; row < rows; ++row) {
        if (col->valid[row] == 0) {
          col->ints[row] = 0;
          continue;
        }
        std::int64_t v = d.type == PhysicalType::kBoolean ? d.bool_values[vi]
                         : d.type == PhysicalType::kInt32 ? d.int32_values[vi]
                                                          : d.int64_values[vi];
        if (scale != 1) v = divide ? v / scale : v * scale;
        col->ints[row] = v;
        ++vi;
      }
      break;
    }
  }
}

}  // namespace

std::int64_t RowBatch::ByteSize() const {
  return rows.ByteSize() +
         static_cast<std::int64_t>(summaries.capacity() * sizeof(geo::WkbSummary));
}

RowBatch RowBatch::Empty(const ReadColumns& columns) {
  RowBatch b;
  b.rows.Reset(columns.fields);
  return b;
}

void AppendRow(const RowBatch& from, std::size_t row, RowBatch* to) {
  const geoparquet::FeatureBatch& src = from.rows;
  geoparquet::FeatureBatch& dst = to->rows;
  for (std::size_t c = 0; c < src.columns.size(); ++c) {
    const geoparquet::Column& in = src.columns[c];
    geoparquet::Column& out = dst.columns[c];
    out.valid.push_back(in.valid[row]);
    switch (in.type) {
      case FieldType::kDouble:
        out.doubles.push_back(in.doubles[row]);
        break;
      case FieldType::kString:
      case FieldType::kBinary:
        out.bytes.append(in.StringAt(row));
        out.offsets.push_back(static_cast<std::int64_t>(out.bytes.size()));
        break;
      default:
        out.ints.push_back(in.ints[row]);
        break;
    }
  }
  const auto wkb = src.GeometryAt(row);
  dst.wkb.append(reinterpret_cast<const char*>(wkb.data()), wkb.size());
  dst.wkb_offsets.push_back(static_cast<std::int64_t>(dst.wkb.size()));
  dst.geometry_valid.push_back(src.geometry_valid[row]);
  dst.feature_index.push_back(src.feature_index[row]);
  to->summaries.push_back(from.summaries[row]);
}

Result<std::unique_ptr<DataFileReader>> DataFileReader::Open(const io::FileIO& io,
                                                             const std::string& path,
                                                             const ReadColumns& columns) {
  auto r = std::unique_ptr<DataFileReader>(new DataFileReader());
  r->path_ = path;
  r->columns_ = columns;
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> file, io.OpenRead(path));
  auto reader =
      parquet::FileReader::Open(std::shared_ptr<const io::RandomAccessFile>(std::move(file)));
  if (!reader.ok()) return reader.status().WithContext("data file '" + path + "'");
  r->reader_ = std::move(*reader);
  const parquet::Schema& schema = r->reader_->schema();

  const auto leaf_of = [&](std::int32_t id) {
    for (int l = 0; l < schema.num_leaves(); ++l) {
      const auto& fid = schema.leaves()[static_cast<std::size_t>(l)].field_id;
      if (fid && *fid == id) return l;
    }
    return -1;
  };
  for (std::size_t i = 0; i < columns.attribute_ids.size(); ++i) {
    const int leaf = leaf_of(columns.attribute_ids[i]);
    if (leaf >= 0 &&
        !Fits(schema.leaves()[static_cast<std::size_t>(leaf)], columns.fields[i].type)) {
      return Status::NotImplemented("data file '" + path + "': column '" +
                                    schema.leaves()[static_cast<std::size_t>(leaf)].dotted_path() +
                                    "' is stored as a type that " +
                                    std::string(geoparquet::FieldTypeName(columns.fields[i].type)) +
                                    " cannot be read from");
    }
    r->leaves_.push_back(leaf);
  }
  const int geometry = leaf_of(columns.geometry_id);
  if (geometry < 0) {
    return Status::CorruptData("data file '" + path + "' has no geometry column (field id " +
                               std::to_string(columns.geometry_id) + ")");
  }
  if (schema.leaves()[static_cast<std::size_t>(geometry)].physical_type !=
      PhysicalType::kByteArray) {
    return Status::CorruptData("data file '" + path + "': the geometry column is not BYTE_ARRAY");
  }
  r->leaves_.push_back(geometry);
  for (int leaf : r->leaves_) {
    if (leaf < 0) {
      r->slot_.push_back(-1);
      continue;
    }
    r->slot_.push_back(static_cast<int>(r->read_leaves_.size()));
    r->read_leaves_.push_back(leaf);
  }

  const int hilbert = schema.LeafIndex(std::string(geoparquet::kHilbertColumn));
  r->hilbert_sorted_ = hilbert >= 0 && r->reader_->num_row_groups() > 0;
  for (int rg = 0; rg < r->reader_->num_row_groups(); ++rg) {
    const parquet::RowGroup& group = r->reader_->row_group(rg);
    std::int64_t bytes = 0;
    for (int leaf : r->read_leaves_) {
      const auto& chunk = group.columns[static_cast<std::size_t>(leaf)];
      if (chunk.meta_data) bytes += chunk.meta_data->total_uncompressed_size;
    }
    // Decoded pages and the rows converted from them, plus a summary per row.
    bytes = 2 * bytes + group.num_rows * static_cast<std::int64_t>(sizeof(geo::WkbSummary) + 32);
    r->max_row_group_bytes_ = std::max(r->max_row_group_bytes_, bytes);
    const bool sorted = std::any_of(
        group.sorting_columns.begin(), group.sorting_columns.end(),
        [&](const parquet::SortingColumn& s) { return s.column_idx == hilbert && !s.descending; });
    if (!sorted) r->hilbert_sorted_ = false;
  }
  return r;
}

Result<std::int64_t> DataFileReader::Next(RowBatch* out, DecodeScratch* scratch) {
  out->rows.Reset(columns_.fields);
  out->summaries.clear();
  if (next_group_ >= reader_->num_row_groups()) return 0;
  const int rg = next_group_++;
  const std::string where = "data file '" + path_ + "' row group " + std::to_string(rg);
  Status st = reader_->ReadRowGroupInto(rg, read_leaves_, &scratch->decoded, &scratch->buffers);
  if (!st.ok()) return st.WithContext(where);
  const std::int64_t num_rows = reader_->row_group(rg).num_rows;
  const auto rows = static_cast<std::size_t>(num_rows);
  const parquet::Batch& decoded = scratch->decoded;
  for (const parquet::ColumnData& c : decoded.columns) {
    if (c.max_repetition_level > 0 || c.num_levels() != num_rows) {
      return Status::CorruptData(where + ": a column holds " + std::to_string(c.num_levels()) +
                                 " entries for " + std::to_string(num_rows) + " rows");
    }
  }
  const parquet::Schema& schema = reader_->schema();
  for (std::size_t i = 0; i < columns_.fields.size(); ++i) {
    geoparquet::Column& col = out->rows.columns[i];
    if (slot_[i] < 0) {
      FillNulls(rows, &col);
      continue;
    }
    Convert(decoded.columns[static_cast<std::size_t>(slot_[i])],
            schema.leaves()[static_cast<std::size_t>(leaves_[i])], rows, &col);
  }

  // The geometry, validated and summarized in one pass; WKB from other writers (big-endian,
  // EWKB) becomes the ISO little-endian WKB the writer takes, ours is copied as it is.
  const parquet::ColumnData& g = decoded.columns[static_cast<std::size_t>(slot_.back())];
  geoparquet::FeatureBatch& b = out->rows;
  b.wkb.clear();
  b.wkb.reserve(g.byte_data.size());
  b.wkb_offsets.resize(rows + 1);
  b.geometry_valid.resize(rows);
  b.feature_index.resize(rows);
  out->summaries.resize(rows);
  std::size_t vi = 0;
  b.wkb_offsets[0] = 0;
  for (std::size_t row = 0; row < rows; ++row) {
    const bool present = g.max_definition_level == 0 || g.def_levels[row] == g.max_definition_level;
    b.geometry_valid[row] = present ? 1 : 0;
    b.feature_index[row] = rows_read_ + static_cast<std::int64_t>(row);
    if (present) {
      const std::string_view value = g.bytes_at(static_cast<std::int64_t>(vi++));
      Status normalized =
          geo::NormalizeWkbAppend(geo::AsBytes(value), &b.wkb, &out->summaries[row]);
      if (!normalized.ok()) {
        return normalized.WithContext(where + ", row " + std::to_string(row) + ": geometry");
      }
    }
    b.wkb_offsets[row + 1] = static_cast<std::int64_t>(b.wkb.size());
  }
  rows_read_ += num_rows;
  return num_rows;
}

}  // namespace geolake::maintenance
