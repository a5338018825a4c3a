/// \file
/// The command table: every `geolake` subcommand, in the order `geolake --help` lists them.
#pragma once

#include <vector>

#include "geolake/cli/command.h"

namespace geolake::cli {

/// \brief All subcommands (built and planned).
const std::vector<CommandSpec>& Commands();

// One Register function per subcommand file.
void RegisterCreate(CLI::App* sub, Action* action);
void RegisterIngest(CLI::App* sub, Action* action);
void RegisterQuery(CLI::App* sub, Action* action);
void RegisterDescribe(CLI::App* sub, Action* action);
void RegisterSnapshots(CLI::App* sub, Action* action);
void RegisterFiles(CLI::App* sub, Action* action);
void RegisterAppend(CLI::App* sub, Action* action);
void RegisterCompact(CLI::App* sub, Action* action);
void RegisterMaintain(CLI::App* sub, Action* action);
void RegisterJoin(CLI::App* sub, Action* action);
void RegisterDissolve(CLI::App* sub, Action* action);
void RegisterMakeValid(CLI::App* sub, Action* action);
void RegisterReproject(CLI::App* sub, Action* action);
void RegisterSimplify(CLI::App* sub, Action* action);
void RegisterExpireSnapshots(CLI::App* sub, Action* action);
void RegisterRewriteManifests(CLI::App* sub, Action* action);
void RegisterRemoveOrphans(CLI::App* sub, Action* action);
void RegisterEliminate(CLI::App* sub, Action* action);
void RegisterPolygonize(CLI::App* sub, Action* action);
void RegisterRender(CLI::App* sub, Action* action);
void RegisterInspect(CLI::App* sub, Action* action);
void RegisterCat(CLI::App* sub, Action* action);
void RegisterConvert(CLI::App* sub, Action* action);
void RegisterGeoinfo(CLI::App* sub, Action* action);

}  // namespace geolake::cli
