/// \file
/// Test support (include only from *_test.cc files): build a small geolake table from a real
/// vector file through the library alone — GdalSource, GeoParquetFileWriter, CreateTable and
/// AppendFiles — so maintenance and render tests do not depend on the ingest command. Rows are
/// grouped by the quadkey (zoom `zoom`) of their bbox centre; each group becomes one data file
/// in partition geo_cell=<quadkey>. Source attributes are dropped: the table has the layout's
/// columns only (layout/table_layout.h: geometry, bbox, geo_cell, geo_hilbert).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/geo/wkb.h"
#include "geolake/io/file_io.h"
#include "geolake/layout/table_layout.h"
#include "geolake/pipeline/table_writer.h"
#include "geolake/pipeline/transform.h"
#include "geolake/sources/gdal_source.h"
#include "geolake/table/catalog.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/transaction.h"

namespace geolake::maintenance::testing {

/// \brief Create table `id` at `location` from the vector file `source` and commit its files
/// in `commits` append snapshots (round-robin). Returns the loaded table.
inline Result<table::Table> BuildRealTable(table::Catalog& catalog, const io::FileIO& io,
                                           const table::TableIdentifier& id,
                                           const std::string& source, const std::string& location,
                                           int zoom = 3, int commits = 1) {
  const layout::PartitionScheme scheme{layout::PartitionKind::kQuadkey, zoom};
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, sources::GdalSource::Open(source));
  std::map<std::string, geoparquet::FeatureBatch> cells;
  geoparquet::FeatureBatch batch;
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t n, reader->ReadBatch(4096, &batch));
    if (n == 0) break;
    for (std::size_t row = 0; row < static_cast<std::size_t>(n); ++row) {
      if (batch.geometry_valid[row] == 0) continue;
      const auto wkb = batch.GeometryAt(row);
      GEOLAKE_ASSIGN_OR_RETURN(geo::Envelope env, geo::WkbEnvelope(wkb));
      if (env.IsEmpty()) continue;
      GEOLAKE_ASSIGN_OR_RETURN(
          std::optional<std::string> cell,
          pipeline::CellForLonLat(scheme, (env.xmin + env.xmax) / 2, (env.ymin + env.ymax) / 2));
      if (!cell.has_value()) continue;
      geoparquet::FeatureBatch& out = cells[*cell];
      out.wkb.append(reinterpret_cast<const char*>(wkb.data()), wkb.size());
      out.wkb_offsets.push_back(static_cast<std::int64_t>(out.wkb.size()));
      out.geometry_valid.push_back(1);
      out.feature_index.push_back(batch.feature_index[row]);
    }
  }
  layout::LayoutOptions layout;
  layout.partition = scheme;
  GEOLAKE_ASSIGN_OR_RETURN(table::NewTableOptions options, layout::LayoutNewTable({}, layout));
  options.location = location;
  GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(catalog, id.ns));
  GEOLAKE_ASSIGN_OR_RETURN(table::Table created, table::CreateTable(catalog, io, id, options));
  const table::SchemaPtr schema = created.metadata.current_schema();
  GEOLAKE_ASSIGN_OR_RETURN(parquet::Schema file_schema, pipeline::ParquetSchemaForTable(*schema));

  std::vector<table::DataFile> files;
  for (auto& [cell, rows] : cells) {
    const std::string path =
        location + "/data/geo_cell=" + cell + "/" + table::NewUuid() + ".parquet";
    GEOLAKE_ASSIGN_OR_RETURN(auto stream, io.OpenWrite(path, /*overwrite=*/false));
    geoparquet::SourceLayout source_layout;
    source_layout.crs_authority = "EPSG:4326";
    geoparquet::GeoParquetOptions write_options;
    write_options.schema = file_schema;
    write_options.cell_value = cell;
    GEOLAKE_ASSIGN_OR_RETURN(auto writer, geoparquet::GeoParquetFileWriter::Open(
                                              stream.get(), source_layout, write_options));
    GEOLAKE_RETURN_NOT_OK(writer->Add(std::move(rows)));
    GEOLAKE_ASSIGN_OR_RETURN(geoparquet::GeoParquetFileSummary summary, writer->Finish());
    GEOLAKE_RETURN_NOT_OK(stream->Close());
    GEOLAKE_ASSIGN_OR_RETURN(io::FileInfo info, io.Stat(path));
    GEOLAKE_ASSIGN_OR_RETURN(table::DataFile file,
                             table::DataFileFromParquet(summary.metadata, path,
                                                        static_cast<std::int64_t>(info.size_bytes),
                                                        *schema, {table::Value(cell)}));
    files.push_back(std::move(file));
  }
  for (int c = 0; c < std::max(1, commits); ++c) {
    table::AppendFiles append(&catalog, &io, id);
    for (std::size_t i = c; i < files.size(); i += std::max(1, commits)) append.AddFile(files[i]);
    GEOLAKE_RETURN_NOT_OK(append.Commit().status());
  }
  return table::LoadTable(catalog, io, id);
}

}  // namespace geolake::maintenance::testing
