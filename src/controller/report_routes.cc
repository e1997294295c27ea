#include "controller/report_routes.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "api/http_status.h"
#include "api/report_codec.h"
#include "controller/controller.h"
#include "controller/internal/access.h"
#include "controller/internal/usage_report.h"
#include "sched/fair_share.h"

namespace corral::controller {
namespace {

// The default window of the usage report: the last day.
constexpr Duration kDefaultWindow = Seconds(86400);

api::HttpResponse Json(std::string body) {
  api::HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

// Query parameter `name` as Unix seconds in [0, 2^40), `fallback` when absent.
Result<Timestamp> TimeParam(const api::HttpRequest& req, const char* name, Timestamp fallback) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return fallback;
  const std::string& v = it->second;
  int64_t secs = -1;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
  if (ec != std::errc() || p != v.data() + v.size() || secs < 0 || secs >= (int64_t{1} << 40)) {
    return InvalidArgument(std::string(name) + ": expected Unix seconds, got \"" + v + "\"");
  }
  return Timestamp(Seconds(secs));
}

// Whether [privacy] limits `who` to its own usage.
bool OwnOnly(const api::Identity& who, const PrivacyConfig& privacy) {
  return (privacy.jobs || privacy.usage) && !internal::IsPrivileged(who);
}

}  // namespace

api::HttpResponse ServeUsageReport(ControllerService& service, store::Store& store,
                                   const Clock& clock, const PrivacyConfig& privacy,
                                   const api::HttpRequest& req, const api::Identity& who) {
  const Timestamp now = clock.Now();
  auto end = TimeParam(req, "end", now);
  if (!end) return api::ErrorResponse(end.error());
  auto start = TimeParam(req, "start", *end - kDefaultWindow);
  if (!start) return api::ErrorResponse(start.error());
  if (*end <= *start) {
    return api::ErrorResponse({ErrorCode::kInvalidArgument, "end: must be after start"});
  }
  bool with_jobs = false;
  if (auto it = req.query.find("jobs"); it != req.query.end()) {
    if (it->second != "0" && it->second != "1") {
      return api::ErrorResponse(
          {ErrorCode::kInvalidArgument, "jobs: expected 0 or 1, got \"" + it->second + "\""});
    }
    with_jobs = it->second == "1";
  }
  const bool own_only = OwnOnly(who, privacy);
  store::JobQuery q;
  q.start_after = *start;
  q.end_before = *end;
  if (own_only) q.users = {who.user};
  auto jobs = store.QueryJobs(q);
  if (!jobs) return api::ErrorResponse(jobs.error());
  auto nodes = service.Call<std::vector<NodeInventory>>(
      [](Controller& c) -> Result<std::vector<NodeInventory>> {
        std::vector<NodeInventory> out;
        for (api::NodeInfo& n : c.ListNodes()) {
          if (n.node.registered) out.push_back(std::move(n.node.inventory));
        }
        return out;
      });
  if (!nodes) return api::ErrorResponse(nodes.error());
  api::UsageReport report =
      internal::BuildUsageReport(*jobs, *nodes, {*start, *end}, now, with_jobs);
  report.own_only = own_only;
  if (own_only) report.user = who.user;
  return Json(api::EncodeUsageReport(report));
}

api::HttpResponse ServeShareReport(ControllerService& service, const PrivacyConfig& privacy,
                                   const api::Identity& who) {
  auto tree = service.Call<std::vector<sched::ShareTreeNode>>(
      [](Controller& c) -> Result<std::vector<sched::ShareTreeNode>> { return c.ShareTree(); });
  if (!tree) return api::ErrorResponse(tree.error());
  const bool own_only = OwnOnly(who, privacy);
  // With [privacy], a user sees its own rows and the accounts above them.
  std::set<std::string> own_accounts;
  if (own_only) {
    std::vector<std::string> path;  // the accounts from the root to the current row
    for (const sched::ShareTreeNode& n : *tree) {
      if (n.user.empty()) {
        path.resize(n.depth);
        path.push_back(n.account);
      } else if (n.user == who.user) {
        own_accounts.insert(path.begin(), path.begin() + std::min<size_t>(path.size(), n.depth));
      }
    }
  }
  api::ShareReport report;
  for (const sched::ShareTreeNode& n : *tree) {
    if (own_only && (n.user.empty() ? !own_accounts.contains(n.account) : n.user != who.user)) {
      continue;
    }
    report.rows.push_back({.account = n.account,
                           .user = n.user,
                           .depth = n.depth,
                           .raw_shares = n.shares,
                           .norm_shares = n.norm_shares,
                           .raw_usage = n.usage,
                           .effective_usage = n.effective_usage,
                           .level_fairshare = std::isinf(n.level_fairshare) ? -1 : n.level_fairshare,
                           .fairshare = n.factor});
  }
  return Json(api::EncodeShareReport(report));
}

api::HttpResponse ServePriorityWeights(ControllerService& service) {
  auto w = service.Call<api::PriorityWeights>([](Controller& c) -> Result<api::PriorityWeights> {
    const sched::PriorityConfig& p = c.sched_config().priority;
    return api::PriorityWeights{.age = p.weight_age,
                                .fairshare = p.weight_fairshare,
                                .job_size = p.weight_job_size,
                                .partition = p.weight_partition,
                                .qos = p.weight_qos};
  });
  if (!w) return api::ErrorResponse(w.error());
  return Json(api::EncodePriorityWeights(*w));
}

}  // namespace corral::controller
