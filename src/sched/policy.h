// The scheduling policy interface: a pure function from a cluster snapshot and `now` to a
// plan. The controller's state thread and the simulator call the same `Decide`, so what the
// simulator measures is what production does.
//
// Rules for every policy: no I/O, threads, locks, logging, global state or clock reads; same
// input, same output, byte for byte; every tie broken by a total order ending in JobId/NodeId.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job.h"
#include "core/time.h"
#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::sched {

// Start `job` in `partition` on exactly these nodes and GPU indices.
struct Placement {
  JobId job;
  std::string partition;
  std::vector<NodeAllocation> nodes;  // generation left unset: the caller assigns it
  bool backfilled = false;            // started ahead of a higher-priority job's reservation
  bool operator==(const Placement&) const = default;
};

// One thing that holds a pending job back, as data. `code` is Slurm's reason name where one
// exists (see docs/scheduling.md for the catalogue); the other fields say which entity and
// which numbers, so that `corral why` and the API can show them without parsing `detail`.
struct Blocker {
  std::string code;         // "AssocGrpGRES", "Dependency", "Resources", ...
  std::string detail;       // for people: "account nlp at its GPU limit 64/64"
  std::string scope;        // "account", "user", "qos", "partition", "job",
                            // "reservation", "node", "array" or "" (none)
  std::string entity;       // the account, user, QOS, partition, ... named
  std::string resource;     // "gpu", "jobs", "gpu_minutes", "time", "nodes", ""
  int64_t used = 0;         // current use of `resource` (where it applies)
  int64_t limit = 0;        // the limit reached
  int64_t requested = 0;    // what this job asks for
  std::vector<JobId> jobs;  // dependencies not yet met, victims, reservation holders
  bool operator==(const Blocker&) const = default;
};

// Why a pending job did not start. `code` is Slurm's reason name where one exists
// ("Priority", "Resources", "PartitionConfig", "ReqNodeNotAvail", "JobHeldUser", ...).
struct PendingReason {
  JobId job;
  std::string code;
  std::string detail;           // for people: "waiting for 4 GPUs of type h100 in train"
  Timestamp estimated_start{};  // epoch when unknown
  // --- Filled by the policy engine (`Scheduler`); other policies may leave them empty. ---
  std::vector<Blocker> blockers;  // every blocker; blockers[0] gives `code` and `detail`
  int64_t priority = 0;           // the job's priority in this pass
  // False when the pass did not get to this job (`[scheduler] max_jobs_per_pass`): `code` is
  // Priority, `blockers` is empty, and the caller may keep the reasons of an earlier pass.
  bool examined = true;
  bool operator==(const PendingReason&) const = default;
};

// An order to preempt one running job, with how. The caller first sends the job its
// checkpoint signal (the job's `--signal`, else SIGTERM), waits `grace_time`, then kills it
// and requeues or cancels it according to `mode`; it records `preempt_deadline` and
// `preempted_for` in the job's `RunningJobView` from then on, so later passes neither pick
// the victim again nor give its resources away.
struct PreemptionOrder {
  JobId job;                                 // the victim
  JobId preemptor;                           // the pending job that needs its resources
  PreemptMode mode = PreemptMode::kRequeue;  // kRequeue or kCancel (never kOff)
  Duration grace_time{0};
  std::string reason;  // "qos high preempts scavenger", "account product reclaims"
  bool operator==(const PreemptionOrder&) const = default;
};

// A start time held for a blocked job (backfill reservation, or the resources its preemption
// frees): no other job of the pass uses these resources across `start`.
struct ReservedStart {
  JobId job;
  std::string partition;
  Timestamp start{};
  std::vector<NodeAllocation> nodes;
  bool operator==(const ReservedStart&) const = default;
};

struct Plan {
  std::vector<Placement> starts;  // in the order they should be applied
  std::vector<JobId> preemptions;
  std::vector<PendingReason> pending;  // one per pending job that did not start
  // --- Filled by the policy engine (`Scheduler`); other policies may leave them empty. ---
  std::vector<PreemptionOrder> preemption_orders;  // one per `preemptions` entry, same order
  std::vector<ReservedStart> reservations;         // in priority order
  bool operator==(const Plan&) const = default;
};

// Not thread-safe; a policy object may keep configuration but no state between calls that
// changes its decisions.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual Plan Decide(const ClusterSnapshot& snapshot, Timestamp now) = 0;
};

}  // namespace corral::sched
