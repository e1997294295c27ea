#include "sched/internal/placement.h"

#include <algorithm>
#include <string>

#include "sched/internal/gpu_pick.h"

namespace corral::sched::internal {

PlaceResult Placer::Place(const JobInfo& j, uint32_t p, const Demand& d, Placement* out) {
  if (nodes_.PoolFor(p, d.type) == nullptr) return PlaceResult::kResources;
  const Constraint c = ParseConstraint(j.view->resources.constraint);
  const PlaceResult result = Choose(j, p, d, c);
  if (result == PlaceResult::kPlaced) Start(j, p, d, out);
  return result;
}

PlaceResult Placer::Choose(const JobInfo& j, uint32_t p, const Demand& d, const Constraint& c) {
  const ResourceRequest& r = j.view->resources;
  const uint32_t n_nodes = std::max<uint32_t>(1, r.nodes);
  // `-w` nodes first; each must fit.
  chosen_.clear();
  for (const std::string& name : r.nodelist) {
    const uint32_t n = static_cast<uint32_t>(nodes_.FindNode(name));
    if (Contains(chosen_, n)) continue;
    if (Usable(j, d, c, n, false)) {
      chosen_.push_back({n, nodes_.Available(n, d.type, false).size(), false});
    } else if (j.end <= nodes_.node(n).resv_start && Usable(j, d, c, n, true)) {
      chosen_.push_back({n, nodes_.Available(n, d.type, true).size(), true});
    } else {
      return PlaceResult::kResources;
    }
  }
  if (chosen_.size() > n_nodes) return PlaceResult::kResources;
  const uint32_t need = n_nodes - static_cast<uint32_t>(chosen_.size());
  cands_.clear();
  if (need == 0) return PlaceResult::kPlaced;
  const size_t unreserved_found = FindCandidates(j, p, d, c, need);
  if (cands_.size() < need) {
    // Would it fit without this pass's reservations? Then it waits on higher-priority jobs.
    return FitsWithoutHolds(j, p, d, c, need, unreserved_found) ? PlaceResult::kPriority
                                                                : PlaceResult::kResources;
  }
  if (need == 1) {
    chosen_.push_back(cands_.front());
  } else {
    std::vector<int> leaves(cands_.size());
    for (size_t i = 0; i < cands_.size(); ++i) leaves[i] = nodes_.node(cands_[i].node).leaf;
    for (uint32_t i : topology_.Choose(leaves, need)) chosen_.push_back(cands_[i]);
  }
  return PlaceResult::kPlaced;
}

size_t Placer::FindCandidates(const JobInfo& j, uint32_t p, const Demand& d, const Constraint& c,
                              uint32_t need) {
  const ResourceRequest& r = j.view->resources;
  const Pool& pool = *nodes_.PoolFor(p, d.type);
  uint64_t available = 0;
  for (uint32_t k = std::min(d.gpus, pool.capacity + 1); k <= pool.capacity; ++k)
    available += pool.buckets[k].count();
  if (d.gpus > pool.capacity) available = 0;
  if (available >= need) {
    const size_t cap = need == 1 ? 1 : std::max<size_t>(4 * need, need + 256);
    auto scan = [&](uint32_t k) {
      const NodeBitset& b = pool.buckets[k];
      for (int64_t n = b.Next(0); n != NodeBitset::kNone && cands_.size() < cap;
           n = b.Next(n + 1)) {
        uint32_t node = static_cast<uint32_t>(n);
        if (!r.nodelist.empty() && Contains(chosen_, node)) continue;
        if (Usable(j, d, c, node, false)) cands_.push_back({node, k, false});
      }
    };
    if (d.exclusive) {
      for (uint32_t k = pool.capacity + 1; k-- > d.gpus && cands_.size() < cap;) scan(k);
    } else {
      for (uint32_t k = d.gpus; k <= pool.capacity && cands_.size() < cap; ++k) scan(k);
    }
  }
  const size_t unreserved_found = cands_.size();
  // Nodes held by reservations, usable whole by a job that ends before the reservation starts.
  const bool consider_whole = !nodes_.held_nodes().empty() && j.end <= nodes_.latest_hold_start();
  if (cands_.size() < need && consider_whole) {
    std::vector<Candidate> extra;
    for (uint32_t n : nodes_.held_nodes()) {
      if (!nodes_.InPartition(p, n) || nodes_.node(n).resv_start < j.end) continue;
      if (Contains(cands_, n) || Contains(chosen_, n)) continue;
      if (Usable(j, d, c, n, true))
        extra.push_back({n, nodes_.Available(n, d.type, true).size(), true});
    }
    std::sort(extra.begin(), extra.end(), [](const Candidate& a, const Candidate& b) {
      if (a.count != b.count) return a.count < b.count;
      return a.node < b.node;
    });
    cands_.insert(cands_.end(), extra.begin(), extra.end());
  }
  return unreserved_found;
}

bool Placer::FitsWithoutHolds(const JobInfo& j, uint32_t p, const Demand& d, const Constraint& c,
                              uint32_t need, size_t unreserved_found) const {
  if (nodes_.held_nodes().empty()) return false;
  size_t could = unreserved_found;
  for (uint32_t n : nodes_.held_nodes()) {
    if (could >= need) break;
    if (!nodes_.InPartition(p, n)) continue;
    if (Contains(cands_, n)) continue;
    if (Usable(j, d, c, n, true)) ++could;
  }
  return could >= need;
}

void Placer::Start(const JobInfo& j, uint32_t p, const Demand& d, Placement* out) {
  RunJob rj;
  rj.end = j.end;
  rj.gpus = j.gpus;
  rj.account = j.account;
  rj.user = j.user;
  rj.qos = j.qos;
  const uint32_t ref = nodes_.AddJob(rj);
  out->job = j.view->id;
  out->partition = snap_.partitions[p].name;
  out->nodes.resize(chosen_.size());
  for (size_t i = 0; i < chosen_.size(); ++i) {
    const uint32_t n = chosen_[i].node;
    const NodeView& v = nodes_.view(n);
    GpuSet gpus = d.exclusive ? v.usable_gpus
                              : PickGpus(v, nodes_.Available(n, d.type, chosen_[i].whole), d.gpus);
    nodes_.Allocate(n, d, gpus, ref, &out->nodes[i]);
  }
}

}  // namespace corral::sched::internal
