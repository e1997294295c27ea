#include "controller/internal/job_lifecycle.h"

#include <signal.h>

#include <algorithm>

#include "core/check.h"
#include "core/hostlist.h"
#include "core/log.h"

namespace corral::controller::internal {
namespace {

// The longest a job on a failed GPU is given to checkpoint after its signal.
constexpr Duration kMaxCheckpointGrace = Seconds(600);
// A job without a checkpoint signal gets SIGTERM and this long to exit (the agent's default
// `kill_grace`) before it is stopped.
constexpr Duration kTermGrace = Seconds(30);

// A new run is not suspended (`scontrol suspend` acts on one run).
void ResetSuspension(Allocation& a) {
  a.suspended = false;
  a.suspend_time = {};
  a.suspended_for = Duration(0);
  a.pre_suspend = Duration(0);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Start, end, requeue, cancel

void JobLifecycle::Start(JobEntry& e, const sched::Placement& placement) {
  jobs_.SetState(e, JobState::kRunning);
  e.job.reason = "None";
  e.job.partition = placement.partition;
  e.job.start_time = clock_.Now();
  e.job.end_time = {};
  e.job.exit_code = 0;
  e.job.exit_signal = 0;
  e.job.allocation.generation = jobs_.AllocateGeneration();
  ResetSuspension(e.job.allocation);
  e.job.trace.ClearRun();
  e.job.trace.scheduled = e.job.start_time;
  // Nodes in host-list order (as Slurm keeps them): the first is the batch host.
  std::vector<std::string> names;
  for (const auto& na : placement.nodes) names.push_back(na.node_name);
  names = SortHostNames(std::move(names));
  e.job.allocation.nodes.clear();
  for (const auto& name : names) {
    for (const auto& na : placement.nodes) {
      if (na.node_name == name) e.job.allocation.nodes.push_back(na);
    }
  }
  e.cancel_requested = false;
  e.launch_accepted = false;
  e.launch_sent = clock_.MonotonicNow();
  e.reason_detail.clear();
  for (const auto& na : placement.nodes) {
    NodeEntry* n = nodes_.Find(na.node_name);
    CORRAL_CHECK(n != nullptr) << "placement on unknown node " << na.node_name;
    NodeTable::AddJob(*n, e.job.id, na, e.job.spec.resources.exclusive);
  }
  jobs_.Put(e);
  SendLaunch(e);
}

void JobLifecycle::SendLaunch(const JobEntry& e) {
  // The batch host: the first node in host-list order (the placement may list them otherwise).
  const NodeEntry* batch = nodes_.Find(e.job.allocation.nodes.front().node_name);
  out_.Send(batch->node, api::LaunchRequest{.job = e.job});
}

void JobLifecycle::Release(JobEntry& e) {
  // A job stops holding its resources: charge its usage up to now.
  if (e.job.state == JobState::kRunning && !e.job.allocation.nodes.empty()) {
    usage_.ChargeEnded(snapshots_.RunningView(e), clock_.Now());
  }
  steps_.EndStepsOfJob(e.job.id, "job " + e.job.id.ToString() + " ended");
  stops_.Forget(e.job.id);
  for (const auto& na : e.job.allocation.nodes) {
    NodeEntry* n = nodes_.Find(na.node_name);
    if (n != nullptr) NodeTable::RemoveJob(*n, e.job.id, na, e.job.spec.resources.exclusive);
  }
  out_.MarkDirty();
}

void JobLifecycle::Finish(JobEntry& e, JobState state, const std::string& reason) {
  CORRAL_CHECK(CheckTransition(e.job.state, state).has_value())
      << "job " << e.job.id.ToString() << ": " << JobStateName(e.job.state) << " -> "
      << JobStateName(state);
  Release(e);
  jobs_.SetState(e, state);
  e.job.reason = reason;
  e.job.end_time = clock_.Now();
  e.cancel_requested = false;
  jobs_.Put(e);
  budgets_.Ended(e.job, e.job.end_time);
}

void JobLifecycle::Requeue(JobEntry& e, const std::string& reason) {
  if (e.job.state == JobState::kRunning) Release(e);
  jobs_.SetState(e, JobState::kPending);
  e.job.reason = reason;
  e.job.restart_count += 1;
  e.job.start_time = {};
  e.job.end_time = {};
  e.job.allocation.nodes.clear();
  ResetSuspension(e.job.allocation);
  // A new run number at once, whatever asked for the requeue (a command, a lost node, a
  // preemption, a failed GPU, the waste policy): nothing of the old run (its job credential,
  // a late report, a step) is current while the job waits, and its next start takes another.
  e.job.allocation.generation = jobs_.AllocateGeneration();
  e.cancel_requested = false;
  e.launch_accepted = false;
  jobs_.Put(e);
  out_.MarkDirty();
}

void JobLifecycle::Cancel(JobEntry& e, const std::string& by) {
  if (e.job.state == JobState::kPending) {
    jobs_.SetState(e, JobState::kCancelled);
    e.job.end_time = clock_.Now();
    e.job.reason = "cancelled by " + by;
    jobs_.Put(e);
    out_.MarkDirty();
    return;
  }
  // Running: the agent kills the process group and reports the exit.
  if (!e.cancel_requested) {
    e.cancel_requested = true;
    e.job.reason = std::string(kCancelRequested);
    jobs_.Put(e);
  }
  const NodeEntry* batch = nodes_.Find(e.job.allocation.nodes.front().node_name);
  if (batch == nullptr || !batch->node.responding) {
    Finish(e, JobState::kCancelled, "cancelled by " + by);
    return;
  }
  SendCancel(e);
}

void JobLifecycle::FailLost(JobEntry& e, const std::string& reason) {
  if (e.cancel_requested) {
    Finish(e, JobState::kCancelled, "cancelled; " + reason);
  } else if (e.job.spec.requeue) {
    Requeue(e, "NodeFail requeued: " + reason);
  } else {
    Finish(e, JobState::kNodeFail, reason);
  }
}

void JobLifecycle::FailJobsOn(const NodeEntry& n, const std::string& reason) {
  const std::string name = n.node.inventory.name;
  std::vector<JobId> ids(n.jobs.begin(), n.jobs.end());
  for (JobId id : ids) {
    JobEntry& e = *jobs_.Find(id);
    if (e.job.state != JobState::kRunning) continue;
    // The batch step may run on another, healthy node: stop it there.
    const std::string& batch_host = e.job.allocation.nodes.front().node_name;
    if (batch_host != name) SendCancel(e);
    FailLost(e, "node " + name + " " + reason);
  }
}

// ---------------------------------------------------------------------------------------------
// Commands to agents

void JobLifecycle::SendCancel(const JobEntry& e) {
  const NodeEntry* batch = nodes_.Find(e.job.allocation.nodes.front().node_name);
  if (batch == nullptr) return;
  out_.Send(batch->node, api::CancelRequest{e.job.id, e.job.allocation.generation});
}

void JobLifecycle::SendTimeLimit(const JobEntry& e) {
  // Every node of the allocation: the batch host runs the script, any node may run step
  // tasks (now or later: a later step's launch carries the new limit, and the per-node order
  // of commands keeps an earlier launch before this update).
  // The limit counts from the run's start, so the time spent suspended is added (and none is
  // enforced while it is suspended).
  if (e.job.time_limit.count() <= 0) return;  // none recorded: nothing to enforce
  for (const auto& na : e.job.allocation.nodes) {
    const NodeEntry* n = nodes_.Find(na.node_name);
    if (n == nullptr) continue;
    out_.Send(n->node, api::TimeLimitRequest{e.job.id, e.job.allocation.generation,
                                             RunDeadlineLimit(e.job)});
  }
}

void JobLifecycle::SignalEverywhere(const JobEntry& e, int signal, bool batch_only,
                                    bool suspend) {
  const std::string& batch_host = e.job.allocation.nodes.front().node_name;
  const Generation gen = e.job.allocation.generation;
  if (const NodeEntry* batch = nodes_.Find(batch_host)) {
    // The batch host's agent signals the batch script and, unless `batch_only`, the job's
    // step tasks it runs.
    out_.Send(batch->node, api::SignalRequest{e.job.id, gen, signal, batch_only, suspend});
  }
  if (batch_only) return;
  std::set<std::string> nodes = steps_.LiveNodes(e.job.id, gen);
  nodes.erase(batch_host);
  for (const auto& name : nodes) {
    const NodeEntry* n = nodes_.Find(name);
    if (n == nullptr || !n->node.responding) continue;
    out_.Send(n->node, api::StepSignalRequest{e.job.id, gen, kAllSteps, signal, suspend});
  }
}

// ---------------------------------------------------------------------------------------------
// Stops: checkpoint signal, grace time, then the stop's action

void JobLifecycle::SignalCheckpointAndStop(JobEntry& e, Duration grace, StopAction action,
                                           const std::string& reason, int fallback_signal) {
  if (stops_.Find(e.job.id, e.job.allocation.generation) != nullptr) {
    return;  // already signalled; the first deadline stands
  }
  SignalSpec sig = e.job.spec.signal;
  if (sig.signal == 0) sig = {.signal = fallback_signal};
  if (sig.signal == 0 || grace <= Duration(0)) {
    StopNow(e, action, reason);
    return;
  }
  SignalEverywhere(e, sig.signal, sig.batch_only);
  stops_.Start(e.job.id, PendingStop{.generation = e.job.allocation.generation,
                                     .deadline = clock_.MonotonicNow() + grace,
                                     .action = action,
                                     .reason = reason});
}

void JobLifecycle::StopNow(JobEntry& e, StopAction action, const std::string& reason) {
  if (e.job.state != JobState::kRunning) return;
  if (action == StopAction::kRequeue) {
    SendCancel(e);  // the old generation's exit report will be stale and ignored
    Requeue(e, reason);
    return;
  }
  if (action == StopAction::kNodeFail) {
    CORRAL_LOG(Info) << "job " << e.job.id.ToString() << ": ending NODE_FAIL: " << reason;
    SendCancel(e);
    Finish(e, JobState::kNodeFail, reason);
    return;
  }
  // As a cancel by the controller itself (which a restarted controller recovers too).
  CORRAL_LOG(Info) << "job " << e.job.id.ToString() << ": cancelling: " << reason;
  Cancel(e, "corral");
}

void JobLifecycle::CheckpointAcknowledged(JobEntry& e) {
  std::optional<PendingStop> p = stops_.Take(e.job.id, e.job.allocation.generation);
  if (!p) return;
  CORRAL_LOG(Info) << "job " << e.job.id.ToString() << ": checkpoint acknowledged; stopping it now";
  StopNow(e, p->action, p->reason);
}

void JobLifecycle::RunDueStops() {
  for (auto& [id, p] : stops_.TakeDue(clock_.MonotonicNow())) {
    JobEntry* e = jobs_.Find(id);
    if (e == nullptr || e->job.state != JobState::kRunning ||
        e->job.allocation.generation != p.generation) {
      continue;
    }
    StopNow(*e, p.action, p.reason);
  }
}

bool JobLifecycle::HandleStoppedExit(JobEntry& e, const api::JobEvent& ev) {
  if (e.cancel_requested) return false;
  std::optional<PendingStop> p = stops_.Take(e.job.id, ev.generation);
  if (!p) return false;
  CORRAL_LOG(Info) << "job " << e.job.id.ToString() << ": exited while being stopped (" << p->reason
                   << ")";
  switch (p->action) {
    case StopAction::kRequeue:
      Requeue(e, p->reason);
      break;
    case StopAction::kCancel:
      Finish(e, JobState::kCancelled, p->reason);
      break;
    case StopAction::kNodeFail:
      Finish(e, JobState::kNodeFail, p->reason);
      break;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// GPU failures (docs/agent.md, "Health checks")

void JobLifecycle::FailJobsOnGpus(const NodeEntry& n, GpuSet gpus,
                                  const std::vector<api::GpuHealth>& problems) {
  const std::string name = n.node.inventory.name;
  for (JobId id : std::vector<JobId>(n.jobs.begin(), n.jobs.end())) {
    JobEntry* found = jobs_.Find(id);
    if (found == nullptr || found->job.state != JobState::kRunning) continue;
    JobEntry& e = *found;
    GpuSet hit;
    for (const auto& na : e.job.allocation.nodes) {
      if (na.node_name == name) hit = na.gpus & gpus;
    }
    if (hit.empty()) continue;
    std::string failure = "node " + name;
    for (uint32_t g : hit.ToVector()) {
      std::string why = GpuHealthTracker::ReasonOf(problems, g);
      failure += " gpu " + std::to_string(g) + ": " + (why.empty() ? "out of service" : why);
    }
    // The job's checkpoint signal (`--signal`, its grace capped), else SIGTERM with the
    // agents' default kill grace; then a requeue, or NODE_FAIL: the hardware failed, not the
    // job. A run already being stopped keeps its first deadline.
    const SignalSpec& sig = e.job.spec.signal;
    Duration grace = sig.signal != 0
                         ? std::min(std::max(sig.before, Duration(0)), kMaxCheckpointGrace)
                         : kTermGrace;
    StopAction action = e.job.spec.requeue ? StopAction::kRequeue : StopAction::kNodeFail;
    CORRAL_LOG(Warn) << "job " << id.ToString() << ": " << failure << "; signal "
                     << (sig.signal != 0 ? sig.signal : SIGTERM) << ", then "
                     << (action == StopAction::kRequeue ? "requeue" : "NODE_FAIL") << " within "
                     << ToSecondsF(grace) << " s";
    std::string reason = action == StopAction::kRequeue ? "GPU failure, requeued: " + failure
                                                        : "GPU failure: " + failure;
    SignalCheckpointAndStop(e, grace, action, reason, SIGTERM);
  }
}

bool JobLifecycle::HandleGpuFailedExit(JobEntry& e, const api::JobEvent& ev,
                                       const std::string& node) {
  if (ev.gpu_failure.empty() || e.cancel_requested) return false;
  std::string failure = "node " + node + " " + ev.gpu_failure;
  if (e.job.spec.requeue) {
    Requeue(e, "GPU failure, requeued: " + failure);
  } else {
    Finish(e, JobState::kNodeFail, "GPU failure: " + failure);
  }
  return true;
}

}  // namespace corral::controller::internal
