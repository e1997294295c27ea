// The controller's HTTP handlers, registered through the route table (routes.h): each route
// authenticates its caller (except /health and the dashboard's files), and its action is
// decided where its row says (RouteScope): at the route, on the state thread against the job,
// or against the node the agent's body names. The scrape token (`[metrics] token_file`) is a
// credential on the rows of `kReadMetrics` only (/metrics, /metrics/targets), where it stands
// for the metrics principal. What a reader sees of a job is as [privacy] allows
// (internal/access.h). Used by ControllerService only.
//
// Thread-safe: the handlers run on the HTTP server's threads and reach the state through
// `ControllerService::Call`.
#pragma once

#include <functional>
#include <string>

#include "api/auth.h"
#include "api/http.h"
#include "api/scrape_token.h"
#include "controller/config.h"
#include "controller/metrics/service_metrics.h"
#include "core/clock.h"
#include "store/store.h"

namespace corral::controller {

class ControllerService;

struct RouteContext {
  ControllerService* service = nullptr;
  const api::Authenticator* authenticator = nullptr;
  const Clock* clock = nullptr;
  PrivacyConfig privacy;
  // The Authorization header of the controller's calls to node NODE's agent.
  std::function<std::string(const std::string& node)> agent_authorization;
  // How the controller connects to agents (TLS: CA, its certificate).
  api::HttpClientOptions agent_client;
  // GPU statistics and waste reports read the store off the state thread.
  store::Store* store = nullptr;
  double waste_threshold = 0;  // `[gpu_waste] threshold`, percent
  // /metrics: the scrape token (empty: none) and the service's own figures.
  const api::ScrapeToken* scrape_token = nullptr;
  metrics::ServiceMetrics* service_metrics = nullptr;  // also counts requests by principal
};

// Registers every route of `ControllerRoutes()` on `server`. CHECK-fails when a handler has no
// row in the table or a row has no handler.
void RegisterRoutes(api::HttpServer& server, RouteContext context);

}  // namespace corral::controller
