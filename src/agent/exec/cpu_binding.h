// Which CPUs a job gets: near its GPUs (their NUMA nodes first), not used by the node's other
// jobs, then the rest. The agent binds the job to them (sched_setaffinity, and the cpuset of
// its cgroup when there is one).
//
// Pure functions apart from ReadNumaTopology; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/result.h"

namespace corral::agent {

// CPUs per NUMA node.
struct NumaTopology {
  std::map<int32_t, std::vector<uint32_t>> cpus_by_node;
  bool operator==(const NumaTopology&) const = default;
};

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}. Returns kInvalidArgument naming the text.
Result<std::vector<uint32_t>> ParseCpuList(const std::string& text);

// Reads SYSFS/devices/system/node/node*/cpulist, keeping only `allowed` CPUs (the agent's own
// affinity) when it is not empty. A machine without NUMA information is one node 0 with
// `allowed` (or, if empty, SYSFS/devices/system/cpu/online).
NumaTopology ReadNumaTopology(const std::string& sysfs_root, const std::set<uint32_t>& allowed);

// The agent's own CPU affinity.
std::set<uint32_t> OwnCpuAffinity();

// `count` CPUs for a job: free CPUs of `near_nodes` first (in node then CPU order), then free
// CPUs of the other nodes, then, when the free ones do not suffice, busy ones. Returns fewer
// only if the topology has fewer CPUs.
std::vector<uint32_t> PickCpus(const NumaTopology& topology, uint32_t count,
                               const std::set<int32_t>& near_nodes, const std::set<uint32_t>& busy);

// The NUMA nodes of `cpus` in `topology`.
std::vector<uint32_t> NodesOf(const NumaTopology& topology, const std::vector<uint32_t>& cpus);

}  // namespace corral::agent
