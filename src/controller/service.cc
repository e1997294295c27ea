#include "controller/service.h"

#include <charconv>
#include <condition_variable>
#include <csignal>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "api/http.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "api/transport_policy.h"
#include "controller/controller.h"
#include "controller/http_agent_transport.h"
#include "controller/job_credentials.h"
#include "core/check.h"
#include "core/duration.h"
#include "core/log.h"
#include "core/strings.h"

namespace corral::controller {

namespace {

struct Posted {
  std::function<void(Controller&)> run;
  std::function<void()> done;
};

// A `corral wait` caller blocked on a job's end.
struct Waiter {
  std::mutex mu;
  std::condition_variable cv;
  bool ended = false;
};

// Wakes (and forgets) the callers waiting on `key` in `waiters`.
template <typename Key>
void Wake(std::map<Key, std::vector<std::weak_ptr<Waiter>>>& waiters, const Key& key) {
  auto it = waiters.find(key);
  if (it == waiters.end()) return;
  for (auto& weak : it->second) {
    if (auto w = weak.lock()) {
      std::lock_guard<std::mutex> lock(w->mu);
      w->ended = true;
      w->cv.notify_all();
    }
  }
  waiters.erase(it);
}

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

// The API's server options: TLS with the configured certificate when there is one.
api::HttpServerOptions ServerOptions(const ControllerConfig& c) {
  api::HttpServerOptions o;
  o.tls = api::ServerTls(c.tls_certificate, c.tls_key, c.tls_ca, c.tls_client_certificate);
  return o;
}

// How often the live runs that job credentials are checked against are resynchronised with
// the state (a requeued job's old run stops being live within this).
constexpr Duration kLiveRunResync = Seconds(2);

}  // namespace

struct ControllerService::Impl {
  ControllerConfig config;
  const Clock& clock;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<api::Authenticator> authenticator;
  std::shared_ptr<JobCredentials> jobs;
  api::HttpClientOptions agent_client;
  std::unique_ptr<Controller> controller;
  std::unique_ptr<HttpAgentTransport> transport;
  api::HttpServer server;

  std::mutex mu;
  std::condition_variable cv;
  std::vector<Posted> inbox;
  bool stopping = false;
  bool started = false;
  std::thread state_thread;

  // State thread only.
  std::map<JobId, std::vector<std::weak_ptr<Waiter>>> waiters;
  std::map<std::pair<JobId, uint32_t>, std::vector<std::weak_ptr<Waiter>>> step_waiters;

  MonoTime next_live_resync{};  // state thread only

  // The controller's call tokens, one per node (aud = the node), reused for a minute.
  std::mutex token_mu;
  std::map<std::string, std::pair<std::string, Timestamp>> agent_tokens;

  Impl(ControllerConfig c, const Clock& cl, std::unique_ptr<store::Store> s, ServiceSecurity sec)
      : config(std::move(c)),
        clock(cl),
        store(std::move(s)),
        authenticator(std::move(sec.authenticator)),
        jobs(std::move(sec.jobs)),
        agent_client(std::move(sec.agent_client)),
        server(ServerOptions(config)) {}

  // The Authorization header of a call to node `node`'s agent: valid for that node only.
  std::string AgentAuthorization(const std::string& node) {
    std::lock_guard<std::mutex> lock(token_mu);
    Timestamp now = clock.Now();
    auto& [token, minted] = agent_tokens[node];
    if (token.empty() || now - minted > Seconds(60)) {
      auto t = jobs->credentials().MintControllerCall(node, now, Seconds(300));
      if (!t) {
        CORRAL_LOG(Error) << "cannot mint a call token for node " << node << ": "
                          << t.error().message;
        return "";
      }
      token = "Bearer " + *t;
      minted = now;
    }
    return token;
  }

  // Gives each launch (batch or step) the job's credential for that run.
  void AttachJobCredential(AgentRequest& request) {
    auto attach = [&](const Job& job, std::string* out) {
      auto credential = jobs->Mint(job, clock.Now());
      if (credential) {
        *out = std::move(*credential);
      } else {
        CORRAL_LOG(Warn) << "job " << job.id.ToString()
                         << ": no job credential: " << credential.error().message;
      }
    };
    if (auto* l = std::get_if<api::LaunchRequest>(&request)) attach(l->job, &l->job_credential);
    if (auto* s = std::get_if<api::StepLaunchRequest>(&request)) {
      attach(s->job, &s->job_credential);
    }
  }

  // The runs job credentials are valid for: the state's running jobs.
  void ResyncLiveRuns() {
    jobs->Replace(controller->RunningRuns());
    next_live_resync = clock.MonotonicNow() + kLiveRunResync;
  }

  void Post(std::function<void(Controller&)> run, std::function<void()> done) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!stopping) {
        inbox.push_back({std::move(run), std::move(done)});
        cv.notify_one();
        return;
      }
    }
    if (done) done();  // not run: the caller sees "shutting down"
  }

  void Commit() {
    store::WriteBatch batch = controller->TakeWrites();
    if (batch.empty()) return;
    for (int attempt = 1;; ++attempt) {
      Status s = store->Write(batch);
      if (s) return;
      CORRAL_LOG(Error) << "store write of " << batch.size() << " changes failed (attempt "
                        << attempt << "): " << s.error().message;
      // Fail-stop: the in-memory state is ahead of the store; a restart recovers from the
      // store, and no request of this batch has been answered.
      CORRAL_CHECK(attempt < 5) << "cannot write to the store: " << s.error().message;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::milliseconds(100 * attempt));
    }
  }

  void Loop() {
    std::vector<Posted> work;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (inbox.empty() && !stopping) {
          MonoTime deadline = controller->NextTickDeadline();
          Duration wait = deadline - clock.MonotonicNow();
          if (wait > Duration(0)) cv.wait_for(lock, wait);
        }
        if (stopping) break;
        work.swap(inbox);
      }
      for (auto& p : work) p.run(*controller);
      controller->Tick();
      Commit();
      for (auto& p : work) {
        if (p.done) p.done();
      }
      work.clear();
      Release();
    }
    // Answer whatever is left so that no handler thread stays blocked.
    std::vector<Posted> rest;
    {
      std::lock_guard<std::mutex> lock(mu);
      rest.swap(inbox);
    }
    for (auto& p : rest) {
      if (p.done) p.done();
    }
  }

  // After a commit: commands to agents, and waiters of jobs that ended.
  void Release() {
    if (clock.MonotonicNow() >= next_live_resync) ResyncLiveRuns();
    for (auto& c : controller->TakeOutbox()) {
      AttachJobCredential(c.request);
      transport->Send(c.to, c.request);
    }
    for (const auto& step : controller->TakeFinishedSteps()) Wake(step_waiters, step);
    for (JobId id : controller->TakeFinished()) {
      jobs->Ended(id);
      Wake(waiters, id);
    }
  }
};

ControllerService::ControllerService(ControllerConfig config, sched::SchedulerConfig sched_config,
                                     std::unique_ptr<sched::Policy> policy,
                                     std::unique_ptr<store::Store> store, ServiceSecurity security,
                                     const Clock& clock)
    : impl_(std::make_unique<Impl>(config, clock, std::move(store), std::move(security))) {
  impl_->controller = std::make_unique<Controller>(std::move(config), std::move(sched_config),
                                                   std::move(policy), clock);
}

ControllerService::~ControllerService() { Stop(); }

void ControllerService::Post(std::function<void(Controller&)> run, std::function<void()> done) {
  impl_->Post(std::move(run), std::move(done));
}

Status ControllerService::CallStatus(std::function<Status(Controller&)> fn) {
  Result<bool> r = Call<bool>([fn = std::move(fn)](Controller& c) -> Result<bool> {
    Status s = fn(c);
    if (!s) return tl::unexpected<Error>(s.error());
    return true;
  });
  if (!r) return tl::unexpected<Error>(r.error());
  return {};
}

Result<bool> ControllerService::WaitForJob(JobId id, Duration timeout) {
  auto waiter = std::make_shared<Waiter>();  // shared with the state thread's waiter list
  Impl* impl = impl_.get();
  Result<bool> registered = Call<bool>([id, waiter, impl](Controller& c) -> Result<bool> {
    CORRAL_ASSIGN_OR_RETURN(api::JobInfo info, c.GetJob(id));
    if (IsTerminal(info.job.state)) return true;
    impl->waiters[id].push_back(waiter);
    return false;
  });
  if (!registered || *registered) return registered;
  std::unique_lock<std::mutex> lock(waiter->mu);
  waiter->cv.wait_for(lock, timeout, [&] { return waiter->ended; });
  return waiter->ended;
}

Result<bool> ControllerService::WaitForStep(JobId id, uint32_t step, Duration timeout) {
  auto waiter = std::make_shared<Waiter>();  // shared with the state thread's waiter list
  Impl* impl = impl_.get();
  Result<bool> registered = Call<bool>([id, step, waiter, impl](Controller& c) -> Result<bool> {
    CORRAL_ASSIGN_OR_RETURN(api::StepInfo info, c.GetStep(id, step));
    if (info.state != JobState::kRunning) return true;
    impl->step_waiters[{id, step}].push_back(waiter);
    return false;
  });
  if (!registered || *registered) return registered;
  std::unique_lock<std::mutex> lock(waiter->mu);
  waiter->cv.wait_for(lock, timeout, [&] { return waiter->ended; });
  return waiter->ended;
}

uint16_t ControllerService::port() const { return impl_->server.port(); }

std::string ControllerService::url() const {
  return (impl_->config.tls_certificate.empty() ? "http://" : "https://") +
         impl_->config.listen_host + ":" + std::to_string(port());
}

Status ControllerService::Start() {
  Impl& im = *impl_;
  CORRAL_ASSIGN_OR_RETURN(store::StoredState state, im.store->Load());
  CORRAL_RETURN_IF_ERROR(im.controller->Recover(std::move(state)));
  im.ResyncLiveRuns();  // recovered running jobs keep their credentials

  Impl* impl = impl_.get();
  AgentReplies replies;
  replies.launch_accepted = [impl](JobId job, Generation gen) {
    impl->Post([job, gen](Controller& c) { c.OnLaunchAccepted(job, gen); }, nullptr);
  };
  replies.launch_failed = [impl](JobId job, Generation gen, Error error) {
    impl->Post([job, gen, error](Controller& c) { c.OnLaunchFailed(job, gen, error); }, nullptr);
  };
  replies.step_launch_failed = [impl](JobId job, Generation gen, uint32_t step, std::string node,
                                      Error error) {
    impl->Post([job, gen, step, node,
                error](Controller& c) { c.OnStepLaunchFailed(job, gen, step, node, error); },
               nullptr);
  };
  im.transport = std::make_unique<HttpAgentTransport>(
      im.clock, std::move(replies),
      HttpAgentTransportOptions{
          .threads = 4,
          .give_up_after = im.config.node_timeout,
          .authorization =
              [impl](const std::string& node) { return impl->AgentAuthorization(node); },
          .client = im.agent_client});

  // --- HTTP routes -------------------------------------------------------------------------
  auto authed = [impl](auto handler) {
    return [impl, handler](const api::HttpRequest& req) -> api::HttpResponse {
      Result<api::Identity> who = impl->authenticator->Authenticate(req, impl->clock.Now());
      if (!who) return api::ErrorResponse(who.error());
      return handler(req, *who);
    };
  };
  // Agent routes: a node agent only, and only for its own node (`node` of the request).
  auto agent_only = [impl, authed](auto handler) {
    return authed(
        [handler](const api::HttpRequest& req, const api::Identity& who) -> api::HttpResponse {
          if (who.role != api::Role::kAgent || who.node.empty()) {
            return api::ErrorResponse(
                {ErrorCode::kPermissionDenied, req.path + ": only node agents may call this"});
          }
          return handler(req, who);
        });
  };
  auto own_node = [](const api::Identity& who, const std::string& node) -> Status {
    if (node == who.node) return {};
    return MakeError(ErrorCode::kPermissionDenied, "node \"" + node + "\": the agent of node " +
                                                       who.node + " may act for its own node only");
  };
  ControllerService* self = this;
  auto& server = im.server;

  server.Route("GET", "/api/v1/health", [](const api::HttpRequest&) { return Ok(); });

  server.Route(
      "POST", "/api/v1/jobs", authed([self](const api::HttpRequest& req, const api::Identity& who) {
        Result<JobSpec> spec = api::DecodeJobSpec(req.body);
        if (!spec) return api::ErrorResponse(spec.error());
        auto r =
            self->Call<api::SubmitResponse>([&who, spec = std::move(*spec)](Controller& c) mutable {
              return c.Submit(who, std::move(spec));
            });
        if (!r) return api::ErrorResponse(r.error());
        return Json(201, api::EncodeSubmitResponse(*r));
      }));

  server.Route(
      "GET", "/api/v1/jobs", authed([self](const api::HttpRequest& req, const api::Identity&) {
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
        return Json(200, api::EncodeJobInfoList(*r));
      }));

  server.Route(
      "GET", "/api/v1/jobs/{id}", authed([self](const api::HttpRequest& req, const api::Identity&) {
        auto id = ParseJobId(req.params.at("id"));
        if (!id) return api::ErrorResponse(id.error());
        auto r = self->Call<api::JobInfo>([id = *id](Controller& c) { return c.GetJob(id); });
        if (!r) return api::ErrorResponse(r.error());
        return Json(200, api::EncodeJobInfo(*r));
      }));

  // Long poll: answers when the job has ended, or after `timeout` seconds (default 30, at
  // most 300) with its current record.
  server.Route("GET", "/api/v1/jobs/{id}/wait",
               authed([self](const api::HttpRequest& req, const api::Identity&) {
                 auto id = ParseJobId(req.params.at("id"));
                 if (!id) return api::ErrorResponse(id.error());
                 auto timeout = ParseWaitTimeout(req);
                 if (!timeout) return api::ErrorResponse(timeout.error());
                 auto ended = self->WaitForJob(*id, *timeout);
                 if (!ended) return api::ErrorResponse(ended.error());
                 auto r =
                     self->Call<api::JobInfo>([id = *id](Controller& c) { return c.GetJob(id); });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodeJobInfo(*r));
               }));

  auto job_action =
      [self, authed](
          std::function<Status(Controller&, const api::Identity&, JobId, const api::HttpRequest&)>
              action) {
        return authed([self, action](const api::HttpRequest& req, const api::Identity& who) {
          auto id = ParseJobId(req.params.at("id"));
          if (!id) return api::ErrorResponse(id.error());
          Status s =
              self->CallStatus([&, id = *id](Controller& c) { return action(c, who, id, req); });
          if (!s) return api::ErrorResponse(s.error());
          return Ok();
        });
      };
  auto cancel = job_action([](Controller& c, const api::Identity& who, JobId id,
                              const api::HttpRequest&) { return c.Cancel(who, id); });
  server.Route("POST", "/api/v1/jobs/{id}/cancel", cancel);
  server.Route("DELETE", "/api/v1/jobs/{id}", cancel);
  server.Route("POST", "/api/v1/jobs/{id}/requeue",
               job_action([](Controller& c, const api::Identity& who, JobId id,
                             const api::HttpRequest&) { return c.Requeue(who, id); }));
  server.Route("POST", "/api/v1/jobs/{id}/hold",
               job_action([](Controller& c, const api::Identity& who, JobId id,
                             const api::HttpRequest&) { return c.Hold(who, id, true); }));
  server.Route("POST", "/api/v1/jobs/{id}/release",
               job_action([](Controller& c, const api::Identity& who, JobId id,
                             const api::HttpRequest&) { return c.Hold(who, id, false); }));
  server.Route("POST", "/api/v1/jobs/{id}/signal",
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
  server.Route("POST", "/api/v1/jobs/{id}/time_limit",
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

  // Steps (`corral run`) and checkpoints: docs/api.md, "Steps".
  auto step_id = [](const api::HttpRequest& req) -> Result<uint32_t> {
    const std::string& text = req.params.at("step");
    std::optional<uint32_t> v = ParseUint32(text);
    if (!v) return InvalidArgument("step id \"" + text + "\": not a step number");
    return *v;
  };
  server.Route("POST", "/api/v1/jobs/{id}/steps",
               authed([self](const api::HttpRequest& req, const api::Identity& who) {
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
               }));
  server.Route("GET", "/api/v1/jobs/{id}/steps",
               authed([self](const api::HttpRequest& req, const api::Identity&) {
                 auto id = ParseJobId(req.params.at("id"));
                 if (!id) return api::ErrorResponse(id.error());
                 auto r = self->Call<std::vector<api::StepInfo>>(
                     [id = *id](Controller& c) { return c.ListSteps(id); });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodeStepInfoList(*r));
               }));
  server.Route("GET", "/api/v1/jobs/{id}/steps/{step}",
               authed([self, step_id](const api::HttpRequest& req, const api::Identity&) {
                 auto id = ParseJobId(req.params.at("id"));
                 if (!id) return api::ErrorResponse(id.error());
                 auto step = step_id(req);
                 if (!step) return api::ErrorResponse(step.error());
                 auto r = self->Call<api::StepInfo>(
                     [id = *id, step = *step](Controller& c) { return c.GetStep(id, step); });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodeStepInfo(*r));
               }));
  // Long poll, as /jobs/{id}/wait: answers when the step has ended, or after `timeout` seconds.
  server.Route("GET", "/api/v1/jobs/{id}/steps/{step}/wait",
               authed([self, step_id](const api::HttpRequest& req, const api::Identity&) {
                 auto id = ParseJobId(req.params.at("id"));
                 if (!id) return api::ErrorResponse(id.error());
                 auto step = step_id(req);
                 if (!step) return api::ErrorResponse(step.error());
                 auto timeout = ParseWaitTimeout(req);
                 if (!timeout) return api::ErrorResponse(timeout.error());
                 auto ended = self->WaitForStep(*id, *step, *timeout);
                 if (!ended) return api::ErrorResponse(ended.error());
                 auto r = self->Call<api::StepInfo>(
                     [id = *id, step = *step](Controller& c) { return c.GetStep(id, step); });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodeStepInfo(*r));
               }));
  server.Route("POST", "/api/v1/jobs/{id}/steps/{step}/cancel",
               authed([self, step_id](const api::HttpRequest& req, const api::Identity& who) {
                 auto id = ParseJobId(req.params.at("id"));
                 if (!id) return api::ErrorResponse(id.error());
                 auto step = step_id(req);
                 if (!step) return api::ErrorResponse(step.error());
                 Status s = self->CallStatus([&, id = *id, step = *step](Controller& c) {
                   return c.CancelStep(who, id, step);
                 });
                 if (!s) return api::ErrorResponse(s.error());
                 return Ok();
               }));
  server.Route("POST", "/api/v1/jobs/{id}/checkpoint",
               authed([self](const api::HttpRequest& req, const api::Identity& who) {
                 auto id = ParseJobId(req.params.at("id"));
                 if (!id) return api::ErrorResponse(id.error());
                 auto r = self->Call<api::JobInfo>(
                     [&who, id = *id](Controller& c) { return c.AcknowledgeCheckpoint(who, id); });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodeJobInfo(*r));
               }));

  server.Route(
      "GET", "/api/v1/nodes", authed([self](const api::HttpRequest&, const api::Identity&) {
        auto r = self->Call<std::vector<api::NodeInfo>>(
            [](Controller& c) -> Result<std::vector<api::NodeInfo>> { return c.ListNodes(); });
        if (!r) return api::ErrorResponse(r.error());
        return Json(200, api::EncodeNodeInfoList(*r));
      }));
  server.Route("GET", "/api/v1/nodes/{name}",
               authed([self](const api::HttpRequest& req, const api::Identity&) {
                 std::string name = req.params.at("name");
                 auto r =
                     self->Call<api::NodeInfo>([name](Controller& c) { return c.GetNode(name); });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodeNodeInfo(*r));
               }));
  server.Route("POST", "/api/v1/nodes/{name}/drain",
               authed([self](const api::HttpRequest& req, const api::Identity& who) {
                 auto d = api::DecodeDrainRequest(req.body);
                 if (!d) return api::ErrorResponse(d.error());
                 std::string name = req.params.at("name");
                 Status s =
                     self->CallStatus([&](Controller& c) { return c.Drain(who, name, d->reason); });
                 if (!s) return api::ErrorResponse(s.error());
                 return Ok();
               }));
  server.Route("POST", "/api/v1/nodes/{name}/resume",
               authed([self](const api::HttpRequest& req, const api::Identity& who) {
                 std::string name = req.params.at("name");
                 Status s = self->CallStatus([&](Controller& c) { return c.Resume(who, name); });
                 if (!s) return api::ErrorResponse(s.error());
                 return Ok();
               }));
  // GPU health (internal/gpu_health_tracker.h): an operator returns a failed GPU to service; fault injection
  // is forwarded to the node's agent (simulated GPUs only).
  server.Route("POST", "/api/v1/nodes/{name}/gpus/{index}/resume",
               authed([self](const api::HttpRequest& req, const api::Identity& who) {
                 std::string name = req.params.at("name"), text = req.params.at("index");
                 std::optional<uint32_t> index = ParseUint32(text);
                 if (!index) {
                   return api::ErrorResponse(
                       {ErrorCode::kInvalidArgument, "gpu \"" + text + "\": not a GPU index"});
                 }
                 uint32_t gpu = *index;
                 Status s =
                     self->CallStatus([&](Controller& c) { return c.ResumeGpu(who, name, gpu); });
                 if (!s) return api::ErrorResponse(s.error());
                 return Ok();
               }));
  server.Route("POST", "/api/v1/nodes/{name}/inject",
               authed([self, impl](const api::HttpRequest& req, const api::Identity& who) {
                 auto inject = api::DecodeInjectRequest(req.body);
                 if (!inject) return api::ErrorResponse(inject.error());
                 std::string name = req.params.at("name");
                 auto to = self->Call<AgentAddress>(
                     [&](Controller& c) { return c.InjectTarget(who, name); });
                 if (!to) return api::ErrorResponse(to.error());
                 api::HttpClientOptions options = impl->agent_client;
                 options.connect_timeout = std::chrono::milliseconds(2000);
                 options.request_timeout = std::chrono::milliseconds(10000);
                 auto client = api::HttpClient::Create(to->url, options);
                 if (!client) return api::ErrorResponse(client.error());
                 auto answer = api::CheckResponse(
                     (*client)->Send("POST", "/api/v1/inject", api::EncodeInjectRequest(*inject),
                                     {{"authorization", impl->AgentAuthorization(name)}}, false));
                 if (!answer)
                   return api::ErrorResponse(
                       {answer.error().code, "node " + name + ": " + answer.error().message});
                 return Ok();
               }));
  // `corral priority [JOB]`: every pending job's priority and its factors (or one job's).
  server.Route("GET", "/api/v1/priorities",
               authed([self](const api::HttpRequest& req, const api::Identity&) {
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
                       }
                       return out;
                     });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodePriorityList(*r));
               }));
  // `corral why JOB`: everything that holds a job back, as data.
  server.Route("GET", "/api/v1/jobs/{id}/why",
               authed([self](const api::HttpRequest& req, const api::Identity&) {
                 auto id = ParseJobId(req.params.at("id"));
                 if (!id) return api::ErrorResponse(id.error());
                 auto r =
                     self->Call<api::WhyInfo>([id = *id](Controller& c) -> Result<api::WhyInfo> {
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
               }));
  server.Route("GET", "/api/v1/partitions",
               authed([self](const api::HttpRequest&, const api::Identity&) {
                 auto r = self->Call<std::vector<api::PartitionInfo>>(
                     [](Controller& c) -> Result<std::vector<api::PartitionInfo>> {
                       return c.ListPartitions();
                     });
                 if (!r) return api::ErrorResponse(r.error());
                 return Json(200, api::EncodePartitionInfoList(*r));
               }));

  // Agents.
  server.Route("POST", "/api/v1/agents/register",
               agent_only([self, own_node](const api::HttpRequest& req, const api::Identity& who) {
                 auto r = api::DecodeRegisterRequest(req.body);
                 if (!r) return api::ErrorResponse(r.error());
                 if (Status own = own_node(who, r->inventory.name); !own) {
                   return api::ErrorResponse(own.error());
                 }
                 auto resp = self->Call<api::RegisterResponse>(
                     [req = std::move(*r)](Controller& c) { return c.Register(req); });
                 if (!resp) return api::ErrorResponse(resp.error());
                 return Json(200, api::EncodeRegisterResponse(*resp));
               }));
  server.Route("POST", "/api/v1/agents/heartbeat",
               agent_only([self, own_node](const api::HttpRequest& req, const api::Identity& who) {
                 auto r = api::DecodeHeartbeatRequest(req.body);
                 if (!r) return api::ErrorResponse(r.error());
                 if (Status own = own_node(who, r->node); !own) {
                   return api::ErrorResponse(own.error());
                 }
                 auto resp = self->Call<api::HeartbeatResponse>(
                     [req = std::move(*r)](Controller& c) { return c.Heartbeat(req); });
                 if (!resp) return api::ErrorResponse(resp.error());
                 return Json(200, api::EncodeHeartbeatResponse(*resp));
               }));
  server.Route("POST", "/api/v1/agents/events",
               agent_only([self, own_node](const api::HttpRequest& req, const api::Identity& who) {
                 auto r = api::DecodeJobEventsRequest(req.body);
                 if (!r) return api::ErrorResponse(r.error());
                 if (Status own = own_node(who, r->node); !own) {
                   return api::ErrorResponse(own.error());
                 }
                 Status s = self->CallStatus(
                     [req = std::move(*r)](Controller& c) { return c.HandleEvents(req); });
                 if (!s) return api::ErrorResponse(s.error());
                 return Ok();
               }));

  im.state_thread = std::thread([impl] { impl->Loop(); });
  im.started = true;
  Status listening = im.server.Start(im.config.listen_host, im.config.listen_port);
  if (!listening) {
    Stop();
    return listening;
  }
  CORRAL_LOG(Info) << "controller listening on " << url() << ", store " << im.store->kind();
  return {};
}

void ControllerService::Stop() {
  Impl& im = *impl_;
  if (!im.started) return;
  im.started = false;
  im.server.Stop();
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.stopping = true;
  }
  im.cv.notify_all();
  if (im.state_thread.joinable()) im.state_thread.join();
  im.transport.reset();
}

}  // namespace corral::controller
