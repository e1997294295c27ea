// NodeMonitor: what the agent does about its node's GPUs besides launching — choosing the GPU
// backend, sampling the GPUs for per-job usage, the health checks, the isolation of each job
// (cgroup, CPU binding, device rules), running jobs in containers, and fault injection.
// agent.cc calls it at a few points (start, launch, exit, heartbeat); docs/agent.md describes
// the behaviour.
//
// One thread samples the backend every `sample_interval` and evaluates health every
// `health.interval` (running the admin script then); when the health report changes it calls
// `on_health_change` (the agent then heartbeats at once).
//
// Thread-safety: thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/config.h"
#include "agent/exec/job_run.h"
#include "agent/exec/process_supervisor.h"
#include "agent/gpu/gpu_backend.h"
#include "agent/health.h"
#include "api/job_stats.h"
#include "api/messages.h"
#include "core/clock.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::agent {

// The backend `config` asks for: "simulated"; "nvml" or "auto" try NVML and, when it cannot be
// used, log one line saying why and take `config.gpu_fallback` ("simulated", "none": a
// backend with no GPUs, "fail": the error). Returns kInvalidArgument for a bad simulated
// config, kUnavailable when NVML fails and the fallback is "fail".
Result<std::unique_ptr<GpuBackend>> MakeGpuBackend(const AgentConfig& config, const Clock& clock);

class NodeMonitor {
 public:
  // `backend` and `clock` must outlive the monitor. `gpus` is the discovered inventory.
  NodeMonitor(const AgentConfig& config, GpuBackend& backend, std::vector<GpuInfo> gpus,
              const Clock& clock, std::function<void()> on_health_change);
  ~NodeMonitor();  // stops
  NodeMonitor(const NodeMonitor&) = delete;
  NodeMonitor& operator=(const NodeMonitor&) = delete;

  // Opens the cgroup hierarchies (one log line when they cannot be used), kills job cgroups
  // a previous run left, takes a first health reading and starts the thread.
  void Start();
  void Stop();

  // Everything below is per run of a job (`JobRun`: the job and its allocation's
  // generation), never per job id alone: a requeued job may start again on this node while
  // its previous run is still being torn down.

  // Prepares the isolation of the batch step `spec` of `job`'s run (its generation is
  // `job.allocation.generation`) before it is launched: the run's cgroup on this node (CPUs,
  // memory, device rules of its allocation here), CPUs near its GPUs, and for a job with a
  // container image the runtime's command in place of the script; starts its GPU usage.
  // Returns kFailedPrecondition / kInvalidArgument for a container that cannot run here,
  // kInternal when its cgroup cannot be made.
  Status PrepareJob(const Job& job, ProcessSpec* spec);
  // The container a step task runs in (`srun --container-image`), and the task's GPUs here.
  struct TaskContainer {
    ContainerSpec spec;  // an empty image: no container
    GpuSet gpus;
  };
  // Puts step task `spec` of `job`'s run into the run's cgroup on this node and binds it to
  // the run's CPUs. On the run's first use of this node (a node of the allocation other than
  // the batch host) the cgroup is made; it stays until `ReleaseRun` (or `FinishJob` on the
  // batch host). With a container image, the task's command (`spec->argv`, run as it is in
  // the image) is replaced by the runtime's, which gets only `container.gpus`, and its
  // environment carried in. Returns kInternal when the cgroup cannot be made,
  // kFailedPrecondition / kInvalidArgument for a container that cannot run here.
  Status PrepareTask(const Job& job, const TaskContainer& container, ProcessSpec* spec);
  // Step task (`step`, `task`) of the run ended; `killed`: by a signal (its runtime client
  // may have left its container running, which is then removed).
  void FinishTask(JobRun run, uint32_t step, uint32_t task, bool killed);
  // Launch failed: undo PrepareJob.
  void AbandonJob(JobRun run);
  // The run's batch step ended: fills `ev`'s GPU usage, `out_of_memory` and `gpu_failure`,
  // then kills and removes what is left of the run here (its cgroup, its container).
  void FinishJob(JobRun run, api::JobEvent* ev);
  // The run has ended on this node, which does not run its batch step: kills what is left of
  // it (processes that left their task's process group too) and removes its cgroup. A run
  // whose batch step runs here is left to FinishJob. Doing it twice does nothing.
  void ReleaseRun(JobRun run);
  // The runs that hold a cgroup (or a batch step) here, in order.
  std::vector<JobRun> Runs() const;

  // What the next heartbeat reports.
  void FillHeartbeat(api::HeartbeatRequest* req) const;
  // Adds the GPU readings of jobs not yet delivered (oldest first, a bounded number) to the
  // heartbeat; returns the token that `GpuSamplesDelivered` takes once the controller has
  // answered it. A heartbeat that fails leaves them for the next.
  uint64_t TakeGpuSamples(api::HeartbeatRequest* req) const;
  void GpuSamplesDelivered(uint64_t token);
  // An operator resumed these GPUs: forget their latched problems.
  void ClearGpus(const std::vector<uint32_t>& gpus);
  // `corral node inject`: applies a fault to the backend, then re-checks health at once.
  Status Inject(const api::InjectRequest& request);

  // `sstat`: the totals of `run`'s cgroup here (`out->cgroup` false without one) and the use
  // of its GPUs here, read now. A run that holds nothing here leaves `out` as it is.
  void FillRunStats(JobRun run, api::NodeRunStats* out) const;
  // `scontrol suspend|resume`: freezes or thaws every process of `run`'s cgroup here. Returns
  // kNotFound when the run has no cgroup here, the cgroup's errors (kUnimplemented: no
  // freezer).
  Status FreezeRun(JobRun run, bool frozen);

  // "cgroup v1 (memory, cpuset, devices) + cgroup v2 (kill)", or why there are none.
  std::string IsolationSummary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::agent
