#include "geolake/query/scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>

#include "geolake/core/little_endian.h"
#include "geolake/core/thread_pool.h"
#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/formats/parquet/statistics.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/geos.h"
#include "geolake/query/scan_internal.h"
#include "geolake/table/scan.h"
#include "geolake/table/time_travel.h"

namespace geolake::query {
namespace internal {
namespace {

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

ColumnKind KindOf(table::TypeId id) {
  switch (id) {
    case table::TypeId::kBoolean:
      return ColumnKind::kBool;
    case table::TypeId::kInt:
    case table::TypeId::kLong:
    case table::TypeId::kDate:
    case table::TypeId::kTime:
    case table::TypeId::kTimestamp:
    case table::TypeId::kTimestampTz:
    case table::TypeId::kTimestampNs:
    case table::TypeId::kTimestampTzNs:
      return ColumnKind::kInt;
    case table::TypeId::kFloat:
    case table::TypeId::kDouble:
      return ColumnKind::kDouble;
    case table::TypeId::kString:
      return ColumnKind::kString;
    default:
      return ColumnKind::kOther;
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

}  // namespace

bool HasIntersects(const QueryOptions& o) {
  return !o.intersects_wkb.empty() || !o.intersects_wkt.empty();
}

Result<geo::Geometry> IntersectsGeometry(geo::GeoContext& ctx, const QueryOptions& o) {
  if (!o.intersects_wkb.empty())
    return geo::Geometry::FromWkb(ctx, std::string_view(o.intersects_wkb));
  return geo::Geometry::FromWkt(ctx, o.intersects_wkt);
}

std::optional<Scalar> ToScalar(const table::Value& v) {
  switch (v.index()) {
    case 1:
      return Scalar(std::get<bool>(v));
    case 2:
      return Scalar(static_cast<std::int64_t>(std::get<std::int32_t>(v)));
    case 3:
      return Scalar(std::get<std::int64_t>(v));
    case 4:
      return Scalar(static_cast<double>(std::get<float>(v)));
    case 5:
      return Scalar(std::get<double>(v));
    case 6:
      return Scalar(std::get<std::string>(v));
    default:
      return std::nullopt;
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
    return LoadLE<decltype(zero)>(bytes.data());
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
                                                   "table has no ") +
                                       c);
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
    if (state->leaf_of_column[c] < 0)
      state->leaf_of_column[c] = ps.LeafIndex(columns_[c].info.name);
  }
  std::int64_t first = 0;
  for (int rg = 0; rg < state->reader->num_row_groups(); ++rg) {
    state->row_group_first_row.push_back(first);
    first += state->reader->row_group(rg).num_rows;
  }
  return Status::OK();
}

Status Scanner::PlanFiles(std::optional<std::int64_t> snapshot, table::ScanPlan* plan) {
  if (snapshot) {
    GEOLAKE_ASSIGN_OR_RETURN(*plan, table::PlanScan(io_, metadata_, snapshot));
  }
  if (!plan->delete_files.empty()) {
    return Status::NotImplemented("query: tables with delete files are not supported yet");
  }
  std::vector<const table::DataFile*> files;
  for (const table::ManifestEntry& e : plan->data_files) {
    explain_.table_bytes += e.data_file.file_size_in_bytes;
    files.push_back(&e.data_file);
  }
  GEOLAKE_RETURN_NOT_OK(PrunePartitions(&files));
  PruneFiles(files);
  return Status::OK();
}

Result<std::vector<std::string>> Scanner::SelectFiles() {
  GEOLAKE_ASSIGN_OR_RETURN(
      auto snapshot, table::ResolveSnapshot(metadata_, options_.snapshot_id, options_.as_of_ms));
  explain_.snapshot_id = snapshot.value_or(0);
  GEOLAKE_RETURN_NOT_OK(Bind());
  table::ScanPlan plan;
  GEOLAKE_RETURN_NOT_OK(PlanFiles(snapshot, &plan));
  std::vector<std::string> paths;
  paths.reserve(files_.size());
  for (const FileState& f : files_) paths.push_back(f.file->file_path);
  return paths;
}

Result<QueryExplain> Scanner::Run(RowSink* sink) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuSeconds();
  GEOLAKE_ASSIGN_OR_RETURN(
      auto snapshot, table::ResolveSnapshot(metadata_, options_.snapshot_id, options_.as_of_ms));
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
  GEOLAKE_RETURN_NOT_OK(PlanFiles(snapshot, &plan));

  // Open the kept files (footers) in parallel.
  GEOLAKE_RETURN_NOT_OK(ForEachIndex(
      options_.executor, static_cast<std::int64_t>(files_.size()),
      [&](std::int64_t i) { return OpenFile(&files_[static_cast<std::size_t>(i)]); }, stop_));

  // Row groups: footer statistics.
  const std::vector<Unit> units = PruneRowGroups();

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
      if (options_.limit >= 0)
        TruncateBatch(&r.rows, std::max<std::int64_t>(0, options_.limit - returned));
      returned += r.rows.num_rows();
      if (sink != nullptr) {
        r.rows.fields = layout.fields;
        const Unit& unit = units[next + i];
        GEOLAKE_RETURN_NOT_OK(
            sink->WriteRowGroup(files_[unit.file].file->file_path, unit.row_group, r.rows));
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

}  // namespace internal

Result<QueryExplain> RunQuery(const io::FileIO& io, const table::TableMetadata& metadata,
                              const QueryOptions& options, RowSink* sink, std::stop_token stop) {
  internal::Scanner scanner(io, metadata, options, std::move(stop));
  return scanner.Run(sink);
}

Result<std::vector<std::string>> SelectDataFiles(const io::FileIO& io,
                                                 const table::TableMetadata& metadata,
                                                 const QueryOptions& options) {
  internal::Scanner scanner(io, metadata, options, {});
  return scanner.SelectFiles();
}

}  // namespace geolake::query
