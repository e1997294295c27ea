// Controller: node agents' registrations and heartbeats (liveness, reconciliation of what
// runs where, health reports), and the operators' requests about nodes (drain, resume,
// returning GPUs to service, fault injection). See controller.h.
#include <algorithm>
#include <set>

#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "core/log.h"

namespace corral::controller {
namespace {

using internal::ControllerState;
using internal::JobEntry;
using internal::NodeEntry;

// The runs `running` that `node`'s agent reports and the controller does not know as
// running under that generation (on that node, when `on_node`): to be killed. Fills
// `reported` with every (job, generation) reported.
std::vector<api::RunningJobRef> UnknownRuns(const ControllerState& s,
                                            const std::vector<api::RunningJobRef>& running,
                                            const std::string& node, bool on_node,
                                            std::set<std::pair<uint64_t, uint64_t>>* reported) {
  std::vector<api::RunningJobRef> kill;
  for (const auto& ref : running) {
    reported->insert({ref.job.value, ref.generation.value});
    const JobEntry* e = s.jobs.Find(ref.job);
    bool known = e != nullptr && e->job.state == JobState::kRunning &&
                 e->job.allocation.generation == ref.generation;
    if (known && on_node) {
      std::vector<std::string> names = e->job.allocation.NodeNames();
      known = std::find(names.begin(), names.end(), node) != names.end();
    }
    if (!known) kill.push_back(ref);
  }
  return kill;
}

// Applies the health report of `request` to node `n` (internal/gpu_health_tracker.h).
void ApplyHealth(ControllerState& s, NodeEntry& n, const api::HeartbeatRequest& request,
                 api::HeartbeatResponse* response) {
  const std::string& name = n.node.inventory.name;
  internal::HealthChange change = s.health.Apply(n.node, request);
  if (!change.failed.empty()) {
    n.node.failed_gpus = n.node.failed_gpus | change.failed;
    for (uint32_t g : change.failed.ToVector()) {
      CORRAL_LOG(Warn) << "node " << name << ": gpu " << g << " out of service: "
                       << internal::GpuHealthTracker::ReasonOf(change.problems, g);
    }
    s.nodes.Put(n);
    s.out.MarkDirty();
    s.lifecycle.FailJobsOnGpus(n, change.failed, change.problems);
  }
  if (!change.passing.empty()) {
    n.node.failed_gpus = n.node.failed_gpus - change.passing;
    CORRAL_LOG(Info) << "node " << name << ": gpus " << change.passing.ToString()
                     << " pass their checks again: back in service (auto_resume)";
    s.nodes.Put(n);
    s.out.MarkDirty();
  }
  // A node-level problem drains the node (unless an operator drained it already).
  if (!change.drain.empty()) {
    internal::NodeTable::SetDrain(n, change.drain, s.clock.Now());
    CORRAL_LOG(Warn) << "node " << name << ": draining: " << n.node.reason;
    s.nodes.Put(n);
    s.out.MarkDirty();
  } else if (change.undrain) {
    CORRAL_LOG(Info) << "node " << name << ": health checks pass again: resumed (auto_resume)";
    internal::NodeTable::ClearDrain(n);
    s.nodes.Put(n);
    s.out.MarkDirty();
  }
  response->clear_gpus = std::move(change.clear_gpus);
}

}  // namespace

Result<api::RegisterResponse> Controller::Register(const api::RegisterRequest& request) {
  ControllerState& s = *s_;
  const NodeInventory& inv = request.inventory;
  CORRAL_RETURN_IF_ERROR(internal::NodeTable::ValidateInventory(inv));
  NodeEntry& n = s.nodes.Register(inv, s.clock.Now(), s.clock.MonotonicNow());

  // Reconcile: what the agent runs versus what we believe runs there. The batch host runs
  // the batch script; any node of the allocation may run step tasks.
  api::RegisterResponse response;
  response.node_id = n.node.id;
  response.heartbeat_interval = s.config.heartbeat_interval;
  response.cluster_name = s.config.cluster_name;
  std::set<std::pair<uint64_t, uint64_t>> reported;
  response.kill = UnknownRuns(s, request.running, inv.name, /*on_node=*/true, &reported);
  for (JobId id : std::vector<JobId>(n.jobs.begin(), n.jobs.end())) {
    JobEntry& e = *s.jobs.Find(id);
    if (e.job.state != JobState::kRunning) continue;
    if (e.job.allocation.nodes.front().node_name != inv.name) continue;  // batch step elsewhere
    if (!reported.contains({id.value, e.job.allocation.generation.value})) {
      s.lifecycle.FailLost(e, "lost when node " + inv.name + "'s agent restarted");
    }
  }
  s.nodes.Put(n);
  s.out.MarkDirty();
  return response;
}

Result<api::HeartbeatResponse> Controller::Heartbeat(const api::HeartbeatRequest& request) {
  ControllerState& s = *s_;
  NodeEntry* n = s.nodes.Find(request.node);
  api::HeartbeatResponse response;
  if (n == nullptr || !n->node.registered) {
    response.reregister = true;
    return response;
  }
  MonoTime now = s.clock.MonotonicNow();
  s.gpu_stats.Observe(request.node, request.gpu_samples);
  if (s.nodes.Heartbeat(*n, s.clock.Now(), now)) {
    // Back from DOWN without a restart (a network partition healed). Its jobs were failed or
    // requeued when it went down; the kill list below stops whatever still runs there.
    s.nodes.Put(*n);
    s.out.MarkDirty();
    CORRAL_LOG(Info) << "node " << request.node << " is responding again";
  }
  std::set<std::pair<uint64_t, uint64_t>> reported;
  response.kill = UnknownRuns(s, request.running, request.node, /*on_node=*/false, &reported);
  // A job whose launch the agent accepted a while ago but that it no longer reports is lost.
  // (Agents keep reporting a job until its exit event is acknowledged, so this is no race
  // with the exit report.)
  Duration grace = 2 * s.config.heartbeat_interval;
  for (JobId id : std::vector<JobId>(n->jobs.begin(), n->jobs.end())) {
    JobEntry& e = *s.jobs.Find(id);
    if (e.job.state != JobState::kRunning || !e.launch_accepted) continue;
    if (e.job.allocation.nodes.front().node_name != request.node) continue;
    if (now - e.launch_sent < grace) continue;
    if (!reported.contains({id.value, e.job.allocation.generation.value})) {
      s.lifecycle.FailLost(e, "no longer reported by node " + request.node);
    }
  }
  ApplyHealth(s, *n, request, &response);
  return response;
}

Status Controller::Drain(const api::Identity& who, const std::string& node,
                         const std::string& reason) {
  CORRAL_RETURN_IF_ERROR(api::Authorize(who, api::Action::kDrainNode, {.node = node}));
  if (reason.empty()) return InvalidArgument("reason: a reason is required to drain a node");
  CORRAL_ASSIGN_OR_RETURN(NodeEntry * n, s_->nodes.Get(node));
  internal::NodeTable::SetDrain(*n, reason, s_->clock.Now());
  s_->nodes.Put(*n);
  s_->out.MarkDirty();
  return {};
}

Status Controller::Resume(const api::Identity& who, const std::string& node) {
  CORRAL_RETURN_IF_ERROR(api::Authorize(who, api::Action::kResumeNode, {.node = node}));
  CORRAL_ASSIGN_OR_RETURN(NodeEntry * n, s_->nodes.Get(node));
  internal::NodeTable::ClearDrain(*n);
  // Failed GPUs return to service too, except those whose checks still fail.
  n->node.failed_gpus = n->node.failed_gpus - s_->health.ResumeAll(node, n->node.failed_gpus);
  s_->nodes.Put(*n);
  s_->out.MarkDirty();
  return {};
}

Status Controller::ResumeGpu(const api::Identity& who, const std::string& node, uint32_t gpu) {
  CORRAL_RETURN_IF_ERROR(api::Authorize(who, api::Action::kResumeGpu, {.node = node}));
  CORRAL_ASSIGN_OR_RETURN(NodeEntry * n, s_->nodes.Get(node));
  bool exists = std::any_of(n->node.inventory.gpus.begin(), n->node.inventory.gpus.end(),
                            [&](const GpuInfo& g) { return g.index == gpu; });
  if (!exists) return NotFound("node " + node + ": no gpu " + std::to_string(gpu));
  if (!n->node.failed_gpus.contains(gpu)) {
    return FailedPrecondition("node " + node + " gpu " + std::to_string(gpu) +
                              ": already in service");
  }
  CORRAL_RETURN_IF_ERROR(s_->health.CheckResumable(node, gpu));
  n->node.failed_gpus.erase(gpu);
  s_->health.Resume(node, gpu);
  CORRAL_LOG(Info) << "node " << node << ": gpu " << gpu << " resumed by " << who.user;
  s_->nodes.Put(*n);
  s_->out.MarkDirty();
  return {};
}

Result<AgentAddress> Controller::InjectTarget(const api::Identity& who,
                                              const std::string& node) const {
  CORRAL_RETURN_IF_ERROR(api::Authorize(who, api::Action::kConfigure, {.node = node}));
  CORRAL_ASSIGN_OR_RETURN(const NodeEntry* n, s_->nodes.Get(node));
  if (!n->node.responding) return Unavailable("node " + node + ": not responding");
  return internal::AddressOf(n->node);
}

Result<Controller::RunNodes> Controller::JobRunNodes(const api::Identity& who, JobId id,
                                                    api::Action action) const {
  CORRAL_ASSIGN_OR_RETURN(const JobEntry* e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(internal::AuthorizeJob(who, action, e->job));
  CORRAL_RETURN_IF_ERROR(internal::CheckRunning(e->job));
  RunNodes out{.generation = e->job.allocation.generation,
               .uid = e->job.spec.uid,
               .gid = e->job.spec.gid};
  for (const NodeAllocation& a : e->job.allocation.nodes) {
    const NodeEntry* n = s_->nodes.Find(a.node_name);
    if (n == nullptr || !n->node.responding) {
      out.unreachable.push_back(a.node_name);
      continue;
    }
    out.agents.push_back(internal::AddressOf(n->node));
  }
  return out;
}

}  // namespace corral::controller
