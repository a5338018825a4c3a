/// \file
/// What every subcommand sets up the same way: the log level, a Warehouse (the engine: one
/// executor sized by --workers, the metrics registry, a stop source wired to SIGINT/SIGTERM;
/// and the catalog of --warehouse/--catalog, connected on first use), and writing
/// --metrics-json at the end. Internal to cli/.
#pragma once

#include <memory>

#include "geolake/cli/command.h"
#include "geolake/geolake.h"

namespace geolake::cli {

/// \brief Apply the log level and open the Warehouse of the global options, handling SIGINT
/// and SIGTERM. `with_memory`: the command has a memory budget, so --memory is parsed (other
/// commands ignore it). `read_only`: the command only reads, so the catalog is opened for
/// reading (WarehouseOptions::read_only_catalog). Errors: a bad --log-level or --memory, and
/// those of Warehouse::Open.
Result<std::unique_ptr<Warehouse>> OpenWarehouse(const GlobalOptions& global,
                                                 bool with_memory = false, bool read_only = false);

/// \brief End a command: write the metrics JSON to --metrics-json when given, and remember the
/// signal that stopped the engine (LastRunSignalExitCode). A run's own failure wins over a
/// failure to write metrics, which is then only logged.
Status FinishCommand(const GlobalOptions& global, Warehouse* warehouse, Status run_status);

/// \brief 128 + the signal that stopped the last finished command (130 for SIGINT, 143 for
/// SIGTERM), or 0 when no signal stopped it. The program's exit code for a cancelled run.
int LastRunSignalExitCode();

}  // namespace geolake::cli
