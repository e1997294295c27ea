#include "controller/service_routes.h"

#include <charconv>
#include <optional>
#include <set>

#include "api/http_status.h"
#include "api/json_codec.h"
#include "controller/controller.h"
#include "controller/dashboard/dashboard_assets.h"
#include "controller/audit_routes.h"
#include "controller/gpu_stats_routes.h"
#include "controller/governance_routes.h"
#include "controller/job_node_routes.h"
#include "controller/budget_routes.h"
#include "controller/internal/access.h"
#include "controller/metrics/routes.h"
#include "controller/report_routes.h"
#include "controller/routes.h"
#include "controller/service.h"
#include "core/check.h"
#include "core/duration.h"
#include "core/log.h"
#include "core/strings.h"
#include "store/audit_chain.h"

namespace corral::controller {

namespace {

using Handler = std::function<api::HttpResponse(const api::HttpRequest&, const api::Identity&)>;

Result<JobId> ParseJobId(const std::string& text) {
  std::optional<uint64_t> v = ParseUint(text);
  if (!v || *v == 0) return InvalidArgument("job id \"" + text + "\": not a job number");
  return JobId(*v);
}

// A 32-bit number that is all of `text`.
std::optional<uint32_t> ParseUint32(const std::string& text) {
  std::optional<uint64_t> v = ParseUint(text);
  if (!v || *v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

// The `timeout` of a long poll (/jobs/{id}/wait, /steps/{step}/wait): seconds, 30 when absent,
// at most 300.
Result<Duration> ParseWaitTimeout(const api::HttpRequest& req) {
  int64_t timeout_s = 30;
  if (auto it = req.query.find("timeout"); it != req.query.end()) {
    auto [p, ec] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), timeout_s);
    if (ec != std::errc() || timeout_s < 0 || timeout_s > 300) {
      return InvalidArgument("timeout: expected 0 to 300 seconds");
    }
  }
  return Seconds(timeout_s);
}

api::HttpResponse Json(int status, std::string body) {
  api::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

api::HttpResponse Ok() { return Json(200, api::EncodeStringMap({{"status", "ok"}})); }

api::HttpResponse Denied(const Error& e) { return api::ErrorResponse(e); }

// The node an agent's credential is bound to. The first release's agent tokens name it only in
// their user ("agent:<node>"); the issue 15 credentials carry it in `node`.
api::Identity BoundAgent(api::Identity who) {
  constexpr std::string_view kPrefix = "agent:";
  if (who.role == api::Role::kAgent && who.node.empty() && who.user.rfind(kPrefix, 0) == 0) {
    who.node = who.user.substr(kPrefix.size());
  }
  return who;
}

// kPermissionDenied when `who` may not see jobs of `job_user`.
Status CheckSees(const api::Identity& who, const std::string& job_user, JobId id,
                 const PrivacyConfig& privacy) {
  if (internal::SeesJob(who, job_user, privacy)) return {};
  return MakeError(ErrorCode::kPermissionDenied, std::string(api::RoleName(who.role)) + " " +
                                                     who.user + " may not read job " +
                                                     id.ToString() + ": private to its user");
}

// The caller of `req` on the route of `spec`: the scrape token stands for the metrics principal
// on the rows of `kReadMetrics` only (elsewhere it is no credential: 401); any other credential
// is the authenticator's.
Result<api::Identity> Caller(const RouteContext& ctx, const RouteSpec& spec,
                             const api::HttpRequest& req) {
  if (spec.action == api::Action::kReadMetrics && ctx.scrape_token != nullptr &&
      ctx.scrape_token->Matches(req.header("authorization"))) {
    return api::Identity{.user = "metrics",
                         .uid = api::kNoUnixId,
                         .gid = api::kNoUnixId,
                         .role = api::Role::kMetrics};
  }
  return ctx.authenticator->Authenticate(req, ctx.clock->Now());
}

// A refusal of `action`, with the way to what was asked when there is one.
api::HttpResponse Refused(api::Action action, Error e) {
  if (action == api::Action::kReadMetrics) {
    e.message += " (a scraper uses the scrape token: corral token --role metrics)";
  }
  return api::ErrorResponse(e);
}

// What a controller that does not lead answers on every route that needs the state (issue
// 11): 503 naming the leader, in the message and in `X-Corral-Leader`, so that clients
// and agents with a list of controllers go there.
api::HttpResponse StandbyAnswer(const ControllerService& service) {
  const std::string leader = service.leader_url();
  api::HttpResponse r = api::ErrorResponse(Error{
      ErrorCode::kUnavailable,
      "this controller is not the leader" +
          (leader.empty() ? std::string(" (no leader yet)") : "; the leader is " + leader)});
  if (!leader.empty()) r.headers["X-Corral-Leader"] = leader;
  return r;
}

}  // namespace

void RegisterRoutes(api::HttpServer& server, RouteContext context) {
  auto ctx = std::make_shared<const RouteContext>(std::move(context));
  ControllerService* self = ctx->service;
  const PrivacyConfig privacy = ctx->privacy;
  std::set<const RouteSpec*> registered;
  // Registers `handler` for the table's row `method` `pattern`: authenticates the caller and,
  // for kCluster rows, decides the row's action before the handler runs.
  auto route = [&](std::string_view method, std::string_view pattern, Handler handler) {
    const RouteSpec* spec = FindControllerRoute(method, pattern);
    CORRAL_CHECK(spec != nullptr) << method << " " << pattern << ": no row in controller/routes.cc";
    CORRAL_CHECK(registered.insert(spec).second)
        << method << " " << pattern << ": registered twice";
    auto serve = [ctx, spec, handler = std::move(handler)](const api::HttpRequest& req,
                                                            AuditRecord* audit) {
      if (spec->scope == RouteScope::kAnonymous) return handler(req, api::Identity{});
      // A standby (or a leader that stepped down) serves only the anonymous routes.
      if (!ctx->service->leading()) return StandbyAnswer(*ctx->service);
      Result<api::Identity> who = Caller(*ctx, *spec, req);
      if (!who) return api::ErrorResponse(who.error());
      const MonoTime began = ctx->clock->MonotonicNow();
      api::HttpResponse response = [&] {
        if (audit != nullptr) SetAuditPrincipal(req, BoundAgent(*who), audit);
        if (spec->scope == RouteScope::kCluster) {
          api::Resource target;
          if (auto it = req.params.find("name"); it != req.params.end()) {
            target.node = it->second;
          }
          Status ok = api::Authorize(*who, spec->action, target);
          if (!ok) return Refused(spec->action, ok.error());
        }
        return handler(req, *who);
      }();
      if (ctx->service_metrics != nullptr) {  // `sdiag`'s requests by user
        ctx->service_metrics->RecordCaller(who->user, who->uid,
                                           ctx->clock->MonotonicNow() - began);
      }
      return response;
    };
    if (method == "GET") {
      server.Route(std::string(method), std::string(pattern),
                   [serve](const api::HttpRequest& req) { return serve(req, nullptr); });
      return;
    }
    // Every other method changes state: one audit record per request, accepted or refused,
    // in the batch of its change when there is one (audit_log.h).
    server.Route(std::string(method), std::string(pattern),
                 [ctx, spec, serve](const api::HttpRequest& req) {
                   // A standby writes nothing, audit records included: the leader's log.
                   if (!ctx->service->leading()) return StandbyAnswer(*ctx->service);
                   PendingAudit audit{.entry = AuditEntryFor(req, spec->method, spec->pattern)};
                   api::HttpResponse response;
                   {
                     AuditScope scope(&audit);
                     response = serve(req, &audit.entry);
                   }
                   // An agent's heartbeat that was accepted and changed nothing (the node's
                   // last-heard time aside) leaves no record: 10,000 nodes every 5 s would
                   // write 2,000 a second. One that changed the node (back from DOWN, a GPU
                   // out of service) was recorded with its change; a refused one is below.
                   const bool idle_heartbeat = spec->action == api::Action::kNodeHeartbeat &&
                                               !audit.written && response.status < 400;
                   if (!audit.written && !idle_heartbeat) {
                     audit.entry.status = response.status;
                     if (response.status >= 400) {
                       audit.entry.error_code =
                           ErrorCodeName(api::ErrorCodeForHttpStatus(response.status));
                     }
                     ctx->service->WriteAudit(std::move(audit.entry));
                   } else if (audit.written_status != response.status) {
                     CORRAL_LOG(Warn) << spec->method << " " << spec->pattern
                                      << ": audit record says " << audit.written_status
                                      << ", the answer was " << response.status;
                   }
                   return response;
                 });
  };
  // The user of job {id}, once `who` may see it.
  auto visible_job = [self, privacy](const api::Identity& who, JobId id) -> Result<std::string> {
    auto info = self->Call<api::JobInfo>([id](Controller& c) { return c.GetJob(id); });
    if (!info) return tl::unexpected<Error>(info.error());
    CORRAL_RETURN_IF_ERROR(CheckSees(who, info->job.spec.user, id, privacy));
    return info->job.spec.user;
  };

  route("GET", "/api/v1/health",
        [](const api::HttpRequest&, const api::Identity&) { return Ok(); });

  // Probes (issue 11; docs/operations.md): anonymous, cheap (a flag, no store, no state
  // thread), and they say nothing but the status.
  route("GET", "/livez",
        [](const api::HttpRequest&, const api::Identity&) { return Ok(); });
  route("GET", "/readyz", [self](const api::HttpRequest&, const api::Identity&) {
    return self->leading() ? Json(200, api::EncodeStringMap({{"status", "ready"}}))
                           : Json(503, api::EncodeStringMap({{"status", "standby"}}));
  });

  route("POST", "/api/v1/jobs", [self, ctx](const api::HttpRequest& req,
                                            const api::Identity& who) {
    const Timestamp received = ctx->clock->Now();  // the trace's `submitted`
    Result<JobSpec> spec = api::DecodeJobSpec(req.body);
    if (!spec) return api::ErrorResponse(spec.error());
    // An idempotency key (docs/operations.md): a repeat is answered with the original job.
    std::optional<SubmitKey> key;
    if (std::string k = req.header("idempotency-key"); !k.empty()) {
      key = SubmitKey{.key = std::move(k), .digest = store::Sha256Hex(req.body)};
    }
    auto r = self->Call<api::SubmitResponse>(
        [&who, &key, received, spec = std::move(*spec)](Controller& c) mutable {
          return key ? c.Submit(who, std::move(spec), *key, received)
                     : c.Submit(who, std::move(spec), received);
        });
    if (!r) return api::ErrorResponse(r.error());
    return Json(201, api::EncodeSubmitResponse(*r));
  });

  route("GET", "/api/v1/jobs",
        [self, privacy](const api::HttpRequest& req, const api::Identity& who) {
          JobFilter f;
          auto q = [&](const char* k) {
            auto it = req.query.find(k);
            return it == req.query.end() ? std::string() : it->second;
          };
          f.users = SplitNonEmpty(q("user"));
          f.partitions = SplitNonEmpty(q("partition"));
          f.accounts = SplitNonEmpty(q("account"));
          for (const auto& s : SplitNonEmpty(q("state"))) {
            if (s == "all" || s == "ALL") {
              f.all = true;
              continue;
            }
            auto st = ParseJobState(s);
            if (!st)
              return api::ErrorResponse(
                  {ErrorCode::kInvalidArgument, "state: " + st.error().message});
            f.states.push_back(*st);
          }
          for (const auto& s : SplitNonEmpty(q("id"))) {
            auto id = ParseJobId(s);
            if (!id) return api::ErrorResponse(id.error());
            f.ids.push_back(*id);
          }
          std::string all = q("all");
          if (all == "1" || all == "true") f.all = true;
          std::string arrays = q("arrays");
          if (arrays == "1" || arrays == "true") f.expand_arrays = true;
          // start/end: Unix seconds (sacct -S/-E): jobs active at some time in that window.
          for (auto [key, out] : {std::pair<const char*, Timestamp*>{"start", &f.active_from},
                                  std::pair<const char*, Timestamp*>{"end", &f.active_until}}) {
            std::string v = q(key);
            if (v.empty()) continue;
            int64_t secs = 0;
            auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
            if (ec != std::errc() || p != v.data() + v.size() || secs < 0 ||
                secs > (int64_t{1} << 40)) {
              return api::ErrorResponse(
                  {ErrorCode::kInvalidArgument,
                   std::string(key) + ": expected Unix seconds, got \"" + v + "\""});
            }
            *out = Timestamp(Seconds(secs));
          }
          auto r = self->Call<std::vector<api::JobInfo>>(
              [f](Controller& c) -> Result<std::vector<api::JobInfo>> { return c.ListJobs(f); });
          if (!r) return api::ErrorResponse(r.error());
          internal::Filter(who, privacy, *r);
          return Json(200, api::EncodeJobInfoList(*r));
        });

  route("GET", "/api/v1/jobs/{id}",
        [self, privacy](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto r = self->Call<api::JobInfo>([id = *id](Controller& c) { return c.GetJob(id); });
          if (!r) return api::ErrorResponse(r.error());
          Status sees = CheckSees(who, r->job.spec.user, *id, privacy);
          if (!sees) return Denied(sees.error());
          internal::Redact(who, privacy, *r);
          return Json(200, api::EncodeJobInfo(*r));
        });

  // The job's path (core/job_trace.h), for whoever may see the job.
  route("GET", "/api/v1/jobs/{id}/timeline",
        [self, visible_job](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto user = visible_job(who, *id);
          if (!user) return api::ErrorResponse(user.error());
          auto r = self->Call<api::JobTimeline>([id = *id](Controller& c) { return c.Timeline(id); });
          if (!r) return api::ErrorResponse(r.error());
          return Json(200, api::EncodeJobTimeline(*r));
        });

  // Long poll: answers when the job has ended, or after `timeout` seconds (default 30, at
  // most 300) with its current record.
  route("GET", "/api/v1/jobs/{id}/wait",
        [self, privacy, visible_job](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto timeout = ParseWaitTimeout(req);
          if (!timeout) return api::ErrorResponse(timeout.error());
          auto user = visible_job(who, *id);
          if (!user) return api::ErrorResponse(user.error());
          auto ended = self->WaitForJob(*id, *timeout);
          if (!ended) return api::ErrorResponse(ended.error());
          auto r = self->Call<api::JobInfo>([id = *id](Controller& c) { return c.GetJob(id); });
          if (!r) return api::ErrorResponse(r.error());
          internal::Redact(who, privacy, *r);
          return Json(200, api::EncodeJobInfo(*r));
        });

  auto job_action =
      [self](
          std::function<Status(Controller&, const api::Identity&, JobId, const api::HttpRequest&)>
              action) {
        return [self, action](const api::HttpRequest& req,
                              const api::Identity& who) -> api::HttpResponse {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          Status s =
              self->CallStatus([&, id = *id](Controller& c) { return action(c, who, id, req); });
          if (!s) return api::ErrorResponse(s.error());
          return Ok();
        };
      };
  auto cancel = job_action([](Controller& c, const api::Identity& who, JobId id,
                              const api::HttpRequest&) { return c.Cancel(who, id); });
  route("POST", "/api/v1/jobs/{id}/cancel", cancel);
  route("DELETE", "/api/v1/jobs/{id}", cancel);
  // ?hold=true: back in the queue held (`scontrol requeuehold`).
  route("POST", "/api/v1/jobs/{id}/requeue",
        job_action([](Controller& c, const api::Identity& who, JobId id,
                      const api::HttpRequest& req) -> Status {
          bool hold = false;
          if (auto it = req.query.find("hold"); it != req.query.end()) {
            if (it->second != "true" && it->second != "false") {
              return InvalidArgument("hold: expected true or false, got '" + it->second + "'");
            }
            hold = it->second == "true";
          }
          return c.Requeue(who, id, hold);
        }));
  route("POST", "/api/v1/jobs/{id}/hold",
        job_action([](Controller& c, const api::Identity& who, JobId id, const api::HttpRequest&) {
          return c.Hold(who, id, true);
        }));
  route("POST", "/api/v1/jobs/{id}/release",
        job_action([](Controller& c, const api::Identity& who, JobId id, const api::HttpRequest&) {
          return c.Hold(who, id, false);
        }));
  route("POST", "/api/v1/jobs/{id}/signal",
        job_action([](Controller& c, const api::Identity& who, JobId id,
                      const api::HttpRequest& req) -> Status {
          auto kv = api::DecodeStringMap(req.body);
          if (!kv) return tl::unexpected<Error>(kv.error());
          int sig = 0;
          for (const auto& [k, v] : *kv) {
            if (k != "signal") return InvalidArgument("unknown field \"" + k + "\"");
            auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), sig);
            if (ec != std::errc() || p != v.data() + v.size()) {
              return InvalidArgument("signal: \"" + v + "\" is not a signal number");
            }
          }
          return c.SignalJob(who, id, sig);
        }));
  // {"time_limit": "1:00:00"}: a Slurm time or "UNLIMITED" (`scontrol update TimeLimit=`).
  route("POST", "/api/v1/jobs/{id}/time_limit",
        job_action([](Controller& c, const api::Identity& who, JobId id,
                      const api::HttpRequest& req) -> Status {
          auto kv = api::DecodeStringMap(req.body);
          if (!kv) return tl::unexpected<Error>(kv.error());
          std::optional<Duration> limit;
          for (const auto& [k, v] : *kv) {
            if (k != "time_limit") return InvalidArgument("unknown field \"" + k + "\"");
            auto d = ParseSlurmDuration(v);
            if (!d) return InvalidArgument("time_limit: " + d.error().message);
            limit = *d;
          }
          if (!limit) return InvalidArgument("time_limit: missing");
          return c.UpdateTimeLimit(who, id, *limit);
        }));
  // `scontrol suspend|resume` (no body).
  route("POST", "/api/v1/jobs/{id}/suspend",
        job_action([](Controller& c, const api::Identity& who, JobId id, const api::HttpRequest&) {
          return c.Suspend(who, id, true);
        }));
  route("POST", "/api/v1/jobs/{id}/resume",
        job_action([](Controller& c, const api::Identity& who, JobId id, const api::HttpRequest&) {
          return c.Suspend(who, id, false);
        }));
  // `scontrol top` (no body).
  route("POST", "/api/v1/jobs/{id}/top",
        job_action([](Controller& c, const api::Identity& who, JobId id, const api::HttpRequest&) {
          return c.Top(who, id);
        }));

  // Steps (`corral run`) and checkpoints: docs/api.md, "Steps".
  auto step_id = [](const api::HttpRequest& req) -> Result<uint32_t> {
    const std::string& text = req.params.at("step");
    std::optional<uint32_t> v = ParseUint32(text);
    if (!v) return InvalidArgument("step id \"" + text + "\": not a step number");
    return *v;
  };
  route("POST", "/api/v1/jobs/{id}/steps",
        [self](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          Result<StepSpec> spec = api::DecodeStepSpec(req.body);
          if (!spec) return api::ErrorResponse(spec.error());
          auto r = self->Call<api::StepInfo>(
              [&who, id = *id, spec = std::move(*spec)](Controller& c) mutable {
                return c.CreateStep(who, id, std::move(spec));
              });
          if (!r) return api::ErrorResponse(r.error());
          return Json(201, api::EncodeStepInfo(*r));
        });
  route("GET", "/api/v1/jobs/{id}/steps",
        [self, visible_job](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto user = visible_job(who, *id);
          if (!user) return api::ErrorResponse(user.error());
          auto r = self->Call<std::vector<api::StepInfo>>(
              [id = *id](Controller& c) { return c.ListSteps(id); });
          if (!r) return api::ErrorResponse(r.error());
          for (api::StepInfo& step : *r) internal::Redact(who, *user, step);
          return Json(200, api::EncodeStepInfoList(*r));
        });
  route("GET", "/api/v1/jobs/{id}/steps/{step}",
        [self, step_id, visible_job](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto step = step_id(req);
          if (!step) return api::ErrorResponse(step.error());
          auto user = visible_job(who, *id);
          if (!user) return api::ErrorResponse(user.error());
          auto r = self->Call<api::StepInfo>(
              [id = *id, step = *step](Controller& c) { return c.GetStep(id, step); });
          if (!r) return api::ErrorResponse(r.error());
          internal::Redact(who, *user, *r);
          return Json(200, api::EncodeStepInfo(*r));
        });
  // Long poll, as /jobs/{id}/wait: answers when the step has ended, or after `timeout` seconds.
  route("GET", "/api/v1/jobs/{id}/steps/{step}/wait",
        [self, step_id, visible_job](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto step = step_id(req);
          if (!step) return api::ErrorResponse(step.error());
          auto timeout = ParseWaitTimeout(req);
          if (!timeout) return api::ErrorResponse(timeout.error());
          auto user = visible_job(who, *id);
          if (!user) return api::ErrorResponse(user.error());
          auto ended = self->WaitForStep(*id, *step, *timeout);
          if (!ended) return api::ErrorResponse(ended.error());
          auto r = self->Call<api::StepInfo>(
              [id = *id, step = *step](Controller& c) { return c.GetStep(id, step); });
          if (!r) return api::ErrorResponse(r.error());
          internal::Redact(who, *user, *r);
          return Json(200, api::EncodeStepInfo(*r));
        });
  route("POST", "/api/v1/jobs/{id}/steps/{step}/cancel",
        [self, step_id](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto step = step_id(req);
          if (!step) return api::ErrorResponse(step.error());
          Status s = self->CallStatus(
              [&, id = *id, step = *step](Controller& c) { return c.CancelStep(who, id, step); });
          if (!s) return api::ErrorResponse(s.error());
          return Ok();
        });
  route("POST", "/api/v1/jobs/{id}/checkpoint",
        [self, privacy](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto r = self->Call<api::JobInfo>(
              [&who, id = *id](Controller& c) { return c.AcknowledgeCheckpoint(who, id); });
          if (!r) return api::ErrorResponse(r.error());
          internal::Redact(who, privacy, *r);
          return Json(200, api::EncodeJobInfo(*r));
        });

  route("GET", "/api/v1/nodes", [self](const api::HttpRequest&, const api::Identity&) {
    auto r = self->Call<std::vector<api::NodeInfo>>(
        [](Controller& c) -> Result<std::vector<api::NodeInfo>> { return c.ListNodes(); });
    if (!r) return api::ErrorResponse(r.error());
    return Json(200, api::EncodeNodeInfoList(*r));
  });
  route("GET", "/api/v1/nodes/{name}", [self](const api::HttpRequest& req, const api::Identity&) {
    std::string name = req.params.at("name");
    auto r = self->Call<api::NodeInfo>([name](Controller& c) { return c.GetNode(name); });
    if (!r) return api::ErrorResponse(r.error());
    return Json(200, api::EncodeNodeInfo(*r));
  });
  route("POST", "/api/v1/nodes/{name}/drain",
        [self](const api::HttpRequest& req, const api::Identity& who) {
          auto d = api::DecodeDrainRequest(req.body);
          if (!d) return api::ErrorResponse(d.error());
          std::string name = req.params.at("name");
          Status s = self->CallStatus([&](Controller& c) { return c.Drain(who, name, d->reason); });
          if (!s) return api::ErrorResponse(s.error());
          return Ok();
        });
  route("POST", "/api/v1/nodes/{name}/resume",
        [self](const api::HttpRequest& req, const api::Identity& who) {
          std::string name = req.params.at("name");
          Status s = self->CallStatus([&](Controller& c) { return c.Resume(who, name); });
          if (!s) return api::ErrorResponse(s.error());
          return Ok();
        });
  // GPU health (internal/gpu_health_tracker.h): an operator returns a failed GPU to service; fault
  // injection is forwarded to the node's agent (simulated GPUs only).
  route("POST", "/api/v1/nodes/{name}/gpus/{index}/resume",
        [self](const api::HttpRequest& req, const api::Identity& who) {
          std::string name = req.params.at("name"), text = req.params.at("index");
          std::optional<uint32_t> index = ParseUint32(text);
          if (!index) {
            return api::ErrorResponse(
                {ErrorCode::kInvalidArgument, "gpu \"" + text + "\": not a GPU index"});
          }
          uint32_t gpu = *index;
          Status s = self->CallStatus([&](Controller& c) { return c.ResumeGpu(who, name, gpu); });
          if (!s) return api::ErrorResponse(s.error());
          return Ok();
        });
  route("POST", "/api/v1/nodes/{name}/inject",
        [self, ctx](const api::HttpRequest& req, const api::Identity& who) {
          auto inject = api::DecodeInjectRequest(req.body);
          if (!inject) return api::ErrorResponse(inject.error());
          std::string name = req.params.at("name");
          auto to =
              self->Call<AgentAddress>([&](Controller& c) { return c.InjectTarget(who, name); });
          if (!to) return api::ErrorResponse(to.error());
          api::HttpClientOptions options = ctx->agent_client;
          options.connect_timeout = std::chrono::milliseconds(2000);
          options.request_timeout = std::chrono::milliseconds(10000);
          auto client = api::HttpClient::Create(to->url, options);
          if (!client) return api::ErrorResponse(client.error());
          auto answer = api::CheckResponse(
              (*client)->Send("POST", "/api/v1/inject", api::EncodeInjectRequest(*inject),
                              {{"authorization", ctx->agent_authorization(name)}}, false));
          if (!answer)
            return api::ErrorResponse(
                {answer.error().code, "node " + name + ": " + answer.error().message});
          return Ok();
        });
  // `corral priority [JOB]`: every pending job's priority and its factors (or one job's).
  route("GET", "/api/v1/priorities",
        [self, privacy](const api::HttpRequest& req, const api::Identity& who) {
          std::optional<JobId> job;
          if (auto it = req.query.find("job"); it != req.query.end()) {
            auto id = ParseJobId(it->second);
            if (!id) return api::ErrorResponse(id.error());
            job = *id;
          }
          auto r = self->Call<std::vector<api::PriorityInfo>>(
              [job](Controller& c) -> Result<std::vector<api::PriorityInfo>> {
                CORRAL_ASSIGN_OR_RETURN(auto factors, c.Priorities(job));
                std::vector<api::PriorityInfo> out;
                for (const auto& f : factors) {
                  out.push_back({.job = f.job,
                                 .user = f.user,
                                 .account = f.account,
                                 .qos = f.qos,
                                 .age = f.age,
                                 .fairshare = f.fairshare,
                                 .job_size = f.job_size,
                                 .partition = f.partition,
                                 .qos_factor = f.qos_factor,
                                 .age_points = f.age_points,
                                 .fairshare_points = f.fairshare_points,
                                 .job_size_points = f.job_size_points,
                                 .partition_points = f.partition_points,
                                 .qos_points = f.qos_points,
                                 .nice = f.nice,
                                 .priority_tier = f.priority_tier,
                                 .priority = f.priority});
                  out.back().job_partition = c.PartitionOf(f.job);
                }
                return out;
              });
          if (!r) return api::ErrorResponse(r.error());
          std::erase_if(*r, [&](const api::PriorityInfo& p) {
            return !internal::SeesJob(who, p.user, privacy);
          });
          return Json(200, api::EncodePriorityList(*r));
        });
  // `corral why JOB`: everything that holds a job back, as data.
  route("GET", "/api/v1/jobs/{id}/why",
        [self, visible_job](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          auto user = visible_job(who, *id);
          if (!user) return api::ErrorResponse(user.error());
          auto r = self->Call<api::WhyInfo>([id = *id](Controller& c) -> Result<api::WhyInfo> {
            CORRAL_ASSIGN_OR_RETURN(api::JobInfo info, c.GetJob(id));
            CORRAL_ASSIGN_OR_RETURN(auto blockers, c.Blockers(id));
            api::WhyInfo w{.job = id,
                           .state = info.job.state,
                           .reason = info.job.reason,
                           .detail = info.reason_detail,
                           .estimated_start = info.estimated_start,
                           .priority = info.priority};
            for (const auto& b : blockers) {
              w.blockers.push_back({.code = b.code,
                                    .detail = b.detail,
                                    .scope = b.scope,
                                    .entity = b.entity,
                                    .resource = b.resource,
                                    .used = b.used,
                                    .limit = b.limit,
                                    .requested = b.requested,
                                    .jobs = b.jobs});
            }
            return w;
          });
          if (!r) return api::ErrorResponse(r.error());
          return Json(200, api::EncodeWhyInfo(*r));
        });
  // The audit log (docs/governance.md): admins and operators only (the rows' action).
  route("GET", "/api/v1/audit", [self](const api::HttpRequest& req, const api::Identity&) {
    return AuditListResponse(*self, req);
  });
  route("GET", "/api/v1/audit/verify", [self](const api::HttpRequest&, const api::Identity&) {
    return AuditVerifyResponse(*self);
  });
  route("GET", "/api/v1/partitions", [self](const api::HttpRequest&, const api::Identity&) {
    auto r = self->Call<std::vector<api::PartitionInfo>>(
        [](Controller& c) -> Result<std::vector<api::PartitionInfo>> {
          return c.ListPartitions();
        });
    if (!r) return api::ErrorResponse(r.error());
    return Json(200, api::EncodePartitionInfoList(*r));
  });

  // Per-job GPU statistics and the GPU-waste report (gpu_stats_routes.h).
  route("GET", "/api/v1/jobs/{id}/gpustats",
        [self, ctx, privacy](const api::HttpRequest& req, const api::Identity& who) {
          return ServeGpuStats(*self, *ctx->store, privacy, req, who);
        });
  route("GET", "/api/v1/reports/waste",
        [self, ctx](const api::HttpRequest& req, const api::Identity& who) {
          return ServeWasteReport(*self, *ctx->store, *ctx->clock, ctx->waste_threshold, req, who);
        });

  // Usage and fair-share reports (report_routes.h).
  route("GET", "/api/v1/reports/usage",
        [self, ctx, privacy](const api::HttpRequest& req, const api::Identity& who) {
          return ServeUsageReport(*self, *ctx->store, *ctx->clock, privacy, req, who);
        });
  route("GET", "/api/v1/fairshare",
        [self, privacy](const api::HttpRequest&, const api::Identity& who) {
          return ServeShareReport(*self, privacy, who);
        });
  route("GET", "/api/v1/priorities/weights",
        [self](const api::HttpRequest&, const api::Identity&) {
          return ServePriorityWeights(*self);
        });
  // Accounts, users and QOS as data (governance_routes.h).
  for (std::string_view kind : {"accounts", "users", "qos"}) {
    const std::string list = "/api/v1/" + std::string(kind);
    const std::string one = list + "/{name}";
    for (auto [method, pattern] : {std::pair<std::string_view, std::string>{"GET", list},
                                   {"GET", one},
                                   {"POST", list},
                                   {"PUT", one},
                                   {"DELETE", one}}) {
      route(method, pattern,
            [self, kind, method](const api::HttpRequest& req, const api::Identity& who) {
              return ServeGovernance(*self, kind, method, req, who);
            });
    }
  }
  // Account coordinators (issue 16 item 2; governance_routes.h).
  for (auto [method, pattern] : {std::pair<std::string_view, std::string_view>{
                                     "POST", "/api/v1/accounts/{name}/coordinators"},
                                 {"DELETE", "/api/v1/accounts/{name}/coordinators/{user}"}}) {
    route(method, pattern, [self, method](const api::HttpRequest& req, const api::Identity& who) {
      return ServeCoordinators(*self, method, req, who);
    });
  }

  // Budgets' spend (budget_routes.h; issue 16 item 5).
  route("GET", "/api/v1/budgets",
        [self, privacy](const api::HttpRequest&, const api::Identity& who) {
          return ServeBudgets(*self, privacy, who);
        });

  // Prometheus (metrics/routes.h): the metrics principal, operators and admins.
  route("GET", "/metrics", [self, ctx, &server](const api::HttpRequest&, const api::Identity&) {
    return metrics::ServeMetrics(*self, *ctx->service_metrics, server);
  });
  // `sdiag` (metrics/routes.h): as /metrics.
  route("GET", "/api/v1/diag", [self, ctx, &server](const api::HttpRequest&, const api::Identity&) {
    return metrics::ServeDiag(*self, *ctx->service_metrics, server);
  });
  // `sstat` and `sbcast` (job_node_routes.h).
  route("GET", "/api/v1/jobs/{id}/stats",
        [self, ctx](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          return ServeJobStats(*self, *ctx, *id, who);
        });
  route("POST", "/api/v1/jobs/{id}/bcast",
        [self, ctx](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          return ServeBcast(*self, *ctx, *id, req, who);
        });
  route("GET", "/metrics/targets", [self](const api::HttpRequest&, const api::Identity&) {
    return metrics::ServeTargets(*self);
  });

  // The web dashboard's static files, anonymous: the page asks for a token and sends it to the
  // API routes above, which decide what it may see.
  route("GET", "/ui/{file*}", [](const api::HttpRequest& req, const api::Identity&) {
    const std::string& file = req.params.at("file");
    std::optional<DashboardAsset> asset = FindDashboardAsset(file);
    if (!asset) {
      return api::ErrorResponse({ErrorCode::kNotFound, "/ui/" + file + ": no such file"});
    }
    api::HttpResponse r;
    r.content_type = std::string(asset->content_type);
    r.body = std::string(asset->body);
    r.headers["Cache-Control"] = "no-cache";
    r.headers["X-Content-Type-Options"] = "nosniff";
    r.headers["Content-Security-Policy"] =
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'";
    return r;
  });

  // Agents: each for its own node only (the body's node must be the credential's).
  route("POST", "/api/v1/agents/register",
        [self](const api::HttpRequest& req, const api::Identity& who) {
          auto r = api::DecodeRegisterRequest(req.body);
          if (!r) return api::ErrorResponse(r.error());
          Status own = api::Authorize(BoundAgent(who), api::Action::kNodeRegister,
                                      {.node = r->inventory.name});
          if (!own) return Denied(own.error());
          auto resp = self->Call<api::RegisterResponse>(
              [req = std::move(*r)](Controller& c) { return c.Register(req); });
          if (!resp) return api::ErrorResponse(resp.error());
          return Json(200, api::EncodeRegisterResponse(*resp));
        });
  route("POST", "/api/v1/agents/heartbeat",
        [self](const api::HttpRequest& req, const api::Identity& who) {
          auto r = api::DecodeHeartbeatRequest(req.body);
          if (!r) return api::ErrorResponse(r.error());
          Status own =
              api::Authorize(BoundAgent(who), api::Action::kNodeHeartbeat, {.node = r->node});
          if (!own) return Denied(own.error());
          auto resp = self->Call<api::HeartbeatResponse>(
              [req = std::move(*r)](Controller& c) { return c.Heartbeat(req); });
          if (!resp) return api::ErrorResponse(resp.error());
          return Json(200, api::EncodeHeartbeatResponse(*resp));
        });
  route("POST", "/api/v1/agents/events",
        [self](const api::HttpRequest& req, const api::Identity& who) {
          auto r = api::DecodeJobEventsRequest(req.body);
          if (!r) return api::ErrorResponse(r.error());
          // Events about jobs not allocated to this node are refused by HandleEvents.
          Status own = api::Authorize(BoundAgent(who), api::Action::kNodeEvent, {.node = r->node});
          if (!own) return Denied(own.error());
          Status s = self->CallStatus(
              [req = std::move(*r)](Controller& c) { return c.HandleEvents(req); });
          if (!s) return api::ErrorResponse(s.error());
          return Ok();
        });

  for (const RouteSpec& spec : ControllerRoutes()) {
    CORRAL_CHECK(registered.contains(&spec)) << spec.method << " " << spec.pattern
                                             << ": a row of controller/routes.cc without a handler";
  }
}

}  // namespace corral::controller
