/// \file
/// How subcommands plug into the `geolake` program. Each subcommand lives in its own file and
/// exposes one Register function that declares its options on a CLI11 sub-app and returns the
/// action to run once the command line is parsed. CLI11 appears only in this module.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "geolake/core/result.h"

namespace geolake::cli {

/// \brief Options shared by every subcommand (docs/cli.md).
struct GlobalOptions {
  std::string warehouse = "warehouse";  // local warehouse root
  std::string catalog;            // sqlite:PATH or postgresql://...; default <warehouse>/catalog.db
  int workers = 0;                // 0 = one per core
  std::string memory;             // in-flight budget, e.g. "2GiB"; empty = a quarter of RAM
  std::string progress = "auto";  // auto|on|off
  std::string log_level = "info";
  std::string metrics_json;  // write the run's metrics here
};

/// \brief The action of a parsed subcommand.
using Action = std::function<Status(const GlobalOptions&)>;

/// \brief Declares a subcommand's options on `sub` and stores its action in `*action`, to be
/// called after parsing when that subcommand was chosen.
using RegisterFn = void (*)(CLI::App* sub, Action* action);

/// \brief One entry of the command table.
struct CommandSpec {
  const char* name;
  const char* summary;
  RegisterFn register_fn;
};

/// \brief A check for filter options (--where, --bbox, --intersects): a value that is empty or
/// only white space is an error, never "no filter" (issue 17).
inline CLI::Validator NonEmptyFilter() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value.find_first_not_of(" \t\r\n") != std::string::npos) return std::string();
        return "an empty filter is an error (leave the option out for no filter)";
      },
      "FILTER");
}

}  // namespace geolake::cli
