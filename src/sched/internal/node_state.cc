#include "sched/internal/node_state.h"

#include <algorithm>

namespace corral::sched::internal {

NodeState::NodeState(const SchedulerConfig& config, const ConfigIndex& index,
                     const ClusterSnapshot& snapshot, NodeCache& cache)
    : snap_(snapshot), cache_(cache) {
  if (!cache_.Matches(snap_)) {
    cache_.Build(snap_, index);
  } else {
    cache_.epoch = snap_.node_epoch;
  }
  jobs_.clear();
  for (const Reservation& r : config.reservations) windows_.push_back(&r);
  for (const Reservation& r : snap_.reservations) windows_.push_back(&r);
  IndexNodes();
  // Windows per partition (for ReqNodeNotAvail).
  window_in_part_.assign(windows_.size(), std::vector<bool>(snap_.partitions.size(), false));
  for (size_t r = 0; r < windows_.size(); ++r) {
    for (size_t p = 0; p < snap_.partitions.size(); ++p) {
      for (const std::string& name : windows_[r]->nodes) {
        auto it = cache_.node_by_name.find(name);
        if (it != cache_.node_by_name.end() && cache_.part_member[p].Contains(it->second)) {
          window_in_part_[r][p] = true;
          break;
        }
      }
    }
  }
}

int64_t NodeState::NodeIndexOf(const NodeAllocation& a) const {
  // Nodes are sorted by id and usually numbered densely: try the id as an index first.
  if (snap_.nodes.empty()) return -1;
  uint64_t guess = a.node.value - snap_.nodes.front().id.value;
  if (guess < snap_.nodes.size() && snap_.nodes[guess].id == a.node)
    return static_cast<int64_t>(guess);
  if (auto it = cache_.node_by_name.find(a.node_name); it != cache_.node_by_name.end())
    return it->second;
  auto pos = std::lower_bound(snap_.nodes.begin(), snap_.nodes.end(), a.node,
                              [](const NodeView& v, NodeId id) { return v.id < id; });
  if (pos == snap_.nodes.end() || pos->id != a.node) return -1;
  return pos - snap_.nodes.begin();
}

int NodeState::TypeId(std::string_view model) const {
  if (model.empty()) return 0;
  auto it = cache_.type_ids.find(model);
  return it == cache_.type_ids.end() ? -1 : it->second;
}

int NodeState::FindWindow(const std::string& name) const {
  int found = -1;
  for (size_t k = 0; k < windows_.size(); ++k) {
    if (windows_[k]->name == name) found = static_cast<int>(k);
  }
  return found;
}

void NodeState::IndexNodes() {
  const size_t n_nodes = snap_.nodes.size();
  for (std::vector<NodeUse>& uses : node_uses_) uses.clear();
  auto fill = [&](size_t i) {
    const NodeView& v = snap_.nodes[i];
    WorkNode& w = nodes_[i];
    w = cache_.templ[i];
    w.view = &v;
    w.cpus_free = SubSat(v.cpus, v.used_cpus);
    w.mem_free = SubSat(v.mem_mb, v.used_mem_mb);
    w.free = v.usable_gpus - v.used_gpus;
    w.jobs = v.running_jobs;
    w.exclusive = v.exclusive;
  };
  auto use_of = [](const NodeView& v) {
    return NodeCache::Use{v.used_cpus, v.used_mem_mb, v.used_gpus, v.running_jobs, v.exclusive};
  };
  // Without reservation windows, the work nodes and pools of the last pass are brought up to
  // date: only nodes whose use differs from what they were computed from, or that the last pass
  // changed, are computed again (as the full path below would compute them).
  if (cache_.work_valid && windows_.empty() && nodes_.size() == n_nodes) {
    for (uint32_t n : cache_.touched) cache_.uses_seen[n].stale = true;
    cache_.touched.clear();
    for (size_t i = 0; i < n_nodes; ++i) {
      const NodeView& v = snap_.nodes[i];
      const NodeCache::Use u = use_of(v);
      if (u == cache_.uses_seen[i]) {
        nodes_[i].view = &v;
        continue;
      }
      cache_.uses_seen[i] = u;
      fill(i);
      UpdatePools(static_cast<uint32_t>(i));
    }
    return;
  }
  // Work nodes: the static fields from the cache, the use from the snapshot.
  cache_.touched.clear();
  cache_.uses_seen.resize(n_nodes);
  nodes_.resize(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) {
    fill(i);
    cache_.uses_seen[i] = use_of(snap_.nodes[i]);
  }
  cache_.work_valid = windows_.empty();
  // Reservation windows per node.
  window_nodes_.resize(windows_.size());
  std::vector<std::vector<uint32_t>> per_node(windows_.empty() ? 0 : n_nodes);
  for (size_t r = 0; r < windows_.size(); ++r) {
    window_nodes_[r].Resize(n_nodes);
    for (const std::string& name : windows_[r]->nodes) {
      auto it = cache_.node_by_name.find(name);
      if (it == cache_.node_by_name.end()) continue;
      window_nodes_[r].Set(it->second);
      per_node[it->second].push_back(static_cast<uint32_t>(r));
    }
  }
  for (size_t i = 0; i < per_node.size(); ++i) {
    nodes_[i].windows_begin = static_cast<uint32_t>(node_windows_.size());
    node_windows_.insert(node_windows_.end(), per_node[i].begin(), per_node[i].end());
    nodes_[i].windows_end = static_cast<uint32_t>(node_windows_.size());
  }
  // Pools: every node in the bucket of its available GPUs.
  for (Pool& pool : cache_.pools) {
    for (NodeBitset& b : pool.buckets) b.Resize(n_nodes);
  }
  for (size_t n = 0; n < n_nodes; ++n) {
    const WorkNode& w = nodes_[n];
    for (uint32_t k = w.pools_begin; k < w.pools_end; ++k) {
      Membership& m = cache_.memberships[k];
      m.count = ((w.free & m.mask) - w.resv_gpus).size();  // Available(n, m.type, false)
      cache_.pools[m.pool].buckets[m.count].Set(static_cast<uint32_t>(n));
    }
  }
}

void NodeState::UpdatePools(uint32_t n) {
  const WorkNode& w = nodes_[n];
  for (uint32_t k = w.pools_begin; k < w.pools_end; ++k) {
    Membership& m = cache_.memberships[k];
    uint32_t c = ((w.free & m.mask) - w.resv_gpus).size();  // Available(n, m.type, false)
    if (c == m.count) continue;
    cache_.pools[m.pool].buckets[m.count].Clear(n);
    cache_.pools[m.pool].buckets[c].Set(n);
    m.count = c;
  }
}

void NodeState::Allocate(uint32_t n, const Demand& d, GpuSet gpus, uint32_t job_ref,
                         NodeAllocation* out) {
  WorkNode& w = nodes_[n];
  uint32_t cpus = d.exclusive ? w.view->cpus : d.cpus;
  uint64_t mem = d.exclusive ? w.view->mem_mb : MemOn(d, n);
  w.cpus_free = SubSat(w.cpus_free, cpus);
  w.mem_free = SubSat(w.mem_free, mem);
  w.free = w.free - gpus;
  w.jobs += 1;
  if (d.exclusive) w.exclusive = true;
  cache_.touched.push_back(n);
  node_uses_[n].push_back({job_ref, cpus, mem, gpus});
  if (!min_end_.empty()) min_end_[n] = std::min(min_end_[n], jobs_[job_ref].end);
  UpdatePools(n);
  out->node = w.view->id;
  out->node_name = w.view->name;
  out->cpus = cpus;
  out->mem_mb = mem;
  out->gpus = gpus;
}

void NodeState::HoldForReservation(uint32_t n, const Demand& d, GpuSet gpus, Timestamp start) {
  WorkNode& w = nodes_[n];
  if (d.exclusive) {
    w.resv_whole = true;
    w.resv_gpus = w.view->usable_gpus;
    w.resv_cpus = w.view->cpus;
    w.resv_mem = w.view->mem_mb;
  } else {
    w.resv_gpus = w.resv_gpus | gpus;
    w.resv_cpus += d.cpus;
    w.resv_mem += MemOn(d, n);
  }
  w.resv_start = std::min(w.resv_start, start);
  cache_.touched.push_back(n);
  held_nodes_.insert(n);
  latest_hold_start_ = std::max(latest_hold_start_, w.resv_start);
  UpdatePools(n);
}

void NodeState::TrackEnds() {
  if (!min_end_.empty()) return;
  // Built on the first reservation of the pass; `Allocate` and `EndBy` keep it current.
  min_end_.assign(nodes_.size(), kNever);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (const NodeUse& u : node_uses_[n]) min_end_[n] = std::min(min_end_[n], jobs_[u.job].end);
  }
}

void NodeState::EndBy(uint32_t ref, Timestamp end) {
  RunJob& rj = jobs_[ref];
  rj.end = std::min(rj.end, end);
  if (min_end_.empty()) return;
  for (const NodeAllocation& a : rj.view->allocation.nodes) {
    int64_t n = NodeIndexOf(a);
    if (n >= 0) min_end_[n] = std::min(min_end_[n], rj.end);
  }
}

}  // namespace corral::sched::internal
