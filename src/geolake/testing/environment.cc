#include "geolake/testing/environment.h"

#include <cstdlib>
#include <filesystem>

namespace geolake::testing {
namespace {

// The configured defaults (GEOLAKE_DEFAULT_*: compile definitions of this file only, from the
// CMake cache), used when ctest's environment did not set the variable.
std::string FromEnvironment(const char* variable, const char* fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : fallback;
}

std::string Join(const std::string& dir, std::string_view name) {
  std::string path = dir;
  path += '/';
  path += name;
  return path;
}

std::optional<std::string> Missing(const std::string& path, std::string_view tag,
                                   std::string_view variable, std::string_view remedy) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return std::nullopt;
  std::string why = "[skip:";
  why += tag;
  why += "] ";
  why += path;
  why += " not found (";
  why += variable;
  why += "; ";
  why += remedy;
  why += ")";
  return why;
}

}  // namespace

std::string SourceDir() {
  return FromEnvironment("GEOLAKE_SOURCE_DIR", GEOLAKE_DEFAULT_SOURCE_DIR);
}
std::string BuildDir() { return FromEnvironment("GEOLAKE_BUILD_DIR", GEOLAKE_DEFAULT_BUILD_DIR); }
std::string DataDir() { return FromEnvironment("GEOLAKE_DATA_DIR", GEOLAKE_DEFAULT_DATA_DIR); }
std::string OraclesDir() {
  return FromEnvironment("GEOLAKE_ORACLES_DIR", GEOLAKE_DEFAULT_ORACLES_DIR);
}
std::string SharedDir() {
  return FromEnvironment("GEOLAKE_SHARED_DIR", GEOLAKE_DEFAULT_SHARED_DIR);
}

std::string DataPath(std::string_view name) { return Join(DataDir(), name); }
std::string OraclePath(std::string_view name) { return Join(OraclesDir(), name); }
std::string SharedPath(std::string_view name) { return Join(SharedDir(), name); }

std::optional<std::string> MissingData(std::string_view name) {
  return Missing(DataPath(name), "data", "GEOLAKE_DATA_DIR", "run scripts/fetch-data.sh");
}

std::string MissingDataReason(std::string_view what) {
  std::string why = "[skip:data] ";
  why += what;
  why += " not found in ";
  why += DataDir();
  why += " (GEOLAKE_DATA_DIR; run scripts/fetch-data.sh)";
  return why;
}

std::optional<std::string> MissingOracle(std::string_view name) {
  return Missing(OraclePath(name), "oracles", "GEOLAKE_ORACLES_DIR", "run scripts/install-deps.sh");
}

std::optional<std::string> MissingShared(std::string_view name) {
  return Missing(SharedPath(name), "shared", "GEOLAKE_SHARED_DIR",
                 "third-party files present only on development and CI machines");
}

std::string IcebergFixturesDir() { return SharedPath("oracles/fixtures"); }
std::optional<std::string> MissingIcebergFixtures() { return MissingShared("oracles/fixtures"); }

std::string ParquetCorpusDir() { return SharedPath("corpus/parquet-testing"); }
std::optional<std::string> MissingParquetCorpus() {
  return MissingShared("corpus/parquet-testing/data");
}

}  // namespace geolake::testing
