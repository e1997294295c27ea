// SJF: the oracle shortest-job-first policy of the simulator, a lower bound on mean completion
// time for policies that do not know run times (`corral sim --policy sjf`).
//
// Algorithm (the policy engine, `Scheduler`, with a custom priority):
//   1. A pending job's priority is minus its run time in seconds: `known_duration` when the
//      caller knows it (the simulator sets it to the run time the job still needs), else its
//      time limit; a job with neither (or an unlimited limit) comes last.
//   2. Jobs are tried in that order (ties: partition tier, submit time, JobId, as the engine
//      breaks them) and start wherever they fit now: no reservations, no backfill window, no
//      strict order; a job that does not fit waits and does not block smaller ones behind it.
//   3. Never preempts. Partitions, accounts, QOS, limits and topology-aware placement are the
//      configuration's, as in every engine-based policy.
//
// Pure; not thread-safe (one `Decide` at a time).
#pragma once

#include <memory>

#include "core/result.h"
#include "core/time.h"
#include "sched/config.h"
#include "sched/policy.h"
#include "sched/snapshot.h"

namespace corral::sched {

// Step 1: higher runs first.
double SjfPriority(const PendingJobView& job, Timestamp now);

// Builds the policy from `config` (its ordering, backfill and preemption settings are replaced).
// Returns kInvalidArgument when `config` does not validate.
Result<std::unique_ptr<Policy>> MakeSjfPolicy(const SchedulerConfig& config);

}  // namespace corral::sched
