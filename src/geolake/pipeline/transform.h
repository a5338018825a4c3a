/// \file
/// The transform stage of ingest (docs/architecture.md, stage 2 of every job): one source
/// batch in, rows in the table's layout out. Each geometry is checked (WKB structure, then
/// OGC validity with GEOS) and handled per the `--on-invalid` policy, reprojected to the table
/// CRS, rewritten as ISO WKB (one walk gives its type and envelope), and given its partition
/// value (`geo_cell`); attributes are mapped by name onto the table's columns. Rows that are
/// refused come back as RejectedRow with the reason, so nothing vanishes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/geo/geo_context.h"
#include "geolake/geo/wkb.h"
#include "geolake/layout/table_layout.h"

namespace geolake::pipeline {

/// \brief What happens to a geometry that is invalid, null or empty.
enum class InvalidPolicy : std::uint8_t {
  kMakeValid,  ///< repair invalid ones (GEOS make-valid); keep null and empty ones
  kReject,     ///< reject invalid, null and empty geometries (to rejects.geojsonseq)
  kKeep,       ///< keep everything as it is (no validity check)
};

/// \brief Parse "make-valid", "reject" or "keep". Errors: kInvalidArgument.
Result<InvalidPolicy> ParseInvalidPolicy(std::string_view text);

/// \brief A row the transform refused.
struct RejectedRow {
  std::int64_t feature_index = 0;
  std::string reason;
  /// The source geometry as it came (any WKB), empty when it was null.
  std::string wkb;
};

/// \brief Rows in the table's layout: attribute columns in table order, ISO WKB geometries
/// with their one-pass summaries, and each row's partition cell.
struct TransformedBatch {
  geoparquet::FeatureBatch batch;
  std::vector<geo::WkbSummary> summaries;  // one per row (unused for null geometries)
  std::vector<std::int32_t> cell_ids;      // one per row: index into `cells`, -1 = null cell
  std::vector<std::string> cells;          // distinct cell values in this batch
  std::vector<RejectedRow> rejects;
  std::int64_t made_valid = 0;  // geometries repaired by make-valid
  std::int64_t reprojected = 0;
  /// Per table column (table order): string values kept whose bytes were not well-formed
  /// UTF-8 and had each invalid byte replaced by U+FFFD (make-valid and keep; under reject
  /// such rows are rejected instead). Empty when no value of the batch needed it.
  std::vector<std::int64_t> utf8_replaced;

  /// \brief Empty everything, keeping the table fields.
  void Clear();
};

/// \brief Where each table column takes its value from.
struct FieldMapping {
  /// Per table attribute column: the source field index, or -1 (the column is null).
  std::vector<int> source_index;
  /// Source fields the table has no column for (their values are dropped; ingest warns),
  /// except the layout columns every table computes itself (IsRecomputedLayoutField).
  std::vector<std::string> dropped;
  /// Table columns the source has no field for (written as null; ingest warns, and refuses
  /// the source under --strict-schema).
  std::vector<std::string> missing;
};

/// \brief Map source fields onto table attribute columns by name. A source field missing from
/// the table is dropped, a table column missing from the source is null. Types must be equal,
/// except int64 into a double column. Errors: kInvalidArgument naming `label`, the field and
/// both types for an incompatible pair.
Result<FieldMapping> MapFields(const std::vector<geoparquet::FieldDef>& source,
                               const std::vector<geoparquet::FieldDef>& table,
                               std::string_view label);

/// \brief The source attribute type that stores an Iceberg column of `type` (the inverse of
/// IcebergTypeOf). Errors: kNotImplemented for column types ingest does not write.
Result<geoparquet::FieldType> FieldTypeOfIceberg(const table::Type& type);

/// \brief The geo_cell of a point given in lon/lat (x, y) degrees, or nullopt for kNone.
/// Errors: kInvalidArgument for non-finite input.
Result<std::optional<std::string>> CellForLonLat(const layout::PartitionScheme& scheme, double lon,
                                                 double lat);

struct TransformOptions {
  InvalidPolicy on_invalid = InvalidPolicy::kMakeValid;
  /// The table's attribute columns (in table order) and the partition scheme.
  std::vector<geoparquet::FieldDef> table_fields;
  layout::PartitionScheme partition;
  /// The table CRS ("EPSG:4326") and the source CRS (PROJJSON or "AUTH:CODE"; empty = taken
  /// to be the table CRS).
  std::string table_crs;
  std::string source_crs;
  /// The source has no CRS of its own and the table CRS is geographic: a geometry whose
  /// envelope leaves lon [-180, 180] x lat [-90, 90] cannot be in it (projected metres taken
  /// for degrees) and is rejected with that reason.
  bool check_lonlat_range = false;
};

/// \brief Whether an envelope lies within lon [-180, 180] x lat [-90, 90] (1e-9 of slack for
/// rounding), i.e. could be lon/lat (x, y) degrees.
bool WithinLonLatRange(const geo::Envelope& envelope);

/// \brief Transforms batches of one source; one per worker thread.
///
/// Bound to a GeoContext (GEOS, PROJ, the stop token that interrupts GEOS) that must outlive
/// it. Thread-safety: none.
class BatchTransformer {
 public:
  /// \brief Errors: kInvalidArgument for an unknown CRS, no transformation between the CRSs,
  /// or a mapping that does not fit the table fields.
  static Result<std::unique_ptr<BatchTransformer>> Make(geo::GeoContext* ctx,
                                                        TransformOptions options,
                                                        FieldMapping mapping);
  ~BatchTransformer();

  /// \brief Transform `in` (source fields) into `out` (cleared first). Refused rows go to
  /// out->rejects, so in.num_rows() = out rows + rejects. A string value that is not
  /// well-formed UTF-8 (a Latin-1 CSV, a DBF whose encoding GDAL does not know) never reaches
  /// a string column: under kReject its row is rejected naming the field, else each invalid
  /// byte is replaced by U+FFFD and counted in out->utf8_replaced. Errors: kCancelled when the
  /// stop token fires inside GEOS; kInternal for a GEOS failure that is not about the data.
  Status Apply(const geoparquet::FeatureBatch& in, TransformedBatch* out);

 private:
  struct Impl;
  explicit BatchTransformer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// \brief Append rows `rows` of `in` to `out` (same type, or int64 into double; a null row or
/// a missing input (in == nullptr) appends null), with one type dispatch per call.
void AppendRows(const geoparquet::Column* in, std::span<const std::uint32_t> rows,
                geoparquet::Column* out);

/// \brief Replace, in every string column of `batch`, each byte that does not start a
/// well-formed UTF-8 sequence by U+FFFD. Returns, per column, how many values changed (all
/// zero when none did; binary columns are left alone).
std::vector<std::int64_t> ReplaceInvalidUtf8InStrings(geoparquet::FeatureBatch* batch);

/// \brief Rows `rows` of a transformed batch as one FeatureBatch + summaries (for one
/// partition's writer).
void TakeRows(const TransformedBatch& in, const std::vector<std::uint32_t>& rows,
              geoparquet::FeatureBatch* out, std::vector<geo::WkbSummary>* summaries);

}  // namespace geolake::pipeline
