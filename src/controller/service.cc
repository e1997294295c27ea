#include "controller/service.h"

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "api/http.h"
#include "api/http_status.h"
#include "api/scrape_token.h"
#include "api/token.h"
#include "api/transport_policy.h"
#include "controller/controller.h"
#include "controller/http_agent_transport.h"
#include "controller/job_credentials.h"
#include "controller/metrics/routes.h"
#include "controller/metrics/service_metrics.h"
#include "controller/service_routes.h"
#include "core/check.h"
#include "core/duration.h"
#include "core/log.h"

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

  AuditLog audit;             // state thread only
  store::WriteBatch writes;   // state thread only: changes taken from the controller early
  MonoTime next_audit_prune{};  // state thread only

  api::ScrapeToken scrape_token;            // reads /metrics (`[metrics] token_file`); set by Start
  metrics::ServiceMetrics service_metrics;  // requests by route, store commits (/metrics)

  // High availability (issue 11; docs/operations.md): the leader lease.
  std::string instance;                 // this process's holder id (random)
  std::atomic<bool> leading{false};     // holds the lease and has loaded the state
  std::atomic<bool> deposed{false};     // stopped leading: never leads again (main re-execs)
  mutable std::mutex leader_mu;
  std::string leader_url;               // guarded by leader_mu
  std::function<void()> on_step_down;   // set before Start
  std::thread lease_thread;
  bool commit_ok = true;                // state thread only: the last batch was written

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
    store::WriteBatch batch = std::move(writes);
    writes.Clear();
    batch.Append(controller->TakeWrites());
    commit_ok = true;
    if (batch.empty()) return;
    for (int attempt = 1;; ++attempt) {
      MonoTime start = clock.MonotonicNow();
      Status s = store->Write(batch);
      if (s) {
        service_metrics.RecordCommit(batch.size(), clock.MonotonicNow() - start);
        return;
      }
      if (s.error().code == ErrorCode::kAborted) {
        // Fenced: another controller holds the lease. Nothing of the batch is stored; its
        // callers are told so (503), and this controller steps down.
        commit_ok = false;
        StepDown("a write was fenced (" + s.error().message + ")");
        return;
      }
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
      if (deposed) {
        // Stepped down: nothing runs on the stale state; every caller gets a 503.
        commit_ok = false;
        for (auto& p : work) {
          if (p.done) p.done();
        }
        work.clear();
        continue;
      }
      for (auto& p : work) p.run(*controller);
      controller->Tick();
      // Budget warnings (docs/governance.md, "Budgets"): audit events, in the batch that
      // holds their markers.
      for (AuditRecord& event : controller->TakeBudgetEvents()) {
        audit.Append(std::move(event), clock.Now(), writes);
      }
      PruneAudit();
      Commit();
      if (!commit_ok) {  // fenced: no answer says done, no command leaves
        for (auto& p : work) {
          if (p.done) p.done();
        }
        work.clear();
        continue;
      }
      controller->OnCommitted();
      // Before the answers: a requeue's caller finds the old run's credential refused. Only
      // that run's: a relaunch's (minted in `Release`) is of a newer generation.
      for (const auto& [id, generation] : controller->TakeStoppedRuns()) {
        jobs->Stopped(id, generation);
      }
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

  // --- Leadership (issue 11) ---

  // The URL this controller serves clients at, as standbys name it.
  std::string OwnUrl() const {
    if (!config.ha_url.empty()) return config.ha_url;
    return (config.tls_certificate.empty() ? "http://" : "https://") + config.listen_host + ":" +
           std::to_string(config.listen_port);
  }

  void SetLeaderUrl(const std::string& url) {
    std::lock_guard<std::mutex> lock(leader_mu);
    leader_url = url;
  }

  // Loads the state from the store and starts the state thread, every write fenced by
  // `epoch`. Returns the store's or the recovery's error.
  Status Promote(uint64_t epoch) {
    store->SetFence(epoch);
    CORRAL_ASSIGN_OR_RETURN(store::StoredState state, store->Load());
    CORRAL_RETURN_IF_ERROR(audit.Restore(state.meta));
    CORRAL_RETURN_IF_ERROR(controller->Recover(std::move(state)));
    ResyncLiveRuns();  // recovered running jobs keep their credentials
    SetLeaderUrl(OwnUrl());
    state_thread = std::thread([this] { Loop(); });
    leading = true;
    CORRAL_LOG(Info) << "leading at lease epoch " << epoch << " (" << store->kind() << " store)";
    return {};
  }

  // Stops leading for good (`reason`); the first call tells `on_step_down`.
  void StepDown(const std::string& reason) {
    leading = false;
    if (deposed.exchange(true)) return;
    CORRAL_LOG(Warn) << "stepping down: " << reason;
    if (on_step_down) on_step_down();
  }

  // The lease thread of a shared store: a leader renews every third of the lease and steps
  // down when it cannot within one lease (by its own clock, before any standby may take
  // over by the database's) or finds the lease taken; a standby polls every fifth of it and
  // takes over when it is free. A deposed controller never leads again.
  void LeaseLoop(MonoTime renewed) {
    const Duration ttl = config.ha_lease;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait_for(lock, leading ? ttl / 3 : ttl / 5, [&] { return stopping; });
        if (stopping) return;
      }
      if (deposed) return;
      const MonoTime began = clock.MonotonicNow();
      if (leading && began - renewed >= ttl) {
        StepDown("the leader lease was not renewed for " +
                 std::to_string(ToSecondsF(began - renewed)) + " s");
        return;
      }
      Result<store::Lease> lease = store->TryAcquireLease(instance, OwnUrl(), ttl);
      if (!lease) {
        CORRAL_LOG(Warn) << "leader lease: " << lease.error().message;
        continue;
      }
      if (!lease->held) {
        SetLeaderUrl(lease->url);
        if (leading) {
          StepDown("the leader lease is held by " + lease->url + " at epoch " +
                   std::to_string(lease->epoch));
          return;
        }
        continue;
      }
      renewed = began;
      if (!leading) {
        CORRAL_LOG(Info) << "taking over from " << leader_url_copy() << " at lease epoch "
                         << lease->epoch;
        Status s = Promote(lease->epoch);
        CORRAL_CHECK(s) << "cannot take over: " << s.error().message;
      }
    }
  }

  std::string leader_url_copy() const {
    std::lock_guard<std::mutex> lock(leader_mu);
    return leader_url;
  }

  // Retention (`[audit] retention_days`): at most once an hour, in the loop's batch.
  void PruneAudit() {
    if (config.audit_retention_days == 0 || clock.MonotonicNow() < next_audit_prune) return;
    next_audit_prune = clock.MonotonicNow() + Seconds(3600);
    Timestamp cutoff = clock.Now() - Seconds(int64_t{86400} * config.audit_retention_days);
    writes.Append(controller->TakeWrites());
    Status s = audit.Prune(*store, cutoff, writes);
    if (!s) CORRAL_LOG(Warn) << "audit retention: " << s.error().message;
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

void ControllerService::PostAudited(std::function<AuditOutcome(Controller&)> run,
                                    PendingAudit* audit, std::function<void()> done) {
  if (audit == nullptr || audit->written) {
    impl_->Post([run = std::move(run)](Controller& c) { run(c); }, std::move(done));
    return;
  }
  Impl* impl = impl_.get();
  impl_->Post(
      [impl, audit, run = std::move(run)](Controller& c) {
        // The call's own changes are told apart from those of the closures before it.
        impl->writes.Append(c.TakeWrites());
        AuditOutcome outcome = run(c);
        store::WriteBatch changes = c.TakeWrites();
        bool changed = !changes.empty();
        impl->writes.Append(std::move(changes));
        if (!changed && outcome.ok) return;  // the route writes the record once it answers
        AuditRecord record = audit->entry;
        record.status =
            outcome.ok ? AuditSuccessStatus(record) : api::HttpStatusFor(outcome.code);
        record.error_code = outcome.ok ? "" : std::string(ErrorCodeName(outcome.code));
        if (!outcome.target.empty()) record.target = outcome.target;
        audit->written_status = record.status;
        audit->written = true;
        impl->audit.Append(std::move(record), impl->clock.Now(), impl->writes);
      },
      std::move(done));
}

void ControllerService::WriteAudit(AuditRecord entry) {
  // The request changed nothing (a refusal, or a call with nothing to store, such as most
  // heartbeats): its record joins the next batch, and the answer does not wait for that batch
  // to be durable. Waiting cost every agent call a second trip through the state thread and a
  // commit; what a crash can lose here is the record of a request that changed nothing.
  Impl* impl = impl_.get();
  impl_->Post(
      [impl, entry = std::move(entry)](Controller& c) {
        impl->writes.Append(c.TakeWrites());
        impl->audit.Append(entry, impl->clock.Now(), impl->writes);
      },
      [] {});
}

Result<std::vector<AuditRecord>> ControllerService::QueryAudit(const AuditQuery& query) {
  return impl_->store->QueryAudit(query);
}

Result<AuditVerdict> ControllerService::VerifyAudit() {
  Impl* impl = impl_.get();
  AuditScope none(nullptr);
  // The head first: records written after it are not checked, none before it may be missing.
  CORRAL_ASSIGN_OR_RETURN(
      store::AuditHead head,
      Call<store::AuditHead>([impl](Controller&) -> Result<store::AuditHead> {
        return impl->audit.head();
      }));
  return store::VerifyStoredAuditChain(*impl->store, head);
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

bool ControllerService::leading() const { return impl_->leading; }

std::string ControllerService::leader_url() const { return impl_->leader_url_copy(); }

void ControllerService::OnStepDown(std::function<void()> fn) { impl_->on_step_down = std::move(fn); }

bool ControllerService::LastCommitOk() const { return impl_->commit_ok; }

std::string ControllerService::url() const {
  return (impl_->config.tls_certificate.empty() ? "http://" : "https://") +
         impl_->config.listen_host + ":" + std::to_string(port());
}

Status ControllerService::Start() {
  Impl& im = *impl_;
  if (!im.config.metrics_token_file.empty()) {
    CORRAL_ASSIGN_OR_RETURN(im.scrape_token,
                            api::ScrapeToken::FromFile(im.config.metrics_token_file));
  }
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

  metrics::RecordRequestsByRoute(im.server, im.service_metrics, im.clock);
  RegisterRoutes(im.server,
                 {.service = this,
                  .authenticator = im.authenticator.get(),
                  .clock = &im.clock,
                  .privacy = im.config.privacy,
                  .agent_authorization =
                      [impl](const std::string& node) { return impl->AgentAuthorization(node); },
                  .agent_client = im.agent_client,
                  .store = im.store.get(),
                  .waste_threshold = im.config.gpu_waste.defaults.threshold,
                  .scrape_token = &im.scrape_token,
                  .service_metrics = &im.service_metrics});

  // The leader lease (issue 11): taken at once when free (always, on a store that is not
  // shared); else this controller stands by, answering 503 naming the leader.
  CORRAL_ASSIGN_OR_RETURN(im.instance, api::Keyring::GenerateSecret());
  im.instance = im.instance.substr(0, 16);
  CORRAL_ASSIGN_OR_RETURN(store::Lease lease,
                          im.store->TryAcquireLease(im.instance, im.OwnUrl(), im.config.ha_lease));
  const MonoTime renewed = im.clock.MonotonicNow();
  if (lease.held) {
    CORRAL_RETURN_IF_ERROR(im.Promote(lease.epoch));
  } else {
    im.SetLeaderUrl(lease.url);
    CORRAL_LOG(Info) << "standing by: the leader is " << lease.url << " (lease epoch "
                     << lease.epoch << ")";
  }

  if (im.store->shared()) {
    im.lease_thread = std::thread([impl, renewed] { impl->LeaseLoop(renewed); });
  }
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
  if (im.lease_thread.joinable()) im.lease_thread.join();
  if (im.state_thread.joinable()) im.state_thread.join();
  // A leader stopping cleanly hands the lease on at once (nothing writes any more).
  if (im.leading.exchange(false) && !im.deposed) {
    if (Status s = im.store->ReleaseLease(im.instance); !s) {
      CORRAL_LOG(Warn) << "cannot release the leader lease: " << s.error().message;
    }
  }
  im.transport.reset();
}

}  // namespace corral::controller
