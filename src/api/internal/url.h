// URL pieces of the HTTP transport: a client's base URL ("http://host:port/prefix") and the
// query string of a request target. `UrlEncode`/`UrlDecode` are declared in api/http.h.
//
// Thread-safe: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace corral::api::internal {

struct BaseUrl {
  bool tls = false;         // https://
  std::string host;         // without the brackets of an IPv6 literal
  std::string port;         // decimal; 80 or 443 when the URL has none
  std::string host_header;  // host[:port] as written in the URL
  std::string prefix;       // "" or "/prefix", without a trailing slash
};

// Parses "http[s]://host[:port][/prefix]". Returns kInvalidArgument naming the URL and what
// is wrong with it. `https://` is accepted only when `allow_https`.
Result<BaseUrl> ParseBaseUrl(const std::string& url, bool allow_https);

// Parses "a=1&b=x%20y&flag" into decoded pairs (the last of a repeated key wins).
void ParseQuery(std::string_view query, std::map<std::string, std::string>* out);

}  // namespace corral::api::internal
