// Agent: the service around `AgentCore` — the threads, the HTTP server and client, the process
// supervisor and the node monitor. It feeds the core every input (HTTP requests, process
// exits, the controller's replies, the heartbeat loop's turns) under one mutex, then carries
// out what the core returns outside it: the commands through the supervisor, the node monitor
// and the `Launcher`, then the events into the core's queue. Nothing here decides; every rule
// is the core's (agent_core.h).
//
// Threads: the HTTP server's, the supervisor's (exits), the node monitor's (health changes),
// one for registration and heartbeats and one for the job events.
#include "agent/agent.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include "agent/agent_core.h"
#include "agent/exec/bcast.h"
#include "agent/exec/proc_usage.h"
#include "agent/exec/process_supervisor.h"
#include "agent/exec/step_output.h"
#include "agent/gpu_jobs.h"
#include "agent/gpu_metrics.h"
#include "agent/launcher.h"
#include "agent/node_monitor.h"
#include "agent/routes.h"
#include "agent/run_journal.h"
#include "api/access.h"
#include "api/http.h"
#include "api/leader_client.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "api/metrics_text.h"
#include "api/scrape_token.h"
#include "api/transport_policy.h"
#include "core/check.h"
#include "core/log.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

uint64_t MachineMemoryMb() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  while (in >> key >> kb) {
    if (key == "MemTotal:") return kb / 1024;
    in.ignore(256, '\n');
  }
  return 0;
}

api::HttpResponse Ok() {
  api::HttpResponse r;
  r.status = 200;
  r.body = api::EncodeStringMap({{"status", "ok"}});
  return r;
}

api::HttpResponse Answer(const Status& s) { return s ? Ok() : api::ErrorResponse(s.error()); }

// The agent API's server options: TLS with the node's certificate when it has one.
api::HttpServerOptions ServerOptions(const AgentConfig& c) {
  api::HttpServerOptions o;
  o.tls = api::ServerTls(c.tls_certificate, c.tls_key, c.tls_ca, c.tls_client_certificate);
  return o;
}

}  // namespace

struct Agent::Impl {
  AgentConfig config;
  std::unique_ptr<GpuBackend> gpus;
  api::Credentials credentials;
  std::unique_ptr<api::Authenticator> authenticator;  // the controller's calls for this node
  api::ScrapeToken scrape_token;  // reads /metrics (set before the server starts)
  const Clock& clock;
  FileRunJournal journal;
  api::HttpServer server;
  std::unique_ptr<api::LeaderClient> controller;  // follows the leader (issue 11)
  std::unique_ptr<ProcessSupervisor> supervisor;
  // GPU sampling, health, isolation, containers (node_monitor.h); set before the server starts.
  std::unique_ptr<NodeMonitor> node;
  std::unique_ptr<Launcher> launcher;
  // /metrics: which job holds which GPU (and the job-mapping directory); the GPUs as
  // discovered. Set before the server starts.
  std::unique_ptr<GpuJobs> gpu_jobs;
  std::vector<GpuInfo> metrics_gpus;

  std::mutex mu;
  AgentCore core;                                                // guarded by mu
  bool stopping = false;                                         // guarded by mu
  std::condition_variable heartbeat_cv;                          // the health changed, or stopping
  std::condition_variable events_cv;                             // events queued, or stopping
  std::vector<std::unique_ptr<StepOutputForwarder>> forwarders;  // guarded by mu
  std::thread heartbeat_thread;
  std::thread events_thread;

  Impl(AgentConfig c, std::unique_ptr<GpuBackend> g, api::Credentials k, const Clock& cl)
      : config(std::move(c)),
        gpus(std::move(g)),
        credentials(std::move(k)),
        authenticator(api::MakeAgentAuthenticator(credentials, config.name)),
        clock(cl),
        journal(config.state_dir + "/running"),
        server(ServerOptions(config)),
        core({.node_name = config.name,
              .controller_url = config.controller_url,
              .allow_root_jobs = config.allow_root_jobs},
             journal, clock, [this](Timestamp now, Duration lifetime) -> std::string {
               auto token = credentials.MintNodeToken(config.name, now, lifetime);
               if (!token) {
                 CORRAL_LOG(Error) << "cannot mint the agent's token: " << token.error().message;
                 return "";
               }
               return "Bearer " + *token;
             }) {}

  // --- Carrying out the core's effects (without the lock) ---

  // Runs `fx`'s commands in order, then queues its events.
  void Apply(Effects fx) {
    for (const Command& c : fx.commands) {
      std::visit([&](const auto& cmd) { Execute(cmd, &fx.events); }, c);
    }
    if (fx.events.empty()) return;
    std::lock_guard<std::mutex> lock(mu);
    core.QueueEvents(std::move(fx.events));
    events_cv.notify_all();
  }

  void Execute(const command::CancelRun& c, std::vector<api::JobEvent>*) {
    Status s = supervisor->Cancel(c.run.job, c.run.generation);
    if (!c.reconcile) return;
    if (s) {
      CORRAL_LOG(Warn) << "controller does not know job " << c.run.job.ToString() << " generation "
                       << c.run.generation.ToString() << ": killing it";
    } else {
      CORRAL_LOG(Debug) << "job " << c.run.job.ToString() << " generation "
                        << c.run.generation.ToString() << " has ended";
    }
  }
  void Execute(const command::KillRun& c, std::vector<api::JobEvent>*) {
    (void)supervisor->Signal(c.run.job, c.run.generation, SIGKILL);
  }
  void Execute(const command::FinishRun& c, std::vector<api::JobEvent>* events) {
    if (node) node->FinishJob(c.run, &events->at(c.event));
    if (gpu_jobs) gpu_jobs->Release(c.run);
  }
  void Execute(const command::FinishTask& c, std::vector<api::JobEvent>*) {
    if (node) node->FinishTask(c.run, c.step, c.task, c.killed);
  }
  void Execute(const command::ReleaseRun& c, std::vector<api::JobEvent>*) {
    if (node) node->ReleaseRun(c.run);
    if (gpu_jobs) gpu_jobs->Release(c.run);
  }
  void Execute(const command::RemoveRunDir& c, std::vector<api::JobEvent>*) {
    std::error_code ec;
    fs::remove_all(RunDirectory(config.state_dir, c.run), ec);
  }
  void Execute(const command::KillOrphan& c, std::vector<api::JobEvent>*) {
    if (ProcessStartTime(c.entry.pid) != c.entry.start_time) return;  // gone, or a new process
    CORRAL_LOG(Warn) << "killing process group " << c.entry.pid << " of job " << c.entry.name
                     << " left by a previous agent run";
    kill(-c.entry.pid, SIGKILL);
    kill(c.entry.pid, SIGKILL);
  }
  void Execute(const command::ClearGpus& c, std::vector<api::JobEvent>*) {
    if (node) node->ClearGpus(c.gpus);
  }

  // --- Calls to the controller ---

  std::map<std::string, std::string> AuthHeaders() {
    std::lock_guard<std::mutex> lock(mu);
    return {{"authorization", core.Authorization()}};
  }

  // Waits on `cv` until `deadline` (MonoTime::max(): until notified). Requires `lock`.
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 MonoTime deadline) {
    if (deadline == MonoTime::max()) {
      cv.wait(lock);
      return;
    }
    Duration wait = deadline - clock.MonotonicNow();
    if (wait > Duration(0)) cv.wait_for(lock, wait);
  }

  Effects Register(const api::RegisterRequest& req) {
    auto resp = api::CheckResponse(controller->Send(
        "POST", "/api/v1/agents/register", api::EncodeRegisterRequest(req), AuthHeaders(), true));
    Result<api::RegisterResponse> reply = tl::unexpected<Error>(Error{});
    if (!resp) {
      CORRAL_LOG(Debug) << "registration failed: " << resp.error().message;
      reply = tl::unexpected<Error>(resp.error());
    } else {
      reply = api::DecodeRegisterResponse(resp->body);
      if (!reply) CORRAL_LOG(Error) << "bad registration answer: " << reply.error().message;
    }
    std::lock_guard<std::mutex> lock(mu);
    return core.OnRegisterReply(reply);
  }

  Effects Heartbeat(api::HeartbeatRequest req) {
    uint64_t samples = 0;
    if (node) {
      node->FillHeartbeat(&req);
      samples = node->TakeGpuSamples(&req);
    }
    auto resp = api::CheckResponse(controller->Send(
        "POST", "/api/v1/agents/heartbeat", api::EncodeHeartbeatRequest(req), AuthHeaders(), true));
    Result<api::HeartbeatResponse> reply =
        resp ? api::DecodeHeartbeatResponse(resp->body) : tl::unexpected<Error>(resp.error());
    if (reply && node) node->GpuSamplesDelivered(samples);
    std::lock_guard<std::mutex> lock(mu);
    return core.OnHeartbeatReply(reply);
  }

  void HeartbeatLoop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      ControllerCall call = core.NextControllerCall(node ? node->Runs() : std::vector<JobRun>{});
      if (call.kind == ControllerCall::Kind::kWait) {
        WaitUntil(heartbeat_cv, lock, call.wait_until);
        continue;
      }
      lock.unlock();
      Apply(call.kind == ControllerCall::Kind::kRegister ? Register(call.register_request)
                                                         : Heartbeat(std::move(call.heartbeat)));
      lock.lock();
    }
  }

  void EventsLoop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      std::optional<api::JobEventsRequest> batch = core.TakeEventBatch();
      if (!batch) {
        WaitUntil(events_cv, lock, core.NextEventBatchTime());
        continue;
      }
      lock.unlock();
      auto resp = controller->Send("POST", "/api/v1/agents/events",
                                   api::EncodeJobEventsRequest(*batch), AuthHeaders(), true);
      std::optional<int> status;
      if (resp) status = resp->status;
      lock.lock();
      if (core.OnEventBatchReply(status) && *status != 200) {
        auto err = api::CheckResponse(std::move(resp));
        CORRAL_LOG(Warn) << "events: " << (err ? "" : err.error().message);
      }
    }
  }

  // --- HTTP handlers ---

  api::HttpResponse HandleLaunch(const api::HttpRequest& req) {
    const Timestamp received = clock.Now();  // the trace's `launch_received`
    auto launch = api::DecodeLaunchRequest(req.body);
    if (!launch) return api::ErrorResponse(launch.error());
    const Job& job = launch->job;
    LaunchDecision d;
    std::string cluster;
    {
      std::lock_guard<std::mutex> lock(mu);
      d = core.OnLaunch(job);
      cluster = core.cluster_name();
    }
    Apply(std::move(d.effects));
    if (!d.start) return Answer(d.answer);
    auto started = launcher->StartBatch(job, cluster, launch->job_credential);
    if (started) HoldGpus(job);
    Effects fx;
    {
      std::lock_guard<std::mutex> lock(mu);
      fx = core.OnBatchStarted({job.id, job.allocation.generation}, started, received);
    }
    Apply(std::move(fx));
    return Ok();
  }

  // The GPUs `job`'s run holds here, for /metrics and the job-mapping directory.
  void HoldGpus(const Job& job) {
    for (const NodeAllocation& a : job.allocation.nodes) {
      if (a.node_name != config.name || a.gpus.empty()) continue;
      gpu_jobs->Hold({job.id, job.allocation.generation},
                     {.job = job.id.ToString(), .user = job.spec.user, .account = job.spec.account},
                     a.gpus);
    }
  }

  // GET /metrics (docs/metrics.md): the GPUs' dcgm-exporter series, read now.
  api::HttpResponse HandleMetrics() {
    GpuMetricsInput in{.hostname = config.name,
                       .gpus = metrics_gpus,
                       .gpu_backend = std::string(gpus->name()),
                       .driver_version = gpus->driver_version(),
                       .cuda_version = gpus->cuda_version()};
    if (auto readings = gpus->Read()) {
      in.readings = std::move(*readings);
    } else {
      in.readings_error = readings.error().message;
    }
    gpu_jobs->Retain(node->Runs());
    in.holders = gpu_jobs->Holders();
    api::HttpResponse r;
    r.content_type = std::string(api::kMetricsContentType);
    r.body = RenderGpuMetrics(in);
    return r;
  }

  // Steps (`corral run`): docs/agent.md, "Multi-node steps".
  api::HttpResponse HandleStepLaunch(const api::HttpRequest& req) {
    auto launch = api::DecodeStepLaunchRequest(req.body);
    if (!launch) return api::ErrorResponse(launch.error());
    const JobRun run{launch->job.id, launch->job.allocation.generation};
    LaunchDecision d;
    std::string cluster;
    {
      std::lock_guard<std::mutex> lock(mu);
      d = core.OnStepLaunch(*launch);
      cluster = core.cluster_name();
      if (d.start) std::erase_if(forwarders, [](const auto& f) { return f->done(); });
    }
    Apply(std::move(d.effects));
    if (!d.start) return Answer(d.answer);
    JobEnvContext ctx = launcher->StepContext(*launch, cluster);
    HoldGpus(launch->job);
    std::unique_ptr<StepOutputForwarder> forwarder;
    if (!launch->io_url.empty()) {
      forwarder = std::make_unique<StepOutputForwarder>(
          launch->io_url, launch->spec.io_token,
          "job " + run.job.ToString() + " step " + std::to_string(launch->step));
    }
    Effects fx;
    for (const StepTask& t : d.tasks) {
      auto started = launcher->StartTask(*launch, t, ctx, forwarder.get());
      std::lock_guard<std::mutex> lock(mu);
      fx.Append(core.OnTaskStarted(run, launch->step, t.rank, started));
    }
    if (forwarder != nullptr) {
      forwarder->Start();
      std::lock_guard<std::mutex> lock(mu);
      forwarders.push_back(std::move(forwarder));
    }
    Apply(std::move(fx));
    return Ok();
  }

  // A new time limit for a run of a job: its batch script and step tasks on this node.
  // Nothing of the run running here is no error (a node that runs none of its steps now).
  api::HttpResponse HandleTimeLimit(const api::HttpRequest& req) {
    auto r = api::DecodeTimeLimitRequest(req.body);
    if (!r) return api::ErrorResponse(r.error());
    {
      std::lock_guard<std::mutex> lock(mu);
      if (Status ok = core.OnTimeLimit(*r); !ok) return api::ErrorResponse(ok.error());
    }
    Status s = supervisor->SetTimeLimit(r->job, r->generation, r->time_limit);
    if (!s && s.error().code != ErrorCode::kNotFound) return api::ErrorResponse(s.error());
    return Ok();
  }

  // --- `sstat` and `sbcast` (docs/slurm.md) ---

  // The run named by the query's `job` and `generation`.
  static Result<JobRun> RunOf(const api::HttpRequest& req) {
    JobRun run;
    for (const char* key : {"job", "generation"}) {
      auto it = req.query.find(key);
      std::optional<uint64_t> v;
      if (it != req.query.end()) v = ParseUint(it->second);
      if (!v || *v == 0) return InvalidArgument(std::string(key) + ": missing or not a number");
      if (key == std::string_view("job")) {
        run.job = JobId(*v);
      } else {
        run.generation = Generation(*v);
      }
    }
    return run;
  }

  // GET /api/v1/stats?job=J&generation=G: each process the agent started for the run (summed
  // over its process group, from /proc), the run's cgroup and its GPUs, read now.
  api::HttpResponse HandleStats(const api::HttpRequest& req) {
    auto run = RunOf(req);
    if (!run) return api::ErrorResponse(run.error());
    api::NodeRunStats stats{.node = config.name, .job = run->job, .generation = run->generation};
    std::vector<RunningProcess> mine;
    for (const RunningProcess& p : supervisor->Running()) {
      if (p.job == run->job && p.generation == run->generation) mine.push_back(p);
    }
    if (!mine.empty()) {
      const std::vector<ProcReading> procs = ReadProcesses();
      const std::vector<uint64_t> khz = ReadCpuFrequencies();
      for (const RunningProcess& p : mine) {
        stats.tasks.push_back(GroupUsage(procs, p.pid, p.step, p.task, khz));
      }
    }
    if (node) node->FillRunStats(*run, &stats);
    api::HttpResponse r;
    r.body = api::EncodeNodeRunStats(stats);
    return r;
  }

  // POST /api/v1/bcast?job=J&generation=G&uid=U&gid=G&path=...: the body written as the user.
  api::HttpResponse HandleBcast(const api::HttpRequest& req) {
    auto run = RunOf(req);
    if (!run) return api::ErrorResponse(run.error());
    auto options = api::DecodeBcastQuery(req.query, {"job", "generation", "uid", "gid"});
    if (!options) return api::ErrorResponse(options.error());
    uint32_t ids[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      const char* key = i == 0 ? "uid" : "gid";
      auto it = req.query.find(key);
      std::optional<uint64_t> v;
      if (it != req.query.end()) v = ParseUint(it->second);
      if (!v || *v >= api::kNoUnixId) {
        return api::ErrorResponse(
            {ErrorCode::kInvalidArgument, std::string(key) + ": missing or not an id"});
      }
      ids[i] = static_cast<uint32_t>(*v);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (Status ok = core.OnBcast(*run, ids[0], ids[1]); !ok) return api::ErrorResponse(ok.error());
    }
    return Answer(WriteFileAsUser(run->job, ids[0], ids[1], *options, req.body));
  }

  // Cancels and signals: the core checks them, the launcher carries them out.
  template <typename Request>
  api::HttpResponse HandleSignal(const api::HttpRequest& req,
                                 Result<Request> (*decode)(std::string_view),
                                 Result<SignalOrder> (AgentCore::*check)(const Request&) const) {
    auto r = decode(req.body);
    if (!r) return api::ErrorResponse(r.error());
    Result<SignalOrder> order = MakeError(ErrorCode::kInternal, "");
    {
      std::lock_guard<std::mutex> lock(mu);
      order = (core.*check)(*r);
    }
    if (!order) return api::ErrorResponse(order.error());
    return Answer(launcher->Signal(*order));
  }
};

Agent::Agent(AgentConfig config, std::unique_ptr<GpuBackend> gpus, api::Credentials credentials,
             const Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(gpus), std::move(credentials),
                                   clock)) {}

Agent::~Agent() { Stop(); }

std::string Agent::url() const {
  return (impl_->config.tls_certificate.empty() ? "http://" : "https://") +
         impl_->config.advertise_host + ":" + std::to_string(impl_->server.port());
}

Status Agent::Start() {
  Impl& im = *impl_;
  if (!im.config.metrics_token_file.empty()) {
    CORRAL_ASSIGN_OR_RETURN(im.scrape_token, api::ScrapeToken::FromFile(im.config.metrics_token_file));
  }
  std::error_code ec;
  fs::create_directories(im.config.state_dir + "/running", ec);
  if (ec) return Internal("state_dir \"" + im.config.state_dir + "\": " + ec.message());
  fs::create_directories(im.config.state_dir + "/jobs", ec);
  // Kills what a previous run of the agent left running: those jobs were lost with it.
  Effects orphans;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    orphans = im.core.Recover();
  }
  im.Apply(std::move(orphans));

  auto discovered = im.gpus->Discover();
  if (!discovered) return tl::unexpected<Error>(discovered.error());
  NodeInventory inv;
  inv.name = im.config.name;
  inv.cpus =
      im.config.cpus != 0 ? im.config.cpus : static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  inv.memory_mb = im.config.memory_mb != 0 ? im.config.memory_mb : MachineMemoryMb();
  inv.gpus = std::move(*discovered);
  inv.features = im.config.features;
  inv.gpu_backend = std::string(im.gpus->name());
  inv.driver_version = im.gpus->driver_version();
  inv.cuda_version = im.gpus->cuda_version();
  inv.agent_version = "0.1.0";
  uint32_t numa = 1;
  for (const auto& g : inv.gpus) {
    numa = std::max<uint32_t>(numa, static_cast<uint32_t>(g.numa_node + 1));
  }
  inv.numa_nodes = numa;

  // With several controllers (issue 11) a call gives up sooner: a frozen leader accepts
  // connections and never answers, and the agent must reach the new one within a lease.
  const std::vector<std::string> controllers = SplitNonEmpty(im.config.controller_url);
  auto client = api::LeaderClient::Create(controllers,
                                        {.connect_timeout = std::chrono::milliseconds(2000),
                                         .request_timeout = std::chrono::milliseconds(
                                             controllers.size() > 1 ? 5000 : 15000),
                                         .ca_file = im.config.tls_ca,
                                         .certificate_file = im.config.tls_certificate,
                                         .key_file = im.config.tls_key});
  if (!client) return tl::unexpected<Error>(client.error());
  im.controller = std::move(*client);

  Impl* impl = impl_.get();
  im.supervisor = std::make_unique<ProcessSupervisor>(im.clock, [impl](const ProcessExit& e) {
    Effects fx;
    {
      std::lock_guard<std::mutex> lock(impl->mu);
      fx = impl->core.OnProcessExit(e);
    }
    impl->Apply(std::move(fx));
  });

  auto guarded = [impl](auto handler) {
    return [impl, handler](const api::HttpRequest& req) -> api::HttpResponse {
      // Only the controller's calls for this node (MakeAgentAuthenticator).
      auto who = impl->authenticator->Authenticate(req, impl->clock.Now());
      if (!who) return api::ErrorResponse(who.error());
      return handler(req);
    };
  };
  using Req = const api::HttpRequest&;
  // Every route through the table of agent/routes.h (tests/security walks it).
  size_t routed = 0;
  auto route = [&](std::string_view method, std::string_view pattern, api::HttpHandler handler) {
    CORRAL_CHECK(FindAgentRoute(method, pattern) != nullptr)
        << method << " " << pattern << ": no row in agent/routes.cc";
    ++routed;
    im.server.Route(std::string(method), std::string(pattern), std::move(handler));
  };
  route("GET", "/api/v1/health", [](Req) { return Ok(); });
  route("POST", "/api/v1/launch", guarded([impl](Req req) { return impl->HandleLaunch(req); }));
  route("POST", "/api/v1/cancel", guarded([impl](Req req) {
          return impl->HandleSignal(req, &api::DecodeCancelRequest, &AgentCore::OnCancel);
        }));
  route("POST", "/api/v1/signal", guarded([impl](Req req) {
          return impl->HandleSignal(req, &api::DecodeSignalRequest, &AgentCore::OnSignal);
        }));
  route("POST", "/api/v1/jobs/limit",
        guarded([impl](Req req) { return impl->HandleTimeLimit(req); }));
  route("POST", "/api/v1/steps/launch",
        guarded([impl](Req req) { return impl->HandleStepLaunch(req); }));
  route("POST", "/api/v1/steps/signal", guarded([impl](Req req) {
          return impl->HandleSignal(req, &api::DecodeStepSignalRequest, &AgentCore::OnStepSignal);
        }));
  route("GET", "/api/v1/stats", guarded([impl](Req req) { return impl->HandleStats(req); }));
  route("POST", "/api/v1/bcast", guarded([impl](Req req) { return impl->HandleBcast(req); }));
  route("POST", "/api/v1/inject", guarded([impl](Req req) {
          auto r = api::DecodeInjectRequest(req.body);
          if (!r) return api::ErrorResponse(r.error());
          return Answer(impl->node->Inject(*r));
        }));
  // GET /metrics (docs/metrics.md): the scrape token (`[metrics] token_file`, the metrics
  // principal) or the controller's call for this node.
  route("GET", "/metrics", [impl](Req req) -> api::HttpResponse {
    Result<api::Identity> who = api::Identity{.user = "metrics",
                                              .uid = api::kNoUnixId,
                                              .gid = api::kNoUnixId,
                                              .role = api::Role::kMetrics};
    if (!impl->scrape_token.Matches(req.header("authorization"))) {
      who = impl->authenticator->Authenticate(req, impl->clock.Now());
      if (!who) return api::ErrorResponse(who.error());
    }
    Status may = api::Authorize(*who, api::Action::kReadMetrics, {.node = impl->config.name});
    if (!may) return api::ErrorResponse(may.error());
    return impl->HandleMetrics();
  });
  CORRAL_CHECK(routed == AgentRoutes().size()) << "a row of agent/routes.cc without a handler";
  // The node's size as it registers (the default memory of a job is its share of it).
  im.config.cpus = inv.cpus;
  im.config.memory_mb = inv.memory_mb;
  im.node = std::make_unique<NodeMonitor>(im.config, *im.gpus, inv.gpus, im.clock, [impl] {
    std::lock_guard<std::mutex> lock(impl->mu);
    impl->core.HealthChanged();
    impl->heartbeat_cv.notify_all();
  });
  im.node->Start();
  im.launcher =
      std::make_unique<Launcher>(im.config, *im.supervisor, im.node.get(), inv.gpus, im.clock);
  im.metrics_gpus = inv.gpus;
  im.gpu_jobs = std::make_unique<GpuJobs>(im.config.job_mapping_dir, JobMappingFileNames(*im.gpus));
  if (Status s = im.gpu_jobs->WriteMappingDir(); !s) {
    CORRAL_LOG(Warn) << "job-mapping directory: " << s.error().message;
  }
  CORRAL_RETURN_IF_ERROR(im.server.Start(im.config.listen_host, im.config.listen_port));
  inv.address = url();
  CORRAL_LOG(Info) << "agent " << inv.name << " listening on " << inv.address << " with "
                   << inv.gpus.size() << " " << inv.gpu_backend << " GPUs";
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.core.SetInventory(std::move(inv));
  }
  im.heartbeat_thread = std::thread([impl] { impl->HeartbeatLoop(); });
  im.events_thread = std::thread([impl] { impl->EventsLoop(); });
  return {};
}

void Agent::Stop() {
  Impl& im = *impl_;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (im.stopping) return;
    im.stopping = true;
  }
  im.heartbeat_cv.notify_all();
  im.events_cv.notify_all();
  im.server.Stop();
  if (im.heartbeat_thread.joinable()) im.heartbeat_thread.join();
  if (im.events_thread.joinable()) im.events_thread.join();
  im.launcher.reset();
  im.supervisor.reset();  // kills what still runs
  if (im.node) im.node->Stop();
  im.forwarders.clear();
}

}  // namespace corral::agent
