/// \file
/// GoogleTest matchers for Status and Result: IsOk(), IsError(code), IsErrorWith(code, text),
/// and the macros ASSERT_OK, EXPECT_OK and ASSERT_OK_AND_ASSIGN. Include only from *_test.cc
/// files (usually through geolake/testing/testing.h).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "geolake/core/result.h"

namespace geolake::testing {

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
