// Pruning, level by level (docs/query.md): partitions (a geo_cell's extent grown by the largest
// row extent the manifests allow), data files (manifest bounds), row groups (footer statistics)
// and pages (the page index). Each level only drops what cannot match, and counts what it
// considered and dropped for --explain.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "geolake/formats/parquet/statistics.h"
#include "geolake/geo/s2_cell.h"
#include "geolake/geo/spatial_key.h"
#include "geolake/query/scan_internal.h"

namespace geolake::query::internal {

std::optional<ColumnBounds> Scanner::FileBounds(const table::DataFile& f, int column) const {
  const TableColumn& c = columns_[column];
  ColumnBounds b;
  b.value_count = f.record_count;
  if (auto it = f.null_value_counts.find(c.field_id); it != f.null_value_counts.end()) {
    b.null_count = it->second;
  }
  const auto lo = f.lower_bounds.find(c.field_id);
  const auto hi = f.upper_bounds.find(c.field_id);
  if (lo != f.lower_bounds.end() && hi != f.upper_bounds.end()) {
    auto lv = table::DeserializeValue(*c.type, lo->second);
    auto hv = table::DeserializeValue(*c.type, hi->second);
    if (lv.ok() && hv.ok()) {
      b.min = ToScalar(*lv);
      b.max = ToScalar(*hv);
      if (!b.min || !b.max) b.min = b.max = std::nullopt;
    }
  }
  return b;
}

Status Scanner::PrunePartitions(std::vector<const table::DataFile*>* files) {
  std::map<std::string, std::vector<const table::DataFile*>> by_cell;
  const table::PartitionSpecPtr spec = metadata_.SpecById(metadata_.default_spec_id);
  int cell_field = -1;
  if (spec && metadata_.partition_specs.size() == 1) {
    for (std::size_t i = 0; i < spec->fields().size(); ++i) {
      if (spec->fields()[i].name == "geo_cell") cell_field = static_cast<int>(i);
    }
  }
  // Distinct partition tuples are what the level considers.
  std::map<std::string, bool> tuples;
  for (const table::DataFile* f : *files) {
    std::string key;
    for (const table::Value& v : f->partition) {
      key += (v.index() == 6 ? std::get<std::string>(v) : std::string("\x01")) + '\0';
    }
    tuples[key] = true;
  }
  explain_.partitions.considered = static_cast<std::int64_t>(tuples.size());
  const auto prop = metadata_.properties.find("geolake.partition");
  const auto crs = metadata_.properties.find("geolake.crs");
  const std::string scheme = prop == metadata_.properties.end() ? "" : prop->second;
  const bool lonlat =
      crs == metadata_.properties.end() || crs->second == "EPSG:4326" || crs->second == "OGC:CRS84";
  if (!box_ || cell_field < 0 || scheme.empty() || !lonlat) {
    explain_.partition_note = !box_            ? "no box"
                              : cell_field < 0 ? "no geo_cell partition"
                              : !lonlat        ? "CRS is not lon/lat"
                                               : "no geolake.partition property";
    return Status::OK();
  }
  const bool quadkey = scheme.rfind("quadkey:", 0) == 0;
  const bool s2 = scheme.rfind("s2:", 0) == 0;
  if (!quadkey && !s2) {
    explain_.partition_note = "unknown scheme " + scheme;
    return Status::OK();
  }
  // A row's bbox centre lies in its cell, so the row lies within the cell grown by its own
  // width/height; no row of a file is wider than the file's bbox bounds span.
  const int xmin = FindColumn(columns_, "bbox.xmin"), xmax = FindColumn(columns_, "bbox.xmax");
  const int ymin = FindColumn(columns_, "bbox.ymin"), ymax = FindColumn(columns_, "bbox.ymax");
  struct Cell {
    double grow_x = 0, grow_y = 0;
    bool known = true;
    std::vector<const table::DataFile*> files;
  };
  std::map<std::string, Cell> cells;
  for (const table::DataFile* f : *files) {
    const table::Value& v = f->partition[cell_field];
    const std::string key = v.index() == 6 ? std::get<std::string>(v) : std::string();
    Cell& cell = cells[key];
    cell.files.push_back(f);
    const auto x0 = FileBounds(*f, xmin), x1 = FileBounds(*f, xmax);
    const auto y0 = FileBounds(*f, ymin), y1 = FileBounds(*f, ymax);
    if (v.index() != 6 || !x0->min || !x1->max || !y0->min || !y1->max) {
      cell.known = false;
      continue;
    }
    cell.grow_x = std::max(cell.grow_x, std::get<double>(*x1->max) - std::get<double>(*x0->min));
    cell.grow_y = std::max(cell.grow_y, std::get<double>(*y1->max) - std::get<double>(*y0->min));
  }
  std::vector<const table::DataFile*> kept;
  for (auto& [key, cell] : cells) {
    bool prune = false;
    if (cell.known && !key.empty()) {
      Result<geo::Envelope> bounds = Status::NotImplemented("");
      if (quadkey) {
        auto tile = geo::TileFromQuadkey(key);
        if (tile.ok()) bounds = geo::TileBounds(*tile);
      } else {
        auto id = geo::S2CellIdFromToken(key);
        if (id.ok()) bounds = geo::S2CellBounds(*id);
      }
      if (bounds.ok()) {
        geo::Envelope grown = *bounds;
        grown.xmin -= cell.grow_x;
        grown.xmax += cell.grow_x;
        grown.ymin -= cell.grow_y;
        grown.ymax += cell.grow_y;
        prune = !grown.Intersects(*box_);
      }
    }
    if (prune && cell_field >= 0 && spec->fields().size() == 1) {
      ++explain_.partitions.pruned;
    } else {
      kept.insert(kept.end(), cell.files.begin(), cell.files.end());
    }
  }
  explain_.partition_note = scheme + " cells grown by the largest file bbox span";
  // Keep manifest order.
  std::vector<const table::DataFile*> ordered;
  for (const table::DataFile* f : *files) {
    if (std::find(kept.begin(), kept.end(), f) != kept.end()) ordered.push_back(f);
  }
  *files = std::move(ordered);
  return Status::OK();
}

std::optional<bool> Scanner::GeometryBoundsExclude(const table::DataFile& f) const {
  if (!box_ || geometry_column_ < 0) return std::nullopt;
  const TableColumn& c = columns_[geometry_column_];
  const table::TypeId type = c.type->id();
  if (type != table::TypeId::kGeometry && type != table::TypeId::kGeography) return std::nullopt;
  const auto lo = f.lower_bounds.find(c.field_id);
  const auto hi = f.upper_bounds.find(c.field_id);
  if (lo == f.lower_bounds.end() || hi == f.upper_bounds.end()) return std::nullopt;
  auto lv = table::DeserializeValue(*c.type, lo->second);
  auto hv = table::DeserializeValue(*c.type, hi->second);
  if (!lv.ok() || !hv.ok()) return std::nullopt;
  const auto* lower = std::get_if<table::BoundPoint>(&*lv);
  const auto* upper = std::get_if<table::BoundPoint>(&*hv);
  if (lower == nullptr || upper == nullptr) return std::nullopt;
  // NaN comparisons are false, so a NaN coordinate never excludes.
  const bool y_out = upper->y < box_->ymin || lower->y > box_->ymax;
  bool x_out = false;
  if (lower->x <= upper->x) {
    x_out = upper->x < box_->xmin || lower->x > box_->xmax;
  } else if (type == table::TypeId::kGeography) {
    // Appendix G: a geography's x lower bound above its upper bound wraps the antimeridian:
    // the file holds x >= lower or x <= upper.
    x_out = box_->xmax < lower->x && box_->xmin > upper->x;
  }
  return x_out || y_out;
}

// Files: manifest lower/upper bounds of the geometry column (v3), then of the filter columns.
void Scanner::PruneFiles(const std::vector<const table::DataFile*>& files) {
  explain_.files.considered = static_cast<std::int64_t>(files.size());
  for (const table::DataFile* f : files) {
    if (const std::optional<bool> out = GeometryBoundsExclude(*f)) {
      ++explain_.files_with_geometry_bounds;
      if (*out) {
        ++explain_.files_pruned_by_geometry_bounds;
        ++explain_.files.pruned;
        continue;
      }
    }
    if (filter_) {
      std::vector<std::optional<ColumnBounds>> bounds(columns_.size());
      for (int c : filter_columns_) bounds[c] = FileBounds(*f, c);
      const bool may = MayMatch(*filter_, [&](int c) -> const ColumnBounds* {
        return bounds[c] ? &*bounds[c] : nullptr;
      });
      if (!may) {
        ++explain_.files.pruned;
        continue;
      }
    }
    FileState st;
    st.file = f;
    files_.push_back(std::move(st));
  }
}

// Row groups of the kept files: footer statistics of the filter columns; the units to decode.
std::vector<Unit> Scanner::PruneRowGroups() {
  std::vector<Unit> units;
  for (std::size_t fi = 0; fi < files_.size(); ++fi) {
    const parquet::FileReader& reader = *files_[fi].reader;
    for (int rg = 0; rg < reader.num_row_groups(); ++rg) {
      if (options_.row_group_filter && !options_.row_group_filter(files_[fi].file->file_path, rg)) {
        continue;
      }
      ++explain_.row_groups.considered;
      if (filter_) {
        std::vector<ColumnBounds> bounds(columns_.size());
        std::vector<bool> known(columns_.size(), false);
        for (int c : filter_columns_) {
          const int leaf = files_[fi].leaf_of_column[c];
          if (leaf < 0) continue;
          const parquet::Statistics* s = reader.column_statistics(rg, leaf);
          if (s == nullptr) continue;
          known[c] = true;
          ColumnBounds& b = bounds[c];
          b.value_count = reader.row_group(rg).num_rows;
          b.null_count = s->null_count;
          if (s->min_value && s->max_value) {
            const parquet::LeafColumn& lc = reader.schema().leaves()[leaf];
            b.min = DecodePlain(lc, columns_[c].info.kind, *s->min_value);
            b.max = DecodePlain(lc, columns_[c].info.kind, *s->max_value);
            if (!b.min || !b.max) b.min = b.max = std::nullopt;
          }
        }
        const bool may = MayMatch(*filter_, [&](int c) -> const ColumnBounds* {
          return known[c] ? &bounds[c] : nullptr;
        });
        if (!may) {
          ++explain_.row_groups.pruned;
          continue;
        }
      }
      const std::int64_t weight = std::max<std::int64_t>(reader.row_group(rg).total_byte_size, 1);
      units.push_back({fi, rg, 2 * weight});
    }
  }
  return units;
}

Result<Ranges> Scanner::PageRanges(
    const FileState& fs, int rg, const Expr& e,
    std::map<int, std::pair<parquet::OffsetIndex, parquet::ColumnIndex>>* cache) const {
  const std::int64_t rows = fs.reader->row_group(rg).num_rows;
  const Ranges all{{0, rows}};
  if (e.op == Expr::Op::kAnd || e.op == Expr::Op::kOr) {
    GEOLAKE_ASSIGN_OR_RETURN(Ranges a, PageRanges(fs, rg, *e.children[0], cache));
    GEOLAKE_ASSIGN_OR_RETURN(Ranges b, PageRanges(fs, rg, *e.children[1], cache));
    return e.op == Expr::Op::kAnd ? Intersect(a, b) : Union(a, b);
  }
  const int leaf = fs.leaf_of_column[e.column_index];
  if (leaf < 0) return all;
  auto it = cache->find(leaf);
  if (it == cache->end()) {
    GEOLAKE_ASSIGN_OR_RETURN(auto oi, fs.reader->ReadOffsetIndex(rg, leaf));
    GEOLAKE_ASSIGN_OR_RETURN(auto ci, fs.reader->ReadColumnIndex(rg, leaf));
    if (!oi || !ci || ci->min_values.size() != oi->page_locations.size()) return all;
    it = cache->emplace(leaf, std::make_pair(std::move(*oi), std::move(*ci))).first;
  }
  const auto& [oi, ci] = it->second;
  const parquet::LeafColumn& lc = fs.reader->schema().leaves()[leaf];
  const ColumnKind kind = columns_[e.column_index].info.kind;
  Ranges out;
  const std::size_t pages = oi.page_locations.size();
  for (std::size_t p = 0; p < pages; ++p) {
    RowRange r{oi.page_locations[p].first_row_index,
               p + 1 < pages ? oi.page_locations[p + 1].first_row_index : rows};
    ColumnBounds b;
    b.value_count = r.end - r.begin;
    if (p < ci.null_counts.size()) b.null_count = ci.null_counts[p];
    if (p < ci.null_pages.size() && ci.null_pages[p]) {
      b.null_count = b.value_count;
    } else {
      b.min = DecodePlain(lc, kind, ci.min_values[p]);
      b.max = DecodePlain(lc, kind, ci.max_values[p]);
      if (!b.min || !b.max) b.min = b.max = std::nullopt;
    }
    if (MayMatch(e, [&](int) { return &b; })) out = Union(out, {r});
  }
  return out;
}

}  // namespace geolake::query::internal
