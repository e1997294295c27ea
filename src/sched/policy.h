// The scheduling policy interface: a pure function from a cluster snapshot and `now` to a
// plan. The controller's state thread and the simulator call the same `Decide`, so what the
// simulator measures is what production does.
//
// Rules for every policy: no I/O, threads, locks, logging, global state or clock reads; same
// input, same output, byte for byte; every tie broken by a total order ending in JobId/NodeId.
#pragma once

#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job.h"
#include "core/time.h"
#include "sched/snapshot.h"

namespace corral::sched {

// Start `job` in `partition` on exactly these nodes and GPU indices.
struct Placement {
  JobId job;
  std::string partition;
  std::vector<NodeAllocation> nodes;  // generation left unset: the caller assigns it
  bool operator==(const Placement&) const = default;
};

// Why a pending job did not start. `code` is Slurm's reason name where one exists
// ("Priority", "Resources", "PartitionConfig", "ReqNodeNotAvail", "JobHeldUser", ...).
struct PendingReason {
  JobId job;
  std::string code;
  std::string detail;                  // for people: "waiting for 4 GPUs of type h100 in train"
  Timestamp estimated_start{};         // epoch when unknown
  bool operator==(const PendingReason&) const = default;
};

struct Plan {
  std::vector<Placement> starts;       // in the order they should be applied
  std::vector<JobId> preemptions;
  std::vector<PendingReason> pending;  // one per pending job that did not start
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
