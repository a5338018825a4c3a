#include "geolake/maintenance/compact_plan.h"

#include <algorithm>
#include <map>
#include <utility>

#include "geolake/core/units.h"

namespace geolake::maintenance {
namespace {

// Added to each split so that rounding never makes a file out of a few kilobytes (Iceberg's
// SPLIT_OVERHEAD).
constexpr std::int64_t kSplitOverheadBytes = 5 * 1024;

Status Bad(const std::string& option, std::int64_t value, const std::string& rule) {
  return Status::InvalidArgument(option + " " + std::to_string(value) + ": " + rule);
}

// The grouping key of a file: its partition tuple in the current spec, or one shared key for
// every file of an older spec (Iceberg treats those as unpartitioned: rewriting them moves
// their rows into the current spec's layout).
struct PartitionKey {
  bool older = false;
  std::string text;  // values rendered, '\x1f'-separated; nulls as '\x01'
  bool operator<(const PartitionKey& o) const {
    return std::tie(older, text) < std::tie(o.older, o.text);
  }
};

std::string RenderPartition(const table::Type* partition_type,
                            const std::vector<table::Value>& values,
                            const table::PartitionSpec* spec, bool for_humans) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const bool null = table::IsNull(values[i]);
    std::string value;
    if (null) {
      value = for_humans ? "null" : "\x01";
    } else if (partition_type != nullptr && i < partition_type->fields().size()) {
      value = table::ValueToString(*partition_type->fields()[i].type, values[i]);
    } else {
      value = "?";
    }
    if (for_humans) {
      if (!out.empty()) out += "/";
      const std::string name = spec != nullptr && i < spec->fields().size()
                                   ? spec->fields()[i].name
                                   : "p" + std::to_string(i);
      out += name + "=" + value;
    } else {
      out += value;
      out.push_back('\x1f');
    }
  }
  return out;
}

}  // namespace

Result<RewriteJobOrder> ParseRewriteJobOrder(std::string_view text) {
  if (text == "none") return RewriteJobOrder::kNone;
  if (text == "bytes-asc") return RewriteJobOrder::kBytesAsc;
  if (text == "bytes-desc") return RewriteJobOrder::kBytesDesc;
  if (text == "files-asc") return RewriteJobOrder::kFilesAsc;
  if (text == "files-desc") return RewriteJobOrder::kFilesDesc;
  return Status::InvalidArgument("rewrite-job-order '" + std::string(text) +
                                 "': expected none, bytes-asc, bytes-desc, files-asc or "
                                 "files-desc");
}

std::string_view FileReasonText(FileReason reason) {
  switch (reason) {
    case FileReason::kTooSmall:
      return "too small";
    case FileReason::kTooLarge:
      return "too large";
    case FileReason::kRewriteAll:
      return "rewrite-all";
  }
  return "?";
}

Result<SizeThresholds> ResolveSizes(const PlanOptions& options,
                                    const table::TableMetadata& metadata) {
  SizeThresholds s;
  s.target = options.target_file_size_bytes.value_or(
      metadata.PropertyAsInt("write.target-file-size-bytes", kIcebergDefaultTargetFileSize));
  if (s.target <= 0) return Bad("target-file-size", s.target, "must be positive");
  // 0.75 and 1.8 as Iceberg's MIN_FILE_SIZE_DEFAULT_RATIO / MAX_FILE_SIZE_DEFAULT_RATIO.
  s.min = options.min_file_size_bytes.value_or(
      static_cast<std::int64_t>(static_cast<double>(s.target) * 0.75));
  s.max = options.max_file_size_bytes.value_or(
      static_cast<std::int64_t>(static_cast<double>(s.target) * 1.8));
  if (s.min < 0) return Bad("min-file-size", s.min, "must not be negative");
  if (s.min >= s.target) {
    return Bad("min-file-size", s.min,
               "must be less than the target file size " + std::to_string(s.target));
  }
  if (s.max <= s.target) {
    return Bad("max-file-size", s.max,
               "must be greater than the target file size " + std::to_string(s.target));
  }
  if (options.min_input_files <= 0) {
    return Bad("min-input-files", options.min_input_files, "must be positive");
  }
  if (options.max_file_group_size_bytes <= 0) {
    return Bad("max-file-group-size", options.max_file_group_size_bytes, "must be positive");
  }
  if (options.max_file_group_input_files <= 0) {
    return Bad("max-file-group-input-files", options.max_file_group_input_files,
               "must be positive");
  }
  if (options.max_files_to_rewrite && *options.max_files_to_rewrite <= 0) {
    return Bad("max-files-to-rewrite", *options.max_files_to_rewrite, "must be positive");
  }
  s.write_max = s.target + (s.max - s.target) / 2;
  return s;
}

std::int64_t ExpectedOutputFiles(std::int64_t input_bytes, const SizeThresholds& sizes) {
  if (input_bytes < sizes.target) return 1;
  const std::int64_t floor_files = input_bytes / sizes.target;
  const std::int64_t remainder = input_bytes % sizes.target;
  if (remainder > sizes.min) return floor_files + 1;
  // Folding the remainder into floor_files files: fine while they stay near the target.
  const double average = static_cast<double>(input_bytes) / static_cast<double>(floor_files);
  const double limit =
      std::min(1.1 * static_cast<double>(sizes.target), static_cast<double>(sizes.write_max));
  return average < limit ? floor_files : floor_files + 1;
}

std::int64_t SplitSize(std::int64_t input_bytes, const SizeThresholds& sizes) {
  const std::int64_t estimate =
      input_bytes / ExpectedOutputFiles(input_bytes, sizes) + kSplitOverheadBytes;
  return std::clamp(estimate, sizes.target, sizes.write_max);
}

std::int64_t CompactionPlan::InputFiles() const {
  std::int64_t n = 0;
  for (const FileGroup& g : groups) n += static_cast<std::int64_t>(g.files.size());
  return n;
}

std::int64_t CompactionPlan::InputBytes() const {
  std::int64_t n = 0;
  for (const FileGroup& g : groups) n += g.input_bytes;
  return n;
}

Result<CompactionPlan> PlanFileGroups(const std::vector<ScanFile>& files,
                                      const table::TableMetadata& metadata,
                                      const PlanOptions& options) {
  CompactionPlan plan;
  GEOLAKE_ASSIGN_OR_RETURN(plan.sizes, ResolveSizes(options, metadata));
  const SizeThresholds& sizes = plan.sizes;
  plan.files_scanned = static_cast<std::int64_t>(files.size());

  const table::PartitionSpecPtr spec = metadata.default_spec();
  table::TypePtr partition_type;
  if (spec != nullptr && metadata.current_schema() != nullptr) {
    auto type = spec->PartitionType(*metadata.current_schema());
    if (type.ok()) partition_type = *type;
  }

  // Candidates per partition, partitions in the order their first file appears.
  struct Bucket {
    PartitionKey key;
    std::vector<table::Value> partition;
    std::vector<CandidateFile> files;
  };
  std::vector<Bucket> buckets;
  std::map<PartitionKey, std::size_t> bucket_of;
  for (const ScanFile& f : files) {
    const std::int64_t length = f.file.file_size_in_bytes;
    FileReason reason = FileReason::kRewriteAll;
    if (!options.rewrite_all) {
      // Strictly outside [min, max], as Iceberg's filter: a file of exactly min bytes stays.
      if (length < sizes.min) {
        reason = FileReason::kTooSmall;
      } else if (length > sizes.max) {
        reason = FileReason::kTooLarge;
      } else {
        continue;
      }
    }
    ++plan.candidate_files;
    const bool current_spec = spec != nullptr && f.spec_id == spec->spec_id();
    PartitionKey key;
    key.older = !current_spec;
    if (current_spec) {
      key.text = RenderPartition(partition_type.get(), f.file.partition, nullptr, false);
    }
    auto [it, inserted] = bucket_of.emplace(key, buckets.size());
    if (inserted) {
      Bucket b;
      b.key = key;
      if (current_spec) b.partition = f.file.partition;
      buckets.push_back(std::move(b));
    }
    buckets[it->second].files.push_back(CandidateFile{f.file, f.spec_id, reason});
  }

  // Next-fit bin packing in scan order (Iceberg's BinPacking with lookback 1): a file that
  // does not fit the open group (by bytes or file count) closes it and opens the next one; a
  // file larger than the capacity gets a group of its own.
  std::int64_t taken_files = 0;
  bool stop_taking = false;
  for (const Bucket& bucket : buckets) {
    std::vector<std::vector<CandidateFile>> bins;
    std::int64_t bin_bytes = 0;
    for (const CandidateFile& c : bucket.files) {
      const std::int64_t w = c.file.file_size_in_bytes;
      const bool fits =
          !bins.empty() && bin_bytes + w <= options.max_file_group_size_bytes &&
          static_cast<std::int64_t>(bins.back().size()) < options.max_file_group_input_files;
      if (!fits) {
        bins.emplace_back();
        bin_bytes = 0;
      }
      bins.back().push_back(c);
      bin_bytes += w;
    }
    int partition_index = 0;
    for (std::vector<CandidateFile>& bin : bins) {
      ++plan.groups_considered;
      FileGroup g;
      g.partition = bucket.partition;
      g.older_specs = bucket.key.older;
      for (const CandidateFile& c : bin) {
        g.input_bytes += c.file.file_size_in_bytes;
        g.input_rows += c.file.record_count;
      }
      const auto n = static_cast<std::int64_t>(bin.size());
      if (options.rewrite_all) {
        g.reason = "rewrite-all";
      } else if (n > 1 && n >= options.min_input_files) {
        g.reason = std::to_string(n) + " files >= min-input-files " +
                   std::to_string(options.min_input_files);
      } else if (n > 1 && g.input_bytes > sizes.target) {
        g.reason = std::to_string(n) + " files, " + FormatSize(g.input_bytes) + " > target " +
                   FormatSize(sizes.target);
      } else if (g.input_bytes > sizes.max) {
        g.reason = FormatSize(g.input_bytes) + " > max-file-size " + FormatSize(sizes.max);
      } else {
        ++plan.groups_skipped;
        plan.files_skipped_in_groups += n;
        continue;
      }
      if (stop_taking) continue;
      if (options.max_files_to_rewrite) {
        // A cap, never exceeded: the group that would cross it keeps its first files only.
        const std::int64_t room = *options.max_files_to_rewrite - taken_files;
        if (n > room) {
          bin.resize(static_cast<std::size_t>(room));
          g.input_bytes = g.input_rows = 0;
          for (const CandidateFile& c : bin) {
            g.input_bytes += c.file.file_size_in_bytes;
            g.input_rows += c.file.record_count;
          }
          g.reason += " (cut to max-files-to-rewrite)";
          stop_taking = true;
        }
        taken_files += static_cast<std::int64_t>(bin.size());
      }
      g.files = std::move(bin);
      g.partition_index = partition_index++;
      if (g.older_specs) {
        g.partition_text = "(older partition specs)";
      } else if (g.partition.empty()) {
        g.partition_text = "(unpartitioned)";
      } else {
        g.partition_text = RenderPartition(partition_type.get(), g.partition, spec.get(), true);
      }
      g.expected_output_files = ExpectedOutputFiles(g.input_bytes, sizes);
      g.split_size_bytes = SplitSize(g.input_bytes, sizes);
      plan.groups.push_back(std::move(g));
    }
  }

  auto by = [&](auto key, bool ascending) {
    std::stable_sort(plan.groups.begin(), plan.groups.end(),
                     [&](const FileGroup& a, const FileGroup& b) {
                       return ascending ? key(a) < key(b) : key(a) > key(b);
                     });
  };
  const auto bytes = [](const FileGroup& g) { return g.input_bytes; };
  const auto count = [](const FileGroup& g) { return g.files.size(); };
  switch (options.job_order) {
    case RewriteJobOrder::kNone:
      break;
    case RewriteJobOrder::kBytesAsc:
      by(bytes, true);
      break;
    case RewriteJobOrder::kBytesDesc:
      by(bytes, false);
      break;
    case RewriteJobOrder::kFilesAsc:
      by(count, true);
      break;
    case RewriteJobOrder::kFilesDesc:
      by(count, false);
      break;
  }
  for (std::size_t i = 0; i < plan.groups.size(); ++i) plan.groups[i].index = static_cast<int>(i);
  return plan;
}

}  // namespace geolake::maintenance
