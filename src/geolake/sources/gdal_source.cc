#include "geolake/sources/gdal_source.h"

#include <fstream>
#include <string>
#include <string_view>
#include <utility>

#include "geolake/sources/gdal_api.h"
#include "geolake/sources/gpkg_internal.h"
#include "geolake/sources/sources_internal.h"

namespace geolake::sources {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldType;

using gdal::QuietErrors;

FieldType MapFieldType(OGRFieldDefnH defn) {
  switch (gdal::OGR_Fld_GetType(defn)) {
    case OFTInteger:
      return gdal::OGR_Fld_GetSubType(defn) == OFSTBoolean ? FieldType::kBool : FieldType::kInt64;
    case OFTInteger64:
      return gdal::OGR_Fld_GetSubType(defn) == OFSTBoolean ? FieldType::kBool : FieldType::kInt64;
    case OFTReal:
      return FieldType::kDouble;
    case OFTDate:
      return FieldType::kDate;
    case OFTDateTime:
      return FieldType::kTimestamp;
    case OFTBinary:
      return FieldType::kBinary;
    default:  // strings, times and list types are delivered as text
      return FieldType::kString;
  }
}

// OGR's type name, with the subtype in parentheses when there is one: "Integer(Boolean)".
std::string SourceTypeName(OGRFieldDefnH defn) {
  std::string name = gdal::OGR_GetFieldTypeName(gdal::OGR_Fld_GetType(defn));
  if (gdal::OGR_Fld_GetSubType(defn) != OFSTNone) {
    name += "(" + std::string(gdal::OGR_GetFieldSubTypeName(gdal::OGR_Fld_GetSubType(defn))) + ")";
  }
  return name;
}

// Append one feature as one row of `batch` (schema set). `wkb_scratch` is reused between
// calls. Errors: kCorruptData when the geometry cannot be encoded.
Status AppendFeatureRow(OGRFeatureH feature, std::int64_t feature_index, const std::string& path,
                        std::string* wkb_scratch, FeatureBatch* batch) {
  for (std::size_t i = 0; i < batch->columns.size(); ++i) {
    Column& col = batch->columns[i];
    const int idx = static_cast<int>(i);
    const bool present = gdal::OGR_F_IsFieldSetAndNotNull(feature, idx) != 0;
    col.valid.push_back(present ? 1 : 0);
    switch (col.type) {
      case FieldType::kBool:
      case FieldType::kInt64:
        col.ints.push_back(present ? gdal::OGR_F_GetFieldAsInteger64(feature, idx) : 0);
        break;
      case FieldType::kDouble:
        col.doubles.push_back(present ? gdal::OGR_F_GetFieldAsDouble(feature, idx) : 0.0);
        break;
      case FieldType::kDate:
      case FieldType::kTimestamp: {
        std::int64_t value = 0;
        if (present) {
          int y = 0, mo = 0, d = 0, h = 0, mi = 0, tz = 0;
          float sec = 0;
          gdal::OGR_F_GetFieldAsDateTimeEx(feature, idx, &y, &mo, &d, &h, &mi, &sec, &tz);
          value = col.type == FieldType::kDate
                      ? internal::DaysSinceEpoch(y, mo, d)
                      : internal::TimestampMicros(y, mo, d, h, mi, sec, tz);
        }
        col.ints.push_back(value);
        break;
      }
      case FieldType::kBinary: {
        if (present) {
          int size = 0;
          const GByte* data = gdal::OGR_F_GetFieldAsBinary(feature, idx, &size);
          col.bytes.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
        }
        col.offsets.push_back(static_cast<std::int64_t>(col.bytes.size()));
        break;
      }
      case FieldType::kString: {
        if (present) col.bytes.append(gdal::OGR_F_GetFieldAsString(feature, idx));
        col.offsets.push_back(static_cast<std::int64_t>(col.bytes.size()));
        break;
      }
    }
  }
  OGRGeometryH geom = gdal::OGR_F_GetGeometryRef(feature);
  if (geom != nullptr) {
    const std::size_t size = static_cast<std::size_t>(gdal::OGR_G_WkbSizeEx(geom));
    wkb_scratch->resize(size);
    if (gdal::OGR_G_ExportToIsoWkb(
            geom, wkbNDR, reinterpret_cast<unsigned char*>(wkb_scratch->data())) != OGRERR_NONE) {
      return Status::CorruptData("source '" + path + "': feature " + std::to_string(feature_index) +
                                 ": cannot encode geometry: " + QuietErrors::LastMessage());
    }
    batch->wkb.append(*wkb_scratch);
  }
  batch->geometry_valid.push_back(geom != nullptr ? 1 : 0);
  batch->wkb_offsets.push_back(static_cast<std::int64_t>(batch->wkb.size()));
  batch->feature_index.push_back(feature_index);
  return Status::OK();
}

}  // namespace

struct GdalSource::Handles {
  GDALDatasetH dataset = nullptr;
  OGRLayerH layer = nullptr;  // owned by the dataset
  // GeoPackage tables whose FIDs run without gaps from first_fid: feature i has FID
  // first_fid + i, so Seek becomes a rowid range (B-tree lookup) instead of reading and
  // dropping every feature before it (1 s for 150k points). -1 = not such a table.
  std::int64_t first_fid = -1;
  std::string fid_column;
  // When >= 0, a feature's index is its FID minus this (GeoPackage without FID gaps:
  // first_fid; Shapefile: 0, the FID is the record number). Ranges then end by FID, so a
  // deleted Shapefile record (skipped by GDAL, still counted in the header) cannot shift a
  // range's end into the next range.
  std::int64_t fid_base = -1;
  // GeoPackage tables: the number cells GDAL would coerce, checked by FID (null: nothing to
  // check). Declared after `dataset`, so it closes its own connection first.
  std::unique_ptr<gpkg::NumberCellCheck> number_check;
  ~Handles() {
    if (dataset != nullptr) gdal::GDALClose(dataset);
  }
};

GdalSource::GdalSource(std::unique_ptr<Handles> handles, SourceInfo info)
    : handles_(std::move(handles)), info_(std::move(info)) {}

GdalSource::~GdalSource() = default;

namespace {

// CSV has no geometry column of its own: these open options name the columns GDAL takes it
// from (WKT text, else x/y numbers), drop them from the attributes and detect column types
// from the first 100 kB instead of calling every column a string.
constexpr const char* kCsvOpenOptions[] = {"GEOM_POSSIBLE_NAMES=WKT,wkt,geometry,geom,wkt_geom",
                                           "X_POSSIBLE_NAMES=x,lon,longitude,lng",
                                           "Y_POSSIBLE_NAMES=y,lat,latitude",
                                           "KEEP_GEOM_COLUMNS=NO",
                                           "AUTODETECT_TYPE=YES",
                                           nullptr};

// Open a vector dataset read-only (nullptr on failure, GDAL's message in CPLGetLastErrorMsg);
// a CSV file is reopened with kCsvOpenOptions.
GDALDatasetH OpenDataset(const std::string& path) {
  GDALDatasetH dataset =
      gdal::GDALOpenEx(path.c_str(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr);
  if (dataset == nullptr) return nullptr;
  if (std::string_view(gdal::GDALGetDriverShortName(gdal::GDALGetDatasetDriver(dataset))) ==
      "CSV") {
    gdal::GDALClose(dataset);
    const char* const csv_only[] = {"CSV", nullptr};
    dataset = gdal::GDALOpenEx(path.c_str(), GDAL_OF_VECTOR | GDAL_OF_READONLY, csv_only,
                               kCsvOpenOptions, nullptr);
  }
  return dataset;
}

// Why GDAL could not open an existing file. A file that starts with the SQLite header
// ("SQLite format 3\0", https://www.sqlite.org/fileformat.html section 1.3) is a SQLite
// database (a GeoPackage): one GDAL cannot open is truncated or damaged, corrupt data
// (kCorruptData) rather than "not a source" (kNotFound).
Status CannotOpen(const std::string& path) {
  const std::string gdal_message = QuietErrors::LastMessage();
  if (path.rfind("/vsi", 0) != 0) {
    std::ifstream in(path, std::ios::binary);
    char magic[16] = {};
    if (in.read(magic, sizeof(magic)) &&
        std::string_view(magic, sizeof(magic)) == std::string_view("SQLite format 3\0", 16)) {
      return Status::CorruptData("source '" + path +
                                 "': a SQLite database (GeoPackage) that cannot be opened, "
                                 "truncated or damaged: " +
                                 gdal_message);
    }
  }
  return Status::NotFound("source '" + path + "': GDAL cannot open it: " + gdal_message);
}

}  // namespace

void GdalSource::ProbeContiguousFids(Handles* handles, SourceInfo* info) {
  const char* fid_column = gdal::OGR_L_GetFIDColumn(handles->layer);
  if (fid_column == nullptr || *fid_column == '\0') return;
  if (info->feature_count < 0) {
    info->feature_count = gdal::OGR_L_GetFeatureCount(handles->layer, /*bForce=*/TRUE);
  }
  // MIN and MAX of an INTEGER PRIMARY KEY are B-tree lookups in SQLite, but only as separate
  // queries: "SELECT MIN(x), MAX(x)" scans the whole table (30 ms for 200k rows).
  const std::string fid = internal::QuoteIdentifier(fid_column);
  const std::string table = internal::QuoteIdentifier(gdal::OGR_L_GetName(handles->layer));
  const std::string sql = "SELECT (SELECT MIN(" + fid + ") FROM " + table + "), (SELECT MAX(" +
                          fid + ") FROM " + table + ")";
  OGRLayerH result = gdal::GDALDatasetExecuteSQL(handles->dataset, sql.c_str(), nullptr, nullptr);
  if (result == nullptr) return;
  if (OGRFeatureH row = gdal::OGR_L_GetNextFeature(result); row != nullptr) {
    if (gdal::OGR_F_IsFieldSetAndNotNull(row, 0) && gdal::OGR_F_IsFieldSetAndNotNull(row, 1)) {
      const std::int64_t min_fid = gdal::OGR_F_GetFieldAsInteger64(row, 0);
      const std::int64_t max_fid = gdal::OGR_F_GetFieldAsInteger64(row, 1);
      if (max_fid - min_fid + 1 == info->feature_count) {
        handles->first_fid = min_fid;
        handles->fid_column = fid;
      }
    }
    gdal::OGR_F_Destroy(row);
  }
  gdal::GDALDatasetReleaseResultSet(handles->dataset, result);
}

Result<std::vector<std::string>> GdalSource::LayerNames(const std::string& path) {
  GEOLAKE_RETURN_NOT_OK(gdal::Load().status());
  QuietErrors quiet;
  VSIStatBufL stat_buf;
  if (gdal::VSIStatL(path.c_str(), &stat_buf) != 0) {
    return Status::NotFound("source '" + path + "': no such file");
  }
  Handles handles;
  handles.dataset = OpenDataset(path);
  if (handles.dataset == nullptr) {
    return CannotOpen(path);
  }
  std::vector<std::string> names;
  const int count = gdal::GDALDatasetGetLayerCount(handles.dataset);
  for (int i = 0; i < count; ++i) {
    names.emplace_back(gdal::OGR_L_GetName(gdal::GDALDatasetGetLayer(handles.dataset, i)));
  }
  return names;
}

Result<std::unique_ptr<GdalSource>> GdalSource::Open(const std::string& path,
                                                     const std::string& layer) {
  GEOLAKE_RETURN_NOT_OK(gdal::Load().status());
  QuietErrors quiet;
  // GDAL says nothing useful about a missing file; VSIStatL also covers /vsizip/ etc.
  VSIStatBufL stat_buf;
  if (gdal::VSIStatL(path.c_str(), &stat_buf) != 0) {
    return Status::NotFound("source '" + path + "': no such file");
  }
  auto handles = std::make_unique<Handles>();
  handles->dataset = OpenDataset(path);
  if (handles->dataset == nullptr) {
    return CannotOpen(path);
  }
  if (gdal::GDALDatasetGetLayerCount(handles->dataset) == 0) {
    return Status::InvalidArgument("source '" + path + "': no vector layer");
  }
  handles->layer = layer.empty() ? gdal::GDALDatasetGetLayer(handles->dataset, 0)
                                 : gdal::GDALDatasetGetLayerByName(handles->dataset, layer.c_str());
  if (handles->layer == nullptr) {
    return Status::NotFound("source '" + path + "': no layer named '" + layer + "'");
  }

  SourceInfo info;
  info.path = path;
  info.layer = gdal::OGR_L_GetName(handles->layer);
  info.driver = gdal::GDALGetDriverShortName(gdal::GDALGetDatasetDriver(handles->dataset));
  info.layer_count = gdal::GDALDatasetGetLayerCount(handles->dataset);
  info.fast_seek = gdal::OGR_L_TestCapability(handles->layer, OLCFastSetNextByIndex) != 0;
  info.feature_count = gdal::OGR_L_GetFeatureCount(handles->layer, /*bForce=*/FALSE);
  if (info.driver == "GPKG") {
    ProbeContiguousFids(handles.get(), &info);
    info.fast_seek = handles->first_fid >= 0;
    handles->fid_base = handles->first_fid;
  } else if (info.driver == "ESRI Shapefile") {
    handles->fid_base = 0;
  }
  // A layer that seeks fast counts fast too (an index or a header), and units need the count.
  if (info.feature_count < 0 && info.fast_seek) {
    info.feature_count = gdal::OGR_L_GetFeatureCount(handles->layer, /*bForce=*/TRUE);
  }
  info.geometry_type = gdal::OGRGeometryTypeToName(gdal::OGR_L_GetGeomType(handles->layer));
  OGRFeatureDefnH defn = gdal::OGR_L_GetLayerDefn(handles->layer);
  const int field_count = gdal::OGR_FD_GetFieldCount(defn);
  for (int i = 0; i < field_count; ++i) {
    OGRFieldDefnH field = gdal::OGR_FD_GetFieldDefn(defn, i);
    info.fields.push_back({gdal::OGR_Fld_GetNameRef(field), MapFieldType(field)});
    info.field_source_types.push_back(SourceTypeName(field));
  }
  for (int i = 0; i < gdal::OGR_FD_GetGeomFieldCount(defn); ++i) {
    info.geometry_columns.emplace_back(
        gdal::OGR_GFld_GetNameRef(gdal::OGR_FD_GetGeomFieldDefn(defn, i)));
  }
  if (const char* fid = gdal::OGR_L_GetFIDColumn(handles->layer); fid != nullptr)
    info.fid_column = fid;
  info.first_fid = handles->first_fid;
  handles->number_check = gpkg::NumberCellCheck::Open(info);
  if (OGRSpatialReferenceH srs = gdal::OGR_L_GetSpatialRef(handles->layer); srs != nullptr) {
    char* json = nullptr;
    if (gdal::OSRExportToPROJJSON(srs, &json, nullptr) == OGRERR_NONE && json != nullptr) {
      info.crs_projjson = json;
    }
    gdal::VSIFree(json);
    const char* auth = gdal::OSRGetAuthorityName(srs, nullptr);
    const char* code = gdal::OSRGetAuthorityCode(srs, nullptr);
    if (auth != nullptr && code != nullptr) info.crs_authority = std::string(auth) + ":" + code;
  }
  return std::unique_ptr<GdalSource>(new GdalSource(std::move(handles), std::move(info)));
}

Status GdalSource::SeekRange(std::int64_t start, std::int64_t count) {
  GEOLAKE_RETURN_NOT_OK(Seek(start));
  end_index_ = count < 0 ? -1 : start + count;
  return Status::OK();
}

Status GdalSource::Seek(std::int64_t start) {
  if (start < 0) return Status::InvalidArgument("seek to negative feature index");
  end_index_ = -1;
  exhausted_ = false;
  QuietErrors quiet;
  if (handles_->first_fid >= 0) {
    // The filter is handed to SQLite as a WHERE clause on the rowid: a range scan in rowid
    // order, which is the order an unfiltered read uses too.
    const std::string where =
        handles_->fid_column + " >= " + std::to_string(handles_->first_fid + start);
    if (gdal::OGR_L_SetAttributeFilter(handles_->layer, start > 0 ? where.c_str() : nullptr) !=
        OGRERR_NONE) {
      return Status::Internal("source '" + info_.path + "': cannot seek to feature " +
                              std::to_string(start) + ": " + QuietErrors::LastMessage());
    }
    gdal::OGR_L_ResetReading(handles_->layer);
    next_index_ = start;
    return Status::OK();
  }
  gdal::OGR_L_ResetReading(handles_->layer);
  if (start > 0 && gdal::OGR_L_SetNextByIndex(handles_->layer, start) != OGRERR_NONE) {
    return Status::InvalidArgument("source '" + info_.path + "': cannot seek to feature " +
                                   std::to_string(start) + ": " + QuietErrors::LastMessage());
  }
  next_index_ = start;
  return Status::OK();
}

Result<std::int64_t> GdalSource::ReadBatch(std::int64_t max_rows, FeatureBatch* batch,
                                           std::int64_t max_wkb_bytes) {
  batch->Reset(info_.fields);
  QuietErrors quiet;
  std::string wkb_scratch;
  std::int64_t rows = 0;
  const auto full = [&] {
    return max_wkb_bytes > 0 && static_cast<std::int64_t>(batch->wkb.size()) >= max_wkb_bytes;
  };
  while (rows < max_rows && !exhausted_ && !full()) {
    // GDAL's last error sticks until reset: without this, one bad feature (a CSV WKT that does
    // not parse) failed the whole file at its end, naming the feature after the last.
    gdal::CPLErrorReset();
    OGRFeatureH feature = gdal::OGR_L_GetNextFeature(handles_->layer);
    if (feature == nullptr) {
      if (gdal::CPLGetLastErrorType() >= CE_Failure) {
        return Status::CorruptData("source '" + info_.path + "': feature " +
                                   std::to_string(next_index_) + ": " + QuietErrors::LastMessage());
      }
      exhausted_ = true;
      break;
    }
    if (handles_->fid_base >= 0) next_index_ = gdal::OGR_F_GetFID(feature) - handles_->fid_base;
    if (end_index_ >= 0 && next_index_ >= end_index_) {
      gdal::OGR_F_Destroy(feature);
      exhausted_ = true;
      break;
    }
    // A feature GDAL returned while reporting an error (its geometry did not parse) is that
    // row's failure: an unreadable row, which ingest rejects with this reason.
    bool failed = gdal::CPLGetLastErrorType() >= CE_Failure;
    std::string failure = failed ? QuietErrors::LastMessage() : std::string();
    Status appended;
    bool inexact_number = false;
    if (!failed && handles_->number_check != nullptr) {
      Result<std::string> inexact = handles_->number_check->Check(gdal::OGR_F_GetFID(feature));
      if (!inexact.ok()) {
        gdal::OGR_F_Destroy(feature);
        return inexact.status().WithContext("source '" + info_.path + "': feature " +
                                            std::to_string(next_index_));
      }
      inexact_number = failed = !inexact->empty();
      failure = std::move(*inexact);
    }
    if (inexact_number) {
      // As GpkgSource reads such a row: nulls and no geometry (FeatureBatch::unreadable).
      gpkg::AppendNullRow(next_index_, batch);
    } else {
      appended = AppendFeatureRow(feature, next_index_, info_.path, &wkb_scratch, batch);
    }
    gdal::OGR_F_Destroy(feature);
    GEOLAKE_RETURN_NOT_OK(appended);
    if (failed) {
      batch->unreadable.push_back(
          {rows, "feature " + std::to_string(next_index_) + ": " + failure});
    }
    ++next_index_;
    ++rows;
  }
  return rows;
}

Status GdalSource::AppendFeatureByFid(std::int64_t fid, std::int64_t feature_index,
                                      FeatureBatch* batch) {
  QuietErrors quiet;
  OGRFeatureH feature = gdal::OGR_L_GetFeature(handles_->layer, fid);
  if (feature == nullptr) {
    return Status::NotFound("source '" + info_.path + "': no feature with FID " +
                            std::to_string(fid));
  }
  if (handles_->number_check != nullptr) {
    Result<std::string> inexact = handles_->number_check->Check(fid);
    if (!inexact.ok() || !inexact->empty()) {
      gdal::OGR_F_Destroy(feature);
      GEOLAKE_RETURN_NOT_OK(inexact.status().WithContext("source '" + info_.path + "'"));
      batch->unreadable.push_back(
          {batch->num_rows(), "feature " + std::to_string(feature_index) + ": " + *inexact});
      gpkg::AppendNullRow(feature_index, batch);
      return Status::OK();
    }
  }
  std::string wkb_scratch;
  const Status appended = AppendFeatureRow(feature, feature_index, info_.path, &wkb_scratch, batch);
  gdal::OGR_F_Destroy(feature);
  return appended;
}

}  // namespace geolake::sources
