#include "geolake/core/result.h"

#include <string>

namespace geolake {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kAlreadyExists:
      return "already exists";
    case ErrorCode::kIOError:
      return "I/O error";
    case ErrorCode::kCorruptData:
      return "corrupt data";
    case ErrorCode::kCommitConflict:
      return "commit conflict";
    case ErrorCode::kGeometryError:
      return "geometry error";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kNotImplemented:
      return "not implemented";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown error";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(ErrorCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::WithContext(std::string_view context) const& {
  Status copy = *this;
  return std::move(copy).WithContext(context);
}

Status Status::WithContext(std::string_view context) && {
  if (ok()) return std::move(*this);
  std::string msg;
  msg.reserve(context.size() + 2 + message_.size());
  msg.append(context).append(": ").append(message_);
  message_ = std::move(msg);
  return std::move(*this);
}

}  // namespace geolake
