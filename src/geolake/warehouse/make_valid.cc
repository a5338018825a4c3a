// Warehouse::MakeValid: the make-valid operation (ops/make_valid.h) with the warehouse's engine,
// as Join and Dissolve (operations.cc).
#include "geolake/geolake.h"

namespace geolake {

Status Warehouse::MakeValid(const ops::InputSpec& input, const ops::MakeValidOptions& options,
                            const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                            ops::RunSummary* summary, ops::MakeValidReport* report) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::OpEnv env, OperationEnv());
  ops::RunnerOptions run = runner;
  if (run.memory_bytes == 0) run.memory_bytes = options_.memory_bytes;  // 0: the runner's default
  Status st = ops::RunMakeValid(env, input, options, output, run, summary, report);
  if (st.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext(
        "make-valid cancelled; whole units committed so far stay; see the run journal");
  }
  return st;
}

}  // namespace geolake
