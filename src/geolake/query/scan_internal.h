/// \file
/// What the parts of the query scan share (query/ only). RunQuery (scan.cc) drives a Scanner:
/// scan.cc binds the query to the table's columns and runs the levels in order, pruning.cc
/// prunes partitions, files, row groups and pages, row_group.cc decodes and filters one row
/// group, row_ranges.h is the row-range arithmetic of page pruning, and explain.cc prints what
/// the scan did.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/envelope.h"
#include "geolake/geo/geos.h"
#include "geolake/io/file_io.h"
#include "geolake/query/expr.h"
#include "geolake/query/row_ranges.h"
#include "geolake/query/scan.h"
#include "geolake/table/manifest.h"
#include "geolake/table/scan.h"
#include "geolake/table/schema.h"
#include "geolake/table/single_value.h"
#include "geolake/table/table_metadata.h"

namespace geolake::query::internal {

/// True when the query has an exact intersection geometry.
bool HasIntersects(const QueryOptions& o);
/// The exact intersection geometry, made in `ctx`.
Result<geo::Geometry> IntersectsGeometry(geo::GeoContext& ctx, const QueryOptions& o);

/// A leaf column of the table schema (struct children flattened to dotted names).
struct TableColumn {
  ColumnInfo info;
  std::int32_t field_id = 0;
  table::TypePtr type;
  bool top_level = false;
};

/// Index of the column named `name` in `columns`; -1 when absent.
int FindColumn(const std::vector<TableColumn>& columns, std::string_view name);
/// A manifest bound (an Iceberg single value) as a scalar; nullopt for other types.
std::optional<Scalar> ToScalar(const table::Value& v);
// A PLAIN-encoded Parquet bound as a scalar of the column's kind (nullopt when unusable).
std::optional<Scalar> DecodePlain(const parquet::LeafColumn& leaf, ColumnKind kind,
                                  std::string_view bytes);
/// Value `vi` of decoded column data as a scalar of the column's kind.
Scalar ValueScalar(const parquet::ColumnData& d, std::int64_t vi, ColumnKind kind);

struct FileState {
  const table::DataFile* file = nullptr;
  std::unique_ptr<parquet::FileReader> reader;
  std::vector<int> leaf_of_column;  // table column index -> Parquet leaf (-1: absent)
  std::vector<std::int64_t> row_group_first_row;
};

struct Unit {
  std::size_t file = 0;
  int row_group = 0;
  std::int64_t weight_bytes = 0;
};

struct UnitResult {
  geoparquet::FeatureBatch rows;
  std::int64_t rows_decoded = 0;
  std::int64_t pages_considered = 0;
  std::int64_t pages_pruned = 0;
};

struct UnitScan;  // row_group.cc: the state of one row group's steps

/// Runs one query over one snapshot (RunQuery).
///
/// Thread-safety: Run is called once; ProcessUnit runs on several executor threads at once and
/// only reads the scanner (bytes_read_ is atomic).
class Scanner {
 public:
  Scanner(const io::FileIO& io, const table::TableMetadata& metadata, const QueryOptions& options,
          std::stop_token stop)
      : io_(io), metadata_(metadata), options_(options), stop_(std::move(stop)) {}

  Result<QueryExplain> Run(RowSink* sink);
  /// The paths of the files partition and file pruning keep (SelectDataFiles).
  Result<std::vector<std::string>> SelectFiles();

 private:
  // scan.cc: the snapshot's live data files that partition and file pruning keep, into files_.
  Status PlanFiles(std::optional<std::int64_t> snapshot, table::ScanPlan* plan);
  // scan.cc: bind the query to the table's columns; open a data file.
  Status Bind();
  Status OpenFile(FileState* state);

  // pruning.cc, level by level: partitions, files (manifest bounds), row groups (footer
  // statistics), pages (page index).
  std::optional<ColumnBounds> FileBounds(const table::DataFile& f, int column) const;
  Status PrunePartitions(std::vector<const table::DataFile*>* files);
  void PruneFiles(const std::vector<const table::DataFile*>& files);
  // Whether a file's manifest bounds of the geometry column (v3 geometry/geography, Iceberg
  // spec Appendix D: lower/upper bound points) exclude the box; nullopt when it has none.
  std::optional<bool> GeometryBoundsExclude(const table::DataFile& f) const;
  std::vector<Unit> PruneRowGroups();
  Result<Ranges> PageRanges(
      const FileState& fs, int rg, const Expr& e,
      std::map<int, std::pair<parquet::OffsetIndex, parquet::ColumnIndex>>* cache) const;

  // row_group.cc: one row group, step by step (ProcessUnit calls them in this order).
  Status ProcessUnit(const Unit& unit, UnitResult* out) const;
  Status CountPrunedFilterPages(const UnitScan& scan) const;
  bool BoxFastPath() const;
  Status ReadBoxColumns(UnitScan* scan) const;
  Status ReadFilterColumns(UnitScan* scan) const;
  Status MatchRows(UnitScan* scan, std::vector<std::int64_t>* matched) const;
  Status ReadMatchedRows(UnitScan* scan, const std::vector<std::int64_t>& matched) const;

  const io::FileIO& io_;
  const table::TableMetadata& metadata_;
  const QueryOptions& options_;
  std::stop_token stop_;
  table::SchemaPtr schema_;
  std::vector<TableColumn> columns_;
  std::unique_ptr<Expr> filter_;  // box AND --where: what pruning uses
  // Rows are tested by the box directly on the bbox columns (box_columns_: xmin, ymin, xmax,
  // ymax; -1 when not double columns, then filter_ tests rows) and by residual_ (--where).
  std::array<int, 4> box_columns_{-1, -1, -1, -1};
  std::unique_ptr<Expr> residual_;
  std::vector<int> filter_columns_;
  std::vector<int> output_columns_;  // table column indices (top-level attributes)
  int geometry_column_ = -1;
  std::optional<geo::Envelope> box_;
  OutputLayout layout_;
  std::vector<FileState> files_;
  std::atomic<std::int64_t> bytes_read_{0};
  QueryExplain explain_;
};

}  // namespace geolake::query::internal
