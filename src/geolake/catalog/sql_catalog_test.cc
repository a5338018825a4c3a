// Compatibility fact check: the SQL text geolake sends is the SQL of Iceberg's JDBC catalog
// (Apache Iceberg, org.apache.iceberg.jdbc.JdbcUtil; PyIceberg, iceberg-rust and iceberg-cpp use
// the same tables and the same conditional UPDATE). The team's reference notes quote it in
// reference/formats.md §4.1 of the shared development folder, which this test reads when
// present (skipped elsewhere). The quoted text:
//
//   CREATE TABLE iceberg_tables (
//     catalog_name               VARCHAR(255) NOT NULL,
//     table_namespace            VARCHAR(255) NOT NULL,
//     table_name                 VARCHAR(255) NOT NULL,
//     metadata_location          VARCHAR(1000),
//     previous_metadata_location VARCHAR(1000),
//     PRIMARY KEY (catalog_name, table_namespace, table_name));
//   -- "V1" schema (view support) adds:
//   ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5);
//
//   UPDATE iceberg_tables
//      SET metadata_location = :new_location, previous_metadata_location = :base_location
//    WHERE catalog_name = :catalog AND table_namespace = :namespace AND table_name = :table
//      AND metadata_location = :base_location
//      [AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)]      -- V1 schema only
//
// geolake sends (sql_statements.h):
//
//   CREATE TABLE IF NOT EXISTS iceberg_tables (catalog_name VARCHAR(255) NOT NULL,
//     table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL,
//     metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000),
//     iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name))
//
//   UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
//    WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?
//      AND metadata_location = ? AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)
//
// Same columns, types, key and predicate. The differences: IF NOT EXISTS, and iceberg_type
// declared inline (the V1 layout PyIceberg and iceberg-rust create) instead of by ALTER TABLE;
// JDBC `?` for named parameters. The tests below check this mechanically against the quoted text.

#include "geolake/catalog/sql_catalog.h"

#include <cctype>
#include <filesystem>
#include <regex>
#include <string>

#include "geolake/catalog/catalog_test_util.h"
#include "geolake/catalog/sql_statements.h"
#include "geolake/testing/testing.h"

namespace geolake::catalog {
namespace {

/// Drop `--` comments, collapse whitespace, no space after '(' or before ')', no trailing ';'.
std::string NormalizeSql(const std::string& text) {
  std::string no_comments = std::regex_replace(text, std::regex("--[^\n]*"), "");
  std::string out;
  for (const char c : no_comments) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    if (c == ')' && !out.empty() && out.back() == ' ') out.pop_back();
    out += c;
  }
  out = std::regex_replace(out, std::regex("\\( "), "(");
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

/// The text from `begin` up to and including `end`, searching from the first `begin`.
std::string Between(const std::string& text, const std::string& begin, const std::string& end) {
  const std::size_t start = text.find(begin);
  if (start == std::string::npos) return "";
  const std::size_t stop = text.find(end, start);
  if (stop == std::string::npos) return "";
  return text.substr(start, stop + end.size() - start);
}

class SqlCompatibilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = ::geolake::testing::MissingShared("reference/formats.md")) GTEST_SKIP() << *why;
    const std::string path = ::geolake::testing::SharedPath("reference/formats.md");
    formats_ = testing::ReadFileOrEmpty(path);
    ASSERT_FALSE(formats_.empty()) << "cannot read " << path;
  }
  std::string formats_;
};

TEST_F(SqlCompatibilityTest, CreateTableMatchesJdbcCatalogV1Layout) {
  const std::string java_ddl = NormalizeSql(Between(formats_, "CREATE TABLE iceberg_tables (",
                                                    "PRIMARY KEY (catalog_name, table_namespace, "
                                                    "table_name));"));
  ASSERT_FALSE(java_ddl.empty());
  const std::string alter =
      NormalizeSql(Between(formats_, "ALTER TABLE iceberg_tables ADD COLUMN", ";"));
  ASSERT_EQ(alter, "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)");
  // Java's V0 DDL + the V1 column in table position 6 + IF NOT EXISTS = ours.
  std::string expected = java_ddl;
  expected.replace(0, std::string("CREATE TABLE").size(), "CREATE TABLE IF NOT EXISTS");
  const std::string pk = ", PRIMARY KEY";
  expected.insert(expected.find(pk), ", iceberg_type VARCHAR(5)");
  EXPECT_EQ(NormalizeSql(std::string(sql::kCreateTablesTable)), expected);
}

TEST_F(SqlCompatibilityTest, CreateNamespacePropertiesMatchesJdbcCatalog) {
  const std::string java_ddl =
      NormalizeSql(Between(formats_, "CREATE TABLE iceberg_namespace_properties (",
                           "PRIMARY KEY (catalog_name, namespace, property_key));"));
  ASSERT_FALSE(java_ddl.empty());
  std::string expected = java_ddl;
  expected.replace(0, std::string("CREATE TABLE").size(), "CREATE TABLE IF NOT EXISTS");
  EXPECT_EQ(NormalizeSql(std::string(sql::kCreateNamespacePropertiesTable)), expected);
}

TEST_F(SqlCompatibilityTest, CommitIsTheJdbcConditionalUpdate) {
  std::string java = Between(formats_, "UPDATE iceberg_tables\n", "-- V1 schema only");
  ASSERT_FALSE(java.empty());
  java = std::regex_replace(NormalizeSql(java), std::regex(":[a-z_]+"), "?");
  const std::string v1 = std::regex_replace(java, std::regex("[\\[\\]]"), "");
  const std::string v0 = std::regex_replace(java, std::regex(" ?\\[[^\\]]*\\]"), "");
  EXPECT_EQ(NormalizeSql(std::string(sql::kCommitTable) + std::string(sql::kTableTypeFilter)), v1);
  EXPECT_EQ(NormalizeSql(std::string(sql::kCommitTable)), v0);
  // Parameter order: new location, then the base location twice (SET previous, WHERE current).
  EXPECT_EQ(v1,
            "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND "
            "metadata_location = ? AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)");
}

TEST_F(SqlCompatibilityTest, InsertRenameAndDropAreTheJdbcStatements) {
  std::string insert = NormalizeSql(
      Between(formats_, "INSERT INTO iceberg_tables (", "VALUES (?, ?, ?, ?, NULL[, 'TABLE'])"));
  ASSERT_FALSE(insert.empty());
  EXPECT_EQ(NormalizeSql(std::string(sql::kInsertTableV1)),
            std::regex_replace(insert, std::regex("[\\[\\]]"), ""));
  EXPECT_EQ(NormalizeSql(std::string(sql::kInsertTableV0)),
            std::regex_replace(insert, std::regex("\\[[^\\]]*\\]"), ""));

  const std::string rename = NormalizeSql(Between(
      formats_, "UPDATE iceberg_tables SET table_namespace = ?", "table_name = ? [type filter]"));
  ASSERT_FALSE(rename.empty());
  EXPECT_EQ(NormalizeSql(std::string(sql::kRenameTable)) + " [type filter]", rename);

  const std::string drop = NormalizeSql(
      Between(formats_, "DELETE FROM iceberg_tables WHERE", "table_name = ? [type filter]"));
  ASSERT_FALSE(drop.empty());
  EXPECT_EQ(NormalizeSql(std::string(sql::kDropTable)) + " [type filter]", drop);

  // Loads differ only in the select list (two named columns instead of *).
  const std::string load =
      NormalizeSql(Between(formats_, "SELECT * FROM iceberg_tables WHERE", "AND table_name = ?"));
  ASSERT_FALSE(load.empty());
  EXPECT_EQ(std::regex_replace(NormalizeSql(std::string(sql::kLoadTable)),
                               std::regex("^SELECT [a-z_, ]+ FROM"), "SELECT * FROM"),
            load);
}

TEST(SqlStatementsTest, EscapesLikeWildcardsInNamespacePatterns) {
  EXPECT_EQ(sql::NamespaceLikePattern("geo"), "geo.%");
  EXPECT_EQ(sql::NamespaceLikePattern("a_b.c%d!e"), "a!_b.c!%d!!e.%");
}

TEST(RedactUriTest, HidesOnlyThePassword) {
  EXPECT_EQ(RedactUri("postgresql://ann:s3cret@db:5432/lake"), "postgresql://ann:***@db:5432/lake");
  EXPECT_EQ(RedactUri("postgresql://ann@db:5432/lake"), "postgresql://ann@db:5432/lake");
  EXPECT_EQ(RedactUri("postgresql://db/lake?user=a"), "postgresql://db/lake?user=a");
  EXPECT_EQ(RedactUri("sqlite:/x/catalog.db"), "sqlite:/x/catalog.db");
}

}  // namespace
}  // namespace geolake::catalog
