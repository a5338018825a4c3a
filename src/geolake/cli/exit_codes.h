/// \file
/// Fixed process exit codes, one per ErrorCode, so scripts can tell failures apart. Never
/// 124-127 (shell: timeout, not executable, not found) or 137 (SIGKILL). These numbers are part
/// of the command-line contract: add new ones, never renumber.
#pragma once

#include "geolake/core/result.h"

namespace geolake::cli {

enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,
  kInvalidArgument = 2,  // also bad command-line usage
  kNotFound = 3,
  kAlreadyExists = 4,
  kIOError = 5,
  kCorruptData = 6,
  kCommitConflict = 7,
  kGeometryError = 8,
  kNotImplemented = 9,
  kCancelled = 130,  // as a shell reports a process stopped by SIGINT
};

/// \brief The exit code for a status (kOk for OK).
ExitCode ExitCodeFor(const Status& status);

}  // namespace geolake::cli
