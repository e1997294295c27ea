// Usage reports (docs/governance.md, "Reports"): what jobs held over a time window, summed by
// account, (account, user), partition and GPU model, computed from the stored job records so
// that a report survives restarts and can be recomputed at any time.
//
// Rules:
//   1. A job counts when it ran: it has a start time and is not pending. It ran over
//      [start_time, end_time), or [start_time, now) while it is still running.
//   2. Only the overlap with the window [start, end) counts: a job that crosses an edge of the
//      window is charged for the part inside it.
//   3. A job holds its allocation's CPUs and GPUs (what sreport calls allocated TRES, not
//      what the job measured using); CPU-seconds = CPUs x overlap, GPU-seconds = GPUs x overlap.
//   4. Energy is the job's measured energy (`JobUsage::energy_joules`, 0 when not measured)
//      times the overlap over its whole run (pro rata: the agent reports one figure per job).
//   5. A GPU's model is the model its node reports now for that GPU index; a node no longer
//      known gives the job's requested type, else "unknown".
//   6. Rows are sorted by their key (account, user, partition, model, job id); the total is
//      the sum over jobs.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "api/report_messages.h"
#include "core/job.h"
#include "core/node.h"
#include "core/time.h"

namespace corral::controller::internal {

struct UsageWindow {
  Timestamp start{};
  Timestamp end{};  // exclusive; after `start`
};

// What one job held within a window, by rules 1-4 (also what a budget charges an account:
// controller/internal/budget_book.h).
struct JobCharge {
  uint32_t cpus = 0;
  uint32_t gpus = 0;
  double overlap_seconds = 0;
  double cpu_seconds = 0;
  double gpu_seconds = 0;
  double energy_joules = 0;
};
// `job`'s charge within `window`, nullopt when it did not run in it (rules 1 and 2).
std::optional<JobCharge> ChargeOf(const Job& job, UsageWindow window, Timestamp now);

// The report over `window` of `jobs` (any order; others than those that ran are ignored),
// with `nodes`' capacity for the cluster's "reported" figures and GPU models. `now` ends the
// runs of jobs still running. Per-job rows only when `with_jobs`.
api::UsageReport BuildUsageReport(std::span<const Job> jobs,
                                  std::span<const NodeInventory> nodes, UsageWindow window,
                                  Timestamp now, bool with_jobs);

}  // namespace corral::controller::internal
