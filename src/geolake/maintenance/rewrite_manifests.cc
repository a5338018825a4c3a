#include "geolake/maintenance/rewrite_manifests.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "geolake/table/single_value.h"

namespace geolake::maintenance {
namespace {

std::string MetadataDir(const table::TableMetadata& m) { return m.location + "/metadata/"; }

// The partition tuple as text, "a=1/b=x" style without names: "1, x" ("" when unpartitioned).
std::string PartitionText(const table::Type& partition_type, const table::DataFile& f) {
  std::string out;
  for (std::size_t i = 0; i < f.partition.size() && i < partition_type.fields().size(); ++i) {
    if (i > 0) out += ", ";
    out += table::IsNull(f.partition[i])
               ? std::string("null")
               : table::ValueToString(*partition_type.fields()[i].type, f.partition[i]);
  }
  return out;
}

// Iceberg's order of partition tuples field by field, nulls first. A value CompareValues cannot
// order (a type mismatch it reports) compares equal, keeping the stable order.
bool PartitionLess(const table::Type& partition_type, const table::DataFile& a,
                   const table::DataFile& b) {
  const std::size_t n =
      std::min({a.partition.size(), b.partition.size(), partition_type.fields().size()});
  for (std::size_t i = 0; i < n; ++i) {
    const bool a_null = table::IsNull(a.partition[i]);
    const bool b_null = table::IsNull(b.partition[i]);
    if (a_null != b_null) return a_null;
    if (a_null) continue;
    auto c = table::CompareValues(*partition_type.fields()[i].type, a.partition[i], b.partition[i]);
    if (!c.ok() || *c == 0) continue;
    return *c < 0;
  }
  return false;
}

table::ManifestWriteOptions WriteOptions(const table::TableMetadata& m,
                                         const table::PartitionSpecPtr& spec,
                                         std::int64_t snapshot_id,
                                         std::optional<std::int64_t> sequence_number) {
  table::ManifestWriteOptions o;
  o.format_version = m.format_version;
  o.snapshot_id = snapshot_id;
  o.sequence_number = sequence_number;
  o.schema = m.current_schema();
  o.spec = spec;
  o.content = table::ManifestContent::kData;
  return o;
}

// The current snapshot's manifest list, split into data manifests (to rewrite) and the others
// (delete manifests, carried over).
struct CurrentManifests {
  const table::Snapshot* snapshot = nullptr;
  std::vector<table::ManifestFile> data;
  std::vector<table::ManifestFile> kept;
};

Result<CurrentManifests> ListCurrent(const io::FileIO& io, const table::TableMetadata& m) {
  CurrentManifests out;
  out.snapshot = m.current_snapshot();
  if (out.snapshot == nullptr) return out;
  if (out.snapshot->manifest_list.empty()) {
    return Status::InvalidArgument("snapshot " + std::to_string(out.snapshot->snapshot_id) +
                                   " has no manifest list (format v1 manifests field)");
  }
  auto list = table::ReadManifestList(io, out.snapshot->manifest_list);
  if (!list.ok()) {
    return Status::CorruptData("manifest list '" + out.snapshot->manifest_list +
                               "' cannot be read: " + list.status().ToString());
  }
  for (table::ManifestFile& mf : *list) {
    (mf.content == table::ManifestContent::kData ? out.data : out.kept).push_back(std::move(mf));
  }
  return out;
}

// Manifests are immutable: each is read once per run, whatever the number of attempts.
class ManifestReads {
 public:
  explicit ManifestReads(const io::FileIO& io) : io_(io) {}

  Result<std::vector<ManifestToRewrite>> Read(const std::vector<table::ManifestFile>& manifests,
                                              const std::stop_token& stop) {
    std::vector<ManifestToRewrite> out;
    out.reserve(manifests.size());
    for (const table::ManifestFile& mf : manifests) {
      if (stop.stop_requested()) return Status::Cancelled("stopped while reading manifests");
      auto it = cache_.find(mf.manifest_path);
      if (it == cache_.end()) {
        auto entries = table::ReadManifest(io_, mf);
        if (!entries.ok()) {
          return Status::CorruptData("manifest '" + mf.manifest_path + "' cannot be read: " +
                                     entries.status().ToString() + "; nothing changed");
        }
        it = cache_.emplace(mf.manifest_path, std::move(*entries)).first;
      }
      out.push_back({mf, it->second});
    }
    return out;
  }

 private:
  const io::FileIO& io_;
  std::map<std::string, std::vector<table::ManifestEntry>> cache_;
};

bool IsNoop(const ManifestRewritePlan& plan, std::string* reason) {
  if (plan.input_manifests == 0) {
    *reason = "the current snapshot has no data manifest";
    return true;
  }
  if (plan.input_manifests == 1 && plan.manifests.size() <= 1) {
    *reason = "the current snapshot's " + std::to_string(plan.live_entries) +
              " entries are in one manifest (" + std::to_string(plan.input_bytes) +
              " bytes), which is within the target of " + std::to_string(plan.target_bytes) +
              " bytes";
    return true;
  }
  return false;
}

// The commit: one `replace` snapshot whose data manifests are the rewritten ones. Every attempt
// plans again from its base's current snapshot (a concurrent append's manifest is rewritten
// with the rest); the manifests an attempt wrote are in Attempt::files, which the commit loop
// deletes when that attempt's swap fails.
//
// Thread-safety: none (one object per commit, as every Transaction).
class RewriteManifestsTransaction : public table::Transaction {
 public:
  RewriteManifestsTransaction(table::Catalog* catalog, const io::FileIO* io,
                              table::TableIdentifier id, const RewriteManifestsOptions& options,
                              ManifestReads* reads, std::stop_token stop)
      : Transaction(catalog, io, std::move(id), "rewrite manifests of"),
        options_(options),
        reads_(*reads),
        stop_(std::move(stop)) {}

  RewriteManifestsReport& report() { return report_; }

 protected:
  Status Prepare(const table::Table& base) override {
    commit_uuid_ = table::NewUuid();
    snapshot_id_ = table::NewSnapshotId(base.metadata);
    return Status::OK();
  }

  Result<Attempt> Apply(const table::Table& base, int attempt) override {
    Attempt out;
    Status st = ApplyTo(base, attempt, &out);
    if (!st.ok()) {
      // Nothing references what this attempt wrote before failing.
      for (const std::string& f : out.files) (void)io_->Delete(f);
      return st;
    }
    return out;
  }

  void Abandon() override {}

  Status CheckBeforeSwap(const table::Table&) override {
    if (stop_.stop_requested()) return Status::Cancelled("stopped before the commit");
    return Status::OK();
  }

 private:
  Status ApplyTo(const table::Table& base, int attempt, Attempt* attempt_out);

  RewriteManifestsOptions options_;
  ManifestReads& reads_;  // borrowed: the run's reads, shared with its first plan
  std::stop_token stop_;
  RewriteManifestsReport report_;
  std::string commit_uuid_;
  std::int64_t snapshot_id_ = 0;
  int next_manifest_index_ = 0;  // "<commit uuid>-m<N>.avro", unique across attempts
};

std::int64_t TargetBytes(const table::TableMetadata& m, const RewriteManifestsOptions& o) {
  return o.target_manifest_size_bytes.value_or(
      m.PropertyAsInt("commit.manifest.target-size-bytes", kDefaultManifestTargetSizeBytes));
}

Status RewriteManifestsTransaction::ApplyTo(const table::Table& base, int attempt,
                                            Attempt* attempt_out) {
  Attempt& out = *attempt_out;
  const table::TableMetadata& m = base.metadata;
  GEOLAKE_ASSIGN_OR_RETURN(CurrentManifests current, ListCurrent(*io_, m));
  if (current.snapshot == nullptr) {
    return Status::CommitConflict("the table has no current snapshot any more");
  }
  if (m.SnapshotById(snapshot_id_) != nullptr) snapshot_id_ = table::NewSnapshotId(m);
  const table::Snapshot& parent = *current.snapshot;
  const std::int64_t seq = m.last_sequence_number + 1;

  // Everything is read (and a damaged manifest refuses the run) before anything is written.
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<ManifestToRewrite> inputs, reads_.Read(current.data, stop_));
  GEOLAKE_ASSIGN_OR_RETURN(ManifestRewritePlan plan,
                           PlanManifestRewrite(m, inputs, TargetBytes(m, options_)));

  std::vector<table::ManifestFile> manifests;
  std::int64_t new_files = 0, new_rows = 0, output_bytes = 0;
  for (PlannedManifest& pm : plan.manifests) {
    const table::PartitionSpecPtr spec = m.SpecById(pm.spec_id);
    const std::string path =
        MetadataDir(m) + table::ManifestFileName(commit_uuid_, next_manifest_index_++);
    GEOLAKE_ASSIGN_OR_RETURN(
        table::EncodedManifest encoded,
        table::EncodeManifest(WriteOptions(m, spec, snapshot_id_, seq), pm.entries, path));
    GEOLAKE_RETURN_NOT_OK(io_->WriteAll(path, encoded.bytes, /*overwrite=*/false));
    out.files.push_back(path);
    pm.path = path;
    pm.bytes = encoded.entry.manifest_length;
    output_bytes += pm.bytes;
    new_files += encoded.entry.added_files_count + encoded.entry.existing_files_count;
    new_rows += encoded.entry.added_rows_count + encoded.entry.existing_rows_count;
    if (encoded.entry.added_files_count != 0 || encoded.entry.deleted_files_count != 0) {
      return Status::Internal("rewritten manifest '" + path + "' has added or deleted entries");
    }
    manifests.push_back(std::move(encoded.entry));
  }
  CallHook(table::CommitPhase::kManifestWritten, attempt);

  // Java's validateFilesCounts: the new manifests hold exactly the replaced ones' live files
  // (and, here, rows), counted from the manifest list entries of both sides.
  std::int64_t old_files = 0, old_rows = 0;
  for (const table::ManifestFile& mf : current.data) {
    old_files += mf.added_files_count + mf.existing_files_count;
    old_rows += mf.added_rows_count + mf.existing_rows_count;
  }
  if (old_files != new_files || old_rows != new_rows) {
    return Status::CorruptData("replaced and created manifests must hold the same live files: " +
                               std::to_string(new_files) + " files, " + std::to_string(new_rows) +
                               " rows (new) vs " + std::to_string(old_files) + " files, " +
                               std::to_string(old_rows) +
                               " rows (the current manifest list's counts)");
  }

  manifests.insert(manifests.end(), current.kept.begin(), current.kept.end());
  std::optional<std::int64_t> first_row_id;
  if (m.format_version >= 3) first_row_id = m.next_row_id.value_or(0);
  const std::string list_path =
      MetadataDir(m) + table::ManifestListFileName(snapshot_id_, attempt, commit_uuid_);
  GEOLAKE_ASSIGN_OR_RETURN(
      std::string list_bytes,
      table::EncodeManifestList(m.format_version, snapshot_id_, parent.snapshot_id, seq,
                                first_row_id, manifests));
  GEOLAKE_RETURN_NOT_OK(io_->WriteAll(list_path, list_bytes, /*overwrite=*/false));
  out.files.push_back(list_path);
  CallHook(table::CommitPhase::kManifestListWritten, attempt);

  table::Snapshot snap;
  snap.snapshot_id = snapshot_id_;
  snap.parent_snapshot_id = parent.snapshot_id;
  snap.sequence_number = seq;
  snap.timestamp_ms = std::max(table::NowMillis(), m.last_updated_ms);
  snap.manifest_list = list_path;
  snap.schema_id = m.current_schema_id;
  if (first_row_id) {
    snap.first_row_id = first_row_id;
    snap.added_rows = 0;  // no row is added: every entry keeps its first_row_id
  }
  // Java's BaseRewriteManifests summary keys; the table totals are unchanged, so the parent's
  // carry over (a total the parent lacks stays unknown, Java's rule).
  auto& s = snap.summary;
  s["operation"] = "replace";
  s["manifests-created"] = std::to_string(plan.manifests.size());
  s["manifests-kept"] = std::to_string(current.kept.size());
  s["manifests-replaced"] = std::to_string(current.data.size());
  s["entries-processed"] = std::to_string(plan.live_entries);
  s["changed-partition-count"] = "0";
  for (const auto& [key, value] : parent.summary) {
    if (key.rfind("total-", 0) == 0) s[key] = value;
  }

  table::TableMetadataBuilder builder(m, base.metadata_location);
  GEOLAKE_RETURN_NOT_OK(builder.AddSnapshot(snap));
  GEOLAKE_RETURN_NOT_OK(builder.SetBranchSnapshot(snapshot_id_));
  GEOLAKE_ASSIGN_OR_RETURN(out.next, builder.Build(snap.timestamp_ms));
  out.snapshot_id = snapshot_id_;
  out.sequence_number = seq;

  report_.plan = std::move(plan);
  report_.manifests_kept = static_cast<std::int64_t>(current.kept.size());
  report_.output_bytes = output_bytes;
  return Status::OK();
}

}  // namespace

Result<ManifestRewritePlan> PlanManifestRewrite(const table::TableMetadata& metadata,
                                                const std::vector<ManifestToRewrite>& inputs,
                                                std::int64_t target_bytes) {
  if (target_bytes <= 0) {
    return Status::InvalidArgument("target manifest size " + std::to_string(target_bytes) +
                                   ": must be positive");
  }
  ManifestRewritePlan plan;
  plan.target_bytes = target_bytes;
  plan.input_manifests = static_cast<std::int64_t>(inputs.size());
  const table::SchemaPtr schema = metadata.current_schema();
  if (schema == nullptr) return Status::CorruptData("the table has no current schema");

  // Live entries per spec id, in manifest-list then entry order.
  std::map<std::int32_t, std::vector<table::ManifestEntry>> by_spec;
  for (const ManifestToRewrite& in : inputs) {
    plan.input_bytes += in.manifest.manifest_length;
    if (metadata.SpecById(in.manifest.partition_spec_id) == nullptr) {
      return Status::CorruptData("manifest '" + in.manifest.manifest_path +
                                 "': unknown partition spec " +
                                 std::to_string(in.manifest.partition_spec_id));
    }
    auto& bucket = by_spec[in.manifest.partition_spec_id];
    for (const table::ManifestEntry& e : in.entries) {
      if (e.status == table::ManifestEntryStatus::kDeleted) {
        ++plan.deleted_entries;
        continue;
      }
      if (!e.snapshot_id || !e.sequence_number || !e.file_sequence_number) {
        return Status::CorruptData("manifest '" + in.manifest.manifest_path + "': entry '" +
                                   e.data_file.file_path +
                                   "' has no snapshot id or sequence numbers");
      }
      table::ManifestEntry existing = e;
      existing.status = table::ManifestEntryStatus::kExisting;
      bucket.push_back(std::move(existing));
      ++plan.live_entries;
    }
  }

  for (auto& [spec_id, entries] : by_spec) {
    if (entries.empty()) continue;
    const table::PartitionSpecPtr spec = metadata.SpecById(spec_id);
    GEOLAKE_ASSIGN_OR_RETURN(table::TypePtr partition_type, spec->PartitionType(*schema));
    std::stable_sort(entries.begin(), entries.end(),
                     [&](const table::ManifestEntry& a, const table::ManifestEntry& b) {
                       return PartitionLess(*partition_type, a.data_file, b.data_file);
                     });
    // Sizes are measured by encoding (deflate makes any per-entry guess rough): these entries
    // as one manifest, and a manifest without entries, whose header (the table schema and the
    // spec as JSON, several KiB) every manifest repeats. A manifest of k entries then takes
    // about header + k * per_entry; n = ceil(count / k_max) manifests of equal entry counts
    // each stay within the target, as Java's rolling writer keeps each file's length.
    const table::ManifestWriteOptions wo = WriteOptions(metadata, spec, 0, std::nullopt);
    GEOLAKE_ASSIGN_OR_RETURN(table::EncodedManifest whole,
                             table::EncodeManifest(wo, entries, "planned"));
    GEOLAKE_ASSIGN_OR_RETURN(table::EncodedManifest empty,
                             table::EncodeManifest(wo, {}, "planned"));
    const std::int64_t bytes = whole.entry.manifest_length;
    const std::int64_t header = std::min(empty.entry.manifest_length, bytes);
    const auto count = static_cast<std::int64_t>(entries.size());
    const double per_entry =
        std::max(1.0, static_cast<double>(bytes - header) / static_cast<double>(count));
    std::int64_t n = 1;
    if (bytes > target_bytes) {
      const auto fit =
          static_cast<std::int64_t>(static_cast<double>(target_bytes - header) / per_entry);
      const std::int64_t per_manifest = std::max<std::int64_t>(1, fit);
      n = std::min(count, (count + per_manifest - 1) / per_manifest);
    }
    // The estimate is a few percent low for small manifests (deflate has less to share), so
    // the cut is checked by encoding each manifest: while one exceeds the target (and holds
    // more than one entry) the count grows by that excess, at least by one.
    std::vector<std::int64_t> sizes;
    for (;;) {
      sizes.assign(static_cast<std::size_t>(n), 0);
      std::int64_t largest = 0;
      if (n == 1) {
        sizes[0] = largest = bytes;
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          const std::vector<table::ManifestEntry> part(entries.begin() + count * i / n,
                                                       entries.begin() + count * (i + 1) / n);
          GEOLAKE_ASSIGN_OR_RETURN(table::EncodedManifest encoded,
                                   table::EncodeManifest(wo, part, "planned"));
          sizes[static_cast<std::size_t>(i)] = encoded.entry.manifest_length;
          largest = std::max(largest, encoded.entry.manifest_length);
        }
      }
      if (largest <= target_bytes || n >= count) break;
      const auto grown =
          static_cast<std::int64_t>(static_cast<double>(n) * static_cast<double>(largest) /
                                    static_cast<double>(target_bytes));
      n = std::min(count, std::max(n + 1, grown));
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t begin = count * i / n;
      const std::int64_t end = count * (i + 1) / n;
      PlannedManifest pm;
      pm.spec_id = spec_id;
      pm.entries.assign(std::make_move_iterator(entries.begin() + begin),
                        std::make_move_iterator(entries.begin() + end));
      for (const table::ManifestEntry& e : pm.entries) pm.rows += e.data_file.record_count;
      pm.first_partition = PartitionText(*partition_type, pm.entries.front().data_file);
      pm.last_partition = PartitionText(*partition_type, pm.entries.back().data_file);
      pm.bytes = sizes[static_cast<std::size_t>(i)];
      plan.manifests.push_back(std::move(pm));
    }
  }
  return plan;
}

Result<RewriteManifestsReport> RewriteManifests(table::Catalog& catalog, const io::FileIO& io,
                                                const table::TableIdentifier& id,
                                                const RewriteManifestsOptions& options,
                                                std::stop_token stop) {
  const std::string what = "rewrite manifests of '" + id.ToString() + "'";
  if (options.target_manifest_size_bytes && *options.target_manifest_size_bytes <= 0) {
    return Status::InvalidArgument(what + ": target manifest size " +
                                   std::to_string(*options.target_manifest_size_bytes) +
                                   " must be positive");
  }
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(catalog, io, id));
  RewriteManifestsReport report;
  report.dry_run = options.dry_run;

  // Plan against the table as it is now: the no-op test, the dry run, and a damaged manifest
  // refused before any transaction starts.
  GEOLAKE_ASSIGN_OR_RETURN(CurrentManifests current, ListCurrent(io, t.metadata).WithContext(what));
  if (current.snapshot == nullptr) {
    report.noop = true;
    report.noop_reason = "the table has no snapshot";
    return report;
  }
  ManifestReads reads(io);
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<ManifestToRewrite> inputs,
                           reads.Read(current.data, stop).WithContext(what));
  GEOLAKE_ASSIGN_OR_RETURN(
      report.plan,
      PlanManifestRewrite(t.metadata, inputs, TargetBytes(t.metadata, options)).WithContext(what));
  report.manifests_kept = static_cast<std::int64_t>(current.kept.size());
  for (const PlannedManifest& pm : report.plan.manifests) report.output_bytes += pm.bytes;
  if (IsNoop(report.plan, &report.noop_reason)) {
    report.noop = true;
    return report;
  }
  if (options.dry_run) return report;

  RewriteManifestsTransaction tx(&catalog, &io, id, options, &reads, stop);
  if (options.commit_hook) tx.SetCommitHook(options.commit_hook);
  GEOLAKE_ASSIGN_OR_RETURN(table::CommitResult committed, tx.Commit());
  RewriteManifestsReport& r = tx.report();
  r.dry_run = false;
  r.snapshot_id = committed.snapshot_id;
  r.metadata_location = committed.metadata_location;
  r.commit_attempts = committed.attempts;
  return std::move(r);
}

}  // namespace geolake::maintenance
