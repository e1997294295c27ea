// Launcher: starts a run's processes on this node through the `ProcessSupervisor` and the
// `NodeMonitor` — the batch step (its directory and script, MASTER_PORT, environment, output
// files, checkpoint directory, isolation) and a step's tasks (environment, program, output
// files or forwarding pipes, isolation) — and carries out signals and cancels. Whether to
// start something, and what it means, is `AgentCore`'s; this is the I/O.
//
// Thread-safety: thread-safe (the supervisor and the monitor are; it keeps no state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_core.h"
#include "agent/config.h"
#include "agent/exec/job_env.h"
#include "agent/exec/process_supervisor.h"
#include "agent/exec/step_output.h"
#include "agent/node_monitor.h"
#include "api/messages.h"
#include "core/clock.h"
#include "core/gpu.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::agent {

// The run's state directory (its batch script): <state_dir>/jobs/<job>.<generation>. Per run:
// a requeued job may start again here while its previous run is still being reaped.
std::string RunDirectory(const std::string& state_dir, JobRun run);

// Makes the run's directory afresh — the agent's, mode 0711: the user passes through to its
// script but can create, rename or replace nothing in it, so that neither writing the script
// nor removing the directory (as root) can be led elsewhere through a symlink — and writes
// `text` to its new `script` (mode 0700, owned by `uid`/`gid` when given). Returns the
// script's path, or kInternal.
Result<std::string> WriteRunScript(const std::string& state_dir, JobRun run,
                                   const std::string& text, std::optional<uint32_t> uid,
                                   std::optional<uint32_t> gid);

class Launcher {
 public:
  // `supervisor` must outlive the launcher; `node` too, when given (null: no isolation).
  // `gpus`: the node's inventory.
  // `clock` reads the batch step's trace marks.
  Launcher(const AgentConfig& config, ProcessSupervisor& supervisor, NodeMonitor* node,
           std::vector<GpuInfo> gpus, const Clock& clock = SystemClock::Get());

  // Starts the batch step of `job`'s run. Returns its process and MASTER_PORT, or why it
  // could not start: kInternal when its directory or script cannot be made, the node
  // monitor's errors (its container or cgroup), the supervisor's (kInvalidArgument for a
  // working directory or output file, kInternal when it cannot be started, ...).
  // `job_credential` ("" = none) becomes the job's CORRAL_JOB_CREDENTIAL.
  Result<AgentCore::BatchStarted> StartBatch(const Job& job, const std::string& cluster_name,
                                             const std::string& job_credential);

  // The environment of a step's tasks here; makes the job's checkpoint directory (a failure is
  // logged, not fatal).
  JobEnvContext StepContext(const api::StepLaunchRequest& launch, const std::string& cluster_name);
  // Starts `task` of the step (its output into `forwarder`'s pipes when given). Returns
  // kNotFound for a program that is not found, kFailedPrecondition for a container without
  // the node monitor, the node monitor's and the supervisor's errors.
  Result<StartedProcess> StartTask(const api::StepLaunchRequest& launch, const StepTask& task,
                                   const JobEnvContext& ctx, StepOutputForwarder* forwarder);

  // Carries out a signal or cancel. Returns kNotFound when nothing of it runs here (unless
  // `missing_ok`), kInvalidArgument for a bad signal, kInternal when kill fails.
  Status Signal(const SignalOrder& order);

 private:
  // The process just started, looked up in the supervisor (pid 0: it has already ended).
  StartedProcess Started(JobRun run, uint32_t step, uint32_t task) const;
  // `--signal=B:...`: the batch script's own process only, not its children or steps.
  Status SignalBatchScript(JobRun run, int signal);

  const AgentConfig& config_;
  const Clock& clock_;
  ProcessSupervisor& supervisor_;
  NodeMonitor* const node_;
  const std::vector<GpuInfo> gpus_;
};

}  // namespace corral::agent
