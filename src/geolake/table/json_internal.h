/// \file
/// Private to geolake_table: nlohmann-json helpers shared by the schema, partition spec, sort
/// order and table metadata codecs. Reading is tolerant (unknown keys are ignored) but every
/// missing or mistyped required key is kCorruptData naming the key and the object it belongs
/// to (the getters are core/json_read.h's, in its words). nlohmann is a private dependency, so
/// this header must not be included by a public one.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/table/partition_spec.h"
#include "geolake/table/schema.h"
#include "geolake/table/sort_order.h"
#include "geolake/table/types.h"

namespace geolake::table::internal {

/// Objects keep their keys in insertion order, so what we write follows the spec's order.
using Json = nlohmann::ordered_json;

/// \brief Parse JSON text; kCorruptData with the parser's message (never throws).
Result<Json> ParseJson(std::string_view text, std::string_view what);

/// \brief The value of a required key, or kCorruptData "<what>: missing required key '<key>'".
Result<const Json*> Require(const Json& obj, std::string_view key, std::string_view what);
/// \brief The value of an optional key; nullptr when absent or null.
const Json* Find(const Json& obj, std::string_view key);

Result<std::int32_t> GetInt32(const Json& obj, std::string_view key, std::string_view what);
Result<std::int64_t> GetInt64(const Json& obj, std::string_view key, std::string_view what);
Result<std::string> GetString(const Json& obj, std::string_view key, std::string_view what);
Result<bool> GetBool(const Json& obj, std::string_view key, std::string_view what);
/// Optional keys: nullopt when absent or null; kCorruptData when present with a wrong type.
Result<std::optional<std::int32_t>> GetOptInt32(const Json& obj, std::string_view key,
                                                std::string_view what);
Result<std::optional<std::int64_t>> GetOptInt64(const Json& obj, std::string_view key,
                                                std::string_view what);
Result<std::optional<std::string>> GetOptString(const Json& obj, std::string_view key,
                                                std::string_view what);

/// \brief A JSON value as int64 (exact for any integer that fits), or kCorruptData.
Result<std::int64_t> AsInt64(const Json& value, std::string_view what);

Result<TypePtr> TypeFromJson(const Json& json);
Json TypeToJson(const Type& type);
Result<std::shared_ptr<const Schema>> SchemaFromJson(const Json& json);
Json SchemaToJson(const Schema& schema);

Result<std::shared_ptr<const PartitionSpec>> PartitionSpecFromJson(const Json& json);
/// \brief The array of partition fields only (v1 `partition-spec`, manifest header).
Result<std::vector<PartitionField>> PartitionFieldsFromJson(const Json& json);
Json PartitionSpecToJson(const PartitionSpec& spec);
Json PartitionFieldsToJson(const PartitionSpec& spec);

Result<std::shared_ptr<const SortOrder>> SortOrderFromJson(const Json& json);
Json SortOrderToJson(const SortOrder& order);

}  // namespace geolake::table::internal
