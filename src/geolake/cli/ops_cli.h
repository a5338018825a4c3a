/// \file
/// What the operation commands (join, dissolve, simplify, ...) share: the options of the ops
/// runner (ops/runner.h: input filters, -o, --shard, --on-error, a new output table's
/// partition, --append, commit cadence) and running an operation on the Warehouse with
/// progress, the runner's report on stdout and --metrics-json. Internal to cli/.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "geolake/cli/command.h"
#include "geolake/core/result.h"
#include "geolake/geolake.h"
#include "geolake/ops/runner.h"

namespace geolake::cli {

/// \brief The runner's options as the command line gives them.
struct OpArgs {
  std::string output;  // -o: a table or a file
  std::string bbox;    // X1,Y1,X2,Y2 (applies to the main input)
  std::string where;
  std::int64_t snapshot = 0;
  bool has_snapshot = false;
  std::string shard;  // I/N
  std::string on_error = "skip";
  std::string partition;  // a new output table's; empty = chosen from the input size
  bool append = false;
  std::int64_t commit_rows = 1000000;
  std::int64_t commit_seconds = 30;
};

/// \brief Declare -o, --bbox, --where, --snapshot, --shard, --on-error, --partition, --append,
/// --commit-rows and --commit-seconds on `sub`, stored in `*args` (which must outlive parsing).
void AddOpOptions(CLI::App* sub, OpArgs* args);

/// \brief The input spec of a command-line INPUT (ops::ResolveInput) with --bbox, --where and
/// --snapshot applied. Errors: kInvalidArgument for a bad box, or filters a source cannot take.
Result<ops::InputSpec> OpInput(const std::string& text, const OpArgs& args);

/// \brief The runner options from `args` (memory_bytes stays 0: the operation's Warehouse
/// method uses the warehouse's --memory budget).
Result<ops::RunnerOptions> OpRunnerOptions(const OpArgs& args);

/// \brief Run one operation: open the Warehouse of the global options (its executor of
/// --workers threads, --memory, signals), show progress, call `run` with it, print the
/// runner's report (FormatRunSummary) and write --metrics-json. The operation's Warehouse
/// method says "cancelled" with the reason.
using OpRunFn = std::function<Status(Warehouse& warehouse, const ops::RunnerOptions& options,
                                     ops::RunSummary* summary)>;
Status RunOpCommand(const GlobalOptions& global, const OpArgs& args, const OpRunFn& run);

}  // namespace geolake::cli
