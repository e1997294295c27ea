// The agent's HTTP routes as data: method, path pattern and the action (api/access.h) each
// asks for. The agent registers its handlers through this table only (a handler without a
// row stops it at start), and tests/security walks it.
//
// Thread-safe: immutable data.
#pragma once

#include <span>
#include <string_view>

#include "api/access.h"

namespace corral::agent {

struct AgentRouteSpec {
  std::string_view method;
  std::string_view pattern;
  // kAgentCall: the controller's call, for this node only. kReadMetrics (/metrics): the scrape
  // token (the metrics principal) or the controller's call for this node.
  api::Action action;
  bool anonymous;      // no credential needed (/health only)
  std::string_view summary;
};

// Every route of the agent's API.
std::span<const AgentRouteSpec> AgentRoutes();
// The row of `method` `pattern`, or nullptr.
const AgentRouteSpec* FindAgentRoute(std::string_view method, std::string_view pattern);

}  // namespace corral::agent
