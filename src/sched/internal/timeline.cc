#include "sched/internal/timeline.h"

#include <algorithm>
#include <utility>

#include "sched/internal/constraint.h"
#include "sched/internal/gpu_pick.h"

namespace corral::sched::internal {

Timestamp Timeline::EarliestStart(const JobInfo& j, uint32_t n, const Demand& d,
                                  Timestamp bound) const {
  const WorkNode& w = nodes_.node(n);
  if (!w.view->schedulable) return kNever;
  const GpuSet mask = nodes_.TypeMask(n, d.type);
  if (mask.size() < d.gpus || w.view->cpus < d.cpus || w.view->mem_mb < nodes_.MemOn(d, n))
    return kNever;
  Timestamp t = now_;
  if (d.exclusive) {
    if (w.resv_start != kNever) return kNever;
    for (const NodeUse& u : nodes_.uses(n)) t = std::max(t, nodes_.job(u.job).end);
  } else {
    GpuSet g = nodes_.Available(n, d.type, false);
    uint64_t cpus = SubSat(w.cpus_free, w.resv_cpus), mem = SubSat(w.mem_free, w.resv_mem);
    auto fits = [&] { return g.size() >= d.gpus && cpus >= d.cpus && mem >= nodes_.MemOn(d, n); };
    if (!fits()) {
      if (w.resv_whole || (mask - w.resv_gpus).size() < d.gpus) return kNever;
      // Cheap bound first: nothing is released before the earliest end.
      if (nodes_.min_end(n) >= bound) return kNever;
      // Releases in time order; the reserved CPUs/memory stay held (conservative).
      std::vector<std::pair<Timestamp, uint32_t>>& rel = release_scratch_;
      rel.clear();
      for (uint32_t k = 0; k < nodes_.uses(n).size(); ++k)
        rel.push_back({nodes_.job(nodes_.uses(n)[k].job).end, k});
      std::sort(rel.begin(), rel.end());
      t = kNever;
      uint64_t held_cpus = w.resv_cpus, held_mem = w.resv_mem;
      uint64_t raw_cpus = w.cpus_free, raw_mem = w.mem_free;
      for (const auto& [end, k] : rel) {
        if (end >= bound || end == kNever) return kNever;
        const NodeUse& u = nodes_.uses(n)[k];
        g = g | ((u.gpus & mask) - w.resv_gpus);
        raw_cpus += u.cpus;
        raw_mem += u.mem;
        cpus = raw_cpus > held_cpus ? raw_cpus - held_cpus : 0;
        mem = raw_mem > held_mem ? raw_mem - held_mem : 0;
        if (fits()) {
          t = end;
          break;
        }
      }
      if (t == kNever) return kNever;
    }
  }
  // Move past reservation windows the job would reach into.
  const std::span<const uint32_t> windows = nodes_.WindowsOf(n);
  for (size_t guard = 0; guard <= windows.size(); ++guard) {
    bool moved = false;
    for (uint32_t r : windows) {
      if (static_cast<int>(r) == j.reservation) continue;
      const Reservation& res = *nodes_.windows()[r];
      if (t < res.end && res.start < AddSat(t, j.limit)) {
        t = res.end;
        moved = true;
        if (t == kNever) return kNever;
      }
    }
    if (!moved) break;
  }
  if (j.reservation >= 0) {
    const Reservation& own = *nodes_.windows()[j.reservation];
    t = std::max(t, own.start);
    if (t >= own.end) return kNever;
  }
  return t >= bound ? kNever : t;
}

bool Timeline::Reserve(const JobInfo& j, const std::vector<uint32_t>& parts, bool forced,
                       Plan* plan, Timestamp* estimate) {
  const ResourceRequest& r = j.view->resources;
  if (!r.nodelist.empty()) return false;
  nodes_.TrackEnds();
  const uint32_t need = std::max<uint32_t>(1, r.nodes);
  Timestamp best_t = forced ? kNever : AddSat(now_, window_);
  if (!forced && best_t != kNever)
    best_t += Duration(1);  // a start exactly at the window end counts
  uint32_t best_p = 0;
  std::vector<std::pair<Timestamp, uint32_t>> best_nodes;
  for (uint32_t p : parts) {
    const Demand d = DemandFor(j, snap_.partitions[p]);
    const Constraint c = ParseConstraint(r.constraint);
    // The `need` earliest (time, node) pairs, kept as a max-heap.
    std::vector<std::pair<Timestamp, uint32_t>> heap;
    for (uint32_t n : nodes_.PartitionNodes(p)) {
      if (!nodes_.StaticOk(j, n, c)) continue;
      // A node starting after the current `need`-th earliest cannot improve the choice.
      Timestamp bound =
          heap.size() == need ? std::min(best_t, heap.front().first + Duration(1)) : best_t;
      Timestamp t = EarliestStart(j, n, d, bound);
      if (t == kNever) continue;
      if (heap.size() < need) {
        heap.push_back({t, n});
        std::push_heap(heap.begin(), heap.end());
      } else if (std::make_pair(t, n) < heap.front()) {
        std::pop_heap(heap.begin(), heap.end());
        heap.back() = {t, n};
        std::push_heap(heap.begin(), heap.end());
      }
    }
    if (heap.size() < need) continue;
    Timestamp t = heap.front().first;
    if (t < best_t) {
      best_t = t;
      best_p = p;
      best_nodes = heap;
    }
  }
  if (best_nodes.empty()) return false;
  std::sort(best_nodes.begin(), best_nodes.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  const Demand d = DemandFor(j, snap_.partitions[best_p]);
  std::vector<std::pair<uint32_t, GpuSet>> free_then;
  for (const auto& [t, n] : best_nodes) {
    // Its GPUs of the type free at `best_t`: free now, or released by then.
    GpuSet g = nodes_.Available(n, d.type, false);
    for (const NodeUse& u : nodes_.uses(n)) {
      if (nodes_.job(u.job).end <= best_t)
        g = g | ((u.gpus & nodes_.TypeMask(n, d.type)) - nodes_.node(n).resv_gpus);
    }
    free_then.push_back({n, g});
  }
  Hold(j, best_p, d, best_t, free_then, plan);
  *estimate = best_t;
  return true;
}
void Timeline::Hold(const JobInfo& j, uint32_t p, const Demand& d, Timestamp start,
                    const std::vector<std::pair<uint32_t, GpuSet>>& free_at_start, Plan* plan) {
  ReservedStart rs{.job = j.view->id, .partition = snap_.partitions[p].name, .start = start};
  std::vector<uint32_t> held;
  for (const auto& [n, free] : free_at_start) {
    const NodeView& v = nodes_.view(n);
    GpuSet pick = d.exclusive ? v.usable_gpus : PickGpus(v, free, d.gpus);
    nodes_.HoldForReservation(n, d, pick, start);
    rs.nodes.push_back({.node = v.id,
                        .node_name = v.name,
                        .cpus = d.exclusive ? v.cpus : d.cpus,
                        .mem_mb = d.exclusive ? v.mem_mb : nodes_.MemOn(d, n),
                        .gpus = pick});
    held.push_back(n);
  }
  reserved_jobs_.push_back({j.view->id, held});
  plan->reservations.push_back(std::move(rs));
}

std::vector<JobId> Timeline::HoldersIn(uint32_t p) const {
  std::vector<JobId> out;
  for (const auto& [job, nodes] : reserved_jobs_) {
    if (std::any_of(nodes.begin(), nodes.end(),
                    [&](uint32_t n) { return nodes_.InPartition(p, n); })) {
      out.push_back(job);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace corral::sched::internal
