// The controller's metrics handlers: GET /metrics (Prometheus text format) and GET
// /metrics/targets (Prometheus HTTP service discovery of the agents' /metrics). Both are rows
// of the route table (controller/routes.cc, action `kReadMetrics`: the metrics role, operators
// and admins); `RegisterRoutes` authenticates (the scrape token included) and authorizes the
// caller before they run. docs/metrics.md.
#pragma once

#include "api/http.h"
#include "controller/metrics/service_metrics.h"
#include "core/clock.h"

namespace corral::controller {
class ControllerService;
}  // namespace corral::controller

namespace corral::controller::metrics {

// GET /metrics: the state's series, `service_metrics`' figures and `server`'s TLS handshakes.
api::HttpResponse ServeMetrics(ControllerService& service, const ServiceMetrics& service_metrics,
                               const api::HttpServer& server);
// GET /api/v1/diag: `sdiag`'s figures (api/diag.h): the state's, `service_metrics`' requests by
// route and by principal, and `server`'s handler threads.
api::HttpResponse ServeDiag(ControllerService& service, const ServiceMetrics& service_metrics,
                            const api::HttpServer& server);
// GET /metrics/targets: the agents to scrape.
api::HttpResponse ServeTargets(ControllerService& service);

// Makes `server` time every route's requests into `metrics` (by route pattern), on `clock`.
void RecordRequestsByRoute(api::HttpServer& server, ServiceMetrics& metrics, const Clock& clock);

}  // namespace corral::controller::metrics
