#include "geolake/sources/geoparquet_source.h"

namespace geolake::sources {

struct GeoParquetSource::Impl {
  std::string path;
  std::vector<FieldDef> fields;
  std::string crs_projjson;
  std::string crs_authority;
  std::vector<std::int64_t> row_group_rows;
  std::int64_t num_rows = 0;
};

GeoParquetSource::GeoParquetSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GeoParquetSource::~GeoParquetSource() = default;

Result<std::unique_ptr<GeoParquetSource>> GeoParquetSource::Open(const std::string& path) {
  return Status::NotImplemented("GeoParquet source '" + path + "': not yet readable (TODO(#5))");
}

const std::string& GeoParquetSource::path() const { return impl_->path; }
const std::vector<FieldDef>& GeoParquetSource::fields() const { return impl_->fields; }
const std::string& GeoParquetSource::crs_projjson() const { return impl_->crs_projjson; }
const std::string& GeoParquetSource::crs_authority() const { return impl_->crs_authority; }
std::int64_t GeoParquetSource::num_rows() const { return impl_->num_rows; }
int GeoParquetSource::num_row_groups() const {
  return static_cast<int>(impl_->row_group_rows.size());
}
std::int64_t GeoParquetSource::row_group_rows(int row_group) const {
  return impl_->row_group_rows[static_cast<std::size_t>(row_group)];
}
Status GeoParquetSource::Seek(std::int64_t) { return Status::NotImplemented("GeoParquet seek"); }
Result<std::int64_t> GeoParquetSource::ReadBatch(std::int64_t, FeatureBatch*) {
  return Status::NotImplemented("GeoParquet read");
}

}  // namespace geolake::sources
