/// \file
/// Compaction planning: which data files of a snapshot `geolake compact` rewrites, grouped how.
/// The rules are Iceberg's rewrite_data_files planner (SizeBasedFileRewritePlanner and
/// BinPackRewriteFilePlanner, as docs/maintenance.md describes them): the target size comes
/// from `write.target-file-size-bytes` unless given; a file is a candidate when it is smaller
/// than min-file-size (0.75 x target) or larger than max-file-size (1.8 x target); candidates
/// are grouped per partition (files of older partition specs share one bucket) and bin-packed
/// in scan order (next-fit) into groups of at most max-file-group-size bytes; a group is
/// rewritten when it has at least two files and min-input-files files, or at least two files
/// and more bytes than the target, or more bytes than max-file-size. `rewrite_all` takes every
/// file and every group.
///
/// Planning is a pure function of the file list, the table metadata and the options, so every
/// rule is unit-tested without writing a file (compact_plan_test.cc).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/table/manifest.h"
#include "geolake/table/table_metadata.h"

namespace geolake::maintenance {

/// Iceberg's default `write.target-file-size-bytes` (512 MiB), used when the table lacks it.
inline constexpr std::int64_t kIcebergDefaultTargetFileSize = std::int64_t{512} << 20;
/// Iceberg's `max-file-group-size-bytes` default (100 GiB).
inline constexpr std::int64_t kDefaultMaxFileGroupSize = std::int64_t{100} << 30;
/// Iceberg's `min-input-files` default.
inline constexpr std::int64_t kDefaultMinInputFiles = 5;

/// \brief The order groups are rewritten in (Iceberg's `rewrite-job-order`).
enum class RewriteJobOrder : std::uint8_t { kNone, kBytesAsc, kBytesDesc, kFilesAsc, kFilesDesc };

/// \brief Parse "none", "bytes-asc", "bytes-desc", "files-asc", "files-desc".
Result<RewriteJobOrder> ParseRewriteJobOrder(std::string_view text);

/// \brief The planner's options; unset sizes take Iceberg's defaults.
struct PlanOptions {
  std::optional<std::int64_t> target_file_size_bytes;
  std::optional<std::int64_t> min_file_size_bytes;
  std::optional<std::int64_t> max_file_size_bytes;
  std::int64_t min_input_files = kDefaultMinInputFiles;
  bool rewrite_all = false;
  std::int64_t max_file_group_size_bytes = kDefaultMaxFileGroupSize;
  std::int64_t max_file_group_input_files = std::numeric_limits<std::int64_t>::max();
  /// Take at most this many files, groups in plan order; the group that would cross the cap
  /// keeps only its first files (geolake's reading of Iceberg's option, docs/maintenance.md).
  std::optional<std::int64_t> max_files_to_rewrite;
  RewriteJobOrder job_order = RewriteJobOrder::kNone;
};

/// \brief The size thresholds a plan used.
struct SizeThresholds {
  std::int64_t target = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  /// What one output file may grow to: target + (max - target) / 2, so that compression noise
  /// does not leave tiny tail files (Iceberg's writeMaxFileSize).
  std::int64_t write_max = 0;
};

/// \brief The target from the options or `write.target-file-size-bytes` (512 MiB when absent),
/// min 0.75 x target and max 1.8 x target unless given. Errors: kInvalidArgument unless
/// target > 0, min >= 0, min < target < max, min-input-files > 0, max-file-group-size > 0,
/// max-file-group-input-files > 0 and max-files-to-rewrite > 0 when set; the message names
/// the option and its value.
Result<SizeThresholds> ResolveSizes(const PlanOptions& options,
                                    const table::TableMetadata& metadata);

/// \brief One live data file of the snapshot being planned.
struct ScanFile {
  table::DataFile file;
  std::int32_t spec_id = 0;
};

/// \brief Why a file is a candidate.
enum class FileReason : std::uint8_t { kTooSmall, kTooLarge, kRewriteAll };

struct CandidateFile {
  table::DataFile file;
  std::int32_t spec_id = 0;
  FileReason reason = FileReason::kTooSmall;
};

/// \brief One unit of work: files of one partition rewritten together.
struct FileGroup {
  int index = 0;            // 0-based position in the plan
  int partition_index = 0;  // 0-based position among the groups of its partition
  /// The partition tuple in the current spec; empty for unpartitioned tables and for the bucket
  /// of files written with older specs (`older_specs`).
  std::vector<table::Value> partition;
  bool older_specs = false;
  /// "geo_cell=0231", "(unpartitioned)" or "(older partition specs)".
  std::string partition_text;
  std::vector<CandidateFile> files;
  std::int64_t input_bytes = 0;
  std::int64_t input_rows = 0;
  /// Why the group is rewritten, e.g. "12 files >= min-input-files 5".
  std::string reason;
  /// Output files the sizing rule expects, and the size at which an output file is cut.
  std::int64_t expected_output_files = 1;
  std::int64_t split_size_bytes = 0;
};

/// \brief What PlanFileGroups decided.
struct CompactionPlan {
  SizeThresholds sizes;
  std::vector<FileGroup> groups;
  std::int64_t files_scanned = 0;            // live data files offered to the planner
  std::int64_t candidate_files = 0;          // of those, files outside [min, max] (or all)
  std::int64_t groups_considered = 0;        // groups bin packing made
  std::int64_t groups_skipped = 0;           // of those, groups the group rule dropped
  std::int64_t files_skipped_in_groups = 0;  // candidates in skipped groups

  std::int64_t InputFiles() const;
  std::int64_t InputBytes() const;
};

/// \brief Plan the rewrite of `files` (a snapshot's live data files in scan order, already
/// narrowed by --where/--bbox). Errors: those of ResolveSizes.
Result<CompactionPlan> PlanFileGroups(const std::vector<ScanFile>& files,
                                      const table::TableMetadata& metadata,
                                      const PlanOptions& options);

/// \brief Iceberg's output file count for a group of `input_bytes`: 1 below the target; else
/// ceil(bytes / target) when the remainder exceeds min; else floor(bytes / target) when the
/// average file then stays below min(1.1 x target, write_max), else ceil.
std::int64_t ExpectedOutputFiles(std::int64_t input_bytes, const SizeThresholds& sizes);

/// \brief bytes / expected files + 5 KiB, clamped to [target, write_max].
std::int64_t SplitSize(std::int64_t input_bytes, const SizeThresholds& sizes);

/// \brief "too small", "too large", "rewrite-all".
std::string_view FileReasonText(FileReason reason);

}  // namespace geolake::maintenance
