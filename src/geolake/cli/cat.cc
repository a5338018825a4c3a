// `geolake cat FILE [--columns a,b] [--limit N] [--format jsonl|csv]`: a Parquet file's rows,
// one per line, geometry columns (named by the GeoParquet "geo" metadata or typed GEOMETRY /
// GEOGRAPHY) as WKT. Flat columns and structs of any depth; list columns are not printed yet.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/geo/wkb.h"
#include "geolake/io/file_io.h"
#include "geolake/pipeline/value_text.h"

namespace geolake::cli {
namespace {

struct CatArgs {
  std::string file;
  std::string columns;
  std::int64_t limit = -1;
  std::string format = "jsonl";
};

// One leaf being printed: its data for the current row group and its cursor.
struct LeafCursor {
  const parquet::LeafColumn* leaf = nullptr;
  const parquet::ColumnData* data = nullptr;
  std::int64_t next_value = 0;
  bool geometry = false;
};

// A selected top-level field and where its leaves start in the cursor list.
struct Selected {
  const parquet::Field* field = nullptr;
  std::size_t first_leaf = 0;
};

std::size_t CountLeaves(const parquet::Field& f) {
  if (!f.is_group()) return 1;
  std::size_t n = 0;
  for (const parquet::Field& child : f.children) n += CountLeaves(child);
  return n;
}

bool HasRepeated(const parquet::Field& f) {
  if (f.repetition == parquet::Repetition::kRepeated) return true;
  for (const parquet::Field& child : f.children) {
    if (HasRepeated(child)) return true;
  }
  return false;
}

std::string CsvQuote(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos && !text.empty() && text.front() != ' ' &&
      text.back() != ' ') {
    return text;
  }
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

class RowPrinter {
 public:
  RowPrinter(bool csv, std::vector<Selected> selected, std::vector<LeafCursor>* cursors)
      : csv_(csv), selected_(std::move(selected)), cursors_(cursors) {}

  std::string Header() const {
    std::vector<std::string> names;
    for (const Selected& s : selected_) AddNames(*s.field, "", &names);
    std::string line;
    for (std::size_t i = 0; i < names.size(); ++i) {
      line += (i > 0 ? "," : "") + CsvQuote(names[i]);
    }
    return line + "\n";
  }

  std::string Row(std::int64_t row) {
    std::string line = csv_ ? "" : "{";
    bool first = true;
    for (const Selected& s : selected_) {
      std::size_t leaf = s.first_leaf;
      if (!csv_) {
        line += (first ? "" : ",") + pipeline::JsonQuote(s.field->name) + ":";
      }
      Render(*s.field, 0, row, &leaf, first, &line);
      first = false;
    }
    return line + (csv_ ? "\n" : "}\n");
  }

 private:
  static void AddNames(const parquet::Field& f, const std::string& prefix,
                       std::vector<std::string>* names) {
    const std::string name = prefix.empty() ? f.name : prefix + "." + f.name;
    if (!f.is_group()) {
      names->push_back(name);
      return;
    }
    for (const parquet::Field& child : f.children) AddNames(child, name, names);
  }

  std::int16_t DefAt(const LeafCursor& c, std::int64_t row) const {
    return c.data->max_definition_level > 0 ? c.data->def_levels[static_cast<std::size_t>(row)]
                                            : c.data->max_definition_level;
  }

  // Appends field `f` (defined at definition level `parent_def`) to `line`, consuming its
  // leaves from *leaf. CSV: one cell per leaf, separated by commas; JSON: one value.
  void Render(const parquet::Field& f, std::int16_t parent_def, std::int64_t row, std::size_t* leaf,
              bool first_cell, std::string* line) {
    const std::int16_t def =
        static_cast<std::int16_t>(parent_def + (f.repetition == parquet::Repetition::kOptional));
    const std::size_t num_leaves = CountLeaves(f);
    const bool is_null = DefAt((*cursors_)[*leaf], row) < def;
    if (is_null) {
      if (csv_) {
        for (std::size_t i = 0; i < num_leaves; ++i) *line += (first_cell && i == 0) ? "" : ",";
      } else {
        *line += "null";
      }
      *leaf += num_leaves;
      return;
    }
    if (!f.is_group()) {
      LeafCursor& c = (*cursors_)[*leaf];
      pipeline::ValueText v = ValueAt(&c);
      if (csv_) {
        *line += (first_cell ? "" : ",") + (v.quoted ? CsvQuote(v.text) : v.text);
      } else {
        *line += v.quoted ? pipeline::JsonQuote(v.text) : v.text;
      }
      ++*leaf;
      return;
    }
    if (!csv_) *line += "{";
    bool first = true;
    for (const parquet::Field& child : f.children) {
      if (!csv_) *line += (first ? "" : ",") + pipeline::JsonQuote(child.name) + ":";
      Render(child, def, row, leaf, first_cell && first, line);
      first = false;
    }
    if (!csv_) *line += "}";
  }

  static pipeline::ValueText ValueAt(LeafCursor* c) {
    const std::int64_t i = c->next_value++;
    if (c->geometry) {
      const std::string_view wkb = c->data->bytes_at(i);
      Result<std::string> wkt = geo::WkbToWkt(geo::AsBytes(wkb));
      // A value that is not WKB is shown as hex rather than hiding the row.
      return {wkt.ok() ? *wkt : pipeline::HexText(wkb), true};
    }
    return pipeline::LeafValueText(*c->leaf, *c->data, i);
  }

  bool csv_;
  std::vector<Selected> selected_;
  std::vector<LeafCursor>* cursors_;
};

std::vector<std::string> SplitNames(const std::string& text) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    std::string name = text.substr(start, end - start);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty()) names.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

Status Cat(const CatArgs& args) {
  auto io = io::MakeLocalFileIO();
  GEOLAKE_ASSIGN_OR_RETURN(std::shared_ptr<const io::RandomAccessFile> file,
                           io->OpenRead(args.file));
  GEOLAKE_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(std::move(file)));
  const parquet::Schema& schema = reader->schema();

  // Geometry columns: those the "geo" metadata names (a WKB encoding) and GEOMETRY/GEOGRAPHY.
  std::set<std::string, std::less<>> geometry_columns;
  for (const parquet::KeyValue& kv : reader->metadata().key_value_metadata) {
    if (kv.key != geoparquet::kGeoMetadataKey || !kv.value) continue;
    Result<geoparquet::GeoMetadata> geo = geoparquet::GeoMetadata::Parse(*kv.value);
    if (!geo.ok()) continue;  // unreadable "geo": the columns print as binary
    for (const auto& [name, column] : geo->columns) {
      if (column.encoding == "WKB") geometry_columns.insert(name);
    }
  }

  // Top-level fields in schema order, or in the order --columns names them.
  std::vector<std::size_t> chosen;
  const std::vector<parquet::Field>& fields = schema.fields();
  if (args.columns.empty()) {
    for (std::size_t i = 0; i < fields.size(); ++i) chosen.push_back(i);
  } else {
    for (const std::string& name : SplitNames(args.columns)) {
      std::size_t found = fields.size();
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].name == name) found = i;
      }
      if (found == fields.size()) {
        std::string known;
        for (const parquet::Field& f : fields) known += (known.empty() ? "" : ", ") + f.name;
        return Status::InvalidArgument("--columns: no column '" + name + "' in '" + args.file +
                                       "' (columns: " + known + ")");
      }
      chosen.push_back(found);
    }
    if (chosen.empty()) return Status::InvalidArgument("--columns: no column named");
  }

  // The leaves to read, grouped by chosen field.
  std::vector<int> leaf_indices;
  std::vector<Selected> selected;
  std::vector<LeafCursor> cursors;
  for (std::size_t field_idx : chosen) {
    const parquet::Field& f = fields[field_idx];
    if (HasRepeated(f)) {
      return Status::NotImplemented("column '" + f.name +
                                    "' is a list; cat prints flat and struct columns only");
    }
    selected.push_back({&f, cursors.size()});
    for (int leaf = 0; leaf < schema.num_leaves(); ++leaf) {
      const parquet::LeafColumn& lc = schema.leaves()[leaf];
      if (lc.top_level_field != static_cast<std::int32_t>(field_idx)) continue;
      LeafCursor c;
      c.leaf = &lc;
      const bool typed_geometry =
          lc.logical_type && (lc.logical_type->kind == parquet::LogicalType::Kind::kGeometry ||
                              lc.logical_type->kind == parquet::LogicalType::Kind::kGeography);
      c.geometry = lc.path.size() == 1 && lc.physical_type == parquet::PhysicalType::kByteArray &&
                   (typed_geometry || geometry_columns.count(lc.path[0]) > 0);
      leaf_indices.push_back(leaf);
      cursors.push_back(c);
    }
  }

  const bool csv = args.format == "csv";
  RowPrinter printer(csv, selected, &cursors);
  if (csv) std::fputs(printer.Header().c_str(), stdout);
  std::int64_t printed = 0;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    if (args.limit >= 0 && printed >= args.limit) break;
    if (reader->row_group(rg).num_rows == 0) continue;
    GEOLAKE_ASSIGN_OR_RETURN(parquet::Batch batch, reader->ReadRowGroup(rg, leaf_indices));
    for (std::size_t i = 0; i < cursors.size(); ++i) {
      cursors[i].data = &batch.columns[i];
      cursors[i].next_value = 0;
    }
    const std::int64_t rows = batch.columns.empty() ? 0 : batch.columns[0].num_levels();
    std::string out;
    for (std::int64_t row = 0; row < rows; ++row) {
      if (args.limit >= 0 && printed >= args.limit) break;
      out += printer.Row(row);
      ++printed;
      if (out.size() > (1 << 20)) {
        std::fputs(out.c_str(), stdout);
        out.clear();
      }
    }
    std::fputs(out.c_str(), stdout);
  }
  return Status::OK();
}

Status RunCat(const GlobalOptions& global, const CatArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(auto runtime, StartRuntime(global));
  return FinishRuntime(global, runtime.get(), Cat(args));
}

}  // namespace

void RegisterCat(CLI::App* sub, Action* action) {
  auto args = std::make_shared<CatArgs>();
  sub->add_option("file", args->file, "Parquet file")->required();
  sub->add_option("--columns", args->columns, "a,b,... (top-level columns, in this order)");
  sub->add_option("--limit", args->limit, "Rows at most")->check(CLI::NonNegativeNumber);
  sub->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();
  *action = [args](const GlobalOptions& global) { return RunCat(global, *args); };
}

}  // namespace geolake::cli
