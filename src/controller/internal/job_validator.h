// JobValidator: every check of what users ask of jobs, in one place. A submission is checked
// here before anything is recorded, and so is a change of a job's time limit.
//
// Not thread-safe; state thread only (it reads the job and node tables).
#pragma once

#include <optional>
#include <string>

#include "api/auth.h"
#include "controller/config.h"
#include "controller/internal/job_table.h"
#include "controller/internal/node_table.h"
#include "controller/internal/partitions.h"
#include "controller/internal/snapshot_builder.h"
#include "core/clock.h"
#include "core/job.h"
#include "core/partition.h"
#include "core/result.h"
#include "sched/config.h"
#include "sched/scheduler.h"

namespace corral::controller::internal {

// "<limit> exceeds the maximum <max> of partition "<name>"" when `limit` is over `p`'s
// maximum time, else nullopt.
std::optional<std::string> OverPartitionMaxTime(Duration limit, const Partition& p);

class JobValidator {
 public:
  JobValidator(const ControllerConfig& config, const Partitions& partitions, const JobTable& jobs,
               const NodeTable& nodes, const SnapshotBuilder& snapshots,
               const sched::Scheduler& engine, const sched::SchedulerConfig& sched_config,
               const Clock& clock);
  JobValidator(const JobValidator&) = delete;
  JobValidator& operator=(const JobValidator&) = delete;

  // Checks a submission of `spec` by `who` and returns the job as it would be queued:
  // pending, submitted now, the id the job table gives next, its first partition and its time
  // limit resolved (as in Slurm: no --time gives the partition's DefaultTime, or its MaxTime
  // when that is unset), and the spec completed (user, uid and gid of `who` when it names no
  // other user, name "job", working_dir "/", the default partition). The checks, in this
  // order; the first that fails is returned, naming the field:
  //   1. user: users submit as themselves (uid and gid of their credential); only operators
  //      and administrators for another user (kPermissionDenied), whose uid and gid the
  //      controller looks up (`config.user_ids`, else the passwd database; kInvalidArgument
  //      for an unknown user). A uid or gid in the request is never used.
  //   1a. account: a spec that names none gets its user's default account (Slurm's
  //      DefaultAccount: `UserConfig::default_account`), when it has one.
  //   1b. sizes: every field within internal/request_limits.h (kInvalidArgument naming it).
  //   2. script: not empty, at most 4 MiB, starting with "#!", no NUL byte.
  //   3. name: at most 256 characters.
  //   4. working_dir: an absolute path.
  //   5. environment: variable names without "=" or NUL, values without NUL; the credential
  //      variables (core/credential_env.h) are dropped.
  //   5b. container: image reference, mounts and name in the grammar of core/container_spec.h
  //      (an image starting with "-", a mount of "/" or with "..": refused).
  //   6. array: a valid array spec ("0-15%4") within the array size limit
  //      (internal/request_limits.h); with its tasks, the user's pending and
  //      running jobs within `config.max_submitted_jobs` (kResourceExhausted).
  //   7. resources: a valid request (core's `ValidateResourceRequest`).
  //   8. dependency: every job it names exists.
  //   9. time_limit: positive.
  //  10. partition: every named partition exists.
  //  10a. access (issue 16 item 2): every named partition lets the job in: its account
  //      (AllowAccounts, DenyAccounts), its QOS (AllowQos) and its user's groups (AllowGroups,
  //      looked up from the user, never the request): kPermissionDenied in Slurm's words
  //      (core/partition_access.h).
  //  11. fit: at least one of its partitions takes it: time limit under the partition's
  //      maximum, GPUs and nodes within the per-job limits, and (when the
  //      partition has registered nodes) enough of them that could each hold one share of
  //      the job. Otherwise the reason of the last partition tried.
  //  12. the policy engine's rules (`sched::Scheduler::ValidateSubmission`): accounts, QOS,
  //      limits, partitions, whether any node could ever hold it (kPermissionDenied or
  //      kInvalidArgument).
  // Returns kInvalidArgument for the others.
  Result<Job> ValidateSubmission(const api::Identity& who, JobSpec spec) const;

  // Checks a new time limit `limit` of `job` set by `who` (who may change the job), in this
  // order: positive (kInvalidArgument); the job pending or running (kFailedPrecondition); and
  // unless `who` is an administrator, not raised (kPermissionDenied) and within the maximum
  // of the job's partition (kInvalidArgument).
  Status ValidateTimeLimit(const api::Identity& who, const Job& job, Duration limit) const;

  // Takes note of a changed scheduling configuration (the one given at construction, changed
  // in place: internal/governance.h).
  void Reconfigured();

 private:
  // Checks 1-11; fills in `spec` and the partitions it may run in, in order.
  Status ValidateSpec(const api::Identity& who, JobSpec& spec,
                      std::vector<const Partition*>* parts) const;
  // Check 11 for one partition: the reason it cannot take the job, or "" when it can.
  std::string WhyNotIn(const Partition& p, const JobSpec& spec) const;
  // Step 10a (issue 16 item 2).
  Status CheckPartitionAccess(const JobSpec& spec,
                              const std::vector<const Partition*>& parts) const;

  const ControllerConfig& config_;
  const Partitions& partitions_;
  const JobTable& jobs_;
  const NodeTable& nodes_;
  const SnapshotBuilder& snapshots_;
  const sched::Scheduler& engine_;
  const sched::SchedulerConfig& sched_config_;
  const Clock& clock_;
  bool submit_limits_ = false;  // some max_submitted_jobs limit is set
};

}  // namespace corral::controller::internal
