/// \file
/// Time travel: which snapshot of a table a read sees — a snapshot id, the latest snapshot at or
/// before a time, or the current one — and the time forms a user may give.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/table/table_metadata.h"

namespace geolake::table {

/// \brief The snapshot a read sees: `snapshot_id` if given (kNotFound if unknown), else the
/// latest snapshot-log entry at or before `as_of_ms` (kNotFound if none), else the current one
/// (nullopt for a table without snapshots).
Result<std::optional<std::int64_t>> ResolveSnapshot(const TableMetadata& metadata,
                                                    std::optional<std::int64_t> snapshot_id,
                                                    std::optional<std::int64_t> as_of_ms);

/// \brief Parse ISO 8601 ("2026-01-02", "2026-01-02T03:04:05[.sss][Z|±hh:mm]") or epoch
/// milliseconds into ms since the epoch. kInvalidArgument otherwise.
Result<std::int64_t> ParseTimestampMillis(std::string_view text);

}  // namespace geolake::table
