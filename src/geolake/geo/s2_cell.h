/// \file
/// S2 cells as partition keys: the cell id at a level for a lon/lat point, its token (the
/// short hex name S2 tools print), and its lon/lat bounding box for partition pruning. libs2
/// stays behind this header; cell ids travel as uint64 (and as int64 with the same bits in
/// Iceberg columns).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"

namespace geolake::geo {

/// \brief The deepest S2 level (leaf cells, about 1 cm).
inline constexpr int kMaxS2Level = 30;

/// \brief The id of the level-`level` S2 cell holding lon/lat (x, y) in degrees.
///
/// Errors: kInvalidArgument for a non-finite coordinate, |lat| > 90, or a level outside
/// [0, 30]. Longitudes wrap, so 190 is -170.
Result<uint64_t> S2CellIdForLonLat(double lon, double lat, int level);

/// \brief The level of a valid cell id. Errors: kInvalidArgument for an invalid id.
Result<int> S2CellLevel(uint64_t cell_id);

/// \brief The cell's token: its id in hex without trailing zeros ("1000010000000000" is
/// "100001"). Errors: kInvalidArgument for an invalid id.
Result<std::string> S2CellToken(uint64_t cell_id);

/// \brief The cell id named by a token. Errors: kInvalidArgument for a malformed token or one
/// that names no valid cell.
Result<uint64_t> S2CellIdFromToken(std::string_view token);

/// \brief A lon/lat box (x = lon, y = lat, degrees) that contains the cell; S2 makes it
/// slightly larger than the cell to be conservative. A cell that crosses the antimeridian
/// gets the full longitude range, because Envelope cannot wrap.
///
/// Errors: kInvalidArgument for an invalid id.
Result<Envelope> S2CellBounds(uint64_t cell_id);

/// \brief The same 64 bits as a signed integer, as Iceberg's long column stores them (ids of
/// faces 4 and 5 come out negative; order within a face is preserved).
inline int64_t S2CellIdToInt64(uint64_t cell_id) { return static_cast<int64_t>(cell_id); }

}  // namespace geolake::geo
