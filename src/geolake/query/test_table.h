/// \file
/// BuildTestTable: a Hilbert-clustered Iceberg table made from any GDAL vector source, for the
/// query tests and benchmarks (which must not wait for `geolake create/ingest`). The source is
/// converted to one Hilbert-ordered GeoParquet file whose row groups hold `rows_per_file` rows;
/// each row group then becomes one data file of the table, rewritten with small row groups and
/// pages so that every pruning level has something to prune. The files are appended over
/// `commits` snapshots (files in order), so time travel has older snapshots to read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/catalog.h"
#include "geolake/table/transaction.h"

namespace geolake::query {

struct TestTableOptions {
  std::string source;    // any vector source GDAL reads
  std::string location;  // the table's directory
  std::int64_t rows_per_file = 1000;
  std::int64_t row_group_rows = 256;
  std::int64_t page_rows = 64;  // rows per data page (page index granularity)
  int commits = 2;
};

struct TestTable {
  table::Table table;
  std::vector<std::int64_t> snapshot_ids;  // one per commit, oldest first
  std::vector<std::int64_t> snapshot_times_ms;
  std::vector<std::vector<std::string>> commit_files;  // data file paths per commit
};

/// \brief Build the table described above and register it as `id` (its namespace is created
/// when missing). Errors: those of conversion, Parquet writing and the commit.
Result<TestTable> BuildTestTable(table::Catalog& catalog, const io::FileIO& io,
                                 const table::TableIdentifier& id, const TestTableOptions& options);

}  // namespace geolake::query
