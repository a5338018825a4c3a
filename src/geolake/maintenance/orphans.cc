#include "geolake/maintenance/orphans.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "geolake/core/logging.h"
#include "geolake/core/units.h"
#include "geolake/pipeline/run_journal.h"
#include "geolake/table/manifest.h"
#include "geolake/table/transaction.h"

namespace geolake::maintenance {
namespace {

namespace fs = std::filesystem;

// A file we must read to know what is referenced could not be read: whatever the cause
// (missing, truncated, undecodable), it is reported as corrupt table state, because deleting
// on partial knowledge could remove live data.
Status Unreadable(const std::string& what, const std::string& path, const Status& cause) {
  return Status::CorruptData(what + " '" + path + "' cannot be read (" + cause.ToString() +
                             "); nothing deleted");
}

Status AddReferenced(std::string_view path, std::set<std::string>* out) {
  if (path.empty()) return Status::OK();
  GEOLAKE_ASSIGN_OR_RETURN(std::string normal, NormalizeLocalPath(path));
  out->insert(std::move(normal));
  return Status::OK();
}

// "statistics" and "partition-statistics" are arrays of objects with a "statistics-path".
Status AddStatisticsFiles(const std::string& json_text, std::set<std::string>* out) {
  if (json_text.empty()) return Status::OK();
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return Status::CorruptData("table metadata: statistics is not an array");
  for (const auto& item : j) {
    if (!item.is_object()) continue;
    const auto it = item.find("statistics-path");
    if (it == item.end() || !it->is_string()) {
      return Status::CorruptData("table metadata: statistics entry without 'statistics-path'");
    }
    GEOLAKE_RETURN_NOT_OK(AddReferenced(it->get<std::string>(), out));
  }
  return Status::OK();
}

Status AddManifest(const io::FileIO& io, const table::ManifestFile& manifest,
                   std::set<std::string>* out) {
  GEOLAKE_RETURN_NOT_OK(AddReferenced(manifest.manifest_path, out));
  auto entries = table::ReadManifest(io, manifest);
  if (!entries.ok()) return Unreadable("manifest", manifest.manifest_path, entries.status());
  for (const table::ManifestEntry& entry : *entries) {
    GEOLAKE_RETURN_NOT_OK(AddReferenced(entry.data_file.file_path, out));
  }
  return Status::OK();
}

// What the other tables of the catalog own below a table's location: the files referenced by
// tables at the same or an enclosing location, and whole folders of tables nested inside it.
struct OtherTables {
  std::set<std::string> files;
  std::vector<std::string> nested_locations;

  bool Own(const std::string& path) const {
    if (files.contains(path)) return true;
    for (const std::string& nested : nested_locations) {
      if (table::LocationsOverlap(path, nested)) return true;
    }
    return false;
  }
};

Result<OtherTables> FilesOfOtherTables(table::Catalog& catalog, const io::FileIO& io,
                                       const table::TableIdentifier& self,
                                       const std::string& location) {
  OtherTables out;
  GEOLAKE_ASSIGN_OR_RETURN(const std::vector<table::TableLocation> tables,
                           table::ListTableLocations(catalog, io).WithContext("remove-orphans"));
  for (const table::TableLocation& other : tables) {
    if (other.id == self || other.location.empty()) continue;
    if (!table::LocationsOverlap(location, other.location)) continue;
    const std::string name = other.id.ToString();
    const bool nested = table::LocationsOverlap(other.location, location) &&
                        other.location.size() > location.size();
    if (nested) {
      Log(LogLevel::kWarn,
          "remove-orphans: table '{}' lies inside this table's location ({}); "
          "its files are left alone",
          name, other.location);
      out.nested_locations.push_back(other.location);
      continue;
    }
    Log(LogLevel::kWarn,
        "remove-orphans: table '{}' shares or contains this table's location "
        "({}); the files it references are left alone",
        name, other.location);
    if (!other.readable) {
      return Status::CorruptData("remove-orphans: table '" + name + "' at '" + other.location +
                                 "' shares this table's folder and its metadata '" +
                                 other.metadata_location + "' cannot be read; nothing deleted");
    }
    Result<table::Table> loaded = table::LoadTable(catalog, io, other.id);
    if (!loaded.ok()) {
      return Unreadable("metadata of table '" + name + "'", other.metadata_location,
                        loaded.status());
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::set<std::string> files,
                             ReferencedFiles(io, loaded->metadata, loaded->metadata_location));
    out.files.merge(files);
  }
  return out;
}

// What the live ingest runs of a table may still commit: the files their journals list as
// written and not committed, and any file modified since the earliest live run started (a file
// being written, or finished and not yet journaled, is in no journal yet). 2 s of slack covers
// file systems whose mtime lags the wall clock.
struct InFlight {
  std::set<std::string> files;
  std::optional<std::int64_t> since_ms;

  bool Holds(const std::string& path, std::int64_t mtime_ms) const {
    return files.contains(path) || (since_ms.has_value() && mtime_ms >= *since_ms - 2000);
  }
};

Result<InFlight> InFlightFiles(const io::FileIO& io, const std::string& warehouse,
                               const std::string& table_name) {
  InFlight out;
  GEOLAKE_ASSIGN_OR_RETURN(const std::vector<pipeline::LiveRun> runs,
                           pipeline::ListLiveRuns(&io, warehouse, table_name)
                               .WithContext("remove-orphans: run journals"));
  for (const pipeline::LiveRun& run : runs) {
    Log(LogLevel::kInfo,
        "remove-orphans: ingest run {} of table '{}' is running; its files "
        "are left alone",
        run.run_id, table_name);
    for (const std::string& file : run.uncommitted_files) {
      if (Result<std::string> path = NormalizeLocalPath(file); path.ok()) out.files.insert(*path);
    }
    out.since_ms = std::min(out.since_ms.value_or(run.started_ms), run.started_ms);
  }
  return out;
}

}  // namespace

Result<std::set<std::string>> ReferencedFiles(const io::FileIO& io,
                                              const table::TableMetadata& metadata,
                                              const std::string& metadata_location) {
  std::set<std::string> out;
  // Each metadata version may also have its published name v<N>.metadata.json, which
  // path-based readers open through the hint; neither is ever an orphan.
  const std::string metadata_dir = metadata.location + "/metadata/";
  auto add_version = [&](const std::string& file) -> Status {
    GEOLAKE_RETURN_NOT_OK(AddReferenced(file, &out));
    if (auto v = table::ParseMetadataVersion(file); v.ok()) {
      GEOLAKE_RETURN_NOT_OK(AddReferenced(
          metadata_dir + table::HintedMetadataFileName(*v, table::IsGzipMetadataFileName(file)),
          &out));
    }
    return Status::OK();
  };
  GEOLAKE_RETURN_NOT_OK(add_version(metadata_location));
  for (const table::MetadataLogEntry& entry : metadata.metadata_log) {
    GEOLAKE_RETURN_NOT_OK(add_version(entry.metadata_file));
  }
  GEOLAKE_RETURN_NOT_OK(AddReferenced(metadata_dir + "version-hint.text", &out));
  GEOLAKE_RETURN_NOT_OK(AddStatisticsFiles(metadata.statistics_json, &out));
  GEOLAKE_RETURN_NOT_OK(AddStatisticsFiles(metadata.partition_statistics_json, &out));

  // Snapshots share manifests (a fast append carries the previous ones along), so each
  // manifest is read once.
  std::set<std::string> manifests_seen;
  for (const table::Snapshot& snapshot : metadata.snapshots) {
    std::vector<table::ManifestFile> manifests;
    if (!snapshot.manifest_list.empty()) {
      GEOLAKE_RETURN_NOT_OK(AddReferenced(snapshot.manifest_list, &out));
      auto list = table::ReadManifestList(io, snapshot.manifest_list);
      if (!list.ok()) return Unreadable("manifest list", snapshot.manifest_list, list.status());
      manifests = std::move(*list);
    } else {
      for (const std::string& path : snapshot.manifests) {  // v1 without a manifest list
        table::ManifestFile m;
        m.manifest_path = path;
        m.added_snapshot_id = snapshot.snapshot_id;
        manifests.push_back(std::move(m));
      }
    }
    for (const table::ManifestFile& manifest : manifests) {
      if (!manifests_seen.insert(manifest.manifest_path).second) continue;
      GEOLAKE_RETURN_NOT_OK(AddManifest(io, manifest, &out));
    }
  }
  return out;
}

Result<OrphanReport> RemoveOrphanFiles(table::Catalog& catalog, const io::FileIO& io,
                                       const table::Table& table, const OrphanOptions& options,
                                       std::stop_token stop) {
  const table::TableMetadata& metadata = table.metadata;
  if (options.warehouse.empty()) {
    return Status::InvalidArgument("remove-orphans: no warehouse given");
  }
  if (options.older_than < kMinOrphanAge && !options.dry_run && !options.no_running_writers) {
    return Status::InvalidArgument(
        "remove-orphans: a cutoff of " + FormatDuration(options.older_than) +
        " is under one hour, so files a running writer has not committed yet would be "
        "deleted; use --dry-run to list, or state that nothing writes to the table with "
        "--no-running-writers");
  }
  GEOLAKE_ASSIGN_OR_RETURN(const std::string warehouse,
                           NormalizeLocalPath(options.warehouse).WithContext("warehouse"));
  auto location = NormalizeLocalPath(metadata.location);
  if (!location.ok()) {
    return location.status().WithContext("remove-orphans: table location");
  }
  if (*location == warehouse || !table::IsWithinPath(*location, warehouse)) {
    return Status::InvalidArgument("remove-orphans: table location '" + metadata.location +
                                   "' is not a folder below the warehouse '" + warehouse + "'");
  }
  GEOLAKE_ASSIGN_OR_RETURN(const std::set<std::string> referenced,
                           ReferencedFiles(io, metadata, table.metadata_location));
  GEOLAKE_ASSIGN_OR_RETURN(const OtherTables others,
                           FilesOfOtherTables(catalog, io, table.id, *location));
  GEOLAKE_ASSIGN_OR_RETURN(const InFlight in_flight,
                           InFlightFiles(io, options.warehouse, table.id.ToString()));

  const std::int64_t now_ms = options.now_ms != 0
                                  ? options.now_ms
                                  : std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count();
  const std::int64_t cutoff_ms = now_ms - options.older_than.count();

  OrphanReport report;
  report.dry_run = options.dry_run;
  for (const char* folder : {"/data", "/metadata"}) {
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<io::FileInfo> files, io.List(*location + folder));
    for (const io::FileInfo& info : files) {
      ++report.files_listed;
      GEOLAKE_ASSIGN_OR_RETURN(std::string path, NormalizeLocalPath(info.path));
      if (referenced.contains(path)) {
        ++report.files_referenced;
        continue;
      }
      if (others.Own(path)) {
        ++report.files_other_tables;
        continue;
      }
      const std::int64_t mtime_ms = info.mtime_ns / 1000000;
      if (in_flight.Holds(path, mtime_ms)) {
        ++report.files_in_flight;
        continue;
      }
      // Strictly older: a file written in the same millisecond as `now` with age 0 is kept only
      // if it is in the future, which keeps `--older-than 0s` useful in tests.
      if (mtime_ms > cutoff_ms) {
        ++report.files_too_new;
        continue;
      }
      report.removed.push_back(OrphanFile{std::move(path),
                                          static_cast<std::int64_t>(info.size_bytes), mtime_ms,
                                          io::IsTempFilePath(info.path)});
    }
  }
  std::sort(report.removed.begin(), report.removed.end(),
            [](const OrphanFile& a, const OrphanFile& b) { return a.path < b.path; });
  for (const OrphanFile& file : report.removed) report.removed_bytes += file.size_bytes;
  if (options.dry_run) return report;

  for (const OrphanFile& file : report.removed) {
    if (stop.stop_requested()) {
      return Status::Cancelled("remove-orphans: stopped before deleting '" + file.path + "'");
    }
    GEOLAKE_RETURN_NOT_OK(io.Delete(file.path).WithContext("remove-orphans"));
    GEOLAKE_LOG_DEBUG("removed orphan {}", file.path);
  }
  return report;
}

}  // namespace geolake::maintenance
