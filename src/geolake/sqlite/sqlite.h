/// \file
/// The SQLite wrapper: RAII over a database connection (Database) and a prepared statement
/// (Statement) with typed binds and typed, copy-free column reads (integers, doubles, text and
/// blobs). It is the one place geolake includes sqlite3.h: the SQL catalog's SQLite driver
/// (catalog/sqlite) and the GeoPackage reader (sources/gpkg_source) both use it. It sits right
/// above core in the module order, so both can depend on it without depending on each other.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "geolake/core/result.h"

// SQLite's opaque handle types; only sqlite.cc sees their definitions (from sqlite3.h).
struct sqlite3;
struct sqlite3_stmt;

namespace geolake::sqlite {

/// \brief Stop SQLite counting every allocation (SQLITE_CONFIG_MEMSTATUS off), which it does
/// under one process-wide mutex that threads reading GeoPackages (and PROJ's proj.db) at once
/// contend for. Call once, before SQLite's first use in the process (the CLI does, first thing).
/// Errors: kInternal when SQLite refuses because it is already initialized.
Status DisableMemoryStatistics();

/// \brief The storage class of a result cell.
enum class ValueType : std::uint8_t { kInteger, kFloat, kText, kBlob, kNull };

/// \brief How Database::Open opens a file.
struct OpenOptions {
  /// Read-only; otherwise read-write, creating the file when absent.
  bool read_only = true;
  /// With read_only: the file is declared unchanging (SQLite's `immutable=1` URI parameter), so
  /// no -shm/-wal file is needed or created and no lock is taken. For a database in a folder
  /// nobody can write (a read-only mount), where a WAL database cannot be opened otherwise.
  bool immutable = false;
  /// How long a statement waits for a lock another connection holds.
  int busy_timeout_ms = 5000;
};

class Statement;

/// \brief One open database connection, closed by the destructor.
///
/// Errors of every call on it or on its statements: kAlreadyExists when a statement violates a
/// primary key or unique constraint; kCorruptData when the file is not a database or is
/// damaged (SQLITE_NOTADB, SQLITE_CORRUPT); kIOError for everything else, with the message
/// "sqlite PATH: <SQLite's message> (<result code text>) in: <SQL>".
///
/// Thread-safety: none; one thread at a time (the connection is opened without SQLite's own
/// mutex). Different connections are independent.
class Database {
 public:
  /// \brief Open the database at `path` (extended result codes on, busy timeout set).
  /// Errors: kInvalidArgument for an empty path; kIOError when SQLite cannot open or configure
  /// it.
  static Result<std::unique_ptr<Database>> Open(const std::string& path,
                                                const OpenOptions& options);

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// \brief Prepare one statement. `persistent`: the statement is kept for the connection's
  /// lifetime (SQLITE_PREPARE_PERSISTENT). The statement must not outlive the connection.
  Result<std::unique_ptr<Statement>> Prepare(std::string_view sql, bool persistent = false);

  /// \brief Rows changed by the most recent INSERT, UPDATE or DELETE.
  std::int64_t changes() const;

  /// \brief True outside an explicit transaction (SQLite's autocommit mode).
  bool autocommit() const;

  /// \brief True once an error said the connection is unusable (I/O error, corruption, not a
  /// database, out of memory, cannot open).
  bool broken() const { return broken_; }

  const std::string& path() const { return path_; }

  /// \brief True when the most recent failure on this connection or its statements is one
  /// where SQLite refused the statement before writing anything (busy or locked, read-only,
  /// disk full, no permission, cannot open, not a database, a constraint or SQL error), so
  /// that a failed autocommit statement certainly changed nothing. False for I/O errors and
  /// corruption, which can strike after a commit record reached the WAL, and before any failure.
  bool last_error_changed_nothing() const;

 private:
  friend class Statement;
  Database(sqlite3* db, std::string path);
  Status Error(int rc, std::string_view sql);

  sqlite3* db_;
  const std::string path_;
  bool broken_ = false;
  int last_error_code_ = 0;
};

/// \brief One prepared statement, finalized by the destructor. Parameter and column indices
/// follow SQLite: parameters from 1, columns from 0. Column reads are valid for the current
/// row only (until the next Step or Reset).
///
/// Thread-safety: none; the thread that uses its connection.
class Statement {
 public:
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// \brief Bind a copy of `text` to parameter `index`.
  Status BindText(int index, std::string_view text);
  Status BindInt64(int index, std::int64_t value);
  Status BindNull(int index);
  /// \brief The number of parameters the statement takes.
  int parameter_count() const;

  /// \brief Run to the next row: true when a row is ready, false when the statement is done.
  Result<bool> Step();
  /// \brief Step until done (rows a statement returns, e.g. a PRAGMA's value, are skipped).
  Status Run();
  /// \brief Reset to run again and clear the bindings; never fails (an error of the last
  /// Step was already returned by it).
  void Reset();

  int column_count() const;
  ValueType column_type(int column) const;
  std::int32_t ColumnInt(int column) const;
  std::int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  /// \brief The cell as text (converted as SQLite converts; a NULL cell is empty); false when
  /// SQLite could not make the text (out of memory).
  bool ColumnText(int column, std::string_view* text) const;
  /// \brief The cell's text up to its first NUL (what a C string reader sees); nullptr for a
  /// NULL cell or when SQLite could not make the text.
  const char* ColumnCString(int column) const;
  /// \brief The cell as bytes (an empty blob is an empty span); false when SQLite could not
  /// make the bytes (out of memory).
  bool ColumnBlob(int column, std::span<const std::uint8_t>* bytes) const;

 private:
  friend class Database;
  Statement(Database* db, sqlite3_stmt* stmt, std::string sql);

  Database* db_;
  sqlite3_stmt* stmt_;
  const std::string sql_;
};

}  // namespace geolake::sqlite
