// Polygonize on the ops runner: windows polygonized by GDALPolygonize in pixel coordinates,
// polygons reaching an interior window edge merged by a union-find over shared seam segments
// (ops/polygonize.h, docs/ops.md "polygonize").
#include "geolake/ops/polygonize.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/core/units.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/wkb.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/sources/gdal_api.h"

namespace geolake::ops {
namespace {

using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;

constexpr std::int64_t kDefaultTile = 4096;
// Bytes a window's pixel costs while a worker polygonizes it: the values (Int32) and mask read
// (5), the MEM dataset's two Int32 bands (8), and a margin for GDALPolygonize's own state.
constexpr std::int64_t kWindowBytesPerPixel = 16;

struct DatasetCloser {
  void operator()(void* ds) const {
    if (ds != nullptr) gdal::GDALClose(ds);
  }
};
using DatasetPtr = std::unique_ptr<void, DatasetCloser>;

// What every worker needs to know of the raster.
struct RasterInfo {
  std::string path;
  int band = 1;
  std::int64_t width = 0, height = 0;
  std::int64_t block_width = 0, block_height = 0;
  bool is_float = false;
  std::string type_name;
  bool has_mask = false;  // the band's mask is not "all valid"
  double gt[6] = {0, 1, 0, 0, 0, 1};
  std::string crs;
};

struct Window {
  std::int64_t col = 0, row = 0, width = 0, height = 0;
};

// One polygon of a window that reaches an interior window edge, in pixel coordinates.
struct Piece {
  std::int64_t value = 0;
  geo::FlatGeometry geometry;
};

// Twice the signed area of ring `r` (exact for integer coordinates of rasters < 2^26 px).
double RingArea2(const geo::FlatGeometry& g, const geo::GeometryRing& r) {
  double sum = 0;
  const std::size_t stride = static_cast<std::size_t>(g.stride());
  for (std::uint32_t i = 0; i + 1 < r.count; ++i) {
    const double* a = g.coords.data() + (r.offset + i) * stride;
    const double* b = a + stride;
    sum += a[0] * b[1] - b[0] * a[1];
  }
  return sum;
}

// Area in pixels of a polygonal geometry in pixel coordinates: each polygon's shell minus its
// holes (ring orientation from GDAL 3.6 is not normalized, so by absolute values).
double PixelArea(const geo::FlatGeometry& g) {
  double area = 0;
  for (const geo::GeometryPart& part : g.parts) {
    if (part.type != geo::GeometryType::kPolygon) continue;
    for (std::uint32_t k = 0; k < part.count; ++k) {
      const double a = std::abs(RingArea2(g, g.rings[part.offset + k])) / 2;
      area += k == 0 ? a : -a;
    }
  }
  return area;
}

// Pixel coordinates to the raster's CRS, with GDAL polygonize's own expression (alg/
// polygonize.cpp, EmitPolygonToLayer): the same bits as a whole-raster run.
void PixelToWorld(const double* gt, geo::FlatGeometry* g) {
  const std::size_t stride = static_cast<std::size_t>(g->stride());
  for (std::size_t i = 0; i + 1 < g->coords.size(); i += stride) {
    const double px = g->coords[i];
    const double py = g->coords[i + 1];
    g->coords[i] = gt[0] + px * gt[1] + py * gt[2];
    g->coords[i + 1] = gt[3] + px * gt[4] + py * gt[5];
  }
}

void InitRows(const std::vector<FieldDef>& fields, FeatureBatch* rows) {
  if (rows->fields.size() == fields.size()) return;
  rows->fields = fields;
  rows->columns.assign(fields.size(), {});
  for (std::size_t c = 0; c < fields.size(); ++c) rows->columns[c].type = fields[c].type;
}

int GdalProgress(double /*done*/, const char* /*message*/, void* arg) {
  return static_cast<const std::stop_token*>(arg)->stop_requested() ? FALSE : TRUE;
}

class PolygonizeOp;

class PolygonizeWorker final : public OpWorker {
 public:
  explicit PolygonizeWorker(PolygonizeOp* op) : op_(op) {}
  Status Open();
  Status Process(const InputUnit& unit, const FeatureBatch& in, OpOutput* out) override;

 private:
  PolygonizeOp* op_;
  DatasetPtr source_;
  GDALRasterBandH band_ = nullptr;
  GDALDriverH mem_raster_ = nullptr;
  GDALDriverH mem_vector_ = nullptr;
};

class PolygonizeOp final : public Operation {
 public:
  PolygonizeOp(RasterInfo info, std::vector<Window> windows, PolygonizeOptions options,
               PolygonizeReport* report)
      : info_(std::move(info)),
        windows_(std::move(windows)),
        options_(std::move(options)),
        report_(report) {}

  std::string name() const override { return "polygonize"; }
  std::string parameters() const override {
    nlohmann::json j = {{"band", options_.band},
                        {"connectedness", options_.connectedness},
                        {"tile", {options_.tile_width, options_.tile_height}},
                        {"field", options_.field}};
    if (options_.nodata) j["nodata"] = *options_.nodata;
    if (options_.float_tolerance) j["float_tolerance"] = *options_.float_tolerance;
    return j.dump();
  }
  Result<OpSchema> Bind(OpContext& ctx, const Input& main) override {
    stop_ = ctx.stop;
    OpSchema schema;
    fields_ = {{options_.field, options_.float_tolerance ? FieldType::kDouble : FieldType::kInt64}};
    schema.fields = fields_;
    schema.crs = main.crs();
    return schema;
  }
  bool resumable_by_unit() const override { return false; }
  std::string ShardRefusal() const override {
    return "polygonize: --shard is not supported (the seam merge needs every window)";
  }
  Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext* /*geo*/) override {
    auto worker = std::make_unique<PolygonizeWorker>(this);
    GEOLAKE_RETURN_NOT_OK(worker->Open());
    return std::unique_ptr<OpWorker>(std::move(worker));
  }
  Status Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) override;
  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override;

  const RasterInfo& info() const { return info_; }
  const PolygonizeOptions& options() const { return options_; }
  const Window& window(std::int64_t i) const { return windows_[static_cast<std::size_t>(i)]; }
  const std::stop_token& stop() const { return stop_; }
  const std::vector<FieldDef>& fields() const { return fields_; }

  // A window's interior edge: one that another window continues.
  bool ReachesSeam(const Window& w, const geo::Envelope& box) const {
    return (box.xmin == static_cast<double>(w.col) && w.col > 0) ||
           (box.xmax == static_cast<double>(w.col + w.width) && w.col + w.width < info_.width) ||
           (box.ymin == static_cast<double>(w.row) && w.row > 0) ||
           (box.ymax == static_cast<double>(w.row + w.height) && w.row + w.height < info_.height);
  }

  void AppendRow(std::int64_t value, const std::string& wkb, FeatureBatch* rows) const {
    InitRows(fields_, rows);
    geoparquet::Column& column = rows->columns[0];
    column.valid.push_back(1);
    if (options_.float_tolerance) {
      column.doubles.push_back(static_cast<double>(value) * *options_.float_tolerance);
    } else {
      column.ints.push_back(value);
    }
    rows->wkb += wkb;
    rows->wkb_offsets.push_back(static_cast<std::int64_t>(rows->wkb.size()));
    rows->geometry_valid.push_back(1);
    rows->feature_index.push_back(rows->num_rows());
  }

  // Called by workers after a window.
  void AddWindow(std::vector<Piece> pieces, std::int64_t interior, std::int64_t valid_pixels,
                 double interior_area, double seconds) {
    std::int64_t bytes = 0;
    for (const Piece& p : pieces) {
      bytes += static_cast<std::int64_t>(p.geometry.coords.size() * sizeof(double) +
                                         p.geometry.rings.size() * sizeof(geo::GeometryRing) +
                                         p.geometry.parts.size() * sizeof(geo::GeometryPart)) +
               static_cast<std::int64_t>(sizeof(Piece));
    }
    std::lock_guard lock(mu_);
    ++windows_done_;
    interior_ += interior;
    valid_pixels_ += valid_pixels;
    output_area_ += interior_area;
    polygonize_seconds_ += seconds;
    seam_bytes_ += bytes;
    for (Piece& p : pieces) pieces_.push_back(std::move(p));
  }

 private:
  RasterInfo info_;
  std::vector<Window> windows_;
  PolygonizeOptions options_;
  PolygonizeReport* report_;
  std::stop_token stop_;
  std::vector<FieldDef> fields_;

  std::mutex mu_;  // guards the fields below
  std::vector<Piece> pieces_;
  std::int64_t windows_done_ = 0;
  std::int64_t interior_ = 0;
  std::int64_t valid_pixels_ = 0;
  double output_area_ = 0;  // pixels covered by output polygons
  double polygonize_seconds_ = 0;
  std::int64_t seam_bytes_ = 0;
  std::int64_t polygons_ = 0;
  std::int64_t merged_ = 0;
};

Status PolygonizeWorker::Open() {
  GEOLAKE_RETURN_NOT_OK(gdal::Load().status());
  gdal::QuietErrors quiet;
  const RasterInfo& info = op_->info();
  source_.reset(gdal::GDALOpenEx(info.path.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, nullptr,
                                 nullptr, nullptr));
  if (source_ == nullptr) {
    return Status::IOError("raster '" + info.path + "': " + gdal::QuietErrors::LastMessage());
  }
  band_ = gdal::GDALGetRasterBand(source_.get(), info.band);
  mem_raster_ = gdal::GDALGetDriverByName("MEM");
  mem_vector_ = gdal::GDALGetDriverByName("Memory");
  if (band_ == nullptr || mem_raster_ == nullptr || mem_vector_ == nullptr) {
    return Status::Internal("raster '" + info.path + "': no band or no MEM/Memory driver");
  }
  return Status::OK();
}

Status PolygonizeWorker::Process(const InputUnit& unit, const FeatureBatch& in, OpOutput* out) {
  const auto started = std::chrono::steady_clock::now();
  const RasterInfo& info = op_->info();
  const PolygonizeOptions& options = op_->options();
  const Window& w = op_->window(unit.ordinal);
  const std::string where = "window " + std::to_string(w.col) + "," + std::to_string(w.row) + " (" +
                            std::to_string(w.width) + "x" + std::to_string(w.height) + ")";
  gdal::QuietErrors quiet;
  const std::size_t n = static_cast<std::size_t>(w.width * w.height);
  const int cols = static_cast<int>(w.width);
  const int rows = static_cast<int>(w.height);
  std::vector<std::int32_t> values(n);
  std::vector<std::uint8_t> mask;
  const bool masked = options.nodata.has_value() || info.has_mask || info.is_float;
  if (masked) mask.assign(n, 1);
  if (info.is_float) {
    std::vector<double> raw(n);
    if (gdal::GDALRasterIO(band_, GF_Read, static_cast<int>(w.col), static_cast<int>(w.row), cols,
                           rows, raw.data(), cols, rows, GDT_Float64, 0, 0) != CE_None) {
      return Status::IOError(where + ": " + gdal::QuietErrors::LastMessage());
    }
    const double t = *options.float_tolerance;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(raw[i]) || (options.nodata && raw[i] == *options.nodata)) {
        mask[i] = 0;
        continue;
      }
      const double k = std::nearbyint(raw[i] / t);
      if (!(std::abs(k) < 2147483647.0)) {
        return Status::InvalidArgument(where + ": value " + std::to_string(raw[i]) +
                                       " over --float-tolerance " + std::to_string(t) +
                                       " is out of the Int32 class range");
      }
      values[i] = static_cast<std::int32_t>(k);
    }
  } else {
    // As GDAL 3.6's polygonize reads an integer band: into Int32 (alg/polygonize.cpp).
    if (gdal::GDALRasterIO(band_, GF_Read, static_cast<int>(w.col), static_cast<int>(w.row), cols,
                           rows, values.data(), cols, rows, GDT_Int32, 0, 0) != CE_None) {
      return Status::IOError(where + ": " + gdal::QuietErrors::LastMessage());
    }
    if (options.nodata) {
      for (std::size_t i = 0; i < n; ++i) {
        if (static_cast<double>(values[i]) == *options.nodata) mask[i] = 0;
      }
    }
  }
  if (info.has_mask && !options.nodata) {
    std::vector<std::uint8_t> band_mask(n);
    if (gdal::GDALRasterIO(gdal::GDALGetMaskBand(band_), GF_Read, static_cast<int>(w.col),
                           static_cast<int>(w.row), cols, rows, band_mask.data(), cols, rows,
                           GDT_Byte, 0, 0) != CE_None) {
      return Status::IOError(where + " mask: " + gdal::QuietErrors::LastMessage());
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (band_mask[i] == 0) mask[i] = 0;
    }
  }
  std::int64_t valid_pixels = static_cast<std::int64_t>(n);
  if (masked) valid_pixels = std::accumulate(mask.begin(), mask.end(), std::int64_t{0});

  // The window as an in-memory raster whose geotransform is its pixel offset.
  DatasetPtr mem(gdal::GDALCreate(mem_raster_, "", cols, rows, masked ? 2 : 1, GDT_Int32, nullptr));
  if (mem == nullptr) return Status::Internal(where + ": " + gdal::QuietErrors::LastMessage());
  double gt[6] = {static_cast<double>(w.col), 1, 0, static_cast<double>(w.row), 0, 1};
  gdal::GDALSetGeoTransform(mem.get(), gt);
  GDALRasterBandH value_band = gdal::GDALGetRasterBand(mem.get(), 1);
  GDALRasterBandH mask_band = masked ? gdal::GDALGetRasterBand(mem.get(), 2) : nullptr;
  if (gdal::GDALRasterIO(value_band, GF_Write, 0, 0, cols, rows, values.data(), cols, rows,
                         GDT_Int32, 0, 0) != CE_None ||
      (masked && gdal::GDALRasterIO(mask_band, GF_Write, 0, 0, cols, rows, mask.data(), cols, rows,
                                    GDT_Byte, 0, 0) != CE_None)) {
    return Status::Internal(where + ": " + gdal::QuietErrors::LastMessage());
  }
  std::vector<std::int32_t>().swap(values);
  std::vector<std::uint8_t>().swap(mask);

  DatasetPtr vec(gdal::GDALCreate(mem_vector_, "", 0, 0, 0, GDT_Unknown, nullptr));
  if (vec == nullptr) return Status::Internal(where + ": " + gdal::QuietErrors::LastMessage());
  OGRLayerH layer =
      gdal::GDALDatasetCreateLayer(vec.get(), "polygons", nullptr, wkbPolygon, nullptr);
  OGRFieldDefnH field = gdal::OGR_Fld_Create("value", OFTInteger);
  const OGRErr made = layer == nullptr ? OGRERR_FAILURE : gdal::OGR_L_CreateField(layer, field, 1);
  gdal::OGR_Fld_Destroy(field);
  if (made != OGRERR_NONE) return Status::Internal(where + ": cannot make the polygon layer");
  char connected8[] = "8CONNECTED=8";
  char* polygonize_options[] = {options.connectedness == 8 ? connected8 : nullptr, nullptr};
  std::stop_token stop = op_->stop();
  if (gdal::GDALPolygonize(value_band, mask_band, layer, 0, polygonize_options, GdalProgress,
                           &stop) != CE_None) {
    if (stop.stop_requested()) return Status::Cancelled("polygonize stopped");
    return Status::GeometryError(where + ": GDALPolygonize: " + gdal::QuietErrors::LastMessage());
  }
  mem.reset();

  std::vector<Piece> pieces;
  std::int64_t interior = 0;
  double interior_area = 0;
  std::string wkb;
  gdal::OGR_L_ResetReading(layer);
  while (OGRFeatureH feature = gdal::OGR_L_GetNextFeature(layer)) {
    std::unique_ptr<void, void (*)(void*)> owned(feature, [](void* f) { gdal::OGR_F_Destroy(f); });
    const std::int64_t value = gdal::OGR_F_GetFieldAsInteger64(feature, 0);
    OGRGeometryH g = gdal::OGR_F_GetGeometryRef(feature);
    if (g == nullptr) continue;
    wkb.resize(static_cast<std::size_t>(gdal::OGR_G_WkbSizeEx(g)));
    if (gdal::OGR_G_ExportToIsoWkb(g, wkbNDR, reinterpret_cast<unsigned char*>(wkb.data())) !=
        OGRERR_NONE) {
      return Status::Internal(where + ": cannot export a polygon");
    }
    GEOLAKE_ASSIGN_OR_RETURN(geo::FlatGeometry flat, geo::ParseWkb(geo::AsBytes(wkb)));
    if (op_->ReachesSeam(w, flat.GetEnvelope())) {
      pieces.push_back({value, std::move(flat)});
      continue;
    }
    interior_area += PixelArea(flat);
    PixelToWorld(info.gt, &flat);
    op_->AppendRow(value, geo::WriteWkb(flat), &out->rows);
    ++interior;
  }
  out->Emitted(in.num_rows());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  op_->AddWindow(std::move(pieces), interior, valid_pixels, interior_area, seconds);
  return Status::OK();
}

// A union-find over pieces (path halving, union by index).
struct UnionFind {
  std::vector<std::int32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  std::int32_t Find(std::int32_t x) {
    while (parent[static_cast<std::size_t>(x)] != x) {
      parent[static_cast<std::size_t>(x)] =
          parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
      x = parent[static_cast<std::size_t>(x)];
    }
    return x;
  }
  void Union(std::int32_t a, std::int32_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  }
};

// Seam keys: (kind, a, b) in 64 bits: kind 0 = the unit segment x=a, y in [b, b+1]; 1 = the
// unit segment y=a, x in [b, b+1]; 2 = the point (a, b).
std::uint64_t SeamKey(std::uint64_t kind, std::int64_t a, std::int64_t b) {
  return (kind << 62) | (static_cast<std::uint64_t>(a) << 31) | static_cast<std::uint64_t>(b);
}

Status PolygonizeOp::Finish(OpContext& ctx, geo::GeoContext* /*geo*/, OpOutput* out) {
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t tw = options_.tile_width;
  const std::int64_t th = options_.tile_height;
  const bool eight = options_.connectedness == 8;
  auto vertical_seam = [&](double x) {
    const auto c = static_cast<std::int64_t>(x);
    return c > 0 && c < info_.width && c % tw == 0;
  };
  auto horizontal_seam = [&](double y) {
    const auto r = static_cast<std::int64_t>(y);
    return r > 0 && r < info_.height && r % th == 0;
  };
  // Every unit seam segment (and seam point, 8-connected) of every piece.
  std::vector<std::pair<std::uint64_t, std::int32_t>> keys;
  for (std::size_t p = 0; p < pieces_.size(); ++p) {
    const geo::FlatGeometry& g = pieces_[p].geometry;
    const auto id = static_cast<std::int32_t>(p);
    for (const geo::GeometryRing& ring : g.rings) {
      for (std::uint32_t i = 0; i + 1 < ring.count; ++i) {
        const double* a = g.coords.data() + static_cast<std::size_t>(ring.offset + i) * 2;
        const double* b = a + 2;
        if (a[0] == b[0] && vertical_seam(a[0])) {
          const auto x = static_cast<std::int64_t>(a[0]);
          const auto lo = static_cast<std::int64_t>(std::min(a[1], b[1]));
          const auto hi = static_cast<std::int64_t>(std::max(a[1], b[1]));
          for (std::int64_t y = lo; y < hi; ++y) keys.emplace_back(SeamKey(0, x, y), id);
          if (eight) {
            for (std::int64_t y = lo; y <= hi; ++y) keys.emplace_back(SeamKey(2, x, y), id);
          }
        } else if (a[1] == b[1] && horizontal_seam(a[1])) {
          const auto y = static_cast<std::int64_t>(a[1]);
          const auto lo = static_cast<std::int64_t>(std::min(a[0], b[0]));
          const auto hi = static_cast<std::int64_t>(std::max(a[0], b[0]));
          for (std::int64_t x = lo; x < hi; ++x) keys.emplace_back(SeamKey(1, y, x), id);
          if (eight) {
            for (std::int64_t x = lo; x <= hi; ++x) keys.emplace_back(SeamKey(2, x, y), id);
          }
        }
      }
    }
  }
  std::sort(keys.begin(), keys.end());
  UnionFind uf(pieces_.size());
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i;
    while (j < keys.size() && keys[j].first == keys[i].first) ++j;
    for (std::size_t a = i; a < j; ++a) {
      for (std::size_t b = a + 1; b < j; ++b) {
        const Piece& pa = pieces_[static_cast<std::size_t>(keys[a].second)];
        const Piece& pb = pieces_[static_cast<std::size_t>(keys[b].second)];
        if (pa.value == pb.value) uf.Union(keys[a].second, keys[b].second);
      }
    }
    i = j;
  }
  std::vector<std::pair<std::uint64_t, std::int32_t>>().swap(keys);

  // Components, in order of their first piece.
  std::vector<std::vector<std::int32_t>> components;
  std::vector<std::int32_t> component_of(pieces_.size(), -1);
  for (std::size_t p = 0; p < pieces_.size(); ++p) {
    const std::int32_t root = uf.Find(static_cast<std::int32_t>(p));
    std::int32_t& c = component_of[static_cast<std::size_t>(root)];
    if (c < 0) {
      c = static_cast<std::int32_t>(components.size());
      components.emplace_back();
    }
    components[static_cast<std::size_t>(c)].push_back(static_cast<std::int32_t>(p));
  }

  // Union the components of several pieces in parallel, each task with its own GEOS context;
  // the results stay in pixel coordinates until mapped below.
  std::vector<geo::FlatGeometry> unions(components.size());
  std::vector<std::size_t> multi;
  for (std::size_t c = 0; c < components.size(); ++c) {
    if (components[c].size() > 1) multi.push_back(c);
  }
  {
    TaskGroup group(ctx.env->executor, ctx.stop);
    const std::size_t tasks =
        std::min<std::size_t>(multi.size(), std::size_t{8} * std::max(1, ctx.workers));
    for (std::size_t t = 0; t < tasks; ++t) {
      group.Spawn([this, t, tasks, &multi, &components, &unions, &group]() -> Status {
        GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo,
                                 geo::GeoContext::Make(group.stop_token()));
        for (std::size_t k = t; k < multi.size(); k += tasks) {
          const std::size_t c = multi[k];
          std::vector<geo::Geometry> parts;
          for (const std::int32_t p : components[c]) {
            const std::string wkb = geo::WriteWkb(pieces_[static_cast<std::size_t>(p)].geometry);
            GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry part, geo::Geometry::FromWkb(*geo, wkb));
            parts.push_back(std::move(part));
          }
          Result<geo::Geometry> u = geo::Geometry::UnionAll(*geo, std::move(parts));
          if (!u.ok()) {
            // 8-connected pieces touch themselves at points (OGC-invalid by design, GDAL
            // #7369): repair each, then union.
            if (u.status().code() == ErrorCode::kCancelled) return u.status();
            std::vector<geo::Geometry> fixed;
            for (const std::int32_t p : components[c]) {
              const std::string wkb = geo::WriteWkb(pieces_[static_cast<std::size_t>(p)].geometry);
              GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry part, geo::Geometry::FromWkb(*geo, wkb));
              GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry valid, part.MakeValid());
              fixed.push_back(std::move(valid));
            }
            u = geo::Geometry::UnionAll(*geo, std::move(fixed));
            if (!u.ok()) {
              return u.status().WithContext(
                  "polygonize: the seam union of value " +
                  std::to_string(pieces_[static_cast<std::size_t>(components[c].front())].value));
            }
          }
          GEOLAKE_ASSIGN_OR_RETURN(std::string wkb, u->ToWkb());
          GEOLAKE_ASSIGN_OR_RETURN(unions[c], geo::ParseWkb(geo::AsBytes(wkb)));
        }
        return Status::OK();
      });
    }
    GEOLAKE_RETURN_NOT_OK(group.Wait());
  }

  double area = 0;
  for (std::size_t c = 0; c < components.size(); ++c) {
    geo::FlatGeometry g =
        components[c].size() > 1
            ? std::move(unions[c])
            : std::move(pieces_[static_cast<std::size_t>(components[c][0])].geometry);
    area += PixelArea(g);
    PixelToWorld(info_.gt, &g);
    AppendRow(pieces_[static_cast<std::size_t>(components[c][0])].value, geo::WriteWkb(g),
              &out->rows);
  }
  const double merge_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::lock_guard lock(mu_);
  output_area_ += area;
  polygons_ = interior_ + static_cast<std::int64_t>(components.size());
  merged_ = static_cast<std::int64_t>(multi.size());
  if (report_ != nullptr) {
    report_->windows = windows_done_;
    report_->polygons = polygons_;
    report_->interior = interior_;
    report_->seam_pieces = static_cast<std::int64_t>(pieces_.size());
    report_->merged = merged_;
    report_->seam_bytes = seam_bytes_;
    report_->polygonize_seconds = polygonize_seconds_;
    report_->merge_seconds = merge_seconds;
  }
  std::vector<Piece>().swap(pieces_);
  return Status::OK();
}

Status PolygonizeOp::CheckInvariant(const RunTotals& totals,
                                    std::vector<std::string>* lines) const {
  (void)totals;
  // The polygons cover exactly the valid pixels: their area in pixel units is the count.
  const bool holds = output_area_ == static_cast<double>(valid_pixels_);
  char area[64];
  std::snprintf(area, sizeof(area), "%.0f", output_area_);
  lines->push_back("polygonize: valid pixels " + std::to_string(valid_pixels_) +
                   (holds ? " = " : " != ") + "polygon area " + area + " px; " +
                   std::to_string(polygons_) + " polygons (" + std::to_string(interior_) +
                   " within a window, " + std::to_string(polygons_ - interior_) +
                   " from seam pieces, " + std::to_string(merged_) + " of them merged)");
  if (!holds) return Status::Internal("polygonize: invariant failed: " + lines->back());
  return Status::OK();
}

Result<RasterInfo> OpenRaster(const std::string& path, const PolygonizeOptions& options) {
  GEOLAKE_RETURN_NOT_OK(gdal::Load().status());
  gdal::QuietErrors quiet;
  DatasetPtr ds(
      gdal::GDALOpenEx(path.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, nullptr, nullptr, nullptr));
  if (ds == nullptr) {
    VSIStatBufL stat;
    if (gdal::VSIStatL(path.c_str(), &stat) != 0)
      return Status::NotFound("raster '" + path + "' not found");
    return Status::InvalidArgument("raster '" + path + "': GDAL cannot open it as a raster: " +
                                   gdal::QuietErrors::LastMessage());
  }
  RasterInfo info;
  info.path = path;
  info.band = options.band;
  const int bands = gdal::GDALGetRasterCount(ds.get());
  if (options.band < 1 || options.band > bands) {
    return Status::InvalidArgument("raster '" + path + "' has " + std::to_string(bands) +
                                   " band(s); --band " + std::to_string(options.band) +
                                   " is out of range");
  }
  GDALRasterBandH band = gdal::GDALGetRasterBand(ds.get(), options.band);
  info.width = gdal::GDALGetRasterXSize(ds.get());
  info.height = gdal::GDALGetRasterYSize(ds.get());
  int bw = 0, bh = 0;
  gdal::GDALGetBlockSize(band, &bw, &bh);
  info.block_width = std::max(1, bw);
  info.block_height = std::max(1, bh);
  const GDALDataType type = gdal::GDALGetRasterDataType(band);
  info.type_name = gdal::GDALGetDataTypeName(type);
  info.is_float = gdal::GDALDataTypeIsFloating(type) != 0;
  if (type == GDT_CInt16 || type == GDT_CInt32) info.is_float = true;  // complex: refused too
  if (info.is_float && !options.float_tolerance) {
    return Status::InvalidArgument("raster '" + path + "' band " + std::to_string(options.band) +
                                   " is " + info.type_name +
                                   ": polygonize needs an integer band (pass --float-tolerance T "
                                   "to class values by round(v / T))");
  }
  if (type == GDT_CFloat32 || type == GDT_CFloat64 || type == GDT_CInt16 || type == GDT_CInt32) {
    return Status::InvalidArgument("raster '" + path + "' band " + std::to_string(options.band) +
                                   " is complex (" + info.type_name + ")");
  }
  info.has_mask = (gdal::GDALGetMaskFlags(band) & GMF_ALL_VALID) == 0;
  gdal::GDALGetGeoTransform(ds.get(), info.gt);  // the default (0,1,0,0,0,1) without one
  if (OGRSpatialReferenceH srs = gdal::GDALGetSpatialRef(ds.get()); srs != nullptr) {
    const char* auth = gdal::OSRGetAuthorityName(srs, nullptr);
    const char* code = gdal::OSRGetAuthorityCode(srs, nullptr);
    if (auth != nullptr && code != nullptr) {
      info.crs = std::string(auth) + ":" + code;
    } else {
      char* json = nullptr;
      if (gdal::OSRExportToPROJJSON(srs, &json, nullptr) == OGRERR_NONE && json != nullptr) {
        info.crs = json;
      }
      gdal::VSIFree(json);
    }
  }
  return info;
}

// Round `tile` down to whole blocks when it is at least one block.
std::int64_t AlignToBlocks(std::int64_t tile, std::int64_t block) {
  return tile >= block ? tile / block * block : tile;
}

}  // namespace

Status ParseTileSize(std::string_view text, PolygonizeOptions* options) {
  const std::string s(text);
  const std::size_t x = s.find('x');
  try {
    std::size_t used = 0;
    const long long w = std::stoll(s.substr(0, x), &used);
    if (used != (x == std::string::npos ? s.size() : x)) throw std::invalid_argument(s);
    long long h = w;
    if (x != std::string::npos) {
      h = std::stoll(s.substr(x + 1), &used);
      if (used != s.size() - x - 1) throw std::invalid_argument(s);
    }
    if (w <= 0 || h <= 0) throw std::invalid_argument(s);
    options->tile_width = w;
    options->tile_height = h;
    return Status::OK();
  } catch (const std::exception&) {
    return Status::InvalidArgument("--tile-size '" + s +
                                   "': expected a positive pixel count PX or WxH");
  }
}

Status RunPolygonize(const OpEnv& env, const std::string& raster, const PolygonizeOptions& options,
                     const OutputSpec& output, const RunnerOptions& runner_options,
                     RunSummary* summary, PolygonizeReport* report) {
  *summary = RunSummary{};
  PolygonizeReport local;
  if (report == nullptr) report = &local;
  *report = PolygonizeReport{};
  if (options.connectedness != 4 && options.connectedness != 8) {
    return Status::InvalidArgument("--connectedness " + std::to_string(options.connectedness) +
                                   ": expected 4 or 8");
  }
  if (options.field.empty()) return Status::InvalidArgument("--field: an empty name");
  if (options.tile_width < 0 || options.tile_height < 0) {
    return Status::InvalidArgument("--tile-size must be positive");
  }
  if (options.float_tolerance &&
      !(*options.float_tolerance > 0 && std::isfinite(*options.float_tolerance))) {
    return Status::InvalidArgument("--float-tolerance must be a positive number");
  }
  GEOLAKE_ASSIGN_OR_RETURN(RasterInfo info, OpenRaster(raster, options));
  if (info.width >= (std::int64_t{1} << 31) - 1 || info.height >= (std::int64_t{1} << 31) - 1) {
    return Status::InvalidArgument("raster '" + raster + "' is too large");
  }
  PolygonizeOptions used = options;
  // The default window: 4096 x 4096, halved while the windows of all workers would take more
  // than a quarter of --memory (not below 256).
  std::int64_t tile = kDefaultTile;
  const std::int64_t memory = runner_options.memory_bytes > 0 ? runner_options.memory_bytes
                                                              : pipeline::DefaultMemoryBudget();
  const std::int64_t workers = std::max(1, env.executor != nullptr ? env.executor->size() : 1);
  while (tile > 256 && workers * tile * tile * kWindowBytesPerPixel > memory / 4) tile /= 2;
  // ... and while there are fewer windows than two per worker (not below 1024).
  auto windows_of = [&](std::int64_t t) {
    return ((info.width + t - 1) / t) * ((info.height + t - 1) / t);
  };
  while (tile > 1024 && windows_of(tile) < 2 * workers) tile /= 2;
  used.tile_width =
      AlignToBlocks(options.tile_width > 0 ? options.tile_width : tile, info.block_width);
  used.tile_height =
      AlignToBlocks(options.tile_height > 0 ? options.tile_height : tile, info.block_height);
  report->window_bytes = workers * std::min(used.tile_width, info.width) *
                         std::min(used.tile_height, info.height) * kWindowBytesPerPixel;
  report->width = info.width;
  report->height = info.height;
  report->tile_width = used.tile_width;
  report->tile_height = used.tile_height;
  report->block_width = info.block_width;
  report->block_height = info.block_height;

  std::vector<Window> windows;
  for (std::int64_t row = 0; row < info.height; row += used.tile_height) {
    for (std::int64_t col = 0; col < info.width; col += used.tile_width) {
      windows.push_back({col, row, std::min(used.tile_width, info.width - col),
                         std::min(used.tile_height, info.height - row)});
    }
  }

  // The raster as an input of one unit per window (Input::FromUnits).
  Input::UnitList units;
  units.label = "raster '" + raster + "'";
  units.path = raster;
  units.crs = info.crs;
  {
    gdal::QuietErrors quiet;
    VSIStatBufL stat;
    std::int64_t size = 0, mtime = 0;
    if (gdal::VSIStatL(raster.c_str(), &stat) == 0) {
      size = static_cast<std::int64_t>(stat.st_size);
      mtime = static_cast<std::int64_t>(stat.st_mtime);
    }
    units.data_bytes = size;
    units.identity = nlohmann::json{{"raster", raster}, {"size", size}, {"mtime", mtime}}.dump();
  }
  for (const Window& w : windows) {
    units.keys.push_back("raster:" + raster + "#" + std::to_string(w.col) + "," +
                         std::to_string(w.row));
  }
  units.read = [](const InputUnit& unit) -> Result<FeatureBatch> {
    FeatureBatch batch;  // one row with no columns: the unit's ordinal names its window
    batch.wkb_offsets.push_back(0);
    batch.geometry_valid.push_back(0);
    batch.feature_index.push_back(unit.ordinal);
    return batch;
  };
  PolygonizeOp op(info, std::move(windows), used, report);
  return RunOperation(env, op, Input::FromUnits(std::move(units)), output, runner_options, summary);
}

std::string FormatPolygonizeReport(const PolygonizeReport& r) {
  char text[512];
  std::snprintf(text, sizeof(text),
                "polygonize: %lld polygons from %lldx%lld px in %lld windows of %lldx%lld "
                "(blocks %lldx%lld); %lld seam pieces -> %lld merged polygons; windows in "
                "work ~%s, seam pieces held %s; polygonize %.2f s busy, seam merge %.2f s\n",
                static_cast<long long>(r.polygons), static_cast<long long>(r.width),
                static_cast<long long>(r.height), static_cast<long long>(r.windows),
                static_cast<long long>(r.tile_width), static_cast<long long>(r.tile_height),
                static_cast<long long>(r.block_width), static_cast<long long>(r.block_height),
                static_cast<long long>(r.seam_pieces), static_cast<long long>(r.merged),
                FormatSize(r.window_bytes).c_str(), FormatSize(r.seam_bytes).c_str(),
                r.polygonize_seconds, r.merge_seconds);
  return text;
}

}  // namespace geolake::ops
