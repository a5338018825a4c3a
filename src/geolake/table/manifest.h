/// \file
/// Iceberg manifests and manifest lists (Iceberg spec, "Manifest Lists" and "Manifests"): the
/// DataFile, ManifestEntry and ManifestFile records, and their encoding as Avro object container
/// files with Iceberg's exact field ids, record names and header metadata, as Java writes them for
/// format v2 (and v3). Reading resolves fields by field id, accepts v1/v2/v3 files from any writer,
/// and applies sequence-number and snapshot-id inheritance from the manifest list entry.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/partition_spec.h"
#include "geolake/table/schema.h"
#include "geolake/table/single_value.h"

namespace geolake::table {

enum class ManifestContent : std::int32_t { kData = 0, kDeletes = 1 };
enum class DataFileContent : std::int32_t { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
enum class ManifestEntryStatus : std::int32_t { kExisting = 0, kAdded = 1, kDeleted = 2 };

/// \brief One data or delete file as a manifest describes it (data_file, field 2).
struct DataFile {
  DataFileContent content = DataFileContent::kData;
  std::string file_path;
  std::string file_format = "PARQUET";  // read case-insensitively; written upper-case
  /// One value per field of the manifest's partition spec, in spec order (null allowed).
  std::vector<Value> partition;
  std::int64_t record_count = 0;
  std::int64_t file_size_in_bytes = 0;
  std::map<std::int32_t, std::int64_t> column_sizes;
  std::map<std::int32_t, std::int64_t> value_counts;
  std::map<std::int32_t, std::int64_t> null_value_counts;
  std::map<std::int32_t, std::int64_t> nan_value_counts;
  /// Single-value serialized bounds (single_value.h), keyed by field id.
  std::map<std::int32_t, std::string> lower_bounds;
  std::map<std::int32_t, std::string> upper_bounds;
  std::optional<std::string> key_metadata;
  std::vector<std::int64_t> split_offsets;
  std::vector<std::int32_t> equality_ids;
  std::optional<std::int32_t> sort_order_id;
  std::optional<std::int64_t> first_row_id;           // v3
  std::optional<std::string> referenced_data_file;    // v2+
  std::optional<std::int64_t> content_offset;         // v3
  std::optional<std::int64_t> content_size_in_bytes;  // v3

  bool operator==(const DataFile&) const = default;
};

/// \brief One manifest entry: a file plus its status and (possibly inherited) numbers.
struct ManifestEntry {
  ManifestEntryStatus status = ManifestEntryStatus::kAdded;
  /// Null in the file means "inherit from the manifest list entry"; after reading with a
  /// ManifestFile these are filled in.
  std::optional<std::int64_t> snapshot_id;
  std::optional<std::int64_t> sequence_number;
  std::optional<std::int64_t> file_sequence_number;
  DataFile data_file;

  bool operator==(const ManifestEntry&) const = default;
};

/// \brief A partition field's summary in a manifest list entry (record r508).
struct FieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;  // single-value serialized
  std::optional<std::string> upper_bound;

  bool operator==(const FieldSummary&) const = default;
};

/// \brief One manifest list entry (record manifest_file).
struct ManifestFile {
  std::string manifest_path;
  std::int64_t manifest_length = 0;
  std::int32_t partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  std::int64_t sequence_number = 0;
  std::int64_t min_sequence_number = 0;
  std::int64_t added_snapshot_id = 0;
  std::int32_t added_files_count = 0;
  std::int32_t existing_files_count = 0;
  std::int32_t deleted_files_count = 0;
  std::int64_t added_rows_count = 0;
  std::int64_t existing_rows_count = 0;
  std::int64_t deleted_rows_count = 0;
  std::vector<FieldSummary> partitions;
  std::optional<std::string> key_metadata;
  std::optional<std::int64_t> first_row_id;  // v3

  bool operator==(const ManifestFile&) const = default;
};

/// \brief What a manifest is written for.
struct ManifestWriteOptions {
  int format_version = 2;
  /// The snapshot that adds the manifest (its manifest list entry's added_snapshot_id).
  std::int64_t snapshot_id = 0;
  /// Sequence number for the manifest list entry. Usually unknown until commit: leave it
  /// nullopt and ManifestFile::sequence_number/min_sequence_number are filled at commit time
  /// (ADDED entries inherit them).
  std::optional<std::int64_t> sequence_number;
  SchemaPtr schema;       // table schema written into the header
  PartitionSpecPtr spec;  // the single spec of every file in the manifest
  ManifestContent content = ManifestContent::kData;
  bool compress = true;  // deflate (Java's default "gzip" for manifests) or none
};

/// \brief A manifest encoded in memory plus its manifest list entry (path and length set).
struct EncodedManifest {
  std::string bytes;
  ManifestFile entry;
};

/// \brief Encode entries as a manifest Avro file. The list entry gets counts per status, row
/// counts, partition summaries (bounds of non-null values per partition field) and
/// min_sequence_number over entries with explicit sequence numbers.
/// kInvalidArgument when an entry's partition does not match the spec, a value does not fit
/// its partition type, or a delete file is put in a data manifest (and vice versa).
Result<EncodedManifest> EncodeManifest(const ManifestWriteOptions& options,
                                       const std::vector<ManifestEntry>& entries,
                                       std::string manifest_path);

/// \brief The header of a manifest, as read.
struct ManifestHeader {
  int format_version = 1;
  std::optional<std::int32_t> partition_spec_id;
  ManifestContent content = ManifestContent::kData;
  std::string schema_json;          // "schema" key (table schema JSON), if present
  std::string partition_spec_json;  // "partition-spec" key (array of fields), if present
};

/// \brief Decode a manifest file's bytes. With `list_entry`, inherit: null snapshot_id →
/// added_snapshot_id; null sequence numbers of ADDED entries → the entry's sequence_number;
/// v1 manifests → all sequence numbers 0. Partition values are returned in the order of the
/// header's partition spec (Avro order if the header has none). kCorruptData for a malformed
/// file or a required field that is missing or mistyped.
Result<std::vector<ManifestEntry>> DecodeManifest(std::string bytes, const ManifestFile* list_entry,
                                                  ManifestHeader* header = nullptr);

/// \brief Encode a manifest list (header: snapshot-id, parent-snapshot-id, sequence-number,
/// format-version, and v3 first-row-id).
Result<std::string> EncodeManifestList(int format_version, std::int64_t snapshot_id,
                                       std::optional<std::int64_t> parent_snapshot_id,
                                       std::int64_t sequence_number,
                                       std::optional<std::int64_t> first_row_id,
                                       const std::vector<ManifestFile>& manifests,
                                       bool compress = true);

/// \brief Decode a manifest list of any version (v1 counts/sequence numbers read as 0 when
/// absent; fields resolved by id).
Result<std::vector<ManifestFile>> DecodeManifestList(std::string bytes);

/// \brief Read and decode a manifest list through FileIO.
Result<std::vector<ManifestFile>> ReadManifestList(const io::FileIO& io, const std::string& path);

/// \brief Read and decode a manifest through FileIO, inheriting from its list entry.
Result<std::vector<ManifestEntry>> ReadManifest(const io::FileIO& io, const ManifestFile& entry);

}  // namespace geolake::table
