// PostgreSQL-specific behaviour of the SQL catalog, against a throwaway server started by
// scripts/pg-test-server.sh: the schema in information_schema, concurrent creators of the
// catalog tables, commits racing from several processes, a dead server.

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "geolake/catalog/catalog_test_util.h"
#include "geolake/catalog/postgres/postgres_connection.h"
#include "geolake/catalog/sql_catalog.h"
#include "geolake/testing/testing.h"

namespace geolake::catalog {
namespace {

using ::geolake::table::Namespace;
using ::geolake::table::TableIdentifier;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::testing::ElementsAre;

Namespace Ns(const std::string& dotted) { return Namespace::Parse(dotted).value(); }
TableIdentifier Id(const std::string& dotted) { return TableIdentifier::Parse(dotted).value(); }

std::vector<std::string> Cells(const std::vector<SqlRow>& rows) {
  std::vector<std::string> out;
  for (const SqlRow& row : rows) {
    std::string line;
    for (const SqlValue& cell : row) {
      if (!line.empty()) line += "|";
      line += cell.value_or("NULL");
    }
    out.push_back(line);
  }
  return out;
}

class PostgresCatalogTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::PgTestServer();  // NOLINT: owned until TearDownTestSuite
    start_status_ = server_->Start();
  }
  static void TearDownTestSuite() {
    server_->Stop();
    delete server_;  // NOLINT
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_OK(start_status_) << "the PostgreSQL catalog tests need a local PostgreSQL 15 server";
  }

  /// A fresh database on the test server, so each test starts without catalog tables.
  std::string FreshDatabase(const std::string& name) {
    Result<std::unique_ptr<SqlConnection>> admin = OpenPostgresConnection(server_->uri());
    EXPECT_OK(admin);
    if (!admin.ok()) return "";
    EXPECT_OK((*admin)->Execute("CREATE DATABASE " + name, {}));
    std::string uri = server_->uri();
    return uri.substr(0, uri.rfind('/') + 1) + name;
  }

  static inline testing::PgTestServer* server_ = nullptr;
  static inline Status start_status_;
};

// information_schema.columns, compared with the DDL of Iceberg's JdbcUtil.
TEST_F(PostgresCatalogTest, SchemaMatchesIcebergJdbcCatalog) {
  const std::string uri = FreshDatabase("schema_check");
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenPostgresCatalog(uri));
  EXPECT_TRUE(catalog->has_iceberg_type_column());
  ASSERT_OK_AND_ASSIGN(auto conn, OpenPostgresConnection(uri));
  const char* kColumns =
      "SELECT column_name, data_type, character_maximum_length, is_nullable FROM "
      "information_schema.columns WHERE table_schema = current_schema() AND table_name = ? "
      "ORDER BY ordinal_position";
  const SqlValue tables[] = {std::string("iceberg_tables")};
  ASSERT_OK_AND_ASSIGN(auto rows, conn->Query(kColumns, tables));
  EXPECT_THAT(Cells(rows), ElementsAre("catalog_name|character varying|255|NO",
                                       "table_namespace|character varying|255|NO",
                                       "table_name|character varying|255|NO",
                                       "metadata_location|character varying|1000|YES",
                                       "previous_metadata_location|character varying|1000|YES",
                                       "iceberg_type|character varying|5|YES"));
  const SqlValue props[] = {std::string("iceberg_namespace_properties")};
  ASSERT_OK_AND_ASSIGN(rows, conn->Query(kColumns, props));
  // property_key is nullable in Java's DDL, but PostgreSQL makes every primary-key column
  // NOT NULL, as it would for Java's own CREATE TABLE.
  EXPECT_THAT(Cells(rows), ElementsAre("catalog_name|character varying|255|NO",
                                       "namespace|character varying|255|NO",
                                       "property_key|character varying|255|NO",
                                       "property_value|character varying|1000|YES"));
  ASSERT_OK_AND_ASSIGN(
      rows, conn->Query("SELECT kcu.table_name, kcu.column_name FROM "
                        "information_schema.table_constraints tc JOIN "
                        "information_schema.key_column_usage kcu ON tc.constraint_name = "
                        "kcu.constraint_name WHERE tc.constraint_type = 'PRIMARY KEY' AND "
                        "tc.table_schema = current_schema() ORDER BY kcu.table_name, "
                        "kcu.ordinal_position",
                        {}));
  EXPECT_THAT(
      Cells(rows),
      ElementsAre("iceberg_namespace_properties|catalog_name",
                  "iceberg_namespace_properties|namespace",
                  "iceberg_namespace_properties|property_key", "iceberg_tables|catalog_name",
                  "iceberg_tables|table_namespace", "iceberg_tables|table_name"));

  ASSERT_OK(catalog->CreateNamespace(Ns("geo")));
  ASSERT_OK(catalog->CreateTable(Id("geo.roads"), "m0"));
  ASSERT_OK(catalog->CommitTable(Id("geo.roads"), "m0", "m1"));
  ASSERT_OK_AND_ASSIGN(rows, conn->Query("SELECT * FROM iceberg_tables", {}));
  EXPECT_THAT(Cells(rows), ElementsAre("geolake|geo|roads|m1|m0|TABLE"));
}

// Eight processes' worth of openers at once on a database without catalog tables: CREATE
// TABLE IF NOT EXISTS can fail with a unique violation in PostgreSQL; every opener succeeds.
TEST_F(PostgresCatalogTest, ConcurrentOpenersAllCreateOrFindTheTables) {
  const std::string uri = FreshDatabase("concurrent_init");
  constexpr int kOpeners = 8;
  std::vector<Status> results(kOpeners);
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back([&, i]() { results[i] = OpenPostgresCatalog(uri).status(); });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& st : results) EXPECT_OK(st);
}

TEST_F(PostgresCatalogTest, UnreachableServerIsIOErrorWithoutPassword) {
  Result<std::unique_ptr<SqlCatalog>> catalog =
      OpenPostgresCatalog("postgresql://nobody:hunter2@127.0.0.1:1/db?connect_timeout=2");
  EXPECT_THAT(catalog, IsErrorWith(ErrorCode::kIOError, "cannot connect"));
  EXPECT_EQ(catalog.status().message().find("hunter2"), std::string::npos);
  EXPECT_THAT(OpenPostgresCatalog("postgresql://postgres@127.0.0.1:1/db?connect_timeout=2"),
              IsError(ErrorCode::kIOError));
}

TEST_F(PostgresCatalogTest, ReportsSqlErrorsWithServerMessage) {
  ASSERT_OK_AND_ASSIGN(auto conn, OpenPostgresConnection(server_->uri()));
  EXPECT_THAT(conn->Query("SELECT * FROM no_such_table", {}),
              IsErrorWith(ErrorCode::kIOError, "no_such_table"));
  ASSERT_OK(conn->Execute("CREATE TEMP TABLE u (k VARCHAR(10) PRIMARY KEY)", {}));
  const SqlValue key[] = {std::string("a")};
  EXPECT_THAT(conn->Execute("INSERT INTO u VALUES (?)", key), ::testing::Optional(1));
  EXPECT_THAT(conn->Execute("INSERT INTO u VALUES (?)", key), IsError(ErrorCode::kAlreadyExists));
  // Parameters are never spliced into the SQL text.
  const SqlValue hostile[] = {std::string("x'); DROP TABLE u; --")};
  EXPECT_THAT(conn->Execute("INSERT INTO u VALUES (?)", hostile),
              IsErrorWith(ErrorCode::kIOError, "too long"));
  EXPECT_TRUE(conn->healthy());
  ASSERT_OK_AND_ASSIGN(auto rows, conn->Query("SELECT k FROM u", {}));
  EXPECT_THAT(Cells(rows), ElementsAre("a"));
}

TEST(PostgresConnectionTest, RewritesPlaceholdersOutsideQuotes) {
  EXPECT_EQ(RewritePlaceholders("SELECT ? , '?' , \"a?\" , ?"), "SELECT $1 , '?' , \"a?\" , $2");
  EXPECT_EQ(RewritePlaceholders("x = 'it''s?' AND y = ?"), "x = 'it''s?' AND y = $1");
}

// 4 processes x 4 threads, each process with its own catalog and connections.
TEST_F(PostgresCatalogTest, ProcessesRacingCommitsLoseNoSwap) {
  constexpr int kProcesses = 4;
  constexpr int kThreads = 4;
  constexpr int kCommitsPerThread = 25;
  constexpr int kTotal = kProcesses * kThreads * kCommitsPerThread;
  const std::string uri = FreshDatabase("process_race");
  const TableIdentifier id = Id("race.t");
  {
    ASSERT_OK_AND_ASSIGN(auto catalog, OpenCatalog(uri, ""));
    ASSERT_OK(catalog->CreateNamespace(Ns("race")));
    ASSERT_OK(catalog->CreateTable(id, "s0-initial"));
  }  // closed before forking: children open their own connections
  testing::TempDir reports;
  ASSERT_TRUE(reports.ok());
  const testing::RaceStats stats = testing::RaceCommitsInProcesses(
      uri, "geolake", id, kProcesses, kThreads, kCommitsPerThread, reports.path());
  std::printf(
      "[Postgres] %d processes x %d threads x %d commits: %lld attempts, %lld "
      "conflicts\n",
      kProcesses, kThreads, kCommitsPerThread, static_cast<long long>(stats.attempts),
      static_cast<long long>(stats.conflicts));
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenCatalog(uri, ""));
  ASSERT_OK_AND_ASSIGN(table::TableEntry entry, catalog->LoadTableEntry(id));
  EXPECT_EQ(testing::VerifyRace(stats, kTotal, entry), "");
}

}  // namespace
}  // namespace geolake::catalog
