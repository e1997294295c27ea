// Pass: one scheduling pass, the algorithm of `Scheduler::Decide` (scheduler.h numbers its
// steps; the comments in `Run` and `Schedule` carry the same numbers). It wires the mechanisms
// together and keeps the little state that belongs to the pass as a whole: the explanation
// cache, the backfill reservations made, the partitions strict order has closed.
//
// Building a pass is step 1 (index the snapshot); `Run` is steps 2 to 7. A pass is used once.
//
// Not thread-safe. Points into the config, the options, the snapshot and the `NodeCache`, which
// must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sched/config.h"
#include "sched/internal/config_index.h"
#include "sched/internal/eligibility.h"
#include "sched/internal/job_info.h"
#include "sched/internal/job_table.h"
#include "sched/internal/limits.h"
#include "sched/internal/node_cache.h"
#include "sched/internal/node_state.h"
#include "sched/internal/partition_check.h"
#include "sched/internal/placement.h"
#include "sched/internal/preemption.h"
#include "sched/internal/priority.h"
#include "sched/internal/shapes.h"
#include "sched/internal/timeline.h"
#include "sched/policy.h"
#include "sched/scheduler.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class Pass {
 public:
  // Step 1: indexes `snapshot`. `cache`: the static index of an earlier pass, rebuilt here unless
  // it matches the snapshot; nullptr = build one for this pass.
  Pass(const SchedulerConfig& config, const SchedulerOptions& options, const ConfigIndex& index,
       const ClusterSnapshot& snapshot, Timestamp now, NodeCache* cache);
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;

  // Steps 2 to 7: fills `plan`.
  void Run(Plan* plan);

  // Step 2 alone: every pending job's priority and its factors, in JobId order.
  std::vector<PriorityFactors> Priorities() { return prioritizer_.Compute(&jobs_, true); }

 private:
  // Steps 3 to 7 for one job: starts it, or explains in `blockers` why not.
  void Schedule(JobInfo& j, Plan* plan, std::vector<Blocker>* blockers, Timestamp* estimate);
  // Step 3, partitions: fills `parts_` with those `j` may run in; when there is none, appends
  // every partition's reason to `blockers`.
  void UsablePartitions(const JobInfo& j, std::vector<Blocker>* blockers);
  // Step 7: keeps in `parts_` the partitions strict order has not closed; false (and a Priority
  // blocker) when none is left.
  bool OpenPartitions(std::vector<Blocker>* blockers);
  // Step 4: starts `j` in the first partition of `parts_` where it fits now.
  // `*only_priority`: every partition failed only on this pass's reservations.
  bool StartNow(const JobInfo& j, Plan* plan, bool* only_priority);
  PlaceResult TryPlace(const JobInfo& j, uint32_t p, Placement* out);
  // Steps 5 and 6: preempts for `j`, or reserves its earliest start; true when it preempts.
  bool PreemptOrReserve(const JobInfo& j, bool inflight, Plan* plan, std::vector<Blocker>* blockers,
                        Timestamp* estimate);
  // The blockers of a job that fits nowhere: the main one (reused for its shape while this
  // pass's reservations do not change), then the reservation windows in its way.
  void ExplainBlocked(const JobInfo& j, bool only_priority, bool inflight, bool own_reservation,
                      std::vector<Blocker>* blockers);
  Blocker ResourceBlocker(const JobInfo& j, uint32_t p, bool priority, bool inflight);
  void ExplainWindows(const JobInfo& j, std::vector<Blocker>* blockers) const;
  // Whether victims are already being preempted for `j`.
  bool Inflight(const JobInfo& j) const {
    return jobs_.InflightFor(static_cast<size_t>(j.view - snap_.pending.data()));
  }

  const SchedulerConfig& config_;
  const SchedulerOptions& options_;
  const ClusterSnapshot& snap_;
  const Timestamp now_;

  // The mechanisms. The static index comes from `cache_` (the scheduler's, or the pass's own),
  // which also lends the pass its buffers.
  std::unique_ptr<NodeCache> own_cache_;
  NodeCache& cache_;
  NodeState nodes_;
  ShapeMemo shapes_;
  JobTable jobs_;
  UseLimits limits_;
  Eligibility eligibility_;
  PartitionCheck partitions_;
  Prioritizer prioritizer_;
  Placer placer_;
  Timeline timeline_;
  Preemptor preemptor_;

  // The pass's own state.
  struct CachedBlocker {
    bool priority;
    size_t reservations;
    Blocker blocker;
  };
  std::vector<CachedBlocker> cached_blockers_;  // by `ShapeState::blocker`
  uint32_t backfill_reservations_ = 0;
  std::vector<bool> part_blocked_;      // strict order: closed partitions
  std::vector<uint32_t> parts_;         // the current job's usable partitions (scratch)
  std::vector<Blocker> part_blockers_;  // scratch
};

}  // namespace corral::sched::internal
