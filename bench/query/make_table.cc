// Builds the Hilbert-clustered table bench/query/run.sh queries, through the library (so the
// bench does not depend on `geolake create/ingest`):
//   geolake_query_make_table SOURCE WAREHOUSE NS.TABLE ROWS_PER_FILE ROW_GROUP_ROWS PAGE_ROWS
// The catalog is SQLite at WAREHOUSE/catalog.db, as `geolake --warehouse WAREHOUSE` opens it.
#include <cstdio>
#include <string>

#include "geolake/catalog/sql_catalog.h"
#include "geolake/query/test_table.h"

int main(int argc, char** argv) {
  using namespace geolake;
  if (argc != 7) {
    std::fprintf(stderr,
                 "usage: %s SOURCE WAREHOUSE NS.TABLE ROWS_PER_FILE ROW_GROUP_ROWS PAGE_ROWS\n",
                 argv[0]);
    return 2;
  }
  const std::string warehouse = argv[2];
  auto catalog = catalog::OpenCatalog("", warehouse);
  auto id = table::TableIdentifier::Parse(argv[3]);
  if (!catalog.ok() || !id.ok()) {
    std::fprintf(stderr, "%s\n",
                 (!catalog.ok() ? catalog.status() : id.status()).ToString().c_str());
    return 1;
  }
  query::TestTableOptions options;
  options.source = argv[1];
  options.location = warehouse + "/" + id->ns.ToString() + "/" + id->name;
  options.rows_per_file = std::stoll(argv[4]);
  options.row_group_rows = std::stoll(argv[5]);
  options.page_rows = std::stoll(argv[6]);
  options.commits = 1;
  auto io = io::MakeLocalFileIO();
  auto built = query::BuildTestTable(**catalog, *io, *id, options);
  if (!built.ok()) {
    std::fprintf(stderr, "%s\n", built.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", built->table.metadata_location.c_str());
  return 0;
}
