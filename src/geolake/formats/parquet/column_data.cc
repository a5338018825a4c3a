#include "geolake/formats/parquet/column_data.h"

#include <string>

namespace geolake::parquet {

ColumnData ColumnData::ForLeaf(const LeafColumn& leaf) {
  ColumnData c;
  c.type = leaf.physical_type;
  c.max_definition_level = leaf.max_definition_level;
  c.max_repetition_level = leaf.max_repetition_level;
  return c;
}

std::int64_t ColumnData::num_values() const {
  switch (type) {
    case PhysicalType::kBoolean:
      return static_cast<std::int64_t>(bool_values.size());
    case PhysicalType::kInt32:
      return static_cast<std::int64_t>(int32_values.size());
    case PhysicalType::kInt64:
      return static_cast<std::int64_t>(int64_values.size());
    case PhysicalType::kFloat:
      return static_cast<std::int64_t>(float_values.size());
    case PhysicalType::kDouble:
      return static_cast<std::int64_t>(double_values.size());
    case PhysicalType::kInt96:
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      return byte_offsets.empty() ? 0 : static_cast<std::int64_t>(byte_offsets.size()) - 1;
  }
  return 0;
}

std::int64_t ColumnData::null_count() const {
  std::int64_t nulls = 0;
  for (std::int16_t d : def_levels) nulls += (d < max_definition_level) ? 1 : 0;
  return nulls;
}

void ColumnData::AppendDefined() {
  if (max_definition_level > 0) def_levels.push_back(max_definition_level);
  if (max_repetition_level > 0) rep_levels.push_back(0);
}

void ColumnData::AppendBool(bool v) {
  bool_values.push_back(v ? 1 : 0);
  AppendDefined();
}
void ColumnData::AppendInt32(std::int32_t v) {
  int32_values.push_back(v);
  AppendDefined();
}
void ColumnData::AppendInt64(std::int64_t v) {
  int64_values.push_back(v);
  AppendDefined();
}
void ColumnData::AppendFloat(float v) {
  float_values.push_back(v);
  AppendDefined();
}
void ColumnData::AppendDouble(double v) {
  double_values.push_back(v);
  AppendDefined();
}
void ColumnData::AppendBytes(std::string_view v) {
  if (byte_offsets.empty()) byte_offsets.push_back(0);
  byte_data.append(v);
  byte_offsets.push_back(static_cast<std::int64_t>(byte_data.size()));
  AppendDefined();
}

void ColumnData::AppendNull(std::int16_t def_level) {
  GEOLAKE_DCHECK(max_definition_level > 0 && def_level < max_definition_level);
  def_levels.push_back(def_level);
  if (max_repetition_level > 0) rep_levels.push_back(0);
}

void ColumnData::Clear() {
  bool_values.clear();
  int32_values.clear();
  int64_values.clear();
  float_values.clear();
  double_values.clear();
  byte_data.clear();
  byte_offsets.assign(1, 0);
  def_levels.clear();
  rep_levels.clear();
}

std::int64_t ColumnData::ByteSize() const {
  return static_cast<std::int64_t>(
      bool_values.size() + int32_values.size() * 4 + int64_values.size() * 8 +
      float_values.size() * 4 + double_values.size() * 8 + byte_data.size() +
      byte_offsets.size() * 8 + def_levels.size() * 2 + rep_levels.size() * 2);
}

Status ColumnData::Validate() const {
  const bool is_bytes = type == PhysicalType::kByteArray ||
                        type == PhysicalType::kFixedLenByteArray || type == PhysicalType::kInt96;
  auto used = [&](bool in_use, std::size_t size, const char* name) -> Status {
    if (!in_use && size != 0) {
      return Status::InvalidArgument(std::string("column data: ") + name + " holds values for a " +
                                     std::string(PhysicalTypeName(type)) + " column");
    }
    return Status::OK();
  };
  GEOLAKE_RETURN_NOT_OK(used(type == PhysicalType::kBoolean, bool_values.size(), "bool_values"));
  GEOLAKE_RETURN_NOT_OK(used(type == PhysicalType::kInt32, int32_values.size(), "int32_values"));
  GEOLAKE_RETURN_NOT_OK(used(type == PhysicalType::kInt64, int64_values.size(), "int64_values"));
  GEOLAKE_RETURN_NOT_OK(used(type == PhysicalType::kFloat, float_values.size(), "float_values"));
  GEOLAKE_RETURN_NOT_OK(used(type == PhysicalType::kDouble, double_values.size(), "double_values"));
  GEOLAKE_RETURN_NOT_OK(used(is_bytes, byte_data.size(), "byte_data"));
  if (is_bytes) {
    if (byte_offsets.empty() || byte_offsets.front() != 0) {
      return Status::InvalidArgument("column data: byte_offsets must start with 0");
    }
    for (std::size_t i = 1; i < byte_offsets.size(); ++i) {
      if (byte_offsets[i] < byte_offsets[i - 1]) {
        return Status::InvalidArgument("column data: byte_offsets decrease at " +
                                       std::to_string(i));
      }
    }
    if (byte_offsets.back() != static_cast<std::int64_t>(byte_data.size())) {
      return Status::InvalidArgument("column data: last byte offset " +
                                     std::to_string(byte_offsets.back()) + " != byte_data size " +
                                     std::to_string(byte_data.size()));
    }
  } else if (byte_offsets.size() > 1) {
    return Status::InvalidArgument("column data: byte_offsets set for a non-binary column");
  }
  if (max_definition_level > 0) {
    std::int64_t defined = 0;
    for (std::int16_t d : def_levels) {
      if (d < 0 || d > max_definition_level) {
        return Status::InvalidArgument("column data: definition level " + std::to_string(d) +
                                       " outside [0, " + std::to_string(max_definition_level) +
                                       "]");
      }
      defined += (d == max_definition_level) ? 1 : 0;
    }
    if (defined != num_values()) {
      return Status::InvalidArgument("column data: " + std::to_string(defined) +
                                     " defined levels but " + std::to_string(num_values()) +
                                     " values");
    }
  } else if (!def_levels.empty()) {
    return Status::InvalidArgument("column data: definition levels on a required column");
  }
  if (max_repetition_level > 0) {
    if (rep_levels.size() != def_levels.size()) {
      return Status::InvalidArgument("column data: repetition and definition level counts differ");
    }
  } else if (!rep_levels.empty()) {
    return Status::InvalidArgument("column data: repetition levels on a non-repeated column");
  }
  return Status::OK();
}

Batch Batch::ForSchema(const Schema& schema) {
  Batch b;
  b.columns.reserve(schema.leaves().size());
  for (const auto& leaf : schema.leaves()) b.columns.push_back(ColumnData::ForLeaf(leaf));
  return b;
}

Status Batch::Validate(const Schema& schema) const {
  if (columns.size() != schema.leaves().size()) {
    return Status::InvalidArgument("batch: " + std::to_string(columns.size()) +
                                   " columns for a schema of " +
                                   std::to_string(schema.leaves().size()) + " leaves");
  }
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const auto& leaf = schema.leaves()[i];
    const auto& col = columns[i];
    const std::string ctx = "batch column '" + leaf.dotted_path() + "'";
    if (col.type != leaf.physical_type || col.max_definition_level != leaf.max_definition_level ||
        col.max_repetition_level != leaf.max_repetition_level) {
      return Status::InvalidArgument(ctx + ": type or levels do not match the schema");
    }
    GEOLAKE_RETURN_NOT_OK_CTX(col.Validate(), ctx);
    if (leaf.physical_type == PhysicalType::kFixedLenByteArray) {
      for (std::int64_t v = 0; v < col.num_values(); ++v) {
        if (static_cast<std::int32_t>(col.bytes_at(v).size()) != leaf.type_length) {
          return Status::InvalidArgument(ctx + ": value " + std::to_string(v) + " is not " +
                                         std::to_string(leaf.type_length) + " bytes");
        }
      }
    }
    std::int64_t rows = 0;
    if (col.max_repetition_level > 0) {
      for (std::int16_t r : col.rep_levels) rows += (r == 0) ? 1 : 0;
    } else {
      rows = col.num_levels();
    }
    if (rows != num_rows) {
      return Status::InvalidArgument(ctx + ": " + std::to_string(rows) + " rows, batch has " +
                                     std::to_string(num_rows));
    }
  }
  return Status::OK();
}

}  // namespace geolake::parquet
