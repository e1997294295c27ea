#include "core/step.h"

#include <algorithm>

namespace corral {

Result<StepLayout> PlanStep(const Job& job, const StepSpec& spec) {
  const auto& alloc = job.allocation.nodes;
  if (alloc.empty()) {
    return FailedPrecondition("job " + job.id.ToString() + ": has no allocation");
  }
  if (spec.argv.empty() || spec.argv[0].empty()) return InvalidArgument("argv: no program to run");
  const auto total = static_cast<uint32_t>(alloc.size());
  const ResourceRequest& jr = job.spec.resources;
  const uint32_t tpn = spec.ntasks_per_node;

  if (spec.nodes > total) {
    return InvalidArgument("nodes: " + std::to_string(spec.nodes) + " requested, but job " +
                           job.id.ToString() + " holds only " + std::to_string(total));
  }
  // 1-2. Task and node counts.
  uint32_t nodes = spec.nodes;
  uint32_t ntasks = spec.ntasks;
  if (nodes == 0 && ntasks > 0 && tpn > 0) nodes = std::min(total, (ntasks + tpn - 1) / tpn);
  if (ntasks == 0) {
    uint32_t n = nodes == 0 ? total : nodes;
    if (tpn > 0) {
      ntasks = tpn * n;
    } else if (n == total && jr.ntasks_per_node > 0) {
      ntasks = jr.ntasks_per_node * n;
    } else if (n == total && jr.ntasks > n) {
      ntasks = jr.ntasks;
    } else {
      ntasks = n;
    }
  }
  if (nodes == 0) nodes = std::min(total, ntasks);
  if (ntasks < nodes) {
    return InvalidArgument("ntasks: " + std::to_string(ntasks) + " tasks cannot run on " +
                           std::to_string(nodes) + " nodes (each node runs at least one)");
  }
  if (tpn > 0 && ntasks > tpn * nodes) {
    return InvalidArgument("ntasks: " + std::to_string(ntasks) + " tasks do not fit " +
                           std::to_string(nodes) + " nodes at " + std::to_string(tpn) +
                           " per node");
  }
  if (tpn > 0 && ntasks <= tpn * (nodes - 1)) {
    return InvalidArgument("nodes: " + std::to_string(nodes) + " nodes are more than " +
                           std::to_string(ntasks) + " tasks at " + std::to_string(tpn) +
                           " per node need");
  }

  // 3. Block distribution.
  StepLayout layout;
  layout.cpus_per_task =
      spec.cpus_per_task > 0 ? spec.cpus_per_task : std::max(1u, jr.cpus_per_task);
  uint32_t left = ntasks;
  for (uint32_t i = 0; i < nodes; ++i) {
    uint32_t count;
    if (tpn > 0) {
      count = std::min(tpn, left);
    } else {
      count = ntasks / nodes + (i < ntasks % nodes ? 1 : 0);
    }
    left -= count;
    const NodeAllocation& na = alloc[i];
    uint64_t cpus = static_cast<uint64_t>(count) * layout.cpus_per_task;
    if (!spec.overcommit && na.cpus > 0 && cpus > na.cpus) {
      return InvalidArgument("cpus_per_task: " + std::to_string(count) + " tasks x " +
                             std::to_string(layout.cpus_per_task) + " CPUs exceed the " +
                             std::to_string(na.cpus) + " CPUs job " + job.id.ToString() +
                             " holds on node " + na.node_name);
    }
    std::vector<uint32_t> gpus = na.gpus.ToVector();
    if (spec.gpus_per_task > 0 && static_cast<uint64_t>(count) * spec.gpus_per_task > gpus.size()) {
      return InvalidArgument("gpus_per_task: " + std::to_string(count) + " tasks x " +
                             std::to_string(spec.gpus_per_task) + " GPUs exceed the " +
                             std::to_string(gpus.size()) + " GPUs job " + job.id.ToString() +
                             " holds on node " + na.node_name);
    }
    layout.nodes.push_back(na.node_name);
    layout.tasks_per_node.push_back(count);
    for (uint32_t l = 0; l < count; ++l) {
      StepTask t;
      t.rank = static_cast<uint32_t>(layout.tasks.size());
      t.node_rank = i;
      t.local_rank = l;
      t.node = na.node_name;
      // 4. GPU binding.
      if (spec.gpus_per_task > 0) {
        for (uint32_t g = 0; g < spec.gpus_per_task; ++g)
          t.gpus.insert(gpus[l * spec.gpus_per_task + g]);
      } else {
        t.gpus = na.gpus;
      }
      layout.tasks.push_back(std::move(t));
    }
  }
  return layout;
}

uint32_t MasterPortCandidate(JobId job, uint32_t lo, uint32_t hi) {
  uint64_t span = static_cast<uint64_t>(hi) - lo + 1;
  return lo + static_cast<uint32_t>(job.value % span);
}

std::string RendezvousHost(const std::string& agent_url, const std::string& node_name) {
  std::string host = agent_url;
  if (auto scheme = host.find("://"); scheme != std::string::npos) host = host.substr(scheme + 3);
  host = host.substr(0, host.find('/'));
  if (!host.empty() && host.front() == '[') {
    host = host.substr(1, host.find(']') - 1);  // [v6]:port
  } else if (std::count(host.begin(), host.end(), ':') == 1) {
    host = host.substr(0, host.find(':'));
  }
  if (host.empty() || host == "0.0.0.0" || host == "::") return node_name;
  return host;
}

std::string CheckpointDirectory(const Job& job, const std::string& root) {
  std::string base = root;
  if (base.empty()) {
    base = job.spec.working_dir.empty() ? "/" : job.spec.working_dir;
    if (base.back() != '/') base += '/';
    base += ".corral/checkpoints";
  }
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + "/" + job.id.ToString();
}

}  // namespace corral
