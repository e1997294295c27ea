#include "sched/internal/partition_check.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "core/duration.h"
#include "sched/internal/explain.h"

namespace corral::sched::internal {

bool PartitionCheck::Check(const JobInfo& j, uint32_t p, std::vector<Blocker>* out) {
  const Partition& part = snap_.partitions[p];
  auto block = [&](const char* code, std::string detail, const char* resource = "",
                   int64_t limit = 0, int64_t requested = 0) {
    out->push_back({.code = code,
                    .detail = std::move(detail),
                    .scope = "partition",
                    .entity = part.name,
                    .resource = resource,
                    .limit = limit,
                    .requested = requested});
    return false;
  };
  if (!part.up) return block("PartitionDown", "partition " + part.name + " is down");
  if (!jobs_.MayUsePartition(p, j.account)) {
    return block("InvalidAccount",
                 "account " + j.view->account + " may not use partition " + part.name);
  }
  if (j.limit > part.max_time) {
    return block("PartitionTimeLimit",
                 "time limit " + FormatSlurmDuration(j.limit) + " exceeds partition " + part.name +
                     " max_time " + FormatSlurmDuration(part.max_time),
                 "time");
  }
  if (part.max_nodes_per_job > 0 && j.nodes > part.max_nodes_per_job) {
    return block("PartitionNodeLimit",
                 "job asks " + std::to_string(j.nodes) + " nodes, partition " + part.name +
                     " allows " + std::to_string(part.max_nodes_per_job),
                 "nodes", part.max_nodes_per_job, j.nodes);
  }
  if (part.max_gpus_per_job > 0 && j.gpus > part.max_gpus_per_job) {
    return block("PartitionConfig",
                 "job asks " + std::to_string(j.gpus) + " GPUs, partition " + part.name +
                     " allows " + std::to_string(part.max_gpus_per_job) + " per job",
                 "gpu", part.max_gpus_per_job, j.gpus);
  }
  if (j.shape < 0) {
    for (const std::string& name : j.view->resources.nodelist) {
      const int64_t n = nodes_.FindNode(name);
      if (n < 0 || !nodes_.InPartition(p, static_cast<uint32_t>(n))) {
        out->push_back({.code = "ReqNodeNotAvail",
                        .detail = "requested node " + name + " is not in partition " + part.name,
                        .scope = "node",
                        .entity = name});
        return false;
      }
    }
  }
  const Demand d = DemandFor(j, snap_.partitions[p]);
  bool missing = false;
  const uint32_t capable = CapableNodes(j, p, d, &missing);
  if (capable >= j.nodes) return true;
  const ResourceRequest& r = j.view->resources;
  if (missing && (!r.constraint.empty() || !r.gpu_type.empty())) {
    return block("BadConstraints",
                 "no node of partition " + part.name + " has" +
                     (r.gpu_type.empty() ? "" : " GPUs of type " + r.gpu_type) +
                     (!r.gpu_type.empty() && !r.constraint.empty() ? " and" : "") +
                     (r.constraint.empty() ? "" : " features " + r.constraint));
  }
  return block("PartitionConfig",
               j.nodes == 1
                   ? "no node of partition " + part.name + " can hold " + DemandUnit(j, d)
                   : "only " + std::to_string(capable) + " nodes of partition " + part.name +
                         " can hold " + DemandUnit(j, d) + ", job needs " + std::to_string(j.nodes),
               "nodes", capable, j.nodes);
}

uint32_t PartitionCheck::CapableNodes(const JobInfo& j, uint32_t p, const Demand& d,
                                      bool* type_or_feature_missing) {
  ShapeState* state = shapes_.StateOf(j, p);
  if (state != nullptr && state->capable >= 0) {
    *type_or_feature_missing = state->missing;
    return static_cast<uint32_t>(state->capable);
  }
  auto found = [&](std::pair<uint32_t, bool> count) {
    *type_or_feature_missing = count.second;
    if (state != nullptr) {
      state->capable = static_cast<int32_t>(count.first);
      state->missing = count.second;
    }
    return count.first;
  };
  // Capability does not depend on the time limit: share the count between shapes.
  const ResourceRequest& r = j.view->resources;
  const bool shared = r.exclude.empty();
  ShapeKey key{p, d, 0, r.constraint, 0, j.reservation};
  if (shared) {
    if (auto it = capable_.find(key); it != capable_.end()) return found(it->second);
  }
  // Without a node filter the count depends on the nodes' static fields alone: kept between
  // passes.
  const bool kept = shared && !j.node_filter && r.constraint.empty() && j.reservation < 0;
  const auto kept_key = std::make_tuple(p, d.cpus, d.mem, d.gpus, d.type, d.exclusive);
  if (kept) {
    if (auto it = nodes_.cache().capable.find(kept_key); it != nodes_.cache().capable.end()) {
      capable_[key] = it->second;
      return found(it->second);
    }
  }
  const Constraint c = ParseConstraint(r.constraint);
  const bool filter = j.node_filter;
  uint32_t capable = 0;
  bool any_match = false;
  for (uint32_t n : nodes_.PartitionNodes(p)) {
    if (filter && !nodes_.StaticOk(j, n, c)) continue;
    const NodeView& v = *nodes_.node(n).view;
    GpuSet mask = nodes_.TypeMask(n, d.type);
    if (d.type < 0 || (d.type > 0 && mask.empty())) continue;
    any_match = true;
    // GPUs out of service still count: they may come back.
    uint32_t gpus = mask.size() + static_cast<uint32_t>(v.gpus.size()) - v.usable_gpus.size();
    if (gpus >= d.gpus && v.cpus >= d.cpus && v.mem_mb >= nodes_.MemOn(d, n)) ++capable;
  }
  if (shared) capable_[key] = {capable, !any_match};
  if (kept) nodes_.cache().capable[kept_key] = {capable, !any_match};
  return found({capable, !any_match});
}

}  // namespace corral::sched::internal
