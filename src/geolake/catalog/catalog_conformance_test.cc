// One behavioural suite for every Catalog implementation: the in-memory reference catalog of
// table/catalog.h, SQLite and (when built with it) PostgreSQL. Each backend must give the same
// answers and the same error codes.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "geolake/catalog/catalog_test_util.h"
#include "geolake/catalog/sql_catalog.h"
#include "geolake/table/catalog.h"
#include "geolake/testing/testing.h"

namespace geolake::catalog {
namespace {

using ::geolake::table::Catalog;
using ::geolake::table::Namespace;
using ::geolake::table::NamespaceProperties;
using ::geolake::table::TableIdentifier;
using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::geolake::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

Namespace Ns(const std::string& dotted) { return Namespace::Parse(dotted).value(); }
TableIdentifier Id(const std::string& dotted) { return TableIdentifier::Parse(dotted).value(); }

struct MemoryBackend {
  static constexpr bool kSharedStore = false;
  static Status SetUpSuite() { return Status::OK(); }
  static void TearDownSuite() {}
  Result<std::unique_ptr<Catalog>> Open(const std::string& name) {
    return table::MakeInMemoryCatalog(name);
  }
};

struct SqliteBackend {
  static constexpr bool kSharedStore = true;
  static Status SetUpSuite() { return Status::OK(); }
  static void TearDownSuite() {}
  Result<std::unique_ptr<Catalog>> Open(const std::string& name) {
    if (!dir.ok()) return Status::IOError("cannot create a temporary directory");
    SqlCatalogOptions options;
    options.catalog_name = name;
    return OpenCatalog("sqlite:" + dir.Join("catalog.db"), "", options);
  }
  testing::TempDir dir;
};

#if GEOLAKE_WITH_POSTGRES
struct PostgresBackend {
  static constexpr bool kSharedStore = true;
  static testing::PgTestServer& Server() {
    static testing::PgTestServer server;
    return server;
  }
  static Status SetUpSuite() { return Server().Start(); }
  static void TearDownSuite() { Server().Stop(); }
  // Every test uses its own catalog name on the one server: rows are scoped by catalog_name,
  // so tests cannot see each other's tables (which the scoping test checks directly).
  Result<std::unique_ptr<Catalog>> Open(const std::string& name) {
    SqlCatalogOptions options;
    options.catalog_name = prefix + name;
    return OpenCatalog(Server().uri(), "", options);
  }
  std::string prefix = "c" + std::to_string(NextId()) + "_";
  static int NextId() {
    static std::atomic<int> next{0};
    return next++;
  }
};
#endif

template <typename Backend>
class CatalogConformanceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { suite_status_ = Backend::SetUpSuite(); }
  static void TearDownTestSuite() { Backend::TearDownSuite(); }

  void SetUp() override {
    ASSERT_OK(suite_status_);
    ASSERT_OK_AND_ASSIGN(catalog_, backend_.Open("geolake"));
  }

  Catalog& catalog() { return *catalog_; }

  static inline Status suite_status_;
  Backend backend_;
  std::unique_ptr<Catalog> catalog_;
};

#if GEOLAKE_WITH_POSTGRES
using Backends = ::testing::Types<MemoryBackend, SqliteBackend, PostgresBackend>;
#else
using Backends = ::testing::Types<MemoryBackend, SqliteBackend>;
#endif

class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<T, MemoryBackend>) return "Memory";
    if constexpr (std::is_same_v<T, SqliteBackend>) return "Sqlite";
    return "Postgres";
  }
};

TYPED_TEST_SUITE(CatalogConformanceTest, Backends, BackendNames);

TYPED_TEST(CatalogConformanceTest, CreatesListsAndDropsNamespaces) {
  Catalog& cat = this->catalog();
  EXPECT_OK(cat.CreateNamespace(Ns("geo")));
  EXPECT_OK(cat.CreateNamespace(Ns("geo.osm")));
  EXPECT_OK(cat.CreateNamespace(Ns("raster")));
  EXPECT_THAT(cat.CreateNamespace(Ns("geo")), IsError(ErrorCode::kAlreadyExists));

  ASSERT_OK_AND_ASSIGN(auto top, cat.ListNamespaces(Namespace{}));
  EXPECT_THAT(top, ElementsAre(Ns("geo"), Ns("raster")));
  ASSERT_OK_AND_ASSIGN(auto below, cat.ListNamespaces(Ns("geo")));
  EXPECT_THAT(below, ElementsAre(Ns("geo.osm")));
  ASSERT_OK_AND_ASSIGN(auto leaf, cat.ListNamespaces(Ns("geo.osm")));
  EXPECT_THAT(leaf, IsEmpty());
  EXPECT_THAT(cat.ListNamespaces(Ns("nope")), IsError(ErrorCode::kNotFound));

  EXPECT_THAT(cat.NamespaceExists(Ns("geo.osm")), ::testing::Optional(true));
  ASSERT_OK_AND_ASSIGN(bool exists, cat.NamespaceExists(Ns("geo.osm.x")));
  EXPECT_FALSE(exists);

  // Not empty while geo.osm is below it; then drop bottom-up.
  EXPECT_THAT(cat.DropNamespace(Ns("geo")), IsErrorWith(ErrorCode::kInvalidArgument, "not empty"));
  EXPECT_OK(cat.DropNamespace(Ns("geo.osm")));
  EXPECT_OK(cat.DropNamespace(Ns("geo")));
  EXPECT_THAT(cat.DropNamespace(Ns("geo")), IsError(ErrorCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(top, cat.ListNamespaces(Namespace{}));
  EXPECT_THAT(top, ElementsAre(Ns("raster")));
}

TYPED_TEST(CatalogConformanceTest, RejectsInvalidNames) {
  Catalog& cat = this->catalog();
  EXPECT_THAT(cat.CreateNamespace(Namespace{}), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(cat.CreateNamespace(Namespace{{"a.b"}}),
              IsErrorWith(ErrorCode::kInvalidArgument, "contains '.'"));
  EXPECT_THAT(cat.CreateNamespace(Namespace{{"a", ""}}), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(cat.LoadTable(TableIdentifier{Namespace{}, "t"}),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(cat.LoadTable(TableIdentifier{Ns("a"), ""}), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TableIdentifier::Parse("justname"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(TableIdentifier::Parse("a..t"), IsError(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(TableIdentifier id, TableIdentifier::Parse("geo.osm.roads"));
  EXPECT_THAT(id.ns.levels, ElementsAre("geo", "osm"));
  EXPECT_EQ(id.name, "roads");
  EXPECT_EQ(id.ToString(), "geo.osm.roads");
}

TYPED_TEST(CatalogConformanceTest, TableMakesItsParentNamespacesExist) {
  Catalog& cat = this->catalog();
  ASSERT_OK(cat.CreateNamespace(Ns("a.b")));
  ASSERT_OK(cat.CreateTable(Id("a.b.t"), "m0"));
  EXPECT_THAT(cat.DropNamespace(Ns("a.b")), IsError(ErrorCode::kInvalidArgument));
  // "a" was never created, but a namespace below it holds a table.
  EXPECT_THAT(cat.NamespaceExists(Ns("a")), ::testing::Optional(true));
  ASSERT_OK_AND_ASSIGN(auto top, cat.ListNamespaces(Namespace{}));
  EXPECT_THAT(top, ElementsAre(Ns("a")));
  EXPECT_THAT(cat.DropNamespace(Ns("a")), IsErrorWith(ErrorCode::kInvalidArgument, "not empty"));
  // The properties row of a.b is gone once the table is, so nothing keeps "a" alive.
  ASSERT_OK(cat.DropTable(Id("a.b.t")));
  ASSERT_OK(cat.DropNamespace(Ns("a.b")));
  EXPECT_THAT(cat.NamespaceExists(Ns("a")), ::testing::Optional(false));
}

TYPED_TEST(CatalogConformanceTest, LikeWildcardsAndCaseDoNotMatchOtherNamespaces) {
  Catalog& cat = this->catalog();
  // "a_b" as a LIKE pattern would match "axb", and "geo" case-insensitively "GEO".
  ASSERT_OK(cat.CreateNamespace(Ns("axb.c")));
  ASSERT_OK(cat.CreateNamespace(Ns("GEO.c")));
  ASSERT_OK(cat.CreateNamespace(Ns("50%.c")));
  EXPECT_THAT(cat.NamespaceExists(Ns("a_b")), ::testing::Optional(false));
  EXPECT_THAT(cat.NamespaceExists(Ns("geo")), ::testing::Optional(false));
  EXPECT_THAT(cat.NamespaceExists(Ns("50%")), ::testing::Optional(true));
  EXPECT_THAT(cat.NamespaceExists(Ns("50")), ::testing::Optional(false));
  EXPECT_THAT(cat.ListNamespaces(Ns("a_b")), IsError(ErrorCode::kNotFound));
  ASSERT_OK(cat.CreateNamespace(Ns("a_b")));
  ASSERT_OK_AND_ASSIGN(auto below, cat.ListNamespaces(Ns("a_b")));
  EXPECT_THAT(below, IsEmpty());
}

TYPED_TEST(CatalogConformanceTest, StoresNamespaceProperties) {
  Catalog& cat = this->catalog();
  ASSERT_OK(cat.CreateNamespace(Ns("geo"), {{"owner", "ann"}, {"location", "/wh/geo"}}));
  ASSERT_OK_AND_ASSIGN(NamespaceProperties props, cat.LoadNamespaceProperties(Ns("geo")));
  EXPECT_EQ(props, (NamespaceProperties{{"location", "/wh/geo"}, {"owner", "ann"}}));

  ASSERT_OK(cat.UpdateNamespaceProperties(Ns("geo"), {{"owner", "bob"}, {"tier", "gold"}},
                                          {"location", "absent-key"}));
  ASSERT_OK_AND_ASSIGN(props, cat.LoadNamespaceProperties(Ns("geo")));
  EXPECT_EQ(props, (NamespaceProperties{{"owner", "bob"}, {"tier", "gold"}}));

  EXPECT_THAT(cat.UpdateNamespaceProperties(Ns("geo"), {{"exists", "no"}}, {}),
              IsErrorWith(ErrorCode::kInvalidArgument, "reserved"));
  EXPECT_THAT(cat.UpdateNamespaceProperties(Ns("geo"), {}, {"exists"}),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(cat.UpdateNamespaceProperties(Ns("geo"), {{"k", "v"}}, {"k"}),
              IsErrorWith(ErrorCode::kInvalidArgument, "both set and removed"));
  EXPECT_THAT(cat.CreateNamespace(Ns("x"), {{"exists", "true"}}),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(cat.LoadNamespaceProperties(Ns("nope")), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(cat.UpdateNamespaceProperties(Ns("nope"), {{"k", "v"}}, {}),
              IsError(ErrorCode::kNotFound));

  // A namespace that exists only through a table has no properties, but can get some.
  ASSERT_OK(cat.CreateNamespace(Ns("p.q")));
  ASSERT_OK_AND_ASSIGN(props, cat.LoadNamespaceProperties(Ns("p")));
  EXPECT_THAT(props, IsEmpty());
}

TYPED_TEST(CatalogConformanceTest, CreatesAndLoadsTables) {
  Catalog& cat = this->catalog();
  const TableIdentifier roads = Id("geo.roads");
  EXPECT_THAT(cat.CreateTable(roads, "/wh/geo/roads/metadata/00000-a.metadata.json"),
              IsErrorWith(ErrorCode::kNotFound, "namespace 'geo'"));
  ASSERT_OK(cat.CreateNamespace(Ns("geo")));
  ASSERT_OK(cat.CreateTable(roads, "/wh/geo/roads/metadata/00000-a.metadata.json"));
  EXPECT_THAT(cat.CreateTable(roads, "/elsewhere.json"), IsError(ErrorCode::kAlreadyExists));
  EXPECT_THAT(cat.CreateTable(Id("geo.empty"), ""), IsError(ErrorCode::kInvalidArgument));

  ASSERT_OK_AND_ASSIGN(std::string location, cat.LoadTable(roads));
  EXPECT_EQ(location, "/wh/geo/roads/metadata/00000-a.metadata.json");
  ASSERT_OK_AND_ASSIGN(table::TableEntry entry, cat.LoadTableEntry(roads));
  EXPECT_EQ(entry.previous_metadata_location, "");
  EXPECT_THAT(cat.TableExists(roads), ::testing::Optional(true));
  EXPECT_THAT(cat.TableExists(Id("geo.rivers")), ::testing::Optional(false));
  EXPECT_THAT(cat.LoadTable(Id("geo.rivers")),
              IsErrorWith(ErrorCode::kNotFound, "table 'geo.rivers'"));
}

TYPED_TEST(CatalogConformanceTest, ListsTablesOfOneNamespaceSorted) {
  Catalog& cat = this->catalog();
  ASSERT_OK(cat.CreateNamespace(Ns("geo")));
  ASSERT_OK(cat.CreateNamespace(Ns("geo.sub")));
  ASSERT_OK(cat.CreateTable(Id("geo.roads"), "m1"));
  ASSERT_OK(cat.CreateTable(Id("geo.Buildings"), "m2"));
  ASSERT_OK(cat.CreateTable(Id("geo.areas"), "m3"));
  ASSERT_OK(cat.CreateTable(Id("geo.sub.deep"), "m4"));
  ASSERT_OK_AND_ASSIGN(auto tables, cat.ListTables(Ns("geo")));
  EXPECT_THAT(tables, ElementsAre(Id("geo.Buildings"), Id("geo.areas"), Id("geo.roads")));
  ASSERT_OK_AND_ASSIGN(tables, cat.ListTables(Ns("geo.sub")));
  EXPECT_THAT(tables, ElementsAre(Id("geo.sub.deep")));
  EXPECT_THAT(cat.ListTables(Ns("nope")), IsError(ErrorCode::kNotFound));
}

TYPED_TEST(CatalogConformanceTest, DropsTables) {
  Catalog& cat = this->catalog();
  ASSERT_OK(cat.CreateNamespace(Ns("geo")));
  ASSERT_OK(cat.CreateTable(Id("geo.roads"), "m1"));
  ASSERT_OK(cat.DropTable(Id("geo.roads")));
  EXPECT_THAT(cat.LoadTable(Id("geo.roads")), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(cat.DropTable(Id("geo.roads")), IsError(ErrorCode::kNotFound));
  // The name is free again.
  EXPECT_OK(cat.CreateTable(Id("geo.roads"), "m2"));
  EXPECT_THAT(cat.LoadTable(Id("geo.roads")), ::testing::Optional(std::string("m2")));
}

TYPED_TEST(CatalogConformanceTest, RenamesTables) {
  Catalog& cat = this->catalog();
  ASSERT_OK(cat.CreateNamespace(Ns("a")));
  ASSERT_OK(cat.CreateNamespace(Ns("b")));
  ASSERT_OK(cat.CreateTable(Id("a.t"), "m1"));
  ASSERT_OK(cat.CommitTable(Id("a.t"), "m1", "m2"));
  ASSERT_OK(cat.CreateTable(Id("a.other"), "x1"));

  ASSERT_OK(cat.RenameTable(Id("a.t"), Id("b.u")));
  EXPECT_THAT(cat.LoadTable(Id("a.t")), IsError(ErrorCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(table::TableEntry entry, cat.LoadTableEntry(Id("b.u")));
  EXPECT_EQ(entry.metadata_location, "m2");
  EXPECT_EQ(entry.previous_metadata_location, "m1");

  EXPECT_THAT(cat.RenameTable(Id("b.u"), Id("a.other")), IsError(ErrorCode::kAlreadyExists));
  EXPECT_THAT(cat.RenameTable(Id("a.missing"), Id("a.x")), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(cat.RenameTable(Id("b.u"), Id("nope.u")),
              IsErrorWith(ErrorCode::kNotFound, "namespace 'nope'"));
  EXPECT_THAT(cat.LoadTable(Id("a.other")), ::testing::Optional(std::string("x1")));
}

TYPED_TEST(CatalogConformanceTest, CommitIsCompareAndSwap) {
  Catalog& cat = this->catalog();
  const TableIdentifier id = Id("geo.roads");
  ASSERT_OK(cat.CreateNamespace(Ns("geo")));
  ASSERT_OK(cat.CreateTable(id, "v0"));

  ASSERT_OK(cat.CommitTable(id, "v0", "v1"));
  ASSERT_OK_AND_ASSIGN(table::TableEntry entry, cat.LoadTableEntry(id));
  EXPECT_EQ(entry.metadata_location, "v1");
  EXPECT_EQ(entry.previous_metadata_location, "v0");

  // A writer that still believes v0 is current loses and learns what is.
  EXPECT_THAT(cat.CommitTable(id, "v0", "v1-other"), IsErrorWith(ErrorCode::kCommitConflict, "v1"));
  EXPECT_THAT(cat.LoadTable(id), ::testing::Optional(std::string("v1")));
  // Exact string comparison: no normalization of locations.
  EXPECT_THAT(cat.CommitTable(id, "v1 ", "v2"), IsError(ErrorCode::kCommitConflict));
  EXPECT_THAT(cat.CommitTable(id, "", "v2"), IsError(ErrorCode::kCommitConflict));

  EXPECT_THAT(cat.CommitTable(Id("geo.missing"), "v0", "v1"), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(cat.CommitTable(id, "v1", ""), IsError(ErrorCode::kInvalidArgument));

  ASSERT_OK(cat.CommitTable(id, "v1", "v2"));
  ASSERT_OK_AND_ASSIGN(entry, cat.LoadTableEntry(id));
  EXPECT_EQ(entry.metadata_location, "v2");
  EXPECT_EQ(entry.previous_metadata_location, "v1");
}

TYPED_TEST(CatalogConformanceTest, KeepsLongAndUnicodeLocations) {
  Catalog& cat = this->catalog();
  ASSERT_OK(cat.CreateNamespace(Ns("géo")));
  const std::string location =
      "s3://bucket/wärehouse/" + std::string(700, 'x') + "/00001-ü.metadata.json";
  ASSERT_OK(cat.CreateTable(Id("géo.straßen"), location));
  EXPECT_THAT(cat.LoadTable(Id("géo.straßen")), ::testing::Optional(location));
  ASSERT_OK_AND_ASSIGN(auto tables, cat.ListTables(Ns("géo")));
  EXPECT_THAT(tables, ElementsAre(Id("géo.straßen")));
}

TYPED_TEST(CatalogConformanceTest, CatalogNameScopesRows) {
  if constexpr (!TypeParam::kSharedStore) {
    GTEST_SKIP() << "separate in-memory catalogs share nothing by construction";
  } else {
    Catalog& first = this->catalog();
    ASSERT_OK_AND_ASSIGN(auto second, this->backend_.Open("other"));
    EXPECT_NE(first.name(), second->name());
    ASSERT_OK(first.CreateNamespace(Ns("geo")));
    ASSERT_OK(first.CreateTable(Id("geo.roads"), "m1"));
    EXPECT_THAT(second->NamespaceExists(Ns("geo")), ::testing::Optional(false));
    EXPECT_THAT(second->LoadTable(Id("geo.roads")), IsError(ErrorCode::kNotFound));
    ASSERT_OK(second->CreateNamespace(Ns("geo")));
    ASSERT_OK(second->CreateTable(Id("geo.roads"), "other-m1"));
    EXPECT_THAT(first.LoadTable(Id("geo.roads")), ::testing::Optional(std::string("m1")));
    // A second handle with the same name sees the same rows.
    ASSERT_OK_AND_ASSIGN(auto again, this->backend_.Open("geolake"));
    EXPECT_THAT(again->LoadTable(Id("geo.roads")), ::testing::Optional(std::string("m1")));
  }
}

TYPED_TEST(CatalogConformanceTest, EnsureNamespaceToleratesExisting) {
  Catalog& cat = this->catalog();
  EXPECT_OK(table::EnsureNamespace(cat, Ns("geo")));
  EXPECT_OK(table::EnsureNamespace(cat, Ns("geo")));
  EXPECT_THAT(cat.NamespaceExists(Ns("geo")), ::testing::Optional(true));
}

// Eight threads create the same namespace, then the same table: exactly one wins each race and
// the others get kAlreadyExists (PostgreSQL: a unique violation; SQLite: BEGIN IMMEDIATE).
TYPED_TEST(CatalogConformanceTest, ConcurrentCreatorsHaveExactlyOneWinner) {
  constexpr int kThreads = 8;
  Catalog& cat = this->catalog();
  std::vector<Status> ns_results(kThreads);
  std::vector<Status> table_results(kThreads);
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i]() {
        ns_results[i] = cat.CreateNamespace(Ns("geo"), {{"creator", std::to_string(i)}});
      });
    }
    for (std::thread& t : threads) t.join();
  }
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back(
          [&, i]() { table_results[i] = cat.CreateTable(Id("geo.t"), "m-" + std::to_string(i)); });
    }
    for (std::thread& t : threads) t.join();
  }
  int ns_winner = -1;
  int table_winner = -1;
  for (int i = 0; i < kThreads; ++i) {
    if (ns_results[i].ok()) {
      EXPECT_EQ(ns_winner, -1) << "two namespace creators succeeded";
      ns_winner = i;
    } else {
      EXPECT_THAT(ns_results[i], IsError(ErrorCode::kAlreadyExists));
    }
    if (table_results[i].ok()) {
      EXPECT_EQ(table_winner, -1) << "two table creators succeeded";
      table_winner = i;
    } else {
      EXPECT_THAT(table_results[i], IsError(ErrorCode::kAlreadyExists));
    }
  }
  ASSERT_NE(ns_winner, -1);
  ASSERT_NE(table_winner, -1);
  EXPECT_THAT(cat.LoadNamespaceProperties(Ns("geo")),
              ::testing::Optional(NamespaceProperties{{"creator", std::to_string(ns_winner)}}));
  EXPECT_THAT(cat.LoadTable(Id("geo.t")), ::testing::Optional("m-" + std::to_string(table_winner)));
}

// 8 threads x 50 commits each race on one table, each retrying after reloading on conflict.
TYPED_TEST(CatalogConformanceTest, ConcurrentCommitsLoseNoSwap) {
  constexpr int kThreads = 8;
  constexpr int kCommitsPerThread = 50;
  constexpr int kTotal = kThreads * kCommitsPerThread;
  Catalog& cat = this->catalog();
  const TableIdentifier id = Id("race.t");
  ASSERT_OK(cat.CreateNamespace(Ns("race")));
  ASSERT_OK(cat.CreateTable(id, "s0-initial"));

  const testing::RaceStats stats = testing::RaceCommits(cat, id, kThreads, kCommitsPerThread, 0);
  ASSERT_EQ(stats.error, "");
  std::printf("[%s] %d threads x %d commits: %lld attempts, %lld conflicts\n",
              BackendNames::GetName<TypeParam>(0).c_str(), kThreads, kCommitsPerThread,
              static_cast<long long>(stats.attempts), static_cast<long long>(stats.conflicts));
  ASSERT_OK_AND_ASSIGN(table::TableEntry entry, cat.LoadTableEntry(id));
  EXPECT_EQ(testing::VerifyRace(stats, kTotal, entry), "");
}

}  // namespace
}  // namespace geolake::catalog
