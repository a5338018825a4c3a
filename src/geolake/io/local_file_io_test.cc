#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "geolake/io/file_io.h"
#include "geolake/testing/testing.h"

namespace geolake::io {
namespace {

using ::geolake::testing::IsError;
using ::geolake::testing::IsErrorWith;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class LocalFileIOTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "geolake-io-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    fs_ = MakeLocalFileIO();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  // Names in `dir` (non-recursive), including hidden ones.
  std::vector<std::string> Names(const std::string& dir) const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string root_;
  std::unique_ptr<FileIO> fs_;
};

TEST_F(LocalFileIOTest, WriteAllThenReadAllRoundTrips) {
  ASSERT_OK(fs_->WriteAll(Path("a/b/c.txt"), "hello geolake", /*overwrite=*/false));
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll(Path("a/b/c.txt")));
  EXPECT_EQ(data, "hello geolake");
}

TEST_F(LocalFileIOTest, LinkOnceGivesASecondNameThatIsNeverReplaced) {
  ASSERT_OK(fs_->WriteAll(Path("m/00001-a.metadata.json"), "version one", false));
  ASSERT_OK(fs_->LinkOnce(Path("m/00001-a.metadata.json"), Path("m/v1.metadata.json")));
  EXPECT_EQ(fs_->ReadAll(Path("m/v1.metadata.json")).value(), "version one");
  EXPECT_TRUE(
      std::filesystem::equivalent(Path("m/00001-a.metadata.json"), Path("m/v1.metadata.json")));
  // The name is taken: kAlreadyExists, and what is there stays.
  ASSERT_OK(fs_->WriteAll(Path("m/00001-b.metadata.json"), "another", false));
  EXPECT_THAT(fs_->LinkOnce(Path("m/00001-b.metadata.json"), Path("m/v1.metadata.json")),
              IsError(ErrorCode::kAlreadyExists));
  EXPECT_EQ(fs_->ReadAll(Path("m/v1.metadata.json")).value(), "version one");
  // A missing source is kNotFound, and creates nothing.
  EXPECT_THAT(fs_->LinkOnce(Path("m/absent.json"), Path("m/v2.metadata.json")),
              IsError(ErrorCode::kNotFound));
  EXPECT_FALSE(fs_->Exists(Path("m/v2.metadata.json")).value());
}

TEST_F(LocalFileIOTest, DefaultLinkOnceCopiesWithTheSameRules) {
  // What a FileIO without hard links (an object store) does: the base class's copy.
  ASSERT_OK(fs_->WriteAll(Path("c/a.json"), "bytes", false));
  ASSERT_OK(fs_->FileIO::LinkOnce(Path("c/a.json"), Path("c/b.json")));
  EXPECT_EQ(fs_->ReadAll(Path("c/b.json")).value(), "bytes");
  EXPECT_FALSE(std::filesystem::equivalent(Path("c/a.json"), Path("c/b.json")));
  EXPECT_THAT(fs_->FileIO::LinkOnce(Path("c/a.json"), Path("c/b.json")),
              IsError(ErrorCode::kAlreadyExists));
  EXPECT_THAT(fs_->FileIO::LinkOnce(Path("c/none.json"), Path("c/d.json")),
              IsError(ErrorCode::kNotFound));
}

TEST_F(LocalFileIOTest, EmptyFileRoundTrips) {
  ASSERT_OK(fs_->WriteAll(Path("empty"), "", false));
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll(Path("empty")));
  EXPECT_EQ(data, "");
}

TEST_F(LocalFileIOTest, FinalPathAbsentUntilClose) {
  ASSERT_OK_AND_ASSIGN(auto out, fs_->OpenWrite(Path("d/file.bin"), false));
  ASSERT_OK(out->Write("part one,"));
  ASSERT_OK(out->Write(std::string(1 << 20, 'x')));  // larger than the write buffer
  ASSERT_OK(out->Write("end"));
  EXPECT_EQ(out->Tell(), 9u + (1u << 20) + 3u);
  ASSERT_OK_AND_ASSIGN(bool exists, fs_->Exists(Path("d/file.bin")));
  EXPECT_FALSE(exists);
  // The only entry is a recognisable temporary file.
  std::vector<std::string> names = Names(Path("d"));
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(IsTempFilePath(names[0])) << names[0];
  EXPECT_TRUE(names[0].starts_with(".file.bin.")) << names[0];

  ASSERT_OK(out->Close());
  EXPECT_THAT(Names(Path("d")), ElementsAre("file.bin"));
  ASSERT_OK_AND_ASSIGN(FileInfo info, fs_->Stat(Path("d/file.bin")));
  EXPECT_EQ(info.size_bytes, 9u + (1u << 20) + 3u);
  EXPECT_FALSE(info.is_directory);
  EXPECT_GT(info.mtime_ns, 0);
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll(Path("d/file.bin")));
  EXPECT_EQ(data.substr(0, 9), "part one,");
  EXPECT_EQ(data.substr(data.size() - 3), "end");
}

TEST_F(LocalFileIOTest, AbortLeavesNoFile) {
  ASSERT_OK_AND_ASSIGN(auto out, fs_->OpenWrite(Path("x/y.bin"), true));
  ASSERT_OK(out->Write("doomed"));
  out->Abort();
  EXPECT_THAT(Names(Path("x")), IsEmpty());
  // After Abort the stream refuses further use.
  EXPECT_THAT(out->Write("more"), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(out->Close(), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(LocalFileIOTest, DestructorWithoutCloseRemovesTemp) {
  {
    ASSERT_OK_AND_ASSIGN(auto out, fs_->OpenWrite(Path("z/y.bin"), true));
    ASSERT_OK(out->Write("doomed"));
  }
  EXPECT_THAT(Names(Path("z")), IsEmpty());
}

TEST_F(LocalFileIOTest, CloseTwiceFails) {
  ASSERT_OK_AND_ASSIGN(auto out, fs_->OpenWrite(Path("once"), false));
  ASSERT_OK(out->Close());
  EXPECT_THAT(out->Close(), IsErrorWith(ErrorCode::kInvalidArgument, "closed"));
}

TEST_F(LocalFileIOTest, NoOverwriteFailsWhenTargetExistsAtOpen) {
  ASSERT_OK(fs_->WriteAll(Path("v1.metadata.json"), "first", false));
  EXPECT_THAT(fs_->OpenWrite(Path("v1.metadata.json"), false),
              IsErrorWith(ErrorCode::kAlreadyExists, "v1.metadata.json"));
  EXPECT_THAT(fs_->WriteAll(Path("v1.metadata.json"), "second", false),
              IsError(ErrorCode::kAlreadyExists));
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll(Path("v1.metadata.json")));
  EXPECT_EQ(data, "first");
}

TEST_F(LocalFileIOTest, NoOverwriteConflictAtCloseKeepsWinnerAndRemovesTemp) {
  // Two writers race for the same name: both open, one closes first, the other loses.
  ASSERT_OK_AND_ASSIGN(auto a, fs_->OpenWrite(Path("m/v2.json"), false));
  ASSERT_OK_AND_ASSIGN(auto b, fs_->OpenWrite(Path("m/v2.json"), false));
  ASSERT_OK(a->Write("winner"));
  ASSERT_OK(b->Write("loser"));
  ASSERT_OK(a->Close());
  EXPECT_THAT(b->Close(), IsErrorWith(ErrorCode::kAlreadyExists, "v2.json"));
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll(Path("m/v2.json")));
  EXPECT_EQ(data, "winner");
  EXPECT_THAT(Names(Path("m")), ElementsAre("v2.json"));
}

TEST_F(LocalFileIOTest, OverwriteReplaces) {
  ASSERT_OK(fs_->WriteAll(Path("version-hint.text"), "1", true));
  ASSERT_OK(fs_->WriteAll(Path("version-hint.text"), "2", true));
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll(Path("version-hint.text")));
  EXPECT_EQ(data, "2");
}

TEST_F(LocalFileIOTest, ConcurrentNoOverwriteWritersHaveExactlyOneWinner) {
  constexpr int kWriters = 8;
  std::atomic<int> wins{0};
  std::atomic<int> conflicts{0};
  std::vector<std::jthread> threads;
  threads.reserve(8);
  for (int writer_idx = 0; writer_idx < kWriters; ++writer_idx) {
    threads.emplace_back([&, writer_idx] {
      Status st = fs_->WriteAll(Path("race"), std::to_string(writer_idx), false);
      if (st.ok()) {
        ++wins;
      } else if (st.code() == ErrorCode::kAlreadyExists) {
        ++conflicts;
      }
    });
  }
  threads.clear();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_EQ(conflicts.load(), kWriters - 1);
  EXPECT_THAT(Names(root_), ElementsAre("race"));
}

TEST_F(LocalFileIOTest, ConcurrentWritersCreateTheSameDirectories) {
  constexpr int kWriters = 8;
  std::atomic<int> failures{0};
  {
    std::vector<std::jthread> threads;
    threads.reserve(kWriters);
    for (int writer_idx = 0; writer_idx < kWriters; ++writer_idx) {
      threads.emplace_back([&, writer_idx] {
        const std::string path = Path("w/data/cell=12/" + std::to_string(writer_idx) + ".parquet");
        if (!fs_->WriteAll(path, "x", false).ok()) ++failures;
      });
    }
  }
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> files, fs_->List(Path("w")));
  EXPECT_EQ(files.size(), static_cast<std::size_t>(kWriters));
}

TEST_F(LocalFileIOTest, RangedReads) {
  std::string content;
  for (int i = 0; i < 1000; ++i) content += static_cast<char>('a' + i % 26);
  ASSERT_OK(fs_->WriteAll(Path("r.bin"), content, false));
  ASSERT_OK_AND_ASSIGN(auto file, fs_->OpenRead(Path("r.bin")));
  EXPECT_EQ(file->size(), 1000u);
  EXPECT_EQ(file->path(), Path("r.bin"));
  std::string out;
  ASSERT_OK(file->ReadAt(0, 3, &out));
  EXPECT_EQ(out, "abc");
  ASSERT_OK(file->ReadAt(996, 4, &out));
  EXPECT_EQ(out, content.substr(996));
  ASSERT_OK(file->ReadAt(1000, 0, &out));
  EXPECT_EQ(out, "");
  ASSERT_OK(file->ReadAt(26 * 10 + 5, 2, &out));
  EXPECT_EQ(out, "fg");
}

TEST_F(LocalFileIOTest, ConcurrentRangedReadsAgree) {
  std::string content(1 << 16, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 % 251);
  ASSERT_OK(fs_->WriteAll(Path("c.bin"), content, false));
  ASSERT_OK_AND_ASSIGN(auto file, fs_->OpenRead(Path("c.bin")));
  std::atomic<int> mismatches{0};
  std::vector<std::jthread> threads;
  threads.reserve(8);
  for (int thread_idx = 0; thread_idx < 4; ++thread_idx) {
    threads.emplace_back([&, thread_idx] {
      std::string out;
      for (std::uint64_t off = thread_idx; off + 100 < content.size(); off += 997) {
        if (!file->ReadAt(off, 100, &out).ok() || out != content.substr(off, 100)) ++mismatches;
      }
    });
  }
  threads.clear();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(LocalFileIOTest, ReadPastEndIsCorruptDataNamingPathOffsetAndSize) {
  ASSERT_OK(fs_->WriteAll(Path("short.bin"), "0123456789", false));
  ASSERT_OK_AND_ASSIGN(auto file, fs_->OpenRead(Path("short.bin")));
  std::string out;
  Status st = file->ReadAt(8, 5, &out);
  EXPECT_THAT(st, IsErrorWith(ErrorCode::kCorruptData, "short.bin"));
  EXPECT_THAT(st.message(), ::testing::HasSubstr("offset 8"));
  EXPECT_THAT(st.message(), ::testing::HasSubstr("size 10"));
  // Offset beyond the end, and an offset + length that would overflow.
  EXPECT_THAT(file->ReadAt(11, 0, &out), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(file->ReadAt(5, UINT64_MAX, &out), IsError(ErrorCode::kCorruptData));
}

TEST_F(LocalFileIOTest, MissingFilesAreNotFound) {
  EXPECT_THAT(fs_->OpenRead(Path("nope.parquet")),
              IsErrorWith(ErrorCode::kNotFound, "nope.parquet"));
  EXPECT_THAT(fs_->ReadAll(Path("nope.parquet")), IsError(ErrorCode::kNotFound));
  EXPECT_THAT(fs_->Stat(Path("nope.parquet")), IsErrorWith(ErrorCode::kNotFound, "nope.parquet"));
  // The errno text is part of the message.
  EXPECT_THAT(fs_->OpenRead(Path("nope.parquet")),
              IsErrorWith(ErrorCode::kNotFound, "No such file or directory"));
  ASSERT_OK_AND_ASSIGN(bool exists, fs_->Exists(Path("nope.parquet")));
  EXPECT_FALSE(exists);
}

TEST_F(LocalFileIOTest, OpenReadOfDirectoryFails) {
  ASSERT_OK(fs_->CreateDirs(Path("dir")));
  EXPECT_THAT(fs_->OpenRead(Path("dir")), IsErrorWith(ErrorCode::kInvalidArgument, "directory"));
}

TEST_F(LocalFileIOTest, OpenWriteFailsWhenParentIsAFile) {
  ASSERT_OK(fs_->WriteAll(Path("plain"), "x", false));
  EXPECT_THAT(fs_->OpenWrite(Path("plain/child"), true), IsError(ErrorCode::kAlreadyExists));
  EXPECT_THAT(fs_->OpenWrite(root_ + "/", true), IsError(ErrorCode::kInvalidArgument));
}

TEST_F(LocalFileIOTest, OpenWriteInUnwritableDirectoryIsIOError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  ASSERT_OK(fs_->CreateDirs(Path("ro")));
  ASSERT_EQ(::chmod(Path("ro").c_str(), 0555), 0);
  EXPECT_THAT(fs_->OpenWrite(Path("ro/f"), true), IsErrorWith(ErrorCode::kIOError, "ro/"));
  ::chmod(Path("ro").c_str(), 0755);
}

TEST_F(LocalFileIOTest, OsErrorsOtherThanMissingAreIOError) {
  // A name longer than NAME_MAX fails with ENAMETOOLONG on every call, even as root.
  const std::string too_long = Path(std::string(300, 'n'));
  EXPECT_THAT(fs_->OpenRead(too_long), IsErrorWith(ErrorCode::kIOError, "name too long"));
  EXPECT_THAT(fs_->Stat(too_long), IsError(ErrorCode::kIOError));
  EXPECT_THAT(fs_->Exists(too_long), IsError(ErrorCode::kIOError));
  EXPECT_THAT(fs_->Delete(too_long), IsError(ErrorCode::kIOError));
  EXPECT_THAT(fs_->List(too_long), IsError(ErrorCode::kIOError));
  EXPECT_THAT(fs_->CreateDirs(too_long), IsError(ErrorCode::kIOError));
  EXPECT_THAT(fs_->OpenWrite(too_long + "/f", true), IsError(ErrorCode::kIOError));
}

TEST_F(LocalFileIOTest, WriteErrorSticksAndCloseDoesNotPublish) {
  // Make the kernel refuse writes beyond 64 KiB (EFBIG instead of SIGXFSZ).
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = saved;
  limited.rlim_cur = rlim_t{64} * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);

  Result<std::unique_ptr<OutputStream>> out = fs_->OpenWrite(Path("big.bin"), false);
  Status first;
  Status second;
  Status close;
  if (out.ok()) {
    first = (*out)->Write(std::string(1 << 20, 'x'));
    second = (*out)->Write("y");
    close = (*out)->Close();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);

  ASSERT_OK(out.status());
  EXPECT_THAT(first, IsErrorWith(ErrorCode::kIOError, "big.bin"));
  EXPECT_THAT(second, IsError(ErrorCode::kIOError));
  EXPECT_THAT(close, IsError(ErrorCode::kIOError));
  EXPECT_THAT(Names(root_), IsEmpty());  // neither the final file nor the temp remains
}

// Issue 17 item 7: -o onto a symlink, a FIFO or a device must not replace it by a rename.
TEST_F(LocalFileIOTest, OverwriteThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  ASSERT_OK(fs_->WriteAll(Path("real/target.txt"), "old", true));
  std::filesystem::create_symlink("real/target.txt", Path("link.txt"));
  ASSERT_OK(fs_->WriteAll(Path("link.txt"), "new", /*overwrite=*/true));
  EXPECT_TRUE(std::filesystem::is_symlink(Path("link.txt")));
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll(Path("real/target.txt")));
  EXPECT_EQ(data, "new");
  EXPECT_THAT(Names(Path("real")), ElementsAre("target.txt"));
  // A dangling link: its target is created.
  std::filesystem::create_symlink("real/later.txt", Path("dangling.txt"));
  ASSERT_OK(fs_->WriteAll(Path("dangling.txt"), "made", /*overwrite=*/true));
  EXPECT_TRUE(std::filesystem::is_symlink(Path("dangling.txt")));
  ASSERT_OK_AND_ASSIGN(data, fs_->ReadAll(Path("real/later.txt")));
  EXPECT_EQ(data, "made");
}

TEST_F(LocalFileIOTest, OverwriteOfAFifoWritesIntoItAndKeepsIt) {
  ASSERT_EQ(::mkfifo(Path("pipe").c_str(), 0644), 0);
  // A second name of the FIFO, to release the reader should the writer never open it.
  ASSERT_EQ(::link(Path("pipe").c_str(), Path("pipe2").c_str()), 0);
  std::string got;
  std::thread reader([&] {
    FILE* f = std::fopen(Path("pipe").c_str(), "rb");
    if (f == nullptr) return;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) got.append(buf, n);
    std::fclose(f);
  });
  const std::string payload(300 * 1024, 'p');  // more than the write buffer
  const Status st = fs_->WriteAll(Path("pipe"), payload, /*overwrite=*/true);
  const int release = ::open(Path("pipe2").c_str(), O_WRONLY | O_NONBLOCK);
  if (release >= 0) ::close(release);
  reader.join();
  ASSERT_OK(st);
  EXPECT_EQ(got.size(), payload.size());
  struct stat sb;
  ASSERT_EQ(::lstat(Path("pipe").c_str(), &sb), 0);
  EXPECT_TRUE(S_ISFIFO(sb.st_mode));
  EXPECT_THAT(Names(root_), ElementsAre("pipe", "pipe2"));  // no temporary file beside it
}

TEST_F(LocalFileIOTest, OverwriteOfACharacterDeviceWritesIntoItAndReportsItsErrors) {
  // Our own device nodes (as /dev/null and /dev/full): the real ones are never put at risk.
  if (::mknod(Path("null").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0 ||
      ::mknod(Path("full").c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0) {
    GTEST_SKIP() << "cannot create device nodes here (needs CAP_MKNOD)";
  }
  ASSERT_OK(fs_->WriteAll(Path("null"), "discarded", /*overwrite=*/true));
  EXPECT_THAT(fs_->WriteAll(Path("full"), std::string(1000, 'x'), /*overwrite=*/true),
              IsErrorWith(ErrorCode::kIOError, "full"));
  struct stat sb;
  ASSERT_EQ(::lstat(Path("null").c_str(), &sb), 0);
  EXPECT_TRUE(S_ISCHR(sb.st_mode));
  ASSERT_EQ(::lstat(Path("full").c_str(), &sb), 0);
  EXPECT_TRUE(S_ISCHR(sb.st_mode));
  EXPECT_THAT(Names(root_), ElementsAre("full", "null"));
}

TEST_F(LocalFileIOTest, OverwriteOfADirectoryIsRefused) {
  ASSERT_OK(fs_->CreateDirs(Path("dir")));
  EXPECT_THAT(fs_->OpenWrite(Path("dir"), /*overwrite=*/true),
              IsErrorWith(ErrorCode::kIOError, "Is a directory"));
}

TEST_F(LocalFileIOTest, DeleteIsIdempotent) {
  ASSERT_OK(fs_->WriteAll(Path("del"), "x", false));
  ASSERT_OK(fs_->Delete(Path("del")));
  ASSERT_OK_AND_ASSIGN(bool exists, fs_->Exists(Path("del")));
  EXPECT_FALSE(exists);
  EXPECT_OK(fs_->Delete(Path("del")));
  EXPECT_OK(fs_->Delete(Path("never/was/here")));
}

TEST_F(LocalFileIOTest, DeleteOfDirectoryFails) {
  ASSERT_OK(fs_->CreateDirs(Path("adir")));
  EXPECT_THAT(fs_->Delete(Path("adir")), IsErrorWith(ErrorCode::kIOError, "adir"));
}

TEST_F(LocalFileIOTest, ListIsRecursiveFilesOnlySorted) {
  ASSERT_OK(fs_->WriteAll(Path("t/data/p=1/b.parquet"), "bb", false));
  ASSERT_OK(fs_->WriteAll(Path("t/data/p=1/a.parquet"), "a", false));
  ASSERT_OK(fs_->WriteAll(Path("t/metadata/v1.metadata.json"), "{}", false));
  ASSERT_OK(fs_->CreateDirs(Path("t/empty/dir")));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> files, fs_->List(Path("t")));
  std::vector<std::string> paths;
  for (const FileInfo& f : files) {
    paths.push_back(f.path);
    EXPECT_FALSE(f.is_directory);
    EXPECT_GT(f.mtime_ns, 0);
  }
  EXPECT_THAT(paths, ElementsAre(Path("t/data/p=1/a.parquet"), Path("t/data/p=1/b.parquet"),
                                 Path("t/metadata/v1.metadata.json")));
  EXPECT_EQ(files[0].size_bytes, 1u);
  EXPECT_EQ(files[1].size_bytes, 2u);
  // A trailing slash does not double up in the result paths.
  ASSERT_OK_AND_ASSIGN(files, fs_->List(Path("t/metadata/")));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, Path("t/metadata/v1.metadata.json"));
}

TEST_F(LocalFileIOTest, ListFollowsFileLinksButNotDirectoryLinks) {
  ASSERT_OK(fs_->WriteAll(Path("s/a/real.bin"), "abc", false));
  ASSERT_EQ(::symlink(Path("s/a/real.bin").c_str(), Path("s/file-link").c_str()), 0);
  ASSERT_EQ(::symlink(Path("s").c_str(), Path("s/a/loop").c_str()), 0);  // link to an ancestor
  ASSERT_EQ(::symlink(Path("s/missing").c_str(), Path("s/dangling").c_str()), 0);
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> files, fs_->List(Path("s")));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, Path("s/a/real.bin"));
  EXPECT_EQ(files[1].path, Path("s/file-link"));
  EXPECT_EQ(files[1].size_bytes, 3u);
}

TEST_F(LocalFileIOTest, ListShowsLeftoverTempFiles) {
  ASSERT_OK_AND_ASSIGN(auto out, fs_->OpenWrite(Path("t/x.parquet"), false));
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> files, fs_->List(Path("t")));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(IsTempFilePath(files[0].path)) << files[0].path;
  out->Abort();
}

TEST_F(LocalFileIOTest, ListOfMissingDirIsEmptyAndOfFileFails) {
  ASSERT_OK_AND_ASSIGN(std::vector<FileInfo> files, fs_->List(Path("missing")));
  EXPECT_THAT(files, IsEmpty());
  ASSERT_OK(fs_->WriteAll(Path("f"), "x", false));
  EXPECT_THAT(fs_->List(Path("f")), IsErrorWith(ErrorCode::kInvalidArgument, "not a directory"));
}

TEST_F(LocalFileIOTest, CreateDirsIsIdempotentAndRejectsFiles) {
  ASSERT_OK(fs_->CreateDirs(Path("p/q/r")));
  ASSERT_OK(fs_->CreateDirs(Path("p/q/r/")));
  ASSERT_OK_AND_ASSIGN(FileInfo info, fs_->Stat(Path("p/q/r")));
  EXPECT_TRUE(info.is_directory);
  ASSERT_OK(fs_->WriteAll(Path("p/file"), "x", false));
  EXPECT_THAT(fs_->CreateDirs(Path("p/file")), IsError(ErrorCode::kAlreadyExists));
  EXPECT_THAT(fs_->CreateDirs(Path("p/file/sub")), IsError(ErrorCode::kNotFound));
}

TEST_F(LocalFileIOTest, AcceptsFileUriPrefix) {
  ASSERT_OK(fs_->WriteAll("file://" + Path("u.json"), "{}", false));
  ASSERT_OK_AND_ASSIGN(std::string data, fs_->ReadAll("file:" + Path("u.json")));
  EXPECT_EQ(data, "{}");
  ASSERT_OK_AND_ASSIGN(data, fs_->ReadAll(Path("u.json")));
  EXPECT_EQ(data, "{}");
}

TEST(IsTempFilePathTest, RecognisesOnlyTempNames) {
  EXPECT_TRUE(IsTempFilePath("/w/t/data/.a.parquet.123-0-abcdef.geolake-tmp"));
  EXPECT_TRUE(IsTempFilePath(".x.geolake-tmp"));
  EXPECT_FALSE(IsTempFilePath("/w/t/data/a.parquet"));
  EXPECT_FALSE(IsTempFilePath("/w/t/data/a.geolake-tmp"));  // not hidden
  EXPECT_FALSE(IsTempFilePath(".geolake-tmp"));
  EXPECT_FALSE(IsTempFilePath("/w/.hidden/a.parquet"));
}

}  // namespace
}  // namespace geolake::io
