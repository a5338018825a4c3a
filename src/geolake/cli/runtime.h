/// \file
/// What every long-running subcommand sets up the same way: the log level, a stop controller
/// wired to SIGINT/SIGTERM, the metrics registry, and writing --metrics-json at the end.
#pragma once

#include <memory>

#include "geolake/cli/command.h"
#include "geolake/core/metrics.h"
#include "geolake/core/stop.h"

namespace geolake::cli {

/// \brief Per-run services. Thread-safety: as its members.
struct Runtime {
  std::unique_ptr<StopController> stop;
  Metrics metrics;
  int workers = 0;  // resolved from --workers (0 = one per core)
};

/// \brief Apply the global options: log level, stop controller, worker count.
Result<std::unique_ptr<Runtime>> StartRuntime(const GlobalOptions& global);

/// \brief Write the metrics JSON to --metrics-json when given. A run's own failure wins over
/// a failure to write metrics, which is then only logged.
Status FinishRuntime(const GlobalOptions& global, Runtime* runtime, Status run_status);

/// \brief 128 + the signal that stopped the last finished run (130 for SIGINT, 143 for
/// SIGTERM), or 0 when no signal stopped it. The program's exit code for a cancelled run.
int LastRunSignalExitCode();

}  // namespace geolake::cli
