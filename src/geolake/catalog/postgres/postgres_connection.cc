#include "geolake/catalog/postgres/postgres_connection.h"

#include <libpq-fe.h>

#include <charconv>
#include <vector>

namespace geolake::catalog {

namespace {

struct ConnCloser {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
struct ResultClearer {
  void operator()(PGresult* res) const { PQclear(res); }
};
using ConnPtr = std::unique_ptr<PGconn, ConnCloser>;
using ResultPtr = std::unique_ptr<PGresult, ResultClearer>;

// SQLSTATEs that mean "it is already there": unique_violation, and duplicate_table /
// duplicate_object, which a concurrent CREATE TABLE IF NOT EXISTS can still raise (the IF NOT
// EXISTS check and the catalog insert are not atomic in PostgreSQL).
bool IsAlreadyExists(std::string_view sqlstate) {
  return sqlstate == "23505" || sqlstate == "42P07" || sqlstate == "42710";
}

std::string TrimTrailingSpace(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// CREATE TABLE IF NOT EXISTS on an existing table emits a NOTICE, which libpq prints to stderr
// by default; the catalog has nothing to tell the user about it.
void IgnoreNotice(void* /*arg*/, const char* /*message*/) {}

class PostgresConnection final : public SqlConnection {
 public:
  explicit PostgresConnection(ConnPtr conn) : conn_(std::move(conn)) {}

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    std::span<const SqlValue> params) override {
    GEOLAKE_ASSIGN_OR_RETURN(ResultPtr res, Run(sql, params, PGRES_TUPLES_OK));
    const int rows = PQntuples(res.get());
    const int columns = PQnfields(res.get());
    std::vector<SqlRow> out;
    out.reserve(static_cast<std::size_t>(rows));
    for (int row_idx = 0; row_idx < rows; ++row_idx) {
      SqlRow row;
      row.reserve(static_cast<std::size_t>(columns));
      for (int col = 0; col < columns; ++col) {
        if (PQgetisnull(res.get(), row_idx, col)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(
              std::string(PQgetvalue(res.get(), row_idx, col),
                          static_cast<std::size_t>(PQgetlength(res.get(), row_idx, col))));
        }
      }
      out.push_back(std::move(row));
    }
    return out;
  }

  Result<std::int64_t> Execute(std::string_view sql, std::span<const SqlValue> params) override {
    Result<ResultPtr> ran = Run(sql, params, PGRES_COMMAND_OK);
    if (!ran.ok()) {
      // The server answered with an error while the connection stayed up and no transaction
      // was open: the statement was rolled back. No answer (a lost connection) is unknown.
      last_failure_changed_nothing_ = answered_with_error_ &&
                                      PQstatus(conn_.get()) == CONNECTION_OK &&
                                      PQtransactionStatus(conn_.get()) == PQTRANS_IDLE;
      return std::move(ran).status();
    }
    last_failure_changed_nothing_ = false;
    ResultPtr res = std::move(*ran);
    // PQcmdTuples is "" for commands that report no row count (BEGIN, CREATE TABLE).
    const std::string_view count = PQcmdTuples(res.get());
    std::int64_t changed = 0;
    if (!count.empty()) {
      const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), changed);
      if (ec != std::errc() || end != count.data() + count.size()) {
        return Status::Internal("postgresql: unexpected row count '" + std::string(count) + "'");
      }
    }
    return changed;
  }

  Status BeginWrite() override { return Execute("BEGIN", {}).status(); }
  Status Commit() override { return Execute("COMMIT", {}).status(); }
  Status Rollback() override {
    if (PQtransactionStatus(conn_.get()) == PQTRANS_IDLE) return Status::OK();
    return Execute("ROLLBACK", {}).status();
  }

  Result<std::vector<std::string>> ColumnNames(std::string_view table) override {
    const SqlValue params[] = {std::string(table)};
    GEOLAKE_ASSIGN_OR_RETURN(
        std::vector<SqlRow> rows,
        Query("SELECT column_name FROM information_schema.columns WHERE table_schema = "
              "current_schema() AND table_name = ? ORDER BY ordinal_position",
              params));
    std::vector<std::string> names;
    for (SqlRow& row : rows) {
      if (!row.empty() && row[0]) names.push_back(std::move(*row[0]));
    }
    return names;
  }

  bool healthy() const override {
    return PQstatus(conn_.get()) == CONNECTION_OK &&
           PQtransactionStatus(conn_.get()) == PQTRANS_IDLE;
  }

  bool LastFailureChangedNothing() const override { return last_failure_changed_nothing_; }

 private:
  Result<ResultPtr> Run(std::string_view sql, std::span<const SqlValue> params,
                        ExecStatusType expected) {
    const std::string text = RewritePlaceholders(sql);
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const SqlValue& p : params) values.push_back(p ? p->c_str() : nullptr);
    // Text parameters with server-inferred types; every catalog column is VARCHAR.
    answered_with_error_ = false;
    ResultPtr res(PQexecParams(conn_.get(), text.c_str(), static_cast<int>(values.size()),
                               /*paramTypes=*/nullptr, values.data(), /*paramLengths=*/nullptr,
                               /*paramFormats=*/nullptr, /*resultFormat=*/0));
    if (res == nullptr) {
      // Out of memory, or the connection is gone; libpq's message says which.
      return Status::IOError("postgresql: " + TrimTrailingSpace(PQerrorMessage(conn_.get())) +
                             " in: " + std::string(sql));
    }
    const ExecStatusType status = PQresultStatus(res.get());
    if (status == expected) return res;
    const char* sqlstate = PQresultErrorField(res.get(), PG_DIAG_SQLSTATE);
    // An error with a SQLSTATE of any class but 08 (connection exception) is the server's
    // answer: the statement failed there.
    answered_with_error_ = sqlstate != nullptr && std::string_view(sqlstate).substr(0, 2) != "08";
    std::string message = "postgresql: " + TrimTrailingSpace(PQresultErrorMessage(res.get()));
    if (message == "postgresql: ") {
      message += std::string("unexpected result ") + PQresStatus(status);
    }
    message += " in: " + std::string(sql);
    if (sqlstate != nullptr && IsAlreadyExists(sqlstate)) {
      return Status::AlreadyExists(std::move(message));
    }
    return Status::IOError(std::move(message));
  }

  ConnPtr conn_;
  bool answered_with_error_ = false;           // the last Run got an error answer
  bool last_failure_changed_nothing_ = false;  // see LastFailureChangedNothing
};

}  // namespace

std::string RewritePlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 1;
  char quote = 0;  // the quote character we are inside, or 0
  for (const char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;  // a doubled quote re-enters at once: same result
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$';
      out += std::to_string(next++);
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& uri) {
  ConnPtr conn(PQconnectdb(uri.c_str()));
  if (conn == nullptr) return Status::IOError("postgresql: out of memory while connecting");
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return Status::IOError("postgresql: cannot connect: " +
                           TrimTrailingSpace(PQerrorMessage(conn.get())));
  }
  if (PQsetClientEncoding(conn.get(), "UTF8") != 0) {
    return Status::IOError("postgresql: cannot set client encoding UTF8: " +
                           TrimTrailingSpace(PQerrorMessage(conn.get())));
  }
  PQsetNoticeProcessor(conn.get(), IgnoreNotice, nullptr);
  return std::unique_ptr<SqlConnection>(std::make_unique<PostgresConnection>(std::move(conn)));
}

}  // namespace geolake::catalog
