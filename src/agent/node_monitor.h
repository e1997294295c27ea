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
#include "agent/gpu_backend.h"
#include "agent/health.h"
#include "agent/process_supervisor.h"
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
  NodeMonitor(const AgentConfig& config, GpuBackend& backend, std::vector<GpuInfo> gpus, const Clock& clock,
              std::function<void()> on_health_change);
  ~NodeMonitor();  // stops
  NodeMonitor(const NodeMonitor&) = delete;
  NodeMonitor& operator=(const NodeMonitor&) = delete;

  // Opens the cgroup hierarchies (one log line when they cannot be used), kills job cgroups
  // a previous run left, takes a first health reading and starts the thread.
  void Start();
  void Stop();

  // Prepares the isolation of `job`'s process `spec` before it is launched: a cgroup (CPUs,
  // memory, device rules), CPUs near its GPUs, and for a job with a container image the
  // runtime's command in place of the script. Returns kFailedPrecondition / kInvalidArgument
  // for a container that cannot run here, kInternal when its cgroup cannot be made.
  Status PrepareJob(const Job& job, ProcessSpec* spec);
  // Launch failed: undo PrepareJob.
  void AbandonJob(JobId job);
  // The job's process ended: fills `ev`'s GPU usage, `out_of_memory` and `gpu_failure`, then
  // kills and removes what is left of the job (its cgroup, its container).
  void FinishJob(JobId job, api::JobEvent* ev);

  // What the next heartbeat reports.
  void FillHeartbeat(api::HeartbeatRequest* req) const;
  // An operator resumed these GPUs: forget their latched problems.
  void ClearGpus(const std::vector<uint32_t>& gpus);
  // `corral node inject`: applies a fault to the backend, then re-checks health at once.
  Status Inject(const api::InjectRequest& request);

  // "cgroup v1 (memory, cpuset, devices) + cgroup v2 (kill)", or why there are none.
  std::string IsolationSummary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::agent
