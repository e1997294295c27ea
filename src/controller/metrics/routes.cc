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

}  // namespace

Status CheckMayReadMetrics(const api::Identity& who) {
  switch (who.role) {
    case api::Role::kMetrics:
    case api::Role::kAdmin:
    case api::Role::kOperator:
    case api::Role::kController:
      return {};
    default:
      return MakeError(ErrorCode::kPermissionDenied,
                       "/metrics: a " + std::string(api::RoleName(who.role)) +
                           " may not read metrics (use a metrics token: corral token --role "
                           "metrics)");
  }
}

void AddMetricsRoutes(api::HttpServer& server, ControllerService& service,
                      Authenticate authenticate, const ServiceMetrics& service_metrics) {
  auto snapshot = [&service, authenticate](const api::HttpRequest& req) -> Result<ClusterMetrics> {
    CORRAL_ASSIGN_OR_RETURN(api::Identity who, authenticate(req));
    CORRAL_RETURN_IF_ERROR(CheckMayReadMetrics(who));
    return service.Call<ClusterMetrics>(
        [](Controller& c) -> Result<ClusterMetrics> { return c.CollectMetrics(); });
  };
  server.Route(
      "GET", "/metrics",
      [snapshot, &service_metrics, &server](const api::HttpRequest& req) -> api::HttpResponse {
        Result<ClusterMetrics> m = snapshot(req);
        if (!m) return api::ErrorResponse(m.error());
        api::HttpResponse r;
        r.content_type = std::string(api::kMetricsContentType);
        r.body = RenderControllerMetrics(*m, service_metrics.Snapshot());
        r.body += TlsHandshakes(server.stats());
        return r;
      });
  server.Route("GET", "/metrics/targets",
               [snapshot](const api::HttpRequest& req) -> api::HttpResponse {
                 Result<ClusterMetrics> m = snapshot(req);
                 if (!m) return api::ErrorResponse(m.error());
                 api::HttpResponse r;
                 r.body = RenderTargets(*m);
                 return r;
               });
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
