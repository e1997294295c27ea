#include "agent/node_monitor.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <sys/stat.h>

#include "agent/exec/cgroup.h"
#include "agent/exec/container.h"
#include "agent/exec/container_host.h"
#include "agent/exec/cpu_binding.h"
#include "agent/exec/usage.h"
#include "agent/gpu_sample_buffer.h"
#include "agent/job_gpu_load.h"
#include "core/log.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

// The backend of a node without usable GPUs (fallback "none").
class NoGpuBackend final : public GpuBackend {
 public:
  std::string_view name() const override { return "none"; }
  Result<std::vector<GpuInfo>> Discover() override { return std::vector<GpuInfo>{}; }
  Result<std::vector<GpuSample>> Sample() override { return std::vector<GpuSample>{}; }
};

std::string Dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// Readings kept for the controller between heartbeats (64 GPUs x 128 samples), and the most
// one heartbeat carries.
constexpr size_t kSampleBufferCapacity = 8192;
constexpr size_t kSamplesPerHeartbeat = 2048;

// The agent's own home directory (the environment of a runtime that runs as root).
std::string AgentHome() {
  auto me = LookUpContainerUser(geteuid(), getegid());
  return me ? me->home : "";
}

}  // namespace

Result<std::unique_ptr<GpuBackend>> MakeGpuBackend(const AgentConfig& config, const Clock& clock) {
  if (config.gpu_backend == "simulated")
    return MakeSimulatedGpuBackend(config.simulated_gpus, &clock);
  auto nvml = MakeNvmlGpuBackend(config.nvml);
  if (nvml) return nvml;
  const std::string& fallback = config.gpu_fallback;
  CORRAL_LOG(Warn) << "GPU backend " << config.gpu_backend << ": NVML is not usable ("
                   << nvml.error().message << "); "
                   << (fallback == "fail" ? "stopping" : "falling back to " + fallback);
  if (fallback == "simulated") return MakeSimulatedGpuBackend(config.simulated_gpus, &clock);
  if (fallback == "none") return std::unique_ptr<GpuBackend>(std::make_unique<NoGpuBackend>());
  return nvml;
}

struct NodeMonitor::Impl {
  // What one run of a job holds on this node.
  struct RunEntry {
    GpuSet gpus;
    std::vector<uint32_t> cpus;
    uint64_t memory_mb = 0;  // its limit here (what podman and docker get too), 0 = none
    uint64_t pids_max = 0;
    std::unique_ptr<JobCgroup> cgroup;
    std::optional<ContainerCleanup> container;  // the batch script's container
    // Step tasks run in containers: their removal, by (step, task).
    std::map<std::pair<uint32_t, uint32_t>, ContainerCleanup> task_containers;
    bool batch = false;  // its batch step runs here: FinishJob ends it
  };
  // What a run's containers are held to.
  struct RunLimits {
    std::vector<uint32_t> cpus;
    uint64_t memory_mb = 0;
    uint64_t pids_max = 0;
  };
  static RunLimits LimitsOf(const RunEntry& e) { return {e.cpus, e.memory_mb, e.pids_max}; }

  Impl(const AgentConfig& c, GpuBackend& b, std::vector<GpuInfo> g, const Clock& cl,
       std::function<void()> cb)
      : config(c),
        backend(b),
        gpus(std::move(g)),
        clock(cl),
        on_health_change(std::move(cb)),
        health(c.health),
        loads(c.state_dir + "/gpu-load") {}

  const AgentConfig config;
  GpuBackend& backend;
  const std::vector<GpuInfo> gpus;
  const Clock& clock;
  const std::function<void()> on_health_change;

  std::unique_ptr<CgroupManager> cgroups;  // set in Start, then fixed
  // The node's name and a hash of its state directory (set in Start): its cgroups and
  // containers are named after it, so that two agents of one name on one machine (test
  // clusters) never take each other's for their own.
  std::string instance;
  std::string cgroup_summary;
  NumaTopology topology;

  mutable std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool wake = false;                // check now (an injected fault)
  HealthMonitor health;             // guarded by mu
  HealthReport report;              // guarded by mu
  UsageTracker usage;               // guarded by mu
  std::map<JobRun, RunEntry> runs;  // guarded by mu
  JobGpuLoads loads;                // guarded by mu; simulated backend only
  GpuSampleBuffer samples_for_controller{kSampleBufferCapacity};  // guarded by mu
  MonoTime last_recorded{};                                       // guarded by mu
  std::thread thread;
  // Serialises PrepareJob and PrepareTask: a run's cgroup is made once, and the CPUs of
  // runs being prepared at the same time never overlap. Taken before `mu`.
  std::mutex prepare_mu;

  Duration Period() const { return std::min(config.sample_interval, config.health.interval); }

  // The run's allocation on this node, or null.
  const NodeAllocation* Here(const Job& job) const {
    for (const auto& na : job.allocation.nodes) {
      if (na.node_name == config.name) return &na;
    }
    return nullptr;
  }

  // A new run entry for `job` on this node: its GPUs, CPUs near them (away from the other
  // runs' CPUs) and its cgroup. Requires prepare_mu. Returns kInternal when the cgroup cannot
  // be made.
  Result<RunEntry> MakeEntry(const Job& job) {
    const NodeAllocation* here = Here(job);
    GpuSet mine = here != nullptr ? here->gpus : GpuSet();
    RunEntry entry;
    entry.gpus = mine;
    entry.memory_mb = here != nullptr ? here->mem_mb : 0;
    uint32_t cpu_count = here != nullptr ? here->cpus : 0;
    size_t total_cpus = 0;
    for (const auto& [node, cpus] : topology.cpus_by_node) total_cpus += cpus.size();
    std::set<int32_t> near;
    for (const auto& g : gpus) {
      if (mine.contains(g.index) && g.numa_node >= 0) near.insert(g.numa_node);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (cpu_count > 0 && cpu_count < total_cpus) {
        std::set<uint32_t> busy;
        for (const auto& [run, e] : runs) busy.insert(e.cpus.begin(), e.cpus.end());
        entry.cpus = PickCpus(topology, cpu_count, near, busy);
      }
    }
    if (cgroups == nullptr) return entry;
    JobCgroupSpec cs;
    cs.job = job.id;
    cs.generation = job.allocation.generation;
    cs.cpus = entry.cpus;
    cs.mems = NodesOf(topology, entry.cpus);
    cs.cpu_count = cpu_count;
    // A run given no memory gets the node's default (cgroup.h); a fork bomb stays in its run.
    cs.memory_mb =
        JobMemoryLimitMb(config.cgroup, {.given_memory_mb = entry.memory_mb,
                                         .cpus = cpu_count,
                                         .gpus = mine.size(),
                                         .node_memory_mb = config.memory_mb,
                                         .node_cpus = config.cpus,
                                         .node_gpus = static_cast<uint32_t>(gpus.size())});
    cs.pids_max = config.cgroup.pids_max;
    if (config.cgroup.constrain_memory) entry.memory_mb = cs.memory_mb;
    entry.pids_max = cs.pids_max;
    if (config.cgroup.constrain_devices) {
      std::set<std::string> allowed;
      for (uint32_t g : mine.ToVector()) {
        for (const auto& f : backend.DeviceFiles(g)) allowed.insert(f);
      }
      for (const auto& g : gpus) {
        if (mine.contains(g.index)) continue;
        for (const auto& f : backend.DeviceFiles(g.index)) {
          if (allowed.contains(f)) continue;  // a MIG parent shared with one of the job's slices
          auto n = DeviceNumberOf(f);
          if (n && std::find(cs.deny.begin(), cs.deny.end(), *n) == cs.deny.end())
            cs.deny.push_back(*n);
        }
      }
    }
    CORRAL_ASSIGN_OR_RETURN(entry.cgroup, cgroups->Create(cs));
    return entry;
  }

  // Replaces `spec`'s command with the container runtime's, running `command` (a step task's;
  // empty: the batch script `spec->argv[0]`) in `container`'s image with the GPUs `gpus` of
  // this node and the run's CPUs `cpus`; `step_task` names a step's task. Returns how the
  // container goes (container.h and container_host.h say what is checked and why).
  Result<ContainerCleanup> Containerize(const Job& job, const RunLimits& limits,
                                        const ContainerSpec& container, const GpuSet& gpus_here,
                                        std::vector<std::string> command,
                                        std::optional<std::pair<uint32_t, uint32_t>> step_task,
                                        ProcessSpec* spec) {
    ContainerLaunch l;
    l.job = job.id;
    l.node = config.name;
    l.script = command.empty() && !spec->argv.empty() ? spec->argv[0] : "";
    l.command = std::move(command);
    l.name = ContainerName(job.spec.user, job.id, job.allocation.generation, step_task, instance);
    l.workdir = spec->cwd;
    for (const auto& p : {spec->stdout_path, spec->stderr_path}) {
      if (!p.empty()) l.output_dirs.push_back(p[0] == '/' ? Dir(p) : spec->cwd);
    }
    l.env = spec->env;
    // As root the runtime gets a user in every case (a job the node lets run as root too).
    std::optional<uint32_t> uid = spec->uid, gid = spec->gid;
    if (!uid && geteuid() == 0) uid = gid = 0;
    CORRAL_ASSIGN_OR_RETURN(ContainerUser user, LookUpContainerUser(uid, gid));
    if (!user.uid) user.home = AgentHome();
    l.uid = user.uid;
    l.gid = user.gid;
    l.groups = user.groups;
    l.home = user.home;
    CORRAL_ASSIGN_OR_RETURN(l.rootless, UseRootlessPodman(config.container, user));
    for (const auto& g : gpus) {
      if (gpus_here.contains(g.index)) {
        l.gpus.push_back(g);
        for (const auto& f : backend.DeviceFiles(g.index)) l.device_files.push_back(f);
      }
    }
    l.spec = container;
    l.memory_mb = limits.memory_mb;
    l.pids_max = limits.pids_max;
    l.cpus = limits.cpus;
    const std::string& rt = config.container.runtime;
    const bool docker_like = rt == "podman" || rt == "docker";
    const bool as_user = l.rootless || (!docker_like && !rt.empty());
    CORRAL_ASSIGN_OR_RETURN(std::string runtime, FindRuntime(config.container));
    if (Status ok = ValidateContainerSpec(container); !ok)
      return Annotate(ok.error(), "job " + job.id.ToString());
    CORRAL_ASSIGN_OR_RETURN(std::string dir, MakeContainerDir(config.state_dir, l.name, as_user));
    ContainerCleanup cleanup{.dir = dir};
    auto fail = [&](const Error& e) -> Result<ContainerCleanup> {
      RemoveContainer(cleanup, false);
      return tl::unexpected<Error>(e);
    };
    l.env_file = dir + "/env";
    auto planned = PlanMounts(l);
    if (!planned) return fail(planned.error());
    // A runtime that runs as root gets its sources staged (container_host.h).
    const bool stage = docker_like && !l.rootless && geteuid() == 0;
    auto mounts = CheckMounts(config.container, std::move(*planned), user, stage, dir);
    if (!mounts) return fail(Annotate(mounts.error(), "job " + job.id.ToString()).value());
    l.mounts = std::move(*mounts);
    auto cmd = BuildContainerCommand(config.container, l);
    if (!cmd) return fail(cmd.error());
    if (docker_like) {
      Status written = WriteEnvFile(l.env_file, cmd->env_file, l.rootless ? &user : nullptr);
      if (!written) return fail(written.error());
    }
    if (!cmd->dropped_env.empty()) {
      CORRAL_LOG(Warn) << "job " << job.id.ToString() << ": " << rt
                       << " cannot carry these variables into the container: "
                       << Join(cmd->dropped_env, " ");
    }
    cmd->argv[0] = runtime;
    spec->argv = cmd->argv;
    // The runtime's environment: PATH, HOME (the user's for a runtime that runs as the user),
    // then the runtime's own (a name there replaces these).
    std::string home = as_user ? l.home : AgentHome();
    std::map<std::string, std::string> env = {
        {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
        {"HOME", home.empty() ? std::string("/") : home}};
    // Rootless podman keeps its state in the user's runtime directory (logind's, when there).
    struct stat run_dir {};
    std::string xdg = l.uid ? "/run/user/" + std::to_string(*l.uid) : "";
    if (l.rootless && stat(xdg.c_str(), &run_dir) == 0 && run_dir.st_uid == *l.uid)
      env["XDG_RUNTIME_DIR"] = xdg;
    for (const std::string& kv : cmd->env) {
      size_t eq = kv.find('=');
      env[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    spec->env.clear();
    for (const auto& [k, v] : env) spec->env.push_back(k + "=" + v);
    // Rootful podman/docker run as the agent; the job's user is inside (--user). Output files
    // are still opened as the user.
    if (!cmd->runs_as_user && spec->uid) spec->run_as_agent = true;
    if (!cmd->cleanup.empty()) {
      cleanup.argv = cmd->cleanup;
      cleanup.argv[0] = runtime;
      cleanup.env = spec->env;
      if (cmd->runs_as_user && user.uid) {
        cleanup.uid = user.uid;
        cleanup.gid = user.gid;
        cleanup.groups = user.groups;
      }
    }
    return cleanup;
  }

  // Removes the run's entry and returns it (empty when there is none).
  std::optional<RunEntry> Take(JobRun run) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = runs.find(run);
    if (it == runs.end()) return std::nullopt;
    RunEntry e = std::move(it->second);
    runs.erase(it);
    return e;
  }

  // Kills what is left in the run's cgroup and removes it.
  void Destroy(JobRun run, RunEntry& entry) {
    if (entry.cgroup == nullptr) return;
    if (Status s = entry.cgroup->Destroy(Seconds(10), clock); !s) {
      CORRAL_LOG(Error) << "job " << run.ToString() << ": " << s.error().message;
    }
    entry.cgroup.reset();
  }

  // One round: sample, account usage, evaluate health (with the script when due).
  void Check(bool run_script) {
    std::string script_problem;
    if (run_script && !config.health.script.empty()) {
      script_problem = RunHealthScript(config.health.script, config.health.script_timeout, clock);
    }
    if (simulated()) {
      std::lock_guard<std::mutex> lock(mu);
      loads.Apply(backend);
    }
    Result<std::vector<GpuSample>> samples = backend.Sample();
    MonoTime now = clock.MonotonicNow();
    bool changed = false;
    HealthReport r;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (samples) {
        usage.Observe(*samples, now);
        RecordForController(*samples, now);
      }
      if (run_script) health.SetScriptResult(script_problem);
      r = health.Observe(gpus, samples);
      changed = r != report;
      report = r;
    }
    if (changed) {
      if (r.gpus.empty() && r.node_problem.empty()) {
        CORRAL_LOG(Info) << "health: every check passes";
      }
      for (const auto& p : r.gpus) CORRAL_LOG(Warn) << "health: gpu " << p.gpu << ": " << p.reason;
      if (!r.node_problem.empty()) CORRAL_LOG(Warn) << "health: node: " << r.node_problem;
      if (on_health_change) on_health_change();
    }
  }

  bool simulated() const { return backend.name() == "simulated"; }

  // Keeps the readings of the GPUs held by runs for the next heartbeat, one round per
  // `sample_interval` (health checks may sample more often). Requires mu.
  void RecordForController(const std::vector<GpuSample>& samples, MonoTime now) {
    if (runs.empty()) return;
    if (last_recorded != MonoTime{} && now - last_recorded < config.sample_interval * 9 / 10)
      return;
    last_recorded = now;
    const Timestamp at = clock.Now();
    for (const auto& [run, entry] : runs) {
      for (const GpuSample& g : samples) {
        if (!g.present || !entry.gpus.contains(g.index)) continue;
        samples_for_controller.Add(
            {.gpu = g.index,
             .job = run.job,
             .time = at,
             .utilization = g.utilization,
             .memory_used_mb = g.memory_used_mb,
             .power_watts = g.power_watts,
             .energy_mj = static_cast<uint64_t>(std::max(0.0, g.energy_joules) * 1000)});
      }
    }
  }

  void Loop() {
    MonoTime next_script = clock.MonotonicNow() + config.health.interval;
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      cv.wait_for(lock, Period(), [&] { return stopping || wake; });
      if (stopping) break;
      wake = false;
      MonoTime now = clock.MonotonicNow();
      bool script = now >= next_script;
      if (script) next_script = now + config.health.interval;
      lock.unlock();
      Check(script);
      lock.lock();
    }
  }
};

NodeMonitor::NodeMonitor(const AgentConfig& config, GpuBackend& backend, std::vector<GpuInfo> gpus,
                         const Clock& clock, std::function<void()> on_health_change)
    : impl_(std::make_unique<Impl>(config, backend, std::move(gpus), clock,
                                   std::move(on_health_change))) {}

NodeMonitor::~NodeMonitor() { Stop(); }

void NodeMonitor::Start() {
  Impl& im = *impl_;
  // The node's cgroup directory is named after the node and its state directory, so that two
  // agents of one name on one machine (test clusters) never take each other's job cgroups for
  // leftovers, while a restarted agent finds its own.
  uint64_t h = 1469598103934665603ull;
  for (char ch : std::filesystem::absolute(im.config.state_dir).string()) {
    h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  }
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%08x", static_cast<unsigned>(h ^ (h >> 32)));
  im.instance = im.config.name + suffix;
  RemoveStaleContainerDirs(im.config.state_dir);
  auto cg = CgroupManager::Open(im.config.cgroup, im.instance, im.clock);
  if (cg) {
    im.cgroups = std::move(*cg);
    im.cgroup_summary = im.cgroups->Describe();
    im.cgroups->KillStale();
    CORRAL_LOG(Info) << "jobs are isolated with " << im.cgroup_summary;
  } else {
    im.cgroup_summary = "no cgroups: " + cg.error().message;
    CORRAL_LOG(Warn) << "running jobs without cgroups: " << cg.error().message;
  }
  im.topology = ReadNumaTopology("/sys", OwnCpuAffinity());
  im.Check(/*run_script=*/true);
  im.thread = std::thread([&im] { im.Loop(); });
}

void NodeMonitor::Stop() {
  Impl& im = *impl_;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.stopping = true;
  }
  im.cv.notify_all();
  if (im.thread.joinable()) im.thread.join();
}

std::string NodeMonitor::IsolationSummary() const { return impl_->cgroup_summary; }

Status NodeMonitor::PrepareJob(const Job& job, ProcessSpec* spec) {
  Impl& im = *impl_;
  const JobRun run{job.id, job.allocation.generation};
  std::lock_guard<std::mutex> prepare(im.prepare_mu);
  // A step task of this run may have been launched here first (another connection): its
  // cgroup is the run's.
  std::optional<Impl::RunEntry> existing = im.Take(run);
  Impl::RunEntry entry;
  if (existing) {
    entry = std::move(*existing);
  } else {
    CORRAL_ASSIGN_OR_RETURN(entry, im.MakeEntry(job));
  }
  if (entry.cgroup != nullptr) spec->cgroup_procs = entry.cgroup->procs_files();
  spec->cpus = entry.cpus;

  if (!job.spec.container.image.empty()) {
    auto cleanup = im.Containerize(job, Impl::LimitsOf(entry), job.spec.container, entry.gpus, {},
                                   std::nullopt, spec);
    if (!cleanup) {
      if (existing) {
        std::lock_guard<std::mutex> lock(im.mu);
        im.runs[run] = std::move(entry);  // the step's tasks keep their cgroup
      } else {
        im.Destroy(run, entry);
      }
      return tl::unexpected<Error>(cleanup.error());
    }
    entry.container = std::move(*cleanup);
  }
  entry.batch = true;
  std::lock_guard<std::mutex> lock(im.mu);
  if (im.simulated()) {
    for (std::string& kv : im.loads.Start(run, entry.gpus, spec->env, spec->uid, spec->gid)) {
      spec->env.push_back(std::move(kv));
    }
  }
  im.usage.Start(run, entry.gpus, im.clock.MonotonicNow());
  im.runs[run] = std::move(entry);
  return {};
}

Status NodeMonitor::PrepareTask(const Job& job, const TaskContainer& container, ProcessSpec* spec) {
  Impl& im = *impl_;
  const JobRun run{job.id, job.allocation.generation};
  std::lock_guard<std::mutex> prepare(im.prepare_mu);
  bool known = false;
  Impl::RunLimits limits;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (auto it = im.runs.find(run); it != im.runs.end()) {
      if (it->second.cgroup != nullptr) spec->cgroup_procs = it->second.cgroup->procs_files();
      spec->cpus = it->second.cpus;
      limits = Impl::LimitsOf(it->second);
      known = true;
    }
  }
  if (!known) {
    CORRAL_ASSIGN_OR_RETURN(Impl::RunEntry entry, im.MakeEntry(job));
    if (entry.cgroup != nullptr) spec->cgroup_procs = entry.cgroup->procs_files();
    spec->cpus = entry.cpus;
    limits = Impl::LimitsOf(entry);
    std::lock_guard<std::mutex> lock(im.mu);
    im.runs[run] = std::move(entry);
  }
  if (container.spec.image.empty()) return {};
  // One container per task, named after its run, step and task.
  CORRAL_ASSIGN_OR_RETURN(ContainerCleanup cleanup,
                          im.Containerize(job, limits, container.spec, container.gpus, spec->argv,
                                          std::make_pair(spec->step, spec->task), spec));
  std::lock_guard<std::mutex> lock(im.mu);
  if (auto it = im.runs.find(run); it != im.runs.end()) {
    it->second.task_containers[{spec->step, spec->task}] = std::move(cleanup);
  } else {
    RemoveContainer(cleanup, false);
  }
  return {};
}

void NodeMonitor::FinishTask(JobRun run, uint32_t step, uint32_t task, bool killed) {
  Impl& im = *impl_;
  ContainerCleanup cleanup;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    auto it = im.runs.find(run);
    if (it == im.runs.end()) return;
    auto ct = it->second.task_containers.find({step, task});
    if (ct == it->second.task_containers.end()) return;
    cleanup = std::move(ct->second);
    it->second.task_containers.erase(ct);
  }
  // A runtime client that exited by itself removed its container (--rm); one that was killed
  // may have left it running. Its private directory goes either way.
  RemoveContainer(cleanup, killed);
}

void NodeMonitor::AbandonJob(JobRun run) {
  api::JobEvent ignored;
  FinishJob(run, &ignored);
}

void NodeMonitor::FinishJob(JobRun run, api::JobEvent* ev) {
  Impl& im = *impl_;
  Impl::RunEntry entry;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    auto it = im.runs.find(run);
    if (it == im.runs.end()) return;
    entry = std::move(it->second);
    im.runs.erase(it);
    im.loads.Finish(run, im.backend);
    JobUsage u = im.usage.Finish(run, im.clock.MonotonicNow());
    ev->usage.gpu_seconds = u.gpu_seconds;
    ev->usage.gpu_util_mean = u.gpu_util_mean;
    ev->usage.gpu_util_max = u.gpu_util_max;
    ev->usage.gpu_mem_max_mb = u.gpu_mem_max_mb;
    ev->usage.energy_joules = u.energy_joules;
    for (const auto& p : im.report.gpus) {
      if (!entry.gpus.contains(p.gpu)) continue;
      if (!ev->gpu_failure.empty()) ev->gpu_failure += "; ";
      ev->gpu_failure += "gpu " + std::to_string(p.gpu) + ": " + p.reason;
    }
  }
  if (entry.cgroup != nullptr) {
    if (entry.cgroup->OutOfMemory()) ev->out_of_memory = true;
    ev->usage.max_rss_mb = std::max(ev->usage.max_rss_mb, entry.cgroup->PeakMemoryMb());
  }
  im.Destroy(run, entry);
  if (entry.container) RemoveContainer(*entry.container, true);
  for (const auto& [key, cleanup] : entry.task_containers) RemoveContainer(cleanup, true);
}

void NodeMonitor::ReleaseRun(JobRun run) {
  Impl& im = *impl_;
  Impl::RunEntry entry;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    auto it = im.runs.find(run);
    if (it == im.runs.end() || it->second.batch) return;
    entry = std::move(it->second);
    im.runs.erase(it);
  }
  im.Destroy(run, entry);
  for (const auto& [key, cleanup] : entry.task_containers) RemoveContainer(cleanup, true);
}

std::vector<JobRun> NodeMonitor::Runs() const {
  const Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.mu);
  std::vector<JobRun> out;
  out.reserve(im.runs.size());
  for (const auto& [run, e] : im.runs) out.push_back(run);
  return out;
}

void NodeMonitor::FillRunStats(JobRun run, api::NodeRunStats* out) const {
  const Impl& im = *impl_;
  GpuSet gpus;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    auto it = im.runs.find(run);
    if (it == im.runs.end()) return;
    gpus = it->second.gpus;
    if (it->second.cgroup != nullptr) {
      CgroupUsage u = it->second.cgroup->Usage();
      out->cgroup = true;
      out->cgroup_memory_kb = u.memory_kb;
      out->cgroup_memory_peak_kb = u.memory_peak_kb;
      out->cgroup_cpu_seconds = u.cpu_seconds;
      out->cgroup_pids = u.processes;
    }
  }
  if (gpus.empty()) return;
  auto readings = im.backend.Read();
  if (!readings) return;
  for (const GpuReading& r : *readings) {
    if (!gpus.contains(r.index) || !r.present) continue;
    out->gpus.push_back(
        {.index = r.index, .utilization = r.utilization, .memory_used_mb = r.memory_used_mb});
  }
}

Status NodeMonitor::FreezeRun(JobRun run, bool frozen) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.mu);
  auto it = im.runs.find(run);
  if (it == im.runs.end() || it->second.cgroup == nullptr) {
    return NotFound("job " + run.job.ToString() + ": no cgroup on this node");
  }
  return it->second.cgroup->Freeze(frozen);
}

void NodeMonitor::FillHeartbeat(api::HeartbeatRequest* req) const {
  const Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.mu);
  req->gpu_problems.clear();
  for (const auto& p : im.report.gpus) req->gpu_problems.push_back({p.gpu, p.reason, p.latched});
  req->node_problem = im.report.node_problem;
  req->auto_resume = im.config.health.auto_resume;
}

uint64_t NodeMonitor::TakeGpuSamples(api::HeartbeatRequest* req) const {
  const Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.mu);
  return im.samples_for_controller.Peek(kSamplesPerHeartbeat, &req->gpu_samples);
}

void NodeMonitor::GpuSamplesDelivered(uint64_t token) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.mu);
  im.samples_for_controller.Delivered(token);
}

void NodeMonitor::ClearGpus(const std::vector<uint32_t>& gpus) {
  Impl& im = *impl_;
  bool any = false;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    for (uint32_t g : gpus) {
      bool latched = std::any_of(im.report.gpus.begin(), im.report.gpus.end(),
                                 [&](const GpuProblem& p) { return p.gpu == g && p.latched; });
      if (!latched) continue;
      CORRAL_LOG(Info) << "health: gpu " << g
                       << " resumed by an operator; its latched problems are cleared";
      im.health.Clear(g);
      im.report = im.health.Current();
      any = true;
    }
    if (any) {
      im.wake = true;
      im.cv.notify_all();
    }
  }
  if (any && im.on_health_change) im.on_health_change();
}

Status NodeMonitor::Inject(const api::InjectRequest& r) {
  Impl& im = *impl_;
  GpuFault f;
  f.gpu = r.gpu;
  f.xid = r.xid;
  f.ecc_uncorrectable = r.ecc_uncorrectable;
  f.temperature_c = r.temperature_c;
  f.power_watts = r.power_watts;
  f.utilization = r.utilization;
  f.memory_used_mb = r.memory_used_mb;
  f.row_remap_failure = r.row_remap_failure;
  f.vanished = r.vanished;
  f.clear = r.clear;
  CORRAL_RETURN_IF_ERROR(im.backend.Inject(f));
  CORRAL_LOG(Warn) << "fault injected into gpu " << r.gpu;
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.wake = true;
  }
  im.cv.notify_all();
  return {};
}

}  // namespace corral::agent
