/// \file
/// Table: a loaded Iceberg table, i.e. its identifier, where its current metadata file is and
/// what that file says. Loaded by LoadTable / LoadTableFromPath and created by CreateTable
/// (transaction.h); every operation on a table starts from one.
#pragma once

#include <string>

#include "geolake/table/catalog.h"
#include "geolake/table/table_metadata.h"

namespace geolake::table {

/// \brief A loaded table: where its metadata is and what it says.
///
/// Thread-safety: a plain value.
struct Table {
  TableIdentifier id;
  std::string metadata_location;
  TableMetadata metadata;
};

}  // namespace geolake::table
