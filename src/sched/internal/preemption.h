// Preemptor: victim choice for a blocked job whose QOS may preempt other QOS, or whose account is
// under its guarantee while others borrow (reclaim), and the orders that free the resources.
//
// Eligible victims: running jobs of the snapshot not already being preempted, whose QOS may be
// preempted at all (its preempt_mode is not off), and either of a QOS the job's QOS preempts, or
// (reclaim) running on borrowed GPUs under another guarantee holder than the job's. A job may
// reclaim when its guarantee holder stays within its guarantee with the job.
//
// Search, per partition of the job in its order, the first that yields enough nodes wins:
//   1. candidates: nodes of the partition with a job the job may ever preempt; for a job of
//      several nodes also nodes where it fits already (they cost nothing);
//   2. on each candidate (up, in the job's node filter, clear of reservation windows, big
//      enough): the eligible victims by least lost work (GPUs x time since the later of start
//      and last checkpoint), then fewest GPUs, then JobId; taken in that order until the job
//      fits next to this pass's holds, then any victim not needed after all dropped (latest
//      taken first); an exclusive job needs every job on the node to be a victim;
//   3. the job's nodes: the cheapest options by total lost work, then victims' GPUs, then NodeId.
// A (shape, partition, QOS, holder, reclaim) whose search failed is not searched again in the
// pass (victims only go away); at most `max_preemptors_per_pass` searches are made per pass
// (the caller checks `searches`), a remembered failure costing none.
//
// Orders, for victims in JobId order: their QOS's preempt_mode (requeue becomes cancel when the
// job may not be requeued), their QOS's grace time, the reason; each victim's end moves to now +
// grace. The job gets a reservation (`Timeline::Hold`) at now + the longest grace on its nodes.
//
// Not thread-safe; one pass's.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "sched/config.h"
#include "sched/internal/config_index.h"
#include "sched/internal/constraint.h"
#include "sched/internal/job_info.h"
#include "sched/internal/limits.h"
#include "sched/internal/node_bitset.h"
#include "sched/internal/node_state.h"
#include "sched/internal/timeline.h"
#include "sched/policy.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class Preemptor {
 public:
  Preemptor(const SchedulerConfig& config, const ConfigIndex& index,
            const ClusterSnapshot& snapshot, NodeState& nodes, const UseLimits& limits,
            Timeline& timeline, Timestamp now)
      : config_(config),
        index_(index),
        snap_(snapshot),
        nodes_(nodes),
        limits_(limits),
        timeline_(timeline),
        now_(now) {}

  // A node the job would get, with the victims it takes there.
  struct Option {
    uint32_t node;
    double cost;                    // lost work of its victims
    uint32_t victim_gpus;           // GPUs of its victims
    std::vector<uint32_t> victims;  // job refs (`NodeState::job`), cheapest first
  };
  // The outcome of a search: where, and whom.
  struct Choice {
    uint32_t partition;
    std::vector<Option> nodes;      // NodeId order
    std::vector<uint32_t> victims;  // job refs, JobId order, each once
  };

  // Searches for victims for `j` over `parts` and, when it finds them, orders their preemption
  // into `plan`, reserves the job's start and explains it in `out` (and `*estimate`). Returns
  // whether it did.
  bool TryPreempt(const JobInfo& j, const std::vector<uint32_t>& parts, Plan* plan,
                  std::vector<Blocker>* out, Timestamp* estimate);

  // The search alone (steps 1 to 3); nullopt when no partition yields enough nodes or the job
  // may preempt nothing. Counts a search unless every partition's failure was remembered.
  std::optional<Choice> Choose(const JobInfo& j, const std::vector<uint32_t>& parts);

  // Searches made in this pass.
  uint32_t searches() const { return searches_; }

 private:
  // What a job may preempt.
  struct Rights {
    const ConfigIndex::Qos* qos = nullptr;  // its QOS (nullptr: unknown)
    int holder = -1;                        // its guarantee holder
    bool reclaim = false;                   // it may take borrowed GPUs back
    bool by_qos = false;                    // its QOS preempts some QOS
    uint64_t qos_mask = 0;                  // the QOS it preempts (all bits: an index >= 64)
  };
  // What a node's preemptible jobs are, for a quick look.
  struct VictimSummary {
    uint64_t qos_mask = 0;  // QOS of its preemptible jobs (all bits: an index >= 64)
    bool borrowed = false;  // one of them runs on borrowed GPUs
  };

  Rights RightsOf(const JobInfo& j) const;
  // Whether `rj` is an eligible victim; `*via_qos` tells whether by QOS (else by reclaim).
  bool Eligible(const Rights& r, const RunJob& rj, bool* via_qos) const;
  double LostWork(const RunJob& rj) const;
  void IndexVictims();
  // Step 1: fills `candidates_`.
  void FindCandidates(const Rights& r, uint32_t p, const Demand& d, uint32_t need);
  // Step 2 on node `n`: the option it gives, if any.
  std::optional<Option> CheapestOn(const JobInfo& j, const Rights& r, uint32_t n, const Demand& d,
                                   const Constraint& c, uint32_t need);
  std::optional<Choice> Search(const JobInfo& j, const Rights& r,
                               const std::vector<uint32_t>& parts, bool* searched);
  // The orders, the reservation and the explanation.
  void Order(const JobInfo& j, const Rights& r, const Choice& choice, Plan* plan,
             std::vector<Blocker>* out, Timestamp* estimate);

  const SchedulerConfig& config_;
  const ConfigIndex& index_;
  const ClusterSnapshot& snap_;
  NodeState& nodes_;
  const UseLimits& limits_;
  Timeline& timeline_;
  const Timestamp now_;
  uint32_t searches_ = 0;
  std::set<std::tuple<uint64_t, int, int, bool>> failed_;  // (state index, qos, holder, reclaim)
  bool indexed_ = false;
  std::vector<uint32_t> preemptible_nodes_;  // nodes with a job that may be preempted (ascending)
  std::vector<VictimSummary> node_victims_;
  std::vector<uint32_t> candidates_;  // scratch
  NodeBitset marks_;                  // scratch
};

}  // namespace corral::sched::internal
