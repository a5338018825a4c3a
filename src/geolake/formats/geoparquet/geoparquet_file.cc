#include "geolake/formats/geoparquet/geoparquet_file.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <utility>

#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/geo/hilbert.h"
#include "geolake/geo/wkb.h"

namespace geolake::geoparquet {

using geoparquet::FieldType;
using parquet::Field;
using parquet::LogicalType;
using parquet::PhysicalType;
using parquet::Repetition;

Result<RowOrder> ParseRowOrder(std::string_view text) {
  if (text == "hilbert") return RowOrder::kHilbert;
  if (text == "none") return RowOrder::kNone;
  return Status::InvalidArgument("row order '" + std::string(text) + "': expected hilbert or none");
}

std::string Compression::ToString() const {
  switch (codec) {
    case parquet::CompressionCodec::kZstd:
      return "zstd:" + std::to_string(options.zstd_level);
    case parquet::CompressionCodec::kGzip:
      return "gzip:" + std::to_string(options.gzip_level);
    case parquet::CompressionCodec::kSnappy:
      return "snappy";
    case parquet::CompressionCodec::kUncompressed:
      return "none";
    default:
      return std::string(parquet::CodecName(codec));
  }
}

Result<Compression> ParseCompression(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("compression '" + std::string(text) + "': " + std::string(why));
  };
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  std::optional<int> level;
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    int value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
      return bad("the level must be an integer");
    }
    level = value;
  }
  Compression c;
  if (name == "zstd") {
    c.codec = parquet::CompressionCodec::kZstd;
    if (level) {
      if (*level < 1 || *level > 22) return bad("zstd levels are 1..22");
      c.options.zstd_level = *level;
    }
  } else if (name == "gzip") {
    c.codec = parquet::CompressionCodec::kGzip;
    if (level) {
      if (*level < 1 || *level > 9) return bad("gzip levels are 1..9");
      c.options.gzip_level = *level;
    }
  } else if (name == "snappy" || name == "none" || name == "uncompressed") {
    if (level) return bad("this codec takes no level");
    c.codec = name == "snappy" ? parquet::CompressionCodec::kSnappy
                               : parquet::CompressionCodec::kUncompressed;
  } else {
    return bad("expected zstd[:LEVEL], snappy, gzip[:LEVEL] or none");
  }
  return c;
}

Result<parquet::Schema> GeoParquetSchema(const std::vector<geoparquet::FieldDef>& fields,
                                         bool hilbert_column) {
  std::vector<Field> out;
  std::set<std::string, std::less<>> names;
  std::int32_t next_id = 1;
  for (const geoparquet::FieldDef& def : fields) {
    // Without a geo_hilbert column of its own the file may carry one as an attribute (a query
    // asked for the table's layout columns).
    if (def.name == kGeometryColumn || def.name == kBboxColumn ||
        (hilbert_column && def.name == kHilbertColumn)) {
      return Status::InvalidArgument("source field '" + def.name +
                                     "' has the name of a column geolake adds");
    }
    if (!names.insert(def.name).second) {
      return Status::InvalidArgument("source field '" + def.name + "' appears twice");
    }
    const std::int32_t id = next_id++;
    switch (def.type) {
      case FieldType::kBool:
        out.push_back(Field::Leaf(def.name, PhysicalType::kBoolean, Repetition::kOptional, id));
        break;
      case FieldType::kInt64:
        out.push_back(Field::Leaf(def.name, PhysicalType::kInt64, Repetition::kOptional, id));
        break;
      case FieldType::kDouble:
        out.push_back(Field::Leaf(def.name, PhysicalType::kDouble, Repetition::kOptional, id));
        break;
      case FieldType::kString:
        out.push_back(Field::Leaf(def.name, PhysicalType::kByteArray, Repetition::kOptional, id,
                                  LogicalType::String()));
        break;
      case FieldType::kBinary:
        out.push_back(Field::Leaf(def.name, PhysicalType::kByteArray, Repetition::kOptional, id));
        break;
      case FieldType::kDate:
        out.push_back(Field::Leaf(def.name, PhysicalType::kInt32, Repetition::kOptional, id,
                                  LogicalType::Date()));
        break;
      case FieldType::kTimestamp:
        out.push_back(Field::Leaf(
            def.name, PhysicalType::kInt64, Repetition::kOptional, id,
            LogicalType::Timestamp(/*is_adjusted_to_utc=*/true, parquet::TimeUnit::kMicros)));
        break;
    }
  }
  out.push_back(Field::Leaf(std::string(kGeometryColumn), PhysicalType::kByteArray,
                            Repetition::kOptional, next_id++));
  // Ids follow Iceberg's fresh-id order (every field of a struct before the fields nested in
  // it), so a file written here matches a table created from the same source.
  const std::int32_t bbox_id = next_id++;
  const std::int32_t hilbert_id = hilbert_column ? next_id++ : 0;
  std::vector<Field> corners;
  for (const char* corner : {"xmin", "ymin", "xmax", "ymax"}) {
    corners.push_back(Field::Leaf(corner, PhysicalType::kDouble, Repetition::kRequired, next_id++));
  }
  // GeoParquet 1.1: the covering has the geometry's repetition and is null iff it is.
  out.push_back(
      Field::Group(std::string(kBboxColumn), Repetition::kOptional, bbox_id, std::move(corners)));
  if (hilbert_column) {
    out.push_back(Field::Leaf(std::string(kHilbertColumn), PhysicalType::kInt64,
                              Repetition::kOptional, hilbert_id));
  }
  return parquet::Schema::Make(std::move(out));
}

// One batch as taken by Add: the source rows with their geometry rewritten as ISO WKB, and
// each row's 2D envelope (empty for null and empty geometries).
struct GeoParquetFileWriter::Held {
  geoparquet::FeatureBatch batch;
  std::vector<geo::Envelope> envelopes;
};

// One row to write: held_[batch], row `row`, with Hilbert key `key` (< 0: null).
struct GeoParquetFileWriter::RowRef {
  std::uint32_t batch;
  std::uint32_t row;
  std::int64_t key;
};

GeoParquetFileWriter::GeoParquetFileWriter(SourceLayout layout, GeoParquetOptions options,
                                           parquet::Schema schema)
    : layout_(std::move(layout)), options_(std::move(options)), schema_(std::move(schema)) {}

GeoParquetFileWriter::~GeoParquetFileWriter() = default;

Result<std::unique_ptr<GeoParquetFileWriter>> GeoParquetFileWriter::Open(
    io::OutputStream* sink, SourceLayout layout, GeoParquetOptions options) {
  if (options.row_group_rows <= 0) {
    return Status::InvalidArgument("row group rows must be positive, not " +
                                   std::to_string(options.row_group_rows));
  }
  if (options.hilbert_order < 1 || options.hilbert_order > geo::kMaxHilbertOrder) {
    return Status::InvalidArgument("hilbert order must be in [1, 31], not " +
                                   std::to_string(options.hilbert_order));
  }
  if (options.order == RowOrder::kNone) options.hilbert_column = false;
  std::optional<geo::HilbertCurve> curve;
  if (options.order == RowOrder::kAsGiven && options.hilbert_column) {
    // Streamed rows cannot wait for the file's own extent: the key needs a fixed one.
    if (!options.hilbert_extent.has_value()) {
      return Status::InvalidArgument("row order as-given needs the hilbert extent");
    }
    GEOLAKE_ASSIGN_OR_RETURN(
        geo::HilbertCurve made,
        geo::HilbertCurve::Make(*options.hilbert_extent, options.hilbert_order));
    curve = made;
  }
  parquet::Schema schema;
  if (options.schema.has_value()) {
    schema = *options.schema;
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(schema, GeoParquetSchema(layout.fields, options.hilbert_column));
  }
  // AppendRow fills leaves by position: check that the schema has them where it expects.
  const int num_fields = static_cast<int>(layout.fields.size());
  // geo_cell is the leaf after bbox when the schema has it; an attribute of that name (a
  // query's output of a table's columns) is not the partition column.
  const int cell_position = num_fields + 5;
  const int cell_leaf = cell_position < schema.num_leaves() &&
                                schema.leaves()[cell_position].dotted_path() == kCellColumn
                            ? cell_position
                            : -1;
  const int hilbert_leaf =
      options.hilbert_column ? schema.LeafIndex(std::string(kHilbertColumn)) : -1;
  const int expected_leaves =
      num_fields + 5 + (cell_leaf >= 0 ? 1 : 0) + (options.hilbert_column ? 1 : 0);
  bool fits = schema.num_leaves() == expected_leaves &&
              schema.LeafIndex(std::string(kGeometryColumn)) == num_fields &&
              schema.LeafIndex(std::string(kBboxColumn) + ".xmin") == num_fields + 1 &&
              schema.LeafIndex(std::string(kBboxColumn) + ".ymax") == num_fields + 4 &&
              (cell_leaf < 0 || cell_leaf == num_fields + 5) &&
              (!options.hilbert_column || hilbert_leaf == expected_leaves - 1);
  for (int i = 0; fits && i < num_fields; ++i) {
    fits = schema.leaves()[i].dotted_path() == layout.fields[i].name;
  }
  if (!fits) {
    return Status::InvalidArgument(
        "parquet schema does not have geolake's layout (attributes, geometry, bbox, "
        "[geo_cell], [geo_hilbert]) for the given fields");
  }

  parquet::WriterOptions writer_options;
  writer_options.row_group_rows = options.row_group_rows;
  writer_options.row_group_bytes = options.row_group_bytes;
  writer_options.column.max_rows_per_page = options.max_rows_per_page;
  writer_options.column.codec = options.compression.codec;
  writer_options.column.compression = options.compression.options;
  writer_options.executor = options.executor;
  if (options.geometry_logical_type) {
    writer_options.geometry_logical_type_column = std::string(kGeometryColumn);
    const bool default_crs = layout.crs_authority == "EPSG:4326" ||
                             layout.crs_authority == "OGC:CRS84" || layout.crs_projjson.empty();
    // Inline PROJJSON, as GeoParquet 2.0 asks of a non-default CRS.
    if (!default_crs) writer_options.geometry_crs = layout.crs_projjson;
  }
  if (options.hilbert_column &&
      (options.order == RowOrder::kHilbert || options.hilbert_sorted_input)) {
    parquet::SortingColumn sorting;
    sorting.column_idx = schema.LeafIndex(std::string(kHilbertColumn));
    sorting.nulls_first = false;
    writer_options.sorting_columns.push_back(sorting);
  }
  // The Parquet writer keeps the schema; our copy names the leaves for AppendRow.
  GEOLAKE_ASSIGN_OR_RETURN(auto file_writer,
                           parquet::FileWriter::Open(sink, schema, std::move(writer_options)));
  auto writer = std::unique_ptr<GeoParquetFileWriter>(
      new GeoParquetFileWriter(std::move(layout), std::move(options), std::move(schema)));
  writer->writer_ = std::move(file_writer);
  writer->cell_leaf_ = cell_leaf;
  writer->hilbert_leaf_ = hilbert_leaf;
  writer->curve_ = curve;
  return writer;
}

Status GeoParquetFileWriter::Fail(Status st) {
  if (error_.ok()) error_ = st;
  return st;
}

std::int64_t GeoParquetFileWriter::buffered_bytes() const {
  return held_bytes_ + (writer_ != nullptr ? writer_->buffered_bytes() : 0);
}

std::int64_t GeoParquetFileWriter::file_bytes_so_far() const {
  return writer_ != nullptr ? writer_->bytes_written() + writer_->buffered_bytes() : 0;
}

Status GeoParquetFileWriter::FlushRowGroup() {
  if (!error_.ok()) return error_;
  if (options_.order == RowOrder::kHilbert) {
    return Status::InvalidArgument("geoparquet writer: FlushRowGroup needs a streamed row order");
  }
  Status st = writer_->FlushRowGroup();
  if (!st.ok()) return Fail(std::move(st));
  return Status::OK();
}

Status GeoParquetFileWriter::CheckFields(const geoparquet::FeatureBatch& batch) const {
  if (batch.columns.size() != layout_.fields.size()) {
    return Status::InvalidArgument("batch has " + std::to_string(batch.columns.size()) +
                                   " attribute columns, the layout " +
                                   std::to_string(layout_.fields.size()));
  }
  for (std::size_t i = 0; i < batch.columns.size(); ++i) {
    if (batch.columns[i].type != layout_.fields[i].type) {
      return Status::InvalidArgument(
          "batch column " + std::to_string(i) + " ('" + layout_.fields[i].name + "') is " +
          std::string(geoparquet::FieldTypeName(batch.columns[i].type)) + ", the layout says " +
          std::string(geoparquet::FieldTypeName(layout_.fields[i].type)));
    }
  }
  return Status::OK();
}

Status GeoParquetFileWriter::Add(geoparquet::FeatureBatch batch) {
  if (!error_.ok()) return error_;
  if (finished_) return Status::InvalidArgument("geoparquet writer: Add after Finish");
  Status fields = CheckFields(batch);
  if (!fields.ok()) return Fail(std::move(fields));
  const std::size_t num_rows = static_cast<std::size_t>(batch.num_rows());

  // Rewrite the geometries as ISO little-endian WKB into a new buffer. NormalizeWkb's one
  // validating pass also yields the type and envelope (GDAL already hands out ISO WKB, so it
  // is one validating copy per value; the other readers of the file rely on that validation).
  std::vector<geo::WkbSummary> summaries(num_rows);
  std::string wkb;
  wkb.reserve(batch.wkb.size());
  std::vector<std::int64_t> offsets;
  offsets.reserve(num_rows + 1);
  offsets.push_back(0);
  for (std::size_t row = 0; row < num_rows; ++row) {
    if (batch.geometry_valid[row] != 0) {
      Result<std::string> normalized = geo::NormalizeWkb(batch.GeometryAt(row), &summaries[row]);
      if (!normalized.ok()) {
        return Fail(normalized.status().WithContext(
            "feature " + std::to_string(batch.feature_index[row]) + ": geometry"));
      }
      wkb += *normalized;
    }
    offsets.push_back(static_cast<std::int64_t>(wkb.size()));
  }
  batch.wkb = std::move(wkb);
  batch.wkb_offsets = std::move(offsets);
  return AddNormalized(std::move(batch), std::move(summaries));
}

Status GeoParquetFileWriter::AddNormalized(geoparquet::FeatureBatch batch,
                                           std::vector<geo::WkbSummary> summaries) {
  if (!error_.ok()) return error_;
  if (finished_) return Status::InvalidArgument("geoparquet writer: Add after Finish");
  Status fields = CheckFields(batch);
  if (!fields.ok()) return Fail(std::move(fields));
  const std::size_t num_rows = static_cast<std::size_t>(batch.num_rows());
  if (summaries.size() != num_rows || batch.geometry_valid.size() != num_rows ||
      batch.wkb_offsets.size() != num_rows + 1) {
    return Fail(Status::InvalidArgument("batch of " + std::to_string(num_rows) + " rows has " +
                                        std::to_string(summaries.size()) + " geometry summaries"));
  }
  Held held;
  held.envelopes.resize(num_rows);
  for (std::size_t row = 0; row < num_rows; ++row) {
    if (batch.geometry_valid[row] != 0) {
      stats_.Add(summaries[row]);
      held.envelopes[row] = summaries[row].envelope;
      if (summaries[row].envelope.IsEmpty()) ++empty_geometries_;
    } else {
      stats_.AddNull();
    }
  }
  held.batch = std::move(batch);
  rows_ += static_cast<std::int64_t>(num_rows);

  if (options_.order != RowOrder::kHilbert) {
    held_.push_back(std::move(held));
    const std::vector<geo::Envelope>& envs = held_.back().envelopes;
    std::vector<RowRef> rows(num_rows);
    for (std::size_t row = 0; row < num_rows; ++row) {
      std::int64_t key = -1;
      if (curve_.has_value() && !envs[row].IsEmpty()) {
        const geo::Envelope& e = envs[row];
        key = static_cast<std::int64_t>(
            curve_->Index((e.xmin + e.xmax) * 0.5, (e.ymin + e.ymax) * 0.5));
      }
      if (options_.hilbert_sorted_input) {
        const std::int64_t order_key = key < 0 ? std::numeric_limits<std::int64_t>::max() : key;
        if (order_key < last_key_) {
          held_.clear();
          return Fail(Status::InvalidArgument(
              "rows are not in Hilbert order: row " +
              std::to_string(rows_ - static_cast<std::int64_t>(num_rows - row)) + " has key " +
              std::to_string(key) + " after " + std::to_string(last_key_)));
        }
        last_key_ = order_key;
      }
      rows[row] = RowRef{0, static_cast<std::uint32_t>(row), key};
    }
    parquet::Batch out = parquet::Batch::ForSchema(schema_);
    AppendRows(rows, held_.back().batch.wkb.size(), &out);
    held_.clear();
    return FlushOut(&out);
  }
  held_bytes_ += held.batch.ByteSize() +
                 static_cast<std::int64_t>(held.envelopes.size() * sizeof(geo::Envelope));
  held_.push_back(std::move(held));
  return Status::OK();
}

namespace {

// ColumnData's Append* for a present value, inlined: the definition level of a present value
// (the per-value calls into ColumnData were ~5% of an ingest's CPU).
inline void MarkDefined(parquet::ColumnData* col) {
  if (col->max_definition_level > 0) col->def_levels.push_back(col->max_definition_level);
  if (col->max_repetition_level > 0) col->rep_levels.push_back(0);
}

}  // namespace

void GeoParquetFileWriter::AppendRows(std::span<const RowRef> rows, std::size_t geometry_bytes,
                                      parquet::Batch* out) const {
  // In Hilbert order the rows come from anywhere in the held batches, so nearly every value
  // read below is a cache miss: each loop touches a row's data once (the four bbox corners in
  // one pass) and asks for the data of the row kAhead places further on before it is needed.
  constexpr std::size_t kAhead = 8;
  const std::size_t count = rows.size();
  const std::size_t num_fields = layout_.fields.size();
  for (std::size_t i = 0; i < num_fields; ++i) {
    parquet::ColumnData& col = out->columns[i];
    const FieldType type = layout_.fields[i].type;
    const auto column_of = [&](const RowRef& ref) -> const geoparquet::Column& {
      return held_[ref.batch].batch.columns[i];
    };
    const bool is_bytes = type == FieldType::kString || type == FieldType::kBinary;
    // No pass to size byte_data first (one more miss per row): `out` keeps its buffers from one
    // gathered batch to the next, so only the first one grows.
    if (is_bytes) col.byte_offsets.reserve(col.byte_offsets.size() + count);
    col.def_levels.reserve(col.def_levels.size() + count);
    for (std::size_t n = 0; n < count; ++n) {
      if (n + kAhead < count) {
        const RowRef& ahead = rows[n + kAhead];
        const geoparquet::Column& in = column_of(ahead);
        __builtin_prefetch(&in.valid[ahead.row]);
        if (is_bytes) {
          __builtin_prefetch(&in.offsets[ahead.row]);
        } else if (type == FieldType::kDouble) {
          __builtin_prefetch(&in.doubles[ahead.row]);
        } else {
          __builtin_prefetch(&in.ints[ahead.row]);
        }
      }
      const RowRef& ref = rows[n];
      const geoparquet::Column& in = column_of(ref);
      if (in.valid[ref.row] == 0) {
        col.AppendNull();
        continue;
      }
      switch (type) {
        case FieldType::kBool:
          col.bool_values.push_back(in.ints[ref.row] != 0 ? 1 : 0);
          break;
        case FieldType::kInt64:
        case FieldType::kTimestamp:
          col.int64_values.push_back(in.ints[ref.row]);
          break;
        case FieldType::kDate:
          col.int32_values.push_back(static_cast<std::int32_t>(in.ints[ref.row]));
          break;
        case FieldType::kDouble:
          col.double_values.push_back(in.doubles[ref.row]);
          break;
        case FieldType::kString:
        case FieldType::kBinary:
          if (col.byte_offsets.empty()) col.byte_offsets.push_back(0);
          col.byte_data.append(in.StringAt(ref.row));
          col.byte_offsets.push_back(static_cast<std::int64_t>(col.byte_data.size()));
          break;
      }
      MarkDefined(&col);
    }
  }
  // Leaves after the attributes: geometry, bbox.xmin..ymax, [geo_cell], [geo_hilbert].
  parquet::ColumnData& geometry = out->columns[num_fields];
  geometry.byte_data.reserve(geometry.byte_data.size() + geometry_bytes);
  geometry.byte_offsets.reserve(geometry.byte_offsets.size() + count);
  geometry.def_levels.reserve(geometry.def_levels.size() + count);
  if (geometry.byte_offsets.empty()) geometry.byte_offsets.push_back(0);
  for (std::size_t n = 0; n < count; ++n) {
    // Two steps ahead: a row's offsets first, then (once they are in cache) its WKB bytes.
    if (n + 2 * kAhead < count) {
      const RowRef& ahead = rows[n + 2 * kAhead];
      const geoparquet::FeatureBatch& batch = held_[ahead.batch].batch;
      __builtin_prefetch(&batch.wkb_offsets[ahead.row]);
      __builtin_prefetch(&batch.geometry_valid[ahead.row]);
    }
    if (n + kAhead < count) {
      const RowRef& ahead = rows[n + kAhead];
      const geoparquet::FeatureBatch& batch = held_[ahead.batch].batch;
      const auto wkb = batch.GeometryAt(ahead.row);
      __builtin_prefetch(wkb.data());
      if (!wkb.empty()) __builtin_prefetch(wkb.data() + wkb.size() - 1);
    }
    const RowRef& ref = rows[n];
    const geoparquet::FeatureBatch& batch = held_[ref.batch].batch;
    if (batch.geometry_valid[ref.row] != 0) {
      const auto wkb = batch.GeometryAt(ref.row);
      geometry.byte_data.append(reinterpret_cast<const char*>(wkb.data()), wkb.size());
      geometry.byte_offsets.push_back(static_cast<std::int64_t>(geometry.byte_data.size()));
      MarkDefined(&geometry);
    } else {
      geometry.AppendNull();
    }
  }
  parquet::ColumnData* corners[4];
  for (std::size_t c = 0; c < 4; ++c) {
    corners[c] = &out->columns[num_fields + 1 + c];
    corners[c]->double_values.reserve(corners[c]->double_values.size() + count);
    corners[c]->def_levels.reserve(corners[c]->def_levels.size() + count);
  }
  for (std::size_t n = 0; n < count; ++n) {
    if (n + kAhead < count) {
      const RowRef& ahead = rows[n + kAhead];
      __builtin_prefetch(&held_[ahead.batch].envelopes[ahead.row]);
    }
    const RowRef& ref = rows[n];
    const geo::Envelope& env = held_[ref.batch].envelopes[ref.row];
    if (env.IsEmpty()) {
      // Null geometry: null bbox (the covering rule). An empty geometry has no box either;
      // a NaN box would poison the row-group statistics readers prune on, so it is null too.
      for (parquet::ColumnData* corner : corners) corner->AppendNull(0);
      continue;
    }
    const double values[4] = {env.xmin, env.ymin, env.xmax, env.ymax};
    for (std::size_t c = 0; c < 4; ++c) {
      corners[c]->double_values.push_back(values[c]);
      MarkDefined(corners[c]);
    }
  }
  if (cell_leaf_ >= 0) {
    parquet::ColumnData& cell = out->columns[static_cast<std::size_t>(cell_leaf_)];
    if (options_.cell_value.has_value()) {
      cell.byte_data.reserve(cell.byte_data.size() + count * options_.cell_value->size());
      cell.byte_offsets.reserve(cell.byte_offsets.size() + count);
    }
    for (std::size_t n = 0; n < count; ++n) {
      if (options_.cell_value.has_value()) {
        cell.AppendBytes(*options_.cell_value);
      } else {
        cell.AppendNull();
      }
    }
  }
  if (hilbert_leaf_ >= 0) {
    parquet::ColumnData& hilbert = out->columns[static_cast<std::size_t>(hilbert_leaf_)];
    hilbert.int64_values.reserve(hilbert.int64_values.size() + count);
    for (const RowRef& ref : rows) {
      if (ref.key >= 0) {
        hilbert.int64_values.push_back(ref.key);
        MarkDefined(&hilbert);
      } else {
        hilbert.AppendNull();
      }
    }
  }
  out->num_rows += static_cast<std::int64_t>(count);
}

Status GeoParquetFileWriter::FlushOut(parquet::Batch* out) {
  if (out->num_rows == 0) return Status::OK();
  Status st = writer_->WriteBatch(*out);
  if (!st.ok()) return Fail(std::move(st));
  // Keep the buffers: the next gathered batch of this file is about as large.
  for (parquet::ColumnData& column : out->columns) column.Clear();
  out->num_rows = 0;
  return Status::OK();
}

Status GeoParquetFileWriter::WriteSorted() {
  // Without a table's fixed extent the curve spans the file's own extent (all finite: the WKB
  // summary ignores NaN), so the 2^16 x 2^16 grid resolves ~600 m cells for world data and
  // finer for smaller extents.
  const geo::Envelope& extent =
      options_.hilbert_extent.has_value() ? *options_.hilbert_extent : stats_.envelope();
  std::optional<geo::HilbertCurve> curve;
  if (!extent.IsEmpty()) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::HilbertCurve made,
                             geo::HilbertCurve::Make(extent, options_.hilbert_order));
    curve = made;
  }
  // One 16-byte entry per row: key, then (batch, row) so that equal keys keep source order.
  struct Entry {
    std::uint64_t key;
    std::uint32_t batch;
    std::uint32_t row;
  };
  constexpr std::uint64_t kLast = std::numeric_limits<std::uint64_t>::max();
  std::vector<Entry> entries;
  entries.reserve(static_cast<std::size_t>(rows_));
  for (std::size_t b = 0; b < held_.size(); ++b) {
    const std::vector<geo::Envelope>& envs = held_[b].envelopes;
    for (std::size_t row = 0; row < envs.size(); ++row) {
      const geo::Envelope& e = envs[row];
      const std::uint64_t key =
          e.IsEmpty() ? kLast : curve->Index((e.xmin + e.xmax) * 0.5, (e.ymin + e.ymax) * 0.5);
      entries.push_back({key, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(row)});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.batch != b.batch) return a.batch < b.batch;
    return a.row < b.row;
  });

  // Gather in batches of at most one row group, so FileWriter closes each group as it fills;
  // a gathered batch is also handed over at kGatherBytes of geometry, so the copy made here
  // stays small next to the rows held (wide polygons: 64k rows could be gigabytes).
  constexpr std::int64_t kGatherBytes = std::int64_t{8} << 20;
  parquet::Batch out = parquet::Batch::ForSchema(schema_);
  std::vector<RowRef> gathered;
  std::int64_t gathered_bytes = 0;
  for (const Entry& entry : entries) {
    const std::int64_t key = entry.key == kLast ? -1 : static_cast<std::int64_t>(entry.key);
    gathered.push_back(RowRef{entry.batch, entry.row, key});
    const geoparquet::FeatureBatch& batch = held_[entry.batch].batch;
    gathered_bytes += batch.wkb_offsets[entry.row + 1] - batch.wkb_offsets[entry.row];
    if (static_cast<std::int64_t>(gathered.size()) >= options_.row_group_rows ||
        gathered_bytes >= kGatherBytes) {
      AppendRows(gathered, static_cast<std::size_t>(gathered_bytes), &out);
      GEOLAKE_RETURN_NOT_OK(FlushOut(&out));
      gathered.clear();
      gathered_bytes = 0;
    }
  }
  AppendRows(gathered, static_cast<std::size_t>(gathered_bytes), &out);
  GEOLAKE_RETURN_NOT_OK(FlushOut(&out));
  held_.clear();
  held_bytes_ = 0;
  return Status::OK();
}

Result<GeoParquetFileSummary> GeoParquetFileWriter::Finish() {
  if (!error_.ok()) return error_;
  if (finished_) return Status::InvalidArgument("geoparquet writer: Finish called twice");
  finished_ = true;
  if (options_.order == RowOrder::kHilbert) {
    Status st = WriteSorted();
    if (!st.ok()) return Fail(std::move(st));
  }

  geoparquet::GeoMetadata geo;
  geo.primary_column = std::string(kGeometryColumn);
  geoparquet::GeoColumnMetadata column;
  column.encoding = "WKB";
  stats_.FillColumn(&column);
  // GeoParquet 1.1 cannot name M types; an empty list means "unknown", which stays true.
  if (stats_.has_m()) column.geometry_types.clear();
  if (layout_.crs_projjson.empty()) {
    column.crs_mode = geoparquet::CrsMode::kNull;
  } else if (layout_.crs_authority == "EPSG:4326" || layout_.crs_authority == "OGC:CRS84") {
    column.crs_mode = geoparquet::CrsMode::kOmitted;
  } else {
    column.crs_mode = geoparquet::CrsMode::kProjJson;
    column.crs_projjson = layout_.crs_projjson;
  }
  column.covering = geoparquet::BboxCovering::ForColumn(kBboxColumn);
  geo.columns.emplace_back(std::string(kGeometryColumn), column);
  Result<std::string> geo_json = geo.ToJson();
  if (!geo_json.ok()) return Fail(geo_json.status().WithContext("geo metadata"));
  writer_->AddKeyValueMetadata(std::string(geoparquet::kGeoMetadataKey), *geo_json);

  Result<parquet::FileMetaData> metadata = writer_->Close();
  if (!metadata.ok()) return Fail(metadata.status());

  GeoParquetFileSummary summary;
  summary.rows = rows_;
  summary.null_geometries = stats_.num_nulls();
  summary.empty_geometries = empty_geometries_;
  summary.row_groups = static_cast<std::int64_t>(metadata->row_groups.size());
  summary.file_bytes = writer_->bytes_written();
  summary.bbox = stats_.envelope();
  summary.geometry_types = column.geometry_types;
  summary.geo_json = std::move(*geo_json);
  summary.metadata = std::move(*metadata);
  return summary;
}

}  // namespace geolake::geoparquet
