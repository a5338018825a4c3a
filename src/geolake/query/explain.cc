// What a query did, as text (--explain) and JSON (--explain --json).
#include <fmt/format.h>

#include <string>

#include "geolake/formats/parquet/value_text.h"
#include "geolake/query/scan.h"

namespace geolake::query {

std::string QueryExplain::ToText() const {
  const auto pct = [](std::int64_t a, std::int64_t b) {
    return b > 0 ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0;
  };
  const auto level = [](const char* name, const LevelCounts& c) {
    return fmt::format("{:<11} considered {:>8}  pruned {:>8}  kept {:>8}\n", name, c.considered,
                       c.pruned, c.kept());
  };
  std::string out = fmt::format("snapshot    {}\n", snapshot_id);
  out += "filter      " + (filter.empty() ? std::string("(none)") : filter) + "\n";
  out += level("partitions", partitions);
  if (!partition_note.empty()) out += "            (" + partition_note + ")\n";
  out += level("files", files);
  if (files_with_geometry_bounds > 0) {
    out +=
        fmt::format("            ({} pruned by geometry bounds, {} of {} files have them)\n",
                    files_pruned_by_geometry_bounds, files_with_geometry_bounds, files.considered);
  }
  out += level("row groups", row_groups);
  out += level("pages", pages);
  out += fmt::format("rows        decoded {}  matched {}  returned {}\n", rows_decoded,
                     rows_matched, rows_returned);
  out += fmt::format("bytes       read {} of {} table bytes ({:.2f}%)\n", bytes_read, table_bytes,
                     pct(bytes_read, table_bytes));
  out += fmt::format("time        {:.3f} s (cpu {:.3f} s)\n", seconds, cpu_seconds);
  return out;
}

std::string QueryExplain::ToJson() const {
  const auto level = [](const LevelCounts& c) {
    return fmt::format("{{\"considered\":{},\"pruned\":{},\"kept\":{}}}", c.considered, c.pruned,
                       c.kept());
  };
  return fmt::format(
      "{{\"snapshot_id\":{},\"filter\":{},\"partitions\":{},\"files\":{},"
      "\"files_geometry_bounds\":{{\"with\":{},\"pruned\":{}}},\"row_groups\":{},"
      "\"pages\":{},\"rows_decoded\":{},\"rows_matched\":{},\"rows_returned\":{},"
      "\"bytes_read\":{},\"table_bytes\":{},\"seconds\":{:.6f},\"cpu_seconds\":{:.6f}}}",
      snapshot_id, parquet::JsonQuote(filter), level(partitions), level(files),
      files_with_geometry_bounds, files_pruned_by_geometry_bounds, level(row_groups), level(pages),
      rows_decoded, rows_matched, rows_returned, bytes_read, table_bytes, seconds, cpu_seconds);
}

}  // namespace geolake::query
