// FirstFitPolicy: the first scheduling policy; the multifactor engine replaces it.
//
// Algorithm:
//   1. Order pending jobs by nice (lower first), then by JobId (submit order).
//   2. For each job in that order, skip it with reason JobHeldUser if held; try its partitions
//      in the order given; in a partition, walk its nodes in NodeId order and take each node
//      that can hold the job's per-node demand (CPUs, memory, GPUs of the requested type,
//      features, -w/-x lists, exclusivity) until the job has `nodes` of them.
//   3. A job starts only if all of its nodes were found (gang, all-or-nothing). Its usage is
//      added to the working copy, so later jobs of the same pass see it.
//   4. Inside a node, the lowest free GPU indices are chosen.
//   5. A job that cannot start gets reason Resources (it would fit an empty partition) or
//      PartitionConfig / BadConstraints (it never can).
#pragma once

#include "sched/policy.h"

namespace corral::sched {

// Not thread-safe.
class FirstFitPolicy final : public Policy {
 public:
  Plan Decide(const ClusterSnapshot& snapshot, Timestamp now) override;
};

// Whether `node` (with its current use) can take one node's share of a job. Exposed for the
// policy engine and for tests. On success fills `out` with the chosen CPUs, memory and GPUs.
bool FitsOnNode(const NodeView& node, const PerNodeDemand& demand, const ResourceRequest& request,
                NodeAllocation* out);

}  // namespace corral::sched
