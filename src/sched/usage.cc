#include "sched/usage.h"

#include <algorithm>
#include <cmath>

namespace corral::sched {
namespace {

int64_t PeriodIndex(Timestamp t, Duration period) {
  int64_t us = t.time_since_epoch().count();
  int64_t p = period.count();
  return us >= 0 ? us / p : -((-us + p - 1) / p);
}

Timestamp PeriodStart(Timestamp t, Duration period) {
  return Timestamp(Duration(PeriodIndex(t, period) * period.count()));
}

}  // namespace

UsageLedger::UsageLedger(const std::vector<AssociationUsage>& entries, Timestamp last_update)
    : last_update_(last_update), started_(true) {
  for (const AssociationUsage& e : entries) entries_[{e.account, e.user}] = e;
}

double UsageLedger::ChargeRate(const RunningJobView& job, const SchedulerConfig& config) {
  double gpus = 0, cpus = 0, mem_mb = 0;
  for (const NodeAllocation& n : job.allocation.nodes) {
    gpus += n.gpus.size();
    cpus += n.cpus;
    mem_mb += static_cast<double>(n.mem_mb);
  }
  const FairShareConfig& f = config.fairshare;
  double rate = f.weight_gpu * gpus + f.weight_cpu * cpus + f.weight_mem_gb * mem_mb / 1024.0;
  for (const QosConfig& q : config.qos) {
    if (q.name == job.qos) rate *= q.usage_factor;
  }
  return rate;
}

void UsageLedger::Charge(const RunningJobView& job, Timestamp from, Timestamp to,
                         const SchedulerConfig& config) {
  from = std::max(from, job.start_time);
  if (to <= from) return;
  AssociationUsage& e = entries_[{job.account, job.user}];
  e.account = job.account;
  e.user = job.user;
  e.decayed_usage += ChargeRate(job, config) * ToSecondsF(to - from);
  Timestamp period_from = std::max(from, PeriodStart(to, config.fairshare.usage_period));
  if (to > period_from) {
    double gpus = 0;
    for (const NodeAllocation& n : job.allocation.nodes) gpus += n.gpus.size();
    e.period_gpu_seconds += gpus * ToSecondsF(to - period_from);
  }
}

void UsageLedger::Advance(Timestamp now, const std::vector<RunningJobView>& running,
                          const SchedulerConfig& config) {
  if (!started_) {
    started_ = true;
    last_update_ = now;
    return;
  }
  if (now <= last_update_) return;
  const FairShareConfig& f = config.fairshare;
  if (f.half_life.count() > 0 && f.half_life != kUnlimited) {
    double factor = std::exp2(-ToSecondsF(now - last_update_) / ToSecondsF(f.half_life));
    for (auto& [key, e] : entries_) e.decayed_usage *= factor;
  }
  if (PeriodIndex(now, f.usage_period) != PeriodIndex(last_update_, f.usage_period)) {
    for (auto& [key, e] : entries_) e.period_gpu_seconds = 0;
  }
  for (const RunningJobView& j : running) Charge(j, last_update_, now, config);
  last_update_ = now;
}

void UsageLedger::ChargeEnded(const RunningJobView& job, Timestamp end,
                              const SchedulerConfig& config) {
  Charge(job, last_update_, end, config);
}

void UsageLedger::Add(const std::string& account, const std::string& user, double decayed_usage,
                      double period_gpu_seconds) {
  AssociationUsage& e = entries_[{account, user}];
  e.account = account;
  e.user = user;
  e.decayed_usage += decayed_usage;
  e.period_gpu_seconds += period_gpu_seconds;
}

std::vector<AssociationUsage> UsageLedger::Entries() const {
  std::vector<AssociationUsage> out;
  out.reserve(entries_.size());
  for (const auto& [key, e] : entries_) out.push_back(e);
  return out;
}

}  // namespace corral::sched
