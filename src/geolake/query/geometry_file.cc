#include "geolake/query/geometry_file.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "geolake/geo/geo_context.h"
#include "geolake/geo/geos.h"
#include "geolake/sources/gdal_source.h"

namespace geolake::query {
namespace {

bool IsBlank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

bool SameCrs(std::string_view a, std::string_view b) {
  const auto lonlat = [](std::string_view c) { return c == "EPSG:4326" || c == "OGC:CRS84"; };
  return a == b || (lonlat(a) && lonlat(b));
}

}  // namespace

Result<std::string> ReadGeometryFileUnion(const std::string& path, std::string_view table_crs) {
  GEOLAKE_ASSIGN_OR_RETURN(auto source, sources::GdalSource::Open(path));
  const std::string& crs = source->info().crs_authority;
  if (!crs.empty() && !table_crs.empty() && !SameCrs(crs, table_crs)) {
    return Status::InvalidArgument("--intersects " + path + ": the file's CRS is " + crs +
                                   ", the table's " + std::string(table_crs) +
                                   " (files are not reprojected)");
  }
  GEOLAKE_ASSIGN_OR_RETURN(auto ctx, geo::GeoContext::Make());
  std::vector<geo::Geometry> parts;
  geoparquet::FeatureBatch batch;
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t n, source->ReadBatch(4096, &batch));
    if (n == 0) break;
    for (std::int64_t row = 0; row < n; ++row) {
      if (!batch.geometry_valid[static_cast<std::size_t>(row)]) continue;
      GEOLAKE_ASSIGN_OR_RETURN(
          auto g, geo::Geometry::FromWkb(*ctx, batch.GeometryAt(static_cast<std::size_t>(row))));
      parts.push_back(std::move(g));
    }
  }
  if (parts.empty()) {
    return Status::InvalidArgument("--intersects " + path + ": the file has no geometries");
  }
  GEOLAKE_ASSIGN_OR_RETURN(auto all, geo::Geometry::UnionAll(*ctx, std::move(parts)));
  return all.ToWkb();
}

Status ResolveIntersects(const std::string& argument, std::string_view table_crs,
                         const io::FileIO& io, QueryOptions* options) {
  if (IsBlank(argument)) return Status::InvalidArgument("--intersects: empty (no geometry)");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(argument, ec)) {
    options->intersects_wkt = argument;
    return Status::OK();
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::string text, io.ReadAll(argument));
  if (IsBlank(text)) {
    return Status::InvalidArgument("--intersects " + argument +
                                   ": the file is empty (no geometry to intersect)");
  }
  auto wkb = ReadGeometryFileUnion(argument, table_crs);
  if (wkb.ok()) {
    options->intersects_wkb = std::move(*wkb);
    return Status::OK();
  }
  if (wkb.status().code() != ErrorCode::kNotFound) return wkb.status();
  options->intersects_wkt = std::move(text);
  return Status::OK();
}

}  // namespace geolake::query
