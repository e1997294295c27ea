// What a scheduling pass knows of one pending job (`JobInfo`), of what one node of it needs
// (`Demand`), and the outcome of a search for it. Built once per pass by `JobTable`, read by
// every mechanism of the pass.
//
// Invariants: `view` points into the pass's snapshot; `account`, `user`, `qos` and `assoc` are
// the `JobTable`'s ids (`qos` -1: no such QOS); `reservation` indexes `NodeState::windows()`
// (-1: none, or no such reservation); `end` is `AddSat(now, limit)`.
//
// Value types; not thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "core/partition.h"
#include "core/time.h"
#include "sched/internal/time_math.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

// What one node of a job needs.
struct Demand {
  uint32_t cpus = 0;
  uint64_t mem = 0;  // kWholeNodeMemory: all of the node's (--mem=0)
  uint32_t gpus = 0;
  int type = 0;  // 0 = any type; -1 = a type no node has
  bool exclusive = false;
};

// What a pass needs of a pending job, compact: jobs are visited in priority order, so this is
// read at random and the (large) view only when needed.
struct JobInfo {
  const PendingJobView* view = nullptr;
  int account = -1;
  int user = -1;
  int qos = -1;       // -1 = unknown QOS
  uint32_t gpus = 0;  // over the whole job
  uint32_t tier = 0;
  Duration limit = kUnlimited;
  Timestamp end = kNever;    // now + limit
  int reservation = -1;      // index into `NodeState::windows()`
  Demand base;               // per node; memory without a partition default
  bool mem_default = false;  // memory comes from the partition's def_mem_per_cpu
  bool account_known = true;
  bool needs_check = false;  // something `Eligibility::Check` looks at applies
  uint8_t n_parts = 0;       // partition indices (-1 = unknown), when at most 4
  std::array<int32_t, 4> parts{};
  uint32_t nodes = 1;
  int32_t shape = -1;        // jobs of one shape place alike (-1: -w/-x, not shared)
  int32_t assoc = -1;        // (account, user) pair, interned
  bool node_filter = false;  // -C, -x or a reservation restricts its nodes
  int64_t priority = 0;
};

// The demand of one node of `j` in `partition`: its memory default applies when `j` gives none.
inline Demand DemandFor(const JobInfo& j, const Partition& partition) {
  Demand d = j.base;
  if (j.mem_default) d.mem = partition.def_mem_per_cpu_mb * d.cpus;  // as ComputePerNodeDemand
  return d;
}

// The outcome of a search for resources now.
enum class PlaceResult {
  kPlaced,
  kResources,  // not enough free resources
  kPriority,   // enough, but held for higher-priority jobs by this pass's reservations
};

}  // namespace corral::sched::internal
