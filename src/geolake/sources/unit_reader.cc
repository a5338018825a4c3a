// UnitReader implementations: over GpkgSource (a feature range of a GeoPackage table read
// natively), FgbSource and GeoJsonSeqSource (a feature range starting at a known byte offset),
// GdalSource (a feature range of any other layer) and GeoParquetSource (a row range made of
// whole row groups).
#include "geolake/sources/unit_reader.h"

#include <algorithm>
#include <utility>

#include "geolake/sources/fgb_source.h"
#include "geolake/sources/gdal_source.h"
#include "geolake/sources/geojsonseq_source.h"
#include "geolake/sources/geoparquet_source.h"
#include "geolake/sources/gpkg_source.h"

namespace geolake::sources {
namespace {

using geoparquet::FeatureBatch;
using geoparquet::FieldDef;

// Reads [first_row, first_row + row_count) of a source with Seek and ReadBatch (GpkgSource,
// GdalSource and GeoParquetSource share that shape); row_count -1 reads to the end.
template <typename Source>
class RangeReader final : public UnitReader {
 public:
  RangeReader(std::unique_ptr<Source> source, std::vector<FieldDef> fields, std::int64_t row_count)
      : source_(std::move(source)), fields_(std::move(fields)), remaining_(row_count) {}

  Result<std::int64_t> ReadBatch(std::int64_t max_rows, std::int64_t max_wkb_bytes,
                                 FeatureBatch* batch) override {
    if (remaining_ == 0 || max_rows <= 0) {
      // Keep the contract "cleared first" even when nothing is left.
      GEOLAKE_ASSIGN_OR_RETURN(std::int64_t none, source_->ReadBatch(0, batch));
      return none;
    }
    const std::int64_t want = remaining_ < 0 ? max_rows : std::min(max_rows, remaining_);
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t rows, source_->ReadBatch(want, batch, max_wkb_bytes));
    if (remaining_ > 0) remaining_ -= rows;
    if (rows == 0) remaining_ = 0;
    return rows;
  }

  const std::vector<FieldDef>& fields() const override { return fields_; }

  void SetStop(const std::stop_token& stop) override {
    if constexpr (requires(Source & s) { s.SetStop(stop); }) source_->SetStop(stop);
  }

 private:
  std::unique_ptr<Source> source_;
  std::vector<FieldDef> fields_;
  std::int64_t remaining_;  // -1 = to the end of the source
};

}  // namespace

Result<std::unique_ptr<UnitReader>> UnitReader::Open(const SourceUnit& unit) {
  if (unit.first_row < 0) {
    return Status::InvalidArgument("unit " + std::to_string(unit.index) + " of '" + unit.path +
                                   "': negative first row");
  }
  const bool parquet =
      unit.driver == kGeoParquetDriver || (unit.driver.empty() && IsParquetFile(unit.path));
  if (parquet) {
    GEOLAKE_ASSIGN_OR_RETURN(auto source, GeoParquetSource::Open(unit.path));
    GEOLAKE_RETURN_NOT_OK(source->Seek(unit.first_row));
    std::vector<FieldDef> fields = source->fields();
    return std::unique_ptr<UnitReader>(std::make_unique<RangeReader<GeoParquetSource>>(
        std::move(source), std::move(fields), unit.row_count));
  }
  if (unit.first_byte >= 0 && unit.driver == "FlatGeobuf") {
    GEOLAKE_ASSIGN_OR_RETURN(auto source, FgbSource::Open(unit.path));
    GEOLAKE_RETURN_NOT_OK(source->SeekRange(unit.first_row, unit.row_count, unit.first_byte));
    std::vector<FieldDef> fields = source->fields();
    return std::unique_ptr<UnitReader>(
        std::make_unique<RangeReader<FgbSource>>(std::move(source), std::move(fields), -1));
  }
  if (unit.first_byte >= 0 && (unit.driver == "GeoJSONSeq" || unit.driver == "GeoJSON")) {
    if (unit.gdal_info == nullptr) {
      return Status::InvalidArgument("unit " + std::to_string(unit.index) + " of '" + unit.path +
                                     "': a GeoJSONSeq unit needs its source's fields");
    }
    std::vector<FieldDef> fields = unit.gdal_info->fields;
    GEOLAKE_ASSIGN_OR_RETURN(auto source,
                             GeoJsonSeqSource::Open(unit.path, fields, unit.driver == "GeoJSON"));
    GEOLAKE_RETURN_NOT_OK(source->SeekRange(unit.first_row, unit.row_count, unit.first_byte));
    return std::unique_ptr<UnitReader>(
        std::make_unique<RangeReader<GeoJsonSeqSource>>(std::move(source), std::move(fields), -1));
  }
  if (unit.driver == "GPKG" && unit.native_gpkg) {
    // The native reader gives the same batches for the same range; it refuses (kNotImplemented)
    // a table it cannot read exactly, which GDAL then reads.
    auto native = GpkgSource::Open(unit.path, unit.layer, unit.gdal_info);
    if (native.ok()) {
      GpkgSource& source = **native;
      GEOLAKE_RETURN_NOT_OK(source.SeekRange(unit.first_row, unit.row_count));
      std::vector<FieldDef> fields = source.info().fields;
      return std::unique_ptr<UnitReader>(
          std::make_unique<RangeReader<GpkgSource>>(std::move(*native), std::move(fields), -1));
    }
    if (native.status().code() != ErrorCode::kNotImplemented) return native.status();
  }
  GEOLAKE_ASSIGN_OR_RETURN(auto source, GdalSource::Open(unit.path, unit.layer));
  // The GDAL source ends the range itself (by FID where it can), so no row count here.
  GEOLAKE_RETURN_NOT_OK(source->SeekRange(unit.first_row, unit.row_count));
  std::vector<FieldDef> fields = source->info().fields;
  return std::unique_ptr<UnitReader>(
      std::make_unique<RangeReader<GdalSource>>(std::move(source), std::move(fields), -1));
}

}  // namespace geolake::sources
