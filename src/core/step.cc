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
  const std::string of_job = "job " + job.id.ToString();

  // Placement: the candidate nodes (from `relative`, less `exclude`), those `nodelist` names.
  auto index_of = [&](const std::string& name) -> int64_t {
    for (size_t i = 0; i < alloc.size(); ++i)
      if (alloc[i].node_name == name) return static_cast<int64_t>(i);
    return -1;
  };
  for (const std::string& name : spec.exclude) {
    if (index_of(name) < 0)
      return InvalidArgument("exclude: node " + name + " is not in " + of_job + "'s allocation");
  }
  if (spec.relative >= 0 && static_cast<uint32_t>(spec.relative) >= total) {
    return InvalidArgument("relative: node index " + std::to_string(spec.relative) + " is past " +
                           of_job + "'s " + std::to_string(total) + " nodes");
  }
  const uint32_t first = spec.relative >= 0 ? static_cast<uint32_t>(spec.relative) : 0;
  std::vector<bool> candidate(total, false), required(total, false);
  uint32_t candidates = 0;
  for (uint32_t i = first; i < total; ++i) {
    candidate[i] = std::find(spec.exclude.begin(), spec.exclude.end(), alloc[i].node_name) ==
                   spec.exclude.end();
    candidates += candidate[i] ? 1 : 0;
  }
  if (candidates == 0) {
    return InvalidArgument("exclude: --exclude/--relative leave none of " + of_job + "'s " +
                           std::to_string(total) + " nodes for the step");
  }
  uint32_t required_count = 0;
  for (const std::string& name : spec.nodelist) {
    int64_t i = index_of(name);
    if (i < 0)
      return InvalidArgument("nodelist: node " + name + " is not in " + of_job + "'s allocation");
    if (!candidate[i]) {
      return InvalidArgument("nodelist: node " + name + " is excluded (--exclude, or before " +
                             "node index " + std::to_string(first) + " of --relative)");
    }
    if (!required[i]) ++required_count;
    required[i] = true;
  }
  if (spec.nodes > candidates) {
    return InvalidArgument("nodes: " + std::to_string(spec.nodes) + " requested, but " + of_job +
                           (candidates == total ? " holds only " : " has only ") +
                           std::to_string(candidates) +
                           (candidates == total ? "" : " nodes left by --exclude/--relative"));
  }
  if (spec.nodes > 0 && spec.nodes < required_count) {
    return InvalidArgument("nodes: " + std::to_string(spec.nodes) + " nodes are fewer than the " +
                           std::to_string(required_count) + " of --nodelist");
  }
  // 1-2. Task and node counts.
  uint32_t nodes = spec.nodes != 0 ? spec.nodes : required_count;
  uint32_t ntasks = spec.ntasks;
  if (nodes == 0 && ntasks > 0 && tpn > 0) nodes = std::min(candidates, (ntasks + tpn - 1) / tpn);
  if (ntasks == 0) {
    uint32_t n = nodes == 0 ? candidates : nodes;
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
  if (nodes == 0) nodes = std::min(candidates, ntasks);
  // The step's nodes: every required one, then the first other candidates, in allocation order.
  std::vector<uint32_t> chosen;
  for (uint32_t i = 0, extra = nodes - required_count; i < total; ++i) {
    if (required[i]) {
      chosen.push_back(i);
    } else if (candidate[i] && extra > 0) {
      chosen.push_back(i);
      --extra;
    }
  }
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
    const NodeAllocation& na = alloc[chosen[i]];
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
