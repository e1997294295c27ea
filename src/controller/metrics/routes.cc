#include "controller/metrics/routes.h"

#include "api/http_status.h"
#include "api/metrics_text.h"
#include "controller/controller.h"
#include "controller/metrics/render.h"
#include "controller/service.h"

namespace corral::controller::metrics {

namespace {

Result<ClusterMetrics> Snapshot(ControllerService& service) {
  return service.Call<ClusterMetrics>(
      [](Controller& c) -> Result<ClusterMetrics> { return c.CollectMetrics(); });
}

}  // namespace

api::HttpResponse ServeMetrics(ControllerService& service, const ServiceMetrics& service_metrics) {
  Result<ClusterMetrics> m = Snapshot(service);
  if (!m) return api::ErrorResponse(m.error());
  api::HttpResponse r;
  r.content_type = std::string(api::kMetricsContentType);
  r.body = RenderControllerMetrics(*m, service_metrics.Snapshot());
  return r;
}

api::HttpResponse ServeTargets(ControllerService& service) {
  Result<ClusterMetrics> m = Snapshot(service);
  if (!m) return api::ErrorResponse(m.error());
  api::HttpResponse r;
  r.body = RenderTargets(*m);
  return r;
}

void RecordRequestsByRoute(api::HttpServer& server, ServiceMetrics& metrics, const Clock& clock) {
  server.SetRouteWrapper([&metrics, &clock](const std::string& method, const std::string& pattern,
                                            api::HttpHandler handler) -> api::HttpHandler {
    return [&metrics, &clock, method, pattern,
            handler = std::move(handler)](const api::HttpRequest& req) {
      MonoTime start = clock.MonotonicNow();
      api::HttpResponse r = handler(req);
      metrics.RecordRequest(method, pattern, r.status, clock.MonotonicNow() - start);
      return r;
    };
  });
}

}  // namespace corral::controller::metrics
