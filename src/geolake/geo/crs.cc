#include "geolake/geo/crs.h"

#include <charconv>
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

Result<Crs> Crs::Make(std::string_view definition) {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<GeoContext> ctx, GeoContext::Make());
  return Make(*ctx, definition);
}

}  // namespace geolake::geo
