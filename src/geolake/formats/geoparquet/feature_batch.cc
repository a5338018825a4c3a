#include "geolake/formats/geoparquet/feature_batch.h"

#include <algorithm>

namespace geolake::geoparquet {

std::string_view FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kBool:
      return "bool";
    case FieldType::kInt64:
      return "int64";
    case FieldType::kDouble:
      return "double";
    case FieldType::kString:
      return "string";
    case FieldType::kBinary:
      return "binary";
    case FieldType::kDate:
      return "date";
    case FieldType::kTimestamp:
      return "timestamp";
  }
  return "unknown";
}

void Column::Clear() {
  valid.clear();
  ints.clear();
  doubles.clear();
  bytes.clear();
  offsets.assign(1, 0);
}

std::int64_t FeatureBatch::ByteSize() const {
  std::int64_t total = static_cast<std::int64_t>(wkb.size() + wkb_offsets.size() * 8 +
                                                 geometry_valid.size() + feature_index.size() * 8);
  for (const UnreadableRow& u : unreadable) total += static_cast<std::int64_t>(8 + u.reason.size());
  for (const Column& c : columns) {
    total += static_cast<std::int64_t>(c.valid.size() + c.ints.size() * 8 + c.doubles.size() * 8 +
                                       c.bytes.size() + c.offsets.size() * 8);
  }
  return total;
}

void FeatureBatch::Clear() {
  for (Column& c : columns) c.Clear();
  wkb.clear();
  wkb_offsets.assign(1, 0);
  geometry_valid.clear();
  feature_index.clear();
  unreadable.clear();
}

void FeatureBatch::Reset(const std::vector<FieldDef>& schema) {
  const bool same = fields.size() == schema.size() && columns.size() == schema.size() &&
                    std::equal(fields.begin(), fields.end(), schema.begin(),
                               [](const FieldDef& a, const FieldDef& b) {
                                 return a.name == b.name && a.type == b.type;
                               });
  if (!same) {
    fields = schema;
    columns.assign(schema.size(), Column{});
    for (std::size_t i = 0; i < schema.size(); ++i) columns[i].type = schema[i].type;
  }
  Clear();
}

}  // namespace geolake::geoparquet
