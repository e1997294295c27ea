// Answers the HTTP server writes itself: response heads, and the JSON errors of the transport
// (bad request, no route, timeouts, ...) in the format of api/http_status.h.
//
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "api/http.h"
#include "core/result.h"

namespace corral::api::internal {

// An answer produced by the transport itself, with the JSON error body of api/http_status.h.
HttpResponse TransportError(int status, ErrorCode code, std::string_view message);

// True for statuses that never carry a body (1xx, 204, 304).
bool BodyForbidden(int status);

// Serialises a response head (the body is sent separately). Framing headers of `r.headers`
// (Content-Length, Transfer-Encoding, Connection, Content-Type) and malformed ones are dropped.
std::string ResponseHead(const HttpResponse& r, size_t body_size, bool keep_alive,
                         bool http10_keep_alive);

}  // namespace corral::api::internal
