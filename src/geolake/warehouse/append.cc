// Warehouse::Append: commit existing Parquet data files to a table in ONE append snapshot.
// Every page is decoded and checked first (layout::VerifyDataFileContents) unless the caller
// trusts the footers; each file's columns are checked against the table schema by field id,
// name and type (layout::CheckDataFileSchema), its Iceberg metrics come from the footer
// statistics (table::DataFileFromParquet), and for a partitioned table its partition value
// comes from the statistics of the partition source column, which must hold one value in every
// row (min == max, no nulls; or only nulls). Files may live outside the table location; paths
// are stored absolute.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/formats/geoparquet/layout_columns.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/crs.h"
#include "geolake/geolake.h"
#include "geolake/layout/table_layout.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/scan.h"
#include "geolake/warehouse/table_info_internal.h"

namespace geolake {
namespace {

// Refuse a file whose GeoParquet "geo" metadata states a CRS other than the table's
// `geolake.crs` (the rows would be stored in the wrong coordinates). A file without "geo"
// metadata, with an unknown (null) CRS, or a table without geolake.crs is not checked.
Status CheckCrs(const parquet::FileMetaData& footer, const table::TableMetadata& md,
                const std::string& path) {
  auto table_crs = md.properties.find(std::string(layout::kCrsProperty));
  if (table_crs == md.properties.end()) return Status::OK();
  const parquet::KeyValue* geo = nullptr;
  for (const parquet::KeyValue& kv : footer.key_value_metadata) {
    if (kv.key == geoparquet::kGeoMetadataKey && kv.value) geo = &kv;
  }
  if (geo == nullptr) return Status::OK();
  GEOLAKE_ASSIGN_OR_RETURN(geoparquet::GeoMetadata meta,
                           geoparquet::GeoMetadata::Parse(*geo->value).WithContext(path));
  for (const auto& [column, info] : meta.columns) {
    if (column != geoparquet::kGeometryColumn) continue;
    if (info.crs_mode == geoparquet::CrsMode::kNull) return Status::OK();
    // An omitted crs means OGC:CRS84 (lon/lat WGS 84), the same coordinates as EPSG:4326
    // in geolake's x = lon order.
    const std::string file_text =
        info.crs_mode == geoparquet::CrsMode::kOmitted ? "OGC:CRS84" : info.crs_projjson;
    GEOLAKE_ASSIGN_OR_RETURN(geo::Crs file_crs, geo::Crs::Make(file_text).WithContext(path));
    GEOLAKE_ASSIGN_OR_RETURN(geo::Crs want, geo::Crs::Make(table_crs->second));
    const auto lonlat_wgs84 = [](const geo::Crs& c) {
      return c.id() == "EPSG:4326" || c.id() == "OGC:CRS84";
    };
    const bool same = file_crs == want || (file_crs.id() && file_crs.id() == want.id()) ||
                      (lonlat_wgs84(file_crs) && lonlat_wgs84(want));
    if (!same) {
      return Status::InvalidArgument(path + ": geometry CRS '" +
                                     file_crs.id().value_or(file_crs.name()) +
                                     "' is not the table's '" + table_crs->second + "'");
    }
  }
  return Status::OK();
}

// Read the footer of one file and describe it for the manifest.
Result<table::DataFile> DescribeFile(const io::FileIO& io, const table::TableMetadata& md,
                                     const std::string& path, bool trust_footers) {
  GEOLAKE_ASSIGN_OR_RETURN(std::shared_ptr<const io::RandomAccessFile> file, io.OpenRead(path));
  const auto size = static_cast<std::int64_t>(file->size());
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(std::move(file)));
  const table::SchemaPtr schema = md.current_schema();
  // Say first when the partition column is missing altogether: the id check below would only
  // report its consequence (every later column numbered differently).
  if (const table::PartitionSpecPtr spec = md.default_spec(); spec != nullptr) {
    for (const table::PartitionField& pf : spec->fields()) {
      const std::string source = schema->FindColumnName(pf.source_id);
      const auto& top = reader->schema().fields();
      const bool present = std::any_of(top.begin(), top.end(),
                                       [&](const parquet::Field& f) { return f.name == source; });
      if (!present) {
        return Status::InvalidArgument(path + ": the table is partitioned by column '" + source +
                                       "', which the file lacks");
      }
    }
  }
  GEOLAKE_RETURN_NOT_OK(layout::CheckDataFileSchema(reader->schema(), *schema, path));
  GEOLAKE_RETURN_NOT_OK(CheckCrs(reader->metadata(), md, path));
  // What is committed is decoded and checked first: a damaged page, a malformed WKB or a
  // footer whose counts lie would poison every later query (issue 17). Opt out for speed.
  if (!trust_footers) {
    GEOLAKE_RETURN_NOT_OK(
        layout::VerifyDataFileContents(*reader, geoparquet::kGeometryColumn, path));
  }
  GEOLAKE_ASSIGN_OR_RETURN(
      std::vector<table::Value> partition,
      layout::PartitionFromFooter(reader->metadata(), reader->schema(), md, path));
  table::ParquetMetricsOptions metrics;
  metrics.geometry_bounds = md.format_version >= 3;
  return table::DataFileFromParquet(reader->metadata(), path, size, *schema, std::move(partition),
                                    metrics)
      .WithContext(path);
}

}  // namespace

Result<AppendResult> Warehouse::Append(std::string_view table,
                                       const std::vector<std::string>& files,
                                       const AppendOptions& options) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, LoadTable(table));
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  // A file committed twice would be read twice; refuse files that are already live.
  GEOLAKE_ASSIGN_OR_RETURN(table::ScanPlan live, table::PlanScan(*io_, t.metadata));
  std::set<std::string> paths;
  for (const table::ManifestEntry& e : live.data_files) paths.insert(e.data_file.file_path);

  AppendResult out;
  out.table = t.id;
  table::AppendFiles append(catalog, io_.get(), t.id);
  append.SetSummary("engine-name", "geolake");
  for (const std::string& given : files) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(given, ec);
    if (ec) return Status::IOError(given + ": " + ec.message());
    const std::string path = absolute.lexically_normal().string();
    if (!paths.insert(path).second) {
      return Status::InvalidArgument(path + ": already in table '" + t.id.ToString() +
                                     "' or given twice");
    }
    GEOLAKE_ASSIGN_OR_RETURN(table::DataFile file,
                             DescribeFile(*io_, t.metadata, path, options.trust_footers));
    if (file.record_count < 0 ||
        __builtin_add_overflow(out.records, file.record_count, &out.records)) {
      return Status::CorruptData(path + ": declares " + std::to_string(file.record_count) +
                                 " rows: the total would overflow");
    }
    out.bytes += file.file_size_in_bytes;
    out.files.push_back(AppendedFile{path, internal::PartitionValues(t.metadata, file),
                                     file.record_count, file.file_size_in_bytes});
    append.AddFile(std::move(file));
  }
  GEOLAKE_ASSIGN_OR_RETURN(out.commit, append.Commit());
  return out;
}

}  // namespace geolake
