/// \file
/// The SQLite driver of the SQL catalog: opens one SqlConnection on a database file in WAL mode
/// with a busy timeout, so many threads (one connection each) and many processes can share the
/// file. SQLite itself is reached through the sqlite/ wrapper.
#pragma once

#include <memory>
#include <string>

#include "geolake/catalog/sql_connection.h"
#include "geolake/core/result.h"

namespace geolake::catalog {

/// \brief Open (creating if absent) the SQLite database at `path`.
///
/// The connection is in WAL journal mode (readers never block the writer), waits up to
/// `busy_timeout_ms` for a lock held by another connection, and makes LIKE case-sensitive (the
/// catalog matches namespace prefixes with LIKE). Errors: kIOError with SQLite's message when the
/// file cannot be opened or the database cannot switch to WAL (e.g. some network file systems);
/// kCorruptData when the file is not a SQLite database or is damaged.
///
/// `read_only`: the file must exist and is opened read-only, the journal mode is left as it is
/// (no write, no -wal/-shm created by us), and when SQLite cannot open it so (a WAL database
/// whose -shm file cannot be created in a read-only folder) it is opened as immutable.
Result<std::unique_ptr<SqlConnection>> OpenSqliteConnection(const std::string& path,
                                                            int busy_timeout_ms,
                                                            bool read_only = false);

}  // namespace geolake::catalog
