/// \file
/// GoogleTest helpers for Status and Result: the matchers IsOk() and IsError(code), the
/// macros ASSERT_OK, EXPECT_OK and ASSERT_OK_AND_ASSIGN, and RunCommand for tests that run the
/// `geolake` program. Include only from *_test.cc files.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "geolake/core/result.h"

namespace geolake::testing {

/// \brief What a shell command printed (stdout and stderr together) and its exit code
/// (-1 when it did not exit normally or could not be started).
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

/// \brief Run `command` through /bin/sh and wait for it.
inline CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

MATCHER(IsOk, "is OK") {
  const Status st = ::geolake::testing::StatusOf(arg);
  if (!st.ok()) *result_listener << "which is " << st.ToString();
  return st.ok();
}

MATCHER_P(IsError, code, "fails with " + std::string(::geolake::ErrorCodeName(code))) {
  const Status st = ::geolake::testing::StatusOf(arg);
  *result_listener << "which is " << st.ToString();
  return st.code() == code;
}

/// Matches an error whose code is `code` and whose message contains `text`.
MATCHER_P2(IsErrorWith, code, text,
           "fails with " + std::string(::geolake::ErrorCodeName(code)) + " mentioning '" +
               std::string(text) + "'") {
  const Status st = ::geolake::testing::StatusOf(arg);
  *result_listener << "which is " << st.ToString();
  return st.code() == code && st.message().find(text) != std::string::npos;
}

}  // namespace geolake::testing

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::geolake::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::geolake::testing::IsOk())

#define GEOLAKE_ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, rexpr)            \
  auto tmp = (rexpr);                                                 \
  ASSERT_TRUE(tmp.ok()) << #rexpr << ": " << tmp.status().ToString(); \
  lhs = std::move(tmp).value()

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  GEOLAKE_ASSERT_OK_AND_ASSIGN_IMPL(GEOLAKE_CONCAT(_geolake_t_, __LINE__), lhs, rexpr)
