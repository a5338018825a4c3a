// SQLite-specific behaviour of the SQL catalog: the on-disk schema and rows are exactly what
// Iceberg's JDBC catalog (Java) and PyIceberg's SqlCatalog read and write, WAL mode, databases
// created by those clients, failures, and commits racing from several processes.

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "geolake/catalog/catalog_test_util.h"
#include "geolake/catalog/sql_catalog.h"
#include "geolake/sqlite/sqlite.h"
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

/// A raw sqlite3 handle, to look at the database the way another client would.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      ADD_FAILURE() << "cannot open " << path;
    }
    sqlite3_busy_timeout(db_, 10000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  /// Every row as strings ("NULL" for NULL).
  std::vector<std::vector<std::string>> Rows(const std::string& sql) {
    std::vector<std::vector<std::string>> rows;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sqlite3_errmsg(db_) << " in " << sql;
      return rows;
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int col = 0; col < sqlite3_column_count(stmt); ++col) {
        const unsigned char* text = sqlite3_column_text(stmt, col);
        row.emplace_back(text == nullptr ? "NULL" : reinterpret_cast<const char*>(text));
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) ADD_FAILURE() << sqlite3_errmsg(db_) << " in " << sql;
    sqlite3_finalize(stmt);
    return rows;
  }

  void Exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      ADD_FAILURE() << (err ? err : "?") << " in " << sql;
    }
    sqlite3_free(err);
  }

 private:
  sqlite3* db_ = nullptr;
};

class SqliteCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }
  std::string DbPath() const { return dir_.Join("catalog.db"); }

  testing::TempDir dir_;
};

// PRAGMA table_info rows: (cid, name, type, notnull, dflt_value, pk). Expected values are the
// DDL of Iceberg's JDBC catalog (Java JdbcUtil V0 + the V1 iceberg_type column).
TEST_F(SqliteCatalogTest, SchemaMatchesIcebergJdbcCatalog) {
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
  EXPECT_TRUE(catalog->has_iceberg_type_column());
  RawDb raw(DbPath());
  EXPECT_THAT(
      raw.Rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
      ElementsAre(ElementsAre("iceberg_namespace_properties"), ElementsAre("iceberg_tables")));
  using Row = std::vector<std::string>;
  EXPECT_THAT(
      raw.Rows("SELECT name, type, \"notnull\", pk FROM pragma_table_info('iceberg_tables')"),
      ElementsAre(Row{"catalog_name", "VARCHAR(255)", "1", "1"},
                  Row{"table_namespace", "VARCHAR(255)", "1", "2"},
                  Row{"table_name", "VARCHAR(255)", "1", "3"},
                  Row{"metadata_location", "VARCHAR(1000)", "0", "0"},
                  Row{"previous_metadata_location", "VARCHAR(1000)", "0", "0"},
                  Row{"iceberg_type", "VARCHAR(5)", "0", "0"}));
  EXPECT_THAT(raw.Rows("SELECT name, type, \"notnull\", pk FROM "
                       "pragma_table_info('iceberg_namespace_properties')"),
              ElementsAre(Row{"catalog_name", "VARCHAR(255)", "1", "1"},
                          Row{"namespace", "VARCHAR(255)", "1", "2"},
                          Row{"property_key", "VARCHAR(255)", "0", "3"},
                          Row{"property_value", "VARCHAR(1000)", "0", "0"}));
}

TEST_F(SqliteCatalogTest, UsesWalJournalMode) {
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
  RawDb raw(DbPath());
  EXPECT_THAT(raw.Rows("PRAGMA journal_mode"), ElementsAre(ElementsAre("wal")));
}

TEST_F(SqliteCatalogTest, WritesTheRowsJavaAndPyIcebergRead) {
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
  ASSERT_OK(catalog->CreateNamespace(Ns("geo.osm"), {{"owner", "ann"}}));
  ASSERT_OK(catalog->CreateTable(Id("geo.osm.roads"), "/wh/a.metadata.json"));
  ASSERT_OK(
      catalog->CommitTable(Id("geo.osm.roads"), "/wh/a.metadata.json", "/wh/b.metadata.json"));
  RawDb raw(DbPath());
  EXPECT_THAT(raw.Rows("SELECT catalog_name, table_namespace, table_name, metadata_location, "
                       "previous_metadata_location, iceberg_type FROM iceberg_tables"),
              ElementsAre(ElementsAre("geolake", "geo.osm", "roads", "/wh/b.metadata.json",
                                      "/wh/a.metadata.json", "TABLE")));
  EXPECT_THAT(raw.Rows("SELECT catalog_name, namespace, property_key, property_value FROM "
                       "iceberg_namespace_properties ORDER BY property_key"),
              ElementsAre(ElementsAre("geolake", "geo.osm", "exists", "true"),
                          ElementsAre("geolake", "geo.osm", "owner", "ann")));
}

// A database created by Java's JdbcCatalog with its default V0 schema: no iceberg_type column.
// The DDL is the one of Iceberg's JdbcUtil.
TEST_F(SqliteCatalogTest, WorksOnJavaV0DatabaseWithoutChangingIt) {
  {
    RawDb raw(DbPath());
    raw.Exec(
        "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace "
        "VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location "
        "VARCHAR(1000), previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, "
        "table_namespace, table_name))");
    raw.Exec(
        "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, "
        "namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255), property_value "
        "VARCHAR(1000), PRIMARY KEY (catalog_name, namespace, property_key))");
    raw.Exec("INSERT INTO iceberg_tables VALUES ('geolake', 'db', 'java_t', 'm-java', NULL)");
  }
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
  EXPECT_FALSE(catalog->has_iceberg_type_column());
  EXPECT_THAT(catalog->NamespaceExists(Ns("db")), ::testing::Optional(true));
  EXPECT_THAT(catalog->LoadTable(Id("db.java_t")), ::testing::Optional(std::string("m-java")));
  ASSERT_OK(catalog->CommitTable(Id("db.java_t"), "m-java", "m-ours"));
  ASSERT_OK(catalog->CreateTable(Id("db.ours"), "m1"));
  ASSERT_OK_AND_ASSIGN(auto tables, catalog->ListTables(Ns("db")));
  EXPECT_THAT(tables, ElementsAre(Id("db.java_t"), Id("db.ours")));
  RawDb raw(DbPath());
  EXPECT_THAT(raw.Rows("SELECT count(*) FROM pragma_table_info('iceberg_tables')"),
              ElementsAre(ElementsAre("5")));
  EXPECT_THAT(
      raw.Rows("SELECT table_name, metadata_location, previous_metadata_location FROM "
               "iceberg_tables ORDER BY table_name"),
      ElementsAre(ElementsAre("java_t", "m-ours", "m-java"), ElementsAre("ours", "m1", "NULL")));
}

// PyIceberg and iceberg-rust write iceberg_type 'TABLE'; V0 clients on a V1 database leave it
// NULL; views carry 'VIEW' and are not tables.
TEST_F(SqliteCatalogTest, TreatsNullTypeAsTableAndIgnoresViews) {
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
  {
    RawDb raw(DbPath());
    raw.Exec(
        "INSERT INTO iceberg_tables VALUES ('geolake', 'db', 'legacy', 'm-null', NULL, "
        "NULL)");
    raw.Exec("INSERT INTO iceberg_tables VALUES ('geolake', 'db', 'v', 'view-m', NULL, 'VIEW')");
  }
  EXPECT_THAT(catalog->LoadTable(Id("db.legacy")), ::testing::Optional(std::string("m-null")));
  EXPECT_OK(catalog->CommitTable(Id("db.legacy"), "m-null", "m2"));
  EXPECT_THAT(catalog->LoadTable(Id("db.v")), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(catalog->CommitTable(Id("db.v"), "view-m", "x"), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(catalog->DropTable(Id("db.v")), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(catalog->CreateTable(Id("db.v"), "x"), IsError(ErrorCode::kAlreadyExists));
  ASSERT_OK_AND_ASSIGN(auto tables, catalog->ListTables(Ns("db")));
  EXPECT_THAT(tables, ElementsAre(Id("db.legacy")));
  ASSERT_OK(catalog->DropTable(Id("db.legacy")));
  EXPECT_THAT(catalog->DropNamespace(Ns("db")), IsErrorWith(ErrorCode::kInvalidArgument,
                                                            "not "
                                                            "empty"));
}

TEST_F(SqliteCatalogTest, OpenCatalogPicksBackendFromUri) {
  // No URI: <warehouse>/catalog.db, directories created.
  const std::string warehouse = dir_.Join("wh/nested");
  ASSERT_OK_AND_ASSIGN(auto by_default, OpenCatalog("", warehouse));
  EXPECT_TRUE(std::filesystem::exists(warehouse + "/catalog.db"));
  EXPECT_EQ(by_default->name(), "geolake");

  ASSERT_OK_AND_ASSIGN(auto explicit_path, OpenCatalog("sqlite:" + dir_.Join("x/c.db"), ""));
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("x/c.db")));

  EXPECT_THAT(OpenCatalog("mysql://u@h/db", warehouse),
              IsErrorWith(ErrorCode::kInvalidArgument, "expected sqlite:PATH or postgresql://"));
  EXPECT_THAT(OpenCatalog("sqlite:", warehouse), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(OpenCatalog("sqlite::memory:", warehouse), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(OpenCatalog("", ""), IsError(ErrorCode::kInvalidArgument));
  SqlCatalogOptions unnamed;
  unnamed.catalog_name = "";
  EXPECT_THAT(OpenCatalog("", warehouse, unnamed), IsError(ErrorCode::kInvalidArgument));
#if GEOLAKE_WITH_POSTGRES
  // Port 1 on localhost: nothing listens there.
  EXPECT_THAT(OpenCatalog("postgresql://nobody:secret@127.0.0.1:1/db?connect_timeout=2", ""),
              IsErrorWith(ErrorCode::kIOError, "cannot connect"));
#else
  EXPECT_THAT(OpenCatalog("postgresql://u@127.0.0.1:1/db", ""),
              IsError(ErrorCode::kNotImplemented));
#endif
}

// An unopenable path is an I/O error; a file that is not a database, or a damaged one, is
// corrupt data (issue 17, item 17: it was kIOError, exit 5).
TEST_F(SqliteCatalogTest, ReportsUnopenableFilesAsIOErrorAndDamagedOnesAsCorruptData) {
  EXPECT_THAT(OpenSqliteCatalog(dir_.Join("missing-dir/catalog.db")),
              IsErrorWith(ErrorCode::kIOError, "cannot open"));
  {
    std::ofstream junk(dir_.Join("junk.db"));
    junk << std::string(4096, 'x');
  }
  EXPECT_THAT(OpenSqliteCatalog(dir_.Join("junk.db")),
              IsErrorWith(ErrorCode::kCorruptData, "not a database"));
  EXPECT_THAT(OpenCatalogForReading("sqlite:" + dir_.Join("junk.db"), ""),
              IsErrorWith(ErrorCode::kCorruptData, "not a database"));
  // A real catalog cut short: its pages are gone.
  {
    ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
    ASSERT_OK(catalog->CreateNamespace(Ns("geo")));
    for (int i = 0; i < 200; ++i) {
      ASSERT_OK(catalog->CreateTable(Id("geo.t" + std::to_string(i)), std::string(500, 'm')));
    }
  }
  std::filesystem::resize_file(DbPath(), 4096 + 100);
  Result<std::unique_ptr<table::Catalog>> cut = OpenCatalog("sqlite:" + DbPath(), "");
  Status st = cut.ok() ? (*cut)->ListTables(Ns("geo")).status() : cut.status();
  EXPECT_THAT(st, IsError(ErrorCode::kCorruptData));
}

// Issue 17, item 15: describe, query and snapshots opened the catalog read-write and switched it
// to WAL, so a read-only warehouse failed them (exit 5), and a mistyped --warehouse or sqlite:
// path created folders and an empty catalog. A read opens nothing it does not find.
TEST_F(SqliteCatalogTest, ReadingOpensReadOnlyAndCreatesNothing) {
  const std::string missing = dir_.Join("no/such/dir/catalog.db");
  EXPECT_THAT(OpenCatalogForReading("sqlite:" + missing, ""),
              IsErrorWith(ErrorCode::kNotFound, missing));
  EXPECT_THAT(OpenCatalogForReading("", dir_.Join("typo-warehouse")),
              IsErrorWith(ErrorCode::kNotFound, "typo-warehouse/catalog.db"));
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("no")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("typo-warehouse")));

  // A catalog in rollback-journal mode (as another client may leave it) stays so: a read does
  // not switch it to WAL, writes nothing, and sees its tables.
  {
    ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
    ASSERT_OK(catalog->CreateNamespace(Ns("geo")));
    ASSERT_OK(catalog->CreateTable(Id("geo.t"), "m0"));
  }
  {
    RawDb raw(DbPath());
    raw.Exec("PRAGMA journal_mode=DELETE");
  }
  ASSERT_OK_AND_ASSIGN(auto reader, OpenCatalogForReading("sqlite:" + DbPath(), ""));
  EXPECT_THAT(reader->LoadTable(Id("geo.t")), ::testing::Optional(std::string("m0")));
  EXPECT_FALSE(std::filesystem::exists(DbPath() + "-wal"));
  {
    RawDb raw(DbPath());
    EXPECT_THAT(raw.Rows("PRAGMA journal_mode"), ElementsAre(ElementsAre("delete")));
  }
  // Writing through it is refused by the database before anything is applied.
  EXPECT_THAT(reader->CommitTable(Id("geo.t"), "m0", "m1"),
              IsErrorWith(ErrorCode::kIOError, "(not committed)"));
  EXPECT_TRUE(table::CommitNotApplied(reader->CommitTable(Id("geo.t"), "m0", "m1")));
  EXPECT_THAT(reader->LoadTable(Id("geo.t")), ::testing::Optional(std::string("m0")));
  // A database without the catalog tables is not given them.
  {
    RawDb empty(dir_.Join("empty.db"));
    empty.Exec("CREATE TABLE other (x)");
  }
  EXPECT_THAT(OpenCatalogForReading("sqlite:" + dir_.Join("empty.db"), ""),
              IsErrorWith(ErrorCode::kNotFound, "iceberg_tables does not exist"));
}

// A WAL database whose -shm file cannot be created (a read-only folder or mount) opens as
// immutable. Root ignores folder permissions, so the immutable open is checked directly.
TEST_F(SqliteCatalogTest, ImmutableOpenReadsAWalDatabaseWithoutItsShmFile) {
  {
    ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath()));
    ASSERT_OK(catalog->CreateNamespace(Ns("geo")));
    ASSERT_OK(catalog->CreateTable(Id("geo.t"), "m0"));
  }
  ASSERT_FALSE(std::filesystem::exists(DbPath() + "-shm"));  // removed by the last close
  sqlite::OpenOptions options;
  options.read_only = true;
  options.immutable = true;
  ASSERT_OK_AND_ASSIGN(auto db, sqlite::Database::Open(DbPath(), options));
  ASSERT_OK_AND_ASSIGN(auto stmt, db->Prepare("SELECT metadata_location FROM iceberg_tables"));
  ASSERT_OK_AND_ASSIGN(bool row, stmt->Step());
  EXPECT_TRUE(row);
  EXPECT_FALSE(std::filesystem::exists(DbPath() + "-shm"));
  EXPECT_FALSE(std::filesystem::exists(DbPath() + "-wal"));
}

TEST_F(SqliteCatalogTest, RejectsForeignTablesAndMissingTables) {
  SqlCatalogOptions no_init;
  no_init.init_catalog_tables = false;
  EXPECT_THAT(OpenSqliteCatalog(DbPath(), no_init),
              IsErrorWith(ErrorCode::kNotFound, "iceberg_tables does not exist"));
  {
    RawDb raw(DbPath());
    raw.Exec("CREATE TABLE iceberg_tables (catalog_name TEXT, table_name TEXT)");
  }
  EXPECT_THAT(OpenSqliteCatalog(DbPath()),
              IsErrorWith(ErrorCode::kCorruptData, "no column table_namespace"));
}

// Another client holds the write lock longer than our busy timeout: the commit fails with
// kIOError, not with a conflict, and the table is unchanged. SQLite refused the statement
// before applying it, so the outcome is known: "not committed" (issue 17, item 16: it said
// "outcome unknown").
TEST_F(SqliteCatalogTest, LockTimeoutIsIOErrorNotCommitted) {
  SqlCatalogOptions options;
  options.sqlite_busy_timeout_ms = 100;
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenSqliteCatalog(DbPath(), options));
  ASSERT_OK(catalog->CreateNamespace(Ns("geo")));
  ASSERT_OK(catalog->CreateTable(Id("geo.t"), "m0"));
  {
    RawDb raw(DbPath());
    raw.Exec("BEGIN IMMEDIATE");
    const Status locked = catalog->CommitTable(Id("geo.t"), "m0", "m1");
    EXPECT_THAT(locked, IsErrorWith(ErrorCode::kIOError, "(not committed)"));
    EXPECT_TRUE(table::CommitNotApplied(locked));
    EXPECT_THAT(catalog->CommitTable(Id("geo.t"), "m0", "m1"),
                IsErrorWith(ErrorCode::kIOError, "locked"));
    // Readers are not blocked by the writer in WAL mode.
    EXPECT_THAT(catalog->LoadTable(Id("geo.t")), ::testing::Optional(std::string("m0")));
    raw.Exec("ROLLBACK");
  }
  EXPECT_OK(catalog->CommitTable(Id("geo.t"), "m0", "m1"));
}

// 4 processes x 4 threads, each process with its own catalog and connections on one file.
TEST_F(SqliteCatalogTest, ProcessesRacingCommitsLoseNoSwap) {
  constexpr int kProcesses = 4;
  constexpr int kThreads = 4;
  constexpr int kCommitsPerThread = 25;
  constexpr int kTotal = kProcesses * kThreads * kCommitsPerThread;
  const std::string uri = "sqlite:" + DbPath();
  const TableIdentifier id = Id("race.t");
  {
    ASSERT_OK_AND_ASSIGN(auto catalog, OpenCatalog(uri, ""));
    ASSERT_OK(catalog->CreateNamespace(Ns("race")));
    ASSERT_OK(catalog->CreateTable(id, "s0-initial"));
  }  // closed before forking: a SQLite connection must not cross fork()
  const testing::RaceStats stats = testing::RaceCommitsInProcesses(
      uri, "geolake", id, kProcesses, kThreads, kCommitsPerThread, dir_.path());
  std::printf("[Sqlite] %d processes x %d threads x %d commits: %lld attempts, %lld conflicts\n",
              kProcesses, kThreads, kCommitsPerThread, static_cast<long long>(stats.attempts),
              static_cast<long long>(stats.conflicts));
  ASSERT_OK_AND_ASSIGN(auto catalog, OpenCatalog(uri, ""));
  ASSERT_OK_AND_ASSIGN(table::TableEntry entry, catalog->LoadTableEntry(id));
  EXPECT_EQ(testing::VerifyRace(stats, kTotal, entry), "");
}

}  // namespace
}  // namespace geolake::catalog
