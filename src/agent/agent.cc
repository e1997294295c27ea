#include "agent/agent.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <sys/stat.h>

#include "agent/exec/job_env.h"
#include "agent/exec/process_supervisor.h"
#include "agent/exec/step_output.h"
#include "agent/exec/step_support.h"
#include "agent/exec/task_env.h"
#include "agent/node_monitor.h"
#include "api/http.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "core/log.h"
#include "core/output_pattern.h"
#include "core/step.h"

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

// Field 22 of /proc/PID/stat: the process start time, to tell a process from a reused pid.
std::string ProcessStartTime(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return "";
  size_t close = line.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

api::HttpResponse Json(int status, std::string body) {
  api::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

api::HttpResponse Ok() { return Json(200, api::EncodeStringMap({{"status", "ok"}})); }

}  // namespace

struct Agent::Impl {
  AgentConfig config;
  std::unique_ptr<GpuBackend> gpus;
  api::JwtKey key;
  const Clock& clock;
  api::HttpServer server;
  std::unique_ptr<ProcessSupervisor> supervisor;
  std::unique_ptr<api::HttpClient> controller;

  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool registered = false;
  NodeInventory inventory;
  Duration heartbeat_interval = Seconds(2);
  std::string cluster_name;  // from the registration (SLURM_CLUSTER_NAME)
  std::deque<api::JobEvent> events;
  std::map<JobId, Generation> known;  // running, or exit not yet acknowledged
  std::map<JobId, Generation> seen;   // highest generation launched per job
  // Steps (`corral run`): the highest generation a step was launched under, per job; the
  // recent step launches (a repeated one is a no-op); the output forwarders.
  std::map<JobId, Generation> step_generation;
  std::set<std::tuple<JobId, Generation, uint32_t>> launched_steps;
  std::deque<std::tuple<JobId, Generation, uint32_t>> launched_order;
  std::vector<std::unique_ptr<StepOutputForwarder>> forwarders;
  // Runs the controller no longer knows whose cgroup on this node goes once their last task
  // here has exited (ReleaseEndedRun).
  std::set<JobRun> ending_runs;
  std::thread heartbeat_thread;
  std::thread events_thread;

  std::mutex token_mu;
  std::string token;
  Timestamp token_time{};

  // GPU sampling, health, isolation, containers (node_monitor.h); set before the server starts.
  std::unique_ptr<NodeMonitor> node;
  bool heartbeat_now = false;  // guarded by mu: the health report changed

  Impl(AgentConfig c, std::unique_ptr<GpuBackend> g, api::JwtKey k, const Clock& cl)
      : config(std::move(c)), gpus(std::move(g)), key(std::move(k)), clock(cl) {}

  std::string RunDir() const { return config.state_dir + "/running"; }
  // Per run: a requeued job may start again here while its previous run is still being reaped.
  std::string JobDir(JobId id, Generation gen) const {
    return config.state_dir + "/jobs/" + id.ToString() + "." + gen.ToString();
  }
  // The pid files of what runs (KillOrphans reads them after a crash), per run.
  std::string BatchJournal(JobId id, Generation gen) const {
    return RunDir() + "/" + JobRun{id, gen}.ToString();
  }
  std::string TaskJournal(JobId id, Generation gen, uint32_t step, uint32_t task) const {
    return BatchJournal(id, gen) + "." + std::to_string(step) + "." + std::to_string(task);
  }

  std::map<std::string, std::string> AuthHeaders() {
    std::lock_guard<std::mutex> lock(token_mu);
    Timestamp now = clock.Now();
    if (token.empty() || now - token_time > Seconds(60)) {
      api::Identity self{
          .user = "agent:" + config.name, .uid = 0, .gid = 0, .role = api::Role::kAgent};
      token = api::BearerHeader(key, self, now, Seconds(300));
      token_time = now;
    }
    return {{"authorization", token}};
  }

  std::string ClusterName() {
    std::lock_guard<std::mutex> lock(mu);
    return cluster_name;
  }

  std::vector<api::RunningJobRef> KnownRefs() {
    std::vector<api::RunningJobRef> refs;
    for (const auto& [job, gen] : known) refs.push_back({job, gen});
    // Step tasks (on any node of an allocation) are reported under their job too, so that the
    // controller has those of jobs it no longer runs killed.
    // So are the runs holding a cgroup here (a node that runs only a job's step tasks keeps
    // the job's cgroup between its steps), so that the controller names them once the job
    // has ended and the agent removes them.
    std::set<std::pair<JobId, Generation>> listed;
    for (const auto& r : refs) listed.insert({r.job, r.generation});
    if (supervisor != nullptr) {
      for (const auto& p : supervisor->Running()) {
        if (p.step != kBatchStepId && listed.insert({p.job, p.generation}).second) {
          refs.push_back({p.job, p.generation});
        }
      }
    }
    if (node != nullptr) {
      for (const JobRun& r : node->Runs()) {
        if (listed.insert({r.job, r.generation}).second) refs.push_back({r.job, r.generation});
      }
    }
    return refs;
  }

  // Kills what a previous run of the agent left running: those jobs were lost with it.
  void KillOrphans() {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(RunDir(), ec)) {
      std::ifstream in(entry.path());
      int pid = 0;
      std::string start;
      if (in >> pid >> start && pid > 1 && ProcessStartTime(pid) == start) {
        CORRAL_LOG(Warn) << "killing process group " << pid << " of job "
                         << entry.path().filename().string() << " left by a previous agent run";
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
      }
      fs::remove(entry.path(), ec);
    }
  }

  // Applies the controller's kill list.
  void KillUnknown(const std::vector<api::RunningJobRef>& refs) {
    for (const auto& ref : refs) {
      if (supervisor->Cancel(ref.job, ref.generation)) {
        CORRAL_LOG(Warn) << "controller does not know job " << ref.job.ToString() << " generation "
                         << ref.generation.ToString() << ": killing it";
      } else {
        // Nothing of it runs here: a node that ran only its step tasks holds its cgroup until
        // the job has ended, which is how it learns that.
        CORRAL_LOG(Debug) << "job " << ref.job.ToString() << " generation "
                          << ref.generation.ToString() << " has ended";
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        auto it = known.find(ref.job);
        if (it != known.end() && it->second == ref.generation) {
          // Still report its exit (the controller rejects it as stale), but stop listing it
          // now that the controller has said it does not know it.
          known.erase(it);
        }
        ending_runs.insert({ref.job, ref.generation});
      }
      ReleaseEndedRun({ref.job, ref.generation});
    }
  }

  // Removes the cgroup of a run in `ending_runs` once none of its processes runs here (the
  // cancelled tasks have had their SIGTERM and grace period); what is left in it then, such
  // as daemons the tasks started, is killed. The batch step's run is FinishJob's.
  void ReleaseEndedRun(JobRun run) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!ending_runs.contains(run)) return;
    }
    for (const auto& p : supervisor->Running()) {
      if (p.job == run.job && p.generation == run.generation) return;  // its exit calls again
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      ending_runs.erase(run);
    }
    if (node) node->ReleaseRun(run);
  }

  bool Register() {
    api::RegisterRequest req;
    {
      std::lock_guard<std::mutex> lock(mu);
      req.inventory = inventory;
      req.running = KnownRefs();
    }
    auto resp = api::CheckResponse(controller->Send(
        "POST", "/api/v1/agents/register", api::EncodeRegisterRequest(req), AuthHeaders(), true));
    if (!resp) {
      CORRAL_LOG(Debug) << "registration failed: " << resp.error().message;
      return false;
    }
    auto r = api::DecodeRegisterResponse(resp->body);
    if (!r) {
      CORRAL_LOG(Error) << "bad registration answer: " << r.error().message;
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (r->heartbeat_interval > Duration(0)) heartbeat_interval = r->heartbeat_interval;
      cluster_name = r->cluster_name;
    }
    CORRAL_LOG(Info) << "registered as node " << inventory.name << " (id " << r->node_id.ToString()
                     << ") with " << config.controller_url;
    KillUnknown(r->kill);
    return true;
  }

  void HeartbeatLoop() {
    Duration backoff = Millis(100);
    bool warned = false;
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      if (!registered) {
        lock.unlock();
        bool ok = Register();
        lock.lock();
        if (ok) {
          registered = true;
          backoff = Millis(100);
          warned = false;
        } else {
          if (!warned)
            CORRAL_LOG(Warn) << "cannot register with " << config.controller_url << "; retrying";
          warned = true;
          cv.wait_for(lock, backoff, [&] { return stopping; });
          backoff = std::min<Duration>(backoff * 2, Seconds(2));
          continue;
        }
      }
      cv.wait_for(lock, heartbeat_interval, [&] { return stopping || heartbeat_now; });
      if (stopping) break;
      heartbeat_now = false;
      api::HeartbeatRequest req{.node = inventory.name, .running = KnownRefs()};
      if (node) node->FillHeartbeat(&req);
      lock.unlock();
      auto resp = api::CheckResponse(controller->Send("POST", "/api/v1/agents/heartbeat",
                                                      api::EncodeHeartbeatRequest(req),
                                                      AuthHeaders(), true));
      std::optional<api::HeartbeatResponse> hb;
      if (resp) {
        auto decoded = api::DecodeHeartbeatResponse(resp->body);
        if (decoded) hb = std::move(*decoded);
      } else if (!warned) {
        CORRAL_LOG(Warn) << "heartbeat failed: " << resp.error().message;
        warned = true;
      }
      if (hb) {
        warned = false;
        KillUnknown(hb->kill);
        if (node) node->ClearGpus(hb->clear_gpus);
      }
      lock.lock();
      if (hb && hb->reregister) registered = false;
    }
  }

  void EventsLoop() {
    Duration backoff = Millis(50);
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      cv.wait(lock, [&] { return stopping || !events.empty(); });
      if (stopping) break;
      api::JobEventsRequest req;
      req.node = inventory.name;
      size_t n = std::min<size_t>(events.size(), 512);
      req.events.assign(events.begin(), events.begin() + static_cast<long>(n));
      lock.unlock();
      auto resp = controller->Send("POST", "/api/v1/agents/events",
                                   api::EncodeJobEventsRequest(req), AuthHeaders(), true);
      bool consumed = false;
      if (resp && (resp->status / 100 == 2 || resp->status == 409 || resp->status == 400)) {
        consumed = true;
        if (resp->status != 200) {
          auto err = api::CheckResponse(std::move(resp));
          CORRAL_LOG(Warn) << "events: " << (err ? "" : err.error().message);
        }
      }
      lock.lock();
      if (consumed) {
        for (size_t i = 0; i < n && !events.empty(); ++i) {
          const api::JobEvent& ev = events.front();
          if (ev.type == api::JobEventType::kExited ||
              ev.type == api::JobEventType::kLaunchFailed) {
            auto it = known.find(ev.job);
            if (it != known.end() && it->second == ev.generation) known.erase(it);
          }
          events.pop_front();
        }
        backoff = Millis(50);
      } else {
        cv.wait_for(lock, backoff, [&] { return stopping; });
        backoff = std::min<Duration>(backoff * 2, Seconds(2));
      }
    }
  }

  void PushEvent(api::JobEvent ev) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::move(ev));
    cv.notify_all();
  }

  void OnExit(const ProcessExit& exit) {
    if (exit.step != kBatchStepId) {
      OnTaskExit(exit);
      return;
    }
    // The job has ended: so have its steps' tasks on this node.
    (void)supervisor->Cancel(exit.job, exit.generation);
    std::error_code ec;
    fs::remove(BatchJournal(exit.job, exit.generation), ec);
    fs::remove_all(JobDir(exit.job, exit.generation), ec);
    api::JobEvent ev;
    ev.type = api::JobEventType::kExited;
    ev.job = exit.job;
    ev.generation = exit.generation;
    ev.time = exit.end_time;
    ev.exit_code = exit.exit_code;
    ev.signal = exit.signal;
    ev.timed_out = exit.timed_out;
    ev.cancelled = exit.cancelled;
    ev.usage.cpu_seconds = exit.cpu_seconds;
    ev.usage.max_rss_mb = exit.max_rss_mb;
    // GPU usage, OOM, GPU failure; kills the run's cgroup here (its tasks on this node too).
    if (node) node->FinishJob({exit.job, exit.generation}, &ev);
    ReleaseEndedRun({exit.job, exit.generation});  // forgets it once its tasks here are gone
    PushEvent(std::move(ev));
  }

  // Starts the batch step; returns the launch error, if any (reported as an event).
  Status StartJob(const Job& job, uint32_t* master_port) {
    std::error_code ec;
    std::string dir = JobDir(job.id, job.allocation.generation);
    fs::create_directories(dir, ec);
    if (ec) return Internal("cannot create " + dir + ": " + ec.message());
    std::string script = dir + "/script";
    {
      std::ofstream out(script, std::ios::trunc | std::ios::binary);
      out << job.spec.script;
      if (!out) return Internal("cannot write " + script);
    }
    chmod(script.c_str(), 0700);
    ProcessSpec spec;
    spec.job = job.id;
    spec.generation = job.allocation.generation;
    spec.argv = {script};
    spec.argv.insert(spec.argv.end(), job.spec.script_args.begin(), job.spec.script_args.end());
    // Distributed training's rendezvous on this, the first node, and the checkpoint directory.
    uint32_t candidate =
        MasterPortCandidate(job.id, config.master_port_min, config.master_port_max);
    auto port = PickFreePort(candidate, config.master_port_min, config.master_port_max);
    if (!port) CORRAL_LOG(Warn) << "job " << job.id.ToString() << ": " << port.error().message;
    *master_port = port ? *port : candidate;
    std::string checkpoint_dir = CheckpointDirectory(job, config.checkpoint_root);
    spec.env =
        BuildJobEnvironment(job, {.node_name = config.name,
                                  .controller_url = config.controller_url,
                                  .master_addr = RendezvousHost(config.advertise_host, config.name),
                                  .master_port = *master_port,
                                  .checkpoint_dir = checkpoint_dir,
                                  .cluster_name = ClusterName(),
                                  .gpus = inventory.gpus});
    spec.cwd = job.spec.working_dir;
    OutputPatternValues values{.job_id = job.id.value,
                               .array_job_id = job.array_job_id.value,
                               .array_task_id = job.array_task_id,
                               .job_name = job.spec.name,
                               .user = job.spec.user,
                               .node_name = config.name};
    spec.stdout_path = ResolveOutputPath(job.spec.stdout_path, values, job.spec.working_dir);
    if (!job.spec.stderr_path.empty()) {
      spec.stderr_path = ResolveOutputPath(job.spec.stderr_path, values, job.spec.working_dir);
      if (spec.stderr_path == spec.stdout_path) spec.stderr_path.clear();
    }
    // A requeued job appends to its output, as in Slurm.
    spec.append = job.spec.append_output || job.restart_count > 0;
    if (geteuid() == 0 && job.spec.uid != 0) {
      spec.uid = job.spec.uid;
      spec.gid = job.spec.gid;
      if (chown(dir.c_str(), job.spec.uid, job.spec.gid) != 0 ||
          chown(script.c_str(), job.spec.uid, job.spec.gid) != 0) {
        return Internal("cannot give " + script + " to uid " + std::to_string(job.spec.uid));
      }
    }
    spec.time_limit = job.time_limit;
    spec.kill_grace = config.kill_grace;
    spec.warn = job.spec.signal;
    if (Status made = MakeDirectoriesAs(checkpoint_dir, spec.uid, spec.gid); !made) {
      CORRAL_LOG(Warn) << "job " << job.id.ToString()
                       << ": checkpoint directory: " << made.error().message;
    }
    if (node) CORRAL_RETURN_IF_ERROR(node->PrepareJob(job, &spec));
    if (Status launched = supervisor->Launch(spec); !launched) {
      if (node) node->AbandonJob({job.id, job.allocation.generation});
      return launched;
    }
    for (const auto& p : supervisor->Running()) {
      if (p.job == job.id && p.generation == job.allocation.generation && p.step == kBatchStepId) {
        std::ofstream journal(BatchJournal(job.id, p.generation), std::ios::trunc);
        journal << p.pid << " " << ProcessStartTime(p.pid) << "\n";
      }
    }
    return {};
  }

  api::HttpResponse HandleLaunch(const api::HttpRequest& req) {
    auto launch = api::DecodeLaunchRequest(req.body);
    if (!launch) return api::ErrorResponse(launch.error());
    const Job& job = launch->job;
    if (job.allocation.nodes.empty() || job.allocation.nodes.front().node_name != config.name) {
      return api::ErrorResponse(
          {ErrorCode::kInvalidArgument,
           "job " + job.id.ToString() + ": node " + config.name + " is not its batch host"});
    }
    Generation gen = job.allocation.generation;
    // A requeued job may come back to this node while its previous run is still being killed
    // (the controller moved on when it requeued it). That run is stale: kill it now and have
    // the controller retry the launch (503) once it is gone, so the two never overlap.
    for (const auto& p : supervisor->Running()) {
      if (p.job == job.id && p.generation < gen) {
        (void)supervisor->Signal(job.id, p.generation, SIGKILL);
        return api::ErrorResponse(
            {ErrorCode::kUnavailable, "job " + job.id.ToString() + ": generation " +
                                          p.generation.ToString() +
                                          " is still exiting; retry the launch"});
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = seen.find(job.id);
      if (it != seen.end() && gen < it->second) {
        return api::ErrorResponse(
            {ErrorCode::kAborted, "job " + job.id.ToString() + ": stale launch of generation " +
                                      gen.ToString() + " (generation " + it->second.ToString() +
                                      " was launched)"});
      }
      if (it != seen.end() && gen == it->second) return Ok();  // a repeated launch
      seen[job.id] = gen;
      known[job.id] = gen;
    }
    uint32_t master_port = 0;
    Status started = StartJob(job, &master_port);
    api::JobEvent ev;
    ev.job = job.id;
    ev.generation = gen;
    ev.time = clock.Now();
    if (started) {
      ev.type = api::JobEventType::kStarted;
      ev.master_port = master_port;
    } else {
      ev.type = api::JobEventType::kLaunchFailed;
      ev.message = started.error().message;
      CORRAL_LOG(Warn) << "job " << job.id.ToString() << ": launch failed: " << ev.message;
      std::error_code ec;
      fs::remove_all(JobDir(job.id, gen), ec);
    }
    PushEvent(std::move(ev));
    return Ok();
  }

  // --- Steps (`corral run`): docs/agent.md, "Multi-node steps" ---

  void OnTaskExit(const ProcessExit& exit) {
    std::error_code ec;
    fs::remove(TaskJournal(exit.job, exit.generation, exit.step, exit.task), ec);
    if (node) {
      node->FinishTask({exit.job, exit.generation}, exit.step, exit.task,
                       exit.signal != 0 || exit.cancelled || exit.timed_out);
    }
    ReleaseEndedRun({exit.job, exit.generation});
    api::JobEvent ev;
    ev.type = api::JobEventType::kTaskExited;
    ev.job = exit.job;
    ev.generation = exit.generation;
    ev.step = exit.step;
    ev.task = exit.task;
    ev.time = exit.end_time;
    ev.exit_code = exit.exit_code;
    ev.signal = exit.signal;
    ev.timed_out = exit.timed_out;
    ev.cancelled = exit.cancelled;
    ev.usage.cpu_seconds = exit.cpu_seconds;
    ev.usage.max_rss_mb = exit.max_rss_mb;
    PushEvent(std::move(ev));
  }

  // Starts one task; returns why it could not start.
  Status StartTask(const api::StepLaunchRequest& launch, const StepTask& task,
                   const JobEnvContext& ctx, StepOutputForwarder* forwarder) {
    const Job& job = launch.job;
    const StepSpec& step = launch.spec;
    ProcessSpec spec;
    spec.job = job.id;
    spec.generation = job.allocation.generation;
    spec.step = launch.step;
    spec.task = task.rank;
    spec.env = BuildTaskEnvironment(job, launch.step, step, launch.layout, task, ctx);
    spec.cwd = step.working_dir.empty() ? job.spec.working_dir : step.working_dir;
    spec.argv = step.argv;
    // In a container the program is the image's, found in its PATH.
    const bool contained = !step.container.image.empty();
    if (!contained) {
      std::string path_var;
      for (const auto& kv : spec.env) {
        if (kv.rfind("PATH=", 0) == 0) path_var = kv.substr(5);
      }
      CORRAL_ASSIGN_OR_RETURN(spec.argv[0], ResolveProgram(step.argv.at(0), path_var, spec.cwd));
    }
    if (geteuid() == 0 && job.spec.uid != 0) {
      spec.uid = job.spec.uid;
      spec.gid = job.spec.gid;
    }
    // The job's time limit, counted from the job's start (so that a new limit for the job,
    // `SetTimeLimit`, applies to the tasks as it does to the batch script), and its warning
    // signal unless that is for the batch script only. A step started after the job's warning
    // time does not get the warning at once (see `ProcessSpec::warn`).
    spec.time_limit = kUnlimited;
    spec.limit_start = job.start_time;  // also for a limit set later on an unlimited job
    if (job.time_limit != kUnlimited && job.time_limit > Duration(0))
      spec.time_limit = job.time_limit;
    spec.kill_grace = config.kill_grace;
    if (!job.spec.signal.batch_only && job.spec.signal.signal != 0) spec.warn = job.spec.signal;
    std::pair<int, int> pipes{-1, -1};
    if (forwarder != nullptr) {
      CORRAL_ASSIGN_OR_RETURN(pipes, forwarder->AddTask(task.rank));
      spec.stdout_fd = pipes.first;
      spec.stderr_fd = pipes.second;
    } else if (!step.stdout_path.empty()) {
      OutputPatternValues values{.job_id = job.id.value,
                                 .array_job_id = job.array_job_id.value,
                                 .array_task_id = job.array_task_id,
                                 .step_id = launch.step,
                                 .job_name = job.spec.name,
                                 .user = job.spec.user,
                                 .node_name = config.name,
                                 .node_index = task.node_rank,
                                 .task_id = task.rank};
      spec.stdout_path = ResolveOutputPath(step.stdout_path, values, spec.cwd);
      if (!step.stderr_path.empty())
        spec.stderr_path = ResolveOutputPath(step.stderr_path, values, spec.cwd);
    } else {
      // Like the batch script: into the job's own output files, appended.
      OutputPatternValues values{.job_id = job.id.value,
                                 .array_job_id = job.array_job_id.value,
                                 .array_task_id = job.array_task_id,
                                 .job_name = job.spec.name,
                                 .user = job.spec.user,
                                 .node_name = config.name};
      spec.stdout_path = ResolveOutputPath(job.spec.stdout_path, values, job.spec.working_dir);
      if (!job.spec.stderr_path.empty()) {
        spec.stderr_path = ResolveOutputPath(job.spec.stderr_path, values, job.spec.working_dir);
      }
      spec.append = true;
    }
    // The job's cgroup on this node (made by its first task here, unless the batch step
    // runs here), its CPUs and device rules.
    if (node) {
      CORRAL_RETURN_IF_ERROR(
          node->PrepareTask(job, {.spec = step.container, .gpus = task.gpus}, &spec));
    } else if (contained) {
      return FailedPrecondition("containers need the node monitor");
    }
    Status launched = supervisor->Launch(spec);
    if (pipes.first >= 0) {
      close(pipes.first);
      close(pipes.second);
    }
    CORRAL_RETURN_IF_ERROR(launched);
    for (const auto& p : supervisor->Running()) {
      if (p.job == job.id && p.generation == spec.generation && p.step == launch.step &&
          p.task == task.rank) {
        std::ofstream journal(TaskJournal(job.id, spec.generation, launch.step, task.rank),
                              std::ios::trunc);
        journal << p.pid << " " << ProcessStartTime(p.pid) << "\n";
      }
    }
    return {};
  }

  api::HttpResponse HandleStepLaunch(const api::HttpRequest& req) {
    auto launch = api::DecodeStepLaunchRequest(req.body);
    if (!launch) return api::ErrorResponse(launch.error());
    const Job& job = launch->job;
    const Generation gen = job.allocation.generation;
    const std::string what = "job " + job.id.ToString() + " step " + std::to_string(launch->step);
    std::vector<StepTask> mine;
    for (const auto& t : launch->layout.tasks) {
      if (t.node == config.name) mine.push_back(t);
    }
    if (mine.empty() || launch->spec.argv.empty()) {
      return api::ErrorResponse(
          {ErrorCode::kInvalidArgument, what + ": no task to run on node " + config.name});
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      // Fencing: refused when a newer run of the job was launched here.
      Generation newest = gen;
      if (auto it = seen.find(job.id); it != seen.end()) newest = std::max(newest, it->second);
      if (auto it = step_generation.find(job.id); it != step_generation.end()) {
        newest = std::max(newest, it->second);
      }
      if (gen < newest) {
        return api::ErrorResponse({ErrorCode::kAborted, what + ": stale launch of generation " +
                                                            gen.ToString() + " (generation " +
                                                            newest.ToString() + " was launched)"});
      }
      step_generation[job.id] = gen;
      auto launched = std::make_tuple(job.id, gen, launch->step);
      if (!launched_steps.insert(launched).second) return Ok();  // a repeated launch
      launched_order.push_back(launched);
      if (launched_order.size() > 4096) {
        launched_steps.erase(launched_order.front());
        launched_order.pop_front();
      }
      std::erase_if(forwarders, [](const auto& f) { return f->done(); });
    }
    JobEnvContext ctx{.node_name = config.name,
                      .controller_url = config.controller_url,
                      .master_addr = launch->master_addr,
                      .master_port = launch->master_port,
                      .checkpoint_dir = CheckpointDirectory(job, config.checkpoint_root),
                      .cluster_name = ClusterName(),
                      .gpus = inventory.gpus};
    std::optional<uint32_t> uid, gid;
    if (geteuid() == 0 && job.spec.uid != 0) {
      uid = job.spec.uid;
      gid = job.spec.gid;
    }
    if (Status made = MakeDirectoriesAs(ctx.checkpoint_dir, uid, gid); !made) {
      CORRAL_LOG(Warn) << what << ": checkpoint directory: " << made.error().message;
    }
    std::unique_ptr<StepOutputForwarder> forwarder;
    if (!launch->io_url.empty()) {
      forwarder =
          std::make_unique<StepOutputForwarder>(launch->io_url, launch->spec.io_token, what);
    }
    std::vector<api::JobEvent> failures;
    for (const StepTask& t : mine) {
      Status started = StartTask(*launch, t, ctx, forwarder.get());
      if (started) continue;
      CORRAL_LOG(Warn) << what << " task " << t.rank << ": " << started.error().message;
      api::JobEvent ev;
      ev.type = api::JobEventType::kTaskLaunchFailed;
      ev.job = job.id;
      ev.generation = gen;
      ev.step = launch->step;
      ev.task = t.rank;
      ev.time = clock.Now();
      ev.exit_code = started.error().code == ErrorCode::kNotFound ? 127 : 1;
      ev.message = started.error().message;
      failures.push_back(std::move(ev));
    }
    if (forwarder != nullptr) {
      forwarder->Start();
      std::lock_guard<std::mutex> lock(mu);
      forwarders.push_back(std::move(forwarder));
    }
    for (auto& ev : failures) PushEvent(std::move(ev));
    return Ok();
  }

  // A new time limit for a run of a job: its batch script and step tasks on this node.
  // Refused (kAborted) when a newer run of the job was launched here; nothing of the run
  // running here is no error (a node that runs none of its steps now).
  api::HttpResponse HandleTimeLimit(const api::HttpRequest& req) {
    auto r = api::DecodeTimeLimitRequest(req.body);
    if (!r) return api::ErrorResponse(r.error());
    const std::string what = "job " + r->job.ToString();
    if (r->time_limit.count() <= 0) {
      return api::ErrorResponse(
          {ErrorCode::kInvalidArgument, what + ": time limit must be positive"});
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      Generation newest = r->generation;
      if (auto it = seen.find(r->job); it != seen.end()) newest = std::max(newest, it->second);
      if (auto it = step_generation.find(r->job); it != step_generation.end()) {
        newest = std::max(newest, it->second);
      }
      if (r->generation < newest) {
        return api::ErrorResponse(
            {ErrorCode::kAborted, what + ": stale time limit for generation " +
                                      r->generation.ToString() + " (generation " +
                                      newest.ToString() + " was launched)"});
      }
    }
    Status s = supervisor->SetTimeLimit(r->job, r->generation, r->time_limit);
    if (!s && s.error().code != ErrorCode::kNotFound) return api::ErrorResponse(s.error());
    return Ok();
  }

  api::HttpResponse HandleStepSignal(const api::HttpRequest& req) {
    auto r = api::DecodeStepSignalRequest(req.body);
    if (!r) return api::ErrorResponse(r.error());
    if (r->signal < 0 || r->signal >= NSIG) {
      return api::ErrorResponse({ErrorCode::kInvalidArgument,
                                 "signal: " + std::to_string(r->signal) + " is not a signal"});
    }
    Status s;
    if (r->step == kAllSteps) {
      s = r->signal == 0 ? supervisor->Cancel(r->job, r->generation)
                         : supervisor->Signal(r->job, r->generation, r->signal);
    } else {
      s = r->signal == 0 ? supervisor->CancelStep(r->job, r->generation, r->step)
                         : supervisor->SignalStep(r->job, r->generation, r->step, r->signal);
    }
    if (!s && s.error().code != ErrorCode::kNotFound) return api::ErrorResponse(s.error());
    return Ok();  // nothing left to signal is no error
  }

  // `--signal=B:...`: the batch script's own process only, not its children or steps.
  Status SignalBatchScript(JobId job, Generation gen, int signal) {
    for (const auto& p : supervisor->Running()) {
      if (p.job != job || p.generation != gen || p.step != kBatchStepId) continue;
      if (kill(p.pid, signal) < 0 && errno != ESRCH) {
        return Internal("job " + job.ToString() + ": kill: " + std::strerror(errno));
      }
      return {};
    }
    return NotFound("job " + job.ToString() + "." + gen.ToString() + ": no such process");
  }
};

Agent::Agent(AgentConfig config, std::unique_ptr<GpuBackend> gpus, api::JwtKey key,
             const Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(gpus), std::move(key), clock)) {}

Agent::~Agent() { Stop(); }

std::string Agent::url() const {
  return "http://" + impl_->config.advertise_host + ":" + std::to_string(impl_->server.port());
}

Status Agent::Start() {
  Impl& im = *impl_;
  std::error_code ec;
  fs::create_directories(im.RunDir(), ec);
  if (ec) return Internal("state_dir \"" + im.config.state_dir + "\": " + ec.message());
  fs::create_directories(im.config.state_dir + "/jobs", ec);
  im.KillOrphans();

  auto discovered = im.gpus->Discover();
  if (!discovered) return tl::unexpected<Error>(discovered.error());
  NodeInventory& inv = im.inventory;
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
  for (const auto& g : inv.gpus)
    numa = std::max<uint32_t>(numa, static_cast<uint32_t>(g.numa_node + 1));
  inv.numa_nodes = numa;

  auto client = api::HttpClient::Create(im.config.controller_url,
                                        {.connect_timeout = std::chrono::milliseconds(2000),
                                         .request_timeout = std::chrono::milliseconds(15000)});
  if (!client) return tl::unexpected<Error>(client.error());
  im.controller = std::move(*client);

  Impl* impl = impl_.get();
  im.supervisor = std::make_unique<ProcessSupervisor>(
      im.clock, [impl](const ProcessExit& e) { impl->OnExit(e); });

  auto guarded = [impl](auto handler) {
    return [impl, handler](const api::HttpRequest& req) -> api::HttpResponse {
      auto header = req.header("authorization");
      if (header.rfind("Bearer ", 0) != 0) {
        return api::ErrorResponse({ErrorCode::kUnauthenticated, "missing Bearer token"});
      }
      auto who = impl->key.Verify(header.substr(7), impl->clock.Now());
      if (!who) return api::ErrorResponse(who.error());
      if (who->role != api::Role::kController && who->role != api::Role::kAdmin) {
        return api::ErrorResponse(
            {ErrorCode::kPermissionDenied, "only the controller may call " + req.path});
      }
      return handler(req);
    };
  };
  im.server.Route("GET", "/api/v1/health", [](const api::HttpRequest&) { return Ok(); });
  im.server.Route("POST", "/api/v1/launch",
                  guarded([impl](const api::HttpRequest& req) { return impl->HandleLaunch(req); }));
  im.server.Route("POST", "/api/v1/cancel", guarded([impl](const api::HttpRequest& req) {
                    auto c = api::DecodeCancelRequest(req.body);
                    if (!c) return api::ErrorResponse(c.error());
                    Status s = impl->supervisor->Cancel(c->job, c->generation);
                    if (!s) return api::ErrorResponse(s.error());
                    return Ok();
                  }));
  im.server.Route(
      "POST", "/api/v1/signal", guarded([impl](const api::HttpRequest& req) {
        auto c = api::DecodeSignalRequest(req.body);
        if (!c) return api::ErrorResponse(c.error());
        if (c->signal <= 0 || c->signal >= NSIG) {
          return api::ErrorResponse({ErrorCode::kInvalidArgument,
                                     "signal: " + std::to_string(c->signal) + " is not a signal"});
        }
        Status s = c->batch_only ? impl->SignalBatchScript(c->job, c->generation, c->signal)
                                 : impl->supervisor->Signal(c->job, c->generation, c->signal);
        if (!s) return api::ErrorResponse(s.error());
        return Ok();
      }));
  im.server.Route("POST", "/api/v1/jobs/limit", guarded([impl](const api::HttpRequest& req) {
                    return impl->HandleTimeLimit(req);
                  }));
  im.server.Route("POST", "/api/v1/steps/launch", guarded([impl](const api::HttpRequest& req) {
                    return impl->HandleStepLaunch(req);
                  }));
  im.server.Route("POST", "/api/v1/steps/signal", guarded([impl](const api::HttpRequest& req) {
                    return impl->HandleStepSignal(req);
                  }));
  im.server.Route("POST", "/api/v1/inject", guarded([impl](const api::HttpRequest& req) {
                    auto r = api::DecodeInjectRequest(req.body);
                    if (!r) return api::ErrorResponse(r.error());
                    Status s = impl->node->Inject(*r);
                    if (!s) return api::ErrorResponse(s.error());
                    return Ok();
                  }));
  im.node = std::make_unique<NodeMonitor>(im.config, *im.gpus, inv.gpus, im.clock, [impl] {
    std::lock_guard<std::mutex> lock(impl->mu);
    impl->heartbeat_now = true;
    impl->cv.notify_all();
  });
  im.node->Start();
  CORRAL_RETURN_IF_ERROR(im.server.Start(im.config.listen_host, im.config.listen_port));
  inv.address = url();
  im.heartbeat_thread = std::thread([impl] { impl->HeartbeatLoop(); });
  im.events_thread = std::thread([impl] { impl->EventsLoop(); });
  CORRAL_LOG(Info) << "agent " << inv.name << " listening on " << inv.address << " with "
                   << inv.gpus.size() << " " << inv.gpu_backend << " GPUs";
  return {};
}

void Agent::Stop() {
  Impl& im = *impl_;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (im.stopping) return;
    im.stopping = true;
  }
  im.cv.notify_all();
  im.server.Stop();
  if (im.heartbeat_thread.joinable()) im.heartbeat_thread.join();
  if (im.events_thread.joinable()) im.events_thread.join();
  im.supervisor.reset();  // kills what still runs
  if (im.node) im.node->Stop();
  im.forwarders.clear();
}

}  // namespace corral::agent
