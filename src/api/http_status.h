// The only place where error codes become HTTP statuses, and back.
#pragma once

#include <string_view>

#include "api/http.h"
#include "core/result.h"

namespace corral::api {

// kInvalidArgument -> 400, kUnauthenticated -> 401, kPermissionDenied -> 403, kNotFound -> 404,
// kAlreadyExists/kAborted -> 409, kFailedPrecondition -> 412, kResourceExhausted -> 429,
// kUnimplemented -> 501, kUnavailable -> 503, kDeadlineExceeded -> 504, kInternal -> 500.
int HttpStatusFor(ErrorCode code);
// The reverse, for answers that carry no JSON error body (a proxy's 502, the transport's own
// 408/413/431): 400, 411, 413, 414, 417, 422, 431 and other 4xx -> kInvalidArgument,
// 401 -> kUnauthenticated, 403 -> kPermissionDenied, 404 -> kNotFound, 405 and 501/505 ->
// kUnimplemented, 408/504 -> kDeadlineExceeded, 409 -> kAborted, 412 -> kFailedPrecondition,
// 429 -> kResourceExhausted, 502/503 -> kUnavailable; anything else (5xx, and statuses that
// are not errors) -> kInternal.
ErrorCode ErrorCodeForHttpStatus(int status);

// The standard reason phrase of an HTTP status ("Not Found"), or "Unknown" for others.
std::string_view HttpReasonPhrase(int status);

// A JSON error answer: {"error": {"code": "INVALID_ARGUMENT", "message": "..."}}.
HttpResponse ErrorResponse(const Error& error);

// Turns a non-2xx response into an Error (its message taken from the JSON error body when
// there is one, else from the status line). Returns the response unchanged when 2xx.
Result<HttpResponse> CheckResponse(Result<HttpResponse> response);

}  // namespace corral::api
