#include "geolake/render/render.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "geolake/core/logging.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/wkb.h"
#include "geolake/table/scan.h"
#include "geolake/table/single_value.h"

namespace geolake::render {
namespace {

// 8192² ARGB pixels are 256 MiB; larger canvases are refused rather than risking the memory
// budget of a machine that also runs ingest.
constexpr int kMaxCanvasPx = 8192;

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;

// Maps plane coordinates (x = lon/easting, y = lat/northing) to pixels: one scale for both
// axes (equirectangular), y flipped, the view centred in the canvas.
struct Projection {
  geo::Envelope view;
  double scale = 1;
  double offset_x = 0;
  double offset_y = 0;

  double X(double x) const { return offset_x + (x - view.xmin) * scale; }
  double Y(double y) const { return offset_y + (view.ymax - y) * scale; }
};

// One live data file and what is known of it.
struct FileBox {
  std::string path;
  geo::Envelope box;
  std::string partition;  // "geo_cell=0231" or "" when unpartitioned
};

std::string ValueText(const table::Value& v) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "null"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int32_t i) const { return std::to_string(i); }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(float f) const { return std::to_string(f); }
    std::string operator()(double d) const { return std::to_string(d); }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const table::Bytes& b) const {
      return std::to_string(b.size()) + " bytes";
    }
    std::string operator()(const table::DecimalValue&) const { return "decimal"; }
    std::string operator()(const table::UuidValue&) const { return "uuid"; }
    std::string operator()(const table::BoundPoint& p) const {
      return std::to_string(p.x) + ":" + std::to_string(p.y);
    }
  };
  return std::visit(Visitor{}, v);
}

std::string PartitionText(const table::TableMetadata& metadata, const table::DataFile& file) {
  const table::PartitionSpecPtr spec = metadata.default_spec();
  std::string out;
  for (std::size_t i = 0; i < file.partition.size(); ++i) {
    if (!out.empty()) out += "/";
    if (spec != nullptr && i < spec->fields().size()) out += spec->fields()[i].name + "=";
    out += ValueText(file.partition[i]);
  }
  return out;
}

// The file's box from the manifest bounds of bbox.xmin..bbox.ymax, if all four are there.
std::optional<geo::Envelope> BoundsBox(const table::Schema& schema, const table::DataFile& file) {
  double v[4];
  const char* names[4] = {"bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax"};
  for (int i = 0; i < 4; ++i) {
    const table::NestedField* field = schema.FindField(names[i]);
    if (field == nullptr) return std::nullopt;
    // Minimums come from lower bounds, maximums from upper bounds.
    const auto& bounds = i < 2 ? file.lower_bounds : file.upper_bounds;
    const auto it = bounds.find(field->id);
    if (it == bounds.end()) return std::nullopt;
    auto value = table::DeserializeValue(*field->type, it->second);
    if (!value.ok() || !std::holds_alternative<double>(*value)) return std::nullopt;
    v[i] = std::get<double>(*value);
  }
  geo::Envelope box{v[0], v[1], v[2], v[3]};
  if (box.IsEmpty()) return std::nullopt;
  return box;
}

// Calls `fn(FlatGeometry)` for each non-null geometry of a data file.
template <typename Fn>
Status ForEachGeometry(const io::FileIO& io, const std::string& path, std::stop_token stop,
                       Fn&& fn) {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> file, io.OpenRead(path));
  GEOLAKE_ASSIGN_OR_RETURN(
      auto reader,
      parquet::FileReader::Open(std::shared_ptr<const io::RandomAccessFile>(std::move(file))));
  const int leaf = reader->schema().LeafIndex("geometry");
  if (leaf < 0) {
    return Status::InvalidArgument("data file '" + path + "' has no 'geometry' column");
  }
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    if (stop.stop_requested()) return Status::Cancelled("render: stopped");
    GEOLAKE_ASSIGN_OR_RETURN(parquet::ColumnData column, reader->ReadColumn(rg, leaf));
    for (std::int64_t i = 0; i < column.num_values(); ++i) {
      auto geometry = geo::ParseWkb(geo::AsBytes(column.bytes_at(i)));
      if (!geometry.ok()) {
        return geometry.status().WithContext("data file '" + path + "', row group " +
                                             std::to_string(rg));
      }
      fn(*geometry);
    }
  }
  return Status::OK();
}

// Adds `count` coordinates from `first` as one open sub-path.
void AddPolyline(cairo_t* cr, const geo::FlatGeometry& g, std::uint32_t first, std::uint32_t count,
                 const Projection& p) {
  for (std::uint32_t c = 0; c < count; ++c) {
    const auto xy = g.coordinate(first + c);
    if (c == 0) {
      cairo_move_to(cr, p.X(xy[0]), p.Y(xy[1]));
    } else {
      cairo_line_to(cr, p.X(xy[0]), p.Y(xy[1]));
    }
  }
}

void DrawGeometry(cairo_t* cr, const geo::FlatGeometry& g, const Projection& p) {
  // Areas: every polygon ring of the geometry in one path, even-odd so holes stay open.
  bool has_area = false;
  cairo_new_path(cr);
  for (const geo::GeometryPart& part : g.parts) {
    if (part.type != geo::GeometryType::kPolygon) continue;
    for (std::uint32_t r = 0; r < part.count; ++r) {
      const geo::GeometryRing& ring = g.rings[part.offset + r];
      if (ring.count == 0) continue;
      AddPolyline(cr, g, ring.offset, ring.count, p);
      cairo_close_path(cr);
      has_area = true;
    }
  }
  if (has_area) {
    cairo_set_source_rgba(cr, 0.16, 0.42, 0.75, 0.35);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, 0.08, 0.22, 0.45, 0.9);
    cairo_set_line_width(cr, 0.7);
    cairo_stroke(cr);
  }
  bool has_line = false;
  cairo_new_path(cr);
  for (const geo::GeometryPart& part : g.parts) {
    if (part.type != geo::GeometryType::kLineString || part.count == 0) continue;
    AddPolyline(cr, g, part.offset, part.count, p);
    has_line = true;
  }
  if (has_line) {
    cairo_set_source_rgba(cr, 0.75, 0.25, 0.1, 0.9);
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
  }
  bool has_point = false;
  cairo_new_path(cr);
  for (const geo::GeometryPart& part : g.parts) {
    if (part.type != geo::GeometryType::kPoint) continue;
    const auto xy = g.coordinate(part.offset);
    if (std::isnan(xy[0]) || std::isnan(xy[1])) continue;  // POINT EMPTY
    cairo_new_sub_path(cr);
    cairo_arc(cr, p.X(xy[0]), p.Y(xy[1]), 1.6, 0, 2 * std::numbers::pi);
    has_point = true;
  }
  if (has_point) {
    cairo_set_source_rgba(cr, 0.55, 0.1, 0.45, 0.85);
    cairo_fill(cr);
  }
  cairo_new_path(cr);
}

void DrawFiles(cairo_t* cr, const std::vector<const FileBox*>& files, const Projection& p) {
  for (const FileBox* f : files) {
    const Rgb c = PartitionColour(f->partition);
    const double x = p.X(f->box.xmin);
    const double y = p.Y(f->box.ymax);
    // At least one pixel, so a file of one point still shows.
    const double w = std::max(1.0, f->box.Width() * p.scale);
    const double h = std::max(1.0, f->box.Height() * p.scale);
    cairo_rectangle(cr, x, y, w, h);
    cairo_set_source_rgba(cr, c.r, c.g, c.b, 0.07);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, c.r, c.g, c.b, 0.95);
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
  }
}

void DrawLegend(cairo_t* cr, const std::string& text, int height_px) {
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 13);
  cairo_text_extents_t extents;
  cairo_text_extents(cr, text.c_str(), &extents);
  const double pad = 5;
  const double box_h = 13 + 2 * pad;
  cairo_rectangle(cr, 0, height_px - box_h, extents.x_advance + 2 * pad, box_h);
  cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_move_to(cr, pad, height_px - pad - 2);
  cairo_show_text(cr, text.c_str());
}

cairo_status_t AppendPng(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

Rgb PartitionColour(std::string_view partition_text) {
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a, 64 bit
  for (const char ch : partition_text) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 1099511628211ULL;
  }
  // Hue from the hash; fixed saturation and value keep every colour readable on white.
  const double hue = static_cast<double>(hash % 360);
  const double s = 0.8;
  const double v = 0.85;
  const double c = v * s;
  const double x = c * (1 - std::fabs(std::fmod(hue / 60.0, 2) - 1));
  const double m = v - c;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(hue) / 60) {
    case 0:
      r = c, g = x;
      break;
    case 1:
      r = x, g = c;
      break;
    case 2:
      g = c, b = x;
      break;
    case 3:
      g = x, b = c;
      break;
    case 4:
      r = x, b = c;
      break;
    default:
      r = c, b = x;
      break;
  }
  return Rgb{r + m, g + m, b + m};
}

Result<geo::Envelope> ParseBbox(std::string_view text) {
  const std::string s(text);
  double v[4];
  int used = 0;
  const Status bad =
      Status::InvalidArgument("bbox '" + s + "': want X1,Y1,X2,Y2 with X1 < X2 and Y1 < Y2");
  const char* p = s.c_str();
  for (int i = 0; i < 4; ++i) {
    char* end = nullptr;
    v[i] = std::strtod(p, &end);
    if (end == p || !std::isfinite(v[i])) return bad;
    p = end;
    ++used;
    if (i < 3) {
      if (*p != ',') return bad;
      ++p;
    }
  }
  if (*p != '\0' || used != 4 || !(v[0] < v[2]) || !(v[1] < v[3])) return bad;
  return geo::Envelope{v[0], v[1], v[2], v[3]};
}

Result<RenderSummary> RenderTable(const io::FileIO& io, const table::TableMetadata& metadata,
                                  const RenderOptions& options, std::stop_token stop) {
  if (options.width_px < 1 || options.width_px > kMaxCanvasPx || options.height_px < 0 ||
      options.height_px > kMaxCanvasPx) {
    return Status::InvalidArgument("render: canvas size must be 1.." +
                                   std::to_string(kMaxCanvasPx) + " pixels");
  }
  if (options.bbox.has_value() && options.bbox->IsEmpty()) {
    return Status::InvalidArgument("render: the bbox is empty");
  }
  const table::SchemaPtr schema = metadata.current_schema();
  if (schema == nullptr || schema->FindField("geometry") == nullptr) {
    return Status::InvalidArgument("render: table has no 'geometry' column");
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::ScanPlan plan,
                           table::PlanScan(io, metadata, options.snapshot_id));
  if (!plan.delete_files.empty()) {
    GEOLAKE_LOG_WARN("render: {} delete files are not applied", plan.delete_files.size());
  }

  // Pass 1: every file's box (bounds, or read the geometries) and the table's extent.
  std::vector<FileBox> files;
  geo::Envelope extent;
  for (const table::ManifestEntry& entry : plan.data_files) {
    FileBox f;
    f.path = entry.data_file.file_path;
    f.partition = PartitionText(metadata, entry.data_file);
    if (auto box = BoundsBox(*schema, entry.data_file)) {
      f.box = *box;
    } else {
      GEOLAKE_RETURN_NOT_OK(ForEachGeometry(
          io, f.path, stop, [&](const geo::FlatGeometry& g) { f.box.Expand(g.GetEnvelope()); }));
    }
    extent.Expand(f.box);
    files.push_back(std::move(f));
  }

  RenderSummary summary;
  summary.files_total = static_cast<std::int64_t>(files.size());
  geo::Envelope view;
  if (options.bbox.has_value()) {
    view = *options.bbox;
  } else if (extent.IsEmpty()) {
    view = geo::Envelope{-180, -90, 180, 90};  // nothing to fit: show the lon/lat world
  } else {
    view = extent;
    // A single point or a straight line has no area; give it one unit around it.
    if (view.Width() == 0)
      view = geo::Envelope{view.xmin - 0.5, view.ymin, view.xmax + 0.5, view.ymax};
    if (view.Height() == 0)
      view = geo::Envelope{view.xmin, view.ymin - 0.5, view.xmax, view.ymax + 0.5};
    // 2% margin so outlines on the edge stay visible.
    const double mx = view.Width() * 0.02;
    const double my = view.Height() * 0.02;
    view = geo::Envelope{view.xmin - mx, view.ymin - my, view.xmax + mx, view.ymax + my};
  }
  summary.view = view;
  summary.width_px = options.width_px;
  summary.height_px =
      options.height_px > 0
          ? options.height_px
          : std::clamp(
                static_cast<int>(std::lround(options.width_px * view.Height() / view.Width())), 1,
                kMaxCanvasPx);
  Projection proj;
  proj.view = view;
  proj.scale = std::min(summary.width_px / view.Width(), summary.height_px / view.Height());
  proj.offset_x = (summary.width_px - view.Width() * proj.scale) / 2;
  proj.offset_y = (summary.height_px - view.Height() * proj.scale) / 2;

  SurfacePtr surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, summary.width_px, summary.height_px));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    return Status::Internal(std::string("render: cairo surface: ") +
                            cairo_status_to_string(cairo_surface_status(surface.get())));
  }
  ContextPtr cr(cairo_create(surface.get()));
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_paint(cr.get());
  cairo_set_fill_rule(cr.get(), CAIRO_FILL_RULE_EVEN_ODD);
  cairo_set_line_join(cr.get(), CAIRO_LINE_JOIN_ROUND);

  // Pass 2: the features of the files in view.
  std::vector<const FileBox*> drawn;
  std::set<std::string> partitions;
  geo::Envelope drawn_extent;
  double drawn_area = 0;
  for (const FileBox& f : files) {
    // A file without any geometry has an empty box and nothing to draw.
    if (!f.box.Intersects(view)) continue;
    drawn.push_back(&f);
    partitions.insert(f.partition);
    drawn_extent.Expand(f.box);
    drawn_area += f.box.Width() * f.box.Height();
    GEOLAKE_RETURN_NOT_OK(ForEachGeometry(io, f.path, stop, [&](const geo::FlatGeometry& g) {
      if (!g.GetEnvelope().Intersects(view)) return;
      DrawGeometry(cr.get(), g, proj);
      ++summary.features_drawn;
    }));
  }
  summary.files_drawn = static_cast<std::int64_t>(drawn.size());
  summary.partitions = static_cast<std::int64_t>(partitions.size());
  const double extent_area = drawn_extent.Width() * drawn_extent.Height();
  summary.overlap_ratio = extent_area > 0 ? drawn_area / extent_area : 0.0;

  if (options.files) {
    DrawFiles(cr.get(), drawn, proj);
    char legend[160];
    std::snprintf(legend, sizeof(legend),
                  "%lld files, %lld partitions, sum of file-bbox areas / table-bbox area = %.2f",
                  static_cast<long long>(summary.files_drawn),
                  static_cast<long long>(summary.partitions), summary.overlap_ratio);
    DrawLegend(cr.get(), legend, summary.height_px);
  }

  cairo_surface_flush(surface.get());
  std::string png;
  const cairo_status_t written = cairo_surface_write_to_png_stream(surface.get(), AppendPng, &png);
  if (written != CAIRO_STATUS_SUCCESS) {
    return Status::Internal(std::string("render: PNG encoding: ") +
                            cairo_status_to_string(written));
  }
  // Whatever stops the write (a missing permission, a file where a folder must be) is an I/O
  // failure of the output for the user, so it keeps one exit code.
  if (Status st = io.WriteAll(options.output, png, /*overwrite=*/true); !st.ok()) {
    return Status::IOError("render: cannot write '" + options.output + "': " + st.message());
  }
  return summary;
}

}  // namespace geolake::render
