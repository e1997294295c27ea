#include "sched/scheduler.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/duration.h"
#include "sched/fair_share.h"
#include "sched/internal/admission.h"
#include "sched/internal/config_index.h"
#include "sched/internal/constraint.h"
#include "sched/internal/eligibility.h"
#include "sched/internal/explain.h"
#include "sched/internal/flat_map.h"
#include "sched/internal/gpu_pick.h"
#include "sched/internal/job_table.h"
#include "sched/internal/limits.h"
#include "sched/internal/node_bitset.h"
#include "sched/internal/node_cache.h"
#include "sched/internal/node_state.h"
#include "sched/internal/partition_check.h"
#include "sched/internal/placement.h"
#include "sched/internal/preemption.h"
#include "sched/internal/priority.h"
#include "sched/internal/shapes.h"
#include "sched/internal/time_math.h"
#include "sched/internal/timeline.h"

namespace corral::sched {

namespace {

using internal::AddSat;
using internal::ConfigIndex;
using internal::Constraint;
using internal::Demand;
using internal::DemandFor;
using internal::DescribeDemand;
using internal::EffectiveLimit;
using internal::Eligibility;
using internal::FlatMap;
using internal::FormatTime;
using internal::IntHash;
using internal::JobInfo;
using internal::JobTable;
using internal::JoinJobIds;
using internal::kNever;
using internal::Membership;
using internal::NameMap;
using internal::NodeBitset;
using internal::NodeCache;
using internal::NodeState;
using internal::NodeUse;
using internal::ParseConstraint;
using internal::PartitionCheck;
using internal::PickGpus;
using internal::Placer;
using internal::PlaceResult;
using internal::Pool;
using internal::Preemptor;
using internal::Prioritizer;
using internal::RunJob;
using internal::ShapeKey;
using internal::ShapeKeyHash;
using internal::ShapeMemo;
using internal::ShapeState;
using internal::SubSat;
using internal::Timeline;
using internal::UseLimits;
using internal::WorkNode;

using internal::Demand;
using internal::DemandFor;
using internal::DescribeDemand;
using internal::Eligibility;
using internal::JobInfo;
using internal::JobTable;
// All of one pass: built from the snapshot, consumed by `Run`.
class Pass {
 public:
  // `cache`: the static index of an earlier pass, rebuilt here unless it matches the snapshot;
  // nullptr = build one for this pass.
  Pass(const SchedulerConfig& config, const SchedulerOptions& options, const ConfigIndex& index,
       const ClusterSnapshot& snapshot, Timestamp now, NodeCache* cache);

  void Run(Plan* plan);
  // Sets every job's priority; returns the factors.
  std::vector<PriorityFactors> ComputePriorities() {
    return prioritizer_.Compute(&jobs_, /*report=*/true);
  }

 private:
  // Setup.

  // Per job.
  void Schedule(JobInfo& j, Plan* plan, std::vector<Blocker>* blockers, Timestamp* estimate);
  PlaceResult TryPlace(const JobInfo& j, uint32_t p, Placement* out);
  Blocker ResourceBlocker(const JobInfo& j, uint32_t p, bool priority, bool inflight);

  // Nodes.

  // Use counters.

  const SchedulerConfig& config_;
  const SchedulerOptions& options_;
  const ConfigIndex& index_;
  const ClusterSnapshot& snap_;
  const Timestamp now_;

  // Nodes: the static index comes from `cache_` (the scheduler's, or the pass's own), which also
  // lends the pass its buffers.
  std::unique_ptr<NodeCache> own_cache_;
  NodeCache& cache_;
  NodeState nodes_;
  const NameMap<uint32_t>& part_by_name_ = cache_.part_by_name;  // lookups only

  ShapeMemo shapes_;
  JobTable jobs_;
  UseLimits limits_;
  Eligibility eligibility_;
  PartitionCheck partitions_;
  Prioritizer prioritizer_;
  Placer placer_;
  Timeline timeline_;
  Preemptor preemptor_;

  // Pass state.
  struct CachedBlocker {
    bool priority;
    size_t reservations;
    Blocker blocker;
  };
  std::vector<CachedBlocker> cached_blockers_;

  uint32_t backfill_reservations_ = 0;
  std::vector<bool> part_blocked_;  // strict order
  std::vector<uint32_t> parts_scratch_;
  std::vector<Blocker> part_blockers_scratch_;
};

Pass::Pass(const SchedulerConfig& config, const SchedulerOptions& options, const ConfigIndex& index,
           const ClusterSnapshot& snapshot, Timestamp now, NodeCache* cache)
    : config_(config),
      options_(options),
      index_(index),
      snap_(snapshot),
      now_(now),
      own_cache_(cache == nullptr ? std::make_unique<NodeCache>() : nullptr),
      cache_(cache != nullptr ? *cache : *own_cache_),
      nodes_(config, index, snapshot, cache_),
      jobs_(config, index, snapshot, now, nodes_, shapes_),
      limits_(index, jobs_, nodes_.jobs(), snapshot),
      eligibility_(index, snapshot, nodes_.windows(), limits_, now),
      partitions_(snapshot, nodes_, jobs_, shapes_),
      prioritizer_(config, options, index, snapshot, cache_, now),
      placer_(snapshot, nodes_, index.topology, now),
      timeline_(snapshot, nodes_, config.backfill.window, now),
      preemptor_(config, index, snapshot, nodes_, limits_, timeline_, now) {
  part_blocked_.assign(snap_.partitions.size(), false);
}

// ---------------------------------------------------------------------------------------------
// Nodes.

// ---------------------------------------------------------------------------------------------
// Eligibility, dependencies and limits.

// ---------------------------------------------------------------------------------------------
// Placement now.

PlaceResult Pass::TryPlace(const JobInfo& j, uint32_t p, Placement* out) {
  ShapeState* state = shapes_.StateOf(j, p);
  if (state != nullptr && state->failed != PlaceResult::kPlaced) return state->failed;
  const PlaceResult result = placer_.Place(j, p, DemandFor(j, snap_.partitions[p]), out);
  if (state != nullptr && result != PlaceResult::kPlaced) state->failed = result;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Preemption.

// ---------------------------------------------------------------------------------------------
// The pass.

void Pass::Schedule(JobInfo& j, Plan* plan, std::vector<Blocker>* blockers, Timestamp* estimate) {
  const PendingJobView& v = *j.view;
  if (j.needs_check) eligibility_.Check(j, blockers, estimate);
  limits_.Check(j, blockers);
  std::vector<uint32_t>& parts = parts_scratch_;
  std::vector<Blocker>& part_blockers = part_blockers_scratch_;
  parts.clear();
  part_blockers.clear();
  const size_t n_parts = j.n_parts > 0 || v.partitions.empty() ? j.n_parts : v.partitions.size();
  for (size_t k = 0; k < n_parts; ++k) {
    int32_t p = -1;
    if (j.n_parts > 0) {
      p = j.parts[k];
    } else if (auto it = part_by_name_.find(v.partitions[k]); it != part_by_name_.end()) {
      p = static_cast<int32_t>(it->second);
    }
    if (p < 0) {
      part_blockers.push_back({.code = "PartitionConfig",
                               .detail = "no such partition " + v.partitions[k],
                               .scope = "partition",
                               .entity = v.partitions[k]});
    } else if (partitions_.Check(j, static_cast<uint32_t>(p), &part_blockers)) {
      parts.push_back(static_cast<uint32_t>(p));
    }
  }
  if (v.partitions.empty()) {
    part_blockers.push_back(
        {.code = "PartitionConfig", .detail = "no partition", .scope = "partition"});
  }
  if (parts.empty()) blockers->insert(blockers->end(), part_blockers.begin(), part_blockers.end());
  if (!blockers->empty()) return;

  if (options_.strict_order) {
    std::vector<uint32_t> open;
    for (uint32_t p : parts) {
      if (!part_blocked_[p]) open.push_back(p);
    }
    if (open.empty()) {
      blockers->push_back({.code = "Priority",
                           .detail = "waiting behind a higher-priority job in partition " +
                                     snap_.partitions[parts[0]].name,
                           .scope = "partition",
                           .entity = snap_.partitions[parts[0]].name});
      return;
    }
    parts = open;
  }
  bool only_priority = true;
  for (uint32_t p : parts) {
    Placement placement;
    PlaceResult result = TryPlace(j, p, &placement);
    if (result == PlaceResult::kPlaced) {
      placement.backfilled = timeline_.holders() > 0;
      plan->starts.push_back(std::move(placement));
      limits_.Add(j);
      return;
    }
    if (result != PlaceResult::kPriority) only_priority = false;
  }
  // Blocked.
  const size_t pos = j.view - snap_.pending.data();
  const size_t reservations_before = timeline_.holders();
  if (options_.strict_order) {
    for (uint32_t p : parts) part_blocked_[p] = true;
  } else {
    if (config_.preemption.enabled && !jobs_.InflightFor(pos) &&
        preemptor_.searches() < config_.preemption.max_preemptors_per_pass &&
        preemptor_.TryPreempt(j, parts, plan, blockers, estimate)) {
      return;
    }
    if (jobs_.InflightFor(pos)) {
      timeline_.Reserve(j, parts, /*forced=*/true, plan, estimate);
    } else if (config_.backfill.enabled && backfill_reservations_ < config_.backfill.reservations) {
      if (timeline_.Reserve(j, parts, /*forced=*/false, plan, estimate)) ++backfill_reservations_;
    }
  }
  // The main blocker is the same for every job of this shape until reservations change: reuse it.
  const uint32_t p0 = parts[0];
  const bool own_reservation = timeline_.holders() != reservations_before;
  ShapeState* state = jobs_.InflightFor(pos) || own_reservation ? nullptr : shapes_.StateOf(j, p0);
  if (state != nullptr && state->blocker >= 0 &&
      cached_blockers_[state->blocker].priority == only_priority &&
      cached_blockers_[state->blocker].reservations == timeline_.holders()) {
    blockers->push_back(cached_blockers_[state->blocker].blocker);
  } else {
    blockers->push_back(ResourceBlocker(j, p0, only_priority, jobs_.InflightFor(pos)));
    if (state != nullptr) {
      if (state->blocker < 0) {
        state->blocker = static_cast<int32_t>(cached_blockers_.size());
        cached_blockers_.emplace_back();
      }
      cached_blockers_[state->blocker] = {only_priority, timeline_.holders(), blockers->back()};
    }
  }
  // Reservation windows that keep nodes of its partitions away from it.
  for (size_t w = 0; w < nodes_.windows().size(); ++w) {
    if (static_cast<int>(w) == j.reservation) continue;
    const Reservation& res = *nodes_.windows()[w];
    if (!(now_ < res.end && res.start < j.end)) continue;
    for (uint32_t p : parts) {
      if (!nodes_.WindowInPartition(w, p)) continue;
      blockers->push_back(
          {.code = "ReqNodeNotAvail",
           .detail = std::string(res.maintenance ? "reserved for maintenance" : "reserved") + ": " +
                     res.name + " holds nodes of partition " + snap_.partitions[p].name + " from " +
                     FormatTimestamp(res.start) + " to " + FormatTime(res.end),
           .scope = "reservation",
           .entity = res.name});
      break;
    }
  }
}

Blocker Pass::ResourceBlocker(const JobInfo& j, uint32_t p, bool priority, bool inflight) {
  const Demand d = DemandFor(j, snap_.partitions[p]);
  std::vector<JobId> holders = priority ? timeline_.HoldersIn(p) : std::vector<JobId>();
  if (!holders.empty()) {
    return {.code = "Priority",
            .detail = DescribeDemand(j, snap_.partitions[p], d) +
                      ", held for higher-priority job " + JoinJobIds(holders),
            .scope = "partition",
            .entity = snap_.partitions[p].name,
            .resource = "gpu",
            .requested = j.gpus,
            .jobs = std::move(holders)};
  }
  std::string detail = DescribeDemand(j, snap_.partitions[p], d);
  if (inflight) detail += " (freed by jobs being preempted for it)";
  return {.code = "Resources",
          .detail = std::move(detail),
          .scope = "partition",
          .entity = snap_.partitions[p].name,
          .resource = d.gpus > 0 ? "gpu" : "cpu",
          .requested = d.gpus > 0 ? j.gpus : d.cpus};
}

void Pass::Run(Plan* plan) {
  shapes_.Reset(snap_.partitions.size());
  prioritizer_.Compute(&jobs_, /*report=*/false);
  prioritizer_.Order(&jobs_.pending());
  plan->starts.reserve(std::min<size_t>(jobs_.pending().size(), 4 * nodes_.size() + 16));
  plan->pending.reserve(jobs_.pending().size());
  std::vector<Blocker> blockers;
  size_t examined = 0;
  for (JobInfo& j : jobs_.pending()) {
    // Beyond the bound, a job is not examined: a cheap reason, and the caller keeps the
    // explanation of the last pass that examined it.
    // (A job that jobs are being preempted for is always examined: it must keep its reservation.)
    if (config_.max_jobs_per_pass > 0 && examined >= config_.max_jobs_per_pass &&
        !jobs_.InflightFor(j.view - snap_.pending.data())) {
      plan->pending.push_back(PendingReason{.job = j.view->id,
                                            .code = "Priority",
                                            .detail = "not examined",
                                            .priority = j.priority,
                                            .examined = false});
      continue;
    }
    ++examined;
    blockers.clear();
    Timestamp estimate{};
    size_t starts = plan->starts.size();
    Schedule(j, plan, &blockers, &estimate);
    if (plan->starts.size() > starts) continue;
    PendingReason reason;
    reason.job = j.view->id;
    if (!blockers.empty()) {
      reason.code = blockers.front().code;
      reason.detail = blockers.front().detail;
    }
    reason.estimated_start = estimate;
    reason.blockers = std::move(blockers);
    blockers = {};
    reason.priority = j.priority;
    plan->pending.push_back(std::move(reason));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scheduler.

Scheduler::Scheduler(SchedulerConfig config, SchedulerOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      index_(std::make_unique<internal::ConfigIndex>(config_)) {}

Scheduler::~Scheduler() = default;

Result<std::unique_ptr<Scheduler>> Scheduler::Create(SchedulerConfig config,
                                                     SchedulerOptions options) {
  CORRAL_RETURN_IF_ERROR(ValidateSchedulerConfig(config));
  return std::make_unique<Scheduler>(std::move(config), std::move(options));
}

Plan Scheduler::Decide(const ClusterSnapshot& snapshot, Timestamp now) {
  Plan plan;
  if (node_cache_ == nullptr) node_cache_ = std::make_unique<internal::NodeCache>();
  Pass pass(config_, options_, *index_, snapshot, now, node_cache_.get());
  pass.Run(&plan);
  return plan;
}

Status Scheduler::ValidateSubmission(const PendingJobView& job,
                                     const ClusterSnapshot& snapshot) const {
  return internal::ValidateSubmission(config_, *index_, job, snapshot);
}

std::vector<PriorityFactors> Scheduler::Priorities(const ClusterSnapshot& snapshot,
                                                   Timestamp now) const {
  Pass pass(config_, options_, *index_, snapshot, now, /*cache=*/nullptr);
  return pass.ComputePriorities();
}

}  // namespace corral::sched
