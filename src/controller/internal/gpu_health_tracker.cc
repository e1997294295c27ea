#include "controller/internal/gpu_health_tracker.h"

#include <algorithm>

namespace corral::controller::internal {
namespace {

bool HasStateProblem(const std::vector<api::GpuHealth>& problems, uint32_t gpu) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const api::GpuHealth& p) { return p.gpu == gpu && !p.latched; });
}

const std::vector<api::GpuHealth> kNoProblems;
const std::string kNoProblem;

}  // namespace

std::string GpuHealthTracker::ReasonOf(const std::vector<api::GpuHealth>& problems, uint32_t gpu) {
  std::string r;
  for (const auto& p : problems) {
    if (p.gpu == gpu) r += (r.empty() ? "" : "; ") + p.reason;
  }
  return r;
}

HealthChange GpuHealthTracker::Apply(const Node& node, const api::HeartbeatRequest& request) {
  NodeHealth& h = nodes_[node.inventory.name];
  HealthChange change;
  GpuSet known;
  for (const auto& g : node.inventory.gpus) known.insert(g.index);
  for (const auto& p : request.gpu_problems) {
    if (known.contains(p.gpu)) change.problems.push_back(p);
  }
  GpuSet failing;
  for (const auto& p : change.problems) failing.insert(p.gpu);

  // GPUs an operator resumed: their latched problems are ignored until the agent has dropped
  // them; a state problem fails the GPU again.
  for (uint32_t g : h.clearing.ToVector()) {
    if (!failing.contains(g)) {
      h.clearing.erase(g);
    } else if (HasStateProblem(change.problems, g)) {
      h.clearing.erase(g);
    } else {
      failing.erase(g);
    }
  }
  change.failed = failing - node.failed_gpus;
  if (request.auto_resume) change.passing = node.failed_gpus - failing - h.clearing;
  // A node-level problem drains the node (unless an operator drained it already).
  if (!request.node_problem.empty() && !node.drain) {
    change.drain = std::string(kHealthDrainPrefix) + request.node_problem;
  } else if (request.node_problem.empty() && request.auto_resume && node.drain &&
             node.reason.rfind(kHealthDrainPrefix, 0) == 0) {
    change.undrain = true;
  }
  h.problems = change.problems;
  h.node_problem = request.node_problem;
  change.clear_gpus = h.clearing.ToVector();
  return change;
}

const std::vector<api::GpuHealth>& GpuHealthTracker::problems(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? kNoProblems : it->second.problems;
}

const std::string& GpuHealthTracker::node_problem(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? kNoProblem : it->second.node_problem;
}

Status GpuHealthTracker::CheckResumable(const std::string& node, uint32_t gpu) const {
  const auto& p = problems(node);
  if (!HasStateProblem(p, gpu)) return {};
  return FailedPrecondition("node " + node + " gpu " + std::to_string(gpu) +
                            ": still fails its checks: " + ReasonOf(p, gpu));
}

void GpuHealthTracker::Resume(const std::string& node, uint32_t gpu) {
  nodes_[node].clearing.insert(gpu);
}

GpuSet GpuHealthTracker::ResumeAll(const std::string& node, GpuSet failed) {
  NodeHealth& h = nodes_[node];
  GpuSet resumed;
  for (uint32_t g : failed.ToVector()) {
    if (HasStateProblem(h.problems, g)) continue;  // stays out: its checks still fail
    resumed.insert(g);
    h.clearing.insert(g);
  }
  return resumed;
}

}  // namespace corral::controller::internal
