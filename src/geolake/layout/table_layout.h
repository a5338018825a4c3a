/// \file
/// The table layout of docs/table-layout.md as code: how a geolake table's Iceberg schema,
/// partition spec, sort order and `geolake.*` properties are built from a source's fields
/// (used by `create --from` and by ingest), how the layout is read back from a loaded table's
/// metadata (TableLayout), and how a Parquet data file's columns are checked against a table
/// schema before the file is committed (`append`, ingest), and which partition a new table
/// gets when none is given (PartitionForInputSize). Everything here is a pure function of its
/// arguments except the CRS look-ups, which use a short-lived PROJ context; the input size that
/// PartitionForInputSize takes is measured by the caller (sources::InputBytes).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"
#include "geolake/formats/geoparquet/layout_columns.h"
#include "geolake/formats/parquet/parquet_types.h"
#include "geolake/formats/parquet/schema.h"
#include "geolake/geo/envelope.h"
#include "geolake/table/partition_spec.h"
#include "geolake/table/schema.h"
#include "geolake/table/single_value.h"
#include "geolake/table/sort_order.h"
#include "geolake/table/table_metadata.h"

namespace geolake::parquet {
class FileReader;
}  // namespace geolake::parquet

namespace geolake::layout {

/// Table property keys geolake sets (docs/table-layout.md "Table properties geolake sets").
inline constexpr std::string_view kCrsProperty = "geolake.crs";
inline constexpr std::string_view kPartitionProperty = "geolake.partition";
inline constexpr std::string_view kHilbertExtentProperty = "geolake.hilbert.extent";
inline constexpr std::string_view kHilbertOrderProperty = "geolake.hilbert.order";
/// The PROJJSON of the table CRS, set on a format-version 3 table whose CRS has no EPSG or
/// OGC:CRS84 identifier: its geometry type is then `geometry(projjson:geolake.crs.projjson)`
/// (Iceberg spec "CRS": `projjson:<table property>`).
inline constexpr std::string_view kCrsProjjsonProperty = "geolake.crs.projjson";

inline constexpr int kDefaultHilbertOrder = 16;

/// \brief How `geo_cell` is computed.
enum class PartitionKind : std::uint8_t {
  kNone,     ///< no geo_cell column, unpartitioned table
  kQuadkey,  ///< Web Mercator quadkey at zoom `level` (1..23)
  kS2,       ///< S2 cell token at `level` (0..30)
};

/// \brief A partition scheme: kind and level ("quadkey:4", "s2:6", "none").
struct PartitionScheme {
  PartitionKind kind = PartitionKind::kQuadkey;
  int level = 4;

  /// \brief The text form: "quadkey:4", "s2:6", "none".
  std::string ToString() const;
  bool operator==(const PartitionScheme&) const = default;
};

/// \brief Parse "quadkey:Z" (1 <= Z <= 23), "s2:L" (0 <= L <= 30) or "none".
/// Errors: kInvalidArgument naming the text and what is accepted.
Result<PartitionScheme> ParsePartitionScheme(std::string_view text);

/// `write.target-file-size-bytes` of a new table (Iceberg's default, 128 MiB).
inline constexpr std::int64_t kDefaultTargetFileSizeBytes = std::int64_t{128} << 20;
/// The largest quadkey zoom PartitionForInputSize picks (the fixed default before it).
inline constexpr int kMaxInputSizeQuadkeyZoom = 4;

/// \brief The partition of a new table created without an explicit one, and why.
struct PartitionChoice {
  PartitionScheme scheme;
  /// One line for the user, e.g. "input 26.3 MiB < 512 MiB = 4 cells of quadkey:1 x 128 MiB
  /// target file size".
  std::string reason;
};

/// \brief Choose the partition of a new table from the bytes it is about to receive
/// (docs/table-layout.md "Partitioning"): the largest quadkey zoom Z in
/// 0..kMaxInputSizeQuadkeyZoom with input_bytes / 4^Z >= target_file_size_bytes, i.e. enough
/// bytes that each of the 4^Z cells could fill one target-size file if the rows were spread
/// evenly; Z = 0 is `none`. A target below 1 counts as 1; negative input bytes as 0.
PartitionChoice PartitionForInputSize(std::int64_t input_bytes,
                                      std::int64_t target_file_size_bytes);

/// \brief What a new geolake table is laid out with (docs/table-layout.md defaults).
struct LayoutOptions {
  PartitionScheme partition;
  /// The table CRS as given by the user ("EPSG:4326"); stored in `geolake.crs`.
  std::string crs = "EPSG:4326";
  int hilbert_order = kDefaultHilbertOrder;
  /// The extent the Hilbert key spans (table CRS units). Unset: DefaultHilbertExtent(crs).
  std::optional<geo::Envelope> hilbert_extent;
  /// The Iceberg format version of the table. From 3 on, `geometry` is Iceberg's geometry(C)
  /// type (GeometryColumnType); before, binary.
  int format_version = table::kDefaultFormatVersion;
};

/// \brief The Iceberg type of a table's `geometry` column (docs/table-layout.md "Format
/// version 3"): `binary` below format version 3; from 3 on `geometry(C)` with C from the
/// table CRS: bare `geometry` (C = OGC:CRS84, the default) when PROJ identifies the CRS as
/// OGC:CRS84, `geometry(srid:N)` for EPSG:N, else `geometry(projjson:geolake.crs.projjson)`
/// (LayoutProperties then stores the PROJJSON in that property). Axis order is always x = lon /
/// easting, y = lat / northing, whatever the CRS says. Errors: kInvalidArgument for an unknown
/// CRS.
Result<table::TypePtr> GeometryColumnType(int format_version, std::string_view crs);

/// \brief The Parquet GEOMETRY crs that mirrors an Iceberg geometry/geography type's CRS in
/// a data file: nullopt (Parquet's default OGC:CRS84) for the default, `srid:N` as is, and
/// for `projjson:KEY` the PROJJSON inlined from table property KEY (Parquet's `projjson:` refers
/// to a file key, not a table property; GeoParquet 2.0 asks for inline PROJJSON). Errors:
/// kInvalidArgument when KEY is not a property in `properties`.
Result<std::optional<std::string>> ParquetCrsOf(
    const table::Type& type, const std::map<std::string, std::string>& properties);

/// \brief The Iceberg type of a source attribute type (bool -> boolean, int64 -> long, double
/// -> double, string -> string, binary -> binary, date -> date, timestamp -> timestamptz).
table::TypePtr IcebergTypeOf(geoparquet::FieldType type);

/// \brief The Iceberg schema (id 0) of a geolake table for these source fields: the attributes
/// (optional, in order), `geometry` of `geometry_type` (null: binary; see GeometryColumnType),
/// `bbox` struct<xmin, ymin, xmax, ymax: double> (optional struct, required children), `geo_cell`
/// string unless `partition` is kNone, and `geo_hilbert` long. Ids are already Iceberg's fresh ids
/// (AssignFreshIds), so they equal the ids of a table created from this schema and of a file
/// written by GeoParquetSchema for the same fields when the table is unpartitioned. A field geolake
/// derives itself (geoparquet::IsRecomputedLayoutField: `geo_cell` text, `geo_hilbert` int64, as in
/// the files geolake writes) is left out: the table's own are computed on ingest. Errors:
/// kInvalidArgument when a field name is empty, repeated, or another field named like one of the
/// added columns.
Result<table::SchemaPtr> LayoutSchema(const std::vector<geoparquet::FieldDef>& fields,
                                      const PartitionScheme& partition,
                                      table::TypePtr geometry_type = nullptr);

/// \brief identity(geo_cell) named "geo_cell" (field id 1000), or unpartitioned for kNone.
/// Errors: kInvalidArgument when `schema` lacks a string `geo_cell` column (not kNone).
Result<table::PartitionSpecPtr> LayoutPartitionSpec(const table::Schema& schema,
                                                    const PartitionScheme& partition);

/// \brief The sort order `geo_hilbert ASC NULLS LAST` (order id 1).
/// Errors: kInvalidArgument when `schema` lacks a long `geo_hilbert` column.
Result<table::SortOrderPtr> LayoutSortOrder(const table::Schema& schema);

/// \brief The default Hilbert extent of a CRS: the lon/lat world (-180,-90,180,90) for a
/// geographic CRS; otherwise the CRS's area of use (from its PROJJSON "bbox", in lon/lat)
/// transformed into the CRS along densified edges. Errors: kInvalidArgument for an unknown
/// CRS, or a projected CRS without an area of use (give geolake.hilbert.extent explicitly).
Result<geo::Envelope> DefaultHilbertExtent(std::string_view crs);

/// \brief "xmin,ymin,xmax,ymax" with the shortest round-trip text of each double.
std::string FormatExtent(const geo::Envelope& extent);
/// \brief Parse "xmin,ymin,xmax,ymax" (finite, xmin < xmax, ymin < ymax). kInvalidArgument.
Result<geo::Envelope> ParseExtent(std::string_view text);

/// \brief The `geolake.*` properties plus the Iceberg write properties geolake sets
/// (write.parquet.compression-codec=zstd, write.target-file-size-bytes=134217728), and for a
/// format-version 3 table whose geometry type refers to it, geolake.crs.projjson. The CRS is
/// validated with PROJ. Errors: kInvalidArgument for an unknown CRS, a Hilbert order outside [1,
/// 31], or no default extent (see DefaultHilbertExtent).
Result<std::map<std::string, std::string>> LayoutProperties(const LayoutOptions& options);

/// \brief Everything a new table needs: NewTableOptions with schema, spec, sort order and
/// properties of the layout, and the format version of `options` (location and extra
/// properties left for the caller). Errors: those of the functions above.
Result<table::NewTableOptions> LayoutNewTable(const std::vector<geoparquet::FieldDef>& fields,
                                              const LayoutOptions& options);

/// \brief A column of the layout in a loaded table: its field id and its position among the
/// schema's top-level fields.
struct LayoutColumn {
  std::int32_t field_id = 0;
  int position = -1;  // index into Schema::fields()
};

/// \brief What geolake needs to know about an existing table, read from its metadata.
///
/// Thread-safety: a plain value.
struct TableLayout {
  std::string crs;  // geolake.crs
  PartitionScheme partition;
  geo::Envelope hilbert_extent;
  int hilbert_order = kDefaultHilbertOrder;
  LayoutColumn geometry;
  LayoutColumn bbox;
  /// Field ids of bbox.xmin, bbox.ymin, bbox.xmax, bbox.ymax.
  std::int32_t bbox_xmin_id = 0;
  std::int32_t bbox_ymin_id = 0;
  std::int32_t bbox_xmax_id = 0;
  std::int32_t bbox_ymax_id = 0;
  /// field_id 0 / position -1 when the table is unpartitioned (PartitionKind::kNone).
  LayoutColumn cell;
  LayoutColumn hilbert;
  /// The number of source attribute columns (they come first, positions 0..n-1).
  int attribute_count = 0;
};

/// \brief Read the layout of a table from its current schema and properties.
/// Errors: kInvalidArgument naming what is missing or malformed ("table lacks property
/// 'geolake.crs'", "column 'bbox' is not struct<xmin, ymin, xmax, ymax: double>", a
/// `geolake.partition` that disagrees with the geo_cell column or the partition spec, ...),
/// i.e. the table was not written with geolake's layout.
Result<TableLayout> ReadTableLayout(const table::TableMetadata& metadata);

/// \brief Check a Parquet data file's columns against a table schema before committing it.
///
/// Every Parquet column must carry a field id that exists in `table_schema` with the same name
/// (and the same parent), a physical/logical type that stores the Iceberg type, and a
/// repetition no looser than the table's (optional data in a required field is refused).
/// Every required table field must be present. Optional table columns absent from the file are
/// allowed (they read as null). `label` names the file in messages.
/// Errors: kInvalidArgument "FILE: column 'x' ..." for a missing id, unknown id, name or type
/// mismatch, or a missing required column.
Status CheckDataFileSchema(const parquet::Schema& file_schema, const table::Schema& table_schema,
                           std::string_view label);

/// \brief The partition tuple (in the order of the table's default spec) of a data file whose
/// footer is `footer` with schema `file_schema`, taken from the footer statistics of each
/// partition source column: the column must hold one value in every row (min == max in every
/// row group, equal across row groups, no nulls), or only nulls (a null partition value).
/// Unpartitioned tables give an empty tuple. Only identity transforms are derived. `label`
/// names the file in messages.
/// Errors: kInvalidArgument when the file lacks a partition source column (by field id), holds
/// several values or a mix of nulls and values, or has no statistics to tell;
/// kNotImplemented for a non-identity transform; kCorruptData for a statistic that does not
/// decode as the column's type.
Result<std::vector<table::Value>> PartitionFromFooter(const parquet::FileMetaData& footer,
                                                      const parquet::Schema& file_schema,
                                                      const table::TableMetadata& metadata,
                                                      std::string_view label);

/// \brief Decode every page of a data file and check what a commit of it would promise
/// (`append`): every column chunk decodes (page CRCs verified when present) and holds exactly
/// the rows its row group declares, the row groups' counts are non-negative and sum without
/// overflow to the footer's num_rows, and every value of the top-level BYTE_ARRAY column
/// `geometry_column` is WKB whose coordinates are all finite. One column chunk is decoded at
/// a time, within the reader's limits; nothing is allocated from a declared count.
///
/// Errors: kCorruptData "LABEL: ..." naming the row group, column or value that disagrees
/// (and the reader's own errors for pages that do not decode).
Status VerifyDataFileContents(const parquet::FileReader& reader, std::string_view geometry_column,
                              std::string_view label);

}  // namespace geolake::layout
