// The scheduler's input: an immutable snapshot of the cluster, built by the caller (the
// controller's state thread, or the simulator) before each pass.
//
// Value types; the scheduler never keeps references into a snapshot after `Decide` returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/partition.h"
#include "core/resources.h"
#include "core/time.h"

namespace corral::sched {

// One node as the scheduler sees it: capacity, what is in use, and whether it takes new jobs.
struct NodeView {
  NodeId id;
  std::string name;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::vector<GpuInfo> gpus;          // the node's GPU devices, by index
  GpuSet usable_gpus;                 // present and healthy
  std::vector<std::string> features;  // sorted
  bool schedulable = false;           // responding, not drained, not powered down
  // In use by running jobs:
  uint32_t used_cpus = 0;
  uint64_t used_mem_mb = 0;
  GpuSet used_gpus;
  uint32_t running_jobs = 0;
  bool exclusive = false;             // an exclusive job holds the whole node
  bool operator==(const NodeView&) const = default;
};

// A running job: what it holds and when it is expected to end (start + time limit).
struct RunningJobView {
  JobId id;
  std::string user;
  std::string account;
  std::string qos;
  std::string partition;
  Timestamp start_time{};
  Timestamp expected_end{};           // Timestamp::max() when unlimited
  Allocation allocation;
  bool operator==(const RunningJobView&) const = default;
};

// A pending job as the scheduler needs it.
struct PendingJobView {
  JobId id;
  std::string user;
  std::string account;
  std::string qos;
  std::vector<std::string> partitions;  // already resolved: never empty
  ResourceRequest resources;
  Duration time_limit{0};
  Timestamp submit_time{};
  int32_t nice = 0;
  bool held = false;
  bool operator==(const PendingJobView&) const = default;
};

struct ClusterSnapshot {
  std::vector<NodeView> nodes;          // sorted by NodeId
  std::vector<Partition> partitions;    // with `nodes` expanded to node names
  std::vector<RunningJobView> running;  // sorted by JobId
  std::vector<PendingJobView> pending;  // sorted by JobId (submit order)
};

}  // namespace corral::sched
