#include "geolake/query/test_table.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/formats/parquet/value_text.h"
#include "geolake/pipeline/convert.h"
#include "geolake/table/data_file_metrics.h"

namespace geolake::query {
namespace {

table::TypePtr IcebergType(const parquet::Field& f) {
  using PT = parquet::PhysicalType;
  const auto kind =
      f.logical_type ? f.logical_type->kind : parquet::LogicalType::Kind::kUnrecognized;
  switch (*f.physical_type) {
    case PT::kBoolean:
      return table::Type::Boolean();
    case PT::kInt32:
      return kind == parquet::LogicalType::Kind::kDate ? table::Type::Date() : table::Type::Int();
    case PT::kInt64:
      return kind == parquet::LogicalType::Kind::kTimestamp ? table::Type::TimestampTz()
                                                            : table::Type::Long();
    case PT::kFloat:
      return table::Type::Float();
    case PT::kDouble:
      return table::Type::Double();
    default:
      return kind == parquet::LogicalType::Kind::kString ? table::Type::String()
                                                         : table::Type::Binary();
  }
}

std::vector<table::NestedField> IcebergFields(const std::vector<parquet::Field>& fields) {
  std::vector<table::NestedField> out;
  for (const parquet::Field& f : fields) {
    table::TypePtr type =
        f.is_group() ? table::Type::Struct(IcebergFields(f.children)) : IcebergType(f);
    const std::int32_t id = f.field_id.value_or(0);
    out.push_back(f.repetition == parquet::Repetition::kRequired
                      ? table::NestedField::Required(id, f.name, std::move(type))
                      : table::NestedField::Optional(id, f.name, std::move(type)));
  }
  return out;
}

}  // namespace

Result<TestTable> BuildTestTable(table::Catalog& catalog, const io::FileIO& io,
                                 const table::TableIdentifier& id,
                                 const TestTableOptions& options) {
  GEOLAKE_RETURN_NOT_OK(io.CreateDirs(options.location + "/data"));
  const std::string staged = options.location + "/staged-all.parquet";
  pipeline::ConvertOptions convert;
  convert.file.order = geoparquet::RowOrder::kHilbert;
  convert.file.row_group_rows = options.rows_per_file;
  GEOLAKE_RETURN_NOT_OK(pipeline::ConvertToGeoParquet(options.source, staged, convert).status());
  GEOLAKE_ASSIGN_OR_RETURN(auto staged_file, io.OpenRead(staged));
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(std::move(staged_file)));

  auto schema = std::make_shared<table::Schema>(0, IcebergFields(reader->schema().fields()));
  table::NewTableOptions create;
  create.location = options.location;
  create.schema = schema;
  create.properties = {{"geolake.crs", "EPSG:4326"}, {"geolake.partition", "none"}};
  GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(catalog, id.ns));
  TestTable out;
  GEOLAKE_ASSIGN_OR_RETURN(out.table, table::CreateTable(catalog, io, id, create));
  const table::SchemaPtr table_schema = out.table.metadata.current_schema();

  parquet::WriterOptions writer_options;
  writer_options.row_group_rows = options.row_group_rows;
  writer_options.column.max_rows_per_page = options.page_rows;
  writer_options.key_value_metadata = reader->metadata().key_value_metadata;
  std::vector<table::DataFile> files;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    GEOLAKE_ASSIGN_OR_RETURN(parquet::Batch batch, reader->ReadRowGroup(rg));
    const std::string path = fmt::format("{}/data/{:05d}.parquet", options.location, rg);
    GEOLAKE_ASSIGN_OR_RETURN(auto sink, io.OpenWrite(path, /*overwrite=*/true));
    GEOLAKE_ASSIGN_OR_RETURN(
        auto writer, parquet::FileWriter::Open(sink.get(), reader->schema(), writer_options));
    GEOLAKE_RETURN_NOT_OK(writer->WriteBatch(batch));
    GEOLAKE_ASSIGN_OR_RETURN(parquet::FileMetaData footer, writer->Close());
    const auto size = static_cast<std::int64_t>(sink->Tell());
    GEOLAKE_RETURN_NOT_OK(sink->Close());
    GEOLAKE_ASSIGN_OR_RETURN(table::DataFile df,
                             table::DataFileFromParquet(footer, path, size, *table_schema, {}));
    files.push_back(std::move(df));
  }
  GEOLAKE_RETURN_NOT_OK(io.Delete(staged));

  const int commits = std::max(1, std::min<int>(options.commits, static_cast<int>(files.size())));
  std::size_t next = 0;
  for (int c = 0; c < commits; ++c) {
    const std::size_t end = files.size() * static_cast<std::size_t>(c + 1) / commits;
    table::AppendFiles append(&catalog, &io, id);
    std::vector<std::string> paths;
    for (; next < end; ++next) {
      paths.push_back(files[next].file_path);
      append.AddFile(files[next]);
    }
    GEOLAKE_ASSIGN_OR_RETURN(table::CommitResult result, append.Commit());
    out.snapshot_ids.push_back(result.snapshot_id);
    out.snapshot_times_ms.push_back(result.metadata.SnapshotById(result.snapshot_id)->timestamp_ms);
    out.commit_files.push_back(std::move(paths));
    // Distinct snapshot timestamps, so --as-of can tell the commits apart.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  GEOLAKE_ASSIGN_OR_RETURN(out.table, table::LoadTable(catalog, io, id));
  return out;
}

}  // namespace geolake::query
