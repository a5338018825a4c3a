/// \file
/// Test-only (not installed): the fixture every ops test starts from (a scratch folder, an
/// in-memory catalog, local FileIO, a 2-thread executor and the OpEnv over them, a GEOS
/// context for checks) and a reader for the operations' CSV output.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "geolake/core/metrics.h"
#include "geolake/core/thread_pool.h"
#include "geolake/geo/geo_context.h"
#include "geolake/io/file_io.h"
#include "geolake/ops/runner.h"
#include "geolake/query/output.h"
#include "geolake/query/scan.h"
#include "geolake/table/catalog.h"
#include "geolake/table/transaction.h"
#include "geolake/testing/on_write_io.h"
#include "geolake/testing/testing.h"

namespace geolake::ops {

/// \brief Base fixture of the ops tests: dir_ is a fresh folder per test (removed after it),
/// env_ points at the catalog, FileIO, executor and metrics, with its warehouse in dir_/wh.
class OpTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("geolake_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) +
            "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    catalog_ = table::MakeInMemoryCatalog();
    io_ = io::MakeLocalFileIO();
    UsePool(2);
    env_.catalog = catalog_.get();
    env_.io = io_.get();
    env_.metrics = &metrics_;
    env_.warehouse = (dir_ / "wh").string();
    ASSERT_OK_AND_ASSIGN(geo_, geo::GeoContext::Make());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// \brief Run the operations on an executor of `threads` threads from now on.
  void UsePool(int threads) {
    pool_ = std::move(ThreadPool::Make(threads).value());
    env_.executor = pool_.get();
  }

  std::filesystem::path dir_;
  std::unique_ptr<table::Catalog> catalog_;
  std::unique_ptr<io::FileIO> io_;
  std::unique_ptr<ThreadPool> pool_;
  Metrics metrics_;
  OpEnv env_;
  std::unique_ptr<geo::GeoContext> geo_;
};

/// \brief The fields of one line of our CSV output: quoted fields may hold commas and doubled
/// quotes.
inline std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        out.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

/// \brief The rows of a CSV output: column name -> value ("" for null), "geometry" as WKT.
inline std::vector<std::map<std::string, std::string>> ReadCsvRows(const std::string& path) {
  std::vector<std::map<std::string, std::string>> rows;
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = CsvFields(line);
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size(); ++i) {
      row[header[i]] = i < fields.size() ? fields[i] : "";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

using ::geolake::testing::OnWriteIO;

/// \brief The rows of table `name` (current snapshot) as CSV lines without the header, the
/// geometry as WKT last; a multiset, as the order of a table's rows is not defined.
inline std::multiset<std::string> TableLines(table::Catalog& catalog, const io::FileIO& io,
                                             const std::string& name,
                                             const std::filesystem::path& scratch) {
  std::multiset<std::string> lines;
  auto t = table::LoadTable(catalog, io, *table::TableIdentifier::Parse(name));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return lines;
  const std::string csv = (scratch / (name + ".lines.csv")).string();
  auto sink = query::MakeOutputSink(query::OutputFormat::kCsv, csv, io);
  EXPECT_TRUE(sink.ok()) << sink.status().ToString();
  if (!sink.ok()) return lines;
  EXPECT_TRUE(query::RunQuery(io, t->metadata, {}, sink->get()).ok());
  sink->reset();
  std::ifstream in(csv);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (!header) lines.insert(line);
    header = false;
  }
  std::filesystem::remove(csv);
  return lines;
}

}  // namespace geolake::ops
