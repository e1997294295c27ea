// Accounts, users and QOS: the value types of the scheduler's account tree, its users and its
// qualities of service, with their limits. They are configuration of the scheduler
// (sched/config.h, from corral.toml's `[[account]]`, `[[user]]`, `[[qos]]`) and governance data
// of the controller (kept in the store, changed live through the API: docs/governance.md), and
// are shown by the client, so they live here, below all three.
//
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/budget.h"
#include "core/time.h"

namespace corral {

// Limits on what a set of jobs may hold. Unset = no limit. Where a limit applies (an account
// with its whole subtree, a user over all accounts, a QOS over all its jobs or per user) is said
// by the field that holds it.
struct Limits {
  std::optional<uint32_t> max_gpus;            // GPUs held by running jobs at once
  std::optional<uint32_t> max_running_jobs;    // running jobs at once
  std::optional<uint32_t> max_submitted_jobs;  // running + pending jobs (checked at submit)
  std::optional<uint64_t> max_gpu_minutes;     // GPU-minutes used in the usage period
  std::optional<uint32_t> max_gpus_per_job;    // any one job (checked at submit)
  std::optional<uint32_t> max_cpus;            // CPUs held by running jobs at once
  std::optional<uint64_t> max_mem_mb;          // memory (MB) held by running jobs at once
  std::optional<Duration> max_wall;            // longest time limit of any one job
  bool operator==(const Limits&) const = default;
};

// A node of the account tree (Slurm's account associations).
struct AccountConfig {
  std::string name;
  std::string parent;   // "" = a child of the root
  uint32_t shares = 1;  // relative to its siblings
  // GPUs the account (with its subtree) is guaranteed. Beyond it, it borrows idle capacity,
  // which the scheduler may take back (reclaim by preemption) when a guaranteed owner needs it.
  uint32_t guaranteed_gpus = 0;
  Limits limits;                         // over the account and its whole subtree
  std::vector<std::string> users;        // users that may submit with this account
  std::string default_qos;               // "" = `SchedulerConfig::default_qos`
  std::vector<std::string> allowed_qos;  // empty = every QOS
  // --- Budget (issue 16 item 5; core/budget.h): GPU-hours and energy per period, over the
  // account and its whole subtree. Unset = none.
  std::optional<Budget> budget;
  // --- Account coordinators (issue 16 item 2; docs/governance.md, "Coordinators") ---
  // Users who manage this account and its sub-accounts: their users, limits and jobs (Slurm's
  // coordinators, `sacctmgr add coordinator`). Sorted; each has a user record. Only these
  // direct ones are listed: a coordinator of an ancestor coordinates this account too.
  std::vector<std::string> coordinators;
  // --- end coordinators ---
  bool operator==(const AccountConfig&) const = default;
};

// The limits of one (user, account) association: over the user's jobs in that account only
// (Slurm's limits on a user's association, `sacctmgr modify user U where account=A set ...`).
// Reasons as Slurm's: AssocGrpGRES, AssocGrpCpuLimit, AssocGrpMemLimit, AssocMaxJobsLimit,
// AssocGrpGRESMinutes, AssocMaxGRESPerJob, AssocMaxWallDurationPerJobLimit; MaxSubmitJobs is
// checked at submit.
struct AssociationLimits {
  std::string account;
  Limits limits;
  bool operator==(const AssociationLimits&) const = default;
};

// Per-user settings. Users need no entry: without one a user has 1 share and no own limits.
struct UserConfig {
  std::string name;
  uint32_t shares = 1;  // relative to the other users of each of its accounts
  Limits limits;        // over all of the user's jobs, in every account
  // Limits of the user's associations (issue 16): sorted by account, one per account at most,
  // each an account the user is a member of; an entry without any limit is not kept.
  std::vector<AssociationLimits> association_limits;
  // The account a job of the user gets when it names none ("" = none: the job keeps no
  // account). Slurm's DefaultAccount.
  std::string default_account;
  bool operator==(const UserConfig&) const = default;
};

enum class PreemptMode { kOff, kRequeue, kCancel };
std::string_view PreemptModeName(PreemptMode m);  // "off", "requeue", "cancel"
// The mode named `name` (`PreemptModeName`'s names), nullopt for any other.
std::optional<PreemptMode> ParsePreemptMode(std::string_view name);

// The limits of `user`'s association with `account`, nullptr when it has none of its own.
const Limits* FindAssociationLimits(const UserConfig& user, std::string_view account);

// A quality of service: a priority, limits, and who it may preempt.
struct QosConfig {
  std::string name;
  uint32_t priority = 0;             // the QOS priority factor (normalised by the maximum)
  std::vector<std::string> preempt;  // QOS whose running jobs this QOS's jobs may preempt
  PreemptMode preempt_mode = PreemptMode::kRequeue;  // what happens to jobs OF this QOS when
                                                     // preempted; kOff = never preempted
  std::optional<Duration> grace_time;  // checkpoint grace for its victims; unset = the
                                       // `[scheduler.preemption] grace_time`
  double usage_factor = 1.0;           // multiplies fair-share usage (0 = free, e.g. scavenger)
  std::optional<Duration> max_time;    // longest time limit (checked at submit)
  Limits limits;                       // over all jobs of the QOS (Slurm GrpTRES, GrpJobs)
  Limits per_user;                     // over each user's jobs of the QOS (MaxTRESPerUser)
  bool operator==(const QosConfig&) const = default;
};

}  // namespace corral
