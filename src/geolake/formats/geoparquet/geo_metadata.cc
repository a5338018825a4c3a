#include "geolake/formats/geoparquet/geo_metadata.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "geolake/core/json_read.h"

namespace geolake::geoparquet {
namespace {

// ordered_json keeps keys in insertion order, so the output is in spec order and a PROJJSON
// object read from a file is written back with its keys where they were.
using Json = nlohmann::ordered_json;

constexpr const char* kCoveringKeys[] = {"xmin", "ymin", "xmax", "ymax"};

// The four covering fields in spec order, indexed like kCoveringKeys.
constexpr std::vector<std::string> BboxCovering::*kCoveringFields[] = {
    &BboxCovering::xmin, &BboxCovering::ymin, &BboxCovering::xmax, &BboxCovering::ymax};

constexpr std::string_view kContext = "geo metadata";

Status WrongType(std::string_view where, std::string_view expected, const Json& value) {
  return JsonWrongType(where, expected, value).WithContext(kContext);
}

Result<std::string> RequiredString(const Json& object, std::string_view key,
                                   std::string_view where) {
  return JsonRequired<std::string>(object, key, where).WithContext(kContext);
}

// Unlike JsonOptional, a null value is an error here, as it always was for these keys.
Result<std::optional<std::string>> OptionalString(const Json& object, std::string_view key,
                                                  std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end()) return std::optional<std::string>();
  GEOLAKE_ASSIGN_OR_RETURN(
      std::string value,
      JsonAs<std::string>(*it, fmt::format("{}.{}", where, key)).WithContext(kContext));
  return std::optional<std::string>(std::move(value));
}

Result<BboxCovering> ParseCovering(const Json& bbox, const std::string& where) {
  if (!bbox.is_object()) return WrongType(where, "an object", bbox);
  BboxCovering covering;
  for (int key_idx = 0; key_idx < 4; ++key_idx) {
    const std::string key_where = where + "." + kCoveringKeys[key_idx];
    const auto it = bbox.find(kCoveringKeys[key_idx]);
    if (it == bbox.end()) {
      return Status::CorruptData(fmt::format("geo metadata: {} is missing", key_where));
    }
    if (!it->is_array() || it->empty()) {
      return WrongType(key_where, "a non-empty array of strings", *it);
    }
    std::vector<std::string>& path = (covering.*kCoveringFields[key_idx]);
    for (const Json& element : *it) {
      if (!element.is_string()) return WrongType(key_where, "an array of strings", element);
      path.push_back(element.get<std::string>());
    }
  }
  for (int key_idx = 1; key_idx < 4; ++key_idx) {
    if ((covering.*kCoveringFields[key_idx]).front() != covering.xmin.front()) {
      return Status::CorruptData(
          fmt::format("geo metadata: {} paths name different root columns ('{}' and '{}')", where,
                      covering.xmin.front(), (covering.*kCoveringFields[key_idx]).front()));
    }
  }
  return covering;
}

Result<GeoColumnMetadata> ParseColumn(const std::string& name, const Json& object) {
  const std::string where = "column '" + name + "'";
  if (!object.is_object()) return WrongType(where, "an object", object);
  GeoColumnMetadata column;
  GEOLAKE_ASSIGN_OR_RETURN(column.encoding, RequiredString(object, "encoding", where));

  // geometry_types is required by both 1.0 and 1.1; a writer that left it out said nothing
  // about the types, which is what [] means, so read it as that.
  if (const auto it = object.find("geometry_types"); it != object.end()) {
    if (!it->is_array()) return WrongType(where + ".geometry_types", "an array", *it);
    for (const Json& element : *it) {
      if (!element.is_string()) {
        return WrongType(where + ".geometry_types", "an array of strings", element);
      }
      column.geometry_types.push_back(element.get<std::string>());
    }
  }

  if (const auto it = object.find("crs"); it != object.end()) {
    if (it->is_null()) {
      column.crs_mode = CrsMode::kNull;
    } else if (it->is_object()) {
      column.crs_mode = CrsMode::kProjJson;
      column.crs_projjson = it->dump();
    } else {
      return WrongType(where + ".crs", "a PROJJSON object or null", *it);
    }
  }

  GEOLAKE_ASSIGN_OR_RETURN(column.edges, OptionalString(object, "edges", where));
  GEOLAKE_ASSIGN_OR_RETURN(column.orientation, OptionalString(object, "orientation", where));

  if (const auto it = object.find("bbox"); it != object.end()) {
    if (!it->is_array() || (it->size() != 4 && it->size() != 6)) {
      return WrongType(where + ".bbox", "an array of 4 or 6 numbers", *it);
    }
    for (const Json& element : *it) {
      if (!element.is_number()) {
        return WrongType(where + ".bbox", "an array of 4 or 6 numbers", element);
      }
      column.bbox.push_back(element.get<double>());
    }
  }

  if (const auto it = object.find("epoch"); it != object.end()) {
    if (!it->is_number()) return WrongType(where + ".epoch", "a number", *it);
    column.epoch = it->get<double>();
  }

  if (const auto it = object.find("covering"); it != object.end()) {
    if (!it->is_object()) return WrongType(where + ".covering", "an object", *it);
    // Other covering kinds may come; only "bbox" is defined and used.
    if (const auto bbox = it->find("bbox"); bbox != it->end()) {
      GEOLAKE_ASSIGN_OR_RETURN(column.covering, ParseCovering(*bbox, where + ".covering.bbox"));
    }
  }
  return column;
}

Status Invalid(std::string_view column, std::string_view rule) {
  return Status::InvalidArgument(fmt::format("geo metadata: column '{}': {}", column, rule));
}

Status ValidateColumn(const std::string& name, const GeoColumnMetadata& column) {
  if (column.encoding != "WKB") {
    return Invalid(name, fmt::format("encoding '{}' is not WKB", column.encoding));
  }
  for (std::size_t idx = 0; idx < column.geometry_types.size(); ++idx) {
    const std::string& type_name = column.geometry_types[idx];
    auto decoded = geo::ParseGeoParquetTypeName(type_name);
    if (!decoded.ok() || geo::HasM(decoded->dims)) {
      return Invalid(name, fmt::format("geometry type '{}' is not allowed in GeoParquet {}",
                                       type_name, kGeoParquetVersion));
    }
    for (std::size_t other = 0; other < idx; ++other) {
      if (column.geometry_types[other] == type_name) {
        return Invalid(name, fmt::format("geometry type '{}' is listed twice", type_name));
      }
    }
  }
  if (column.crs_mode == CrsMode::kProjJson) {
    const Json crs = Json::parse(column.crs_projjson, nullptr, /*allow_exceptions=*/false);
    if (!crs.is_object()) return Invalid(name, "crs is not a PROJJSON object");
  }
  if (column.edges && *column.edges != "planar" && *column.edges != "spherical") {
    return Invalid(name, fmt::format("edges '{}' is neither planar nor spherical", *column.edges));
  }
  if (column.orientation && *column.orientation != "counterclockwise") {
    return Invalid(name,
                   fmt::format("orientation '{}' is not counterclockwise", *column.orientation));
  }
  if (!column.bbox.empty() && column.bbox.size() != 4 && column.bbox.size() != 6) {
    return Invalid(name, fmt::format("bbox has {} values, not 4 or 6", column.bbox.size()));
  }
  for (double value : column.bbox) {
    if (!std::isfinite(value)) return Invalid(name, "bbox holds a non-finite value");
  }
  if (column.epoch && !std::isfinite(*column.epoch)) return Invalid(name, "epoch is not finite");
  if (column.covering) {
    for (int key_idx = 0; key_idx < 4; ++key_idx) {
      const auto& path = ((*column.covering).*kCoveringFields[key_idx]);
      if (path.empty()) {
        return Invalid(name, fmt::format("covering path {} is empty", kCoveringKeys[key_idx]));
      }
      if (path.front() != column.covering->xmin.front()) {
        return Invalid(name, "covering paths name different root columns");
      }
    }
  }
  return Status::OK();
}

Json ColumnToJson(const GeoColumnMetadata& column) {
  Json object = Json::object();
  object["encoding"] = column.encoding;
  object["geometry_types"] = column.geometry_types;
  switch (column.crs_mode) {
    case CrsMode::kOmitted:
      break;
    case CrsMode::kNull:
      object["crs"] = nullptr;
      break;
    case CrsMode::kProjJson:
      // Validate() has checked that it parses.
      object["crs"] = Json::parse(column.crs_projjson, nullptr, /*allow_exceptions=*/false);
      break;
  }
  if (column.edges) object["edges"] = *column.edges;
  if (column.orientation) object["orientation"] = *column.orientation;
  if (!column.bbox.empty()) object["bbox"] = column.bbox;
  if (column.epoch) object["epoch"] = *column.epoch;
  if (column.covering) {
    Json bbox = Json::object();
    for (int key_idx = 0; key_idx < 4; ++key_idx) {
      bbox[kCoveringKeys[key_idx]] = ((*column.covering).*kCoveringFields[key_idx]);
    }
    object["covering"] = Json{{"bbox", std::move(bbox)}};
  }
  return object;
}

bool IdIs(const Json& id, std::string_view authority, std::string_view code) {
  if (!id.is_object()) return false;
  const auto auth_it = id.find("authority");
  const auto code_it = id.find("code");
  if (auth_it == id.end() || code_it == id.end() || !auth_it->is_string()) return false;
  if (auth_it->get<std::string>() != authority) return false;
  // PROJJSON writes codes as strings ("CRS84") or integers (4326).
  if (code_it->is_string()) return code_it->get<std::string>() == code;
  if (code_it->is_number_integer()) return std::to_string(code_it->get<long long>()) == code;
  return false;
}

}  // namespace

BboxCovering BboxCovering::ForColumn(std::string_view column) {
  const std::string root(column);
  return BboxCovering{{root, "xmin"}, {root, "ymin"}, {root, "xmax"}, {root, "ymax"}};
}

geo::Envelope GeoColumnMetadata::BboxEnvelope() const {
  if (bbox.size() == 4) return geo::Envelope{bbox[0], bbox[1], bbox[2], bbox[3]};
  if (bbox.size() == 6) return geo::Envelope{bbox[0], bbox[1], bbox[3], bbox[4]};
  return geo::Envelope::Empty();
}

Result<std::vector<geo::TypedDimensions>> GeoColumnMetadata::DecodedGeometryTypes() const {
  std::vector<geo::TypedDimensions> types;
  for (const std::string& type_name : geometry_types) {
    auto decoded = geo::ParseGeoParquetTypeName(type_name);
    if (!decoded.ok()) {
      return Status::CorruptData("geo metadata: " + decoded.status().message());
    }
    types.push_back(*decoded);
  }
  return types;
}

bool GeoColumnMetadata::IsDefaultCrs() const {
  if (crs_mode == CrsMode::kOmitted) return true;
  if (crs_mode == CrsMode::kNull) return false;
  const Json crs = Json::parse(crs_projjson, nullptr, /*allow_exceptions=*/false);
  if (!crs.is_object()) return false;
  const auto id = crs.find("id");
  if (id == crs.end()) return false;
  return IdIs(*id, "OGC", "CRS84") || IdIs(*id, "EPSG", "4326");
}

const GeoColumnMetadata* GeoMetadata::FindColumn(std::string_view name) const {
  for (const auto& [column_name, column] : columns) {
    if (column_name == name) return &column;
  }
  return nullptr;
}

GeoColumnMetadata* GeoMetadata::FindColumn(std::string_view name) {
  return const_cast<GeoColumnMetadata*>(std::as_const(*this).FindColumn(name));
}

Status GeoMetadata::Validate() const {
  if (version != kGeoParquetVersion) {
    return Status::InvalidArgument(
        fmt::format("geo metadata: version '{}' is not {}", version, kGeoParquetVersion));
  }
  if (columns.empty()) return Status::InvalidArgument("geo metadata: no geometry columns");
  if (FindColumn(primary_column) == nullptr) {
    return Status::InvalidArgument(
        fmt::format("geo metadata: primary column '{}' is not among the columns", primary_column));
  }
  for (std::size_t idx = 0; idx < columns.size(); ++idx) {
    for (std::size_t other = 0; other < idx; ++other) {
      if (columns[other].first == columns[idx].first) {
        return Invalid(columns[idx].first, "listed twice");
      }
    }
    GEOLAKE_RETURN_NOT_OK(ValidateColumn(columns[idx].first, columns[idx].second));
  }
  return Status::OK();
}

Result<std::string> GeoMetadata::ToJson() const {
  GEOLAKE_RETURN_NOT_OK(Validate());
  Json root = Json::object();
  root["version"] = version;
  root["primary_column"] = primary_column;
  Json columns_json = Json::object();
  for (const auto& [name, column] : columns) columns_json[name] = ColumnToJson(column);
  root["columns"] = std::move(columns_json);
  try {
    return root.dump();
  } catch (const Json::exception& e) {
    // dump() refuses strings that are not UTF-8 (a column name, a type name).
    return Status::InvalidArgument(fmt::format("geo metadata: {}", e.what()));
  }
}

Result<GeoMetadata> GeoMetadata::Parse(std::string_view json) {
  Json root;
  try {
    root = Json::parse(json);
  } catch (const Json::exception& e) {
    return Status::CorruptData(fmt::format("geo metadata: not JSON: {}", e.what()));
  }
  if (!root.is_object()) return WrongType("the document", "an object", root);

  GeoMetadata metadata;
  GEOLAKE_ASSIGN_OR_RETURN(metadata.version, RequiredString(root, "version", "the document"));
  // 1.0.0-beta.1, 1.0.0, 1.1.0 ... all share the layout read here.
  if (metadata.version.empty() || metadata.version.substr(0, 2) != "1.") {
    return Status::NotImplemented(
        fmt::format("geo metadata: unsupported GeoParquet version '{}'", metadata.version));
  }
  GEOLAKE_ASSIGN_OR_RETURN(metadata.primary_column,
                           RequiredString(root, "primary_column", "the document"));

  const auto columns_it = root.find("columns");
  if (columns_it == root.end()) {
    return Status::CorruptData("geo metadata: the document has no 'columns'");
  }
  if (!columns_it->is_object()) return WrongType("columns", "an object", *columns_it);
  if (columns_it->empty()) return Status::CorruptData("geo metadata: 'columns' is empty");
  for (const auto& [name, object] : columns_it->items()) {
    GEOLAKE_ASSIGN_OR_RETURN(GeoColumnMetadata column, ParseColumn(name, object));
    metadata.columns.emplace_back(name, std::move(column));
  }
  if (metadata.FindColumn(metadata.primary_column) == nullptr) {
    return Status::CorruptData(fmt::format(
        "geo metadata: primary_column '{}' is not among the columns", metadata.primary_column));
  }
  return metadata;
}

}  // namespace geolake::geoparquet
