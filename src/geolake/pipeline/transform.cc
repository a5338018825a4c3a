#include "geolake/pipeline/transform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "geolake/core/utf8.h"
#include "geolake/formats/geoparquet/layout_columns.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/proj.h"
#include "geolake/geo/s2_cell.h"
#include "geolake/geo/spatial_key.h"
#include "geolake/geo/validity_fast_path.h"

namespace geolake::pipeline {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;

Result<InvalidPolicy> ParseInvalidPolicy(std::string_view text) {
  if (text == "make-valid") return InvalidPolicy::kMakeValid;
  if (text == "reject") return InvalidPolicy::kReject;
  if (text == "keep") return InvalidPolicy::kKeep;
  return Status::InvalidArgument("--on-invalid '" + std::string(text) +
                                 "': expected make-valid, reject or keep");
}

void TransformedBatch::Clear() {
  batch.Clear();
  summaries.clear();
  cell_ids.clear();
  cells.clear();
  rejects.clear();
  made_valid = 0;
  reprojected = 0;
  utf8_replaced.clear();
}

Result<geoparquet::FieldType> FieldTypeOfIceberg(const table::Type& type) {
  switch (type.id()) {
    case table::TypeId::kBoolean:
      return FieldType::kBool;
    case table::TypeId::kLong:
      return FieldType::kInt64;
    case table::TypeId::kDouble:
      return FieldType::kDouble;
    case table::TypeId::kString:
      return FieldType::kString;
    case table::TypeId::kBinary:
      return FieldType::kBinary;
    case table::TypeId::kDate:
      return FieldType::kDate;
    case table::TypeId::kTimestampTz:
    case table::TypeId::kTimestamp:
      return FieldType::kTimestamp;
    default:
      return Status::NotImplemented("ingest does not write columns of type " + type.ToString());
  }
}

Result<FieldMapping> MapFields(const std::vector<FieldDef>& source,
                               const std::vector<FieldDef>& table, std::string_view label) {
  FieldMapping mapping;
  std::unordered_map<std::string_view, int> by_name;
  for (std::size_t i = 0; i < source.size(); ++i) {
    by_name.emplace(source[i].name, static_cast<int>(i));
  }
  std::unordered_map<std::string_view, int> table_names;
  for (const FieldDef& column : table) {
    table_names.emplace(column.name, 0);
    const auto found = by_name.find(column.name);
    if (found == by_name.end()) {
      mapping.source_index.push_back(-1);
      mapping.missing.push_back(column.name);
      continue;
    }
    const FieldType from = source[static_cast<std::size_t>(found->second)].type;
    const bool widening = from == FieldType::kInt64 && column.type == FieldType::kDouble;
    if (from != column.type && !widening) {
      return Status::InvalidArgument(std::string(label) + ": field '" + column.name + "' is " +
                                     std::string(geoparquet::FieldTypeName(from)) +
                                     ", the table column is " +
                                     std::string(geoparquet::FieldTypeName(column.type)));
    }
    mapping.source_index.push_back(found->second);
  }
  for (const FieldDef& field : source) {
    // geo_cell and geo_hilbert of a file geolake wrote are recomputed, not dropped.
    if (!table_names.contains(field.name) && !geoparquet::IsRecomputedLayoutField(field)) {
      mapping.dropped.push_back(field.name);
    }
  }
  return mapping;
}

namespace {

// A partition cell as a number (quadkey: tile x in the high, y in the low 32 bits; S2: the
// cell id), so the transform can look a row's cell up without building its name.
Result<std::uint64_t> CellKey(const layout::PartitionScheme& scheme, double lon, double lat) {
  switch (scheme.kind) {
    case layout::PartitionKind::kNone:
      return Status::Internal("cell key of an unpartitioned scheme");
    case layout::PartitionKind::kQuadkey: {
      GEOLAKE_ASSIGN_OR_RETURN(geo::Tile tile, geo::TileForLonLat(lon, lat, scheme.level));
      return (std::uint64_t{tile.x} << 32) | tile.y;
    }
    case layout::PartitionKind::kS2:
      return geo::S2CellIdForLonLat(lon, std::clamp(lat, -90.0, 90.0), scheme.level);
  }
  return Status::Internal("unknown partition kind");
}

// The geo_cell value of a CellKey.
Result<std::string> CellName(const layout::PartitionScheme& scheme, std::uint64_t key) {
  if (scheme.kind == layout::PartitionKind::kS2) return geo::S2CellToken(key);
  return geo::Quadkey(geo::Tile{static_cast<std::uint32_t>(key >> 32),
                                static_cast<std::uint32_t>(key & 0xffffffffu), scheme.level});
}

}  // namespace

bool WithinLonLatRange(const geo::Envelope& e) {
  constexpr double kSlack = 1e-9;
  return e.xmin >= -180 - kSlack && e.xmax <= 180 + kSlack && e.ymin >= -90 - kSlack &&
         e.ymax <= 90 + kSlack;
}

Result<std::optional<std::string>> CellForLonLat(const layout::PartitionScheme& scheme, double lon,
                                                 double lat) {
  if (scheme.kind == layout::PartitionKind::kNone) return std::optional<std::string>();
  GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t key, CellKey(scheme, lon, lat));
  GEOLAKE_ASSIGN_OR_RETURN(std::string name, CellName(scheme, key));
  return std::optional<std::string>(std::move(name));
}

namespace {

// Room for `more` elements after the end of `*v`, growing at least geometrically, so that many
// small appends to one column stay linear.
template <typename V>
void ReserveMore(V* v, std::size_t more) {
  const std::size_t need = v->size() + more;
  if (need > v->capacity()) v->reserve(std::max(need, 2 * v->capacity()));
}

// Whether every byte of `bytes` is ASCII (8 bytes at a time): almost every string column is,
// and then no value of it needs the UTF-8 check.
bool AllAscii(std::string_view bytes) {
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, 8);
    if ((word & 0x8080808080808080ull) != 0) return false;
  }
  for (; i < bytes.size(); ++i) {
    if (static_cast<unsigned char>(bytes[i]) >= 0x80) return false;
  }
  return true;
}

// Append rows `rows` of string column `in` to `out`, each value with its invalid UTF-8 bytes
// replaced by U+FFFD; returns how many values changed.
std::int64_t AppendRowsReplacingInvalidUtf8(const Column& in, std::span<const std::uint32_t> rows,
                                            Column* out) {
  std::int64_t changed = 0;
  for (const std::uint32_t row : rows) {
    const bool present = in.valid[row] != 0;
    out->valid.push_back(present ? 1 : 0);
    if (present) {
      const std::string_view value = in.StringAt(row);
      if (IsValidUtf8(value)) {
        out->bytes += value;
      } else {
        out->bytes += ReplaceInvalidUtf8(value);
        ++changed;
      }
    }
    out->offsets.push_back(static_cast<std::int64_t>(out->bytes.size()));
  }
  return changed;
}

}  // namespace

std::vector<std::int64_t> ReplaceInvalidUtf8InStrings(FeatureBatch* batch) {
  std::vector<std::int64_t> changed(batch->columns.size(), 0);
  for (std::size_t col = 0; col < batch->columns.size(); ++col) {
    Column& column = batch->columns[col];
    if (column.type != FieldType::kString || AllAscii(column.bytes)) continue;
    bool any = false;
    for (std::size_t row = 0; row < column.size() && !any; ++row) {
      any = column.valid[row] != 0 && !IsValidUtf8(column.StringAt(row));
    }
    if (!any) continue;
    std::vector<std::uint32_t> rows(column.size());
    for (std::size_t row = 0; row < rows.size(); ++row) rows[row] = static_cast<std::uint32_t>(row);
    Column replaced;
    replaced.type = column.type;
    changed[col] = AppendRowsReplacingInvalidUtf8(column, rows, &replaced);
    column = std::move(replaced);
  }
  return changed;
}

void AppendRows(const Column* in, std::span<const std::uint32_t> rows, Column* out) {
  const std::size_t count = rows.size();
  if (in == nullptr) {
    out->valid.insert(out->valid.end(), count, 0);
    switch (out->type) {
      case FieldType::kDouble:
        out->doubles.insert(out->doubles.end(), count, 0.0);
        break;
      case FieldType::kString:
      case FieldType::kBinary:
        out->offsets.insert(out->offsets.end(), count,
                            static_cast<std::int64_t>(out->bytes.size()));
        break;
      default:
        out->ints.insert(out->ints.end(), count, 0);
        break;
    }
    return;
  }
  // One type dispatch per column instead of one per value; a null slot holds a zero value.
  ReserveMore(&out->valid, count);
  for (const std::uint32_t row : rows) out->valid.push_back(in->valid[row] != 0 ? 1 : 0);
  switch (out->type) {
    case FieldType::kBool:
    case FieldType::kInt64:
    case FieldType::kDate:
    case FieldType::kTimestamp:
      ReserveMore(&out->ints, count);
      for (const std::uint32_t row : rows) {
        out->ints.push_back(in->valid[row] != 0 ? in->ints[row] : 0);
      }
      break;
    case FieldType::kDouble:
      ReserveMore(&out->doubles, count);
      if (in->type == FieldType::kInt64) {
        for (const std::uint32_t row : rows) {
          out->doubles.push_back(in->valid[row] != 0 ? static_cast<double>(in->ints[row]) : 0.0);
        }
      } else {
        for (const std::uint32_t row : rows) {
          out->doubles.push_back(in->valid[row] != 0 ? in->doubles[row] : 0.0);
        }
      }
      break;
    case FieldType::kString:
    case FieldType::kBinary: {
      std::size_t bytes = 0;
      for (const std::uint32_t row : rows) {
        bytes += static_cast<std::size_t>(in->offsets[row + 1] - in->offsets[row]);
      }
      ReserveMore(&out->bytes, bytes);
      ReserveMore(&out->offsets, count);
      for (const std::uint32_t row : rows) {
        if (in->valid[row] != 0) out->bytes += in->StringAt(row);
        out->offsets.push_back(static_cast<std::int64_t>(out->bytes.size()));
      }
      break;
    }
  }
}

void TakeRows(const TransformedBatch& in, const std::vector<std::uint32_t>& rows, FeatureBatch* out,
              std::vector<geo::WkbSummary>* summaries) {
  out->fields = in.batch.fields;
  out->columns.resize(in.batch.columns.size());
  for (std::size_t col = 0; col < out->columns.size(); ++col) {
    out->columns[col].type = in.batch.columns[col].type;
  }
  out->Clear();
  for (std::size_t col = 0; col < out->columns.size(); ++col) {
    AppendRows(&in.batch.columns[col], rows, &out->columns[col]);
  }
  summaries->clear();
  summaries->reserve(rows.size());
  std::size_t wkb_bytes = 0;
  for (const std::uint32_t row : rows) wkb_bytes += in.batch.GeometryAt(row).size();
  out->wkb.reserve(wkb_bytes);
  out->wkb_offsets.reserve(rows.size() + 1);
  out->geometry_valid.reserve(rows.size());
  out->feature_index.reserve(rows.size());
  for (const std::uint32_t row : rows) {
    const auto wkb = in.batch.GeometryAt(row);
    out->wkb.append(reinterpret_cast<const char*>(wkb.data()), wkb.size());
    out->wkb_offsets.push_back(static_cast<std::int64_t>(out->wkb.size()));
    out->geometry_valid.push_back(in.batch.geometry_valid[row]);
    out->feature_index.push_back(in.batch.feature_index[row]);
    summaries->push_back(in.summaries[row]);
  }
}

struct BatchTransformer::Impl {
  geo::GeoContext* ctx = nullptr;
  TransformOptions options;
  FieldMapping mapping;
  std::optional<geo::Transformer> to_table;   // source CRS -> table CRS (absent: identity)
  std::optional<geo::Transformer> to_lonlat;  // table CRS -> EPSG:4326 (absent: geographic)
  // This batch's cells by CellKey: most rows of a batch share a few cells, so the cell name
  // (a string) is built once per cell, not once per row.
  std::unordered_map<std::uint64_t, std::int32_t> cell_index;
  std::vector<std::uint32_t> kept;  // rows of the input batch that became output rows
  // Per input row: the table column of its first string value that is not well-formed UTF-8,
  // or -1; empty when the batch has none.
  std::vector<int> bad_utf8;
  std::vector<std::uint8_t> column_has_bad_utf8;  // per table column

  std::string despiked;  // RepairSpikes' output, reused

  // Outcome of one geometry: kept (its ISO WKB appended to `wkb` from `start` on, summary in
  // `summary`), or rejected with a reason (`wkb` then back at `start`).
  Status Geometry(std::span<const std::uint8_t> in_wkb, std::string* wkb, std::size_t start,
                  geo::WkbSummary* summary, std::string* reason, TransformedBatch* out);
  Result<std::int32_t> Cell(const geo::WkbSummary& summary, TransformedBatch* out);
};

BatchTransformer::BatchTransformer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BatchTransformer::~BatchTransformer() = default;

Result<std::unique_ptr<BatchTransformer>> BatchTransformer::Make(geo::GeoContext* ctx,
                                                                 TransformOptions options,
                                                                 FieldMapping mapping) {
  if (mapping.source_index.size() != options.table_fields.size()) {
    return Status::InvalidArgument(
        "field mapping has " + std::to_string(mapping.source_index.size()) +
        " columns, the table " + std::to_string(options.table_fields.size()));
  }
  auto impl = std::make_unique<Impl>();
  impl->ctx = ctx;
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs table_crs, geo::Crs::Make(*ctx, options.table_crs));
  if (!options.source_crs.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Crs source_crs, geo::Crs::Make(*ctx, options.source_crs));
    GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t,
                             geo::Transformer::Make(*ctx, source_crs, table_crs));
    if (!t.is_identity()) impl->to_table.emplace(std::move(t));
  }
  if (!table_crs.is_geographic() && options.partition.kind != layout::PartitionKind::kNone) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Crs lonlat, geo::Crs::Make(*ctx, "EPSG:4326"));
    GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t, geo::Transformer::Make(*ctx, table_crs, lonlat));
    if (!t.is_identity()) impl->to_lonlat.emplace(std::move(t));
  }
  impl->options = std::move(options);
  impl->mapping = std::move(mapping);
  return std::unique_ptr<BatchTransformer>(new BatchTransformer(std::move(impl)));
}

Status BatchTransformer::Impl::Geometry(std::span<const std::uint8_t> in_wkb, std::string* wkb,
                                        std::size_t start, geo::WkbSummary* summary,
                                        std::string* reason, TransformedBatch* out) {
  Status normalized = geo::NormalizeWkbAppend(in_wkb, wkb, summary);
  if (!normalized.ok()) {
    *reason = "invalid WKB: " + normalized.message();
    return Status::OK();
  }
  // Under every policy: no repair can place a NaN or an infinity, and kept, it would fail the
  // unit later (the spatial keys refuse a non-finite extent).
  if (summary->non_finite) {
    *reason = "non-finite coordinate (NaN or infinity)";
    return Status::OK();
  }
  if (options.check_lonlat_range && !summary->envelope.IsEmpty() &&
      !WithinLonLatRange(summary->envelope)) {
    const geo::Envelope& e = summary->envelope;
    *reason = fmt::format(
        "coordinates ({}, {}, {}, {}) are outside lon [-180, 180] x lat [-90, 90] of the table "
        "CRS {} and the source has no CRS to reproject from",
        e.xmin, e.ymin, e.xmax, e.ymax, options.table_crs);
    return Status::OK();
  }
  // Replaces this row's bytes (from `start` on) with `bytes`.
  const auto replace = [&](std::string_view bytes) {
    wkb->resize(start);
    wkb->append(bytes);
  };
  const auto row_wkb = [&] { return std::string_view(*wkb).substr(start); };
  if (summary->envelope.IsEmpty()) {
    if (options.on_invalid == InvalidPolicy::kReject) *reason = "empty geometry";
    return Status::OK();
  }
  const geo::GeometryType type = summary->header.type;
  const bool check = options.on_invalid != InvalidPolicy::kKeep &&
                     type != geo::GeometryType::kPoint && type != geo::GeometryType::kMultiPoint;
  // The shortcut proves polygons whose rings touch nothing valid exactly as GEOS would (see
  // validity_fast_path.h); anything it cannot prove goes to GEOS. Saves the GEOS parse and
  // isValid: about 2 us of a small polygon's ~4 us transform, and most of a large one's.
  if (check && !geo::ProvablyValidPolygon(geo::AsBytes(row_wkb()))) {
    // Spikes, a common defect of real polygons, are repaired without GEOS when that is
    // provably enough (validity_fast_path.h): the same points as GEOS's repair, with no GEOS
    // parse, isValid or repair of the whole geometry.
    if (options.on_invalid == InvalidPolicy::kMakeValid &&
        geo::RepairSpikes(geo::AsBytes(row_wkb()), &despiked)) {
      replace(despiked);
      GEOLAKE_ASSIGN_OR_RETURN(*summary, geo::SummarizeWkb(geo::AsBytes(row_wkb())));
      ++out->made_valid;
    } else {
      Result<geo::Geometry> geometry = geo::Geometry::FromWkb(*ctx, row_wkb());
      if (!geometry.ok()) {
        if (geometry.status().code() == ErrorCode::kCancelled) return geometry.status();
        *reason = "geometry: " + geometry.status().message();
        return Status::OK();
      }
      if (options.on_invalid == InvalidPolicy::kReject) {
        GEOLAKE_ASSIGN_OR_RETURN(bool valid, geometry->IsValid());
        if (!valid) {
          GEOLAKE_ASSIGN_OR_RETURN(*reason, geometry->IsValidReason());
          return Status::OK();
        }
      } else {
        // Valid or not is decided part by part for a multipolygon (geos.h): the parts whose
        // touching kept the whole from being proved above are mostly proved one by one.
        Result<std::optional<geo::Geometry>> repaired =
            geometry->RepairIfInvalid(geo::AsBytes(row_wkb()));
        if (!repaired.ok()) {
          if (repaired.status().code() == ErrorCode::kCancelled) return repaired.status();
          *reason = "make-valid failed: " + repaired.status().message();
          return Status::OK();
        }
        if (repaired->has_value()) {
          GEOLAKE_ASSIGN_OR_RETURN(std::string repaired_wkb, (*repaired)->ToWkb());
          replace(repaired_wkb);
          GEOLAKE_ASSIGN_OR_RETURN(*summary, geo::SummarizeWkb(geo::AsBytes(row_wkb())));
          ++out->made_valid;
        }
      }
    }
  }
  if (to_table.has_value()) {
    Result<std::string> projected = to_table->TransformWkb(row_wkb());
    if (!projected.ok()) {
      if (projected.status().code() == ErrorCode::kCancelled) return projected.status();
      *reason = "reprojection: " + projected.status().message();
      return Status::OK();
    }
    replace(*projected);
    GEOLAKE_ASSIGN_OR_RETURN(*summary, geo::SummarizeWkb(geo::AsBytes(row_wkb())));
    if (summary->non_finite) {
      *reason = "reprojection: non-finite coordinate (outside the table CRS's domain)";
      return Status::OK();
    }
    ++out->reprojected;
  }
  return Status::OK();
}

Result<std::int32_t> BatchTransformer::Impl::Cell(const geo::WkbSummary& summary,
                                                  TransformedBatch* out) {
  if (options.partition.kind == layout::PartitionKind::kNone || summary.envelope.IsEmpty())
    return -1;
  const geo::Envelope& e = summary.envelope;
  double x = (e.xmin + e.xmax) * 0.5;
  double y = (e.ymin + e.ymax) * 0.5;
  if (to_lonlat.has_value()) {
    GEOLAKE_RETURN_NOT_OK(to_lonlat->Transform(std::span<double>(&x, 1), std::span<double>(&y, 1)));
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t key, CellKey(options.partition, x, y));
  const auto found = cell_index.find(key);
  if (found != cell_index.end()) return found->second;
  GEOLAKE_ASSIGN_OR_RETURN(std::string name, CellName(options.partition, key));
  const auto id = static_cast<std::int32_t>(out->cells.size());
  out->cells.push_back(std::move(name));
  cell_index.emplace(key, id);
  return id;
}

Status BatchTransformer::Apply(const FeatureBatch& in, TransformedBatch* out) {
  Impl& impl = *impl_;
  const std::vector<FieldDef>& fields = impl.options.table_fields;
  if (out->batch.fields.size() != fields.size()) {
    out->batch.fields = fields;
    out->batch.columns.assign(fields.size(), Column{});
    for (std::size_t i = 0; i < fields.size(); ++i) out->batch.columns[i].type = fields[i].type;
  }
  out->Clear();
  impl.cell_index.clear();
  impl.kept.clear();
  const std::size_t num_rows = static_cast<std::size_t>(in.num_rows());
  FeatureBatch& batch = out->batch;
  batch.wkb.reserve(in.wkb.size());
  batch.wkb_offsets.reserve(num_rows + 1);
  batch.geometry_valid.reserve(num_rows);
  batch.feature_index.reserve(num_rows);
  out->summaries.reserve(num_rows);
  out->cell_ids.reserve(num_rows);
  impl.kept.reserve(num_rows);
  // String values that are not UTF-8 (a source in Latin-1 or another code page that no one
  // declared): found before the rows are judged, since under kReject they refuse the row.
  impl.bad_utf8.clear();
  impl.column_has_bad_utf8.assign(fields.size(), 0);
  for (std::size_t col = 0; col < fields.size(); ++col) {
    const int from = impl.mapping.source_index[col];
    if (fields[col].type != FieldType::kString || from < 0) continue;
    const Column& column = in.columns[static_cast<std::size_t>(from)];
    if (column.type != FieldType::kString || AllAscii(column.bytes)) continue;
    for (std::size_t row = 0; row < num_rows; ++row) {
      if (column.valid[row] == 0 || IsValidUtf8(column.StringAt(row))) continue;
      if (impl.bad_utf8.empty()) impl.bad_utf8.assign(num_rows, -1);
      if (impl.bad_utf8[row] < 0) impl.bad_utf8[row] = static_cast<int>(col);
      impl.column_has_bad_utf8[col] = 1;
    }
  }
  std::string reason;
  const auto reject = [&](std::size_t row, std::string why) {
    const auto source_wkb =
        in.geometry_valid[row] != 0 ? in.GeometryAt(row) : std::span<const std::uint8_t>();
    out->rejects.push_back(RejectedRow{
        in.feature_index[row], std::move(why),
        std::string(reinterpret_cast<const char*>(source_wkb.data()), source_wkb.size())});
  };
  // Geometries first, row by row, straight into the output buffer; the attributes of the rows
  // kept are then copied a column at a time.
  std::size_t next_unreadable = 0;  // into in.unreadable (ascending rows)
  for (std::size_t row = 0; row < num_rows; ++row) {
    if (next_unreadable < in.unreadable.size() &&
        in.unreadable[next_unreadable].row == static_cast<std::int64_t>(row)) {
      // A record the source could not decode is rejected under every policy: it has no
      // geometry or attributes to keep.
      reject(row, "unreadable record: " + in.unreadable[next_unreadable].reason);
      ++next_unreadable;
      continue;
    }
    if (impl.options.on_invalid == InvalidPolicy::kReject && !impl.bad_utf8.empty() &&
        impl.bad_utf8[row] >= 0) {
      const auto col = static_cast<std::size_t>(impl.bad_utf8[row]);
      const Column& column = in.columns[static_cast<std::size_t>(impl.mapping.source_index[col])];
      reject(row, "invalid UTF-8 in field '" + EscapeForMessage(fields[col].name) +
                      "': " + EscapeForMessage(column.StringAt(row).substr(0, 64)));
      continue;
    }
    geo::WkbSummary summary;
    reason.clear();
    const std::size_t start = batch.wkb.size();
    const bool has_geometry = in.geometry_valid[row] != 0;
    if (has_geometry) {
      GEOLAKE_RETURN_NOT_OK(
          impl.Geometry(in.GeometryAt(row), &batch.wkb, start, &summary, &reason, out));
    } else if (impl.options.on_invalid == InvalidPolicy::kReject) {
      reason = "null geometry";
    }
    if (!reason.empty()) {
      batch.wkb.resize(start);
      reject(row, reason);
      continue;
    }
    std::int32_t cell = -1;
    if (has_geometry) {
      Result<std::int32_t> computed = impl.Cell(summary, out);
      if (!computed.ok()) {
        if (computed.status().code() == ErrorCode::kCancelled) return computed.status();
        batch.wkb.resize(start);
        reject(row, "partition value: " + computed.status().message());
        continue;
      }
      cell = *computed;
    }
    impl.kept.push_back(static_cast<std::uint32_t>(row));
    batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
    batch.geometry_valid.push_back(has_geometry ? 1 : 0);
    batch.feature_index.push_back(in.feature_index[row]);
    out->summaries.push_back(summary);
    out->cell_ids.push_back(cell);
  }
  for (std::size_t col = 0; col < fields.size(); ++col) {
    const int from = impl.mapping.source_index[col];
    if (impl.column_has_bad_utf8[col] != 0) {
      const std::int64_t changed = AppendRowsReplacingInvalidUtf8(
          in.columns[static_cast<std::size_t>(from)], impl.kept, &batch.columns[col]);
      if (changed > 0) {
        out->utf8_replaced.resize(fields.size(), 0);
        out->utf8_replaced[col] += changed;
      }
      continue;
    }
    AppendRows(from >= 0 ? &in.columns[static_cast<std::size_t>(from)] : nullptr, impl.kept,
               &batch.columns[col]);
  }
  return Status::OK();
}

}  // namespace geolake::pipeline
