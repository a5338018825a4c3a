#include "geolake/layout/table_layout.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <utility>

#include "geolake/core/units.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/proj.h"

namespace geolake::layout {
namespace {

using table::NestedField;
using table::Type;
using table::TypeId;
using table::TypePtr;

constexpr std::string_view kBboxCorners[] = {"xmin", "ymin", "xmax", "ymax"};

// Parse a whole decimal integer; nullopt for anything else.
std::optional<int> ParseInt(std::string_view text) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::string FormatDouble(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

bool IsLayoutColumn(std::string_view name) {
  return name == geoparquet::kGeometryColumn || name == geoparquet::kBboxColumn ||
         name == geoparquet::kCellColumn || name == geoparquet::kHilbertColumn;
}

// The area of use a PROJJSON object declares, as lon/lat (x, y): the top-level "bbox" or the
// first "usages[].bbox". Empty when there is none.
geo::Envelope AreaOfUse(const std::string& projjson) {
  const nlohmann::json j = nlohmann::json::parse(projjson, nullptr, false);
  if (!j.is_object()) return {};
  const auto from_bbox = [](const nlohmann::json& b) -> geo::Envelope {
    if (!b.is_object()) return {};
    for (const char* key :
         {"west_longitude", "south_latitude", "east_longitude", "north_latitude"}) {
      if (!b.contains(key) || !b[key].is_number()) return {};
    }
    geo::Envelope e;
    e.xmin = b["west_longitude"].get<double>();
    e.ymin = b["south_latitude"].get<double>();
    e.xmax = b["east_longitude"].get<double>();
    e.ymax = b["north_latitude"].get<double>();
    return e;
  };
  if (j.contains("bbox")) return from_bbox(j["bbox"]);
  if (j.contains("usages") && j["usages"].is_array()) {
    for (const nlohmann::json& usage : j["usages"]) {
      if (usage.is_object() && usage.contains("bbox")) return from_bbox(usage["bbox"]);
    }
  }
  return {};
}

// The top-level field named `name`, with its position, or nullptr.
const NestedField* TopLevel(const table::Schema& schema, std::string_view name, int* position) {
  const auto& fields = schema.fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) {
      *position = static_cast<int>(i);
      return &fields[i];
    }
  }
  return nullptr;
}

}  // namespace

std::string PartitionScheme::ToString() const {
  switch (kind) {
    case PartitionKind::kNone:
      return "none";
    case PartitionKind::kQuadkey:
      return "quadkey:" + std::to_string(level);
    case PartitionKind::kS2:
      return "s2:" + std::to_string(level);
  }
  return "none";
}

Result<PartitionScheme> ParsePartitionScheme(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("partition '" + std::string(text) + "': " + std::string(why) +
                                   " (want quadkey:Z with 1 <= Z <= 23, s2:L with 0 <= L <= 30, "
                                   "or none)");
  };
  if (text == "none") return PartitionScheme{PartitionKind::kNone, 0};
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad("unknown scheme");
  const std::string_view kind = text.substr(0, colon);
  const std::optional<int> level = ParseInt(text.substr(colon + 1));
  if (!level) return bad("level is not a number");
  if (kind == "quadkey") {
    if (*level < 1 || *level > 23) return bad("zoom out of range");
    return PartitionScheme{PartitionKind::kQuadkey, *level};
  }
  if (kind == "s2") {
    if (*level < 0 || *level > 30) return bad("level out of range");
    return PartitionScheme{PartitionKind::kS2, *level};
  }
  return bad("unknown scheme");
}

PartitionChoice PartitionForInputSize(std::int64_t input_bytes,
                                      std::int64_t target_file_size_bytes) {
  const std::int64_t input = std::max<std::int64_t>(0, input_bytes);
  const std::int64_t target = std::max<std::int64_t>(1, target_file_size_bytes);
  // Bytes that fill each of the 4^zoom cells with one target-size file, saturated at INT64_MAX
  // for printing; the choice itself divides (input / 4^zoom >= target), which cannot overflow
  // with a user's target near the limit.
  const auto needed = [&](int zoom) {
    const int shift = 2 * zoom;
    return target > (std::numeric_limits<std::int64_t>::max() >> shift)
               ? std::numeric_limits<std::int64_t>::max()
               : target << shift;
  };
  int zoom = 0;
  while (zoom < kMaxInputSizeQuadkeyZoom && (input >> (2 * (zoom + 1))) >= target) ++zoom;
  const auto cells = [&](int z) {
    return FormatSize(needed(z)) + " = " + std::to_string(std::int64_t{1} << (2 * z)) +
           " cells of quadkey:" + std::to_string(z) + " x " + FormatSize(target) +
           " target file size";
  };
  PartitionChoice choice;
  if (zoom == 0) {
    choice.scheme = PartitionScheme{PartitionKind::kNone, 0};
    choice.reason = "input " + FormatSize(input) + " < " + cells(1);
    return choice;
  }
  choice.scheme = PartitionScheme{PartitionKind::kQuadkey, zoom};
  choice.reason =
      "input " + FormatSize(input) + " >= " + cells(zoom) +
      (zoom < kMaxInputSizeQuadkeyZoom
           ? "; quadkey:" + std::to_string(zoom + 1) + " needs " + FormatSize(needed(zoom + 1))
           : "; " + std::to_string(kMaxInputSizeQuadkeyZoom) +
                 " is the largest zoom chosen by size");
  return choice;
}

TypePtr IcebergTypeOf(geoparquet::FieldType type) {
  switch (type) {
    case geoparquet::FieldType::kBool:
      return Type::Boolean();
    case geoparquet::FieldType::kInt64:
      return Type::Long();
    case geoparquet::FieldType::kDouble:
      return Type::Double();
    case geoparquet::FieldType::kString:
      return Type::String();
    case geoparquet::FieldType::kBinary:
      return Type::Binary();
    case geoparquet::FieldType::kDate:
      return Type::Date();
    case geoparquet::FieldType::kTimestamp:
      return Type::TimestampTz();
  }
  return Type::String();
}

Result<table::TypePtr> GeometryColumnType(int format_version, std::string_view crs_text) {
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs crs, geo::Crs::Make(crs_text));
  if (format_version < 3) return Type::Binary();
  // Iceberg spec "CRS": C is OGC:CRS84 by default, else `srid:<SRID>` or `projjson:<table
  // property>`; inline PROJJSON is not allowed in the type string.
  const std::optional<std::string>& id = crs.id();
  if (id && *id == "OGC:CRS84") return Type::Geometry();
  if (id && id->rfind("EPSG:", 0) == 0 && id->size() > 5) {
    return Type::Geometry("srid:" + id->substr(5));
  }
  return Type::Geometry("projjson:" + std::string(kCrsProjjsonProperty));
}

Result<std::optional<std::string>> ParquetCrsOf(
    const table::Type& type, const std::map<std::string, std::string>& properties) {
  const std::string& crs = type.crs();
  if (crs.empty() || crs == "OGC:CRS84") return std::optional<std::string>();
  constexpr std::string_view kProjjson = "projjson:";
  if (crs.rfind(kProjjson, 0) == 0) {
    const std::string key = crs.substr(kProjjson.size());
    auto it = properties.find(key);
    if (it == properties.end()) {
      return Status::InvalidArgument("type " + type.ToString() + ": the table has no property '" +
                                     key + "'");
    }
    return std::optional<std::string>(it->second);
  }
  return std::optional<std::string>(crs);
}

Result<table::SchemaPtr> LayoutSchema(const std::vector<geoparquet::FieldDef>& fields,
                                      const PartitionScheme& partition,
                                      table::TypePtr geometry_type) {
  if (geometry_type == nullptr) geometry_type = Type::Binary();
  std::vector<NestedField> columns;
  std::set<std::string> names;
  for (const geoparquet::FieldDef& f : fields) {
    if (f.name.empty()) return Status::InvalidArgument("source field with an empty name");
    // A file geolake wrote carries geo_cell and geo_hilbert: the table computes its own.
    if (geoparquet::IsRecomputedLayoutField(f)) continue;
    if (IsLayoutColumn(f.name)) {
      return Status::InvalidArgument("source field '" + f.name + "' (" +
                                     std::string(geoparquet::FieldTypeName(f.type)) +
                                     ") has the name of a column geolake adds");
    }
    if (!names.insert(f.name).second) {
      return Status::InvalidArgument("source field '" + f.name + "' appears twice");
    }
    // Ids are placeholders; AssignFreshIds numbers them below.
    columns.push_back(NestedField::Optional(0, f.name, IcebergTypeOf(f.type)));
  }
  columns.push_back(
      NestedField::Optional(0, std::string(geoparquet::kGeometryColumn), std::move(geometry_type)));
  std::vector<NestedField> corners;
  for (std::string_view corner : kBboxCorners) {
    corners.push_back(NestedField::Required(0, std::string(corner), Type::Double()));
  }
  columns.push_back(NestedField::Optional(0, std::string(geoparquet::kBboxColumn),
                                          Type::Struct(std::move(corners))));
  if (partition.kind != PartitionKind::kNone) {
    columns.push_back(
        NestedField::Optional(0, std::string(geoparquet::kCellColumn), Type::String()));
  }
  columns.push_back(
      NestedField::Optional(0, std::string(geoparquet::kHilbertColumn), Type::Long()));
  return table::AssignFreshIds(table::Schema(0, std::move(columns))).schema;
}

Result<table::PartitionSpecPtr> LayoutPartitionSpec(const table::Schema& schema,
                                                    const PartitionScheme& partition) {
  if (partition.kind == PartitionKind::kNone) return table::PartitionSpec::Unpartitioned();
  const NestedField* cell = schema.FindField(geoparquet::kCellColumn);
  if (cell == nullptr || cell->type->id() != TypeId::kString) {
    return Status::InvalidArgument("schema lacks the string column 'geo_cell' for partition " +
                                   partition.ToString());
  }
  table::PartitionField field;
  field.source_id = cell->id;
  field.source_ids = {cell->id};
  field.field_id = table::kFirstPartitionFieldId;
  field.name = std::string(geoparquet::kCellColumn);
  field.transform = table::Transform::Identity();
  return std::make_shared<const table::PartitionSpec>(0, std::vector{field});
}

Result<table::SortOrderPtr> LayoutSortOrder(const table::Schema& schema) {
  const NestedField* key = schema.FindField(geoparquet::kHilbertColumn);
  if (key == nullptr || key->type->id() != TypeId::kLong) {
    return Status::InvalidArgument("schema lacks the long column 'geo_hilbert' to sort by");
  }
  table::SortField field;
  field.transform = table::Transform::Identity();
  field.source_id = key->id;
  field.direction = table::SortDirection::kAscending;
  field.null_order = table::NullOrder::kNullsLast;
  return std::make_shared<const table::SortOrder>(1, std::vector{field});
}

Result<geo::Envelope> DefaultHilbertExtent(std::string_view crs_text) {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> ctx, geo::GeoContext::Make());
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs crs, geo::Crs::Make(*ctx, crs_text));
  if (crs.is_geographic()) return geo::Envelope{-180, -90, 180, 90};
  const geo::Envelope area = AreaOfUse(crs.projjson());
  if (area.IsEmpty()) {
    return Status::InvalidArgument("crs '" + std::string(crs_text) +
                                   "' declares no area of use; set " +
                                   std::string(kHilbertExtentProperty) + " explicitly");
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs lonlat, geo::Crs::Make(*ctx, "EPSG:4326"));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer to_crs, geo::Transformer::Make(*ctx, lonlat, crs));
  // A projected box's edges are curves: sample each edge of the lon/lat area at 64 points so
  // the extent holds them (the corners alone miss the bulge of e.g. a conic projection).
  constexpr int kSteps = 64;
  std::vector<double> xs;
  std::vector<double> ys;
  for (int i = 0; i <= kSteps; ++i) {
    const double t = static_cast<double>(i) / kSteps;
    const double lon = area.xmin + t * (area.xmax - area.xmin);
    const double lat = area.ymin + t * (area.ymax - area.ymin);
    for (const auto& [x, y] : {std::pair{lon, area.ymin}, std::pair{lon, area.ymax},
                               std::pair{area.xmin, lat}, std::pair{area.xmax, lat}}) {
      xs.push_back(x);
      ys.push_back(y);
    }
  }
  Status st = to_crs.Transform(std::span<double>(xs), std::span<double>(ys));
  if (!st.ok()) {
    return Status::InvalidArgument("crs '" + std::string(crs_text) +
                                   "': its area of use does not project (" + st.message() +
                                   "); set " + std::string(kHilbertExtentProperty) + " explicitly");
  }
  geo::Envelope extent;
  for (std::size_t i = 0; i < xs.size(); ++i) extent.Expand(xs[i], ys[i]);
  return extent;
}

std::string FormatExtent(const geo::Envelope& extent) {
  return FormatDouble(extent.xmin) + "," + FormatDouble(extent.ymin) + "," +
         FormatDouble(extent.xmax) + "," + FormatDouble(extent.ymax);
}

Result<geo::Envelope> ParseExtent(std::string_view text) {
  double v[4];
  std::string_view rest = text;
  for (int i = 0; i < 4; ++i) {
    const std::size_t comma = rest.find(',');
    const std::string_view part = i < 3 ? rest.substr(0, comma) : rest;
    if ((i < 3 && comma == std::string_view::npos) || part.empty()) {
      return Status::InvalidArgument("extent '" + std::string(text) +
                                     "': want xmin,ymin,xmax,ymax");
    }
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v[i]);
    if (ec != std::errc() || ptr != part.data() + part.size() || !std::isfinite(v[i])) {
      return Status::InvalidArgument("extent '" + std::string(text) + "': '" + std::string(part) +
                                     "' is not a finite number");
    }
    if (i < 3) rest = rest.substr(comma + 1);
  }
  if (!(v[0] < v[2]) || !(v[1] < v[3])) {
    return Status::InvalidArgument("extent '" + std::string(text) +
                                   "': want xmin < xmax and ymin < ymax");
  }
  return geo::Envelope{v[0], v[1], v[2], v[3]};
}

Result<std::map<std::string, std::string>> LayoutProperties(const LayoutOptions& options) {
  if (options.hilbert_order < 1 || options.hilbert_order > 31) {
    return Status::InvalidArgument("hilbert order " + std::to_string(options.hilbert_order) +
                                   " is outside [1, 31]");
  }
  geo::Envelope extent;
  if (options.hilbert_extent) {
    extent = *options.hilbert_extent;
    if (extent.IsEmpty() || !(extent.xmin < extent.xmax) || !(extent.ymin < extent.ymax)) {
      return Status::InvalidArgument("hilbert extent must have xmin < xmax and ymin < ymax");
    }
    // Still validate the CRS.
    GEOLAKE_RETURN_NOT_OK(geo::Crs::Make(options.crs).status());
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(extent, DefaultHilbertExtent(options.crs));
  }
  std::map<std::string, std::string> properties{
      {std::string(kCrsProperty), options.crs},
      {std::string(kPartitionProperty), options.partition.ToString()},
      {std::string(kHilbertExtentProperty), FormatExtent(extent)},
      {std::string(kHilbertOrderProperty), std::to_string(options.hilbert_order)},
      {"write.parquet.compression-codec", "zstd"},
      {"write.target-file-size-bytes", std::to_string(kDefaultTargetFileSizeBytes)},
  };
  GEOLAKE_ASSIGN_OR_RETURN(table::TypePtr geometry,
                           GeometryColumnType(options.format_version, options.crs));
  if (geometry->id() == TypeId::kGeometry &&
      geometry->crs() == "projjson:" + std::string(kCrsProjjsonProperty)) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Crs crs, geo::Crs::Make(options.crs));
    properties[std::string(kCrsProjjsonProperty)] = crs.projjson();
  }
  return properties;
}

Result<table::NewTableOptions> LayoutNewTable(const std::vector<geoparquet::FieldDef>& fields,
                                              const LayoutOptions& options) {
  table::NewTableOptions out;
  GEOLAKE_ASSIGN_OR_RETURN(table::TypePtr geometry,
                           GeometryColumnType(options.format_version, options.crs));
  GEOLAKE_ASSIGN_OR_RETURN(out.schema, LayoutSchema(fields, options.partition, geometry));
  GEOLAKE_ASSIGN_OR_RETURN(out.spec, LayoutPartitionSpec(*out.schema, options.partition));
  GEOLAKE_ASSIGN_OR_RETURN(out.sort_order, LayoutSortOrder(*out.schema));
  GEOLAKE_ASSIGN_OR_RETURN(out.properties, LayoutProperties(options));
  out.format_version = options.format_version;
  return out;
}

Result<TableLayout> ReadTableLayout(const table::TableMetadata& metadata) {
  const auto bad = [](const std::string& why) {
    return Status::InvalidArgument("not a geolake table layout: " + why);
  };
  const auto property = [&](std::string_view key) -> const std::string* {
    auto it = metadata.properties.find(std::string(key));
    return it == metadata.properties.end() ? nullptr : &it->second;
  };
  TableLayout layout;
  const std::string* crs = property(kCrsProperty);
  if (crs == nullptr) return bad("table lacks property '" + std::string(kCrsProperty) + "'");
  layout.crs = *crs;
  const std::string* partition = property(kPartitionProperty);
  if (partition == nullptr) {
    return bad("table lacks property '" + std::string(kPartitionProperty) + "'");
  }
  GEOLAKE_ASSIGN_OR_RETURN(layout.partition, ParsePartitionScheme(*partition));
  const std::string* extent = property(kHilbertExtentProperty);
  if (extent == nullptr) {
    return bad("table lacks property '" + std::string(kHilbertExtentProperty) + "'");
  }
  GEOLAKE_ASSIGN_OR_RETURN(layout.hilbert_extent, ParseExtent(*extent));
  if (const std::string* order = property(kHilbertOrderProperty); order != nullptr) {
    const std::optional<int> value = ParseInt(*order);
    if (!value || *value < 1 || *value > 31) {
      return bad("property '" + std::string(kHilbertOrderProperty) + "' = '" + *order +
                 "' is not an order in [1, 31]");
    }
    layout.hilbert_order = *value;
  }

  const table::SchemaPtr schema = metadata.current_schema();
  if (schema == nullptr) return bad("table has no current schema");
  int pos = -1;
  const NestedField* geometry = TopLevel(*schema, geoparquet::kGeometryColumn, &pos);
  if (geometry == nullptr) return bad("no column 'geometry'");
  const TypeId geometry_type = geometry->type->id();
  if (geometry_type != TypeId::kBinary && geometry_type != TypeId::kGeometry &&
      geometry_type != TypeId::kGeography) {
    return bad("column 'geometry' is " + geometry->type->ToString() + ", not binary or geometry");
  }
  layout.geometry = {geometry->id, pos};

  const NestedField* bbox = TopLevel(*schema, geoparquet::kBboxColumn, &pos);
  const auto bbox_ok = [&]() {
    if (bbox == nullptr || bbox->type->id() != TypeId::kStruct) return false;
    const auto& children = bbox->type->fields();
    if (children.size() != 4) return false;
    for (std::size_t i = 0; i < 4; ++i) {
      if (children[i].name != kBboxCorners[i] || children[i].type->id() != TypeId::kDouble) {
        return false;
      }
    }
    return true;
  };
  if (!bbox_ok()) return bad("no column 'bbox' of type struct<xmin, ymin, xmax, ymax: double>");
  layout.bbox = {bbox->id, pos};
  layout.bbox_xmin_id = bbox->type->fields()[0].id;
  layout.bbox_ymin_id = bbox->type->fields()[1].id;
  layout.bbox_xmax_id = bbox->type->fields()[2].id;
  layout.bbox_ymax_id = bbox->type->fields()[3].id;

  const NestedField* hilbert = TopLevel(*schema, geoparquet::kHilbertColumn, &pos);
  if (hilbert == nullptr || hilbert->type->id() != TypeId::kLong) {
    return bad("no long column 'geo_hilbert'");
  }
  layout.hilbert = {hilbert->id, pos};

  const NestedField* cell = TopLevel(*schema, geoparquet::kCellColumn, &pos);
  const table::PartitionSpecPtr spec = metadata.default_spec();
  if (layout.partition.kind == PartitionKind::kNone) {
    if (spec != nullptr && !spec->is_unpartitioned()) {
      return bad("geolake.partition is 'none' but the table is partitioned");
    }
  } else {
    if (cell == nullptr || cell->type->id() != TypeId::kString) {
      return bad("geolake.partition is '" + *partition + "' but there is no string column " +
                 "'geo_cell'");
    }
    layout.cell = {cell->id, pos};
    const bool identity_on_cell =
        spec != nullptr && spec->fields().size() == 1 && spec->fields()[0].source_id == cell->id &&
        spec->fields()[0].transform.kind() == table::TransformKind::kIdentity;
    if (!identity_on_cell) {
      return bad("geolake.partition is '" + *partition +
                 "' but the partition spec is not identity(geo_cell)");
    }
  }
  int attributes = 0;
  for (const NestedField& f : schema->fields()) {
    if (!IsLayoutColumn(f.name)) ++attributes;
  }
  layout.attribute_count = attributes;
  return layout;
}

}  // namespace geolake::layout
