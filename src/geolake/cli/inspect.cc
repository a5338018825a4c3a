// `geolake inspect FILE.parquet [--json]`: what a Parquet file's footer says: the schema with
// field ids and logical types, each row group's column chunks (codec, encodings, sizes,
// statistics), the key-value metadata and the GeoParquet "geo" metadata. Only the footer is
// read, so this is instant for any file size.
#include <charconv>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/formats/parquet/value_text.h"
#include "geolake/io/file_io.h"

namespace geolake::cli {
namespace {

using nlohmann::ordered_json;
using parquet::LogicalType;

struct InspectArgs {
  std::string file;
  bool json = false;
};

// Statistics bounds and metadata values longer than this are cut in the text listing.
constexpr std::size_t kMaxValueChars = 40;

std::string Clip(std::string text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  std::size_t cut = max_chars - 3;
  // Do not split a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

std::string UnitName(parquet::TimeUnit unit) {
  switch (unit) {
    case parquet::TimeUnit::kMillis:
      return "MILLIS";
    case parquet::TimeUnit::kMicros:
      return "MICROS";
    case parquet::TimeUnit::kNanos:
      return "NANOS";
  }
  return "?";
}

std::string LogicalTypeText(const LogicalType& t) {
  using Kind = LogicalType::Kind;
  switch (t.kind) {
    case Kind::kString:
      return "STRING";
    case Kind::kMap:
      return "MAP";
    case Kind::kList:
      return "LIST";
    case Kind::kEnum:
      return "ENUM";
    case Kind::kDecimal:
      return "DECIMAL(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
    case Kind::kDate:
      return "DATE";
    case Kind::kTime:
      return "TIME(" + UnitName(t.unit) + (t.is_adjusted_to_utc ? ",UTC)" : ",local)");
    case Kind::kTimestamp:
      return "TIMESTAMP(" + UnitName(t.unit) + (t.is_adjusted_to_utc ? ",UTC)" : ",local)");
    case Kind::kInteger:
      return "INT(" + std::to_string(t.bit_width) + (t.is_signed ? ",signed)" : ",unsigned)");
    case Kind::kUnknown:
      return "UNKNOWN";
    case Kind::kJson:
      return "JSON";
    case Kind::kBson:
      return "BSON";
    case Kind::kUuid:
      return "UUID";
    case Kind::kFloat16:
      return "FLOAT16";
    case Kind::kVariant:
      return "VARIANT";
    case Kind::kGeometry:
      return t.crs ? "GEOMETRY(crs)" : "GEOMETRY";
    case Kind::kGeography:
      return t.crs ? "GEOGRAPHY(crs)" : "GEOGRAPHY";
    case Kind::kUnrecognized:
      break;
  }
  return "(unrecognized)";
}

std::string RepetitionText(parquet::Repetition r) {
  switch (r) {
    case parquet::Repetition::kRequired:
      return "required";
    case parquet::Repetition::kOptional:
      return "optional";
    case parquet::Repetition::kRepeated:
      return "repeated";
  }
  return "?";
}

std::string TypeText(const parquet::Field& f) {
  if (f.is_group()) return "group";
  std::string text(parquet::PhysicalTypeName(*f.physical_type));
  if (*f.physical_type == parquet::PhysicalType::kFixedLenByteArray) {
    text += "(" + std::to_string(f.type_length) + ")";
  }
  return text;
}

std::string AnnotationText(const parquet::Field& f) {
  if (f.logical_type) return LogicalTypeText(*f.logical_type);
  if (f.converted_type) return "converted " + std::to_string(static_cast<int>(*f.converted_type));
  return "";
}

std::string EncodingsText(const std::vector<parquet::Encoding>& encodings) {
  std::string out;
  for (parquet::Encoding e : encodings) {
    if (!out.empty()) out += ",";
    out += parquet::EncodingName(e);
  }
  return out;
}

// Rows of cells printed with each column padded to its widest cell.
class TextTable {
 public:
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render(const std::string& indent) const {
    std::vector<std::size_t> widths;
    for (const auto& row : rows_) {
      if (widths.size() < row.size()) widths.resize(row.size(), 0);
      for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line = indent;
      for (std::size_t c = 0; c < row.size(); ++c) {
        line += row[c];
        if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

void AddSchemaRows(const parquet::Field& f, int depth, TextTable* table) {
  table->Add({f.field_id ? std::to_string(*f.field_id) : "-", std::string(2 * depth, ' ') + f.name,
              RepetitionText(f.repetition), TypeText(f), AnnotationText(f)});
  for (const parquet::Field& child : f.children) AddSchemaRows(child, depth + 1, table);
}

ordered_json SchemaJson(const parquet::Field& f) {
  ordered_json j;
  j["name"] = f.name;
  j["field_id"] = f.field_id ? ordered_json(*f.field_id) : ordered_json(nullptr);
  j["repetition"] = RepetitionText(f.repetition);
  j["type"] = TypeText(f);
  if (f.logical_type) j["logical_type"] = LogicalTypeText(*f.logical_type);
  if (f.converted_type) j["converted_type"] = static_cast<int>(*f.converted_type);
  if (f.is_group()) {
    j["children"] = ordered_json::array();
    for (const parquet::Field& child : f.children) j["children"].push_back(SchemaJson(child));
  }
  return j;
}

std::string CrsText(const geoparquet::GeoColumnMetadata& column) {
  switch (column.crs_mode) {
    case geoparquet::CrsMode::kOmitted:
      return "OGC:CRS84 (default)";
    case geoparquet::CrsMode::kNull:
      return "unknown (null)";
    case geoparquet::CrsMode::kProjJson:
      break;
  }
  const ordered_json crs = ordered_json::parse(column.crs_projjson, nullptr, false);
  std::string text = crs.is_object() && crs.contains("name") && crs["name"].is_string()
                         ? crs["name"].get<std::string>()
                         : "PROJJSON";
  if (crs.is_object() && crs.contains("id") && crs["id"].is_object()) {
    const ordered_json& id = crs["id"];
    if (id.contains("authority") && id["authority"].is_string() && id.contains("code")) {
      text += " (" + id["authority"].get<std::string>() + ":" +
              (id["code"].is_string() ? id["code"].get<std::string>() : id["code"].dump()) + ")";
    }
  }
  return text;
}

std::string NumbersText(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof(buf), values[i]);
    out += (i > 0 ? ", " : "") + std::string(buf, r.ptr);
  }
  return out + "]";
}

std::string BoundText(const parquet::LeafColumn& leaf, const std::optional<std::string>& bound) {
  if (!bound) return "-";
  return parquet::PlainValueText(leaf, *bound).text;
}

// The chunk's min and max, preferring the current fields over the deprecated ones (which only
// files written before 2018 carry, with signed byte order).
std::pair<std::optional<std::string>, std::optional<std::string>> Bounds(
    const parquet::Statistics& s) {
  if (s.min_value || s.max_value) return {s.min_value, s.max_value};
  return {s.min, s.max};
}

std::string RenderText(const parquet::FileReader& reader, std::uint64_t file_size) {
  const parquet::FileMetaData& md = reader.metadata();
  const parquet::Schema& schema = reader.schema();
  std::string out;
  out += "file        " + reader.path() + "\n";
  out += "size        " + std::to_string(file_size) + " bytes\n";
  out += "created_by  " + md.created_by.value_or("-") + "\n";
  out += "version     " + std::to_string(md.version) + "\n";
  out += "rows        " + std::to_string(md.num_rows) + "\n";
  out += "row groups  " + std::to_string(md.row_groups.size()) + "\n";

  out += "\nschema (" + std::to_string(schema.num_leaves()) + " leaf columns)\n";
  TextTable fields;
  fields.Add({"id", "name", "repetition", "type", "logical type"});
  for (const parquet::Field& f : schema.fields()) AddSchemaRows(f, 0, &fields);
  out += fields.Render("  ");

  for (std::size_t g = 0; g < md.row_groups.size(); ++g) {
    const parquet::RowGroup& rg = md.row_groups[g];
    std::int64_t compressed = 0;
    for (const parquet::ColumnChunk& c : rg.columns) {
      if (c.meta_data) compressed += c.meta_data->total_compressed_size;
    }
    out += "\nrow group " + std::to_string(g) + ": " + std::to_string(rg.num_rows) + " rows, " +
           std::to_string(rg.total_byte_size) + " bytes uncompressed, " +
           std::to_string(compressed) + " compressed";
    if (!rg.sorting_columns.empty()) {
      out += ", sorted by";
      for (const parquet::SortingColumn& s : rg.sorting_columns) {
        const bool known = s.column_idx >= 0 && s.column_idx < schema.num_leaves();
        out += " " +
               (known ? schema.leaves()[s.column_idx].dotted_path()
                      : "#" + std::to_string(s.column_idx)) +
               (s.descending ? " desc" : "");
      }
    }
    out += "\n";
    TextTable chunks;
    chunks.Add({"column", "codec", "encodings", "compressed", "uncompressed", "values", "nulls",
                "min", "max"});
    for (std::size_t c = 0; c < rg.columns.size(); ++c) {
      const parquet::ColumnChunk& chunk = rg.columns[c];
      const parquet::LeafColumn& leaf = schema.leaves()[c];
      if (!chunk.meta_data) {
        chunks.Add({leaf.dotted_path(), "(no metadata)"});
        continue;
      }
      const parquet::ColumnMetaData& m = *chunk.meta_data;
      std::string nulls = "-", min = "-", max = "-";
      if (m.statistics) {
        if (m.statistics->null_count) nulls = std::to_string(*m.statistics->null_count);
        const auto [lo, hi] = Bounds(*m.statistics);
        min = Clip(BoundText(leaf, lo), kMaxValueChars);
        max = Clip(BoundText(leaf, hi), kMaxValueChars);
      }
      chunks.Add({leaf.dotted_path(), std::string(parquet::CodecName(m.codec)),
                  EncodingsText(m.encodings), std::to_string(m.total_compressed_size),
                  std::to_string(m.total_uncompressed_size), std::to_string(m.num_values), nulls,
                  min, max});
    }
    out += chunks.Render("  ");
  }

  out += "\nkey-value metadata (" + std::to_string(md.key_value_metadata.size()) + ")\n";
  TextTable kv;
  for (const parquet::KeyValue& entry : md.key_value_metadata) {
    const std::string value = entry.value.value_or("(null)");
    kv.Add({entry.key,
            Clip(value, 60) +
                (value.size() > 60 ? " (" + std::to_string(value.size()) + " bytes)" : "")});
  }
  out += kv.Render("  ");

  for (const parquet::KeyValue& entry : md.key_value_metadata) {
    if (entry.key != geoparquet::kGeoMetadataKey || !entry.value) continue;
    Result<geoparquet::GeoMetadata> geo = geoparquet::GeoMetadata::Parse(*entry.value);
    if (!geo.ok()) {
      out += "\ngeoparquet: unreadable \"geo\" metadata: " + geo.status().ToString() + "\n";
      continue;
    }
    out += "\ngeoparquet " + geo->version + ", primary column " + geo->primary_column + "\n";
    for (const auto& [name, column] : geo->columns) {
      std::string types;
      for (const std::string& t : column.geometry_types) types += (types.empty() ? "" : ", ") + t;
      TextTable table;
      table.Add({"encoding", column.encoding});
      table.Add({"geometry types", "[" + types + "]"});
      table.Add({"crs", CrsText(column)});
      table.Add({"bbox", column.bbox.empty() ? "-" : NumbersText(column.bbox)});
      if (column.covering) {
        table.Add({"covering", "bbox: " + column.covering->column() + ".{xmin, ymin, xmax, ymax}"});
      }
      if (column.edges) table.Add({"edges", *column.edges});
      if (column.orientation) table.Add({"orientation", *column.orientation});
      out += "  " + name + "\n" + table.Render("    ");
    }
  }
  return out;
}

ordered_json RenderJson(const parquet::FileReader& reader, std::uint64_t file_size) {
  const parquet::FileMetaData& md = reader.metadata();
  const parquet::Schema& schema = reader.schema();
  ordered_json j;
  j["file"] = reader.path();
  j["size_bytes"] = file_size;
  j["created_by"] = md.created_by ? ordered_json(*md.created_by) : ordered_json(nullptr);
  j["version"] = md.version;
  j["num_rows"] = md.num_rows;
  j["schema"] = ordered_json::array();
  for (const parquet::Field& f : schema.fields()) j["schema"].push_back(SchemaJson(f));
  j["row_groups"] = ordered_json::array();
  for (const parquet::RowGroup& rg : md.row_groups) {
    ordered_json g;
    g["num_rows"] = rg.num_rows;
    g["total_byte_size"] = rg.total_byte_size;
    if (!rg.sorting_columns.empty()) {
      g["sorting_columns"] = ordered_json::array();
      for (const parquet::SortingColumn& s : rg.sorting_columns) {
        g["sorting_columns"].push_back({{"column_idx", s.column_idx},
                                        {"descending", s.descending},
                                        {"nulls_first", s.nulls_first}});
      }
    }
    g["columns"] = ordered_json::array();
    for (std::size_t c = 0; c < rg.columns.size(); ++c) {
      const parquet::LeafColumn& leaf = schema.leaves()[c];
      ordered_json col;
      col["path"] = leaf.dotted_path();
      if (const auto& m = rg.columns[c].meta_data; m) {
        col["codec"] = std::string(parquet::CodecName(m->codec));
        col["encodings"] = ordered_json::array();
        for (parquet::Encoding e : m->encodings) {
          col["encodings"].push_back(std::string(parquet::EncodingName(e)));
        }
        col["num_values"] = m->num_values;
        col["compressed_bytes"] = m->total_compressed_size;
        col["uncompressed_bytes"] = m->total_uncompressed_size;
        col["data_page_offset"] = m->data_page_offset;
        if (m->dictionary_page_offset) col["dictionary_page_offset"] = *m->dictionary_page_offset;
        if (m->statistics) {
          ordered_json stats = ordered_json::object();
          if (m->statistics->null_count) stats["null_count"] = *m->statistics->null_count;
          const auto [lo, hi] = Bounds(*m->statistics);
          const auto bound = [&](const std::optional<std::string>& b) -> ordered_json {
            if (!b) return nullptr;
            parquet::ValueText v = parquet::PlainValueText(leaf, *b);
            return v.quoted ? ordered_json(v.text) : ordered_json::parse(v.text, nullptr, false);
          };
          if (lo) stats["min"] = bound(lo);
          if (hi) stats["max"] = bound(hi);
          col["statistics"] = std::move(stats);
        }
        if (m->geospatial_statistics && m->geospatial_statistics->bbox) {
          const parquet::BoundingBox& b = *m->geospatial_statistics->bbox;
          col["geospatial_bbox"] = {b.xmin, b.ymin, b.xmax, b.ymax};
        }
      }
      g["columns"].push_back(std::move(col));
    }
    j["row_groups"].push_back(std::move(g));
  }
  j["key_value_metadata"] = ordered_json::object();
  for (const parquet::KeyValue& entry : md.key_value_metadata) {
    j["key_value_metadata"][entry.key] =
        entry.value ? ordered_json(*entry.value) : ordered_json(nullptr);
    if (entry.key == geoparquet::kGeoMetadataKey && entry.value) {
      ordered_json geo = ordered_json::parse(*entry.value, nullptr, false);
      if (!geo.is_discarded()) j["geo"] = std::move(geo);
    }
  }
  return j;
}

Status RunInspect(Warehouse& warehouse, const InspectArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(std::shared_ptr<const io::RandomAccessFile> file,
                           warehouse.io().OpenRead(args.file));
  const std::uint64_t size = file->size();
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(std::move(file)));
  if (args.json) {
    const std::string text =
        RenderJson(*reader, size).dump(2, ' ', false, ordered_json::error_handler_t::replace);
    std::fputs((text + "\n").c_str(), stdout);
  } else {
    std::fputs(RenderText(*reader, size).c_str(), stdout);
  }
  return Status::OK();
}

}  // namespace

void RegisterInspect(CLI::App* sub, Action* action) {
  auto args = std::make_shared<InspectArgs>();
  sub->add_option("file", args->file, "Parquet file")->required();
  sub->add_flag("--json", args->json, "JSON output");
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), RunInspect(*warehouse, *args));
  };
}

}  // namespace geolake::cli
