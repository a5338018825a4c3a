#include "geolake/pipeline/transform.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "geolake/geo/crs.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/proj.h"
#include "geolake/geo/s2_cell.h"
#include "geolake/geo/spatial_key.h"

namespace geolake::pipeline {

using sources::Column;
using sources::FeatureBatch;
using sources::FieldDef;
using sources::FieldType;

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
}

Result<sources::FieldType> FieldTypeOfIceberg(const table::Type& type) {
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
      continue;
    }
    const FieldType from = source[static_cast<std::size_t>(found->second)].type;
    const bool widening = from == FieldType::kInt64 && column.type == FieldType::kDouble;
    if (from != column.type && !widening) {
      return Status::InvalidArgument(
          std::string(label) + ": field '" + column.name + "' is " +
          std::string(sources::FieldTypeName(from)) + ", the table column is " +
          std::string(sources::FieldTypeName(column.type)));
    }
    mapping.source_index.push_back(found->second);
  }
  for (const FieldDef& field : source) {
    if (!table_names.contains(field.name)) mapping.dropped.push_back(field.name);
  }
  return mapping;
}

Result<std::optional<std::string>> CellForLonLat(const PartitionScheme& scheme, double lon,
                                                 double lat) {
  switch (scheme.kind) {
    case PartitionKind::kNone:
      return std::optional<std::string>();
    case PartitionKind::kQuadkey: {
      GEOLAKE_ASSIGN_OR_RETURN(geo::Tile tile, geo::TileForLonLat(lon, lat, scheme.level));
      GEOLAKE_ASSIGN_OR_RETURN(std::string key, geo::Quadkey(tile));
      return std::optional<std::string>(std::move(key));
    }
    case PartitionKind::kS2: {
      GEOLAKE_ASSIGN_OR_RETURN(std::uint64_t id, geo::S2CellIdForLonLat(
                                                     lon, std::clamp(lat, -90.0, 90.0),
                                                     scheme.level));
      GEOLAKE_ASSIGN_OR_RETURN(std::string token, geo::S2CellToken(id));
      return std::optional<std::string>(std::move(token));
    }
  }
  return Status::Internal("unknown partition kind");
}

void AppendValue(const Column* in, std::size_t row, Column* out) {
  const bool present = in != nullptr && in->valid[row] != 0;
  out->valid.push_back(present ? 1 : 0);
  switch (out->type) {
    case FieldType::kBool:
    case FieldType::kInt64:
    case FieldType::kDate:
    case FieldType::kTimestamp:
      out->ints.push_back(present ? in->ints[row] : 0);
      break;
    case FieldType::kDouble:
      if (!present) {
        out->doubles.push_back(0.0);
      } else if (in->type == FieldType::kInt64) {
        out->doubles.push_back(static_cast<double>(in->ints[row]));
      } else {
        out->doubles.push_back(in->doubles[row]);
      }
      break;
    case FieldType::kString:
    case FieldType::kBinary:
      if (present) out->bytes += in->StringAt(row);
      out->offsets.push_back(static_cast<std::int64_t>(out->bytes.size()));
      break;
  }
}

void TakeRows(const TransformedBatch& in, const std::vector<std::uint32_t>& rows,
              FeatureBatch* out, std::vector<geo::WkbSummary>* summaries) {
  out->fields = in.batch.fields;
  out->columns.resize(in.batch.columns.size());
  for (std::size_t col = 0; col < out->columns.size(); ++col) {
    out->columns[col].type = in.batch.columns[col].type;
  }
  out->Clear();
  summaries->clear();
  summaries->reserve(rows.size());
  for (const std::uint32_t row : rows) {
    for (std::size_t col = 0; col < out->columns.size(); ++col) {
      AppendValue(&in.batch.columns[col], row, &out->columns[col]);
    }
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
  std::unordered_map<std::string, std::int32_t> cell_index;

  // Outcome of one geometry: kept (wkb + summary in `out`), or rejected with a reason.
  Status Geometry(std::span<const std::uint8_t> in_wkb, std::string* out_wkb,
                  geo::WkbSummary* summary, std::string* reason, TransformedBatch* out);
  Result<std::int32_t> Cell(const geo::WkbSummary& summary, TransformedBatch* out);
};

BatchTransformer::BatchTransformer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BatchTransformer::~BatchTransformer() = default;

Result<std::unique_ptr<BatchTransformer>> BatchTransformer::Make(geo::GeoContext* ctx,
                                                                 TransformOptions options,
                                                                 FieldMapping mapping) {
  if (mapping.source_index.size() != options.table_fields.size()) {
    return Status::InvalidArgument("field mapping has " +
                                   std::to_string(mapping.source_index.size()) +
                                   " columns, the table " +
                                   std::to_string(options.table_fields.size()));
  }
  auto impl = std::make_unique<Impl>();
  impl->ctx = ctx;
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs table_crs, geo::Crs::Make(*ctx, options.table_crs));
  if (!options.source_crs.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Crs source_crs, geo::Crs::Make(*ctx, options.source_crs));
    GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t, geo::Transformer::Make(*ctx, source_crs,
                                                                        table_crs));
    if (!t.is_identity()) impl->to_table.emplace(std::move(t));
  }
  if (!table_crs.is_geographic() && options.partition.kind != PartitionKind::kNone) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Crs lonlat, geo::Crs::Make(*ctx, "EPSG:4326"));
    GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t, geo::Transformer::Make(*ctx, table_crs, lonlat));
    if (!t.is_identity()) impl->to_lonlat.emplace(std::move(t));
  }
  impl->options = std::move(options);
  impl->mapping = std::move(mapping);
  return std::unique_ptr<BatchTransformer>(new BatchTransformer(std::move(impl)));
}

Status BatchTransformer::Impl::Geometry(std::span<const std::uint8_t> in_wkb,
                                        std::string* out_wkb, geo::WkbSummary* summary,
                                        std::string* reason, TransformedBatch* out) {
  Result<std::string> normalized = geo::NormalizeWkb(in_wkb, summary);
  if (!normalized.ok()) {
    *reason = "invalid WKB: " + normalized.status().message();
    return Status::OK();
  }
  *out_wkb = std::move(*normalized);
  if (summary->envelope.IsEmpty()) {
    if (options.on_invalid == InvalidPolicy::kReject) *reason = "empty geometry";
    return Status::OK();
  }
  const geo::GeometryType type = summary->header.type;
  const bool check = options.on_invalid != InvalidPolicy::kKeep &&
                     type != geo::GeometryType::kPoint && type != geo::GeometryType::kMultiPoint;
  if (check) {
    Result<geo::Geometry> geometry = geo::Geometry::FromWkb(*ctx, std::string_view(*out_wkb));
    if (!geometry.ok()) {
      if (geometry.status().code() == ErrorCode::kCancelled) return geometry.status();
      *reason = "geometry: " + geometry.status().message();
      return Status::OK();
    }
    GEOLAKE_ASSIGN_OR_RETURN(bool valid, geometry->IsValid());
    if (!valid) {
      if (options.on_invalid == InvalidPolicy::kReject) {
        GEOLAKE_ASSIGN_OR_RETURN(*reason, geometry->IsValidReason());
        return Status::OK();
      }
      Result<geo::Geometry> repaired = geometry->MakeValid();
      if (!repaired.ok()) {
        if (repaired.status().code() == ErrorCode::kCancelled) return repaired.status();
        *reason = "make-valid failed: " + repaired.status().message();
        return Status::OK();
      }
      GEOLAKE_ASSIGN_OR_RETURN(*out_wkb, repaired->ToWkb());
      GEOLAKE_ASSIGN_OR_RETURN(*summary, geo::SummarizeWkb(geo::AsBytes(*out_wkb)));
      ++out->made_valid;
    }
  }
  if (to_table.has_value()) {
    Result<std::string> projected = to_table->TransformWkb(std::string_view(*out_wkb));
    if (!projected.ok()) {
      if (projected.status().code() == ErrorCode::kCancelled) return projected.status();
      *reason = "reprojection: " + projected.status().message();
      return Status::OK();
    }
    *out_wkb = std::move(*projected);
    GEOLAKE_ASSIGN_OR_RETURN(*summary, geo::SummarizeWkb(geo::AsBytes(*out_wkb)));
    ++out->reprojected;
  }
  return Status::OK();
}

Result<std::int32_t> BatchTransformer::Impl::Cell(const geo::WkbSummary& summary,
                                                  TransformedBatch* out) {
  if (options.partition.kind == PartitionKind::kNone || summary.envelope.IsEmpty()) return -1;
  const geo::Envelope& e = summary.envelope;
  double x = (e.xmin + e.xmax) * 0.5;
  double y = (e.ymin + e.ymax) * 0.5;
  if (to_lonlat.has_value()) {
    GEOLAKE_RETURN_NOT_OK(to_lonlat->Transform(std::span<double>(&x, 1), std::span<double>(&y, 1)));
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::optional<std::string> cell,
                           CellForLonLat(options.partition, x, y));
  if (!cell.has_value()) return -1;
  const auto [it, inserted] =
      cell_index.emplace(*cell, static_cast<std::int32_t>(out->cells.size()));
  if (inserted) out->cells.push_back(std::move(*cell));
  return it->second;
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
  const std::size_t num_rows = static_cast<std::size_t>(in.num_rows());
  FeatureBatch& batch = out->batch;
  std::string wkb;
  std::string reason;
  for (std::size_t row = 0; row < num_rows; ++row) {
    geo::WkbSummary summary;
    wkb.clear();
    reason.clear();
    const bool has_geometry = in.geometry_valid[row] != 0;
    if (has_geometry) {
      GEOLAKE_RETURN_NOT_OK(impl.Geometry(in.GeometryAt(row), &wkb, &summary, &reason, out));
    } else if (impl.options.on_invalid == InvalidPolicy::kReject) {
      reason = "null geometry";
    }
    if (!reason.empty()) {
      const auto source_wkb = has_geometry ? in.GeometryAt(row) : std::span<const std::uint8_t>();
      out->rejects.push_back(RejectedRow{
          in.feature_index[row], reason,
          std::string(reinterpret_cast<const char*>(source_wkb.data()), source_wkb.size())});
      continue;
    }
    std::int32_t cell = -1;
    if (has_geometry) {
      Result<std::int32_t> computed = impl.Cell(summary, out);
      if (!computed.ok()) {
        if (computed.status().code() == ErrorCode::kCancelled) return computed.status();
        const auto source_wkb = in.GeometryAt(row);
        out->rejects.push_back(RejectedRow{
            in.feature_index[row], "partition value: " + computed.status().message(),
            std::string(reinterpret_cast<const char*>(source_wkb.data()), source_wkb.size())});
        continue;
      }
      cell = *computed;
    }
    for (std::size_t col = 0; col < fields.size(); ++col) {
      const int from = impl.mapping.source_index[col];
      AppendValue(from >= 0 ? &in.columns[static_cast<std::size_t>(from)] : nullptr, row,
                  &batch.columns[col]);
    }
    batch.wkb += wkb;
    batch.wkb_offsets.push_back(static_cast<std::int64_t>(batch.wkb.size()));
    batch.geometry_valid.push_back(has_geometry ? 1 : 0);
    batch.feature_index.push_back(in.feature_index[row]);
    out->summaries.push_back(summary);
    out->cell_ids.push_back(cell);
  }
  return Status::OK();
}

}  // namespace geolake::pipeline
