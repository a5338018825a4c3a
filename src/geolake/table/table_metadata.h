/// \file
/// TableMetadata: the content of one Iceberg metadata JSON file (Iceberg spec, "Table Metadata
/// Fields"), with its snapshots, refs and logs; reading (tolerant: v1, v2 and v3 tables, unknown
/// keys ignored) and writing (strict: v2 or v3, every required key, validated first).
/// TableMetadataBuilder makes the metadata of a new table and derives the next metadata file from
/// the current one. Helpers name metadata, manifest and manifest-list files the way Java and
/// PyIceberg do.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/table/partition_spec.h"
#include "geolake/table/schema.h"
#include "geolake/table/sort_order.h"

namespace geolake::table {

/// \brief The newest format version this code reads and writes. v2 is the default for writing.
inline constexpr int kMaxFormatVersion = 3;
inline constexpr int kDefaultFormatVersion = 2;

/// \brief A branch or tag pointing at a snapshot.
struct SnapshotRef {
  std::int64_t snapshot_id = 0;
  bool is_branch = true;  // JSON "type": "branch" | "tag"
  std::optional<std::int32_t> min_snapshots_to_keep;
  std::optional<std::int64_t> max_snapshot_age_ms;
  std::optional<std::int64_t> max_ref_age_ms;

  bool operator==(const SnapshotRef&) const = default;
};

/// \brief One snapshot of the table: the state after one commit.
struct Snapshot {
  std::int64_t snapshot_id = 0;
  std::optional<std::int64_t> parent_snapshot_id;
  std::int64_t sequence_number = 0;  // 0 for v1 tables
  std::int64_t timestamp_ms = 0;
  std::string manifest_list;           // empty only for v1 snapshots that list `manifests`
  std::vector<std::string> manifests;  // v1 only
  /// Summary with "operation" (append | replace | overwrite | delete); values are strings.
  std::map<std::string, std::string> summary;
  std::optional<std::int32_t> schema_id;
  std::optional<std::int64_t> first_row_id;  // v3
  std::optional<std::int64_t> added_rows;    // v3
  std::optional<std::string> key_id;         // v3

  /// \brief summary["operation"], or empty.
  std::string operation() const;

  bool operator==(const Snapshot&) const = default;
};

struct SnapshotLogEntry {
  std::int64_t timestamp_ms = 0;
  std::int64_t snapshot_id = 0;
  bool operator==(const SnapshotLogEntry&) const = default;
};

struct MetadataLogEntry {
  std::int64_t timestamp_ms = 0;
  std::string metadata_file;
  bool operator==(const MetadataLogEntry&) const = default;
};

/// \brief The name of the main branch, which always exists.
inline constexpr std::string_view kMainBranch = "main";

/// \brief The content of one metadata JSON file.
///
/// A plain value: copy it to derive the next version (TableMetadataBuilder does). Share an
/// immutable instance between threads as std::shared_ptr<const TableMetadata>.
struct TableMetadata {
  int format_version = kDefaultFormatVersion;
  std::string table_uuid;
  std::string location;
  std::int64_t last_sequence_number = 0;
  std::int64_t last_updated_ms = 0;
  std::int32_t last_column_id = 0;
  std::vector<SchemaPtr> schemas;
  std::int32_t current_schema_id = 0;
  std::vector<PartitionSpecPtr> partition_specs;
  std::int32_t default_spec_id = 0;
  std::int32_t last_partition_id = kFirstPartitionFieldId - 1;
  std::map<std::string, std::string> properties;
  std::optional<std::int64_t> current_snapshot_id;
  std::vector<Snapshot> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::vector<SortOrderPtr> sort_orders;
  std::int32_t default_sort_order_id = 0;
  std::map<std::string, SnapshotRef> refs;
  std::optional<std::int64_t> next_row_id;  // v3
  // Carried through unchanged as JSON arrays (text): Puffin statistics files, partition
  // statistics files and v3 encryption keys. Empty = absent.
  std::string statistics_json;
  std::string partition_statistics_json;
  std::string encryption_keys_json;

  /// \brief The current schema, or nullptr if current_schema_id names none.
  SchemaPtr current_schema() const { return SchemaById(current_schema_id); }
  SchemaPtr SchemaById(std::int32_t schema_id) const;
  PartitionSpecPtr default_spec() const { return SpecById(default_spec_id); }
  PartitionSpecPtr SpecById(std::int32_t spec_id) const;
  SortOrderPtr default_sort_order() const { return SortOrderById(default_sort_order_id); }
  SortOrderPtr SortOrderById(std::int32_t order_id) const;
  /// \brief The current snapshot, or nullptr for a table without one.
  const Snapshot* current_snapshot() const;
  const Snapshot* SnapshotById(std::int64_t snapshot_id) const;

  /// \brief A property parsed as an integer, or `fallback` when absent or not a number.
  std::int64_t PropertyAsInt(std::string_view key, std::int64_t fallback) const;

  /// \brief Check what a writer must guarantee: a supported version (2 or 3), uuid, the
  /// current schema/spec/sort order exist, last-column-id and last-partition-id cover the ids
  /// in use, current-snapshot-id equals refs.main, every ref and log entry names a known
  /// snapshot, v2+ snapshots have a manifest list and an operation, v3 has next-row-id.
  /// kInvalidArgument naming the first violation.
  Status Validate() const;

  /// \brief Serialize as JSON (two-space indent). Validates first; v1 is kNotImplemented.
  Result<std::string> ToJson() const;

  /// \brief Parse metadata JSON of format v1, v2 or v3. Unknown keys are ignored. A missing
  /// or mistyped required key is kCorruptData naming the key ("table metadata: missing
  /// required key 'location'"); a format version above 3 is kNotImplemented.
  static Result<TableMetadata> FromJson(std::string_view json);
};

/// \brief What a new table starts with.
struct NewTableOptions {
  std::string location;  // table base location, without a trailing '/'
  /// Columns; ids may be anything unique (they are reassigned from 1). Partition spec and sort
  /// order refer to these ids and are remapped.
  SchemaPtr schema;
  PartitionSpecPtr spec;    // nullptr = unpartitioned; field ids are reassigned from 1000
  SortOrderPtr sort_order;  // nullptr = unsorted; a sorted order gets id 1
  std::map<std::string, std::string> properties;
  int format_version = kDefaultFormatVersion;
  std::string table_uuid;   // empty = a fresh random UUID
  std::int64_t now_ms = 0;  // 0 = the current time
};

/// \brief Build the first metadata of a new table: fresh field ids (AssignFreshIds), spec id 0
/// with partition field ids from 1000, sort order 1 (or 0 unsorted), no snapshots.
/// kInvalidArgument for an empty location, an unsupported format version, a spec or sort
/// order that does not fit the schema.
Result<TableMetadata> NewTableMetadata(const NewTableOptions& options);

/// \brief Derives the next metadata from a base: new snapshots, moved branches, properties,
/// and on Build the metadata-log entry for the base file.
///
/// Thread-safety: none; one builder per commit attempt.
class TableMetadataBuilder {
 public:
  /// \param base the current metadata.
  /// \param base_metadata_location the file `base` was read from; it enters the metadata log
  /// on Build (empty: nothing is logged, e.g. for a table never written).
  TableMetadataBuilder(TableMetadata base, std::string base_metadata_location);

  /// \brief Set (insert or replace) table properties.
  TableMetadataBuilder& SetProperties(const std::map<std::string, std::string>& updates);
  /// \brief Remove table properties; absent keys are ignored.
  TableMetadataBuilder& RemoveProperties(const std::vector<std::string>& keys);

  /// \brief Add a snapshot. Its id must be new; in v2+ its sequence number must exceed the
  /// table's last-sequence-number, which becomes it; its parent, if any, must exist; in v3
  /// first-row-id must equal next-row-id, which then grows by added-rows. kInvalidArgument
  /// otherwise.
  Status AddSnapshot(Snapshot snapshot);

  /// \brief Point branch `branch` at a snapshot (creating the branch if needed). Moving
  /// "main" also sets current-snapshot-id and appends a snapshot-log entry.
  Status SetBranchSnapshot(std::int64_t snapshot_id, std::string_view branch = kMainBranch);

  /// \brief Remove snapshots (expire-snapshots): the snapshots themselves, the refs that point
  /// at them, their `statistics` / `partition-statistics` entries, and the snapshot-log history
  /// up to the newest entry of a removed snapshot (Java's rule: a log with a gap would make
  /// time travel answer with a snapshot that was not current then). Children keep their parent
  /// id. kInvalidArgument for an unknown id or the current snapshot.
  Status RemoveSnapshots(const std::set<std::int64_t>& snapshot_ids);
  /// \brief Remove refs by name (unknown names are ignored); `main` cannot be removed
  /// (kInvalidArgument).
  Status RemoveRefs(const std::vector<std::string>& names);

  /// \brief The metadata as it stands (for computing a commit against it).
  const TableMetadata& current() const { return metadata_; }

  /// \brief Finish: last-updated-ms = `now_ms` (0 = the current time, never earlier than the
  /// base's), the base file appended to the metadata log, which is then trimmed to
  /// `write.metadata.previous-versions-max` (default 100, at least 1) entries by dropping the
  /// oldest; validated. kInvalidArgument if the result is invalid.
  Result<TableMetadata> Build(std::int64_t now_ms = 0);

 private:
  TableMetadata metadata_;
  std::string base_metadata_location_;
  std::int64_t base_last_updated_ms_;
};

/// \brief A random (version 4) UUID in lower-case text form.
std::string NewUuid();

/// \brief A new positive snapshot id that is not in `metadata` (Java's rule: xor of the two
/// halves of a random UUID, masked to 63 bits).
std::int64_t NewSnapshotId(const TableMetadata& metadata);

/// \brief Milliseconds since the Unix epoch, now.
std::int64_t NowMillis();

/// \brief "00001-<uuid>.metadata.json" (version zero-padded to 5 digits), or
/// "00001-<uuid>.gz.metadata.json" for a gzip-compressed file (the names Java's
/// TableMetadataParser gives).
std::string MetadataFileName(std::int64_t version, std::string_view uuid, bool gzip = false);

/// \brief "v<N>.metadata.json" (or "v<N>.gz.metadata.json"), the name path-based readers
/// (version-hint.text) look for.
std::string HintedMetadataFileName(std::int64_t version, bool gzip = false);

/// \brief True for a metadata file name of the gzip form: "*.gz.metadata.json", or the older
/// "*.metadata.json.gz" that Java also reads.
bool IsGzipMetadataFileName(std::string_view path);

/// \brief Whether `write.metadata.compression-codec` asks for gzip metadata files. The property
/// is absent, "none" or "gzip" (any case); anything else (zstd included) is kInvalidArgument,
/// because Iceberg readers load only uncompressed and gzip metadata files.
Result<bool> MetadataCompressionIsGzip(const std::map<std::string, std::string>& properties);

/// \brief The version a metadata file name encodes: "00012-<uuid>.metadata.json" -> 12,
/// "v3.metadata.json" -> 3, also with ".gz.metadata.json"; any directory part is ignored.
/// kInvalidArgument when the name has neither form.
Result<std::int64_t> ParseMetadataVersion(std::string_view path);

/// \brief The content of metadata/version-hint.text for a version: "N" (no newline).
std::string VersionHintContent(std::int64_t version);

/// \brief "snap-<snapshot id>-<attempt>-<commit uuid>.avro".
std::string ManifestListFileName(std::int64_t snapshot_id, int attempt,
                                 std::string_view commit_uuid);

/// \brief "<commit uuid>-m<N>.avro".
std::string ManifestFileName(std::string_view commit_uuid, int index);

}  // namespace geolake::table
