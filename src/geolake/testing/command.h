/// \file
/// RunCommand: run a shell command (the `geolake` program, a node oracle) from a test and keep
/// what it printed. Include only from *_test.cc files.
#pragma once

#include <string>

namespace geolake::testing {

/// \brief What a shell command printed (stdout and stderr together) and its exit code
/// (-1 when it did not exit normally or could not be started).
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

/// \brief Run `command` through /bin/sh and wait for it.
CommandResult RunCommand(const std::string& command);

}  // namespace geolake::testing
