#include "geolake/testing/temp_dir.h"

#include <stdlib.h>

#include <filesystem>

namespace geolake::testing {

TempDir::TempDir(std::string_view prefix) {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string templ = (base / ("geolake-" + std::string(prefix) + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) != nullptr) path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Join(std::string_view name) const {
  std::string joined = path_;
  joined += '/';
  joined += name;
  return joined;
}

}  // namespace geolake::testing
