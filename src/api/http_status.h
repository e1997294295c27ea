// The only place where error codes become HTTP statuses, and back.
#pragma once

#include "api/http.h"
#include "core/result.h"

namespace corral::api {

// kInvalidArgument -> 400, kUnauthenticated -> 401, kPermissionDenied -> 403, kNotFound -> 404,
// kAlreadyExists/kAborted -> 409, kFailedPrecondition -> 412, kResourceExhausted -> 429,
// kUnimplemented -> 501, kUnavailable -> 503, kDeadlineExceeded -> 504, kInternal -> 500.
int HttpStatusFor(ErrorCode code);
ErrorCode ErrorCodeForHttpStatus(int status);

// A JSON error answer: {"error": {"code": "INVALID_ARGUMENT", "message": "..."}}.
HttpResponse ErrorResponse(const Error& error);

// Turns a non-2xx response into an Error (its message taken from the JSON error body when
// there is one, else from the status line). Returns the response unchanged when 2xx.
Result<HttpResponse> CheckResponse(Result<HttpResponse> response);

}  // namespace corral::api
