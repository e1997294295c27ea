// The server's router: method and path patterns ("/api/v1/jobs/{id}", "/files/{path*}") to
// handlers, with the matching rules documented at `HttpServer::Route`.
//
// Thread-safety: `Add` before any `Dispatch`; `Dispatch` is then thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/http.h"

namespace corral::api::internal {

struct RouteEntry {
  std::string method;
  std::vector<std::string> segments;  // a literal, or a parameter name when is_param
  std::vector<bool> is_param;
  bool has_rest = false;
  std::string rest_name;
  HttpHandler handler;
};

class Router {
 public:
  // Requires: `pattern` starts with "/"; a `{name*}` segment ends it (both checked).
  void Add(std::string method, std::string pattern, HttpHandler handler);

  // Finds the route of `req` (`raw_path` is its path still percent-encoded), fills
  // `req->params` and runs the handler. No route: 404; a known path with another method: 405
  // with `Allow`. A handler that throws or returns an invalid status gets a 500.
  HttpResponse Dispatch(HttpRequest& req, const std::string& raw_path) const;

 private:
  std::vector<RouteEntry> routes_;
};

}  // namespace corral::api::internal
