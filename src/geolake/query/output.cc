#include "geolake/query/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/formats/parquet/value_text.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/wkb.h"
#include "geolake/sources/gdal_api.h"

namespace geolake::query {
namespace {

// Civil date of a day count since 1970-01-01 (proleptic Gregorian).
std::string DateText(std::int64_t days) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return fmt::format("{:04d}-{:02d}-{:02d}", yoe + era * 400 + (m <= 2 ? 1 : 0), m, d);
}

std::string TimestampText(std::int64_t micros) {
  std::int64_t days = micros / 86400000000LL;
  std::int64_t rem = micros % 86400000000LL;
  if (rem < 0) {
    rem += 86400000000LL;
    --days;
  }
  const std::int64_t s = rem / 1000000;
  return fmt::format("{}T{:02d}:{:02d}:{:02d}.{:06d}Z", DateText(days), s / 3600, s / 60 % 60,
                     s % 60, rem % 1000000);
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// Text to stdout or to a file published at Close (FileIO: temp + fsync + rename).
class TextOut {
 public:
  static Result<TextOut> Open(const std::string& path, const io::FileIO& io) {
    TextOut out;
    if (!path.empty()) {
      GEOLAKE_ASSIGN_OR_RETURN(out.stream_, io.OpenWrite(path, /*overwrite=*/true));
    }
    return out;
  }
  Status Write(std::string_view text) {
    if (stream_) return stream_->Write(text);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
      return Status::IOError("stdout: write failed");
    }
    return Status::OK();
  }
  Status Close() {
    if (stream_) return stream_->Close();
    return std::fflush(stdout) == 0 ? Status::OK() : Status::IOError("stdout: flush failed");
  }

 private:
  std::unique_ptr<io::OutputStream> stream_;
};

class CsvSink : public RowSink {
 public:
  explicit CsvSink(TextOut out) : out_(std::move(out)) {}
  Status Begin(const OutputLayout& layout) override {
    std::string header;
    for (const geoparquet::FieldDef& f : layout.fields) header += CsvField(f.name) + ",";
    return out_.Write(header + "geometry\n");
  }
  Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
    std::string text;
    for (std::int64_t r = 0; r < rows.num_rows(); ++r) {
      const auto row = static_cast<std::size_t>(r);
      for (const geoparquet::Column& c : rows.columns) {
        if (c.valid[row]) {
          switch (c.type) {
            case geoparquet::FieldType::kBool:
              text += c.ints[row] ? "true" : "false";
              break;
            case geoparquet::FieldType::kInt64:
              text += std::to_string(c.ints[row]);
              break;
            case geoparquet::FieldType::kDouble:
              text += fmt::format("{}", c.doubles[row]);
              break;
            case geoparquet::FieldType::kDate:
              text += DateText(c.ints[row]);
              break;
            case geoparquet::FieldType::kTimestamp:
              text += TimestampText(c.ints[row]);
              break;
            case geoparquet::FieldType::kString:
              text += CsvField(c.StringAt(row));
              break;
            case geoparquet::FieldType::kBinary:
              text += parquet::HexText(c.StringAt(row));
              break;
          }
        }
        text += ',';
      }
      if (rows.geometry_valid[row]) {
        GEOLAKE_ASSIGN_OR_RETURN(std::string wkt, geo::WkbToWkt(rows.GeometryAt(row)));
        text += CsvField(wkt);
      }
      text += '\n';
    }
    return out_.Write(text);
  }
  Status Finish() override { return out_.Close(); }

 private:
  TextOut out_;
};

class ParquetSink : public RowSink {
 public:
  ParquetSink(std::string path, const io::FileIO& io) : path_(std::move(path)), io_(io) {}
  ~ParquetSink() override {
    if (stream_ && !done_) stream_->Abort();
  }
  Status Begin(const OutputLayout& layout) override {
    geoparquet::SourceLayout source;
    source.fields = layout.fields;
    source.crs_authority = layout.crs;
    if (!layout.crs.empty() && layout.crs != "EPSG:4326" && layout.crs != "OGC:CRS84") {
      auto crs = geo::Crs::Make(layout.crs);
      if (crs.ok()) source.crs_projjson = crs->projjson();
    }
    geoparquet::GeoParquetOptions options;
    options.order = geoparquet::RowOrder::kNone;
    options.hilbert_column = false;
    GEOLAKE_ASSIGN_OR_RETURN(stream_, io_.OpenWrite(path_, /*overwrite=*/true));
    GEOLAKE_ASSIGN_OR_RETURN(
        writer_, geoparquet::GeoParquetFileWriter::Open(stream_.get(), std::move(source), options));
    return Status::OK();
  }
  Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
    return writer_->Add(rows);
  }
  Status Finish() override {
    GEOLAKE_RETURN_NOT_OK(writer_->Finish().status());
    GEOLAKE_RETURN_NOT_OK(stream_->Close());
    done_ = true;
    return Status::OK();
  }

 private:
  std::string path_;
  const io::FileIO& io_;
  std::unique_ptr<io::OutputStream> stream_;
  std::unique_ptr<geoparquet::GeoParquetFileWriter> writer_;
  bool done_ = false;
};

// ---- GDAL ------------------------------------------------------------------------------------

class GdalSink : public RowSink {
 public:
  GdalSink(std::string driver, std::string path) : driver_(std::move(driver)), path_(std::move(path)) {}
  ~GdalSink() override {
    if (dataset_ != nullptr) gdal::GDALClose(dataset_);
    if (!temp_.empty() && !done_) {
      std::error_code ec;
      std::filesystem::remove(temp_, ec);
    }
  }

  Status Begin(const OutputLayout& layout) override {
    GEOLAKE_RETURN_NOT_OK(gdal::Load().status());
    quiet_.emplace();
    GDALDriverH driver = gdal::GDALGetDriverByName(driver_.c_str());
    if (driver == nullptr) return Status::NotImplemented("GDAL has no " + driver_ + " driver");
    std::string target = "/vsistdout/";
    if (!path_.empty()) {
      // Written under a temporary name in the same directory, renamed when complete.
      const std::filesystem::path p(path_);
      // The driver may go by the extension (FlatGeobuf makes a directory without one), so the
      // temporary name keeps it.
      temp_ = (p.parent_path() / ("." + p.filename().string() + "." + std::to_string(::getpid()) +
                                  ".geolake-tmp" + p.extension().string()))
                  .string();
      target = temp_;
    }
    dataset_ = gdal::GDALCreate(driver, target.c_str(), 0, 0, 0, GDT_Unknown, nullptr);
    if (dataset_ == nullptr) return Fail("cannot create");
    OGRSpatialReferenceH srs = nullptr;
    if (!layout.crs.empty()) {
      srs = gdal::OSRNewSpatialReference(nullptr);
      gdal::OSRSetAxisMappingStrategy(srs, OAMS_TRADITIONAL_GIS_ORDER);
      if (gdal::OSRSetFromUserInput(srs, layout.crs.c_str()) != OGRERR_NONE) {
        gdal::OSRDestroySpatialReference(srs);
        srs = nullptr;
      }
    }
    // GeoJSON: 17 significant digits, so doubles round-trip (GDAL keeps 7 decimals by default).
    const char* options[] = {nullptr, nullptr, nullptr};
    if (driver_ == "GeoJSON" || driver_ == "GeoJSONSeq") options[0] = "SIGNIFICANT_FIGURES=17";
    if (driver_ == "GeoJSON") options[1] = "RFC7946=NO";
    layer_ = gdal::GDALDatasetCreateLayer(dataset_, layout.layer_name.c_str(), srs, wkbUnknown,
                                    const_cast<char**>(options));
    if (srs != nullptr) gdal::OSRDestroySpatialReference(srs);
    if (layer_ == nullptr) return Fail("cannot create layer");
    for (const geoparquet::FieldDef& f : layout.fields) {
      OGRFieldType type = OFTString;
      OGRFieldSubType sub = OFSTNone;
      switch (f.type) {
        case geoparquet::FieldType::kBool:
          type = OFTInteger;
          sub = OFSTBoolean;
          break;
        case geoparquet::FieldType::kInt64:
          type = OFTInteger64;
          break;
        case geoparquet::FieldType::kDouble:
          type = OFTReal;
          break;
        case geoparquet::FieldType::kString:
          type = OFTString;
          break;
        case geoparquet::FieldType::kBinary:
          type = OFTBinary;
          break;
        case geoparquet::FieldType::kDate:
          type = OFTDate;
          break;
        case geoparquet::FieldType::kTimestamp:
          type = OFTDateTime;
          break;
      }
      OGRFieldDefnH defn = gdal::OGR_Fld_Create(f.name.c_str(), type);
      gdal::OGR_Fld_SetSubType(defn, sub);
      const OGRErr err = gdal::OGR_L_CreateField(layer_, defn, TRUE);
      gdal::OGR_Fld_Destroy(defn);
      if (err != OGRERR_NONE) return Fail("cannot create field '" + f.name + "'");
    }
    if (gdal::GDALDatasetStartTransaction(dataset_, FALSE) == OGRERR_NONE) in_transaction_ = true;
    return Status::OK();
  }

  Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
    OGRFeatureDefnH defn = gdal::OGR_L_GetLayerDefn(layer_);
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
          case geoparquet::FieldType::kBool:
            gdal::OGR_F_SetFieldInteger(feature, i, c.ints[row] ? 1 : 0);
            break;
          case geoparquet::FieldType::kInt64:
            gdal::OGR_F_SetFieldInteger64(feature, i, c.ints[row]);
            break;
          case geoparquet::FieldType::kDouble:
            gdal::OGR_F_SetFieldDouble(feature, i, c.doubles[row]);
            break;
          case geoparquet::FieldType::kString:
            gdal::OGR_F_SetFieldString(feature, i, std::string(c.StringAt(row)).c_str());
            break;
          case geoparquet::FieldType::kBinary: {
            const std::string_view b = c.StringAt(row);
            gdal::OGR_F_SetFieldBinary(feature, i, static_cast<int>(b.size()),
                                 reinterpret_cast<const GByte*>(b.data()));
            break;
          }
          case geoparquet::FieldType::kDate:
          case geoparquet::FieldType::kTimestamp: {
            const std::string t = c.type == geoparquet::FieldType::kDate
                                      ? DateText(c.ints[row])
                                      : TimestampText(c.ints[row]);
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
          return Status::CorruptData(fmt::format("{}: row {}: GDAL refused the WKB", path_or_stdout(),
                                                 rows.feature_index[row]));
        }
        gdal::OGR_F_SetGeometryDirectly(feature, geom);
      }
      const OGRErr err = gdal::OGR_L_CreateFeature(layer_, feature);
      gdal::OGR_F_Destroy(feature);
      if (err != OGRERR_NONE) return Fail("cannot write a feature");
    }
    return Status::OK();
  }

  Status Finish() override {
    if (in_transaction_ && gdal::GDALDatasetCommitTransaction(dataset_) != OGRERR_NONE) {
      return Fail("commit failed");
    }
    gdal::GDALClose(dataset_);
    dataset_ = nullptr;
    if (gdal::CPLGetLastErrorType() >= CE_Failure) return Fail("close failed");
    if (!temp_.empty()) {
      std::error_code ec;
      std::filesystem::rename(temp_, path_, ec);
      if (ec) return Status::IOError(path_ + ": " + ec.message());
    } else {
      std::fflush(stdout);
    }
    done_ = true;
    return Status::OK();
  }

 private:
  std::string path_or_stdout() const { return path_.empty() ? "stdout" : path_; }
  Status Fail(const std::string& what) {
    return Status::IOError(fmt::format("{} ({}): {}: {}", path_or_stdout(), driver_, what,
                                       gdal::QuietErrors::LastMessage()));
  }

  std::string driver_;
  std::string path_;
  std::string temp_;
  std::optional<gdal::QuietErrors> quiet_;  // from Begin on: GDAL's messages come back in errors
  GDALDatasetH dataset_ = nullptr;
  OGRLayerH layer_ = nullptr;
  bool in_transaction_ = false;
  bool done_ = false;
};

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text == "geojson") return OutputFormat::kGeoJson;
  if (text == "geojsonseq") return OutputFormat::kGeoJsonSeq;
  if (text == "csv") return OutputFormat::kCsv;
  if (text == "parquet") return OutputFormat::kParquet;
  if (text == "fgb") return OutputFormat::kFlatGeobuf;
  if (text == "gpkg") return OutputFormat::kGpkg;
  return Status::InvalidArgument("--format '" + std::string(text) +
                                 "': expected geojson, geojsonseq, csv, parquet, fgb or gpkg");
}

Result<std::unique_ptr<RowSink>> MakeOutputSink(OutputFormat format, const std::string& path,
                                                const io::FileIO& io) {
  const bool binary = format == OutputFormat::kParquet || format == OutputFormat::kFlatGeobuf ||
                      format == OutputFormat::kGpkg;
  if (binary && path.empty()) {
    return Status::InvalidArgument("this --format writes a file: give -o FILE");
  }
  switch (format) {
    case OutputFormat::kCsv: {
      GEOLAKE_ASSIGN_OR_RETURN(TextOut out, TextOut::Open(path, io));
      return std::unique_ptr<RowSink>(std::make_unique<CsvSink>(std::move(out)));
    }
    case OutputFormat::kParquet:
      return std::unique_ptr<RowSink>(std::make_unique<ParquetSink>(path, io));
    case OutputFormat::kGeoJson:
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("GeoJSON", path));
    case OutputFormat::kGeoJsonSeq:
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("GeoJSONSeq", path));
    case OutputFormat::kFlatGeobuf:
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("FlatGeobuf", path));
    case OutputFormat::kGpkg:
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("GPKG", path));
  }
  return Status::Internal("unknown output format");
}

}  // namespace geolake::query
