/// \file
/// The small data files of the commit stress tests: one Parquet file per append whose rows all
/// carry the id process·10^9 + thread·10^6 + seq, so that a table's live files can be matched
/// to the commits that were reported, from the files' own footers.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/io/file_io.h"
#include "geolake/table/data_file_metrics.h"
#include "geolake/table/schema.h"
#include "geolake/table/table_metadata.h"

namespace geolake::stress {

namespace table = geolake::table;
namespace parquet = geolake::parquet;

inline constexpr std::int64_t kProcessFactor = 1000000000;
inline constexpr std::int64_t kThreadFactor = 1000000;

inline std::int64_t StressId(std::int64_t process, std::int64_t thread, std::int64_t seq) {
  return process * kProcessFactor + thread * kThreadFactor + seq;
}

/// \brief The Iceberg schema of the stress table: id, process, thread, seq, row (all long).
inline std::shared_ptr<const table::Schema> StressSchema() {
  using table::NestedField;
  using table::Type;
  return std::make_shared<const table::Schema>(
      0, std::vector<NestedField>{NestedField::Required(1, "id", Type::Long()),
                                  NestedField::Required(2, "process", Type::Long()),
                                  NestedField::Required(3, "thread", Type::Long()),
                                  NestedField::Required(4, "seq", Type::Long()),
                                  NestedField::Required(5, "row", Type::Long())});
}

inline parquet::Schema ParquetStressSchema() {
  std::vector<parquet::Field> fields;
  const char* names[] = {"id", "process", "thread", "seq", "row"};
  for (int i = 0; i < 5; ++i) {
    fields.push_back(parquet::Field::Leaf(names[i], parquet::PhysicalType::kInt64,
                                          parquet::Repetition::kRequired, i + 1));
  }
  return parquet::Schema::Make(std::move(fields)).value();
}

/// \brief Write `rows` rows of (process, thread, seq) under <location>/data and describe the
/// file for a manifest (statistics from the footer written).
inline Result<table::DataFile> WriteStressFile(const geolake::io::FileIO& io,
                                               const std::string& location,
                                               const table::Schema& table_schema,
                                               std::int64_t process, std::int64_t thread,
                                               std::int64_t seq, std::int64_t rows) {
  const std::int64_t id = StressId(process, thread, seq);
  const std::string path = location + "/data/" + std::to_string(process) + "-" +
                           std::to_string(thread) + "-" + std::to_string(seq) + "-" +
                           table::NewUuid() + ".parquet";
  const parquet::Schema schema = ParquetStressSchema();
  GEOLAKE_ASSIGN_OR_RETURN(auto out, io.OpenWrite(path, /*overwrite=*/false));
  GEOLAKE_ASSIGN_OR_RETURN(auto writer, parquet::FileWriter::Open(out.get(), schema));
  parquet::Batch batch = parquet::Batch::ForSchema(schema);
  for (std::int64_t r = 0; r < rows; ++r) {
    batch.columns[0].AppendInt64(id);
    batch.columns[1].AppendInt64(process);
    batch.columns[2].AppendInt64(thread);
    batch.columns[3].AppendInt64(seq);
    batch.columns[4].AppendInt64(r);
  }
  batch.num_rows = rows;
  GEOLAKE_RETURN_NOT_OK(writer->WriteBatch(batch));
  GEOLAKE_ASSIGN_OR_RETURN(parquet::FileMetaData md, writer->Close());
  GEOLAKE_RETURN_NOT_OK(out->Close());
  GEOLAKE_ASSIGN_OR_RETURN(auto info, io.Stat(path));
  return table::DataFileFromParquet(md, path, static_cast<std::int64_t>(info.size_bytes),
                                    table_schema, {});
}

/// \brief The id all rows of a stress file share, read from the footer's statistics of column
/// 0 (kCorruptData when they are missing or differ), and the footer's row count.
inline Result<std::int64_t> FooterId(const geolake::io::FileIO& io, const std::string& path,
                                     std::int64_t* num_rows) {
  GEOLAKE_ASSIGN_OR_RETURN(auto file, io.OpenRead(path));
  std::shared_ptr<const geolake::io::RandomAccessFile> shared(std::move(file));
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(shared));
  *num_rows = reader->num_rows();
  std::optional<std::int64_t> lo, hi;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    const parquet::Statistics* s = reader->column_statistics(rg, 0);
    if (s == nullptr || !s->min_value || !s->max_value || s->min_value->size() != 8 ||
        s->max_value->size() != 8) {
      return Status::CorruptData("'" + path + "': no int64 statistics for id");
    }
    std::int64_t a, b;
    std::memcpy(&a, s->min_value->data(), 8);
    std::memcpy(&b, s->max_value->data(), 8);
    lo = std::min(lo.value_or(a), a);
    hi = std::max(hi.value_or(b), b);
  }
  if (!lo || *lo != *hi) return Status::CorruptData("'" + path + "': ids differ within the file");
  return *lo;
}

}  // namespace geolake::stress
