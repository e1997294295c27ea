// NodeState: the resources of the cluster during one scheduling pass, as flux-sched's resource
// graph holds them: every node's free CPUs, memory and GPUs, the running jobs and what each
// uses of each node, what this pass's reservations hold (backfill and preemption), the
// reservation windows (maintenance and user reservations) that cover nodes, and the pools that
// find the best-fitting node of a (partition, GPU type) in a few word scans.
//
// Invariants: a node is in the bucket of each of its pools that counts its available GPUs of
// the pool's type (free, not held by a reservation of this pass) after every change
// (`Allocate`, `HoldForReservation`); `uses(n)` lists the jobs on node `n` (running, and started
// in this pass), each by its index in the job table; a reservation's hold on a node only grows
// during a pass, and `resv_start` is the earliest start of the reservations holding it.
//
// Without reservation windows, the work nodes and pools a `Scheduler` kept from its last pass
// are brought up to date instead of rebuilt: only nodes whose use in the snapshot differs from
// what they were computed from, or that the last pass changed, are computed again.
//
// Tie-breaks: none here (the mechanisms that choose break their ties); every index is by node
// order (NodeId order, as the snapshot's nodes are sorted by id).
//
// Not thread-safe; one pass's. Points into the snapshot, the config and the `NodeCache`, which
// must outlive it.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sched/config.h"
#include "sched/internal/config_index.h"
#include "sched/internal/constraint.h"
#include "sched/internal/job_info.h"
#include "sched/internal/node_bitset.h"
#include "sched/internal/node_cache.h"
#include "sched/internal/time_math.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class NodeState {
 public:
  // Indexes the nodes of `snapshot`: `cache` is rebuilt unless it matches the snapshot's static
  // fields, and lends its buffers. Reservation windows are `config`'s, then `snapshot`'s.
  NodeState(const SchedulerConfig& config, const ConfigIndex& index,
            const ClusterSnapshot& snapshot, NodeCache& cache);
  NodeState(const NodeState&) = delete;
  NodeState& operator=(const NodeState&) = delete;

  // --- The static index. ---
  const NodeCache& cache() const { return cache_; }
  NodeCache& cache() { return cache_; }
  size_t size() const { return nodes_.size(); }
  const WorkNode& node(uint32_t n) const { return nodes_[n]; }
  const NodeView& view(uint32_t n) const { return *nodes_[n].view; }
  // The node of an allocation (by id, else by name), or -1 when it is not in the snapshot.
  int64_t NodeIndexOf(const NodeAllocation& a) const;
  // The node named `name`, or -1.
  int64_t FindNode(std::string_view name) const {
    auto it = cache_.node_by_name.find(name);
    return it == cache_.node_by_name.end() ? int64_t{-1} : int64_t{it->second};
  }
  // The GPU type id of `model`: 0 for "" (any type), -1 for a model no node has.
  int TypeId(std::string_view model) const;
  const std::vector<uint32_t>& PartitionNodes(uint32_t p) const { return cache_.part_nodes[p]; }
  bool InPartition(uint32_t p, uint32_t n) const { return cache_.part_member[p].Contains(n); }
  // The pool of (partition `p`, GPU type `type`), or nullptr when no node of `p` has the type.
  const Pool* PoolFor(uint32_t p, int type) const {
    auto it = cache_.pool_ids.find({p, type});
    return type < 0 || it == cache_.pool_ids.end() ? nullptr : &cache_.pools[it->second];
  }

  // --- Running jobs (the snapshot's, then this pass's starts) and their use of nodes. ---
  uint32_t AddJob(const RunJob& job) {
    jobs_.push_back(job);
    return static_cast<uint32_t>(jobs_.size() - 1);
  }
  void ReserveJobs(size_t n) { jobs_.reserve(n); }
  const std::vector<RunJob>& jobs() const { return jobs_; }
  RunJob& job(uint32_t ref) { return jobs_[ref]; }
  const RunJob& job(uint32_t ref) const { return jobs_[ref]; }
  const std::vector<NodeUse>& uses(uint32_t n) const { return node_uses_[n]; }
  // Records a snapshot running job's use of node `n` (the snapshot's node use counts it already).
  void AddRunningUse(uint32_t n, const NodeUse& use) { node_uses_[n].push_back(use); }

  // --- Reservation windows. ---
  const std::vector<const Reservation*>& windows() const { return windows_; }
  // The window named `name` (the last of that name), or -1.
  int FindWindow(const std::string& name) const;
  bool InWindow(int r, uint32_t n) const { return window_nodes_[r].Contains(n); }
  // Whether window `r` covers a node of partition `p`.
  bool WindowInPartition(size_t r, uint32_t p) const { return window_in_part_[r][p]; }
  // The windows covering node `n`.
  std::span<const uint32_t> WindowsOf(uint32_t n) const {
    const WorkNode& w = nodes_[n];
    return {node_windows_.data() + w.windows_begin, node_windows_.data() + w.windows_end};
  }
  // Whether `j` may use node `n` from `from` to `to` as far as windows go: no window other than
  // its own reservation overlaps the interval.
  bool WindowsOk(const JobInfo& j, uint32_t n, Timestamp from, Timestamp to) const {
    for (uint32_t r : WindowsOf(n)) {
      if (static_cast<int>(r) == j.reservation) continue;
      const Reservation& res = *windows_[r];
      if (from < res.end && res.start < to) return false;
    }
    return true;
  }

  // --- Resources. ---
  // The memory `d` takes on node `n` (--mem=0: all of it).
  uint64_t MemOn(const Demand& d, uint32_t n) const {
    return d.mem == kWholeNodeMemory ? nodes_[n].view->mem_mb : d.mem;
  }
  // Node `n`'s usable GPUs of type `type` (0: all of them).
  GpuSet TypeMask(uint32_t n, int type) const {
    const WorkNode& w = nodes_[n];
    if (type == 0) return w.view->usable_gpus;
    for (uint32_t t = w.types_begin; t < w.types_end; ++t) {
      if (cache_.node_types[t].first == type) return cache_.node_types[t].second;
    }
    return {};
  }
  // Node `n`'s free GPUs of `type`; without those this pass's reservations hold unless `whole`
  // (a job that ends before the reservations start may use them).
  GpuSet Available(uint32_t n, int type, bool whole) const {
    const WorkNode& w = nodes_[n];
    GpuSet s = w.free & TypeMask(n, type);
    return whole ? s : s - w.resv_gpus;
  }
  // Whether `d` fits on node `n` now (next to the reservations' holds unless `whole`).
  bool Fits(uint32_t n, const Demand& d, bool whole) const {
    const WorkNode& w = nodes_[n];
    if (!w.view->schedulable || w.exclusive) return false;
    if (d.exclusive) {
      if (w.jobs > 0 || (!whole && w.resv_start != kNever)) return false;
      return TypeMask(n, d.type).size() >= d.gpus && w.view->cpus >= d.cpus &&
             w.view->mem_mb >= MemOn(d, n);
    }
    uint32_t cpus = whole ? w.cpus_free : SubSat(w.cpus_free, w.resv_cpus);
    uint64_t mem = whole ? w.mem_free : SubSat(w.mem_free, w.resv_mem);
    return cpus >= d.cpus && mem >= MemOn(d, n) && Available(n, d.type, whole).size() >= d.gpus;
  }
  // Whether `j`'s node filter (`c`: its parsed -C, -x, its reservation's nodes) admits node `n`.
  bool StaticOk(const JobInfo& j, uint32_t n, const Constraint& c) const {
    if (!j.node_filter) return true;
    const NodeView& v = *nodes_[n].view;
    if (!c.Matches(v.features)) return false;
    for (const std::string& x : j.view->resources.exclude) {
      if (x == v.name) return false;
    }
    if (j.reservation >= 0 && !window_nodes_[j.reservation].Contains(n)) return false;
    return true;
  }

  // --- Changes. ---
  // Starts job `job_ref` on node `n` with `d` and `gpus` (the whole node when `d.exclusive`);
  // fills `out` with what it takes.
  void Allocate(uint32_t n, const Demand& d, GpuSet gpus, uint32_t job_ref, NodeAllocation* out);
  // Holds `d` with `gpus` on node `n` for a reservation starting at `start`.
  void HoldForReservation(uint32_t n, const Demand& d, GpuSet gpus, Timestamp start);
  // Nodes some reservation of this pass holds, ascending.
  const std::set<uint32_t>& held_nodes() const { return held_nodes_; }
  // The latest start of a hold on a node (the epoch when there is none).
  Timestamp latest_hold_start() const { return latest_hold_start_; }

  // --- The earliest end of a job on each node, for the timeline (built on first use). ---
  void TrackEnds();
  bool tracking_ends() const { return !min_end_.empty(); }
  Timestamp min_end(uint32_t n) const { return min_end_[n]; }
  // Job `ref` ends by `end` at the latest (a preemption victim's grace).
  void EndBy(uint32_t ref, Timestamp end);

 private:
  void IndexNodes();
  void UpdatePools(uint32_t n);

  const ClusterSnapshot& snap_;
  NodeCache& cache_;
  std::vector<WorkNode>& nodes_ = cache_.work;
  std::vector<std::vector<NodeUse>>& node_uses_ = cache_.node_uses;
  std::vector<RunJob>& jobs_ = cache_.jobs;
  std::vector<Timestamp> min_end_;  // earliest end of a job on each node (`TrackEnds`)
  std::set<uint32_t> held_nodes_;
  Timestamp latest_hold_start_{};
  // Reservation windows (config + snapshot).
  std::vector<const Reservation*> windows_;
  std::vector<uint32_t> node_windows_;  // windows of each node (`WorkNode::windows_begin`)
  std::vector<NodeBitset> window_nodes_;
  std::vector<std::vector<bool>> window_in_part_;  // [window][partition]: covers a node of it
};

}  // namespace corral::sched::internal
