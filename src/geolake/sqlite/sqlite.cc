#include "geolake/sqlite/sqlite.h"

#include <sqlite3.h>

#include <cstdio>
#include <utility>

#include "geolake/core/hex.h"

namespace geolake::sqlite {

Status DisableMemoryStatistics() {
  if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK) {
    return Status::Internal("sqlite: cannot turn off memory statistics (already initialized)");
  }
  return Status::OK();
}

Database::Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Database::~Database() { sqlite3_close_v2(db_); }

Result<std::unique_ptr<Database>> Database::Open(const std::string& path,
                                                 const OpenOptions& options) {
  if (path.empty()) return Status::InvalidArgument("sqlite: empty database path");
  sqlite3* raw = nullptr;
  // NOMUTEX: a connection is used by one thread at a time (see the class comment), so SQLite's
  // per-connection mutex would only cost time.
  const int flags =
      (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  int rc = SQLITE_OK;
  if (options.read_only && options.immutable) {
    // file: URI: the characters that mean something in a URI are percent-encoded.
    std::string uri = "file:";
    for (const char c : path) {
      if (c == '%' || c == '?' || c == '#') {
        uri += '%';
        AppendHexByte(static_cast<std::uint8_t>(c), &uri, HexCase::kUpper);
      } else {
        uri += c;
      }
    }
    uri += "?immutable=1";
    rc = sqlite3_open_v2(uri.c_str(), &raw, flags | SQLITE_OPEN_URI, nullptr);
  } else {
    rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  }
  // sqlite3_open_v2 may allocate a handle even when it fails; the Database closes it.
  std::unique_ptr<Database> db(raw == nullptr ? nullptr : new Database(raw, path));
  if (rc != SQLITE_OK) {
    return Status::IOError("sqlite " + path + ": cannot open: " +
                           (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  if (sqlite3_extended_result_codes(raw, 1) != SQLITE_OK ||
      sqlite3_busy_timeout(raw, options.busy_timeout_ms) != SQLITE_OK) {
    return Status::IOError("sqlite " + path + ": cannot configure: " + sqlite3_errmsg(raw));
  }
  return db;
}

Result<std::unique_ptr<Statement>> Database::Prepare(std::string_view sql, bool persistent) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    persistent ? SQLITE_PREPARE_PERSISTENT : 0, &raw, nullptr);
  std::unique_ptr<Statement> stmt(raw == nullptr ? nullptr
                                                 : new Statement(this, raw, std::string(sql)));
  if (rc != SQLITE_OK) return Error(rc, sql);
  if (stmt == nullptr) return Status::Internal("sqlite: empty statement: " + std::string(sql));
  return stmt;
}

std::int64_t Database::changes() const { return sqlite3_changes64(db_); }

bool Database::autocommit() const { return sqlite3_get_autocommit(db_) != 0; }

bool Database::last_error_changed_nothing() const {
  switch (last_error_code_) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_FULL:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
    case SQLITE_NOTADB:
    case SQLITE_CONSTRAINT:
    case SQLITE_ERROR:
      return true;
    default:
      return false;
  }
}

Status Database::Error(int rc, std::string_view sql) {
  const int primary = rc & 0xff;
  last_error_code_ = primary;
  if (primary == SQLITE_IOERR || primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ||
      primary == SQLITE_NOMEM || primary == SQLITE_CANTOPEN) {
    broken_ = true;
  }
  // sqlite3_errmsg describes the most recent failure on this connection, which is this one:
  // the connection is used by one thread at a time and it is read before any reset.
  std::string message = "sqlite " + path_ + ": " + sqlite3_errmsg(db_) + " (" + sqlite3_errstr(rc) +
                        ") in: " + std::string(sql);
  if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
    return Status::AlreadyExists(std::move(message));
  }
  // A file that is not a database, or a damaged one, is corrupt data, not an I/O failure.
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
    return Status::CorruptData(std::move(message));
  }
  return Status::IOError(std::move(message));
}

Statement::Statement(Database* db, sqlite3_stmt* stmt, std::string sql)
    : db_(db), stmt_(stmt), sql_(std::move(sql)) {}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Status Statement::BindText(int index, std::string_view text) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, sql_);
}

Status Statement::BindInt64(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, sql_);
}

Status Statement::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, sql_);
}

int Statement::parameter_count() const { return sqlite3_bind_parameter_count(stmt_); }

Result<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, sql_);
}

Status Statement::Run() {
  while (true) {
    GEOLAKE_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::OK();
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }

ValueType Statement::column_type(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_INTEGER:
      return ValueType::kInteger;
    case SQLITE_FLOAT:
      return ValueType::kFloat;
    case SQLITE_TEXT:
      return ValueType::kText;
    case SQLITE_BLOB:
      return ValueType::kBlob;
    default:
      return ValueType::kNull;
  }
}

std::int32_t Statement::ColumnInt(int column) const { return sqlite3_column_int(stmt_, column); }

std::int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::ColumnDouble(int column) const { return sqlite3_column_double(stmt_, column); }

bool Statement::ColumnText(int column, std::string_view* text) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int bytes = sqlite3_column_bytes(stmt_, column);  // after the text: its length
  if (data == nullptr) {
    *text = {};
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  *text = std::string_view(data, static_cast<std::size_t>(bytes));
  return true;
}

const char* Statement::ColumnCString(int column) const {
  return reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
}

bool Statement::ColumnBlob(int column, std::span<const std::uint8_t>* bytes) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);  // after the blob: its length
  if (data == nullptr) {
    *bytes = {};
    return size == 0;
  }
  *bytes = std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(data),
                                         static_cast<std::size_t>(size));
  return true;
}

}  // namespace geolake::sqlite
