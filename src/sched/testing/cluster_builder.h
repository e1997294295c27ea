// Helpers that build snapshots for tests, benchmarks and simulator scenarios: nodes with typed
// GPUs (NVLink and NUMA layout of an 8-GPU server), pending and running jobs.
//
// Test-only; header-only; not thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "sched/snapshot.h"

namespace corral::sched::testing {

// The GPU indices `idx` as a set: Gpus({0, 3}).
inline GpuSet Gpus(std::initializer_list<uint32_t> idx) {
  GpuSet s;
  for (uint32_t i : idx) s.insert(i);
  return s;
}

// A node with `gpus` GPUs of `model`, all usable. GPUs form one NVLink domain (NVSwitch) when
// `nvlink` is set, and are split evenly over `numa` NUMA nodes.
inline NodeView MakeNode(uint32_t id, std::string name, uint32_t gpus, std::string model = "h100",
                         uint32_t cpus = 64, uint64_t mem_mb = 512 * 1024, bool nvlink = true,
                         uint32_t numa = 2) {
  NodeView n;
  n.id = NodeId(id);
  n.name = std::move(name);
  n.cpus = cpus;
  n.mem_mb = mem_mb;
  for (uint32_t g = 0; g < gpus; ++g) {
    GpuInfo info{.index = g, .model = model, .memory_mb = 80 * 1024};
    if (nvlink) {
      for (uint32_t p = 0; p < gpus; ++p) {
        if (p != g) info.nvlink_peers.push_back(p);
      }
    }
    info.numa_node = numa == 0 ? -1 : static_cast<int32_t>(g * numa / gpus);
    n.gpus.push_back(std::move(info));
  }
  n.usable_gpus = GpuSet::FirstN(gpus);
  n.schedulable = true;
  return n;
}

// `count` nodes n1, n2, ... (ids 1, 2, ...) with `gpus` GPUs each, as `MakeNode` makes them.
inline std::vector<NodeView> MakeNodes(uint32_t count, uint32_t gpus) {
  std::vector<NodeView> nodes;
  for (uint32_t i = 1; i <= count; ++i) nodes.push_back(MakeNode(i, "n" + std::to_string(i), gpus));
  return nodes;
}

// A pending job asking for `nodes` nodes with `gpus_per_node` GPUs each, one task per node.
inline PendingJobView MakeJob(uint64_t id, uint32_t nodes, uint32_t gpus_per_node,
                              Duration limit = Minutes(60), std::string partition = "main") {
  PendingJobView j;
  j.id = JobId(id);
  j.user = "alice";
  j.account = "acct";
  j.name = "job" + std::to_string(id);
  j.partitions = {std::move(partition)};
  j.resources.nodes = nodes;
  j.resources.ntasks = nodes;
  j.resources.gpus_per_node = gpus_per_node;
  j.resources.cpus_per_task = 1;
  j.resources.mem_per_node_mb = 1024;
  j.time_limit = limit;
  j.submit_time = FromMicros(static_cast<int64_t>(id) * 1'000'000);
  return j;
}

// Marks `gpus` of `node` (and `cpus`, `mem_mb`) as used by a running job and returns its view.
inline RunningJobView Occupy(NodeView* node, uint64_t id, GpuSet gpus, Timestamp start,
                             Timestamp end, uint32_t cpus = 1, uint64_t mem_mb = 1024) {
  node->used_gpus = node->used_gpus | gpus;
  node->used_cpus += cpus;
  node->used_mem_mb += mem_mb;
  node->running_jobs += 1;
  RunningJobView r;
  r.id = JobId(id);
  r.user = "bob";
  r.account = "acct";
  r.name = "run" + std::to_string(id);
  r.start_time = start;
  r.expected_end = end;
  r.allocation.nodes.push_back(
      {.node = node->id, .node_name = node->name, .cpus = cpus, .mem_mb = mem_mb, .gpus = gpus});
  return r;
}

}  // namespace corral::sched::testing
