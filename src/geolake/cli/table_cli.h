/// \file
/// What the table commands (create, describe, snapshots, files, append) share in their output:
/// times, partition values and JSON. Internal to cli/.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "geolake/geolake.h"

namespace geolake::cli {

/// \brief "2026-11-29T21:40:28.123Z" (ISO 8601, UTC, milliseconds).
std::string IsoTimeUtc(std::int64_t epoch_ms);

/// \brief A partition tuple as a JSON object {"geo_cell": "0231"} (null values as null, values
/// of unknown type as "?").
nlohmann::ordered_json PartitionJson(const std::vector<PartitionValue>& partition);

/// \brief Print `j` with two-space indentation and a newline on stdout.
void PrintJson(const nlohmann::ordered_json& j);

}  // namespace geolake::cli
