/// \file
/// What the table commands (create, describe, snapshots, files, append) share: opening the
/// catalog named by the global options, loading a table by name, rendering times and values,
/// and printing JSON. Internal to cli/.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "geolake/cli/command.h"
#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"
#include "geolake/io/file_io.h"
#include "geolake/layout/table_layout.h"
#include "geolake/table/catalog.h"
#include "geolake/table/manifest.h"
#include "geolake/table/transaction.h"

namespace geolake::cli {

/// \brief A catalog, a FileIO and (after LoadNamedTable) one loaded table.
struct TableSession {
  std::unique_ptr<table::Catalog> catalog;
  std::unique_ptr<io::FileIO> io;
};

/// \brief Open the catalog of --catalog (default sqlite at <warehouse>/catalog.db) and a
/// local FileIO. Errors: those of catalog::OpenCatalog.
Result<TableSession> OpenTableSession(const GlobalOptions& global);

/// \brief Parse "ns.name" and load the table. kInvalidArgument for a bad name, kNotFound for
/// an unknown table, kCorruptData when its metadata names no current schema.
Result<table::Table> LoadNamedTable(TableSession& session, std::string_view name);

/// \brief "2026-11-29T21:40:28.123Z" (ISO 8601, UTC, milliseconds).
std::string IsoTimeUtc(std::int64_t epoch_ms);

/// \brief A partition tuple as "geo_cell=0231" pairs joined by "/" ("" when unpartitioned).
std::string PartitionText(const table::TableMetadata& metadata, const table::DataFile& file);

/// \brief The partition tuple as a JSON object {"geo_cell": "0231"} (null values as null).
nlohmann::ordered_json PartitionJson(const table::TableMetadata& metadata,
                                     const table::DataFile& file);

/// \brief A data file's bbox from its manifest bounds of bbox.xmin..bbox.ymax (lower bounds of
/// the minima, upper bounds of the maxima); nullopt when any of the four is absent (e.g. a file
/// of only null geometries).
std::optional<geo::Envelope> DataFileBbox(const layout::TableLayout& layout,
                                          const table::DataFile& file);

/// \brief Print `j` with two-space indentation and a newline on stdout.
void PrintJson(const nlohmann::ordered_json& j);

}  // namespace geolake::cli
