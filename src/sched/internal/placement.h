// Placer: where a job starts now (flux-sched's traverser with a best-fit policy). For one
// partition, on resources no reservation of this pass holds:
//   1. `-w` nodes first: each must fit (or be usable whole: held only by reservations that start
//      after the job's time limit ends), else the job does not fit;
//   2. the other nodes from the pools of (partition, GPU type), by their available GPUs of the
//      type, fewest first (best fit; `--exclusive` jobs: most first), ties by NodeId, skipping
//      nodes that are down, exclusive, short of CPUs or memory, outside the job's node filter
//      (-C, -x, its reservation) or covered by a reservation window before the job would end;
//      at most max(4N, N + 256) candidates are looked at for N nodes (one for a single node);
//   3. when those are too few, nodes held by reservations that start only after the job would
//      end, whole, fewest available GPUs first (ties by NodeId);
//   4. a single node: the first candidate; several: the topology's choice (`Topology::Choose`:
//      the fewest leaf switches);
//   5. inside each node, the GPUs by `PickGpus` (one NVLink domain and NUMA node when it can);
//      an exclusive job takes every usable GPU, all CPUs and all memory.
// When too few nodes fit, the result is kPriority if enough would without this pass's
// reservations (higher-priority jobs hold them), else kResources.
//
// Not thread-safe; one pass's.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/internal/constraint.h"
#include "sched/internal/job_info.h"
#include "sched/internal/node_state.h"
#include "sched/internal/topology.h"
#include "sched/policy.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class Placer {
 public:
  Placer(const ClusterSnapshot& snapshot, NodeState& nodes, const Topology& topology, Timestamp now)
      : snap_(snapshot), nodes_(nodes), topology_(topology), now_(now) {}

  // Finds nodes for `j` (demand `d` per node) in partition `p` now and, when it finds them,
  // starts the job there: a new job in the `NodeState`, its resources allocated, and `out`
  // filled. Requires: every `-w` node of `j` exists (`PartitionCheck` made sure).
  PlaceResult Place(const JobInfo& j, uint32_t p, const Demand& d, Placement* out);

 private:
  // A node considered for a job.
  struct Candidate {
    uint32_t node;
    uint32_t count;  // free GPUs of the type (best fit key)
    bool whole;      // uses resources reserved for later (it ends before they are needed)
  };

  // Steps 1 to 4: fills `chosen_`.
  PlaceResult Choose(const JobInfo& j, uint32_t p, const Demand& d, const Constraint& c);
  // Steps 2 and 3: fills `cands_` with at least `need` nodes when it can; returns the count
  // found before step 3.
  size_t FindCandidates(const JobInfo& j, uint32_t p, const Demand& d, const Constraint& c,
                        uint32_t need);
  // Whether `need` nodes would fit if this pass's reservations held nothing.
  bool FitsWithoutHolds(const JobInfo& j, uint32_t p, const Demand& d, const Constraint& c,
                        uint32_t need, size_t unreserved_found) const;
  // Whether `j` may use node `n` now (`whole`: ignoring holds).
  bool Usable(const JobInfo& j, const Demand& d, const Constraint& c, uint32_t n,
              bool whole) const {
    return nodes_.StaticOk(j, n, c) && nodes_.WindowsOk(j, n, now_, j.end) &&
           nodes_.Fits(n, d, whole);
  }
  static bool Contains(const std::vector<Candidate>& list, uint32_t n) {
    for (const Candidate& x : list) {
      if (x.node == n) return true;
    }
    return false;
  }
  // Step 5: starts `j` on `chosen_`.
  void Start(const JobInfo& j, uint32_t p, const Demand& d, Placement* out);

  const ClusterSnapshot& snap_;
  NodeState& nodes_;
  const Topology& topology_;
  const Timestamp now_;
  std::vector<Candidate> chosen_, cands_;  // scratch, kept for their allocations
};

}  // namespace corral::sched::internal
