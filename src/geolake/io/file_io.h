/// \file
/// FileIO: how geolake reads and writes files. Every file geolake produces (data files,
/// manifests, metadata JSON) is written once through an OutputStream that becomes visible only
/// when Close() succeeds (temp file + fsync + rename), so a crash never leaves a half-written
/// file under its final name. Readers use ranged reads, which object stores can serve later.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"

namespace geolake::io {

/// \brief A file open for random-access reading.
///
/// Thread-safety: ReadAt and size() are safe to call concurrently (positional reads).
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;

  /// \brief The file's size in bytes, fixed when it was opened.
  virtual std::uint64_t size() const = 0;

  /// \brief Read exactly `length` bytes at `offset` into `out` (resized to `length`).
  ///
  /// A range past the end of the file is kCorruptData naming the path, offset and size (a
  /// reader asked for bytes that metadata promised); an OS failure is kIOError.
  virtual Status ReadAt(std::uint64_t offset, std::uint64_t length, std::string* out) const = 0;

  /// \brief The path this file was opened from, for error messages.
  virtual const std::string& path() const = 0;
};

/// \brief A file being written, invisible under its final name until Close() succeeds.
///
/// Thread-safety: none; one writer at a time. Destroying a stream that was not closed aborts it
/// (the temporary file is removed).
class OutputStream {
 public:
  virtual ~OutputStream() = default;

  /// \brief Append bytes.
  virtual Status Write(std::span<const std::uint8_t> data) = 0;
  Status Write(std::string_view data) {
    return Write(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(data.data()),
                                               data.size()));
  }

  /// \brief Bytes written so far (the offset the next Write starts at).
  virtual std::uint64_t Tell() const = 0;

  /// \brief Flush, fsync and publish under the final path. kAlreadyExists when the stream was
  /// opened with `overwrite = false` and the final path appeared meanwhile.
  virtual Status Close() = 0;

  /// \brief Discard everything written; the final path is never touched.
  virtual void Abort() = 0;
};

/// \brief What a listing reports for one file.
struct FileInfo {
  std::string path;
  std::uint64_t size_bytes = 0;
  std::int64_t mtime_ns = 0;  // modification time, ns since the Unix epoch
  bool is_directory = false;
};

/// \brief Access to a file system. Implementations: LocalFileIO (local disk).
///
/// Thread-safety: all methods are safe to call concurrently.
class FileIO {
 public:
  virtual ~FileIO() = default;

  virtual Result<std::unique_ptr<RandomAccessFile>> OpenRead(const std::string& path) const = 0;

  /// \brief Open `path` for writing through a temporary file beside it. Parent directories are
  /// created. With `overwrite = false` Close() fails with kAlreadyExists if `path` exists (the
  /// rename is done without replacing), which is what metadata files need. With `overwrite =
  /// true` only a regular file is replaced by the rename: a symlink's target is replaced (the
  /// link stays), and an existing FIFO or device is opened and written directly (no temporary
  /// file; Close() flushes and closes it; opening a FIFO waits for its reader). An existing
  /// directory is kIOError (EISDIR), as the rename onto it would be.
  virtual Result<std::unique_ptr<OutputStream>> OpenWrite(const std::string& path,
                                                          bool overwrite) const = 0;

  virtual Result<FileInfo> Stat(const std::string& path) const = 0;
  virtual Result<bool> Exists(const std::string& path) const = 0;

  /// \brief Remove a file. A file already gone is OK (deletes are idempotent).
  virtual Status Delete(const std::string& path) const = 0;

  /// \brief List the files (not directories) below `dir`, recursively; a missing dir is empty.
  virtual Result<std::vector<FileInfo>> List(const std::string& dir) const = 0;

  virtual Status CreateDirs(const std::string& dir) const = 0;

  /// \brief Give the finished file `existing` a second name, `new_path`, written once:
  /// kAlreadyExists when `new_path` is taken (never replaced), kNotFound when `existing` is
  /// missing. The default copies the bytes (what an object store does); LocalFileIO makes a
  /// hard link (no bytes copied), falling back to a copy where the file system has none.
  virtual Status LinkOnce(const std::string& existing, const std::string& new_path) const;

  /// \brief Read a whole file (metadata JSON, small files).
  Result<std::string> ReadAll(const std::string& path) const;

  /// \brief Write a whole file atomically (OpenWrite + Write + Close).
  Status WriteAll(const std::string& path, std::string_view data, bool overwrite) const;
};

/// \brief The local disk.
///
/// Paths are ordinary POSIX paths; a `file:` URI prefix ("file:///a/b" or "file:/a/b", as
/// Iceberg metadata may record) is accepted and stripped. Error messages name the path as given.
std::unique_ptr<FileIO> MakeLocalFileIO();

/// \brief The marker in the name of every temporary file OpenWrite creates.
///
/// A stream for `dir/name` writes `dir/.name.<unique>.geolake-tmp` until Close() renames it. The
/// leading dot hides it from Hadoop-style readers; the suffix lets a listing (orphan removal,
/// resume) recognise leftovers of a crashed writer.
inline constexpr std::string_view kTempFileSuffix = ".geolake-tmp";

/// \brief True if `path` names a temporary file of an unfinished OpenWrite.
bool IsTempFilePath(std::string_view path);

}  // namespace geolake::io
