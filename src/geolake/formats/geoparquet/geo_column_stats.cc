#include "geolake/formats/geoparquet/geo_column_stats.h"

namespace geolake::geoparquet {
namespace {

constexpr int kNumTypeBits = 28;

int TypeBit(geo::GeometryType type, geo::Dimensions dims) {
  return (static_cast<int>(type) - 1) * 4 + static_cast<int>(dims);
}

}  // namespace

Status GeoColumnStats::Add(std::span<const std::uint8_t> wkb) {
  // SummarizeWkb validates the whole value before anything is changed, so a corrupt value
  // leaves no trace.
  GEOLAKE_ASSIGN_OR_RETURN(geo::WkbSummary summary, geo::SummarizeWkb(wkb));
  Add(summary);
  return Status::OK();
}

void GeoColumnStats::Add(const geo::WkbSummary& summary) {
  type_mask_ |= std::uint32_t{1} << TypeBit(summary.header.type, summary.header.dims);
  envelope_.Expand(summary.envelope);
  ++num_values_;
}

void GeoColumnStats::Merge(const GeoColumnStats& other) {
  type_mask_ |= other.type_mask_;
  envelope_.Expand(other.envelope_);
  num_values_ += other.num_values_;
  num_nulls_ += other.num_nulls_;
}

std::vector<geo::TypedDimensions> GeoColumnStats::types() const {
  std::vector<geo::TypedDimensions> out;
  for (int bit = 0; bit < kNumTypeBits; ++bit) {
    if ((type_mask_ >> bit) & 1u) {
      out.push_back(
          {static_cast<geo::GeometryType>(bit / 4 + 1), static_cast<geo::Dimensions>(bit % 4)});
    }
  }
  return out;
}

std::vector<std::string> GeoColumnStats::GeoParquetTypeNames() const {
  std::vector<std::string> names;
  for (const geo::TypedDimensions& typed : types()) {
    names.push_back(geo::GeoParquetTypeName(typed.type, typed.dims));
  }
  return names;
}

bool GeoColumnStats::has_m() const {
  for (const geo::TypedDimensions& typed : types()) {
    if (geo::HasM(typed.dims)) return true;
  }
  return false;
}

void GeoColumnStats::FillColumn(GeoColumnMetadata* column) const {
  column->geometry_types = GeoParquetTypeNames();
  if (envelope_.IsEmpty()) {
    column->bbox.clear();
  } else {
    column->bbox = {envelope_.xmin, envelope_.ymin, envelope_.xmax, envelope_.ymax};
  }
}

}  // namespace geolake::geoparquet
