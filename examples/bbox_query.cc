// Embed geolake: open a warehouse, ingest a vector file into a table, query a bbox and print
// the rows. Usage: bbox_query WAREHOUSE_DIR SOURCE X1,Y1,X2,Y2
//
// Everything comes from the one public header and the geolake::geolake target (or
// `pkg-config geolake`); see docs/api.md.
#include <geolake/geo/wkb.h>
#include <geolake/geolake.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Prints each row as "name<TAB>WKT"; the attribute printed is the first string column.
class PrintRows : public geolake::query::RowSink {
 public:
  geolake::Status Begin(const geolake::query::OutputLayout& layout) override {
    for (std::size_t i = 0; i < layout.fields.size(); ++i) {
      if (layout.fields[i].type == geolake::geoparquet::FieldType::kString) {
        label_ = static_cast<int>(i);
        break;
      }
    }
    return geolake::Status::OK();
  }
  geolake::Status Write(std::string_view /*file*/,
                        const geolake::geoparquet::FeatureBatch& rows) override {
    for (std::int64_t row = 0; row < rows.num_rows(); ++row) {
      const auto r = static_cast<std::size_t>(row);
      std::string label = "-";
      if (label_ >= 0) {
        const geolake::geoparquet::Column& column = rows.columns[static_cast<std::size_t>(label_)];
        if (column.valid[r] != 0) label = std::string(column.StringAt(r));
      }
      std::string wkt = "EMPTY";
      if (rows.geometry_valid[r] != 0) {
        GEOLAKE_ASSIGN_OR_RETURN(wkt, geolake::geo::WkbToWkt(rows.GeometryAt(r), 6));
      }
      std::printf("%s\t%s\n", label.c_str(), wkt.c_str());
    }
    return geolake::Status::OK();
  }
  geolake::Status Finish() override { return geolake::Status::OK(); }

 private:
  int label_ = -1;
};

geolake::Result<geolake::geo::Envelope> ParseBox(const std::string& text) {
  std::vector<double> v;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    v.push_back(std::strtod(part.c_str(), nullptr));
  }
  if (v.size() != 4) {
    return geolake::Status::InvalidArgument("bbox '" + text + "': want X1,Y1,X2,Y2");
  }
  return geolake::geo::Envelope{v[0], v[1], v[2], v[3]};
}

geolake::Status Run(const std::string& location, const std::string& source,
                    const std::string& box) {
  GEOLAKE_ASSIGN_OR_RETURN(geolake::geo::Envelope bbox, ParseBox(box));
  // A library user decides about signals; this program lets Ctrl-C stop a long ingest.
  geolake::WarehouseOptions options;
  options.handle_signals = true;
  GEOLAKE_ASSIGN_OR_RETURN(auto warehouse, geolake::Warehouse::Open(location, options));

  geolake::IngestOptions ingest;
  ingest.create = true;  // the table's schema comes from the source
  geolake::pipeline::IngestSummary summary;
  GEOLAKE_RETURN_NOT_OK(warehouse->Ingest("example.places", {source}, ingest, &summary));
  std::fprintf(stderr, "ingested %lld rows (%lld skipped units) with %d threads\n",
               static_cast<long long>(summary.rows_committed),
               static_cast<long long>(summary.units_skipped), warehouse->executor()->size());

  geolake::query::QueryOptions query;
  query.bbox = bbox;
  PrintRows sink;
  GEOLAKE_ASSIGN_OR_RETURN(geolake::query::QueryExplain explain,
                           warehouse->Query("example.places", query, &sink));
  std::fprintf(
      stderr, "%lld rows in the box; %lld of %lld files read (geolake %s)\n",
      static_cast<long long>(explain.rows_returned), static_cast<long long>(explain.files.kept()),
      static_cast<long long>(explain.files.considered), std::string(geolake::kVersion).c_str());
  return geolake::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s WAREHOUSE_DIR SOURCE X1,Y1,X2,Y2\n", argv[0]);
    return 2;
  }
  const geolake::Status status = Run(argv[1], argv[2], argv[3]);
  if (!status.ok()) {
    std::fprintf(stderr, "bbox_query: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
