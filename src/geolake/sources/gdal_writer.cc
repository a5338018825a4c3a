#include "geolake/sources/gdal_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>

#include "geolake/core/civil_time.h"
#include "geolake/sources/gdal_api.h"

namespace geolake::sources {

using geoparquet::FieldType;

struct GdalWriter::State {
  std::string driver;
  std::string path;
  std::string temp;
  std::optional<gdal::QuietErrors> quiet;  // GDAL's messages come back in errors
  GDALDatasetH dataset = nullptr;
  OGRLayerH layer = nullptr;
  bool in_transaction = false;
  bool done = false;

  std::string path_or_stdout() const { return path.empty() ? "stdout" : path; }
};

GdalWriter::GdalWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}

GdalWriter::~GdalWriter() {
  if (state_->dataset != nullptr) gdal::GDALClose(state_->dataset);
  if (!state_->temp.empty() && !state_->done) {
    std::error_code ec;
    std::filesystem::remove(state_->temp, ec);
  }
}

Status GdalWriter::Fail(const std::string& what) const {
  return Status::IOError(fmt::format("{} ({}): {}: {}", state_->path_or_stdout(), state_->driver,
                                     what, gdal::QuietErrors::LastMessage()));
}

Result<std::unique_ptr<GdalWriter>> GdalWriter::Create(
    const std::string& driver_name, const std::string& path, const std::string& layer_name,
    const std::vector<geoparquet::FieldDef>& fields, const std::string& crs) {
  GEOLAKE_RETURN_NOT_OK(gdal::Load().status());
  auto state = std::make_unique<State>();
  state->driver = driver_name;
  state->path = path;
  state->quiet.emplace();
  std::unique_ptr<GdalWriter> writer(new GdalWriter(std::move(state)));
  State& s = *writer->state_;
  GDALDriverH driver = gdal::GDALGetDriverByName(driver_name.c_str());
  if (driver == nullptr) return Status::NotImplemented("GDAL has no " + driver_name + " driver");
  std::string target = "/vsistdout/";
  if (!path.empty()) {
    // Written under a temporary name in the same directory, renamed when complete.
    const std::filesystem::path p(path);
    // The driver may go by the extension (FlatGeobuf makes a directory without one), so the
    // temporary name keeps it.
    s.temp = (p.parent_path() / ("." + p.filename().string() + "." + std::to_string(::getpid()) +
                                 ".geolake-tmp" + p.extension().string()))
                 .string();
    target = s.temp;
  }
  s.dataset = gdal::GDALCreate(driver, target.c_str(), 0, 0, 0, GDT_Unknown, nullptr);
  if (s.dataset == nullptr) return writer->Fail("cannot create");
  OGRSpatialReferenceH srs = nullptr;
  if (!crs.empty()) {
    srs = gdal::OSRNewSpatialReference(nullptr);
    gdal::OSRSetAxisMappingStrategy(srs, OAMS_TRADITIONAL_GIS_ORDER);
    if (gdal::OSRSetFromUserInput(srs, crs.c_str()) != OGRERR_NONE) {
      gdal::OSRDestroySpatialReference(srs);
      srs = nullptr;
    }
  }
  // GeoJSON: 17 significant digits, so doubles round-trip (GDAL keeps 7 decimals by default).
  const char* options[] = {nullptr, nullptr, nullptr};
  if (driver_name == "GeoJSON" || driver_name == "GeoJSONSeq") {
    options[0] = "SIGNIFICANT_FIGURES=17";
  }
  if (driver_name == "GeoJSON") options[1] = "RFC7946=NO";
  s.layer = gdal::GDALDatasetCreateLayer(s.dataset, layer_name.c_str(), srs, wkbUnknown,
                                         const_cast<char**>(options));
  if (srs != nullptr) gdal::OSRDestroySpatialReference(srs);
  if (s.layer == nullptr) return writer->Fail("cannot create layer");
  for (const geoparquet::FieldDef& f : fields) {
    OGRFieldType type = OFTString;
    OGRFieldSubType sub = OFSTNone;
    switch (f.type) {
      case FieldType::kBool:
        type = OFTInteger;
        sub = OFSTBoolean;
        break;
      case FieldType::kInt64:
        type = OFTInteger64;
        break;
      case FieldType::kDouble:
        type = OFTReal;
        break;
      case FieldType::kString:
        type = OFTString;
        break;
      case FieldType::kBinary:
        type = OFTBinary;
        break;
      case FieldType::kDate:
        type = OFTDate;
        break;
      case FieldType::kTimestamp:
        type = OFTDateTime;
        break;
    }
    OGRFieldDefnH defn = gdal::OGR_Fld_Create(f.name.c_str(), type);
    gdal::OGR_Fld_SetSubType(defn, sub);
    const OGRErr err = gdal::OGR_L_CreateField(s.layer, defn, TRUE);
    gdal::OGR_Fld_Destroy(defn);
    if (err != OGRERR_NONE) return writer->Fail("cannot create field '" + f.name + "'");
  }
  if (gdal::GDALDatasetStartTransaction(s.dataset, FALSE) == OGRERR_NONE) s.in_transaction = true;
  return writer;
}

Status GdalWriter::Write(const geoparquet::FeatureBatch& rows) {
  State& s = *state_;
  OGRFeatureDefnH defn = gdal::OGR_L_GetLayerDefn(s.layer);
  for (std::int64_t r = 0; r < rows.num_rows(); ++r) {
    const auto row = static_cast<std::size_t>(r);
    OGRFeatureH feature = gdal::OGR_F_Create(defn);
    for (std::size_t j = 0; j < rows.columns.size(); ++j) {
      const geoparquet::Column& c = rows.columns[j];
      const int i = static_cast<int>(j);
      if (!c.valid[row]) {
        gdal::OGR_F_SetFieldNull(feature, i);
        continue;
      }
      switch (c.type) {
        case FieldType::kBool:
          gdal::OGR_F_SetFieldInteger(feature, i, c.ints[row] ? 1 : 0);
          break;
        case FieldType::kInt64:
          gdal::OGR_F_SetFieldInteger64(feature, i, c.ints[row]);
          break;
        case FieldType::kDouble:
          gdal::OGR_F_SetFieldDouble(feature, i, c.doubles[row]);
          break;
        case FieldType::kString:
          gdal::OGR_F_SetFieldString(feature, i, std::string(c.StringAt(row)).c_str());
          break;
        case FieldType::kBinary: {
          const std::string_view b = c.StringAt(row);
          gdal::OGR_F_SetFieldBinary(feature, i, static_cast<int>(b.size()),
                                     reinterpret_cast<const GByte*>(b.data()));
          break;
        }
        case FieldType::kDate:
        case FieldType::kTimestamp: {
          const std::string t = c.type == FieldType::kDate ? CivilDateText(c.ints[row])
                                                           : TimestampMicrosText(c.ints[row]);
          gdal::OGR_F_SetFieldString(feature, i, t.c_str());
          break;
        }
      }
    }
    if (rows.geometry_valid[row]) {
      const auto wkb = rows.GeometryAt(row);
      OGRGeometryH geom = nullptr;
      if (gdal::OGR_G_CreateFromWkbEx(wkb.data(), nullptr, &geom, wkb.size()) != OGRERR_NONE) {
        gdal::OGR_F_Destroy(feature);
        return Status::CorruptData(fmt::format("{}: row {}: GDAL refused the WKB",
                                               s.path_or_stdout(), rows.feature_index[row]));
      }
      gdal::OGR_F_SetGeometryDirectly(feature, geom);
    }
    const OGRErr err = gdal::OGR_L_CreateFeature(s.layer, feature);
    gdal::OGR_F_Destroy(feature);
    if (err != OGRERR_NONE) return Fail("cannot write a feature");
  }
  return Status::OK();
}

Status GdalWriter::Finish() {
  State& s = *state_;
  if (s.in_transaction && gdal::GDALDatasetCommitTransaction(s.dataset) != OGRERR_NONE) {
    return Fail("commit failed");
  }
  gdal::GDALClose(s.dataset);
  s.dataset = nullptr;
  if (gdal::CPLGetLastErrorType() >= CE_Failure) return Fail("close failed");
  if (!s.temp.empty()) {
    std::error_code ec;
    std::filesystem::rename(s.temp, s.path, ec);
    if (ec) return Status::IOError(s.path + ": " + ec.message());
  } else {
    std::fflush(stdout);
  }
  s.done = true;
  return Status::OK();
}

}  // namespace geolake::sources
