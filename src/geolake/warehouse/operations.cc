// Warehouse::Compact and the ops runner's operations (Join, Dissolve, Eliminate, Polygonize): the
// module's engine fields filled from the Warehouse, as every operation method does (warehouse.cc).
#include <utility>

#include "geolake/geolake.h"

namespace geolake {

Result<maintenance::CompactReport> Warehouse::Compact(std::string_view table,
                                                      maintenance::CompactOptions options) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(table));
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  options.executor = executor_.get();
  options.metrics = &metrics_;
  if (options.memory_bytes == 0) options.memory_bytes = options_.memory_bytes;
  if (options.temp_dir.empty()) options.temp_dir = location_ + "/.geolake-tmp";
  Result<maintenance::CompactReport> report =
      maintenance::Compact(*catalog, *io_, id, options, stop_token());
  const bool stopped = stop_->stop_requested();
  const std::string cancelled = "compact '" + id.ToString() + "' cancelled";
  if (!report.ok()) {
    if (stopped && report.status().code() == ErrorCode::kCancelled) {
      return StopStatus().WithContext(cancelled);
    }
    return report;
  }
  if (stopped && report->status.code() == ErrorCode::kCancelled) {
    report->status = StopStatus().WithContext(cancelled + "; groups committed so far stay");
  }
  return report;
}

Result<ops::OpEnv> Warehouse::OperationEnv() {
  ops::OpEnv env;
  GEOLAKE_ASSIGN_OR_RETURN(env.catalog, catalog());
  env.io = io_.get();
  env.executor = executor_.get();
  env.metrics = &metrics_;
  env.stop = stop_token();
  env.warehouse = location_;
  return env;
}

Status Warehouse::Join(const ops::InputSpec& left, const ops::InputSpec& right,
                       const ops::JoinOptions& options, const ops::OutputSpec& output,
                       const ops::RunnerOptions& runner, ops::RunSummary* summary,
                       ops::JoinReport* report) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::OpEnv env, OperationEnv());
  ops::RunnerOptions run = runner;
  if (run.memory_bytes == 0) run.memory_bytes = options_.memory_bytes;  // 0: the runner's default
  Status joined = ops::RunJoin(env, left, right, options, output, run, summary, report);
  if (joined.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext(
        "join cancelled; whole units committed so far stay; see the run journal");
  }
  return joined;
}

Status Warehouse::Dissolve(const ops::InputSpec& input, const ops::DissolveOptions& options,
                           const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                           ops::RunSummary* summary, ops::DissolveReport* report) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::OpEnv env, OperationEnv());
  ops::RunnerOptions run = runner;
  if (run.memory_bytes == 0) run.memory_bytes = options_.memory_bytes;  // 0: the runner's default
  Status dissolved = ops::RunDissolve(env, input, options, output, run, summary, report);
  if (dissolved.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext("dissolve cancelled; nothing was committed");
  }
  return dissolved;
}

Status Warehouse::Eliminate(const ops::InputSpec& input, const ops::EliminateOptions& options,
                            const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                            ops::RunSummary* summary, ops::EliminateReport* report) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::OpEnv env, OperationEnv());
  ops::RunnerOptions run = runner;
  if (run.memory_bytes == 0) run.memory_bytes = options_.memory_bytes;  // 0: the runner's default
  Status st = ops::RunEliminate(env, input, options, output, run, summary, report);
  if (st.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext("eliminate cancelled; nothing was committed");
  }
  return st;
}

Status Warehouse::Polygonize(const std::string& raster, const ops::PolygonizeOptions& options,
                             const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                             ops::RunSummary* summary, ops::PolygonizeReport* report) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::OpEnv env, OperationEnv());
  ops::RunnerOptions run = runner;
  if (run.memory_bytes == 0) run.memory_bytes = options_.memory_bytes;  // 0: the runner's default
  Status st = ops::RunPolygonize(env, raster, options, output, run, summary, report);
  if (st.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext("polygonize cancelled; nothing was committed");
  }
  return st;
}

Status Warehouse::Simplify(const ops::InputSpec& input, const ops::SimplifyOptions& options,
                           const ops::OutputSpec& output, const ops::RunnerOptions& runner,
                           ops::RunSummary* summary, ops::SimplifyReport* report) {
  GEOLAKE_ASSIGN_OR_RETURN(ops::OpEnv env, OperationEnv());
  ops::RunnerOptions run = runner;
  if (run.memory_bytes == 0) run.memory_bytes = options_.memory_bytes;  // 0: the runner's default
  Status simplified = ops::RunSimplify(env, input, options, output, run, summary, report);
  if (simplified.code() == ErrorCode::kCancelled && stop_->stop_requested()) {
    return StopStatus().WithContext(
        options.method == ops::SimplifyMethod::kCoverage
            ? "simplify cancelled; nothing was committed"
            : "simplify cancelled; whole units committed so far stay; see the run journal");
  }
  return simplified;
}

}  // namespace geolake
