// Admission: whether a submitted job could ever run and may be queued (`Scheduler::
// ValidateSubmission`, whose comment lists every error code and message form). It checks, in
// order, and reports the first failure: the job's identity (account, membership, QOS and its
// allowance, reservation), the limits no amount of waiting satisfies (GPUs per job or in all
// over the account chain, user, (user, account) association and QOS; the QOS's time limit), its partitions (one that could
// ever hold it is enough; when none can, the first partition's reason is given), and the
// submitted-job limits (a walk over all jobs, only when such a limit applies).
//
// Stateless; thread-safe as long as its arguments are not changed meanwhile.
#pragma once

#include "core/result.h"
#include "sched/config.h"
#include "sched/internal/config_index.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

// `job` as the controller would put it in a snapshot; `index` derived from `config`.
Status ValidateSubmission(const SchedulerConfig& config, const ConfigIndex& index,
                          const PendingJobView& job, const ClusterSnapshot& snapshot);

}  // namespace corral::sched::internal
