/// \file
/// The test environment contract (docs/testing.md): where a test finds the real datasets, the
/// independent readers and the optional third-party corpus, and the one rule for a missing
/// input. Each folder comes from an environment variable that ctest sets for every unit and e2e
/// test (tests/CMakeLists.txt and cmake/GeolakeModule.cmake pass the same CMake cache values),
/// and falls back to the configured value when a test binary is run by hand:
///
/// - DataDir():    GEOLAKE_DATA_DIR, default <repo>/build/data (filled by scripts/fetch-data.sh)
/// - OraclesDir(): GEOLAKE_ORACLES_DIR, default <repo>/build/oracles (scripts/install-deps.sh)
/// - SharedDir():  GEOLAKE_SHARED_DIR, default <repo>/../shared (optional: nothing fills it)
/// - SourceDir():  GEOLAKE_SOURCE_DIR, default the repository root
/// - BuildDir():   GEOLAKE_BUILD_DIR, default the CMake build tree
///
/// A test whose input is missing is skipped, never passed silently and never failed with a
/// confusing message: `if (auto why = MissingData("x.gpkg")) GTEST_SKIP() << *why;`. Each reason
/// starts with a tag, `[skip:data]`, `[skip:oracles]` or `[skip:shared]`, that
/// tests/skip_summary.sh counts at the end of a run. Include only from *_test.cc files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace geolake::testing {

/// \brief The repository root (test data committed under src/ and tests/, scripts/).
std::string SourceDir();

/// \brief The CMake build tree the test belongs to (GEOLAKE_BUILD_DIR): its programs
/// (src/geolake/cli/geolake) and the scratch folders tests keep for inspection.
std::string BuildDir();

/// \brief The folder of real datasets (us_counties.gpkg, ...; docs/data.md).
std::string DataDir();

/// \brief The folder the oracle readers are installed in (verify_parquet.mjs,
/// verify_iceberg.mjs, node_modules/; tests/oracles/README.md).
std::string OraclesDir();

/// \brief The development folder beside the checkout that holds third-party files the
/// repository does not ship (parquet-testing corpus, foreign Iceberg tables). Absent in a plain
/// clone; tests that need it skip.
std::string SharedDir();

/// \brief DataDir()/name, whether or not it exists.
std::string DataPath(std::string_view name);

/// \brief OraclesDir()/name, whether or not it exists.
std::string OraclePath(std::string_view name);

/// \brief SharedDir()/name, whether or not it exists.
std::string SharedPath(std::string_view name);

/// \brief A skip reason when DataPath(name) does not exist, else nullopt.
std::optional<std::string> MissingData(std::string_view name);

/// \brief The skip reason for datasets that are not all in DataDir(), `what` naming them.
std::string MissingDataReason(std::string_view what);

/// \brief A skip reason when OraclePath(name) does not exist (e.g. "verify_iceberg.mjs" or
/// "node_modules/@duckdb/node-api"), else nullopt.
std::optional<std::string> MissingOracle(std::string_view name);

/// \brief A skip reason when SharedPath(name) does not exist, else nullopt.
std::optional<std::string> MissingShared(std::string_view name);

/// \brief The small Iceberg tables other tools wrote (Spark, Iceberg Java, Athena, DuckDB; from
/// the icebird and duckdb-iceberg repositories), in the shared folder: SharedPath
/// ("oracles/fixtures"). Skip with MissingIcebergFixtures() first.
std::string IcebergFixturesDir();
std::optional<std::string> MissingIcebergFixtures();

/// \brief The apache/parquet-testing corpus (data/, bad_data/) in the shared folder:
/// SharedPath("corpus/parquet-testing"). Skip with MissingParquetCorpus() first.
std::string ParquetCorpusDir();
std::optional<std::string> MissingParquetCorpus();

}  // namespace geolake::testing
