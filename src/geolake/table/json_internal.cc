#include "geolake/table/json_internal.h"

#include <limits>

#include "geolake/core/json_read.h"

namespace geolake::table::internal {

Result<Json> ParseJson(std::string_view text, std::string_view what) {
  // allow_exceptions=false: a parse error yields a "discarded" value instead of throwing.
  Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return Status::CorruptData(std::string(what) + ": malformed JSON");
  }
  return json;
}

// The typed reads are core/json_read.h's. Messages name the object and quote the key:
// "<what>: missing required key '<key>'" (absent or null, as the CLI transcripts show),
// "<what>: key '<key>' must be an integer, found a string".
namespace {

std::string KeyPath(std::string_view what, std::string_view key) {
  return std::string(what) + ": key '" + std::string(key) + "'";
}

template <typename T>
Result<T> Get(const Json& obj, std::string_view key, std::string_view what) {
  GEOLAKE_ASSIGN_OR_RETURN(const Json* v, Require(obj, key, what));
  return JsonAs<T>(*v, KeyPath(what, key));
}

template <typename T>
Result<std::optional<T>> GetOpt(const Json& obj, std::string_view key, std::string_view what) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return std::optional<T>();
  GEOLAKE_ASSIGN_OR_RETURN(T value, JsonAs<T>(*v, KeyPath(what, key)));
  return std::optional<T>(std::move(value));
}

}  // namespace

Result<const Json*> Require(const Json& obj, std::string_view key, std::string_view what) {
  if (!obj.is_object()) return Status::CorruptData(std::string(what) + ": not a JSON object");
  const Json* value = JsonFind(obj, key);
  if (value == nullptr) {
    return Status::CorruptData(std::string(what) + ": missing required key '" + std::string(key) +
                               "'");
  }
  return value;
}

const Json* Find(const Json& obj, std::string_view key) { return JsonFind(obj, key); }

Result<std::int64_t> AsInt64(const Json& value, std::string_view what) {
  return JsonAs<std::int64_t>(value, what);
}

Result<std::int64_t> GetInt64(const Json& obj, std::string_view key, std::string_view what) {
  return Get<std::int64_t>(obj, key, what);
}

Result<std::int32_t> GetInt32(const Json& obj, std::string_view key, std::string_view what) {
  return Get<std::int32_t>(obj, key, what);
}

Result<std::string> GetString(const Json& obj, std::string_view key, std::string_view what) {
  return Get<std::string>(obj, key, what);
}

Result<bool> GetBool(const Json& obj, std::string_view key, std::string_view what) {
  return Get<bool>(obj, key, what);
}

Result<std::optional<std::int32_t>> GetOptInt32(const Json& obj, std::string_view key,
                                                std::string_view what) {
  return GetOpt<std::int32_t>(obj, key, what);
}

Result<std::optional<std::int64_t>> GetOptInt64(const Json& obj, std::string_view key,
                                                std::string_view what) {
  return GetOpt<std::int64_t>(obj, key, what);
}

Result<std::optional<std::string>> GetOptString(const Json& obj, std::string_view key,
                                                std::string_view what) {
  return GetOpt<std::string>(obj, key, what);
}

}  // namespace geolake::table::internal
