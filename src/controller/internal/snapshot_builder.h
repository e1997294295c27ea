// SnapshotBuilder: what the scheduler sees. It builds the `sched::ClusterSnapshot` a pass
// decides on from the controller's tables (nodes with their usable GPUs and usage, the
// partitions, running and pending jobs, the ended jobs that pending ones depend on, the
// fair-share usage), the views of single jobs, and the smaller snapshot a submission is
// checked against.
//
// It reads the tables and writes none; it owns only the storage of the last pass's snapshot,
// reused by the next (a pass over a long queue then allocates nothing per job). Not
// thread-safe; state thread only.
#pragma once

#include <vector>

#include "controller/internal/budget_book.h"
#include "controller/internal/job_table.h"
#include "controller/internal/node_table.h"
#include "controller/internal/partitions.h"
#include "controller/internal/stop_timers.h"
#include "controller/internal/usage_book.h"
#include "core/clock.h"
#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::controller::internal {

class SnapshotBuilder {
 public:
  SnapshotBuilder(const JobTable& jobs, const NodeTable& nodes, const Partitions& partitions,
                  const StopTimers& stops, const UsageBook& usage, const BudgetBook& budgets,
                  const sched::SchedulerConfig& config, const Clock& clock)
      : jobs_(jobs),
        nodes_(nodes),
        partitions_(partitions),
        stops_(stops),
        usage_(usage),
        budgets_(budgets),
        config_(config),
        clock_(clock) {}
  SnapshotBuilder(const SnapshotBuilder&) = delete;
  SnapshotBuilder& operator=(const SnapshotBuilder&) = delete;

  // The snapshot of a scheduling pass, in storage kept from the last pass (valid until the
  // next call). Nodes by id: schedulable when registered, responding, not drained and not
  // powered down; their failed GPUs are not usable. Running jobs by id, pending jobs by id,
  // then the ended jobs that pending ones depend on.
  const sched::ClusterSnapshot& BuildForPass();
  // The same snapshot, in new storage (`corral priority`).
  sched::ClusterSnapshot Build() const;
  // What a submission is checked against: the registered nodes' capacities (all of them
  // schedulable, every GPU usable) and the partitions, and when `with_queue`, the running and
  // pending jobs (for limits on submitted jobs). Valid until the next call; the nodes' part is
  // rebuilt only when a node registers (`NodeTable::capacity_version`): with 10,000 nodes,
  // building it for every submission was most of a submission's cost.
  const sched::ClusterSnapshot& ForSubmission(bool with_queue) const;

  // A running job as the scheduler sees it: its expected end from its time limit, and while
  // a stop of its run is in progress, the stop's deadline and the job it makes room for.
  sched::RunningJobView RunningView(const JobEntry& e) const;
  // Every running job's view, by id.
  std::vector<sched::RunningJobView> RunningViews() const;
  // A pending job as the scheduler sees it (its aftercorr dependencies resolved to the
  // corresponding tasks).
  sched::PendingJobView PendingView(const JobEntry& e) const;

 private:
  void BuildInto(sched::ClusterSnapshot* out) const;
  // Assigns every field (a view reused from an earlier pass keeps its strings' and vectors'
  // storage).
  void FillPendingView(const JobEntry& e, sched::PendingJobView* out) const;

  const JobTable& jobs_;
  const NodeTable& nodes_;
  const Partitions& partitions_;
  const StopTimers& stops_;
  const UsageBook& usage_;
  const BudgetBook& budgets_;
  const sched::SchedulerConfig& config_;
  const Clock& clock_;
  sched::ClusterSnapshot pass_;
  // `ForSubmission`'s snapshot (state thread only) and the node table's version it holds.
  mutable sched::ClusterSnapshot submission_;
  mutable uint64_t submission_nodes_version_ = ~uint64_t{0};
};

}  // namespace corral::controller::internal
