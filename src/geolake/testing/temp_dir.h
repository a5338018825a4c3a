/// \file
/// TempDir: a fresh directory for one test, removed with everything in it when the object goes
/// out of scope. Include only from *_test.cc files.
#pragma once

#include <string>
#include <string_view>

namespace geolake::testing {

/// \brief A directory made by mkdtemp under the system temporary folder ($TMPDIR or /tmp),
/// named geolake-<prefix>-XXXXXX. ok() is false when it could not be made. Not thread-safe.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  /// \brief path()/name.
  std::string Join(std::string_view name) const;

 private:
  std::string path_;
};

}  // namespace geolake::testing
