/// \file
/// Crs: a coordinate reference system as an immutable value. It is made once from a definition
/// ("EPSG:4326", "OGC:CRS84", PROJJSON or WKT), validated by PROJ, and keeps only text and
/// facts (PROJJSON, name, identifier, geographic or not), so it can be copied, stored in table
/// metadata and shared between threads without any PROJ handle. Transformer (proj.h) rebuilds
/// the PROJ objects it needs inside a GeoContext.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "geolake/core/result.h"
#include "geolake/geo/geo_context.h"

namespace geolake::geo {

/// \brief A validated CRS definition and what PROJ says about it.
///
/// Thread-safety: an immutable value; const methods are safe to call concurrently.
class Crs {
 public:
  /// \brief Parse and validate `definition` with the PROJ context of `ctx`.
  ///
  /// Accepts anything proj_create accepts that describes a CRS: "EPSG:4326", "OGC:CRS84",
  /// PROJJSON text, WKT1/WKT2, or a PROJ string with +type=crs. Errors: kInvalidArgument for an
  /// empty or unknown definition (carrying PROJ's message) or one that is not a CRS (for
  /// example a bare conversion such as "+proj=merc").
  static Result<Crs> Make(GeoContext& ctx, std::string_view definition);

  /// \brief As above, with a short-lived PROJ context of its own (costs about a millisecond;
  /// prefer the overload above on hot paths).
  static Result<Crs> Make(std::string_view definition);

  /// \brief The text given to Make().
  const std::string& definition() const { return definition_; }

  /// \brief The CRS as single-line PROJJSON (as GeoParquet's "crs" field wants).
  const std::string& projjson() const { return projjson_; }

  /// \brief PROJ's name for it, e.g. "WGS 84 / UTM zone 33N".
  const std::string& name() const { return name_; }

  /// \brief True for a geographic (lon/lat) CRS, looking through bound and compound CRSs to
  /// the horizontal part.
  bool is_geographic() const { return is_geographic_; }

  /// \brief "AUTHORITY:CODE" ("EPSG:32633", "OGC:CRS84") when the definition carries an
  /// identifier or PROJ identifies it with 100% confidence in the EPSG registry.
  const std::optional<std::string>& id() const { return id_; }

  /// \brief The EPSG code when id() is an EPSG identifier.
  std::optional<int32_t> epsg() const { return epsg_; }

  /// \brief The PROJJSON that GDAL's OSRExportToPROJJSON writes for an SRS imported from
  /// EPSG:`code` (multi-line, PROJ's default options; code 0: GDAL's fixed "Undefined
  /// geographic SRS"), made with the PROJ context of `ctx`. A GeoPackage's description must
  /// carry GDAL's text byte for byte, which projjson() (single-line) is not.
  /// Errors: kNotFound when PROJ does not know the code; kInvalidArgument for a deprecated code
  /// (GDAL substitutes its successor, so its text is not this code's); kInternal when PROJ
  /// cannot export it. Each message names the code.
  static Result<std::string> GdalProjjsonOfEpsg(GeoContext& ctx, int code);

  /// \brief Same PROJJSON text. (Transformer uses PROJ's own equivalence test instead.)
  bool operator==(const Crs& other) const { return projjson_ == other.projjson_; }

 private:
  Crs() = default;

  std::string definition_;
  std::string projjson_;
  std::string name_;
  bool is_geographic_ = false;
  std::optional<std::string> id_;
  std::optional<int32_t> epsg_;
};

/// \brief Crs::GdalProjjsonOfEpsg with its answers (and refusals) remembered, on one PROJ
/// context it owns. Creating a PROJ context opens proj.db and parses its schema again:
/// describing 300 GeoPackages took 1.0-1.3 CPU-s with a context per export and 0.48 s with one
/// context and this cache. The owner decides its lifetime (discovery keeps one per run).
///
/// Thread-safety: Get is safe to call concurrently; calls are serialized on the one context.
class GdalProjjsonCache {
 public:
  /// \brief Errors: those of GeoContext::Make.
  static Result<std::unique_ptr<GdalProjjsonCache>> Make();

  /// \brief As Crs::GdalProjjsonOfEpsg(code); the first answer for a code is kept.
  Result<std::string> Get(int code);

 private:
  explicit GdalProjjsonCache(std::unique_ptr<GeoContext> ctx) : ctx_(std::move(ctx)) {}

  std::mutex mutex_;  // guards ctx_ (one thread at a time) and answers_
  std::unique_ptr<GeoContext> ctx_;
  std::map<int, Result<std::string>> answers_;
};

}  // namespace geolake::geo
