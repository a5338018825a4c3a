#include "geolake/ops/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "geolake/core/thread_pool.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/geometry_type.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/hilbert.h"
#include "geolake/geo/proj.h"
#include "geolake/geo/spatial_key.h"
#include "geolake/geo/wkb.h"
#include "geolake/sources/gdal_source.h"

namespace geolake::ops {
namespace {

// Everything one worker needs, created once: its own GEOS/PROJ context and transformers bound
// to that context (PROJ objects must not be shared across threads).
struct Worker {
  std::unique_ptr<geo::GeoContext> ctx;
  std::optional<geo::Transformer> to_area;    // source CRS -> equal-area CRS
  std::optional<geo::Transformer> to_lonlat;  // source CRS -> EPSG:4326 (for keys)
  ProfileReport partial;
  bool hilbert_seen = false;
};

Status InitWorker(const std::string& source_crs, const ProfileOptions& options, Worker* w) {
  GEOLAKE_ASSIGN_OR_RETURN(w->ctx, geo::GeoContext::Make(options.stop));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs source, geo::Crs::Make(*w->ctx, source_crs));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs area, geo::Crs::Make(*w->ctx, options.area_crs));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs lonlat, geo::Crs::Make(*w->ctx, "EPSG:4326"));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t1, geo::Transformer::Make(*w->ctx, source, area));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t2, geo::Transformer::Make(*w->ctx, source, lonlat));
  w->to_area.emplace(std::move(t1));
  w->to_lonlat.emplace(std::move(t2));
  w->partial.extent = geo::Envelope::Empty();
  return Status::OK();
}

// One feature: type, extent, vertices, validity (and whether make-valid repairs it), area in
// the equal-area CRS for polygons, and the spatial keys of its envelope's centre.
Status ProfileFeature(std::span<const std::uint8_t> wkb, const ProfileOptions& options,
                      const geo::HilbertCurve& curve, Worker* w) {
  ProfileReport& r = w->partial;
  GEOLAKE_ASSIGN_OR_RETURN(geo::WkbHeader header, geo::PeekWkbType(wkb));
  ++r.geometry_types[geo::GeoParquetTypeName(header.type, header.dims)];
  GEOLAKE_ASSIGN_OR_RETURN(geo::FlatGeometry flat, geo::ParseWkb(wkb));
  r.vertices += static_cast<std::int64_t>(flat.num_coordinates());
  GEOLAKE_ASSIGN_OR_RETURN(geo::Envelope env, geo::WkbEnvelope(wkb));
  r.extent.Expand(env);

  GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry geom, geo::Geometry::FromWkb(*w->ctx, wkb));
  GEOLAKE_ASSIGN_OR_RETURN(bool valid, geom.IsValid());
  if (!valid) {
    ++r.invalid;
    GEOLAKE_ASSIGN_OR_RETURN(geom, geom.MakeValid());
    GEOLAKE_ASSIGN_OR_RETURN(bool repaired, geom.IsValid());
    if (repaired) ++r.repaired;
  }
  if (header.type == geo::GeometryType::kPolygon ||
      header.type == geo::GeometryType::kMultiPolygon ||
      header.type == geo::GeometryType::kGeometryCollection) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry projected, w->to_area->Transform(geom));
    GEOLAKE_ASSIGN_OR_RETURN(double area_m2, projected.Area());
    r.area_km2 += area_m2 / 1e6;
  }

  if (env.IsEmpty()) return Status::OK();
  double cx = (env.xmin + env.xmax) / 2;
  double cy = (env.ymin + env.ymax) / 2;
  GEOLAKE_RETURN_NOT_OK(
      w->to_lonlat->Transform(std::span<double>(&cx, 1), std::span<double>(&cy, 1)));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Tile tile, geo::TileForLonLat(cx, cy, options.quadkey_zoom));
  GEOLAKE_ASSIGN_OR_RETURN(std::string quadkey, geo::Quadkey(tile));
  ++r.cells[quadkey];
  const std::uint64_t h = curve.Index(cx, cy);
  if (!w->hilbert_seen || h < r.hilbert_min) r.hilbert_min = h;
  if (!w->hilbert_seen || h > r.hilbert_max) r.hilbert_max = h;
  w->hilbert_seen = true;
  return Status::OK();
}

void Merge(Worker& from, ProfileReport* into, bool* hilbert_seen) {
  const ProfileReport& p = from.partial;
  into->vertices += p.vertices;
  into->invalid += p.invalid;
  into->repaired += p.repaired;
  into->area_km2 += p.area_km2;
  into->extent.Expand(p.extent);
  for (const auto& [k, v] : p.geometry_types) into->geometry_types[k] += v;
  for (const auto& [k, v] : p.cells) into->cells[k] += v;
  if (from.hilbert_seen) {
    into->hilbert_min = *hilbert_seen ? std::min(into->hilbert_min, p.hilbert_min) : p.hilbert_min;
    into->hilbert_max = *hilbert_seen ? std::max(into->hilbert_max, p.hilbert_max) : p.hilbert_max;
    *hilbert_seen = true;
  }
}

}  // namespace

Result<ProfileReport> ProfileSource(const std::string& path, const ProfileOptions& options,
                                    Metrics* metrics) {
  const auto started = std::chrono::steady_clock::now();
  GEOLAKE_ASSIGN_OR_RETURN(auto source, sources::GdalSource::Open(path));
  const sources::SourceInfo& info = source->info();
  const std::string source_crs =
      !info.crs_projjson.empty() ? info.crs_projjson : std::string("EPSG:4326");

  // One slot (GEOS and PROJ contexts, partial counts) per executor thread; without an
  // executor one slot, run on this thread.
  const int workers = options.executor != nullptr ? options.executor->size() : 1;
  const auto for_each_slot = [&](const std::function<Status(std::int64_t)>& fn) -> Status {
    if (options.executor != nullptr)
      return options.executor->ParallelFor(workers, fn, options.stop);
    for (std::int64_t slot = 0; slot < workers; ++slot) {
      if (options.stop.stop_requested()) return Status::Cancelled("profile stopped");
      GEOLAKE_RETURN_NOT_OK(fn(slot));
    }
    return Status::OK();
  };
  GEOLAKE_ASSIGN_OR_RETURN(
      geo::HilbertCurve curve,
      geo::HilbertCurve::Make(geo::Envelope{-180, -90, 180, 90}, options.hilbert_order));
  std::vector<Worker> slots(static_cast<std::size_t>(workers));
  GEOLAKE_RETURN_NOT_OK(for_each_slot([&](std::int64_t slot) {
    return InitWorker(source_crs, options, &slots[static_cast<std::size_t>(slot)]);
  }));

  StageMetrics* read_stage = metrics ? metrics->stage("read") : nullptr;
  StageMetrics* transform_stage = metrics ? metrics->stage("transform") : nullptr;
  if (read_stage) read_stage->Start();
  if (transform_stage) transform_stage->Start();

  ProfileReport report;
  report.source = path;
  report.driver = info.driver;
  report.crs =
      info.crs_authority.empty() ? std::string("(none: EPSG:4326 assumed)") : info.crs_authority;
  geoparquet::FeatureBatch batch;
  while (true) {
    if (options.stop.stop_requested()) return Status::Cancelled("profile '" + path + "'");
    std::int64_t rows = 0;
    {
      std::optional<StageMetrics::Timer> timer;
      if (read_stage) timer.emplace(read_stage);
      GEOLAKE_ASSIGN_OR_RETURN(rows, source->ReadBatch(options.batch_rows, &batch));
    }
    if (rows == 0) break;
    if (read_stage) {
      read_stage->AddRowsOut(rows);
      read_stage->AddBytesOut(batch.ByteSize());
    }
    report.features += rows;
    std::optional<StageMetrics::Timer> timer;
    if (transform_stage) timer.emplace(transform_stage);
    // Rows are dealt round-robin to the slots so that large and small features mix.
    GEOLAKE_RETURN_NOT_OK(for_each_slot([&](std::int64_t slot) -> Status {
      Worker& w = slots[static_cast<std::size_t>(slot)];
      for (std::int64_t row = slot; row < rows; row += workers) {
        if (!batch.geometry_valid[static_cast<std::size_t>(row)]) {
          ++w.partial.null_geometries;
          continue;
        }
        GEOLAKE_RETURN_NOT_OK_CTX(
            ProfileFeature(batch.GeometryAt(static_cast<std::size_t>(row)), options, curve, &w),
            fmt::format("feature {}", batch.feature_index[static_cast<std::size_t>(row)]));
      }
      return Status::OK();
    }));
    if (transform_stage) transform_stage->AddRowsIn(rows);
  }
  bool hilbert_seen = false;
  report.extent = geo::Envelope::Empty();
  for (Worker& w : slots) {
    report.null_geometries += w.partial.null_geometries;
    Merge(w, &report, &hilbert_seen);
  }
  if (read_stage) read_stage->Finish();
  if (transform_stage) {
    transform_stage->AddRowsOut(report.features);
    transform_stage->Finish();
  }
  report.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  return report;
}

std::string FormatProfile(const ProfileReport& r, int top_cells) {
  std::ostringstream out;
  out << fmt::format("source          {} ({})\n", r.source, r.driver);
  out << fmt::format("crs             {}\n", r.crs);
  out << fmt::format("features        {}  (null geometry: {})\n", r.features, r.null_geometries);
  out << "geometry types ";
  for (const auto& [name, count] : r.geometry_types) out << fmt::format(" {}={}", name, count);
  out << "\n";
  out << fmt::format("vertices        {}\n", r.vertices);
  if (r.extent.IsEmpty()) {
    out << "extent          (empty)\n";
  } else {
    out << fmt::format("extent          {:.6f}, {:.6f}, {:.6f}, {:.6f}\n", r.extent.xmin,
                       r.extent.ymin, r.extent.xmax, r.extent.ymax);
  }
  out << fmt::format("invalid         {}  (repaired by make-valid: {})\n", r.invalid, r.repaired);
  out << fmt::format("area            {:.1f} km2 (equal-area EPSG:6933)\n", r.area_km2);
  out << fmt::format("hilbert range   {} .. {}\n", r.hilbert_min, r.hilbert_max);
  std::vector<std::pair<std::string, std::int64_t>> cells(r.cells.begin(), r.cells.end());
  std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  out << fmt::format("quadkey cells   {} occupied; busiest:", cells.size());
  for (int i = 0; i < top_cells && i < static_cast<int>(cells.size()); ++i) {
    out << fmt::format(" {}={}", cells[static_cast<std::size_t>(i)].first,
                       cells[static_cast<std::size_t>(i)].second);
  }
  out << "\n";
  out << fmt::format("wall time       {} ms\n", r.wall_ms);
  return out.str();
}

}  // namespace geolake::ops
