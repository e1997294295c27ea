// NodeCache: what a scheduling pass derives from the static side of a snapshot (the nodes' ids,
// names, CPUs, memory, usable GPUs and their models, whether they are schedulable, and the
// partitions), kept by a `Scheduler` between passes and rebuilt when `Matches` says a
// snapshot's static fields differ; and the per-pass buffers (work nodes, pools, per-node uses,
// running jobs, name tables), kept only so that their allocations are reused. Also the value
// types of a pass's node state: `WorkNode`, `NodeUse`, `RunJob`, `Pool`, `Membership`.
//
// Invariants: the index views only names it owns a copy of (`names`, `type_names`,
// `partitions`); `memberships` hold, for every node, one entry per partition it is in and per
// GPU type of the node (type 0 = any type); a pool's buckets are indexed by available GPU
// count, 0 to `capacity`. The buffers are reset by every pass (`NodeState`, `JobTable`), except
// `work`, `memberships`, `pools` and `uses_seen` while `work_valid` (see `NodeState`).
//
// Not thread-safe: one `Scheduler`'s, used by one pass at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/gpu.h"
#include "core/ids.h"
#include "core/partition.h"
#include "sched/internal/config_index.h"
#include "sched/internal/flat_map.h"
#include "sched/internal/node_bitset.h"
#include "sched/internal/time_math.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

// The scheduler's working view of one node during a pass.
struct WorkNode {
  const NodeView* view = nullptr;
  uint32_t cpus_free = 0;
  uint64_t mem_free = 0;
  GpuSet free;  // usable and not in use
  uint32_t jobs = 0;
  bool exclusive = false;
  // Held by reservations of this pass (backfill or preemption), from `resv_start` on.
  GpuSet resv_gpus;
  uint32_t resv_cpus = 0;
  uint64_t resv_mem = 0;
  bool resv_whole = false;
  Timestamp resv_start = kNever;
  int leaf = -1;
  uint32_t types_begin = 0, types_end = 0;      // into `NodeCache::node_types`
  uint32_t pools_begin = 0, pools_end = 0;      // into `NodeCache::memberships`
  uint32_t windows_begin = 0, windows_end = 0;  // into `NodeState`'s windows of nodes
};

// One job's use of one node, for the release timeline and victim search.
struct NodeUse {
  uint32_t job;  // index into `NodeCache::jobs` (`NodeState::job`)
  uint32_t cpus;
  uint64_t mem;
  GpuSet gpus;
};

// A running job (from the snapshot, or started in this pass).
struct RunJob {
  const RunningJobView* view = nullptr;  // nullptr for jobs started in this pass
  Timestamp end = kNever;
  uint32_t gpus = 0;
  int account = -1;
  int user = -1;
  int qos = -1;
  bool being_preempted = false;
  bool borrowed = false;
};

// Nodes of one (partition, GPU type) by the GPUs of the type they have available.
struct Pool {
  uint32_t capacity = 0;
  std::vector<NodeBitset> buckets;  // by available GPU count
};
// A node in a pool; `count` follows the node during a pass.
struct Membership {
  uint32_t pool;
  int type;
  uint32_t count;
  GpuSet mask;  // the node's GPUs of the type (`NodeState::TypeMask`)
};

// What a pass derives from the static side of the snapshot alone: the nodes' ids, names, CPUs,
// usable GPUs and their models, whether they are schedulable, and the partitions. `Decide`
// keeps it between calls and rebuilds it when `Matches` says the snapshot's differ; it owns
// copies of every name its maps view. It also holds the per-pass buffers (work nodes, pools,
// per-node uses) so that their allocations are reused; a pass resets all of them.
struct NodeCache {
  // The key: what the index was built from.
  struct Key {
    NodeId id;
    uint32_t cpus = 0;
    uint64_t mem_mb = 0;
    GpuSet usable;
    bool schedulable = false;
    uint32_t gpus_begin = 0, gpus_end = 0;  // into `key_gpus`
  };
  bool built = false;
  uint64_t epoch = 0;  // `ClusterSnapshot::node_epoch` of the snapshot it was built from
  std::vector<Key> keys;
  std::vector<std::pair<uint32_t, uint32_t>> key_gpus;  // (index, model in `key_models`)
  std::vector<std::string> key_models;
  std::vector<std::string> names;  // by node
  std::vector<Partition> partitions;

  // The index.
  std::vector<WorkNode> templ;     // static fields of each work node (leaf, types, pools)
  NameMap<uint32_t> node_by_name;  // views into `names`; lookups only
  std::vector<std::pair<int, GpuSet>> node_types;
  std::vector<std::string> type_names;  // by type id; [0] = ""
  NameMap<int> type_ids;                // views into `type_names`; lookups only
  std::vector<Membership> memberships;  // counts set by each pass
  std::vector<uint32_t> pool_capacity;
  std::map<std::pair<uint32_t, int>, uint32_t> pool_ids;  // (partition, type) -> pool
  std::vector<std::vector<uint32_t>> part_nodes;          // node indices, ascending
  std::vector<NodeBitset> part_member;
  NameMap<uint32_t> part_by_name;  // views into `partitions`; lookups only
  uint32_t max_tier = 1;
  uint64_t total_gpus = 0;
  uint64_t total_cpus = 0;
  // `PartitionCheck::CapableNodes` of demands without a node filter, which depend on the key alone:
  // (partition, cpus, memory, GPUs, type, exclusive) -> (capable nodes, type missing).
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, uint32_t, int, bool>, std::pair<uint32_t, bool>>
      capable;

  // Buffers of a pass (reset by each). `work`, `memberships` and `pools` are kept up to date
  // between passes instead when `work_valid` (see `NodeState`).
  struct Use {  // what a node's work node and pools are computed from, besides the key
    uint32_t cpus = 0;
    uint64_t mem = 0;
    GpuSet gpus;
    uint32_t jobs = 0;
    bool exclusive = false;
    bool stale = false;  // changed by the last pass
    bool operator==(const Use&) const = default;
  };
  bool work_valid = false;
  std::vector<Use> uses_seen;     // per node: the use its work node was computed from
  std::vector<uint32_t> touched;  // nodes the last pass changed (Allocate, HoldForReservation)
  std::vector<WorkNode> work;
  std::vector<Pool> pools;
  std::vector<std::vector<NodeUse>> node_uses;
  std::vector<RunJob> jobs;
  NameMap<int> account_ids, user_ids, qos_ids;

  // Whether the index was built from a snapshot with these static fields (or the caller promises
  // so through `ClusterSnapshot::node_epoch`).
  bool Matches(const ClusterSnapshot& s) const;
  // Rebuilds the index from `snap`, emptying every buffer.
  void Build(const ClusterSnapshot& snap, const ConfigIndex& index);
};

}  // namespace corral::sched::internal
