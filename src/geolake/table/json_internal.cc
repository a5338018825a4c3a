#include "geolake/table/json_internal.h"

#include <limits>

namespace geolake::table::internal {

namespace {

Status Missing(std::string_view key, std::string_view what) {
  return Status::CorruptData(std::string(what) + ": missing required key '" + std::string(key) +
                             "'");
}

Status WrongType(std::string_view key, std::string_view what, std::string_view expected) {
  return Status::CorruptData(std::string(what) + ": key '" + std::string(key) + "' is not " +
                             std::string(expected));
}

}  // namespace

Result<Json> ParseJson(std::string_view text, std::string_view what) {
  // allow_exceptions=false: a parse error yields a "discarded" value instead of throwing.
  Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return Status::CorruptData(std::string(what) + ": malformed JSON");
  }
  return json;
}

Result<const Json*> Require(const Json& obj, std::string_view key, std::string_view what) {
  if (!obj.is_object()) return Status::CorruptData(std::string(what) + ": not a JSON object");
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Missing(key, what);
  return &*it;
}

const Json* Find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::int64_t> AsInt64(const Json& value, std::string_view what) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return Status::CorruptData(std::string(what) + ": integer out of range");
    }
    return static_cast<std::int64_t>(u);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return Status::CorruptData(std::string(what) + ": not an integer");
}

Result<std::int64_t> GetInt64(const Json& obj, std::string_view key, std::string_view what) {
  GEOLAKE_ASSIGN_OR_RETURN(const Json* v, Require(obj, key, what));
  if (!v->is_number_integer()) return WrongType(key, what, "an integer");
  return AsInt64(*v, std::string(what) + " '" + std::string(key) + "'");
}

Result<std::int32_t> GetInt32(const Json& obj, std::string_view key, std::string_view what) {
  GEOLAKE_ASSIGN_OR_RETURN(std::int64_t v, GetInt64(obj, key, what));
  if (v < std::numeric_limits<std::int32_t>::min() ||
      v > std::numeric_limits<std::int32_t>::max()) {
    return WrongType(key, what, "a 32-bit integer");
  }
  return static_cast<std::int32_t>(v);
}

Result<std::string> GetString(const Json& obj, std::string_view key, std::string_view what) {
  GEOLAKE_ASSIGN_OR_RETURN(const Json* v, Require(obj, key, what));
  if (!v->is_string()) return WrongType(key, what, "a string");
  return v->get<std::string>();
}

Result<bool> GetBool(const Json& obj, std::string_view key, std::string_view what) {
  GEOLAKE_ASSIGN_OR_RETURN(const Json* v, Require(obj, key, what));
  if (!v->is_boolean()) return WrongType(key, what, "a boolean");
  return v->get<bool>();
}

Result<std::optional<std::int32_t>> GetOptInt32(const Json& obj, std::string_view key,
                                                std::string_view what) {
  if (Find(obj, key) == nullptr) return std::optional<std::int32_t>();
  GEOLAKE_ASSIGN_OR_RETURN(std::int32_t v, GetInt32(obj, key, what));
  return std::optional<std::int32_t>(v);
}

Result<std::optional<std::int64_t>> GetOptInt64(const Json& obj, std::string_view key,
                                                std::string_view what) {
  if (Find(obj, key) == nullptr) return std::optional<std::int64_t>();
  GEOLAKE_ASSIGN_OR_RETURN(std::int64_t v, GetInt64(obj, key, what));
  return std::optional<std::int64_t>(v);
}

Result<std::optional<std::string>> GetOptString(const Json& obj, std::string_view key,
                                                std::string_view what) {
  if (Find(obj, key) == nullptr) return std::optional<std::string>();
  GEOLAKE_ASSIGN_OR_RETURN(std::string v, GetString(obj, key, what));
  return std::optional<std::string>(std::move(v));
}

}  // namespace geolake::table::internal
