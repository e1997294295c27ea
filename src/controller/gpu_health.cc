// The controller's side of per-GPU health (docs/agent.md, "Health checks"): agents report the
// failing checks of their GPUs and node in every heartbeat; a GPU that fails is taken out of
// service (`Node::failed_gpus`, durable), the jobs on it are stopped as a preemption stops
// its victims (`SignalCheckpointAndStop`: their checkpoint signal, then a requeue when
// requeueable, else NODE_FAIL); a node-level problem drains the node; an operator (or the
// agent's auto-resume policy) returns GPUs to service.
#include <signal.h>

#include <algorithm>

#include "controller/controller.h"
#include "core/log.h"

namespace corral::controller {
namespace {

// The longest a job on a failed GPU is given to checkpoint after its signal.
constexpr Duration kMaxCheckpointGrace = Seconds(600);
// A job without a checkpoint signal gets SIGTERM and this long to exit (the agent's default
// `kill_grace`) before it is stopped.
constexpr Duration kTermGrace = Seconds(30);
constexpr std::string_view kHealthDrainPrefix = "health: ";

bool HasStateProblem(const std::vector<api::GpuHealth>& problems, uint32_t gpu) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const api::GpuHealth& p) { return p.gpu == gpu && !p.latched; });
}

std::string ReasonOf(const std::vector<api::GpuHealth>& problems, uint32_t gpu) {
  std::string r;
  for (const auto& p : problems) {
    if (p.gpu == gpu) r += (r.empty() ? "" : "; ") + p.reason;
  }
  return r;
}

}  // namespace

void Controller::ApplyHealth(NodeEntry& n, const api::HeartbeatRequest& request,
                             api::HeartbeatResponse* response) {
  const std::string& name = n.node.inventory.name;
  GpuSet known;
  for (const auto& g : n.node.inventory.gpus) known.insert(g.index);
  std::vector<api::GpuHealth> problems;
  for (const auto& p : request.gpu_problems) {
    if (known.contains(p.gpu)) problems.push_back(p);
  }
  GpuSet failing;
  for (const auto& p : problems) failing.insert(p.gpu);

  // GPUs an operator resumed: their latched problems are ignored until the agent has dropped
  // them; a state problem fails the GPU again.
  for (uint32_t g : n.clearing.ToVector()) {
    if (!failing.contains(g)) {
      n.clearing.erase(g);
    } else if (HasStateProblem(problems, g)) {
      n.clearing.erase(g);
    } else {
      failing.erase(g);
    }
  }
  GpuSet newly = failing - n.node.failed_gpus;
  if (!newly.empty()) {
    n.node.failed_gpus = n.node.failed_gpus | newly;
    for (uint32_t g : newly.ToVector()) {
      CORRAL_LOG(Warn) << "node " << name << ": gpu " << g
                       << " out of service: " << ReasonOf(problems, g);
    }
    PutNode(n);
    MarkDirty();
    FailJobsOnGpus(n, newly, problems);
  }
  if (request.auto_resume) {
    GpuSet passing = n.node.failed_gpus - failing - n.clearing;
    if (!passing.empty()) {
      n.node.failed_gpus = n.node.failed_gpus - passing;
      CORRAL_LOG(Info) << "node " << name << ": gpus " << passing.ToString()
                       << " pass their checks again: back in service (auto_resume)";
      PutNode(n);
      MarkDirty();
    }
  }
  // A node-level problem drains the node (unless an operator drained it already).
  if (!request.node_problem.empty() && !n.node.drain) {
    n.node.drain = true;
    n.node.reason = std::string(kHealthDrainPrefix) + request.node_problem;
    n.node.reason_time = clock_.Now();
    CORRAL_LOG(Warn) << "node " << name << ": draining: " << n.node.reason;
    PutNode(n);
    MarkDirty();
  } else if (request.node_problem.empty() && request.auto_resume && n.node.drain &&
             n.node.reason.rfind(kHealthDrainPrefix, 0) == 0) {
    CORRAL_LOG(Info) << "node " << name << ": health checks pass again: resumed (auto_resume)";
    n.node.drain = false;
    n.node.reason.clear();
    n.node.reason_time = {};
    PutNode(n);
    MarkDirty();
  }
  n.gpu_problems = std::move(problems);
  n.node_problem = request.node_problem;
  response->clear_gpus = n.clearing.ToVector();
}

void Controller::FailJobsOnGpus(NodeEntry& n, GpuSet gpus,
                                const std::vector<api::GpuHealth>& problems) {
  const std::string& name = n.node.inventory.name;
  for (JobId id : std::vector<JobId>(n.jobs.begin(), n.jobs.end())) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.job.state != JobState::kRunning) continue;
    JobEntry& e = it->second;
    GpuSet hit;
    for (const auto& na : e.job.allocation.nodes) {
      if (na.node_name == name) hit = na.gpus & gpus;
    }
    if (hit.empty()) continue;
    std::string failure = "node " + name;
    for (uint32_t g : hit.ToVector()) {
      std::string why = ReasonOf(problems, g);
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
    Status s = SignalCheckpointAndStop(id, grace, action, reason, SIGTERM);
    if (!s) CORRAL_LOG(Warn) << "job " << id.ToString() << ": " << s.error().message;
  }
}

bool Controller::HandleGpuFailedExit(JobEntry& e, const api::JobEvent& ev,
                                     const std::string& node) {
  if (ev.gpu_failure.empty() || e.cancel_requested) return false;
  std::string failure = "node " + node + " " + ev.gpu_failure;
  if (e.job.spec.requeue) {
    RequeueJob(e, "GPU failure, requeued: " + failure);
  } else {
    FinishJob(e, JobState::kNodeFail, "GPU failure: " + failure);
  }
  return true;
}

void Controller::RemarkGpuFailures() {
  for (auto& [name, n] : nodes_) {
    if (!n.node.failed_gpus.empty()) FailJobsOnGpus(n, n.node.failed_gpus, {});
  }
}

Status Controller::ResumeGpu(const api::Identity& who, const std::string& node, uint32_t gpu) {
  if (!IsAdmin(who)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "resume-gpu: " + who.user + " is not an administrator");
  }
  NodeEntry* n = FindNode(node);
  if (n == nullptr) return NotFound("node \"" + node + "\": no such node");
  bool exists = std::any_of(n->node.inventory.gpus.begin(), n->node.inventory.gpus.end(),
                            [&](const GpuInfo& g) { return g.index == gpu; });
  if (!exists) return NotFound("node " + node + ": no gpu " + std::to_string(gpu));
  if (!n->node.failed_gpus.contains(gpu)) {
    return FailedPrecondition("node " + node + " gpu " + std::to_string(gpu) +
                              ": already in service");
  }
  if (HasStateProblem(n->gpu_problems, gpu)) {
    return FailedPrecondition("node " + node + " gpu " + std::to_string(gpu) +
                              ": still fails its checks: " + ReasonOf(n->gpu_problems, gpu));
  }
  n->node.failed_gpus.erase(gpu);
  n->clearing.insert(gpu);
  CORRAL_LOG(Info) << "node " << node << ": gpu " << gpu << " resumed by " << who.user;
  PutNode(*n);
  MarkDirty();
  return {};
}

void Controller::ResumeGpus(NodeEntry& n) {
  for (uint32_t g : n.node.failed_gpus.ToVector()) {
    if (HasStateProblem(n.gpu_problems, g)) continue;  // stays out: its checks still fail
    n.node.failed_gpus.erase(g);
    n.clearing.insert(g);
  }
}

Result<AgentAddress> Controller::InjectTarget(const api::Identity& who,
                                              const std::string& node) const {
  if (!IsAdmin(who)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "inject: " + who.user + " is not an administrator");
  }
  const NodeEntry* n = FindNode(node);
  if (n == nullptr) return NotFound("node \"" + node + "\": no such node");
  if (!n->node.responding) return Unavailable("node " + node + ": not responding");
  return AgentAddress{n->node.inventory.name, n->node.inventory.address};
}

}  // namespace corral::controller
