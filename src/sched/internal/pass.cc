#include "sched/internal/pass.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sched/internal/explain.h"
#include "sched/internal/time_math.h"

namespace corral::sched::internal {

Pass::Pass(const SchedulerConfig& config, const SchedulerOptions& options, const ConfigIndex& index,
           const ClusterSnapshot& snapshot, Timestamp now, NodeCache* cache)
    : config_(config),
      options_(options),
      snap_(snapshot),
      now_(now),
      own_cache_(cache == nullptr ? std::make_unique<NodeCache>() : nullptr),
      cache_(cache != nullptr ? *cache : *own_cache_),
      // 1. Index the snapshot: nodes, pools and windows; running jobs and their use of nodes;
      // pending jobs; use per account, user, QOS and array.
      nodes_(config, index, snapshot, cache_),
      jobs_(config, index, snapshot, now, nodes_, shapes_),
      limits_(index, jobs_, nodes_.jobs(), snapshot, now),
      eligibility_(index, snapshot, nodes_.windows(), limits_, now),
      partitions_(snapshot, nodes_, jobs_, shapes_),
      prioritizer_(config, options, index, snapshot, cache_, now),
      placer_(snapshot, nodes_, index.topology, now),
      timeline_(snapshot, nodes_, config.backfill.window, now),
      preemptor_(config, index, snapshot, nodes_, limits_, timeline_, now) {
  part_blocked_.assign(snap_.partitions.size(), false);
}

void Pass::Run(Plan* plan) {
  shapes_.Reset(snap_.partitions.size());
  // 2. Every job's priority, and the order in which jobs are examined.
  prioritizer_.Compute(&jobs_, /*report=*/false);
  prioritizer_.Order(&jobs_.pending());
  plan->starts.reserve(std::min<size_t>(jobs_.pending().size(), 4 * nodes_.size() + 16));
  plan->pending.reserve(jobs_.pending().size());
  std::vector<Blocker> blockers;
  size_t examined = 0;
  for (JobInfo& j : jobs_.pending()) {
    // 3. Beyond the bound, a job is not examined: a cheap reason, and the caller keeps the
    // explanation of the last pass that examined it. (A job that jobs are being preempted for
    // is always examined: it must keep its reservation.)
    if (config_.max_jobs_per_pass > 0 && examined >= config_.max_jobs_per_pass && !Inflight(j)) {
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
    const size_t starts = plan->starts.size();
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

void Pass::Schedule(JobInfo& j, Plan* plan, std::vector<Blocker>* blockers, Timestamp* estimate) {
  // 3. Every blocker: eligibility, limits, partitions. A job with any does not start.
  if (j.needs_check) eligibility_.Check(j, blockers, estimate);
  limits_.Check(j, blockers);
  UsablePartitions(j, blockers);
  if (!blockers->empty()) return;
  // 7. Strict order: only the partitions where no earlier job is blocked.
  if (options_.strict_order && !OpenPartitions(blockers)) return;
  // 4. The first partition where it fits now starts it.
  bool only_priority = true;
  if (StartNow(j, plan, &only_priority)) return;
  // Blocked: 5. preemption, else 6. a reservation (7. neither in strict order).
  const bool inflight = Inflight(j);
  const size_t reservations_before = timeline_.holders();
  if (options_.strict_order) {
    for (uint32_t p : parts_) part_blocked_[p] = true;
  } else if (PreemptOrReserve(j, inflight, plan, blockers, estimate)) {
    return;
  }
  ExplainBlocked(j, only_priority, inflight, timeline_.holders() != reservations_before, blockers);
}

void Pass::UsablePartitions(const JobInfo& j, std::vector<Blocker>* blockers) {
  const PendingJobView& v = *j.view;
  parts_.clear();
  part_blockers_.clear();
  const size_t n_parts = j.n_parts > 0 || v.partitions.empty() ? j.n_parts : v.partitions.size();
  for (size_t k = 0; k < n_parts; ++k) {
    int32_t p = -1;
    if (j.n_parts > 0) {
      p = j.parts[k];
    } else if (auto it = cache_.part_by_name.find(v.partitions[k]);
               it != cache_.part_by_name.end()) {
      p = static_cast<int32_t>(it->second);
    }
    if (p < 0) {
      part_blockers_.push_back({.code = "PartitionConfig",
                                .detail = "no such partition " + v.partitions[k],
                                .scope = "partition",
                                .entity = v.partitions[k]});
    } else if (partitions_.Check(j, static_cast<uint32_t>(p), &part_blockers_)) {
      parts_.push_back(static_cast<uint32_t>(p));
    }
  }
  if (v.partitions.empty()) {
    part_blockers_.push_back(
        {.code = "PartitionConfig", .detail = "no partition", .scope = "partition"});
  }
  // A partition with a blocker is skipped; its reasons count only when none is left.
  if (parts_.empty()) {
    blockers->insert(blockers->end(), part_blockers_.begin(), part_blockers_.end());
  }
}

bool Pass::OpenPartitions(std::vector<Blocker>* blockers) {
  std::vector<uint32_t> open;
  for (uint32_t p : parts_) {
    if (!part_blocked_[p]) open.push_back(p);
  }
  if (open.empty()) {
    blockers->push_back({.code = "Priority",
                         .detail = "waiting behind a higher-priority job in partition " +
                                   snap_.partitions[parts_[0]].name,
                         .scope = "partition",
                         .entity = snap_.partitions[parts_[0]].name});
    return false;
  }
  parts_ = std::move(open);
  return true;
}

bool Pass::StartNow(const JobInfo& j, Plan* plan, bool* only_priority) {
  for (uint32_t p : parts_) {
    Placement placement;
    PlaceResult result = TryPlace(j, p, &placement);
    if (result == PlaceResult::kPlaced) {
      placement.backfilled = timeline_.holders() > 0;
      limits_.Add(j, placement.nodes);
      plan->starts.push_back(std::move(placement));
      return true;
    }
    if (result != PlaceResult::kPriority) *only_priority = false;
  }
  return false;
}

PlaceResult Pass::TryPlace(const JobInfo& j, uint32_t p, Placement* out) {
  // A (shape, partition) that failed is not searched again: resources only shrink in a pass.
  ShapeState* state = shapes_.StateOf(j, p);
  if (state != nullptr && state->failed != PlaceResult::kPlaced) return state->failed;
  const PlaceResult result = placer_.Place(j, p, DemandFor(j, snap_.partitions[p]), out);
  if (state != nullptr && result != PlaceResult::kPlaced) state->failed = result;
  return result;
}

bool Pass::PreemptOrReserve(const JobInfo& j, bool inflight, Plan* plan,
                            std::vector<Blocker>* blockers, Timestamp* estimate) {
  if (config_.preemption.enabled && !inflight &&
      preemptor_.searches() < config_.preemption.max_preemptors_per_pass &&
      preemptor_.TryPreempt(j, parts_, plan, blockers, estimate)) {
    return true;
  }
  if (inflight) {
    // Victims are being preempted for it: it keeps a reservation wherever it starts.
    timeline_.Reserve(j, parts_, /*forced=*/true, plan, estimate);
  } else if (config_.backfill.enabled && backfill_reservations_ < config_.backfill.reservations) {
    if (timeline_.Reserve(j, parts_, /*forced=*/false, plan, estimate)) ++backfill_reservations_;
  }
  return false;
}

void Pass::ExplainBlocked(const JobInfo& j, bool only_priority, bool inflight, bool own_reservation,
                          std::vector<Blocker>* blockers) {
  // The main blocker is the same for every job of this shape until reservations change: reuse it.
  const uint32_t p0 = parts_[0];
  ShapeState* state = inflight || own_reservation ? nullptr : shapes_.StateOf(j, p0);
  if (state != nullptr && state->blocker >= 0 &&
      cached_blockers_[state->blocker].priority == only_priority &&
      cached_blockers_[state->blocker].reservations == timeline_.holders()) {
    blockers->push_back(cached_blockers_[state->blocker].blocker);
  } else {
    blockers->push_back(ResourceBlocker(j, p0, only_priority, inflight));
    if (state != nullptr) {
      if (state->blocker < 0) {
        state->blocker = static_cast<int32_t>(cached_blockers_.size());
        cached_blockers_.emplace_back();
      }
      cached_blockers_[state->blocker] = {only_priority, timeline_.holders(), blockers->back()};
    }
  }
  ExplainWindows(j, blockers);
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

void Pass::ExplainWindows(const JobInfo& j, std::vector<Blocker>* blockers) const {
  // Reservation windows that keep nodes of its partitions away from it.
  for (size_t w = 0; w < nodes_.windows().size(); ++w) {
    if (static_cast<int>(w) == j.reservation) continue;
    const Reservation& res = *nodes_.windows()[w];
    if (!(now_ < res.end && res.start < j.end)) continue;
    for (uint32_t p : parts_) {
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

}  // namespace corral::sched::internal
