// The controller's metrics routes: GET /metrics (Prometheus text format) and GET
// /metrics/targets (Prometheus HTTP service discovery of the agents' /metrics). Readable by
// the metrics role (`corral token --role metrics`), admins and operators; docs/metrics.md.
#pragma once

#include <functional>

#include "api/http.h"
#include "api/identity.h"
#include "controller/metrics/service_metrics.h"
#include "core/clock.h"
#include "core/result.h"

namespace corral::controller {
class ControllerService;
}  // namespace corral::controller

namespace corral::controller::metrics {

using Authenticate = std::function<Result<api::Identity>(const api::HttpRequest&)>;

// Whether `who` may read /metrics: the metrics role, operators and admins (and the
// controller's own identity). Returns kPermissionDenied naming the role otherwise.
Status CheckMayReadMetrics(const api::Identity& who);

// Registers both routes on `server` (before it starts).
void AddMetricsRoutes(api::HttpServer& server, ControllerService& service,
                      Authenticate authenticate, const ServiceMetrics& service_metrics);

// Makes `server` time every route's requests into `metrics` (by route pattern), on `clock`.
void RecordRequestsByRoute(api::HttpServer& server, ServiceMetrics& metrics, const Clock& clock);

}  // namespace corral::controller::metrics
