#include "geolake/core/logging.h"

#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake {
namespace {

using ::geolake::testing::IsErrorWith;

// Restores the process-wide level after each test.
class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = GetLogLevel(); }
  void TearDown() override {
    SetLogLevel(saved_);
    SetStatusLine(nullptr);
  }
  LogLevel saved_ = LogLevel::kInfo;
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(LoggingTest, WritesOneFormattedLine) {
  SetLogLevel(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  Log(LogLevel::kWarn, "dropped {} rows from '{}'", 3, "a.gpkg");
  GEOLAKE_LOG_ERROR("commit {} failed", "roads");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "geolake: warn: dropped 3 rows from 'a.gpkg'\n"
            "geolake: error: commit roads failed\n");
}

TEST_F(LoggingTest, LevelFiltersAndSkipsArgumentEvaluation) {
  SetLogLevel(LogLevel::kWarn);
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  ::testing::internal::CaptureStderr();
  GEOLAKE_LOG_DEBUG("debug {}", count());
  GEOLAKE_LOG_INFO("info {}", count());
  GEOLAKE_LOG_WARN("warn {}", count());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "geolake: warn: warn 1\n");
  EXPECT_EQ(evaluated, 1);
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
  EXPECT_TRUE(LogEnabled(LogLevel::kError));

  SetLogLevel(LogLevel::kOff);
  ::testing::internal::CaptureStderr();
  GEOLAKE_LOG_ERROR("nothing");
  LogMessage(LogLevel::kOff, "never");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(LoggingTest, NewlinesInMessagesAreFlattened) {
  SetLogLevel(LogLevel::kDebug);
  ::testing::internal::CaptureStderr();
  LogMessage(LogLevel::kDebug, "line one\nline two");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "geolake: debug: line one line two\n");
}

TEST_F(LoggingTest, ParseLogLevel) {
  ASSERT_OK_AND_ASSIGN(LogLevel level, ParseLogLevel("debug"));
  EXPECT_EQ(level, LogLevel::kDebug);
  ASSERT_OK_AND_ASSIGN(level, ParseLogLevel("WARNING"));
  EXPECT_EQ(level, LogLevel::kWarn);
  ASSERT_OK_AND_ASSIGN(level, ParseLogLevel("off"));
  EXPECT_EQ(level, LogLevel::kOff);
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    ASSERT_OK_AND_ASSIGN(level, ParseLogLevel(LogLevelName(l)));
    EXPECT_EQ(level, l);
  }
  EXPECT_THAT(ParseLogLevel("verbose"), IsErrorWith(ErrorCode::kInvalidArgument, "'verbose'"));
  EXPECT_THAT(ParseLogLevel(""), IsErrorWith(ErrorCode::kInvalidArgument, "log level"));
}

class FakeStatusLine : public StatusLine {
 public:
  std::string ClearText() override { return "<clear>"; }
  std::string RedrawText() override { return "<bar 50%>"; }
};

TEST_F(LoggingTest, StatusLineIsClearedAndRedrawnAroundEachLine) {
  SetLogLevel(LogLevel::kInfo);
  FakeStatusLine bar;
  SetStatusLine(&bar);
  ::testing::internal::CaptureStderr();
  GEOLAKE_LOG_INFO("hello");
  WriteStderr("<bar 60%>");
  SetStatusLine(nullptr);
  GEOLAKE_LOG_INFO("after");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "<clear>geolake: info: hello\n<bar 50%><bar 60%>geolake: info: after\n");
}

TEST_F(LoggingTest, ConcurrentLinesNeverInterleave) {
  SetLogLevel(LogLevel::kInfo);
  constexpr int kThreads = 8;
  constexpr int kLinesPerThread = 200;
  ::testing::internal::CaptureStderr();
  {
    std::vector<std::jthread> threads;
    threads.reserve(8);
    for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
      threads.emplace_back([thread_idx] {
        for (int line_idx = 0; line_idx < kLinesPerThread; ++line_idx) {
          GEOLAKE_LOG_INFO("thread {} line {} {}", thread_idx, line_idx, std::string(100, 'x'));
        }
      });
    }
  }
  const std::vector<std::string> lines = Lines(::testing::internal::GetCapturedStderr());
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kThreads * kLinesPerThread));
  std::set<std::string> distinct;
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.starts_with("geolake: info: thread ")) << line;
    EXPECT_TRUE(line.ends_with(std::string(100, 'x'))) << line;
    distinct.insert(line);
  }
  EXPECT_EQ(distinct.size(), lines.size());
}

}  // namespace
}  // namespace geolake
