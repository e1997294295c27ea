// The `Fields()` tables of the governance records: accounts, users and QOS with their limits
// (core/governance.h, api/governance_codec.h).
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/budget_codec.h"
#include "api/governance_codec.h"
#include "api/internal/json_base.h"
#include "core/governance.h"

namespace corral::api::internal {

template <typename V, Is<Limits> S>
void Fields(V& v, S& s) {
  v("max_gpus", s.max_gpus);
  v("max_cpus", s.max_cpus);
  v("max_mem_mb", s.max_mem_mb);
  v("max_running_jobs", s.max_running_jobs);
  v("max_submitted_jobs", s.max_submitted_jobs);
  v("max_gpu_minutes", s.max_gpu_minutes);
  v("max_gpus_per_job", s.max_gpus_per_job);
  v("max_wall", SlurmTime(s.max_wall));
}

// --- Budgets (core/budget.h) ---
template <typename V, Is<Budget> S>
void Fields(V& v, S& s) {
  v("gpu_hours", s.gpu_hours);
  v("energy_kwh", s.energy_kwh);
  v("period", s.period);
  v("start", s.start);
  v("end", s.end);
  v("warn_percent", s.warn_percent);
}

template <typename V, Is<BudgetStatus> S>
void Fields(V& v, S& s) {
  v("account", s.account);
  v("budget", s.budget);
  v("in_force", s.in_force);
  v("period_start", s.period_start);
  v("period_end", s.period_end);
  v("spent_gpu_hours", s.spent_gpu_hours);
  v("left_gpu_hours", s.left_gpu_hours);
  v("spent_energy_kwh", s.spent_energy_kwh);
  v("left_energy_kwh", s.left_energy_kwh);
  v("warned", s.warned);
}

template <typename V, Is<AccountConfig> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("parent", s.parent);
  v("shares", s.shares);
  v("guaranteed_gpus", s.guaranteed_gpus);
  v("limits", s.limits);
  v("users", s.users);
  v("default_qos", s.default_qos);
  v("allowed_qos", s.allowed_qos);
  v("budget", s.budget);  // issue 16 item 5
  v("coordinators", s.coordinators);  // issue 16 item 2
}

template <typename V, Is<CoordinatorRequest> S>  // issue 16 item 2
void Fields(V& v, S& s) {
  v("users", s.users);
}

template <typename V, Is<AssociationLimits> S>  // issue 16: limits per association
void Fields(V& v, S& s) {
  v("account", s.account);
  v("limits", s.limits);
}

template <typename V, Is<UserConfig> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("shares", s.shares);
  v("default_account", s.default_account);
  v("limits", s.limits);
  v("association_limits", s.association_limits);
}

template <typename V, Is<UserInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.user);
  v("accounts", s.accounts);
}

template <typename V, Is<QosConfig> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("priority", s.priority);
  v("preempt", s.preempt);
  v("preempt_mode", s.preempt_mode);
  v("grace_time", SlurmTime(s.grace_time));
  v("usage_factor", s.usage_factor);
  v("max_time", SlurmTime(s.max_time));
  v("limits", s.limits);
  v("per_user", s.per_user);
}

}  // namespace corral::api::internal
