// `geolake join LEFT RIGHT -o OUTPUT [--predicate P] [--how inner|left] [--suffix S]
// [--columns A,B,...] [--index auto|left|right] [--aggregate count,sum:COL,...]` and the runner's
// options (cli/ops_cli.h): a spatial join of two tables or sources on the ops runner
// (Warehouse::Join, ops/join.h, docs/ops.md).
#include "geolake/ops/join.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/ops_cli.h"
#include "geolake/core/units.h"

namespace geolake::cli {
namespace {

struct JoinArgs {
  std::string left;
  std::string right;
  std::string predicate = "intersects";
  std::string how = "inner";
  std::string suffix = "_right";
  std::vector<std::string> columns;
  std::string index = "auto";
  std::vector<std::string> aggregates;
  bool reproject_right = false;
  OpArgs op;
};

std::string JoinReportLine(const ops::JoinReport& r) {
  char text[512];
  std::snprintf(text, sizeof(text),
                "join: index over the %s side, %lld rows (%s); %lld candidates tested, %lld "
                "decided by the point-in-polygon index; %lld pairs, %lld left rows unmatched\n",
                r.index_left ? "left" : "right", static_cast<long long>(r.indexed_rows),
                FormatSize(r.indexed_bytes).c_str(), static_cast<long long>(r.candidates),
                static_cast<long long>(r.fast_path), static_cast<long long>(r.pairs),
                static_cast<long long>(r.unmatched_left));
  std::string line = text;
  if (r.cells > 0) {
    line += "join: the index did not fit its share of --memory: " + std::to_string(r.cells) +
            " cells, one pass each (the largest index " + FormatSize(r.indexed_bytes) + ")\n";
  }
  if (r.groups > 0) line += "join: " + std::to_string(r.groups) + " right features written\n";
  return line;
}

Status RunJoinCommand(const GlobalOptions& global, const JoinArgs& args) {
  ops::JoinOptions options;
  GEOLAKE_RETURN_NOT_OK(ops::ParseJoinPredicate(args.predicate, &options));
  GEOLAKE_ASSIGN_OR_RETURN(options.how, ops::ParseJoinHow(args.how));
  GEOLAKE_ASSIGN_OR_RETURN(options.index, ops::ParseJoinIndexSide(args.index));
  options.suffix = args.suffix;
  options.columns = args.columns;
  options.reproject_right = args.reproject_right;
  for (const std::string& text : args.aggregates) {
    GEOLAKE_ASSIGN_OR_RETURN(ops::JoinAggregate aggregate, ops::ParseJoinAggregate(text));
    options.aggregates.push_back(std::move(aggregate));
  }
  // --bbox, --where and --snapshot filter the left input; the right is read whole.
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec left, OpInput(args.left, args.op));
  GEOLAKE_ASSIGN_OR_RETURN(ops::InputSpec right, ops::ResolveInput(args.right));
  GEOLAKE_ASSIGN_OR_RETURN(ops::OutputSpec output, ops::ParseOutput(args.op.output));
  return RunOpCommand(
      global, args.op,
      [&](Warehouse& warehouse, const ops::RunnerOptions& runner, ops::RunSummary* summary) {
        ops::JoinReport report;
        Status st = warehouse.Join(left, right, options, output, runner, summary, &report);
        if (st.ok() || report.pairs > 0) std::fputs(JoinReportLine(report).c_str(), stdout);
        return st;
      });
}

}  // namespace

void RegisterJoin(CLI::App* sub, Action* action) {
  auto args = std::make_shared<JoinArgs>();
  sub->add_option("left", args->left, "Left input: a table (namespace.name) or sources")
      ->required();
  sub->add_option("right", args->right, "Right input: a table or sources")->required();
  sub->add_option("--predicate", args->predicate,
                  "LEFT predicate RIGHT: intersects, contains, within, touches, covers, "
                  "covered-by, dwithin:D (D in CRS units), largest-overlap")
      ->capture_default_str();
  sub->add_option("--how", args->how, "inner, or left: keep left rows without a match once")
      ->check(CLI::IsMember({"inner", "left"}))
      ->capture_default_str();
  sub->add_option("--suffix", args->suffix, "Appended to right column names the left has")
      ->capture_default_str();
  sub->add_option("--columns", args->columns, "Output columns to keep (default: all)")
      ->delimiter(',');
  sub->add_option("--index", args->index,
                  "The side the STRtree is built over: auto (the smaller), left or right")
      ->check(CLI::IsMember({"auto", "left", "right"}))
      ->capture_default_str();
  sub->add_option("--aggregate", args->aggregates,
                  "Group the pairs by the right feature: count, sum:COL, min:COL, max:COL, "
                  "mean:COL over the left's columns (one row per right feature; --how left "
                  "keeps those without a match)")
      ->delimiter(',');
  sub->add_flag("--reproject-right", args->reproject_right,
                "Transform the right's geometries into the left's CRS as they are read (when "
                "the two differ; without it such inputs are refused)");
  AddOpOptions(sub, &args->op);
  *action = [args](const GlobalOptions& global) { return RunJoinCommand(global, *args); };
}

}  // namespace geolake::cli
