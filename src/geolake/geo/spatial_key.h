/// \file
/// Spatial keys for partitioning and sorting: Morton (Z-order) interleaving and Web Mercator
/// tiles with their Bing Maps quadkeys. A quadkey at a fixed zoom is geolake's default
/// partition value (`geo_cell`); TileBounds gives the lon/lat box the query planner prunes
/// partitions with. Hilbert keys live in hilbert.h, S2 cells in s2_cell.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"

namespace geolake::geo {

/// \brief Interleave the bits of x and y: bit i of x goes to bit 2i, bit i of y to bit 2i+1.
/// So (1, 0) -> 1, (0, 1) -> 2, (3, 5) -> 39.
uint64_t MortonEncode(uint32_t x, uint32_t y);

/// \brief The inverse of MortonEncode.
std::pair<uint32_t, uint32_t> MortonDecode(uint64_t code);

/// \brief The latitude limit of Web Mercator tiles (the square map), in degrees.
inline constexpr double kMaxMercatorLatitude = 85.05112878;

/// \brief The deepest zoom whose quadkey fits int64 (two bits per level).
inline constexpr int kMaxTileZoom = 31;

/// \brief A Web Mercator (XYZ / Bing) tile: x grows east from lon -180, y grows south from
/// lat +85.05; both are below 2^zoom.
struct Tile {
  uint32_t x = 0;
  uint32_t y = 0;
  int zoom = 0;

  bool operator==(const Tile& other) const = default;
};

/// \brief The tile at `zoom` that holds lon/lat (x, y) in degrees. Latitude is clamped to
/// +-kMaxMercatorLatitude and longitude to [-180, 180]; lon 180 falls in the last column.
///
/// Errors: kInvalidArgument for a non-finite coordinate or zoom outside [0, 31].
Result<Tile> TileForLonLat(double lon, double lat, int zoom);

/// \brief The Bing Maps quadkey: one digit per zoom level, digit = x bit + 2 * y bit, most
/// significant level first; tile (3, 5) at zoom 3 is "213". Zoom 0 gives "".
///
/// Errors: kInvalidArgument for an invalid tile (x or y >= 2^zoom, zoom outside [0, 31]).
Result<std::string> Quadkey(const Tile& tile);

/// \brief The quadkey read as a base-4 number ("213" -> 39), equal to MortonEncode(x, y). It is
/// only meaningful together with the zoom: "03" and "3" both read as 3.
///
/// Errors: as Quadkey().
Result<int64_t> QuadkeyInt(const Tile& tile);

/// \brief The tile named by a quadkey string. Errors: kInvalidArgument for a digit outside
/// 0-3 or more than 31 digits.
Result<Tile> TileFromQuadkey(std::string_view quadkey);

/// \brief The tile named by QuadkeyInt's number at `zoom`. Errors: kInvalidArgument for a
/// negative value, a value with bits at or above 2 * zoom, or zoom outside [0, 31].
Result<Tile> TileFromQuadkeyInt(int64_t value, int zoom);

/// \brief The tile's lon/lat box in degrees (x = lon, y = lat): west/east from the column,
/// south/north through the inverse Mercator. Errors: as Quadkey().
Result<Envelope> TileBounds(const Tile& tile);

}  // namespace geolake::geo
