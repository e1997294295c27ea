// Result<T> and Status: the error type of every module boundary in Corral.
//
// A `Result<T>` holds either a value or an `Error` (a canonical `ErrorCode` plus a message
// that names the entity, lowercase, with no trailing period). `Status` is `Result<void>`;
// `return {};` is success. Exceptions never cross a module boundary: adapters of third-party
// code catch them and return an `Error`. Only the part of tl::expected that std::expected
// also has may be used (has_value, *, ->, value, error, and_then, transform, or_else).
//
// Thread-safety: value types; the usual rules for values apply.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace corral {

// Canonical error codes with Abseil's meanings. `api/http_status.cc` maps them to HTTP.
enum class ErrorCode {
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kResourceExhausted,
  kUnavailable,
  kAborted,
  kDeadlineExceeded,
  kPermissionDenied,
  kUnauthenticated,
  kUnimplemented,
  kInternal,
};

std::string_view ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;
  bool operator==(const Error&) const = default;
};

template <typename T>
class [[nodiscard]] Result : public tl::expected<T, Error> {
 public:
  using tl::expected<T, Error>::expected;
  Result(tl::expected<T, Error> e) : tl::expected<T, Error>(std::move(e)) {}  // NOLINT
};

using Status = Result<void>;

inline tl::unexpected<Error> MakeError(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

inline tl::unexpected<Error> InvalidArgument(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}
inline tl::unexpected<Error> NotFound(std::string message) {
  return MakeError(ErrorCode::kNotFound, std::move(message));
}
inline tl::unexpected<Error> FailedPrecondition(std::string message) {
  return MakeError(ErrorCode::kFailedPrecondition, std::move(message));
}
inline tl::unexpected<Error> Internal(std::string message) {
  return MakeError(ErrorCode::kInternal, std::move(message));
}
inline tl::unexpected<Error> Unavailable(std::string message) {
  return MakeError(ErrorCode::kUnavailable, std::move(message));
}

// Returns the error with `prefix + ": "` put in front of its message.
inline tl::unexpected<Error> Annotate(const Error& e, std::string_view prefix) {
  return MakeError(e.code, std::string(prefix) + ": " + e.message);
}

}  // namespace corral

#define CORRAL_CONCAT_INNER_(a, b) a##b
#define CORRAL_CONCAT_(a, b) CORRAL_CONCAT_INNER_(a, b)

// Returns the error of `expr` (a Status or Result) from the enclosing function.
#define CORRAL_RETURN_IF_ERROR(expr)                                   \
  do {                                                                 \
    auto&& corral_status_ = (expr);                                    \
    if (!corral_status_.has_value()) {                                 \
      return ::tl::unexpected<::corral::Error>(corral_status_.error()); \
    }                                                                  \
  } while (false)

// Evaluates `rexpr` (a Result<T>); on error returns it, else assigns the value to `lhs`.
#define CORRAL_ASSIGN_OR_RETURN(lhs, rexpr) \
  CORRAL_ASSIGN_OR_RETURN_IMPL_(CORRAL_CONCAT_(corral_result_, __LINE__), lhs, rexpr)
#define CORRAL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr)        \
  auto tmp = (rexpr);                                         \
  if (!tmp.has_value()) {                                     \
    return ::tl::unexpected<::corral::Error>(tmp.error());    \
  }                                                           \
  lhs = std::move(*tmp)
