// How the native GeoPackage reader turns SQLite cells into FeatureBatch values exactly as GDAL
// 3.6's GeoPackage driver reads them: typed attribute cells (with GDAL's coercions and its
// GeoPackage date and date-time forms) and geometry blobs (the GeoPackageBinary header stepped
// over, the standard WKB behind it validated and copied).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <string_view>

#include "geolake/core/little_endian.h"
#include "geolake/core/utf8.h"
#include "geolake/geo/wkb.h"
#include "geolake/sources/gpkg_internal.h"
#include "geolake/sources/sources_internal.h"

namespace geolake::sources::gpkg {

using geoparquet::Column;
using geoparquet::FieldType;

bool KindOf(std::string_view ogr_type, ColumnKind* kind) {
  const std::string_view base = ogr_type.substr(0, ogr_type.find('('));
  if (base == "Integer") {
    *kind = ColumnKind::kInt32;
  } else if (base == "Integer64") {
    *kind = ColumnKind::kInt64;
  } else if (base == "Real") {
    *kind = ColumnKind::kReal;
  } else if (base == "String") {
    *kind = ColumnKind::kText;
  } else if (base == "Binary") {
    *kind = ColumnKind::kBlob;
  } else if (base == "Date") {
    *kind = ColumnKind::kDate;
  } else if (base == "DateTime") {
    *kind = ColumnKind::kDateTime;
  } else {
    return false;
  }
  return true;
}

namespace {

bool IsDigits(const char* text, std::initializer_list<int> positions) {
  for (int pos : positions) {
    if (static_cast<unsigned>(text[pos] - '0') > 9) return false;
  }
  return true;
}

int Number(const char* text, int pos, int digits) {
  int value = 0;
  for (int i = 0; i < digits; ++i) value = value * 10 + (text[pos + i] - '0');
  return value;
}

// The GeoPackage date form "YYYY-MM-DD" with a month 1-12 and a day 1-31; anything else is
// left to GDAL (its lax parser accepts more forms, and their exact results are GDAL's).
bool ParseNominalDate(const char* text, std::size_t length, std::int64_t* days) {
  if (length != 10 || text[4] != '-' || text[7] != '-' ||
      !IsDigits(text, {0, 1, 2, 3, 5, 6, 8, 9})) {
    return false;
  }
  const int month = Number(text, 5, 2);
  const int day = Number(text, 8, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  *days = internal::DaysSinceEpoch(Number(text, 0, 4), month, day);
  return true;
}

// The GeoPackage date-time forms "YYYY-MM-DDTHH:MM:SS[.SSS][Z]" (what GDAL writes), checked
// as GDAL checks them; a seconds value is a float built as GDAL builds it (whole seconds plus
// milliseconds / 1000.0, rounded to float once), so the microseconds agree to the last digit.
bool ParseNominalDateTime(const char* text, std::size_t length, std::int64_t* micros) {
  const bool utc = length > 0 && text[length - 1] == 'Z';
  const std::size_t body = utc ? length - 1 : length;
  if (body != 19 && body != 23) return false;
  if (text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      !IsDigits(text, {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})) {
    return false;
  }
  float second = static_cast<float>(Number(text, 17, 2));
  if (body == 23) {
    if (text[19] != '.' || !IsDigits(text, {20, 21, 22})) return false;
    second = static_cast<float>(Number(text, 17, 2) + Number(text, 20, 3) / 1000.0);
  }
  const int month = Number(text, 5, 2);
  const int day = Number(text, 8, 2);
  const int hour = Number(text, 11, 2);
  const int minute = Number(text, 14, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second >= 61.0f) {
    return false;
  }
  *micros = internal::TimestampMicros(Number(text, 0, 4), month, day, hour, minute, second,
                                      utc ? 100 : 0);
  return true;
}

// Bytes of the envelope for each envelope contents indicator 0-4 (GeoPackage 1.3, 2.1.3.1.1).
constexpr std::array<std::size_t, 5> kEnvelopeBytes = {0, 32, 48, 48, 64};

// OGR writes every ordinate of an empty point (x and y both NaN) as the canonical quiet NaN,
// whatever NaN the file held. `wkb` is canonical ISO little-endian WKB (validated); rewrite
// its empty points the same way. Returns the bytes the geometry at `wkb` spans.
std::size_t CanonicalizeEmptyPoints(char* wkb) {
  const auto code = LoadLE<std::uint32_t>(wkb + 1);
  const std::uint32_t base = code % 1000;
  const std::uint32_t dims = code / 1000;
  const std::size_t stride_bytes = std::size_t{8} * (2 + (dims == 1 || dims == 2 ? 1
                                                          : dims == 3            ? 2
                                                                                 : 0));
  std::uint32_t count = 0;
  switch (base) {
    case 1: {  // Point
      const auto x = LoadLE<double>(wkb + 5);
      const auto y = LoadLE<double>(wkb + 13);
      if (std::isnan(x) && std::isnan(y)) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        for (std::size_t off = 0; off < stride_bytes; off += 8) StoreLE(nan, wkb + 5 + off);
      }
      return 5 + stride_bytes;
    }
    case 2:  // LineString
      count = LoadLE<std::uint32_t>(wkb + 5);
      return 9 + count * stride_bytes;
    case 3: {  // Polygon
      count = LoadLE<std::uint32_t>(wkb + 5);
      std::size_t size = 9;
      for (std::uint32_t ring = 0; ring < count; ++ring) {
        const auto points = LoadLE<std::uint32_t>(wkb + size);
        size += 4 + points * stride_bytes;
      }
      return size;
    }
    default: {  // Multi* and GeometryCollection
      count = LoadLE<std::uint32_t>(wkb + 5);
      std::size_t size = 9;
      for (std::uint32_t member = 0; member < count; ++member) {
        size += CanonicalizeEmptyPoints(wkb + size);
      }
      return size;
    }
  }
}

// True when canonical-looking WKB is plainly empty: a point with NaN x and y, or anything
// else with no members (the forms GDAL writes for empty geometries). Reads only the root
// header; the caller still validates the whole value.
bool IsEmptyWkbRoot(std::span<const std::uint8_t> wkb) {
  if (wkb.size() < 9 || wkb[0] != 1) return false;
  const auto code = LoadLE<std::uint32_t>(wkb.data() + 1);
  if (code % 1000 == 1) {
    if (wkb.size() < 21) return false;
    const auto x = LoadLE<double>(wkb.data() + 5);
    const auto y = LoadLE<double>(wkb.data() + 13);
    return std::isnan(x) && std::isnan(y);
  }
  return LoadLE<std::uint32_t>(wkb.data() + 5) == 0;
}

}  // namespace

// Append the WKB of a GeoPackage geometry blob to `out` exactly as OGR would export it (ISO,
// little-endian); false, with `out` unchanged, for any blob whose OGR reading is not mirrored
// here: not a standard GeoPackageBinary version 1 (spatialite, extended types), the empty
// flag set on a geometry that is not plainly empty, a bad envelope indicator, or WKB that is not
// already canonical ISO little-endian of the seven simple types with consistent dimensions (curves,
// EWKB, big-endian parts, trailing bytes).
bool AppendGpkgGeometry(const std::uint8_t* blob, std::size_t size, std::string* out) {
  if (size < 8 || blob[0] != 'G' || blob[1] != 'P' || blob[2] != 0) return false;
  const std::uint8_t flags = blob[3];
  if ((flags & 0xE0) != 0) return false;  // extended type, reserved bits
  const std::size_t envelope = (flags >> 1) & 0x7;
  if (envelope >= kEnvelopeBytes.size()) return false;
  const std::size_t header = 8 + kEnvelopeBytes[envelope];
  if (size < header + 5) return false;
  const std::span<const std::uint8_t> wkb(blob + header, size - header);
  // OGR reads the WKB whatever the empty flag says; read natively only where the two agree.
  if ((flags & 0x10) != 0 && !IsEmptyWkbRoot(wkb)) return false;
  // Only bytes already in canonical form are known to equal OGR's export; anything that
  // would need re-encoding (or is not valid WKB) goes to GDAL.
  if (!geo::IsCanonicalWkb(wkb)) return false;
  const std::size_t before = out->size();
  out->append(reinterpret_cast<const char*>(wkb.data()), wkb.size());
  const auto code = LoadLE<std::uint32_t>(wkb.data() + 1);
  if (code % 1000 == 1 || code % 1000 == 4 || code % 1000 == 7) {
    CanonicalizeEmptyPoints(out->data() + before);
  }
  return true;
}

// Drop rows [rows, size) of a column (undoing a row that was half appended).
void TruncateColumn(Column* col, std::size_t rows) {
  col->valid.resize(rows);
  switch (col->type) {
    case FieldType::kDouble:
      col->doubles.resize(rows);
      break;
    case FieldType::kString:
    case FieldType::kBinary:
      col->offsets.resize(rows + 1);
      col->bytes.resize(static_cast<std::size_t>(col->offsets[rows]));
      break;
    default:
      col->ints.resize(rows);
      break;
  }
}

// Append the value of result column `idx` to `col` as GDAL would read it for a field of
// `kind`; false (nothing appended) when only GDAL knows the exact answer.
bool AppendValue(const sqlite::Statement& stmt, int idx, ColumnKind kind, Column* col) {
  const sqlite::ValueType type = stmt.column_type(idx);
  const bool bytes_column = col->type == FieldType::kString || col->type == FieldType::kBinary;
  if (type == sqlite::ValueType::kNull) {
    col->valid.push_back(0);
    if (bytes_column) {
      col->offsets.push_back(static_cast<std::int64_t>(col->bytes.size()));
    } else if (col->type == FieldType::kDouble) {
      col->doubles.push_back(0.0);
    } else {
      col->ints.push_back(0);
    }
    return true;
  }
  switch (kind) {
    case ColumnKind::kInt32:
      col->ints.push_back(stmt.ColumnInt(idx));
      break;
    case ColumnKind::kInt64:
      col->ints.push_back(stmt.ColumnInt64(idx));
      break;
    case ColumnKind::kReal:
      col->doubles.push_back(stmt.ColumnDouble(idx));
      break;
    case ColumnKind::kText: {
      const char* text = stmt.ColumnCString(idx);
      if (text == nullptr) return false;
      col->bytes.append(text, std::strlen(text));  // OGR keeps a C string: up to the first NUL
      col->offsets.push_back(static_cast<std::int64_t>(col->bytes.size()));
      break;
    }
    case ColumnKind::kBlob: {
      std::span<const std::uint8_t> data;
      if (!stmt.ColumnBlob(idx, &data)) return false;
      if (!data.empty()) col->bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
      col->offsets.push_back(static_cast<std::int64_t>(col->bytes.size()));
      break;
    }
    case ColumnKind::kDate:
    case ColumnKind::kDateTime: {
      if (type != sqlite::ValueType::kText) return false;
      std::string_view cell;
      if (!stmt.ColumnText(idx, &cell) || cell.data() == nullptr) return false;
      const char* text = cell.data();
      const std::size_t length = cell.size();
      std::int64_t value = 0;
      const bool parsed = kind == ColumnKind::kDate ? ParseNominalDate(text, length, &value)
                                                    : ParseNominalDateTime(text, length, &value);
      if (!parsed) return false;
      col->ints.push_back(value);
      break;
    }
  }
  col->valid.push_back(1);
  return true;
}

}  // namespace geolake::sources::gpkg

namespace geolake::sources::gpkg {
namespace {

// The OGR type of a number field, with its article.
std::string_view KindName(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kInt32:
      return "an Integer";
    case ColumnKind::kInt64:
      return "an Integer64";
    default:
      return "a Real";
  }
}

// `text` without the spaces SQLite skips around a number.
std::string_view TrimSpaces(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// Whether `text` is an integer literal ([+-]digits) within [lo, hi].
bool IsIntegerText(std::string_view text, std::int64_t lo, std::int64_t hi) {
  text = TrimSpaces(text);
  const bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  if (text.empty() || text.size() > 19) return false;
  std::uint64_t magnitude = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    magnitude = magnitude * 10 + static_cast<std::uint64_t>(c - '0');
  }
  // The magnitude of `lo` is one more than `hi`'s (two's complement).
  if (negative) return magnitude <= static_cast<std::uint64_t>(-(lo + 1)) + 1;
  return magnitude <= static_cast<std::uint64_t>(hi);
}

// Whether `text` is a finite decimal number, all of it (what SQLite reads exactly as a REAL).
bool IsDecimalText(std::string_view text) {
  text = TrimSpaces(text);
  if (text.empty() || text.size() > 64) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E')) {
      return false;
    }
  }
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(value);
}

}  // namespace

std::string InexactNumberReason(const sqlite::Statement& stmt, int idx, ColumnKind kind,
                                std::string_view field_name) {
  if (kind != ColumnKind::kInt32 && kind != ColumnKind::kInt64 && kind != ColumnKind::kReal) {
    return "";
  }
  const std::int64_t lo = kind == ColumnKind::kInt32 ? std::numeric_limits<std::int32_t>::min()
                                                     : std::numeric_limits<std::int64_t>::min();
  const std::int64_t hi = kind == ColumnKind::kInt32 ? std::numeric_limits<std::int32_t>::max()
                                                     : std::numeric_limits<std::int64_t>::max();
  // The message parts are built only for a value that needs them: this runs for every numeric
  // cell of a GeoPackage, and building them eagerly was 4% of a make-valid of 1M polygons.
  const auto field = [&] { return "field '" + EscapeForMessage(field_name) + "': "; };
  const auto in_field = [&] { return " in " + std::string(KindName(kind)) + " field"; };
  switch (stmt.column_type(idx)) {
    case sqlite::ValueType::kNull:
      return "";
    case sqlite::ValueType::kInteger: {
      const std::int64_t value = stmt.ColumnInt64(idx);
      if (kind == ColumnKind::kInt32 && (value < lo || value > hi)) {
        return field() + "integer " + std::to_string(value) + " does not fit the field's 32 bits";
      }
      return "";
    }
    case sqlite::ValueType::kFloat: {
      if (kind == ColumnKind::kReal) return "";
      const double value = stmt.ColumnDouble(idx);
      // 2^63 is the first double above INT64_MAX; -2^63 is INT64_MIN itself.
      const bool exact = std::isfinite(value) && std::trunc(value) == value &&
                         value >= static_cast<double>(lo) &&
                         (kind == ColumnKind::kInt32 ? value <= static_cast<double>(hi)
                                                     : value < 9223372036854775808.0);
      if (exact) return "";
      return field() + "real " + fmt::format("{}", value) + in_field();
    }
    case sqlite::ValueType::kText: {
      std::string_view text;
      if (!stmt.ColumnText(idx, &text))
        return field() + "text that SQLite cannot read" + in_field();
      const bool exact =
          kind == ColumnKind::kReal ? IsDecimalText(text) : IsIntegerText(text, lo, hi);
      if (exact) return "";
      return field() + "text '" + EscapeForMessage(text.substr(0, 40)) +
             (text.size() > 40 ? "...'" : "'") + in_field();
    }
    case sqlite::ValueType::kBlob:
      return field() + "a blob" + in_field();
  }
  return "";
}

void AppendNullRow(std::int64_t feature_index, geoparquet::FeatureBatch* batch) {
  for (Column& col : batch->columns) {
    col.valid.push_back(0);
    switch (col.type) {
      case FieldType::kDouble:
        col.doubles.push_back(0.0);
        break;
      case FieldType::kString:
      case FieldType::kBinary:
        col.offsets.push_back(static_cast<std::int64_t>(col.bytes.size()));
        break;
      default:
        col.ints.push_back(0);
        break;
    }
  }
  batch->geometry_valid.push_back(0);
  batch->wkb_offsets.push_back(static_cast<std::int64_t>(batch->wkb.size()));
  batch->feature_index.push_back(feature_index);
}

NumberCellCheck::~NumberCellCheck() = default;

std::unique_ptr<NumberCellCheck> NumberCellCheck::Open(const SourceInfo& info) {
  if (info.driver != "GPKG" || info.fid_column.empty() || info.path.rfind("/vsi", 0) == 0) {
    return nullptr;
  }
  auto check = std::unique_ptr<NumberCellCheck>(new NumberCellCheck());
  std::string columns;
  for (std::size_t i = 0; i < info.fields.size() && i < info.field_source_types.size(); ++i) {
    ColumnKind kind{};
    if (!KindOf(info.field_source_types[i], &kind)) continue;
    if (kind != ColumnKind::kInt32 && kind != ColumnKind::kInt64 && kind != ColumnKind::kReal) {
      continue;
    }
    columns += (columns.empty() ? "" : ", ") + internal::QuoteIdentifier(info.fields[i].name);
    check->names_.push_back(info.fields[i].name);
    check->kinds_.push_back(kind);
  }
  if (check->names_.empty()) return nullptr;
  auto db = OpenReadOnly(info.path);
  if (!db.ok()) return nullptr;
  check->db_ = *std::move(db);
  std::string object_type;
  const Status listed =
      QueryRows(*check->db_, "SELECT type FROM sqlite_master WHERE name = ?", {info.layer},
                [&](const auto& row) { object_type = row[0].text; });
  // A view has no index on its FID: one lookup per row would scan it whole.
  if (!listed.ok() || object_type != "table") return nullptr;
  auto stmt =
      check->db_->Prepare("SELECT " + columns + " FROM " + internal::QuoteIdentifier(info.layer) +
                          " WHERE " + internal::QuoteIdentifier(info.fid_column) + " = ?1");
  if (!stmt.ok()) return nullptr;
  check->stmt_ = *std::move(stmt);
  return check;
}

Result<std::string> NumberCellCheck::Check(std::int64_t fid) {
  stmt_->Reset();
  GEOLAKE_RETURN_NOT_OK(stmt_->BindInt64(1, fid));
  GEOLAKE_ASSIGN_OR_RETURN(bool has_row, stmt_->Step());
  if (!has_row) return std::string();
  for (std::size_t i = 0; i < kinds_.size(); ++i) {
    std::string reason = InexactNumberReason(*stmt_, static_cast<int>(i), kinds_[i], names_[i]);
    if (!reason.empty()) return reason;
  }
  return std::string();
}

}  // namespace geolake::sources::gpkg
