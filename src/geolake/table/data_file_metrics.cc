#include "geolake/table/data_file_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "geolake/core/little_endian.h"
#include "geolake/core/utf8.h"
#include "geolake/formats/parquet/schema.h"

namespace geolake::table {

namespace {

// Decode UTF-8 into code points; invalid sequences are taken byte by byte so that truncation
// never fails (bounds of invalid strings are still byte-order bounds).
std::vector<std::uint32_t> CodePoints(const std::string& s) {
  std::vector<std::uint32_t> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    std::uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += static_cast<std::size_t>(len);
  }
  return out;
}

// Byte offset just past the first `n` code points.
std::size_t PrefixBytes(const std::string& s, int n) {
  std::size_t i = 0;
  int count = 0;
  while (i < s.size()) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (count == n) break;
      ++count;
    }
    ++i;
  }
  return i;
}

Int128 SignExtend(std::string_view bytes) {
  if (bytes.empty()) return 0;
  // The first byte, sign-extended.
  Int128 v = static_cast<std::uint8_t>(bytes[0]);
  if (v >= 128) v -= 256;
  for (std::size_t i = 1; i < bytes.size(); ++i) {
    v = static_cast<Int128>(static_cast<unsigned __int128>(v) << 8) |  // NOLINT
        static_cast<std::uint8_t>(bytes[i]);
  }
  return v;
}

// A Parquet min/max statistic (plain encoding) as an Iceberg value of `type`; null when the
// type has no bounds (geo, nested) or the statistic is NaN.
Result<Value> StatisticValue(const Type& type, parquet::PhysicalType physical,
                             const std::string& bytes) {
  switch (type.id()) {
    case TypeId::kGeometry:
    case TypeId::kGeography:
    case TypeId::kVariant:
    case TypeId::kUnknown:
      return Value();
    case TypeId::kDecimal:
      if (physical == parquet::PhysicalType::kInt32 && bytes.size() == 4) {
        return Value(DecimalValue{LoadLE<std::int32_t>(bytes.data())});
      }
      if (physical == parquet::PhysicalType::kInt64 && bytes.size() == 8) {
        return Value(DecimalValue{LoadLE<std::int64_t>(bytes.data())});
      }
      return Value(DecimalValue{SignExtend(bytes)});
    default: {
      GEOLAKE_ASSIGN_OR_RETURN(Value v, DeserializeValue(type, bytes));
      if ((std::holds_alternative<double>(v) && std::isnan(std::get<double>(v))) ||
          (std::holds_alternative<float>(v) && std::isnan(std::get<float>(v)))) {
        return Value();
      }
      return v;
    }
  }
}

struct ColumnAcc {
  std::optional<parquet::BoundingBox> bbox;  // geometry bounds, merged over row groups
  bool bbox_known = true;
  std::int64_t column_size = 0;
  std::int64_t value_count = 0;
  std::int64_t null_count = 0;
  bool null_count_known = true;
  bool bounds_known = true;
  Value lower, upper;
};

std::optional<double> MergeOpt(std::optional<double> a, std::optional<double> b, bool take_min) {
  if (!a || !b) return std::nullopt;  // a dimension is bounded only if every chunk bounds it
  return take_min ? std::min(*a, *b) : std::max(*a, *b);
}

parquet::BoundingBox MergeBox(const parquet::BoundingBox& a, const parquet::BoundingBox& b) {
  parquet::BoundingBox out;
  out.xmin = std::min(a.xmin, b.xmin);
  out.ymin = std::min(a.ymin, b.ymin);
  out.xmax = std::max(a.xmax, b.xmax);
  out.ymax = std::max(a.ymax, b.ymax);
  out.zmin = MergeOpt(a.zmin, b.zmin, true);
  out.zmax = MergeOpt(a.zmax, b.zmax, false);
  out.mmin = MergeOpt(a.mmin, b.mmin, true);
  out.mmax = MergeOpt(a.mmax, b.mmax, false);
  return out;
}

}  // namespace

std::string TruncateLowerString(const std::string& value, int length) {
  return value.substr(0, PrefixBytes(value, length));
}

std::optional<std::string> TruncateUpperString(const std::string& value, int length) {
  const std::size_t prefix = PrefixBytes(value, length);
  if (prefix == value.size()) return value;
  std::vector<std::uint32_t> cps = CodePoints(value.substr(0, prefix));
  for (std::size_t i = cps.size(); i-- > 0;) {
    std::uint32_t next = cps[i] + 1;
    if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;  // skip surrogates
    if (next > 0x10FFFF) continue;
    std::string out;
    for (std::size_t k = 0; k < i; ++k) ::geolake::AppendUtf8(cps[k], &out);
    ::geolake::AppendUtf8(next, &out);
    return out;
  }
  return std::nullopt;
}

std::string TruncateLowerBinary(const std::string& value, int length) {
  return value.substr(0, std::min<std::size_t>(value.size(), static_cast<std::size_t>(length)));
}

std::optional<std::string> TruncateUpperBinary(const std::string& value, int length) {
  if (value.size() <= static_cast<std::size_t>(length)) return value;
  std::string out = value.substr(0, static_cast<std::size_t>(length));
  for (std::size_t i = out.size(); i-- > 0;) {
    if (static_cast<unsigned char>(out[i]) != 0xFF) {
      out[i] = static_cast<char>(static_cast<unsigned char>(out[i]) + 1);
      out.resize(i + 1);
      return out;
    }
  }
  return std::nullopt;
}

Result<DataFile> DataFileFromParquet(const parquet::FileMetaData& footer, std::string path,
                                     std::int64_t file_size_in_bytes, const Schema& table_schema,
                                     std::vector<Value> partition,
                                     const ParquetMetricsOptions& options) {
  auto schema = parquet::Schema::FromElements(footer.schema);
  if (!schema.ok()) {
    return Status::CorruptData("parquet footer of '" + path + "': " + schema.status().message());
  }
  DataFile f;
  f.file_path = std::move(path);
  f.file_format = "PARQUET";
  f.partition = std::move(partition);
  f.record_count = footer.num_rows;
  f.file_size_in_bytes = file_size_in_bytes;

  const auto& leaves = schema->leaves();
  std::map<std::int32_t, ColumnAcc> acc;
  for (const auto& rg : footer.row_groups) {
    if (!rg.columns.empty() && rg.columns.front().meta_data) {
      const auto& first = *rg.columns.front().meta_data;
      std::int64_t start = first.data_page_offset;
      if (first.dictionary_page_offset && *first.dictionary_page_offset > 0) {
        start = std::min(start, *first.dictionary_page_offset);
      }
      f.split_offsets.push_back(start);
    }
    for (std::size_t c = 0; c < rg.columns.size() && c < leaves.size(); ++c) {
      const parquet::LeafColumn& leaf = leaves[c];
      if (!leaf.field_id || !rg.columns[c].meta_data) continue;
      const NestedField* field = table_schema.FindField(*leaf.field_id);
      if (field == nullptr) continue;
      const auto& cm = *rg.columns[c].meta_data;
      ColumnAcc& a = acc[*leaf.field_id];
      a.column_size += cm.total_compressed_size;
      if (leaf.max_repetition_level > 0) continue;  // no counts/bounds inside lists and maps
      a.value_count += cm.num_values;
      const auto& st = cm.statistics;
      if (st && st->null_count) {
        a.null_count += *st->null_count;
      } else {
        a.null_count_known = false;
      }
      const std::int64_t non_null = cm.num_values - (st && st->null_count ? *st->null_count : 0);
      if (non_null == 0) continue;  // an all-null chunk does not constrain the bounds
      const TypeId tid = field->type->id();
      if (tid == TypeId::kGeometry || tid == TypeId::kGeography) {
        const auto& geo = cm.geospatial_statistics;
        if (!geo || !geo->bbox || geo->bbox->xmin > geo->bbox->xmax) {
          a.bbox_known = false;
          continue;
        }
        a.bbox = a.bbox ? MergeBox(*a.bbox, *geo->bbox) : *geo->bbox;
        continue;
      }
      if (!st || !st->min_value || !st->max_value) {
        a.bounds_known = false;
        continue;
      }
      auto lo = StatisticValue(*field->type, leaf.physical_type, *st->min_value);
      auto hi = StatisticValue(*field->type, leaf.physical_type, *st->max_value);
      if (!lo.ok() || !hi.ok()) {
        return Status::CorruptData("parquet statistics of '" + f.file_path + "' column '" +
                                   leaf.dotted_path() +
                                   "': " + (lo.ok() ? hi.status() : lo.status()).message());
      }
      if (IsNull(*lo) || IsNull(*hi)) {
        a.bounds_known = false;
        continue;
      }
      auto less = CompareValues(*field->type, *lo, a.lower);
      if (IsNull(a.lower) || (less.ok() && *less < 0)) a.lower = *lo;
      auto more = CompareValues(*field->type, *hi, a.upper);
      if (IsNull(a.upper) || (more.ok() && *more > 0)) a.upper = *hi;
    }
  }

  for (const auto& leaf : leaves) {
    if (!leaf.field_id || acc.count(*leaf.field_id) == 0) continue;
    const std::int32_t id = *leaf.field_id;
    const ColumnAcc& a = acc.at(id);
    f.column_sizes[id] = a.column_size;
    if (leaf.max_repetition_level > 0) continue;
    f.value_counts[id] = a.value_count;
    if (a.null_count_known) f.null_value_counts[id] = a.null_count;
    const Type& type = *table_schema.FindField(id)->type;
    if (type.id() == TypeId::kGeometry || type.id() == TypeId::kGeography) {
      if (options.geometry_bounds && a.bbox_known && a.bbox) {
        const parquet::BoundingBox& b = *a.bbox;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        BoundPoint lo{b.xmin, b.ymin, b.zmin.value_or(nan), b.mmin.value_or(nan)};
        BoundPoint hi{b.xmax, b.ymax, b.zmax.value_or(nan), b.mmax.value_or(nan)};
        GEOLAKE_ASSIGN_OR_RETURN(f.lower_bounds[id], SerializeValue(type, Value(lo)));
        GEOLAKE_ASSIGN_OR_RETURN(f.upper_bounds[id], SerializeValue(type, Value(hi)));
      }
      continue;
    }
    if (type.id() == TypeId::kFloat || type.id() == TypeId::kDouble) {
      auto nan = options.nan_value_counts.find(id);
      if (nan != options.nan_value_counts.end()) f.nan_value_counts[id] = nan->second;
    }
    if (!a.bounds_known || IsNull(a.lower) || IsNull(a.upper)) continue;
    if (type.id() == TypeId::kString) {
      f.lower_bounds[id] =
          TruncateLowerString(std::get<std::string>(a.lower), options.truncate_length);
      auto upper = TruncateUpperString(std::get<std::string>(a.upper), options.truncate_length);
      if (upper) f.upper_bounds[id] = *upper;
      continue;
    }
    if (type.id() == TypeId::kBinary) {
      const Bytes& lo = std::get<Bytes>(a.lower);
      const Bytes& hi = std::get<Bytes>(a.upper);
      f.lower_bounds[id] =
          TruncateLowerBinary(std::string(lo.begin(), lo.end()), options.truncate_length);
      auto upper = TruncateUpperBinary(std::string(hi.begin(), hi.end()), options.truncate_length);
      if (upper) f.upper_bounds[id] = *upper;
      continue;
    }
    GEOLAKE_ASSIGN_OR_RETURN(f.lower_bounds[id], SerializeValue(type, a.lower));
    GEOLAKE_ASSIGN_OR_RETURN(f.upper_bounds[id], SerializeValue(type, a.upper));
  }
  std::sort(f.split_offsets.begin(), f.split_offsets.end());
  return f;
}

}  // namespace geolake::table
