/// \file
/// The SQL text of the Iceberg JDBC catalog, in one place. These strings are the compatibility
/// contract with Java's JdbcCatalog (JdbcUtil), PyIceberg's SqlCatalog, iceberg-rust and
/// iceberg-cpp: same table and column names, same conditional UPDATE for commits. The reference
/// text is Apache Iceberg's org.apache.iceberg.jdbc.JdbcUtil; sql_catalog_test.cc compares these
/// strings against the team's quotation of it. Placeholders are JDBC-style `?`; drivers rewrite
/// them when needed.
///
/// Differences from Java's text, all deliberate and invisible to other clients:
/// - DDL says CREATE TABLE IF NOT EXISTS and includes iceberg_type (the V1 layout, as PyIceberg
///   and iceberg-rust create it) instead of Java's CREATE TABLE + ALTER TABLE ADD COLUMN.
/// - Loads select the two location columns instead of `*`, so column order never matters.
/// - Namespace listings ask for DISTINCT namespaces and the catalog truncates levels in C++.
#pragma once

#include <string>
#include <string_view>

namespace geolake::catalog::sql {

// ---- DDL ------------------------------------------------------------------------------------

inline constexpr std::string_view kCreateTablesTable =
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, "
    "metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), "
    "iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))";

inline constexpr std::string_view kCreateNamespacePropertiesTable =
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255), "
    "property_value VARCHAR(1000), "
    "PRIMARY KEY (catalog_name, namespace, property_key))";

/// Columns every client relies on; an existing table missing one is not an Iceberg catalog.
inline constexpr std::string_view kTablesColumns[] = {"catalog_name", "table_namespace",
                                                      "table_name", "metadata_location",
                                                      "previous_metadata_location"};
inline constexpr std::string_view kNamespacePropertiesColumns[] = {
    "catalog_name", "namespace", "property_key", "property_value"};

// ---- Tables ---------------------------------------------------------------------------------

/// Appended to every statement on table rows when the V1 column exists: views share the table
/// and NULL means a table written by a V0 client.
inline constexpr std::string_view kTableTypeFilter =
    " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)";

/// Params: catalog_name, table_namespace, table_name, metadata_location.
inline constexpr std::string_view kInsertTableV1 =
    "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
    "previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, 'TABLE')";
inline constexpr std::string_view kInsertTableV0 =
    "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
    "previous_metadata_location) VALUES (?, ?, ?, ?, NULL)";

/// Params: catalog_name, table_namespace, table_name. (+ type filter)
inline constexpr std::string_view kLoadTable =
    "SELECT metadata_location, previous_metadata_location FROM iceberg_tables "
    "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?";

/// The compare-and-swap. Params: new location, base location, catalog_name, table_namespace,
/// table_name, base location. (+ type filter) One changed row = committed; zero = conflict.
inline constexpr std::string_view kCommitTable =
    "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
    "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? "
    "AND metadata_location = ?";

/// Params: new namespace, new name, catalog_name, old namespace, old name. (+ type filter)
inline constexpr std::string_view kRenameTable =
    "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? "
    "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?";

/// Params: catalog_name, table_namespace, table_name. (+ type filter)
inline constexpr std::string_view kDropTable =
    "DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?";

/// Params: catalog_name, table_namespace. (+ type filter)
inline constexpr std::string_view kListTables =
    "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?";

// ---- Namespaces -----------------------------------------------------------------------------
// A namespace exists when a row of either table names it or a namespace below it (Java's
// JdbcUtil.namespaceExists). The LIKE pattern is "<ns>.%" with '!' escaping '!', '_' and '%'.

/// Params: catalog_name, namespace, LIKE pattern.
inline constexpr std::string_view kTableNamespaceExists =
    "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ? "
    "AND (table_namespace = ? OR table_namespace LIKE ? ESCAPE '!') LIMIT 1";
inline constexpr std::string_view kPropertiesNamespaceExists =
    "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ? "
    "AND (namespace = ? OR namespace LIKE ? ESCAPE '!') LIMIT 1";

/// Params: catalog_name.
inline constexpr std::string_view kListAllTableNamespaces =
    "SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ?";
inline constexpr std::string_view kListAllPropertiesNamespaces =
    "SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?";
/// Params: catalog_name, LIKE pattern.
inline constexpr std::string_view kListTableNamespacesLike =
    "SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ? "
    "AND table_namespace LIKE ? ESCAPE '!'";
inline constexpr std::string_view kListPropertiesNamespacesLike =
    "SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE catalog_name = ? "
    "AND namespace LIKE ? ESCAPE '!'";

/// Params: catalog_name, namespace. Any table or view row makes a namespace non-empty.
inline constexpr std::string_view kNamespaceHasTables =
    "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
    "LIMIT 1";

/// Params: catalog_name, namespace, property_key, property_value.
inline constexpr std::string_view kInsertProperty =
    "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
    "property_value) VALUES (?, ?, ?, ?)";
/// Params: property_value, catalog_name, namespace, property_key.
inline constexpr std::string_view kUpdateProperty =
    "UPDATE iceberg_namespace_properties SET property_value = ? "
    "WHERE catalog_name = ? AND namespace = ? AND property_key = ?";
/// Params: catalog_name, namespace, property_key.
inline constexpr std::string_view kDeleteProperty =
    "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
    "AND property_key = ?";
/// Params: catalog_name, namespace.
inline constexpr std::string_view kLoadProperties =
    "SELECT property_key, property_value FROM iceberg_namespace_properties "
    "WHERE catalog_name = ? AND namespace = ?";
inline constexpr std::string_view kDeleteNamespace =
    "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?";

/// The property Java writes for every created namespace; hidden from users and reserved.
inline constexpr std::string_view kExistsProperty = "exists";

/// \brief The LIKE pattern matching every namespace strictly below `ns` ("a_b" -> "a!_b.%").
inline std::string NamespaceLikePattern(std::string_view ns) {
  std::string out;
  out.reserve(ns.size() + 4);
  for (const char c : ns) {
    if (c == '!' || c == '_' || c == '%') out += '!';
    out += c;
  }
  out += ".%";
  return out;
}

}  // namespace geolake::catalog::sql
