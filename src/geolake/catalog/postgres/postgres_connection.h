/// \file
/// The PostgreSQL driver of the SQL catalog: one SqlConnection over libpq. Statements run with
/// PQexecParams (text parameters, never spliced into SQL); `?` placeholders become `$1..$n`.
/// libpq-fe.h stays inside postgres_connection.cc.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "geolake/catalog/sql_connection.h"
#include "geolake/core/result.h"

namespace geolake::catalog {

/// \brief Connect to the server named by `uri` (postgresql://user@host:port/db, or any libpq
/// connection string). Errors: kIOError with libpq's message when the connection fails.
Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& uri);

/// \brief Rewrite JDBC-style `?` placeholders as `$1`, `$2`, ... (not inside '...' literals or
/// "..." identifiers). Exposed for tests.
std::string RewritePlaceholders(std::string_view sql);

}  // namespace geolake::catalog
