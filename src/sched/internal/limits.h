// UseLimits: the use accounting of a scheduling pass and the limits checked against it. It
// counts GPUs and jobs per account (with its whole subtree: a job counts for every ancestor of
// its account), per user, per (account, user) association that has limits of its own, per QOS
// and per (QOS, user), GPU-seconds of the usage period per
// account chain and user, and running tasks per job array; from the running jobs of the
// snapshot, then every job the pass starts (`Add`), so that jobs started earlier in the pass
// count against later ones.
//
// `Check` reports, in this order, every limit a job would break now: each account of its chain
// from its own up (AssocMaxGRESPerJob, AssocGrpGRES, AssocGrpCpuLimit, AssocGrpMemLimit,
// AssocGrpJobsLimit, AssocGrpGRESMinutes, AssocMaxWallDurationPerJobLimit), its user's (the
// same codes), its (user, account) association's (the same, but AssocMaxJobsLimit for its
// running jobs, as Slurm's MaxJobs), its QOS's (QOSMaxGRESPerJob, QOSGrpGRES, QOSGrpCpuLimit, QOSGrpMemLimit,
// QOSGrpJobsLimit), its QOS's per-user limits (QOSMaxGRESPerUser, QOSMaxJobsPerUserLimit) and
// the QOS time limit (QOSMaxWallDurationPerJobLimit). CPUs and memory held are the
// allocations' (running jobs, and jobs started in the pass); a pending job asks for its CPUs
// per node times its nodes, and its memory per node (its first partition's default when it
// gives none; nothing for --mem=0, whose amount is the node's) times its nodes. A GPU-minute limit blocks a job whose use so far reaches it,
// or whose GPUs times its time limit (rounded up to minutes) would pass it; an unlimited job
// only the former.
//
// Budgets (core/budget.h; the snapshot's `budgets` give the spend so far): each account of the
// job's chain with a budget in force. A GPU budget blocks a job that asks for GPUs
// (kBudgetGpuReason) when the spend has reached it, or when the spend, plus what the running
// jobs of the account's subtree may still use of the period (their GPUs times the rest of
// their time limits, up to the period's end; jobs started in the pass too), plus what the job
// may use (its GPUs times its time limit, up to the period's end) would pass it; an unlimited
// job counts nothing of its own. An energy budget blocks every job of the account once the
// spend has reached it (kBudgetEnergyReason): energy cannot be told in advance.
//
// Not thread-safe; one pass's. Blockers with the same numbers are built once and copied.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/internal/config_index.h"
#include "sched/internal/job_info.h"
#include "sched/internal/job_table.h"
#include "sched/internal/node_cache.h"
#include "sched/policy.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class UseLimits {
 public:
  // Counts the use of `running` (the snapshot's running jobs, in the table's ids) and the
  // usage-period GPU-seconds of `snapshot.usage`, and the budgets of `snapshot.budgets` at
  // `now`.
  UseLimits(const ConfigIndex& index, const JobTable& jobs, const std::vector<RunJob>& running,
            const ClusterSnapshot& snapshot, Timestamp now);

  // Appends a blocker to `out` for every limit `j` would break if it started now.
  void Check(const JobInfo& j, std::vector<Blocker>* out);
  // Counts `j`, started in this pass on `nodes`.
  void Add(const JobInfo& j, const std::vector<NodeAllocation>& nodes);

  // GPUs held by account `a` with its subtree.
  uint32_t account_gpus(int a) const { return acct_gpus_[a]; }
  // Running tasks of job array `array`.
  uint32_t array_running(JobId array) const;

 private:
  // What one job holds.
  struct Held {
    uint32_t gpus = 0;
    uint64_t cpus = 0;
    uint64_t mem_mb = 0;
  };
  static Held HeldOn(uint32_t gpus, const std::vector<NodeAllocation>& nodes);
  // Counts one running job of `account`, `user`, `qos` (-1: none) holding `held`, in `array`.
  void Count(int account, int user, int qos, const Held& held, JobId array);

  // Identifies a limit blocker by its numbers (code and scope are string literals).
  struct LimitKey {
    const char* code;
    const char* scope;
    int64_t entity;
    int64_t used, limit, requested;
    bool operator==(const LimitKey&) const = default;
  };
  struct LimitKeyHash {
    size_t operator()(const LimitKey& k) const {
      uint64_t h = reinterpret_cast<uintptr_t>(k.code) * 0x9e3779b97f4a7c15ULL;
      for (uint64_t v : {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(k.scope)),
                         static_cast<uint64_t>(k.entity), static_cast<uint64_t>(k.used),
                         static_cast<uint64_t>(k.limit), static_cast<uint64_t>(k.requested)}) {
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
      }
      return static_cast<size_t>(h);
    }
  };

  // --- Budgets ---
  struct BudgetState {
    const Budget* budget = nullptr;
    double spent_gpu_seconds = 0;
    double committed_gpu_seconds = 0;  // what running jobs may still use of the period
    double energy_joules = 0;
    Timestamp period_end{};
  };
  // GPU-seconds `gpus` held until `end` add within budget `b`'s period from now.
  double BudgetSeconds(const BudgetState& b, uint32_t gpus, Timestamp end) const;
  // Adds what a job of `account` holding `gpus` until `end` may still use to every budget of
  // its chain.
  void Commit(int account, uint32_t gpus, Timestamp end);
  void CheckBudgets(const JobInfo& j, std::vector<Blocker>* out) const;

  const ConfigIndex& index_;
  const JobTable& jobs_;
  // --- Limits of (account, user) associations (core/governance.h AssociationLimits) ---
  struct AssocUse {
    const Limits* limits = nullptr;
    Held held;
    uint32_t jobs = 0;
    double gpu_seconds = 0;
  };
  static uint64_t AssocKey(int account, int user) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(account)) << 32) |
           static_cast<uint32_t>(user);
  }
  // The association's use when it has limits of its own, else nullptr.
  AssocUse* FindAssoc(int account, int user);

  const ClusterSnapshot& snapshot_;
  std::unordered_map<uint64_t, AssocUse> assoc_;  // only associations with limits; lookups only
  std::vector<uint64_t> acct_cpus_, acct_mem_, user_cpus_, user_mem_, qos_cpus_, qos_mem_;
  std::vector<uint32_t> acct_gpus_, acct_jobs_;
  std::vector<double> acct_gpu_seconds_;
  std::vector<uint32_t> user_gpus_, user_jobs_;
  std::vector<double> user_gpu_seconds_;
  std::vector<uint32_t> qos_gpus_, qos_jobs_;
  std::vector<std::pair<uint32_t, uint32_t>> qos_user_;   // [qos * users + user] -> gpus, jobs
  std::unordered_map<uint64_t, uint32_t> array_running_;  // lookups only
  std::unordered_map<LimitKey, Blocker, LimitKeyHash> limit_blockers_;  // lookups only
  Timestamp now_;
  std::vector<BudgetState> budgets_;
  std::vector<int> budget_of_;  // by account id: index into `budgets_`, -1 = none
};

}  // namespace corral::sched::internal
