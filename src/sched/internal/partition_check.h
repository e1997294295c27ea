// PartitionCheck: whether a job may ever run in one of its partitions, and how many of the
// partition's nodes could ever hold it. `Check` reports the first reason it may not:
// PartitionDown, InvalidAccount (not on the partition's allow-list), PartitionTimeLimit,
// PartitionNodeLimit, PartitionConfig (GPUs per job), ReqNodeNotAvail (a `-w` node outside the
// partition), BadConstraints (no node has its GPU type or features) or PartitionConfig (fewer
// capable nodes than it needs).
//
// A node is capable when it passes the job's node filter and has enough CPUs, memory and GPUs of
// the type, counting GPUs out of service (they may come back) and ignoring what is in use.
// Counts are memoised per (shape, partition), shared between shapes that differ only in time
// limit, and, for jobs without a node filter, kept between passes in the `NodeCache` (they depend
// on the nodes' static fields alone).
//
// Not thread-safe; one pass's.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/internal/job_info.h"
#include "sched/internal/job_table.h"
#include "sched/internal/node_state.h"
#include "sched/internal/shapes.h"
#include "sched/policy.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class PartitionCheck {
 public:
  PartitionCheck(const ClusterSnapshot& snapshot, NodeState& nodes, const JobTable& jobs,
                 ShapeMemo& shapes)
      : snap_(snapshot), nodes_(nodes), jobs_(jobs), shapes_(shapes) {}

  // Whether `j` may run in partition `p`; otherwise appends the reason to `out`.
  bool Check(const JobInfo& j, uint32_t p, std::vector<Blocker>* out);

  // The nodes of partition `p` that could ever hold one node of `j` (demand `d`);
  // `*type_or_feature_missing` tells whether no node of `p` has its GPU type or features.
  uint32_t CapableNodes(const JobInfo& j, uint32_t p, const Demand& d,
                        bool* type_or_feature_missing);

 private:
  const ClusterSnapshot& snap_;
  NodeState& nodes_;
  const JobTable& jobs_;
  ShapeMemo& shapes_;
  // (partition, demand, constraint, reservation) -> (capable nodes, type or feature missing).
  std::unordered_map<ShapeKey, std::pair<uint32_t, bool>, ShapeKeyHash> capable_;  // lookups only
};

}  // namespace corral::sched::internal
