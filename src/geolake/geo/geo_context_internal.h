/// \file
/// Private to geo/: the GEOS and PROJ handles inside a GeoContext, and GeosCall, the guard that
/// every wrapped GEOS call uses to clear the last message, publish the stop token to the
/// interrupt callback and turn a failure into a Status. Include only from geo/*.cc files: it
/// pulls in geos_c.h and proj.h.
#pragma once

#include <geos_c.h>
#include <proj.h>

#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/geo/geo_context.h"

namespace geolake::geo::internal {

struct GeoContextImpl {
  GEOSContextHandle_t geos = nullptr;
  PJ_CONTEXT* proj = nullptr;
  std::stop_token stop;
  // Made on first use and reused: WKB and WKT codecs are configured once per context.
  GEOSWKBReader* wkb_reader = nullptr;
  GEOSWKBWriter* wkb_writer = nullptr;
  GEOSWKTReader* wkt_reader = nullptr;
  GEOSWKTWriter* wkt_writer = nullptr;
  // Written only by the message handlers, which run on the thread using this context.
  std::string last_geos_message;
  std::string last_proj_message;
};

/// \brief Guard around one GEOS call (or a short sequence of them) on the current thread.
///
/// Construction clears the last GEOS message and publishes the context's stop token to the
/// process-wide interrupt callback through a thread_local slot; destruction restores the
/// previous slot, so guards nest. Thread-safety: lives on one thread's stack.
class GeosCall {
 public:
  explicit GeosCall(GeoContextImpl& ctx);
  ~GeosCall();
  GeosCall(const GeosCall&) = delete;
  GeosCall& operator=(const GeosCall&) = delete;

  /// \brief kCancelled when the token has already fired (check before entering GEOS).
  Status CheckNotCancelled(std::string_view op) const;

  /// \brief The Status for a GEOS call that returned its error value: kCancelled when the
  /// interrupt callback fired during it, otherwise kGeometryError "op: <GEOS message>".
  Status Failure(std::string_view op) const;

  GEOSContextHandle_t handle() const { return ctx_.geos; }

 private:
  GeoContextImpl& ctx_;
  const void* previous_slot_;
};

/// \brief Free a buffer that GEOS allocated (WKB, WKT, validity reason).
struct GeosBufferDeleter {
  GEOSContextHandle_t handle;
  void operator()(void* p) const { GEOSFree_r(handle, p); }
};

/// \brief Owns a PJ (any PROJ object); proj_destroy needs no context.
struct ProjDeleter {
  void operator()(PJ* pj) const { proj_destroy(pj); }
};
using ProjPtr = std::unique_ptr<PJ, ProjDeleter>;

/// \brief `g` as ISO little-endian WKB in `*out`, written from its coordinate sequences when it
/// is a 2D Point, LineString, Polygon or Multi* of them without an empty member: the bytes
/// GEOS's writer (Geometry::ToWkb's settings) gives. False for anything else (`*out`
/// unspecified): use GEOS's writer.
bool FastWkb(GEOSContextHandle_t h, const GEOSGeometry* g, std::string* out);

/// \brief The best description of PROJ's last failure on `impl`: the last log message, else
/// the context's errno text, else "unknown PROJ error".
std::string ProjErrorText(GeoContextImpl& impl);

/// \brief Forget the last PROJ log message before a new call.
void ResetProjError(GeoContextImpl& impl);

}  // namespace geolake::geo::internal
