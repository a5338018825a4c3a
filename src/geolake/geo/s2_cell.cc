#include "geolake/geo/s2_cell.h"

#include <s2/s2cell.h>
#include <s2/s2cell_id.h>
#include <s2/s2latlng.h>
#include <s2/s2latlng_rect.h>

#include <cmath>

namespace geolake::geo {
namespace {

Result<S2CellId> ValidCell(uint64_t cell_id, std::string_view what) {
  S2CellId id(cell_id);
  if (!id.is_valid()) {
    return Status::InvalidArgument(std::string(what) + ": " + std::to_string(cell_id) +
                                   " is not a valid S2 cell id");
  }
  return id;
}

}  // namespace

Result<uint64_t> S2CellIdForLonLat(double lon, double lat, int level) {
  if (level < 0 || level > kMaxS2Level) {
    return Status::InvalidArgument("s2 cell: level must be in [0, 30], got " +
                                   std::to_string(level));
  }
  if (!std::isfinite(lon) || !std::isfinite(lat) || std::abs(lat) > 90.0) {
    return Status::InvalidArgument("s2 cell: lon/lat (" + std::to_string(lon) + ", " +
                                   std::to_string(lat) + ") is not a point on the sphere");
  }
  // FromDegrees takes latitude first. Normalized() wraps the longitude into [-180, 180].
  const S2LatLng ll = S2LatLng::FromDegrees(lat, lon).Normalized();
  return S2CellId(ll).parent(level).id();
}

Result<int> S2CellLevel(uint64_t cell_id) {
  GEOLAKE_ASSIGN_OR_RETURN(S2CellId id, ValidCell(cell_id, "s2 cell level"));
  return id.level();
}

Result<std::string> S2CellToken(uint64_t cell_id) {
  GEOLAKE_ASSIGN_OR_RETURN(S2CellId id, ValidCell(cell_id, "s2 cell token"));
  return id.ToToken();
}

Result<uint64_t> S2CellIdFromToken(std::string_view token) {
  // FromToken returns S2CellId::None() (id 0, invalid) for malformed text.
  const S2CellId id = S2CellId::FromToken(std::string(token));
  if (!id.is_valid()) {
    return Status::InvalidArgument("s2 token '" + std::string(token) + "' names no valid cell");
  }
  return id.id();
}

Result<Envelope> S2CellBounds(uint64_t cell_id) {
  GEOLAKE_ASSIGN_OR_RETURN(S2CellId id, ValidCell(cell_id, "s2 cell bounds"));
  const S2LatLngRect rect = S2Cell(id).GetRectBound();
  Envelope box;
  box.ymin = rect.lat_lo().degrees();
  box.ymax = rect.lat_hi().degrees();
  if (rect.is_inverted() || rect.lng().is_full()) {
    box.xmin = -180.0;
    box.xmax = 180.0;
  } else {
    box.xmin = rect.lng_lo().degrees();
    box.xmax = rect.lng_hi().degrees();
  }
  return box;
}

}  // namespace geolake::geo
