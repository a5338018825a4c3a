/// \file
/// Catalog: the small interface through which the table layer finds and commits tables. A
/// catalog maps a table identifier (namespace + name) to the location of the table's current
/// metadata JSON file, and changes that mapping only by compare-and-swap (CommitTable), which is
/// the one point where concurrent writers serialize. Implementations live in catalog/ (SQLite,
/// PostgreSQL; schema-compatible with Iceberg's JDBC catalog); an in-memory one lives here for
/// tests of the table layer. Namespace and identifier helpers live here too, so every
/// implementation validates and encodes names the same way.
#pragma once

#include <compare>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake::table {

/// \brief A multi-level namespace such as ["geo", "osm"], written "geo.osm".
///
/// Every level is non-empty and contains no '.', because catalogs store the namespace as the
/// dot-joined string (Iceberg JDBC catalog convention). The empty namespace (no levels) is the
/// root: valid as the parent in ListNamespaces, invalid for a table or CreateNamespace.
struct Namespace {
  std::vector<std::string> levels;

  /// \brief Split "a.b.c" into levels. "" gives the root namespace. Empty levels ("a..b",
  /// ".a") are kInvalidArgument.
  static Result<Namespace> Parse(std::string_view dotted);

  /// \brief The dot-joined form, as stored in the catalog ("" for the root).
  std::string ToString() const;

  bool empty() const { return levels.empty(); }

  /// \brief True when `other` is this namespace or nested below it (the root contains all).
  bool Contains(const Namespace& other) const;

  auto operator<=>(const Namespace&) const = default;
  bool operator==(const Namespace&) const = default;
};

/// \brief A table's name inside a catalog: namespace plus table name ("geo.osm.roads").
struct TableIdentifier {
  Namespace ns;
  std::string name;

  /// \brief Parse "ns1.ns2.table": the last component is the table name, the rest the
  /// namespace (at least one level). kInvalidArgument for "table" alone or empty parts.
  static Result<TableIdentifier> Parse(std::string_view dotted);

  /// \brief "ns1.ns2.table".
  std::string ToString() const;

  auto operator<=>(const TableIdentifier&) const = default;
  bool operator==(const TableIdentifier&) const = default;
};

/// \brief kInvalidArgument unless `ns` has at least one level and every level is non-empty and
/// free of '.'. Catalog implementations call this on every namespace they are given.
Status ValidateNamespace(const Namespace& ns);

/// \brief ValidateNamespace(id.ns) plus a non-empty table name.
Status ValidateIdentifier(const TableIdentifier& id);

/// \brief Namespace properties (key -> value), ordered by key.
using NamespaceProperties = std::map<std::string, std::string>;

/// \brief One row of the catalog's table list: where the table's metadata is now and what it
/// replaced (empty right after CreateTable).
struct TableEntry {
  std::string metadata_location;
  std::string previous_metadata_location;
};

/// \brief Maps table identifiers to current metadata locations; commits by compare-and-swap.
///
/// Thread-safety: every method of every implementation is safe to call concurrently from many
/// threads, and (for the SQL catalogs) from many processes sharing one database.
///
/// Errors common to all methods: kInvalidArgument for an invalid namespace or identifier (see
/// ValidateIdentifier); kIOError when the backing store fails (the message carries the
/// database's own text).
class Catalog {
 public:
  virtual ~Catalog() = default;

  /// \brief The catalog name that scopes every row (the JDBC catalog's catalog_name column).
  virtual const std::string& name() const = 0;

  // ---- Namespaces -------------------------------------------------------------------------

  /// \brief Create a namespace with optional properties. kAlreadyExists if it exists. Parent
  /// namespaces are not required to exist (as in Iceberg's JDBC catalog).
  virtual Status CreateNamespace(const Namespace& ns, const NamespaceProperties& properties) = 0;
  Status CreateNamespace(const Namespace& ns) { return CreateNamespace(ns, {}); }

  /// \brief The namespaces directly below `parent` (the root lists top-level namespaces),
  /// sorted. A namespace exists when it was created or holds a table, at any depth: a table
  /// "a.b.t" makes "a" appear under the root and "a.b" under "a". kNotFound if a non-root
  /// parent does not exist.
  virtual Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) = 0;

  /// \brief Whether `ns` exists (created, or any table in it or below it).
  virtual Result<bool> NamespaceExists(const Namespace& ns) = 0;

  /// \brief Drop an empty namespace and its properties. kNotFound if it does not exist;
  /// kInvalidArgument ("namespace 'a' is not empty") if it or a namespace below it holds a table
  /// or a sub-namespace.
  virtual Status DropNamespace(const Namespace& ns) = 0;

  /// \brief The namespace's user properties (the reserved "exists" marker is hidden).
  /// kNotFound if the namespace does not exist.
  virtual Result<NamespaceProperties> LoadNamespaceProperties(const Namespace& ns) = 0;

  /// \brief Set `updates` and remove `removals` (absent keys are ignored) in one transaction.
  /// kNotFound if the namespace does not exist; kInvalidArgument for the reserved key "exists"
  /// or a key both set and removed; kCommitConflict if another writer added one of the same new
  /// keys at the same moment (nothing was changed; retry).
  virtual Status UpdateNamespaceProperties(const Namespace& ns, const NamespaceProperties& updates,
                                           const std::vector<std::string>& removals) = 0;

  // ---- Tables -----------------------------------------------------------------------------

  /// \brief Register a new table whose first metadata file is `metadata_location`.
  /// kAlreadyExists if the identifier is taken; kNotFound if the namespace does not exist
  /// (create it first; see EnsureNamespace); kInvalidArgument for an empty location.
  virtual Status CreateTable(const TableIdentifier& id, const std::string& metadata_location) = 0;

  /// \brief The location of the table's current metadata JSON. kNotFound if no such table.
  virtual Result<std::string> LoadTable(const TableIdentifier& id) = 0;

  /// \brief The current and previous metadata locations. kNotFound if no such table.
  virtual Result<TableEntry> LoadTableEntry(const TableIdentifier& id) = 0;

  /// \brief Whether the table exists.
  virtual Result<bool> TableExists(const TableIdentifier& id) = 0;

  /// \brief The tables directly in `ns` (not in nested namespaces), sorted by name.
  /// kNotFound if the namespace does not exist.
  virtual Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) = 0;

  /// \brief Remove the table from the catalog. Files are not touched (the caller purges them
  /// if it wants). kNotFound if no such table.
  virtual Status DropTable(const TableIdentifier& id) = 0;

  /// \brief Give a table a new identifier; its metadata location is unchanged. kNotFound if
  /// `from` does not exist or `to`'s namespace does not exist; kAlreadyExists if `to` exists.
  virtual Status RenameTable(const TableIdentifier& from, const TableIdentifier& to) = 0;

  /// \brief Atomically replace the table's metadata location `expected_metadata_location` by
  /// `new_metadata_location` (compare-and-swap), recording the old one as previous.
  ///
  /// Locations are compared as exact strings. Errors: kCommitConflict when the current
  /// location is not `expected_metadata_location` (another writer won: reload, re-apply,
  /// retry); kNotFound if the table does not exist; kInvalidArgument for an empty new
  /// location. kIOError means the outcome is UNKNOWN (e.g. the connection broke after the
  /// statement was sent): do not delete the new metadata file; reload and check whether
  /// `new_metadata_location` became current. Unless CommitNotApplied(status): a kIOError whose
  /// message holds "(not committed)" says the database refused the swap before applying it
  /// (locked past the busy timeout, read-only, full): the outcome is known, nothing changed.
  virtual Status CommitTable(const TableIdentifier& id,
                             const std::string& expected_metadata_location,
                             const std::string& new_metadata_location) = 0;
};

/// \brief Create `ns` unless it already exists (a concurrent creator is fine).
Status EnsureNamespace(Catalog& catalog, const Namespace& ns);

/// \brief The mark a catalog puts in the message of a kIOError from CommitTable when the swap
/// certainly was not applied.
inline constexpr std::string_view kNotCommittedMark = "(not committed)";

/// \brief True for a CommitTable error whose outcome is known: nothing was swapped (kIOError
/// carrying kNotCommittedMark).
bool CommitNotApplied(const Status& status);

/// \brief A catalog held in process memory, for tests of the table layer. Same semantics and
/// errors as the SQL catalogs; nothing persists. Thread-safe (one mutex).
std::unique_ptr<Catalog> MakeInMemoryCatalog(std::string name = "geolake");

}  // namespace geolake::table
