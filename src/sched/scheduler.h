// Scheduler: the GPU-aware policy engine — partitions, multifactor priority with hierarchical
// fair share, quotas and limits, QOS preemption and reclaim of guaranteed GPUs, EASY backfill
// with reservations for the top blocked jobs, topology- and NVLink-aware best-fit placement,
// arrays, dependencies, reservations, and a structured explanation for every pending job.
//
// One pass (`Decide`; internal/pass.h runs it, each step naming the call that does it):
//   1. Index the snapshot (the `Pass` constructor): nodes by partition, GPU type and free GPU
//      count (a bitset per count, so "the best-fitting node with at least g free GPUs of type t
//      in partition p" is a few word scans), reservation windows (`NodeState`); running jobs
//      per node and pending jobs (`JobTable`); use per account (with its subtree), user, QOS,
//      QOS+user and array (`UseLimits`).
//   2. Compute each pending job's priority (`Prioritizer::Compute`): the
//      `SchedulerOptions::priority` function if set, else sum(weight * factor) - nice over the
//      age, fair-share (the fair-tree factors, fair_share.h), job-size, partition and QOS
//      factors (`Priorities` shows them). Order jobs by (highest partition priority tier desc,
//      priority desc, submit time, JobId) (`Prioritizer::Order`).
//   3. For each job in that order (`Pass::Run`) collect its blockers, all of them
//      (`Pass::Schedule`): holds (JobHeldUser, JobHeldAdmin), BeginTime, dependencies
//      (Dependency, DependencyNeverSatisfied), the array throttle (JobArrayTaskLimit), its
//      reservation (Reservation), its account/QOS validity (InvalidAccount, InvalidQOS)
//      (`Eligibility::Check`); every limit of its account chain, user and QOS against use
//      including jobs started earlier in this pass (AssocGrpGRES, QOSMaxGRESPerUser, ...)
//      (`UseLimits::Check`); and its partitions (PartitionDown, PartitionTimeLimit,
//      PartitionNodeLimit, PartitionConfig, BadConstraints; a partition with such a blocker is
//      skipped, and they are reported only when no partition is left) (`Pass::UsablePartitions`,
//      `PartitionCheck::Check`). A job with any blocker does not start and holds nothing.
//      Beyond the first `max_jobs_per_pass` jobs, jobs are not examined: reason Priority with
//      `PendingReason::examined` false (Slurm's default_queue_depth).
//   4. Try its partitions in its order; the first where it fits now starts it (`Pass::StartNow`,
//      `Placer::Place`). Placement in a partition, on resources no reservation of this pass
//      holds:
//        a. single node: the node with the fewest free GPUs of the type that still fits
//           (best fit, ties by NodeId), skipping nodes that are down, exclusive, lack CPUs or
//           memory, miss a constraint, are excluded, or are held by a reservation window the
//           job's time limit would reach; a node whose backfill reservation starts only after the
//           job's time limit ends may be used whole, but only when no other node fits;
//        b. several nodes (gang, all or nothing): the same candidates; with a topology, on the
//           single leaf switch with the fewest candidates that suffices, else under the lowest
//           switch that suffices, taking its leaves with the most candidates first (at most
//           max(4N, N + 256) candidates are looked at); without one, best fit by free GPUs
//           (`Topology::Choose`);
//        c. inside a node, GPUs of one NVLink domain and NUMA node when one group fits, the
//           group with the fewest free GPUs first (lowest index ties); `--exclusive` takes the
//           whole node; `-w` nodes are taken first (`PickGpus`).
//      A job that fits in none gets Resources (or Priority when only reservations of
//      higher-priority jobs stop it, naming them), plus ReqNodeNotAvail when reservation windows
//      cover nodes of its partition (`Pass::ExplainBlocked`). A (partition, shape) that failed is
//      not searched again in the pass: resources only shrink during a pass (`Pass::TryPlace`).
//   5. A blocked job whose QOS may preempt, or whose account is under its guarantee while others
//      borrow, searches for victims (`Preemptor::TryPreempt`; at most
//      `max_preemptors_per_pass` searches per pass; a shape whose search failed is remembered and
//      not searched again): on each candidate node the cheapest set of eligible running jobs
//      whose release makes it fit, cheapest meaning least lost work (GPUs x time since the last
//      checkpoint or start), then fewest GPUs; the job's nodes are the cheapest such nodes (ties
//      by NodeId). Victims (in JobId order) get a `PreemptionOrder` (their QOS's mode; cancel
//      when requeue is not allowed; its grace time) and the job a reservation at now + grace on
//      those resources. A job for which victims are already being preempted (`preempted_for`)
//      searches no more and keeps its reservation (`Pass::PreemptOrReserve`).
//   6. Otherwise, while fewer than `backfill.reservations` jobs hold one, the job gets a
//      reservation at its earliest start (`Timeline::Reserve`): per node, the first release time
//      (running jobs' and this pass's starts' expected ends, in time order) at which its demand
//      fits next to earlier reservations, moved past reservation windows
//      (`Timeline::EarliestStart`); several nodes start at the N-th earliest. A start beyond
//      `backfill.window` (or never: unlimited jobs) gives no reservation. Later jobs may not use
//      reserved GPUs, nor CPUs/memory beyond what the reservations leave, unless they end before
//      the reservation starts (`NodeState::Fits`): a backfilled job never delays a reserved one.
//   7. Strict order (`SchedulerOptions::strict_order`, the `fifo` policy): once a job is blocked
//      on resources in a partition, later jobs get Priority in it; no reservations, no backfill
//      (`Pass::OpenPartitions`).
//
// Plan: `starts` in priority order; `pending` in priority order, one per job not started;
// `preemptions`/`preemption_orders` in the order chosen; `reservations` in priority order.
// Every tie is broken by JobId or NodeId order; no unordered container's order reaches the plan.
//
// Not thread-safe. `Decide` keeps no state between calls that changes its decisions: it only
// keeps what it derived from the nodes' static fields (name, id, CPUs, usable GPUs and their
// models, schedulable) and the partitions (indices, partition members, GPU types, the switch
// of each node) and reuses it while a snapshot's are equal to the last one's, which it checks
// on every call (a walk over the nodes, far cheaper than rebuilding the index).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/config.h"
#include "sched/policy.h"

namespace corral::sched {

namespace internal {
struct ConfigIndex;  // lookups derived from the config once (internal/config_index.h)
struct NodeCache;    // what a pass derives from the nodes' static fields (internal/node_cache.h)
}  // namespace internal

// A job's priority and its factors, as `corral priority` shows them.
struct PriorityFactors {
  JobId job;
  std::string user;
  std::string account;
  std::string qos;
  // Each factor in [0, 1], and its contribution (weight * factor).
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos_factor = 0;
  int64_t age_points = 0, fairshare_points = 0, job_size_points = 0, partition_points = 0,
          qos_points = 0;
  int32_t nice = 0;
  uint32_t priority_tier = 0;  // highest tier of its partitions: ordered before `priority`
  int64_t priority = 0;        // the sum minus nice (or the custom priority, rounded)
  bool operator==(const PriorityFactors&) const = default;
};

// A custom priority replacing the multifactor sum (higher runs first); used by simulator
// policies (las_policy, sjf_policy). Must be pure and deterministic.
using PriorityFn = std::function<double(const PendingJobView& job, Timestamp now)>;

struct SchedulerOptions {
  PriorityFn priority;        // empty = multifactor
  bool strict_order = false;  // step 7 of the algorithm
};

class Scheduler final : public Policy {
 public:
  // Requires: `ValidateSchedulerConfig(config)` succeeds (use `Create` otherwise).
  explicit Scheduler(SchedulerConfig config, SchedulerOptions options = {});
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Returns kInvalidArgument naming the inconsistency when `config` does not validate.
  static Result<std::unique_ptr<Scheduler>> Create(SchedulerConfig config,
                                                   SchedulerOptions options = {});

  Plan Decide(const ClusterSnapshot& snapshot, Timestamp now) override;

  // The priority of every pending job of `snapshot` and its factors, in JobId order.
  std::vector<PriorityFactors> Priorities(const ClusterSnapshot& snapshot, Timestamp now) const;

  // Checks at submit time whether `job` could ever run and may be queued: `job` as the
  // controller would put it in a snapshot (partitions and time limit resolved); `snapshot` gives
  // the nodes and the current running and pending jobs (for submitted-job limits).
  // Returns kInvalidArgument for an unknown partition, QOS or reservation, a time limit above
  // the partition's or QOS's maximum, more nodes or GPUs per job than a partition, account, user
  // or QOS allows, or a request no node of any of its partitions can ever hold; kPermissionDenied
  // for an unknown account (when accounts are configured), a user not in the account, a QOS
  // the account may not use, or a partition or reservation the account or user may not use;
  // kResourceExhausted when a submitted-jobs limit is reached. Cost: a walk over the nodes of its
  // partitions (stopping once enough could hold it), and over all jobs only when a
  // submitted-jobs limit applies to it. Messages name the job and entity:
  // `job 42: partition "train": time limit 8-00:00:00 exceeds max_time 7-00:00:00`.
  Status ValidateSubmission(const PendingJobView& job, const ClusterSnapshot& snapshot) const;

  const SchedulerConfig& config() const { return config_; }

  // Replaces the configuration (the account tree, users, QOS and limits changed live: the
  // controller's governance routes); the next `Decide` and checks use it. The options stay.
  // Requires: `ValidateSchedulerConfig(config)` succeeds.
  void Reconfigure(SchedulerConfig config);

 private:
  SchedulerConfig config_;
  SchedulerOptions options_;
  std::unique_ptr<const internal::ConfigIndex> index_;
  std::unique_ptr<internal::NodeCache> node_cache_;  // `Decide` only; see the file comment
};

}  // namespace corral::sched
