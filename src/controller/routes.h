// The controller's HTTP routes as data: every route's method, path pattern, the action
// (api/access.h) it asks for and where that decision is made. `ControllerService` registers its
// handlers through this table only (a handler without a row, or a row without a handler, stops
// the controller at start), and tests/security walks it: a route cannot be added without a row
// here, a row in the authorization matrix test and an entry in docs/openapi.yaml.
//
// Thread-safe: immutable data.
#pragma once

#include <span>
#include <string_view>

#include "api/access.h"

namespace corral::controller {

// Where a route's decision is made.
enum class RouteScope {
  kAnonymous,  // no credential needed (/health and the dashboard's static files)
  kCluster,    // at the route, before the handler: `Authorize(who, action, {node = {name}})`
  kJob,        // on the state thread, against the job named by {id} (its user and run)
  kAgentNode,  // against the node the body names: it must be the calling agent's own
  kAccount,    // on the state thread, against the account tree: admins and the coordinators of
               // the account concerned (issue 16 item 2, controller_coordinators.cc)
};

struct RouteSpec {
  std::string_view method;
  std::string_view pattern;
  api::Action action;
  RouteScope scope;
  std::string_view summary;  // one line, as in docs/openapi.yaml
};

// Every route of the controller's API, in registration order.
std::span<const RouteSpec> ControllerRoutes();
// The row of `method` `pattern`, or nullptr.
const RouteSpec* FindControllerRoute(std::string_view method, std::string_view pattern);

}  // namespace corral::controller
