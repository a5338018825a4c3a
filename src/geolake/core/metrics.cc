#include "geolake/core/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "geolake/core/units.h"

namespace geolake {
namespace {

using Json = nlohmann::ordered_json;

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Steady-clock ns of 0 is reserved for "unset"; the steady clock never reads 0 after boot,
// but clamp so that a marker is never mistaken for unset.
std::int64_t MarkNs() { return std::max<std::int64_t>(NowNs(), 1); }

// Table layout: columns are right-aligned except the first and the last.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  std::size_t num_cols = 0;
  for (const auto& row : rows) num_cols = std::max(num_cols, row.size());
  std::vector<std::size_t> widths(num_cols, 0);
  for (const auto& row : rows) {
    for (std::size_t col = 0; col < row.size(); ++col) {
      widths[col] = std::max(widths[col], row[col].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t col = 0; col < row.size(); ++col) {
      if (col > 0) line += "  ";
      const bool left = col == 0 || col + 1 == num_cols;
      if (left) {
        line += row[col];
        if (col + 1 < row.size()) line.append(widths[col] - row[col].size(), ' ');
      } else {
        line.append(widths[col] - row[col].size(), ' ');
        line += row[col];
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

// Typed field access without exceptions.
Status GetInt(const Json& object, std::string_view key, std::string_view where, std::int64_t* out) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) {
    return Status::InvalidArgument(
        fmt::format("metrics json: {} needs an integer '{}'", where, key));
  }
  *out = it->get<std::int64_t>();
  return Status::OK();
}

Status ParseCounters(const Json& object, std::string_view where,
                     std::vector<MetricsSnapshot::CounterValue>* out) {
  if (!object.is_object()) {
    return Status::InvalidArgument(fmt::format("metrics json: {} must be an object", where));
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!it.value().is_number_integer()) {
      return Status::InvalidArgument(
          fmt::format("metrics json: {} '{}' must be an integer", where, it.key()));
    }
    out->push_back({it.key(), it.value().get<std::int64_t>()});
  }
  return Status::OK();
}

}  // namespace

void StageMetrics::Start() {
  std::int64_t expected = 0;
  start_ns_.compare_exchange_strong(expected, MarkNs(), std::memory_order_relaxed);
}

void StageMetrics::Finish() {
  const std::int64_t now = MarkNs();
  std::int64_t end = end_ns_.load(std::memory_order_relaxed);
  while (now > end && !end_ns_.compare_exchange_weak(end, now, std::memory_order_relaxed)) {
  }
}

void StageMetrics::AddBusyTime(std::chrono::nanoseconds busy) {
  busy_ns_.fetch_add(busy.count(), std::memory_order_relaxed);
}

Counter* StageMetrics::counter(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = counters_.find(name);
  if (it != counters_.end()) return it->second.get();
  auto owned = std::make_unique<Counter>();
  Counter* raw = owned.get();
  counters_.emplace(std::string(name), std::move(owned));
  counter_order_.emplace_back(std::string(name), raw);
  return raw;
}

StageMetrics::Timer::Timer(StageMetrics* stage)
    : stage_(stage), start_(std::chrono::steady_clock::now()) {
  stage_->Start();
}

StageMetrics::Timer::~Timer() {
  stage_->AddBusyTime(std::chrono::steady_clock::now() - start_);
  stage_->Finish();
}

template <typename T>
T* Metrics::Family<T>::Get(std::string_view name) {
  auto it = by_name.find(name);
  if (it != by_name.end()) return it->second.get();
  auto owned = std::make_unique<T>();
  T* raw = owned.get();
  by_name.emplace(std::string(name), std::move(owned));
  order.emplace_back(std::string(name), raw);
  return raw;
}

Metrics::Metrics() : created_(std::chrono::steady_clock::now()) {}

Counter* Metrics::counter(std::string_view name) {
  std::lock_guard lock(mu_);
  return counters_.Get(name);
}

Gauge* Metrics::gauge(std::string_view name) {
  std::lock_guard lock(mu_);
  return gauges_.Get(name);
}

StageMetrics* Metrics::stage(std::string_view name) {
  std::lock_guard lock(mu_);
  return stages_.Get(name);
}

MetricsSnapshot Metrics::Snapshot() const {
  const std::int64_t now_ns = NowNs();
  MetricsSnapshot snap;
  snap.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - created_)
                        .count();
  std::lock_guard lock(mu_);
  for (const auto& [name, c] : counters_.order) snap.counters.push_back({name, c->value()});
  for (const auto& [name, g] : gauges_.order) snap.gauges.push_back({name, g->value(), g->peak()});
  for (const auto& [name, s] : stages_.order) {
    MetricsSnapshot::StageValue v;
    v.name = name;
    v.rows_in = s->rows_in_.value();
    v.rows_out = s->rows_out_.value();
    v.bytes_in = s->bytes_in_.value();
    v.bytes_out = s->bytes_out_.value();
    const std::int64_t start = s->start_ns_.load(std::memory_order_relaxed);
    const std::int64_t end = s->end_ns_.load(std::memory_order_relaxed);
    if (start != 0) {
      // A stage still running (no end yet, or restarted after a Finish) extends to now.
      const std::int64_t stop = end >= start ? end : now_ns;
      v.wall_ms = (stop - start) / 1'000'000;
    }
    v.busy_ms = s->busy_ns_.load(std::memory_order_relaxed) / 1'000'000;
    {
      std::lock_guard stage_lock(s->mu_);
      for (const auto& [cname, c] : s->counter_order_) v.counters.push_back({cname, c->value()});
    }
    snap.stages.push_back(std::move(v));
  }
  return snap;
}

std::string MetricsSnapshot::ToTable() const {
  std::string out;
  if (!stages.empty()) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back(
        {"stage", "rows in", "rows out", "bytes in", "bytes out", "wall", "busy", "counters"});
    for (const StageValue& s : stages) {
      std::string extra;
      for (const CounterValue& c : s.counters) {
        if (!extra.empty()) extra += ", ";
        extra += fmt::format("{}={}", c.name, c.value);
      }
      rows.push_back({s.name, std::to_string(s.rows_in), std::to_string(s.rows_out),
                      FormatSize(s.bytes_in), FormatSize(s.bytes_out),
                      FormatDuration(std::chrono::milliseconds(s.wall_ms)),
                      FormatDuration(std::chrono::milliseconds(s.busy_ms)), extra});
    }
    out += RenderTable(rows);
  }
  if (!counters.empty()) {
    if (!out.empty()) out += '\n';
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"counter", "value", ""});
    for (const CounterValue& c : counters) rows.push_back({c.name, std::to_string(c.value), ""});
    out += RenderTable(rows);
  }
  if (!gauges.empty()) {
    if (!out.empty()) out += '\n';
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"gauge", "value", "peak", ""});
    for (const GaugeValue& g : gauges) {
      rows.push_back({g.name, std::to_string(g.value), std::to_string(g.peak), ""});
    }
    out += RenderTable(rows);
  }
  out += fmt::format("{}elapsed {}\n", out.empty() ? "" : "\n",
                     FormatDuration(std::chrono::milliseconds(elapsed_ms)));
  return out;
}

std::string MetricsSnapshot::ToJson() const {
  Json root = Json::object();
  root["elapsed_ms"] = elapsed_ms;
  Json stage_list = Json::array();
  for (const StageValue& s : stages) {
    Json j = Json::object();
    j["name"] = s.name;
    j["rows_in"] = s.rows_in;
    j["rows_out"] = s.rows_out;
    j["bytes_in"] = s.bytes_in;
    j["bytes_out"] = s.bytes_out;
    j["wall_ms"] = s.wall_ms;
    j["busy_ms"] = s.busy_ms;
    Json extra = Json::object();
    for (const CounterValue& c : s.counters) extra[c.name] = c.value;
    j["counters"] = std::move(extra);
    stage_list.push_back(std::move(j));
  }
  root["stages"] = std::move(stage_list);
  Json counter_map = Json::object();
  for (const CounterValue& c : counters) counter_map[c.name] = c.value;
  root["counters"] = std::move(counter_map);
  Json gauge_map = Json::object();
  for (const GaugeValue& g : gauges) gauge_map[g.name] = {{"value", g.value}, {"peak", g.peak}};
  root["gauges"] = std::move(gauge_map);
  // Names come from our code, but replace invalid UTF-8 rather than throw if one ever does not.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Result<MetricsSnapshot> MetricsSnapshot::FromJson(std::string_view text) {
  const Json root = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::InvalidArgument("metrics json: not valid JSON");
  if (!root.is_object())
    return Status::InvalidArgument("metrics json: top level must be an object");
  MetricsSnapshot snap;
  GEOLAKE_RETURN_NOT_OK(GetInt(root, "elapsed_ms", "the report", &snap.elapsed_ms));

  auto stages_it = root.find("stages");
  if (stages_it == root.end() || !stages_it->is_array()) {
    return Status::InvalidArgument("metrics json: 'stages' must be an array");
  }
  for (const Json& j : *stages_it) {
    if (!j.is_object()) return Status::InvalidArgument("metrics json: a stage must be an object");
    StageValue s;
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string()) {
      return Status::InvalidArgument("metrics json: a stage needs a string 'name'");
    }
    s.name = name_it->get<std::string>();
    const std::string where = "stage '" + s.name + "'";
    GEOLAKE_RETURN_NOT_OK(GetInt(j, "rows_in", where, &s.rows_in));
    GEOLAKE_RETURN_NOT_OK(GetInt(j, "rows_out", where, &s.rows_out));
    GEOLAKE_RETURN_NOT_OK(GetInt(j, "bytes_in", where, &s.bytes_in));
    GEOLAKE_RETURN_NOT_OK(GetInt(j, "bytes_out", where, &s.bytes_out));
    GEOLAKE_RETURN_NOT_OK(GetInt(j, "wall_ms", where, &s.wall_ms));
    GEOLAKE_RETURN_NOT_OK(GetInt(j, "busy_ms", where, &s.busy_ms));
    auto counters_it = j.find("counters");
    if (counters_it != j.end()) {
      GEOLAKE_RETURN_NOT_OK(ParseCounters(*counters_it, where + " counters", &s.counters));
    }
    snap.stages.push_back(std::move(s));
  }

  auto counters_it = root.find("counters");
  if (counters_it != root.end()) {
    GEOLAKE_RETURN_NOT_OK(ParseCounters(*counters_it, "counters", &snap.counters));
  }
  auto gauges_it = root.find("gauges");
  if (gauges_it != root.end()) {
    if (!gauges_it->is_object()) {
      return Status::InvalidArgument("metrics json: 'gauges' must be an object");
    }
    for (auto it = gauges_it->begin(); it != gauges_it->end(); ++it) {
      GaugeValue g;
      g.name = it.key();
      const std::string where = "gauge '" + g.name + "'";
      if (!it.value().is_object()) {
        return Status::InvalidArgument("metrics json: " + where + " must be an object");
      }
      GEOLAKE_RETURN_NOT_OK(GetInt(it.value(), "value", where, &g.value));
      GEOLAKE_RETURN_NOT_OK(GetInt(it.value(), "peak", where, &g.peak));
      snap.gauges.push_back(std::move(g));
    }
  }
  return snap;
}

}  // namespace geolake
