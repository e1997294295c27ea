// Timeline: the reservations of a pass (flux-sched's planner): when a blocked job could start
// at the earliest, and holding the resources it will start on so that no later job of the pass
// delays it (EASY backfill).
//
// Earliest start on one node: now if the job fits next to this pass's holds; else the first
// release (the running jobs' and this pass's starts' expected ends, in time order, ties by
// their order on the node) at which its GPUs, CPUs and memory fit, the CPUs and memory that
// holds keep staying held (conservative); an exclusive job waits for every job on the node and
// never shares it with a hold. The start then moves past every reservation window (other than
// its own reservation) that the job's run would reach into, and into its own reservation's
// window; a start at or beyond `bound` counts as none. Several nodes start at the latest of the
// `N` earliest nodes (ties by NodeId); of several partitions the earliest wins (ties: the first
// in the job's order). A start past the backfill window (`forced`: any start) gives no
// reservation, nor does a job with `-w` nodes.
//
// Holds: the GPUs chosen as `PickGpus` would at the start, and the CPUs and memory; the node's
// pools stop counting held GPUs (`NodeState::HoldForReservation`), so later jobs use them only
// whole, when they end before the hold starts.
//
// Not thread-safe; one pass's.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sched/internal/job_info.h"
#include "sched/internal/node_state.h"
#include "sched/policy.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class Timeline {
 public:
  // `window`: how far ahead a backfill reservation may start (`BackfillConfig::window`).
  Timeline(const ClusterSnapshot& snapshot, NodeState& nodes, Duration window, Timestamp now)
      : snap_(snapshot), nodes_(nodes), window_(window), now_(now) {}

  // The earliest time `j` (demand `d`) could start on node `n`, or `kNever` (none before
  // `bound`). Requires: `NodeState::TrackEnds` was called.
  Timestamp EarliestStart(const JobInfo& j, uint32_t n, const Demand& d, Timestamp bound) const;

  // Reserves `j`'s earliest start over `parts` (within the backfill window unless `forced`):
  // holds its resources, appends a `ReservedStart` to `plan` and sets `*estimate`. Returns
  // whether it did.
  bool Reserve(const JobInfo& j, const std::vector<uint32_t>& parts, bool forced, Plan* plan,
               Timestamp* estimate);

  // Holds, for `j` in partition `p` from `start`, demand `d` on each node of `free_at_start`
  // (node, its GPUs of the type free at `start`), and appends the `ReservedStart` to `plan`.
  void Hold(const JobInfo& j, uint32_t p, const Demand& d, Timestamp start,
            const std::vector<std::pair<uint32_t, GpuSet>>& free_at_start, Plan* plan);

  // The jobs holding nodes of partition `p`, in JobId order.
  std::vector<JobId> HoldersIn(uint32_t p) const;
  // How many jobs hold resources (reservations made by this pass, backfill or preemption).
  size_t holders() const { return reserved_jobs_.size(); }

 private:
  const ClusterSnapshot& snap_;
  NodeState& nodes_;
  const Duration window_;
  const Timestamp now_;
  std::vector<std::pair<JobId, std::vector<uint32_t>>> reserved_jobs_;   // job -> nodes
  mutable std::vector<std::pair<Timestamp, uint32_t>> release_scratch_;  // EarliestStart
};

}  // namespace corral::sched::internal
