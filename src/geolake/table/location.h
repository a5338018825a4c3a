/// \file
/// Where a table lives on disk, and the rules that keep two tables of one catalog apart
/// (docs/table-layout.md, "Names and locations"). A table name maps to its default location
/// `<warehouse>/<namespace levels>/<name>` through DefaultTableLocation, the one function every
/// command uses; names are restricted to a set of characters that can neither leave the warehouse
/// nor make two names one folder; and a new table's location may neither equal, lie inside nor
/// contain the location of another table of the same catalog (CheckLocationFree, called by
/// CreateTable), because remove-orphans on one table would otherwise judge the other's files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/io/file_io.h"
#include "geolake/table/catalog.h"

namespace geolake::table {

/// \brief kInvalidArgument unless every namespace level and the table name of `id` is 1 to 255
/// characters of [A-Za-z0-9_-] and does not start with '-'. Without '/', '\\', '.', NUL or
/// control characters a name can neither become an absolute path, climb out with `..`, nor
/// alias another name's folder (`a.b.c` and `a/b.c` were one folder before this rule).
Status ValidateTableNameForLocation(const TableIdentifier& id);

/// \brief The location of a new table: `<warehouse>/<ns levels joined by '/'>/<name>`, absolute
/// and lexically normal. The only place a name becomes a path. kInvalidArgument from
/// ValidateTableNameForLocation, or for an empty warehouse.
Result<std::string> DefaultTableLocation(std::string_view warehouse, const TableIdentifier& id);

/// \brief `path` as an absolute, lexically normal local path without a trailing '/': a `file:`
/// URI prefix stripped ("file:///a/b", "file:/a/b"), relative paths resolved against the
/// working directory. kInvalidArgument for another URI scheme (s3://, hdfs://, ...).
Result<std::string> NormalizeLocalPath(std::string_view path);

/// \brief True when normalized `path` is `dir` or lies below it, compared by whole path
/// components ("/a/bc" is not below "/a/b").
bool IsWithinPath(std::string_view path, std::string_view dir);

/// \brief True when normalized locations `a` and `b` are one folder or one lies inside the
/// other. Compared ignoring ASCII case: on a case-insensitive file system (macOS, Windows)
/// `/w/Roads` and `/w/roads` are one folder.
bool LocationsOverlap(std::string_view a, std::string_view b);

/// \brief One table of a catalog and where it lives.
struct TableLocation {
  TableIdentifier id;
  std::string metadata_location;
  /// The normalized table location from its metadata; when the metadata cannot be read, the
  /// folder above the metadata file's folder (`<location>/metadata/<file>`), and `readable` is
  /// false. Empty for a location that is not a local path (another URI scheme).
  std::string location;
  bool readable = false;
};

/// \brief Every table of the catalog (all namespaces, at every depth) with its location.
/// A table whose metadata cannot be read is listed with readable = false, not an error.
/// Errors: those of the catalog's list calls.
Result<std::vector<TableLocation>> ListTableLocations(Catalog& catalog, const io::FileIO& io);

/// \brief kInvalidArgument naming the other table when `location` equals, lies inside or
/// contains the location of a table of `catalog` other than `id`. `location` need not be
/// normalized. The check reads the catalog once; two creators racing with overlapping
/// locations can both pass it (the catalog has no lock over locations).
Status CheckLocationFree(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id,
                         const std::string& location);

}  // namespace geolake::table
