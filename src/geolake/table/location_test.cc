#include "geolake/table/location.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "geolake/table/transaction.h"
#include "geolake/testing/testing.h"

namespace geolake::table {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;

TableIdentifier Id(const std::string& ns, const std::string& name) {
  TableIdentifier id;
  // A level such as ".." cannot be parsed; it is built as one level, as a caller could.
  Result<Namespace> parsed = Namespace::Parse(ns);
  if (parsed.ok()) {
    id.ns = std::move(*parsed);
  } else {
    id.ns.levels = {ns};
  }
  id.name = name;
  return id;
}

NewTableOptions Options(const std::string& location) {
  NewTableOptions o;
  o.location = location;
  o.schema = std::make_shared<const Schema>(
      0, std::vector<NestedField>{NestedField::Required(1, "id", Type::Long())});
  return o;
}

TEST(TableLocationTest, NamesOfTheAllowedSetMapBelowTheWarehouse) {
  ASSERT_OK_AND_ASSIGN(std::string location,
                       DefaultTableLocation("/w/house/", Id("geo.osm", "roads_2024-v1")));
  EXPECT_EQ(location, "/w/house/geo/osm/roads_2024-v1");
  ASSERT_OK_AND_ASSIGN(location, DefaultTableLocation("/w/./x/../house", Id("A", "B")));
  EXPECT_EQ(location, "/w/house/A/B");
  // A relative warehouse is made absolute (an Iceberg location is a full path).
  ASSERT_OK_AND_ASSIGN(location, DefaultTableLocation("wh", Id("ns", "t")));
  EXPECT_EQ(location, (std::filesystem::current_path() / "wh/ns/t").string());
}

TEST(TableLocationTest, RefusesNamesThatLeaveTheWarehouseOrAliasAnotherFolder) {
  // ns./etc made /etc the table location; a/b.c was the folder of a.b.c.
  for (const auto& [ns, name] : std::vector<std::pair<std::string, std::string>>{
           {"ns", "/etc"},
           {"a/b", "c"},
           {"a", "b/c"},
           {"ns", ".."},
           {"..", "t"},
           {"ns", "a\\b"},
           {"ns", std::string("a\0b", 3)},
           {"ns", "tab\tname"},
           {"ns", "-rf"},
           {"ns", "caf\xc3\xa9"},
           {"ns", "a b"},
           {"ns", std::string(256, 'x')},
       }) {
    const TableIdentifier id = Id(ns, name);
    EXPECT_THAT(ValidateTableNameForLocation(id), IsError(ErrorCode::kInvalidArgument))
        << ns << "." << name;
    EXPECT_THAT(DefaultTableLocation("/w", id).status(), IsError(ErrorCode::kInvalidArgument))
        << ns << "." << name;
  }
  EXPECT_OK(ValidateTableNameForLocation(Id("ns", std::string(255, 'x'))));
  EXPECT_THAT(DefaultTableLocation("", Id("ns", "t")).status(),
              IsError(ErrorCode::kInvalidArgument));
}

TEST(TableLocationTest, OverlapComparesWholeComponentsIgnoringCase) {
  EXPECT_TRUE(LocationsOverlap("/w/a/b", "/w/a/b"));
  EXPECT_TRUE(LocationsOverlap("/w/a/b/c", "/w/a/b"));
  EXPECT_TRUE(LocationsOverlap("/w/a", "/w/a/b"));
  EXPECT_TRUE(LocationsOverlap("/w/Roads", "/w/roads"));
  EXPECT_FALSE(LocationsOverlap("/w/a/bc", "/w/a/b"));
  EXPECT_FALSE(LocationsOverlap("/w/a/b", "/w/a/c"));
  EXPECT_TRUE(IsWithinPath("/w/a/b", "/w"));
  EXPECT_FALSE(IsWithinPath("/wx/a", "/w"));
}

TEST(TableLocationTest, NormalizeLocalPathStripsFileUrisAndRefusesOtherSchemes) {
  EXPECT_EQ(NormalizeLocalPath("file:///a/b/").value(), "/a/b");
  EXPECT_EQ(NormalizeLocalPath("file:/a/./b").value(), "/a/b");
  EXPECT_THAT(NormalizeLocalPath("s3://bucket/t").status(), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(NormalizeLocalPath("file://host/a").status(), IsError(ErrorCode::kInvalidArgument));
}

// Two tables of one catalog never share, nest or contain each other's folder: remove-orphans
// on one would judge the other's files (issue 17, item 1).
TEST(TableLocationTest, CreateTableRefusesALocationAnotherTableUses) {
  const ::geolake::testing::TempDir dir("location");
  ASSERT_TRUE(dir.ok());
  auto catalog = MakeInMemoryCatalog();
  auto io = io::MakeLocalFileIO();
  const std::string w = dir.path();
  ASSERT_OK(EnsureNamespace(*catalog, Namespace::Parse("a.b").value()));
  ASSERT_OK(EnsureNamespace(*catalog, Namespace::Parse("x").value()));
  ASSERT_OK(CreateTable(*catalog, *io, Id("a.b", "c"), Options(w + "/a/b/c")).status());

  EXPECT_THAT(CreateTable(*catalog, *io, Id("x", "same"), Options(w + "/a/b/c/")).status(),
              IsErrorWith(ErrorCode::kInvalidArgument, "is the location of table 'a.b.c'"));
  EXPECT_THAT(
      CreateTable(*catalog, *io, Id("x", "inside"), Options(w + "/a/b/c/data/x")).status(),
      IsErrorWith(ErrorCode::kInvalidArgument, "lies inside the location of table 'a.b.c'"));
  EXPECT_THAT(CreateTable(*catalog, *io, Id("x", "outer"), Options(w + "/a")).status(),
              IsErrorWith(ErrorCode::kInvalidArgument, "contains the location of table 'a.b.c'"));
  EXPECT_THAT(CreateTable(*catalog, *io, Id("x", "case"), Options(w + "/a/B/C")).status(),
              IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(CreateTable(*catalog, *io, Id("x", "dots"), Options(w + "/x/../a/b/c")).status(),
              IsError(ErrorCode::kInvalidArgument));
  // An unsafe name is refused even with an explicit location.
  EXPECT_THAT(CreateTable(*catalog, *io, Id("x", "a/b"), Options(w + "/elsewhere")).status(),
              IsError(ErrorCode::kInvalidArgument));
  // Nothing was written for the refused tables.
  EXPECT_FALSE(std::filesystem::exists(w + "/a/metadata"));
  EXPECT_FALSE(std::filesystem::exists(w + "/elsewhere"));

  // A sibling folder is fine, and so is the same table name in another namespace.
  EXPECT_OK(CreateTable(*catalog, *io, Id("x", "c"), Options(w + "/a/b/cd")).status());
  ASSERT_OK_AND_ASSIGN(std::vector<TableLocation> all, ListTableLocations(*catalog, *io));
  ASSERT_EQ(all.size(), 2u);
  for (const TableLocation& t : all) EXPECT_TRUE(t.readable) << t.id.ToString();
}

// A table whose metadata file is gone still claims the folder its catalog entry points into.
TEST(TableLocationTest, AnUnreadableTableStillHoldsItsFolder) {
  const ::geolake::testing::TempDir dir("location");
  ASSERT_TRUE(dir.ok());
  auto catalog = MakeInMemoryCatalog();
  auto io = io::MakeLocalFileIO();
  ASSERT_OK(EnsureNamespace(*catalog, Namespace::Parse("ns").value()));
  ASSERT_OK(catalog->CreateTable(Id("ns", "lost"), dir.Join("t/metadata/00001-x.metadata.json")));
  ASSERT_OK_AND_ASSIGN(std::vector<TableLocation> all, ListTableLocations(*catalog, *io));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_FALSE(all[0].readable);
  EXPECT_EQ(all[0].location, dir.Join("t"));
  EXPECT_THAT(CreateTable(*catalog, *io, Id("ns", "new"), Options(dir.Join("t"))).status(),
              IsErrorWith(ErrorCode::kInvalidArgument, "table 'ns.lost'"));
}

}  // namespace
}  // namespace geolake::table
