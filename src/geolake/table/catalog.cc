#include "geolake/table/catalog.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

namespace geolake::table {

namespace {

std::string Quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

}  // namespace

Result<Namespace> Namespace::Parse(std::string_view dotted) {
  Namespace ns;
  if (dotted.empty()) return ns;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    const std::string_view level =
        dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (level.empty()) {
      return Status::InvalidArgument("namespace " + Quoted(dotted) + ": empty level");
    }
    ns.levels.emplace_back(level);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return ns;
}

std::string Namespace::ToString() const {
  std::string out;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (i > 0) out += '.';
    out += levels[i];
  }
  return out;
}

bool Namespace::Contains(const Namespace& other) const {
  return other.levels.size() >= levels.size() &&
         std::equal(levels.begin(), levels.end(), other.levels.begin());
}

Result<TableIdentifier> TableIdentifier::Parse(std::string_view dotted) {
  const std::size_t dot = dotted.rfind('.');
  if (dot == std::string_view::npos) {
    return Status::InvalidArgument("table identifier " + Quoted(dotted) +
                                   ": expected 'namespace.name'");
  }
  TableIdentifier id;
  GEOLAKE_ASSIGN_OR_RETURN(id.ns, Namespace::Parse(dotted.substr(0, dot)));
  id.name = std::string(dotted.substr(dot + 1));
  GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(id));
  return id;
}

std::string TableIdentifier::ToString() const {
  std::string out = ns.ToString();
  out += '.';
  out += name;
  return out;
}

Status ValidateNamespace(const Namespace& ns) {
  if (ns.levels.empty()) return Status::InvalidArgument("namespace: must have at least one level");
  for (const std::string& level : ns.levels) {
    if (level.empty()) {
      return Status::InvalidArgument("namespace " + Quoted(ns.ToString()) + ": empty level");
    }
    if (level.find('.') != std::string::npos) {
      return Status::InvalidArgument("namespace level " + Quoted(level) + ": contains '.'");
    }
  }
  return Status::OK();
}

Status ValidateIdentifier(const TableIdentifier& id) {
  GEOLAKE_RETURN_NOT_OK_CTX(ValidateNamespace(id.ns), "table " + Quoted(id.ToString()));
  if (id.name.empty()) {
    return Status::InvalidArgument("table " + Quoted(id.ToString()) + ": empty table name");
  }
  return Status::OK();
}

bool CommitNotApplied(const Status& status) {
  return status.code() == ErrorCode::kIOError &&
         status.message().find(kNotCommittedMark) != std::string::npos;
}

Status EnsureNamespace(Catalog& catalog, const Namespace& ns) {
  GEOLAKE_ASSIGN_OR_RETURN(const bool exists, catalog.NamespaceExists(ns));
  if (exists) return Status::OK();
  Status st = catalog.CreateNamespace(ns);
  if (st.code() == ErrorCode::kAlreadyExists) return Status::OK();  // lost a benign race
  return st;
}

namespace {

/// The reference semantics of the Catalog interface, kept deliberately simple: one mutex over
/// two maps. The SQL catalogs are tested against the same expectations.
class InMemoryCatalog final : public Catalog {
 public:
  explicit InMemoryCatalog(std::string name) : name_(std::move(name)) {}

  const std::string& name() const override { return name_; }

  Status CreateNamespace(const Namespace& ns, const NamespaceProperties& properties) override {
    GEOLAKE_RETURN_NOT_OK(ValidateNamespace(ns));
    if (properties.count("exists") > 0) return ReservedKey(ns);
    std::lock_guard lock(mu_);
    if (ExistsLocked(ns)) return Status::AlreadyExists("namespace " + Quoted(ns.ToString()));
    namespaces_[ns] = properties;
    return Status::OK();
  }

  Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) override {
    if (!parent.empty()) GEOLAKE_RETURN_NOT_OK(ValidateNamespace(parent));
    std::lock_guard lock(mu_);
    if (!parent.empty() && !ExistsLocked(parent)) return NoNamespace(parent);
    std::set<Namespace> children;
    auto add = [&](const Namespace& ns) {
      if (ns.levels.size() > parent.levels.size() && parent.Contains(ns)) {
        Namespace child;
        child.levels.assign(ns.levels.begin(),
                            ns.levels.begin() + static_cast<long>(parent.levels.size()) + 1);
        children.insert(std::move(child));
      }
    };
    for (const auto& [ns, props] : namespaces_) add(ns);
    for (const auto& [id, entry] : tables_) add(id.ns);
    return std::vector<Namespace>(children.begin(), children.end());
  }

  Result<bool> NamespaceExists(const Namespace& ns) override {
    GEOLAKE_RETURN_NOT_OK(ValidateNamespace(ns));
    std::lock_guard lock(mu_);
    return ExistsLocked(ns);
  }

  Status DropNamespace(const Namespace& ns) override {
    GEOLAKE_RETURN_NOT_OK(ValidateNamespace(ns));
    std::lock_guard lock(mu_);
    if (!ExistsLocked(ns)) return NoNamespace(ns);
    for (const auto& [id, entry] : tables_) {
      if (ns.Contains(id.ns)) return NotEmpty(ns);
    }
    for (const auto& [other, props] : namespaces_) {
      if (other != ns && ns.Contains(other)) return NotEmpty(ns);
    }
    namespaces_.erase(ns);
    return Status::OK();
  }

  Result<NamespaceProperties> LoadNamespaceProperties(const Namespace& ns) override {
    GEOLAKE_RETURN_NOT_OK(ValidateNamespace(ns));
    std::lock_guard lock(mu_);
    if (!ExistsLocked(ns)) return NoNamespace(ns);
    auto it = namespaces_.find(ns);
    return it == namespaces_.end() ? NamespaceProperties{} : it->second;
  }

  Status UpdateNamespaceProperties(const Namespace& ns, const NamespaceProperties& updates,
                                   const std::vector<std::string>& removals) override {
    GEOLAKE_RETURN_NOT_OK(ValidateNamespace(ns));
    if (updates.count("exists") > 0) return ReservedKey(ns);
    for (const std::string& key : removals) {
      if (key == "exists") return ReservedKey(ns);
      if (updates.count(key) > 0) {
        return Status::InvalidArgument("namespace " + Quoted(ns.ToString()) + ": property " +
                                       Quoted(key) + " both set and removed");
      }
    }
    std::lock_guard lock(mu_);
    if (!ExistsLocked(ns)) return NoNamespace(ns);
    NamespaceProperties& props = namespaces_[ns];
    for (const std::string& key : removals) props.erase(key);
    for (const auto& [key, value] : updates) props[key] = value;
    return Status::OK();
  }

  Status CreateTable(const TableIdentifier& id, const std::string& metadata_location) override {
    GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(id));
    if (metadata_location.empty()) return EmptyLocation(id);
    std::lock_guard lock(mu_);
    if (!ExistsLocked(id.ns)) return NoNamespace(id.ns).WithContext(TableContext(id));
    auto [it, inserted] = tables_.try_emplace(id, TableEntry{metadata_location, ""});
    if (!inserted) return Status::AlreadyExists("table " + Quoted(id.ToString()));
    return Status::OK();
  }

  Result<std::string> LoadTable(const TableIdentifier& id) override {
    GEOLAKE_ASSIGN_OR_RETURN(TableEntry entry, LoadTableEntry(id));
    return std::move(entry.metadata_location);
  }

  Result<TableEntry> LoadTableEntry(const TableIdentifier& id) override {
    GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(id));
    std::lock_guard lock(mu_);
    auto it = tables_.find(id);
    if (it == tables_.end()) return NoTable(id);
    return it->second;
  }

  Result<bool> TableExists(const TableIdentifier& id) override {
    GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(id));
    std::lock_guard lock(mu_);
    return tables_.count(id) > 0;
  }

  Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) override {
    GEOLAKE_RETURN_NOT_OK(ValidateNamespace(ns));
    std::lock_guard lock(mu_);
    if (!ExistsLocked(ns)) return NoNamespace(ns);
    std::vector<TableIdentifier> out;
    for (const auto& [id, entry] : tables_) {
      if (id.ns == ns) out.push_back(id);
    }
    return out;  // std::map order: sorted by name within one namespace
  }

  Status DropTable(const TableIdentifier& id) override {
    GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(id));
    std::lock_guard lock(mu_);
    if (tables_.erase(id) == 0) return NoTable(id);
    return Status::OK();
  }

  Status RenameTable(const TableIdentifier& from, const TableIdentifier& to) override {
    GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(from));
    GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(to));
    std::lock_guard lock(mu_);
    auto it = tables_.find(from);
    if (it == tables_.end()) return NoTable(from);
    if (from == to) return Status::OK();
    if (tables_.count(to) > 0) return Status::AlreadyExists("table " + Quoted(to.ToString()));
    if (!ExistsLocked(to.ns)) return NoNamespace(to.ns).WithContext(TableContext(to));
    TableEntry entry = std::move(it->second);
    tables_.erase(it);
    tables_.emplace(to, std::move(entry));
    return Status::OK();
  }

  Status CommitTable(const TableIdentifier& id, const std::string& expected_metadata_location,
                     const std::string& new_metadata_location) override {
    GEOLAKE_RETURN_NOT_OK(ValidateIdentifier(id));
    if (new_metadata_location.empty()) return EmptyLocation(id);
    std::lock_guard lock(mu_);
    auto it = tables_.find(id);
    if (it == tables_.end()) return NoTable(id);
    if (it->second.metadata_location != expected_metadata_location) {
      return Status::CommitConflict("commit " + Quoted(id.ToString()) + ": expected " +
                                    expected_metadata_location + " but current is " +
                                    it->second.metadata_location);
    }
    it->second.previous_metadata_location = std::move(it->second.metadata_location);
    it->second.metadata_location = new_metadata_location;
    return Status::OK();
  }

 private:
  bool ExistsLocked(const Namespace& ns) const {
    // Created namespaces and their descendants sort right after `ns` in the map, so a
    // lower_bound finds any of them in O(log n).
    auto it = namespaces_.lower_bound(ns);
    if (it != namespaces_.end() && ns.Contains(it->first)) return true;
    for (const auto& [id, entry] : tables_) {
      if (ns.Contains(id.ns)) return true;
    }
    return false;
  }

  static std::string TableContext(const TableIdentifier& id) {
    return "table " + Quoted(id.ToString());
  }
  static Status NoNamespace(const Namespace& ns) {
    return Status::NotFound("namespace " + Quoted(ns.ToString()) + ": does not exist");
  }
  static Status NoTable(const TableIdentifier& id) {
    return Status::NotFound("table " + Quoted(id.ToString()) + ": does not exist");
  }
  static Status NotEmpty(const Namespace& ns) {
    return Status::InvalidArgument("namespace " + Quoted(ns.ToString()) + " is not empty");
  }
  static Status ReservedKey(const Namespace& ns) {
    return Status::InvalidArgument("namespace " + Quoted(ns.ToString()) +
                                   ": property 'exists' is reserved");
  }
  static Status EmptyLocation(const TableIdentifier& id) {
    return Status::InvalidArgument("table " + Quoted(id.ToString()) + ": empty metadata location");
  }

  const std::string name_;
  std::mutex mu_;
  std::map<Namespace, NamespaceProperties> namespaces_;  // guarded by mu_
  std::map<TableIdentifier, TableEntry> tables_;         // guarded by mu_
};

}  // namespace

std::unique_ptr<Catalog> MakeInMemoryCatalog(std::string name) {
  return std::make_unique<InMemoryCatalog>(std::move(name));
}

}  // namespace geolake::table
