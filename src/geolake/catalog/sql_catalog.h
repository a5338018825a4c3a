/// \file
/// SqlCatalog: the Catalog of table/catalog.h on a SQL database, with exactly the tables,
/// columns and statements of Apache Iceberg's JDBC catalog (iceberg_tables and
/// iceberg_namespace_properties, rows scoped by catalog_name; commit = the conditional UPDATE
/// ... WHERE metadata_location = <expected>). Spark, Trino, Flink and PyIceberg pointed at the
/// same database with the same catalog name see the same tables. Two drivers: SQLite (the
/// embedded default, `<warehouse>/catalog.db`) and PostgreSQL (many processes on many nodes).
/// OpenCatalog picks one from a URI.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/catalog/sql_connection.h"
#include "geolake/core/result.h"
#include "geolake/table/catalog.h"

namespace geolake::catalog {

/// \brief Settings of a SQL catalog.
struct SqlCatalogOptions {
  /// The catalog_name every row is scoped by (Iceberg's catalog name; PyIceberg and Spark must
  /// use the same name to see the same tables).
  std::string catalog_name = "geolake";
  /// Run CREATE TABLE IF NOT EXISTS for both catalog tables when opening (Java's
  /// jdbc.init-catalog-tables, PyIceberg's init_catalog_tables).
  bool init_catalog_tables = true;
  /// SQLite: how long a statement waits for another connection's lock before failing.
  int sqlite_busy_timeout_ms = 60000;
  /// Connections kept open for reuse; more are opened while many threads are busy at once.
  std::size_t max_idle_connections = 8;
  /// For commands that only read (describe, query, snapshots, files): nothing is created or
  /// changed by opening. No folder, database file or catalog table is created (a missing
  /// database is kNotFound naming its path), SQLite is opened read-only without switching the
  /// journal mode, and a WAL database in a folder nobody may write is read as immutable. Writes
  /// through such a catalog fail (kIOError, "not committed" for CommitTable).
  bool read_only = false;
};

/// Opens a new connection to the catalog's database.
using SqlConnectionFactory = std::function<Result<std::unique_ptr<SqlConnection>>()>;

/// \brief The Iceberg JDBC catalog on SQLite or PostgreSQL.
///
/// Thread-safety: all methods are safe to call concurrently. Each call borrows one connection
/// from a small pool (opening one when none is idle), so concurrent calls run on separate
/// connections; the database serializes commits. Several processes may share the database.
///
/// Schema: opening creates the V1 layout (with iceberg_type) if the tables are missing. On an
/// existing database without iceberg_type (Java's default V0 layout) the catalog leaves the
/// schema alone and uses the V0 statements; rows whose iceberg_type is NULL are tables.
class SqlCatalog final : public table::Catalog {
 public:
  /// \brief Open a catalog on the database that `factory` connects to. `description` names the
  /// database in error messages (no passwords). Errors: those of the factory; kIOError when the
  /// catalog tables cannot be created; kCorruptData when an existing iceberg_tables or
  /// iceberg_namespace_properties lacks a required column.
  static Result<std::unique_ptr<SqlCatalog>> Open(std::string description,
                                                  SqlConnectionFactory factory,
                                                  const SqlCatalogOptions& options);

  ~SqlCatalog() override;

  const std::string& name() const override { return options_.catalog_name; }

  /// \brief Whether iceberg_tables has the iceberg_type column (Iceberg JDBC schema V1).
  bool has_iceberg_type_column() const { return has_type_column_; }

  /// \brief "sqlite:/path/catalog.db" or the PostgreSQL URI without password.
  const std::string& description() const { return description_; }

  Status CreateNamespace(const table::Namespace& ns,
                         const table::NamespaceProperties& properties) override;
  using table::Catalog::CreateNamespace;
  Result<std::vector<table::Namespace>> ListNamespaces(const table::Namespace& parent) override;
  Result<bool> NamespaceExists(const table::Namespace& ns) override;
  Status DropNamespace(const table::Namespace& ns) override;
  Result<table::NamespaceProperties> LoadNamespaceProperties(const table::Namespace& ns) override;
  Status UpdateNamespaceProperties(const table::Namespace& ns,
                                   const table::NamespaceProperties& updates,
                                   const std::vector<std::string>& removals) override;

  Status CreateTable(const table::TableIdentifier& id,
                     const std::string& metadata_location) override;
  Result<std::string> LoadTable(const table::TableIdentifier& id) override;
  Result<table::TableEntry> LoadTableEntry(const table::TableIdentifier& id) override;
  Result<bool> TableExists(const table::TableIdentifier& id) override;
  Result<std::vector<table::TableIdentifier>> ListTables(const table::Namespace& ns) override;
  Status DropTable(const table::TableIdentifier& id) override;
  Status RenameTable(const table::TableIdentifier& from, const table::TableIdentifier& to) override;
  Status CommitTable(const table::TableIdentifier& id,
                     const std::string& expected_metadata_location,
                     const std::string& new_metadata_location) override;

 private:
  class Lease;
  struct Statements;

  SqlCatalog(std::string description, SqlConnectionFactory factory, SqlCatalogOptions options);

  Result<Lease> Acquire();
  void Release(std::unique_ptr<SqlConnection> conn);
  Status InitSchema(SqlConnection& conn);
  Result<bool> NamespaceExistsOn(SqlConnection& conn, const table::Namespace& ns);
  Result<std::vector<table::Namespace>> ChildNamespacesOn(SqlConnection& conn,
                                                          const table::Namespace& parent);
  Result<std::optional<table::TableEntry>> LoadEntryOn(SqlConnection& conn,
                                                       const table::TableIdentifier& id);
  Status Context(Status st, std::string_view what) const;

  const std::string description_;
  const SqlConnectionFactory factory_;
  const SqlCatalogOptions options_;
  bool has_type_column_ = false;           // set once in Open, then read-only
  std::unique_ptr<const Statements> sql_;  // set once in Open, then read-only

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<SqlConnection>> idle_;  // guarded by pool_mu_
};

/// \brief Open the SQL catalog in the SQLite file `path`, creating the file (not its parent
/// directories) if absent. Errors: kIOError with SQLite's message.
Result<std::unique_ptr<SqlCatalog>> OpenSqliteCatalog(const std::string& path,
                                                      const SqlCatalogOptions& options = {});

/// \brief Open the SQL catalog on the PostgreSQL server at `uri`
/// (postgresql://user[:password]@host:port/db). kNotImplemented when geolake was built without
/// PostgreSQL support (GEOLAKE_WITH_POSTGRES=OFF); kIOError when the server is unreachable.
Result<std::unique_ptr<SqlCatalog>> OpenPostgresCatalog(const std::string& uri,
                                                        const SqlCatalogOptions& options = {});

/// \brief Open the catalog named by `uri`:
///   ""                       -> SQLite at `<warehouse>/catalog.db` (directories created
///                               unless options.read_only)
///   "sqlite:PATH"            -> SQLite at PATH (parent directories created, ditto)
///   "postgresql://..." or "postgres://..." -> PostgreSQL
/// Anything else is kInvalidArgument naming the accepted forms.
Result<std::unique_ptr<table::Catalog>> OpenCatalog(std::string_view uri,
                                                    const std::string& warehouse,
                                                    const SqlCatalogOptions& options = {});

/// \brief OpenCatalog with options.read_only: for commands that only read.
Result<std::unique_ptr<table::Catalog>> OpenCatalogForReading(std::string_view uri,
                                                              const std::string& warehouse);

/// \brief `uri` with any password replaced by "***", for messages and logs.
std::string RedactUri(std::string_view uri);

}  // namespace geolake::catalog
