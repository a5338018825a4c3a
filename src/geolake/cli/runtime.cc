#include "geolake/cli/runtime.h"

#include <atomic>

#include "geolake/core/logging.h"
#include "geolake/core/units.h"

namespace geolake::cli {
namespace {

// The process exit code a signal asks for, kept from the command's Warehouse (gone by the time
// app.cc maps the status) for RunCli.
std::atomic<int> g_signal_exit_code{0};  // NOLINT(*-non-const-global-variables)

}  // namespace

int LastRunSignalExitCode() { return g_signal_exit_code.load(); }

Result<std::unique_ptr<Warehouse>> OpenWarehouse(const GlobalOptions& global, bool with_memory,
                                                 bool read_only) {
  GEOLAKE_ASSIGN_OR_RETURN(LogLevel level, ParseLogLevel(global.log_level));
  SetLogLevel(level);
  WarehouseOptions options;
  options.catalog = global.catalog;
  options.workers = global.workers;
  options.handle_signals = true;
  options.read_only_catalog = read_only;
  if (with_memory && !global.memory.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(options.memory_bytes, ParseSize(global.memory));
  }
  return Warehouse::Open(global.warehouse, options);
}

Status FinishCommand(const GlobalOptions& global, Warehouse* warehouse, Status run_status) {
  g_signal_exit_code.store(warehouse->SignalExitCode());
  if (global.metrics_json.empty()) return run_status;
  Status written = warehouse->io().WriteAll(
      global.metrics_json, warehouse->metrics().Snapshot().ToJson() + "\n", /*overwrite=*/true);
  if (!written.ok()) {
    if (!run_status.ok()) {
      Log(LogLevel::kWarn, "{}", written.WithContext("metrics").ToString());
      return run_status;
    }
    return written.WithContext("--metrics-json");
  }
  return run_status;
}

}  // namespace geolake::cli
