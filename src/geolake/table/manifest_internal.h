/// \file
/// What the manifest's four parts share (table/ only): the Avro schemas of manifest entries and
/// manifest-list entries (manifest_entry.cc), the container writer they are written with, the
/// optional-value datums both writers make, and field access by Iceberg field id for both
/// readers. manifest_writer.cc, manifest_reader.cc and manifest_list.cc hold the rest;
/// manifest.h is the public face. Includes nlohmann/json: never include it from a public header.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "geolake/core/result.h"
#include "geolake/formats/avro/container.h"
#include "geolake/table/json_internal.h"
#include "geolake/table/types.h"

namespace geolake::table::internal {

/// The Avro schema (JSON, in Java's key order) of a manifest entry of `format_version` whose
/// partition struct is `partition_type`.
Result<Json> ManifestEntrySchema(int format_version, const Type& partition_type);
/// The Avro schema of a manifest-list entry of `format_version`.
Json ManifestListSchema(int format_version);
/// Bytes of the fixed that holds a decimal of `precision` digits (Iceberg spec: the fewest
/// that hold every unscaled value).
int DecimalBytes(int precision);
/// An Avro container writer for `schema_json` with `metadata`, deflate-compressed or not.
Result<std::unique_ptr<avro::ContainerWriter>> MakeWriter(const Json& schema_json,
                                                          avro::Metadata metadata, bool compress);

inline avro::Datum OptLong(const std::optional<std::int64_t>& v) {
  return v ? avro::Datum::Long(*v) : avro::Datum::Null();
}
inline avro::Datum OptInt(const std::optional<std::int32_t>& v) {
  return v ? avro::Datum::Int(*v) : avro::Datum::Null();
}
inline avro::Datum OptBytes(const std::optional<std::string>& v) {
  return v ? avro::Datum::Bytes(*v) : avro::Datum::Null();
}

// Field access by Iceberg field id, resolved once per file.
class FieldIndex {
 public:
  FieldIndex(const avro::Node& record, std::string what)
      : record_(record), what_(std::move(what)) {}

  // The datum of field `id`, or nullptr when the file has no such field or it is null.
  const avro::Datum* Opt(const avro::Datum& rec, std::int32_t id) const {
    if (rec.type() != avro::Type::kRecord) return nullptr;
    auto idx = record_.FieldIndexById(id);
    if (!idx || *idx >= rec.fields().size()) return nullptr;
    const avro::Datum& d = rec.fields()[*idx];
    return d.is_null() ? nullptr : &d;
  }
  Result<const avro::Datum*> Req(const avro::Datum& rec, std::int32_t id,
                                 std::string_view name) const {
    const avro::Datum* d = Opt(rec, id);
    if (d == nullptr) {
      return Status::CorruptData(what_ + ": missing required field '" + std::string(name) +
                                 "' (id " + std::to_string(id) + ")");
    }
    return d;
  }
  const avro::Node* FieldType(std::int32_t id) const {
    auto idx = record_.FieldIndexById(id);
    return idx ? record_.fields[*idx].type : nullptr;
  }

 private:
  const avro::Node& record_;
  std::string what_;
};

/// kCorruptData naming `what` unless `d` has one of `kinds`.
Status CheckKind(const avro::Datum& d, std::initializer_list<avro::Type> kinds,
                 std::string_view what);
/// A required int or long field.
Result<std::int64_t> ReqLong(const FieldIndex& idx, const avro::Datum& rec, std::int32_t id,
                             std::string_view name);
/// An optional int or long field.
Result<std::optional<std::int64_t>> OptLongField(const FieldIndex& idx, const avro::Datum& rec,
                                                 std::int32_t id, std::string_view name);
/// A required string (or bytes) field.
Result<std::string> ReqString(const FieldIndex& idx, const avro::Datum& rec, std::int32_t id,
                              std::string_view name);
/// An optional bytes field; a value of another Avro type is kCorruptData.
Result<std::optional<std::string>> OptBytesField(const FieldIndex& idx, const avro::Datum& rec,
                                                 std::int32_t id, std::string_view name);

}  // namespace geolake::table::internal
