#include "geolake/pipeline/run_journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake::pipeline {
namespace {

namespace fs = std::filesystem;
using ::geolake::testing::IsError;

class RunJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("geolake_run_journal_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    run_dir_ = (dir_ / "run").string();
    io_ = io::MakeLocalFileIO();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static JournalEntry Entry(const std::string& path, std::int64_t rows) {
    JournalEntry e;
    e.path = path;
    e.source = "src.gpkg@1";
    e.unit = rows / 10;
    e.rows = rows;
    return e;
  }

  std::vector<std::string> Lines(const std::string& name) const {
    std::ifstream in(run_dir_ + "/" + name);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  // The change files present, by name.
  std::vector<std::string> ChangeFiles() const {
    std::vector<std::string> names;
    for (const auto& f : fs::directory_iterator(run_dir_)) {
      const std::string name = f.path().filename().string();
      if (name.starts_with("journal-")) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
  std::string run_dir_;
  std::unique_ptr<io::FileIO> io_;
};

TEST_F(RunJournalTest, EachChangeIsAFileOfItsOwnLinesAndFinishWritesTheWhole) {
  ASSERT_OK_AND_ASSIGN(auto journal, RunJournal::Open(io_.get(), run_dir_, "run-1", "ns.t"));
  ASSERT_OK(journal->FilesWritten({Entry("a.parquet", 10), Entry("b.parquet", 20)}));
  ASSERT_OK(journal->FilesWritten({Entry("c.parquet", 30)}));
  ASSERT_OK(journal->FilesCommitted({"a.parquet", "c.parquet", "unknown.parquet"}, 7));

  // During the run: the header alone in journal.jsonl, one file per change with its lines.
  ASSERT_EQ(Lines("journal.jsonl").size(), 1u);
  EXPECT_THAT(Lines("journal.jsonl")[0], ::testing::HasSubstr("\"run_id\":\"run-1\""));
  EXPECT_THAT(ChangeFiles(), ::testing::ElementsAre("journal-000001.jsonl", "journal-000002.jsonl",
                                                    "journal-000003.jsonl"));
  EXPECT_EQ(Lines("journal-000001.jsonl").size(), 2u);
  ASSERT_EQ(Lines("journal-000002.jsonl").size(), 1u);
  EXPECT_THAT(Lines("journal-000002.jsonl")[0], ::testing::HasSubstr("c.parquet"));
  ASSERT_EQ(Lines("journal-000003.jsonl").size(), 2u);  // a and c, not b, not the unknown
  EXPECT_THAT(Lines("journal-000003.jsonl")[1], ::testing::HasSubstr("\"snapshot_id\":7"));

  const auto check = [](const std::vector<JournalEntry>& entries) {
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].path, "a.parquet");
    EXPECT_TRUE(entries[0].committed);
    EXPECT_EQ(entries[0].snapshot_id, 7);
    EXPECT_EQ(entries[1].path, "b.parquet");
    EXPECT_FALSE(entries[1].committed);
    EXPECT_EQ(entries[1].rows, 20);
    EXPECT_EQ(entries[2].path, "c.parquet");
    EXPECT_TRUE(entries[2].committed);
    EXPECT_EQ(entries[2].unit, 3);
  };
  // A run killed now leaves these files: Read() folds them.
  ASSERT_OK_AND_ASSIGN(std::vector<JournalEntry> read, RunJournal::Read(io_.get(), run_dir_));
  check(read);

  ASSERT_OK(journal->Finish());
  EXPECT_THAT(ChangeFiles(), ::testing::IsEmpty());
  const std::vector<std::string> lines = Lines("journal.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[2], ::testing::HasSubstr("\"file\":\"b.parquet\""));
  EXPECT_THAT(lines[2], ::testing::HasSubstr("\"committed\":false"));
  ASSERT_OK_AND_ASSIGN(read, RunJournal::Read(io_.get(), run_dir_));
  check(read);
  check(journal->entries());
}

// A change file that a failed delete left behind holds an older state: journal.jsonl's own
// line wins. Files that are not change files are not read.
TEST_F(RunJournalTest, FinishedJournalWinsOverAStrayChangeFile) {
  ASSERT_OK_AND_ASSIGN(auto journal, RunJournal::Open(io_.get(), run_dir_, "run-2", "ns.t"));
  ASSERT_OK(journal->FilesWritten({Entry("a.parquet", 10)}));
  const std::vector<std::string> written = Lines("journal-000001.jsonl");
  ASSERT_OK(journal->FilesCommitted({"a.parquet"}, 9));
  ASSERT_OK(journal->Finish());
  {
    std::ofstream stray(run_dir_ + "/journal-000001.jsonl");
    stray << written[0] << "\n";
    // Not change files: other names, and a subfolder's.
    std::ofstream(run_dir_ + "/journal-x.jsonl") << "garbage\n";
    std::ofstream(run_dir_ + "/journal-000002.jsonl.tmp") << "garbage\n";
    fs::create_directories(run_dir_ + "/notes");
    std::ofstream(run_dir_ + "/notes/journal-000003.jsonl") << "garbage\n";
  }
  ASSERT_OK_AND_ASSIGN(std::vector<JournalEntry> read, RunJournal::Read(io_.get(), run_dir_));
  ASSERT_EQ(read.size(), 1u);
  EXPECT_TRUE(read[0].committed);
  EXPECT_EQ(read[0].snapshot_id, 9);
}

// Writing many files costs each change its own lines: the journal is never written again whole
// before Finish().
TEST_F(RunJournalTest, ManyFilesWriteLinearlyManyBytes) {
  ASSERT_OK_AND_ASSIGN(auto journal, RunJournal::Open(io_.get(), run_dir_, "run-3", "ns.t"));
  constexpr int kFiles = 500;
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_OK(journal->FilesWritten({Entry("f" + std::to_string(i) + ".parquet", i)}));
  }
  std::uintmax_t change_bytes = 0;
  for (const std::string& name : ChangeFiles())
    change_bytes += fs::file_size(run_dir_ + "/" + name);
  ASSERT_OK(journal->Finish());
  const std::uintmax_t whole = fs::file_size(run_dir_ + "/journal.jsonl");
  // The changes together are about one journal's size (a rewrite per change would be ~250x).
  EXPECT_LT(change_bytes, whole * 11 / 10);
  ASSERT_OK_AND_ASSIGN(std::vector<JournalEntry> read, RunJournal::Read(io_.get(), run_dir_));
  EXPECT_EQ(read.size(), static_cast<std::size_t>(kFiles));
}

TEST_F(RunJournalTest, ReadRefusesALineThatIsNotAnEntry) {
  ASSERT_OK_AND_ASSIGN(auto journal, RunJournal::Open(io_.get(), run_dir_, "run-4", "ns.t"));
  ASSERT_OK(journal->FilesWritten({Entry("a.parquet", 10)}));
  {
    std::ofstream bad(run_dir_ + "/journal-000002.jsonl");
    bad << "{\"file\":\"b.parquet\",\"rows\":\"many\"}\n";
  }
  EXPECT_THAT(RunJournal::Read(io_.get(), run_dir_), IsError(ErrorCode::kCorruptData));
  EXPECT_THAT(RunJournal::Read(io_.get(), run_dir_ + "/missing"), IsError(ErrorCode::kNotFound));
}

}  // namespace
}  // namespace geolake::pipeline
