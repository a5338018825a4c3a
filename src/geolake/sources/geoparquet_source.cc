#include "geolake/sources/geoparquet_source.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "geolake/core/little_endian.h"
#include "geolake/core/logging.h"
#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/formats/geoparquet/layout_columns.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/io/file_io.h"

namespace geolake::sources {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;

using parquet::ConvertedType;
using parquet::LeafColumn;
using parquet::LogicalType;
using parquet::PhysicalType;

// How one Parquet leaf becomes one FeatureBatch column.
enum class Conversion : std::uint8_t {
  kBool,
  kInt32,           // any INT32 integer -> kInt64
  kInt64,           // INT64 integer -> kInt64
  kDate,            // INT32 days
  kTimestampMilli,  // INT64 -> kTimestamp (micros)
  kTimestampMicro,
  kTimestampNano,
  kInt96Timestamp,  // legacy Impala/Spark nanos-of-day + Julian day -> kTimestamp
  kDecimal32,       // INT32 / INT64 unscaled decimals -> kDouble
  kDecimal64,
  kFloat,
  kDouble,
  kString,
  kBinary,
};

struct AttributeColumn {
  int leaf = 0;
  Conversion conversion = Conversion::kBinary;
  int scale = 0;  // decimals
  FieldDef def;
};

// Decide how a leaf maps to a FieldType; false when it cannot be an attribute.
bool MapLeaf(const LeafColumn& leaf, AttributeColumn* out) {
  const std::optional<LogicalType>& logical = leaf.logical_type;
  const auto kind = logical ? logical->kind : LogicalType::Kind::kUnrecognized;
  const auto converted = leaf.converted_type;
  out->def.name = leaf.path.front();
  switch (leaf.physical_type) {
    case PhysicalType::kBoolean:
      out->conversion = Conversion::kBool;
      out->def.type = FieldType::kBool;
      return true;
    case PhysicalType::kInt32:
      if (kind == LogicalType::Kind::kDate || converted == ConvertedType::kDate) {
        out->conversion = Conversion::kDate;
        out->def.type = FieldType::kDate;
      } else if (kind == LogicalType::Kind::kDecimal || converted == ConvertedType::kDecimal) {
        out->conversion = Conversion::kDecimal32;
        out->scale = logical ? logical->scale : 0;
        out->def.type = FieldType::kDouble;
      } else {
        out->conversion = Conversion::kInt32;
        out->def.type = FieldType::kInt64;
      }
      return true;
    case PhysicalType::kInt64:
      if (kind == LogicalType::Kind::kTimestamp) {
        out->conversion = logical->unit == parquet::TimeUnit::kMillis ? Conversion::kTimestampMilli
                          : logical->unit == parquet::TimeUnit::kNanos
                              ? Conversion::kTimestampNano
                              : Conversion::kTimestampMicro;
        out->def.type = FieldType::kTimestamp;
      } else if (converted == ConvertedType::kTimestampMillis) {
        out->conversion = Conversion::kTimestampMilli;
        out->def.type = FieldType::kTimestamp;
      } else if (converted == ConvertedType::kTimestampMicros) {
        out->conversion = Conversion::kTimestampMicro;
        out->def.type = FieldType::kTimestamp;
      } else if (kind == LogicalType::Kind::kDecimal || converted == ConvertedType::kDecimal) {
        out->conversion = Conversion::kDecimal64;
        out->scale = logical ? logical->scale : 0;
        out->def.type = FieldType::kDouble;
      } else {
        out->conversion = Conversion::kInt64;
        out->def.type = FieldType::kInt64;
      }
      return true;
    case PhysicalType::kInt96:
      out->conversion = Conversion::kInt96Timestamp;
      out->def.type = FieldType::kTimestamp;
      return true;
    case PhysicalType::kFloat:
      out->conversion = Conversion::kFloat;
      out->def.type = FieldType::kDouble;
      return true;
    case PhysicalType::kDouble:
      out->conversion = Conversion::kDouble;
      out->def.type = FieldType::kDouble;
      return true;
    case PhysicalType::kByteArray:
      if (kind == LogicalType::Kind::kString || kind == LogicalType::Kind::kEnum ||
          kind == LogicalType::Kind::kJson || converted == ConvertedType::kUtf8 ||
          converted == ConvertedType::kEnum || converted == ConvertedType::kJson) {
        out->conversion = Conversion::kString;
        out->def.type = FieldType::kString;
      } else {
        out->conversion = Conversion::kBinary;
        out->def.type = FieldType::kBinary;
      }
      return true;
    case PhysicalType::kFixedLenByteArray:
      out->conversion = Conversion::kBinary;
      out->def.type = FieldType::kBinary;
      return true;
  }
  return false;
}

// The authority of a PROJJSON's top-level "id" ("EPSG:4326"), without a JSON library: the
// CRS text is already validated JSON, and only {"authority": "...", "code": ...} is needed.
std::string AuthorityOf(const std::string& projjson) {
  const std::size_t id = projjson.rfind("\"id\"");
  if (id == std::string::npos) return "";
  auto value_after = [&](const char* key) -> std::string {
    std::size_t at = projjson.find(key, id);
    if (at == std::string::npos) return "";
    at = projjson.find(':', at);
    if (at == std::string::npos) return "";
    ++at;
    while (at < projjson.size() && (projjson[at] == ' ' || projjson[at] == '"')) ++at;
    std::size_t end = at;
    while (end < projjson.size() && projjson[end] != '"' && projjson[end] != ',' &&
           projjson[end] != '}') {
      ++end;
    }
    return projjson.substr(at, end - at);
  };
  const std::string authority = value_after("\"authority\"");
  const std::string code = value_after("\"code\"");
  if (authority.empty() || code.empty()) return "";
  return authority + ":" + code;
}

}  // namespace

struct GeoParquetSource::Impl {
  std::string path;
  std::vector<FieldDef> fields;
  std::string crs_projjson;
  std::string crs_authority;
  std::vector<std::int64_t> row_group_rows;
  std::vector<std::int64_t> row_group_first;  // first row of each row group in the file
  std::int64_t num_rows = 0;

  std::unique_ptr<parquet::FileReader> reader;
  int geometry_leaf = -1;
  std::vector<AttributeColumn> attributes;
  std::vector<int> leaves;  // geometry first, then the attributes' leaves

  // Read cursor: the decoded row group `loaded_group` and the next row within it.
  int group = 0;
  std::int64_t row_in_group = 0;
  int loaded_group = -1;
  parquet::Batch loaded;
  parquet::DecodeBuffers buffers;       // reused for every row group (no fresh pages per chunk)
  std::vector<std::int64_t> value_pos;  // per loaded column: next stored value

  Status Load(int rg);
  // Append one entry of loaded column `col` (advancing its cursors); false = null.
  bool NextPresent(std::size_t col, std::int64_t row) {
    const parquet::ColumnData& data = loaded.columns[col];
    if (data.max_definition_level == 0) return true;
    return data.def_levels[static_cast<std::size_t>(row)] == data.max_definition_level;
  }
};

Status GeoParquetSource::Impl::Load(int rg) {
  GEOLAKE_RETURN_NOT_OK(reader->ReadRowGroupInto(rg, leaves, &loaded, &buffers));
  for (const parquet::ColumnData& column : loaded.columns) {
    if (column.max_repetition_level > 0 || column.num_levels() != row_group_rows[rg]) {
      return Status::CorruptData("GeoParquet '" + path + "': row group " + std::to_string(rg) +
                                 ": a column holds " + std::to_string(column.num_levels()) +
                                 " entries for " + std::to_string(row_group_rows[rg]) + " rows");
    }
  }
  value_pos.assign(loaded.columns.size(), 0);
  loaded_group = rg;
  // Rows before row_in_group (a seek into the middle of a row group) are skipped by moving
  // the value cursors past their stored values.
  for (std::size_t c = 0; c < loaded.columns.size(); ++c) {
    for (std::int64_t r = 0; r < row_in_group; ++r) {
      if (NextPresent(c, r)) ++value_pos[c];
    }
  }
  return Status::OK();
}

GeoParquetSource::GeoParquetSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GeoParquetSource::~GeoParquetSource() = default;

Result<std::unique_ptr<GeoParquetSource>> GeoParquetSource::Open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  std::unique_ptr<io::FileIO> file_io = io::MakeLocalFileIO();
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> file, file_io->OpenRead(path));
  GEOLAKE_ASSIGN_OR_RETURN(
      impl->reader,
      parquet::FileReader::Open(std::shared_ptr<const io::RandomAccessFile>(std::move(file))));
  const parquet::FileReader& reader = *impl->reader;
  const parquet::Schema& schema = reader.schema();

  // The geometry column: the "geo" metadata's primary column; without "geo", the first column
  // with the Parquet GEOMETRY / GEOGRAPHY logical type (both are WKB).
  std::string geometry_name;
  std::vector<std::string> geo_columns;
  const geoparquet::GeoColumnMetadata* geo_column = nullptr;
  geoparquet::GeoMetadata geo;
  for (const parquet::KeyValue& kv : reader.metadata().key_value_metadata) {
    if (kv.key != geoparquet::kGeoMetadataKey || !kv.value) continue;
    auto parsed = geoparquet::GeoMetadata::Parse(*kv.value);
    if (!parsed.ok()) {
      return Status(parsed.status().code(),
                    "GeoParquet '" + path + "': \"geo\" metadata: " + parsed.status().message());
    }
    geo = std::move(parsed).value();
    geometry_name = geo.primary_column;
    for (const auto& [name, column] : geo.columns) geo_columns.push_back(name);
    geo_column = geo.FindColumn(geometry_name);
    if (geo_column == nullptr) {
      std::string message = "GeoParquet '" + path + "': primary column '";
      message += geometry_name;
      message += "' is not among the \"geo\" columns";
      return Status::InvalidArgument(message);
    }
    if (geo_column->encoding != "WKB") {
      return Status::NotImplemented("GeoParquet '" + path + "': geometry encoding '" +
                                    geo_column->encoding + "' (only WKB is read)");
    }
  }
  if (geometry_name.empty()) {
    for (const LeafColumn& leaf : schema.leaves()) {
      if (leaf.logical_type && (leaf.logical_type->kind == LogicalType::Kind::kGeometry ||
                                leaf.logical_type->kind == LogicalType::Kind::kGeography)) {
        geometry_name = leaf.path.front();
        geo_columns.push_back(geometry_name);
        break;
      }
    }
  }
  if (geometry_name.empty()) {
    return Status::InvalidArgument("Parquet '" + path +
                                   "': no \"geo\" metadata and no GEOMETRY column: not GeoParquet");
  }
  impl->geometry_leaf = schema.LeafIndex(geometry_name);
  if (impl->geometry_leaf < 0 ||
      schema.leaves()[impl->geometry_leaf].physical_type != PhysicalType::kByteArray) {
    return Status::InvalidArgument("GeoParquet '" + path + "': geometry column '" + geometry_name +
                                   "' is not a top-level BYTE_ARRAY column");
  }
  if (geo_column != nullptr) {
    if (geo_column->crs_mode == geoparquet::CrsMode::kOmitted) {
      impl->crs_authority = "OGC:CRS84";
    } else if (geo_column->crs_mode == geoparquet::CrsMode::kProjJson) {
      impl->crs_projjson = geo_column->crs_projjson;
      impl->crs_authority = AuthorityOf(impl->crs_projjson);
    }
  } else {
    const auto& logical = schema.leaves()[impl->geometry_leaf].logical_type;
    impl->crs_authority = logical->crs ? *logical->crs : "OGC:CRS84";
  }

  // Attributes: every other top-level, non-repeated leaf. Nested columns (the bbox covering
  // struct, lists, maps) and other geometry columns are left out.
  impl->leaves.push_back(impl->geometry_leaf);
  std::int64_t skipped = 0;
  std::int64_t recomputed = 0;
  for (int i = 0; i < schema.num_leaves(); ++i) {
    const LeafColumn& leaf = schema.leaves()[i];
    if (i == impl->geometry_leaf) continue;
    if (leaf.path.size() != 1 || leaf.max_repetition_level > 0 ||
        std::find(geo_columns.begin(), geo_columns.end(), leaf.path.front()) != geo_columns.end()) {
      ++skipped;
      continue;
    }
    AttributeColumn column;
    column.leaf = i;
    if (!MapLeaf(leaf, &column)) {
      ++skipped;
      continue;
    }
    // geo_cell and geo_hilbert of a file geolake wrote: derived from the geometry, so a table
    // computes its own for its CRS, partitioning and extent; not read at all.
    if (geoparquet::IsRecomputedLayoutField(column.def)) {
      ++recomputed;
      continue;
    }
    impl->fields.push_back(column.def);
    impl->attributes.push_back(std::move(column));
    impl->leaves.push_back(i);
  }
  if (skipped > 0) {
    GEOLAKE_LOG_DEBUG(
        "GeoParquet '{}': {} nested or geometry leaf column(s) not read as "
        "attributes",
        path, skipped);
  }
  if (recomputed > 0) {
    GEOLAKE_LOG_DEBUG("GeoParquet '{}': {} layout column(s) left to be recomputed", path,
                      recomputed);
  }
  std::int64_t first = 0;
  for (int rg = 0; rg < reader.num_row_groups(); ++rg) {
    impl->row_group_first.push_back(first);
    impl->row_group_rows.push_back(reader.row_group(rg).num_rows);
    first += reader.row_group(rg).num_rows;
  }
  impl->num_rows = first;
  return std::unique_ptr<GeoParquetSource>(new GeoParquetSource(std::move(impl)));
}

const std::string& GeoParquetSource::path() const { return impl_->path; }
const std::vector<FieldDef>& GeoParquetSource::fields() const { return impl_->fields; }
const std::string& GeoParquetSource::crs_projjson() const { return impl_->crs_projjson; }
const std::string& GeoParquetSource::crs_authority() const { return impl_->crs_authority; }
std::int64_t GeoParquetSource::num_rows() const { return impl_->num_rows; }
int GeoParquetSource::num_row_groups() const {
  return static_cast<int>(impl_->row_group_rows.size());
}
std::int64_t GeoParquetSource::row_group_rows(int row_group) const {
  return impl_->row_group_rows[static_cast<std::size_t>(row_group)];
}

Status GeoParquetSource::Seek(std::int64_t first_row) {
  if (first_row < 0) return Status::InvalidArgument("seek to a negative row");
  Impl& s = *impl_;
  const auto it = std::upper_bound(s.row_group_first.begin(), s.row_group_first.end(), first_row);
  s.group = static_cast<int>(it - s.row_group_first.begin()) - 1;
  if (s.group < 0) s.group = 0;
  s.row_in_group = first_row - (s.row_group_first.empty() ? 0 : s.row_group_first[s.group]);
  if (first_row >= s.num_rows) {
    s.group = num_row_groups();
    s.row_in_group = 0;
  }
  s.loaded_group = -1;
  return Status::OK();
}

Result<std::int64_t> GeoParquetSource::ReadBatch(std::int64_t max_rows, FeatureBatch* batch,
                                                 std::int64_t max_wkb_bytes) {
  Impl& s = *impl_;
  if (batch->fields.size() != s.fields.size() || batch->columns.size() != s.fields.size()) {
    batch->fields = s.fields;
    batch->columns.assign(s.fields.size(), Column{});
    for (std::size_t i = 0; i < s.fields.size(); ++i) batch->columns[i].type = s.fields[i].type;
  }
  batch->Clear();
  std::int64_t rows = 0;
  const auto full = [&] {
    return max_wkb_bytes > 0 && static_cast<std::int64_t>(batch->wkb.size()) >= max_wkb_bytes;
  };
  while (rows < max_rows && s.group < num_row_groups() && !full()) {
    if (s.row_in_group >= s.row_group_rows[s.group]) {
      ++s.group;
      s.row_in_group = 0;
      continue;
    }
    if (s.loaded_group != s.group) GEOLAKE_RETURN_NOT_OK(s.Load(s.group));
    std::int64_t take = std::min(max_rows - rows, s.row_group_rows[s.group] - s.row_in_group);
    const std::int64_t begin = s.row_in_group;
    const std::int64_t file_row = s.row_group_first[s.group] + begin;
    // Geometry: WKB passed through as stored.
    {
      const parquet::ColumnData& data = s.loaded.columns[0];
      std::int64_t& pos = s.value_pos[0];
      for (std::int64_t r = begin; r < begin + take; ++r) {
        // An empty byte string is no geometry at all, like a null.
        std::string_view wkb;
        if (s.NextPresent(0, r)) wkb = data.bytes_at(pos++);
        batch->wkb.append(wkb);
        batch->geometry_valid.push_back(wkb.empty() ? 0 : 1);
        batch->wkb_offsets.push_back(static_cast<std::int64_t>(batch->wkb.size()));
        // The geometry goes first so that the byte limit can shorten the rows the attribute
        // columns below then take.
        if (full()) {
          take = r - begin + 1;
          break;
        }
      }
    }
    for (std::size_t a = 0; a < s.attributes.size(); ++a) {
      const std::size_t col_idx = a + 1;
      const parquet::ColumnData& data = s.loaded.columns[col_idx];
      const AttributeColumn& attr = s.attributes[a];
      Column& out = batch->columns[a];
      std::int64_t& pos = s.value_pos[col_idx];
      for (std::int64_t r = begin; r < begin + take; ++r) {
        const bool present = s.NextPresent(col_idx, r);
        out.valid.push_back(present ? 1 : 0);
        const auto v = static_cast<std::size_t>(pos);
        switch (attr.conversion) {
          case Conversion::kBool:
            out.ints.push_back(present ? data.bool_values[v] : 0);
            break;
          case Conversion::kInt32:
          case Conversion::kDate:
            out.ints.push_back(present ? data.int32_values[v] : 0);
            break;
          case Conversion::kInt64:
          case Conversion::kTimestampMicro:
            out.ints.push_back(present ? data.int64_values[v] : 0);
            break;
          case Conversion::kTimestampMilli:
            out.ints.push_back(present ? data.int64_values[v] * 1000 : 0);
            break;
          case Conversion::kTimestampNano:
            out.ints.push_back(present ? data.int64_values[v] / 1000 : 0);
            break;
          case Conversion::kInt96Timestamp: {
            std::int64_t micros = 0;
            if (present) {
              // 8 bytes nanoseconds of the day, then 4 bytes Julian day (2440588 = 1970-01-01).
              const std::string_view raw = data.bytes_at(pos);
              std::int64_t nanos = 0;
              std::int32_t julian = 0;
              if (raw.size() == 12) {
                nanos = LoadLE<std::int64_t>(raw.data());
                julian = LoadLE<std::int32_t>(raw.data() + 8);
              }
              micros = (static_cast<std::int64_t>(julian) - 2440588) * 86400000000LL + nanos / 1000;
            }
            out.ints.push_back(micros);
            break;
          }
          case Conversion::kDecimal32:
            out.doubles.push_back(present ? data.int32_values[v] / std::pow(10.0, attr.scale)
                                          : 0.0);
            break;
          case Conversion::kDecimal64:
            out.doubles.push_back(present ? static_cast<double>(data.int64_values[v]) /
                                                std::pow(10.0, attr.scale)
                                          : 0.0);
            break;
          case Conversion::kFloat:
            out.doubles.push_back(present ? data.float_values[v] : 0.0);
            break;
          case Conversion::kDouble:
            out.doubles.push_back(present ? data.double_values[v] : 0.0);
            break;
          case Conversion::kString:
          case Conversion::kBinary:
            if (present) out.bytes.append(data.bytes_at(pos));
            out.offsets.push_back(static_cast<std::int64_t>(out.bytes.size()));
            break;
        }
        if (present) ++pos;
      }
    }
    for (std::int64_t r = 0; r < take; ++r) batch->feature_index.push_back(file_row + r);
    s.row_in_group += take;
    rows += take;
  }
  return rows;
}

}  // namespace geolake::sources
