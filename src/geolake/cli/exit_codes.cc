#include "geolake/cli/exit_codes.h"

namespace geolake::cli {

ExitCode ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk:
      return ExitCode::kOk;
    case ErrorCode::kInvalidArgument:
      return ExitCode::kInvalidArgument;
    case ErrorCode::kNotFound:
      return ExitCode::kNotFound;
    case ErrorCode::kAlreadyExists:
      return ExitCode::kAlreadyExists;
    case ErrorCode::kIOError:
      return ExitCode::kIOError;
    case ErrorCode::kCorruptData:
      return ExitCode::kCorruptData;
    case ErrorCode::kCommitConflict:
      return ExitCode::kCommitConflict;
    case ErrorCode::kGeometryError:
      return ExitCode::kGeometryError;
    case ErrorCode::kCancelled:
      return ExitCode::kCancelled;
    case ErrorCode::kNotImplemented:
      return ExitCode::kNotImplemented;
    case ErrorCode::kInternal:
      return ExitCode::kInternal;
  }
  return ExitCode::kInternal;
}

}  // namespace geolake::cli
