// Maintenance policies: parsing, validation and the threshold decisions (policy.h).
#include "geolake/maintenance/policy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "geolake/core/units.h"
#include "geolake/geo/crs.h"

namespace geolake::maintenance {
namespace {

using Json = nlohmann::json;

constexpr std::int64_t kMsPerDay = std::int64_t{24} * 3600 * 1000;

// Every key a policy may hold, in the order docs/maintenance.md lists them.
constexpr std::string_view kKnownKeys[] = {
    "crs",
    "retention_days",
    "max_concurrent_compactions",
    "compaction_strategy",
    "target_file_size",
    "small_file_count",
    "small_file_ratio",
    "min_average_file_size",
    "max_manifests_per_snapshot",
    "max_snapshots",
    "max_snapshot_age_days",
    "min_snapshots_to_keep",
    "max_metadata_files",
    "max_orphan_bytes",
    "orphan_min_age_hours",
};

std::string KnownKeysText() {
  std::string out;
  for (std::string_view k : kKnownKeys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Reads the keys of one policy object, collecting one error line per problem.
class Reader {
 public:
  explicit Reader(const Json& root) : root_(root) {}

  std::vector<std::string>& errors() { return errors_; }

  void Error(std::string line) { errors_.push_back(std::move(line)); }

  const Json* Find(std::string_view key, bool required) {
    auto it = root_.find(std::string(key));
    if (it == root_.end()) {
      if (required) Error("\"" + std::string(key) + "\" is required");
      return nullptr;
    }
    return &*it;
  }

  // An integer (a JSON integer, or a float with no fraction) within [min, max].
  std::optional<std::int64_t> Int(std::string_view key, bool required, std::int64_t min,
                                  std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    const Json* v = Find(key, required);
    if (v == nullptr) return std::nullopt;
    std::int64_t n = 0;
    if (v->is_number_integer()) {
      n = v->get<std::int64_t>();
    } else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() &&
               std::fabs(v->get<double>()) < 9e15) {
      n = static_cast<std::int64_t>(v->get<double>());
    } else {
      Error("\"" + std::string(key) + "\" must be an integer, not " + v->dump());
      return std::nullopt;
    }
    if (n < min || n > max) {
      std::string range = max == std::numeric_limits<std::int64_t>::max()
                              ? "at least " + std::to_string(min)
                              : "between " + std::to_string(min) + " and " + std::to_string(max);
      Error("\"" + std::string(key) + "\" is " + std::to_string(n) + ": it must be " + range);
      return std::nullopt;
    }
    return n;
  }

  // A byte size: an integer number of bytes or a size text ("512MiB"); > 0 unless `allow_zero`.
  std::optional<std::int64_t> Size(std::string_view key, bool allow_zero) {
    const Json* v = Find(key, false);
    if (v == nullptr) return std::nullopt;
    std::int64_t n = 0;
    if (v->is_number_integer()) {
      n = v->get<std::int64_t>();
    } else if (v->is_string()) {
      Result<std::int64_t> parsed = ParseSize(v->get<std::string>());
      if (!parsed.ok()) {
        Error("\"" + std::string(key) + "\": " + parsed.status().message());
        return std::nullopt;
      }
      n = *parsed;
    } else {
      Error("\"" + std::string(key) +
            "\" must be a size (bytes, or text such as \"512MiB\"), not " + v->dump());
      return std::nullopt;
    }
    if (n < 0 || (n == 0 && !allow_zero)) {
      Error("\"" + std::string(key) + "\" is " + std::to_string(n) + ": it must be " +
            (allow_zero ? "at least 0" : "above 0"));
      return std::nullopt;
    }
    return n;
  }

  std::optional<std::string> String(std::string_view key, bool required) {
    const Json* v = Find(key, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      Error("\"" + std::string(key) + "\" must be a string, not " + v->dump());
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  std::optional<double> Ratio(std::string_view key) {
    const Json* v = Find(key, false);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) {
      Error("\"" + std::string(key) + "\" must be a number, not " + v->dump());
      return std::nullopt;
    }
    double r = v->get<double>();
    if (!(r > 0 && r <= 1)) {
      Error("\"" + std::string(key) + "\" is " + v->dump() + ": it must be above 0 and at most 1");
      return std::nullopt;
    }
    return r;
  }

 private:
  const Json& root_;
  std::vector<std::string> errors_;
};

std::string Days(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ms) / kMsPerDay);
  return buf;
}

}  // namespace

PolicyCheck ParsePolicy(std::string_view json_text) {
  PolicyCheck check;
  Json root =
      Json::parse(json_text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/false);
  if (root.is_discarded()) {
    check.errors.push_back("the policy is not valid JSON");
    return check;
  }
  if (!root.is_object()) {
    check.errors.push_back("the policy must be a JSON object, not " +
                           std::string(root.type_name()));
    return check;
  }
  Reader r(root);
  for (const auto& [key, value] : root.items()) {
    (void)value;
    if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) == std::end(kKnownKeys)) {
      r.Error("unknown key \"" + key + "\" (known: " + KnownKeysText() + ")");
    }
  }

  MaintenancePolicy p;
  if (std::optional<std::string> crs = r.String("crs", true)) {
    Result<geo::Crs> made = geo::Crs::Make(*crs);
    if (!made.ok()) {
      r.Error("\"crs\" \"" + *crs + "\" is not a CRS PROJ knows: " + made.status().message());
    } else {
      p.crs = *crs;
    }
  }
  if (auto v = r.Int("retention_days", true, kMinRetentionDays)) p.retention_days = *v;
  if (auto v = r.Int("max_concurrent_compactions", true, 1, kMaxConcurrentCompactions)) {
    p.max_concurrent_compactions = *v;
  }
  if (auto s = r.String("compaction_strategy", false)) {
    Result<CompactStrategy> strategy = ParseCompactStrategy(*s);
    if (strategy.ok()) {
      p.compaction_strategy = *strategy;
    } else {
      r.Error("\"compaction_strategy\": " + strategy.status().message());
    }
  }
  p.target_file_size_bytes = r.Size("target_file_size", false);
  if (auto v = r.Int("small_file_count", false, 1)) p.small_file_count = *v;
  if (auto v = r.Ratio("small_file_ratio")) p.small_file_ratio = *v;
  p.min_average_file_size_bytes = r.Size("min_average_file_size", true);
  if (auto v = r.Int("max_manifests_per_snapshot", false, 1)) p.max_manifests_per_snapshot = *v;
  if (auto v = r.Int("max_snapshots", false, 1)) p.max_snapshots = *v;
  if (auto v = r.Int("max_snapshot_age_days", false, 0)) p.max_snapshot_age_days = *v;
  if (auto v = r.Int("min_snapshots_to_keep", false, 1)) p.min_snapshots_to_keep = *v;
  if (auto v = r.Int("max_metadata_files", false, 1)) p.max_metadata_files = *v;
  if (auto v = r.Size("max_orphan_bytes", true)) p.max_orphan_bytes = *v;
  if (auto v = r.Int("orphan_min_age_hours", false, 1)) p.orphan_min_age_hours = *v;

  // Consistency between keys (each checked only when both sides parsed).
  if (p.target_file_size_bytes && p.min_average_file_size_bytes &&
      *p.min_average_file_size_bytes > *p.target_file_size_bytes) {
    r.Error("\"min_average_file_size\" (" + FormatSize(*p.min_average_file_size_bytes) +
            ") is above \"target_file_size\" (" + FormatSize(*p.target_file_size_bytes) +
            "): compaction could never bring the average up to it");
  }
  if (p.max_snapshot_age_days && p.retention_days > 0 &&
      *p.max_snapshot_age_days < p.retention_days) {
    r.Error("\"max_snapshot_age_days\" (" + std::to_string(*p.max_snapshot_age_days) +
            ") is below \"retention_days\" (" + std::to_string(p.retention_days) +
            "): snapshots that young are kept by the retention, so expiry could not act");
  }
  if (root.contains("max_snapshots") && root.contains("min_snapshots_to_keep") &&
      p.max_snapshots < p.min_snapshots_to_keep) {
    r.Error("\"max_snapshots\" (" + std::to_string(p.max_snapshots) +
            ") is below \"min_snapshots_to_keep\" (" + std::to_string(p.min_snapshots_to_keep) +
            ")");
  }
  if (p.retention_days > 0 && p.orphan_min_age_hours > p.retention_days * 24) {
    r.Error("\"orphan_min_age_hours\" (" + std::to_string(p.orphan_min_age_hours) +
            ") is above \"retention_days\" x 24 (" + std::to_string(p.retention_days * 24) +
            "): files of expired snapshots would wait longer than the snapshots themselves");
  }

  check.errors = std::move(r.errors());
  if (check.errors.empty()) check.policy = std::move(p);
  return check;
}

PolicyCheck ReadPolicyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    PolicyCheck check;
    check.errors.push_back(path + ": cannot read the file");
    return check;
  }
  std::stringstream text;
  text << in.rdbuf();
  PolicyCheck check = ParsePolicy(text.str());
  for (std::string& line : check.errors) line = path + ": " + line;
  return check;
}

std::optional<std::string> CrsMismatch(const MaintenancePolicy& policy, std::string_view table,
                                       std::string_view table_crs) {
  if (Lower(policy.crs) == Lower(table_crs)) return std::nullopt;
  return "table '" + std::string(table) + "' has CRS " +
         (table_crs.empty() ? std::string("(none)") : std::string(table_crs)) +
         ", the policy expects " + policy.crs;
}

std::string_view MaintenanceTaskName(MaintenanceTask task) {
  switch (task) {
    case MaintenanceTask::kCompact:
      return "compact";
    case MaintenanceTask::kRewriteManifests:
      return "rewrite-manifests";
    case MaintenanceTask::kExpireSnapshots:
      return "expire-snapshots";
    case MaintenanceTask::kRemoveOrphans:
      return "remove-orphans";
  }
  return "?";
}

std::vector<TaskDecision> Decide(const MaintenancePolicy& p, const TableMeasurement& m) {
  std::vector<TaskDecision> out;

  // compact: small files by count, by share, or a low average.
  {
    TaskDecision d{MaintenanceTask::kCompact, false, ""};
    const std::int64_t min_average =
        p.min_average_file_size_bytes.value_or(m.target_file_size_bytes / 8);
    const std::int64_t average = m.live_files > 0 ? m.live_bytes / m.live_files : 0;
    const double ratio =
        m.live_files > 0 ? static_cast<double>(m.small_files) / static_cast<double>(m.live_files)
                         : 0.0;
    std::string crossed;
    if (m.small_files >= p.small_file_count) {
      crossed = std::to_string(m.small_files) + " small files >= small_file_count " +
                std::to_string(p.small_file_count);
    } else if (m.small_files >= 2 && ratio >= p.small_file_ratio) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "small-file ratio %.2f >= small_file_ratio %.2f", ratio,
                    p.small_file_ratio);
      crossed = buf;
    } else if (m.live_files >= 2 && average < min_average) {
      crossed = "average file " + FormatSize(average) + " < min_average_file_size " +
                FormatSize(min_average);
    }
    if (crossed.empty()) {
      d.why = std::to_string(m.small_files) + " small of " + std::to_string(m.live_files) +
              " files, average " + FormatSize(average) + ": no threshold crossed";
    } else if (m.compaction_groups == 0) {
      d.why = crossed + ", but no file group qualifies for a rewrite (compact --dry-run says why)";
    } else {
      d.run = true;
      d.why = crossed + " (" + std::to_string(m.compaction_groups) +
              (m.compaction_groups == 1 ? " group)" : " groups)");
    }
    out.push_back(std::move(d));
  }

  // rewrite-manifests: manifests of the current snapshot.
  {
    TaskDecision d{MaintenanceTask::kRewriteManifests, false, ""};
    if (m.manifests > p.max_manifests_per_snapshot) {
      d.run = true;
      d.why = std::to_string(m.manifests) + " manifests > max_manifests_per_snapshot " +
              std::to_string(p.max_manifests_per_snapshot);
    } else {
      d.why = std::to_string(m.manifests) + " manifests <= max_manifests_per_snapshot " +
              std::to_string(p.max_manifests_per_snapshot);
    }
    out.push_back(std::move(d));
  }

  // expire-snapshots: snapshot count or age; only what is older than the retention goes.
  {
    TaskDecision d{MaintenanceTask::kExpireSnapshots, false, ""};
    const std::int64_t max_age_days = p.max_snapshot_age_days.value_or(p.retention_days);
    std::string crossed;
    if (m.snapshots > p.max_snapshots) {
      crossed = std::to_string(m.snapshots) + " snapshots > max_snapshots " +
                std::to_string(p.max_snapshots);
    } else if (m.oldest_snapshot_age_ms > max_age_days * kMsPerDay) {
      crossed = "oldest snapshot " + Days(m.oldest_snapshot_age_ms) +
                " days > max_snapshot_age_days " + std::to_string(max_age_days);
    }
    if (crossed.empty()) {
      d.why = std::to_string(m.snapshots) + " snapshots, oldest " + Days(m.oldest_snapshot_age_ms) +
              " days: no threshold crossed";
    } else if (m.expirable_snapshots == 0) {
      d.why = crossed + ", but none is older than retention_days " +
              std::to_string(p.retention_days) + " (time travel is kept)";
    } else {
      d.run = true;
      d.why = crossed + " (" + std::to_string(m.expirable_snapshots) +
              " older than retention_days " + std::to_string(p.retention_days) + ")";
    }
    out.push_back(std::move(d));
  }

  // remove-orphans: orphan bytes, or metadata files beyond what the metadata log keeps.
  {
    TaskDecision d{MaintenanceTask::kRemoveOrphans, false, ""};
    const std::int64_t max_metadata = p.max_metadata_files.value_or(m.previous_versions_max + 1);
    std::string crossed;
    if (m.orphan_bytes > p.max_orphan_bytes) {
      crossed = std::to_string(m.orphan_files) + " orphan files of " + FormatSize(m.orphan_bytes) +
                " > max_orphan_bytes " + FormatSize(p.max_orphan_bytes);
    } else if (m.metadata_files > max_metadata) {
      crossed = std::to_string(m.metadata_files) + " metadata files > " +
                (p.max_metadata_files ? std::string("max_metadata_files ")
                                      : std::string("previous-versions-max + 1 = ")) +
                std::to_string(max_metadata);
    }
    if (crossed.empty()) {
      d.why = std::to_string(m.orphan_files) + " orphan files (" + FormatSize(m.orphan_bytes) +
              ") older than " + std::to_string(p.orphan_min_age_hours) + " h, " +
              std::to_string(m.metadata_files) + " metadata files: no threshold crossed";
    } else if (m.orphan_files == 0) {
      d.why = crossed + ", but no orphan is older than orphan_min_age_hours " +
              std::to_string(p.orphan_min_age_hours);
    } else {
      d.run = true;
      d.why = crossed;
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> DescribeMeasurement(const MaintenancePolicy& p,
                                             const TableMeasurement& m) {
  std::vector<std::string> lines;
  const std::int64_t average = m.live_files > 0 ? m.live_bytes / m.live_files : 0;
  lines.push_back("data files: " + std::to_string(m.live_files) + " live (" +
                  FormatSize(m.live_bytes) + ", average " + FormatSize(average) + "), " +
                  std::to_string(m.small_files) + " below " + FormatSize(m.min_file_size_bytes) +
                  " (target " + FormatSize(m.target_file_size_bytes) + ")");
  lines.push_back("manifests: " + std::to_string(m.manifests) + " in the current snapshot");
  lines.push_back("snapshots: " + std::to_string(m.snapshots) + ", oldest " +
                  Days(m.oldest_snapshot_age_ms) + " days, " +
                  std::to_string(m.expirable_snapshots) + " older than retention_days " +
                  std::to_string(p.retention_days));
  lines.push_back("metadata files: " + std::to_string(m.metadata_files) +
                  " (previous-versions-max " + std::to_string(m.previous_versions_max) + ")");
  lines.push_back("orphans: " + std::to_string(m.orphan_files) + " files, " +
                  FormatSize(m.orphan_bytes) + ", older than " +
                  std::to_string(p.orphan_min_age_hours) + " h");
  return lines;
}

}  // namespace geolake::maintenance
