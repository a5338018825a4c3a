// `geolake maintain TABLE... --policy FILE.json [--dry-run]` and
// `geolake maintain --check-policy FILE.json [TABLE...]`: measure each table against a policy's
// thresholds and run only the crossed work (maintenance/policy.h, Warehouse::Maintain,
// docs/maintenance.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/layout/table_layout.h"
#include "geolake/maintenance/policy.h"

namespace geolake::cli {
namespace {

struct MaintainArgs {
  std::vector<std::string> tables;
  std::string policy;
  std::string check_policy;
  bool dry_run = false;
};

// The policy of `path`, or kInvalidArgument after printing one line per problem to stderr.
Result<maintenance::MaintenancePolicy> LoadPolicy(const std::string& path) {
  maintenance::PolicyCheck check = maintenance::ReadPolicyFile(path);
  if (check.policy) return *check.policy;
  for (const std::string& line : check.errors) std::fprintf(stderr, "%s\n", line.c_str());
  return Status::InvalidArgument("policy '" + path +
                                 "' is not valid: " + std::to_string(check.errors.size()) +
                                 " problem" + (check.errors.size() == 1 ? "" : "s"));
}

void PrintReport(const maintenance::MaintenancePolicy& policy,
                 const maintenance::MaintainReport& r) {
  std::printf("maintain %s%s:\n", r.measurement.table.c_str(), r.dry_run ? " (dry run)" : "");
  for (const std::string& line : maintenance::DescribeMeasurement(policy, r.measurement)) {
    std::printf("  measured %s\n", line.c_str());
  }
  for (const maintenance::TaskDecision& d : r.decisions) {
    const char* verdict = d.run ? (r.dry_run ? "would run" : "run") : "skip";
    std::printf("  %s: %s: %s\n", std::string(maintenance::MaintenanceTaskName(d.task)).c_str(),
                verdict, d.why.c_str());
  }
  for (const std::string& line : r.ran) std::printf("  ran %s\n", line.c_str());
}

Status CheckPolicy(const GlobalOptions& global, const MaintainArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::MaintenancePolicy policy, LoadPolicy(args.check_policy));
  if (!args.tables.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse,
                             OpenWarehouse(global, /*with_memory=*/false, /*read_only=*/true));
    std::vector<std::string> problems;
    for (const std::string& name : args.tables) {
      GEOLAKE_ASSIGN_OR_RETURN(table::Table t, warehouse->LoadTable(name));
      auto it = t.metadata.properties.find(std::string(layout::kCrsProperty));
      const std::string crs = it == t.metadata.properties.end() ? "" : it->second;
      if (auto mismatch = maintenance::CrsMismatch(policy, t.id.ToString(), crs)) {
        problems.push_back(args.check_policy + ": " + *mismatch);
      }
    }
    for (const std::string& line : problems) std::fprintf(stderr, "%s\n", line.c_str());
    if (!problems.empty()) {
      return Status::InvalidArgument("policy '" + args.check_policy + "' does not fit " +
                                     std::to_string(problems.size()) + " table" +
                                     (problems.size() == 1 ? "" : "s"));
    }
  }
  std::printf("policy %s is valid%s\n", args.check_policy.c_str(),
              args.tables.empty() ? "" : " for every table given");
  return Status::OK();
}

Status RunMaintain(Warehouse& warehouse, const MaintainArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::MaintenancePolicy policy, LoadPolicy(args.policy));
  Status first;
  for (const std::string& name : args.tables) {
    Result<maintenance::MaintainReport> report =
        warehouse.Maintain(name, policy, {.dry_run = args.dry_run});
    if (!report.ok()) {
      std::fprintf(stderr, "maintain %s: %s\n", name.c_str(), report.status().ToString().c_str());
      if (first.ok()) first = report.status();
      if (report.status().code() == ErrorCode::kCancelled) return first;
      continue;
    }
    PrintReport(policy, *report);
    if (!report->status.ok()) {
      std::fprintf(stderr, "maintain %s: %s\n", name.c_str(), report->status.ToString().c_str());
      if (first.ok()) first = report->status;
      if (report->status.code() == ErrorCode::kCancelled) return first;
    }
  }
  return first;
}

}  // namespace

void RegisterMaintain(CLI::App* sub, Action* action) {
  auto args = std::make_shared<MaintainArgs>();
  sub->add_option("tables", args->tables, "Tables, namespace.name");
  sub->add_option("--policy", args->policy,
                  "Policy JSON (docs/maintenance.md): thresholds that decide what runs");
  sub->add_option("--check-policy", args->check_policy,
                  "Only validate this policy (and its CRS against the tables given, if any); "
                  "touches no table. Exit code 2 with one line per problem")
      ->excludes("--policy");
  sub->add_flag("--dry-run", args->dry_run, "Measure and say what would run; change nothing");
  *action = [args](const GlobalOptions& global) -> Status {
    if (!args->check_policy.empty()) {
      if (args->dry_run) return Status::InvalidArgument("--check-policy takes no --dry-run");
      return CheckPolicy(global, *args);
    }
    if (args->policy.empty()) {
      return Status::InvalidArgument("maintain needs --policy FILE.json (or --check-policy)");
    }
    if (args->tables.empty()) return Status::InvalidArgument("maintain needs at least one TABLE");
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global, /*with_memory=*/true));
    return FinishCommand(global, warehouse.get(), RunMaintain(*warehouse, *args));
  };
}

}  // namespace geolake::cli
