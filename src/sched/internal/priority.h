// Prioritizer: every pending job's priority and the order in which a pass examines the jobs.
//
// Priority: the `SchedulerOptions::priority` function when set (rounded to an integer for
// `PendingReason::priority`), else Slurm's multifactor sum, each term rounded half up:
//   weight_age * age + weight_fairshare * fairshare + weight_job_size * job_size
//   + weight_partition * partition + weight_qos * qos - nice
// with age = time since eligible (else since submitted) / max_age, capped at 1; fairshare the
// fair-tree factor of the job's (account, user) (fair_share.h); job_size its GPUs over the
// cluster's (its CPUs over the cluster's for a job or a cluster without GPUs), or 1 minus that
// with `favor_small`; partition its highest partition tier over the highest of all; qos its QOS's
// priority over the highest QOS priority.
//
// Order: highest partition tier first, then highest priority (the custom function's value
// itself, not its rounding), then earliest submit time, then lowest JobId.
//
// Stateless between calls; not thread-safe (it reads and writes a pass's jobs).
#pragma once

#include <vector>

#include "sched/config.h"
#include "sched/internal/config_index.h"
#include "sched/internal/job_info.h"
#include "sched/internal/job_table.h"
#include "sched/internal/node_cache.h"
#include "sched/scheduler.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class Prioritizer {
 public:
  // `cache` gives the cluster's totals and the highest partition tier.
  Prioritizer(const SchedulerConfig& config, const SchedulerOptions& options,
              const ConfigIndex& index, const ClusterSnapshot& snapshot, const NodeCache& cache,
              Timestamp now);

  // Sets `priority` of every pending job of `jobs`; returns their factors, in the jobs' order,
  // when `report` (else nothing).
  std::vector<PriorityFactors> Compute(JobTable* jobs, bool report) const;

  // Sorts `pending` (in JobId order, priorities set) into the examination order above.
  void Order(std::vector<JobInfo>* pending) const;

 private:
  // The fair-share factor of every association of `jobs` (empty when the weight is 0 or a
  // custom priority replaces the sum).
  std::vector<double> FairShare(const JobTable& jobs) const;

  const SchedulerConfig& config_;
  const SchedulerOptions& options_;
  const ConfigIndex& index_;
  const ClusterSnapshot& snap_;
  const NodeCache& cache_;
  const Timestamp now_;
};

}  // namespace corral::sched::internal
