#include "geolake/query/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "geolake/core/civil_time.h"
#include "geolake/core/csv.h"
#include "geolake/core/hex.h"
#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/formats/parquet/value_text.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/wkb.h"
#include "geolake/sources/gdal_writer.h"

namespace geolake::query {
namespace {

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
    CsvLine line(&header);
    for (const geoparquet::FieldDef& f : layout.fields) line.Text(f.name);
    line.Text("geometry");
    line.End();
    return out_.Write(header);
  }
  Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
    std::string text;
    CsvLine line(&text);
    for (std::int64_t r = 0; r < rows.num_rows(); ++r) {
      const auto row = static_cast<std::size_t>(r);
      for (const geoparquet::Column& c : rows.columns) {
        if (!c.valid[row]) {
          line.Null();
          continue;
        }
        switch (c.type) {
          case geoparquet::FieldType::kBool:
            line.Literal(c.ints[row] ? "true" : "false");
            break;
          case geoparquet::FieldType::kInt64:
            line.Literal(std::to_string(c.ints[row]));
            break;
          case geoparquet::FieldType::kDouble:
            line.Literal(fmt::format("{}", c.doubles[row]));
            break;
          case geoparquet::FieldType::kDate:
            line.Literal(CivilDateText(c.ints[row]));
            break;
          case geoparquet::FieldType::kTimestamp:
            line.Literal(TimestampMicrosText(c.ints[row]));
            break;
          case geoparquet::FieldType::kString:
            line.Text(c.StringAt(row));
            break;
          case geoparquet::FieldType::kBinary:
            line.Literal(HexEncode(c.StringAt(row)));
            break;
        }
      }
      if (rows.geometry_valid[row]) {
        GEOLAKE_ASSIGN_OR_RETURN(std::string wkt, geo::WkbToWkt(rows.GeometryAt(row)));
        line.Text(wkt);
      } else {
        line.Null();
      }
      line.End();
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
    // The writer omits "crs" (GeoParquet's default, OGC:CRS84) for EPSG:4326 and OGC:CRS84
    // only when it has their PROJJSON; without one it writes "crs": null, an unknown CRS.
    if (!layout.crs.empty()) {
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

// GeoJSON, GeoJSON text sequences, FlatGeobuf and GeoPackage through sources::GdalWriter.
class GdalSink : public RowSink {
 public:
  GdalSink(std::string driver, std::string path, const io::FileIO& io, std::stop_token stop)
      : driver_(std::move(driver)), path_(std::move(path)), io_(io), stop_(std::move(stop)) {}

  Status Begin(const OutputLayout& layout) override {
    GEOLAKE_ASSIGN_OR_RETURN(writer_, sources::GdalWriter::Create(driver_, path_, layout.layer_name,
                                                                  layout.fields, layout.crs, io_));
    return Status::OK();
  }

  Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
    return writer_->Write(rows, stop_);
  }

  Status Finish() override { return writer_->Finish(); }

 private:
  std::string driver_;
  std::string path_;
  const io::FileIO& io_;
  std::stop_token stop_;
  std::unique_ptr<sources::GdalWriter> writer_;
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
                                                const io::FileIO& io, const std::stop_token& stop) {
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
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("GeoJSON", path, io, stop));
    case OutputFormat::kGeoJsonSeq:
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("GeoJSONSeq", path, io, stop));
    case OutputFormat::kFlatGeobuf:
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("FlatGeobuf", path, io, stop));
    case OutputFormat::kGpkg:
      return std::unique_ptr<RowSink>(std::make_unique<GdalSink>("GPKG", path, io, stop));
  }
  return Status::Internal("unknown output format");
}

}  // namespace geolake::query
