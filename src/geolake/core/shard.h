/// \file
/// Shards of a job that N processes share (`--shard I/N`): each process takes only the work
/// whose key's stable hash falls in its shard, so an array job (Slurm, a Kubernetes indexed
/// Job) of N processes on N machines covers every piece of work exactly once with no
/// coordination beyond the table's commits. The key names one piece of work the same way in
/// every process (ingest: a source's fingerprint and unit index; ops: an input unit's key),
/// and the hash is FNV-1a 64, fixed here so that it never changes between builds or machines
/// (std::hash is not specified to).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/core/result.h"

namespace geolake {

/// \brief FNV-1a, 64 bits, of `text`: a stable hash for work keys and ids.
std::uint64_t StableHash64(std::string_view text);

/// \brief One shard of N: a plain value, 0 <= index < count. The default is the whole job.
struct Shard {
  int index = 0;
  int count = 1;

  /// \brief True when this is the whole job (1 shard).
  bool whole() const { return count <= 1; }
  /// \brief True when the work named `key` belongs to this shard (always for the whole job).
  bool Owns(std::string_view key) const;
  /// \brief "I/N".
  std::string ToString() const;
  bool operator==(const Shard&) const = default;
};

/// \brief The shard of `count` that the work named `key` belongs to: StableHash64(key) mod
/// count (0 when count <= 1).
int ShardOfKey(std::string_view key, int count);

/// \brief Parse `--shard` text "I/N" (decimal, 0 <= I < N). Errors: kInvalidArgument naming
/// the text: not I/N, N < 1, I < 0, or I >= N (saying which shards there are).
Result<Shard> ParseShard(std::string_view text);

}  // namespace geolake
