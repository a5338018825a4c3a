// `geolake cat FILE [--columns a,b] [--limit N] [--format jsonl|csv]`: a Parquet file's rows,
// one per line, geometry columns (named by the GeoParquet "geo" metadata or typed GEOMETRY /
// GEOGRAPHY) as WKT. Structs print as JSON objects, lists as arrays and maps as objects (keys
// as strings); in CSV a struct spreads over one cell per leaf and a field holding a list or
// map is one cell of JSON text.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"
#include "geolake/cli/runtime.h"
#include "geolake/core/csv.h"
#include "geolake/core/hex.h"
#include "geolake/core/little_endian.h"
#include "geolake/formats/geoparquet/geo_metadata.h"
#include "geolake/formats/parquet/reader.h"
#include "geolake/formats/parquet/value_text.h"
#include "geolake/geo/wkb.h"
#include "geolake/io/file_io.h"

namespace geolake::cli {
namespace {

struct CatArgs {
  std::string file;
  std::string columns;
  std::int64_t limit = -1;
  std::string format = "jsonl";
};

// One leaf being printed: its data for the current row group, the next level entry and the
// next stored value. Reads past the end (only possible in a file whose leaves disagree about
// its nesting) see level 0 and print null, never out-of-bounds memory.
struct LeafCursor {
  const parquet::LeafColumn* leaf = nullptr;
  const parquet::ColumnData* data = nullptr;
  std::int64_t next_entry = 0;
  std::int64_t next_value = 0;
  bool geometry = false;

  bool at_end() const { return next_entry >= data->num_levels(); }
  std::int16_t def() const {
    if (data->max_definition_level == 0 || at_end()) return 0;
    return data->def_levels[static_cast<std::size_t>(next_entry)];
  }
  std::int16_t rep() const {
    if (data->max_repetition_level == 0 || at_end()) return 0;
    return data->rep_levels[static_cast<std::size_t>(next_entry)];
  }
};

// A selected top-level field and where its leaves start in the cursor list.
struct Selected {
  const parquet::Field* field = nullptr;
  std::size_t first_leaf = 0;
  bool nested = false;  // has a repeated field inside: one JSON cell in CSV
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

bool IsKind(const parquet::Field& f, parquet::LogicalType::Kind kind) {
  return f.logical_type.has_value() && f.logical_type->kind == kind;
}

// FLOAT16 (IEEE half precision, little-endian) as the number it is; JSON has no NaN or
// infinity, so those print as null like other floating-point values.
parquet::ValueText Float16Text(std::string_view bytes) {
  const unsigned bits = LoadLE<std::uint16_t>(bytes.data());
  const int exponent = static_cast<int>((bits >> 10) & 0x1F);
  const unsigned fraction = bits & 0x3FF;
  if (exponent == 0x1F) return {"null", false};
  const double magnitude =
      exponent == 0 ? std::ldexp(fraction, -24) : std::ldexp(fraction + 1024.0, exponent - 25);
  const double value = (bits & 0x8000) != 0 ? -magnitude : magnitude;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value);
  return {std::string(buf, r.ptr), false};
}

// How the instances of a repeated field print: a JSON array of elements, or (MAP) an object.
enum class Shape { kArray, kList, kMap };

// Renders rows by walking each selected field's schema and consuming its leaves' level entries
// (Dremel record assembly): a null or empty list consumes one entry of every leaf below it; a
// list continues while the next entry's repetition level is the list's own.
class RowPrinter {
 public:
  RowPrinter(bool csv, std::vector<Selected> selected, std::vector<LeafCursor>* cursors)
      : csv_(csv), selected_(std::move(selected)), cursors_(cursors) {}

  std::string Header() const {
    std::vector<std::string> names;
    for (const Selected& s : selected_) {
      if (s.nested) {
        names.push_back(s.field->name);
      } else {
        AddNames(*s.field, "", &names);
      }
    }
    std::string line;
    for (std::size_t i = 0; i < names.size(); ++i) {
      line += (i > 0 ? "," : "") + CsvField(names[i]);
    }
    return line + "\n";
  }

  // Appends the next row of every selected field to `line`.
  void Row(std::string* line) {
    *line += csv_ ? "" : "{";
    bool first = true;
    for (const Selected& s : selected_) {
      if (!csv_) {
        *line += (first ? "" : ",") + parquet::JsonQuote(s.field->name) + ":";
        Json(*s.field, 0, 0, s.first_leaf, line);
      } else if (s.nested) {
        std::string json;
        Json(*s.field, 0, 0, s.first_leaf, &json);
        *line += (first ? "" : ",") + CsvField(json);
      } else {
        Csv(*s.field, 0, s.first_leaf, first, line);
      }
      first = false;
    }
    *line += csv_ ? "\n" : "}\n";
    // Entries a malformed file left over belong to no row: start the next row afresh.
    for (LeafCursor& c : *cursors_) {
      while (!c.at_end() && c.rep() != 0) ++c.next_entry;
    }
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

  void Skip(std::size_t first, std::size_t count) {
    for (std::size_t i = first; i < first + count; ++i) ++(*cursors_)[i].next_entry;
  }

  // The value of the leaf at cursor `i` (defined at its maximum level), as JSON or CSV text.
  std::string Value(std::size_t i, bool csv) {
    LeafCursor& c = (*cursors_)[i];
    ++c.next_entry;
    if (c.next_value >= c.data->num_values()) return csv ? "" : "null";
    const std::int64_t v = c.next_value++;
    parquet::ValueText text;
    if (c.geometry) {
      const std::string_view wkb = c.data->bytes_at(v);
      Result<std::string> wkt = geo::WkbToWkt(geo::AsBytes(wkb));
      // A value that is not WKB is shown as hex rather than hiding the row.
      text = {wkt.ok() ? *wkt : HexEncode(wkb), true};
    } else if (c.leaf->logical_type &&
               c.leaf->logical_type->kind == parquet::LogicalType::Kind::kFloat16 &&
               c.data->bytes_at(v).size() == 2) {
      text = Float16Text(c.data->bytes_at(v));
    } else {
      text = parquet::LeafValueText(*c.leaf, *c.data, v);
    }
    if (csv) return text.quoted ? CsvField(text.text) : text.text;
    return text.quoted ? parquet::JsonQuote(text.text) : text.text;
  }

  // Field `f` of any repetition, inside a parent defined at `parent_def` and repeated at
  // `parent_rep`, its leaves starting at cursor `first`.
  void Json(const parquet::Field& f, std::int16_t parent_def, std::int16_t parent_rep,
            std::size_t first, std::string* out) {
    if (f.repetition == parquet::Repetition::kRepeated) {
      // A repeated field outside a LIST/MAP annotation is a list of its instances.
      Repeated(f, parent_def, parent_rep, first, Shape::kArray, "", out);
      return;
    }
    const auto def =
        static_cast<std::int16_t>(parent_def + (f.repetition == parquet::Repetition::kOptional));
    if (f.repetition == parquet::Repetition::kOptional && (*cursors_)[first].def() < def) {
      *out += "null";
      Skip(first, CountLeaves(f));
      return;
    }
    if (!f.is_group()) {
      *out += Value(first, false);
      return;
    }
    // LIST and MAP annotate a group whose one child is the repeated field.
    const bool one_repeated_child =
        f.children.size() == 1 && f.children[0].repetition == parquet::Repetition::kRepeated;
    const bool is_map = IsKind(f, parquet::LogicalType::Kind::kMap) ||
                        f.converted_type == parquet::ConvertedType::kMapKeyValue;
    if (one_repeated_child && is_map && f.children[0].is_group()) {
      Repeated(f.children[0], def, parent_rep, first, Shape::kMap, f.name, out);
      return;
    }
    if (one_repeated_child && IsKind(f, parquet::LogicalType::Kind::kList)) {
      Repeated(f.children[0], def, parent_rep, first, Shape::kList, f.name, out);
      return;
    }
    Object(f, def, parent_rep, first, out);
  }

  // The children of group `g` (defined at `def`) as a JSON object.
  void Object(const parquet::Field& g, std::int16_t def, std::int16_t rep, std::size_t first,
              std::string* out) {
    *out += "{";
    std::size_t leaf = first;
    for (std::size_t i = 0; i < g.children.size(); ++i) {
      const parquet::Field& child = g.children[i];
      *out += (i == 0 ? "" : ",") + parquet::JsonQuote(child.name) + ":";
      Json(child, def, rep, leaf, out);
      leaf += CountLeaves(child);
    }
    *out += "}";
  }

  // The instances of repeated field `r` in one parent instance.
  void Repeated(const parquet::Field& r, std::int16_t parent_def, std::int16_t parent_rep,
                std::size_t first, Shape shape, const std::string& list_name, std::string* out) {
    const auto def = static_cast<std::int16_t>(parent_def + 1);
    const auto rep = static_cast<std::int16_t>(parent_rep + 1);
    const LeafCursor& lead = (*cursors_)[first];
    const char* open = shape == Shape::kMap ? "{" : "[";
    const char* close = shape == Shape::kMap ? "}" : "]";
    *out += open;
    if (lead.def() < def) {  // empty
      Skip(first, CountLeaves(r));
      *out += close;
      return;
    }
    bool first_element = true;
    do {
      if (!first_element) *out += ",";
      first_element = false;
      Element(r, def, rep, first, shape, list_name, out);
    } while (!lead.at_end() && lead.rep() == rep);
    *out += close;
  }

  // One instance of repeated field `r`, defined at `def`.
  void Element(const parquet::Field& r, std::int16_t def, std::int16_t rep, std::size_t first,
               Shape shape, const std::string& list_name, std::string* out) {
    if (!r.is_group()) {
      if ((*cursors_)[first].def() < def) {  // only in a malformed file
        *out += "null";
        Skip(first, 1);
      } else {
        *out += Value(first, false);
      }
      return;
    }
    if (shape == Shape::kMap) {
      std::string key;
      Json(r.children[0], def, rep, first, &key);
      *out += key.front() == '"' ? key : parquet::JsonQuote(key);
      *out += ":";
      if (r.children.size() > 1) {
        Json(r.children[1], def, rep, first + CountLeaves(r.children[0]), out);
      } else {
        *out += "null";  // a map without values (a set of keys)
      }
      return;
    }
    // The backward-compatibility rules of the LIST type: a repeated group of one field is that
    // field's value unless it is named "array" or "<list>_tuple" (then the group itself).
    const bool unwrap = shape == Shape::kList && r.children.size() == 1 && r.name != "array" &&
                        r.name != list_name + "_tuple";
    if (unwrap) {
      Json(r.children[0], def, rep, first, out);
      return;
    }
    // The element is the group itself, and a LIST or MAP group prints as one (old_list_structure
    // in parquet-testing: a LIST of a repeated LIST group named "array").
    const bool inner_repeated =
        r.children.size() == 1 && r.children[0].repetition == parquet::Repetition::kRepeated;
    if (inner_repeated && IsKind(r, parquet::LogicalType::Kind::kList)) {
      Repeated(r.children[0], def, rep, first, Shape::kList, r.name, out);
      return;
    }
    if (inner_repeated && r.children[0].is_group() &&
        (IsKind(r, parquet::LogicalType::Kind::kMap) ||
         r.converted_type == parquet::ConvertedType::kMapKeyValue)) {
      Repeated(r.children[0], def, rep, first, Shape::kMap, r.name, out);
      return;
    }
    Object(r, def, rep, first, out);
  }

  // CSV cells of a field without repeated parts: one per leaf, empty for nulls.
  void Csv(const parquet::Field& f, std::int16_t parent_def, std::size_t first, bool first_cell,
           std::string* line) {
    const auto def =
        static_cast<std::int16_t>(parent_def + (f.repetition == parquet::Repetition::kOptional));
    const std::size_t num_leaves = CountLeaves(f);
    if ((*cursors_)[first].def() < def) {
      for (std::size_t i = 0; i < num_leaves; ++i) *line += (first_cell && i == 0) ? "" : ",";
      Skip(first, num_leaves);
      return;
    }
    if (!f.is_group()) {
      *line += (first_cell ? "" : ",") + Value(first, true);
      return;
    }
    std::size_t leaf = first;
    for (std::size_t i = 0; i < f.children.size(); ++i) {
      Csv(f.children[i], def, leaf, first_cell && i == 0, line);
      leaf += CountLeaves(f.children[i]);
    }
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

Status Cat(Warehouse& warehouse, const CatArgs& args) {
  GEOLAKE_ASSIGN_OR_RETURN(std::shared_ptr<const io::RandomAccessFile> file,
                           warehouse.io().OpenRead(args.file));
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
        std::string message = "--columns: no column '" + name + "' in '" + args.file;
        message += "' (columns: ";
        for (std::size_t k = 0; k < fields.size(); ++k) {
          if (k > 0) message += ", ";
          message += fields[k].name;
        }
        message += ")";
        return Status::InvalidArgument(message);
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
    selected.push_back({&f, cursors.size(), HasRepeated(f)});
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
  // Every write is checked, and the final flush: a full disk or a closed pipe is an I/O
  // error (exit 5), never a short output that looks complete.
  const auto put = [](const std::string& text) -> Status {
    if (!text.empty() && std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
      return Status::IOError(std::string("write stdout: ") + std::strerror(errno));
    }
    return Status::OK();
  };
  if (csv) GEOLAKE_RETURN_NOT_OK(put(printer.Header()));
  std::int64_t printed = 0;
  parquet::Batch batch;
  parquet::DecodeBuffers buffers;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    if (args.limit >= 0 && printed >= args.limit) break;
    if (reader->row_group(rg).num_rows == 0) continue;
    GEOLAKE_RETURN_NOT_OK(reader->ReadRowGroupInto(rg, leaf_indices, &batch, &buffers));
    for (std::size_t i = 0; i < cursors.size(); ++i) {
      cursors[i].data = &batch.columns[i];
      cursors[i].next_entry = 0;
      cursors[i].next_value = 0;
    }
    const std::int64_t rows = reader->row_group(rg).num_rows;
    std::string out;
    for (std::int64_t row = 0; row < rows; ++row) {
      if (args.limit >= 0 && printed >= args.limit) break;
      // Every row has an entry in every leaf: a row count beyond the entries is not believed.
      if (std::all_of(cursors.begin(), cursors.end(),
                      [](const LeafCursor& c) { return c.at_end(); })) {
        break;
      }
      printer.Row(&out);
      ++printed;
      if (out.size() > (1 << 20)) {
        GEOLAKE_RETURN_NOT_OK(put(out));
        out.clear();
      }
    }
    GEOLAKE_RETURN_NOT_OK(put(out));
  }
  if (std::fflush(stdout) != 0) {
    return Status::IOError(std::string("flush stdout: ") + std::strerror(errno));
  }
  return Status::OK();
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
  *action = [args](const GlobalOptions& global) -> Status {
    GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, OpenWarehouse(global));
    return FinishCommand(global, warehouse.get(), Cat(*warehouse, *args));
  };
}

}  // namespace geolake::cli
