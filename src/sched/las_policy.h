// LAS: preemptive least-attained-service scheduling for jobs whose run times are unknown, with
// discretised multi-level queues by attained GPU-time, in the spirit of Tiresias (NSDI'19,
// "discretized 2D-LAS"). `corral sim --policy las`; also usable as `[scheduler] policy`.
//
// A job's attained service is the GPU-time (GPUs x seconds) it has received. Queue k holds the
// jobs whose attained service is in [T(k-1), T(k)) for thresholds T(0) < T(1) < ...; queue 0
// (the least served) comes first. New jobs start in queue 0 and sink as they run.
//
// One pass (`Decide`):
//   1. Levels. A pending job's level comes from `PendingJobView::attained_service` (GPU-time of
//      its earlier runs). A running job's level comes from the GPU-time of its current run,
//      GPUs x (now - start_time): the snapshot does not carry earlier runs of running jobs, and
//      this also protects a job just restarted after a preemption from being preempted again
//      before it has re-earned the threshold (it bounds thrashing).
//   2. Starts: the policy engine (`Scheduler`) with priority = -level, so jobs are tried by
//      (partition tier, level, submit time, JobId), each started wherever it fits now, greedily
//      (no reservations, no backfill window, no strict order, no QOS preemption). Partitions,
//      accounts, limits and placement are the configuration's.
//   3. Preemption. For each job still waiting for resources (reason Resources or Priority) that
//      the engine examined (within `max_jobs_per_pass`), in that order, at most
//      `max_preemptors_per_pass` of them, and unless jobs are already being
//      preempted for it (`preempted_for`): the victims are running jobs of a strictly higher
//      level not already being preempted. For each schedulable node of the job's first partition
//      that has it, with GPUs of its type: take victims on that node in order (level desc, start
//      time desc, JobId desc: most served, then least work lost) until the GPUs that are free
//      (not used, not started or claimed in this pass) plus theirs cover the per-node demand.
//      Nodes are ranked by (victims' lost work: GPUs x time since their last checkpoint or
//      start, GPUs freed, NodeId); the job's node count is taken from the cheapest. If enough
//      nodes qualify, every victim gets a `PreemptionOrder` (mode requeue, or cancel when the
//      victim may not be requeued; the configuration's grace time) and the job claims those
//      nodes for the rest of the pass. It starts in a later pass, once the victims have gone.
//      Jobs at or below the level of every victim are skipped, and a (partition, shape, level)
//      that found too few nodes is not searched again in the pass (victims and free GPUs only
//      shrink as the pass goes on).
//      Nothing is preempted when `[scheduler.preemption] enabled` is false.
//
// Plan order: the engine's starts and pending reasons; preemptions in the order chosen.
// Ties are broken by JobId and NodeId. Pure; not thread-safe (one `Decide` at a time).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "sched/config.h"
#include "sched/policy.h"
#include "sched/scheduler.h"
#include "sched/snapshot.h"

namespace corral::sched {

struct LasOptions {
  // Queue thresholds in GPU-seconds, strictly increasing: 1 GPU-hour and 10 GPU-hours make
  // three queues.
  std::vector<double> thresholds_gpu_seconds = {3600.0, 36000.0};
  bool operator==(const LasOptions&) const = default;
};

class LasPolicy final : public Policy {
 public:
  // Returns kInvalidArgument when `config` does not validate or the thresholds are not
  // positive and strictly increasing.
  static Result<std::unique_ptr<LasPolicy>> Create(const SchedulerConfig& config,
                                                   LasOptions options = {});

  Plan Decide(const ClusterSnapshot& snapshot, Timestamp now) override;

  // The queue of a job that has received `gpu_seconds` of service (0 = first).
  uint32_t Level(double gpu_seconds) const;
  // The level of a running job at `now` (step 1).
  uint32_t RunningLevel(const RunningJobView& job, Timestamp now) const;

  // Whether a pass at `now` could preempt anything: some waiting job (not already making room)
  // ranks above some running job that is not being preempted. When false, and no pending job
  // fits the free resources, a pass changes nothing.
  bool MayPreempt(const ClusterSnapshot& snapshot, Timestamp now) const;

  // The next time after `now` at which a running job sinks below the best level among the
  // pending jobs (so that a pass could preempt it), or nullopt. Callers that run passes only on
  // events (the simulator) schedule one then.
  std::optional<Timestamp> NextLevelChange(const ClusterSnapshot& snapshot, Timestamp now) const;

  const LasOptions& options() const { return options_; }

 private:
  LasPolicy(SchedulerConfig config, LasOptions options, std::unique_ptr<Scheduler> engine);

  SchedulerConfig config_;
  LasOptions options_;
  std::unique_ptr<Scheduler> engine_;
};

// The factory's `las`: `LasPolicy` with the default thresholds.
Result<std::unique_ptr<Policy>> MakeLasPolicy(const SchedulerConfig& config);

}  // namespace corral::sched
