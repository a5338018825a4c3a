#include "geolake/catalog/sqlite/sqlite_connection.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>
#include <unordered_map>
#include <utility>

#include "geolake/sqlite/sqlite.h"

namespace geolake::catalog {

namespace {

/// Resets a statement when a run ends, however it ends, so the cached statement releases its
/// read transaction and can be bound again.
class StmtResetter {
 public:
  explicit StmtResetter(sqlite::Statement* stmt) : stmt_(stmt) {}
  ~StmtResetter() { stmt_->Reset(); }
  StmtResetter(const StmtResetter&) = delete;
  StmtResetter& operator=(const StmtResetter&) = delete;

 private:
  sqlite::Statement* stmt_;
};

class SqliteConnection final : public SqlConnection {
 public:
  explicit SqliteConnection(std::unique_ptr<sqlite::Database> db) : db_(std::move(db)) {}

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    std::span<const SqlValue> params) override {
    GEOLAKE_ASSIGN_OR_RETURN(sqlite::Statement * stmt, Prepare(sql, params));
    StmtResetter resetter(stmt);
    std::vector<SqlRow> rows;
    const int columns = stmt->column_count();
    while (true) {
      GEOLAKE_ASSIGN_OR_RETURN(bool has_row, stmt->Step());
      if (!has_row) break;
      SqlRow row;
      row.reserve(static_cast<std::size_t>(columns));
      for (int col = 0; col < columns; ++col) {
        if (stmt->column_type(col) == sqlite::ValueType::kNull) {
          row.emplace_back(std::nullopt);
          continue;
        }
        std::string_view text;
        if (!stmt->ColumnText(col, &text)) {
          return Status::IOError("sqlite " + db_->path() +
                                 ": out of memory reading a cell in: " + std::string(sql));
        }
        row.emplace_back(std::string(text));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Result<std::int64_t> Execute(std::string_view sql, std::span<const SqlValue> params) override {
    last_failure_changed_nothing_ = false;
    Result<sqlite::Statement*> stmt = Prepare(sql, params);
    if (!stmt.ok()) {
      last_failure_changed_nothing_ = true;  // never ran
      return std::move(stmt).status();
    }
    StmtResetter resetter(*stmt);
    // Rows, e.g. of a PRAGMA reporting its value, are skipped.
    if (Status ran = (*stmt)->Run(); !ran.ok()) {
      // An autocommit statement that SQLite refused before writing its commit record changed
      // nothing; an I/O error or corruption may strike after the record reached the WAL.
      last_failure_changed_nothing_ = db_->last_error_changed_nothing() && db_->autocommit();
      return ran;
    }
    return db_->changes();
  }

  bool LastFailureChangedNothing() const override { return last_failure_changed_nothing_; }

  Status BeginWrite() override { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() override { return Exec("COMMIT"); }
  Status Rollback() override {
    // A failed statement may already have rolled the transaction back.
    if (db_->autocommit()) return Status::OK();
    return Exec("ROLLBACK");
  }

  Result<std::vector<std::string>> ColumnNames(std::string_view table) override {
    const SqlValue params[] = {std::string(table)};
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<SqlRow> rows,
                             Query("SELECT name FROM pragma_table_info(?)", params));
    std::vector<std::string> names;
    for (SqlRow& row : rows) {
      if (row.empty() || !row[0]) continue;
      std::string name = std::move(*row[0]);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      names.push_back(std::move(name));
    }
    return names;
  }

  // Outside a transaction the connection can be handed to any thread; a connection left inside
  // one (a failed ROLLBACK) or one that saw I/O errors or corruption is dropped.
  bool healthy() const override { return !db_->broken() && db_->autocommit(); }

  /// Run a statement without parameters (transaction control, pragmas).
  Status Exec(std::string_view sql) { return Execute(sql, {}).status(); }

 private:
  Result<sqlite::Statement*> Prepare(std::string_view sql, std::span<const SqlValue> params) {
    auto it = statements_.find(std::string(sql));
    if (it == statements_.end()) {
      // Persistent: these statements are reused for the connection's lifetime.
      GEOLAKE_ASSIGN_OR_RETURN(auto stmt, db_->Prepare(sql, /*persistent=*/true));
      it = statements_.emplace(std::string(sql), std::move(stmt)).first;
    }
    sqlite::Statement* stmt = it->second.get();
    const int expected = stmt->parameter_count();
    if (static_cast<std::size_t>(expected) != params.size()) {
      return Status::Internal("sqlite: statement takes " + std::to_string(expected) +
                              " parameters, got " + std::to_string(params.size()) + ": " +
                              std::string(sql));
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int idx = static_cast<int>(i) + 1;
      const Status bound = params[i] ? stmt->BindText(idx, *params[i]) : stmt->BindNull(idx);
      if (!bound.ok()) {
        stmt->Reset();
        return bound;
      }
    }
    return stmt;
  }

  std::unique_ptr<sqlite::Database> db_;
  bool last_failure_changed_nothing_ = false;
  std::unordered_map<std::string, std::unique_ptr<sqlite::Statement>> statements_;
};

}  // namespace

namespace {

// A read-only connection: no journal-mode switch. The probe reads the schema, which is where a
// WAL database first needs its -shm file; when that cannot be made (a read-only folder), the
// database is opened as immutable, which needs none (nobody can write there anyway).
Result<std::unique_ptr<SqlConnection>> OpenReadOnly(const std::string& path, int busy_timeout_ms) {
  Status first;
  for (const bool immutable : {false, true}) {
    sqlite::OpenOptions options;
    options.read_only = true;
    options.immutable = immutable;
    options.busy_timeout_ms = busy_timeout_ms;
    Result<std::unique_ptr<sqlite::Database>> db = sqlite::Database::Open(path, options);
    if (!db.ok()) return std::move(db).status();
    auto conn = std::make_unique<SqliteConnection>(std::move(*db));
    Status probe = conn->Query("SELECT count(*) FROM sqlite_master", {}).status();
    if (probe.ok()) probe = conn->Exec("PRAGMA case_sensitive_like=ON");
    if (probe.ok()) return std::unique_ptr<SqlConnection>(std::move(conn));
    if (probe.code() != ErrorCode::kIOError || immutable) {
      return first.ok() ? probe : first;
    }
    first = probe;
  }
  return first;
}

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenSqliteConnection(const std::string& path,
                                                            int busy_timeout_ms, bool read_only) {
  if (read_only) return OpenReadOnly(path, busy_timeout_ms);
  sqlite::OpenOptions options;
  options.read_only = false;
  options.busy_timeout_ms = busy_timeout_ms;
  GEOLAKE_ASSIGN_OR_RETURN(auto db, sqlite::Database::Open(path, options));
  auto conn = std::make_unique<SqliteConnection>(std::move(db));

  // Switching to WAL needs an exclusive lock for a moment; when several processes open a new
  // database at once, SQLite may report SQLITE_BUSY without calling the busy handler, so retry
  // for up to the busy timeout.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(busy_timeout_ms, 0));
  while (true) {
    Result<std::vector<SqlRow>> mode = conn->Query("PRAGMA journal_mode=WAL", {});
    if (mode.ok()) {
      if (mode->empty() || mode->front().empty() || !mode->front()[0] ||
          *mode->front()[0] != "wal") {
        return Status::IOError(
            "sqlite " + path + ": cannot switch to WAL journal mode (journal_mode is '" +
            (mode->empty() || mode->front().empty() || !mode->front()[0] ? std::string("?")
                                                                         : *mode->front()[0]) +
            "')");
      }
      break;
    }
    if (mode.status().message().find("database is locked") == std::string::npos ||
        std::chrono::steady_clock::now() >= deadline) {
      return std::move(mode).status();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // LIKE is ASCII case-insensitive by default in SQLite but case-sensitive in PostgreSQL; the
  // catalog uses LIKE 'ns.%' to find nested namespaces, and "A.b" is not inside "a".
  GEOLAKE_RETURN_NOT_OK(conn->Exec("PRAGMA case_sensitive_like=ON"));
  return std::unique_ptr<SqlConnection>(std::move(conn));
}

}  // namespace geolake::catalog
