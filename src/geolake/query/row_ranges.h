/// \file
/// Row-range arithmetic of the query scan (query/ only): sets of rows of one row group as sorted,
/// disjoint half-open ranges [begin, end), intersected, united and subtracted, as page pruning
/// combines the pages each predicate may match.
#pragma once

#include <vector>

#include "geolake/formats/parquet/reader.h"

namespace geolake::query::internal {

using parquet::RowRange;
using Ranges = std::vector<RowRange>;

/// \brief Rows in both `a` and `b` (each sorted and disjoint).
Ranges Intersect(const Ranges& a, const Ranges& b);
/// \brief Rows in `a` or `b` (any order; overlapping or touching ranges merge).
Ranges Union(const Ranges& a, const Ranges& b);
/// \brief Rows of `a` that are not in `b` (both sorted and disjoint).
Ranges Subtract(const Ranges& a, const Ranges& b);

}  // namespace geolake::query::internal
