#include "geolake/layout/table_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "geolake/formats/geoparquet/geoparquet_file.h"
#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/io/file_io.h"
#include "geolake/table/catalog.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::layout {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using geoparquet::FieldDef;
using geoparquet::FieldType;
using table::TypeId;
using ::testing::ElementsAre;

const std::vector<FieldDef> kFields = {
    {"name", FieldType::kString}, {"pop", FieldType::kInt64}, {"area", FieldType::kDouble},
    {"ok", FieldType::kBool},     {"day", FieldType::kDate},  {"at", FieldType::kTimestamp},
    {"blob", FieldType::kBinary},
};

std::string TestDir(const std::string& name) {
  const std::string dir = ::geolake::testing::BuildDir() + "/table_layout_test/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// (dotted name, id) of every leaf and group, depth first.
void Collect(const std::vector<table::NestedField>& fields, const std::string& prefix,
             std::vector<std::pair<std::string, std::int32_t>>* out) {
  for (const auto& f : fields) {
    out->emplace_back(prefix + f.name, f.id);
    if (f.type->id() == TypeId::kStruct) Collect(f.type->fields(), prefix + f.name + ".", out);
  }
}

TEST(PartitionSchemeTest, ParsesEveryKindAndPrintsItBack) {
  for (const char* text : {"quadkey:1", "quadkey:23", "s2:0", "s2:30", "none"}) {
    ASSERT_OK_AND_ASSIGN(PartitionScheme scheme, ParsePartitionScheme(text));
    EXPECT_EQ(scheme.ToString(), text);
  }
  ASSERT_OK_AND_ASSIGN(PartitionScheme q, ParsePartitionScheme("quadkey:7"));
  EXPECT_EQ(q.kind, PartitionKind::kQuadkey);
  EXPECT_EQ(q.level, 7);
}

TEST(PartitionSchemeTest, RejectsUnknownSchemesAndLevelsOutOfRange) {
  for (const char* text :
       {"quadkey:0", "quadkey:24", "s2:31", "s2:-1", "h3:5", "quadkey", "quadkey:x", "", "None"}) {
    EXPECT_THAT(ParsePartitionScheme(text), IsError(ErrorCode::kInvalidArgument)) << text;
  }
}

TEST(PartitionForInputSizeTest, LargestZoomWhoseCellsEachFillATargetFile) {
  const PartitionScheme none{PartitionKind::kNone, 0};
  const auto quadkey = [](int zoom) { return PartitionScheme{PartitionKind::kQuadkey, zoom}; };
  for (const std::int64_t target : {kDefaultTargetFileSizeBytes, std::int64_t{100}}) {
    SCOPED_TRACE(target);
    EXPECT_EQ(PartitionForInputSize(0, target).scheme, none);
    EXPECT_EQ(PartitionForInputSize(target, target).scheme, none);
    // quadkey:Z from exactly 4^Z targets up to one byte below 4^(Z+1) targets.
    for (int zoom = 1; zoom <= 4; ++zoom) {
      const std::int64_t at = target << (2 * zoom);
      EXPECT_EQ(PartitionForInputSize(at - 1, target).scheme, zoom == 1 ? none : quadkey(zoom - 1))
          << zoom;
      EXPECT_EQ(PartitionForInputSize(at, target).scheme, quadkey(zoom)) << zoom;
      EXPECT_EQ(PartitionForInputSize(at + 1, target).scheme, quadkey(zoom)) << zoom;
    }
    // Never finer than quadkey:4, however large the input.
    EXPECT_EQ(PartitionForInputSize(target << 12, target).scheme, quadkey(4));
    EXPECT_EQ(PartitionForInputSize(std::numeric_limits<std::int64_t>::max(), target).scheme,
              quadkey(4));
  }
  // The default target: none below 512 MiB, quadkey:4 from 32 GiB.
  EXPECT_EQ(
      PartitionForInputSize((std::int64_t{512} << 20) - 1, kDefaultTargetFileSizeBytes).scheme,
      none);
  EXPECT_EQ(PartitionForInputSize(std::int64_t{32} << 30, kDefaultTargetFileSizeBytes).scheme,
            quadkey(4));
}

TEST(PartitionForInputSizeTest, OddArgumentsAndTheReasonText) {
  // A target near INT64_MAX must not overflow into a finer partition.
  EXPECT_EQ(PartitionForInputSize(std::numeric_limits<std::int64_t>::max(),
                                  std::numeric_limits<std::int64_t>::max() / 2)
                .scheme,
            (PartitionScheme{PartitionKind::kNone, 0}));
  // A target below 1 counts as 1 byte; negative input as 0.
  EXPECT_EQ(PartitionForInputSize(4, 0).scheme, (PartitionScheme{PartitionKind::kQuadkey, 1}));
  EXPECT_EQ(PartitionForInputSize(-5, 1).scheme, (PartitionScheme{PartitionKind::kNone, 0}));

  EXPECT_EQ(PartitionForInputSize(std::int64_t{11} << 20, kDefaultTargetFileSizeBytes).reason,
            "input 11.0 MiB < 512 MiB = 4 cells of quadkey:1 x 128 MiB target file size");
  EXPECT_EQ(PartitionForInputSize(std::int64_t{3} << 30, kDefaultTargetFileSizeBytes).reason,
            "input 3.0 GiB >= 2.0 GiB = 16 cells of quadkey:2 x 128 MiB target file size; "
            "quadkey:3 needs 8.0 GiB");
  EXPECT_EQ(PartitionForInputSize(std::int64_t{40} << 30, kDefaultTargetFileSizeBytes).reason,
            "input 40.0 GiB >= 32.0 GiB = 256 cells of quadkey:4 x 128 MiB target file size; 4 "
            "is the largest zoom chosen by size");
}

TEST(LayoutSchemaTest, ColumnsInLayoutOrderWithFreshIds) {
  ASSERT_OK_AND_ASSIGN(table::SchemaPtr schema, LayoutSchema(kFields, PartitionScheme{}));
  std::vector<std::pair<std::string, std::int32_t>> got;
  Collect(schema->fields(), "", &got);
  using P = std::pair<std::string, std::int32_t>;
  EXPECT_THAT(got, ElementsAre(P{"name", 1}, P{"pop", 2}, P{"area", 3}, P{"ok", 4}, P{"day", 5},
                               P{"at", 6}, P{"blob", 7}, P{"geometry", 8}, P{"bbox", 9},
                               P{"bbox.xmin", 12}, P{"bbox.ymin", 13}, P{"bbox.xmax", 14},
                               P{"bbox.ymax", 15}, P{"geo_cell", 10}, P{"geo_hilbert", 11}));
  const auto type_of = [&](const char* name) { return schema->FindField(name)->type->id(); };
  EXPECT_EQ(type_of("name"), TypeId::kString);
  EXPECT_EQ(type_of("pop"), TypeId::kLong);
  EXPECT_EQ(type_of("area"), TypeId::kDouble);
  EXPECT_EQ(type_of("ok"), TypeId::kBoolean);
  EXPECT_EQ(type_of("day"), TypeId::kDate);
  EXPECT_EQ(type_of("at"), TypeId::kTimestampTz);
  EXPECT_EQ(type_of("blob"), TypeId::kBinary);
  EXPECT_EQ(type_of("geometry"), TypeId::kBinary);
  EXPECT_EQ(type_of("bbox"), TypeId::kStruct);
  EXPECT_EQ(type_of("bbox.ymax"), TypeId::kDouble);
  EXPECT_EQ(type_of("geo_cell"), TypeId::kString);
  EXPECT_EQ(type_of("geo_hilbert"), TypeId::kLong);
  EXPECT_FALSE(schema->FindField("bbox")->required);
  EXPECT_TRUE(schema->FindField("bbox.xmin")->required);
  EXPECT_FALSE(schema->FindField("name")->required);
  EXPECT_EQ(schema->HighestFieldId(), 15);
}

// A file that convert writes for the same fields must pass the append check of a table created
// with --partition none: same names, same ids, same types.
TEST(LayoutSchemaTest, UnpartitionedSchemaMatchesConvertedFiles) {
  ASSERT_OK_AND_ASSIGN(table::SchemaPtr schema,
                       LayoutSchema(kFields, PartitionScheme{PartitionKind::kNone, 0}));
  EXPECT_EQ(schema->FindField("geo_cell"), nullptr);
  ASSERT_OK_AND_ASSIGN(parquet::Schema file,
                       geoparquet::GeoParquetSchema(kFields, /*hilbert_column=*/true));
  for (const parquet::LeafColumn& leaf : file.leaves()) {
    const table::NestedField* f = schema->FindField(leaf.dotted_path());
    ASSERT_NE(f, nullptr) << leaf.dotted_path();
    EXPECT_EQ(f->id, leaf.field_id.value_or(-1)) << leaf.dotted_path();
  }
  EXPECT_OK(CheckDataFileSchema(file, *schema, "f.parquet"));
  // Without geo_hilbert (convert --sort none) the bbox children are numbered one lower, so
  // the ids no longer match the table's and the file is refused.
  ASSERT_OK_AND_ASSIGN(parquet::Schema unsorted, geoparquet::GeoParquetSchema(kFields, false));
  EXPECT_THAT(
      CheckDataFileSchema(unsorted, *schema, "f.parquet"),
      IsErrorWith(ErrorCode::kInvalidArgument,
                  "column 'bbox.xmin' has field id 10, which the table gives to 'geo_hilbert'"));
}

// The files geolake writes carry geo_cell (text) and geo_hilbert (int64); read back as a
// source, they give the table the source's attributes with layout columns of its own, in the
// same places and with the same ids as for the source without them.
TEST(LayoutSchemaTest, LayoutColumnsASourceCarriesAreRecomputedNotRefused) {
  std::vector<geoparquet::FieldDef> carried = {{"geo_cell", FieldType::kString}};
  carried.insert(carried.end(), kFields.begin(), kFields.end());
  carried.push_back({"geo_hilbert", FieldType::kInt64});
  for (const PartitionScheme& partition :
       {PartitionScheme{}, PartitionScheme{PartitionKind::kNone, 0},
        PartitionScheme{PartitionKind::kS2, 9}}) {
    ASSERT_OK_AND_ASSIGN(table::SchemaPtr want, LayoutSchema(kFields, partition));
    ASSERT_OK_AND_ASSIGN(table::SchemaPtr got, LayoutSchema(carried, partition));
    EXPECT_EQ(got->ToJson(), want->ToJson()) << partition.ToString();
  }
}

TEST(LayoutSchemaTest, RejectsFieldsNamedLikeLayoutColumnsAndDuplicates) {
  // A user's columns under layout names, of types the layout would not give them.
  for (const auto& [name, type] :
       {std::pair{"geometry", FieldType::kInt64}, std::pair{"geometry", FieldType::kBinary},
        std::pair{"bbox", FieldType::kString}, std::pair{"geo_cell", FieldType::kInt64},
        std::pair{"geo_hilbert", FieldType::kString},
        std::pair{"geo_hilbert", FieldType::kDouble}}) {
    EXPECT_THAT(
        LayoutSchema({{"a", FieldType::kString}, {name, type}}, {}),
        IsErrorWith(ErrorCode::kInvalidArgument, "source field '" + std::string(name) + "' (" +
                                                     std::string(geoparquet::FieldTypeName(type)) +
                                                     ") has the name of a column geolake adds"));
  }
  EXPECT_THAT(LayoutSchema({{"a", FieldType::kString}, {"a", FieldType::kInt64}}, {}),
              IsErrorWith(ErrorCode::kInvalidArgument, "twice"));
  EXPECT_THAT(LayoutSchema({{"", FieldType::kString}}, {}), IsError(ErrorCode::kInvalidArgument));
}

TEST(LayoutSpecTest, IdentityOnGeoCellAndHilbertSortOrder) {
  ASSERT_OK_AND_ASSIGN(table::SchemaPtr schema, LayoutSchema(kFields, PartitionScheme{}));
  ASSERT_OK_AND_ASSIGN(table::PartitionSpecPtr spec, LayoutPartitionSpec(*schema, {}));
  ASSERT_EQ(spec->fields().size(), 1u);
  EXPECT_EQ(spec->fields()[0].name, "geo_cell");
  EXPECT_EQ(spec->fields()[0].source_id, 10);
  EXPECT_EQ(spec->fields()[0].field_id, 1000);
  EXPECT_EQ(spec->fields()[0].transform.kind(), table::TransformKind::kIdentity);
  EXPECT_OK(spec->Validate(*schema));

  ASSERT_OK_AND_ASSIGN(table::SortOrderPtr order, LayoutSortOrder(*schema));
  EXPECT_EQ(order->order_id(), 1);
  ASSERT_EQ(order->fields().size(), 1u);
  EXPECT_EQ(order->fields()[0].source_id, 11);
  EXPECT_EQ(order->fields()[0].direction, table::SortDirection::kAscending);
  EXPECT_EQ(order->fields()[0].null_order, table::NullOrder::kNullsLast);
  EXPECT_OK(order->Validate(*schema));

  ASSERT_OK_AND_ASSIGN(table::SchemaPtr none,
                       LayoutSchema(kFields, PartitionScheme{PartitionKind::kNone, 0}));
  ASSERT_OK_AND_ASSIGN(table::PartitionSpecPtr unpartitioned,
                       LayoutPartitionSpec(*none, PartitionScheme{PartitionKind::kNone, 0}));
  EXPECT_TRUE(unpartitioned->is_unpartitioned());
  // A schema without geo_cell cannot be partitioned by it.
  EXPECT_THAT(LayoutPartitionSpec(*none, PartitionScheme{}),
              IsErrorWith(ErrorCode::kInvalidArgument, "geo_cell"));
  table::Schema bare(0, {table::NestedField::Optional(1, "x", table::Type::Long())});
  EXPECT_THAT(LayoutSortOrder(bare), IsErrorWith(ErrorCode::kInvalidArgument, "geo_hilbert"));
}

TEST(LayoutPropertiesTest, DefaultsForLonLatAndAreaOfUseForProjectedCrs) {
  ASSERT_OK_AND_ASSIGN(auto props, LayoutProperties({}));
  EXPECT_EQ(props.at("geolake.crs"), "EPSG:4326");
  EXPECT_EQ(props.at("geolake.partition"), "quadkey:4");
  EXPECT_EQ(props.at("geolake.hilbert.extent"), "-180,-90,180,90");
  EXPECT_EQ(props.at("geolake.hilbert.order"), "16");
  EXPECT_EQ(props.at("write.parquet.compression-codec"), "zstd");

  // EPSG:3857's area of use is lon -180..180, lat -85.06..85.06: x spans the full Web
  // Mercator width, y about the same.
  ASSERT_OK_AND_ASSIGN(geo::Envelope merc, DefaultHilbertExtent("EPSG:3857"));
  EXPECT_NEAR(merc.xmin, -20037508.34, 1.0);
  EXPECT_NEAR(merc.xmax, 20037508.34, 1.0);
  EXPECT_NEAR(merc.ymax, 20048966.1, 100.0);
  // UTM 33N: easting around 166000..834000 for lon 12..18 at the equator.
  ASSERT_OK_AND_ASSIGN(geo::Envelope utm, DefaultHilbertExtent("EPSG:32633"));
  EXPECT_GT(utm.xmin, 100000.0);
  EXPECT_LT(utm.xmax, 900000.0);
  EXPECT_NEAR(utm.ymin, 0.0, 1.0);

  LayoutOptions explicit_extent;
  explicit_extent.crs = "EPSG:3857";
  explicit_extent.hilbert_extent = geo::Envelope{0, 0, 1000, 500.5};
  explicit_extent.hilbert_order = 20;
  explicit_extent.partition = PartitionScheme{PartitionKind::kS2, 6};
  ASSERT_OK_AND_ASSIGN(auto props2, LayoutProperties(explicit_extent));
  EXPECT_EQ(props2.at("geolake.hilbert.extent"), "0,0,1000,500.5");
  EXPECT_EQ(props2.at("geolake.hilbert.order"), "20");
  EXPECT_EQ(props2.at("geolake.partition"), "s2:6");
}

TEST(LayoutPropertiesTest, RejectsUnknownCrsAndBadOrder) {
  LayoutOptions bad_crs;
  bad_crs.crs = "EPSG:999999";
  EXPECT_THAT(LayoutProperties(bad_crs), IsError(ErrorCode::kInvalidArgument));
  LayoutOptions bad_order;
  bad_order.hilbert_order = 32;
  EXPECT_THAT(LayoutProperties(bad_order), IsErrorWith(ErrorCode::kInvalidArgument, "order"));
}

// docs/table-layout.md "Format version 3": the CRS goes into the geometry type (Iceberg spec
// "CRS": OGC:CRS84 by default, `srid:<SRID>` or `projjson:<table property>`).
TEST(GeometryColumnTypeTest, BinaryBeforeV3AndGeometryWithTheTableCrsFromV3) {
  ASSERT_OK_AND_ASSIGN(table::TypePtr v2, GeometryColumnType(2, "EPSG:4326"));
  EXPECT_EQ(v2->ToString(), "binary");
  ASSERT_OK_AND_ASSIGN(table::TypePtr crs84, GeometryColumnType(3, "OGC:CRS84"));
  EXPECT_EQ(crs84->ToString(), "geometry");
  ASSERT_OK_AND_ASSIGN(table::TypePtr wgs84, GeometryColumnType(3, "EPSG:4326"));
  EXPECT_EQ(wgs84->ToString(), "geometry(srid:4326)");
  ASSERT_OK_AND_ASSIGN(table::TypePtr merc, GeometryColumnType(3, "EPSG:3857"));
  EXPECT_EQ(merc->ToString(), "geometry(srid:3857)");
  // A CRS PROJ cannot name: its PROJJSON goes into a table property the type points to.
  const std::string custom = "+proj=laea +lat_0=40 +lon_0=-97 +ellps=WGS84 +units=m +type=crs";
  ASSERT_OK_AND_ASSIGN(table::TypePtr laea, GeometryColumnType(3, custom));
  EXPECT_EQ(laea->ToString(), "geometry(projjson:geolake.crs.projjson)");
  EXPECT_THAT(GeometryColumnType(3, "EPSG:999999"), IsError(ErrorCode::kInvalidArgument));

  LayoutOptions options;
  options.crs = custom;
  options.hilbert_extent = geo::Envelope{-1e6, -1e6, 1e6, 1e6};
  options.format_version = 3;
  ASSERT_OK_AND_ASSIGN(auto props, LayoutProperties(options));
  ASSERT_TRUE(props.contains("geolake.crs.projjson"));
  EXPECT_NE(props.at("geolake.crs.projjson").find("Lambert Azimuthal Equal Area"),
            std::string::npos);
  options.format_version = 2;
  ASSERT_OK_AND_ASSIGN(props, LayoutProperties(options));
  EXPECT_FALSE(props.contains("geolake.crs.projjson"));

  // The Parquet GEOMETRY crs of the data files mirrors the type.
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> none, ParquetCrsOf(*crs84, {}));
  EXPECT_FALSE(none.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> srid, ParquetCrsOf(*wgs84, {}));
  EXPECT_EQ(srid, "srid:4326");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> inline_projjson,
                       ParquetCrsOf(*laea, {{"geolake.crs.projjson", "{\"type\":\"x\"}"}}));
  EXPECT_EQ(inline_projjson, "{\"type\":\"x\"}");
  EXPECT_THAT(ParquetCrsOf(*laea, {}), IsErrorWith(ErrorCode::kInvalidArgument, "property"));
}

TEST(LayoutNewTableTest, FormatVersion3TablesHaveAGeometryColumnAndKeepTheBbox) {
  LayoutOptions options;
  options.format_version = 3;
  ASSERT_OK_AND_ASSIGN(table::NewTableOptions v3, LayoutNewTable(kFields, options));
  EXPECT_EQ(v3.format_version, 3);
  EXPECT_EQ(v3.schema->FindField("geometry")->type->ToString(), "geometry(srid:4326)");
  // Same ids as v2, and the bbox struct stays (v2-era readers prune on it).
  ASSERT_OK_AND_ASSIGN(table::NewTableOptions v2, LayoutNewTable(kFields, LayoutOptions{}));
  EXPECT_EQ(v2.format_version, 2);
  EXPECT_EQ(v2.schema->FindField("geometry")->type->ToString(), "binary");
  EXPECT_EQ(v3.schema->FindField("geometry")->id, v2.schema->FindField("geometry")->id);
  EXPECT_EQ(v3.schema->FindField("bbox.xmin")->id, v2.schema->FindField("bbox.xmin")->id);
  // ReadTableLayout reads it back.
  table::TableMetadata md;
  md.format_version = 3;
  md.schemas = {v3.schema};
  md.current_schema_id = v3.schema->schema_id();
  md.partition_specs = {v3.spec};
  md.default_spec_id = v3.spec->spec_id();
  md.properties = v3.properties;
  ASSERT_OK_AND_ASSIGN(TableLayout layout, ReadTableLayout(md));
  EXPECT_EQ(layout.geometry.field_id, v3.schema->FindField("geometry")->id);
}

TEST(ExtentTest, ParsesAndFormatsRoundTrip) {
  ASSERT_OK_AND_ASSIGN(geo::Envelope e, ParseExtent("-180,-90.5,180,1e7"));
  EXPECT_EQ(e, (geo::Envelope{-180, -90.5, 180, 1e7}));
  EXPECT_EQ(FormatExtent(e), "-180,-90.5,180,1e+07");
  for (const char* bad : {"", "1,2,3", "1,2,3,4,5", "a,0,1,1", "1,0,0,1", "0,1,1,1", "0,0,inf,1"}) {
    EXPECT_THAT(ParseExtent(bad), IsError(ErrorCode::kInvalidArgument)) << bad;
  }
}

TEST(TableLayoutTest, RoundTripThroughACreatedTable) {
  const std::string dir = TestDir("round_trip");
  auto io = io::MakeLocalFileIO();
  auto catalog = table::MakeInMemoryCatalog();
  ASSERT_OK_AND_ASSIGN(auto id, table::TableIdentifier::Parse("geo.places"));
  ASSERT_OK(table::EnsureNamespace(*catalog, id.ns));
  LayoutOptions options;
  options.partition = PartitionScheme{PartitionKind::kS2, 5};
  options.hilbert_order = 12;
  ASSERT_OK_AND_ASSIGN(table::NewTableOptions create, LayoutNewTable(kFields, options));
  create.location = dir + "/places";
  ASSERT_OK(table::CreateTable(*catalog, *io, id, create).status());
  ASSERT_OK_AND_ASSIGN(table::Table loaded, table::LoadTable(*catalog, *io, id));

  ASSERT_OK_AND_ASSIGN(TableLayout layout, ReadTableLayout(loaded.metadata));
  EXPECT_EQ(layout.crs, "EPSG:4326");
  EXPECT_EQ(layout.partition, (PartitionScheme{PartitionKind::kS2, 5}));
  EXPECT_EQ(layout.hilbert_extent, (geo::Envelope{-180, -90, 180, 90}));
  EXPECT_EQ(layout.hilbert_order, 12);
  EXPECT_EQ(layout.attribute_count, 7);
  EXPECT_EQ(layout.geometry.field_id, 8);
  EXPECT_EQ(layout.geometry.position, 7);
  EXPECT_EQ(layout.bbox.field_id, 9);
  EXPECT_EQ(layout.bbox.position, 8);
  EXPECT_EQ(layout.bbox_xmin_id, 12);
  EXPECT_EQ(layout.bbox_ymax_id, 15);
  EXPECT_EQ(layout.cell.field_id, 10);
  EXPECT_EQ(layout.cell.position, 9);
  EXPECT_EQ(layout.hilbert.field_id, 11);
  EXPECT_EQ(layout.hilbert.position, 10);
  EXPECT_EQ(loaded.metadata.default_sort_order()->fields().at(0).source_id, 11);
  EXPECT_EQ(loaded.metadata.default_spec()->fields().at(0).source_id, 10);
}

TEST(TableLayoutTest, ClearErrorsForTablesWithoutTheLayout) {
  ASSERT_OK_AND_ASSIGN(table::NewTableOptions create, LayoutNewTable(kFields, {}));
  create.location = "/nowhere/t";
  ASSERT_OK_AND_ASSIGN(table::TableMetadata good, table::NewTableMetadata(create));
  ASSERT_OK(ReadTableLayout(good).status());

  table::TableMetadata no_crs = good;
  no_crs.properties.erase("geolake.crs");
  EXPECT_THAT(ReadTableLayout(no_crs), IsErrorWith(ErrorCode::kInvalidArgument, "geolake.crs"));

  table::TableMetadata bad_extent = good;
  bad_extent.properties["geolake.hilbert.extent"] = "1,2,3";
  EXPECT_THAT(ReadTableLayout(bad_extent), IsError(ErrorCode::kInvalidArgument));

  table::TableMetadata bad_order = good;
  bad_order.properties["geolake.hilbert.order"] = "40";
  EXPECT_THAT(ReadTableLayout(bad_order),
              IsErrorWith(ErrorCode::kInvalidArgument, "geolake.hilbert.order"));

  // The property says unpartitioned while the spec partitions by geo_cell.
  table::TableMetadata disagree = good;
  disagree.properties["geolake.partition"] = "none";
  EXPECT_THAT(ReadTableLayout(disagree), IsErrorWith(ErrorCode::kInvalidArgument, "partitioned"));

  // A plain Iceberg table: properties fine, but no geometry column.
  table::NewTableOptions plain = create;
  plain.schema = std::make_shared<const table::Schema>(
      0, std::vector{table::NestedField::Optional(1, "id", table::Type::Long())});
  plain.spec = nullptr;
  plain.sort_order = nullptr;
  plain.properties["geolake.partition"] = "none";
  ASSERT_OK_AND_ASSIGN(table::TableMetadata plain_md, table::NewTableMetadata(plain));
  EXPECT_THAT(ReadTableLayout(plain_md), IsErrorWith(ErrorCode::kInvalidArgument, "geometry"));
}

parquet::Field StringLeaf(const std::string& name, std::optional<std::int32_t> id) {
  return parquet::Field::Leaf(name, parquet::PhysicalType::kByteArray,
                              parquet::Repetition::kOptional, id, parquet::LogicalType::String());
}

TEST(CheckDataFileSchemaTest, RefusesMissingIdsWrongIdsNamesAndTypes) {
  const table::Schema schema(
      0,
      {table::NestedField::Required(1, "id", table::Type::Long()),
       table::NestedField::Optional(2, "name", table::Type::String()),
       table::NestedField::Optional(
           3, "bbox",
           table::Type::Struct({table::NestedField::Required(4, "xmin", table::Type::Double()),
                                table::NestedField::Required(5, "ymin", table::Type::Double())}))});
  const auto id_leaf = [](std::optional<std::int32_t> id, parquet::Repetition rep) {
    return parquet::Field::Leaf("id", parquet::PhysicalType::kInt64, rep, id);
  };
  const auto bbox = [](std::int32_t ymin_id) {
    return parquet::Field::Group("bbox", parquet::Repetition::kOptional, 3,
                                 {parquet::Field::Leaf("xmin", parquet::PhysicalType::kDouble,
                                                       parquet::Repetition::kRequired, 4),
                                  parquet::Field::Leaf("ymin", parquet::PhysicalType::kDouble,
                                                       parquet::Repetition::kRequired, ymin_id)});
  };
  const auto check = [&](std::vector<parquet::Field> fields) {
    Result<parquet::Schema> file = parquet::Schema::Make(std::move(fields));
    EXPECT_OK(file.status());
    return CheckDataFileSchema(*file, schema, "a.parquet");
  };
  const auto required = parquet::Repetition::kRequired;
  EXPECT_OK(check({id_leaf(1, required), StringLeaf("name", 2), bbox(5)}));
  // Optional columns may be absent.
  EXPECT_OK(check({id_leaf(1, required)}));
  EXPECT_THAT(check({id_leaf(std::nullopt, required)}),
              IsErrorWith(ErrorCode::kInvalidArgument, "a.parquet: column 'id' has no field id"));
  EXPECT_THAT(check({id_leaf(1, required), StringLeaf("name", 7)}),
              IsErrorWith(ErrorCode::kInvalidArgument,
                          "column 'name' has field id 7, which the table schema does not have"));
  EXPECT_THAT(check({id_leaf(1, required), StringLeaf("label", 2)}),
              IsErrorWith(ErrorCode::kInvalidArgument, "table names 'name'"));
  EXPECT_THAT(check({id_leaf(1, required), bbox(4)}),
              IsErrorWith(ErrorCode::kInvalidArgument, "column 'bbox.ymin'"));
  EXPECT_THAT(check({StringLeaf("name", 2)}),
              IsErrorWith(ErrorCode::kInvalidArgument, "required column 'id'"));
  EXPECT_THAT(check({id_leaf(1, parquet::Repetition::kOptional)}),
              IsErrorWith(ErrorCode::kInvalidArgument, "optional in the file"));
  // A string stored where the table has a long.
  EXPECT_THAT(check({parquet::Field::Leaf("id", parquet::PhysicalType::kByteArray, required, 1,
                                          parquet::LogicalType::String())}),
              IsErrorWith(ErrorCode::kInvalidArgument, "cannot hold the table's long"));
  // A leaf where the table has a struct.
  EXPECT_THAT(
      check({id_leaf(1, required), parquet::Field::Leaf("bbox", parquet::PhysicalType::kDouble,
                                                        parquet::Repetition::kOptional, 3)}),
      IsErrorWith(ErrorCode::kInvalidArgument, "struct"));
}

// A footer with one string leaf `geo_cell` (field id 10 as in LayoutSchema) whose row groups
// have these (min, max, null count, rows).
struct GroupStats {
  std::optional<std::string> min;
  std::optional<std::string> max;
  std::int64_t nulls = 0;
  std::int64_t rows = 10;
};
parquet::FileMetaData CellFooter(const std::vector<GroupStats>& groups) {
  parquet::FileMetaData md;
  for (const GroupStats& g : groups) {
    parquet::Statistics stats;
    stats.min_value = g.min;
    stats.max_value = g.max;
    stats.null_count = g.nulls;
    parquet::ColumnMetaData meta;
    meta.type = parquet::PhysicalType::kByteArray;
    meta.statistics = stats;
    parquet::ColumnChunk chunk;
    chunk.meta_data = meta;
    parquet::RowGroup rg;
    rg.num_rows = g.rows;
    rg.columns.push_back(chunk);
    md.row_groups.push_back(rg);
    md.num_rows += g.rows;
  }
  return md;
}

TEST(PartitionFromFooterTest, OneValuePerFileFromMinEqualsMax) {
  ASSERT_OK_AND_ASSIGN(table::NewTableOptions create, LayoutNewTable(kFields, {}));
  create.location = "/nowhere/t";
  ASSERT_OK_AND_ASSIGN(table::TableMetadata md, table::NewTableMetadata(create));
  ASSERT_OK_AND_ASSIGN(parquet::Schema file, parquet::Schema::Make({StringLeaf("geo_cell", 10)}));

  ASSERT_OK_AND_ASSIGN(
      auto tuple,
      PartitionFromFooter(CellFooter({{"0231", "0231"}, {"0231", "0231"}}), file, md, "f.parquet"));
  ASSERT_EQ(tuple.size(), 1u);
  EXPECT_EQ(std::get<std::string>(tuple[0]), "0231");
  // Only nulls: the null partition.
  ASSERT_OK_AND_ASSIGN(tuple, PartitionFromFooter(CellFooter({{std::nullopt, std::nullopt, 10}}),
                                                  file, md, "f.parquet"));
  ASSERT_EQ(tuple.size(), 1u);
  EXPECT_TRUE(table::IsNull(tuple[0]));

  const auto refused = [&](const std::vector<GroupStats>& groups) {
    return PartitionFromFooter(CellFooter(groups), file, md, "f.parquet");
  };
  EXPECT_THAT(refused({{"0231", "0232"}}),
              IsErrorWith(ErrorCode::kInvalidArgument, "f.parquet: the table is partitioned by"));
  EXPECT_THAT(refused({{"0231", "0231"}, {"0232", "0232"}}),
              IsErrorWith(ErrorCode::kInvalidArgument, "different values"));
  EXPECT_THAT(refused({{"0231", "0231", 2}}), IsErrorWith(ErrorCode::kInvalidArgument, "null"));
  EXPECT_THAT(refused({{"0231", "0231"}, {std::nullopt, std::nullopt, 10}}),
              IsErrorWith(ErrorCode::kInvalidArgument, "null"));
  EXPECT_THAT(refused({{std::nullopt, std::nullopt, 0}}),
              IsErrorWith(ErrorCode::kInvalidArgument, "different values"));

  // The column is found by field id, not by name.
  ASSERT_OK_AND_ASSIGN(parquet::Schema other, parquet::Schema::Make({StringLeaf("geo_cell", 99)}));
  EXPECT_THAT(PartitionFromFooter(CellFooter({{"0231", "0231"}}), other, md, "f.parquet"),
              IsErrorWith(ErrorCode::kInvalidArgument, "which the file lacks"));

  // Unpartitioned tables need nothing from the file.
  LayoutOptions unpartitioned;
  unpartitioned.partition = PartitionScheme{PartitionKind::kNone, 0};
  ASSERT_OK_AND_ASSIGN(table::NewTableOptions none, LayoutNewTable(kFields, unpartitioned));
  none.location = "/nowhere/u";
  ASSERT_OK_AND_ASSIGN(table::TableMetadata none_md, table::NewTableMetadata(none));
  ASSERT_OK_AND_ASSIGN(tuple, PartitionFromFooter(CellFooter({{"a", "b"}}), file, none_md, "f"));
  EXPECT_TRUE(tuple.empty());
}

// ---- VerifyDataFileContents ------------------------------------------------------------------

// An OutputStream into memory.
class MemoryStream : public io::OutputStream {
 public:
  Status Write(std::span<const std::uint8_t> data) override {
    bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
    return Status::OK();
  }
  using io::OutputStream::Write;
  std::uint64_t Tell() const override { return bytes.size(); }
  Status Close() override { return Status::OK(); }
  void Abort() override {}
  std::string bytes;
};

// A file of `rows` rows (id int64, geometry WKB points) in row groups of 1000; `wkb_of(row)`
// gives each geometry.
std::string PointsFile(std::int64_t rows, const std::function<std::string(std::int64_t)>& wkb_of) {
  using parquet::Field;
  using parquet::PhysicalType;
  using parquet::Repetition;
  auto schema = parquet::Schema::Make(
      {Field::Leaf("id", PhysicalType::kInt64, Repetition::kRequired, 1),
       Field::Leaf("geometry", PhysicalType::kByteArray, Repetition::kOptional, 2)});
  EXPECT_OK(schema);
  parquet::Batch batch = parquet::Batch::ForSchema(*schema);
  batch.num_rows = rows;
  for (std::int64_t r = 0; r < rows; ++r) {
    batch.columns[0].AppendInt64(r);
    batch.columns[1].AppendBytes(wkb_of(r));
  }
  MemoryStream out;
  parquet::WriterOptions options;
  options.row_group_rows = 1000;
  auto writer = parquet::FileWriter::Open(&out, *schema, options);
  EXPECT_OK(writer);
  EXPECT_OK((*writer)->WriteBatch(batch));
  EXPECT_OK((*writer)->Close().status());
  return out.bytes;
}

std::string PointWkb(double x, double y) {
  std::string wkb("\x01\x01\x00\x00\x00", 5);
  wkb.append(reinterpret_cast<const char*>(&x), 8);
  wkb.append(reinterpret_cast<const char*>(&y), 8);
  return wkb;
}

// The same file with its footer changed by `edit`.
std::string EditFooter(const std::string& file,
                       const std::function<void(parquet::FileMetaData*)>& edit) {
  std::uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  const std::size_t footer_begin = file.size() - 8 - len;
  parquet::FileMetaData md;
  EXPECT_OK(parquet::DeserializeThrift(std::string_view(file).substr(footer_begin, len), &md));
  edit(&md);
  const std::string footer = parquet::SerializeThrift(md);
  std::string out = file.substr(0, footer_begin) + footer;
  const auto new_len = static_cast<std::uint32_t>(footer.size());
  out.append(reinterpret_cast<const char*>(&new_len), 4);
  return out + "PAR1";
}

class MemoryFile : public io::RandomAccessFile {
 public:
  explicit MemoryFile(std::string data) : data_(std::move(data)) {}
  std::uint64_t size() const override { return data_.size(); }
  Status ReadAt(std::uint64_t offset, std::uint64_t length, std::string* out) const override {
    if (offset > data_.size() || length > data_.size() - offset) {
      return Status::CorruptData("read past the end");
    }
    out->assign(data_, offset, length);
    return Status::OK();
  }
  const std::string& path() const override { return path_; }

 private:
  std::string data_;
  std::string path_ = "f.parquet";
};

Status Verify(const std::string& bytes) {
  MemoryFile file(bytes);
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(&file));
  return VerifyDataFileContents(*reader, "geometry", "f.parquet");
}

// Issue 17 item 5: what append commits is decoded and checked, not taken from the footer.
TEST(VerifyDataFileContentsTest, RefusesWhatTheFooterGetsWrongAndWhatDoesNotDecode) {
  const auto points = [](std::int64_t r) { return PointWkb(r * 0.01, 45.0); };
  const std::string good = PointsFile(3231, points);
  EXPECT_OK(Verify(good));

  // A footer that understates a row group's rows (the query returned 3,000 of 3,231).
  EXPECT_THAT(Verify(EditFooter(good,
                                [](parquet::FileMetaData* md) {
                                  md->row_groups[3].num_rows = 0;
                                  md->num_rows -= 231;
                                })),
              IsErrorWith(ErrorCode::kCorruptData, "row group 3 declares 0 rows"));
  // ... that overstates them (the query allocated without bound).
  EXPECT_THAT(Verify(EditFooter(good,
                                [](parquet::FileMetaData* md) {
                                  md->row_groups[0].num_rows = std::int64_t{1} << 40;
                                  md->num_rows = std::int64_t{1} << 41;
                                })),
              IsErrorWith(ErrorCode::kCorruptData, "row group 0 declares 1099511627776 rows"));
  // ... whose file total disagrees with its row groups, or is negative.
  EXPECT_THAT(Verify(EditFooter(good, [](parquet::FileMetaData* md) { md->num_rows = 3000; })),
              IsErrorWith(ErrorCode::kCorruptData, "the row groups hold 3231 rows"));
  EXPECT_THAT(Verify(EditFooter(good, [](parquet::FileMetaData* md) { md->num_rows = -1; })),
              IsErrorWith(ErrorCode::kCorruptData, "negative num_rows"));
  // Row groups declaring 2^62 rows each: the sum would overflow.
  EXPECT_THAT(Verify(EditFooter(good,
                                [](parquet::FileMetaData* md) {
                                  for (auto& rg : md->row_groups)
                                    rg.num_rows = std::int64_t{1} << 62;
                                })),
              IsError(ErrorCode::kCorruptData));

  // A malformed WKB value, and a non-finite coordinate.
  EXPECT_THAT(
      Verify(PointsFile(2000,
                        [&](std::int64_t r) {
                          return r == 1500 ? std::string("\x01\x09\x00\x00\x00", 5) : points(r);
                        })),
      IsErrorWith(ErrorCode::kCorruptData, "row group 1 column 'geometry': geometry value 500"));
  EXPECT_THAT(Verify(PointsFile(10,
                                [&](std::int64_t r) {
                                  return r == 7
                                             ? PointWkb(std::numeric_limits<double>::infinity(), 0)
                                             : points(r);
                                })),
              IsErrorWith(ErrorCode::kCorruptData, "non-finite"));

  // A changed byte in a data page: the page CRC catches it.
  std::string flipped = good;
  flipped[200] ^= 0x04;
  EXPECT_THAT(Verify(flipped), IsError(ErrorCode::kCorruptData));
}

// Issue 17 item 8: a STRING value that is not UTF-8 (another writer's Latin-1 text) makes
// DuckDB and arrow-rs refuse the whole file, so append refuses the file; the same bytes in a
// BINARY column are fine.
TEST(VerifyDataFileContentsTest, RefusesAStringValueThatIsNotUtf8) {
  using parquet::Field;
  using parquet::PhysicalType;
  using parquet::Repetition;
  const auto file = [](bool as_string) {
    Field name = Field::Leaf("name", PhysicalType::kByteArray, Repetition::kOptional, 1);
    if (as_string) name.logical_type = parquet::LogicalType::String();
    auto schema = parquet::Schema::Make(
        {name, Field::Leaf("geometry", PhysicalType::kByteArray, Repetition::kOptional, 2)});
    EXPECT_OK(schema);
    parquet::Batch batch = parquet::Batch::ForSchema(*schema);
    batch.num_rows = 3;
    for (const std::string& value :
         {std::string("Bern"), std::string("Z\xfcrich"), std::string("Gen\xc3\xa8ve")}) {
      batch.columns[0].AppendBytes(value);
      batch.columns[1].AppendBytes(PointWkb(7, 46));
    }
    MemoryStream out;
    auto writer = parquet::FileWriter::Open(&out, *schema, parquet::WriterOptions{});
    EXPECT_OK(writer);
    EXPECT_OK((*writer)->WriteBatch(batch));
    EXPECT_OK((*writer)->Close().status());
    return out.bytes;
  };
  EXPECT_THAT(Verify(file(/*as_string=*/true)),
              IsErrorWith(ErrorCode::kCorruptData,
                          "column 'name': value 1 of a STRING column is not valid UTF-8"));
  EXPECT_OK(Verify(file(/*as_string=*/false)));
}

}  // namespace
}  // namespace geolake::layout
