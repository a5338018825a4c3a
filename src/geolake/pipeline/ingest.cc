// How the workers share the work (issue #5: one big file still uses every core).
//
// A unit is read by one UnitReader, one batch at a time, but its batches are transformed in
// parallel: a worker takes the unit's `reading` role, reads one batch (at most read_batch_rows
// rows or about 256 KiB of WKB, so 255 huge polygons are still ~24 batches), gives the role back,
// transforms the batch with its own GeoContext and BatchTransformer, and parks it under its
// read sequence number. Whichever worker finds the unit's `writing` role free writes every
// parked batch whose turn has come, in read order, to the unit's one PartitionedWriter; the
// worker that writes the last batch finishes the writer and hands the unit's files to the
// CommitCoordinator, which still takes whole units only. No worker waits for the writer: it
// parks its batch and goes back to reading, and a unit holds at most 4 x workers batches
// between read and write. A worker first opens the next unit while fewer than `workers` are
// open (units in parallel: reads and writes of different units overlap, as before), else stays
// on its unit, else helps another open unit: so many units run one per worker, and a one-unit
// source (or the last unit of a run) gets every worker.
//
// A work item is one unit, or a pack of small sources (one unit each, together at most
// --unit-rows rows, consecutive in path order) read one after the other by the same reader
// role into the same writer: each batch remembers its part, so rows and rejects are counted
// per source, and the pack's outcomes reach the coordinator together. A folder of 300 small
// GeoPackages made 300 files (write stage 1.7-2.1 s busy) and now makes one (64-91 ms).
//
// Memory: the --memory budget is split in two parts that feed one in-flight gauge: a quarter
// for batches between read and write (the reader waits for room: backpressure), three
// quarters for the rows the writers hold (each writer's share is that part / workers, and a
// writer short of room finishes a file early). With one shared pool a writer could wait for
// room held by batches parked behind that same writer; with two parts it cannot.
//
// Rows: a batch is counted read once, written once (in order), and a unit is submitted once,
// by the worker that wrote its last batch; units still open at a cancel or error are aborted
// after every worker has returned, their finished files journaled as not committed.
// Threads: the workers are tasks on the caller's executor (IngestOptions::executor), one per
// executor thread, or the calling thread alone without one. A worker with nothing to claim
// runs other tasks queued on the executor while it waits (a page compression of a writer that
// is finishing a file, typically), so that at the end of a run, or of a one-file unit, the
// other workers help compress the last files instead of sleeping.
// Considered: tbb::parallel_pipeline per unit. Its nested waits let a thread start another
// unit's pipeline while waiting, so the number of open writers (each holding rows against the
// budget) is not bounded by --workers; the explicit roles above keep it bounded.
#include "geolake/pipeline/ingest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/thread_pool.h"
#include "geolake/core/utf8.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/wkb.h"
#include "geolake/pipeline/commit_coordinator.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/run_journal.h"
#include "geolake/pipeline/table_writer.h"
#include "geolake/sources/discover.h"
#include "geolake/sources/unit_reader.h"
#include "geolake/table/location.h"
#include "geolake/table/transaction.h"

namespace geolake::pipeline {
namespace {

// A unit of a source (by its index in the plan).
struct WorkPart {
  std::size_t source = 0;
  sources::SourceUnit unit;
};

// What one writer works through: one unit of a source, or the only units of several small
// sources in a row (PackSmallSources), read one after the other into the same files and
// committed together.
struct WorkItem {
  std::vector<WorkPart> parts;
};

// A read batch is cut at this much WKB (or read_batch_rows rows, whichever comes first), so
// that a source of a few huge polygons still becomes many batches that every worker shares.
// ne_countries_10m (255 features, 8.8 MB of WKB, 2.7 s of validity work): at 1 MiB, 7 batches
// whose largest takes 0.97 s, which caps 2 workers at ~1.8x; at 256 KiB ~35 batches. Points
// (21 bytes) still fill 8192-row batches.
constexpr std::int64_t kBatchWkbBytes = std::int64_t{256} << 10;

// A transformed batch waiting for its unit's writer, with the budget bytes of its read batch.
struct ReadyBatch {
  std::size_t part = 0;  // of the work item: whose rows these are
  TransformedBatch transformed;
  Reservation reservation;
};

// One unit being worked on. Its batches are read one at a time by whichever worker holds the
// `reading` role, transformed by the worker that read them (in parallel with the unit's other
// batches), and written in read order by whichever worker holds the `writing` role.
struct ActiveUnit {
  const WorkItem* item = nullptr;
  std::string label;                            // the item, for errors of its writer
  std::vector<std::string> part_labels;         // each part, for errors of its reader
  std::size_t part = 0;                         // the part being read (`reading` role)
  std::unique_ptr<sources::UnitReader> reader;  // of `part`, used only by the `reading` role
  std::unique_ptr<PartitionedWriter> writer;    // used only by the `writing` role
  // One per part: rows_read by the `reading` role; rows_written, rows_rejected by the
  // `writing` role; the item's files go with the first.
  std::vector<UnitOutcome> outcomes;
  // Guarded by Shared::mu.
  bool reading = false;
  bool writing = false;
  bool read_done = false;
  std::int64_t batches_read = 0;
  std::int64_t batches_written = 0;
  std::map<std::int64_t, ReadyBatch> ready;  // by read sequence number
};

// What every worker shares.
struct Shared {
  const IngestOptions* options = nullptr;
  const io::FileIO* io = nullptr;
  const TableWriteOptions* write = nullptr;
  std::vector<sources::DiscoveredSource> sources;
  std::vector<FieldMapping> mappings;    // per source
  std::vector<bool> check_lonlat_range;  // per source: no CRS, into a geographic table
  Counter* rows_missing_columns = nullptr;
  std::vector<WorkItem> work;
  MemoryBudget* writer_budget = nullptr;  // rows the writers hold
  MemoryBudget* batch_budget = nullptr;   // batches between read and write
  std::int64_t share_bytes = 0;
  std::size_t max_active = 1;             // units open at once (each has a writer)
  std::int64_t max_batches_per_unit = 1;  // read but not yet written, per unit
  RunJournal* journal = nullptr;
  CommitCoordinator* coordinator = nullptr;
  StageMetrics* read = nullptr;
  StageMetrics* transform = nullptr;
  StageMetrics* write_stage = nullptr;
  Counter* rejected = nullptr;
  Counter* made_valid = nullptr;
  Counter* utf8_replaced = nullptr;
  std::mutex utf8_mu;  // guards utf8_by_field
  // Values whose invalid UTF-8 bytes were replaced, by (source index, table column); warned
  // about at the end of the run, one line per field.
  std::map<std::pair<std::size_t, std::size_t>, std::int64_t> utf8_by_field;
  std::atomic<std::int64_t> rows_read{0};
  std::atomic<std::int64_t> files_written{0};
  std::atomic<std::int64_t> transform_threads{0};
  ThreadPool* executor = nullptr;  // the workers' executor (null: one worker, no executor)

  std::mutex mu;  // guards next_work, active, generation and every ActiveUnit's role fields
  std::condition_variable_any changed;  // a role, a batch or a unit slot was given back
  std::size_t next_work = 0;
  std::vector<std::unique_ptr<ActiveUnit>> active;
  std::uint64_t generation = 0;
};

// Packs consecutive sources that are one unit of fewer than `unit_rows` rows (a folder of
// small files) into work items of at most `unit_rows` rows, so that they share data files
// instead of each making its own small ones (one per partition cell); any other unit is an
// item of its own. Depends only on the sources, never on the worker count.
std::vector<WorkItem> PackSmallSources(std::vector<WorkPart> parts,
                                       const std::vector<sources::DiscoveredSource>& sources,
                                       std::int64_t unit_rows) {
  std::vector<WorkItem> items;
  bool packing = false;          // items.back() is a pack that may take more
  std::int64_t packed_rows = 0;  // its rows
  for (WorkPart& part : parts) {
    const sources::DiscoveredSource& source = sources[part.source];
    const std::int64_t rows = source.feature_count;
    const bool small = source.units.size() == 1 && rows >= 0 && rows < unit_rows;
    if (small && packing && packed_rows + rows <= unit_rows) {
      items.back().parts.push_back(std::move(part));
      packed_rows += rows;
      continue;
    }
    items.push_back(WorkItem{{std::move(part)}});
    packing = small;
    packed_rows = small ? rows : 0;
  }
  return items;
}

std::string SourceCrs(const sources::DiscoveredSource& source) {
  return !source.crs_authority.empty() ? source.crs_authority : source.crs_projjson;
}

// Journal the files a work item finished, committed or not (under its first part: a packed
// item's files hold rows of all its parts).
Status JournalFiles(Shared& shared, const WorkItem& item, const std::vector<WrittenFile>& files) {
  const WorkPart& first = item.parts.front();
  std::vector<std::string> packed_with;
  for (std::size_t p = 1; p < item.parts.size(); ++p) {
    packed_with.push_back(shared.sources[item.parts[p].source].fingerprint.ToString());
  }
  std::vector<JournalEntry> entries;
  entries.reserve(files.size());
  for (const WrittenFile& file : files) {
    entries.push_back(JournalEntry{file.path, shared.sources[first.source].fingerprint.ToString(),
                                   first.unit.index, file.rows, false, 0, packed_with});
  }
  shared.files_written += static_cast<std::int64_t>(files.size());
  return shared.journal->FilesWritten(entries);
}

// Wake the workers waiting in ClaimRead. Call with Shared::mu held.
void NotifyChanged(Shared& shared) {
  ++shared.generation;
  shared.changed.notify_all();
}

// What a worker gets to read next: a unit with its `reading` role taken (`open`: the unit is
// new and its reader and writer are still to be made), or nullptr when every unit is done.
struct ReadClaim {
  ActiveUnit* unit = nullptr;
  bool open = false;
};

// Take the `reading` role of a unit: open the next unit while fewer than max_active are open
// (units in parallel read, transform and write independently, the cheapest parallelism),
// else stay on `last` (the unit this worker read before) if it may read another batch, else
// help the oldest open unit that may; else wait for one of those to change.
// Errors: kCancelled when `stop` fires.
Result<ReadClaim> ClaimRead(Shared& shared, const ActiveUnit* last, const std::stop_token& stop) {
  const auto readable = [&shared](const ActiveUnit& unit) {
    return !unit.reading && !unit.read_done &&
           unit.batches_read - unit.batches_written < shared.max_batches_per_unit;
  };
  std::unique_lock lock(shared.mu);
  while (true) {
    if (stop.stop_requested()) return Status::Cancelled("ingest stopped");
    if (shared.next_work < shared.work.size() && shared.active.size() < shared.max_active) {
      auto unit = std::make_unique<ActiveUnit>();
      unit->item = &shared.work[shared.next_work++];
      unit->reading = true;
      shared.active.push_back(std::move(unit));
      return ReadClaim{shared.active.back().get(), true};
    }
    ActiveUnit* pick = nullptr;
    for (const auto& unit : shared.active) {
      if (!readable(*unit)) continue;
      if (pick == nullptr || unit.get() == last) pick = unit.get();
    }
    if (pick != nullptr) {
      pick->reading = true;
      return ReadClaim{pick, false};
    }
    if (shared.next_work >= shared.work.size() && shared.active.empty()) return ReadClaim{};
    const std::uint64_t seen = shared.generation;
    if (shared.executor != nullptr && shared.executor->OnWorkerThread()) {
      // Nothing to claim: help with what is queued on the executor (this worker holds no role
      // and no lock then), and look again every 2 ms or as soon as a role is given back.
      lock.unlock();
      const bool ran = shared.executor->RunQueuedTask();
      lock.lock();
      if (ran) continue;
      shared.changed.wait_for(lock, stop, std::chrono::milliseconds(2),
                              [&] { return shared.generation != seen; });
    } else {
      shared.changed.wait(lock, stop, [&] { return shared.generation != seen; });
    }
  }
}

// Open the reader of part `part` of `unit` (the caller holds its `reading` role); it watches
// `stop` inside long records.
Status OpenPart(ActiveUnit* unit, std::size_t part, const std::stop_token& stop) {
  unit->reader.reset();
  auto reader = sources::UnitReader::Open(unit->item->parts[part].unit);
  if (!reader.ok()) return reader.status().WithContext(unit->part_labels[part]);
  unit->reader = std::move(*reader);
  unit->reader->SetStop(stop);
  unit->part = part;
  return Status::OK();
}

// Make a new work item's writer, outcomes and first reader (the caller holds its `reading`
// role).
Status OpenUnit(Shared& shared, ActiveUnit* unit, const std::stop_token& stop) {
  for (const WorkPart& part : unit->item->parts) {
    const sources::DiscoveredSource& source = shared.sources[part.source];
    unit->part_labels.push_back("source '" + source.path + "' unit " +
                                std::to_string(part.unit.index));
    UnitOutcome outcome;
    outcome.source = source.fingerprint.ToString();
    outcome.source_path = source.path;
    outcome.unit = part.unit.index;
    unit->outcomes.push_back(std::move(outcome));
  }
  unit->label = unit->part_labels.size() == 1
                    ? unit->part_labels.front()
                    : std::to_string(unit->part_labels.size()) + " small sources from '" +
                          unit->outcomes.front().source_path + "' to '" +
                          unit->outcomes.back().source_path + "'";
  unit->writer = std::make_unique<PartitionedWriter>(shared.write, shared.io, shared.writer_budget,
                                                     shared.share_bytes, shared.write_stage, stop);
  return OpenPart(unit, 0, stop);
}

// Write one batch in its turn (the caller holds the unit's `writing` role).
Status WriteReady(Shared& shared, ActiveUnit* unit, ReadyBatch* ready) {
  TransformedBatch& transformed = ready->transformed;
  UnitOutcome& outcome = unit->outcomes[ready->part];
  if (!transformed.rejects.empty()) {
    outcome.rows_rejected += static_cast<std::int64_t>(transformed.rejects.size());
    shared.rejected->Add(static_cast<std::int64_t>(transformed.rejects.size()));
    shared.journal->AddRejects(outcome.source_path, transformed.rejects);
  }
  outcome.rows_written += transformed.batch.num_rows();
  // The writer reserves the rows it keeps on the writers' budget; the read batch's bytes are
  // given back first so that the next read can start.
  ready->reservation.Reset();
  return WriteTransformedBatch(&transformed, unit->writer.get());
}

// Finish a unit whose every batch is written (the caller holds its `writing` role): close its
// files, journal them and hand them to the coordinator.
Status FinishUnit(Shared& shared, ActiveUnit* unit) {
  GEOLAKE_RETURN_NOT_OK(unit->writer->FinishAll().WithContext(unit->label));
  UnitOutcome& first = unit->outcomes.front();
  first.files = unit->writer->TakeWritten();
  GEOLAKE_RETURN_NOT_OK(JournalFiles(shared, *unit->item, first.files));
  shared.coordinator->Submit(std::move(unit->outcomes));
  return Status::OK();
}

// Park `batch` (when given) as the unit's batch `seq`, then, unless another worker holds the
// unit's `writing` role, write every parked batch whose turn has come, and finish the unit once
// the last one is written. Batches are written in read order, so a unit's files do not depend
// on which worker transformed what.
Status ParkAndDrain(Shared& shared, ActiveUnit* unit, std::int64_t seq,
                    std::optional<ReadyBatch> batch) {
  std::unique_lock lock(shared.mu);
  if (batch.has_value()) unit->ready.emplace(seq, std::move(*batch));
  if (unit->writing) return Status::OK();
  unit->writing = true;
  while (true) {
    const auto next = unit->ready.find(unit->batches_written);
    if (next == unit->ready.end()) {
      if (unit->read_done && unit->batches_written == unit->batches_read) break;
      unit->writing = false;
      return Status::OK();
    }
    ReadyBatch ready = std::move(next->second);
    unit->ready.erase(next);
    lock.unlock();
    Status st = WriteReady(shared, unit, &ready).WithContext(unit->label);
    lock.lock();
    // On error the role stays taken: the unit is dropped (and its files journaled) at the end.
    GEOLAKE_RETURN_NOT_OK(st);
    ++unit->batches_written;
    NotifyChanged(shared);
  }
  lock.unlock();
  GEOLAKE_RETURN_NOT_OK(FinishUnit(shared, unit));
  lock.lock();
  std::erase_if(shared.active, [unit](const auto& open) { return open.get() == unit; });
  NotifyChanged(shared);
  return Status::OK();
}

// A worker keeps the transformers of this many sources: work goes through the sources in
// path order, so a folder of thousands of files needs only the last few.
constexpr std::size_t kMaxTransformersPerWorker = 16;

// The transformer of part `part`'s source for this worker's GeoContext, made on first use.
Result<BatchTransformer*> TransformerFor(
    Shared& shared, const ActiveUnit& unit, std::size_t part, geo::GeoContext* ctx,
    std::map<std::size_t, std::unique_ptr<BatchTransformer>>* transformers) {
  const std::size_t source_idx = unit.item->parts[part].source;
  if (!transformers->contains(source_idx) && transformers->size() >= kMaxTransformersPerWorker) {
    transformers->erase(transformers->begin());  // the source earliest in path order
  }
  auto& transformer = (*transformers)[source_idx];
  if (transformer == nullptr) {
    TransformOptions options;
    options.on_invalid = shared.options->on_invalid;
    options.table_fields = shared.write->fields;
    options.partition = shared.write->layout.partition;
    options.table_crs = shared.write->layout.crs;
    options.source_crs = SourceCrs(shared.sources[source_idx]);
    options.check_lonlat_range = shared.check_lonlat_range[source_idx];
    auto made = BatchTransformer::Make(ctx, std::move(options), shared.mappings[source_idx]);
    if (!made.ok()) return made.status().WithContext(unit.part_labels[part]);
    transformer = std::move(*made);
  }
  return transformer.get();
}

// One worker: claim a unit's next read, read one batch, transform it, park it for the unit's
// writer (writing whatever is in turn), until every unit is done.
Status RunWorker(Shared& shared, const std::stop_token& stop) {
  GEOLAKE_ASSIGN_OR_RETURN(auto ctx, geo::GeoContext::Make(stop));
  std::map<std::size_t, std::unique_ptr<BatchTransformer>> transformers;
  geoparquet::FeatureBatch batch;
  bool transformed_any = false;
  const ActiveUnit* last = nullptr;  // compared only, never dereferenced (it may be gone)
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(ReadClaim claim, ClaimRead(shared, last, stop));
    ActiveUnit* unit = claim.unit;
    last = unit;
    if (unit == nullptr) return Status::OK();
    // On error the `reading` role stays taken: the run stops and the unit is dropped.
    if (claim.open) GEOLAKE_RETURN_NOT_OK(OpenUnit(shared, unit, stop));
    std::int64_t rows = 0;
    std::size_t part = unit->part;
    while (true) {
      StageMetrics::Timer timer(shared.read);
      auto read = unit->reader->ReadBatch(shared.options->read_batch_rows, kBatchWkbBytes, &batch);
      if (!read.ok()) return read.status().WithContext(unit->part_labels[part]);
      rows = *read;
      // A packed item goes on with its next part's reader.
      if (rows > 0 || part + 1 == unit->item->parts.size()) break;
      GEOLAKE_RETURN_NOT_OK(OpenPart(unit, ++part, stop));
    }
    if (rows == 0) {
      {
        std::lock_guard lock(shared.mu);
        unit->reading = false;
        unit->read_done = true;
      }
      GEOLAKE_RETURN_NOT_OK(ParkAndDrain(shared, unit, 0, std::nullopt));
      continue;
    }
    // Backpressure: the reader waits (still holding the unit's reading role) until the
    // batches in flight leave room for this one.
    const std::int64_t batch_bytes = batch.ByteSize();
    GEOLAKE_RETURN_NOT_OK(shared.batch_budget->Reserve(batch_bytes, stop));
    ReadyBatch ready;
    ready.part = part;
    ready.reservation = Reservation(shared.batch_budget, batch_bytes);
    unit->outcomes[part].rows_read += rows;
    shared.rows_read += rows;
    shared.read->AddRowsOut(rows);
    shared.read->AddBytesOut(batch_bytes);
    std::int64_t seq = 0;
    {
      std::lock_guard lock(shared.mu);
      seq = unit->batches_read++;
      unit->reading = false;
      NotifyChanged(shared);
    }
    GEOLAKE_ASSIGN_OR_RETURN(BatchTransformer * transformer,
                             TransformerFor(shared, *unit, part, ctx.get(), &transformers));
    {
      StageMetrics::Timer timer(shared.transform);
      shared.transform->AddRowsIn(rows);
      Status st = transformer->Apply(batch, &ready.transformed);
      if (!st.ok()) return st.WithContext(unit->part_labels[part]);
      shared.transform->AddRowsOut(ready.transformed.batch.num_rows());
    }
    if (!transformed_any) {
      transformed_any = true;
      ++shared.transform_threads;
    }
    shared.made_valid->Add(ready.transformed.made_valid);
    if (!shared.mappings[unit->item->parts[part].source].missing.empty()) {
      shared.rows_missing_columns->Add(ready.transformed.batch.num_rows());
    }
    if (!ready.transformed.utf8_replaced.empty()) {
      const std::size_t source_idx = unit->item->parts[part].source;
      std::lock_guard lock(shared.utf8_mu);
      for (std::size_t col = 0; col < ready.transformed.utf8_replaced.size(); ++col) {
        const std::int64_t count = ready.transformed.utf8_replaced[col];
        if (count == 0) continue;
        shared.utf8_replaced->Add(count);
        shared.utf8_by_field[{source_idx, col}] += count;
      }
    }
    GEOLAKE_RETURN_NOT_OK(ParkAndDrain(shared, unit, seq, std::move(ready)));
  }
}

// `names` joined with ", ", each escaped for a message.
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + EscapeForMessage(name);
  return out;
}

// Attributes a source would lose or leave null, said out loud (issue 17 item 18): a table
// column the source lacks (a shapefile without its .dbf has no field at all) is null in its
// rows, a source field the table lacks is dropped; each is a warning, and under
// --strict-schema an error before any row is written.
Status CheckFieldsOfSource(const sources::DiscoveredSource& source, const FieldMapping& mapping,
                           const IngestOptions& options, const std::string& label) {
  std::string hint;
  if (source.driver == "ESRI Shapefile" && source.fields.empty()) {
    std::error_code ec;
    std::filesystem::path dbf(source.path);
    const bool has_dbf = std::filesystem::exists(dbf.replace_extension(".dbf"), ec) ||
                         std::filesystem::exists(dbf.replace_extension(".DBF"), ec);
    if (!has_dbf) hint = " (the shapefile has no .dbf: it carries no attributes)";
  }
  if (!mapping.missing.empty()) {
    if (options.strict_schema) {
      return Status::InvalidArgument(label + ": table columns missing from the source" + hint +
                                     ": " + JoinNames(mapping.missing) +
                                     " (--strict-schema; without it they are null)");
    }
    Log(LogLevel::kWarn, "{}: table columns missing from the source are null in its rows{}: {}",
        label, hint, JoinNames(mapping.missing));
  }
  if (!mapping.dropped.empty()) {
    if (options.strict_schema) {
      return Status::InvalidArgument(label +
                                     ": fields not in the table: " + JoinNames(mapping.dropped) +
                                     " (--strict-schema; without it they are dropped)");
    }
    Log(LogLevel::kWarn, "{}: fields not in the table are dropped: {}", label,
        JoinNames(mapping.dropped));
  }
  return Status::OK();
}

// The sampled rows of a CRS-less source checked against lon/lat range.
constexpr std::int64_t kCrsSampleRows = 1000;

// A source without a CRS is taken to be in the table CRS. When that is geographic, its first
// rows must look like lon/lat (x, y) degrees: a source whose sampled geometries are mostly
// outside [-180, 180] x [-90, 90] is projected (metres) and is refused before any row is
// written, rather than committed as nonsense or rejected row by row. Single stray rows are
// rejected by the transform (TransformOptions::check_lonlat_range).
Status CheckCrsLessSource(const sources::DiscoveredSource& source, const std::string& table_crs,
                          const std::string& label) {
  if (source.units.empty()) return Status::OK();
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, sources::UnitReader::Open(source.units.front()));
  geoparquet::FeatureBatch batch;
  Result<std::int64_t> rows = reader->ReadBatch(kCrsSampleRows, &batch);
  if (!rows.ok()) return Status::OK();  // the run itself reports what the reader says
  std::int64_t sampled = 0;
  std::int64_t outside = 0;
  geo::Envelope first_outside;
  for (std::size_t row = 0; row < static_cast<std::size_t>(batch.num_rows()); ++row) {
    if (batch.geometry_valid[row] == 0) continue;
    Result<geo::WkbSummary> summary = geo::SummarizeWkb(batch.GeometryAt(row));
    if (!summary.ok() || summary->non_finite || summary->envelope.IsEmpty()) continue;
    ++sampled;
    if (!WithinLonLatRange(summary->envelope)) {
      if (outside++ == 0) first_outside = summary->envelope;
    }
  }
  if (sampled == 0 || outside * 2 <= sampled) return Status::OK();
  return Status::InvalidArgument(fmt::format(
      "{}: the source has no CRS and {} of its first {} geometries lie outside lon [-180, 180] x "
      "lat [-90, 90] (the first: x {}..{}, y {}..{}), so they cannot be in the table CRS {}: "
      "projected coordinates? Give the source its CRS (a .prj, the format's CRS field) or "
      "ingest it into a table in its CRS",
      label, outside, sampled, first_outside.xmin, first_outside.xmax, first_outside.ymin,
      first_outside.ymax, table_crs));
}

// Which of `which` sources have no CRS while `table_crs` is geographic (`crs_less`, one flag
// per source), each checked by CheckCrsLessSource when `sample`.
Status CheckCrsLessSources(const std::vector<sources::DiscoveredSource>& sources,
                           const std::set<std::size_t>& which, const std::string& table_crs,
                           bool sample, const std::stop_token& stop, std::vector<bool>* crs_less) {
  crs_less->assign(sources.size(), false);
  GEOLAKE_ASSIGN_OR_RETURN(auto ctx, geo::GeoContext::Make(stop));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Crs crs, geo::Crs::Make(*ctx, table_crs));
  if (!crs.is_geographic()) return Status::OK();
  for (const std::size_t i : which) {
    if (!SourceCrs(sources[i]).empty()) continue;
    (*crs_less)[i] = true;
    if (sample) {
      GEOLAKE_RETURN_NOT_OK(
          CheckCrsLessSource(sources[i], table_crs, "source '" + sources[i].path + "'"));
    }
  }
  return Status::OK();
}

Result<table::Table> LoadOrCreate(table::Catalog& catalog, const io::FileIO& io,
                                  const table::TableIdentifier& id,
                                  const std::vector<sources::DiscoveredSource>& sources,
                                  const IngestOptions& options, bool* created) {
  Result<table::Table> loaded = table::LoadTable(catalog, io, id);
  if (loaded.ok() || loaded.status().code() != ErrorCode::kNotFound || !options.create) {
    return loaded;
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::NewTableOptions create,
                           layout::LayoutNewTable(sources.front().fields, options.layout));
  GEOLAKE_ASSIGN_OR_RETURN(create.location, table::DefaultTableLocation(options.warehouse, id));
  GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(catalog, id.ns));
  Result<table::Table> made = table::CreateTable(catalog, io, id, create);
  if (made.ok()) {
    *created = true;
    Log(LogLevel::kInfo, "created table {} from {}", id.ToString(), sources.front().path);
    return made;
  }
  if (made.status().code() == ErrorCode::kAlreadyExists) return table::LoadTable(catalog, io, id);
  return made;
}

}  // namespace

Status Ingest(table::Catalog& catalog, const io::FileIO& io, const table::TableIdentifier& id,
              const std::vector<std::string>& specs, const IngestOptions& options,
              IngestSummary* summary, Metrics* metrics,
              std::stop_token stop) {  // NOLINT(performance-unnecessary-value-param): a shared
                                       // handle, passed by value as std::jthread passes it
  Metrics local_metrics;
  if (metrics == nullptr) metrics = &local_metrics;
  *summary = IngestSummary{};
  summary->run_id = options.run_id.empty() ? NewRunId() : options.run_id;
  summary->run_dir = RunDirectory(options.warehouse, summary->run_id);
  if (options.commit_rows <= 0 || options.commit_seconds <= 0 || options.read_batch_rows <= 0) {
    return Status::InvalidArgument(
        "--commit-rows, --commit-seconds and the batch size must be "
        "positive");
  }

  // 1. discover
  Shared shared;
  StageMetrics* discover = metrics->stage("discover");
  {
    StageMetrics::Timer timer(discover);
    sources::DiscoverOptions discover_options;
    discover_options.unit_rows = options.unit_rows;
    discover_options.layer = options.layer;
    discover_options.executor = options.executor;
    discover_options.stop = stop;
    GEOLAKE_ASSIGN_OR_RETURN(shared.sources, sources::DiscoverSources(specs, discover_options));
  }
  summary->sources = static_cast<std::int64_t>(shared.sources.size());
  discover->AddRowsOut(summary->sources);
  if (shared.sources.empty()) return Status::NotFound("no source to ingest");

  // One worker per executor thread (each can take any unit), or the calling thread alone.
  const int workers = options.executor != nullptr ? options.executor->size() : 1;
  // A table this run is to create: its CRS-less sources are sampled before it is made, so a
  // refused source leaves no empty table behind.
  if (options.create) {
    Result<table::Table> existing = table::LoadTable(catalog, io, id);
    if (!existing.ok() && existing.status().code() == ErrorCode::kNotFound) {
      std::set<std::size_t> all;
      for (std::size_t i = 0; i < shared.sources.size(); ++i) all.insert(i);
      std::vector<bool> unused;
      GEOLAKE_RETURN_NOT_OK(CheckCrsLessSources(shared.sources, all, options.layout.crs,
                                                /*sample=*/true, stop, &unused));
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::Table table, LoadOrCreate(catalog, io, id, shared.sources,
                                                            options, &summary->table_created));
  Result<TableWriteOptions> write = TableWriteOptionsFor(table.metadata);
  if (!write.ok()) return write.status().WithContext("table '" + id.ToString() + "'");
  // The Parquet writer buffers one row group per file being written, outside the rows the
  // budget counts; cap it so that all workers' open row groups stay a fraction of the budget.
  write->row_group_bytes = std::clamp<std::int64_t>(
      (options.memory_bytes > 0 ? options.memory_bytes : DefaultMemoryBudget()) /
          (std::int64_t{8} * workers),
      std::int64_t{1} << 20, write->row_group_bytes);
  // Files are Hilbert-sorted, so all of a file's pages are encoded and compressed when it is
  // finished, by the one worker that finishes it; at the end of a run (or of a one-file unit)
  // the other workers would idle meanwhile. Its large pages are compressed as tasks on the
  // executor instead, which idle workers run (ClaimRead) and the writer runs itself while it
  // waits for them; with one worker pages are compressed as they are cut.
  write->executor = options.executor;
  shared.write = &*write;

  // Resume: what earlier runs committed. Fields are checked for every source before any row
  // is written.
  const CommittedUnits done = ReadCommittedUnits(table.metadata);
  std::vector<SourcePlan> plans;
  std::vector<WorkPart> work;
  for (std::size_t i = 0; i < shared.sources.size(); ++i) {
    const sources::DiscoveredSource& source = shared.sources[i];
    const std::string fingerprint = source.fingerprint.ToString();
    const std::string label = "source '" + source.path + "'";
    GEOLAKE_ASSIGN_OR_RETURN(FieldMapping mapping,
                             MapFields(source.fields, shared.write->fields, label));
    if (!done.sources.contains(fingerprint)) {
      GEOLAKE_RETURN_NOT_OK(CheckFieldsOfSource(source, mapping, options, label));
      if (!mapping.missing.empty()) ++summary->sources_missing_columns;
    }
    shared.mappings.push_back(std::move(mapping));
    if (done.sources.contains(fingerprint)) {
      ++summary->sources_skipped;
      continue;
    }
    const auto by_path = done.fingerprints_by_path.find(source.fingerprint.path);
    const bool changed =
        by_path != done.fingerprints_by_path.end() && !by_path->second.contains(fingerprint);
    if (changed && !options.allow_changed_sources) {
      std::string message = label;
      message += " changed since an earlier run committed it (";
      message += *by_path->second.begin();
      message += " -> ";
      message += fingerprint;
      message += "); pass --allow-changed-sources to ingest it again";
      return Status::InvalidArgument(message);
    }
    // Unit indices name row ranges only under the --unit-rows they were cut with.
    const auto partly = done.units.find(fingerprint);
    if (partly != done.units.end()) {
      const auto recorded = done.unit_rows.find(fingerprint);
      if (recorded == done.unit_rows.end()) {
        Log(LogLevel::kWarn,
            "{}: partly committed by a run that did not record its --unit-rows; resuming with "
            "{} assumes the same units",
            label, options.unit_rows);
      } else if (recorded->second != options.unit_rows) {
        return Status::InvalidArgument(
            label + " was partly committed with --unit-rows " + std::to_string(recorded->second) +
            " (" + std::to_string(partly->second.size()) + " units); resume it with --unit-rows " +
            std::to_string(recorded->second) + ": other units would cover other rows");
      }
    }
    SourcePlan plan;
    plan.fingerprint = fingerprint;
    plan.path = source.path;
    plan.unit_count = static_cast<std::int64_t>(source.units.size());
    plan.unit_rows = options.unit_rows;
    for (const sources::SourceUnit& unit : source.units) {
      if (done.UnitDone(fingerprint, unit.index)) {
        plan.committed_units.insert(unit.index);
        ++summary->units_skipped;
      } else if (!options.shard.Owns(sources::ShardKey(source.fingerprint, unit.index))) {
        ++summary->units_other_shards;
      } else {
        work.push_back(WorkPart{i, unit});
      }
    }
    plans.push_back(std::move(plan));
  }
  // Sources without a CRS into a geographic table: refused when they are plainly projected
  // (already sampled above when this run created the table).
  std::vector<bool> crs_less;
  {
    std::set<std::size_t> to_do;
    for (const WorkPart& part : work) to_do.insert(part.source);
    GEOLAKE_RETURN_NOT_OK(CheckCrsLessSources(shared.sources, to_do, shared.write->layout.crs,
                                              /*sample=*/!summary->table_created, stop, &crs_less));
  }
  shared.check_lonlat_range = std::move(crs_less);
  summary->units = static_cast<std::int64_t>(work.size());
  shared.work = PackSmallSources(std::move(work), shared.sources, options.unit_rows);
  if (summary->sources_skipped > 0) {
    std::fprintf(stderr, "skipped %lld sources already committed\n",
                 static_cast<long long>(summary->sources_skipped));
  }
  if (summary->units_skipped > 0) {
    Log(LogLevel::kInfo, "skipped {} units already committed", summary->units_skipped);
  }
  if (!options.shard.whole()) {
    Log(LogLevel::kInfo, "shard {}: {} units to do here, {} left to the other shards",
        options.shard.ToString(), summary->units, summary->units_other_shards);
  }

  // 2-4. transform, write, commit
  GEOLAKE_ASSIGN_OR_RETURN(auto journal,
                           RunJournal::Open(&io, summary->run_dir, summary->run_id, id.ToString()));
  summary->memory_bytes = options.memory_bytes > 0 ? options.memory_bytes : DefaultMemoryBudget();
  Gauge* inflight = metrics->gauge("inflight_bytes");
  // The budget in two parts that feed one gauge: a quarter for batches between read and
  // write, the rest for the rows the writers hold. Split so that a writer's wait for room never
  // depends on batches parked behind that same writer (a deadlock with one shared pool).
  const std::int64_t batch_part = std::max<std::int64_t>(summary->memory_bytes / 4, 1);
  MemoryBudget batch_budget(batch_part, inflight);
  MemoryBudget writer_budget(std::max<std::int64_t>(summary->memory_bytes - batch_part, 1),
                             inflight);
  // Every unit can use every worker (its batches are transformed in parallel), so a one-unit
  // source still uses every core.
  shared.options = &options;
  shared.executor = options.executor;
  shared.io = &io;
  shared.batch_budget = &batch_budget;
  shared.writer_budget = &writer_budget;
  shared.max_active = static_cast<std::size_t>(workers);
  shared.share_bytes = writer_budget.capacity_bytes() / workers;
  // Enough batches in flight per unit to keep every worker busy while one slow batch (a huge
  // polygon in make-valid) holds up the unit's writer. With 4 per worker, one of two workers
  // sat idle for ~0.1 s of a 0.55 s ne_countries ingest behind the batch of one country; their
  // bytes stay within the batch budget whatever the count.
  shared.max_batches_per_unit = std::int64_t{32} * workers;
  shared.journal = journal.get();
  shared.read = metrics->stage("read");
  shared.transform = metrics->stage("transform");
  shared.write_stage = metrics->stage("write");
  shared.rejected = shared.transform->counter("rejected");
  shared.made_valid = shared.transform->counter("made_valid");
  shared.utf8_replaced = shared.transform->counter("utf8_replaced");
  shared.rows_missing_columns = shared.transform->counter("rows_missing_columns");

  CommitOptions commit_options;
  commit_options.commit_rows = options.commit_rows;
  commit_options.commit_interval = std::chrono::seconds(options.commit_seconds);
  commit_options.run_id = summary->run_id;
  if (const table::Snapshot* base = table.metadata.current_snapshot(); base != nullptr) {
    commit_options.base_snapshot_id = base->snapshot_id;
  }
  CommitCoordinator coordinator(&catalog, &io, id, commit_options, std::move(plans), journal.get(),
                                metrics);
  shared.coordinator = &coordinator;
  std::stop_source abort;
  std::stop_callback forward(stop, [&abort] { abort.request_stop(); });
  coordinator.Start([&abort] { abort.request_stop(); });

  Status work_status;
  if (!shared.work.empty() && options.executor != nullptr) {
    TaskGroup group(options.executor, abort.get_token());
    const std::stop_token worker_stop = group.stop_token();
    for (int w = 0; w < workers; ++w) {
      group.Spawn([&shared, worker_stop] { return RunWorker(shared, worker_stop); });
    }
    work_status = group.Wait();
  } else if (!shared.work.empty()) {
    work_status = RunWorker(shared, abort.get_token());
  }
  // Units still open were stopped (cancel or error): nothing of theirs is committed; the files
  // they finished are journaled as written but not committed.
  for (const auto& unit : shared.active) {
    for (const UnitOutcome& outcome : unit->outcomes) {
      summary->rows_uncommitted += outcome.rows_read;
    }
    if (unit->writer == nullptr) continue;
    unit->writer->Abort();
    Status journaled = JournalFiles(shared, *unit->item, unit->writer->TakeWritten());
    if (!journaled.ok()) Log(LogLevel::kWarn, "{}", journaled.ToString());
  }
  shared.active.clear();
  // Whole units finished before a stop are still committed: that loses nothing and keeps
  // the table's state a prefix of the work.
  Status commit_status = coordinator.Finish();
  Status rejects_status = journal->WriteRejects();
  Status journal_status = journal->Finish();
  if (!journal_status.ok() && !(commit_status.ok() && work_status.ok())) {
    // Not the error returned below; the change files still hold the journal (RunJournal::Read).
    Log(LogLevel::kWarn, "{}", journal_status.ToString());
  }

  for (const auto& [key, count] : shared.utf8_by_field) {
    Log(LogLevel::kWarn,
        "source '{}': field '{}': {} values were not valid UTF-8 (no encoding declared that GDAL "
        "knows); each invalid byte was replaced by U+FFFD (--on-invalid reject rejects such "
        "rows)",
        shared.sources[key.first].path, EscapeForMessage(shared.write->fields[key.second].name),
        count);
    summary->values_utf8_replaced += count;
  }
  summary->rows_missing_columns = shared.rows_missing_columns->value();
  summary->rows_read = shared.rows_read.load();
  summary->rows_committed = coordinator.rows_committed();
  summary->rows_rejected = coordinator.rows_rejected_committed();
  summary->units_committed_elsewhere = coordinator.units_committed_elsewhere();
  summary->rows_committed_elsewhere = coordinator.rows_committed_elsewhere();
  summary->rows_uncommitted += coordinator.rows_uncommitted();
  summary->files_written = shared.files_written.load();
  summary->commits = coordinator.commits();
  for (const JournalEntry& entry : journal->entries()) {
    if (entry.committed) ++summary->files_committed;
  }
  summary->peak_inflight_bytes = inflight->peak();
  summary->transform_threads = shared.transform_threads.load();
  metrics->counter("rows_read")->Add(summary->rows_read);
  metrics->counter("rows_committed")->Add(summary->rows_committed);
  metrics->counter("rows_rejected")->Add(summary->rows_rejected);
  metrics->counter("transform_threads")->Add(summary->transform_threads);

  if (!commit_status.ok()) return commit_status;
  if (!work_status.ok()) {
    if (stop.stop_requested()) return Status::Cancelled("ingest interrupted");
    return work_status;
  }
  GEOLAKE_RETURN_NOT_OK(rejects_status);
  GEOLAKE_RETURN_NOT_OK(journal_status);
  if (summary->rows_read !=
      summary->rows_committed + summary->rows_rejected + summary->rows_committed_elsewhere) {
    return Status::Internal("rows read (" + std::to_string(summary->rows_read) +
                            ") != rows committed (" + std::to_string(summary->rows_committed) +
                            ") + rows rejected (" + std::to_string(summary->rows_rejected) +
                            ") + rows committed by another run (" +
                            std::to_string(summary->rows_committed_elsewhere) + ")");
  }
  return Status::OK();
}

}  // namespace geolake::pipeline
