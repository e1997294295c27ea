#include "controller/gpu_stats_routes.h"

#include <charconv>

#include "api/access.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "controller/controller.h"
#include "controller/internal/gpu_waste.h"
#include "core/strings.h"

namespace corral::controller {
namespace {

// The default period of the waste report.
constexpr Duration kDefaultWastePeriod = Seconds(7 * 86400);

api::HttpResponse Json(std::string body) {
  api::HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

}  // namespace

void AddGpuStatsRoutes(api::HttpServer& server, ControllerService& service, store::Store& store,
                       const api::Authenticator& authenticator, const Clock& clock,
                       const GpuWasteConfig& waste) {
  auto authed = [&authenticator, &clock](auto handler) {
    return [&authenticator, &clock, handler](const api::HttpRequest& req) -> api::HttpResponse {
      Result<api::Identity> who = authenticator.Authenticate(req, clock.Now());
      if (!who) return api::ErrorResponse(who.error());
      // Users, operators, admins and job credentials read usage; agents and scrapers do not.
      if (Status may = api::Authorize(*who, api::Action::kReadCluster, {}); !may) {
        return api::ErrorResponse(may.error());
      }
      return handler(req, *who);
    };
  };

  server.Route(
      "GET", "/api/v1/jobs/{id}/gpustats",
      authed([&service, &store](const api::HttpRequest& req, const api::Identity&) {
        const std::string& text = req.params.at("id");
        std::optional<uint64_t> n = ParseUint(text);
        if (!n || *n == 0) {
          return api::ErrorResponse(
              {ErrorCode::kInvalidArgument, "job id \"" + text + "\": not a job number"});
        }
        JobId id(*n);
        auto stored = store.GetGpuSeries(id);
        if (!stored) return api::ErrorResponse(stored.error());
        auto r = service.Call<api::GpuStatsInfo>(
            [id, stored = std::move(*stored)](Controller& c) { return c.GpuStats(id, stored); });
        if (!r) return api::ErrorResponse(r.error());
        return Json(api::EncodeGpuStatsInfo(*r));
      }));

  server.Route("GET", "/api/v1/reports/waste",
               authed([&service, &store, &clock, threshold = waste.defaults.threshold](
                          const api::HttpRequest& req, const api::Identity& who) {
                 const Timestamp now = clock.Now();
                 Timestamp since = now - kDefaultWastePeriod;
                 if (auto it = req.query.find("since"); it != req.query.end()) {
                   const std::string& v = it->second;
                   int64_t secs = -1;
                   auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
                   if (ec != std::errc() || p != v.data() + v.size() || secs < 0 ||
                       secs > (int64_t{1} << 40)) {
                     return api::ErrorResponse({ErrorCode::kInvalidArgument,
                                                "since: expected Unix seconds, got \"" + v + "\""});
                   }
                   since = Timestamp(Seconds(secs));
                 }
                 store::JobQuery q;
                 q.start_after = since;
                 if (who.role != api::Role::kAdmin && who.role != api::Role::kOperator) {
                   q.users = {who.user};
                 }
                 auto jobs = store.QueryJobs(q);
                 if (!jobs) return api::ErrorResponse(jobs.error());
                 std::vector<JobId> ids;
                 for (const Job& j : *jobs) {
                   for (const auto& na : j.allocation.nodes) {
                     if (!na.gpus.empty()) {
                       ids.push_back(j.id);
                       break;
                     }
                   }
                 }
                 auto live = service.Call<std::map<JobId, JobGpuSeries>>(
                     [ids](Controller& c) -> Result<std::map<JobId, JobGpuSeries>> {
                       return c.LiveGpuSeries(ids);
                     });
                 if (!live) return api::ErrorResponse(live.error());
                 std::map<JobId, JobGpuSeries> series = std::move(*live);
                 for (JobId id : ids) {
                   if (series.contains(id)) continue;
                   auto stored = store.GetGpuSeries(id);
                   if (!stored) return api::ErrorResponse(stored.error());
                   if (!*stored) continue;
                   auto decoded = DecodeGpuSeries(**stored);
                   if (decoded) series.emplace(id, std::move(*decoded));
                 }
                 return Json(api::EncodeWasteReport(
                     internal::BuildWasteReport(*jobs, series, threshold, since, now)));
               }));
}

}  // namespace corral::controller
