#include "geolake/cli/app.h"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "geolake/cli/command.h"
#include "geolake/cli/commands.h"
#include "geolake/cli/exit_codes.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/version.h"
#include "geolake/sqlite/sqlite.h"

namespace geolake::cli {
namespace {

// CLI11 messages can span lines; the contract is one line on stderr.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

void AddGlobalOptions(CLI::App* app, GlobalOptions* g) {
  app->add_option("--warehouse", g->warehouse, "Warehouse root folder")
      ->capture_default_str()
      ->envname("GEOLAKE_WAREHOUSE");
  app->add_option(
         "--catalog", g->catalog,
         "Catalog URI: sqlite:PATH or postgresql://... (default sqlite:<warehouse>/catalog.db)")
      ->envname("GEOLAKE_CATALOG");
  app->add_option("--workers", g->workers, "Worker threads (0 = one per core)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--memory", g->memory, "In-flight memory budget, e.g. 2GiB (default: RAM/4)");
  app->add_option("--progress", g->progress, "Progress display")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  app->add_option("--log-level", g->log_level, "Log level")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
      ->capture_default_str();
  app->add_option("--metrics-json", g->metrics_json, "Write the run's metrics as JSON to FILE");
}

}  // namespace

int RunCli(int argc, const char* const* argv) {
  // Before SQLite's first use (see DisableMemoryStatistics); a refusal only costs speed.
  static_cast<void>(sqlite::DisableMemoryStatistics());
  CLI::App app{
      "geolake: Iceberg tables of GeoParquet files - ingest, maintain, query and process "
      "vector data on every core of one node.",
      "geolake"};
  app.set_version_flag();  // replaced below: CLI11 2.1 prints the version without a newline
  bool want_version = false;
  app.add_flag("--version", want_version, "Print the version and exit");
  app.require_subcommand(0, 1);  // zero only with --version; checked after parsing
  app.fallthrough();             // global options may follow the subcommand
  GlobalOptions global;
  AddGlobalOptions(&app, &global);

  const std::vector<CommandSpec>& specs = Commands();
  std::vector<Action> actions(specs.size());
  std::vector<CLI::App*> subs;
  subs.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    CLI::App* sub = app.add_subcommand(specs[i].name, specs[i].summary);
    specs[i].register_fn(sub, &actions[i]);
    subs.push_back(sub);
  }

  // CLI11 reports a mistyped command as "a subcommand is required"; say what was wrong.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CommandSpec& spec : specs) known = known || std::string(argv[1]) == spec.name;
    if (!known) {
      std::fprintf(stderr, "geolake: unknown command '%s' (see 'geolake --help')\n", argv[1]);
      return static_cast<int>(ExitCode::kInvalidArgument);
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (want_version) {
      std::printf("geolake %s\n", GEOLAKE_VERSION_STRING);
      return 0;
    }
    std::fprintf(stderr, "geolake: %s (see 'geolake --help')\n", OneLine(e.what()).c_str());
    return static_cast<int>(ExitCode::kInvalidArgument);
  }

  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!subs[i]->parsed()) continue;
    Status status;
    try {
      status = actions[i] ? actions[i](global) : Status::Internal("command has no action");
    } catch (const std::exception& e) {
      // Library code never throws; this guards third-party code reached from a command.
      status = Status::Internal(std::string("unexpected exception: ") + e.what());
    }
    if (!status.ok()) {
      std::fprintf(stderr, "geolake %s: %s\n", specs[i].name, OneLine(status.ToString()).c_str());
    }
    // A signal decides the code of a cancelled run: 130 for SIGINT, 143 for SIGTERM.
    if (status.code() == ErrorCode::kCancelled && LastRunSignalExitCode() != 0) {
      return LastRunSignalExitCode();
    }
    return static_cast<int>(ExitCodeFor(status));
  }
  if (want_version) {
    std::printf("geolake %s\n", GEOLAKE_VERSION_STRING);
    return 0;
  }
  std::fprintf(stderr, "geolake: no command given (see 'geolake --help')\n");
  return static_cast<int>(ExitCode::kInvalidArgument);
}

}  // namespace geolake::cli
