// Checking a Parquet data file against a table before it is committed (`append`, ingest): its
// columns against the table schema (field ids, names, types, repetition), and its partition
// tuple from the footer statistics.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "geolake/core/utf8.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/wkb.h"
#include "geolake/layout/table_layout.h"

namespace geolake::layout {
namespace {

using table::NestedField;
using table::Type;
using table::TypeId;

// Does a Parquet leaf store values of this Iceberg primitive type?
bool LeafStores(const parquet::Field& leaf, const Type& type) {
  using parquet::PhysicalType;
  using Kind = parquet::LogicalType::Kind;
  const PhysicalType physical = *leaf.physical_type;
  const std::optional<parquet::LogicalType>& logical = leaf.logical_type;
  const Kind kind = logical ? logical->kind : Kind::kUnrecognized;
  const auto timestamp = [&](bool utc, parquet::TimeUnit unit) {
    return physical == PhysicalType::kInt64 && kind == Kind::kTimestamp &&
           logical->is_adjusted_to_utc == utc && logical->unit == unit;
  };
  switch (type.id()) {
    case TypeId::kBoolean:
      return physical == PhysicalType::kBoolean;
    case TypeId::kInt:
      return physical == PhysicalType::kInt32 &&
             (!logical || (kind == Kind::kInteger && logical->is_signed));
    case TypeId::kLong:
      return physical == PhysicalType::kInt64 &&
             (!logical || (kind == Kind::kInteger && logical->is_signed));
    case TypeId::kFloat:
      return physical == PhysicalType::kFloat;
    case TypeId::kDouble:
      return physical == PhysicalType::kDouble;
    case TypeId::kDate:
      return physical == PhysicalType::kInt32 && kind == Kind::kDate;
    case TypeId::kTime:
      return physical == PhysicalType::kInt64 && kind == Kind::kTime &&
             logical->unit == parquet::TimeUnit::kMicros;
    case TypeId::kTimestamp:
      return timestamp(false, parquet::TimeUnit::kMicros);
    case TypeId::kTimestampTz:
      return timestamp(true, parquet::TimeUnit::kMicros);
    case TypeId::kTimestampNs:
      return timestamp(false, parquet::TimeUnit::kNanos);
    case TypeId::kTimestampTzNs:
      return timestamp(true, parquet::TimeUnit::kNanos);
    case TypeId::kString:
      return physical == PhysicalType::kByteArray && (kind == Kind::kString || kind == Kind::kJson);
    case TypeId::kUuid:
      return physical == PhysicalType::kFixedLenByteArray && leaf.type_length == 16;
    case TypeId::kFixed:
      return physical == PhysicalType::kFixedLenByteArray && leaf.type_length == type.length();
    case TypeId::kBinary:
      // WKB columns may carry the Parquet GEOMETRY/GEOGRAPHY annotation (convert
      // --geometry-logical-type); the bytes are the same.
      return physical == PhysicalType::kByteArray &&
             (!logical || kind == Kind::kGeometry || kind == Kind::kGeography);
    case TypeId::kGeometry:
    case TypeId::kGeography:
      return physical == PhysicalType::kByteArray;
    case TypeId::kDecimal:
      return kind == Kind::kDecimal && logical->precision == type.precision() &&
             logical->scale == type.scale() &&
             (physical == PhysicalType::kInt32 || physical == PhysicalType::kInt64 ||
              physical == PhysicalType::kFixedLenByteArray);
    case TypeId::kUnknown:
    case TypeId::kVariant:
    case TypeId::kStruct:
    case TypeId::kList:
    case TypeId::kMap:
      break;
  }
  return false;
}

std::string ParquetTypeText(const parquet::Field& f) {
  if (f.is_group()) return "group";
  std::string text(parquet::PhysicalTypeName(*f.physical_type));
  if (f.logical_type && f.logical_type->kind == parquet::LogicalType::Kind::kString) {
    text += " (STRING)";
  } else if (f.logical_type) {
    text += " (annotated)";
  }
  return text;
}

// Check the file's fields at one level (top level or inside a struct) against the table's
// fields at the same level. `prefix` is the dotted path of the parent ("" or "bbox.").
Status CheckLevel(const std::vector<parquet::Field>& file_fields,
                  const std::vector<NestedField>& table_fields, const table::Schema& table_schema,
                  const std::string& prefix, std::string_view label) {
  std::set<std::int32_t> seen;
  for (const parquet::Field& f : file_fields) {
    const std::string path = prefix + f.name;
    if (!f.field_id) {
      return Status::InvalidArgument(
          std::string(label) + ": column '" + path +
          "' has no field id (files without Iceberg field ids cannot be appended; write them "
          "with geolake convert or an Iceberg writer)");
    }
    const NestedField* match = nullptr;
    for (const NestedField& t : table_fields) {
      if (t.id == *f.field_id) match = &t;
    }
    if (match == nullptr) {
      const std::string elsewhere = table_schema.FindColumnName(*f.field_id);
      return Status::InvalidArgument(std::string(label) + ": column '" + path + "' has field id " +
                                     std::to_string(*f.field_id) +
                                     (elsewhere.empty()
                                          ? ", which the table schema does not have"
                                          : ", which the table gives to '" + elsewhere + "'"));
    }
    if (match->name != f.name) {
      return Status::InvalidArgument(std::string(label) + ": column '" + path + "' has field id " +
                                     std::to_string(*f.field_id) + ", which the table names '" +
                                     prefix + match->name + "'");
    }
    if (match->required && f.repetition != parquet::Repetition::kRequired) {
      return Status::InvalidArgument(std::string(label) + ": column '" + path +
                                     "' is optional in the file but required in the table");
    }
    const Type& type = *match->type;
    if (type.id() == TypeId::kStruct) {
      if (!f.is_group()) {
        return Status::InvalidArgument(std::string(label) + ": column '" + path + "' is " +
                                       ParquetTypeText(f) + ", the table has a struct");
      }
      GEOLAKE_RETURN_NOT_OK(CheckLevel(f.children, type.fields(), table_schema, path + ".", label));
    } else if (type.id() == TypeId::kList || type.id() == TypeId::kMap) {
      // TODO(#4): check list elements and map keys/values; geolake's layout has neither.
      if (!f.is_group()) {
        return Status::InvalidArgument(std::string(label) + ": column '" + path + "' is " +
                                       ParquetTypeText(f) + ", the table has a " + type.ToString());
      }
    } else if (f.is_group() || !LeafStores(f, type)) {
      return Status::InvalidArgument(std::string(label) + ": column '" + path + "' is " +
                                     ParquetTypeText(f) + ", which cannot hold the table's " +
                                     type.ToString());
    }
    seen.insert(*f.field_id);
  }
  for (const NestedField& t : table_fields) {
    if (t.required && !seen.contains(t.id)) {
      return Status::InvalidArgument(std::string(label) + ": required column '" + prefix + t.name +
                                     "' (field id " + std::to_string(t.id) + ") is missing");
    }
  }
  return Status::OK();
}

// The one value the leaf column `leaf` holds in every row of a file, from the footer
// statistics; null when every row is null.
Result<table::Value> SingleValue(const parquet::FileMetaData& footer, int leaf,
                                 const NestedField& field, const std::string& what) {
  std::optional<std::string> value;  // the non-null value seen so far
  bool saw_null = false;
  for (std::size_t rg = 0; rg < footer.row_groups.size(); ++rg) {
    const parquet::RowGroup& group = footer.row_groups[rg];
    if (group.num_rows == 0) continue;
    const parquet::Statistics* stats = nullptr;
    if (static_cast<std::size_t>(leaf) < group.columns.size()) {
      const auto& meta = group.columns[leaf].meta_data;
      if (meta && meta->statistics) stats = &*meta->statistics;
    }
    if (stats == nullptr || !stats->null_count) {
      return Status::InvalidArgument(what + ", but row group " + std::to_string(rg) +
                                     " has no statistics for it");
    }
    if (*stats->null_count == group.num_rows) {
      saw_null = true;
      continue;
    }
    // Files written before 2018 only have the deprecated fields.
    const std::optional<std::string>& lo = stats->min_value ? stats->min_value : stats->min;
    const std::optional<std::string>& hi = stats->max_value ? stats->max_value : stats->max;
    if (*stats->null_count > 0) saw_null = true;
    if (!lo || !hi || *lo != *hi || (value && *value != *lo)) {
      return Status::InvalidArgument(what + " and its rows hold different values of it (or no " +
                                     "min/max statistics); one file must hold one partition");
    }
    value = *lo;
  }
  if (saw_null && value) {
    return Status::InvalidArgument(what + " and some of its rows are null, others are not; " +
                                   "one file must hold one partition");
  }
  if (!value) return table::Value{};
  // Parquet's plain encoding of int, long, float, double, date and string statistics is
  // their Iceberg single-value serialization too.
  return table::DeserializeValue(*field.type, *value).WithContext(what);
}

}  // namespace

Status CheckDataFileSchema(const parquet::Schema& file_schema, const table::Schema& table_schema,
                           std::string_view label) {
  return CheckLevel(file_schema.fields(), table_schema.fields(), table_schema, "", label);
}

Result<std::vector<table::Value>> PartitionFromFooter(const parquet::FileMetaData& footer,
                                                      const parquet::Schema& file_schema,
                                                      const table::TableMetadata& metadata,
                                                      std::string_view label) {
  std::vector<table::Value> tuple;
  const table::PartitionSpecPtr spec = metadata.default_spec();
  const table::SchemaPtr schema = metadata.current_schema();
  if (spec == nullptr || schema == nullptr) return tuple;
  for (const table::PartitionField& pf : spec->fields()) {
    const NestedField* source = schema->FindField(pf.source_id);
    if (source == nullptr) {
      return Status::InvalidArgument("partition field '" + pf.name + "' has no source column");
    }
    if (pf.transform.kind() != table::TransformKind::kIdentity) {
      return Status::NotImplemented(std::string(label) + ": partition transform '" +
                                    pf.transform.ToString() + "' of field '" + pf.name +
                                    "' (only identity partitions are derived from statistics)");
    }
    const std::string what =
        std::string(label) + ": the table is partitioned by column '" + source->name + "'";
    const auto& leaves = file_schema.leaves();
    int leaf = -1;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].field_id == pf.source_id) leaf = static_cast<int>(i);
    }
    if (leaf < 0) return Status::InvalidArgument(what + ", which the file lacks");
    GEOLAKE_ASSIGN_OR_RETURN(table::Value v, SingleValue(footer, leaf, *source, what));
    tuple.push_back(std::move(v));
  }
  return tuple;
}

Status VerifyDataFileContents(const parquet::FileReader& reader, std::string_view geometry_column,
                              std::string_view label) {
  const std::string where(label);
  const parquet::FileMetaData& md = reader.metadata();
  if (md.num_rows < 0) {
    return Status::CorruptData(where + ": the footer declares " + std::to_string(md.num_rows) +
                               " rows");
  }
  const std::vector<parquet::LeafColumn>& leaves = reader.schema().leaves();
  parquet::ColumnData data;
  parquet::DecodeBuffers buffers;
  std::int64_t total = 0;
  for (int rg = 0; rg < reader.num_row_groups(); ++rg) {
    const std::int64_t declared = reader.row_group(rg).num_rows;
    if (declared < 0 || __builtin_add_overflow(total, declared, &total)) {
      return Status::CorruptData(where + ": row group " + std::to_string(rg) + " declares " +
                                 std::to_string(declared) +
                                 " rows (negative, or the sum overflows)");
    }
    for (int leaf = 0; leaf < static_cast<int>(leaves.size()); ++leaf) {
      const parquet::LeafColumn& lc = leaves[static_cast<std::size_t>(leaf)];
      const std::string column =
          "row group " + std::to_string(rg) + " column '" + lc.dotted_path() + "'";
      GEOLAKE_RETURN_NOT_OK(reader.ReadColumnInto(rg, leaf, &data, &buffers).WithContext(where));
      // Rows are level entries of a flat column, and entries starting a record (repetition
      // level 0) of a repeated one.
      const std::int64_t rows = data.max_repetition_level > 0
                                    ? static_cast<std::int64_t>(std::count(
                                          data.rep_levels.begin(), data.rep_levels.end(), 0))
                                    : data.num_levels();
      if (rows != declared) {
        return Status::CorruptData(where + ": " + column + ": " + std::to_string(rows) +
                                   " rows decoded, the footer declares " +
                                   std::to_string(declared));
      }
      const bool geometry = lc.path.size() == 1 && lc.path[0] == geometry_column &&
                            lc.physical_type == parquet::PhysicalType::kByteArray;
      const bool text =
          lc.physical_type == parquet::PhysicalType::kByteArray &&
          ((lc.logical_type && (lc.logical_type->kind == parquet::LogicalType::Kind::kString ||
                                lc.logical_type->kind == parquet::LogicalType::Kind::kJson)) ||
           (!lc.logical_type && lc.converted_type == parquet::ConvertedType::kUtf8));
      if (text) {
        // A STRING value that is not UTF-8 makes DuckDB and arrow-rs refuse the whole file
        // (issue 17 item 8): such a file is not committed.
        const std::int64_t values = data.num_values();
        for (std::int64_t v = 0; v < values; ++v) {
          const auto begin =
              static_cast<std::size_t>(data.byte_offsets[static_cast<std::size_t>(v)]);
          const auto end =
              static_cast<std::size_t>(data.byte_offsets[static_cast<std::size_t>(v) + 1]);
          if (!IsValidUtf8(std::string_view(data.byte_data).substr(begin, end - begin))) {
            return Status::CorruptData(where + ": " + column + ": value " + std::to_string(v) +
                                       " of a STRING column is not valid UTF-8");
          }
        }
      }
      if (!geometry) continue;
      const std::int64_t values = data.num_values();
      for (std::int64_t v = 0; v < values; ++v) {
        const auto begin = static_cast<std::size_t>(data.byte_offsets[static_cast<std::size_t>(v)]);
        const auto end =
            static_cast<std::size_t>(data.byte_offsets[static_cast<std::size_t>(v) + 1]);
        const std::string_view wkb = std::string_view(data.byte_data).substr(begin, end - begin);
        Result<geo::WkbSummary> summary = geo::SummarizeWkb(geo::AsBytes(wkb));
        if (!summary.ok() || summary->non_finite) {
          return Status::CorruptData(
              where + ": " + column + ": geometry value " + std::to_string(v) + ": " +
              (summary.ok() ? std::string("non-finite coordinate") : summary.status().message()));
        }
      }
    }
  }
  if (total != md.num_rows) {
    return Status::CorruptData(where + ": the row groups hold " + std::to_string(total) +
                               " rows, the footer declares " + std::to_string(md.num_rows));
  }
  return Status::OK();
}

}  // namespace geolake::layout
