#include "api/internal/http_answer.h"

#include <cstdio>

#include "api/http_status.h"
#include "api/internal/http_wire.h"
#include "core/strings.h"

namespace corral::api::internal {
namespace {

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
          out += b;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace

HttpResponse TransportError(int status, ErrorCode code, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = "{\"error\":{\"code\":\"" + std::string(ErrorCodeName(code)) + "\",\"message\":\"" +
           JsonEscape(message) + "\"}}";
  return r;
}

bool BodyForbidden(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

// Serialises a response head (the body is sent separately).
std::string ResponseHead(const HttpResponse& r, size_t body_size, bool keep_alive,
                         bool http10_keep_alive) {
  std::string h;
  h.reserve(128 + r.headers.size() * 32);
  h += "HTTP/1.1 ";
  h += std::to_string(r.status);
  h += ' ';
  h += HttpReasonPhrase(r.status);
  h += "\r\n";
  if (!BodyForbidden(r.status)) {
    if (!r.content_type.empty()) {
      h += "Content-Type: ";
      h += r.content_type;
      h += "\r\n";
    }
    h += "Content-Length: ";
    h += std::to_string(body_size);
    h += "\r\n";
  }
  if (!keep_alive) {
    h += "Connection: close\r\n";
  } else if (http10_keep_alive) {
    h += "Connection: keep-alive\r\n";
  }
  for (const auto& [name, value] : r.headers) {
    // Framing headers are ours; a header that would split the response is a handler bug.
    std::string lower = Lower(name);
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "connection" ||
        lower == "content-type" || !IsToken(name) || HasControlChars(value, true)) {
      continue;
    }
    h += name;
    h += ": ";
    h += value;
    h += "\r\n";
  }
  h += "\r\n";
  return h;
}

}  // namespace corral::api::internal
