// The scheduler's input: an immutable snapshot of the cluster, built by the caller (the
// controller's state thread, or the simulator) before each pass.
//
// Every field says who fills it. "Controller" means the caller of `Policy::Decide` (the
// controller in production, the simulator in `corral sim`); both fill the same fields the same
// way. Fields added after the first version have defaults that keep older callers correct:
// a caller that leaves them at their default gets the behaviour the comment describes.
//
// Value types; the scheduler never keeps references into a snapshot after `Decide` returns.
#pragma once

#include <cstdint>
#include <optional>
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
// Filled by the controller from its node table and the allocations of running jobs.
struct NodeView {
  NodeId id;
  std::string name;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::vector<GpuInfo> gpus;          // the node's GPU devices, by index (model, NVLink, NUMA)
  GpuSet usable_gpus;                 // present and healthy
  std::vector<std::string> features;  // sorted
  bool schedulable = false;           // responding, not drained, not powered down
  // In use by running jobs:
  uint32_t used_cpus = 0;
  uint64_t used_mem_mb = 0;
  GpuSet used_gpus;
  uint32_t running_jobs = 0;
  bool exclusive = false;  // an exclusive job holds the whole node
  bool operator==(const NodeView&) const = default;
};

// A running job: what it holds and when it is expected to end (start + time limit).
struct RunningJobView {
  JobId id;
  std::string user;
  std::string account;
  std::string qos;  // resolved QOS name ("" = the scheduler's default QOS)
  std::string partition;
  Timestamp start_time{};
  Timestamp expected_end{};  // Timestamp::max() when unlimited
  Allocation allocation;
  // --- Added for the policy engine (all filled by the controller from its `Job` record). ---
  std::string name;              // job name (singleton dependencies)
  Timestamp last_checkpoint{};   // `Job::last_checkpoint`; epoch = never checkpointed
  bool requeue_allowed = true;   // `JobSpec::requeue` (or the cluster default); a victim
                                 // that may not be requeued is cancelled instead
  Timestamp preempt_deadline{};  // set once the controller has acted on a preemption order:
                                 // when the grace time ends; epoch = not being preempted
  JobId preempted_for;           // the job the preemption makes room for (0 = none)
  JobId array_job_id;            // 0 = not part of an array (array throttles)
  bool operator==(const RunningJobView&) const = default;
};

// A pending job as the scheduler needs it.
struct PendingJobView {
  JobId id;
  std::string user;
  std::string account;
  std::string qos;                      // "" = the account's or the scheduler's default QOS
  std::vector<std::string> partitions;  // already resolved: never empty
  ResourceRequest resources;
  Duration time_limit{0};  // resolved limit; 0 or `kUnlimited` = no limit
  Timestamp submit_time{};
  int32_t nice = 0;
  bool held = false;
  // --- Added for the policy engine (filled by the controller from `Job`/`JobSpec`). ---
  std::string name;                      // `JobSpec::name` (singleton dependencies)
  bool held_by_admin = false;            // held by an operator (JobHeldAdmin), not by its user
  Timestamp eligible_time{};             // when it became eligible (age factor); epoch = submit
  Timestamp begin_time{};                // `JobSpec::begin_time`; epoch = no --begin
  std::vector<Dependency> dependencies;  // `JobSpec::dependencies`, job ids resolved; for
                                         // aftercorr the controller puts the matching task's id
  bool dependency_any = false;           // `JobSpec::dependency_any` ('?' separator)
  std::string reservation;               // `JobSpec::reservation`; "" = none
  JobId array_job_id;                    // 0 = not an array task
  uint32_t array_task_id = 0;
  uint32_t array_max_running = 0;  // the array's "%N" throttle; 0 = none
  uint32_t restart_count = 0;      // `Job::restart_count` (shown only)
  // Policies of the simulator (and oracle experiments). The engine ignores both.
  std::optional<Duration> known_duration;  // the job's true run time, when known (SJF oracle)
  Duration attained_service{0};            // GPU-time already received in earlier runs (LAS)
  bool operator==(const PendingJobView&) const = default;
};

// A job referenced by a pending job's dependency that is neither running nor pending (usually
// finished). Filled by the controller for every id named in `PendingJobView::dependencies` that
// is not in `running` or `pending`; a referenced id found nowhere makes the dependency one that
// can never be satisfied (DependencyNeverSatisfied).
struct FinishedJobView {
  JobId id;
  JobState state = JobState::kCompleted;  // a terminal state
  int32_t exit_code = 0;
  Timestamp start_time{};  // epoch = never started (cancelled while pending)
  Timestamp end_time{};
  bool operator==(const FinishedJobView&) const = default;
};

// Decayed fair-share usage and per-period GPU use of one user in one account. Filled by the
// controller from its `UsageLedger` (sched/usage.h), which it advances every tick and persists.
// Missing entries mean zero usage.
struct AssociationUsage {
  std::string account;
  std::string user;
  double decayed_usage = 0;       // TRES-weighted GPU-seconds, decayed by the half-life
  double period_gpu_seconds = 0;  // raw GPU-seconds in the current usage period (GPU-minute limits)
  bool operator==(const AssociationUsage&) const = default;
};

// The spend of one account's budget (core/budget.h) in its current period: what the account
// with its whole subtree has spent, running jobs counted up to now. Filled by the controller
// from its job records (controller/internal/budget_book.h) for every account whose budget is
// in force; the budget itself is the account's `AccountConfig::budget`. An account without an
// entry is not held back by its budget (the simulator fills none).
struct BudgetUse {
  std::string account;
  double gpu_seconds = 0;    // allocated GPU-seconds in the period so far
  double energy_joules = 0;  // measured energy in the period so far
  Timestamp period_end{};    // when the period ends (a job's use after it is not counted)
  bool operator==(const BudgetUse&) const = default;
};

// A window of nodes held for maintenance or for some users/accounts (Slurm's reservations).
// Static ones come from the configuration (`SchedulerConfig::reservations`); ones created at run
// time are put in `ClusterSnapshot::reservations` by the controller. Jobs that do not name the
// reservation never run on its nodes during the window; jobs that name it run only on its nodes,
// only inside the window, and only if their user or account is listed (empty lists = anyone).
struct Reservation {
  std::string name;
  std::vector<std::string> nodes;  // node names (host lists expanded)
  Timestamp start{};
  Timestamp end = Timestamp::max();  // exclusive; max() = open-ended
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  bool maintenance = false;  // shown as "reserved for maintenance"
  bool operator==(const Reservation&) const = default;
};

struct ClusterSnapshot {
  std::vector<NodeView> nodes;          // sorted by NodeId
  std::vector<Partition> partitions;    // with `nodes` expanded to node names
  std::vector<RunningJobView> running;  // sorted by JobId
  std::vector<PendingJobView> pending;  // sorted by JobId (submit order)
  // --- Added for the policy engine (all optional; empty = none). ---
  std::vector<FinishedJobView> finished;  // dependency targets; see `FinishedJobView`
  std::vector<AssociationUsage> usage;    // fair-share usage; see `AssociationUsage`
  std::vector<Reservation> reservations;  // run-time reservations (config ones are added)
  std::vector<BudgetUse> budgets;         // budgets in force; see `BudgetUse`
  // Optional, for speed. Nonzero: the caller promises that the nodes' static fields (id, name,
  // cpus, gpus, usable_gpus, schedulable) and `partitions` are those of the last snapshot it gave
  // the same `Scheduler` with this value, so the scheduler reuses what it derived from them
  // without comparing them (a walk over every node and GPU); a caller gives a new value whenever
  // they change. 0 = no promise: the scheduler compares them itself (see scheduler.h).
  uint64_t node_epoch = 0;
};

}  // namespace corral::sched
