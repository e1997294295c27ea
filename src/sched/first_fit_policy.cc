#include "sched/first_fit_policy.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace corral::sched {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// "a&b" / "a,b": every feature; "a|b": any of them. No brackets or counts here.
bool FeaturesMatch(const std::string& constraint, const std::vector<std::string>& features) {
  if (constraint.empty()) return true;
  bool any = constraint.find('|') != std::string::npos;
  size_t start = 0;
  bool all_ok = true;
  while (start <= constraint.size()) {
    size_t end = constraint.find_first_of("&,|", start);
    std::string f = constraint.substr(start, end == std::string::npos ? std::string::npos : end - start);
    bool has = Contains(features, f);
    if (any && has) return true;
    if (!has) all_ok = false;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return any ? false : all_ok;
}

GpuSet MatchingGpus(const NodeView& node, const std::string& type) {
  if (type.empty()) return node.usable_gpus;
  GpuSet out;
  for (const auto& g : node.gpus) {
    if (g.model == type && node.usable_gpus.contains(g.index)) out.insert(g.index);
  }
  return out;
}

bool InPartition(const Partition& p, const NodeView& n) {
  return p.nodes.empty() || Contains(p.nodes, n.name);
}

}  // namespace

bool FitsOnNode(const NodeView& node, const PerNodeDemand& demand, const ResourceRequest& request,
                NodeAllocation* out) {
  if (!node.schedulable || node.exclusive) return false;
  if (!request.exclude.empty() && Contains(request.exclude, node.name)) return false;
  if (!FeaturesMatch(request.constraint, node.features)) return false;
  GpuSet candidates = MatchingGpus(node, demand.gpu_type) - node.used_gpus;
  // `--mem=0`: the node's whole memory, so none of it may be in use.
  const uint64_t mem = MemoryOnNode(demand, node.mem_mb);
  if (demand.exclusive) {
    if (node.running_jobs > 0) return false;
    GpuSet all = MatchingGpus(node, demand.gpu_type);
    if (all.size() < demand.gpus || node.cpus < demand.cpus || node.mem_mb < mem) return false;
    out->node = node.id;
    out->node_name = node.name;
    out->cpus = node.cpus;
    out->mem_mb = node.mem_mb;
    // Without a GPU request an exclusive job gets every GPU of the node (as in Slurm).
    out->gpus = node.usable_gpus;
    return true;
  }
  if (node.cpus - std::min(node.cpus, node.used_cpus) < demand.cpus) return false;
  if (node.mem_mb - std::min(node.mem_mb, node.used_mem_mb) < mem) return false;
  if (candidates.size() < demand.gpus) return false;
  GpuSet chosen;
  for (uint32_t idx : candidates.ToVector()) {
    if (chosen.size() == demand.gpus) break;
    chosen.insert(idx);
  }
  out->node = node.id;
  out->node_name = node.name;
  out->cpus = demand.cpus;
  out->mem_mb = mem;
  out->gpus = chosen;
  return true;
}

Plan FirstFitPolicy::Decide(const ClusterSnapshot& snapshot, Timestamp /*now*/) {
  Plan plan;
  std::vector<NodeView> nodes = snapshot.nodes;  // working copy: usage grows as jobs are placed
  std::map<std::string, const Partition*> partitions;
  for (const auto& p : snapshot.partitions) partitions[p.name] = &p;

  std::vector<const PendingJobView*> order;
  order.reserve(snapshot.pending.size());
  for (const auto& j : snapshot.pending) order.push_back(&j);
  std::stable_sort(order.begin(), order.end(), [](const PendingJobView* a, const PendingJobView* b) {
    if (a->nice != b->nice) return a->nice < b->nice;
    return a->id < b->id;
  });

  for (const PendingJobView* job : order) {
    if (job->held_by_admin) {
      plan.pending.push_back({job->id, "JobHeldAdmin", "held by an administrator", {}});
      continue;
    }
    if (job->held) {
      plan.pending.push_back({job->id, "JobHeldUser", "held by its user", {}});
      continue;
    }
    PerNodeDemand demand = ComputePerNodeDemand(job->resources);
    bool placed = false;
    bool could_ever_fit = false;
    for (const std::string& pname : job->partitions) {
      auto it = partitions.find(pname);
      if (it == partitions.end() || !it->second->up) continue;
      const Partition& part = *it->second;
      // Would the job fit this partition if it were empty?
      uint32_t capable = 0;
      std::vector<size_t> chosen;
      std::vector<NodeAllocation> allocs;
      for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeView& n = nodes[i];
        if (!InPartition(part, n)) continue;
        NodeView empty = n;
        empty.used_cpus = 0;
        empty.used_mem_mb = 0;
        empty.used_gpus = GpuSet();
        empty.running_jobs = 0;
        empty.exclusive = false;
        empty.schedulable = true;
        NodeAllocation scratch;
        if (FitsOnNode(empty, demand, job->resources, &scratch)) ++capable;
        if (allocs.size() < job->resources.nodes) {
          NodeAllocation a;
          if (FitsOnNode(n, demand, job->resources, &a)) {
            chosen.push_back(i);
            allocs.push_back(std::move(a));
          }
        }
      }
      // -w: every listed node must be part of the allocation.
      bool nodelist_ok = true;
      for (const auto& want : job->resources.nodelist) {
        bool found = std::any_of(allocs.begin(), allocs.end(),
                                 [&](const NodeAllocation& a) { return a.node_name == want; });
        if (!found) nodelist_ok = false;
      }
      if (capable >= job->resources.nodes) could_ever_fit = true;
      if (allocs.size() == job->resources.nodes && nodelist_ok) {
        for (size_t k = 0; k < chosen.size(); ++k) {
          NodeView& n = nodes[chosen[k]];
          n.used_cpus += allocs[k].cpus;
          n.used_mem_mb += allocs[k].mem_mb;
          n.used_gpus = n.used_gpus | allocs[k].gpus;
          n.running_jobs += 1;
          if (demand.exclusive) n.exclusive = true;
        }
        plan.starts.push_back({job->id, pname, std::move(allocs)});
        placed = true;
        break;
      }
    }
    if (!placed) {
      if (could_ever_fit) {
        plan.pending.push_back({job->id, "Resources", "waiting for resources", {}});
      } else {
        plan.pending.push_back(
            {job->id, "PartitionConfig", "no node of its partitions can ever hold this job", {}});
      }
    }
  }
  return plan;
}

}  // namespace corral::sched
