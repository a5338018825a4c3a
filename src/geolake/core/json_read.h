/// \file
/// Typed reading of a parsed JSON document with errors that name the path: the one way
/// geolake reads JSON (Iceberg table metadata, GeoParquet "geo" metadata, the run journal).
/// Every error is kCorruptData in one of three forms:
///   "<where> has no '<key>'"                        a required key is absent
///   "<path> must be <expected>, found <JSON type>"  a value of the wrong type (null included)
///   "<path> must be <expected>, found <number>"     an integer out of the requested range
/// Optional keys treat an absent key and a null value alike (tolerant reading).
///
/// Header-only templates over the JSON type, so the header does not include nlohmann/json.hpp
/// (which stays a private dependency of each module that parses JSON) and serves both
/// nlohmann::json and nlohmann::ordered_json.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "geolake/core/result.h"

namespace geolake {

/// \brief The JSON type of `value` for messages: "an object", "a string", "null", ...
template <typename Json>
std::string_view JsonTypeName(const Json& value) {
  if (value.is_null()) return "null";
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  return "an unknown JSON value";
}

/// \brief kCorruptData "<path> must be <expected>, found <the JSON type of value>".
template <typename Json>
Status JsonWrongType(std::string_view path, std::string_view expected, const Json& value) {
  return Status::CorruptData(std::string(path) + " must be " + std::string(expected) + ", found " +
                             std::string(JsonTypeName(value)));
}

/// \brief The value of `key` in `object`; nullptr when `object` is not an object, the key is
/// absent or its value is null.
template <typename Json>
const Json* JsonFind(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

/// \brief `value` as a T: std::string, bool, double (any number), std::int64_t or
/// std::int32_t (integers only, range-checked). `path` names the value in errors.
template <typename T, typename Json>
Result<T> JsonAs(const Json& value, std::string_view path) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) return JsonWrongType(path, "a string", value);
    return value.template get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) return JsonWrongType(path, "a boolean", value);
    return value.template get<bool>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (!value.is_number()) return JsonWrongType(path, "a number", value);
    return value.template get<double>();
  } else {
    static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>,
                  "JsonAs reads strings, booleans, doubles, int64 and int32");
    if (!value.is_number_integer()) return JsonWrongType(path, "an integer", value);
    const bool is_32 = std::is_same_v<T, std::int32_t>;
    const auto out_of_range = [&] {
      return Status::CorruptData(std::string(path) + " must be " +
                                 (is_32 ? "a 32-bit integer" : "a 64-bit integer") + ", found " +
                                 value.dump());
    };
    if (value.is_number_unsigned()) {
      const auto u = value.template get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return out_of_range();
      return static_cast<T>(u);
    }
    const auto v = value.template get<std::int64_t>();
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
      return out_of_range();
    }
    return static_cast<T>(v);
  }
}

/// \brief The value of a required key as a T (see JsonAs); `where` names `object`. A null
/// value is of the wrong type; `object` that is not an object is an error too.
template <typename T, typename Json>
Result<T> JsonRequired(const Json& object, std::string_view key, std::string_view where) {
  if (!object.is_object()) return JsonWrongType(where, "an object", object);
  const auto it = object.find(key);
  if (it == object.end()) {
    return Status::CorruptData(std::string(where) + " has no '" + std::string(key) + "'");
  }
  return JsonAs<T>(*it, std::string(where) + "." + std::string(key));
}

/// \brief The value of an optional key as a T; nullopt when absent or null.
template <typename T, typename Json>
Result<std::optional<T>> JsonOptional(const Json& object, std::string_view key,
                                      std::string_view where) {
  const Json* value = JsonFind(object, key);
  if (value == nullptr) return std::optional<T>();
  GEOLAKE_ASSIGN_OR_RETURN(T v, JsonAs<T>(*value, std::string(where) + "." + std::string(key)));
  return std::optional<T>(std::move(v));
}

}  // namespace geolake
