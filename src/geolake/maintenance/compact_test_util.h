/// \file
/// Test support (include only from *_test.cc files): a geolake table of many small data files
/// written through the ingest's own writer (pipeline::PartitionedWriter) and appended one file
/// per commit, the way many small ingests leave a table; and every row of a snapshot read back
/// through the query scan, as text, to compare tables before and after maintenance.
#pragma once

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "geolake/core/hex.h"
#include "geolake/geo/wkb.h"
#include "geolake/io/file_io.h"
#include "geolake/layout/table_layout.h"
#include "geolake/pipeline/memory_budget.h"
#include "geolake/pipeline/table_writer.h"
#include "geolake/query/scan.h"
#include "geolake/table/catalog.h"
#include "geolake/table/transaction.h"

namespace geolake::maintenance::testing {

using geoparquet::FieldType;

/// The attributes of the test tables: id (unique), name (null every 7th row) and a double.
inline std::vector<geoparquet::FieldDef> TestFields() {
  return {{"id", FieldType::kInt64}, {"name", FieldType::kString}, {"v", FieldType::kDouble}};
}

/// \brief Create `id` at `location` with quadkey zoom 1 (cells 0..3) or unpartitioned.
/// `unsorted` drops the layout's sort order (geo_hilbert), as a table made elsewhere may lack it.
inline Result<table::Table> CreateTestTable(table::Catalog& catalog, const io::FileIO& io,
                                            const table::TableIdentifier& id,
                                            const std::string& location, bool partitioned,
                                            const std::map<std::string, std::string>& props = {},
                                            bool unsorted = false) {
  layout::LayoutOptions layout;
  layout.partition = partitioned ? layout::PartitionScheme{layout::PartitionKind::kQuadkey, 1}
                                 : layout::PartitionScheme{layout::PartitionKind::kNone, 0};
  GEOLAKE_ASSIGN_OR_RETURN(table::NewTableOptions options,
                           layout::LayoutNewTable(TestFields(), layout));
  options.location = location;
  if (unsorted) options.sort_order = nullptr;
  for (const auto& [k, v] : props) options.properties[k] = v;
  GEOLAKE_RETURN_NOT_OK(table::EnsureNamespace(catalog, id.ns));
  return table::CreateTable(catalog, io, id, options);
}

/// \brief `rows` random points (ids from `first_id`) inside the lon/lat box, as the writer
/// takes them.
inline std::pair<geoparquet::FeatureBatch, std::vector<geo::WkbSummary>> RandomPoints(
    std::int64_t first_id, int rows, geo::Envelope box, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> ux(box.xmin, box.xmax), uy(box.ymin, box.ymax);
  geoparquet::FeatureBatch b;
  b.Reset(TestFields());
  std::vector<geo::WkbSummary> summaries;
  for (int i = 0; i < rows; ++i) {
    const std::int64_t id = first_id + i;
    b.columns[0].valid.push_back(1);
    b.columns[0].ints.push_back(id);
    const bool null_name = id % 7 == 0;
    b.columns[1].valid.push_back(null_name ? 0 : 1);
    if (!null_name) b.columns[1].bytes += "n" + std::to_string(id);
    b.columns[1].offsets.push_back(static_cast<std::int64_t>(b.columns[1].bytes.size()));
    b.columns[2].valid.push_back(1);
    b.columns[2].doubles.push_back(static_cast<double>(id) * 0.5);
    const std::string wkb = geo::WriteWkb(geo::FlatGeometry::MakePoint(ux(rng), uy(rng)));
    b.wkb += wkb;
    b.wkb_offsets.push_back(static_cast<std::int64_t>(b.wkb.size()));
    b.geometry_valid.push_back(1);
    b.feature_index.push_back(i);
    summaries.push_back(*geo::SummarizeWkb(geo::AsBytes(wkb)));
  }
  return {std::move(b), std::move(summaries)};
}

/// \brief The lon/lat box of quadkey zoom-1 cell `cell` ("0" NW, "1" NE, "2" SW, "3" SE), kept
/// away from the edges so every point's cell is `cell`.
inline geo::Envelope CellBox(const std::string& cell) {
  const double x0 = (cell == "0" || cell == "2") ? -170 : 10;
  const double y0 = (cell == "0" || cell == "1") ? 10 : -80;
  return geo::Envelope{x0, y0, x0 + 160, y0 + 70};
}

/// \brief Write `rows` random points of one cell ("" = unpartitioned) as one data file through
/// the ingest's writer, and append it in a commit of its own. Returns the file.
inline Result<pipeline::WrittenFile> AppendSmallFile(table::Catalog& catalog, const io::FileIO& io,
                                                     const table::TableIdentifier& id,
                                                     std::int64_t first_id, int rows,
                                                     const std::string& cell, std::uint64_t seed) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(catalog, io, id));
  GEOLAKE_ASSIGN_OR_RETURN(pipeline::TableWriteOptions options,
                           pipeline::TableWriteOptionsFor(t.metadata));
  pipeline::MemoryBudget budget(std::int64_t{256} << 20);
  pipeline::PartitionedWriter writer(&options, &io, &budget, std::int64_t{256} << 20);
  auto [batch, summaries] = RandomPoints(
      first_id, rows, cell.empty() ? geo::Envelope{-170, -80, 170, 80} : CellBox(cell), seed);
  std::optional<std::string> c;
  if (!cell.empty()) c = cell;
  GEOLAKE_RETURN_NOT_OK(writer.Add(c, std::move(batch), std::move(summaries)));
  GEOLAKE_RETURN_NOT_OK(writer.FinishAll());
  std::vector<pipeline::WrittenFile> files = writer.TakeWritten();
  if (files.size() != 1) return Status::Internal("expected one file");
  table::AppendFiles append(&catalog, &io, id);
  append.AddFile(files[0].data_file);
  GEOLAKE_RETURN_NOT_OK(append.Commit().status());
  return files[0];
}

/// \brief A catalog that runs `before_commit` (once) just before forwarding a commit, so a
/// test can make another writer win the race between a transaction's base load and its swap.
class RacingCatalog : public table::Catalog {
 public:
  explicit RacingCatalog(table::Catalog* inner) : inner_(inner) {}
  std::function<void()> before_commit;
  int commits = 0;

  const std::string& name() const override { return inner_->name(); }
  Status CreateNamespace(const table::Namespace& ns, const table::NamespaceProperties& p) override {
    return inner_->CreateNamespace(ns, p);
  }
  Result<std::vector<table::Namespace>> ListNamespaces(const table::Namespace& p) override {
    return inner_->ListNamespaces(p);
  }
  Result<bool> NamespaceExists(const table::Namespace& ns) override {
    return inner_->NamespaceExists(ns);
  }
  Status DropNamespace(const table::Namespace& ns) override { return inner_->DropNamespace(ns); }
  Result<table::NamespaceProperties> LoadNamespaceProperties(const table::Namespace& ns) override {
    return inner_->LoadNamespaceProperties(ns);
  }
  Status UpdateNamespaceProperties(const table::Namespace& ns, const table::NamespaceProperties& u,
                                   const std::vector<std::string>& r) override {
    return inner_->UpdateNamespaceProperties(ns, u, r);
  }
  Status CreateTable(const table::TableIdentifier& id, const std::string& loc) override {
    return inner_->CreateTable(id, loc);
  }
  Result<std::string> LoadTable(const table::TableIdentifier& id) override {
    return inner_->LoadTable(id);
  }
  Result<table::TableEntry> LoadTableEntry(const table::TableIdentifier& id) override {
    return inner_->LoadTableEntry(id);
  }
  Result<bool> TableExists(const table::TableIdentifier& id) override {
    return inner_->TableExists(id);
  }
  Result<std::vector<table::TableIdentifier>> ListTables(const table::Namespace& ns) override {
    return inner_->ListTables(ns);
  }
  Status DropTable(const table::TableIdentifier& id) override { return inner_->DropTable(id); }
  Status RenameTable(const table::TableIdentifier& a, const table::TableIdentifier& b) override {
    return inner_->RenameTable(a, b);
  }
  Status CommitTable(const table::TableIdentifier& id, const std::string& expected,
                     const std::string& next) override {
    ++commits;
    if (before_commit) {
      auto f = std::move(before_commit);
      before_commit = nullptr;
      f();
    }
    return inner_->CommitTable(id, expected, next);
  }

 private:
  table::Catalog* inner_;
};

/// \brief Collects every row a query returns as text "id|name|v|wkb-hex".
class TextSink : public query::RowSink {
 public:
  Status Begin(const query::OutputLayout&) override { return Status::OK(); }
  Status Write(std::string_view, const geoparquet::FeatureBatch& rows) override {
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows.num_rows()); ++r) {
      std::string line;
      for (const geoparquet::Column& c : rows.columns) {
        if (c.valid[r] == 0) {
          line += "null|";
          continue;
        }
        switch (c.type) {
          case FieldType::kDouble:
            line += std::to_string(c.doubles[r]) + "|";
            break;
          case FieldType::kString:
          case FieldType::kBinary:
            line += std::string(c.StringAt(r)) + "|";
            break;
          default:
            line += std::to_string(c.ints[r]) + "|";
            break;
        }
      }
      if (rows.geometry_valid[r] != 0) {
        line += HexEncode(rows.GeometryAt(r));
      }
      lines.push_back(std::move(line));
    }
    return Status::OK();
  }
  Status Finish() override { return Status::OK(); }
  std::vector<std::string> lines;
};

/// \brief Every row of the table's current snapshot (or `snapshot_id`), in table order.
inline Result<std::vector<std::string>> TableRows(table::Catalog& catalog, const io::FileIO& io,
                                                  const table::TableIdentifier& id,
                                                  std::optional<std::int64_t> snapshot_id = {}) {
  GEOLAKE_ASSIGN_OR_RETURN(table::Table t, table::LoadTable(catalog, io, id));
  query::QueryOptions q;
  q.snapshot_id = snapshot_id;
  TextSink sink;
  GEOLAKE_RETURN_NOT_OK(query::RunQuery(io, t.metadata, q, &sink).status());
  return sink.lines;
}

/// \brief The same rows, sorted (tables compared as multisets).
inline Result<std::vector<std::string>> SortedRows(table::Catalog& catalog, const io::FileIO& io,
                                                   const table::TableIdentifier& id,
                                                   std::optional<std::int64_t> snapshot_id = {}) {
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<std::string> rows, TableRows(catalog, io, id, snapshot_id));
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace geolake::maintenance::testing
