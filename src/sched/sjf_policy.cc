#include "sched/sjf_policy.h"

#include <limits>

#include "sched/scheduler.h"

namespace corral::sched {

double SjfPriority(const PendingJobView& job, Timestamp) {
  Duration d = job.known_duration ? *job.known_duration : job.time_limit;
  if (d.count() <= 0 || d == kUnlimited) return -std::numeric_limits<double>::max();
  return -ToSecondsF(d);
}

Result<std::unique_ptr<Policy>> MakeSjfPolicy(const SchedulerConfig& config) {
  SchedulerConfig c = config;
  c.backfill.enabled = false;
  c.preemption.enabled = false;
  CORRAL_ASSIGN_OR_RETURN(
      auto s, Scheduler::Create(std::move(c), SchedulerOptions{.priority = &SjfPriority}));
  return std::unique_ptr<Policy>(std::move(s));
}

}  // namespace corral::sched
