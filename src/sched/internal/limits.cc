#include "sched/internal/limits.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "core/budget.h"
#include "core/duration.h"
#include "core/resources.h"

namespace corral::sched::internal {

UseLimits::UseLimits(const ConfigIndex& index, const JobTable& jobs,
                     const std::vector<RunJob>& running, const ClusterSnapshot& snapshot,
                     Timestamp now)
    : index_(index), jobs_(jobs), snapshot_(snapshot), now_(now) {
  const size_t na = jobs_.accounts(), nu = jobs_.users();
  acct_cpus_.assign(na, 0);
  acct_mem_.assign(na, 0);
  user_cpus_.assign(nu, 0);
  user_mem_.assign(nu, 0);
  qos_cpus_.assign(index_.qos.size(), 0);
  qos_mem_.assign(index_.qos.size(), 0);
  acct_gpus_.assign(na, 0);
  acct_jobs_.assign(na, 0);
  acct_gpu_seconds_.assign(na, 0);
  user_gpus_.assign(nu, 0);
  user_jobs_.assign(nu, 0);
  user_gpu_seconds_.assign(nu, 0);
  qos_gpus_.assign(index_.qos.size(), 0);
  qos_jobs_.assign(index_.qos.size(), 0);
  qos_user_.assign(index_.qos.size() * nu, {0, 0});
  for (const auto& [name, ucfg] : index_.users) {
    if (ucfg->association_limits.empty()) continue;
    const int u = jobs_.FindUser(name);
    if (u < 0) continue;  // no job of the user in this pass
    for (const AssociationLimits& al : ucfg->association_limits) {
      if (int a = jobs_.FindAccount(al.account); a >= 0) {
        assoc_[AssocKey(a, u)].limits = &al.limits;
      }
    }
  }
  for (const RunJob& rj : running) {
    Count(rj.account, rj.user, rj.qos, HeldOn(rj.gpus, rj.view->allocation.nodes),
          rj.view->array_job_id);
  }
  for (const AssociationUsage& u : snapshot.usage) {
    for (int x = jobs_.FindAccount(u.account); x >= 0; x = jobs_.AccountParent(x))
      acct_gpu_seconds_[x] += u.period_gpu_seconds;
    if (int us = jobs_.FindUser(u.user); us >= 0) user_gpu_seconds_[us] += u.period_gpu_seconds;
    if (assoc_.empty()) continue;
    if (AssocUse* au = FindAssoc(jobs_.FindAccount(u.account), jobs_.FindUser(u.user))) {
      au->gpu_seconds += u.period_gpu_seconds;
    }
  }
  for (const BudgetUse& b : snapshot.budgets) {
    const int a = jobs_.FindAccount(b.account);
    if (!index_.Configured(a) || !index_.accounts[a].config->budget) continue;
    if (budget_of_.empty()) budget_of_.assign(na, -1);
    budget_of_[a] = static_cast<int>(budgets_.size());
    budgets_.push_back({.budget = &*index_.accounts[a].config->budget,
                        .spent_gpu_seconds = b.gpu_seconds,
                        .energy_joules = b.energy_joules,
                        .period_end = b.period_end});
  }
  if (!budgets_.empty()) {
    for (const RunJob& rj : running) Commit(rj.account, rj.gpus, rj.end);
  }
}

double UseLimits::BudgetSeconds(const BudgetState& b, uint32_t gpus, Timestamp end) const {
  if (gpus == 0 || end == kNever || end <= now_) return 0;
  return gpus * ToSecondsF(std::min(end, b.period_end) - now_);
}

void UseLimits::Commit(int account, uint32_t gpus, Timestamp end) {
  for (int a = account; a >= 0; a = jobs_.AccountParent(a)) {
    if (int b = budget_of_[a]; b >= 0) {
      budgets_[b].committed_gpu_seconds += std::max(0.0, BudgetSeconds(budgets_[b], gpus, end));
    }
  }
}

void UseLimits::CheckBudgets(const JobInfo& j, std::vector<Blocker>* out) const {
  auto hours = [](double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", seconds / 3600.0);
    return std::string(buf);
  };
  const Timestamp end = j.end;
  for (int a = j.account; a >= 0; a = jobs_.AccountParent(a)) {
    const int bi = budget_of_[a];
    if (bi < 0) continue;
    const BudgetState& b = budgets_[bi];
    const std::string& name = index_.accounts[a].config->name;
    const std::string period(BudgetPeriodName(b.budget->period));
    if (b.budget->gpu_hours && j.gpus > 0) {
      const double limit = *b.budget->gpu_hours * 3600.0;
      const double asked = BudgetSeconds(b, j.gpus, end);
      const double spent = b.spent_gpu_seconds;
      if (spent >= limit || spent + b.committed_gpu_seconds + asked > limit) {
        out->push_back({.code = kBudgetGpuReason,
                        .detail = "account " + name + " has spent " + hours(spent) + " of its " +
                                  hours(limit) + " GPU-hours budget this " + period + " (" +
                                  hours(b.committed_gpu_seconds) +
                                  " more held by running jobs, job may use " + hours(asked) + ")",
                        .scope = "account",
                        .entity = name,
                        .resource = "gpu_seconds",
                        .used = static_cast<int64_t>(spent + b.committed_gpu_seconds),
                        .limit = static_cast<int64_t>(limit),
                        .requested = static_cast<int64_t>(asked)});
      }
    }
    if (b.budget->energy_kwh) {
      const double limit = *b.budget->energy_kwh * 3.6e6;
      if (b.energy_joules >= limit) {
        char kwh[64];
        std::snprintf(kwh, sizeof kwh, "%.3f of its %.3f kWh", b.energy_joules / 3.6e6,
                      *b.budget->energy_kwh);
        out->push_back({.code = kBudgetEnergyReason,
                        .detail = "account " + name + " has spent " + kwh +
                                  " energy budget this " + period,
                        .scope = "account",
                        .entity = name,
                        .resource = "energy_joules",
                        .used = static_cast<int64_t>(b.energy_joules),
                        .limit = static_cast<int64_t>(limit),
                        .requested = 0});
      }
    }
  }
}

UseLimits::AssocUse* UseLimits::FindAssoc(int account, int user) {
  if (account < 0 || user < 0) return nullptr;
  auto it = assoc_.find(AssocKey(account, user));
  return it == assoc_.end() ? nullptr : &it->second;
}

uint32_t UseLimits::array_running(JobId array) const {
  auto it = array_running_.find(array.value);
  return it == array_running_.end() ? 0 : it->second;
}

void UseLimits::Check(const JobInfo& j, std::vector<Blocker>* out) {
  const PendingJobView& v = *j.view;
  const int64_t limit_minutes =
      j.limit == kUnlimited ? 0 : std::chrono::ceil<std::chrono::minutes>(j.limit).count();
  const int64_t asked_minutes = static_cast<int64_t>(j.gpus) * limit_minutes;
  // The job's CPUs and memory (see the file comment).
  const uint64_t asked_cpus = uint64_t{j.base.cpus} * j.nodes;
  uint64_t mem_per_node = j.base.mem == kWholeNodeMemory ? 0 : j.base.mem;
  if (j.mem_default && j.n_parts > 0 && j.parts[0] >= 0) {
    mem_per_node = DemandFor(j, snapshot_.partitions[j.parts[0]]).mem;
  }
  const uint64_t asked_mem = mem_per_node * j.nodes;
  // Strings are built only for a limit that is reached (this runs for every pending job), and a
  // blocker with the same numbers is copied rather than built again.
  // The codes of one scope's limits (nullptr: not checked there).
  struct Codes {
    const char* gres;
    const char* jobs;
    const char* minutes;
    const char* per_job;
    const char* cpu;
    const char* mem;
    const char* wall;
  };
  static constexpr Codes kAssoc{"AssocGrpGRES",      "AssocGrpJobsLimit", "AssocGrpGRESMinutes",
                                "AssocMaxGRESPerJob", "AssocGrpCpuLimit",  "AssocGrpMemLimit",
                                "AssocMaxWallDurationPerJobLimit"};
  // A (user, account) association's: Slurm's MaxJobs on it is AssocMaxJobsLimit.
  static constexpr Codes kAssocUser{"AssocGrpGRES",       "AssocMaxJobsLimit",
                                    "AssocGrpGRESMinutes", "AssocMaxGRESPerJob",
                                    "AssocGrpCpuLimit",    "AssocGrpMemLimit",
                                    "AssocMaxWallDurationPerJobLimit"};
  static constexpr Codes kQos{"QOSGrpGRES",       "QOSGrpJobsLimit", nullptr,
                              "QOSMaxGRESPerJob", "QOSGrpCpuLimit",  "QOSGrpMemLimit", nullptr};
  static constexpr Codes kQosPerUser{"QOSMaxGRESPerUser", "QOSMaxJobsPerUserLimit", nullptr,
                                     nullptr,             nullptr,                  nullptr,
                                     nullptr};
  auto check = [&](const Limits& l, std::string_view scope, std::string_view entity,
                   std::string_view suffix, int64_t entity_key, uint32_t gpus_used,
                   uint32_t jobs_used, double gpu_seconds, uint64_t cpus_used, uint64_t mem_used,
                   const Codes& codes) {
    const char* gres_code = codes.gres;
    const char* jobs_code = codes.jobs;
    const char* minutes_code = codes.minutes;
    const char* per_job_code = codes.per_job;
    auto who = [&] {
      return std::string(scope) + " " + std::string(entity) +
             (suffix.empty() ? "" : " for user " + std::string(suffix));
    };
    auto add = [&](const char* code, auto detail, const char* resource, int64_t used, int64_t limit,
                   int64_t requested) {
      LimitKey key{code, scope.data(), entity_key, used, limit, requested};
      auto [it, fresh] = limit_blockers_.try_emplace(key);
      if (fresh) {
        it->second = Blocker{.code = code,
                             .detail = detail(),
                             .scope = std::string(scope),
                             .entity = std::string(entity),
                             .resource = resource,
                             .used = used,
                             .limit = limit,
                             .requested = requested};
      }
      out->push_back(it->second);
    };
    if (l.max_gpus_per_job && j.gpus > *l.max_gpus_per_job && per_job_code != nullptr) {
      add(
          per_job_code,
          [&] {
            return who() + " allows at most " + std::to_string(*l.max_gpus_per_job) +
                   " GPUs per job, job asks " + std::to_string(j.gpus);
          },
          "gpu", 0, *l.max_gpus_per_job, j.gpus);
    }
    if (l.max_gpus && j.gpus > 0 && gpus_used + j.gpus > *l.max_gpus) {
      add(
          gres_code,
          [&] {
            return who() + " at its GPU limit " + std::to_string(gpus_used) + "/" +
                   std::to_string(*l.max_gpus) + " (job asks " + std::to_string(j.gpus) + ")";
          },
          "gpu", gpus_used, *l.max_gpus, j.gpus);
    }
    if (l.max_cpus && codes.cpu != nullptr && asked_cpus > 0 &&
        cpus_used + asked_cpus > *l.max_cpus) {
      add(
          codes.cpu,
          [&] {
            return who() + " at its CPU limit " + std::to_string(cpus_used) + "/" +
                   std::to_string(*l.max_cpus) + " (job asks " + std::to_string(asked_cpus) + ")";
          },
          "cpu", static_cast<int64_t>(cpus_used), *l.max_cpus, static_cast<int64_t>(asked_cpus));
    }
    if (l.max_mem_mb && codes.mem != nullptr && asked_mem > 0 &&
        mem_used + asked_mem > *l.max_mem_mb) {
      add(
          codes.mem,
          [&] {
            return who() + " at its memory limit " + std::to_string(mem_used) + "/" +
                   std::to_string(*l.max_mem_mb) + " MB (job asks " + std::to_string(asked_mem) +
                   ")";
          },
          "mem_mb", static_cast<int64_t>(mem_used), static_cast<int64_t>(*l.max_mem_mb),
          static_cast<int64_t>(asked_mem));
    }
    if (l.max_wall && codes.wall != nullptr && j.limit > *l.max_wall) {
      out->push_back({.code = codes.wall,
                      .detail = "time limit " + FormatSlurmDuration(j.limit) + " exceeds " +
                                who() + " max_wall " + FormatSlurmDuration(*l.max_wall),
                      .scope = std::string(scope),
                      .entity = std::string(entity),
                      .resource = "time"});
    }
    if (l.max_running_jobs && jobs_used + 1 > *l.max_running_jobs) {
      add(
          jobs_code,
          [&] {
            return who() + " at its running-job limit " + std::to_string(jobs_used) + "/" +
                   std::to_string(*l.max_running_jobs);
          },
          "jobs", jobs_used, *l.max_running_jobs, 1);
    }
    if (l.max_gpu_minutes && minutes_code != nullptr) {
      int64_t used = static_cast<int64_t>(gpu_seconds / 60.0);
      int64_t lim = static_cast<int64_t>(*l.max_gpu_minutes);
      if (used >= lim || (limit_minutes > 0 && used + asked_minutes > lim)) {
        add(
            minutes_code,
            [&] {
              return who() + " has used " + std::to_string(used) + " of " + std::to_string(lim) +
                     " GPU-minutes this period (job may use " + std::to_string(asked_minutes) + ")";
            },
            "gpu_minutes", used, lim, asked_minutes);
      }
    }
  };
  for (int a = j.account; index_.Configured(a); a = index_.accounts[a].parent) {
    check(index_.accounts[a].config->limits, "account", index_.accounts[a].config->name, "", a,
          acct_gpus_[a], acct_jobs_[a], acct_gpu_seconds_[a], acct_cpus_[a], acct_mem_[a], kAssoc);
  }
  if (!budgets_.empty()) CheckBudgets(j, out);
  if (const UserConfig* u = jobs_.UserConfigOf(j.user)) {
    check(u->limits, "user", v.user, "", j.user, user_gpus_[j.user], user_jobs_[j.user],
          user_gpu_seconds_[j.user], user_cpus_[j.user], user_mem_[j.user], kAssoc);
  }
  if (!assoc_.empty()) {
    if (const AssocUse* au = FindAssoc(j.account, j.user)) {
      // Keyed apart from the accounts' (whose keys are account ids).
      const int64_t key = -1 - static_cast<int64_t>(AssocKey(j.account, j.user));
      check(*au->limits, "account", index_.accounts[j.account].config->name, v.user, key,
            au->held.gpus, au->jobs, au->gpu_seconds, au->held.cpus, au->held.mem_mb, kAssocUser);
    }
  }
  if (j.qos >= 0) {
    const QosConfig& q = *index_.qos[j.qos].config;
    check(q.limits, "qos", q.name, "", j.qos, qos_gpus_[j.qos], qos_jobs_[j.qos], 0,
          qos_cpus_[j.qos], qos_mem_[j.qos], kQos);
    const auto& qu = qos_user_[static_cast<size_t>(j.qos) * jobs_.users() + j.user];
    uint32_t g = qu.first;
    uint32_t n = qu.second;
    if (q.per_user.max_gpus || q.per_user.max_running_jobs) {
      check(q.per_user, "qos", q.name, v.user,
            (static_cast<int64_t>(j.qos) << 32) | static_cast<uint32_t>(j.user), g, n, 0, 0, 0,
            kQosPerUser);
    }
    if (q.max_time && j.limit > *q.max_time) {
      out->push_back({.code = "QOSMaxWallDurationPerJobLimit",
                      .detail = "time limit " + FormatSlurmDuration(j.limit) + " exceeds qos " +
                                q.name + " max_time " + FormatSlurmDuration(*q.max_time),
                      .scope = "qos",
                      .entity = q.name,
                      .resource = "time"});
    }
  }
}

void UseLimits::Add(const JobInfo& j, const std::vector<NodeAllocation>& nodes) {
  Count(j.account, j.user, j.qos, HeldOn(j.gpus, nodes), j.view->array_job_id);
  if (!budgets_.empty()) Commit(j.account, j.gpus, j.end);
}

UseLimits::Held UseLimits::HeldOn(uint32_t gpus, const std::vector<NodeAllocation>& nodes) {
  Held h{.gpus = gpus};
  for (const NodeAllocation& n : nodes) {
    h.cpus += n.cpus;
    h.mem_mb += n.mem_mb;
  }
  return h;
}

void UseLimits::Count(int account, int user, int qos, const Held& held, JobId array) {
  const uint32_t gpus = held.gpus;
  for (int a = account; a >= 0; a = jobs_.AccountParent(a)) {
    acct_gpus_[a] += gpus;
    acct_jobs_[a] += 1;
    acct_cpus_[a] += held.cpus;
    acct_mem_[a] += held.mem_mb;
  }
  if (!assoc_.empty()) {
    if (AssocUse* au = FindAssoc(account, user)) {
      au->held.gpus += gpus;
      au->held.cpus += held.cpus;
      au->held.mem_mb += held.mem_mb;
      au->jobs += 1;
    }
  }
  user_gpus_[user] += gpus;
  user_jobs_[user] += 1;
  user_cpus_[user] += held.cpus;
  user_mem_[user] += held.mem_mb;
  if (qos >= 0) {
    qos_gpus_[qos] += gpus;
    qos_jobs_[qos] += 1;
    qos_cpus_[qos] += held.cpus;
    qos_mem_[qos] += held.mem_mb;
    auto& qu = qos_user_[static_cast<size_t>(qos) * jobs_.users() + user];
    qu.first += gpus;
    qu.second += 1;
  }
  if (array.value != 0) ++array_running_[array.value];
}

}  // namespace corral::sched::internal
