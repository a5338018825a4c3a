/// \file
/// SqlConnection: the few operations the SQL catalog needs from a database driver (run a
/// parameterized statement, read text rows, transactions, list a table's columns). The SQLite
/// and PostgreSQL drivers implement it, so the catalog logic and its SQL text exist once.
/// Statements use `?` placeholders (JDBC style); a driver that needs another form rewrites them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake::catalog {

/// A bound parameter or a result cell: text, or SQL NULL (nullopt). The catalog stores only
/// text columns, so no other types are needed.
using SqlValue = std::optional<std::string>;
using SqlRow = std::vector<SqlValue>;

/// \brief One open database connection.
///
/// Thread-safety: none; one thread at a time (the catalog's pool hands each connection to one
/// thread). Errors: kAlreadyExists when a statement violates a primary key or unique constraint
/// (or, for DDL, the object already exists); kIOError for everything else, with the database's
/// message.
class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  /// \brief Run a statement that returns rows; every cell comes back as text or NULL.
  virtual Result<std::vector<SqlRow>> Query(std::string_view sql,
                                            std::span<const SqlValue> params) = 0;

  /// \brief Run a statement that returns no rows; the number of rows it changed.
  virtual Result<std::int64_t> Execute(std::string_view sql, std::span<const SqlValue> params) = 0;

  /// \brief Begin a transaction that will write (SQLite: BEGIN IMMEDIATE, so the write lock is
  /// taken up front and a later write cannot fail with a lock upgrade deadlock).
  virtual Status BeginWrite() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;

  /// \brief The lower-case column names of `table`, in order; empty if the table is absent.
  virtual Result<std::vector<std::string>> ColumnNames(std::string_view table) = 0;

  /// \brief False once the connection is known to be unusable (e.g. the server went away);
  /// the pool then discards it instead of reusing it.
  virtual bool healthy() const = 0;

  /// \brief After Execute failed outside a transaction: true when the database certainly
  /// applied nothing (it refused the statement: locked, read-only, full, an SQL error), false
  /// when it may have (an I/O error while committing, a connection lost before the answer).
  virtual bool LastFailureChangedNothing() const { return false; }
};

}  // namespace geolake::catalog
