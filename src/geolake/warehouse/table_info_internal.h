/// \file
/// What the Warehouse's table operations share (Describe, Files, Append): a data file's
/// partition values and its bbox from the manifest bounds. Internal to warehouse/.
#pragma once

#include <optional>
#include <vector>

#include "geolake/geo/envelope.h"
#include "geolake/geolake.h"
#include "geolake/layout/table_layout.h"

namespace geolake::internal {

/// \brief The partition tuple of `file`, named and typed by the table's default spec when its
/// arity matches (geolake tables have one spec), else named p0, p1, ... without a type.
std::vector<PartitionValue> PartitionValues(const table::TableMetadata& metadata,
                                            const table::DataFile& file);

/// \brief A data file's bbox from its manifest bounds of bbox.xmin..bbox.ymax (lower bounds of
/// the minima, upper bounds of the maxima); nullopt without a layout or when any of the four
/// is absent.
std::optional<geo::Envelope> DataFileBbox(const Result<layout::TableLayout>& layout,
                                          const table::DataFile& file);

}  // namespace geolake::internal
