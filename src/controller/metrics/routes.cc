#include "controller/metrics/routes.h"

#include <algorithm>

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

api::HttpResponse ServeDiag(ControllerService& service, const ServiceMetrics& service_metrics,
                            const api::HttpServer& server) {
  Result<api::DiagInfo> d = service.Call<api::DiagInfo>(
      [](Controller& c) -> Result<api::DiagInfo> { return c.CollectDiag(); });
  if (!d) return api::ErrorResponse(d.error());
  d->server_threads = static_cast<uint32_t>(server.stats().handler_threads);
  ServiceFigures f = service_metrics.Snapshot();
  for (const auto& [key, figures] : f.routes) {
    uint64_t count = 0;
    for (const auto& [status, n] : figures.by_status) count += n;
    d->routes.push_back({.method = key.first,
                         .route = key.second,
                         .count = count,
                         .total_seconds = figures.latency.sum});
  }
  for (const auto& [user, c] : f.callers) {
    d->users.push_back({.user = user, .uid = c.uid, .count = c.count, .total_seconds = c.seconds});
  }
  // Most requests first, as sdiag sorts them; ties by name.
  auto by_count = [](const auto& a, const auto& b) { return a.count > b.count; };
  std::stable_sort(d->routes.begin(), d->routes.end(), by_count);
  std::stable_sort(d->users.begin(), d->users.end(), by_count);
  api::HttpResponse r;
  r.body = api::EncodeDiagInfo(*d);
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
