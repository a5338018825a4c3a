#include "geolake/geo/crs.h"

#include <charconv>
#include <mutex>
#include <string>
#include <utility>

#include "geolake/geo/geo_context_internal.h"

namespace geolake::geo {
namespace {

using internal::GeoContextImpl;
using internal::ProjPtr;

std::string Quoted(std::string_view definition) {
  // Definitions can be pages of WKT or PROJJSON; name them by their start only.
  constexpr size_t kMaxShown = 40;
  std::string shown(definition.substr(0, kMaxShown));
  if (definition.size() > kMaxShown) shown += "...";
  return "crs '" + shown + "'";
}

// The horizontal CRS that decides "geographic or not": a bound CRS is looked through to its
// source, a compound CRS to its first (horizontal) component.
Result<bool> IsGeographic(PJ_CONTEXT* ctx, const PJ* crs) {
  switch (proj_get_type(crs)) {
    case PJ_TYPE_GEOGRAPHIC_2D_CRS:
    case PJ_TYPE_GEOGRAPHIC_3D_CRS:
      return true;
    case PJ_TYPE_BOUND_CRS: {
      ProjPtr source(proj_get_source_crs(ctx, crs));
      if (source == nullptr) return Status::InvalidArgument("bound CRS without a source CRS");
      return IsGeographic(ctx, source.get());
    }
    case PJ_TYPE_COMPOUND_CRS: {
      ProjPtr horizontal(proj_crs_get_sub_crs(ctx, crs, 0));
      if (horizontal == nullptr) return Status::InvalidArgument("compound CRS without parts");
      return IsGeographic(ctx, horizontal.get());
    }
    default:
      return false;
  }
}

// "AUTH:CODE" from the object's own first identifier, else from an EPSG match that PROJ
// rates at 100% confidence; nullopt when neither exists.
std::optional<std::string> FindId(PJ_CONTEXT* ctx, const PJ* crs) {
  const char* auth = proj_get_id_auth_name(crs, 0);
  const char* code = proj_get_id_code(crs, 0);
  if (auth != nullptr && code != nullptr) return std::string(auth) + ":" + code;
  // proj_identify is quick for plain geographic and projected CRSs (a few ms) but took 38 s
  // for a compound or bound CRS in testing, scanning the whole registry; those stay
  // unidentified.
  const PJ_TYPE type = proj_get_type(crs);
  if (type != PJ_TYPE_GEOGRAPHIC_2D_CRS && type != PJ_TYPE_GEOGRAPHIC_3D_CRS &&
      type != PJ_TYPE_PROJECTED_CRS) {
    return std::nullopt;
  }

  int* confidence = nullptr;
  PJ_OBJ_LIST* matches = proj_identify(ctx, crs, "EPSG", nullptr, &confidence);
  std::optional<std::string> id;
  if (matches != nullptr) {
    const int count = proj_list_get_count(matches);
    for (int i = 0; i < count && !id.has_value(); ++i) {
      if (confidence[i] < 100) continue;
      ProjPtr match(proj_list_get(ctx, matches, i));
      if (match == nullptr) continue;
      const char* match_auth = proj_get_id_auth_name(match.get(), 0);
      const char* match_code = proj_get_id_code(match.get(), 0);
      if (match_auth != nullptr && match_code != nullptr) {
        id = std::string(match_auth) + ":" + match_code;
      }
    }
    proj_list_destroy(matches);
  }
  proj_int_list_destroy(confidence);
  return id;
}

}  // namespace

Result<Crs> Crs::Make(GeoContext& ctx, std::string_view definition) {
  GeoContextImpl& impl = ctx.impl();
  if (definition.empty()) return Status::InvalidArgument("crs: empty definition");
  internal::ResetProjError(impl);
  const std::string text(definition);  // PROJ wants a NUL-terminated string
  ProjPtr pj(proj_create(impl.proj, text.c_str()));
  if (pj == nullptr) {
    return Status::InvalidArgument(Quoted(definition) + ": " + internal::ProjErrorText(impl));
  }
  if (proj_is_crs(pj.get()) == 0) {
    return Status::InvalidArgument(Quoted(definition) + ": not a coordinate reference system");
  }

  Crs crs;
  crs.definition_ = text;
  const char* const projjson_options[] = {"MULTILINE=NO", nullptr};
  const char* projjson = proj_as_projjson(impl.proj, pj.get(), projjson_options);
  if (projjson == nullptr) {
    return Status::InvalidArgument(
        Quoted(definition) + ": cannot express as PROJJSON: " + internal::ProjErrorText(impl));
  }
  crs.projjson_ = projjson;
  const char* name = proj_get_name(pj.get());
  crs.name_ = name != nullptr ? name : "";
  GEOLAKE_ASSIGN_OR_RETURN(crs.is_geographic_,
                           IsGeographic(impl.proj, pj.get()).WithContext(Quoted(definition)));
  crs.id_ = FindId(impl.proj, pj.get());
  if (crs.id_.has_value() && crs.id_->starts_with("EPSG:")) {
    const std::string_view code = std::string_view(*crs.id_).substr(5);
    int32_t value = 0;
    auto [end, ec] = std::from_chars(code.data(), code.data() + code.size(), value);
    if (ec == std::errc() && end == code.data() + code.size()) crs.epsg_ = value;
  }
  return crs;
}

namespace {

// What GDAL makes of srs_id 0 whatever gpkg_spatial_ref_sys says ("Undefined geographic
// SRS": WGS 84's ellipsoid, an unknown datum, latitude first), written as WKT2 for PROJ.
constexpr const char* kUndefinedGeographicWkt2 =
    "GEOGCRS[\"Undefined geographic SRS\",DATUM[\"unknown\",ELLIPSOID[\"unknown\",6378137,"
    "298.257223563,LENGTHUNIT[\"metre\",1]]],PRIMEM[\"Greenwich\",0,ANGLEUNIT[\"degree\","
    "0.0174532925199433]],CS[ellipsoidal,2],AXIS[\"latitude\",north,ORDER[1],ANGLEUNIT["
    "\"degree\",0.0174532925199433]],AXIS[\"longitude\",east,ORDER[2],ANGLEUNIT[\"degree\","
    "0.0174532925199433]]]";

}  // namespace

Result<std::string> Crs::GdalProjjsonOfEpsg(GeoContext& ctx, int code) {
  GeoContextImpl& impl = ctx.impl();
  internal::ResetProjError(impl);
  const std::string name = "EPSG:" + std::to_string(code);
  ProjPtr crs(code == 0 ? proj_create(impl.proj, kUndefinedGeographicWkt2)
                        : proj_create_from_database(impl.proj, "EPSG", std::to_string(code).c_str(),
                                                    PJ_CATEGORY_CRS,
                                                    /*usePROJAlternativeGridNames=*/1, nullptr));
  if (crs == nullptr) return Status::NotFound("PROJ does not know " + name);
  if (proj_is_deprecated(crs.get()) != 0) {
    return Status::InvalidArgument(name + " is deprecated (GDAL uses its successor)");
  }
  const char* json = proj_as_projjson(impl.proj, crs.get(), nullptr);
  if (json == nullptr) return Status::Internal("PROJ cannot export " + name + " as PROJJSON");
  return std::string(json);
}

Result<std::unique_ptr<GdalProjjsonCache>> GdalProjjsonCache::Make() {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<GeoContext> ctx, GeoContext::Make());
  return std::unique_ptr<GdalProjjsonCache>(new GdalProjjsonCache(std::move(ctx)));
}

Result<std::string> GdalProjjsonCache::Get(int code) {
  std::lock_guard lock(mutex_);
  auto it = answers_.find(code);
  if (it == answers_.end()) it = answers_.emplace(code, Crs::GdalProjjsonOfEpsg(*ctx_, code)).first;
  return it->second;
}

Result<Crs> Crs::Make(std::string_view definition) {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<GeoContext> ctx, GeoContext::Make());
  return Make(*ctx, definition);
}

}  // namespace geolake::geo
