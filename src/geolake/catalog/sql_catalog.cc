#include "geolake/catalog/sql_catalog.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "geolake/catalog/sql_statements.h"
#include "geolake/catalog/sqlite/sqlite_connection.h"
#if GEOLAKE_WITH_POSTGRES
#include "geolake/catalog/postgres/postgres_connection.h"
#endif

namespace geolake::catalog {

using table::Namespace;
using table::NamespaceProperties;
using table::TableEntry;
using table::TableIdentifier;

namespace {

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string TableWhat(const TableIdentifier& id) { return "table " + Quoted(id.ToString()); }
std::string NamespaceWhat(const Namespace& ns) { return "namespace " + Quoted(ns.ToString()); }

Status NoSuchNamespace(const Namespace& ns) {
  return Status::NotFound(NamespaceWhat(ns) + ": does not exist");
}
Status NoSuchTable(const TableIdentifier& id) {
  return Status::NotFound(TableWhat(id) + ": does not exist");
}

/// Rolls back on scope exit unless committed. A failed rollback leaves the connection inside a
/// transaction; the pool's health check then discards it.
class Transaction {
 public:
  explicit Transaction(SqlConnection& conn) : conn_(conn) {}
  ~Transaction() {
    if (active_) {
      Status ignored = conn_.Rollback();
      (void)ignored;  // the original error is what the caller reports
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status Begin() {
    GEOLAKE_RETURN_NOT_OK(conn_.BeginWrite());
    active_ = true;
    return Status::OK();
  }
  Status Commit() {
    active_ = false;
    return conn_.Commit();
  }

 private:
  SqlConnection& conn_;
  bool active_ = false;
};

}  // namespace

/// The statements on table rows, with or without the V1 type filter.
struct SqlCatalog::Statements {
  std::string insert_table;
  std::string load_table;
  std::string commit_table;
  std::string rename_table;
  std::string drop_table;
  std::string list_tables;
};

/// A connection borrowed from the pool; returned on destruction if still healthy.
class SqlCatalog::Lease {
 public:
  Lease(SqlCatalog* owner, std::unique_ptr<SqlConnection> conn)
      : owner_(owner), conn_(std::move(conn)) {}
  Lease(Lease&& other) noexcept = default;
  Lease& operator=(Lease&&) = delete;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() {
    if (conn_ != nullptr) owner_->Release(std::move(conn_));
  }
  SqlConnection& operator*() { return *conn_; }
  SqlConnection* operator->() { return conn_.get(); }

 private:
  SqlCatalog* owner_;
  std::unique_ptr<SqlConnection> conn_;
};

SqlCatalog::SqlCatalog(std::string description, SqlConnectionFactory factory,
                       SqlCatalogOptions options)
    : description_(std::move(description)),
      factory_(std::move(factory)),
      options_(std::move(options)) {}

SqlCatalog::~SqlCatalog() = default;

Result<std::unique_ptr<SqlCatalog>> SqlCatalog::Open(std::string description,
                                                     SqlConnectionFactory factory,
                                                     const SqlCatalogOptions& options) {
  if (options.catalog_name.empty()) {
    return Status::InvalidArgument("catalog " + description + ": empty catalog name");
  }
  std::unique_ptr<SqlCatalog> catalog(
      new SqlCatalog(std::move(description), std::move(factory), options));  // private ctor
  {
    GEOLAKE_ASSIGN_OR_RETURN(Lease conn, catalog->Acquire());
    GEOLAKE_RETURN_NOT_OK_CTX(catalog->InitSchema(*conn), "catalog " + catalog->description_);
  }
  return catalog;
}

Status SqlCatalog::InitSchema(SqlConnection& conn) {
  if (options_.init_catalog_tables && !options_.read_only) {
    for (const std::string_view ddl :
         {sql::kCreateTablesTable, sql::kCreateNamespacePropertiesTable}) {
      // PostgreSQL: two sessions running CREATE TABLE IF NOT EXISTS at the same moment can
      // both pass the existence check, and the loser fails with a unique violation on
      // pg_type. The table exists then, which is all we wanted; a second attempt confirms it.
      Status st;
      for (int attempt = 0; attempt < 3; ++attempt) {
        st = conn.Execute(ddl, {}).status();
        if (st.code() != ErrorCode::kAlreadyExists) break;
      }
      if (st.code() != ErrorCode::kAlreadyExists) GEOLAKE_RETURN_NOT_OK(st);
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<std::string> table_columns,
                           conn.ColumnNames("iceberg_tables"));
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<std::string> property_columns,
                           conn.ColumnNames("iceberg_namespace_properties"));
  auto check = [](const std::vector<std::string>& have, std::span<const std::string_view> need,
                  std::string_view table) -> Status {
    if (have.empty()) {
      return Status::NotFound(std::string("table ") + std::string(table) +
                              " does not exist (open with init_catalog_tables to create it)");
    }
    for (const std::string_view column : need) {
      if (std::find(have.begin(), have.end(), column) == have.end()) {
        return Status::CorruptData(std::string("table ") + std::string(table) + " has no column " +
                                   std::string(column));
      }
    }
    return Status::OK();
  };
  GEOLAKE_RETURN_NOT_OK(check(table_columns, sql::kTablesColumns, "iceberg_tables"));
  GEOLAKE_RETURN_NOT_OK(
      check(property_columns, sql::kNamespacePropertiesColumns, "iceberg_namespace_properties"));
  has_type_column_ =
      std::find(table_columns.begin(), table_columns.end(), "iceberg_type") != table_columns.end();

  auto filtered = [&](std::string_view base) {
    std::string out(base);
    if (has_type_column_) out += sql::kTableTypeFilter;
    return out;
  };
  auto statements = std::make_unique<Statements>();
  statements->insert_table =
      std::string(has_type_column_ ? sql::kInsertTableV1 : sql::kInsertTableV0);
  statements->load_table = filtered(sql::kLoadTable);
  statements->commit_table = filtered(sql::kCommitTable);
  statements->rename_table = filtered(sql::kRenameTable);
  statements->drop_table = filtered(sql::kDropTable);
  statements->list_tables = filtered(sql::kListTables);
  sql_ = std::move(statements);
  return Status::OK();
}

// ---- Pool -------------------------------------------------------------------------------------

Result<SqlCatalog::Lease> SqlCatalog::Acquire() {
  {
    std::lock_guard lock(pool_mu_);
    if (!idle_.empty()) {
      std::unique_ptr<SqlConnection> conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(conn));
    }
  }
  // Connect outside the lock: a PostgreSQL connect takes milliseconds and other threads may
  // be returning connections meanwhile.
  Result<std::unique_ptr<SqlConnection>> conn = factory_();
  if (!conn.ok()) return std::move(conn).status().WithContext("catalog " + description_);
  if (*conn == nullptr) return Status::Internal("catalog " + description_ + ": null connection");
  return Lease(this, std::move(*conn));
}

void SqlCatalog::Release(std::unique_ptr<SqlConnection> conn) {
  if (!conn->healthy()) return;  // closed here; the next Acquire opens a fresh one
  std::lock_guard lock(pool_mu_);
  if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(conn));
}

Status SqlCatalog::Context(Status st, std::string_view what) const {
  if (st.ok()) return st;
  return std::move(st).WithContext(std::string(what));
}

// ---- Namespaces -------------------------------------------------------------------------------

Result<bool> SqlCatalog::NamespaceExistsOn(SqlConnection& conn, const Namespace& ns) {
  const std::string ns_text = ns.ToString();
  const SqlValue params[] = {options_.catalog_name, ns_text, sql::NamespaceLikePattern(ns_text)};
  for (const std::string_view query :
       {sql::kTableNamespaceExists, sql::kPropertiesNamespaceExists}) {
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, conn.Query(query, params));
    if (!rows.empty()) return true;
  }
  return false;
}

Result<std::vector<Namespace>> SqlCatalog::ChildNamespacesOn(SqlConnection& conn,
                                                             const Namespace& parent) {
  std::vector<std::vector<SqlRow>> results;
  if (parent.empty()) {
    const SqlValue params[] = {options_.catalog_name};
    for (const std::string_view query :
         {sql::kListAllTableNamespaces, sql::kListAllPropertiesNamespaces}) {
      GEOLAKE_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, conn.Query(query, params));
      results.push_back(std::move(rows));
    }
  } else {
    const SqlValue params[] = {options_.catalog_name, sql::NamespaceLikePattern(parent.ToString())};
    for (const std::string_view query :
         {sql::kListTableNamespacesLike, sql::kListPropertiesNamespacesLike}) {
      GEOLAKE_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, conn.Query(query, params));
      results.push_back(std::move(rows));
    }
  }
  std::set<Namespace> children;
  for (const std::vector<SqlRow>& rows : results) {
    for (const SqlRow& row : rows) {
      if (row.empty() || !row[0]) continue;
      // Read tolerantly: another client may have written a namespace we consider invalid
      // ("a..b"); it is skipped rather than failing the whole listing.
      Result<Namespace> ns = Namespace::Parse(*row[0]);
      if (!ns.ok() || ns->levels.size() <= parent.levels.size() || !parent.Contains(*ns)) {
        continue;
      }
      ns->levels.resize(parent.levels.size() + 1);
      children.insert(std::move(*ns));
    }
  }
  return std::vector<Namespace>(children.begin(), children.end());
}

Status SqlCatalog::CreateNamespace(const Namespace& ns, const NamespaceProperties& properties) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateNamespace(ns));
  const std::string what = "create " + NamespaceWhat(ns);
  if (properties.count(std::string(sql::kExistsProperty)) > 0) {
    return Status::InvalidArgument(what + ": property 'exists' is reserved");
  }
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Transaction txn(*conn);
  GEOLAKE_RETURN_NOT_OK(Context(txn.Begin(), what));
  Result<bool> exists = NamespaceExistsOn(*conn, ns);
  if (!exists.ok()) return Context(std::move(exists).status(), what);
  if (*exists) return Status::AlreadyExists(NamespaceWhat(ns) + ": already exists");
  const std::string ns_text = ns.ToString();
  // Like Java's JdbcCatalog, always record ("exists", "true"), so a namespace created without
  // properties still has a row.
  NamespaceProperties rows = properties;
  rows.emplace(std::string(sql::kExistsProperty), "true");
  for (const auto& [key, value] : rows) {
    const SqlValue params[] = {options_.catalog_name, ns_text, key, value};
    Status st = conn->Execute(sql::kInsertProperty, params).status();
    if (st.code() == ErrorCode::kAlreadyExists) {
      // A concurrent creator (PostgreSQL; SQLite's BEGIN IMMEDIATE serializes) got there first.
      return Status::AlreadyExists(NamespaceWhat(ns) + ": already exists");
    }
    GEOLAKE_RETURN_NOT_OK(Context(std::move(st), what));
  }
  return Context(txn.Commit(), what);
}

Result<std::vector<Namespace>> SqlCatalog::ListNamespaces(const Namespace& parent) {
  if (!parent.empty()) GEOLAKE_RETURN_NOT_OK(table::ValidateNamespace(parent));
  const std::string what = "list namespaces in " + NamespaceWhat(parent);
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  if (!parent.empty()) {
    Result<bool> exists = NamespaceExistsOn(*conn, parent);
    if (!exists.ok()) return Context(std::move(exists).status(), what);
    if (!*exists) return NoSuchNamespace(parent);
  }
  Result<std::vector<Namespace>> children = ChildNamespacesOn(*conn, parent);
  if (!children.ok()) return Context(std::move(children).status(), what);
  return children;
}

Result<bool> SqlCatalog::NamespaceExists(const Namespace& ns) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateNamespace(ns));
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Result<bool> exists = NamespaceExistsOn(*conn, ns);
  if (!exists.ok()) return Context(std::move(exists).status(), "check " + NamespaceWhat(ns));
  return exists;
}

Status SqlCatalog::DropNamespace(const Namespace& ns) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateNamespace(ns));
  const std::string what = "drop " + NamespaceWhat(ns);
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Transaction txn(*conn);
  GEOLAKE_RETURN_NOT_OK(Context(txn.Begin(), what));
  Result<bool> exists = NamespaceExistsOn(*conn, ns);
  if (!exists.ok()) return Context(std::move(exists).status(), what);
  if (!*exists) return NoSuchNamespace(ns);
  const std::string ns_text = ns.ToString();
  {
    const SqlValue params[] = {options_.catalog_name, ns_text};
    Result<std::vector<SqlRow>> tables = conn->Query(sql::kNamespaceHasTables, params);
    if (!tables.ok()) return Context(std::move(tables).status(), what);
    if (!tables->empty()) return Status::InvalidArgument(NamespaceWhat(ns) + " is not empty");
  }
  Result<std::vector<Namespace>> children = ChildNamespacesOn(*conn, ns);
  if (!children.ok()) return Context(std::move(children).status(), what);
  if (!children->empty()) return Status::InvalidArgument(NamespaceWhat(ns) + " is not empty");
  const SqlValue params[] = {options_.catalog_name, ns_text};
  GEOLAKE_RETURN_NOT_OK(Context(conn->Execute(sql::kDeleteNamespace, params).status(), what));
  return Context(txn.Commit(), what);
}

Result<NamespaceProperties> SqlCatalog::LoadNamespaceProperties(const Namespace& ns) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateNamespace(ns));
  const std::string what = "load properties of " + NamespaceWhat(ns);
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Result<bool> exists = NamespaceExistsOn(*conn, ns);
  if (!exists.ok()) return Context(std::move(exists).status(), what);
  if (!*exists) return NoSuchNamespace(ns);
  const SqlValue params[] = {options_.catalog_name, ns.ToString()};
  Result<std::vector<SqlRow>> rows = conn->Query(sql::kLoadProperties, params);
  if (!rows.ok()) return Context(std::move(rows).status(), what);
  NamespaceProperties properties;
  for (SqlRow& row : *rows) {
    if (row.size() < 2 || !row[0] || *row[0] == sql::kExistsProperty) continue;
    properties[std::move(*row[0])] = row[1] ? std::move(*row[1]) : std::string();
  }
  return properties;
}

Status SqlCatalog::UpdateNamespaceProperties(const Namespace& ns,
                                             const NamespaceProperties& updates,
                                             const std::vector<std::string>& removals) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateNamespace(ns));
  const std::string what = "update properties of " + NamespaceWhat(ns);
  const std::string exists_key(sql::kExistsProperty);
  if (updates.count(exists_key) > 0) {
    return Status::InvalidArgument(what + ": property 'exists' is reserved");
  }
  for (const std::string& key : removals) {
    if (key == exists_key) return Status::InvalidArgument(what + ": property 'exists' is reserved");
    if (updates.count(key) > 0) {
      return Status::InvalidArgument(what + ": property " + Quoted(key) + " both set and removed");
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Transaction txn(*conn);
  GEOLAKE_RETURN_NOT_OK(Context(txn.Begin(), what));
  Result<bool> exists = NamespaceExistsOn(*conn, ns);
  if (!exists.ok()) return Context(std::move(exists).status(), what);
  if (!*exists) return NoSuchNamespace(ns);
  const std::string ns_text = ns.ToString();
  for (const std::string& key : removals) {
    const SqlValue params[] = {options_.catalog_name, ns_text, key};
    GEOLAKE_RETURN_NOT_OK(Context(conn->Execute(sql::kDeleteProperty, params).status(), what));
  }
  for (const auto& [key, value] : updates) {
    const SqlValue update_params[] = {value, options_.catalog_name, ns_text, key};
    Result<std::int64_t> changed = conn->Execute(sql::kUpdateProperty, update_params);
    if (!changed.ok()) return Context(std::move(changed).status(), what);
    if (*changed > 0) continue;
    const SqlValue insert_params[] = {options_.catalog_name, ns_text, key, value};
    Status st = conn->Execute(sql::kInsertProperty, insert_params).status();
    if (st.code() == ErrorCode::kAlreadyExists) {
      // PostgreSQL under READ COMMITTED: another session inserted the key after our UPDATE.
      return Status::CommitConflict(what + ": property " + Quoted(key) +
                                    " was set concurrently; retry");
    }
    GEOLAKE_RETURN_NOT_OK(Context(std::move(st), what));
  }
  return Context(txn.Commit(), what);
}

// ---- Tables -----------------------------------------------------------------------------------

Result<std::optional<TableEntry>> SqlCatalog::LoadEntryOn(SqlConnection& conn,
                                                          const TableIdentifier& id) {
  const SqlValue params[] = {options_.catalog_name, id.ns.ToString(), id.name};
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, conn.Query(sql_->load_table, params));
  if (rows.empty()) return std::optional<TableEntry>();
  const SqlRow& row = rows.front();
  if (row.size() < 2 || !row[0] || row[0]->empty()) {
    return Status::CorruptData(TableWhat(id) + ": catalog row has no metadata_location");
  }
  TableEntry entry;
  entry.metadata_location = *row[0];
  entry.previous_metadata_location = row[1].value_or("");
  return std::optional<TableEntry>(std::move(entry));
}

Status SqlCatalog::CreateTable(const TableIdentifier& id, const std::string& metadata_location) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateIdentifier(id));
  const std::string what = "create " + TableWhat(id);
  if (metadata_location.empty()) {
    return Status::InvalidArgument(what + ": empty metadata location");
  }
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Result<bool> ns_exists = NamespaceExistsOn(*conn, id.ns);
  if (!ns_exists.ok()) return Context(std::move(ns_exists).status(), what);
  if (!*ns_exists) return NoSuchNamespace(id.ns).WithContext(what);
  const SqlValue params[] = {options_.catalog_name, id.ns.ToString(), id.name, metadata_location};
  Result<std::int64_t> inserted = conn->Execute(sql_->insert_table, params);
  if (inserted.status().code() == ErrorCode::kAlreadyExists) {
    return Status::AlreadyExists(TableWhat(id) + ": already exists");
  }
  if (!inserted.ok()) return Context(std::move(inserted).status(), what);
  if (*inserted != 1) {
    return Status::IOError(what + ": insert changed " + std::to_string(*inserted) + " rows");
  }
  return Status::OK();
}

Result<std::string> SqlCatalog::LoadTable(const TableIdentifier& id) {
  GEOLAKE_ASSIGN_OR_RETURN(TableEntry entry, LoadTableEntry(id));
  return std::move(entry.metadata_location);
}

Result<TableEntry> SqlCatalog::LoadTableEntry(const TableIdentifier& id) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateIdentifier(id));
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Result<std::optional<TableEntry>> entry = LoadEntryOn(*conn, id);
  if (!entry.ok()) return Context(std::move(entry).status(), "load " + TableWhat(id));
  if (!entry->has_value()) return NoSuchTable(id);
  return std::move(**entry);
}

Result<bool> SqlCatalog::TableExists(const TableIdentifier& id) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateIdentifier(id));
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Result<std::optional<TableEntry>> entry = LoadEntryOn(*conn, id);
  if (!entry.ok()) return Context(std::move(entry).status(), "check " + TableWhat(id));
  return entry->has_value();
}

Result<std::vector<TableIdentifier>> SqlCatalog::ListTables(const Namespace& ns) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateNamespace(ns));
  const std::string what = "list tables in " + NamespaceWhat(ns);
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Result<bool> exists = NamespaceExistsOn(*conn, ns);
  if (!exists.ok()) return Context(std::move(exists).status(), what);
  if (!*exists) return NoSuchNamespace(ns);
  const SqlValue params[] = {options_.catalog_name, ns.ToString()};
  Result<std::vector<SqlRow>> rows = conn->Query(sql_->list_tables, params);
  if (!rows.ok()) return Context(std::move(rows).status(), what);
  std::vector<TableIdentifier> tables;
  for (SqlRow& row : *rows) {
    if (row.empty() || !row[0]) continue;
    tables.push_back(TableIdentifier{ns, std::move(*row[0])});
  }
  // Sorted here, not by ORDER BY: PostgreSQL's collation may order names differently from
  // SQLite's byte order, and callers should see one order.
  std::sort(tables.begin(), tables.end());
  return tables;
}

Status SqlCatalog::DropTable(const TableIdentifier& id) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateIdentifier(id));
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  const SqlValue params[] = {options_.catalog_name, id.ns.ToString(), id.name};
  Result<std::int64_t> deleted = conn->Execute(sql_->drop_table, params);
  if (!deleted.ok()) return Context(std::move(deleted).status(), "drop " + TableWhat(id));
  if (*deleted == 0) return NoSuchTable(id);
  return Status::OK();
}

Status SqlCatalog::RenameTable(const TableIdentifier& from, const TableIdentifier& to) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateIdentifier(from));
  GEOLAKE_RETURN_NOT_OK(table::ValidateIdentifier(to));
  const std::string what = "rename " + TableWhat(from) + " to " + Quoted(to.ToString());
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  Result<bool> ns_exists = NamespaceExistsOn(*conn, to.ns);
  if (!ns_exists.ok()) return Context(std::move(ns_exists).status(), what);
  if (!*ns_exists) return NoSuchNamespace(to.ns).WithContext(what);
  const SqlValue params[] = {to.ns.ToString(), to.name, options_.catalog_name, from.ns.ToString(),
                             from.name};
  // The primary key makes the UPDATE fail when `to` exists (as a table or a view), so no
  // separate existence check can race with it.
  Result<std::int64_t> changed = conn->Execute(sql_->rename_table, params);
  if (changed.status().code() == ErrorCode::kAlreadyExists) {
    return Status::AlreadyExists(what + ": " + TableWhat(to) + " already exists");
  }
  if (!changed.ok()) return Context(std::move(changed).status(), what);
  if (*changed == 0) return NoSuchTable(from).WithContext(what);
  return Status::OK();
}

Status SqlCatalog::CommitTable(const TableIdentifier& id,
                               const std::string& expected_metadata_location,
                               const std::string& new_metadata_location) {
  GEOLAKE_RETURN_NOT_OK(table::ValidateIdentifier(id));
  const std::string what = "commit " + TableWhat(id);
  if (new_metadata_location.empty()) {
    return Status::InvalidArgument(what + ": empty metadata location");
  }
  GEOLAKE_ASSIGN_OR_RETURN(Lease conn, Acquire());
  // One statement: the database evaluates the WHERE on the latest committed row version under
  // its write lock (SQLite) or row lock (PostgreSQL, READ COMMITTED re-checks the WHERE after
  // waiting for a concurrent updater), so exactly one of several racing writers sees 1 row.
  const SqlValue params[] = {new_metadata_location,
                             expected_metadata_location,
                             options_.catalog_name,
                             id.ns.ToString(),
                             id.name,
                             expected_metadata_location};
  Result<std::int64_t> changed = conn->Execute(sql_->commit_table, params);
  if (!changed.ok()) {
    // A refusal by the database (locked, read-only, full) is a known outcome: not committed.
    const bool nothing = conn->LastFailureChangedNothing();
    return Context(
        std::move(changed).status(),
        what + " " + (nothing ? std::string(table::kNotCommittedMark) : "(outcome unknown)"));
  }
  if (*changed == 1) return Status::OK();
  if (*changed > 1) {
    return Status::Internal(what + ": " + std::to_string(*changed) + " rows changed");
  }
  // Zero rows: either the table is gone or another writer won. Which one is only for the
  // message and the error code; the commit has failed either way.
  Result<std::optional<TableEntry>> entry = LoadEntryOn(*conn, id);
  if (!entry.ok()) return Context(std::move(entry).status(), what);
  if (!entry->has_value()) return NoSuchTable(id).WithContext(what);
  return Status::CommitConflict(what + ": metadata location is " + (*entry)->metadata_location +
                                ", expected " + expected_metadata_location);
}

// ---- Factories --------------------------------------------------------------------------------

std::string RedactUri(std::string_view uri) {
  const std::size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) return std::string(uri);
  const std::size_t auth_start = scheme_end + 3;
  const std::size_t auth_end = uri.find_first_of("/?", auth_start);
  const std::string_view authority =
      uri.substr(auth_start, auth_end == std::string_view::npos ? std::string_view::npos
                                                                : auth_end - auth_start);
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(uri);
  const std::size_t colon = authority.find(':');
  if (colon == std::string_view::npos || colon > at) return std::string(uri);
  std::string out(uri.substr(0, auth_start + colon + 1));
  out += "***";
  out += uri.substr(auth_start + at);
  return out;
}

Result<std::unique_ptr<SqlCatalog>> OpenSqliteCatalog(const std::string& path,
                                                      const SqlCatalogOptions& options) {
  const int busy_timeout_ms = options.sqlite_busy_timeout_ms;
  const bool read_only = options.read_only;
  return SqlCatalog::Open(
      "sqlite:" + path,
      [path, busy_timeout_ms, read_only]() {
        return OpenSqliteConnection(path, busy_timeout_ms, read_only);
      },
      options);
}

Result<std::unique_ptr<SqlCatalog>> OpenPostgresCatalog(const std::string& uri,
                                                        const SqlCatalogOptions& options) {
#if GEOLAKE_WITH_POSTGRES
  return SqlCatalog::Open(
      RedactUri(uri), [uri]() { return OpenPostgresConnection(uri); }, options);
#else
  (void)options;
  return Status::NotImplemented("catalog " + RedactUri(uri) +
                                ": geolake was built without PostgreSQL support "
                                "(configure with -DGEOLAKE_WITH_POSTGRES=ON)");
#endif
}

Result<std::unique_ptr<table::Catalog>> OpenCatalog(std::string_view uri,
                                                    const std::string& warehouse,
                                                    const SqlCatalogOptions& options) {
  std::string path;
  if (uri.empty()) {
    if (warehouse.empty()) {
      return Status::InvalidArgument("catalog: no catalog URI and no warehouse to put one in");
    }
    path = (std::filesystem::path(warehouse) / "catalog.db").string();
  } else if (uri.starts_with("postgresql://") || uri.starts_with("postgres://")) {
    GEOLAKE_ASSIGN_OR_RETURN(auto catalog, OpenPostgresCatalog(std::string(uri), options));
    return std::unique_ptr<table::Catalog>(std::move(catalog));
  } else if (uri.starts_with("sqlite:")) {
    path = std::string(uri.substr(7));
    if (path.empty() || path.starts_with("//") || path == ":memory:") {
      return Status::InvalidArgument("catalog URI " + Quoted(uri) +
                                     ": expected sqlite:PATH with a file path, e.g. "
                                     "sqlite:/data/catalog.db or sqlite:catalog.db");
    }
  } else {
    return Status::InvalidArgument("catalog URI " + Quoted(RedactUri(uri)) +
                                   ": expected sqlite:PATH or postgresql://user@host:port/db");
  }
  if (options.read_only) {
    // A read never creates anything: a mistyped --warehouse or sqlite: path is reported, not
    // turned into an empty catalog.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return Status::NotFound("catalog sqlite:" + path +
                              " does not exist (nothing was created; check --warehouse or "
                              "--catalog)");
    }
    GEOLAKE_ASSIGN_OR_RETURN(auto catalog, OpenSqliteCatalog(path, options));
    return std::unique_ptr<table::Catalog>(std::move(catalog));
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::IOError("catalog sqlite:" + path + ": cannot create directory " +
                             parent.string() + ": " + ec.message());
    }
  }
  GEOLAKE_ASSIGN_OR_RETURN(auto catalog, OpenSqliteCatalog(path, options));
  return std::unique_ptr<table::Catalog>(std::move(catalog));
}

Result<std::unique_ptr<table::Catalog>> OpenCatalogForReading(std::string_view uri,
                                                              const std::string& warehouse) {
  SqlCatalogOptions options;
  options.read_only = true;
  return OpenCatalog(uri, warehouse, options);
}

}  // namespace geolake::catalog
