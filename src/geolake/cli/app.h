/// \file
/// The `geolake` program: parse the command line, run one subcommand, map its Status to an exit
/// code and print one line on stderr on failure.
#pragma once

namespace geolake::cli {

/// \brief Run the program as main() would; returns the process exit code.
int RunCli(int argc, const char* const* argv);

}  // namespace geolake::cli
