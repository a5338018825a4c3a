/// \file
/// GeoContext: the per-thread home of the GEOS and PROJ state that every geometry operation in
/// geolake needs. Both libraries are used only through their reentrant APIs (GEOS `_r`
/// functions, PROJ with an explicit PJ_CONTEXT), so a context must never be used by two threads
/// at once; the engine gives each worker thread its own. The context also carries the stop
/// token that interrupts long GEOS calls (see "Cancellation" below).
///
/// Cancellation. GEOS 3.11 offers only a process-wide interrupt: one callback, registered with
/// GEOS_interruptRegisterCallback, that every thread calls from inside long loops, and one
/// process-wide request flag (GEOS_interruptRequest) that the first thread to check consumes.
/// That flag cannot target a thread, so geolake does not use it. Instead, the first GeoContext
/// registers a single callback once per process; each wrapped GEOS call publishes its context's
/// stop token in a thread_local slot for the duration of the call, and the callback, which runs
/// on the thread doing the work, throws a private exception when that token has fired. GEOS's
/// C API catches every exception at its boundary and returns its error value, exactly as it does
/// for its own InterruptedException thrown from the same place, and the wrapper turns that
/// failure into kCancelled. Threads whose token has not fired are never disturbed. GEOS code
/// running outside a wrapped call (for example inside GDAL) sees an empty slot and is unaffected.
/// A token that has already fired makes every wrapped call return kCancelled without entering
/// GEOS.
#pragma once

#include <memory>
#include <stop_token>
#include <string>

#include "geolake/core/result.h"

namespace geolake::geo {

namespace internal {
struct GeoContextImpl;
}  // namespace internal

/// \brief Per-thread GEOS and PROJ state: handles, last library messages, and a stop token.
///
/// Everything made from a context (Geometry, PreparedGeometry, Transformer) is bound to it and
/// must not outlive it. Thread-safety: none; use one context per thread. Move-only through the
/// unique_ptr returned by Make().
class GeoContext {
 public:
  /// \brief Create the GEOS and PROJ contexts. `stop` interrupts long GEOS calls made through
  /// this context (kCancelled); a default token never fires.
  ///
  /// Errors: kInternal when GEOS or PROJ cannot allocate a context.
  static Result<std::unique_ptr<GeoContext>> Make(std::stop_token stop = {});

  ~GeoContext();
  GeoContext(const GeoContext&) = delete;
  GeoContext& operator=(const GeoContext&) = delete;

  /// \brief Replace the stop token consulted by later GEOS calls.
  void set_stop_token(std::stop_token stop);
  const std::stop_token& stop_token() const;

  /// \brief The text of the last GEOS error or notice, or "" (kept for diagnostics; wrapped
  /// functions already copy it into the Status they return).
  const std::string& last_geos_message() const;

  /// \brief The text of the last PROJ log message, or "".
  const std::string& last_proj_message() const;

  /// \brief The private state, for the wrappers in geo/ only (defined in
  /// geo_context_internal.h).
  internal::GeoContextImpl& impl() { return *impl_; }

 private:
  explicit GeoContext(std::unique_ptr<internal::GeoContextImpl> impl);

  std::unique_ptr<internal::GeoContextImpl> impl_;
};

}  // namespace geolake::geo
