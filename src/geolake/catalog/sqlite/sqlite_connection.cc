#include "geolake/catalog/sqlite/sqlite_connection.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>
#include <unordered_map>
#include <utility>

namespace geolake::catalog {

namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using DbPtr = std::unique_ptr<sqlite3, DbCloser>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

/// Resets a statement when a run ends, however it ends, so the cached statement releases its
/// read transaction and can be bound again.
class StmtResetter {
 public:
  explicit StmtResetter(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~StmtResetter() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  StmtResetter(const StmtResetter&) = delete;
  StmtResetter& operator=(const StmtResetter&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(DbPtr db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    std::span<const SqlValue> params) override {
    GEOLAKE_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepare(sql, params));
    StmtResetter resetter(stmt);
    std::vector<SqlRow> rows;
    const int columns = sqlite3_column_count(stmt);
    while (true) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return Error(rc, sql);
      SqlRow row;
      row.reserve(static_cast<std::size_t>(columns));
      for (int col = 0; col < columns; ++col) {
        if (sqlite3_column_type(stmt, col) == SQLITE_NULL) {
          row.emplace_back(std::nullopt);
          continue;
        }
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
        const int bytes = sqlite3_column_bytes(stmt, col);
        if (text == nullptr) return Error(sqlite3_errcode(db_.get()), sql);  // out of memory
        row.emplace_back(std::string(text, static_cast<std::size_t>(bytes)));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Result<std::int64_t> Execute(std::string_view sql, std::span<const SqlValue> params) override {
    GEOLAKE_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepare(sql, params));
    StmtResetter resetter(stmt);
    int rc;
    do {
      rc = sqlite3_step(stmt);
    } while (rc == SQLITE_ROW);  // e.g. a PRAGMA that reports its new value
    if (rc != SQLITE_DONE) return Error(rc, sql);
    return static_cast<std::int64_t>(sqlite3_changes64(db_.get()));
  }

  Status BeginWrite() override { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() override { return Exec("COMMIT"); }
  Status Rollback() override {
    // A failed statement may already have rolled the transaction back.
    if (sqlite3_get_autocommit(db_.get()) != 0) return Status::OK();
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
  bool healthy() const override { return !broken_ && sqlite3_get_autocommit(db_.get()) != 0; }

  /// Run a statement without parameters (transaction control, pragmas).
  Status Exec(std::string_view sql) { return Execute(sql, {}).status(); }

 private:
  Result<sqlite3_stmt*> Prepare(std::string_view sql, std::span<const SqlValue> params) {
    auto it = statements_.find(std::string(sql));
    if (it == statements_.end()) {
      sqlite3_stmt* raw = nullptr;
      // SQLITE_PREPARE_PERSISTENT: these statements are reused for the connection's lifetime.
      const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                        SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
      StmtPtr stmt(raw);
      if (rc != SQLITE_OK) return Error(rc, sql);
      if (stmt == nullptr) return Status::Internal("sqlite: empty statement: " + std::string(sql));
      it = statements_.emplace(std::string(sql), std::move(stmt)).first;
    }
    sqlite3_stmt* stmt = it->second.get();
    const int expected = sqlite3_bind_parameter_count(stmt);
    if (static_cast<std::size_t>(expected) != params.size()) {
      return Status::Internal("sqlite: statement takes " + std::to_string(expected) +
                              " parameters, got " + std::to_string(params.size()) + ": " +
                              std::string(sql));
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int idx = static_cast<int>(i) + 1;
      const int rc = params[i]
                         ? sqlite3_bind_text64(stmt, idx, params[i]->data(), params[i]->size(),
                                               SQLITE_TRANSIENT, SQLITE_UTF8)
                         : sqlite3_bind_null(stmt, idx);
      if (rc != SQLITE_OK) {
        sqlite3_clear_bindings(stmt);
        return Error(rc, sql);
      }
    }
    return stmt;
  }

  Status Error(int rc, std::string_view sql) {
    const int primary = rc & 0xff;
    if (primary == SQLITE_IOERR || primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ||
        primary == SQLITE_NOMEM || primary == SQLITE_CANTOPEN) {
      broken_ = true;
    }
    // sqlite3_errmsg describes the most recent failure on this connection, which is this one:
    // the connection is used by one thread at a time and we read it before any reset.
    std::string message = "sqlite " + path_ + ": " + sqlite3_errmsg(db_.get()) + " (" +
                          sqlite3_errstr(rc) + ") in: " + std::string(sql);
    if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
      return Status::AlreadyExists(std::move(message));
    }
    return Status::IOError(std::move(message));
  }

  DbPtr db_;
  const std::string path_;
  std::unordered_map<std::string, StmtPtr> statements_;
  bool broken_ = false;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenSqliteConnection(const std::string& path,
                                                            int busy_timeout_ms) {
  if (path.empty()) return Status::InvalidArgument("sqlite: empty database path");
  sqlite3* raw = nullptr;
  // NOMUTEX: each connection is used by one thread at a time (the catalog's pool guarantees it),
  // so SQLite's per-connection mutex would only cost time.
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  DbPtr db(raw);  // sqlite3_open_v2 may allocate a handle even when it fails
  if (rc != SQLITE_OK) {
    return Status::IOError("sqlite " + path + ": cannot open: " +
                           (db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc)));
  }
  if (sqlite3_extended_result_codes(db.get(), 1) != SQLITE_OK ||
      sqlite3_busy_timeout(db.get(), busy_timeout_ms) != SQLITE_OK) {
    return Status::IOError("sqlite " + path + ": cannot configure: " + sqlite3_errmsg(db.get()));
  }
  auto conn = std::make_unique<SqliteConnection>(std::move(db), path);

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
