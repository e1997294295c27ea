// A trace resolved against a cluster and a scheduler configuration: what each job asks for,
// in the form the controller would queue it (partition, account, resources and time limit
// resolved), or why the controller would have refused it.
//
// Resolution rules (docs/simulator.md says the same for users):
//   1. Partition: the partition named like the job's queue if there is one, else the default
//      partition (`DefaultPartition`). Account: the trace's `account` column, else the queue;
//      when the configuration lists accounts and this one is not among them, the job is refused.
//   2. Shape: `num_nodes` when the trace gives it; else one node when the job's GPUs fit on the
//      largest node of its partition (of its `gpu_type`), else the fewest nodes N with
//      num_gpus divisible by N and num_gpus / N GPUs per node fitting: 16 GPUs on 8-GPU nodes
//      are 2 x 8, 12 are 2 x 6, 20 are 4 x 5. One task and one CPU per node, no memory request.
//   3. Time limit: `time_limit_s` when the trace gives it; else `DeriveTimeLimit(duration)`,
//      clamped to the partition's `max_time`. A job runs for its duration or until its limit,
//      whichever comes first (then it ends TIMEOUT).
//   4. Refused (never queued, reported apart): what `Scheduler::ValidateSubmission` refuses on an
//      idle cluster (a shape no node set of the partition can ever hold, limits per job, unknown
//      accounts), and a trace time limit above the partition's maximum.
//
// Job ids: 1, 2, ... in trace order (submit time, then trace job_id), as the controller assigns
// them in submit order.
//
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/time.h"
#include "sched/config.h"
#include "sched/snapshot.h"
#include "sim/trace.h"

namespace corral::sim {

struct WorkloadOptions {
  // Time limits of jobs without `time_limit_s`: duration x `limit_factor`, rounded up as users
  // round (see `DeriveTimeLimit`). 0 = no limit at all (backfill then cannot plan ahead).
  double limit_factor = 2.0;
  bool round_limits = true;  // false: the exact product (`--limit-factor 1` + this = oracle limits)
  bool operator==(const WorkloadOptions&) const = default;
};

struct SimJob {
  JobId id;               // 1, 2, ... in trace order
  uint64_t trace_id = 0;  // the trace's job_id
  Duration submit{0};     // since the start of the trace
  Duration duration{0};   // actual run time
  uint32_t gpus = 0;      // total GPUs held while running
  std::string user;
  std::string queue;
  sched::PendingJobView view;  // as the controller queues it (submit_time filled at arrival)
  uint32_t shape = 0;          // index into `Workload::shapes`
  // Jobs of one class are alike for the scheduler except for their submit time, time limit and
  // run time: same account, user, QOS, partitions, nice and resources (see simulator.h,
  // "windowed passes").
  uint32_t klass = 0;
  std::string refused;  // non-empty: the controller would refuse the submit, and why
};

// Jobs asking for the same thing, for the simulator's cheap "can anything start?" test.
struct JobShape {
  std::vector<std::string> partitions;
  std::string gpu_type;
  uint32_t nodes = 1;
  uint32_t gpus_per_node = 0;
  bool operator==(const JobShape&) const = default;
};

struct Workload {
  std::vector<SimJob> jobs;  // by id (jobs[i].id == i + 1)
  std::vector<JobShape> shapes;
  uint32_t classes = 0;
  size_t refused = 0;
};

// The time limit a user would ask for a job that runs `duration`: duration x `factor`, rounded
// up (when `round`) to the next 15 minutes up to 2 hours, the next hour up to 2 days, the next
// day beyond. Never less than 1 minute. `factor` 0 = `kUnlimited`.
Duration DeriveTimeLimit(Duration duration, double factor, bool round);

// Resolves `trace` against `nodes` and `config` (rules in the file comment).
// Returns kInvalidArgument when `config` does not validate or has no partition.
Result<Workload> BuildWorkload(const Trace& trace, const std::vector<sched::NodeView>& nodes,
                               const sched::SchedulerConfig& config,
                               const WorkloadOptions& options);

}  // namespace corral::sim
