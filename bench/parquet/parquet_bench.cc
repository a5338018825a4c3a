// The geolake side of bench/parquet: write the benchmark rows with our Parquet writer, or read
// any Parquet file with our reader, on one thread, timing only the Parquet work.
//
//   geolake_parquet_bench write OUT.parquet ROWS [REPEAT] -> "seconds,cpu_seconds,checksum"
//   geolake_parquet_bench read FILE.parquet               -> "seconds,cpu_seconds,checksum"
//
// seconds is wall time, cpu_seconds the process CPU time (user + system) of the same span.
// REPEAT (default 1) writes the file that many times and reports the median; with it,
// `perf record` on a write run sees mostly the writer rather than the row generation.
//
// The rows are the ones duckdb_side.mjs generates in SQL from the same formulas, so both
// engines write identical data; the checksum (see Checksum) lets run.sh check that each reader
// decoded each file to the same values.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/io/file_io.h"

namespace geolake::parquet {
namespace {

constexpr std::int64_t kRowGroupRows = 65536;

// id BIGINT = i; k BIGINT = i * 2654435761 % 1000003; v DOUBLE = k / 7; name VARCHAR = NULL
// every 10th row, else 'n' || (i % 5000); flag BOOLEAN = i % 3 = 0.
Schema BenchSchema() {
  return Schema::Make({
                          Field::Leaf("id", PhysicalType::kInt64, Repetition::kRequired, 1),
                          Field::Leaf("k", PhysicalType::kInt64, Repetition::kRequired, 2),
                          Field::Leaf("v", PhysicalType::kDouble, Repetition::kRequired, 3),
                          Field::Leaf("name", PhysicalType::kByteArray, Repetition::kOptional, 4,
                                      LogicalType::String()),
                          Field::Leaf("flag", PhysicalType::kBoolean, Repetition::kRequired, 5),
                      })
      .value();
}

// Wall and CPU time of a span, started at construction.
class Timer {
 public:
  Timer() : wall0_(std::chrono::steady_clock::now()), cpu0_(CpuSeconds()) {}
  double wall() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  }
  double cpu() const { return CpuSeconds() - cpu0_; }

 private:
  static double CpuSeconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto sec = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    return sec(ru.ru_utime) + sec(ru.ru_stime);
  }
  std::chrono::steady_clock::time_point wall0_;
  double cpu0_;
};

struct Timing {
  double wall = 0;
  double cpu = 0;
};

struct Checksum {
  std::int64_t sum_id = 0;
  std::int64_t sum_k = 0;
  double sum_v = 0;
  std::int64_t name_bytes = 0;
  std::int64_t flags = 0;
  std::string ToString() const {
    return fmt::format("{}:{}:{:.6e}:{}:{}", sum_id, sum_k, sum_v, name_bytes, flags);
  }
};

Status Write(const std::string& path, std::int64_t rows, int repeat, Timing* timing) {
  const Schema schema = BenchSchema();
  // Build all batches first: only the writer is timed, as only DuckDB's COPY is timed.
  std::vector<Batch> batches;
  for (std::int64_t start = 0; start < rows; start += kRowGroupRows) {
    Batch batch = Batch::ForSchema(schema);
    const std::int64_t end = std::min(rows, start + kRowGroupRows);
    for (std::int64_t i = start; i < end; ++i) {
      const std::int64_t k = i * 2654435761LL % 1000003;
      batch.columns[0].AppendInt64(i);
      batch.columns[1].AppendInt64(k);
      batch.columns[2].AppendDouble(static_cast<double>(k) / 7.0);
      if (i % 10 == 0) {
        batch.columns[3].AppendNull();
      } else {
        batch.columns[3].AppendBytes(fmt::format("n{}", i % 5000));
      }
      batch.columns[4].AppendBool(i % 3 == 0);
    }
    batch.num_rows = end - start;
    batches.push_back(std::move(batch));
  }
  auto fs = io::MakeLocalFileIO();
  std::vector<Timing> runs;
  for (int r = 0; r < std::max(1, repeat); ++r) {
    const Timer timer;
    GEOLAKE_ASSIGN_OR_RETURN(auto out, fs->OpenWrite(path, /*overwrite=*/true));
    WriterOptions options;
    options.row_group_rows = kRowGroupRows;
    GEOLAKE_ASSIGN_OR_RETURN(auto writer, FileWriter::Open(out.get(), schema, options));
    for (const Batch& batch : batches) GEOLAKE_RETURN_NOT_OK(writer->WriteBatch(batch));
    GEOLAKE_RETURN_NOT_OK(writer->Close().status());
    GEOLAKE_RETURN_NOT_OK(out->Close());
    runs.push_back({timer.wall(), timer.cpu()});
  }
  // The median run (by CPU time) of REPEAT.
  std::sort(runs.begin(), runs.end(),
            [](const Timing& a, const Timing& b) { return a.cpu < b.cpu; });
  *timing = runs[runs.size() / 2];
  return Status::OK();
}

Status Read(const std::string& path, Timing* timing, Checksum* sum) {
  auto fs = io::MakeLocalFileIO();
  const Timer timer;
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> file, fs->OpenRead(path));
  std::shared_ptr<const io::RandomAccessFile> shared = std::move(file);
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, FileReader::Open(shared));
  const Schema& schema = reader->schema();
  const int id = schema.LeafIndex("id"), k = schema.LeafIndex("k"), v = schema.LeafIndex("v"),
            name = schema.LeafIndex("name"), flag = schema.LeafIndex("flag");
  if (id < 0 || k < 0 || v < 0 || name < 0 || flag < 0) {
    return Status::InvalidArgument(path + ": not a benchmark file (columns id,k,v,name,flag)");
  }
  // One batch and one set of decode buffers for every row group, as a scan loop reuses them.
  Batch batch;
  DecodeBuffers buffers;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    GEOLAKE_RETURN_NOT_OK(reader->ReadRowGroupInto(rg, {}, &batch, &buffers));
    for (std::int64_t x : batch.columns[id].int64_values) sum->sum_id += x;
    for (std::int64_t x : batch.columns[k].int64_values) sum->sum_k += x;
    for (double x : batch.columns[v].double_values) sum->sum_v += x;
    sum->name_bytes += static_cast<std::int64_t>(batch.columns[name].byte_data.size());
    for (std::uint8_t x : batch.columns[flag].bool_values) sum->flags += x;
  }
  *timing = {timer.wall(), timer.cpu()};
  return Status::OK();
}

}  // namespace
}  // namespace geolake::parquet

int main(int argc, char** argv) {
  using namespace geolake::parquet;
  const std::string mode = argc > 1 ? argv[1] : "";
  geolake::Status st;
  Timing timing;
  Checksum sum;
  if (mode == "write" && (argc == 4 || argc == 5)) {
    const int repeat = argc == 5 ? std::atoi(argv[4]) : 1;
    st = Write(argv[2], std::strtoll(argv[3], nullptr, 10), repeat, &timing);
    Timing read_timing;  // the checksum of what was written; this read is not reported
    if (st.ok()) st = Read(argv[2], &read_timing, &sum);
  } else if (mode == "read" && argc == 3) {
    st = Read(argv[2], &timing, &sum);
  } else {
    std::fprintf(stderr, "usage: geolake_parquet_bench write OUT ROWS [REPEAT] | read FILE\n");
    return 2;
  }
  if (!st.ok()) {
    std::fprintf(stderr, "geolake_parquet_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("%.6f,%.6f,%s\n", timing.wall, timing.cpu, sum.ToString().c_str());
  return 0;
}
