// BudgetBook: what each account budget (core/budget.h) has spent in its current period,
// computed from the job records the controller holds (every job, recovered from the store
// after a restart), by the usage reports' rules (usage_report.h, `ChargeOf`): a job's
// allocated GPU-seconds and measured energy within the period, a running job's up to now. A
// budget covers its account and the account's whole subtree.
//
// How it stays cheap:
//  1. The ended runs' spend of each budget is kept, and rebuilt by one scan of the jobs
//     only when the budgets or the account tree change, or a period rolls over (`Refresh`).
//  2. A job that ends adds its run to the budgets above its account (`Ended`).
//  3. Running jobs are added when the spend is read (`Uses`, `Status`): O(running jobs).
// A job requeued after it ended loses its run from its record (as in the reports); its run
// stays in the book until the next scan.
//
// Warnings: the first time in a period that a budget's spend reaches `warn_percent` of it
// (GPU-hours or energy, whichever first), `TakeWarnings` returns it once and records the
// period in the store's meta (`budget.warned.ACCOUNT` = the period's start, Unix seconds), so
// that a restarted controller does not warn again in that period.
//
// Not thread-safe; state thread only.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "api/budget_codec.h"
#include "controller/internal/job_table.h"
#include "controller/internal/outputs.h"
#include "core/budget.h"
#include "core/job.h"
#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::controller::internal {

// A budget that crossed its warning threshold.
struct BudgetWarning {
  std::string account;
  std::string resource;  // "gpu_hours" or "energy_kwh"
  double spent = 0;      // in the resource's unit
  double limit = 0;
  uint32_t percent = 0;  // the threshold crossed
  BudgetWindow period;
};

class BudgetBook {
 public:
  BudgetBook(const JobTable& jobs, const sched::SchedulerConfig& config, Outputs& out)
      : jobs_(jobs), config_(config), out_(out) {}
  BudgetBook(const BudgetBook&) = delete;
  BudgetBook& operator=(const BudgetBook&) = delete;

  // Reads which budgets already warned in which period (`budget.warned.*`).
  void Recover(const std::map<std::string, std::string>& meta);
  // Step 1: rebuilds the ended runs' spend when the budgets, the tree or a period changed.
  void Refresh(Timestamp now);
  // Step 2: `job` reached a terminal state at `now`.
  void Ended(const Job& job, Timestamp now);

  // The spend of every budget in force at `now`, by account (for the scheduler).
  // Requires: `Refresh(now)` since the last change.
  std::vector<sched::BudgetUse> Uses(Timestamp now) const;
  // Every budget's status at `now`, by account. Requires: as `Uses`.
  std::vector<api::BudgetStatus> Status(Timestamp now) const;
  // The budgets that reached their warning threshold since the last call (once per period);
  // their markers go into the write batch. Requires: as `Uses`.
  std::vector<BudgetWarning> TakeWarnings(Timestamp now);

  // The meta key of an account's warning marker.
  static std::string WarnedKey(const std::string& account) { return "budget.warned." + account; }

 private:
  struct Entry {
    Budget budget;
    BudgetWindow period;
    double ended_gpu_seconds = 0;
    double ended_energy_joules = 0;
  };
  struct Spend {
    double gpu_seconds = 0;
    double energy_joules = 0;
  };
  // (name, parent, budget) of every account, in the configuration's order: what the entries
  // were built from.
  using Shape = std::vector<std::tuple<std::string, std::string, std::optional<Budget>>>;

  Shape ShapeOf() const;
  // The budgets that count a job of `account`: it and its ancestors that have one.
  const std::vector<std::string>& Over(const std::string& account) const;
  void Add(const Job& job, Timestamp now, std::map<std::string, Spend>* into) const;
  std::map<std::string, Spend> Spent(Timestamp now) const;

  const JobTable& jobs_;
  const sched::SchedulerConfig& config_;
  Outputs& out_;
  Shape shape_;
  std::map<std::string, Entry> entries_;                  // by account
  std::map<std::string, std::vector<std::string>> over_;  // account -> budgets over it
  std::map<std::string, int64_t> warned_;                 // account -> period start warned
};

}  // namespace corral::controller::internal
