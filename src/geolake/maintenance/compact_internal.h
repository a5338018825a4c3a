/// \file
/// What compact.cc shares with the strategies that order rows (compact_sort.cc): the context of
/// one run's group rewrites and what a rewritten group hands to the committer. Private to
/// maintenance/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/result.h"
#include "geolake/maintenance/compact.h"
#include "geolake/maintenance/compact_plan.h"
#include "geolake/maintenance/data_file_reader.h"
#include "geolake/maintenance/group_writer.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/table_writer.h"

namespace geolake::maintenance {

/// \brief One sort key of the sort strategy, resolved against the table's columns.
struct SortKey {
  enum class Source : std::uint8_t {
    kAttribute,
    kHilbert,
    kBboxXmin,
    kBboxYmin,
    kBboxXmax,
    kBboxYmax
  };
  Source source = Source::kAttribute;
  int attribute = -1;  // index into ReadColumns::fields (kAttribute)
  bool descending = false;
  bool nulls_first = false;
  std::string name;
};

/// \brief Everything a group rewrite needs; shared (read-only) by the groups of a run.
struct RewriteContext {
  const io::FileIO* io = nullptr;
  CompactStrategy strategy = CompactStrategy::kBinpack;
  pipeline::TableWriteOptions write;
  ReadColumns columns;
  /// The sort strategy's keys (sort), empty for hilbert (the key is the Hilbert index).
  std::vector<SortKey> sort_keys;
  /// The table sort order the output follows, recorded in each DataFile; nullopt for a
  /// --sort-order that is not the table's.
  std::optional<std::int32_t> sort_order_id;
  pipeline::MemoryBudget* budget = nullptr;
  /// The budget divided by the groups that run at once.
  std::int64_t group_share_bytes = 0;
  /// The row-group size of the files written (the writer's buffer).
  std::int64_t writer_bytes = 0;
  std::string temp_dir;
  StageMetrics* read_stage = nullptr;
  StageMetrics* write_stage = nullptr;

  /// \brief The writer options of a group's output files.
  GroupWriterOptions OutputOptions(const FileGroup& group) const;
  /// \brief Open an input file; a missing or broken file is kCorruptData naming it, and a file
  /// whose row count differs from its manifest entry too.
  Result<std::unique_ptr<DataFileReader>> OpenInput(const table::DataFile& file) const;
  /// \brief kCorruptData unless every row of the file was read.
  Status CheckRowsRead(const DataFileReader& reader, const table::DataFile& file) const;
};

/// \brief A rewritten group, not committed yet.
struct GroupOutput {
  std::vector<pipeline::WrittenFile> files;
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
  std::int64_t runs = 0;
  std::int64_t spilled_runs = 0;
};

/// \brief Check the strategy's options against the table and fill ctx->sort_keys and
/// ctx->sort_order_id. kInvalidArgument for a bad --sort-order or a sort without one on an
/// unsorted table.
Status PrepareSort(const CompactOptions& options, const table::TableMetadata& metadata,
                   RewriteContext* ctx);

/// \brief Rewrite a group in file order (binpack).
Result<GroupOutput> RewriteBinpack(const FileGroup& group, const RewriteContext& ctx,
                                   const std::stop_token& stop);

/// \brief Remove the spill folders (`compact-<pid>-<uuid>`) under `temp_dir` whose process no
/// longer runs: what a killed compaction left behind. Best effort.
void RemoveStaleSpills(const std::string& temp_dir);

/// \brief Rewrite a group in key order (sort, hilbert).
Result<GroupOutput> RewriteSorted(const FileGroup& group, const RewriteContext& ctx,
                                  std::stop_token stop);

}  // namespace geolake::maintenance
