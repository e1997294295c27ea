#include "controller/gpu_stats_routes.h"

#include <charconv>

#include "api/http_status.h"
#include "api/json_codec.h"
#include "controller/controller.h"
#include "controller/internal/access.h"
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

// kPermissionDenied unless `who` may see job `id` of `job_user` and, with `privacy.usage`, its
// usage (GPU statistics are usage).
Status CheckSeesUsage(const api::Identity& who, JobId id, const std::string& job_user,
                      const PrivacyConfig& privacy) {
  bool sees = internal::SeesJob(who, job_user, privacy) &&
              (!privacy.usage || internal::SeesPrivate(who, job_user));
  if (sees) return {};
  return MakeError(ErrorCode::kPermissionDenied, std::string(api::RoleName(who.role)) + " " +
                                                     who.user +
                                                     " may not read the GPU statistics of job " +
                                                     id.ToString() + ": private to its user");
}

}  // namespace

api::HttpResponse ServeGpuStats(ControllerService& service, store::Store& store,
                                const PrivacyConfig& privacy, const api::HttpRequest& req,
                                const api::Identity& who) {
  const std::string& text = req.params.at("id");
  std::optional<uint64_t> n = ParseUint(text);
  if (!n || *n == 0) {
    return api::ErrorResponse(
        {ErrorCode::kInvalidArgument, "job id \"" + text + "\": not a job number"});
  }
  JobId id(*n);
  auto user = service.Call<std::string>([id](Controller& c) -> Result<std::string> {
    CORRAL_ASSIGN_OR_RETURN(api::JobInfo info, c.GetJob(id));
    return info.job.spec.user;
  });
  if (!user) return api::ErrorResponse(user.error());
  if (Status sees = CheckSeesUsage(who, id, *user, privacy); !sees) {
    return api::ErrorResponse(sees.error());
  }
  auto stored = store.GetGpuSeries(id);
  if (!stored) return api::ErrorResponse(stored.error());
  auto r = service.Call<api::GpuStatsInfo>(
      [id, stored = std::move(*stored)](Controller& c) { return c.GpuStats(id, stored); });
  if (!r) return api::ErrorResponse(r.error());
  return Json(api::EncodeGpuStatsInfo(*r));
}

api::HttpResponse ServeWasteReport(ControllerService& service, store::Store& store,
                                   const Clock& clock, double threshold,
                                   const api::HttpRequest& req, const api::Identity& who) {
  const Timestamp now = clock.Now();
  Timestamp since = now - kDefaultWastePeriod;
  if (auto it = req.query.find("since"); it != req.query.end()) {
    const std::string& v = it->second;
    int64_t secs = -1;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
    if (ec != std::errc() || p != v.data() + v.size() || secs < 0 || secs > (int64_t{1} << 40)) {
      return api::ErrorResponse(
          {ErrorCode::kInvalidArgument, "since: expected Unix seconds, got \"" + v + "\""});
    }
    since = Timestamp(Seconds(secs));
  }
  store::JobQuery q;
  q.start_after = since;
  if (who.role != api::Role::kAdmin && who.role != api::Role::kOperator) q.users = {who.user};
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
  return Json(
      api::EncodeWasteReport(internal::BuildWasteReport(*jobs, series, threshold, since, now)));
}

}  // namespace corral::controller
