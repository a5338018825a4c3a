#include "geolake/cli/table_cli.h"

#include <cstdio>
#include <ctime>
#include <variant>

namespace geolake::cli {

std::string IsoTimeUtc(std::int64_t epoch_ms) {
  std::int64_t seconds = epoch_ms / 1000;
  std::int64_t millis = epoch_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    seconds -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  // Sized for any int field values the compiler can imagine (it warns about truncation).
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis));
  return buf;
}

namespace {

nlohmann::ordered_json ValueJson(const table::TypePtr& type, const table::Value& value) {
  if (table::IsNull(value)) return nullptr;
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  if (const auto* i32 = std::get_if<std::int32_t>(&value)) return *i32;
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* d = std::get_if<double>(&value)) return *d;
  if (type == nullptr) return "?";
  return table::ValueToString(*type, value);
}

}  // namespace

nlohmann::ordered_json PartitionJson(const std::vector<PartitionValue>& partition) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const PartitionValue& p : partition) j[p.name] = ValueJson(p.type, p.value);
  return j;
}

void PrintJson(const nlohmann::ordered_json& j) {
  const std::string text =
      j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  std::fputs(text.c_str(), stdout);
}

}  // namespace geolake::cli
