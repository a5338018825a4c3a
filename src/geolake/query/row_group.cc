// One row group of the query scan, in steps: the candidate rows from the page index, the filter
// columns read for them (sparing bbox pages whose statistics prove the box), the rows that
// match, and the output columns read only for the pages holding matches.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "geolake/geo/geo_context.h"
#include "geolake/query/scan_internal.h"

namespace geolake::query::internal {

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

// Append value `vi` of `d` (-1: null) to `col`.
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
      col->ints.push_back(!present                                    ? 0
                          : d.type == parquet::PhysicalType::kBoolean ? d.bool_values[vi]
                          : d.type == parquet::PhysicalType::kInt32   ? d.int32_values[vi]
                                                                      : d.int64_values[vi]);
      break;
  }
}

// The state of one row group while its steps run (ProcessUnit).
struct UnitScan {
  UnitScan(const FileState& file_state, int row_group, UnitResult* result)
      : fs(file_state),
        reader(*file_state.reader),
        rg(row_group),
        rows(reader.row_group(row_group).num_rows),
        candidates{{0, rows}},
        out(result) {}

  // Read the pages of `leaf` that hold `ranges` into `into` (once per leaf), counting them.
  Status ReadLeaf(int leaf, const Ranges& ranges, std::map<int, LeafRows>* into) {
    if (leaf < 0 || into->count(leaf)) return Status::OK();
    LeafRows lr;
    GEOLAKE_ASSIGN_OR_RETURN(lr.sel, reader.ReadColumnPages(rg, leaf, ranges));
    out->pages_considered += lr.sel.pages_read + lr.sel.pages_skipped;
    out->pages_pruned += lr.sel.pages_skipped;
    lr.Index();
    into->emplace(leaf, std::move(lr));
    return Status::OK();
  }

  const FileState& fs;
  const parquet::FileReader& reader;
  const int rg;
  const std::int64_t rows;
  Ranges candidates;  // rows that may match, from the page index
  std::map<int, std::pair<parquet::OffsetIndex, parquet::ColumnIndex>> page_index;
  std::map<int, LeafRows> filter_data;  // by leaf: the filter columns' pages read
  // Box predicate i holds, by page statistics, for every row of the pages not read.
  std::array<bool, 4> proven{false, false, false, false};
  std::unique_ptr<geo::GeoContext> ctx;  // exact intersection: a GEOS context per task
  std::optional<geo::PreparedGeometry> prepared;
  int geom_leaf = -1;
  UnitResult* out;
};

Status Scanner::ProcessUnit(const Unit& unit, UnitResult* out) const {
  UnitScan scan(files_[unit.file], unit.row_group, out);
  if (filter_ && options_.page_pruning) {
    GEOLAKE_ASSIGN_OR_RETURN(scan.candidates,
                             PageRanges(scan.fs, scan.rg, *filter_, &scan.page_index));
  }
  if (scan.candidates.empty()) return CountPrunedFilterPages(scan);
  GEOLAKE_RETURN_NOT_OK(ReadFilterColumns(&scan));
  std::vector<std::int64_t> matched;
  GEOLAKE_RETURN_NOT_OK(MatchRows(&scan, &matched));
  if (matched.empty()) return Status::OK();
  return ReadMatchedRows(&scan, matched);
}

bool Scanner::BoxFastPath() const { return box_ && box_columns_[0] >= 0; }

// Every page of the filter columns was pruned: the chunks' pages all count as skipped.
Status Scanner::CountPrunedFilterPages(const UnitScan& scan) const {
  const FileState& fs = scan.fs;
  const parquet::FileReader& reader = scan.reader;
  const int rg = scan.rg;
  UnitResult* out = scan.out;
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
Status Scanner::ReadBoxColumns(UnitScan* scan) const {
  const FileState& fs = scan->fs;
  const parquet::FileReader& reader = scan->reader;
  const std::int64_t rows = scan->rows;
  std::array<Ranges, 4> box_reads;
  const std::vector<int> residual_columns =
      residual_ ? ReferencedColumns(*residual_) : std::vector<int>{};
  for (int i = 0; i < 4; ++i) {
    const int c = box_columns_[i];
    box_reads[i] = scan->candidates;
    const bool shared =
        std::find(residual_columns.begin(), residual_columns.end(), c) != residual_columns.end();
    const int leaf = fs.leaf_of_column[c];
    const auto it = scan->page_index.find(leaf);
    if (shared || leaf < 0 || it == scan->page_index.end()) continue;
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
        all_true =
            Union(all_true, {{oi.page_locations[p].first_row_index,
                              p + 1 < pages ? oi.page_locations[p + 1].first_row_index : rows}});
      }
    }
    scan->proven[i] = true;
    box_reads[i] = Subtract(scan->candidates, all_true);
  }
  for (int i = 0; i < 4; ++i) {
    GEOLAKE_RETURN_NOT_OK(
        scan->ReadLeaf(fs.leaf_of_column[box_columns_[i]], box_reads[i], &scan->filter_data));
  }
  return Status::OK();
}

// The filter's columns for the candidate rows (the bbox columns only where no page proof spared
// them), and the geometry column when the query intersects exactly.
Status Scanner::ReadFilterColumns(UnitScan* scan) const {
  const FileState& fs = scan->fs;
  if (BoxFastPath()) GEOLAKE_RETURN_NOT_OK(ReadBoxColumns(scan));
  for (int c : filter_columns_)
    GEOLAKE_RETURN_NOT_OK(
        scan->ReadLeaf(fs.leaf_of_column[c], scan->candidates, &scan->filter_data));
  // Exact intersection needs its own GEOS context per task (contexts are per thread).
  scan->geom_leaf = geometry_column_ >= 0 ? fs.leaf_of_column[geometry_column_] : -1;
  if (HasIntersects(options_)) {
    GEOLAKE_ASSIGN_OR_RETURN(scan->ctx, geo::GeoContext::Make(stop_));
    GEOLAKE_ASSIGN_OR_RETURN(auto g, IntersectsGeometry(*scan->ctx, options_));
    GEOLAKE_ASSIGN_OR_RETURN(auto p, geo::PreparedGeometry::Make(std::move(g)));
    scan->prepared.emplace(std::move(p));
    GEOLAKE_RETURN_NOT_OK(scan->ReadLeaf(scan->geom_leaf, scan->candidates, &scan->filter_data));
  }
  return Status::OK();
}

// The candidate rows that pass every filter, in ascending order: the box on the bbox columns,
// then the expression, then the exact intersection.
Status Scanner::MatchRows(UnitScan* scan, std::vector<std::int64_t>* matched) const {
  const FileState& fs = scan->fs;
  const parquet::FileReader& reader = scan->reader;
  const int rg = scan->rg;
  const bool box_fast = BoxFastPath();
  // Per table column: its filter data (null when the file lacks it) and a row cursor; rows are
  // visited in ascending order.
  std::vector<const LeafRows*> column_data(columns_.size(), nullptr);
  for (int c : filter_columns_) {
    const int leaf = fs.leaf_of_column[c];
    if (leaf >= 0) column_data[c] = &scan->filter_data.at(leaf);
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
      return scan->proven[i] && !was_read;
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
      case 0:
        return v <= box_->xmax;
      case 1:
        return v <= box_->ymax;
      case 2:
        return v >= box_->xmin;
      default:
        return v >= box_->ymin;
    }
  };
  const Expr* row_filter = box_fast ? residual_.get() : filter_.get();
  const LeafRows* geom_filter_data =
      scan->prepared && scan->geom_leaf >= 0 ? &scan->filter_data.at(scan->geom_leaf) : nullptr;
  std::size_t geom_cursor = 0;
  for (const RowRange& r : scan->candidates) {
    for (std::int64_t row = r.begin; row < r.end; ++row) {
      ++scan->out->rows_decoded;
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
      if (scan->prepared) {
        if (geom_filter_data == nullptr) continue;
        const std::int64_t vi = geom_filter_data->ValueIndex(row, &geom_cursor);
        if (vi < 0) continue;
        auto g = geo::Geometry::FromWkb(*scan->ctx, geom_filter_data->sel.data.bytes_at(vi));
        if (!g.ok()) {
          return Status(g.status().code(),
                        fmt::format("{}: row {}: {}", reader.path(),
                                    fs.row_group_first_row[rg] + row, g.status().message()));
        }
        GEOLAKE_ASSIGN_OR_RETURN(bool hit, scan->prepared->Intersects(*g));
        if (!hit) continue;
      }
      matched->push_back(row);
    }
    if (stop_.stop_requested()) return Status::Cancelled("query cancelled");
  }
  return Status::OK();
}

// The output columns and the geometry of the matched rows, read only for the pages holding
// them (what the filter already read is reused), into the unit's result.
Status Scanner::ReadMatchedRows(UnitScan* scan, const std::vector<std::int64_t>& matched) const {
  const FileState& fs = scan->fs;
  const int rg = scan->rg;
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
    if (auto it = scan->filter_data.find(leaf); it != scan->filter_data.end()) return &it->second;
    return &out_data.at(leaf);
  };
  for (int c : output_columns_) {
    const int leaf = fs.leaf_of_column[c];
    if (leaf >= 0 && !scan->filter_data.count(leaf))
      GEOLAKE_RETURN_NOT_OK(scan->ReadLeaf(leaf, wanted, &out_data));
  }
  if (scan->geom_leaf >= 0 && !scan->filter_data.count(scan->geom_leaf)) {
    GEOLAKE_RETURN_NOT_OK(scan->ReadLeaf(scan->geom_leaf, wanted, &out_data));
  }
  // Column by column, each with its own cursor over the ascending matched rows.
  geoparquet::FeatureBatch& b = scan->out->rows;
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
  const LeafRows* geom = source(scan->geom_leaf);
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

Scalar ValueScalar(const parquet::ColumnData& d, std::int64_t vi, ColumnKind kind) {
  switch (d.type) {
    case parquet::PhysicalType::kBoolean:
      return Scalar(d.bool_values[vi] != 0);
    case parquet::PhysicalType::kInt32:
      return Scalar(static_cast<std::int64_t>(d.int32_values[vi]));
    case parquet::PhysicalType::kInt64:
      return Scalar(d.int64_values[vi]);
    case parquet::PhysicalType::kFloat:
      return Scalar(static_cast<double>(d.float_values[vi]));
    case parquet::PhysicalType::kDouble:
      return Scalar(d.double_values[vi]);
    default:
      if (kind == ColumnKind::kString) return Scalar(std::string(d.bytes_at(vi)));
      return Scalar(true);  // binary: only IS [NOT] NULL looks at it
  }
}

}  // namespace geolake::query::internal
