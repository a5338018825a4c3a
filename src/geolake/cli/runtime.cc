#include "geolake/cli/runtime.h"

#include <atomic>
#include <thread>

#include "geolake/core/logging.h"
#include "geolake/io/file_io.h"

namespace geolake::cli {
namespace {

std::atomic<int> g_signal_exit_code{0};

}  // namespace

int LastRunSignalExitCode() { return g_signal_exit_code.load(); }

Result<std::unique_ptr<Runtime>> StartRuntime(const GlobalOptions& global) {
  GEOLAKE_ASSIGN_OR_RETURN(LogLevel level, ParseLogLevel(global.log_level));
  SetLogLevel(level);
  auto runtime = std::make_unique<Runtime>();
  GEOLAKE_ASSIGN_OR_RETURN(runtime->stop, StopController::Make());
  runtime->workers = global.workers > 0
                         ? global.workers
                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return runtime;
}

Status FinishRuntime(const GlobalOptions& global, Runtime* runtime, Status run_status) {
  if (runtime->stop) g_signal_exit_code.store(runtime->stop->SignalExitCode());
  if (global.metrics_json.empty()) return run_status;
  auto io = io::MakeLocalFileIO();
  Status written = io->WriteAll(global.metrics_json, runtime->metrics.Snapshot().ToJson() + "\n",
                                /*overwrite=*/true);
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
