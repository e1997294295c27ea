#include "sched/internal/preemption.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/duration.h"
#include "sched/internal/explain.h"

namespace corral::sched::internal {

bool Preemptor::TryPreempt(const JobInfo& j, const std::vector<uint32_t>& parts, Plan* plan,
                           std::vector<Blocker>* out, Timestamp* estimate) {
  std::optional<Choice> choice = Choose(j, parts);
  if (!choice) return false;
  Order(j, RightsOf(j), *choice, plan, out, estimate);
  return true;
}

std::optional<Preemptor::Choice> Preemptor::Choose(const JobInfo& j,
                                                   const std::vector<uint32_t>& parts) {
  const Rights r = RightsOf(j);
  if (!r.reclaim && !r.by_qos) return std::nullopt;
  if (!j.view->resources.nodelist.empty()) return std::nullopt;
  bool searched = false;
  std::optional<Choice> choice = Search(j, r, parts, &searched);
  // A fruitless search costs as much as a fruitful one; a remembered failure nothing.
  if (searched) ++searches_;
  return choice;
}

Preemptor::Rights Preemptor::RightsOf(const JobInfo& j) const {
  Rights r;
  r.qos = j.qos >= 0 ? &index_.qos[j.qos] : nullptr;
  // Reclaim: the job's guarantee holder stays within its guarantee with this job.
  r.holder = index_.Configured(j.account) ? index_.accounts[j.account].guarantee_holder : -1;
  r.reclaim =
      config_.preemption.reclaim && r.holder >= 0 &&
      limits_.account_gpus(r.holder) + j.gpus <= index_.accounts[r.holder].config->guaranteed_gpus;
  r.by_qos = r.qos != nullptr && std::find(r.qos->preempts.begin(), r.qos->preempts.end(), true) !=
                                     r.qos->preempts.end();
  if (r.by_qos) {
    for (size_t q = 0; q < r.qos->preempts.size(); ++q) {
      if (r.qos->preempts[q]) r.qos_mask |= q < 64 ? uint64_t{1} << q : ~uint64_t{0};
    }
  }
  return r;
}

bool Preemptor::Eligible(const Rights& r, const RunJob& rj, bool* via_qos) const {
  if (rj.view == nullptr || rj.being_preempted || rj.qos < 0) return false;
  if (index_.qos[rj.qos].config->preempt_mode == PreemptMode::kOff) return false;
  *via_qos = r.by_qos && r.qos->preempts[rj.qos];
  if (*via_qos) return true;
  const int victim_holder =
      index_.Configured(rj.account) ? index_.accounts[rj.account].guarantee_holder : -1;
  return r.reclaim && rj.borrowed && victim_holder != r.holder;
}

double Preemptor::LostWork(const RunJob& rj) const {
  Timestamp since = std::max(rj.view->start_time, rj.view->last_checkpoint);
  double secs = now_ > since ? ToSecondsF(now_ - since) : 0.0;
  return std::max<uint32_t>(1, rj.gpus) * secs;
}

void Preemptor::IndexVictims() {
  if (indexed_) return;
  indexed_ = true;
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

void Preemptor::FindCandidates(const Rights& r, uint32_t p, const Demand& d, uint32_t need) {
  IndexVictims();
  auto may_hold_victims = [&](uint32_t n) {
    const VictimSummary& vsum = node_victims_[n];
    return (vsum.qos_mask & r.qos_mask) != 0 || (r.reclaim && vsum.borrowed);
  };
  candidates_.clear();
  if (need == 1) {
    for (uint32_t n : preemptible_nodes_) {
      if (nodes_.InPartition(p, n) && may_hold_victims(n)) candidates_.push_back(n);
    }
    return;
  }
  marks_.Resize(nodes_.size());
  for (uint32_t n : preemptible_nodes_) {
    if (nodes_.InPartition(p, n) && may_hold_victims(n)) marks_.Set(n);
  }
  if (const Pool* pool = nodes_.PoolFor(p, d.type); pool != nullptr) {
    for (uint32_t k = d.gpus; k <= pool->capacity; ++k) {
      for (int64_t n = pool->buckets[k].Next(0); n != NodeBitset::kNone;
           n = pool->buckets[k].Next(n + 1)) {
        marks_.Set(static_cast<uint32_t>(n));
      }
    }
  }
  for (int64_t n = marks_.Next(0); n != NodeBitset::kNone; n = marks_.Next(n + 1)) {
    candidates_.push_back(static_cast<uint32_t>(n));
  }
}

std::optional<Preemptor::Option> Preemptor::CheapestOn(const JobInfo& j, const Rights& r,
                                                       uint32_t n, const Demand& d,
                                                       const Constraint& c, uint32_t need) {
  const WorkNode& w = nodes_.node(n);
  if (!w.view->schedulable) return std::nullopt;
  // Cheap filter first: a node without an eligible victim helps only if the job fits already.
  bool any = false, all_eligible = true;
  for (const NodeUse& u : nodes_.uses(n)) {
    bool via_qos = false;
    if (Eligible(r, nodes_.job(u.job), &via_qos)) {
      any = true;
    } else {
      all_eligible = false;
    }
  }
  if (!any) {
    if (need > 1 && nodes_.StaticOk(j, n, c) && nodes_.WindowsOk(j, n, now_, j.end) &&
        nodes_.Fits(n, d, false)) {
      return Option{n, 0, 0, {}};
    }
    return std::nullopt;
  }
  if (d.exclusive && !all_eligible) return std::nullopt;
  if (!nodes_.StaticOk(j, n, c) || !nodes_.WindowsOk(j, n, now_, j.end)) return std::nullopt;
  GpuSet mask = nodes_.TypeMask(n, d.type);
  if (mask.size() < d.gpus || w.view->cpus < d.cpus || w.view->mem_mb < nodes_.MemOn(d, n))
    return std::nullopt;
  if (d.exclusive && w.resv_start != kNever) return std::nullopt;
  struct V {
    uint32_t ref;
    double lost;
    const NodeUse* use;
  };
  std::vector<V> vs;
  GpuSet most = w.free;  // what the node would have with every eligible victim gone
  uint64_t most_cpus = w.cpus_free, most_mem = w.mem_free;
  for (const NodeUse& u : nodes_.uses(n)) {
    bool via_qos = false;
    if (Eligible(r, nodes_.job(u.job), &via_qos)) {
      vs.push_back({u.job, 0.0, &u});
      most = most | u.gpus;
      most_cpus += u.cpus;
      most_mem += u.mem;
    }
  }
  if (!d.exclusive && (((most & mask) - w.resv_gpus).size() < d.gpus ||
                       most_cpus < static_cast<uint64_t>(d.cpus) + w.resv_cpus ||
                       most_mem < nodes_.MemOn(d, n) + w.resv_mem)) {
    return std::nullopt;
  }
  for (V& v : vs) v.lost = LostWork(nodes_.job(v.ref));
  std::sort(vs.begin(), vs.end(), [&](const V& a, const V& b) {
    if (a.lost != b.lost) return a.lost < b.lost;
    if (nodes_.job(a.ref).gpus != nodes_.job(b.ref).gpus)
      return nodes_.job(a.ref).gpus < nodes_.job(b.ref).gpus;
    return nodes_.job(a.ref).view->id < nodes_.job(b.ref).view->id;
  });
  auto fits_with = [&](const std::vector<uint8_t>& take) {
    if (d.exclusive) return std::all_of(take.begin(), take.end(), [](uint8_t t) { return t != 0; });
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
  if (!fits_with(take)) return std::nullopt;
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
  return o;
}

std::optional<Preemptor::Choice> Preemptor::Search(const JobInfo& j, const Rights& r,
                                                   const std::vector<uint32_t>& parts,
                                                   bool* searched) {
  const Constraint c = ParseConstraint(j.view->resources.constraint);
  for (uint32_t p : parts) {
    const Demand d = DemandFor(j, snap_.partitions[p]);
    const uint32_t need = j.nodes;
    // Victims only go away during a pass: a search that failed for this shape fails again.
    const bool cacheable = j.shape >= 0;
    const auto key = std::make_tuple(static_cast<uint64_t>(j.shape) * snap_.partitions.size() + p,
                                     j.qos, r.holder, r.reclaim);
    if (cacheable && failed_.count(key)) continue;
    *searched = true;
    FindCandidates(r, p, d, need);
    std::vector<Option> options;
    for (uint32_t n : candidates_) {
      if (std::optional<Option> o = CheapestOn(j, r, n, d, c, need))
        options.push_back(std::move(*o));
    }
    if (options.size() < need) {
      if (cacheable) failed_.insert(key);
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
    Choice choice{.partition = p, .nodes = std::move(options), .victims = {}};
    for (const Option& o : choice.nodes)
      choice.victims.insert(choice.victims.end(), o.victims.begin(), o.victims.end());
    std::sort(choice.victims.begin(), choice.victims.end(), [&](uint32_t a, uint32_t b) {
      return nodes_.job(a).view->id < nodes_.job(b).view->id;
    });
    choice.victims.erase(std::unique(choice.victims.begin(), choice.victims.end()),
                         choice.victims.end());
    return choice;
  }
  return std::nullopt;
}

void Preemptor::Order(const JobInfo& j, const Rights& r, const Choice& choice, Plan* plan,
                      std::vector<Blocker>* out, Timestamp* estimate) {
  // Order the victims; the job starts when the slowest grace ends.
  Duration grace{0};
  std::vector<JobId> victim_ids;
  for (uint32_t ref : choice.victims) {
    RunJob& rj = nodes_.job(ref);
    const ConfigIndex::Qos& vq = index_.qos[rj.qos];
    bool via_qos = false;
    Eligible(r, rj, &via_qos);
    PreemptMode mode = vq.config->preempt_mode;
    if (mode == PreemptMode::kRequeue && !rj.view->requeue_allowed) mode = PreemptMode::kCancel;
    std::string reason =
        via_qos ? "qos " + (r.qos ? r.qos->config->name : "") + " preempts qos " + vq.config->name
                : "account " + index_.accounts[r.holder].config->name +
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
  const uint32_t p = choice.partition;
  const Demand d = DemandFor(j, snap_.partitions[p]);
  const Timestamp start = AddSat(now_, grace);
  std::vector<std::pair<uint32_t, GpuSet>> free_then;
  for (const Option& o : choice.nodes) {
    // Its GPUs of the type free once the victims are gone.
    const WorkNode& w = nodes_.node(o.node);
    GpuSet g = w.free;
    for (const NodeUse& u : nodes_.uses(o.node)) {
      if (std::find(o.victims.begin(), o.victims.end(), u.job) != o.victims.end()) g = g | u.gpus;
    }
    free_then.push_back({o.node, (g & nodes_.TypeMask(o.node, d.type)) - w.resv_gpus});
  }
  timeline_.Hold(j, p, d, start, free_then, plan);
  out->push_back({.code = "Resources",
                  .detail = DescribeDemand(j, snap_.partitions[p], d) + ": preempting job " +
                            JoinJobIds(victim_ids) + " (grace " + FormatSlurmDuration(grace) + ")",
                  .scope = "partition",
                  .entity = snap_.partitions[p].name,
                  .resource = "gpu",
                  .requested = j.gpus,
                  .jobs = victim_ids});
  *estimate = start;
}

}  // namespace corral::sched::internal
