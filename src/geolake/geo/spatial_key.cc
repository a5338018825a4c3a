#include "geolake/geo/spatial_key.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace geolake::geo {
namespace {

// Spread the 32 bits of v over the even bits of a uint64 (bit i -> bit 2i) with the classic
// shift-and-mask ladder: five steps instead of a 32-iteration loop.
uint64_t SpreadBits(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & 0x5555555555555555ull;
  return x;
}

uint32_t CompactBits(uint64_t x) {
  x &= 0x5555555555555555ull;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<uint32_t>(x);
}

Status CheckZoom(int zoom, std::string_view what) {
  if (zoom < 0 || zoom > kMaxTileZoom) {
    return Status::InvalidArgument(std::string(what) + ": zoom must be in [0, 31], got " +
                                   std::to_string(zoom));
  }
  return Status::OK();
}

Status CheckTile(const Tile& tile, std::string_view what) {
  GEOLAKE_RETURN_NOT_OK(CheckZoom(tile.zoom, what));
  const uint64_t side = uint64_t{1} << tile.zoom;
  if (tile.x >= side || tile.y >= side) {
    return Status::InvalidArgument(std::string(what) + ": tile (" + std::to_string(tile.x) + ", " +
                                   std::to_string(tile.y) + ") is outside zoom " +
                                   std::to_string(tile.zoom));
  }
  return Status::OK();
}

// The tile row (counted from the north) as a real number for a latitude in degrees.
double MercatorRow(double lat_deg, double side) {
  const double sin_lat = std::sin(lat_deg * std::numbers::pi / 180.0);
  return (0.5 - std::log((1 + sin_lat) / (1 - sin_lat)) / (4 * std::numbers::pi)) * side;
}

double RowToLatitude(double row, double side) {
  const double n = std::numbers::pi * (1 - 2 * row / side);
  return std::atan(std::sinh(n)) * 180.0 / std::numbers::pi;
}

uint32_t ClampToCell(double v, double side) {
  if (!(v > 0)) return 0;
  if (v >= side) return static_cast<uint32_t>(side - 1);
  return static_cast<uint32_t>(v);
}

}  // namespace

uint64_t MortonEncode(uint32_t x, uint32_t y) { return SpreadBits(x) | (SpreadBits(y) << 1); }

std::pair<uint32_t, uint32_t> MortonDecode(uint64_t code) {
  return {CompactBits(code), CompactBits(code >> 1)};
}

Result<Tile> TileForLonLat(double lon, double lat, int zoom) {
  GEOLAKE_RETURN_NOT_OK(CheckZoom(zoom, "tile for lon/lat"));
  if (!std::isfinite(lon) || !std::isfinite(lat)) {
    return Status::InvalidArgument("tile for lon/lat: coordinate is not finite");
  }
  lon = std::clamp(lon, -180.0, 180.0);
  lat = std::clamp(lat, -kMaxMercatorLatitude, kMaxMercatorLatitude);
  const double side = std::ldexp(1.0, zoom);
  Tile tile;
  tile.zoom = zoom;
  tile.x = ClampToCell((lon + 180.0) / 360.0 * side, side);
  tile.y = ClampToCell(MercatorRow(lat, side), side);
  return tile;
}

Result<std::string> Quadkey(const Tile& tile) {
  GEOLAKE_RETURN_NOT_OK(CheckTile(tile, "quadkey"));
  std::string key(static_cast<size_t>(tile.zoom), '0');
  for (int level = tile.zoom; level > 0; --level) {
    const uint32_t mask = uint32_t{1} << (level - 1);
    int digit = 0;
    if ((tile.x & mask) != 0) digit += 1;
    if ((tile.y & mask) != 0) digit += 2;
    key[static_cast<size_t>(tile.zoom - level)] = static_cast<char>('0' + digit);
  }
  return key;
}

Result<int64_t> QuadkeyInt(const Tile& tile) {
  GEOLAKE_RETURN_NOT_OK(CheckTile(tile, "quadkey int"));
  // Digit = x bit + 2 * y bit, two bits per level, most significant level first: exactly the
  // Morton interleave with x on the even bits. At zoom <= 31 it stays below 2^62.
  return static_cast<int64_t>(MortonEncode(tile.x, tile.y));
}

Result<Tile> TileFromQuadkey(std::string_view quadkey) {
  if (quadkey.size() > static_cast<size_t>(kMaxTileZoom)) {
    return Status::InvalidArgument("quadkey '" + std::string(quadkey) + "': more than 31 digits");
  }
  Tile tile;
  tile.zoom = static_cast<int>(quadkey.size());
  for (char c : quadkey) {
    if (c < '0' || c > '3') {
      return Status::InvalidArgument("quadkey '" + std::string(quadkey) + "': digits must be 0-3");
    }
    const int digit = c - '0';
    tile.x = (tile.x << 1) | static_cast<uint32_t>(digit & 1);
    tile.y = (tile.y << 1) | static_cast<uint32_t>(digit >> 1);
  }
  return tile;
}

Result<Tile> TileFromQuadkeyInt(int64_t value, int zoom) {
  GEOLAKE_RETURN_NOT_OK(CheckZoom(zoom, "quadkey int"));
  if (value < 0 || (static_cast<uint64_t>(value) >> (2 * zoom)) != 0) {
    return Status::InvalidArgument("quadkey int " + std::to_string(value) + " does not fit zoom " +
                                   std::to_string(zoom));
  }
  const auto [x, y] = MortonDecode(static_cast<uint64_t>(value));
  return Tile{x, y, zoom};
}

Result<Envelope> TileBounds(const Tile& tile) {
  GEOLAKE_RETURN_NOT_OK(CheckTile(tile, "tile bounds"));
  const double side = std::ldexp(1.0, tile.zoom);
  Envelope box;
  box.xmin = tile.x / side * 360.0 - 180.0;
  box.xmax = (tile.x + 1.0) / side * 360.0 - 180.0;
  box.ymax = RowToLatitude(tile.y, side);
  box.ymin = RowToLatitude(tile.y + 1.0, side);
  return box;
}

}  // namespace geolake::geo
