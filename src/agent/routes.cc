#include "agent/routes.h"

namespace corral::agent {
namespace {

using api::Action;

// clang-format off
constexpr AgentRouteSpec kRoutes[] = {
  {"GET",  "/api/v1/health",       Action::kAgentCall, true,  "liveness"},
  {"POST", "/api/v1/launch",       Action::kAgentCall, false, "launch a job's run on this node"},
  {"POST", "/api/v1/cancel",       Action::kAgentCall, false, "cancel a job's run"},
  {"POST", "/api/v1/signal",       Action::kAgentCall, false, "signal a job's processes"},
  {"POST", "/api/v1/jobs/limit",   Action::kAgentCall, false, "change a running job's time limit"},
  {"POST", "/api/v1/steps/launch", Action::kAgentCall, false, "launch a step's tasks"},
  {"POST", "/api/v1/steps/signal", Action::kAgentCall, false, "signal a step's tasks"},
  {"POST", "/api/v1/inject",       Action::kAgentCall, false, "inject a simulated GPU fault"},
  // `sstat` and `sbcast` (docs/slurm.md).
  {"GET",  "/api/v1/stats",        Action::kAgentCall, false, "live usage of a job's run on this node (sstat)"},
  {"POST", "/api/v1/bcast",        Action::kAgentCall, false, "write a file of a job as its user (sbcast)"},
  {"GET",  "/metrics",             Action::kReadMetrics, false, "the node's GPU series (dcgm-exporter names)"},
};
// clang-format on

}  // namespace

std::span<const AgentRouteSpec> AgentRoutes() { return kRoutes; }

const AgentRouteSpec* FindAgentRoute(std::string_view method, std::string_view pattern) {
  for (const AgentRouteSpec& r : kRoutes) {
    if (r.method == method && r.pattern == pattern) return &r;
  }
  return nullptr;
}

}  // namespace corral::agent
