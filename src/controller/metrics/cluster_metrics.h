// ClusterMetrics: the controller's state as /metrics and /metrics/targets show it, copied on
// the state thread (`Controller::CollectMetrics`): the active jobs' counts (kept up to date as
// jobs change), one plain row per node with its GPUs, the flagged jobs. Everything else
// (counting GPUs, software drift, formatting) happens on the scraping request's thread
// (`CountClusterMetrics`, render.h), so a scrape holds the state thread for the copy alone
// (bench/metrics_bench).
//
// Value types.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "api/budget_codec.h"
#include "controller/config.h"
#include "controller/metrics/sched_stats.h"
#include "core/gpu.h"
#include "core/job.h"
#include "core/node.h"

namespace corral::controller::metrics {

// Active (pending or running) jobs of one state, partition, account and user.
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

// (partition, reason) -> pending jobs.
using PendingReasons = std::map<std::pair<std::string, std::string>, uint64_t>;

struct NodeRow {
  std::string name;
  std::string address;  // the agent's API base URL ("" before it registered)
  NodeState state = NodeState::kUnknown;
  std::vector<std::string> partitions;
  std::string gpu_backend;
  std::string driver_version;
  std::string cuda_version;
  std::string agent_version;
  bool drain = false;      // draining or drained
  bool connected = false;  // registered and responding
  // Its GPUs by position in its inventory: how many, which are allocated, which failed (taken
  // out by health checks), and their model: `gpu_model` when they share one (no per-GPU copy),
  // else `gpu_models`, one per GPU.
  uint32_t gpu_count = 0;
  GpuSet allocated_gpus;
  GpuSet failed_gpus;
  std::string gpu_model;
  std::vector<std::string> gpu_models;
};

// A running job flagged as wasting its GPUs, and what its policy does about it.
struct WasteRow {
  JobId job;
  std::string user;
  std::string account;
  std::string partition;
  GpuWasteAction action = GpuWasteAction::kNotify;
};

// Jobs the GPU-waste policy acted on since the controller started, by action: kNotify counts
// every job flagged (each is logged and shown), kCancel/kRequeue those it stopped.
using WasteActions = std::array<uint64_t, 3>;  // indexed by GpuWasteAction

struct AccountUsage {
  double decayed_usage = 0;       // TRES-weighted GPU-seconds, decayed (fair share)
  double period_gpu_seconds = 0;  // raw GPU-seconds this usage period
};

// The snapshot taken on the state thread.
struct ClusterMetrics {
  Timestamp now{};
  // Active jobs (PENDING, RUNNING), counted as they change (controller/internal/job_counts.h).
  std::map<JobKey, JobCounts> jobs;
  PendingReasons pending_reasons;
  uint64_t jobs_submitted_total = 0;  // job ids handed out
  std::vector<NodeRow> nodes;      // by name
  std::vector<std::string> partitions;
  // (account, usage) per association (an account appears once per user).
  std::vector<std::pair<std::string, AccountUsage>> usage;
  std::vector<WasteRow> waste;  // by job id
  WasteActions waste_actions{};
  // Account budgets (docs/governance.md, "Budgets"), by account, and the warnings raised.
  std::vector<api::BudgetStatus> budgets;
  uint64_t budget_warnings = 0;
  SchedStats sched;
};

// --- What rendering counts from a snapshot (off the state thread) ---

// GPUs of one partition and model; a GPU of a node in several partitions counts in each.
struct GpuCounts {
  uint64_t total = 0;
  uint64_t allocated = 0;
  uint64_t idle = 0;     // in service, free, on a node that takes jobs
  uint64_t drained = 0;  // free on a draining/drained node, or taken out by health checks
  uint64_t down = 0;     // on a node that does not respond (or is powered down)
};

struct ClusterCounts {
  std::map<JobKey, JobCounts> jobs;
  PendingReasons pending_reasons;
  std::map<std::pair<std::string, std::string>, GpuCounts> gpus;  // (partition, model)
  uint64_t agents_connected = 0;
  // node -> the partitions (sorted) whose common software versions it lacks.
  std::map<std::string, std::vector<std::string>> drift;
  std::map<std::string, AccountUsage> accounts;
};

// Groups and counts `m`. Thread-safe (pure).
ClusterCounts CountClusterMetrics(const ClusterMetrics& m);

}  // namespace corral::controller::metrics
