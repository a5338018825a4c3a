#include "geolake/core/shard.h"

#include <charconv>
#include <system_error>

namespace geolake {

std::uint64_t StableHash64(std::string_view text) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a offset basis
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;  // FNV prime
  }
  return h;
}

int ShardOfKey(std::string_view key, int count) {
  if (count <= 1) return 0;
  return static_cast<int>(StableHash64(key) % static_cast<std::uint64_t>(count));
}

bool Shard::Owns(std::string_view key) const { return whole() || ShardOfKey(key, count) == index; }

std::string Shard::ToString() const { return std::to_string(index) + "/" + std::to_string(count); }

Result<Shard> ParseShard(std::string_view text) {
  const std::string quoted = "--shard '" + std::string(text) + "'";
  const auto number = [](std::string_view part, int* out) {
    if (part.empty()) return false;
    const char* end = part.data() + part.size();
    const auto [ptr, ec] = std::from_chars(part.data(), end, *out);
    return ec == std::errc() && ptr == end;
  };
  const std::size_t slash = text.find('/');
  Shard shard;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), &shard.index) ||
      !number(text.substr(slash + 1), &shard.count)) {
    return Status::InvalidArgument(quoted + ": expected I/N, shard I of N (e.g. 0/3)");
  }
  if (shard.count < 1) {
    return Status::InvalidArgument(quoted + ": the shard count N must be at least 1");
  }
  if (shard.index < 0 || shard.index >= shard.count) {
    return Status::InvalidArgument(quoted + ": the shard index I must be in 0.." +
                                   std::to_string(shard.count - 1) + " for " +
                                   std::to_string(shard.count) + " shards");
  }
  return shard;
}

}  // namespace geolake
