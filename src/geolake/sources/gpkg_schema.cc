// Describing a GeoPackage layer as GDAL 3.6's GeoPackage driver does, without GDAL
// (GpkgSource::IsGeoPackageFile, LayerNames, Describe), and the catalogue queries the reader
// shares (QueryRows, OpenReadOnly).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "geolake/geo/crs.h"
#include "geolake/sources/gpkg_internal.h"
#include "geolake/sources/gpkg_source.h"
#include "geolake/sources/sources_internal.h"

namespace geolake::sources {
namespace gpkg {

Status QueryRows(sqlite::Database& db, const std::string& sql,
                 std::initializer_list<std::string> params,
                 const std::function<void(const std::vector<SqlValue>&)>& on_row) {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Statement> stmt, db.Prepare(sql));
  int param = 1;
  for (const std::string& value : params) GEOLAKE_RETURN_NOT_OK(stmt->BindText(param++, value));
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
    if (!has_row) return Status::OK();
    std::vector<SqlValue> row;
    for (int i = 0; i < stmt->column_count(); ++i) {
      SqlValue value;
      value.type = stmt->column_type(i);
      value.integer = stmt->ColumnInt64(i);
      if (const char* text = stmt->ColumnCString(i); text != nullptr) value.text = text;
      row.push_back(std::move(value));
    }
    on_row(row);
  }
}

Result<std::unique_ptr<sqlite::Database>> OpenReadOnly(const std::string& path) {
  sqlite::OpenOptions options;
  options.read_only = true;
  options.busy_timeout_ms = 5000;
  return sqlite::Database::Open(path, options);
}

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool EqualNoCase(std::string_view a, std::string_view b) { return Upper(a) == Upper(b); }

}  // namespace gpkg

namespace {

using geoparquet::FieldType;
using gpkg::EqualNoCase;
using gpkg::OpenReadOnly;
using gpkg::QueryRows;
using gpkg::SqlValue;
using gpkg::Upper;

// ---------------------------------------------------------------------------------------------
// Describing a layer as GDAL 3.6's GeoPackage driver does, without GDAL. Every rule below is a
// fact about what that driver reports for a file (checked field by field against GdalSource in
// gpkg_source_test.cc); where the driver's answer depends on something not mirrored here, the
// description is refused and the caller asks GDAL.

// Bytes 68..71 of the SQLite header (big-endian): "GPKG" (1.2+), "GP10", "GP11".
constexpr std::array<std::uint32_t, 3> kGeoPackageApplicationIds = {0x47504B47, 0x47503130,
                                                                    0x47503131};

// The layer list in GDAL's order: the driver runs this query (feature tables joined with their
// geometry column, then attribute tables) without ORDER BY, so its order is SQLite's plan for
// exactly these columns and joins; running the same query on the same SQLite gives the same
// order. GDAL stops at 10,000 layers (OGR_TABLE_LIMIT), hence the limit.
constexpr const char* kLayerListSql =
    "SELECT c.table_name, c.identifier, 1 as is_spatial, g.column_name, g.geometry_type_name, "
    "g.z, g.m, c.min_x, c.min_y, c.max_x, c.max_y, 1 AS is_in_gpkg_contents "
    "FROM gpkg_geometry_columns g JOIN gpkg_contents c ON (g.table_name = c.table_name) "
    "WHERE c.table_name IS NOT NULL AND c.table_name <> 'ogr_empty_table' AND "
    "c.data_type = 'features' "
    "UNION ALL "
    "SELECT table_name, identifier, 0 as is_spatial, NULL, NULL, 0, 0, 0 AS xmin, 0 AS ymin, "
    "0 AS xmax, 0 AS ymax, 1 AS is_in_gpkg_contents FROM gpkg_contents "
    "WHERE table_name IS NOT NULL AND data_type IN ('aspatial', 'attributes') LIMIT 10001";
constexpr std::int64_t kGdalTableLimit = 10000;

// Tables and views that GDAL also lists as layers (after the registered ones) unless the file
// has attribute tables: those not registered in gpkg_contents and not of a known system kind.
// Their description (and order) is not mirrored, so any such table means "ask GDAL".
constexpr const char* kUnregisteredTablesSql =
    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name IS NOT NULL "
    "AND name NOT LIKE 'gpkg_%' AND name NOT LIKE 'vgpkg_%' AND name NOT LIKE 'rtree_%' "
    "AND name NOT LIKE 'sqlite_%' AND name NOT IN ('st_spatial_ref_sys', 'spatial_ref_sys', "
    "'st_geometry_columns', 'geometry_columns') "
    "AND lower(name) NOT IN (SELECT lower(table_name) FROM gpkg_contents)";

struct ListedLayer {
  std::string name;
  bool spatial = false;
};

// A refusal: the caller describes the file with GDAL instead.
Status Refuse(const std::string& path, const std::string& why) {
  return Status::NotImplemented("source '" + path + "': not described natively: " + why);
}

// Open `path` read-only and list its layers as GDAL does (kNotImplemented when unsure).
Status ListLayers(const std::string& path, std::unique_ptr<sqlite::Database>* db,
                  std::vector<ListedLayer>* layers) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound("source '" + path + "': no such file");
  }
  if (path.rfind("/vsi", 0) == 0) return Refuse(path, "a GDAL virtual file");
  if (!GpkgSource::IsGeoPackageFile(path)) return Refuse(path, "not a GeoPackage by its header");
  // GDAL's driver also claims a GeoPackage-id file under another extension only in some cases;
  // which driver reads such a file is left to GDAL.
  const std::string extension = std::filesystem::path(path).extension().string();
  if (!EqualNoCase(extension, ".gpkg")) return Refuse(path, "extension is not .gpkg");
  auto opened = OpenReadOnly(path);
  if (!opened.ok()) return Refuse(path, "SQLite cannot open it");
  *db = std::move(*opened);
  bool has_geometry_columns = false;
  Status status = QueryRows(**db,
                            "SELECT 1 FROM sqlite_master WHERE name = 'gpkg_geometry_columns' "
                            "AND type IN ('table', 'view')",
                            {}, [&](const auto&) { has_geometry_columns = true; });
  if (!status.ok()) return Refuse(path, "reading sqlite_master: " + status.message());
  if (!has_geometry_columns) return Refuse(path, "no gpkg_geometry_columns table");
  std::vector<std::string> seen;
  bool duplicate = false;
  status = QueryRows(**db, kLayerListSql, {}, [&](const auto& row) {
    const std::string& name = row[0].text;
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) duplicate = true;
    seen.push_back(name);
    layers->push_back({name, row[2].integer == 1});
  });
  if (!status.ok()) return Refuse(path, "listing layers: " + status.message());
  if (duplicate) return Refuse(path, "a table is registered more than once");
  if (static_cast<std::int64_t>(layers->size()) > kGdalTableLimit) {
    return Refuse(path, "more layers than GDAL lists");
  }
  if (layers->empty()) return Refuse(path, "no registered layer");
  std::string unregistered;
  status = QueryRows(**db, kUnregisteredTablesSql, {},
                     [&](const auto& row) { unregistered = row[0].text; });
  if (!status.ok()) return Refuse(path, "reading sqlite_master: " + status.message());
  if (!unregistered.empty()) {
    return Refuse(path, "table '" + unregistered + "' is not registered in gpkg_contents");
  }
  return Status::OK();
}

// OGR's type of a column from its declared SQLite type (the GeoPackage driver's mapping), with
// our FieldType; false for a declared type this mapping does not cover (GDAL reads unknown
// types as strings, or drops them from a spatial table as a "geometry column"; not mirrored).
bool MapDeclaredType(std::string_view declared, std::string* ogr_type, FieldType* type) {
  const std::string upper = Upper(declared);
  const auto has_size_suffix = [&](std::string_view base) {
    if (upper.size() < base.size() + 3 || upper.compare(0, base.size(), base) != 0 ||
        upper[base.size()] != '(' || upper.back() != ')') {
      return false;
    }
    for (std::size_t i = base.size() + 1; i + 1 < upper.size(); ++i) {
      if (upper[i] < '0' || upper[i] > '9') return false;
    }
    return true;
  };
  struct Mapping {
    std::string_view declared;
    std::string_view ogr_type;
    FieldType type;
  };
  static constexpr std::array<Mapping, 13> kMappings = {{
      {"INTEGER", "Integer64", FieldType::kInt64},
      {"INT", "Integer64", FieldType::kInt64},
      {"MEDIUMINT", "Integer", FieldType::kInt64},
      {"SMALLINT", "Integer(Int16)", FieldType::kInt64},
      {"TINYINT", "Integer", FieldType::kInt64},
      {"BOOLEAN", "Integer(Boolean)", FieldType::kBool},
      {"FLOAT", "Real(Float32)", FieldType::kDouble},
      {"DOUBLE", "Real", FieldType::kDouble},
      {"REAL", "Real", FieldType::kDouble},
      {"TEXT", "String", FieldType::kString},
      {"BLOB", "Binary", FieldType::kBinary},
      {"DATE", "Date", FieldType::kDate},
      {"DATETIME", "DateTime", FieldType::kTimestamp},
  }};
  std::string_view base = upper;
  if (has_size_suffix("TEXT")) base = "TEXT";  // TEXT(n): a maximum width, still a String
  if (has_size_suffix("BLOB")) base = "BLOB";
  for (const Mapping& mapping : kMappings) {
    if (mapping.declared == base) {
      *ogr_type = mapping.ogr_type;
      *type = mapping.type;
      return true;
    }
  }
  return false;
}

// OGR's name (OGRGeometryTypeToName) of a GeoPackage geometry type name with Z/M; false for
// anything but the eight simple types.
bool GeometryTypeName(std::string_view gpkg_type, bool has_z, bool has_m, std::string* name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kNames = {{
      {"GEOMETRY", "Unknown (any)"},
      {"POINT", "Point"},
      {"LINESTRING", "Line String"},
      {"POLYGON", "Polygon"},
      {"MULTIPOINT", "Multi Point"},
      {"MULTILINESTRING", "Multi Line String"},
      {"MULTIPOLYGON", "Multi Polygon"},
      {"GEOMCOLLECTION", "Geometry Collection"},
      {"GEOMETRYCOLLECTION", "Geometry Collection"},
  }};
  const std::string upper = Upper(gpkg_type);
  for (const auto& [gpkg, ogr] : kNames) {
    if (gpkg != upper) continue;
    *name = std::string(has_z ? "3D " : "") + (has_m ? "Measured " : "") + std::string(ogr);
    return true;
  }
  return false;
}

// The geometry column of a feature table, as gpkg_geometry_columns declares it.
struct GeometryColumn {
  std::string name;
  std::string type_name;
  std::int64_t srs_id = 0;
  std::int64_t z = 0;
  std::int64_t m = 0;
};

Status ReadGeometryColumn(const std::string& path, sqlite::Database& db, const std::string& table,
                          GeometryColumn* out) {
  int rows = 0;
  bool typed = true;
  const auto on_row = [&](const auto& row) {
    ++rows;
    out->name = row[0].text;
    out->type_name = row[1].text;
    typed = typed && row[0].type == sqlite::ValueType::kText &&
            row[1].type == sqlite::ValueType::kText && row[2].is_integer() && row[3].is_integer() &&
            row[4].is_integer();
    out->srs_id = row[2].integer;
    out->z = row[3].integer;
    out->m = row[4].integer;
  };
  // The layer list joined on the exact name, so the exact query finds it (GDAL tries it first).
  const Status status = QueryRows(db,
                                  "SELECT column_name, geometry_type_name, srs_id, z, m FROM "
                                  "gpkg_geometry_columns WHERE table_name = ? LIMIT 2",
                                  {table}, on_row);
  if (!status.ok()) return Refuse(path, "reading gpkg_geometry_columns: " + status.message());
  if (rows != 1) return Refuse(path, "not exactly one geometry column");
  if (!typed) return Refuse(path, "gpkg_geometry_columns holds values of unexpected types");
  return Status::OK();
}

// GDAL's declared geometry type of the layer. The driver reads z/m twice (when listing and
// when reading the table), and for GEOMETRY the two readings treat the value 2 ("optional")
// differently; only the combinations where they agree are described.
Status DescribeGeometryType(const std::string& path, const GeometryColumn& column,
                            std::string* name) {
  if (column.z < 0 || column.z > 2 || column.m < 0 || column.m > 2) {
    return Refuse(path, "z/m flags out of range");
  }
  bool has_z = column.z > 0;
  bool has_m = column.m > 0;
  if (EqualNoCase(column.type_name, "GEOMETRY")) {
    if ((column.z == 2) != (column.m == 2)) {
      return Refuse(path, "GEOMETRY with only one of z/m optional");
    }
    if (column.z == 2) has_z = has_m = false;
  }
  if (!GeometryTypeName(column.type_name, has_z, has_m, name)) {
    return Refuse(path, "declared geometry type '" + column.type_name + "'");
  }
  return Status::OK();
}

// The fields (and FID column) of `table` from its declared columns, in table order.
Status DescribeColumns(const std::string& path, sqlite::Database& db, const std::string& table,
                       const std::string& geometry_column, SourceInfo* info) {
  struct DeclaredColumn {
    std::string name;
    std::string type;
    std::int64_t pk = 0;
  };
  std::vector<DeclaredColumn> columns;
  const Status status = QueryRows(db, "SELECT name, type, pk FROM pragma_table_info(?)", {table},
                                  [&](const auto& row) {
                                    columns.push_back({row[0].text, row[1].text, row[2].integer});
                                  });
  if (!status.ok()) return Refuse(path, "reading the table's columns: " + status.message());
  const auto primary_keys =
      std::count_if(columns.begin(), columns.end(), [](const auto& c) { return c.pk > 0; });
  // GDAL's FID is the single primary-key column of an integer type; GpkgSource reads it as the
  // rowid, so only an INTEGER PRIMARY KEY is described.
  if (primary_keys != 1) return Refuse(path, "not exactly one primary-key column");
  int geometry_found = 0;
  for (const DeclaredColumn& column : columns) {
    if (EqualNoCase(column.name, geometry_column)) {
      // Matched case-insensitively by GDAL; an empty declared type makes it an attribute.
      if (column.name != geometry_column || column.type.empty() ||
          EqualNoCase(column.name, "OGC_FID")) {
        return Refuse(path, "geometry column '" + column.name + "' declared unusually");
      }
      ++geometry_found;
      continue;
    }
    std::string ogr_type;
    FieldType type{};
    if (!MapDeclaredType(column.type, &ogr_type, &type)) {
      return Refuse(path, "column '" + column.name + "' has declared type '" + column.type + "'");
    }
    if (column.pk > 0) {
      if (!EqualNoCase(column.type, "INTEGER")) return Refuse(path, "the FID is not the rowid");
      info->fid_column = column.name;
      continue;
    }
    info->fields.push_back({column.name, type});
    info->field_source_types.push_back(ogr_type);
  }
  if (geometry_found != 1) return Refuse(path, "geometry column not found");
  if (info->fid_column.empty()) return Refuse(path, "no integer primary key");
  info->geometry_columns = {geometry_column};
  return Status::OK();
}

// gpkg_data_columns marks a text column holding JSON with the mime type application/json;
// GDAL gives such a String field the subtype JSON (field matched case-insensitively).
Status ApplyDataColumns(const std::string& path, sqlite::Database& db, const std::string& table,
                        SourceInfo* info) {
  std::string kind;
  Status status = QueryRows(db, "SELECT type FROM sqlite_master WHERE name = 'gpkg_data_columns'",
                            {}, [&](const auto& row) { kind = row[0].text; });
  if (!status.ok()) return Refuse(path, "reading sqlite_master: " + status.message());
  if (kind.empty()) return Status::OK();
  if (kind != "table") return Refuse(path, "gpkg_data_columns is not a table");
  std::vector<std::string> json_columns;
  status = QueryRows(
      db, "SELECT column_name, mime_type FROM gpkg_data_columns WHERE table_name = ?", {table},
      [&](const auto& row) {
        if (row[0].type != sqlite::ValueType::kNull && row[1].type != sqlite::ValueType::kNull &&
            EqualNoCase(row[1].text, "application/json")) {
          json_columns.push_back(row[0].text);
        }
      });
  if (!status.ok()) return Refuse(path, "reading gpkg_data_columns: " + status.message());
  for (const std::string& column : json_columns) {
    for (std::size_t i = 0; i < info->fields.size(); ++i) {
      if (!EqualNoCase(info->fields[i].name, column)) continue;
      if (info->field_source_types[i] == "String") info->field_source_types[i] = "String(JSON)";
      break;
    }
  }
  return Status::OK();
}

// GDAL's feature count: gpkg_ogr_contents' when the table has one row there with a count,
// else COUNT(*) (the driver counts even when not forced).
Status CountFeatures(const std::string& path, sqlite::Database& db, const std::string& table,
                     SourceInfo* info) {
  bool has_ogr_contents = false;
  Status status = QueryRows(db,
                            "SELECT 1 FROM sqlite_master WHERE name = 'gpkg_ogr_contents' AND "
                            "type = 'table'",
                            {}, [&](const auto&) { has_ogr_contents = true; });
  if (!status.ok()) return Refuse(path, "reading sqlite_master: " + status.message());
  if (has_ogr_contents) {
    std::vector<SqlValue> counts;
    const auto on_row = [&](const auto& row) { counts.push_back(row[0]); };
    status =
        QueryRows(db, "SELECT feature_count FROM gpkg_ogr_contents WHERE table_name = ? LIMIT 2",
                  {table}, on_row);
    if (status.ok() && counts.empty()) {
      status = QueryRows(db,
                         "SELECT feature_count FROM gpkg_ogr_contents "
                         "WHERE lower(table_name) = lower(?) LIMIT 2",
                         {table}, on_row);
    }
    if (!status.ok()) return Refuse(path, "reading gpkg_ogr_contents: " + status.message());
    if (counts.size() == 1 && counts[0].type != sqlite::ValueType::kNull) {
      if (!counts[0].is_integer() || counts[0].integer < 0) {
        return Refuse(path, "gpkg_ogr_contents holds an odd feature count");
      }
      info->feature_count = counts[0].integer;
      return Status::OK();
    }
  }
  status = QueryRows(db, "SELECT COUNT(*) FROM " + internal::QuoteIdentifier(table), {},
                     [&](const auto& row) { info->feature_count = row[0].integer; });
  if (!status.ok()) return Refuse(path, "counting features: " + status.message());
  return Status::OK();
}

// GdalSource's contiguous-FID probe: FIDs first_fid .. first_fid + count - 1 without gaps make
// the layer seekable by FID (two B-tree lookups, as separate queries).
Status ProbeContiguousFids(const std::string& path, sqlite::Database& db, const std::string& table,
                           SourceInfo* info) {
  const std::string fid = internal::QuoteIdentifier(info->fid_column);
  const std::string quoted = internal::QuoteIdentifier(table);
  SqlValue min_fid, max_fid;
  const Status status = QueryRows(db,
                                  "SELECT (SELECT MIN(" + fid + ") FROM " + quoted +
                                      "), (SELECT MAX(" + fid + ") FROM " + quoted + ")",
                                  {}, [&](const auto& row) {
                                    min_fid = row[0];
                                    max_fid = row[1];
                                  });
  if (!status.ok()) return Refuse(path, "probing FIDs: " + status.message());
  info->first_fid = -1;
  if (min_fid.type != sqlite::ValueType::kNull && max_fid.type != sqlite::ValueType::kNull &&
      max_fid.integer - min_fid.integer + 1 == info->feature_count) {
    info->first_fid = min_fid.integer;
  }
  info->fast_seek = info->first_fid >= 0;
  return Status::OK();
}

// The CRS of srs_id as GDAL reads it: srs_id 0 is GDAL's fixed undefined geographic SRS (no
// authority); an EPSG entry whose code is its srs_id is imported from EPSG (its definition text
// is then not used); anything else (the undefined Cartesian SRS -1, other organizations, a
// definition GDAL would parse) is refused.
Status DescribeCrs(const std::string& path, sqlite::Database& db, std::int64_t srs_id,
                   geo::GdalProjjsonCache& crs_cache, SourceInfo* info) {
  if (srs_id == 0) {
    Result<std::string> projjson = crs_cache.Get(0);
    if (!projjson.ok()) return Refuse(path, projjson.status().message());
    info->crs_projjson = *std::move(projjson);
    return Status::OK();
  }
  if (srs_id < 0 || srs_id > std::numeric_limits<int>::max()) {
    return Refuse(path, "srs_id " + std::to_string(srs_id) + " is not an EPSG code");
  }
  std::vector<std::vector<SqlValue>> rows;
  const Status status =
      QueryRows(db,
                "SELECT organization, organization_coordsys_id FROM gpkg_spatial_ref_sys "
                "WHERE definition IS NOT NULL AND srs_id = " +
                    std::to_string(srs_id) + " LIMIT 2",
                {}, [&](const auto& row) { rows.push_back(row); });
  if (!status.ok()) return Refuse(path, "reading gpkg_spatial_ref_sys: " + status.message());
  if (rows.size() != 1) return Refuse(path, "srs_id " + std::to_string(srs_id) + " not found once");
  if (!EqualNoCase(rows[0][0].text, "EPSG") || !rows[0][1].is_integer() ||
      rows[0][1].integer != srs_id) {
    return Refuse(path, "srs_id " + std::to_string(srs_id) +
                            " is not EPSG:" + std::to_string(srs_id) + " (organization '" +
                            rows[0][0].text + "', id " + rows[0][1].text + ")");
  }
  Result<std::string> projjson = crs_cache.Get(static_cast<int>(srs_id));
  if (!projjson.ok()) return Refuse(path, projjson.status().message());
  info->crs_projjson = *std::move(projjson);
  info->crs_authority = "EPSG:" + std::to_string(srs_id);
  return Status::OK();
}

}  // namespace

bool GpkgSource::IsGeoPackageFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char header[100] = {};
  const ssize_t got = ::pread(fd, header, sizeof(header), 0);
  ::close(fd);
  if (got != static_cast<ssize_t>(sizeof(header))) return false;
  if (std::memcmp(header, "SQLite format 3", 16) != 0) return false;  // with its NUL
  const std::uint32_t application_id = (std::uint32_t{header[68]} << 24) |
                                       (std::uint32_t{header[69]} << 16) |
                                       (std::uint32_t{header[70]} << 8) | header[71];
  return std::find(kGeoPackageApplicationIds.begin(), kGeoPackageApplicationIds.end(),
                   application_id) != kGeoPackageApplicationIds.end();
}

Result<std::vector<std::string>> GpkgSource::LayerNames(const std::string& path) {
  std::unique_ptr<sqlite::Database> db;
  std::vector<ListedLayer> layers;
  GEOLAKE_RETURN_NOT_OK(ListLayers(path, &db, &layers));
  std::vector<std::string> names;
  for (const ListedLayer& layer : layers) names.push_back(layer.name);
  return names;
}

Result<SourceInfo> GpkgSource::Describe(const std::string& path, const std::string& layer,
                                        geo::GdalProjjsonCache* crs_cache) {
  std::unique_ptr<sqlite::Database> db;
  std::vector<ListedLayer> layers;
  GEOLAKE_RETURN_NOT_OK(ListLayers(path, &db, &layers));
  // GDAL finds a named layer exactly, else case-insensitively; only the exact match (or the
  // first layer) is described here, the rest (and "no such layer") is GDAL's to answer.
  const auto found = layer.empty() ? layers.begin()
                                   : std::find_if(layers.begin(), layers.end(),
                                                  [&](const auto& l) { return l.name == layer; });
  if (found == layers.end()) return Refuse(path, "layer '" + layer + "' not listed exactly");
  const std::string& table = found->name;
  const std::string at = path + "' layer '" + table;
  if (!found->spatial) return Refuse(at, "an attribute table");

  std::vector<std::string> objects;
  Status status = QueryRows(*db,
                            "SELECT type, name FROM sqlite_master WHERE lower(name) = lower(?) "
                            "AND type IN ('table', 'view')",
                            {table}, [&](const auto& row) {
                              objects.push_back(row[1].text == table ? row[0].text : "other");
                            });
  if (!status.ok()) return Refuse(at, "reading sqlite_master: " + status.message());
  if (objects.size() != 1 || objects[0] != "table") return Refuse(at, "not a plain table");

  SourceInfo info;
  info.path = path;
  info.layer = table;
  info.driver = "GPKG";
  info.layer_count = static_cast<std::int64_t>(layers.size());
  GeometryColumn geometry;
  GEOLAKE_RETURN_NOT_OK(ReadGeometryColumn(at, *db, table, &geometry));
  GEOLAKE_RETURN_NOT_OK(DescribeGeometryType(at, geometry, &info.geometry_type));
  GEOLAKE_RETURN_NOT_OK(DescribeColumns(at, *db, table, geometry.name, &info));
  GEOLAKE_RETURN_NOT_OK(ApplyDataColumns(at, *db, table, &info));
  GEOLAKE_RETURN_NOT_OK(CountFeatures(at, *db, table, &info));
  GEOLAKE_RETURN_NOT_OK(ProbeContiguousFids(at, *db, table, &info));
  std::unique_ptr<geo::GdalProjjsonCache> own_cache;
  if (crs_cache == nullptr) {
    auto made = geo::GdalProjjsonCache::Make();
    if (!made.ok()) return Refuse(at, "no PROJ context: " + made.status().message());
    own_cache = *std::move(made);
    crs_cache = own_cache.get();
  }
  GEOLAKE_RETURN_NOT_OK(DescribeCrs(at, *db, geometry.srs_id, *crs_cache, &info));
  return info;
}

}  // namespace geolake::sources
