#include "geolake/formats/avro/datum.h"

namespace geolake::avro {

namespace {
// Returned by wrong-kind accesses in release builds (debug builds stop at the DCHECK).
const std::string& EmptyString() {
  static const std::string kEmpty;
  return kEmpty;
}
const std::vector<Datum>& EmptyItems() {
  static const std::vector<Datum> kEmpty;
  return kEmpty;
}
const Datum::MapEntries& EmptyEntries() {
  static const Datum::MapEntries kEmpty;
  return kEmpty;
}
}  // namespace

const std::string& Datum::bytes() const {
  GEOLAKE_DCHECK(type_ == Type::kBytes || type_ == Type::kString || type_ == Type::kFixed);
  const auto* value = std::get_if<std::string>(&storage_);
  return value != nullptr ? *value : EmptyString();
}

const std::vector<Datum>& Datum::items() const {
  GEOLAKE_DCHECK(type_ == Type::kArray || type_ == Type::kRecord);
  const auto* value = std::get_if<std::vector<Datum>>(&storage_);
  return value != nullptr ? *value : EmptyItems();
}

std::vector<Datum>& Datum::mutable_items() {
  GEOLAKE_DCHECK(type_ == Type::kArray || type_ == Type::kRecord);
  if (auto* value = std::get_if<std::vector<Datum>>(&storage_)) return *value;
  // A wrong-kind call in release: turn this value into an empty array rather than crash.
  type_ = Type::kArray;
  return storage_.emplace<std::vector<Datum>>();
}

const Datum::MapEntries& Datum::map_entries() const {
  GEOLAKE_DCHECK(type_ == Type::kMap);
  const auto* value = std::get_if<MapEntries>(&storage_);
  return value != nullptr ? *value : EmptyEntries();
}

Datum::MapEntries& Datum::mutable_map_entries() {
  GEOLAKE_DCHECK(type_ == Type::kMap);
  if (auto* value = std::get_if<MapEntries>(&storage_)) return *value;
  type_ = Type::kMap;
  return storage_.emplace<MapEntries>();
}

const Datum* Datum::FieldByName(const Node& record_schema, std::string_view name) const {
  if (type_ != Type::kRecord) return nullptr;
  auto index = record_schema.FieldIndex(name);
  if (!index || *index >= fields().size()) return nullptr;
  return &fields()[*index];
}

const Datum* Datum::FieldById(const Node& record_schema, std::int32_t field_id) const {
  if (type_ != Type::kRecord) return nullptr;
  auto index = record_schema.FieldIndexById(field_id);
  if (!index || *index >= fields().size()) return nullptr;
  return &fields()[*index];
}

}  // namespace geolake::avro
