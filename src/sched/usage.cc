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
  for (const AssociationUsage& e : entries) Entry(e.account, e.user) = e;
}

namespace {

// A job's GPUs, and its TRES-weighted size before its QOS factor.
struct JobSize {
  double gpus = 0;
  double weighted = 0;
};

JobSize SizeOf(const RunningJobView& job, const FairShareConfig& f) {
  double gpus = 0, cpus = 0, mem_mb = 0;
  for (const NodeAllocation& n : job.allocation.nodes) {
    gpus += n.gpus.size();
    cpus += n.cpus;
    mem_mb += static_cast<double>(n.mem_mb);
  }
  return {gpus, f.weight_gpu * gpus + f.weight_cpu * cpus + f.weight_mem_gb * mem_mb / 1024.0};
}

bool AnyUsageFactor(const SchedulerConfig& config) {
  for (const QosConfig& q : config.qos) {
    if (q.usage_factor != 1.0) return true;
  }
  return false;
}

double WithQos(double rate, const RunningJobView& job, const SchedulerConfig& config) {
  for (const QosConfig& q : config.qos) {
    if (q.name == job.qos) rate *= q.usage_factor;
  }
  return rate;
}

}  // namespace

double UsageLedger::ChargeRate(const RunningJobView& job, const SchedulerConfig& config) {
  return WithQos(SizeOf(job, config.fairshare).weighted, job, config);
}

AssociationUsage& UsageLedger::Entry(const std::string& account, const std::string& user) {
  auto it = entries_.find(std::pair<std::string_view, std::string_view>(account, user));
  if (it == entries_.end()) {
    AssociationUsage e;
    e.account = account;
    e.user = user;
    it = entries_.emplace(std::make_pair(account, user), std::move(e)).first;
  }
  return it->second;
}

void UsageLedger::Charge(const RunningJobView& job, AssociationUsage& e, Timestamp from,
                         Timestamp to, Timestamp period_start, bool qos_factors,
                         const SchedulerConfig& config) {
  from = std::max(from, job.start_time);
  if (to <= from) return;
  const JobSize size = SizeOf(job, config.fairshare);
  // A factor of 1 leaves the rate as it is: skip the QOS lookup when every factor is 1.
  const double rate = qos_factors ? WithQos(size.weighted, job, config) : size.weighted;
  e.decayed_usage += rate * ToSecondsF(to - from);
  Timestamp period_from = std::max(from, period_start);
  if (to > period_from) e.period_gpu_seconds += size.gpus * ToSecondsF(to - period_from);
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
  const Timestamp period_start = PeriodStart(now, f.usage_period);
  const bool qos_factors = AnyUsageFactor(config);
  // Each job's entry from the last Advance, unless its names changed; forget ended jobs now
  // and then (the map is only a cache: lookups only, never iterated).
  std::unordered_map<uint64_t, AssociationUsage*>& memo = job_entries_.by_job;
  if (memo.size() > 2 * running.size() + 64) memo.clear();
  for (const RunningJobView& j : running) {
    if (j.start_time >= now) continue;  // charged nothing (see `Charge`)
    AssociationUsage*& e = memo[j.id.value];
    if (e == nullptr || e->account != j.account || e->user != j.user) e = &Entry(j.account, j.user);
    Charge(j, *e, last_update_, now, period_start, qos_factors, config);
  }
  last_update_ = now;
}

void UsageLedger::ChargeEnded(const RunningJobView& job, Timestamp end,
                              const SchedulerConfig& config) {
  if (end <= std::max(last_update_, job.start_time)) return;
  Charge(job, Entry(job.account, job.user), last_update_, end,
         PeriodStart(end, config.fairshare.usage_period), AnyUsageFactor(config), config);
}

void UsageLedger::Add(const std::string& account, const std::string& user, double decayed_usage,
                      double period_gpu_seconds) {
  AssociationUsage& e = Entry(account, user);
  e.decayed_usage += decayed_usage;
  e.period_gpu_seconds += period_gpu_seconds;
}

std::vector<AssociationUsage> UsageLedger::Entries() const {
  std::vector<AssociationUsage> out;
  out.reserve(entries_.size());
  for (const auto& [key, e] : entries_) out.push_back(e);
  return out;
}

void UsageLedger::EntriesInto(std::vector<AssociationUsage>* out) const {
  out->resize(entries_.size());
  size_t i = 0;
  for (const auto& [key, e] : entries_) (*out)[i++] = e;
}

}  // namespace corral::sched
