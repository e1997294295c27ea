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
  bool TryPreempt(const JobInfo& j, const std::vector<uint32_t>& parts, Plan* plan,
                  std::vector<Blocker>* out, Timestamp* estimate);

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

  // Pass state.
  struct CachedBlocker {
    bool priority;
    size_t reservations;
    Blocker blocker;
  };
  std::vector<CachedBlocker> cached_blockers_;
  std::set<std::tuple<uint64_t, int, int, bool>>
      preempt_failed_;                       // (state index, qos, holder, reclaim)
  std::vector<uint32_t> preemptible_nodes_;  // nodes with a job that may be preempted (ascending)
  struct VictimSummary {
    uint64_t qos_mask = 0;  // QOS of its preemptible jobs (all bits: an index >= 64)
    bool borrowed = false;  // one of them runs on borrowed GPUs
  };
  std::vector<VictimSummary> node_victims_;
  std::vector<uint32_t> candidates_scratch_;
  NodeBitset marks_scratch_;
  bool preemptible_indexed_ = false;
  uint32_t backfill_reservations_ = 0;
  uint32_t preemptors_ = 0;
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
      timeline_(snapshot, nodes_, config.backfill.window, now) {
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

bool Pass::TryPreempt(const JobInfo& j, const std::vector<uint32_t>& parts, Plan* plan,
                      std::vector<Blocker>* out, Timestamp* estimate) {
  const ConfigIndex::Qos* my_qos = j.qos >= 0 ? &index_.qos[j.qos] : nullptr;
  // Reclaim: the job's guarantee holder stays within its guarantee with this job.
  int holder = index_.Configured(j.account) ? index_.accounts[j.account].guarantee_holder : -1;
  bool reclaim =
      config_.preemption.reclaim && holder >= 0 &&
      limits_.account_gpus(holder) + j.gpus <= index_.accounts[holder].config->guaranteed_gpus;
  bool by_qos = my_qos != nullptr && std::find(my_qos->preempts.begin(), my_qos->preempts.end(),
                                               true) != my_qos->preempts.end();
  if (!reclaim && !by_qos) return false;
  auto victim_holder = [&](const RunJob& rj) {
    return index_.Configured(rj.account) ? index_.accounts[rj.account].guarantee_holder : -1;
  };
  auto eligible = [&](const RunJob& rj, bool* via_qos) {
    if (rj.view == nullptr || rj.being_preempted || rj.qos < 0) return false;
    if (index_.qos[rj.qos].config->preempt_mode == PreemptMode::kOff) return false;
    *via_qos = by_qos && my_qos->preempts[rj.qos];
    if (*via_qos) return true;
    return reclaim && rj.borrowed && victim_holder(rj) != holder;
  };
  auto lost_work = [&](const RunJob& rj) {
    Timestamp since = std::max(rj.view->start_time, rj.view->last_checkpoint);
    double secs = now_ > since ? ToSecondsF(now_ - since) : 0.0;
    return std::max<uint32_t>(1, rj.gpus) * secs;
  };

  struct Option {
    uint32_t node;
    double cost;
    uint32_t victim_gpus;
    std::vector<uint32_t> victims;  // job refs
  };
  const ResourceRequest& r = j.view->resources;
  if (!r.nodelist.empty()) return false;
  bool searched = false;
  for (uint32_t p : parts) {
    const Demand d = DemandFor(j, snap_.partitions[p]);
    const uint32_t need = j.nodes;
    // Victims only go away during a pass: a search that failed for this shape fails again.
    const bool cacheable = j.shape >= 0;
    const auto key = std::make_tuple(static_cast<uint64_t>(j.shape) * snap_.partitions.size() + p,
                                     j.qos, holder, reclaim);
    if (cacheable && preempt_failed_.count(key)) continue;
    searched = true;
    const Constraint c = ParseConstraint(r.constraint);
    std::vector<Option> options;
    struct V {
      uint32_t ref;
      double lost;
      const NodeUse* use;
    };
    std::vector<V> vs;
    // Candidates: nodes running a job that may ever be preempted, and (for several nodes) nodes
    // where the job fits already.
    if (!preemptible_indexed_) {
      preemptible_indexed_ = true;
      node_victims_.assign(nodes_.size(), VictimSummary());
      for (size_t n = 0; n < nodes_.size(); ++n) {
        VictimSummary& vsum = node_victims_[n];
        for (const NodeUse& u : nodes_.uses(n)) {
          const RunJob& rj = nodes_.job(u.job);
          if (rj.view == nullptr || rj.being_preempted || rj.qos < 0 ||
              index_.qos[rj.qos].config->preempt_mode == PreemptMode::kOff) {
            continue;
          }
          vsum.qos_mask |= rj.qos < 64 ? uint64_t{1} << rj.qos : ~uint64_t{0};
          vsum.borrowed |= rj.borrowed;
        }
        if (vsum.qos_mask != 0) preemptible_nodes_.push_back(static_cast<uint32_t>(n));
      }
    }
    // The QOS this job may preempt, as a mask over QOS indices.
    uint64_t my_mask = 0;
    if (by_qos) {
      for (size_t q = 0; q < my_qos->preempts.size(); ++q) {
        if (my_qos->preempts[q]) my_mask |= q < 64 ? uint64_t{1} << q : ~uint64_t{0};
      }
    }
    auto may_hold_victims = [&](uint32_t n) {
      const VictimSummary& vsum = node_victims_[n];
      return (vsum.qos_mask & my_mask) != 0 || (reclaim && vsum.borrowed);
    };
    std::vector<uint32_t>& candidates = candidates_scratch_;
    candidates.clear();
    if (need == 1) {
      for (uint32_t n : preemptible_nodes_) {
        if (nodes_.InPartition(p, n) && may_hold_victims(n)) candidates.push_back(n);
      }
    } else {
      NodeBitset& marks = marks_scratch_;
      marks.Resize(nodes_.size());
      for (uint32_t n : preemptible_nodes_) {
        if (nodes_.InPartition(p, n) && may_hold_victims(n)) marks.Set(n);
      }
      if (const Pool* pool = nodes_.PoolFor(p, d.type); pool != nullptr) {
        const Pool& pl = *pool;
        for (uint32_t k = d.gpus; k <= pl.capacity; ++k) {
          for (int64_t n = pl.buckets[k].Next(0); n != NodeBitset::kNone;
               n = pl.buckets[k].Next(n + 1)) {
            marks.Set(static_cast<uint32_t>(n));
          }
        }
      }
      for (int64_t n = marks.Next(0); n != NodeBitset::kNone; n = marks.Next(n + 1)) {
        candidates.push_back(static_cast<uint32_t>(n));
      }
    }
    for (uint32_t n : candidates) {
      const WorkNode& w = nodes_.node(n);
      if (!w.view->schedulable) continue;
      // Cheap filter first: a node without an eligible victim helps only if the job fits already.
      bool any = false, all_eligible = true;
      for (const NodeUse& u : nodes_.uses(n)) {
        bool via_qos = false;
        if (eligible(nodes_.job(u.job), &via_qos)) {
          any = true;
        } else {
          all_eligible = false;
        }
      }
      if (!any) {
        if (need > 1 && nodes_.StaticOk(j, n, c) && nodes_.WindowsOk(j, n, now_, j.end) &&
            nodes_.Fits(n, d, false)) {
          options.push_back({n, 0, 0, {}});
        }
        continue;
      }
      if (d.exclusive && !all_eligible) continue;
      if (!nodes_.StaticOk(j, n, c) || !nodes_.WindowsOk(j, n, now_, j.end)) continue;
      GpuSet mask = nodes_.TypeMask(n, d.type);
      if (mask.size() < d.gpus || w.view->cpus < d.cpus || w.view->mem_mb < nodes_.MemOn(d, n))
        continue;
      if (d.exclusive && w.resv_start != kNever) continue;
      vs.clear();
      GpuSet most = w.free;  // what the node would have with every eligible victim gone
      uint64_t most_cpus = w.cpus_free, most_mem = w.mem_free;
      for (const NodeUse& u : nodes_.uses(n)) {
        bool via_qos = false;
        if (eligible(nodes_.job(u.job), &via_qos)) {
          vs.push_back({u.job, 0.0, &u});
          most = most | u.gpus;
          most_cpus += u.cpus;
          most_mem += u.mem;
        }
      }
      if (!d.exclusive && (((most & mask) - w.resv_gpus).size() < d.gpus ||
                           most_cpus < static_cast<uint64_t>(d.cpus) + w.resv_cpus ||
                           most_mem < nodes_.MemOn(d, n) + w.resv_mem)) {
        continue;
      }
      for (V& v : vs) v.lost = lost_work(nodes_.job(v.ref));
      std::sort(vs.begin(), vs.end(), [&](const V& a, const V& b) {
        if (a.lost != b.lost) return a.lost < b.lost;
        if (nodes_.job(a.ref).gpus != nodes_.job(b.ref).gpus)
          return nodes_.job(a.ref).gpus < nodes_.job(b.ref).gpus;
        return nodes_.job(a.ref).view->id < nodes_.job(b.ref).view->id;
      });
      auto fits_with = [&](const std::vector<uint8_t>& take) {
        if (d.exclusive)
          return std::all_of(take.begin(), take.end(), [](uint8_t t) { return t != 0; });
        GpuSet g = w.free;
        uint64_t cpus = w.cpus_free, mem = w.mem_free;
        for (size_t i = 0; i < vs.size(); ++i) {
          if (!take[i]) continue;
          g = g | vs[i].use->gpus;
          cpus += vs[i].use->cpus;
          mem += vs[i].use->mem;
        }
        g = (g & mask) - w.resv_gpus;
        return g.size() >= d.gpus && cpus >= static_cast<uint64_t>(d.cpus) + w.resv_cpus &&
               mem >= nodes_.MemOn(d, n) + w.resv_mem;
      };
      std::vector<uint8_t> take(vs.size(), 0);
      size_t k = 0;
      while (!fits_with(take) && k < vs.size()) take[k++] = 1;
      if (!fits_with(take)) continue;
      for (size_t i = k; i-- > 0;) {  // drop victims that turn out not to be needed
        take[i] = 0;
        if (!fits_with(take)) take[i] = 1;
      }
      Option o{n, 0, 0, {}};
      for (size_t i = 0; i < vs.size(); ++i) {
        if (!take[i]) continue;
        o.cost += vs[i].lost;
        o.victim_gpus += vs[i].use->gpus.size();
        o.victims.push_back(vs[i].ref);
      }
      options.push_back(std::move(o));
    }
    if (options.size() < need) {
      if (cacheable) preempt_failed_.insert(key);
      continue;
    }
    std::sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
      if (a.cost != b.cost) return a.cost < b.cost;
      if (a.victim_gpus != b.victim_gpus) return a.victim_gpus < b.victim_gpus;
      return a.node < b.node;
    });
    options.resize(need);
    std::sort(options.begin(), options.end(),
              [](const Option& a, const Option& b) { return a.node < b.node; });

    // Order the victims; the job starts when the slowest grace ends.
    std::vector<uint32_t> victims;
    for (const Option& o : options)
      victims.insert(victims.end(), o.victims.begin(), o.victims.end());
    std::sort(victims.begin(), victims.end(), [&](uint32_t a, uint32_t b) {
      return nodes_.job(a).view->id < nodes_.job(b).view->id;
    });
    victims.erase(std::unique(victims.begin(), victims.end()), victims.end());
    Duration grace{0};
    std::vector<JobId> victim_ids;
    for (uint32_t ref : victims) {
      RunJob& rj = nodes_.job(ref);
      const ConfigIndex::Qos& vq = index_.qos[rj.qos];
      bool via_qos = false;
      eligible(rj, &via_qos);
      PreemptMode mode = vq.config->preempt_mode;
      if (mode == PreemptMode::kRequeue && !rj.view->requeue_allowed) mode = PreemptMode::kCancel;
      std::string reason =
          via_qos
              ? "qos " + (my_qos ? my_qos->config->name : "") + " preempts qos " + vq.config->name
              : "account " + index_.accounts[holder].config->name +
                    " reclaims its guaranteed GPUs from account " + rj.view->account;
      rj.being_preempted = true;
      nodes_.EndBy(ref, AddSat(now_, vq.grace));
      grace = std::max(grace, vq.grace);
      victim_ids.push_back(rj.view->id);
      plan->preemptions.push_back(rj.view->id);
      plan->preemption_orders.push_back({.job = rj.view->id,
                                         .preemptor = j.view->id,
                                         .mode = mode,
                                         .grace_time = vq.grace,
                                         .reason = reason});
    }
    const Timestamp start = AddSat(now_, grace);
    std::vector<std::pair<uint32_t, GpuSet>> free_then;
    for (const Option& o : options) {
      // Its GPUs of the type free once the victims are gone.
      const WorkNode& w = nodes_.node(o.node);
      GpuSet g = w.free;
      for (const NodeUse& u : nodes_.uses(o.node)) {
        if (std::find(o.victims.begin(), o.victims.end(), u.job) != o.victims.end()) g = g | u.gpus;
      }
      free_then.push_back({o.node, (g & nodes_.TypeMask(o.node, d.type)) - w.resv_gpus});
    }
    timeline_.Hold(j, p, d, start, free_then, plan);
    ++preemptors_;
    out->push_back({.code = "Resources",
                    .detail = DescribeDemand(j, snap_.partitions[p], d) + ": preempting job " +
                              JoinJobIds(victim_ids) + " (grace " + FormatSlurmDuration(grace) +
                              ")",
                    .scope = "partition",
                    .entity = snap_.partitions[p].name,
                    .resource = "gpu",
                    .requested = j.gpus,
                    .jobs = victim_ids});
    *estimate = start;
    return true;
  }
  if (searched) ++preemptors_;  // a fruitless search costs as much; a remembered failure nothing
  return false;
}

// ---------------------------------------------------------------------------------------------
// Reservations (backfill).

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
        preemptors_ < config_.preemption.max_preemptors_per_pass &&
        TryPreempt(j, parts, plan, blockers, estimate)) {
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
