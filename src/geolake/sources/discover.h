/// \file
/// The discover stage (docs/architecture.md, stage 1 of every job): expand source specs
/// (paths, globs, folders) into sources, fingerprint each one for resume, and cut large ones
/// into independent units that workers read in parallel with one UnitReader (unit_reader.h) each.
///
/// Which sources are cut: a GDAL layer whose driver seeks by feature index in constant time
/// (GeoPackage, Shapefile: OGR's FastSetNextByIndex capability) and whose feature count is
/// known is cut into ranges of about `unit_rows` features; FlatGeobuf and GeoJSONSeq files are
/// cut the same way and read by geolake's own readers (native_discover.h); any other GDAL layer
/// (GeoJSON, CSV, TopoJSON, OSM, and what the own readers refuse) is one unit, because seeking
/// there re-reads the file from its start. A GeoParquet file is cut at row-group boundaries into
/// groups of about `unit_rows` rows.
#pragma once

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/core/thread_pool.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/sources/gdal_source.h"

namespace geolake::sources {

/// The driver name DiscoveredSource and SourceUnit use for Parquet files read by our reader.
inline constexpr const char* kGeoParquetDriver = "GeoParquet";

/// \brief What identifies one version of a source file (resume skips committed fingerprints).
struct SourceFingerprint {
  std::string path;  // absolute, normalized
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t hash = 0;  // XXH3-64 of the first and last 64 KiB (the whole file if smaller)
  /// \brief Stable text "xxh3:<16 hex>:<size>:<path>". mtime is left out on purpose: a copied
  /// or touched file with the same bytes at the same path is the same source.
  std::string ToString() const;
  bool operator==(const SourceFingerprint&) const = default;
};

/// \brief The key that `--shard I/N` hashes (core/shard.h) for unit `unit_index` of the
/// source `source`: "xxh3:<16 hex>:<size>#<unit index>". The path is left out on purpose, so
/// that processes on machines that mount the data at different paths agree on every unit's
/// shard; two files with equal fingerprints but different paths then fall in one shard, which
/// only unbalances the shards. A source without a fingerprint hash (a GDAL virtual path) is
/// keyed by its path.
std::string ShardKey(const SourceFingerprint& source, std::int64_t unit_index);

/// \brief An independent piece of one source.
struct SourceUnit {
  std::string path;
  std::string layer;            // empty = the first/only layer
  std::int64_t index = 0;       // 0..n-1 within its source
  std::int64_t first_row = 0;   // feature index (GDAL) or row (GeoParquet)
  std::int64_t row_count = -1;  // -1 = to the end
  std::string driver;           // as DiscoveredSource::driver; empty = detect when opening
  /// GeoPackage units are read with GpkgSource (the same batches as GdalSource, without OGR's
  /// per-feature cost) unless this is false (DiscoverOptions::native_gpkg).
  bool native_gpkg = true;
  /// GDAL's description of the layer as discover read it (GeoPackage units): computed without
  /// GDAL by GpkgSource::Describe (equal to GDAL's) or, where that refuses, from GDAL itself,
  /// so that the unit's reader need not describe the table again; null = the reader finds out.
  std::shared_ptr<const SourceInfo> gdal_info = nullptr;
  /// FlatGeobuf and GeoJSONSeq units read by geolake's own readers (native_discover.h): the
  /// byte offset where the unit's first record starts; -1 = GDAL reads the unit.
  std::int64_t first_byte = -1;
};

struct DiscoveredSource {
  std::string path;
  std::string layer;
  std::string driver;  // "GPKG", "GeoJSONSeq", ..., "GeoParquet"
  SourceFingerprint fingerprint;
  std::vector<geoparquet::FieldDef> fields;  // attribute fields (feature_batch.h)
  std::string crs_projjson;                  // empty = unknown
  std::string crs_authority;                 // e.g. "EPSG:4326" when known
  std::int64_t feature_count = -1;           // -1 = unknown without a full scan
  std::vector<SourceUnit> units;
};

struct DiscoverOptions {
  std::int64_t unit_rows = 100000;  // target rows per unit
  std::string layer;                // for multi-layer sources
  /// For a multi-layer source (GeoPackage with several tables, OSM: points, lines,
  /// multilinestrings, multipolygons, other_relations) and no `layer`: false = the first layer
  /// only, true = one DiscoveredSource per layer (sorted by path, then layer order).
  bool all_layers = false;
  /// false: GeoPackages are described (layers, fields, CRS, count) by GDAL instead of
  /// GpkgSource::Describe, and their units read through GDAL (GdalSource) instead of
  /// GpkgSource, e.g. to compare the two.
  bool native_gpkg = true;
  /// false: FlatGeobuf files are read through GDAL (one unit) instead of FgbSource.
  bool native_fgb = true;
  /// false: GeoJSONSeq files are described and read through GDAL (one unit) instead of
  /// GeoJsonSeqSource.
  bool native_geojsonseq = true;
  /// A GeoJSON FeatureCollection (.geojson, .json) of at least this many bytes is read by
  /// GeoJsonSeqSource, cut into units of features; smaller ones (and all when
  /// native_geojsonseq is false) by GDAL as one unit.
  std::int64_t native_geojson_min_bytes = 16 << 20;
  /// Borrowed, may be null: describe candidate files (a folder of many files) as tasks on this
  /// executor; null = one after the other on the calling thread. The result is the same
  /// either way.
  ThreadPool* executor = nullptr;
  /// Requested: discovery ends with kCancelled between files, and inside the scan of a
  /// GeoJSON(Seq) file (the one step that reads a whole file) within a few thousand records.
  std::stop_token stop;
};

/// \brief Expand paths, globs ("data/*.gpkg") and folders (recursively, files GDAL or our
/// Parquet reader can open; hidden files, `*.geolake-tmp` and sidecars such as .shx/.dbf/.prj
/// skipped), fingerprint each source and cut it into units. Sorted by path; a file named by
/// several specs appears once.
///
/// Errors: kNotFound for a spec matching nothing (or a folder holding no source), or a layer
/// that does not exist; kInvalidArgument for a file named directly (or by a glob) that is not
/// a vector source; kIOError when a file cannot be read for its fingerprint.
Result<std::vector<DiscoveredSource>> DiscoverSources(const std::vector<std::string>& specs,
                                                      const DiscoverOptions& options);

/// \brief What discover learns about one layer (the first when `layer` is empty) of a source:
/// a Parquet file's read by GeoParquetSource (driver kGeoParquetDriver, fields as ingest reads
/// them; its one layer has no name), a GeoPackage's read with SQLite (GpkgSource::Describe,
/// equal to GDAL's), GDAL's when that refuses or for any other format. Errors: as
/// GeoParquetSource::Open for a Parquet file (kNotFound for a non-empty `layer`), else as
/// GdalSource::Open.
Result<SourceInfo> DescribeLayer(const std::string& path, const std::string& layer = "");

/// \brief The bytes of the files `specs` (paths, globs, folders as ingest takes them) name: the
/// estimate of a new table's size that PartitionForInputSize takes. A file counts its size, a
/// folder every regular file below it that is not hidden (sidecars such as .dbf included: they
/// hold the attributes), a glob the files and folders it matches. A spec that matches nothing
/// or cannot be read, and a GDAL virtual path (/vsizip/..., size unknown), count 0: discovery
/// reports missing sources, this only estimates. Thread-safety: reads the file system only.
std::int64_t InputBytes(const std::vector<std::string>& specs);

/// \brief True when `path` starts with the Parquet magic "PAR1" (false when unreadable).
bool IsParquetFile(const std::string& path);

/// \brief Fingerprint one file. kNotFound when it does not exist, kIOError when unreadable.
Result<SourceFingerprint> FingerprintFile(const std::string& path);

}  // namespace geolake::sources
