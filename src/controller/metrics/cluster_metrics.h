// ClusterMetrics: the controller's state as /metrics and /metrics/targets show it, collected
// on the state thread (`Controller::CollectMetrics`: counts only, no per-job copy) and
// rendered on the handler's thread (render.h), so a scrape holds the state thread for the
// counting alone.
//
// Value type.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "controller/metrics/sched_stats.h"
#include "core/job.h"
#include "core/node.h"

namespace corral::controller::metrics {

struct JobKey {
  JobState state;
  std::string partition;
  std::string account;
  std::string user;
  auto operator<=>(const JobKey&) const = default;
};

struct JobCounts {
  uint64_t jobs = 0;
  uint64_t gpus = 0;  // GPUs held (running) or asked for (pending)
};

// GPUs of one partition and model; a GPU of a node in several partitions counts in each.
struct GpuCounts {
  uint64_t total = 0;
  uint64_t allocated = 0;
  uint64_t idle = 0;     // in service, free, on a node that takes jobs
  uint64_t drained = 0;  // free on a draining/drained node, or taken out by health checks
  uint64_t down = 0;     // on a node that does not respond (or is powered down)
};

struct NodeRow {
  std::string name;
  std::string address;  // the agent's API base URL ("" before it registered)
  NodeState state = NodeState::kUnknown;
  std::vector<std::string> partitions;
  std::string gpu_backend;
  std::string driver_version;
  std::string cuda_version;
  std::string agent_version;
  std::vector<std::string> drift_partitions;  // partitions whose common versions it lacks
  uint32_t gpus = 0;
  uint32_t alloc_gpus = 0;
};

struct AccountUsage {
  double decayed_usage = 0;       // TRES-weighted GPU-seconds, decayed (fair share)
  double period_gpu_seconds = 0;  // raw GPU-seconds this usage period
};

struct ClusterMetrics {
  Timestamp now{};
  std::map<JobKey, JobCounts> jobs;  // active jobs (PENDING, RUNNING)
  // (partition, reason) -> pending jobs.
  std::map<std::pair<std::string, std::string>, uint64_t> pending_reasons;
  uint64_t jobs_submitted_total = 0;                              // job ids handed out
  std::vector<NodeRow> nodes;                                     // by name
  std::map<std::pair<std::string, std::string>, GpuCounts> gpus;  // (partition, model)
  std::vector<std::string> partitions;
  uint64_t agents_connected = 0;  // registered and responding
  std::map<std::string, AccountUsage> accounts;
  SchedStats sched;
};

}  // namespace corral::controller::metrics
