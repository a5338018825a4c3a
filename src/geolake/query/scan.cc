#include "geolake/query/scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "geolake/core/thread_pool.h"
#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/formats/parquet/statistics.h"
#include "geolake/formats/parquet/value_text.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/s2_cell.h"
#include "geolake/geo/spatial_key.h"
#include "geolake/query/expr.h"
#include "geolake/table/scan.h"
#include "geolake/table/single_value.h"

namespace geolake::query {
namespace {

using parquet::RowRange;
using Ranges = std::vector<RowRange>;

// fn(i) for every i in [0, n): on `executor` when there is one (ThreadPool::ParallelFor), else
// in order on the calling thread, with the same contract (first error wins; a stop without an
// error is kCancelled).
Status ForEachIndex(ThreadPool* executor, std::int64_t n,
                    const std::function<Status(std::int64_t)>& fn, std::stop_token stop) {
  if (executor != nullptr) return executor->ParallelFor(n, fn, std::move(stop));
  for (std::int64_t i = 0; i < n; ++i) {
    if (stop.stop_requested()) return Status::Cancelled("parallel for stopped");
    GEOLAKE_RETURN_NOT_OK(fn(i));
  }
  return Status::OK();
}

// ---- Byte counting ---------------------------------------------------------------------------

// Wraps a data file so every byte the Parquet reader asks for is counted (explain's bytes_read).
class CountingFile : public io::RandomAccessFile {
 public:
  CountingFile(std::unique_ptr<io::RandomAccessFile> inner, std::atomic<std::int64_t>* counter)
      : inner_(std::move(inner)), counter_(counter) {}
  std::uint64_t size() const override { return inner_->size(); }
  Status ReadAt(std::uint64_t offset, std::uint64_t length, std::string* out) const override {
    GEOLAKE_RETURN_NOT_OK(inner_->ReadAt(offset, length, out));
    counter_->fetch_add(static_cast<std::int64_t>(out->size()), std::memory_order_relaxed);
    return Status::OK();
  }
  const std::string& path() const override { return inner_->path(); }

 private:
  std::unique_ptr<io::RandomAccessFile> inner_;
  std::atomic<std::int64_t>* counter_;
};

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool HasIntersects(const QueryOptions& o) {
  return !o.intersects_wkb.empty() || !o.intersects_wkt.empty();
}

Result<geo::Geometry> IntersectsGeometry(geo::GeoContext& ctx, const QueryOptions& o) {
  if (!o.intersects_wkb.empty()) return geo::Geometry::FromWkb(ctx, std::string_view(o.intersects_wkb));
  return geo::Geometry::FromWkt(ctx, o.intersects_wkt);
}

// ---- Table columns ---------------------------------------------------------------------------

struct TableColumn {
  ColumnInfo info;
  std::int32_t field_id = 0;
  table::TypePtr type;
  bool top_level = false;
};

ColumnKind KindOf(table::TypeId id) {
  switch (id) {
    case table::TypeId::kBoolean: return ColumnKind::kBool;
    case table::TypeId::kInt:
    case table::TypeId::kLong:
    case table::TypeId::kDate:
    case table::TypeId::kTime:
    case table::TypeId::kTimestamp:
    case table::TypeId::kTimestampTz:
    case table::TypeId::kTimestampNs:
    case table::TypeId::kTimestampTzNs: return ColumnKind::kInt;
    case table::TypeId::kFloat:
    case table::TypeId::kDouble: return ColumnKind::kDouble;
    case table::TypeId::kString: return ColumnKind::kString;
    default: return ColumnKind::kOther;
  }
}

void CollectColumns(const std::vector<table::NestedField>& fields, const std::string& prefix,
                    std::vector<TableColumn>* out) {
  for (const table::NestedField& f : fields) {
    const std::string name = prefix.empty() ? f.name : prefix + "." + f.name;
    if (f.type->id() == table::TypeId::kStruct) {
      CollectColumns(f.type->fields(), name, out);
    } else if (f.type->id() != table::TypeId::kList && f.type->id() != table::TypeId::kMap) {
      out->push_back({{name, KindOf(f.type->id())}, f.id, f.type, prefix.empty()});
    }
  }
}

std::optional<Scalar> ToScalar(const table::Value& v) {
  switch (v.index()) {
    case 1: return Scalar(std::get<bool>(v));
    case 2: return Scalar(static_cast<std::int64_t>(std::get<std::int32_t>(v)));
    case 3: return Scalar(std::get<std::int64_t>(v));
    case 4: return Scalar(static_cast<double>(std::get<float>(v)));
    case 5: return Scalar(std::get<double>(v));
    case 6: return Scalar(std::get<std::string>(v));
    default: return std::nullopt;
  }
}

// A PLAIN-encoded Parquet bound as a scalar of the column's kind (nullopt when unusable).
std::optional<Scalar> DecodePlain(const parquet::LeafColumn& leaf, ColumnKind kind,
                                  std::string_view bytes) {
  if (parquet::SortOrderOf(leaf) != parquet::SortOrder::kSigned && kind != ColumnKind::kString) {
    return std::nullopt;
  }
  const auto load = [&](auto zero) -> std::optional<decltype(zero)> {
    if (bytes.size() != sizeof(zero)) return std::nullopt;
    std::memcpy(&zero, bytes.data(), sizeof(zero));
    return zero;
  };
  switch (leaf.physical_type) {
    case parquet::PhysicalType::kBoolean:
      if (kind != ColumnKind::kBool || bytes.empty()) return std::nullopt;
      return Scalar(bytes[0] != 0);
    case parquet::PhysicalType::kInt32:
      if (auto v = load(std::int32_t{0}); v && kind == ColumnKind::kInt) {
        return Scalar(static_cast<std::int64_t>(*v));
      }
      return std::nullopt;
    case parquet::PhysicalType::kInt64:
      if (auto v = load(std::int64_t{0}); v && kind == ColumnKind::kInt) return Scalar(*v);
      return std::nullopt;
    case parquet::PhysicalType::kFloat:
      if (auto v = load(float{0}); v && kind == ColumnKind::kDouble) {
        return Scalar(static_cast<double>(*v));
      }
      return std::nullopt;
    case parquet::PhysicalType::kDouble:
      if (auto v = load(double{0}); v && kind == ColumnKind::kDouble) return Scalar(*v);
      return std::nullopt;
    case parquet::PhysicalType::kByteArray:
      if (kind == ColumnKind::kString) return Scalar(std::string(bytes));
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

Scalar ValueScalar(const parquet::ColumnData& d, std::int64_t vi, ColumnKind kind) {
  switch (d.type) {
    case parquet::PhysicalType::kBoolean: return Scalar(d.bool_values[vi] != 0);
    case parquet::PhysicalType::kInt32: return Scalar(static_cast<std::int64_t>(d.int32_values[vi]));
    case parquet::PhysicalType::kInt64: return Scalar(d.int64_values[vi]);
    case parquet::PhysicalType::kFloat: return Scalar(static_cast<double>(d.float_values[vi]));
    case parquet::PhysicalType::kDouble: return Scalar(d.double_values[vi]);
    default:
      if (kind == ColumnKind::kString) return Scalar(std::string(d.bytes_at(vi)));
      return Scalar(true);  // binary: only IS [NOT] NULL looks at it
  }
}

// ---- Row ranges ------------------------------------------------------------------------------

Ranges Intersect(const Ranges& a, const Ranges& b) {
  Ranges out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].begin, b[j].begin);
    const std::int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return out;
}

Ranges Union(const Ranges& a, const Ranges& b) {
  Ranges all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end(),
            [](const RowRange& x, const RowRange& y) { return x.begin < y.begin; });
  Ranges out;
  for (const RowRange& r : all) {
    if (!out.empty() && r.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// Rows of `a` that are not in `b` (both sorted and disjoint).
Ranges Subtract(const Ranges& a, const Ranges& b) {
  Ranges out;
  std::size_t j = 0;
  for (const RowRange& r : a) {
    while (j < b.size() && b[j].end <= r.begin) ++j;
    std::int64_t lo = r.begin;
    for (std::size_t k = j; k < b.size() && b[k].begin < r.end; ++k) {
      if (b[k].begin > lo) out.push_back({lo, b[k].begin});
      lo = std::max(lo, b[k].end);
    }
    if (lo < r.end) out.push_back({lo, r.end});
  }
  return out;
}

// ---- The leaf data of one row group ----------------------------------------------------------

// Pages of one column chunk read for some row ranges, with a row -> value lookup.
struct LeafRows {
  parquet::PageSelection sel;
  std::vector<std::int64_t> range_level;  // level index of each range's first row
  std::vector<std::int64_t> level_value;  // value index of each level, -1 = null

  void Index() {
    std::int64_t level = 0;
    range_level.clear();
    for (const RowRange& r : sel.rows) {
      range_level.push_back(level);
      level += r.end - r.begin;
    }
    const parquet::ColumnData& d = sel.data;
    level_value.assign(static_cast<std::size_t>(d.num_levels()), -1);
    std::int64_t value = 0;
    for (std::size_t i = 0; i < level_value.size(); ++i) {
      if (d.max_definition_level == 0 || d.def_levels[i] == d.max_definition_level) {
        level_value[i] = value++;
      }
    }
  }

  // Value index of row `row` of the group; -1 for null (or a row the pages do not cover).
  // `*range` is a cursor into sel.rows: callers visit rows in ascending order with one cursor
  // per column (starting at 0), so the lookup is amortised O(1) instead of a binary search.
  std::int64_t ValueIndex(std::int64_t row, std::size_t* range) const {
    std::size_t& k = *range;
    while (k < sel.rows.size() && sel.rows[k].end <= row) ++k;
    if (k == sel.rows.size() || row < sel.rows[k].begin) return -1;
    const std::int64_t level = range_level[k] + (row - sel.rows[k].begin);
    if (level >= static_cast<std::int64_t>(level_value.size())) return -1;
    return level_value[level];
  }
};

void AppendValue(const parquet::ColumnData& d, std::int64_t vi, geoparquet::Column* col) {
  const bool present = vi >= 0;
  col->valid.push_back(present ? 1 : 0);
  switch (col->type) {
    case geoparquet::FieldType::kDouble:
      col->doubles.push_back(!present ? 0.0
                             : d.type == parquet::PhysicalType::kFloat
                                 ? static_cast<double>(d.float_values[vi])
                                 : d.double_values[vi]);
      break;
    case geoparquet::FieldType::kString:
    case geoparquet::FieldType::kBinary:
      if (present) col->bytes.append(d.bytes_at(vi));
      col->offsets.push_back(static_cast<std::int64_t>(col->bytes.size()));
      break;
    default:
      col->ints.push_back(!present ? 0
                          : d.type == parquet::PhysicalType::kBoolean ? d.bool_values[vi]
                          : d.type == parquet::PhysicalType::kInt32   ? d.int32_values[vi]
                                                                      : d.int64_values[vi]);
      break;
  }
}

void TruncateBatch(geoparquet::FeatureBatch* b, std::int64_t n) {
  if (b->num_rows() <= n) return;
  const auto rows = static_cast<std::size_t>(n);
  for (geoparquet::Column& c : b->columns) {
    c.valid.resize(rows);
    if (!c.ints.empty()) c.ints.resize(rows);
    if (!c.doubles.empty()) c.doubles.resize(rows);
    if (c.offsets.size() > rows + 1) {
      c.offsets.resize(rows + 1);
      c.bytes.resize(static_cast<std::size_t>(c.offsets.back()));
    }
  }
  b->wkb_offsets.resize(rows + 1);
  b->wkb.resize(static_cast<std::size_t>(b->wkb_offsets.back()));
  b->geometry_valid.resize(rows);
  b->feature_index.resize(rows);
}

// ---- The scan --------------------------------------------------------------------------------

struct FileState {
  const table::DataFile* file = nullptr;
  std::unique_ptr<parquet::FileReader> reader;
  std::vector<int> leaf_of_column;  // table column index -> Parquet leaf (-1: absent)
  std::vector<std::int64_t> row_group_first_row;
};

struct Unit {
  std::size_t file = 0;
  int row_group = 0;
  std::int64_t weight_bytes = 0;
};

struct UnitResult {
  geoparquet::FeatureBatch rows;
  std::int64_t rows_decoded = 0;
  std::int64_t pages_considered = 0;
  std::int64_t pages_pruned = 0;
};

class Scanner {
 public:
  Scanner(const io::FileIO& io, const table::TableMetadata& metadata, const QueryOptions& options,
          std::stop_token stop)
      : io_(io), metadata_(metadata), options_(options), stop_(std::move(stop)) {}

  Result<QueryExplain> Run(RowSink* sink);

 private:
  Status Bind();
  std::optional<ColumnBounds> FileBounds(const table::DataFile& f, int column) const;
  Status PrunePartitions(std::vector<const table::DataFile*>* files);
  Status OpenFile(FileState* state);
  Status ProcessUnit(const Unit& unit, UnitResult* out) const;
  Result<Ranges> PageRanges(const FileState& fs, int rg, const Expr& e,
                            std::map<int, std::pair<parquet::OffsetIndex, parquet::ColumnIndex>>*
                                cache) const;

  const io::FileIO& io_;
  const table::TableMetadata& metadata_;
  const QueryOptions& options_;
  std::stop_token stop_;
  table::SchemaPtr schema_;
  std::vector<TableColumn> columns_;
  std::unique_ptr<Expr> filter_;  // box AND --where: what pruning uses
  // Rows are tested by the box directly on the bbox columns (box_columns_: xmin, ymin, xmax,
  // ymax; -1 when not double columns, then filter_ tests rows) and by residual_ (--where).
  std::array<int, 4> box_columns_{-1, -1, -1, -1};
  std::unique_ptr<Expr> residual_;
  std::vector<int> filter_columns_;
  std::vector<int> output_columns_;  // table column indices (top-level attributes)
  int geometry_column_ = -1;
  std::optional<geo::Envelope> box_;
  OutputLayout layout_;
  std::vector<FileState> files_;
  std::atomic<std::int64_t> bytes_read_{0};
  QueryExplain explain_;
};

int FindColumn(const std::vector<TableColumn>& columns, std::string_view name) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].info.name == name) return static_cast<int>(i);
  }
  return -1;
}

Status Scanner::Bind() {
  schema_ = metadata_.current_schema();
  if (explain_.snapshot_id != 0) {
    const table::Snapshot* snap = metadata_.SnapshotById(explain_.snapshot_id);
    if (snap != nullptr && snap->schema_id) {
      if (auto s = metadata_.SchemaById(*snap->schema_id)) schema_ = s;
    }
  }
  if (!schema_) return Status::CorruptData("table metadata has no current schema");
  CollectColumns(schema_->fields(), "", &columns_);
  std::vector<ColumnInfo> infos;
  for (const TableColumn& c : columns_) infos.push_back(c.info);

  geometry_column_ = FindColumn(columns_, geoparquet::kGeometryColumn);
  std::unique_ptr<Expr> filter;
  if (!options_.where.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(filter, ParseExpression(options_.where));
  }
  // The box to prune with: --bbox, narrowed by the --intersects geometry's envelope.
  box_ = options_.bbox;
  if (HasIntersects(options_)) {
    GEOLAKE_ASSIGN_OR_RETURN(auto ctx, geo::GeoContext::Make());
    auto g = IntersectsGeometry(*ctx, options_);
    if (!g.ok()) return Status::InvalidArgument("--intersects: " + g.status().message());
    GEOLAKE_ASSIGN_OR_RETURN(geo::Envelope env, g->Bounds());
    if (geometry_column_ < 0) return Status::InvalidArgument("--intersects: table has no geometry");
    if (box_) {
      geo::Envelope both;
      both.xmin = std::max(box_->xmin, env.xmin);
      both.ymin = std::max(box_->ymin, env.ymin);
      both.xmax = std::min(box_->xmax, env.xmax);
      both.ymax = std::min(box_->ymax, env.ymax);
      box_ = both;
    } else {
      box_ = env;
    }
  }
  if (box_) {
    for (const char* c : {"bbox.xmin", "bbox.xmax", "bbox.ymin", "bbox.ymax"}) {
      if (FindColumn(columns_, c) < 0) {
        return Status::InvalidArgument(std::string("--bbox needs the layout's bbox column; the "
                                                   "table has no ") + c);
      }
    }
    // A row's bbox overlaps the box: xmin <= X2, xmax >= X1, ymin <= Y2, ymax >= Y1.
    std::unique_ptr<Expr> box_filter;
    box_filter = MakeAnd(std::move(box_filter),
                         MakeCompare("bbox.xmin", Expr::Cmp::kLe, Scalar(box_->xmax)));
    box_filter = MakeAnd(std::move(box_filter),
                         MakeCompare("bbox.xmax", Expr::Cmp::kGe, Scalar(box_->xmin)));
    box_filter = MakeAnd(std::move(box_filter),
                         MakeCompare("bbox.ymin", Expr::Cmp::kLe, Scalar(box_->ymax)));
    box_filter = MakeAnd(std::move(box_filter),
                         MakeCompare("bbox.ymax", Expr::Cmp::kGe, Scalar(box_->ymin)));
    filter = MakeAnd(std::move(box_filter), std::move(filter));
  }
  if (filter) {
    GEOLAKE_RETURN_NOT_OK(BindExpression(filter.get(), infos));
    filter_columns_ = ReferencedColumns(*filter);
    explain_.filter = ExprToString(*filter);
  }
  filter_ = std::move(filter);
  if (box_) {
    const char* names[] = {"bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax"};
    for (int i = 0; i < 4; ++i) box_columns_[i] = FindColumn(columns_, names[i]);
    const bool doubles = std::all_of(box_columns_.begin(), box_columns_.end(), [&](int c) {
      return columns_[c].info.kind == ColumnKind::kDouble;
    });
    if (!doubles) box_columns_.fill(-1);
    if (doubles && !options_.where.empty()) {
      GEOLAKE_ASSIGN_OR_RETURN(residual_, ParseExpression(options_.where));
      GEOLAKE_RETURN_NOT_OK(BindExpression(residual_.get(), infos));
    }
  }

  if (options_.columns.empty()) {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const std::string& n = columns_[i].info.name;
      if (columns_[i].top_level && static_cast<int>(i) != geometry_column_ &&
          n != geoparquet::kHilbertColumn && n != geoparquet::kCellColumn) {
        output_columns_.push_back(static_cast<int>(i));
      }
    }
  } else {
    for (const std::string& name : options_.columns) {
      const int c = FindColumn(columns_, name);
      if (c < 0 || !columns_[c].top_level) {
        return Status::InvalidArgument("--columns: unknown column '" + name + "'");
      }
      if (c != geometry_column_) output_columns_.push_back(c);
    }
  }
  return Status::OK();
}

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
  const bool lonlat = crs == metadata_.properties.end() || crs->second == "EPSG:4326" ||
                      crs->second == "OGC:CRS84";
  if (!box_ || cell_field < 0 || scheme.empty() || !lonlat) {
    explain_.partition_note = !box_ ? "no box" : cell_field < 0 ? "no geo_cell partition"
                              : !lonlat ? "CRS is not lon/lat" : "no geolake.partition property";
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

Status Scanner::OpenFile(FileState* state) {
  GEOLAKE_ASSIGN_OR_RETURN(auto raw, io_.OpenRead(state->file->file_path));
  auto counted = std::make_shared<CountingFile>(std::move(raw), &bytes_read_);
  GEOLAKE_ASSIGN_OR_RETURN(state->reader, parquet::FileReader::Open(counted));
  const parquet::Schema& ps = state->reader->schema();
  state->leaf_of_column.assign(columns_.size(), -1);
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    for (int l = 0; l < ps.num_leaves(); ++l) {
      if (ps.leaves()[l].field_id && *ps.leaves()[l].field_id == columns_[c].field_id) {
        state->leaf_of_column[c] = l;
      }
    }
    if (state->leaf_of_column[c] < 0) state->leaf_of_column[c] = ps.LeafIndex(columns_[c].info.name);
  }
  std::int64_t first = 0;
  for (int rg = 0; rg < state->reader->num_row_groups(); ++rg) {
    state->row_group_first_row.push_back(first);
    first += state->reader->row_group(rg).num_rows;
  }
  return Status::OK();
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

Status Scanner::ProcessUnit(const Unit& unit, UnitResult* out) const {
  const FileState& fs = files_[unit.file];
  const parquet::FileReader& reader = *fs.reader;
  const int rg = unit.row_group;
  const std::int64_t rows = reader.row_group(rg).num_rows;
  Ranges candidates{{0, rows}};
  std::map<int, std::pair<parquet::OffsetIndex, parquet::ColumnIndex>> page_index;
  if (filter_ && options_.page_pruning) {
    GEOLAKE_ASSIGN_OR_RETURN(candidates, PageRanges(fs, rg, *filter_, &page_index));
  }
  const auto read_leaf = [&](int leaf, const Ranges& ranges,
                             std::map<int, LeafRows>* into) -> Status {
    if (leaf < 0 || into->count(leaf)) return Status::OK();
    LeafRows lr;
    GEOLAKE_ASSIGN_OR_RETURN(lr.sel, reader.ReadColumnPages(rg, leaf, ranges));
    out->pages_considered += lr.sel.pages_read + lr.sel.pages_skipped;
    out->pages_pruned += lr.sel.pages_skipped;
    lr.Index();
    into->emplace(leaf, std::move(lr));
    return Status::OK();
  };
  std::map<int, LeafRows> filter_data;
  std::vector<std::int64_t> matched;
  if (candidates.empty()) {
    // Every page of the filter columns was pruned: the chunks' pages all count as skipped.
    for (int c : filter_columns_) {
      const int leaf = fs.leaf_of_column[c];
      if (leaf < 0) continue;
      GEOLAKE_ASSIGN_OR_RETURN(auto oi, reader.ReadOffsetIndex(rg, leaf));
      const std::int64_t n = oi ? static_cast<std::int64_t>(oi->page_locations.size()) : 1;
      out->pages_considered += n;
      out->pages_pruned += n;
    }
    return Status::OK();
  }
  // A box predicate (xmin <= X2, ymin <= Y2, xmax >= X1, ymax >= Y1) that a page's statistics
  // prove for every row of the page needs no values from that page: those pages of the bbox
  // column are not read (unless --where reads the column too).
  const bool box_fast = box_ && box_columns_[0] >= 0;
  std::array<bool, 4> proven{false, false, false, false};
  std::array<Ranges, 4> box_reads;
  if (box_fast) {
    const std::vector<int> residual_columns =
        residual_ ? ReferencedColumns(*residual_) : std::vector<int>{};
    for (int i = 0; i < 4; ++i) {
      const int c = box_columns_[i];
      box_reads[i] = candidates;
      const bool shared = std::find(residual_columns.begin(), residual_columns.end(), c) !=
                          residual_columns.end();
      const int leaf = fs.leaf_of_column[c];
      const auto it = page_index.find(leaf);
      if (shared || leaf < 0 || it == page_index.end()) continue;
      const auto& [oi, ci] = it->second;
      const parquet::LeafColumn& lc = reader.schema().leaves()[leaf];
      Ranges all_true;
      const std::size_t pages = oi.page_locations.size();
      for (std::size_t p = 0; p < pages; ++p) {
        if (p >= ci.null_counts.size() || ci.null_counts[p] != 0 ||
            (p < ci.null_pages.size() && ci.null_pages[p])) {
          continue;
        }
        const auto lo = DecodePlain(lc, ColumnKind::kDouble, ci.min_values[p]);
        const auto hi = DecodePlain(lc, ColumnKind::kDouble, ci.max_values[p]);
        if (!lo || !hi) continue;
        const bool all = i < 2 ? std::get<double>(*hi) <= (i == 0 ? box_->xmax : box_->ymax)
                               : std::get<double>(*lo) >= (i == 2 ? box_->xmin : box_->ymin);
        if (all) {
          all_true = Union(all_true, {{oi.page_locations[p].first_row_index,
                                       p + 1 < pages ? oi.page_locations[p + 1].first_row_index
                                                     : rows}});
        }
      }
      proven[i] = true;
      box_reads[i] = Subtract(candidates, all_true);
    }
    for (int i = 0; i < 4; ++i) {
      GEOLAKE_RETURN_NOT_OK(read_leaf(fs.leaf_of_column[box_columns_[i]], box_reads[i], &filter_data));
    }
  }
  for (int c : filter_columns_) GEOLAKE_RETURN_NOT_OK(read_leaf(fs.leaf_of_column[c], candidates, &filter_data));

  // Exact intersection needs its own GEOS context per task (contexts are per thread).
  std::unique_ptr<geo::GeoContext> ctx;
  std::optional<geo::PreparedGeometry> prepared;
  const int geom_leaf = geometry_column_ >= 0 ? fs.leaf_of_column[geometry_column_] : -1;
  if (HasIntersects(options_)) {
    GEOLAKE_ASSIGN_OR_RETURN(ctx, geo::GeoContext::Make(stop_));
    GEOLAKE_ASSIGN_OR_RETURN(auto g, IntersectsGeometry(*ctx, options_));
    GEOLAKE_ASSIGN_OR_RETURN(auto p, geo::PreparedGeometry::Make(std::move(g)));
    prepared.emplace(std::move(p));
    GEOLAKE_RETURN_NOT_OK(read_leaf(geom_leaf, candidates, &filter_data));
  }
  // Per table column: its filter data (null when the file lacks it) and a row cursor; rows are
  // visited in ascending order.
  std::vector<const LeafRows*> column_data(columns_.size(), nullptr);
  for (int c : filter_columns_) {
    const int leaf = fs.leaf_of_column[c];
    if (leaf >= 0) column_data[c] = &filter_data.at(leaf);
  }
  std::vector<std::size_t> cursor(columns_.size(), 0);
  const auto value_index = [&](int c, std::int64_t row) -> std::int64_t {
    return column_data[c] != nullptr ? column_data[c]->ValueIndex(row, &cursor[c]) : -1;
  };
  // Box predicate i (0: xmin <= X2, 1: ymin <= Y2, 2: xmax >= X1, 3: ymax >= Y1) on the bbox
  // columns' values directly (null or absent: no match, as the expression's SQL semantics
  // decide); a row in a page that was not read because its statistics proved the predicate
  // passes. The rest of the filter goes through Evaluate.
  const auto holds = [&](int i, std::int64_t row) {
    const int c = box_columns_[i];
    const LeafRows* lr = column_data[c];
    if (lr == nullptr) return false;
    std::size_t& k = cursor[c];
    const std::int64_t vi = lr->ValueIndex(row, &k);
    if (vi < 0) {
      const bool was_read = k < lr->sel.rows.size() && lr->sel.rows[k].begin <= row;
      return proven[i] && !was_read;
    }
    const parquet::ColumnData& d = lr->sel.data;
    double v = 0;
    if (d.type == parquet::PhysicalType::kDouble) {
      v = d.double_values[vi];
    } else if (d.type == parquet::PhysicalType::kFloat) {
      v = d.float_values[vi];
    } else {
      return false;
    }
    switch (i) {
      case 0: return v <= box_->xmax;
      case 1: return v <= box_->ymax;
      case 2: return v >= box_->xmin;
      default: return v >= box_->ymin;
    }
  };
  const Expr* row_filter = box_fast ? residual_.get() : filter_.get();
  const LeafRows* geom_filter_data = prepared && geom_leaf >= 0 ? &filter_data.at(geom_leaf) : nullptr;
  std::size_t geom_cursor = 0;
  for (const RowRange& r : candidates) {
    for (std::int64_t row = r.begin; row < r.end; ++row) {
      ++out->rows_decoded;
      if (box_fast && !(holds(0, row) && holds(1, row) && holds(2, row) && holds(3, row))) {
        continue;
      }
      if (row_filter != nullptr) {
        const auto value = [&](int c) -> Scalar {
          const std::int64_t vi = value_index(c, row);
          if (vi < 0) return Scalar();
          return ValueScalar(column_data[c]->sel.data, vi, columns_[c].info.kind);
        };
        if (Evaluate(*row_filter, value) != Truth::kTrue) continue;
      }
      if (prepared) {
        if (geom_filter_data == nullptr) continue;
        const std::int64_t vi = geom_filter_data->ValueIndex(row, &geom_cursor);
        if (vi < 0) continue;
        auto g = geo::Geometry::FromWkb(*ctx, geom_filter_data->sel.data.bytes_at(vi));
        if (!g.ok()) {
          return Status(g.status().code(), fmt::format("{}: row {}: {}", reader.path(),
                                                       fs.row_group_first_row[rg] + row,
                                                       g.status().message()));
        }
        GEOLAKE_ASSIGN_OR_RETURN(bool hit, prepared->Intersects(*g));
        if (!hit) continue;
      }
      matched.push_back(row);
    }
    if (stop_.stop_requested()) return Status::Cancelled("query cancelled");
  }
  if (matched.empty()) return Status::OK();

  // Read the output columns only for the pages holding matched rows.
  Ranges wanted;
  for (std::int64_t row : matched) {
    if (!wanted.empty() && wanted.back().end == row) {
      ++wanted.back().end;
    } else {
      wanted.push_back({row, row + 1});
    }
  }
  std::map<int, LeafRows> out_data;
  const auto source = [&](int leaf) -> const LeafRows* {
    if (leaf < 0) return nullptr;
    if (auto it = filter_data.find(leaf); it != filter_data.end()) return &it->second;
    return &out_data.at(leaf);
  };
  for (int c : output_columns_) {
    const int leaf = fs.leaf_of_column[c];
    if (leaf >= 0 && !filter_data.count(leaf)) GEOLAKE_RETURN_NOT_OK(read_leaf(leaf, wanted, &out_data));
  }
  if (geom_leaf >= 0 && !filter_data.count(geom_leaf)) {
    GEOLAKE_RETURN_NOT_OK(read_leaf(geom_leaf, wanted, &out_data));
  }
  // Column by column, each with its own cursor over the ascending matched rows.
  geoparquet::FeatureBatch& b = out->rows;
  b.columns.resize(output_columns_.size());
  static const parquet::ColumnData kNoData;
  for (std::size_t j = 0; j < output_columns_.size(); ++j) {
    geoparquet::Column& col = b.columns[j];
    col.type = layout_.fields[j].type;
    col.valid.reserve(matched.size());
    const LeafRows* lr = source(fs.leaf_of_column[output_columns_[j]]);
    std::size_t k = 0;
    for (std::int64_t row : matched) {
      if (lr == nullptr) {
        AppendValue(kNoData, -1, &col);
      } else {
        AppendValue(lr->sel.data, lr->ValueIndex(row, &k), &col);
      }
    }
  }
  const LeafRows* geom = source(geom_leaf);
  b.wkb_offsets.reserve(b.wkb_offsets.size() + matched.size());
  b.geometry_valid.reserve(matched.size());
  b.feature_index.reserve(matched.size());
  std::size_t k = 0;
  for (std::int64_t row : matched) {
    const std::int64_t gi = geom ? geom->ValueIndex(row, &k) : -1;
    if (gi >= 0) b.wkb.append(geom->sel.data.bytes_at(gi));
    b.wkb_offsets.push_back(static_cast<std::int64_t>(b.wkb.size()));
    b.geometry_valid.push_back(gi >= 0 ? 1 : 0);
    b.feature_index.push_back(fs.row_group_first_row[rg] + row);
  }
  return Status::OK();
}

Result<QueryExplain> Scanner::Run(RowSink* sink) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuSeconds();
  GEOLAKE_ASSIGN_OR_RETURN(auto snapshot,
                           ResolveSnapshot(metadata_, options_.snapshot_id, options_.as_of_ms));
  explain_.snapshot_id = snapshot.value_or(0);
  GEOLAKE_RETURN_NOT_OK(Bind());

  OutputLayout& layout = layout_;
  for (int c : output_columns_) {
    // The type is refined per file from its Parquet leaf; the table type decides here.
    geoparquet::FieldType t = geoparquet::FieldType::kString;
    switch (columns_[c].type->id()) {
      case table::TypeId::kBoolean:
        t = geoparquet::FieldType::kBool;
        break;
      case table::TypeId::kInt:
      case table::TypeId::kLong:
      case table::TypeId::kTime:
        t = geoparquet::FieldType::kInt64;
        break;
      case table::TypeId::kDate:
        t = geoparquet::FieldType::kDate;
        break;
      case table::TypeId::kTimestamp:
      case table::TypeId::kTimestampTz:
        t = geoparquet::FieldType::kTimestamp;
        break;
      case table::TypeId::kFloat:
      case table::TypeId::kDouble:
        t = geoparquet::FieldType::kDouble;
        break;
      case table::TypeId::kString:
        t = geoparquet::FieldType::kString;
        break;
      default:
        t = geoparquet::FieldType::kBinary;
        break;
    }
    layout.fields.push_back({columns_[c].info.name, t});
  }
  if (auto it = metadata_.properties.find("geolake.crs"); it != metadata_.properties.end()) {
    layout.crs = it->second;
  }
  layout.layer_name = "query";
  if (sink != nullptr) GEOLAKE_RETURN_NOT_OK(sink->Begin(layout));

  table::ScanPlan plan;
  if (snapshot) {
    GEOLAKE_ASSIGN_OR_RETURN(plan, table::PlanScan(io_, metadata_, snapshot));
  }
  if (!plan.delete_files.empty()) {
    return Status::NotImplemented("query: tables with delete files are not supported yet");
  }
  std::vector<const table::DataFile*> files;
  for (const table::ManifestEntry& e : plan.data_files) {
    explain_.table_bytes += e.data_file.file_size_in_bytes;
    files.push_back(&e.data_file);
  }
  GEOLAKE_RETURN_NOT_OK(PrunePartitions(&files));

  // Files: manifest bounds.
  explain_.files.considered = static_cast<std::int64_t>(files.size());
  for (const table::DataFile* f : files) {
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

  // Open the kept files (footers) in parallel.
  GEOLAKE_RETURN_NOT_OK(ForEachIndex(
      options_.executor, static_cast<std::int64_t>(files_.size()),
      [&](std::int64_t i) { return OpenFile(&files_[static_cast<std::size_t>(i)]); }, stop_));

  // Row groups: footer statistics.
  std::vector<Unit> units;
  for (std::size_t fi = 0; fi < files_.size(); ++fi) {
    const parquet::FileReader& reader = *files_[fi].reader;
    for (int rg = 0; rg < reader.num_row_groups(); ++rg) {
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

  // Decode windows of row groups in parallel; hand results over in table order.
  std::int64_t returned = 0;
  std::size_t next = 0;
  const int workers = options_.executor != nullptr ? options_.executor->size() : 1;
  const std::size_t max_window = static_cast<std::size_t>(std::max(1, workers)) * 4;
  while (next < units.size()) {
    if (options_.limit >= 0 && returned >= options_.limit) break;
    std::size_t end = next;
    std::int64_t budget = 0;
    while (end < units.size() && end - next < max_window &&
           (end == next || budget + units[end].weight_bytes <= options_.memory_bytes)) {
      budget += units[end].weight_bytes;
      ++end;
    }
    std::vector<UnitResult> results(end - next);
    GEOLAKE_RETURN_NOT_OK(ForEachIndex(
        options_.executor, static_cast<std::int64_t>(end - next),
        [&](std::int64_t i) {
          return ProcessUnit(units[next + static_cast<std::size_t>(i)],
                             &results[static_cast<std::size_t>(i)]);
        },
        stop_));
    for (std::size_t i = 0; i < results.size(); ++i) {
      UnitResult& r = results[i];
      explain_.rows_decoded += r.rows_decoded;
      explain_.pages.considered += r.pages_considered;
      explain_.pages.pruned += r.pages_pruned;
      explain_.rows_matched += r.rows.num_rows();
      if (options_.limit >= 0) TruncateBatch(&r.rows, std::max<std::int64_t>(0, options_.limit - returned));
      if (r.rows.num_rows() == 0) continue;
      returned += r.rows.num_rows();
      if (sink != nullptr) {
        r.rows.fields = layout.fields;
        GEOLAKE_RETURN_NOT_OK(sink->Write(files_[units[next + i].file].file->file_path, r.rows));
      }
    }
    next = end;
    if (stop_.stop_requested()) return Status::Cancelled("query cancelled");
  }
  if (sink != nullptr) GEOLAKE_RETURN_NOT_OK(sink->Finish());
  explain_.rows_returned = returned;
  explain_.bytes_read = bytes_read_.load();
  explain_.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  explain_.cpu_seconds = ProcessCpuSeconds() - cpu_start;
  return explain_;
}

}  // namespace

Result<std::optional<std::int64_t>> ResolveSnapshot(const table::TableMetadata& metadata,
                                                    std::optional<std::int64_t> snapshot_id,
                                                    std::optional<std::int64_t> as_of_ms) {
  if (snapshot_id) {
    if (metadata.SnapshotById(*snapshot_id) == nullptr) {
      return Status::NotFound(fmt::format("snapshot {} not found", *snapshot_id));
    }
    return std::optional<std::int64_t>(*snapshot_id);
  }
  if (as_of_ms) {
    std::optional<std::int64_t> best;
    std::int64_t best_ms = 0;
    for (const table::SnapshotLogEntry& e : metadata.snapshot_log) {
      if (e.timestamp_ms <= *as_of_ms && (!best || e.timestamp_ms >= best_ms)) {
        best = e.snapshot_id;
        best_ms = e.timestamp_ms;
      }
    }
    if (!best) {
      return Status::NotFound(fmt::format("no snapshot at or before {} ms", *as_of_ms));
    }
    return best;
  }
  return metadata.current_snapshot_id;
}

Result<std::int64_t> ParseTimestampMillis(std::string_view text) {
  const std::string s(text);
  const auto bad = [&]() {
    return Status::InvalidArgument("time '" + s +
                                   "': expected ISO 8601 (2026-01-02T03:04:05Z) or epoch ms");
  };
  if (s.empty()) return bad();
  if (s.find_first_not_of("0123456789") == std::string::npos) {
    if (s.size() > 18) return bad();
    return static_cast<std::int64_t>(std::stoll(s));
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &consumed) != 3 || consumed != 10) {
    return bad();
  }
  std::size_t pos = 10;
  std::int64_t millis = 0;
  std::int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'T' || s[pos] == ' ')) {
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d:%2d%n", &h, &mi, &sec, &consumed) != 3 ||
        consumed != 8) {
      return bad();
    }
    pos += 9;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      int digits = 0;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        if (digits < 3) millis = millis * 10 + (s[pos] - '0');
        ++digits;
        ++pos;
      }
      for (; digits < 3; ++digits) millis *= 10;
    }
    if (pos < s.size() && s[pos] == 'Z') {
      ++pos;
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
      int oh = 0, om = 0;
      if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d%n", &oh, &om, &consumed) != 2 ||
          consumed != 5) {
        return bad();
      }
      offset_s = (s[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      pos += 6;
    }
  }
  if (pos != s.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) {
    return bad();
  }
  // Days from the civil date (proleptic Gregorian), independent of the local time zone.
  const int yy = y - (mo <= 2 ? 1 : 0);
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = static_cast<std::int64_t>(era) * 146097 + doe - 719468;
  const std::int64_t seconds = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
  return seconds * 1000 + millis;
}

std::string QueryExplain::ToText() const {
  const auto pct = [](std::int64_t a, std::int64_t b) {
    return b > 0 ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0;
  };
  const auto level = [](const char* name, const LevelCounts& c) {
    return fmt::format("{:<11} considered {:>8}  pruned {:>8}  kept {:>8}\n", name, c.considered,
                       c.pruned, c.kept());
  };
  std::string out = fmt::format("snapshot    {}\n", snapshot_id);
  out += "filter      " + (filter.empty() ? std::string("(none)") : filter) + "\n";
  out += level("partitions", partitions);
  if (!partition_note.empty()) out += "            (" + partition_note + ")\n";
  out += level("files", files);
  out += level("row groups", row_groups);
  out += level("pages", pages);
  out += fmt::format("rows        decoded {}  matched {}  returned {}\n", rows_decoded,
                     rows_matched, rows_returned);
  out += fmt::format("bytes       read {} of {} table bytes ({:.2f}%)\n", bytes_read, table_bytes,
                     pct(bytes_read, table_bytes));
  out += fmt::format("time        {:.3f} s (cpu {:.3f} s)\n", seconds, cpu_seconds);
  return out;
}

std::string QueryExplain::ToJson() const {
  const auto level = [](const LevelCounts& c) {
    return fmt::format("{{\"considered\":{},\"pruned\":{},\"kept\":{}}}", c.considered, c.pruned,
                       c.kept());
  };
  return fmt::format(
      "{{\"snapshot_id\":{},\"filter\":{},\"partitions\":{},\"files\":{},\"row_groups\":{},"
      "\"pages\":{},\"rows_decoded\":{},\"rows_matched\":{},\"rows_returned\":{},"
      "\"bytes_read\":{},\"table_bytes\":{},\"seconds\":{:.6f},\"cpu_seconds\":{:.6f}}}",
      snapshot_id, parquet::JsonQuote(filter), level(partitions), level(files), level(row_groups),
      level(pages), rows_decoded, rows_matched, rows_returned, bytes_read, table_bytes, seconds,
      cpu_seconds);
}

Result<QueryExplain> RunQuery(const io::FileIO& io, const table::TableMetadata& metadata,
                              const QueryOptions& options, RowSink* sink, std::stop_token stop) {
  Scanner scanner(io, metadata, options, std::move(stop));
  return scanner.Run(sink);
}

}  // namespace geolake::query
