#include "geolake/geo/geo_context.h"

#include <exception>
#include <mutex>
#include <utility>

#include "geolake/geo/geo_context_internal.h"

namespace geolake::geo {
namespace internal {
namespace {

// The cancellation state of the GEOS call running on this thread. `token` points at the
// GeoContextImpl::stop of the innermost GeosCall, or is null outside wrapped calls.
struct ThreadCancelSlot {
  const std::stop_token* token = nullptr;
  bool interrupted = false;
};
thread_local ThreadCancelSlot t_cancel_slot;  // NOLINT: per-thread by design, see header

// Thrown from the GEOS interrupt callback on the cancelled thread only. It derives from
// std::exception but not from std::runtime_error: GEOS's robust overlay retries after catching
// std::runtime_error (its own exceptions), and a cancellation should not be retried. The GEOS C
// API catches std::exception at its boundary, so this never reaches geolake code.
class GeosCancelled final : public std::exception {
 public:
  const char* what() const noexcept override { return "operation cancelled by stop token"; }
};

// The callback GEOS had before ours (normally none); set once under std::call_once, read only
// by the callback afterwards. A global because GEOS 3.11's callback takes no user data.
GEOSInterruptCallback* g_previous_interrupt_callback = nullptr;  // NOLINT

void OnGeosInterruptCheck() {
  if (g_previous_interrupt_callback != nullptr) g_previous_interrupt_callback();
  const std::stop_token* token = t_cancel_slot.token;
  if (token != nullptr && token->stop_requested()) {
    t_cancel_slot.interrupted = true;
    throw GeosCancelled();
  }
}

void RegisterInterruptCallbackOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_previous_interrupt_callback = GEOS_interruptRegisterCallback(&OnGeosInterruptCheck);
  });
}

// GEOS calls these with a formatted message; they only store it and must not throw. An error
// always replaces the stored text; a notice (isValid explains itself through one) fills it only
// when empty, so it never hides the error that made a call fail.
void OnGeosError(const char* message, void* userdata) {
  auto* impl = static_cast<GeoContextImpl*>(userdata);
  impl->last_geos_message = message != nullptr ? message : "";
}

void OnGeosNotice(const char* message, void* userdata) {
  auto* impl = static_cast<GeoContextImpl*>(userdata);
  if (impl->last_geos_message.empty() && message != nullptr) impl->last_geos_message = message;
}

void OnProjLog(void* app_data, int /*level*/, const char* message) {
  auto* impl = static_cast<GeoContextImpl*>(app_data);
  impl->last_proj_message = message != nullptr ? message : "";
}

}  // namespace

GeosCall::GeosCall(GeoContextImpl& ctx) : ctx_(ctx), previous_slot_(t_cancel_slot.token) {
  ctx_.last_geos_message.clear();
  t_cancel_slot.token = &ctx_.stop;
  t_cancel_slot.interrupted = false;
}

GeosCall::~GeosCall() { t_cancel_slot.token = static_cast<const std::stop_token*>(previous_slot_); }

Status GeosCall::CheckNotCancelled(std::string_view op) const {
  if (ctx_.stop.stop_requested()) {
    return Status::Cancelled(std::string(op) + ": cancelled before start");
  }
  return Status::OK();
}

Status GeosCall::Failure(std::string_view op) const {
  if (t_cancel_slot.interrupted || ctx_.stop.stop_requested()) {
    return Status::Cancelled(std::string(op) + ": cancelled");
  }
  std::string message = ctx_.last_geos_message.empty() ? std::string("GEOS reported an error")
                                                       : ctx_.last_geos_message;
  return Status::GeometryError(std::string(op) + ": " + message);
}

std::string ProjErrorText(GeoContextImpl& impl) {
  if (!impl.last_proj_message.empty()) return impl.last_proj_message;
  const int err = proj_context_errno(impl.proj);
  if (err != 0) {
    const char* text = proj_context_errno_string(impl.proj, err);
    if (text != nullptr) return text;
  }
  return "unknown PROJ error";
}

void ResetProjError(GeoContextImpl& impl) {
  // PROJ's public API resets errno only through a PJ (proj_errno_reset); callers that hold one
  // reset it themselves. The log message is what ProjErrorText prefers anyway.
  impl.last_proj_message.clear();
}

}  // namespace internal

GeoContext::GeoContext(std::unique_ptr<internal::GeoContextImpl> impl) : impl_(std::move(impl)) {}

GeoContext::~GeoContext() {
  if (impl_ == nullptr) return;
  if (impl_->proj != nullptr) proj_context_destroy(impl_->proj);
  if (impl_->geos != nullptr) {
    GEOSContextHandle_t h = impl_->geos;
    if (impl_->wkb_reader != nullptr) GEOSWKBReader_destroy_r(h, impl_->wkb_reader);
    if (impl_->wkb_writer != nullptr) GEOSWKBWriter_destroy_r(h, impl_->wkb_writer);
    if (impl_->wkt_reader != nullptr) GEOSWKTReader_destroy_r(h, impl_->wkt_reader);
    if (impl_->wkt_writer != nullptr) GEOSWKTWriter_destroy_r(h, impl_->wkt_writer);
    GEOS_finish_r(h);
  }
}

Result<std::unique_ptr<GeoContext>> GeoContext::Make(std::stop_token stop) {
  internal::RegisterInterruptCallbackOnce();
  auto impl = std::make_unique<internal::GeoContextImpl>();
  impl->stop = std::move(stop);
  // The handlers receive the Impl's address, which stays put when the GeoContext moves.
  std::unique_ptr<GeoContext> ctx(new GeoContext(std::move(impl)));  // private constructor
  internal::GeoContextImpl& state = *ctx->impl_;
  state.geos = GEOS_init_r();
  if (state.geos == nullptr) return Status::Internal("geo context: GEOS_init_r failed");
  GEOSContext_setNoticeMessageHandler_r(state.geos, &internal::OnGeosNotice, &state);
  GEOSContext_setErrorMessageHandler_r(state.geos, &internal::OnGeosError, &state);

  state.proj = proj_context_create();
  if (state.proj == nullptr) return Status::Internal("geo context: proj_context_create failed");
  proj_log_func(state.proj, &state, &internal::OnProjLog);
  // Results must not depend on the network: grids come only from installed proj-data.
  proj_context_set_enable_network(state.proj, 0);
  return ctx;
}

void GeoContext::set_stop_token(std::stop_token stop) { impl_->stop = std::move(stop); }

const std::stop_token& GeoContext::stop_token() const { return impl_->stop; }

const std::string& GeoContext::last_geos_message() const { return impl_->last_geos_message; }

const std::string& GeoContext::last_proj_message() const { return impl_->last_proj_message; }

}  // namespace geolake::geo
