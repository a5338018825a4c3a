// LocalFileIO: FileIO on a POSIX file system.
//
// Reads use pread(2), so one open file serves any number of threads without a lock. Writes go
// to a hidden temporary file in the destination directory (same file system, so the final
// rename is atomic), are fsync'ed, then renamed into place, and the directory is fsync'ed so
// that the new name survives a crash. Without overwrite the rename is renameat2(RENAME_NOREPLACE);
// on file systems that lack it (EINVAL), link(2) + unlink(2) gives the same "fail if present"
// semantics.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "geolake/io/file_io.h"

namespace geolake::io {
namespace {

// Writes smaller than this are gathered before reaching the kernel. 256 KiB keeps syscalls to
// ~4 per MiB while costing little memory per open stream (one per partition in the writer).
constexpr std::size_t kWriteBufferBytes = std::size_t{256} * 1024;

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r: thread-safe, returns a pointer that may or may not be `buf`.
  const char* text = strerror_r(err, buf, sizeof(buf));
  return text;
}

// Map errno to our codes: a missing file is kNotFound, a present one kAlreadyExists, the
// rest kIOError. Message: "<what> '<path>': <errno text>".
Status ErrnoStatus(int err, std::string_view what, std::string_view path) {
  std::string msg;
  msg.append(what).append(" '").append(path).append("': ").append(ErrnoText(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status::NotFound(std::move(msg));
    case EEXIST:
      return Status::AlreadyExists(std::move(msg));
    default:
      return Status::IOError(std::move(msg));
  }
}

// Strip a "file:" URI prefix: "file:///a" and "file:/a" both mean "/a".
std::string LocalPath(const std::string& path) {
  std::string_view p = path;
  if (p.starts_with("file://")) {
    p.remove_prefix(7);
  } else if (p.starts_with("file:/")) {
    p.remove_prefix(5);
  }
  return std::string(p);
}

std::string ParentDir(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Retry a syscall interrupted by a signal (SIGINT handling installs handlers without SA_RESTART
// in some hosts).
template <typename F>
auto RetryEintr(F&& f) {
  decltype(f()) rc;
  do {
    rc = f();
  } while (rc == -1 && errno == EINTR);
  return rc;
}

// A file descriptor that closes itself.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Close and report the error (close can report a deferred write error on NFS).
  int Close() {
    if (fd_ < 0) return 0;
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
};

Status FsyncDir(const std::string& dir) {
  Fd fd(RetryEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
  if (!fd.valid()) return ErrnoStatus(errno, "open directory", dir);
  if (::fsync(fd.get()) != 0) return ErrnoStatus(errno, "fsync directory", dir);
  return Status::OK();
}

// `dir` is the local path to create, `shown` the caller's spelling for messages.
Status CreateDirsImpl(const std::string& dir,  // NOLINT(bugprone-easily-swappable-parameters)
                      const std::string& shown) {
  if (dir.empty()) return Status::OK();
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::OK();
    return Status::AlreadyExists("create directory '" + shown + "': a file of that name exists");
  }
  // Create every missing prefix, front to back. EEXIST is fine: another thread or process may
  // create the same directory concurrently.
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    const std::string prefix = dir.substr(0, pos);
    if (prefix.empty()) continue;
    if (::mkdir(prefix.c_str(), 0755) == 0) {
      // Make the new entry durable: a data file fsync'ed into a directory whose own entry is
      // lost in a crash is lost with it, while committed metadata still points at it.
      GEOLAKE_RETURN_NOT_OK(FsyncDir(ParentDir(prefix)));
    } else if (errno != EEXIST) {
      return ErrnoStatus(errno, "create directory", prefix);
    }
  }
  if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus(errno, "create directory", shown);
  if (!S_ISDIR(st.st_mode)) {
    return Status::AlreadyExists("create directory '" + shown + "': a file of that name exists");
  }
  return Status::OK();
}

std::int64_t MtimeNs(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// A name unique across threads and processes: pid, a process-wide counter, and 64 random bits
// (the pid alone repeats across containers sharing a warehouse).
std::string UniqueToken() {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%d-%llu-%016llx", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1)),
                static_cast<unsigned long long>(rng()));
  return buf;
}

// Where an overwriting OpenWrite of `local` writes: `path` after following symlinks, and
// whether that is a FIFO or a device to write directly (no temp file, no rename).
struct OverwriteTarget {
  std::string path;
  bool direct = false;
};

Result<OverwriteTarget> ResolveOverwriteTarget(std::string local, const std::string& shown) {
  // 40 links at most, as the kernel's own limit (ELOOP).
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st;
    if (::lstat(local.c_str(), &st) != 0) {
      // Missing (or under a non-directory): the ordinary path creates it or reports why not.
      if (errno == ENOENT || errno == ENOTDIR) return OverwriteTarget{std::move(local), false};
      return ErrnoStatus(errno, "open for writing", shown);
    }
    if (S_ISREG(st.st_mode)) return OverwriteTarget{std::move(local), false};
    if (S_ISDIR(st.st_mode)) return ErrnoStatus(EISDIR, "open for writing", shown);
    if (!S_ISLNK(st.st_mode)) return OverwriteTarget{std::move(local), true};
    std::string link(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(local.c_str(), link.data(), link.size());
    if (n < 0) return ErrnoStatus(errno, "read link", shown);
    link.resize(static_cast<std::size_t>(n));
    local = link.starts_with('/') ? link : ParentDir(local) + "/" + link;
  }
  return ErrnoStatus(ELOOP, "open for writing", shown);
}

class LocalRandomAccessFile final : public RandomAccessFile {
 public:
  LocalRandomAccessFile(Fd fd, std::string path, std::uint64_t size)
      : fd_(std::move(fd)), path_(std::move(path)), size_(size) {}

  std::uint64_t size() const override { return size_; }
  const std::string& path() const override { return path_; }

  Status ReadAt(std::uint64_t offset, std::uint64_t length, std::string* out) const override {
    if (offset > size_ || length > size_ - offset) {
      return Status::CorruptData("read past end of file '" + path_ + "': offset " +
                                 std::to_string(offset) + " length " + std::to_string(length) +
                                 ", file size " + std::to_string(size_));
    }
    out->resize(length);
    std::uint64_t done = 0;
    while (done < length) {
      const ssize_t n =
          ::pread(fd_.get(), out->data() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        out->clear();
        return Status::IOError("read '" + path_ + "' at offset " + std::to_string(offset + done) +
                               ": " + ErrnoText(err));
      }
      if (n == 0) {
        // The file shrank after it was opened: the bytes we were promised are gone.
        out->clear();
        return Status::CorruptData("file '" + path_ + "' truncated while reading: offset " +
                                   std::to_string(offset + done) + ", expected size " +
                                   std::to_string(size_));
      }
      done += static_cast<std::uint64_t>(n);
    }
    return Status::OK();
  }

 private:
  Fd fd_;
  std::string path_;
  std::uint64_t size_;
};

class LocalOutputStream final : public OutputStream {
 public:
  // An empty `temp_path` writes `fd` directly: the final path is a FIFO or a device, opened
  // itself, and Close() only flushes and closes it.
  LocalOutputStream(Fd fd, std::string final_path, std::string temp_path, std::string shown,
                    bool overwrite)
      : fd_(std::move(fd)),
        final_path_(std::move(final_path)),
        temp_path_(std::move(temp_path)),
        shown_(std::move(shown)),
        overwrite_(overwrite),
        direct_(temp_path_.empty()) {
    buffer_.reserve(kWriteBufferBytes);
  }

  ~LocalOutputStream() override { Abort(); }

  Status Write(std::span<const std::uint8_t> data) override {
    if (!fd_.valid()) return Status::InvalidArgument("write '" + shown_ + "': stream is closed");
    if (!error_.ok()) return error_;
    // A failed write leaves an unknown prefix on disk: the error sticks, and Close() reports
    // it and removes the temporary file instead of publishing a torn file.
    error_ = Append(data);
    return error_;
  }

  std::uint64_t Tell() const override { return position_; }

  Status Close() override {
    if (!fd_.valid()) return Status::InvalidArgument("close '" + shown_ + "': stream is closed");
    Status st = error_.ok() ? Publish() : error_;
    if (!st.ok()) Abort();
    return st;
  }

  void Abort() override {
    if (!fd_.valid() && temp_path_.empty()) return;
    fd_.Close();
    if (!temp_path_.empty()) {
      ::unlink(temp_path_.c_str());  // best effort; a leftover is recognisable as a temp file
      temp_path_.clear();
    }
    buffer_.clear();
  }

 private:
  Status Append(std::span<const std::uint8_t> data) {
    if (buffer_.size() + data.size() > kWriteBufferBytes) {
      GEOLAKE_RETURN_NOT_OK(Flush());
      if (data.size() >= kWriteBufferBytes) {
        GEOLAKE_RETURN_NOT_OK(WriteFully(data.data(), data.size()));
        position_ += data.size();
        return Status::OK();
      }
    }
    buffer_.insert(buffer_.end(), data.begin(), data.end());
    position_ += data.size();
    return Status::OK();
  }

  Status WriteFully(const std::uint8_t* data, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd_.get(), data + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "write", shown_);
      }
      done += static_cast<std::size_t>(n);
    }
    return Status::OK();
  }

  Status Flush() {
    if (buffer_.empty()) return Status::OK();
    Status st = WriteFully(buffer_.data(), buffer_.size());
    buffer_.clear();
    return st;
  }

  Status Publish() {
    GEOLAKE_RETURN_NOT_OK(Flush());
    if (RetryEintr([&] { return ::fsync(fd_.get()); }) != 0) {
      // A FIFO or a terminal cannot be synced (EINVAL): there is nothing to make durable.
      if (!direct_ || (errno != EINVAL && errno != EROFS && errno != ENOTSUP)) {
        return ErrnoStatus(errno, "fsync", shown_);
      }
    }
    if (fd_.Close() != 0) return ErrnoStatus(errno, "close", shown_);
    if (direct_) return Status::OK();

    if (overwrite_) {
      if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
        return ErrnoStatus(errno, "rename into place", shown_);
      }
    } else {
      GEOLAKE_RETURN_NOT_OK(RenameNoReplace());
    }
    temp_path_.clear();  // the temp name is gone; nothing left for Abort to remove
    return FsyncDir(ParentDir(final_path_)).WithContext("publish '" + shown_ + "'");
  }

  Status RenameNoReplace() {
    if (::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, final_path_.c_str(),
                    RENAME_NOREPLACE) == 0) {
      return Status::OK();
    }
    const int err = errno;
    if (err == EEXIST) {
      return Status::AlreadyExists("publish '" + shown_ + "': file already exists");
    }
    if (err != EINVAL && err != ENOSYS && err != ENOTSUP) {
      return ErrnoStatus(err, "rename into place", shown_);
    }
    // The file system has no RENAME_NOREPLACE: link() fails with EEXIST just the same.
    if (::link(temp_path_.c_str(), final_path_.c_str()) != 0) {
      if (errno == EEXIST) {
        return Status::AlreadyExists("publish '" + shown_ + "': file already exists");
      }
      return ErrnoStatus(errno, "link into place", shown_);
    }
    ::unlink(temp_path_.c_str());
    return Status::OK();
  }

  Fd fd_;
  std::string final_path_;
  std::string temp_path_;  // empty once renamed or removed
  std::string shown_;      // the path as the caller gave it, for messages
  bool overwrite_;
  bool direct_;
  std::vector<std::uint8_t> buffer_;
  std::uint64_t position_ = 0;
  Status error_;  // the first write error; sticky
};

// Walk `dir` (a local path); `shown_dir` is the caller's spelling, used to build result paths.
Status ListRecursive(const std::string& dir,  // NOLINT(bugprone-easily-swappable-parameters)
                     const std::string& shown_dir, std::vector<FileInfo>* out) {
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) {
    // A directory removed while we walk is simply empty.
    if (errno == ENOENT) return Status::OK();
    return ErrnoStatus(errno, "list directory", shown_dir);
  }
  struct Closer {
    DIR* d;
    ~Closer() { ::closedir(d); }
  } closer{handle};

  std::vector<std::string> subdirs;
  while (true) {
    errno = 0;
    const struct dirent* entry = ::readdir(handle);
    if (entry == nullptr) {
      if (errno != 0) return ErrnoStatus(errno, "list directory", shown_dir);
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(::dirfd(handle), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // deleted concurrently
      return ErrnoStatus(errno, "stat", shown_dir + "/" + std::string(name));
    }
    bool via_symlink = false;
    if (S_ISLNK(st.st_mode)) {
      // A symlink to a file is listed as that file; a symlink to a directory is not followed,
      // so a link to an ancestor cannot make the walk endless. Dangling links are skipped.
      if (::fstatat(::dirfd(handle), entry->d_name, &st, 0) != 0) continue;
      via_symlink = true;
    }
    if (S_ISDIR(st.st_mode)) {
      if (via_symlink) continue;
      subdirs.emplace_back(name);
    } else if (S_ISREG(st.st_mode)) {
      FileInfo info;
      info.path = shown_dir + "/" + std::string(name);
      info.size_bytes = static_cast<std::uint64_t>(st.st_size);
      info.mtime_ns = MtimeNs(st);
      out->push_back(std::move(info));
    }
  }
  for (const std::string& sub : subdirs) {
    std::string sub_dir = dir;
    sub_dir.append("/").append(sub);
    std::string sub_shown = shown_dir;
    sub_shown.append("/").append(sub);
    GEOLAKE_RETURN_NOT_OK(ListRecursive(sub_dir, sub_shown, out));
  }
  return Status::OK();
}

std::string TrimTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

class LocalFileIO final : public FileIO {
 public:
  Result<std::unique_ptr<RandomAccessFile>> OpenRead(const std::string& path) const override {
    const std::string local = LocalPath(path);
    Fd fd(RetryEintr([&] { return ::open(local.c_str(), O_RDONLY | O_CLOEXEC); }));
    if (!fd.valid()) return ErrnoStatus(errno, "open", path);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "stat", path);
    if (S_ISDIR(st.st_mode)) return Status::InvalidArgument("open '" + path + "': is a directory");
    return std::unique_ptr<RandomAccessFile>(std::make_unique<LocalRandomAccessFile>(
        std::move(fd), path, static_cast<std::uint64_t>(st.st_size)));
  }

  Result<std::unique_ptr<OutputStream>> OpenWrite(const std::string& path,
                                                  bool overwrite) const override {
    std::string local = LocalPath(path);
    const auto not_a_name = [](const std::string& name) {
      return name.empty() || name == "." || name == "..";
    };
    if (not_a_name(BaseName(local))) {
      return Status::InvalidArgument("open for writing '" + path + "': not a file name");
    }
    if (overwrite) {
      // Replace by rename only a regular file: through a symlink, its target (the link stays);
      // a FIFO or a device is written directly (a rename would turn /dev/full into a file and
      // leave a FIFO's reader waiting).
      GEOLAKE_ASSIGN_OR_RETURN(OverwriteTarget target, ResolveOverwriteTarget(local, path));
      if (target.direct) {
        Fd fd(RetryEintr([&] { return ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC); }));
        if (!fd.valid()) return ErrnoStatus(errno, "open for writing", path);
        return std::unique_ptr<OutputStream>(std::make_unique<LocalOutputStream>(
            std::move(fd), target.path, std::string(), path, overwrite));
      }
      local = std::move(target.path);
    }
    const std::string name = BaseName(local);
    if (not_a_name(name)) {  // a symlink's target may end in "/"
      return Status::InvalidArgument("open for writing '" + path + "': not a file name");
    }
    const std::string dir = ParentDir(local);
    GEOLAKE_RETURN_NOT_OK_CTX(CreateDirsImpl(dir, dir), "open for writing '" + path + "'");
    if (!overwrite) {
      // Fail early when the target is already there; Close() checks again atomically.
      struct stat st;
      if (::stat(local.c_str(), &st) == 0) {
        return Status::AlreadyExists("open for writing '" + path + "': file already exists");
      }
    }
    std::string temp = dir + "/." + name + "." + UniqueToken() + std::string(kTempFileSuffix);
    Fd fd(RetryEintr(
        [&] { return ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); }));
    if (!fd.valid()) return ErrnoStatus(errno, "create temporary file", temp);
    return std::unique_ptr<OutputStream>(std::make_unique<LocalOutputStream>(
        std::move(fd), local, std::move(temp), path, overwrite));
  }

  Result<FileInfo> Stat(const std::string& path) const override {
    const std::string local = LocalPath(path);
    struct stat st;
    if (::stat(local.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", path);
    FileInfo info;
    info.path = path;
    info.is_directory = S_ISDIR(st.st_mode);
    info.size_bytes = info.is_directory ? 0 : static_cast<std::uint64_t>(st.st_size);
    info.mtime_ns = MtimeNs(st);
    return info;
  }

  Result<bool> Exists(const std::string& path) const override {
    const std::string local = LocalPath(path);
    struct stat st;
    if (::stat(local.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return ErrnoStatus(errno, "stat", path);
  }

  Status Delete(const std::string& path) const override {
    const std::string local = LocalPath(path);
    if (::unlink(local.c_str()) == 0 || errno == ENOENT) return Status::OK();
    return ErrnoStatus(errno, "delete", path);
  }

  Result<std::vector<FileInfo>> List(const std::string& dir) const override {
    const std::string shown = TrimTrailingSlashes(dir);
    const std::string local = TrimTrailingSlashes(LocalPath(dir));
    struct stat st;
    if (::stat(local.c_str(), &st) != 0) {
      if (errno == ENOENT) return std::vector<FileInfo>{};
      return ErrnoStatus(errno, "list directory", dir);
    }
    if (!S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument("list directory '" + dir + "': not a directory");
    }
    std::vector<FileInfo> out;
    GEOLAKE_RETURN_NOT_OK(ListRecursive(local, shown, &out));
    std::sort(out.begin(), out.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
    return out;
  }

  Status CreateDirs(const std::string& dir) const override {
    return CreateDirsImpl(TrimTrailingSlashes(LocalPath(dir)), dir);
  }

  Status LinkOnce(const std::string& existing, const std::string& new_path) const override {
    const std::string from = LocalPath(existing);
    const std::string to = LocalPath(new_path);
    // link(2) is atomic and never replaces: exactly one caller can create the name.
    if (::link(from.c_str(), to.c_str()) == 0) return Status::OK();
    const int err = errno;
    if (err == EEXIST) {
      return Status::AlreadyExists("link '" + new_path + "': file already exists");
    }
    if (err == ENOENT) {
      struct stat st;
      if (::stat(from.c_str(), &st) != 0) return ErrnoStatus(errno, "link", existing);
      return ErrnoStatus(err, "link", new_path);
    }
    // File systems without hard links (EPERM on some FUSE and network mounts, EXDEV, EMLINK):
    // the same write-once name, by copying.
    if (err == EPERM || err == EXDEV || err == EMLINK || err == ENOTSUP) {
      return FileIO::LinkOnce(existing, new_path);
    }
    return ErrnoStatus(err, "link", new_path);
  }
};

}  // namespace

std::unique_ptr<FileIO> MakeLocalFileIO() { return std::make_unique<LocalFileIO>(); }

}  // namespace geolake::io
