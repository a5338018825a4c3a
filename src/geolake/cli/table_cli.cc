#include "geolake/cli/table_cli.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <utility>
#include <variant>

#include "geolake/catalog/sql_catalog.h"

namespace geolake::cli {

Result<TableSession> OpenTableSession(const GlobalOptions& global) {
  TableSession session;
  GEOLAKE_ASSIGN_OR_RETURN(session.catalog, catalog::OpenCatalog(global.catalog, global.warehouse));
  session.io = io::MakeLocalFileIO();
  return session;
}

Result<table::Table> LoadNamedTable(TableSession& session, std::string_view name) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(name));
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(*session.catalog, *session.io, id));
  // Reading is tolerant; every table command needs the current schema, so say it once here.
  if (t.metadata.current_schema() == nullptr) {
    return Status::CorruptData("table '" + id.ToString() + "': metadata " + t.metadata_location +
                               " names no current schema");
  }
  return t;
}

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

// Name and type of each partition value of `file`, from the table's default spec when its arity
// matches (geolake tables have one spec); otherwise positional names and no type.
std::vector<std::pair<std::string, table::TypePtr>> PartitionFields(
    const table::TableMetadata& metadata, const table::DataFile& file) {
  std::vector<std::pair<std::string, table::TypePtr>> out;
  const table::PartitionSpecPtr spec = metadata.default_spec();
  const table::SchemaPtr schema = metadata.current_schema();
  if (spec != nullptr && schema != nullptr && spec->fields().size() == file.partition.size()) {
    Result<table::TypePtr> type = spec->PartitionType(*schema);
    if (type.ok()) {
      for (const table::NestedField& f : (*type)->fields()) out.emplace_back(f.name, f.type);
      return out;
    }
  }
  for (std::size_t i = 0; i < file.partition.size(); ++i) {
    out.emplace_back("p" + std::to_string(i), nullptr);
  }
  return out;
}

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

nlohmann::ordered_json PartitionJson(const table::TableMetadata& metadata,
                                     const table::DataFile& file) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const auto fields = PartitionFields(metadata, file);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    j[fields[i].first] = ValueJson(fields[i].second, file.partition[i]);
  }
  return j;
}

std::string PartitionText(const table::TableMetadata& metadata, const table::DataFile& file) {
  const auto fields = PartitionFields(metadata, file);
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!out.empty()) out += "/";
    const table::Value& v = file.partition[i];
    std::string text = "null";
    if (!table::IsNull(v)) {
      text = fields[i].second ? table::ValueToString(*fields[i].second, v) : "?";
    }
    out += fields[i].first + "=" + text;
  }
  return out;
}

std::optional<geo::Envelope> DataFileBbox(const layout::TableLayout& layout,
                                          const table::DataFile& file) {
  const auto bound = [](const std::map<std::int32_t, std::string>& bounds,
                        std::int32_t id) -> std::optional<double> {
    auto it = bounds.find(id);
    if (it == bounds.end()) return std::nullopt;
    Result<table::Value> v = table::DeserializeValue(*table::Type::Double(), it->second);
    if (!v.ok() || !std::holds_alternative<double>(*v)) return std::nullopt;
    return std::get<double>(*v);
  };
  const auto xmin = bound(file.lower_bounds, layout.bbox_xmin_id);
  const auto ymin = bound(file.lower_bounds, layout.bbox_ymin_id);
  const auto xmax = bound(file.upper_bounds, layout.bbox_xmax_id);
  const auto ymax = bound(file.upper_bounds, layout.bbox_ymax_id);
  if (!xmin || !ymin || !xmax || !ymax) return std::nullopt;
  return geo::Envelope{*xmin, *ymin, *xmax, *ymax};
}

void PrintJson(const nlohmann::ordered_json& j) {
  const std::string text =
      j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  std::fputs(text.c_str(), stdout);
}

}  // namespace geolake::cli
