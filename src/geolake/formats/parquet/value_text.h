/// \file
/// Text for Parquet leaf values, as listings show them (`geolake cat`, the statistics of
/// `geolake inspect`, later `query --format csv`): the logical type decides the form (DATE as
/// 2024-05-01, TIMESTAMP as ISO 8601 with a Z when adjusted to UTC, DECIMAL scaled, STRING as
/// text, other binary as hex). Each text says whether it is a JSON literal (numbers, true,
/// false, null) or a string that JSON must quote.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/formats/parquet/column_data.h"
#include "geolake/formats/parquet/schema.h"

namespace geolake::parquet {

/// \brief A rendered value.
struct ValueText {
  std::string text;
  /// True when `text` is a string (JSON quotes and escapes it); false when it is a JSON
  /// literal: a number, true, false or null (non-finite floats render as null).
  bool quoted = false;
};

/// \brief True when the leaf's bytes are text (STRING, ENUM, JSON, or legacy UTF8).
bool IsTextLeaf(const parquet::LeafColumn& leaf);

/// \brief The `value_idx`-th stored (non-null) value of `column`, a column of `leaf`.
/// Precondition: value_idx < column.num_values().
ValueText LeafValueText(const parquet::LeafColumn& leaf, const parquet::ColumnData& column,
                        std::int64_t value_idx);

/// \brief A PLAIN-encoded single value (a statistics bound). Bytes of the wrong width for a
/// fixed-width type render as hex.
ValueText PlainValueText(const parquet::LeafColumn& leaf, std::string_view plain);

/// \brief `text` as a JSON string literal, quotes included (control characters escaped;
/// invalid UTF-8 bytes replaced by U+FFFD).
std::string JsonQuote(std::string_view text);

}  // namespace geolake::parquet
