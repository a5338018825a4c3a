#include "geolake/formats/parquet/file_writer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "geolake/core/thread_pool.h"
#include "geolake/formats/parquet/compression.h"
#include "geolake/formats/parquet/encoding.h"
#include "geolake/formats/parquet/file_writer_test_util.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/formats/parquet/statistics.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet::file_writer_testing {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
TEST(FileWriterTest, FooterDescribesRowGroupsPagesAndStatistics) {
  const Schema schema = AllTypesSchema();
  WriterOptions options;
  options.row_group_rows = 1000;
  options.column.max_rows_per_page = 300;
  options.key_value_metadata.push_back({"k", std::string("v")});
  FileMetaData written;
  const std::string file = WriteFile(
      schema, options, {AllTypesBatch(schema, 1500), AllTypesBatch(schema, 1000, 1500)}, &written);
  const FileMetaData md = ReadFooter(file);
  EXPECT_EQ(md, written);
  EXPECT_EQ(md.num_rows, 2500);
  ASSERT_EQ(md.row_groups.size(), 3u);
  EXPECT_EQ(md.row_groups[0].num_rows, 1000);
  EXPECT_EQ(md.row_groups[2].num_rows, 500);
  EXPECT_EQ(md.created_by, "geolake version 0.1.0 (build dev)");
  EXPECT_EQ(md.column_orders.size(), 26u);
  ASSERT_EQ(md.key_value_metadata.size(), 1u);

  // i64_req in row group 0: values k*1000003 - 5e9 for k in [0, 1000).
  const ColumnChunk& cc = md.row_groups[0].columns[2];
  ASSERT_TRUE(cc.meta_data.has_value());
  const ColumnMetaData& cmd = *cc.meta_data;
  EXPECT_EQ(cmd.path_in_schema, std::vector<std::string>{"i64_req"});
  EXPECT_EQ(cmd.num_values, 1000);
  EXPECT_EQ(cmd.codec, CompressionCodec::kZstd);
  ASSERT_TRUE(cmd.statistics.has_value());
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::memcpy(&lo, cmd.statistics->min_value->data(), 8);
  std::memcpy(&hi, cmd.statistics->max_value->data(), 8);
  EXPECT_EQ(lo, -5000000000LL);
  EXPECT_EQ(hi, 999 * 1000003LL - 5000000000LL);
  EXPECT_EQ(cmd.statistics->null_count, 0);

  // The optional string column: nulls counted, bounds exact.
  const ColumnMetaData& str = *md.row_groups[0].columns[16].meta_data;
  EXPECT_EQ(str.path_in_schema, std::vector<std::string>{"str_opt"});
  EXPECT_EQ(str.statistics->null_count, 143);  // k % 7 == 3 for k < 1000
  EXPECT_EQ(*str.statistics->min_value, "s0é");
  EXPECT_EQ(*str.statistics->max_value, "s9é");
  EXPECT_TRUE(std::count(str.encodings.begin(), str.encodings.end(), Encoding::kRleDictionary));
  ASSERT_TRUE(str.dictionary_page_offset.has_value());
  EXPECT_LT(*str.dictionary_page_offset, str.data_page_offset);

  // Struct leaves: path and nulls.
  const ColumnMetaData& xmax = *md.row_groups[0].columns[24].meta_data;
  EXPECT_EQ(xmax.path_in_schema, (std::vector<std::string>{"bbox", "xmax"}));
  EXPECT_EQ(xmax.statistics->null_count, 200);

  // Page index: 4 pages of <= 300 rows per chunk of 1000, offsets matching the file.
  ASSERT_TRUE(cc.offset_index_offset.has_value());
  OffsetIndex oi;
  ASSERT_OK(DeserializeThrift(
      std::string_view(file).substr(*cc.offset_index_offset, *cc.offset_index_length), &oi));
  ASSERT_EQ(oi.page_locations.size(), 4u);
  EXPECT_EQ(oi.page_locations[0].offset, cmd.data_page_offset);
  EXPECT_EQ(oi.page_locations[1].first_row_index, 300);
  PageHeader ph;
  ASSERT_OK(DeserializeThrift(std::string_view(file).substr(oi.page_locations[1].offset), &ph));
  EXPECT_EQ(ph.type, PageType::kDataPage);
  EXPECT_EQ(ph.data_page_header->num_values, 300);
  ColumnIndex ci;
  ASSERT_TRUE(cc.column_index_offset.has_value());
  ASSERT_OK(DeserializeThrift(
      std::string_view(file).substr(*cc.column_index_offset, *cc.column_index_length), &ci));
  EXPECT_EQ(ci.boundary_order, BoundaryOrder::kAscending);
  EXPECT_EQ(ci.null_pages, std::vector<bool>(4, false));
}

TEST(FileWriterTest, EveryTypeEncodingCodecAndNullabilityReadByIndependentReaders) {
  // One file holding the all-types columns three times (dictionary, PLAIN, DELTA_*/
  // BYTE_STREAM_SPLIT), each leaf with the next codec in turn, so every type meets every
  // encoding and every codec is used by every encoding variant. Three row groups, several
  // pages per chunk. One oracle run keeps the test fast; the full 18-file matrix runs with
  // GEOLAKE_SLOW_TESTS=1.
  const Schema base = AllTypesSchema();
  std::vector<Field> fields;
  const std::vector<std::pair<std::string, Variant>> variants = {
      {"d_", Variant::kDictionary}, {"p_", Variant::kPlain}, {"a_", Variant::kAlternative}};
  std::int32_t next_id = 1;
  std::function<void(Field&)> renumber = [&](Field& f) {
    f.field_id = next_id++;
    for (auto& c : f.children) renumber(c);
  };
  for (const auto& [prefix, unused] : variants) {
    for (Field f : base.fields()) {
      f.name = prefix + f.name;
      renumber(f);
      fields.push_back(std::move(f));
    }
  }
  ASSERT_OK_AND_ASSIGN(Schema schema, Schema::Make(std::move(fields)));
  WriterOptions options;
  options.row_group_rows = 700;
  for (int i = 0; i < schema.num_leaves(); ++i) {
    const LeafColumn& leaf = schema.leaves()[i];
    const Variant v = variants[i / base.num_leaves()].second;
    LeafColumn unprefixed = leaf;
    unprefixed.path[0] = unprefixed.path[0].substr(2);
    options.column_options[leaf.dotted_path()] =
        VariantOptions(v, unprefixed, AllCodecs()[i % AllCodecs().size()]);
  }
  const Batch one = AllTypesBatch(base, 2000);
  Batch batch;
  batch.num_rows = one.num_rows;
  for (int k = 0; k < 3; ++k) {
    batch.columns.insert(batch.columns.end(), one.columns.begin(), one.columns.end());
  }
  FileMetaData md;
  const std::string path = WriteToDisk("matrix.parquet", WriteFile(schema, options, {batch}, &md));
  // Every codec and every encoding really appears in the file.
  std::set<CompressionCodec> codecs;
  std::set<Encoding> encodings;
  for (const auto& cc : md.row_groups[0].columns) {
    codecs.insert(cc.meta_data->codec);
    encodings.insert(cc.meta_data->encodings.begin(), cc.meta_data->encodings.end());
  }
  EXPECT_EQ(codecs.size(), 6u);
  for (Encoding e :
       {Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary, Encoding::kDeltaBinaryPacked,
        Encoding::kByteStreamSplit, Encoding::kDeltaLengthByteArray, Encoding::kDeltaByteArray}) {
    EXPECT_TRUE(encodings.count(e)) << EncodingName(e);
  }

  const CommandResult r = Verify(path, "--strict-values --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;

  // Values as DuckDB decodes them, rows 1, 3 (optional columns null) and 4 (struct null).
  const CommandResult rows = Verify(path, "--rows 5");
  ASSERT_EQ(rows.exit_code, 0) << rows.output;
  for (const char* expected :
       {"\"a_i64_req\": \"-4998999997\"", "\"p_dec_req\": \"-98.765\"",
        "\"d_ts_local_opt\": \"2020-09-13 12:26:40.000001\"",
        "\"a_ts_utc_req\": \"2023-11-14 22:13:21+00\"", "\"d_str_opt\": \"s1é\"",
        "\"p_bin_req\": \"00ff31\"", "\"a_f32_opt\": -99.5", "\"d_i32_opt\": null",
        "\"a_str_opt\": null", "\"p_bbox\": null", "\"a_date_req\": \"2022-01-09\"",
        "\"d_b_req\": false"}) {
    EXPECT_NE(rows.output.find(expected), std::string::npos) << "missing " << expected;
  }
}

// ---------------------------------------------------------------------------------------------
// GeoParquet: WKB geometry column + bbox covering struct + "geo" metadata.

void AppendLE32(std::string* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void AppendLEDouble(std::string* out, double d) {
  std::uint64_t v = 0;
  std::memcpy(&v, &d, 8);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
std::string PointWkb(double x, double y) {
  std::string w(1, '\x01');
  AppendLE32(&w, 1);
  AppendLEDouble(&w, x);
  AppendLEDouble(&w, y);
  return w;
}
// An axis-aligned square as a polygon with one counterclockwise ring.
std::string SquareWkb(double x, double y, double size) {
  std::string w(1, '\x01');
  AppendLE32(&w, 3);
  AppendLE32(&w, 1);
  AppendLE32(&w, 5);
  const double xs[] = {x, x + size, x + size, x, x};
  const double ys[] = {y, y, y + size, y + size, y};
  for (int i = 0; i < 5; ++i) {
    AppendLEDouble(&w, xs[i]);
    AppendLEDouble(&w, ys[i]);
  }
  return w;
}

Schema GeoSchema() {
  auto schema = Schema::Make(
      {Field::Leaf("id", PhysicalType::kInt64, Repetition::kRequired, 1),
       Field::Leaf("geometry", PhysicalType::kByteArray, Repetition::kOptional, 2),
       Field::Group("bbox", Repetition::kOptional, 3,
                    {Field::Leaf("xmin", PhysicalType::kDouble, Repetition::kRequired, 4),
                     Field::Leaf("ymin", PhysicalType::kDouble, Repetition::kRequired, 5),
                     Field::Leaf("xmax", PhysicalType::kDouble, Repetition::kRequired, 6),
                     Field::Leaf("ymax", PhysicalType::kDouble, Repetition::kRequired, 7)})});
  EXPECT_OK(schema);
  return *schema;
}

// Points on even rows, squares on odd rows, null geometry (and bbox) every 10th row.
Batch GeoBatch(const Schema& schema, std::int64_t rows) {
  Batch b = Batch::ForSchema(schema);
  b.num_rows = rows;
  for (std::int64_t k = 0; k < rows; ++k) {
    b.columns[0].AppendInt64(k);
    const double x = -170.0 + static_cast<double>(k % 340);
    const double y = -80.0 + static_cast<double>(k % 160);
    if (k % 10 == 9) {
      for (int c = 1; c < 6; ++c) b.columns[c].AppendNull();
      continue;
    }
    const double size = (k % 2 == 1) ? 0.5 : 0.0;
    b.columns[1].AppendBytes(size > 0 ? SquareWkb(x, y, size) : PointWkb(x, y));
    b.columns[2].AppendDouble(x);
    b.columns[3].AppendDouble(y);
    b.columns[4].AppendDouble(x + size);
    b.columns[5].AppendDouble(y + size);
  }
  return b;
}

constexpr const char* kGeoJson =
    R"({"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB",)"
    R"("geometry_types":["Point","Polygon"],"bbox":[-170.0,-80.0,169.5,79.5],)"
    R"("covering":{"bbox":{"xmin":["bbox","xmin"],"ymin":["bbox","ymin"],)"
    R"("xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}})";

TEST(FileWriterTest, GeoParquetFileWithCoveringPassesGeoChecks) {
  const Schema schema = GeoSchema();
  MemoryOutputStream out;
  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema));
  ASSERT_OK(writer->WriteBatch(GeoBatch(schema, 3000)));
  writer->AddKeyValueMetadata("geo", kGeoJson);
  ASSERT_OK_AND_ASSIGN(FileMetaData md, writer->Close());
  // Without the logical type the geometry column is plain binary with binary statistics.
  const ColumnMetaData& geom = *md.row_groups[0].columns[1].meta_data;
  EXPECT_FALSE(geom.geospatial_statistics.has_value());
  EXPECT_EQ(geom.statistics->null_count, 300);

  const std::string path = WriteToDisk("geo.parquet", out.buffer());
  const CommandResult r = Verify(path, "--strict-values");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"duckdb_type\": \"GEOMETRY"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"mismatches\": 0"), std::string::npos) << r.output;
}

TEST(FileWriterTest, GeometryLogicalTypeWithGeospatialStatistics) {
  const Schema schema = GeoSchema();
  WriterOptions options;
  options.geometry_logical_type_column = "geometry";
  options.row_group_rows = 1000;
  MemoryOutputStream out;
  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema, options));
  ASSERT_OK(writer->WriteBatch(GeoBatch(schema, 1500)));
  writer->AddKeyValueMetadata("geo", kGeoJson);
  ASSERT_OK_AND_ASSIGN(FileMetaData md, writer->Close());

  ASSERT_TRUE(md.schema[2].logical_type.has_value());
  EXPECT_EQ(md.schema[2].logical_type->kind, LogicalType::Kind::kGeometry);
  const ColumnMetaData& geom = *md.row_groups[0].columns[1].meta_data;
  // No min/max for GEOMETRY (undefined order), geospatial statistics instead.
  EXPECT_FALSE(geom.statistics->min_value.has_value());
  ASSERT_TRUE(geom.geospatial_statistics.has_value());
  ASSERT_TRUE(geom.geospatial_statistics->bbox.has_value());
  const BoundingBox& box = *geom.geospatial_statistics->bbox;
  // Rows 0..999 with k % 10 != 9: x = -170 + k%340, y = -80 + k%160, squares of 0.5 on odd
  // rows. The largest k%340 present is 338 (339 is a null row), a point: xmax = 168; likewise
  // k%160 = 158 gives ymax = 78.
  EXPECT_EQ(box.xmin, -170.0);
  EXPECT_EQ(box.xmax, 168.0);
  EXPECT_EQ(box.ymin, -80.0);
  EXPECT_EQ(box.ymax, 78.0);
  EXPECT_EQ(geom.geospatial_statistics->geospatial_types, (std::vector<std::int32_t>{1, 3}));
  EXPECT_FALSE(md.row_groups[0].columns[1].column_index_offset.has_value());
  EXPECT_TRUE(md.row_groups[0].columns[1].offset_index_offset.has_value());

  const std::string path = WriteToDisk("geo_logical.parquet", out.buffer());
  const CommandResult r = Verify(path, "--strict-values");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"duckdb_type\": \"GEOMETRY"), std::string::npos) << r.output;
}

// ---------------------------------------------------------------------------------------------
// Dictionary fallback, row group sizing, failure paths.

TEST(FileWriterTest, DictionaryFallsBackToPlainWhenItGrowsTooLarge) {
  auto schema = *Schema::Make(
      {Field::Leaf("s", PhysicalType::kByteArray, Repetition::kOptional, 1, LogicalType::String()),
       Field::Leaf("n", PhysicalType::kInt64, Repetition::kRequired, 2)});
  WriterOptions options;
  options.column.dictionary_page_size_limit = 4096;
  options.column.max_rows_per_page = 100;
  Batch b = Batch::ForSchema(schema);
  b.num_rows = 2000;
  for (int k = 0; k < 2000; ++k) {
    // Each value twice in a row: a first page half distinct keeps the dictionary, which then
    // outgrows its 4096-byte limit (all-distinct pages never start one).
    b.columns[0].AppendBytes("unique-value-" + std::to_string(k / 2 * 7919));
    b.columns[1].AppendInt64(k % 10);  // small dictionary: never falls back
  }
  FileMetaData md;
  const std::string path = WriteToDisk("fallback.parquet", WriteFile(schema, options, {b}, &md));
  const ColumnMetaData& s = *md.row_groups[0].columns[0].meta_data;
  int dict_pages = 0;
  int plain_pages = 0;
  for (const auto& es : s.encoding_stats) {
    if (es.page_type == PageType::kDataPage && es.encoding == Encoding::kRleDictionary) {
      dict_pages = es.count;
    }
    if (es.page_type == PageType::kDataPage && es.encoding == Encoding::kPlain) {
      plain_pages = es.count;
    }
  }
  EXPECT_GT(dict_pages, 0);
  EXPECT_GT(plain_pages, 0);
  // 2000 rows at most 100 a page; the fallback closes one page early.
  EXPECT_GE(dict_pages + plain_pages, 20);
  EXPECT_LE(dict_pages + plain_pages, 21);
  const ColumnMetaData& n = *md.row_groups[0].columns[1].meta_data;
  EXPECT_EQ(n.encodings, (std::vector<Encoding>{Encoding::kPlain, Encoding::kRleDictionary}));
  const CommandResult r = Verify(path, "--strict-values --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(FileWriterTest, MostlyDistinctColumnsSkipTheDictionaryAndPagesAreCutByBytes) {
  auto schema = *Schema::Make(
      {Field::Leaf("id", PhysicalType::kInt64, Repetition::kRequired, 1),
       Field::Leaf("v", PhysicalType::kDouble, Repetition::kRequired, 2),
       Field::Leaf("s", PhysicalType::kByteArray, Repetition::kOptional, 3, LogicalType::String()),
       Field::Leaf("k", PhysicalType::kInt64, Repetition::kRequired, 4)});
  WriterOptions options;
  options.row_group_rows = 50000;
  Batch b = Batch::ForSchema(schema);
  b.num_rows = 100000;
  for (std::int64_t i = 0; i < b.num_rows; ++i) {
    b.columns[0].AppendInt64(i);
    b.columns[1].AppendDouble(static_cast<double>(i * 7919 % 100003) / 7.0);
    // 2502 distinct strings (squares modulo a prime): a good dictionary.
    b.columns[2].AppendBytes("name-" + std::to_string(i * i % 5003));
    b.columns[3].AppendInt64(i % 30000);  // 30000 of 50000 distinct: more than half
  }
  FileMetaData md;
  const std::string bytes = WriteFile(schema, options, {b}, &md);
  ASSERT_EQ(md.row_groups.size(), 2u);
  for (const RowGroup& rg : md.row_groups) {
    for (int c : {0, 1, 3}) {
      const ColumnMetaData& m = *rg.columns[c].meta_data;
      EXPECT_FALSE(m.dictionary_page_offset.has_value()) << c;
      // The sorted id column goes DELTA_BINARY_PACKED (SortedIntegersAreDeltaEncoded below).
      EXPECT_EQ(m.encodings,
                (std::vector<Encoding>{c == 0 ? Encoding::kDeltaBinaryPacked : Encoding::kPlain}))
          << c;
      // 50000 values of 8 bytes fit one page of 1 MiB: no row limit by default.
      ASSERT_EQ(m.encoding_stats.size(), 1u);
      EXPECT_EQ(m.encoding_stats[0].count, 1) << c;
    }
    const ColumnMetaData& s = *rg.columns[2].meta_data;
    EXPECT_TRUE(s.dictionary_page_offset.has_value());
    int dict_data_pages = 0;
    for (const auto& es : s.encoding_stats) {
      if (es.page_type == PageType::kDataPage) {
        EXPECT_EQ(es.encoding, Encoding::kRleDictionary);
        dict_data_pages += es.count;
      }
    }
    EXPECT_EQ(dict_data_pages, 1);
  }
  // The values read back equal the values written (the dictionary was dropped mid-page).
  const std::string path = WriteToDisk("distinct.parquet", bytes);
  ASSERT_OK_AND_ASSIGN(auto reader, OpenFile(path));
  for (int rg = 0; rg < 2; ++rg) {
    ASSERT_OK_AND_ASSIGN(Batch back, reader->ReadRowGroup(rg));
    for (std::int64_t i = 0; i < 50000; ++i) {
      const std::int64_t row = rg * 50000 + i;
      ASSERT_EQ(back.columns[0].int64_values[i], row);
      ASSERT_EQ(back.columns[1].double_values[i], b.columns[1].double_values[row]);
      ASSERT_EQ(back.columns[2].bytes_at(i), b.columns[2].bytes_at(row));
      ASSERT_EQ(back.columns[3].int64_values[i], row % 30000);
    }
  }
}

TEST(FileWriterTest, SortedIntegersAreDeltaEncoded) {
  auto schema =
      *Schema::Make({Field::Leaf("up", PhysicalType::kInt64, Repetition::kRequired, 1),
                     Field::Leaf("down", PhysicalType::kInt32, Repetition::kOptional, 2),
                     Field::Leaf("wide", PhysicalType::kInt64, Repetition::kRequired, 3),
                     Field::Leaf("mixed", PhysicalType::kInt64, Repetition::kRequired, 4),
                     // Like "wide" after definition levels: a failed delta attempt
                     // must leave the levels written before the values intact.
                     Field::Leaf("wide_nullable", PhysicalType::kInt64, Repetition::kOptional, 5)});
  WriterOptions options;
  options.row_group_rows = 20000;
  Batch b = Batch::ForSchema(schema);
  b.num_rows = 40000;
  std::int64_t wide = 0;
  for (std::int64_t i = 0; i < b.num_rows; ++i) {
    b.columns[0].AppendInt64(1700000000000000 + i * 1000 + i % 7);  // ascending, small gaps
    if (i % 5 == 0) {
      b.columns[1].AppendNull();
    } else {
      b.columns[1].AppendInt32(static_cast<std::int32_t>(1000000 - i));  // descending
    }
    // Ascending, but gaps of up to 2^40: delta would take 5 bytes a value, more than half of 8.
    const std::uint64_t mixed_bits = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ULL;
    wide += 1 + static_cast<std::int64_t>(mixed_bits >> 24);
    b.columns[2].AppendInt64(wide);
    b.columns[3].AppendInt64(i * 7919 % 100003);  // not sorted
    if (i % 3 == 0) {
      b.columns[4].AppendNull();
    } else {
      b.columns[4].AppendInt64(wide);
    }
  }
  FileMetaData md;
  const std::string path = WriteToDisk("sorted.parquet", WriteFile(schema, options, {b}, &md));
  ASSERT_EQ(md.row_groups.size(), 2u);
  for (const RowGroup& rg : md.row_groups) {
    const auto encodings = [&](int c) { return rg.columns[c].meta_data->encodings; };
    EXPECT_EQ(encodings(0), (std::vector<Encoding>{Encoding::kDeltaBinaryPacked}));
    EXPECT_EQ(encodings(1), (std::vector<Encoding>{Encoding::kRle, Encoding::kDeltaBinaryPacked}));
    EXPECT_EQ(encodings(2), (std::vector<Encoding>{Encoding::kPlain}));
    EXPECT_EQ(encodings(3), (std::vector<Encoding>{Encoding::kPlain}));
    EXPECT_EQ(encodings(4), (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle}));
    // A few bits a value instead of 8 bytes, before compression.
    EXPECT_LT(rg.columns[0].meta_data->total_uncompressed_size, 20000 * 2);
  }
  // Statistics and values are the ones of the plain encoding; three other readers agree.
  EXPECT_EQ(md.row_groups[1].columns[1].meta_data->statistics->min_value,
            std::string("\x01\xa6\x0e\x00", 4));  // 1000000 - 39999 = 960001
  const CommandResult r = Verify(path, "--strict-values --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_OK_AND_ASSIGN(auto reader, OpenFile(path));
  // Entries [g * n, (g + 1) * n) of `all`: what row group g holds of a column.
  const auto group = [](const auto& all, int g, std::ptrdiff_t n) {
    return std::decay_t<decltype(all)>(all.begin() + g * n, all.begin() + (g + 1) * n);
  };
  for (int g = 0; g < 2; ++g) {
    ASSERT_OK_AND_ASSIGN(Batch back, reader->ReadRowGroup(g));
    EXPECT_EQ(back.columns[1].def_levels, group(b.columns[1].def_levels, g, 20000));
    EXPECT_EQ(back.columns[0].int64_values, group(b.columns[0].int64_values, g, 20000));
    EXPECT_EQ(back.columns[1].int32_values, group(b.columns[1].int32_values, g, 16000));
    EXPECT_EQ(back.columns[2].int64_values, group(b.columns[2].int64_values, g, 20000));
    EXPECT_EQ(back.columns[4].def_levels, group(b.columns[4].def_levels, g, 20000));
    // Rows 0..19999 hold 13333 values, rows 20000..39999 the other 13333.
    EXPECT_EQ(back.columns[4].int64_values, group(b.columns[4].int64_values, g, 13333));
  }
}

TEST(FileWriterTest, DataPageV2ReadByIndependentReaders) {
  const Schema schema = AllTypesSchema();
  WriterOptions options;
  options.row_group_rows = 1000;
  options.column.data_page_v2 = true;
  options.column.max_rows_per_page = 300;
  FileMetaData md;
  const std::string path =
      WriteToDisk("v2.parquet", WriteFile(schema, options, {AllTypesBatch(schema, 2500)}, &md));
  ASSERT_FALSE(md.row_groups.empty());
  for (const auto& es : md.row_groups[0].columns[16].meta_data->encoding_stats) {
    EXPECT_NE(es.page_type, PageType::kDataPage);
  }
  const CommandResult r = Verify(path, "--strict-values --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(FileWriterTest, RowGroupsAreCutByBytes) {
  auto schema =
      *Schema::Make({Field::Leaf("blob", PhysicalType::kByteArray, Repetition::kRequired, 1)});
  WriterOptions options;
  options.row_group_bytes = 200000;
  options.column.codec = CompressionCodec::kUncompressed;
  options.column.dictionary = false;
  Batch b = Batch::ForSchema(schema);
  b.num_rows = 50000;
  for (int k = 0; k < 50000; ++k)
    b.columns[0].AppendBytes(std::string(20, static_cast<char>('a' + k % 26)));
  FileMetaData md;
  WriteFile(schema, options, {b}, &md);
  // 50000 * 24 bytes = 1.2 MB in row groups of about 200 kB, cut every 8192 rows at most.
  ASSERT_GE(md.row_groups.size(), 6u);
  std::int64_t rows = 0;
  for (const auto& rg : md.row_groups) {
    rows += rg.num_rows;
    EXPECT_LE(rg.total_compressed_size.value_or(0), 200000 + 8192 * 30);
  }
  EXPECT_EQ(rows, 50000);
}

TEST(FileWriterTest, EmptyFileHasNoRowGroups) {
  const Schema schema = GeoSchema();
  FileMetaData md;
  const std::string bytes = WriteFile(schema, {}, {}, &md);
  EXPECT_EQ(md.num_rows, 0);
  EXPECT_TRUE(md.row_groups.empty());
  EXPECT_EQ(ReadFooter(bytes), md);
}

TEST(FileWriterTest, RejectsBadOptionsAndBatches) {
  const Schema schema = GeoSchema();
  MemoryOutputStream out;
  WriterOptions bad_column;
  bad_column.column_options["nope"] = ColumnWriteOptions{};
  EXPECT_THAT(FileWriter::Open(&out, schema, bad_column),
              IsErrorWith(ErrorCode::kInvalidArgument, "'nope'"));
  WriterOptions bad_encoding;
  bad_encoding.column_options["id"].encoding = Encoding::kDeltaByteArray;
  EXPECT_THAT(FileWriter::Open(&out, schema, bad_encoding),
              IsErrorWith(ErrorCode::kInvalidArgument, "DELTA_BYTE_ARRAY"));
  WriterOptions bad_geometry;
  bad_geometry.geometry_logical_type_column = "id";
  EXPECT_THAT(FileWriter::Open(&out, schema, bad_geometry), IsError(ErrorCode::kInvalidArgument));
  WriterOptions bad_codec;
  bad_codec.column.codec = CompressionCodec::kLzo;
  EXPECT_THAT(FileWriter::Open(&out, schema, bad_codec), IsError(ErrorCode::kNotImplemented));

  auto list_schema = *Schema::Make(
      {Field::Group("l", Repetition::kOptional, 1,
                    {Field::Leaf("e", PhysicalType::kInt32, Repetition::kRepeated, 2)})});
  EXPECT_THAT(FileWriter::Open(&out, list_schema), IsError(ErrorCode::kNotImplemented));

  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema));
  Batch b = GeoBatch(schema, 10);
  b.num_rows = 11;
  EXPECT_THAT(writer->WriteBatch(b), IsErrorWith(ErrorCode::kInvalidArgument, "rows"));
  b.num_rows = 10;
  EXPECT_OK(writer->WriteBatch(b));
  EXPECT_OK(writer->Close());
  EXPECT_THAT(writer->Close(), IsError(ErrorCode::kInvalidArgument));
}

TEST(FileWriterTest, StreamErrorsStick) {
  const Schema schema = GeoSchema();
  MemoryOutputStream out;
  out.set_fail_after(100);
  WriterOptions options;
  options.row_group_rows = 100;
  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema, options));
  EXPECT_THAT(writer->WriteBatch(GeoBatch(schema, 300)),
              IsErrorWith(ErrorCode::kIOError, "disk full"));
  EXPECT_THAT(writer->WriteBatch(GeoBatch(schema, 1)), IsError(ErrorCode::kIOError));
  EXPECT_THAT(writer->Close(), IsError(ErrorCode::kIOError));
}

// ---------------------------------------------------------------------------------------------
// Pages compressed in parallel on an executor.

// A polygon of `vertices` pseudo-random points (a fixed LCG, so every call gives the same
// bytes).
std::string NoisyPolygonWkb(std::uint64_t seed, int vertices) {
  std::string w(1, '\x01');
  AppendLE32(&w, 3);
  AppendLE32(&w, 1);
  AppendLE32(&w, static_cast<std::uint32_t>(vertices));
  std::uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int i = 0; i < 2 * vertices; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    // Whole thousandths of a degree: compresses to about half, as real coordinates do.
    AppendLEDouble(&w, static_cast<double>((state >> 11) % 360000) / 1000.0 - 180.0);
  }
  return w;
}

Schema WideSchema() {
  auto schema =
      Schema::Make({Field::Leaf("id", PhysicalType::kInt64, Repetition::kRequired, 1),
                    Field::Leaf("geometry", PhysicalType::kByteArray, Repetition::kOptional, 2),
                    Field::Leaf("name", PhysicalType::kByteArray, Repetition::kOptional, 3,
                                LogicalType::String()),
                    Field::Leaf("kind", PhysicalType::kByteArray, Repetition::kRequired, 4,
                                LogicalType::String()),
                    Field::Leaf("x", PhysicalType::kDouble, Repetition::kRequired, 5),
                    Field::Leaf("flag", PhysicalType::kBoolean, Repetition::kOptional, 6)});
  EXPECT_OK(schema);
  return *schema;
}

// ~1.6 KiB of WKB a row (null every 13th), long distinct names, 12 distinct kinds.
Batch WideBatch(const Schema& schema, std::int64_t first_row, std::int64_t rows) {
  Batch b = Batch::ForSchema(schema);
  b.num_rows = rows;
  for (std::int64_t k = first_row; k < first_row + rows; ++k) {
    b.columns[0].AppendInt64(k);
    if (k % 13 == 5) {
      b.columns[1].AppendNull();
    } else {
      b.columns[1].AppendBytes(NoisyPolygonWkb(static_cast<std::uint64_t>(k), 40 + k % 120));
    }
    if (k % 17 == 0) {
      b.columns[2].AppendNull();
    } else {
      b.columns[2].AppendBytes("feature number " + std::to_string(k * 7919 % 100003) +
                               std::string(static_cast<std::size_t>(k % 40), 'x'));
    }
    b.columns[3].AppendBytes("kind" + std::to_string(k % 12));
    b.columns[4].AppendDouble(static_cast<double>(k % 1000) * 0.125);
    if (k % 11 == 0) {
      b.columns[5].AppendNull();
    } else {
      b.columns[5].AppendBool(k % 3 == 0);
    }
  }
  return b;
}

TEST(FileWriterTest, PagesCompressedOnAnExecutorGiveTheSameBytes) {
  const Schema schema = WideSchema();
  // 2600 rows in eight batches: ~4 MiB of WKB in 128 KiB pages, so a geometry chunk has more
  // pages than may wait at once (kMaxPendingPages), and pages end mid-batch.
  std::vector<Batch> batches;
  std::int64_t first_row = 0;
  for (const std::int64_t rows : {300, 250, 400, 350, 300, 200, 450, 350}) {
    batches.push_back(WideBatch(schema, first_row, rows));
    first_row += rows;
  }
  ASSERT_OK_AND_ASSIGN(auto two, ThreadPool::Make(2));
  ASSERT_OK_AND_ASSIGN(auto four, ThreadPool::Make(4));
  for (const CompressionCodec codec : AllCodecs()) {
    for (const bool dictionary : {true, false}) {
      SCOPED_TRACE(std::string(CodecName(codec)) + (dictionary ? " dictionary" : " plain v2"));
      WriterOptions options;
      options.row_group_rows = 2000;
      options.column.codec = codec;
      options.column.dictionary = dictionary;
      options.column.data_page_size = 128 << 10;
      options.column.max_rows_per_page = 900;
      if (!dictionary) {
        options.column.data_page_v2 = true;
        // Cut by bytes: the check must see the compressed sizes, not the pending bounds.
        options.row_group_bytes = 512 << 10;
      }
      FileMetaData serial_md;
      const std::string serial = WriteFile(schema, options, batches, &serial_md);
      ASSERT_FALSE(serial.empty());
      // The cases the test is for: several row groups, and geometry chunks of more pages of
      // at least kMinParallelPageBytes than may be pending.
      ASSERT_GE(serial_md.row_groups.size(), dictionary ? 2u : 3u);
      const ColumnMetaData& geometry = *serial_md.row_groups[0].columns[1].meta_data;
      EXPECT_GE(geometry.total_uncompressed_size,
                static_cast<std::int64_t>(ColumnChunkWriter::kMaxPendingPages + 1) *
                    ColumnChunkWriter::kMinParallelPageBytes);
      if (dictionary) {
        EXPECT_GT(geometry.total_uncompressed_size,
                  static_cast<std::int64_t>(ColumnChunkWriter::kMaxPendingPages + 1) *
                      options.column.data_page_size);
      }
      for (ThreadPool* executor : {two.get(), four.get()}) {
        options.executor = executor;
        FileMetaData parallel_md;
        const std::string parallel = WriteFile(schema, options, batches, &parallel_md);
        EXPECT_EQ(parallel_md, serial_md) << executor->size() << " threads";
        EXPECT_TRUE(parallel == serial) << executor->size() << " threads: " << parallel.size()
                                        << " bytes, serially " << serial.size();
      }
    }
  }
  const std::string path = WriteToDisk("executor_zstd.parquet", [&] {
    WriterOptions options;
    options.column.data_page_size = 128 << 10;
    options.executor = two.get();
    return WriteFile(schema, options, batches);
  }());
  ASSERT_OK_AND_ASSIGN(auto reader, OpenFile(path));
  ASSERT_OK_AND_ASSIGN(ColumnData back, reader->ReadColumn(0, 1));
  std::vector<std::string_view> written;
  for (const Batch& batch : batches) {
    for (std::int64_t i = 0; i < batch.columns[1].num_values(); ++i) {
      written.push_back(batch.columns[1].bytes_at(i));
    }
  }
  ASSERT_EQ(back.num_values(), static_cast<std::int64_t>(written.size()));
  for (std::size_t i = 0; i < written.size(); ++i) {
    ASSERT_EQ(back.bytes_at(static_cast<std::int64_t>(i)), written[i]) << "value " << i;
  }
}

TEST(FileWriterTest, AnExecutorOfOneThreadCompressesEachPageAsItIsCut) {
  const Schema schema = WideSchema();
  const std::vector<Batch> batches = {WideBatch(schema, 0, 600)};
  WriterOptions options;
  options.column.data_page_size = 64 << 10;
  const std::string serial = WriteFile(schema, options, batches);
  ASSERT_OK_AND_ASSIGN(auto one, ThreadPool::Make(1));
  options.executor = one.get();
  EXPECT_TRUE(WriteFile(schema, options, batches) == serial);
}

// A writer that itself runs as a task of the executor (as the ingest's writers do) while every
// other worker is busy with something long: nobody else takes its pages, so its waits compress
// them on its own thread (nested tasks on one executor must not deadlock), and the bytes are
// the serial ones.
TEST(FileWriterTest, AWriterOnABusyExecutorCompressesItsOwnPages) {
  const Schema schema = WideSchema();
  std::vector<Batch> batches;
  for (std::int64_t first = 0; first < 1500; first += 300) {
    batches.push_back(WideBatch(schema, first, 300));
  }
  WriterOptions options;
  options.column.codec = CompressionCodec::kZstd;
  options.column.data_page_size = 128 << 10;
  const std::string serial = WriteFile(schema, options, batches);
  ASSERT_OK_AND_ASSIGN(auto pool, ThreadPool::Make(2));
  std::atomic<bool> writer_done{false};
  // Holds the other worker until the writer is done (or 20 s pass, which fails the test).
  ASSERT_OK_AND_ASSIGN(auto busy, pool->Submit([&]() -> Status {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!writer_done.load()) {
      if (std::chrono::steady_clock::now() > until) return Status::Internal("writer never ended");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status::OK();
  }));
  options.executor = pool.get();
  std::string parallel;
  ASSERT_OK_AND_ASSIGN(auto writer, pool->Submit([&]() -> Status {
    parallel = WriteFile(schema, options, batches);
    writer_done = true;
    return Status::OK();
  }));
  EXPECT_OK(writer.get());
  EXPECT_OK(busy.get());
  EXPECT_TRUE(parallel == serial) << parallel.size() << " bytes, serially " << serial.size();
}

TEST(FileWriterTest, MaxCompressedSizeBoundsEveryCodec) {
  std::string noise;
  std::uint64_t state = 7;
  for (int i = 0; i < 300000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    noise.push_back(static_cast<char>(state >> 56));
  }
  for (const CompressionCodec codec : AllCodecs()) {
    for (const std::size_t size :
         {std::size_t{0}, std::size_t{1}, std::size_t{1000}, noise.size()}) {
      std::string out;
      ASSERT_OK(Compress(codec, std::string_view(noise).substr(0, size), &out));
      EXPECT_LE(static_cast<std::int64_t>(out.size()),
                MaxCompressedSize(codec, static_cast<std::int64_t>(size)))
          << CodecName(codec) << " " << size;
    }
  }
}

TEST(FileWriterTest, MemoryIsBoundedByTheOpenRowGroup) {
  auto schema = *Schema::Make({Field::Leaf("v", PhysicalType::kInt64, Repetition::kRequired, 1)});
  MemoryOutputStream out;
  WriterOptions options;
  options.row_group_rows = 10000;
  options.column.codec = CompressionCodec::kUncompressed;
  options.column.dictionary = false;
  options.column.delta_for_sorted_integers = false;  // 8 bytes a value, as the bounds assume
  ASSERT_OK_AND_ASSIGN(auto writer, FileWriter::Open(&out, schema, options));
  for (int i = 0; i < 20; ++i) {
    Batch b = Batch::ForSchema(schema);
    b.num_rows = 5000;
    for (int k = 0; k < 5000; ++k)
      b.columns[0].AppendInt64(static_cast<std::int64_t>(i) * 5000 + k);
    ASSERT_OK(writer->WriteBatch(b));
    EXPECT_LT(writer->buffered_bytes(), 10000 * 8 + 4096);
  }
  EXPECT_EQ(writer->rows_written(), 100000);
  EXPECT_GT(writer->bytes_written(), 400000);  // row groups already on the stream
  ASSERT_OK_AND_ASSIGN(FileMetaData md, writer->Close());
  EXPECT_EQ(md.row_groups.size(), 10u);
}

// Issue 17 item 19: every page geolake writes (dictionary and data, every codec) carries the
// CRC-32 of its stored bytes, and a flipped byte in a compressed page is caught on read.
TEST(FileWriterTest, EveryPageCarriesTheCrcOfItsStoredBytes) {
  const Schema schema = AllTypesSchema();
  for (CompressionCodec codec : AllCodecs()) {
    SCOPED_TRACE(static_cast<int>(codec));
    WriterOptions options;
    options.column.codec = codec;
    options.column.data_page_size = 4096;  // several pages per chunk
    const std::string file = WriteFile(schema, options, {AllTypesBatch(schema, 5000)});
    const FileMetaData md = ReadFooter(file);
    std::int64_t pages = 0;
    for (const RowGroup& rg : md.row_groups) {
      for (const ColumnChunk& cc : rg.columns) {
        const ColumnMetaData& cm = *cc.meta_data;
        std::int64_t pos = cm.dictionary_page_offset.value_or(cm.data_page_offset);
        const std::int64_t end = pos + cm.total_compressed_size;
        while (pos < end) {
          PageHeader h;
          std::size_t header_size = 0;
          ASSERT_OK(DeserializeThrift(std::string_view(file).substr(pos), &h, &header_size));
          const std::string_view stored = std::string_view(file).substr(
              pos + header_size, static_cast<std::size_t>(h.compressed_page_size));
          ASSERT_TRUE(h.crc.has_value());
          EXPECT_EQ(static_cast<std::uint32_t>(*h.crc),
                    crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(stored.data()),
                          static_cast<uInt>(stored.size())));
          pos += static_cast<std::int64_t>(header_size) + h.compressed_page_size;
          ++pages;
        }
      }
    }
    EXPECT_GT(pages, static_cast<std::int64_t>(md.row_groups[0].columns.size()));

    // Flip one byte 3 bytes before the end of the first column chunk: in its last page body.
    const ColumnMetaData& cm = *md.row_groups[0].columns[0].meta_data;
    const std::int64_t chunk_begin = cm.dictionary_page_offset.value_or(cm.data_page_offset);
    std::string damaged = file;
    damaged[static_cast<std::size_t>(chunk_begin + cm.total_compressed_size - 3)] ^= 0x10;
    const std::string path = WriteToDisk("damaged_crc.parquet", damaged);
    ASSERT_OK_AND_ASSIGN(auto reader, OpenFile(path));
    EXPECT_THAT(reader->ReadColumn(0, 0).status(), IsErrorWith(ErrorCode::kCorruptData, "CRC"));
  }
}

}  // namespace
}  // namespace geolake::parquet::file_writer_testing
