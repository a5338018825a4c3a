// The sort and hilbert strategies of compaction: rows of a group leave in key order, within the
// group's share of the memory budget, whatever the group's size.
//
// Inputs that are already sorted (hilbert: the footer records geo_hilbert as the sorting
// column, which every geolake writer does; sort: the manifest's sort_order_id is the order
// being applied) are runs as they are. The other inputs are read into a buffer that is sorted
// and spilled as a run whenever it fills its share; when nothing but one buffer exists, it is
// sorted and written out directly. Runs are merged with a k-way merge (a binary heap of run
// cursors, one decoded row group per run); when the runs' row groups do not fit in the share
// together, groups of runs are merged into longer spilled runs first (runs are spilled with
// small row groups, so a second pass fits many more of them).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <queue>
#include <sstream>
#include <system_error>

#include "geolake/core/logging.h"
#include "geolake/formats/geoparquet/layout_columns.h"
#include "geolake/geo/hilbert.h"
#include "geolake/maintenance/compact_internal.h"

namespace geolake::maintenance {
namespace {

namespace fs = std::filesystem;
using geoparquet::FieldType;

constexpr std::uint64_t kNoKey = std::numeric_limits<std::uint64_t>::max();

// Rows handed to the writer at a time: a row group is cut from several of these.
constexpr std::int64_t kChunkRows = 4096;

// ---- Sort order --------------------------------------------------------------------------

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// The key a column name (or field id) denotes among what a rewrite reads.
Result<SortKey> KeyForColumn(const std::string& name, const RewriteContext& ctx) {
  SortKey k;
  k.name = name;
  if (name == geoparquet::kHilbertColumn) {
    k.source = SortKey::Source::kHilbert;
    return k;
  }
  const std::string bbox = std::string(geoparquet::kBboxColumn) + ".";
  if (name == bbox + "xmin") k.source = SortKey::Source::kBboxXmin;
  if (name == bbox + "ymin") k.source = SortKey::Source::kBboxYmin;
  if (name == bbox + "xmax") k.source = SortKey::Source::kBboxXmax;
  if (name == bbox + "ymax") k.source = SortKey::Source::kBboxYmax;
  if (k.source != SortKey::Source::kAttribute) return k;
  for (std::size_t i = 0; i < ctx.columns.fields.size(); ++i) {
    if (ctx.columns.fields[i].name == name) {
      k.attribute = static_cast<int>(i);
      return k;
    }
  }
  std::string known;
  for (const geoparquet::FieldDef& f : ctx.columns.fields) known += f.name + ", ";
  return Status::InvalidArgument("sort column '" + name + "' is not a column the sort can use (" +
                                 known +
                                 "geo_hilbert, bbox.xmin, bbox.ymin, bbox.xmax, bbox.ymax)");
}

// "COL [ASC|DESC] [NULLS FIRST|LAST], ..." (Iceberg's sort_order syntax; nulls first for
// ascending and last for descending by default, as Spark orders them).
Result<std::vector<SortKey>> ParseSortOrder(const std::string& text, const RewriteContext& ctx) {
  std::vector<SortKey> keys;
  std::stringstream in(text);
  std::string item;
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("--sort-order '" + text + "': " + why);
  };
  while (std::getline(in, item, ',')) {
    item = Trim(item);
    if (item.empty()) return bad("empty sort field");
    if (Lower(item).rfind("zorder(", 0) == 0) {
      return bad("zorder is not supported; --strategy hilbert orders rows along a Hilbert curve");
    }
    std::stringstream words(item);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    GEOLAKE_ASSIGN_OR_RETURN(SortKey k, KeyForColumn(w[0], ctx));
    std::size_t i = 1;
    if (i < w.size() && (Lower(w[i]) == "asc" || Lower(w[i]) == "desc")) {
      k.descending = Lower(w[i]) == "desc";
      ++i;
    }
    k.nulls_first = !k.descending;
    if (i < w.size()) {
      if (i + 1 >= w.size() || Lower(w[i]) != "nulls" ||
          (Lower(w[i + 1]) != "first" && Lower(w[i + 1]) != "last")) {
        return bad("expected 'COL [ASC|DESC] [NULLS FIRST|LAST]', not '" + item + "'");
      }
      k.nulls_first = Lower(w[i + 1]) == "first";
      i += 2;
    }
    if (i != w.size()) return bad("unexpected '" + w[i] + "' in '" + item + "'");
    keys.push_back(std::move(k));
  }
  if (keys.empty()) return bad("no sort field");
  return keys;
}

// The table's sort order as keys; kInvalidArgument for a field the rewrite cannot evaluate.
Result<std::vector<SortKey>> KeysOfOrder(const table::SortOrder& order,
                                         const table::TableMetadata& metadata,
                                         const RewriteContext& ctx) {
  std::vector<SortKey> keys;
  const table::SchemaPtr schema = metadata.current_schema();
  for (const table::SortField& f : order.fields()) {
    if (f.transform.kind() != table::TransformKind::kIdentity) {
      return Status::NotImplemented("sort order " + std::to_string(order.order_id()) +
                                    ": transform '" + f.transform.ToString() +
                                    "' (only identity sort fields are applied)");
    }
    std::string name;
    for (const table::NestedField& top : schema->fields()) {
      if (top.id == f.source_id) name = top.name;
      if (top.type->id() == table::TypeId::kStruct) {
        for (const table::NestedField& child : top.type->fields()) {
          if (child.id == f.source_id) name = top.name + "." + child.name;
        }
      }
    }
    if (name.empty()) {
      return Status::InvalidArgument("sort order " + std::to_string(order.order_id()) +
                                     ": field id " + std::to_string(f.source_id) +
                                     " is not in the schema");
    }
    GEOLAKE_ASSIGN_OR_RETURN(SortKey k, KeyForColumn(name, ctx));
    k.descending = f.direction == table::SortDirection::kDescending;
    k.nulls_first = f.null_order == table::NullOrder::kNullsFirst;
    keys.push_back(std::move(k));
  }
  return keys;
}

bool SameKeys(const std::vector<SortKey>& a, const std::vector<SortKey>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].source != b[i].source || a[i].attribute != b[i].attribute ||
        a[i].descending != b[i].descending || a[i].nulls_first != b[i].nulls_first) {
      return false;
    }
  }
  return true;
}

// ---- Rows with keys ------------------------------------------------------------------------

// A batch of rows and each row's Hilbert key over the table's extent (kNoKey: no geometry or
// an empty one, which sorts last, as the writer orders them).
struct KeyedBatch {
  RowBatch rows;
  std::vector<std::uint64_t> keys;

  std::size_t size() const { return keys.size(); }
  std::int64_t ByteSize() const {
    return rows.ByteSize() + static_cast<std::int64_t>(keys.capacity() * sizeof(std::uint64_t));
  }
};

class Keyer {
 public:
  static Result<Keyer> Make(const pipeline::TableWriteOptions& write) {
    GEOLAKE_ASSIGN_OR_RETURN(
        geo::HilbertCurve curve,
        geo::HilbertCurve::Make(write.layout.hilbert_extent, write.layout.hilbert_order));
    return Keyer(curve);
  }
  void Fill(KeyedBatch* b) const {
    const std::size_t n = static_cast<std::size_t>(b->rows.num_rows());
    b->keys.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      const geo::Envelope& e = b->rows.summaries[r].envelope;
      b->keys[r] = b->rows.rows.geometry_valid[r] == 0 || e.IsEmpty()
                       ? kNoKey
                       : curve_.Index((e.xmin + e.xmax) * 0.5, (e.ymin + e.ymax) * 0.5);
    }
  }

 private:
  explicit Keyer(geo::HilbertCurve curve) : curve_(curve) {}
  geo::HilbertCurve curve_;
};

int CompareDouble(double a, double b) {
  // Iceberg's order: -0.0 before +0.0, NaN after every number.
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  if (a < b) return -1;
  if (a > b) return 1;
  if (a == 0 && b == 0 && std::signbit(a) != std::signbit(b)) return std::signbit(a) ? -1 : 1;
  return 0;
}

// The rows' order: the Hilbert key alone (hilbert), or the sort keys.
class RowComparator {
 public:
  explicit RowComparator(const std::vector<SortKey>* keys) : keys_(keys) {}

  bool hilbert_only() const { return keys_->empty(); }

  int Compare(const KeyedBatch& a, std::size_t i, const KeyedBatch& b, std::size_t j) const {
    if (keys_->empty()) return a.keys[i] < b.keys[j] ? -1 : a.keys[i] > b.keys[j] ? 1 : 0;
    for (const SortKey& k : *keys_) {
      const int c = CompareKey(k, a, i, b, j);
      if (c != 0) return c;
    }
    return 0;
  }

 private:
  static int CompareKey(const SortKey& k, const KeyedBatch& a, std::size_t i, const KeyedBatch& b,
                        std::size_t j) {
    bool null_a = false, null_b = false;
    int c = 0;
    switch (k.source) {
      case SortKey::Source::kHilbert:
        null_a = a.keys[i] == kNoKey;
        null_b = b.keys[j] == kNoKey;
        if (!null_a && !null_b) c = a.keys[i] < b.keys[j] ? -1 : a.keys[i] > b.keys[j] ? 1 : 0;
        break;
      case SortKey::Source::kAttribute: {
        const geoparquet::Column& ca = a.rows.rows.columns[static_cast<std::size_t>(k.attribute)];
        const geoparquet::Column& cb = b.rows.rows.columns[static_cast<std::size_t>(k.attribute)];
        null_a = ca.valid[i] == 0;
        null_b = cb.valid[j] == 0;
        if (null_a || null_b) break;
        switch (ca.type) {
          case FieldType::kDouble:
            c = CompareDouble(ca.doubles[i], cb.doubles[j]);
            break;
          case FieldType::kString:
          case FieldType::kBinary: {
            const int s = ca.StringAt(i).compare(cb.StringAt(j));
            c = s < 0 ? -1 : s > 0 ? 1 : 0;
            break;
          }
          default:
            c = ca.ints[i] < cb.ints[j] ? -1 : ca.ints[i] > cb.ints[j] ? 1 : 0;
            break;
        }
        break;
      }
      default: {
        const auto corner = [&](const KeyedBatch& x, std::size_t r, bool* null) {
          const geo::Envelope& e = x.rows.summaries[r].envelope;
          *null = x.rows.rows.geometry_valid[r] == 0 || e.IsEmpty();
          switch (k.source) {
            case SortKey::Source::kBboxXmin:
              return e.xmin;
            case SortKey::Source::kBboxYmin:
              return e.ymin;
            case SortKey::Source::kBboxXmax:
              return e.xmax;
            default:
              return e.ymax;
          }
        };
        const double va = corner(a, i, &null_a), vb = corner(b, j, &null_b);
        if (!null_a && !null_b) c = CompareDouble(va, vb);
        break;
      }
    }
    if (null_a || null_b) {
      if (null_a == null_b) return 0;
      return (null_a == k.nulls_first) ? -1 : 1;
    }
    return k.descending ? -c : c;
  }

  const std::vector<SortKey>* keys_;
};

// ---- Output in chunks ------------------------------------------------------------------------

// Gathers rows in their final order into chunks for a GroupWriter. With an executor, a full
// chunk is written by a task while the next one is gathered (at most one chunk in flight, so
// the writer sees the chunks in order and holds one more chunk than without).
class Emitter {
 public:
  Emitter(GroupWriter* writer, const ReadColumns& columns, std::int64_t chunk_bytes,
          ThreadPool* executor = nullptr, std::stop_token stop = {})
      : writer_(writer),
        columns_(columns),
        chunk_bytes_(chunk_bytes),
        executor_(executor != nullptr && executor->size() > 1 ? executor : nullptr),
        stop_(std::move(stop)) {
    chunk_ = RowBatch::Empty(columns_);
  }
  // A chunk still being written is waited for (its error is dropped: the caller is already
  // returning another one, or never asked).
  ~Emitter() { (void)WaitForWrite(); }
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  Status Emit(const KeyedBatch& from, std::size_t row) {
    AppendRow(from.rows, row, &chunk_);
    ++rows_;
    if (chunk_.num_rows() >= kChunkRows ||
        static_cast<std::int64_t>(chunk_.rows.wkb.size()) >= chunk_bytes_) {
      return HandOff();
    }
    return Status::OK();
  }
  // Write what is gathered and wait until every chunk is written.
  Status Flush() {
    GEOLAKE_RETURN_NOT_OK(HandOff());
    return WaitForWrite();
  }
  std::int64_t rows() const { return rows_; }

 private:
  Status HandOff() {
    if (chunk_.num_rows() == 0) return Status::OK();
    GEOLAKE_RETURN_NOT_OK(WaitForWrite());
    RowBatch chunk = std::exchange(chunk_, RowBatch::Empty(columns_));
    if (executor_ == nullptr) return writer_->Add(std::move(chunk));
    writing_ = std::make_unique<TaskGroup>(executor_, stop_);
    writing_->Spawn([this, c = std::make_shared<RowBatch>(std::move(chunk))]() {
      return writer_->Add(std::move(*c));
    });
    return Status::OK();
  }
  Status WaitForWrite() {
    if (writing_ == nullptr) return Status::OK();
    Status st = writing_->Wait();
    writing_.reset();
    return st;
  }

  GroupWriter* writer_;
  const ReadColumns& columns_;
  std::int64_t chunk_bytes_;
  ThreadPool* executor_;
  std::stop_token stop_;
  RowBatch chunk_;
  std::unique_ptr<TaskGroup> writing_;  // the chunk being written, if any
  std::int64_t rows_ = 0;
};

// ---- One group ------------------------------------------------------------------------------

// A sorted run read back from a file (an input or a spilled run), one row group at a time.
struct RunCursor {
  std::unique_ptr<DataFileReader> reader;
  KeyedBatch batch;
  std::size_t pos = 0;
  bool done = false;
  const table::DataFile* input = nullptr;  // null for spilled runs
};

// A run to merge: a sorted input (`input` set) or a spilled run, with its largest row group's
// decoded bytes (0: not measured yet).
struct RunSource {
  std::string path;
  const table::DataFile* input;
  std::int64_t bytes;
};

class SortedRewrite {
 public:
  SortedRewrite(const FileGroup& group, const RewriteContext& ctx, std::stop_token stop,
                bool trust_sorted_inputs)
      : group_(group),
        ctx_(ctx),
        stop_(std::move(stop)),
        trust_sorted_(trust_sorted_inputs),
        compare_(&ctx.sort_keys) {}

  ~SortedRewrite() {
    if (!spill_dir_.empty()) {
      std::error_code ec;
      fs::remove_all(spill_dir_, ec);
    }
  }

  Result<GroupOutput> Run();
  bool found_unsorted_input() const { return found_unsorted_; }

 private:
  Status Stopped() const {
    return stop_.stop_requested() ? Status::Cancelled("compaction stopped") : Status::OK();
  }
  // The budget left for rows being read, sorted and merged.
  std::int64_t Available() const { return available_; }
  Status SortBuffer(Emitter* out);
  Status SpillBuffer();
  Result<std::string> SpillDir();
  Status Merge(std::vector<std::unique_ptr<RunCursor>> runs, Emitter* out);
  Result<std::unique_ptr<RunCursor>> OpenRun(const std::string& path, const table::DataFile* input);
  // The first `count` of `sources`, opened (in parallel on the executor).
  Result<std::vector<std::unique_ptr<RunCursor>>> OpenRuns(const std::vector<RunSource>& sources,
                                                           std::size_t count);
  // fn(0..n-1): on the executor when it has two threads or more, else in order on this thread.
  Status ForEach(std::size_t n, const std::function<Status(std::int64_t)>& fn);
  Status Load(RunCursor* run, DecodeScratch* scratch);
  Status LoadAll(const std::vector<std::unique_ptr<RunCursor>>& runs);

  const FileGroup& group_;
  const RewriteContext& ctx_;
  std::stop_token stop_;
  bool trust_sorted_;
  RowComparator compare_;
  std::optional<Keyer> keyer_;
  std::int64_t available_ = 0;
  std::int64_t chunk_bytes_ = 0;
  std::vector<KeyedBatch> buffer_;
  std::int64_t buffer_bytes_ = 0;
  std::vector<std::string> spilled_;  // paths of spilled runs
  std::string spill_dir_;
  std::int64_t spilled_runs_ = 0;
  std::atomic<std::int64_t> rows_read_{0};
  bool found_unsorted_ = false;
  DecodeScratch scratch_;  // the runs' decoded pages (Load on the merging thread)
};

Result<std::string> SortedRewrite::SpillDir() {
  if (!spill_dir_.empty()) return spill_dir_;
  if (ctx_.temp_dir.empty()) {
    return Status::InvalidArgument(
        "the group does not fit in memory and no temporary folder was given to spill to");
  }
  // The pid in the name lets a later run remove what a killed one left (RemoveStaleSpills).
  spill_dir_ = ctx_.temp_dir + "/compact-" + std::to_string(::getpid()) + "-" + table::NewUuid();
  std::error_code ec;
  fs::create_directories(spill_dir_, ec);
  if (ec) return Status::IOError("temporary folder '" + spill_dir_ + "': " + ec.message());
  return spill_dir_;
}

Status SortedRewrite::SortBuffer(Emitter* out) {
  struct Entry {
    std::uint64_t key;
    std::uint32_t batch;
    std::uint32_t row;
  };
  std::vector<Entry> entries;
  std::size_t total = 0;
  for (const KeyedBatch& b : buffer_) total += b.size();
  entries.reserve(total);
  for (std::size_t bi = 0; bi < buffer_.size(); ++bi) {
    for (std::size_t r = 0; r < buffer_[bi].size(); ++r) {
      entries.push_back(
          {buffer_[bi].keys[r], static_cast<std::uint32_t>(bi), static_cast<std::uint32_t>(r)});
    }
  }
  // Equal keys keep input order (batch, row), so a sort is stable.
  if (compare_.hilbert_only()) {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      if (a.key != b.key) return a.key < b.key;
      if (a.batch != b.batch) return a.batch < b.batch;
      return a.row < b.row;
    });
  } else {
    std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
      return compare_.Compare(buffer_[a.batch], a.row, buffer_[b.batch], b.row) < 0;
    });
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if ((i & 4095) == 0) GEOLAKE_RETURN_NOT_OK(Stopped());
    GEOLAKE_RETURN_NOT_OK(out->Emit(buffer_[entries[i].batch], entries[i].row));
  }
  GEOLAKE_RETURN_NOT_OK(out->Flush());
  buffer_.clear();
  buffer_bytes_ = 0;
  return Status::OK();
}

// Spilled runs: one file, small row groups (a merge then holds little per run), a fast level.
GroupWriterOptions SpillOptions(const RewriteContext& ctx, const std::string& dir,
                                std::int64_t available) {
  GroupWriterOptions o;
  o.table = &ctx.write;
  o.folder = dir;
  o.split_bytes = 0;
  o.hilbert_sorted = ctx.sort_keys.empty();
  o.row_group_rows = 16384;
  o.row_group_bytes = std::clamp<std::int64_t>(available / 64, 256 << 10, 8 << 20);
  geoparquet::Compression fast;
  fast.codec = parquet::CompressionCodec::kZstd;
  fast.options.zstd_level = 1;
  o.compression = fast;
  return o;
}

Status SortedRewrite::SpillBuffer() {
  GEOLAKE_ASSIGN_OR_RETURN(std::string dir, SpillDir());
  GroupWriter writer(SpillOptions(ctx_, dir, available_), ctx_.io);
  Emitter out(&writer, ctx_.columns, chunk_bytes_, ctx_.write.executor, stop_);
  GEOLAKE_RETURN_NOT_OK(SortBuffer(&out));
  GEOLAKE_RETURN_NOT_OK(writer.Finish());
  for (const pipeline::WrittenFile& f : writer.Release()) spilled_.push_back(f.path);
  ++spilled_runs_;
  return Status::OK();
}

Status SortedRewrite::Load(RunCursor* run, DecodeScratch* scratch) {
  std::optional<StageMetrics::Timer> timer;
  if (ctx_.read_stage != nullptr) timer.emplace(ctx_.read_stage);
  GEOLAKE_ASSIGN_OR_RETURN(std::int64_t n, run->reader->Next(&run->batch.rows, scratch));
  if (ctx_.read_stage != nullptr && run->input != nullptr) ctx_.read_stage->AddRowsIn(n);
  run->pos = 0;
  if (n == 0) {
    run->done = true;
    run->batch = KeyedBatch();
    if (run->input != nullptr) {
      GEOLAKE_RETURN_NOT_OK(ctx_.CheckRowsRead(*run->reader, *run->input));
      rows_read_ += run->reader->rows_read();
    }
    return Status::OK();
  }
  keyer_->Fill(&run->batch);
  return Status::OK();
}

// The first row group of every run. Later ones load one at a time on the merging thread, each
// when its run runs out, into the shared scratch_: the merge then holds the converted rows of
// each run and the decoded pages of one row group. The first ones are all needed before the
// first row leaves, so they load on the executor (ForEach), each running task taking a free
// scratch: scratch_ first, then one more per task running at once.
Status SortedRewrite::LoadAll(const std::vector<std::unique_ptr<RunCursor>>& runs) {
  std::mutex mu;
  std::vector<DecodeScratch*> idle = {&scratch_};     // guarded by mu
  std::vector<std::unique_ptr<DecodeScratch>> extra;  // guarded by mu
  return ForEach(runs.size(), [&](std::int64_t i) -> Status {
    DecodeScratch* scratch = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (idle.empty()) {
        extra.push_back(std::make_unique<DecodeScratch>());
        idle.push_back(extra.back().get());
      }
      scratch = idle.back();
      idle.pop_back();
    }
    Status st = Load(runs[static_cast<std::size_t>(i)].get(), scratch);
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(scratch);
    return st;
  });
}

Result<std::unique_ptr<RunCursor>> SortedRewrite::OpenRun(const std::string& path,
                                                          const table::DataFile* input) {
  auto run = std::make_unique<RunCursor>();
  run->input = input;
  if (input != nullptr) {
    GEOLAKE_ASSIGN_OR_RETURN(run->reader, ctx_.OpenInput(*input));
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(run->reader, DataFileReader::Open(*ctx_.io, path, ctx_.columns));
  }
  return run;
}

Status SortedRewrite::ForEach(std::size_t n, const std::function<Status(std::int64_t)>& fn) {
  ThreadPool* executor = ctx_.write.executor;
  if (executor != nullptr && executor->size() > 1 && n > 1) {
    return executor->ParallelFor(static_cast<std::int64_t>(n), fn, stop_);
  }
  for (std::size_t i = 0; i < n; ++i) GEOLAKE_RETURN_NOT_OK(fn(static_cast<std::int64_t>(i)));
  return Status::OK();
}

Result<std::vector<std::unique_ptr<RunCursor>>> SortedRewrite::OpenRuns(
    const std::vector<RunSource>& sources, std::size_t count) {
  std::vector<std::unique_ptr<RunCursor>> runs(count);
  GEOLAKE_RETURN_NOT_OK(ForEach(count, [&](std::int64_t i) -> Status {
    const auto k = static_cast<std::size_t>(i);
    GEOLAKE_ASSIGN_OR_RETURN(runs[k], OpenRun(sources[k].path, sources[k].input));
    return Status::OK();
  }));
  return runs;
}

Status SortedRewrite::Merge(std::vector<std::unique_ptr<RunCursor>> runs, Emitter* out) {
  GEOLAKE_RETURN_NOT_OK(LoadAll(runs));
  // A min-heap of runs by their current row; ties go to the lower run index (stable).
  std::vector<int> heap;
  const auto greater = [&](int a, int b) {
    const RunCursor& ra = *runs[static_cast<std::size_t>(a)];
    const RunCursor& rb = *runs[static_cast<std::size_t>(b)];
    const int c = compare_.Compare(ra.batch, ra.pos, rb.batch, rb.pos);
    return c != 0 ? c > 0 : a > b;
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]->done) heap.push_back(static_cast<int>(i));
  }
  std::make_heap(heap.begin(), heap.end(), greater);
  std::int64_t emitted = 0;
  while (!heap.empty()) {
    if ((++emitted & 4095) == 0) GEOLAKE_RETURN_NOT_OK(Stopped());
    std::pop_heap(heap.begin(), heap.end(), greater);
    const int top = heap.back();
    RunCursor& run = *runs[static_cast<std::size_t>(top)];
    GEOLAKE_RETURN_NOT_OK(out->Emit(run.batch, run.pos));
    const std::uint64_t key = run.batch.keys[run.pos];
    ++run.pos;
    if (run.pos == run.batch.size()) {
      GEOLAKE_RETURN_NOT_OK(Load(&run, &scratch_));
      if (!run.done && compare_.hilbert_only() && run.batch.keys[0] < key) {
        found_unsorted_ = true;
      }
    } else if (compare_.Compare(run.batch, run.pos - 1, run.batch, run.pos) > 0) {
      found_unsorted_ = true;
    }
    if (found_unsorted_) {
      return Status::Internal("data file '" + run.reader->path() +
                              "' is not in the order its metadata claims");
    }
    if (run.done) {
      heap.pop_back();
    } else {
      std::push_heap(heap.begin(), heap.end(), greater);
    }
  }
  return out->Flush();
}

Result<GroupOutput> SortedRewrite::Run() {
  GEOLAKE_ASSIGN_OR_RETURN(Keyer keyer, Keyer::Make(ctx_.write));
  keyer_ = keyer;
  // The group's share: the writer's open row group, the chunk being gathered, and the rest for
  // the rows being read, sorted or merged.
  pipeline::Reservation share(ctx_.budget, 0);
  GEOLAKE_RETURN_NOT_OK(ctx_.budget->Reserve(ctx_.group_share_bytes, stop_));
  share.Grow(ctx_.group_share_bytes);
  chunk_bytes_ = std::clamp<std::int64_t>(ctx_.group_share_bytes / 16, 256 << 10, 8 << 20);
  available_ = std::max<std::int64_t>(ctx_.group_share_bytes - ctx_.writer_bytes - 2 * chunk_bytes_,
                                      ctx_.group_share_bytes / 4);

  // Inputs that are sorted runs already, and the others, which are sorted in buffers.
  // Each with its largest row group's decoded bytes when a probe of its footer gave them (0:
  // not probed yet).
  std::vector<std::pair<const CandidateFile*, std::int64_t>> sorted_inputs;
  // hilbert: whether each input's footer declares the order, and its row groups' size.
  struct Probe {
    bool sorted = false;
    std::int64_t bytes = 0;
  };
  std::vector<Probe> probes(group_.files.size());
  if (trust_sorted_ && compare_.hilbert_only()) {
    GEOLAKE_RETURN_NOT_OK(ForEach(group_.files.size(), [&](std::int64_t i) -> Status {
      const auto k = static_cast<std::size_t>(i);
      GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<DataFileReader> probe,
                               ctx_.OpenInput(group_.files[k].file));
      probes[k] = {probe->hilbert_sorted(), probe->max_row_group_bytes()};
      return Status::OK();
    }));
  }
  for (std::size_t k = 0; k < group_.files.size(); ++k) {
    const CandidateFile& c = group_.files[k];
    GEOLAKE_RETURN_NOT_OK(Stopped());
    bool sorted = false;
    const std::int64_t probed_bytes = probes[k].bytes;
    if (trust_sorted_) {
      if (compare_.hilbert_only()) {
        sorted = probes[k].sorted;
      } else {
        sorted = ctx_.sort_order_id.has_value() && c.file.sort_order_id == ctx_.sort_order_id;
      }
    }
    if (sorted) {
      sorted_inputs.emplace_back(&c, probed_bytes);
      continue;
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<DataFileReader> reader, ctx_.OpenInput(c.file));
    const std::int64_t reading = reader->max_row_group_bytes();
    while (true) {
      GEOLAKE_RETURN_NOT_OK(Stopped());
      KeyedBatch b;
      std::int64_t n = 0;
      {
        std::optional<StageMetrics::Timer> timer;
        if (ctx_.read_stage != nullptr) timer.emplace(ctx_.read_stage);
        GEOLAKE_ASSIGN_OR_RETURN(n, reader->Next(&b.rows, &scratch_));
        if (ctx_.read_stage != nullptr) ctx_.read_stage->AddRowsIn(n);
      }
      if (n == 0) break;
      keyer_->Fill(&b);
      // 16 bytes of sort index per row on top of the rows.
      const std::int64_t bytes = b.ByteSize() + n * 16;
      if (!buffer_.empty() && buffer_bytes_ + bytes + reading > available_) {
        GEOLAKE_RETURN_NOT_OK(SpillBuffer());
      }
      buffer_bytes_ += bytes;
      buffer_.push_back(std::move(b));
    }
    GEOLAKE_RETURN_NOT_OK(ctx_.CheckRowsRead(*reader, c.file));
    rows_read_ += reader->rows_read();
  }

  GroupWriter writer(ctx_.OutputOptions(group_), ctx_.io);
  Emitter out(&writer, ctx_.columns, chunk_bytes_, ctx_.write.executor, stop_);
  GroupOutput result;
  if (sorted_inputs.empty() && spilled_.empty()) {
    // Everything fit: sort in memory, write once.
    GEOLAKE_RETURN_NOT_OK(SortBuffer(&out));
    result.runs = 1;
  } else {
    if (!buffer_.empty()) GEOLAKE_RETURN_NOT_OK(SpillBuffer());
    // Runs to merge: the sorted inputs, then the spilled runs.
    std::vector<RunSource> pending;
    pending.reserve(sorted_inputs.size() + spilled_.size());
    for (const auto& [c, bytes] : sorted_inputs)
      pending.push_back({c->file.file_path, &c->file, bytes});
    for (const std::string& p : spilled_) pending.push_back({p, nullptr, 0});
    result.runs = static_cast<std::int64_t>(pending.size());
    // Each run holds one decoded row group while merged; measure those not probed yet from
    // their footers.
    for (RunSource& p : pending) {
      if (p.bytes > 0) continue;
      GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<RunCursor> probe, OpenRun(p.path, p.input));
      p.bytes = probe->reader->max_row_group_bytes();
    }
    // Merge passes until one merge fits: each pass merges the first runs that fit together (at
    // least two) into a spilled run at the end of the list.
    while (true) {
      std::int64_t total = 0;
      for (const RunSource& p : pending) total += p.bytes;
      if (total <= available_ || pending.size() <= 2) break;
      GEOLAKE_RETURN_NOT_OK(Stopped());
      std::size_t take = 0;
      std::int64_t bytes = 0;
      while (take < pending.size() && (take < 2 || bytes + pending[take].bytes <= available_)) {
        bytes += pending[take].bytes;
        ++take;
      }
      GEOLAKE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<RunCursor>> runs,
                               OpenRuns(pending, take));
      GEOLAKE_ASSIGN_OR_RETURN(std::string dir, SpillDir());
      GroupWriter spill(SpillOptions(ctx_, dir, available_), ctx_.io);
      Emitter spill_out(&spill, ctx_.columns, chunk_bytes_, ctx_.write.executor, stop_);
      GEOLAKE_RETURN_NOT_OK(Merge(std::move(runs), &spill_out));
      GEOLAKE_RETURN_NOT_OK(spill.Finish());
      std::vector<pipeline::WrittenFile> files = spill.Release();
      ++spilled_runs_;
      for (std::size_t i = 0; i < take; ++i) {
        if (pending[i].input == nullptr) (void)ctx_.io->Delete(pending[i].path);
      }
      pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(take));
      for (const pipeline::WrittenFile& f : files) {
        GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<RunCursor> probe, OpenRun(f.path, nullptr));
        pending.push_back({f.path, nullptr, probe->reader->max_row_group_bytes()});
      }
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<RunCursor>> runs,
                             OpenRuns(pending, pending.size()));
    GEOLAKE_RETURN_NOT_OK(Merge(std::move(runs), &out));
  }
  GEOLAKE_RETURN_NOT_OK(writer.Finish());
  result.rows_read = rows_read_;
  result.rows_written = writer.rows_written();
  result.spilled_runs = spilled_runs_;
  result.files = writer.Release();
  return result;
}

}  // namespace

Status PrepareSort(const CompactOptions& options, const table::TableMetadata& metadata,
                   RewriteContext* ctx) {
  if (options.strategy == CompactStrategy::kBinpack) return Status::OK();
  const table::SortOrderPtr table_order = metadata.default_sort_order();
  std::vector<SortKey> table_keys;
  if (table_order != nullptr && !table_order->is_unsorted()) {
    auto keys = KeysOfOrder(*table_order, metadata, *ctx);
    if (keys.ok()) table_keys = std::move(*keys);
    if (!keys.ok() && options.strategy == CompactStrategy::kSort && options.sort_order.empty()) {
      return keys.status();
    }
  }
  if (options.strategy == CompactStrategy::kHilbert) {
    // The key is the Hilbert index the writer gives geo_hilbert; files carry the table order's
    // id when that order is geo_hilbert ascending.
    ctx->sort_keys.clear();
    SortKey hilbert;
    hilbert.source = SortKey::Source::kHilbert;
    if (SameKeys(table_keys, {hilbert})) ctx->sort_order_id = table_order->order_id();
    return Status::OK();
  }
  if (options.sort_order.empty()) {
    if (table_keys.empty()) {
      return Status::InvalidArgument(
          "cannot sort: the table has no sort order; give --sort-order \"COL ASC, ...\" or use "
          "--strategy hilbert");
    }
    ctx->sort_keys = table_keys;
    ctx->sort_order_id = table_order->order_id();
  } else {
    GEOLAKE_ASSIGN_OR_RETURN(ctx->sort_keys, ParseSortOrder(options.sort_order, *ctx));
    if (!table_keys.empty() && SameKeys(table_keys, ctx->sort_keys)) {
      ctx->sort_order_id = table_order->order_id();
    }
  }
  // An order that is only the Hilbert key ascending (nulls last) is the hilbert strategy's.
  if (ctx->sort_keys.size() == 1 && ctx->sort_keys[0].source == SortKey::Source::kHilbert &&
      !ctx->sort_keys[0].descending && !ctx->sort_keys[0].nulls_first) {
    ctx->sort_keys.clear();
  }
  return Status::OK();
}

Result<GroupOutput> RewriteSorted(const FileGroup& group, const RewriteContext& ctx,
                                  std::stop_token stop) {
  bool retry = false;
  {
    SortedRewrite rewrite(group, ctx, stop, /*trust_sorted_inputs=*/true);
    auto out = rewrite.Run();
    if (out.ok() || !rewrite.found_unsorted_input()) return out;
    // A file that claimed an order it does not have (e.g. keys over another extent): its rows
    // are sorted like any other input instead.
    GEOLAKE_LOG_WARN("compact: group {}: {}; sorting every input", group.index,
                     out.status().message());
    retry = true;
  }
  SortedRewrite again(group, ctx, std::move(stop), /*trust_sorted_inputs=*/!retry);
  return again.Run();
}

void RemoveStaleSpills(const std::string& temp_dir) {
  std::error_code ec;
  if (temp_dir.empty() || !fs::is_directory(temp_dir, ec)) return;
  for (const auto& entry : fs::directory_iterator(temp_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("compact-", 0) != 0) continue;
    const std::string rest = name.substr(8);
    const auto dash = rest.find('-');
    if (dash == std::string::npos) continue;
    const long pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
    if (pid <= 0) continue;
    // A folder of a process that no longer exists is left over from a killed run.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code remove_ec;
    fs::remove_all(entry.path(), remove_ec);
    GEOLAKE_LOG_INFO("compact: removed {} left by a stopped run", entry.path().string());
  }
}

}  // namespace geolake::maintenance
