#include "api/internal/url.h"

#include <cctype>

#include "api/http.h"
#include "api/internal/http_wire.h"
#include "core/strings.h"

namespace corral::api {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      auto u = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

namespace internal {

void ParseQuery(std::string_view q, std::map<std::string, std::string>* out) {
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view item = q.substr(0, amp);
    if (!item.empty()) {
      size_t eq = item.find('=');
      std::string key = UrlDecode(item.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : UrlDecode(item.substr(eq + 1));
      (*out)[std::move(key)] = std::move(value);
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
}

Result<BaseUrl> ParseBaseUrl(const std::string& base_url, bool allow_https) {
  auto bad = [&base_url](std::string_view why) {
    return InvalidArgument("invalid base URL \"" + base_url + "\": " + std::string(why) +
                           " (expected http[s]://host[:port][/prefix])");
  };
  std::string_view url = base_url;
  bool tls = false;
  if (url.substr(0, 7) == "http://") {
    url.remove_prefix(7);
  } else if (allow_https && url.substr(0, 8) == "https://") {
    url.remove_prefix(8);
    tls = true;
  } else {
    return bad(allow_https ? "scheme must be http:// or https://" : "scheme must be http://");
  }
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  std::string_view prefix =
      slash == std::string_view::npos ? std::string_view() : url.substr(slash);
  if (authority.empty()) return bad("no host");
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");
  std::string_view host;
  std::string_view port;
  if (authority.front() == '[') {
    size_t close_bracket = authority.find(']');
    if (close_bracket == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(1, close_bracket - 1);
    std::string_view after = authority.substr(close_bracket + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the IPv6 address");
      port = after.substr(1);
      if (port.empty()) return bad("empty port");
    }
    if (host.empty() ||
        host.find_first_not_of("0123456789abcdefABCDEF:.%") != std::string_view::npos) {
      return bad("invalid IPv6 address");
    }
  } else {
    size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return bad("empty port");
    }
    if (host.empty()) return bad("no host");
    for (char c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
        return bad("invalid host name");
      }
    }
  }
  if (!port.empty()) {
    std::optional<uint64_t> n = port.size() > 5 ? std::nullopt : ParseUint(port);
    if (!n || *n < 1 || *n > 65535) {
      return bad("invalid port");
    }
  }
  if (prefix.find_first_of("?# ") != std::string_view::npos ||
      internal::HasControlChars(prefix, false)) {
    return bad("the prefix may not hold a query, a fragment or spaces");
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);

  BaseUrl b;
  b.tls = tls;
  b.host = std::string(host);
  b.port = port.empty() ? (tls ? "443" : "80") : std::string(port);
  b.host_header = std::string(authority);
  b.prefix = std::string(prefix);
  return b;
}

}  // namespace internal
}  // namespace corral::api
