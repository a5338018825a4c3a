// Dissolve on the runner (dissolve.h has the contract).
//
// Phases. (1) Workers (OpWorker::Process, in parallel) repair each row's geometry and add it
// and the row's aggregate values to the worker's own groups: no lock per row. (2) Finish
// merges the workers' groups, sorts them by key and builds, per group, a binary tree over
// leaves of Hilbert-ordered geometries. (3) The leaves of every group are spawned as tasks
// of one TaskGroup on the executor; a task that completes the second child of a node spawns
// that node's merge, so a huge group's tree runs as wide as the executor from the first
// moment and no level waits for the slowest task of another. Partial unions travel between
// tasks as WKB: a GEOS geometry is bound to the context of the thread that made it.
#include "geolake/ops/dissolve.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/shard.h"
#include "geolake/core/thread_pool.h"
#include "geolake/core/units.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/hilbert.h"
#include "geolake/geo/shared_boundary.h"
#include "geolake/geo/strtree.h"
#include "geolake/geo/wkb.h"
#include "geolake/ops/task_state_internal.h"

namespace geolake::ops {
namespace {

using internal::BusyClock;
using internal::ContextPool;

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;

constexpr std::int64_t kDefaultLeafPieces = 64;
// A leaf also ends at this much WKB, so that a few huge polygons still spread over workers.
constexpr std::size_t kLeafWkbBytes = std::size_t{256} << 10;
// GEOS 3.11's coverage union builds a LineString per segment and polygonizes them without
// checking for interrupts: ~16k vertices of input took 0.3-0.6 s in a debug build on 2 busy
// cores, 1 MiB over 2 s. Larger inputs (merges of big partial unions) take the unary union,
// which GEOS interrupts, so that a stop still ends the run within 2 s.
constexpr std::size_t kCoverageMaxWkbBytes = std::size_t{256} << 10;
// A coverage result's area must equal its inputs' to this relative tolerance: rounding alone
// stays near 1e-15 per vertex summed, an overlap that GEOS 3.11's own 1e-6 check lets through
// is caught (dissolve.h).
constexpr double kCoverageAreaTolerance = 1e-11;
// Rough bytes a piece and a group cost besides their WKB (vectors, strings, map nodes).
constexpr std::int64_t kPieceOverheadBytes = 96;
constexpr std::int64_t kGroupOverheadBytes = 256;

// Passes take groups by hash bucket: a group's bucket is StableHash64 of its key modulo
// kKeyBuckets. Prepare measures the bytes of every bucket and packs the buckets into passes.
constexpr std::uint64_t kKeyBuckets = 1 << 16;
std::uint64_t BucketOfKey(std::string_view key) { return StableHash64(key) % kKeyBuckets; }
// A bucket over the share is dissolved in spatial chunks: its rows are placed by the cell of
// their box centre on a Hilbert curve of this order over the bucket's extent (256 x 256 cells),
// and runs of cells in curve order make the chunks (Prepare).
constexpr int kChunkOrder = 8;
constexpr std::size_t kChunkCells = std::size_t{1} << (2 * kChunkOrder);
// bucket_pass_ of a bucket dissolved in spatial chunks (its ChunkPlan says which pass).
constexpr std::uint32_t kChunkedBucket = std::numeric_limits<std::uint32_t>::max();
// Candidate pairs of a group are tested in chunks of this many pieces (one task each).
constexpr std::int64_t kPairChunk = 256;

bool IsIntegral(FieldType t) {
  return t == FieldType::kBool || t == FieldType::kInt64 || t == FieldType::kDate ||
         t == FieldType::kTimestamp;
}

// The aggregate as --aggregate spells it ("sum:pop").
std::string AggregateSpecText(const DissolveAggregate& a) {
  const std::string name = DissolveAggregateName(a);
  return a.column.empty() ? name : name.substr(0, name.find('_')) + ":" + a.column;
}

// One attribute value, typed as its column (ints for the integral types).
struct Value {
  bool valid = false;
  std::int64_t i = 0;
  double d = 0;
  std::string s;
};

Value ValueAt(const Column& c, std::size_t row) {
  Value v;
  if (row >= c.valid.size() || c.valid[row] == 0) return v;
  v.valid = true;
  if (IsIntegral(c.type)) {
    v.i = c.ints[row];
  } else if (c.type == FieldType::kDouble) {
    v.d = c.doubles[row];
  } else {
    v.s = std::string(c.StringAt(row));
  }
  return v;
}

// <0, 0, >0 for values of one type; nulls sort last (PostgreSQL's ASC NULLS LAST).
int CompareValues(const Value& a, const Value& b, FieldType type) {
  if (a.valid != b.valid) return a.valid ? -1 : 1;
  if (!a.valid) return 0;
  if (IsIntegral(type)) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  if (type == FieldType::kDouble) {
    if (std::isnan(a.d) || std::isnan(b.d)) return std::isnan(a.d) - std::isnan(b.d);
    return a.d < b.d ? -1 : a.d > b.d ? 1 : 0;
  }
  return a.s.compare(b.s) < 0 ? -1 : a.s.compare(b.s) > 0 ? 1 : 0;
}

void AppendValue(const Value& v, FieldType type, Column* out) {
  out->valid.push_back(v.valid ? 1 : 0);
  if (IsIntegral(type)) {
    out->ints.push_back(v.valid ? v.i : 0);
  } else if (type == FieldType::kDouble) {
    out->doubles.push_back(v.valid ? v.d : 0);
  } else {
    if (v.valid) out->bytes += v.s;
    out->offsets.push_back(static_cast<std::int64_t>(out->bytes.size()));
  }
}

// The group key of a row: each --by value as a tag byte and its bytes (-0.0 as 0.0, every NaN
// as one NaN, so that equal values are equal keys).
void AppendKey(const Column& c, std::size_t row, std::string* key) {
  if (c.valid[row] == 0) {
    key->push_back('\0');
    return;
  }
  key->push_back('\1');
  if (IsIntegral(c.type)) {
    key->append(reinterpret_cast<const char*>(&c.ints[row]), sizeof(std::int64_t));
  } else if (c.type == FieldType::kDouble) {
    double d = c.doubles[row];
    if (d == 0) d = 0;
    if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
    key->append(reinterpret_cast<const char*>(&d), sizeof(double));
  } else {
    const std::string_view s = c.StringAt(row);
    const auto n = static_cast<std::int64_t>(s.size());
    key->append(reinterpret_cast<const char*>(&n), sizeof(n));
    key->append(s);
  }
}

// The running state of one aggregate of one group.
struct AggState {
  Value value;             // min, max, first; sum of an integral column in value.i
  double sum = 0;          // sum of a double column, mean
  std::int64_t count = 0;  // non-null values seen (mean, and whether sum/min/max have one)
  std::int64_t first_unit = std::numeric_limits<std::int64_t>::max();  // first: input order
  std::int64_t first_row = std::numeric_limits<std::int64_t>::max();
};

struct Piece {
  std::string wkb;
  geo::Envelope box;
  double area = 0;
  bool polygonal = false;
  std::int64_t unit = 0;  // input order: the unit's ordinal, then the row's feature index
  std::int64_t row = 0;
  std::vector<AggState> aggs;  // --touching: the row's own aggregate states
  std::string tile;            // --tile-column: the tile's key (AppendKey)
};

bool InputOrder(const Piece& a, const Piece& b) {
  return a.unit != b.unit ? a.unit < b.unit : a.row < b.row;
}

// Puts `pieces` in Hilbert order of their box centres (over their extent), so that runs of
// them are spatially close and their partial unions stay small.
Status SortByHilbert(std::vector<Piece>* pieces) {
  geo::Envelope extent = geo::Envelope::Empty();
  for (const Piece& p : *pieces) extent.Expand(p.box);
  GEOLAKE_ASSIGN_OR_RETURN(geo::HilbertCurve curve, geo::HilbertCurve::Make(extent, 16));
  std::vector<std::pair<std::uint64_t, std::size_t>> order;
  order.reserve(pieces->size());
  for (std::size_t i = 0; i < pieces->size(); ++i) {
    const geo::Envelope& b = (*pieces)[i].box;
    order.emplace_back(curve.Index((b.xmin + b.xmax) / 2, (b.ymin + b.ymax) / 2), i);
  }
  std::sort(order.begin(), order.end());
  std::vector<Piece> sorted;
  sorted.reserve(pieces->size());
  for (const auto& [code, i] : order) sorted.push_back(std::move((*pieces)[i]));
  *pieces = std::move(sorted);
  return Status::OK();
}

// A group of rows with equal --by values (or, after FindComponents, one component of it).
// With --touching, `aggs` folds only the rows without a geometry; each piece has its own.
struct Group {
  std::vector<Value> key;
  std::int64_t rows = 0;
  std::vector<AggState> aggs;
  std::vector<Piece> pieces;
};

// An int64 union-find with path halving and union by size.
class UnionFind {
 public:
  explicit UnionFind(std::int64_t n)
      : parent_(static_cast<std::size_t>(n)), size_(parent_.size(), 1) {
    for (std::int64_t i = 0; i < n; ++i) parent_[static_cast<std::size_t>(i)] = i;
  }
  std::int64_t Find(std::int64_t x) {
    while (parent_[static_cast<std::size_t>(x)] != x) {
      std::int64_t& p = parent_[static_cast<std::size_t>(x)];
      p = parent_[static_cast<std::size_t>(p)];
      x = p;
    }
    return x;
  }
  void Union(std::int64_t a, std::int64_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (size_[static_cast<std::size_t>(a)] < size_[static_cast<std::size_t>(b)]) std::swap(a, b);
    parent_[static_cast<std::size_t>(b)] = a;
    size_[static_cast<std::size_t>(a)] += size_[static_cast<std::size_t>(b)];
  }

 private:
  std::vector<std::int64_t> parent_;
  std::vector<std::int64_t> size_;
};

using GroupMap = std::unordered_map<std::string, Group>;

// What the operation knows about one aggregate once bound to the input.
struct BoundAggregate {
  DissolveAggregate spec;
  int column = -1;  // index in the input's fields; -1 for count
  FieldType in_type = FieldType::kInt64;
  FieldType out_type = FieldType::kInt64;
};

// Fold one value into an aggregate.
Status Accumulate(const BoundAggregate& a, const Value& v, std::int64_t unit, std::int64_t row,
                  AggState* s) {
  if (a.spec.kind == AggregateKind::kCount || !v.valid) return Status::OK();
  switch (a.spec.kind) {
    case AggregateKind::kSum:
    case AggregateKind::kMean:
      if (IsIntegral(a.in_type) && a.spec.kind == AggregateKind::kSum) {
        if (__builtin_add_overflow(s->value.i, v.i, &s->value.i)) {
          return Status::InvalidArgument("sum:" + a.spec.column + " overflows int64");
        }
        s->value.valid = true;
      } else {
        s->sum += IsIntegral(a.in_type) ? static_cast<double>(v.i) : v.d;
      }
      break;
    case AggregateKind::kMin:
      if (s->count == 0 || CompareValues(v, s->value, a.in_type) < 0) s->value = v;
      break;
    case AggregateKind::kMax:
      if (s->count == 0 || CompareValues(v, s->value, a.in_type) > 0) s->value = v;
      break;
    case AggregateKind::kFirst:
      if (unit < s->first_unit || (unit == s->first_unit && row < s->first_row)) {
        s->value = v;
        s->first_unit = unit;
        s->first_row = row;
      }
      break;
    case AggregateKind::kCount:
      break;
  }
  ++s->count;
  return Status::OK();
}

// Fold another worker's state of the same aggregate into `s`.
Status Combine(const BoundAggregate& a, AggState other, AggState* s) {
  if (other.count == 0) return Status::OK();
  switch (a.spec.kind) {
    case AggregateKind::kSum:
    case AggregateKind::kMean:
      if (IsIntegral(a.in_type) && a.spec.kind == AggregateKind::kSum) {
        if (__builtin_add_overflow(s->value.i, other.value.i, &s->value.i)) {
          return Status::InvalidArgument("sum:" + a.spec.column + " overflows int64");
        }
        s->value.valid = true;
      } else {
        s->sum += other.sum;
      }
      break;
    case AggregateKind::kMin:
      if (s->count == 0 || CompareValues(other.value, s->value, a.in_type) < 0) {
        s->value = std::move(other.value);
      }
      break;
    case AggregateKind::kMax:
      if (s->count == 0 || CompareValues(other.value, s->value, a.in_type) > 0) {
        s->value = std::move(other.value);
      }
      break;
    case AggregateKind::kFirst:
      if (other.first_unit < s->first_unit ||
          (other.first_unit == s->first_unit && other.first_row < s->first_row)) {
        s->value = std::move(other.value);
        s->first_unit = other.first_unit;
        s->first_row = other.first_row;
      }
      break;
    case AggregateKind::kCount:
      break;
  }
  s->count += other.count;
  return Status::OK();
}

// The output value of an aggregate.
Value AggregateResult(const BoundAggregate& a, const Group& g, const AggState& s) {
  Value v;
  switch (a.spec.kind) {
    case AggregateKind::kCount:
      v.valid = true;
      v.i = g.rows;
      return v;
    case AggregateKind::kSum:
      if (s.count == 0) return v;
      if (IsIntegral(a.in_type)) return s.value;
      v.valid = true;
      v.d = s.sum;
      return v;
    case AggregateKind::kMean:
      if (s.count == 0) return v;
      v.valid = true;
      v.d = (IsIntegral(a.in_type) ? static_cast<double>(s.value.i) + s.sum : s.sum) /
            static_cast<double>(s.count);
      return v;
    default:
      return s.count == 0 ? v : s.value;
  }
}

// One node of a group's union tree: a leaf over pieces [begin, end) of the group's
// Hilbert-ordered pieces, or a merge of two child nodes.
struct Node {
  int group = 0;
  std::size_t begin = 0, end = 0;  // leaf
  int left = -1, right = -1;       // merge
  int parent = -1;
  std::atomic<int> pending{0};  // children not done yet (merge)
  std::string wkb;              // the partial union, once done
  double area = 0;              // its area
  bool empty = true;
};

// Where the rows of a bucket over the share go (dissolve.h "Memory"): each row to the pass of
// the cell of its box centre on a Hilbert curve over the bucket's extent; a row without a box
// to that of cell 0.
struct ChunkPlan {
  geo::HilbertCurve curve;
  std::vector<std::uint32_t> cell_pass;  // kChunkCells
  std::uint32_t last_pass = 0;           // the pass that merges and writes its groups

  std::uint32_t PassOf(std::span<const std::uint8_t> wkb) const {
    const Result<geo::Envelope> box = geo::WkbEnvelope(wkb);
    if (!box.ok() || box->IsEmpty()) return cell_pass[0];
    return cell_pass[curve.Index((box->xmin + box->xmax) / 2, (box->ymin + box->ymax) / 2)];
  }
};

class DissolveOperation;

class DissolveWorker final : public OpWorker {
 public:
  DissolveWorker(DissolveOperation* op, geo::GeoContext* geo) : op_(op), geo_(geo) {}
  Status Process(const InputUnit& unit, const FeatureBatch& in, OpOutput* out) override;

  GroupMap groups;
  std::int64_t pieces = 0;
  std::int64_t repaired = 0;

 private:
  DissolveOperation* op_;
  geo::GeoContext* geo_;
  std::string key_;  // scratch
};

class DissolveOperation final : public Operation {
 public:
  DissolveOperation(DissolveOptions options, DissolveReport* report)
      : options_(std::move(options)), report_(report) {
    if (options_.leaf_pieces <= 0) options_.leaf_pieces = kDefaultLeafPieces;
  }

  std::string name() const override { return "dissolve"; }
  std::string parameters() const override {
    nlohmann::json aggs = nlohmann::json::array();
    for (const DissolveAggregate& a : options_.aggregates) aggs.push_back(DissolveAggregateName(a));
    nlohmann::json j{{"by", options_.by},
                     {"aggregates", aggs},
                     {"precision", options_.precision},
                     {"touching", options_.touching},
                     {"coverage", options_.coverage}};
    // Only when set, so that the resume key of a dissolve without it stays what it was.
    if (!options_.tile_column.empty()) j["tile_column"] = options_.tile_column;
    if (options_.tile_grid) {
      j["tile_grid"] = {options_.tile_grid->size, options_.tile_grid->x0, options_.tile_grid->y0};
    }
    return j.dump();
  }
  bool resumable_by_unit() const override { return false; }
  std::string ShardRefusal() const override {
    return "dissolve: --shard is refused: a group needs rows of every unit (run one process, or "
           "shard by a --where on the --by columns)";
  }

  Result<OpSchema> Bind(OpContext& ctx, const Input& main) override {
    const std::vector<FieldDef>& fields = main.fields();
    auto find = [&](const std::string& name) -> int {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].name == name) return static_cast<int>(i);
      }
      return -1;
    };
    OpSchema schema;
    schema.crs = main.crs();
    if (!options_.tile_column.empty()) {
      tile_column_ = find(options_.tile_column);
      if (tile_column_ < 0) {
        return Status::InvalidArgument("--tile-column: " + main.label() + " has no column '" +
                                       options_.tile_column + "'");
      }
    }
    for (const std::string& name : options_.by) {
      const int c = find(name);
      if (c < 0)
        return Status::InvalidArgument("--by: " + main.label() + " has no column '" + name + "'");
      by_columns_.push_back(c);
      by_types_.push_back(fields[static_cast<std::size_t>(c)].type);
      schema.fields.push_back(fields[static_cast<std::size_t>(c)]);
    }
    for (const DissolveAggregate& spec : options_.aggregates) {
      BoundAggregate a;
      a.spec = spec;
      if (spec.kind != AggregateKind::kCount) {
        a.column = find(spec.column);
        if (a.column < 0) {
          return Status::InvalidArgument("--aggregate " + AggregateSpecText(spec) + ": " +
                                         main.label() + " has no column '" + spec.column + "'");
        }
        a.in_type = fields[static_cast<std::size_t>(a.column)].type;
      }
      switch (spec.kind) {
        case AggregateKind::kCount:
          a.out_type = FieldType::kInt64;
          break;
        case AggregateKind::kSum:
        case AggregateKind::kMean:
          if (a.in_type != FieldType::kInt64 && a.in_type != FieldType::kDouble) {
            return Status::InvalidArgument("--aggregate " + AggregateSpecText(spec) + ": column '" +
                                           spec.column + "' is " +
                                           std::string(geoparquet::FieldTypeName(a.in_type)) +
                                           "; sum and mean need int64 or double");
          }
          a.out_type = spec.kind == AggregateKind::kMean ? FieldType::kDouble : a.in_type;
          break;
        default:
          a.out_type = a.in_type;
          break;
      }
      schema.fields.push_back({DissolveAggregateName(spec), a.out_type});
      aggregates_.push_back(std::move(a));
    }
    for (std::size_t i = 0; i < schema.fields.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (schema.fields[i].name == schema.fields[j].name) {
          return Status::InvalidArgument("dissolve: two output columns are named '" +
                                         schema.fields[i].name + "'");
        }
      }
    }
    out_fields_ = schema.fields;
    main_ = &main;
    memory_bytes_ = ctx.memory_bytes;
    workers_ = ctx.workers;
    return schema;
  }

  Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext* geo) override {
    auto worker = std::make_unique<DissolveWorker>(this, geo);
    std::lock_guard lock(mu_);
    made_.push_back(worker.get());
    return std::unique_ptr<OpWorker>(std::move(worker));
  }

  Status Prepare(OpContext& ctx) override;
  int passes() const override { return passes_; }
  Result<PassPlan> BeginPass(OpContext& /*ctx*/, int pass) override {
    pass_ = static_cast<std::uint64_t>(pass);
    PassPlan plan;
    if (passes_ > 1) {
      plan.label = "groups " + std::to_string(pass + 1) + "/" + std::to_string(passes_);
    }
    return plan;
  }
  // More than one pass: each pass's groups are unioned and written at its end.
  Status FinishPass(OpContext& ctx, int /*pass*/, geo::GeoContext* geo, OpOutput* out) override {
    return passes_ > 1 ? EmitGroups(ctx, geo, out) : Status::OK();
  }
  Status Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) override {
    return passes_ == 1 ? EmitGroups(ctx, geo, out) : Status::OK();
  }
  // Whether the group with key text `key` (AppendKey of its --by values) is this pass's: the
  // pass its hash bucket was packed into (Prepare).
  // A bucket dissolved in spatial chunks places the row by its geometry (`wkb`, empty for
  // none) instead.
  bool InThisPass(std::string_view key, std::span<const std::uint8_t> wkb) const {
    if (passes_ == 1) return true;
    const std::uint64_t b = BucketOfKey(key);
    if (bucket_pass_[b] != kChunkedBucket) return bucket_pass_[b] == pass_;
    return chunked_.at(b).PassOf(wkb) == pass_;
  }

  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "dissolve: %lld groups hold %lld rows (emitted %lld); rows out %lld = groups",
                  static_cast<long long>(report_->groups), static_cast<long long>(report_->rows),
                  static_cast<long long>(totals.rows_emitted),
                  static_cast<long long>(totals.rows_out));
    lines->push_back(text);
    if (report_->rows != totals.rows_emitted || totals.rows_out != report_->groups) {
      return Status::Internal(std::string("dissolve: invariant failed: ") + text);
    }
    return Status::OK();
  }

  // For the workers.
  const std::vector<int>& by_columns() const { return by_columns_; }
  const std::vector<BoundAggregate>& aggregates() const { return aggregates_; }
  // One output feature per component (--touching or --tile-column): aggregates per row.
  bool by_component() const { return options_.touching || tile_column_ >= 0; }
  int tile_column() const { return tile_column_; }
  // Count `bytes` more held; kNotImplemented past the budget.
  Status Hold(std::int64_t bytes) {
    const std::int64_t held = held_bytes_.fetch_add(bytes) + bytes;
    std::int64_t peak = peak_held_.load();
    while (held > peak && !peak_held_.compare_exchange_weak(peak, held)) {
    }
    if (held > memory_bytes_) {
      return Status::NotImplemented(
          "dissolve: the groups' geometries need more than the operation's share of --memory (" +
          FormatSize(memory_bytes_) + ")" +
          (passes_ > 1 ? " in pass " + std::to_string(pass_ + 1) + " of " + std::to_string(passes_)
                       : std::string()) +
          (carried_bytes_ > 0
               ? " (the partial unions of groups dissolved in spatial chunks "
                 "hold " +
                     FormatSize(carried_bytes_) + " of it: a group's union must fit with one chunk)"
               : std::string()) +
          "; raise --memory");
    }
    return Status::OK();
  }

 private:
  // `tiles` (--tile-column): each tile key's envelope; null for --touching. `parallel`: the
  // group's candidate pairs are tested in chunks on the executor; otherwise on this thread
  // (a small group, while other groups run beside it).
  Status FindComponents(OpContext& ctx, ContextPool& pool, Group& group,
                        const std::unordered_map<std::string, geo::Envelope>* tiles, bool parallel,
                        std::vector<Group>* components);
  Status UnionGroups(OpContext& ctx, std::vector<Group*>& groups, std::vector<Node>& nodes,
                     std::vector<int>& roots);
  // Merges the workers' groups, unions them and writes one row per group (or component).
  Status EmitGroups(OpContext& ctx, geo::GeoContext* geo, OpOutput* out);
  // Folds `g` (the same key's group from another worker or pass) into `into`.
  Status MergeGroup(Group&& g, Group* into) const;
  // Spatial chunks: unions each group of `all` whose bucket's last pass is still to come into
  // one piece and moves it to carried_ beside the pieces of the group's earlier chunks; on a
  // bucket's last pass, moves its carried groups back into `all`, where the final union merges
  // the pieces of all its chunks once. When the carried pieces pass carry_limit_, each carried
  // group's pieces are merged into one.
  Status CarryChunks(OpContext& ctx, GroupMap* all);
  // Replaces each group's pieces by one piece, their union, with the box and first input row
  // of them all.
  Status UnionIntoOnePiece(OpContext& ctx, std::vector<Group*>& groups);
  Status RunNode(ContextPool& pool, BusyClock& clock, TaskGroup& tasks, std::vector<Group*>& groups,
                 std::vector<Node>& nodes, int index);
  Status UnionNode(geo::GeoContext& geo, const Group& group, Node& node, std::vector<Node>& nodes);
  // The union of `wkbs` (valid geometries of total area `area_in`): by the coverage path first
  // when `try_coverage` (setting `left_coverage` when it fails), otherwise or then GEOS's unary
  // union on --precision, retried on coarser grids (Geometry::UnionWkbsSnapping).
  Result<geo::Geometry> UnionWkbs(geo::GeoContext& geo, const std::vector<std::string_view>& wkbs,
                                  double area_in, bool try_coverage, bool* left_coverage);

  DissolveOptions options_;
  DissolveReport* report_;
  std::vector<int> by_columns_;
  std::vector<FieldType> by_types_;
  int tile_column_ = -1;
  std::vector<BoundAggregate> aggregates_;
  std::vector<FieldDef> out_fields_;
  std::int64_t memory_bytes_ = 0;
  int workers_ = 1;
  const Input* main_ = nullptr;  // Bind
  // Passes over the input, each taking the groups whose key hashes to it (Prepare decides).
  int passes_ = 1;
  std::vector<std::uint32_t> bucket_pass_;  // each key bucket's pass (Prepare), when passes_ > 1
  // The buckets over the share, dissolved in spatial chunks (Prepare), and the groups of their
  // earlier chunks, each carried as one partial union to its last pass (EmitGroups).
  std::unordered_map<std::uint64_t, ChunkPlan> chunked_;
  GroupMap carried_;
  std::int64_t carried_bytes_ = 0;  // counted as held while carried
  // The share less the largest planned chunk: carried pieces beyond it are merged.
  std::int64_t carry_limit_ = 0;
  std::uint64_t pass_ = 0;
  std::int64_t groups_written_ = 0;  // output rows so far (their feature index)
  // --tile-column over several passes: each tile's envelope from every row as read.
  std::unordered_map<std::string, geo::Envelope> read_tiles_;
  std::atomic<std::int64_t> held_bytes_{0};
  std::atomic<std::int64_t> peak_held_{0};  // the most held_bytes_ has been
  std::mutex mu_;                           // guards made_
  std::vector<DissolveWorker*> made_;
  // Union phase (tasks); per group index.
  std::unique_ptr<std::atomic<bool>[]> coverage_ok_;
  std::unique_ptr<std::atomic<bool>[]> fell_back_;
  std::atomic<std::int64_t> merges_{0};
  std::atomic<std::int64_t> candidates_{0};
  std::atomic<std::int64_t> pairs_{0};
  std::atomic<std::int64_t> edge_pieces_{0};
  std::atomic<std::int64_t> snap_retries_{0};
};

Status DissolveWorker::Process(const InputUnit& unit, const FeatureBatch& in, OpOutput* out) {
  const std::vector<int>& by = op_->by_columns();
  const std::vector<BoundAggregate>& aggs = op_->aggregates();
  for (std::int64_t r = 0; r < in.num_rows(); ++r) {
    const auto row = static_cast<std::size_t>(r);
    key_.clear();
    for (const int c : by) AppendKey(in.columns[static_cast<std::size_t>(c)], row, &key_);
    if (!op_->InThisPass(key_, in.geometry_valid[row] != 0 ? in.GeometryAt(row)
                                                           : std::span<const std::uint8_t>())) {
      out->Dropped("grouped in another pass");
      continue;
    }
    std::optional<Piece> piece;
    if (in.geometry_valid[row] != 0) {
      const std::span<const std::uint8_t> bytes = in.GeometryAt(row);
      Status st = [&]() -> Status {
        GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(*geo_, bytes));
        GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed, g.RepairIfInvalid(bytes));
        const geo::Geometry& valid = fixed ? *fixed : g;
        GEOLAKE_ASSIGN_OR_RETURN(bool empty, valid.IsEmpty());
        if (empty) return Status::OK();  // nothing to union; the row still counts
        Piece p;
        if (fixed) {
          ++repaired;
          GEOLAKE_ASSIGN_OR_RETURN(p.wkb, valid.ToWkb());
        } else {
          p.wkb.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        }
        GEOLAKE_ASSIGN_OR_RETURN(p.box, valid.Bounds());
        GEOLAKE_ASSIGN_OR_RETURN(p.area, valid.Area());
        GEOLAKE_ASSIGN_OR_RETURN(geo::WkbHeader header, geo::PeekWkbType(geo::AsBytes(p.wkb)));
        p.polygonal = header.type == geo::GeometryType::kPolygon ||
                      header.type == geo::GeometryType::kMultiPolygon;
        piece = std::move(p);
        return Status::OK();
      }();
      if (!st.ok()) {
        if (st.code() != ErrorCode::kGeometryError) return st;
        GEOLAKE_RETURN_NOT_OK(out->FeatureError(in, r, st));
        continue;
      }
    }
    auto [it, inserted] = groups.try_emplace(key_);
    Group& g = it->second;
    std::int64_t add = 0;
    if (inserted) {
      for (const int c : by) g.key.push_back(ValueAt(in.columns[static_cast<std::size_t>(c)], row));
      g.aggs.resize(aggs.size());
      add += kGroupOverheadBytes + static_cast<std::int64_t>(key_.size()) * 2;
    }
    ++g.rows;
    std::vector<AggState>* states = &g.aggs;
    if (piece) {
      piece->unit = unit.ordinal;
      piece->row = in.feature_index[row];
      if (op_->tile_column() >= 0) {
        AppendKey(in.columns[static_cast<std::size_t>(op_->tile_column())], row, &piece->tile);
        add += static_cast<std::int64_t>(piece->tile.size());
      }
      if (op_->by_component()) {
        piece->aggs.resize(aggs.size());
        states = &piece->aggs;
        add += static_cast<std::int64_t>(aggs.size() * sizeof(AggState));
      }
    }
    for (std::size_t a = 0; a < aggs.size(); ++a) {
      if (aggs[a].column < 0) continue;
      const Value v = ValueAt(in.columns[static_cast<std::size_t>(aggs[a].column)], row);
      GEOLAKE_RETURN_NOT_OK(
          Accumulate(aggs[a], v, unit.ordinal, in.feature_index[row], &(*states)[a]));
    }
    if (piece) {
      add += kPieceOverheadBytes + static_cast<std::int64_t>(piece->wkb.size());
      g.pieces.push_back(std::move(*piece));
      ++pieces;
    }
    out->Emitted();
    if (add > 0) GEOLAKE_RETURN_NOT_OK(op_->Hold(add));
  }
  return Status::OK();
}

Result<geo::Geometry> DissolveOperation::UnionWkbs(geo::GeoContext& geo,
                                                   const std::vector<std::string_view>& wkbs,
                                                   double area_in, bool try_coverage,
                                                   bool* left_coverage) {
  std::size_t bytes_in = 0;
  for (const std::string_view wkb : wkbs) bytes_in += wkb.size();
  if (try_coverage && bytes_in <= kCoverageMaxWkbBytes) {
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<geo::Geometry> parts, geo::Geometry::FromWkbs(geo, wkbs));
    Result<geo::Geometry> cov = geo::Geometry::CoverageUnionAll(geo, std::move(parts));
    if (!cov.ok() && cov.status().code() != ErrorCode::kGeometryError) return cov.status();
    if (cov.ok()) {
      GEOLAKE_ASSIGN_OR_RETURN(double area, cov->Area());
      if (std::abs(area - area_in) <= kCoverageAreaTolerance * std::max(area_in, 1e-300)) {
        Result<std::optional<geo::Geometry>> fixed = cov->RepairIfInvalid();
        if (!fixed.ok() && fixed.status().code() != ErrorCode::kGeometryError) {
          return fixed.status();
        }
        if (fixed.ok() && !fixed->has_value()) return std::move(*cov);
      }
    }
    *left_coverage = true;
  }
  return geo::Geometry::UnionWkbsSnapping(geo, wkbs, options_.precision, &snap_retries_);
}

Status DissolveOperation::UnionNode(geo::GeoContext& geo, const Group& group, Node& node,
                                    std::vector<Node>& nodes) {
  // The inputs: the leaf's pieces, or the two children's partial unions.
  std::vector<std::string_view> wkbs;
  double area_in = 0;
  bool polygonal = true;
  if (node.left < 0) {
    for (std::size_t i = node.begin; i < node.end; ++i) {
      wkbs.push_back(group.pieces[i].wkb);
      area_in += group.pieces[i].area;
      polygonal = polygonal && group.pieces[i].polygonal;
    }
  } else {
    for (const int child : {node.left, node.right}) {
      const Node& c = nodes[static_cast<std::size_t>(child)];
      if (c.empty) continue;
      wkbs.push_back(c.wkb);
      area_in += c.area;
      GEOLAKE_ASSIGN_OR_RETURN(geo::WkbHeader header, geo::PeekWkbType(geo::AsBytes(c.wkb)));
      polygonal = polygonal && (header.type == geo::GeometryType::kPolygon ||
                                header.type == geo::GeometryType::kMultiPolygon);
    }
  }
  std::atomic<bool>& coverage_ok = coverage_ok_[static_cast<std::size_t>(node.group)];
  if (wkbs.size() == 1 && node.left >= 0) {
    // One non-empty child: its union is this node's.
    node.wkb = std::string(wkbs.front());
    node.area = area_in;
    node.empty = false;
    return Status::OK();
  }
  if (wkbs.empty()) {
    node.empty = true;
    return Status::OK();
  }
  if (node.left < 0 && wkbs.size() == 1 && polygonal) {
    // One valid (multi)polygon is its own union: its parts do not overlap.
    node.wkb = std::string(wkbs.front());
    node.area = area_in;
    node.empty = false;
    return Status::OK();
  }
  bool left_coverage = false;
  GEOLAKE_ASSIGN_OR_RETURN(
      geo::Geometry result,
      UnionWkbs(geo, wkbs, area_in, polygonal && coverage_ok.load(), &left_coverage));
  if (left_coverage) {
    coverage_ok.store(false);
    fell_back_[static_cast<std::size_t>(node.group)].store(true);
  }
  GEOLAKE_ASSIGN_OR_RETURN(bool empty, result.IsEmpty());
  node.empty = empty;
  if (!empty) {
    GEOLAKE_ASSIGN_OR_RETURN(node.area, result.Area());
    GEOLAKE_ASSIGN_OR_RETURN(node.wkb, result.ToWkb());
  }
  return Status::OK();
}

Status DissolveOperation::RunNode(ContextPool& pool, BusyClock& clock, TaskGroup& tasks,
                                  std::vector<Group*>& groups, std::vector<Node>& nodes,
                                  int index) {
  Node& node = nodes[static_cast<std::size_t>(index)];
  const auto started = std::chrono::steady_clock::now();
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo, pool.Acquire());
  geo->set_stop_token(tasks.stop_token());
  Status st = UnionNode(*geo, *groups[static_cast<std::size_t>(node.group)], node, nodes);
  pool.Release(std::move(geo));
  clock.Add(std::chrono::steady_clock::now() - started);
  if (!st.ok()) return st;
  if (node.left >= 0) merges_.fetch_add(1);
  // The inputs of a merge are no longer needed.
  if (node.left >= 0) {
    for (const int child : {node.left, node.right}) {
      std::string().swap(nodes[static_cast<std::size_t>(child)].wkb);
    }
  }
  if (node.parent >= 0) {
    Node& parent = nodes[static_cast<std::size_t>(node.parent)];
    if (parent.pending.fetch_sub(1) == 1) {
      const int p = node.parent;
      tasks.Spawn([this, &pool, &clock, &tasks, &groups, &nodes, p] {
        return RunNode(pool, clock, tasks, groups, nodes, p);
      });
    }
  }
  return Status::OK();
}

Status DissolveOperation::UnionGroups(OpContext& ctx, std::vector<Group*>& groups,
                                      std::vector<Node>& nodes, std::vector<int>& roots) {
  // Plan: per group, pieces in Hilbert order of their box centres, cut into leaves, then a
  // binary tree of merges over adjacent leaves (spatially close, so partial unions stay small).
  std::size_t node_count = 0;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> leaves(groups.size());
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    Group& g = *groups[gi];
    if (g.pieces.size() > static_cast<std::size_t>(options_.leaf_pieces)) {
      GEOLAKE_RETURN_NOT_OK(SortByHilbert(&g.pieces));
    }
    std::size_t begin = 0;
    while (begin < g.pieces.size() || (begin == 0 && g.pieces.empty())) {
      std::size_t end = begin;
      std::size_t bytes = 0;
      while (end < g.pieces.size() &&
             end - begin < static_cast<std::size_t>(options_.leaf_pieces) &&
             (end == begin || bytes + g.pieces[end].wkb.size() <= kLeafWkbBytes)) {
        bytes += g.pieces[end].wkb.size();
        ++end;
      }
      leaves[gi].emplace_back(begin, end);
      if (g.pieces.empty()) break;
      begin = end;
    }
    node_count += 2 * leaves[gi].size();
  }
  nodes = std::vector<Node>(node_count);
  std::size_t next = 0;
  std::vector<int> leaf_nodes;
  roots.assign(groups.size(), -1);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    std::vector<int> level;
    for (const auto& [begin, end] : leaves[gi]) {
      Node& n = nodes[next];
      n.group = static_cast<int>(gi);
      n.begin = begin;
      n.end = end;
      level.push_back(static_cast<int>(next));
      leaf_nodes.push_back(static_cast<int>(next));
      ++next;
    }
    while (level.size() > 1) {
      std::vector<int> up;
      for (std::size_t i = 0; i + 1 < level.size(); i += 2) {
        Node& n = nodes[next];
        n.group = static_cast<int>(gi);
        n.left = level[i];
        n.right = level[i + 1];
        n.pending.store(2);
        nodes[static_cast<std::size_t>(level[i])].parent = static_cast<int>(next);
        nodes[static_cast<std::size_t>(level[i + 1])].parent = static_cast<int>(next);
        up.push_back(static_cast<int>(next));
        ++next;
      }
      if (level.size() % 2 == 1) up.push_back(level.back());  // carried up unmerged
      level = std::move(up);
    }
    roots[gi] = level.front();
  }
  report_->leaves += static_cast<std::int64_t>(leaf_nodes.size());

  coverage_ok_ = std::make_unique<std::atomic<bool>[]>(groups.size());
  fell_back_ = std::make_unique<std::atomic<bool>[]>(groups.size());
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    coverage_ok_[gi].store(options_.coverage);
    fell_back_[gi].store(false);
  }

  ContextPool pool(ctx.stop);
  BusyClock clock;
  const auto started = std::chrono::steady_clock::now();
  Status st;
  {
    TaskGroup tasks(ctx.env->executor, ctx.stop);
    for (const int leaf : leaf_nodes) {
      tasks.Spawn([this, &pool, &clock, &tasks, &groups, &nodes, leaf] {
        return RunNode(pool, clock, tasks, groups, nodes, leaf);
      });
    }
    st = tasks.Wait();
  }
  report_->union_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::vector<double> busy = clock.Seconds(workers_);  // this pass's
  report_->worker_busy_seconds.resize(std::max(report_->worker_busy_seconds.size(), busy.size()));
  for (std::size_t w = 0; w < busy.size(); ++w) report_->worker_busy_seconds[w] += busy[w];
  report_->merges = merges_.load();
  report_->snap_retries = snap_retries_.load();
  if (ctx.metrics != nullptr) {
    StageMetrics* stage = ctx.metrics->stage("union");
    for (std::size_t w = 0; w < busy.size(); ++w) {
      stage->counter("busy_ms_worker_" + std::to_string(w))
          ->Add(static_cast<std::int64_t>(busy[w] * 1000));
    }
  }
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    if (fell_back_[gi].load()) {
      ++report_->coverage_fallbacks;
    } else if (options_.coverage && groups[gi]->pieces.size() > 1) {
      bool polygonal = true;
      for (const Piece& p : groups[gi]->pieces) polygonal = polygonal && p.polygonal;
      if (polygonal) ++report_->coverage_groups;
    }
  }
  return st;
}

Status DissolveOperation::FindComponents(
    OpContext& ctx, ContextPool& pool, Group& group,
    const std::unordered_map<std::string, geo::Envelope>* tiles, bool parallel,
    std::vector<Group>* components) {
  const auto n = static_cast<std::int64_t>(group.pieces.size());
  // --tile-column: only the pieces whose box reaches their tile's envelope (a side of the box
  // on a side of the envelope, which is the union of the tile's boxes, so equality is exact)
  // can continue in another tile; the others pass through as components of their own.
  std::vector<std::uint8_t> edge(group.pieces.size(), 1);
  if (tiles != nullptr) {
    for (std::size_t i = 0; i < group.pieces.size(); ++i) {
      const Piece& p = group.pieces[i];
      const geo::Envelope& t = tiles->at(p.tile);
      edge[i] = p.box.xmin <= t.xmin || p.box.ymin <= t.ymin || p.box.xmax >= t.xmax ||
                p.box.ymax >= t.ymax;
      if (edge[i] != 0) edge_pieces_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::vector<geo::StrTree::Item> items;
  items.reserve(group.pieces.size());
  for (std::int64_t i = 0; i < n; ++i) {
    if (edge[static_cast<std::size_t>(i)] == 0) continue;
    items.push_back({group.pieces[static_cast<std::size_t>(i)].box, i});
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::StrTree tree, geo::StrTree::Build(std::move(items)));
  // Candidate pairs (i, j > i) from the tree, tested with i prepared, in chunks on the
  // executor; the pairs that intersect (touching at a point counts, as ST_ClusterDBSCAN with
  // eps 0 and ST_ClusterIntersecting count it) join the union-find afterwards. With
  // --tile-column a pair must come from two tiles and share a border of positive length.
  constexpr std::int64_t kChunk = kPairChunk;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> pairs(
      static_cast<std::size_t>(chunks));
  const auto test_chunk = [&](std::int64_t c) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo, pool.Acquire());
    geo->set_stop_token(ctx.stop);
    Status st = [&]() -> Status {
      std::vector<std::int64_t> candidates;
      for (std::int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
        if (edge[static_cast<std::size_t>(i)] == 0) continue;
        const Piece& a = group.pieces[static_cast<std::size_t>(i)];
        candidates.clear();
        tree.Query(a.box, [&](std::int64_t j) {
          if (j > i &&
              (tiles == nullptr || group.pieces[static_cast<std::size_t>(j)].tile != a.tile)) {
            candidates.push_back(j);
          }
        });
        if (candidates.empty()) continue;
        candidates_.fetch_add(static_cast<std::int64_t>(candidates.size()));
        GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry ga, geo::Geometry::FromWkb(*geo, a.wkb));
        if (tiles != nullptr) {
          GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry boundary, geo::Boundary(ga));
          for (const std::int64_t j : candidates) {
            GEOLAKE_ASSIGN_OR_RETURN(
                geo::Geometry gb,
                geo::Geometry::FromWkb(*geo, group.pieces[static_cast<std::size_t>(j)].wkb));
            GEOLAKE_ASSIGN_OR_RETURN(double length, geo::SharedBoundaryLength(ga, gb, &boundary));
            if (length > 0) pairs[static_cast<std::size_t>(c)].emplace_back(i, j);
          }
          continue;
        }
        GEOLAKE_ASSIGN_OR_RETURN(geo::PreparedGeometry prepared,
                                 geo::PreparedGeometry::Make(std::move(ga)));
        for (const std::int64_t j : candidates) {
          GEOLAKE_ASSIGN_OR_RETURN(
              geo::Geometry gb,
              geo::Geometry::FromWkb(*geo, group.pieces[static_cast<std::size_t>(j)].wkb));
          GEOLAKE_ASSIGN_OR_RETURN(bool meets, prepared.Intersects(gb));
          if (meets) pairs[static_cast<std::size_t>(c)].emplace_back(i, j);
        }
      }
      return Status::OK();
    }();
    pool.Release(std::move(geo));
    return st;
  };
  if (parallel) {
    GEOLAKE_RETURN_NOT_OK(ctx.env->executor->ParallelFor(chunks, test_chunk, ctx.stop));
  } else {
    for (std::int64_t c = 0; c < chunks; ++c) GEOLAKE_RETURN_NOT_OK(test_chunk(c));
  }
  UnionFind sets(n);
  for (const auto& chunk : pairs) {
    pairs_.fetch_add(static_cast<std::int64_t>(chunk.size()));
    for (const auto& [i, j] : chunk) sets.Union(i, j);
  }
  // Members by root. The pieces are in input order, so each component's first member is its
  // earliest row, and components come out in the order of their earliest rows.
  std::vector<std::int64_t> slot(static_cast<std::size_t>(n), -1);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t& k = slot[static_cast<std::size_t>(sets.Find(i))];
    if (k < 0) {
      k = static_cast<std::int64_t>(components->size());
      Group c;
      c.key = group.key;
      c.aggs.resize(aggregates_.size());
      components->push_back(std::move(c));
    }
    Group& c = (*components)[static_cast<std::size_t>(k)];
    Piece& p = group.pieces[static_cast<std::size_t>(i)];
    ++c.rows;
    for (std::size_t a = 0; a < aggregates_.size(); ++a) {
      GEOLAKE_RETURN_NOT_OK(Combine(aggregates_[a], std::move(p.aggs[a]), &c.aggs[a]));
    }
    std::vector<AggState>().swap(p.aggs);
    c.pieces.push_back(std::move(p));
  }
  // The group's rows without a geometry: one more feature, with a null geometry.
  const std::int64_t without = group.rows - n;
  if (without > 0) {
    Group c;
    c.key = group.key;
    c.rows = without;
    c.aggs = std::move(group.aggs);
    components->push_back(std::move(c));
  }
  std::vector<Piece>().swap(group.pieces);
  return Status::OK();
}

// Reads the input once for what its groups would hold (dissolve.h "Memory") and, with
// --tile-column, every tile's envelope.
class MeasureGroups final : public Input::Visitor {
 public:
  // `per_piece`: what a piece holds besides its WKB.
  MeasureGroups(std::int64_t per_piece, const std::vector<int>& by_columns, int tile_column,
                std::unordered_map<std::string, geo::Envelope>* tiles)
      : buckets(kKeyBuckets, 0),
        extents(kKeyBuckets, geo::Envelope::Empty()),
        per_piece_(per_piece),
        by_columns_(by_columns),
        tile_column_(tile_column),
        tiles_(tiles) {}
  Status Batch(const InputUnit& /*unit*/, FeatureBatch batch) override {
    for (std::size_t r = 0; r < static_cast<std::size_t>(batch.num_rows()); ++r) {
      if (batch.geometry_valid[r] == 0) continue;
      const std::span<const std::uint8_t> wkb = batch.GeometryAt(r);
      std::int64_t held = per_piece_ + static_cast<std::int64_t>(wkb.size());
      const Result<geo::Envelope> box = geo::WkbEnvelope(wkb);
      const bool has_box = box.ok() && !box->IsEmpty();
      if (tile_column_ >= 0 && has_box) {
        key_.clear();
        AppendKey(batch.columns[static_cast<std::size_t>(tile_column_)], r, &key_);
        held += static_cast<std::int64_t>(key_.size());
        auto [it, inserted] = tiles_->try_emplace(key_, geo::Envelope::Empty());
        it->second.Expand(*box);
      }
      key_.clear();
      for (const int c : by_columns_)
        AppendKey(batch.columns[static_cast<std::size_t>(c)], r, &key_);
      const std::uint64_t b = BucketOfKey(key_);
      buckets[b] += held;
      if (has_box) extents[b].Expand(*box);
      bytes += held;
    }
    return Status::OK();
  }
  Status UnitEnd(const InputUnit& /*unit*/) override { return Status::OK(); }

  std::int64_t bytes = 0;
  std::vector<std::int64_t> buckets;   // bytes by key bucket (BucketOfKey)
  std::vector<geo::Envelope> extents;  // the boxes of each bucket's geometries

 private:
  std::int64_t per_piece_;
  const std::vector<int>& by_columns_;
  int tile_column_;
  std::unordered_map<std::string, geo::Envelope>* tiles_;
  std::string key_;
};

// Reads the input again for the bytes of the chunked buckets' rows by cell of their box centre.
class MeasureCells final : public Input::Visitor {
 public:
  MeasureCells(std::int64_t per_piece, const std::vector<int>& by_columns,
               const std::unordered_map<std::uint64_t, ChunkPlan>& plans)
      : per_piece_(per_piece), by_columns_(by_columns), plans_(plans) {
    for (const auto& [bucket, plan] : plans) cells[bucket].assign(kChunkCells, 0);
  }
  Status Batch(const InputUnit& /*unit*/, FeatureBatch batch) override {
    for (std::size_t r = 0; r < static_cast<std::size_t>(batch.num_rows()); ++r) {
      if (batch.geometry_valid[r] == 0) continue;
      key_.clear();
      for (const int c : by_columns_)
        AppendKey(batch.columns[static_cast<std::size_t>(c)], r, &key_);
      const auto plan = plans_.find(BucketOfKey(key_));
      if (plan == plans_.end()) continue;
      const std::span<const std::uint8_t> wkb = batch.GeometryAt(r);
      const Result<geo::Envelope> box = geo::WkbEnvelope(wkb);
      const std::uint64_t cell =
          !box.ok() || box->IsEmpty()
              ? 0
              : plan->second.curve.Index((box->xmin + box->xmax) / 2, (box->ymin + box->ymax) / 2);
      cells[plan->first][cell] += per_piece_ + static_cast<std::int64_t>(wkb.size());
    }
    return Status::OK();
  }
  Status UnitEnd(const InputUnit& /*unit*/) override { return Status::OK(); }

  std::unordered_map<std::uint64_t, std::vector<std::int64_t>> cells;  // bytes by cell

 private:
  std::int64_t per_piece_;
  const std::vector<int>& by_columns_;
  const std::unordered_map<std::uint64_t, ChunkPlan>& plans_;
  std::string key_;
};

// Packs the buckets (bytes by BucketOfKey) into passes of at most `capacity` bytes each, first
// fit by decreasing size (ties by bucket, so one input always gives the same passes); returns
// each bucket's pass and sets `most` to the largest pass's bytes and `passes` to their count.
std::vector<std::uint32_t> PackBuckets(const std::vector<std::int64_t>& buckets,
                                       std::int64_t capacity, std::int64_t* most,
                                       std::uint32_t* passes) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t b = 0; b < buckets.size(); ++b) {
    if (buckets[b] > 0) order.push_back(b);
  }
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return buckets[a] != buckets[b] ? buckets[a] > buckets[b] : a < b;
  });
  std::vector<std::uint32_t> pass_of(buckets.size(), 0);
  std::vector<std::int64_t> load;
  for (const std::uint32_t b : order) {
    std::size_t p = 0;
    while (p < load.size() && load[p] + buckets[b] > capacity) ++p;
    if (p == load.size()) load.push_back(0);
    load[p] += buckets[b];
    pass_of[b] = static_cast<std::uint32_t>(p);
  }
  *most = load.empty() ? 0 : *std::max_element(load.begin(), load.end());
  *passes = static_cast<std::uint32_t>(load.size());
  return pass_of;
}

Status DissolveOperation::Prepare(OpContext& ctx) {
  // The input's size on disk says whether its groups may not fit (WKB held is about the size
  // of a GeoPackage's or FlatGeobuf's geometry blobs, a few times a compressed GeoParquet's);
  // only then is it read once to measure them.
  if (main_->data_bytes() < memory_bytes_ / 16) return Status::OK();
  std::unordered_map<std::string, geo::Envelope> tiles;
  // As DissolveWorker::Process counts a piece (with --touching or --tile-column each piece
  // also keeps its own aggregate states).
  const auto per_piece =
      kPieceOverheadBytes +
      (by_component() ? static_cast<std::int64_t>(aggregates_.size() * sizeof(AggState)) : 0);
  MeasureGroups measure(per_piece, by_columns_, tile_column_, &tiles);
  Input::ReadOptions read;
  read.memory_bytes = std::max<std::int64_t>(memory_bytes_ / 8, 1 << 20);
  GEOLAKE_RETURN_NOT_OK(main_->Read(read, ctx.env->executor, &measure, ctx.stop));
  // A pass is planned to hold at most half the share: the other half is for what the measure
  // does not count (a group's key and states, the union's own memory).
  const std::int64_t per_pass = std::max<std::int64_t>(memory_bytes_ / 2, 1);
  if (measure.bytes <= per_pass) return Status::OK();
  // Groups are uneven (a state of 254 counties beside one of 3), so the buckets are packed
  // into passes by their measured bytes rather than dealt out by hash; one over half the share
  // gets a pass of its own or nearly. A bucket over the share (one group, or groups sharing a
  // bucket; no --by is one group) fits no pass: it is dissolved in spatial chunks, or refused
  // when its pieces must stay apart to find components.
  std::vector<std::int64_t> buckets = std::move(measure.buckets);
  std::int64_t biggest = 0;
  for (std::uint64_t b = 0; b < kKeyBuckets; ++b) {
    if (buckets[b] <= memory_bytes_) {
      biggest = std::max(biggest, buckets[b]);
      continue;
    }
    if (by_component()) {
      return Status::NotImplemented(
          std::string(by_columns_.empty()
                          ? "dissolve: the one group (no --by)"
                          : "dissolve: one group (or groups whose --by values share a hash "
                            "bucket)") +
          " needs about " + FormatSize(buckets[b]) +
          ", more than the operation's share of --memory (" + FormatSize(memory_bytes_) +
          "); its pieces must stay apart to find components, so it is not split: raise "
          "--memory");
    }
    const geo::Envelope& extent = measure.extents[b];
    if (extent.IsEmpty()) continue;  // no geometry: nothing to chunk
    GEOLAKE_ASSIGN_OR_RETURN(geo::HilbertCurve curve, geo::HilbertCurve::Make(extent, kChunkOrder));
    chunked_.emplace(b, ChunkPlan{curve, std::vector<std::uint32_t>(kChunkCells, 0), 0});
  }
  const std::int64_t chunked_bytes = [&] {
    std::int64_t sum = 0;
    for (const auto& [b, plan] : chunked_) sum += std::exchange(buckets[b], 0);
    return sum;
  }();
  std::int64_t most = 0;
  std::uint32_t passes = 0;
  bucket_pass_ = PackBuckets(buckets, std::max(per_pass, biggest), &most, &passes);
  if (!chunked_.empty()) {
    // Each chunked bucket: a second read measures its rows by cell, and runs of cells in curve
    // order (spatially compact) of at most a quarter of the share make its passes, after the
    // others. A chunk's pass also holds the partial union carried from the earlier chunks, which
    // grows towards the group's output (1.6 MB for Alaska of the densified counties).
    const std::int64_t per_chunk = std::max<std::int64_t>(per_pass / 2, 1);
    carry_limit_ = memory_bytes_ - per_chunk;
    MeasureCells cells(kPieceOverheadBytes, by_columns_, chunked_);
    GEOLAKE_RETURN_NOT_OK(main_->Read(read, ctx.env->executor, &cells, ctx.stop));
    std::vector<std::uint64_t> order;
    for (const auto& [b, plan] : chunked_) order.push_back(b);
    std::sort(order.begin(), order.end());
    for (const std::uint64_t b : order) {
      ChunkPlan& plan = chunked_.at(b);
      const std::vector<std::int64_t>& bytes = cells.cells.at(b);
      std::int64_t load = 0;
      for (std::size_t cell = 0; cell < kChunkCells; ++cell) {
        if (load > 0 && load + bytes[cell] > per_chunk) {
          ++passes;
          most = std::max(most, load);
          load = 0;
        }
        load += bytes[cell];
        plan.cell_pass[cell] = passes;
      }
      most = std::max(most, load);
      plan.last_pass = passes++;
      bucket_pass_[b] = kChunkedBucket;
    }
  }
  passes_ = static_cast<int>(std::max<std::uint32_t>(passes, 1));
  read_tiles_ = std::move(tiles);
  Log(LogLevel::kInfo,
      "dissolve: the groups need about {}, more than the operation's share of --memory ({}): "
      "{} passes, each over the groups of the --by value buckets packed into it{} (the most "
      "loaded holds about {})",
      FormatSize(measure.bytes), FormatSize(memory_bytes_), passes_,
      chunked_.empty() ? std::string()
                       : ", or over a spatial chunk of the " + std::to_string(chunked_.size()) +
                             " bucket(s) over the share (" + FormatSize(chunked_bytes) + ")",
      FormatSize(most));
  if (report_ != nullptr) {
    report_->passes = passes_;
    std::int64_t chunk_passes = 0;
    for (const auto& [b, plan] : chunked_) {
      chunk_passes += plan.last_pass + 1 - plan.cell_pass[0];
    }
    report_->chunk_passes = chunk_passes;
  }
  return Status::OK();
}

Status DissolveOperation::MergeGroup(Group&& g, Group* into) const {
  into->rows += g.rows;
  for (std::size_t a = 0; a < aggregates_.size(); ++a) {
    GEOLAKE_RETURN_NOT_OK(Combine(aggregates_[a], std::move(g.aggs[a]), &into->aggs[a]));
  }
  for (Piece& p : g.pieces) into->pieces.push_back(std::move(p));
  return Status::OK();
}

Status DissolveOperation::UnionIntoOnePiece(OpContext& ctx, std::vector<Group*>& groups) {
  // Each group's box and first row in input order, before the union reorders its pieces.
  std::vector<Piece> heads(groups.size());
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    heads[gi].box = geo::Envelope::Empty();
    heads[gi].unit = heads[gi].row = std::numeric_limits<std::int64_t>::max();
    for (const Piece& p : groups[gi]->pieces) {
      heads[gi].box.Expand(p.box);
      if (InputOrder(p, heads[gi])) {
        heads[gi].unit = p.unit;
        heads[gi].row = p.row;
      }
    }
  }
  std::vector<Node> nodes;
  std::vector<int> roots;
  GEOLAKE_RETURN_NOT_OK(UnionGroups(ctx, groups, nodes, roots));
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    Group& g = *groups[gi];
    Node& root = nodes[static_cast<std::size_t>(roots[gi])];
    std::vector<Piece>().swap(g.pieces);
    if (root.empty) continue;
    Piece piece = std::move(heads[gi]);
    piece.wkb = std::move(root.wkb);
    piece.area = root.area;
    GEOLAKE_ASSIGN_OR_RETURN(geo::WkbHeader header, geo::PeekWkbType(geo::AsBytes(piece.wkb)));
    piece.polygonal = header.type == geo::GeometryType::kPolygon ||
                      header.type == geo::GeometryType::kMultiPolygon;
    g.pieces.push_back(std::move(piece));
  }
  return Status::OK();
}

Status DissolveOperation::CarryChunks(OpContext& ctx, GroupMap* all) {
  // This pass's chunk of each group still to be continued is unioned on its own, not with the
  // earlier chunks' pieces: re-unioning what was carried in every chunk's pass made the carry
  // quadratic in the number of chunks (the whole US at --memory 16MiB: 11.7 s, one pass 3.6 s).
  std::vector<std::string> keys;
  std::vector<Group*> carry;
  for (auto& [key, g] : *all) {
    const auto plan = chunked_.find(BucketOfKey(key));
    if (plan != chunked_.end() && plan->second.last_pass != pass_) {
      keys.push_back(key);
      carry.push_back(&g);
    }
  }
  if (!carry.empty()) {
    GEOLAKE_RETURN_NOT_OK(UnionIntoOnePiece(ctx, carry));
    for (std::size_t gi = 0; gi < carry.size(); ++gi) {
      ++report_->carried;
      auto [it, inserted] = carried_.try_emplace(keys[gi]);
      if (inserted) {
        it->second = std::move(*carry[gi]);
      } else {
        GEOLAKE_RETURN_NOT_OK(MergeGroup(std::move(*carry[gi]), &it->second));
      }
      all->erase(keys[gi]);
    }
  }
  // The groups whose last chunk is this pass's: every chunk's piece into the final union.
  for (auto it = carried_.begin(); it != carried_.end();) {
    if (chunked_.at(BucketOfKey(it->first)).last_pass != pass_) {
      ++it;
      continue;
    }
    auto [found, inserted] = all->try_emplace(it->first);
    if (inserted) {
      found->second = std::move(it->second);
    } else {
      GEOLAKE_RETURN_NOT_OK(MergeGroup(std::move(it->second), &found->second));
    }
    it = carried_.erase(it);
  }
  auto count = [&] {
    carried_bytes_ = 0;
    for (const auto& [key, g] : carried_) {
      carried_bytes_ += kGroupOverheadBytes + static_cast<std::int64_t>(key.size()) * 2;
      for (const Piece& p : g.pieces) carried_bytes_ += kPieceOverheadBytes + std::ssize(p.wkb);
    }
  };
  count();
  // Each chunk's union has its own outline, so separate pieces hold more than their union (the
  // whole US in 31 chunks: 3.1 MiB by its 15th, its union 3.1 MB in all). When the next chunk
  // might not fit beside them, each carried group's pieces become one.
  if (carried_bytes_ > carry_limit_) {
    std::vector<Group*> many;
    for (auto& [key, g] : carried_) {
      if (g.pieces.size() > 1) many.push_back(&g);
    }
    if (!many.empty()) {
      GEOLAKE_RETURN_NOT_OK(UnionIntoOnePiece(ctx, many));
      report_->carry_merges += std::ssize(many);
      count();
    }
  }
  return Status::OK();
}

Status DissolveOperation::EmitGroups(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) {
  // Merge the workers' groups.
  GroupMap all;
  for (DissolveWorker* w : made_) {
    report_->pieces += std::exchange(w->pieces, 0);
    report_->repaired += std::exchange(w->repaired, 0);
    for (auto& [key, g] : w->groups) {
      auto [it, inserted] = all.try_emplace(key);
      if (inserted) {
        it->second = std::move(g);
      } else {
        GEOLAKE_RETURN_NOT_OK(MergeGroup(std::move(g), &it->second));
      }
    }
    GroupMap().swap(w->groups);
  }
  if (!chunked_.empty()) GEOLAKE_RETURN_NOT_OK(CarryChunks(ctx, &all));
  std::vector<Group*> groups;
  groups.reserve(all.size());
  for (auto& [key, g] : all) groups.push_back(&g);
  std::sort(groups.begin(), groups.end(), [&](const Group* a, const Group* b) {
    for (std::size_t k = 0; k < by_types_.size(); ++k) {
      const int c = CompareValues(a->key[k], b->key[k], by_types_[k]);
      if (c != 0) return c < 0;
    }
    return false;
  });
  // Input order within each group, so that results do not depend on which worker read what.
  for (Group* g : groups) std::sort(g->pieces.begin(), g->pieces.end(), InputOrder);
  report_->piece_bytes = std::max(report_->piece_bytes, peak_held_.load());
  std::vector<Group> components;
  if (by_component()) {
    // One output feature per connected component of each group (dissolve.h).
    ContextPool pool(ctx.stop);
    const auto started = std::chrono::steady_clock::now();
    std::unordered_map<std::string, geo::Envelope> tiles;
    if (tile_column_ >= 0) {
      if (passes_ > 1) {
        tiles = read_tiles_;  // every tile's rows, not only this pass's groups'
      } else {
        for (const Group* g : groups) {
          for (const Piece& p : g->pieces) {
            auto [it, inserted] = tiles.try_emplace(p.tile, geo::Envelope::Empty());
            it->second.Expand(p.box);
          }
        }
      }
      report_->tiles = static_cast<std::int64_t>(tiles.size());
      if (options_.tile_grid) {
        // The cell holding the centre of the tile's data box, a hair smaller so that a piece
        // cut exactly at a grid line reaches it whatever the last bit of the cutter's
        // arithmetic (1e-9 of a cell).
        const TileGrid& grid = *options_.tile_grid;
        const double slack = grid.size * 1e-9;
        for (auto& [key, box] : tiles) {
          const double ix = std::floor(((box.xmin + box.xmax) / 2 - grid.x0) / grid.size);
          const double iy = std::floor(((box.ymin + box.ymax) / 2 - grid.y0) / grid.size);
          box = geo::Envelope{grid.x0 + ix * grid.size + slack, grid.y0 + iy * grid.size + slack,
                              grid.x0 + (ix + 1) * grid.size - slack,
                              grid.y0 + (iy + 1) * grid.size - slack};
        }
      }
    }
    // A group of fewer pieces than one chunk of pairs is worked on by one thread, many such
    // groups at once; a larger one spreads its chunks over the executor. (Each group on its
    // own with a ParallelFor of one chunk cost ~27 us of dispatch and an STRtree per group:
    // 27.6 s for the 1M one- and two-piece groups of a tile-edge dissolve by cell id.)
    const auto* tile_boxes = tile_column_ >= 0 ? &tiles : nullptr;
    std::vector<std::vector<Group>> found(groups.size());
    std::vector<std::size_t> small;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (groups[i]->pieces.size() < static_cast<std::size_t>(kPairChunk)) small.push_back(i);
    }
    constexpr std::int64_t kGroupsPerTask = 64;
    const auto small_tasks =
        (static_cast<std::int64_t>(small.size()) + kGroupsPerTask - 1) / kGroupsPerTask;
    GEOLAKE_RETURN_NOT_OK(ctx.env->executor->ParallelFor(
        small_tasks,
        [&](std::int64_t t) -> Status {
          const auto end =
              std::min<std::size_t>(small.size(), static_cast<std::size_t>(t + 1) * kGroupsPerTask);
          for (auto k = static_cast<std::size_t>(t) * kGroupsPerTask; k < end; ++k) {
            const std::size_t i = small[k];
            GEOLAKE_RETURN_NOT_OK(
                FindComponents(ctx, pool, *groups[i], tile_boxes, /*parallel=*/false, &found[i]));
          }
          return Status::OK();
        },
        ctx.stop));
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (groups[i]->pieces.size() >= static_cast<std::size_t>(kPairChunk)) {
        GEOLAKE_RETURN_NOT_OK(
            FindComponents(ctx, pool, *groups[i], tile_boxes, /*parallel=*/true, &found[i]));
      }
      for (Group& c : found[i]) components.push_back(std::move(c));
    }
    report_->edge_pieces = edge_pieces_.load();
    report_->pairs_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report_->candidates = candidates_.load();
    report_->pairs = pairs_.load();
    groups.clear();
    for (Group& c : components) groups.push_back(&c);
  }
  report_->groups += static_cast<std::int64_t>(groups.size());
  for (const Group* g : groups) {
    report_->rows += g->rows;
    report_->largest_group =
        std::max(report_->largest_group, static_cast<std::int64_t>(g->pieces.size()));
  }

  std::vector<Node> nodes;
  std::vector<int> roots;
  GEOLAKE_RETURN_NOT_OK(UnionGroups(ctx, groups, nodes, roots));

  // The output rows: keys, aggregates, the valid (and snapped) union.
  FeatureBatch& rows = out->rows;
  rows.fields = out_fields_;
  rows.columns.assign(out_fields_.size(), {});
  for (std::size_t c = 0; c < out_fields_.size(); ++c) rows.columns[c].type = out_fields_[c].type;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = *groups[gi];
    std::size_t c = 0;
    for (std::size_t k = 0; k < by_types_.size(); ++k, ++c) {
      AppendValue(g.key[k], by_types_[k], &rows.columns[c]);
    }
    for (std::size_t a = 0; a < aggregates_.size(); ++a, ++c) {
      AppendValue(AggregateResult(aggregates_[a], g, g.aggs[a]), aggregates_[a].out_type,
                  &rows.columns[c]);
    }
    Node& root = nodes[static_cast<std::size_t>(roots[gi])];
    bool has_geometry = !root.empty;
    if (has_geometry) {
      GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry u, geo::Geometry::FromWkb(*geo, root.wkb));
      if (options_.precision > 0) {
        GEOLAKE_ASSIGN_OR_RETURN(u, u.SetPrecision(options_.precision));
      }
      GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed, u.RepairIfInvalid());
      if (fixed) u = std::move(*fixed);
      GEOLAKE_ASSIGN_OR_RETURN(bool empty, u.IsEmpty());
      has_geometry = !empty;
      if (has_geometry) {
        GEOLAKE_ASSIGN_OR_RETURN(std::string wkb, u.ToWkb());
        rows.wkb += wkb;
      }
    }
    std::string().swap(root.wkb);
    rows.wkb_offsets.push_back(static_cast<std::int64_t>(rows.wkb.size()));
    rows.geometry_valid.push_back(has_geometry ? 1 : 0);
    rows.feature_index.push_back(groups_written_++);
  }
  // The groups are gone with this function's maps; what is carried stays held.
  held_bytes_.store(carried_bytes_);
  peak_held_.store(carried_bytes_);
  return Status::OK();
}

}  // namespace

Result<DissolveAggregate> ParseDissolveAggregate(std::string_view text) {
  DissolveAggregate a;
  if (text == "count") return a;
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view column = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  static constexpr std::pair<std::string_view, AggregateKind> kKinds[] = {
      {"sum", AggregateKind::kSum},   {"min", AggregateKind::kMin},
      {"max", AggregateKind::kMax},   {"first", AggregateKind::kFirst},
      {"mean", AggregateKind::kMean},
  };
  for (const auto& [name, k] : kKinds) {
    if (kind == name && !column.empty()) {
      a.kind = k;
      a.column = std::string(column);
      return a;
    }
  }
  return Status::InvalidArgument("--aggregate '" + std::string(text) +
                                 "': expected count, sum:COL, min:COL, max:COL, first:COL or "
                                 "mean:COL");
}

Result<TileGrid> ParseTileGrid(std::string_view text) {
  std::vector<double> numbers;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string part(text.substr(start, comma - start));
    char* end = nullptr;
    const double value = std::strtod(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size() || !std::isfinite(value)) {
      numbers.clear();
      break;
    }
    numbers.push_back(value);
    start = comma + 1;
  }
  if ((numbers.size() != 1 && numbers.size() != 3) || !(numbers[0] > 0)) {
    return Status::InvalidArgument("--tile-grid '" + std::string(text) +
                                   "': expected SIZE or SIZE,X0,Y0 (finite numbers, SIZE > 0)");
  }
  TileGrid grid;
  grid.size = numbers[0];
  if (numbers.size() == 3) {
    grid.x0 = numbers[1];
    grid.y0 = numbers[2];
  }
  return grid;
}

std::string DissolveAggregateName(const DissolveAggregate& a) {
  switch (a.kind) {
    case AggregateKind::kCount:
      return "count";
    case AggregateKind::kSum:
      return "sum_" + a.column;
    case AggregateKind::kMin:
      return "min_" + a.column;
    case AggregateKind::kMax:
      return "max_" + a.column;
    case AggregateKind::kFirst:
      return "first_" + a.column;
    case AggregateKind::kMean:
      return "mean_" + a.column;
  }
  return "?";
}

Status RunDissolve(const OpEnv& env, const InputSpec& input, const DissolveOptions& options,
                   const OutputSpec& output, const RunnerOptions& runner_options,
                   RunSummary* summary, DissolveReport* report) {
  *summary = RunSummary{};
  DissolveReport local_report;
  if (report == nullptr) report = &local_report;
  *report = DissolveReport{};
  if (!(options.precision >= 0) || !std::isfinite(options.precision)) {
    return Status::InvalidArgument("dissolve: --precision must be a finite number >= 0");
  }
  if (options.touching && !options.tile_column.empty()) {
    return Status::InvalidArgument(
        "dissolve: --touching and --tile-column exclude each other (--tile-column joins only "
        "pieces across tile edges)");
  }
  if (options.tile_grid) {
    const TileGrid& grid = *options.tile_grid;
    if (options.tile_column.empty()) {
      return Status::InvalidArgument("dissolve: --tile-grid needs --tile-column");
    }
    if (!(grid.size > 0) || !std::isfinite(grid.size) || !std::isfinite(grid.x0) ||
        !std::isfinite(grid.y0)) {
      return Status::InvalidArgument(
          "dissolve: --tile-grid: the size must be a finite number > 0 and the origin finite");
    }
  }
  if (options.leaf_pieces < 0) {
    return Status::InvalidArgument("dissolve: leaf pieces must be >= 0");
  }
  DissolveOperation op(options, report);
  return RunOperation(env, op, input, output, runner_options, summary);
}

std::string FormatDissolveReport(const DissolveReport& r) {
  std::string busy;
  for (const double s : r.worker_busy_seconds) {
    char one[32];
    std::snprintf(one, sizeof(one), "%s%.2f s", busy.empty() ? "" : ", ", s);
    busy += one;
  }
  char text[640];
  std::snprintf(text, sizeof(text),
                "dissolve: %lld groups from %lld rows (%lld geometries, %lld made valid, %s; "
                "largest group %lld); union %.2f s in %lld leaves + %lld merges, coverage path "
                "for %lld groups, %lld fell back to the unary union, %lld snapped retries; busy "
                "per worker: %s\n",
                static_cast<long long>(r.groups), static_cast<long long>(r.rows),
                static_cast<long long>(r.pieces), static_cast<long long>(r.repaired),
                FormatSize(r.piece_bytes).c_str(), static_cast<long long>(r.largest_group),
                r.union_seconds, static_cast<long long>(r.leaves), static_cast<long long>(r.merges),
                static_cast<long long>(r.coverage_groups),
                static_cast<long long>(r.coverage_fallbacks),
                static_cast<long long>(r.snap_retries), busy.c_str());
  std::string lines = text;
  if (r.passes > 1) {
    lines += "dissolve: the groups did not fit the operation's share of --memory: " +
             std::to_string(r.passes) + " passes, each reading the input (the most held at once " +
             FormatSize(r.piece_bytes) + ")\n";
  }
  if (r.chunk_passes > 0) {
    lines += "dissolve: " + std::to_string(r.chunk_passes) +
             " of the passes took spatial chunks of groups over the share, " +
             std::to_string(r.carried) + " partial unions carried to their groups' last pass" +
             (r.carry_merges > 0 ? ", " + std::to_string(r.carry_merges) +
                                       " times merged on the way to stay within the share"
                                 : std::string()) +
             "\n";
  }
  if (r.tiles > 0) {
    char tiles[240];
    std::snprintf(tiles, sizeof(tiles),
                  "dissolve --tile-column: %lld tiles, %lld pieces reach their tile's envelope; "
                  "%lld candidate pairs tested, %lld share a border across tiles, %.2f s\n",
                  static_cast<long long>(r.tiles), static_cast<long long>(r.edge_pieces),
                  static_cast<long long>(r.candidates), static_cast<long long>(r.pairs),
                  r.pairs_seconds);
    return lines + tiles;
  }
  if (r.candidates == 0 && r.pairs_seconds == 0) return lines;
  char touching[160];
  std::snprintf(touching, sizeof(touching),
                "dissolve --touching: %lld candidate pairs tested, %lld intersect, %.2f s\n",
                static_cast<long long>(r.candidates), static_cast<long long>(r.pairs),
                r.pairs_seconds);
  return lines + touching;
}

}  // namespace geolake::ops
