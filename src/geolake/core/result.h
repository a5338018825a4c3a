/// \file
/// Status and Result<T>: how every fallible geolake function reports failure. A Status is an
/// ErrorCode plus a message; Result<T> holds either a value or a non-OK Status. Both are shaped
/// like std::expected so that they can become aliases of it later. No exception crosses a
/// geolake API; errors travel as these values and are propagated with GEOLAKE_RETURN_NOT_OK and
/// GEOLAKE_ASSIGN_OR_RETURN.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace geolake {

/// The kinds of failure. The CLI maps each to a fixed exit code (cli/exit_codes.h), so the
/// numeric values are part of the command-line contract: append, never renumber.
enum class ErrorCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument = 1,
  kNotFound = 2,
  kAlreadyExists = 3,
  kIOError = 4,
  kCorruptData = 5,
  kCommitConflict = 6,
  kGeometryError = 7,
  kCancelled = 8,
  kNotImplemented = 9,
  kInternal = 10,
};

/// \brief Name an error code ("invalid argument", "commit conflict", ...).
std::string_view ErrorCodeName(ErrorCode code);

/// \brief The outcome of an operation that returns no value.
///
/// An OK status carries no message and costs one byte plus an empty string. Thread-safety: a
/// value type; const methods are safe to call concurrently.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return {}; }
  static Status InvalidArgument(std::string msg) {
    return {ErrorCode::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {ErrorCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) {
    return {ErrorCode::kAlreadyExists, std::move(msg)};
  }
  static Status IOError(std::string msg) { return {ErrorCode::kIOError, std::move(msg)}; }
  static Status CorruptData(std::string msg) { return {ErrorCode::kCorruptData, std::move(msg)}; }
  static Status CommitConflict(std::string msg) {
    return {ErrorCode::kCommitConflict, std::move(msg)};
  }
  static Status GeometryError(std::string msg) {
    return {ErrorCode::kGeometryError, std::move(msg)};
  }
  static Status Cancelled(std::string msg) { return {ErrorCode::kCancelled, std::move(msg)}; }
  static Status NotImplemented(std::string msg) {
    return {ErrorCode::kNotImplemented, std::move(msg)};
  }
  static Status Internal(std::string msg) { return {ErrorCode::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// \brief "commit conflict: <message>", or "ok".
  std::string ToString() const;

  /// \brief Prefix the message with where the error happened: "ctx: message".
  ///
  /// Returns *this unchanged when OK, so it can wrap any call:
  /// `return ReadFooter(f).WithContext("file 'a.parquet'");`
  Status WithContext(std::string_view context) const&;
  Status WithContext(std::string_view context) &&;

  bool operator==(const Status& other) const = default;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

/// \brief Either a value of type T or a non-OK Status.
///
/// Constructing a Result from an OK Status is a programmer error; it becomes kInternal so that
/// no caller ever sees an OK Result without a value.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "Result<Status> makes no sense");

 public:
  using value_type = T;

  // Implicit on purpose: `return value;` and `return status;` both read naturally.
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Status status)                                                    // NOLINT
      : storage_(std::in_place_index<1>,
                 status.ok() ? Status::Internal("Result constructed from an OK status")
                             : std::move(status)) {}
  template <typename U, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                    !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, Result<T>>>>
  Result(U&& value) : storage_(std::in_place_index<0>, T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return storage_.index() == 0; }
  bool has_value() const { return ok(); }
  explicit operator bool() const { return ok(); }

  /// \brief The error, or OK when a value is held.
  Status status() const& { return ok() ? Status::OK() : std::get<1>(storage_); }
  Status status() && { return ok() ? Status::OK() : std::move(std::get<1>(storage_)); }
  const Status& error() const { return std::get<1>(storage_); }

  T& value() & { return std::get<0>(storage_); }
  const T& value() const& { return std::get<0>(storage_); }
  T&& value() && { return std::get<0>(std::move(storage_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

  /// \brief Prefix the error message with context; a held value passes through.
  Result<T> WithContext(std::string_view context) && {
    if (ok()) return std::move(*this);
    return std::move(std::get<1>(storage_)).WithContext(context);
  }

 private:
  std::variant<T, Status> storage_;
};

namespace internal {
inline const Status& ToStatus(const Status& s) { return s; }
inline Status ToStatus(Status&& s) { return std::move(s); }
template <typename T>
Status ToStatus(const Result<T>& r) {
  return r.status();
}
template <typename T>
Status ToStatus(Result<T>&& r) {
  return std::move(r).status();
}
}  // namespace internal

}  // namespace geolake

#define GEOLAKE_CONCAT_IMPL(a, b) a##b
#define GEOLAKE_CONCAT(a, b) GEOLAKE_CONCAT_IMPL(a, b)

/// Return the Status of `expr` (a Status or Result) from the enclosing function if it failed.
#define GEOLAKE_RETURN_NOT_OK(expr)                            \
  do {                                                         \
    ::geolake::Status GEOLAKE_CONCAT(_geolake_st_, __LINE__) = \
        ::geolake::internal::ToStatus((expr));                 \
    if (!GEOLAKE_CONCAT(_geolake_st_, __LINE__).ok()) {        \
      return GEOLAKE_CONCAT(_geolake_st_, __LINE__);           \
    }                                                          \
  } while (false)

/// Like GEOLAKE_RETURN_NOT_OK, but prefix the message with `context` (anything convertible
/// to std::string_view) on failure.
#define GEOLAKE_RETURN_NOT_OK_CTX(expr, context)                                     \
  do {                                                                               \
    ::geolake::Status GEOLAKE_CONCAT(_geolake_st_, __LINE__) =                       \
        ::geolake::internal::ToStatus((expr));                                       \
    if (!GEOLAKE_CONCAT(_geolake_st_, __LINE__).ok()) {                              \
      return std::move(GEOLAKE_CONCAT(_geolake_st_, __LINE__)).WithContext(context); \
    }                                                                                \
  } while (false)

#define GEOLAKE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();       \
  lhs = std::move(tmp).value()

/// Evaluate `rexpr` (a Result<T>); on error return its Status, otherwise move the value into
/// `lhs`, which may be a declaration: `GEOLAKE_ASSIGN_OR_RETURN(auto file, Open(path));`
#define GEOLAKE_ASSIGN_OR_RETURN(lhs, rexpr) \
  GEOLAKE_ASSIGN_OR_RETURN_IMPL(GEOLAKE_CONCAT(_geolake_res_, __LINE__), lhs, rexpr)

/// Programmer-error check, active in debug builds only. Never use it for user data.
#ifdef NDEBUG
#define GEOLAKE_DCHECK(cond) \
  do {                       \
  } while (false && (cond))
#else
#include <cstdio>
#include <cstdlib>
#define GEOLAKE_DCHECK(cond)                                                         \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: DCHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (false)
#endif
