/// \file
/// OnWriteIO: a FileIO for tests that forwards to another and calls back on every open, so a
/// test can stop a run at a point it chooses (say the first file a merge writes) rather than
/// after a sleep. Header-only: the test binaries that use it link geolake_io themselves.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "geolake/io/file_io.h"

namespace geolake::testing {

/// \brief A FileIO that forwards to another and first calls `on_write(path)` for every file
/// opened for writing, on the writing thread: a test stops a run at a point it chooses (say the
/// metadata file of the first commit), rather than after a sleep. `on_read`, when given, is
/// called likewise for every file opened for reading.
class OnWriteIO final : public io::FileIO {
 public:
  OnWriteIO(const io::FileIO* base, std::function<void(const std::string&)> on_write,
            std::function<void(const std::string&)> on_read = nullptr)
      : base_(base), on_write_(std::move(on_write)), on_read_(std::move(on_read)) {}
  Result<std::unique_ptr<io::RandomAccessFile>> OpenRead(const std::string& path) const override {
    if (on_read_) on_read_(path);
    return base_->OpenRead(path);
  }
  Result<std::unique_ptr<io::OutputStream>> OpenWrite(const std::string& path,
                                                      bool overwrite) const override {
    on_write_(path);
    return base_->OpenWrite(path, overwrite);
  }
  Result<io::FileInfo> Stat(const std::string& path) const override { return base_->Stat(path); }
  Result<bool> Exists(const std::string& path) const override { return base_->Exists(path); }
  Status Delete(const std::string& path) const override { return base_->Delete(path); }
  Result<std::vector<io::FileInfo>> List(const std::string& dir) const override {
    return base_->List(dir);
  }
  Status CreateDirs(const std::string& dir) const override { return base_->CreateDirs(dir); }
  Status LinkOnce(const std::string& existing, const std::string& new_path) const override {
    return base_->LinkOnce(existing, new_path);
  }

 private:
  const io::FileIO* base_;
  std::function<void(const std::string&)> on_write_;
  std::function<void(const std::string&)> on_read_;
};

}  // namespace geolake::testing
