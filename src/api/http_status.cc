#include "api/http_status.h"

#include <string>

#include <nlohmann/json.hpp>

namespace corral::api {
namespace {

constexpr ErrorCode kAllCodes[] = {
    ErrorCode::kInvalidArgument,   ErrorCode::kNotFound,
    ErrorCode::kAlreadyExists,     ErrorCode::kFailedPrecondition,
    ErrorCode::kResourceExhausted, ErrorCode::kUnavailable,
    ErrorCode::kAborted,           ErrorCode::kDeadlineExceeded,
    ErrorCode::kPermissionDenied,  ErrorCode::kUnauthenticated,
    ErrorCode::kUnimplemented,     ErrorCode::kInternal,
};

bool ParseErrorCode(std::string_view name, ErrorCode* code) {
  for (ErrorCode c : kAllCodes) {
    if (ErrorCodeName(c) == name) {
      *code = c;
      return true;
    }
  }
  return false;
}

}  // namespace

int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kAlreadyExists:
      return 409;
    case ErrorCode::kAborted:
      return 409;
    case ErrorCode::kFailedPrecondition:
      return 412;
    case ErrorCode::kResourceExhausted:
      return 429;
    case ErrorCode::kUnimplemented:
      return 501;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kDeadlineExceeded:
      return 504;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

ErrorCode ErrorCodeForHttpStatus(int status) {
  switch (status) {
    case 401:
      return ErrorCode::kUnauthenticated;
    case 403:
      return ErrorCode::kPermissionDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 405:
      return ErrorCode::kUnimplemented;
    case 408:
      return ErrorCode::kDeadlineExceeded;
    case 409:
      return ErrorCode::kAborted;
    case 412:
      return ErrorCode::kFailedPrecondition;
    case 429:
      return ErrorCode::kResourceExhausted;
    case 501:
      return ErrorCode::kUnimplemented;
    case 502:
      return ErrorCode::kUnavailable;
    case 503:
      return ErrorCode::kUnavailable;
    case 504:
      return ErrorCode::kDeadlineExceeded;
    case 505:
      return ErrorCode::kUnimplemented;
    default:
      break;
  }
  if (status >= 400 && status < 500) return ErrorCode::kInvalidArgument;
  return ErrorCode::kInternal;
}

std::string_view HttpReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 101:
      return "Switching Protocols";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

HttpResponse ErrorResponse(const Error& error) {
  nlohmann::json body = {
      {"error", {{"code", std::string(ErrorCodeName(error.code))}, {"message", error.message}}}};
  HttpResponse r;
  r.status = HttpStatusFor(error.code);
  r.content_type = "application/json";
  // Invalid UTF-8 in a message (a file name, say) is replaced rather than thrown on.
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

Result<HttpResponse> CheckResponse(Result<HttpResponse> response) {
  if (!response.has_value()) return response;
  const int status = response->status;
  if (status >= 200 && status < 300) return response;
  Error error{ErrorCodeForHttpStatus(status), ""};
  nlohmann::json j = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    auto e = j.find("error");
    if (e != j.end() && e->is_object()) {
      auto code = e->find("code");
      auto message = e->find("message");
      if (code != e->end() && code->is_string()) {
        ErrorCode parsed;
        if (ParseErrorCode(code->get<std::string>(), &parsed)) error.code = parsed;
      }
      if (message != e->end() && message->is_string()) error.message = message->get<std::string>();
    }
  }
  if (error.message.empty()) {
    error.message = "HTTP " + std::to_string(status) + " " + std::string(HttpReasonPhrase(status));
    // A proxy's or a foreign server's short text answer is worth showing.
    std::string_view body = response->body;
    if (!body.empty() && body.size() <= 200 &&
        body.find_first_of(std::string_view("\0\r", 2)) == std::string_view::npos) {
      while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.remove_suffix(1);
      if (!body.empty()) error.message += ": " + std::string(body);
    }
  }
  return tl::unexpected<Error>(std::move(error));
}

}  // namespace corral::api
