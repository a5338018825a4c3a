// The Warehouse: the engine (executor, metrics, stop source, FileIO, catalog) and the
// operations that only wire it to a module's entry point. An operation method is always the
// same four steps: resolve its arguments (load the table), fill the engine fields of the
// module's options from the Warehouse (executor, stop token, metrics, memory budget, warehouse
// folder), call the module, and name the table in an error. docs/api.md "Adding an operation".
#include <utility>

#include "geolake/catalog/sql_catalog.h"
#include "geolake/geolake.h"

namespace geolake {

Warehouse::Warehouse(PrivateTag /*tag*/, std::string location, WarehouseOptions options)
    : location_(std::move(location)), options_(std::move(options)) {}

Warehouse::~Warehouse() = default;

Result<std::unique_ptr<Warehouse>> Warehouse::Open(std::string location, WarehouseOptions options) {
  if (location.empty()) return Status::InvalidArgument("warehouse: empty location");
  if (options.memory_bytes < 0) {
    return Status::InvalidArgument("warehouse: negative memory budget " +
                                   std::to_string(options.memory_bytes));
  }
  auto warehouse = std::make_unique<Warehouse>(PrivateTag{}, std::move(location), options);
  warehouse->io_ = io::MakeLocalFileIO();
  StopOptions stop;
  stop.handle_signals = options.handle_signals;
  stop.timeout = options.timeout;
  GEOLAKE_ASSIGN_OR_RETURN(warehouse->stop_, StopController::Make(stop));
  GEOLAKE_ASSIGN_OR_RETURN(warehouse->executor_, ThreadPool::Make(options.workers));
  return warehouse;
}

Result<table::Catalog*> Warehouse::catalog() {
  std::lock_guard lock(catalog_mu_);
  if (catalog_ == nullptr) {
    GEOLAKE_ASSIGN_OR_RETURN(catalog_,
                             options_.read_only_catalog
                                 ? catalog::OpenCatalogForReading(options_.catalog, location_)
                                 : catalog::OpenCatalog(options_.catalog, location_));
  }
  return catalog_.get();
}

Result<table::Table> Warehouse::LoadTable(std::string_view name) {
  GEOLAKE_ASSIGN_OR_RETURN(table::TableIdentifier id, table::TableIdentifier::Parse(name));
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(*catalog, *io_, id));
  // Reading is tolerant; every operation needs the current schema, so it is checked once here.
  if (t.metadata.current_schema() == nullptr) {
    return Status::CorruptData("table '" + id.ToString() + "': metadata " + t.metadata_location +
                               " names no current schema");
  }
  return t;
}

Result<query::QueryExplain> Warehouse::Query(std::string_view table, query::QueryOptions options,
                                             query::RowSink* sink) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, LoadTable(table));
  return Query(t, std::move(options), sink);
}

Result<query::QueryExplain> Warehouse::Query(const table::Table& table, query::QueryOptions options,
                                             query::RowSink* sink) {
  options.executor = executor_.get();
  if (options_.memory_bytes > 0) options.memory_bytes = options_.memory_bytes;
  Result<query::QueryExplain> explain =
      query::RunQuery(*io_, table.metadata, options, sink, stop_token());
  if (!explain.ok()) {
    return Status(explain.status().code(),
                  "query '" + table.id.ToString() + "': " + explain.status().message());
  }
  metrics_.counter("query.rows_returned")->Add(explain->rows_returned);
  metrics_.counter("query.bytes_read")->Add(explain->bytes_read);
  return explain;
}

Result<maintenance::OrphanReport> Warehouse::RemoveOrphans(std::string_view table,
                                                           maintenance::OrphanOptions options) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, LoadTable(table));
  options.warehouse = location_;
  GEOLAKE_ASSIGN_OR_RETURN(table::Catalog * catalog, this->catalog());
  GEOLAKE_ASSIGN_OR_RETURN(maintenance::OrphanReport report,
                           maintenance::RemoveOrphanFiles(*catalog, *io_, t, options, stop_token())
                               .WithContext("table '" + t.id.ToString() + "'"));
  metrics_.counter("orphans.files_listed")->Add(report.files_listed);
  metrics_.counter("orphans.files_removed")
      ->Add(options.dry_run ? 0 : static_cast<std::int64_t>(report.removed.size()));
  metrics_.counter("orphans.bytes_removed")->Add(options.dry_run ? 0 : report.removed_bytes);
  return report;
}

Result<render::RenderSummary> Warehouse::Render(std::string_view table,
                                                const render::RenderOptions& options) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, LoadTable(table));
  GEOLAKE_ASSIGN_OR_RETURN(render::RenderSummary summary,
                           render::RenderTable(*io_, t.metadata, options, stop_token())
                               .WithContext("table '" + t.id.ToString() + "'"));
  metrics_.counter("render.features")->Add(summary.features_drawn);
  metrics_.counter("render.files")->Add(summary.files_drawn);
  return summary;
}

Result<ops::ProfileReport> Warehouse::Profile(const std::string& source,
                                              ops::ProfileOptions options) {
  options.executor = executor_.get();
  options.stop = stop_token();
  return ops::ProfileSource(source, options, &metrics_);
}

Result<pipeline::ConvertSummary> Warehouse::Convert(const std::string& source,
                                                    const std::string& output,
                                                    const pipeline::ConvertOptions& options) {
  return pipeline::ConvertToGeoParquet(source, output, options, &metrics_, stop_token());
}

}  // namespace geolake
