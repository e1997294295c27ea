#include "controller/metrics/routes.h"

#include "api/http_status.h"
#include "api/metrics_text.h"
#include "controller/controller.h"
#include "controller/metrics/render.h"
#include "controller/service.h"

namespace corral::controller::metrics {
namespace {

// The API server's TLS handshakes, full and resumed (docs/metrics.md).
std::string TlsHandshakes(const api::HttpServerStats& s) {
  api::MetricsWriter w;
  w.Family("corral_tls_handshakes_total", api::MetricType::kCounter,
           "TLS handshakes completed by the API server, by whether they resumed a session");
  w.Sample({{"resumed", "false"}}, static_cast<double>(s.tls_handshakes - s.tls_resumed));
  w.Sample({{"resumed", "true"}}, static_cast<double>(s.tls_resumed));
  return w.Take();
}

Result<ClusterMetrics> Snapshot(ControllerService& service) {
  return service.Call<ClusterMetrics>(
      [](Controller& c) -> Result<ClusterMetrics> { return c.CollectMetrics(); });
}

}  // namespace

api::HttpResponse ServeMetrics(ControllerService& service, const ServiceMetrics& service_metrics,
                               const api::HttpServer& server) {
  Result<ClusterMetrics> m = Snapshot(service);
  if (!m) return api::ErrorResponse(m.error());
  api::HttpResponse r;
  r.content_type = std::string(api::kMetricsContentType);
  r.body = RenderControllerMetrics(*m, service_metrics.Snapshot());
  r.body += TlsHandshakes(server.stats());
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
