#include "geolake/sqlite/sqlite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "geolake/testing/testing.h"

namespace geolake::sqlite {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

std::string TempDatabase(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("geolake_sqlite_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (name + ".db")).string();
  std::filesystem::remove(path);
  return path;
}

Result<std::unique_ptr<Database>> OpenWritable(const std::string& path) {
  OpenOptions options;
  options.read_only = false;
  return Database::Open(path, options);
}

Status Exec(Database& db, std::string_view sql) {
  GEOLAKE_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->Run();
}

TEST(SqliteTest, ReadsEveryStorageClassTyped) {
  ASSERT_OK_AND_ASSIGN(auto db, OpenWritable(TempDatabase("types")));
  ASSERT_OK(Exec(*db, "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)"));
  ASSERT_OK_AND_ASSIGN(auto insert, db->Prepare("INSERT INTO t VALUES (?, 2.5, ?, ?, ?)"));
  EXPECT_EQ(insert->parameter_count(), 4);
  ASSERT_OK(insert->BindInt64(1, std::int64_t{1} << 40));
  ASSERT_OK(insert->BindText(2, std::string_view("a\0b", 3)));
  ASSERT_OK(insert->BindText(3, "xyz"));
  ASSERT_OK(insert->BindNull(4));
  ASSERT_OK(insert->Run());
  EXPECT_EQ(db->changes(), 1);

  ASSERT_OK_AND_ASSIGN(auto select, db->Prepare("SELECT i, r, s, CAST(b AS BLOB), n, "
                                                "zeroblob(0) FROM t"));
  ASSERT_OK_AND_ASSIGN(bool row, select->Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(select->column_count(), 6);
  EXPECT_EQ(select->column_type(0), ValueType::kInteger);
  EXPECT_EQ(select->column_type(1), ValueType::kFloat);
  EXPECT_EQ(select->column_type(2), ValueType::kText);
  EXPECT_EQ(select->column_type(3), ValueType::kBlob);
  EXPECT_EQ(select->column_type(4), ValueType::kNull);
  EXPECT_EQ(select->ColumnInt64(0), std::int64_t{1} << 40);
  EXPECT_EQ(select->ColumnInt(0), 0);  // the low 32 bits, as sqlite3_column_int gives them
  EXPECT_EQ(select->ColumnDouble(1), 2.5);
  std::string_view text;
  ASSERT_TRUE(select->ColumnText(2, &text));
  EXPECT_EQ(text, std::string_view("a\0b", 3));
  EXPECT_STREQ(select->ColumnCString(2), "a");  // a C string stops at the NUL
  std::span<const std::uint8_t> bytes;
  ASSERT_TRUE(select->ColumnBlob(3, &bytes));
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "xyz");
  ASSERT_TRUE(select->ColumnText(4, &text));
  EXPECT_TRUE(text.empty());
  EXPECT_EQ(select->ColumnCString(4), nullptr);
  ASSERT_TRUE(select->ColumnBlob(5, &bytes));
  EXPECT_TRUE(bytes.empty());
  ASSERT_OK_AND_ASSIGN(row, select->Step());
  EXPECT_FALSE(row);
}

TEST(SqliteTest, ResetRunsAStatementAgainWithNewBindings) {
  ASSERT_OK_AND_ASSIGN(auto db, OpenWritable(TempDatabase("reset")));
  ASSERT_OK_AND_ASSIGN(auto stmt, db->Prepare("SELECT ?1 * 2", /*persistent=*/true));
  for (std::int64_t v : {3, 5}) {
    stmt->Reset();
    ASSERT_OK(stmt->BindInt64(1, v));
    ASSERT_OK_AND_ASSIGN(bool row, stmt->Step());
    ASSERT_TRUE(row);
    EXPECT_EQ(stmt->ColumnInt64(0), 2 * v);
  }
}

TEST(SqliteTest, UniqueViolationIsAlreadyExistsOtherErrorsAreIOErrorNamingTheSql) {
  const std::string path = TempDatabase("errors");
  ASSERT_OK_AND_ASSIGN(auto db, OpenWritable(path));
  ASSERT_OK(Exec(*db, "CREATE TABLE t (k TEXT PRIMARY KEY)"));
  ASSERT_OK(Exec(*db, "INSERT INTO t VALUES ('a')"));
  EXPECT_THAT(Exec(*db, "INSERT INTO t VALUES ('a')"), IsError(ErrorCode::kAlreadyExists));
  EXPECT_THAT(db->Prepare("SELEC 1"), IsErrorWith(ErrorCode::kIOError, "in: SELEC 1"));
  EXPECT_THAT(db->Prepare("SELECT 1"), ::geolake::testing::IsOk());
  EXPECT_FALSE(db->broken());
  EXPECT_TRUE(db->autocommit());
  ASSERT_OK(Exec(*db, "BEGIN IMMEDIATE"));
  EXPECT_FALSE(db->autocommit());
  ASSERT_OK(Exec(*db, "ROLLBACK"));
}

TEST(SqliteTest, OpenFailuresAreErrors) {
  EXPECT_THAT(Database::Open("", OpenOptions{}), IsError(ErrorCode::kInvalidArgument));
  // Read-only opening never creates the file.
  const std::string missing = TempDatabase("missing");
  EXPECT_THAT(Database::Open(missing, OpenOptions{}), IsError(ErrorCode::kIOError));
  EXPECT_FALSE(std::filesystem::exists(missing));
  // A read-only connection refuses to write.
  const std::string path = TempDatabase("read_only");
  {
    ASSERT_OK_AND_ASSIGN(auto db, OpenWritable(path));
    ASSERT_OK(Exec(*db, "CREATE TABLE t (x)"));
  }
  ASSERT_OK_AND_ASSIGN(auto db, Database::Open(path, OpenOptions{}));
  EXPECT_THAT(Exec(*db, "INSERT INTO t VALUES (1)"), IsError(ErrorCode::kIOError));
}

}  // namespace
}  // namespace geolake::sqlite
