#include "geolake/table/location.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "geolake/table/transaction.h"

namespace geolake::table {
namespace {

namespace fs = std::filesystem;

// 255: the longest file name ext4, XFS, APFS and NTFS accept.
constexpr std::size_t kMaxNameBytes = 255;

bool AllowedChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

Status CheckName(std::string_view what, std::string_view name, const TableIdentifier& id) {
  auto refuse = [&](std::string_view why) {
    return Status::InvalidArgument("table '" + id.ToString() + "': " + std::string(what) + " '" +
                                   std::string(name) + "' " + std::string(why) +
                                   " (allowed: A-Z a-z 0-9 _ -, see docs/table-layout.md)");
  };
  if (name.empty()) return refuse("is empty");
  if (name.size() > kMaxNameBytes) return refuse("is longer than 255 characters");
  if (name.front() == '-') return refuse("starts with '-'");
  for (char c : name) {
    if (AllowedChar(c)) continue;
    const auto byte = static_cast<unsigned char>(c);
    return refuse(byte >= 0x21 && byte < 0x7f ? "holds '" + std::string(1, c) + "'"
                                              : fmt::format("holds the byte 0x{:02x}", byte));
  }
  return Status::OK();
}

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// Whole components of `path` starting with those of `dir`, compared with `eq`.
template <typename Eq>
bool ComponentsStartWith(std::string_view path, std::string_view dir, Eq eq) {
  const fs::path p{std::string(path)};
  const fs::path d{std::string(dir)};
  auto pi = p.begin();
  for (auto di = d.begin(); di != d.end(); ++di) {
    if (di->empty()) continue;  // a trailing separator
    if (pi == p.end() || !eq(pi->string(), di->string())) return false;
    ++pi;
  }
  return true;
}

}  // namespace

Status ValidateTableNameForLocation(const TableIdentifier& id) {
  GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(id));
  for (const std::string& level : id.ns.levels) {
    GEOLAKE_RETURN_NOT_OK(CheckName("namespace level", level, id));
  }
  return CheckName("name", id.name, id);
}

Result<std::string> DefaultTableLocation(std::string_view warehouse, const TableIdentifier& id) {
  if (warehouse.empty()) {
    return Status::InvalidArgument("table '" + id.ToString() + "': no warehouse for its location");
  }
  GEOLAKE_RETURN_NOT_OK(ValidateTableNameForLocation(id));
  GEOLAKE_ASSIGN_OR_RETURN(std::string location,
                           NormalizeLocalPath(warehouse).WithContext("warehouse"));
  for (const std::string& level : id.ns.levels) {
    if (location != "/") location += '/';
    location += level;
  }
  if (location != "/") location += '/';
  return location + id.name;
}

Result<std::string> NormalizeLocalPath(std::string_view path) {
  std::string_view rest = path;
  if (rest.starts_with("file:")) {
    rest.remove_prefix(5);
    // file:///a -> /a; file:/a -> /a; file://host/a is not local.
    if (rest.starts_with("//")) {
      rest.remove_prefix(2);
      if (!rest.starts_with("/")) {
        return Status::InvalidArgument("path '" + std::string(path) + "' is not a local file URI");
      }
    }
  } else if (rest.find("://") != std::string_view::npos) {
    return Status::InvalidArgument("path '" + std::string(path) + "' is not on the local disk");
  }
  std::error_code ec;
  const fs::path absolute = fs::absolute(fs::path(std::string(rest)), ec);
  if (ec) return Status::InvalidArgument("path '" + std::string(path) + "': " + ec.message());
  std::string normal = absolute.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

bool IsWithinPath(std::string_view path, std::string_view dir) {
  return ComponentsStartWith(path, dir,
                             [](const std::string& a, const std::string& b) { return a == b; });
}

bool LocationsOverlap(std::string_view a, std::string_view b) {
  auto fold = [](const std::string& x, const std::string& y) { return EqualFold(x, y); };
  return ComponentsStartWith(a, b, fold) || ComponentsStartWith(b, a, fold);
}

Result<std::vector<TableLocation>> ListTableLocations(Catalog& catalog, const io::FileIO& io) {
  std::vector<TableLocation> out;
  std::vector<Namespace> todo;
  GEOLAKE_ASSIGN_OR_RETURN(todo, catalog.ListNamespaces(Namespace{}));
  while (!todo.empty()) {
    const Namespace ns = std::move(todo.back());
    todo.pop_back();
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<Namespace> children, catalog.ListNamespaces(ns));
    for (Namespace& child : children) todo.push_back(std::move(child));
    GEOLAKE_ASSIGN_OR_RETURN(std::vector<TableIdentifier> ids, catalog.ListTables(ns));
    for (TableIdentifier& id : ids) {
      Result<Table> loaded = LoadTable(catalog, io, id);
      TableLocation entry;
      if (loaded.ok()) {
        entry.metadata_location = loaded->metadata_location;
        entry.location = NormalizeLocalPath(loaded->metadata.location).value_or("");
        entry.readable = true;
      } else if (loaded.status().code() == ErrorCode::kNotFound) {
        // Dropped between the list and the load, or its metadata file is gone; in the second
        // case its folder is still judged by where the catalog says the metadata was.
        Result<std::string> metadata = catalog.LoadTable(id);
        if (!metadata.ok()) continue;
        entry.metadata_location = *metadata;
      } else {
        entry.metadata_location = catalog.LoadTable(id).value_or("");
      }
      if (!entry.readable && !entry.metadata_location.empty()) {
        Result<std::string> file = NormalizeLocalPath(entry.metadata_location);
        if (file.ok()) entry.location = fs::path(*file).parent_path().parent_path().string();
      }
      entry.id = std::move(id);
      out.push_back(std::move(entry));
    }
  }
  return out;
}

Status CheckLocationFree(Catalog& catalog, const io::FileIO& io, const TableIdentifier& id,
                         const std::string& location) {
  Result<std::string> normal = NormalizeLocalPath(location);
  if (!normal.ok()) return Status::OK();  // an object store location: not a local folder
  GEOLAKE_ASSIGN_OR_RETURN(std::vector<TableLocation> tables, ListTableLocations(catalog, io));
  for (const TableLocation& other : tables) {
    if (other.id == id || other.location.empty()) continue;
    if (LocationsOverlap(*normal, other.location)) {
      const char* how = EqualFold(*normal, other.location)      ? "is the location of"
                        : IsWithinPath(*normal, other.location) ? "lies inside the location of"
                                                                : "contains the location of";
      return Status::InvalidArgument("location '" + *normal + "' " + how + " table '" +
                                     other.id.ToString() + "' (" + other.location +
                                     "); every table needs a folder of its own");
    }
  }
  return Status::OK();
}

}  // namespace geolake::table
