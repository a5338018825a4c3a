/// \file
/// What the three parts of the native GeoPackage reader share (sources/ only): how a field is
/// read from its SQLite column (gpkg_values.cc), the catalogue queries of the description
/// (gpkg_schema.cc), and the read-only connection every part opens. GpkgSource (gpkg_source.h)
/// is the public face.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/sources/gdal_source.h"
#include "geolake/sqlite/sqlite.h"

namespace geolake::sources::gpkg {

// ---- Values (gpkg_values.cc) ------------------------------------------------------------------

/// How each field is read from its SQLite column: the sqlite3_column_* call GDAL's GeoPackage
/// driver makes for the OGR type GDAL gave the field, so that the values match; a number SQLite
/// would coerce is refused first (InexactNumberReason).
enum class ColumnKind : std::uint8_t { kInt32, kInt64, kReal, kText, kBlob, kDate, kDateTime };

/// OGR type name (SourceInfo::field_source_types) -> kind; false for a type read otherwise.
bool KindOf(std::string_view ogr_type, ColumnKind* kind);

/// Append the WKB of a GeoPackage geometry blob to `out` exactly as OGR would export it (ISO,
/// little-endian); false, with `out` unchanged, for any blob whose OGR reading is not mirrored
/// here (see gpkg_values.cc).
bool AppendGpkgGeometry(const std::uint8_t* blob, std::size_t size, std::string* out);

/// Drop rows [rows, size) of a column (undoing a row that was half appended).
void TruncateColumn(geoparquet::Column* col, std::size_t rows);

/// Append the value of result column `idx` of the current row of `stmt` to `col` as GDAL would
/// read it for a field of `kind`; false (nothing appended) when only GDAL knows the exact answer.
bool AppendValue(const sqlite::Statement& stmt, int idx, ColumnKind kind, geoparquet::Column* col);

/// Why cell `idx` of the current row of `stmt` cannot be read exactly into a number field of
/// `kind` (kInt32, kInt64, kReal): a value SQLite would turn into another number without a
/// word, as GDAL reads it ('many' or a blob -> 0; 1e30 -> -1 in an Integer field, INT64_MAX in
/// an Integer64 one; 3.75 -> 3; an integer beyond 32 bits in an Integer field -> its low 32
/// bits; '1.5x' -> 1.5). Such a row is unreadable (ingest rejects it with this reason), on the
/// native and the GDAL path alike. The reason names the field: "field 'n': text 'many' in an
/// Integer64 field". Empty when the value is exact, null, or `kind` is not a number kind.
std::string InexactNumberReason(const sqlite::Statement& stmt, int idx, ColumnKind kind,
                                std::string_view field_name);

/// Append a row of nulls without geometry (an unreadable row's values) to `batch`.
void AppendNullRow(std::int64_t feature_index, geoparquet::FeatureBatch* batch);

/// For the GDAL reading of a GeoPackage table: reads the number cells of one row by FID with
/// SQLite, so that a value GDAL would coerce (InexactNumberReason) makes the row unreadable
/// there too. Thread-safety: none (one per GdalSource).
class NumberCellCheck {
 public:
  /// \brief A check for the layer `info` describes, or nullptr when there is nothing to check
  /// (not a GeoPackage, a GDAL virtual path, no FID column, no number field, not a plain table
  /// holding every number field's column). Errors: none; SQLite failures give nullptr.
  static std::unique_ptr<NumberCellCheck> Open(const SourceInfo& info);
  ~NumberCellCheck();

  /// \brief Why the row whose FID is `fid` cannot be read exactly (empty when it can, or when
  /// no row has that FID).
  Result<std::string> Check(std::int64_t fid);

 private:
  NumberCellCheck() = default;
  std::unique_ptr<sqlite::Database> db_;
  std::unique_ptr<sqlite::Statement> stmt_;  // of db_ (declared after it: destroyed first)
  std::vector<std::string> names_;
  std::vector<ColumnKind> kinds_;
};

// ---- Catalogue queries (gpkg_schema.cc) -------------------------------------------------------

/// One cell of a catalogue query: its SQLite type, text ("" for NULL) and integer value.
struct SqlValue {
  sqlite::ValueType type = sqlite::ValueType::kNull;
  std::string text;
  std::int64_t integer = 0;
  bool is_integer() const { return type == sqlite::ValueType::kInteger; }
};

/// Run `sql` with text parameters and hand each row's cells to `on_row`. Used for the few
/// catalogue queries Describe and Open make.
Status QueryRows(sqlite::Database& db, const std::string& sql,
                 std::initializer_list<std::string> params,
                 const std::function<void(const std::vector<SqlValue>&)>& on_row);

/// Open `path` read-only for reading a GeoPackage (5 s busy timeout).
Result<std::unique_ptr<sqlite::Database>> OpenReadOnly(const std::string& path);

std::string Upper(std::string_view text);
bool EqualNoCase(std::string_view a, std::string_view b);

}  // namespace geolake::sources::gpkg
