#include "api/internal/http_router.h"

#include <algorithm>
#include <exception>
#include <map>
#include <string_view>

#include "api/internal/http_answer.h"
#include "core/check.h"
#include "core/log.h"
#include "core/strings.h"

namespace corral::api::internal {
namespace {

// Splits a route pattern or a raw path into its segments ("/a/b" -> {"a", "b"}; "/" -> {""}).
std::vector<std::string> SplitPath(std::string_view path) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return Split(path, '/');
}

// Matches `route` against the raw path segments (`decoded` holds the same, percent-decoded).
// On a match fills the parameters and a rank: lower ranks are more specific (a literal
// segment beats a parameter, which beats a trailing `{name*}`).
bool MatchRoute(const RouteEntry& route, const std::vector<std::string>& raw,
                const std::vector<std::string>& decoded, std::map<std::string, std::string>* params,
                std::vector<int>* rank) {
  size_t n = route.segments.size();
  if (route.has_rest ? raw.size() < n : raw.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (route.is_param[i]) {
      if (decoded[i].empty()) return false;
      (*params)[route.segments[i]] = decoded[i];
      rank->push_back(1);
    } else {
      if (decoded[i] != route.segments[i]) return false;
      rank->push_back(0);
    }
  }
  if (route.has_rest) {
    std::string rest;
    for (size_t i = n; i < raw.size(); ++i) {
      if (i > n) rest += '/';
      rest += raw[i];
    }
    (*params)[route.rest_name] = UrlDecode(rest);
    rank->push_back(2);
  }
  return true;
}

}  // namespace

void Router::Add(std::string method, std::string pattern, HttpHandler handler) {
  CORRAL_CHECK(!pattern.empty() && pattern.front() == '/') << "route pattern " << pattern;
  RouteEntry e;
  e.method = std::move(method);
  e.handler = std::move(handler);
  std::vector<std::string> segments = SplitPath(pattern);
  for (size_t i = 0; i < segments.size(); ++i) {
    std::string_view s = segments[i];
    bool param = s.size() >= 2 && s.front() == '{' && s.back() == '}';
    if (param && s.size() >= 3 && s[s.size() - 2] == '*') {
      CORRAL_CHECK(i + 1 == segments.size()) << "{name*} must end the pattern " << pattern;
      e.has_rest = true;
      e.rest_name = std::string(s.substr(1, s.size() - 3));
      break;
    }
    e.segments.emplace_back(param ? s.substr(1, s.size() - 2) : s);
    e.is_param.push_back(param);
  }
  routes_.push_back(std::move(e));
}

HttpResponse Router::Dispatch(HttpRequest& req, const std::string& raw_path) const {
  std::vector<std::string> raw = SplitPath(raw_path);
  std::vector<std::string> decoded;
  decoded.reserve(raw.size());
  for (const std::string& s : raw) decoded.push_back(UrlDecode(s));

  const RouteEntry* best = nullptr;
  std::vector<int> best_rank;
  std::map<std::string, std::string> best_params;
  std::vector<std::string> allowed;
  for (const RouteEntry& route : routes_) {
    std::map<std::string, std::string> params;
    std::vector<int> rank;
    if (!MatchRoute(route, raw, decoded, &params, &rank)) continue;
    bool exact = route.method == req.method;
    if (!exact && !(req.method == "HEAD" && route.method == "GET")) {
      allowed.push_back(route.method);
      continue;
    }
    rank.push_back(exact ? 0 : 1);  // a HEAD route beats the GET fallback
    if (best == nullptr || rank < best_rank) {
      best = &route;
      best_rank = std::move(rank);
      best_params = std::move(params);
    }
  }
  if (best == nullptr) {
    if (allowed.empty()) {
      return TransportError(404, ErrorCode::kNotFound,
                            "no route for " + req.method + " " + req.path);
    }
    std::sort(allowed.begin(), allowed.end());
    allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
    std::string allow = Join(allowed, ", ");
    HttpResponse r = TransportError(
        405, ErrorCode::kUnimplemented,
        "method " + req.method + " is not allowed on " + req.path + " (allowed: " + allow + ")");
    r.headers["Allow"] = allow;
    return r;
  }
  req.params = std::move(best_params);
  try {
    HttpResponse r = best->handler(req);
    if (r.status < 200 || r.status > 999) {
      CORRAL_LOG(Error) << "http server: handler for " << req.method << " " << req.path
                        << " returned status " << r.status;
      return TransportError(500, ErrorCode::kInternal, "handler returned an invalid status");
    }
    return r;
  } catch (const std::exception& e) {
    CORRAL_LOG(Error) << "http server: handler for " << req.method << " " << req.path
                      << " threw: " << e.what();
    return TransportError(500, ErrorCode::kInternal, std::string("handler failed: ") + e.what());
  } catch (...) {
    CORRAL_LOG(Error) << "http server: handler for " << req.method << " " << req.path
                      << " threw a non-standard exception";
    return TransportError(500, ErrorCode::kInternal, "handler failed");
  }
}

}  // namespace corral::api::internal
