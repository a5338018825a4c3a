// Warehouse::Reproject: ops::RunReproject with the warehouse's engine (as operations.cc does
// for Join and Dissolve), in a file of its own so that other operations' methods merge apart.
#include "geolake/geolake.h"

namespace geolake {

Status Warehouse::Reproject(const ops::InputSpec& input, const ops::ReprojectOptions& options,
                            const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                            ops::RunSummary* summary, ops::ReprojectReport* report) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::OpEnv env, OperationEnv());
  ops::RunnerOptions run = runner;
  if (run.memory_bytes == 0) run.memory_bytes = options_.memory_bytes;  // 0: the runner's default
  Status done = ops::RunReproject(env, input, options, output, run, summary, report);
  if (done.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext(
        "reproject cancelled; whole units committed so far stay; see the run journal");
  }
  return done;
}

}  // namespace geolake
