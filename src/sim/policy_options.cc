#include "sim/policy_options.h"

#include "sched/las_policy.h"
#include "sched/sjf_policy.h"

namespace corral::sim {

bool UsesGpuMinuteLimits(const sched::SchedulerConfig& c) {
  auto has = [](const sched::Limits& l) { return l.max_gpu_minutes.has_value(); };
  for (const auto& a : c.accounts) {
    if (has(a.limits)) return true;
  }
  for (const auto& u : c.users) {
    if (has(u.limits)) return true;
  }
  for (const auto& q : c.qos) {
    if (has(q.limits) || has(q.per_user)) return true;
  }
  return false;
}

bool EngineMayPreempt(const sched::SchedulerConfig& c) {
  if (!c.preemption.enabled) return false;
  for (const auto& q : c.qos) {
    if (!q.preempt.empty()) return true;
  }
  if (c.preemption.reclaim) {
    for (const auto& a : c.accounts) {
      if (a.guaranteed_gpus > 0) return true;
    }
  }
  return false;
}

SimOptions OptionsForPolicy(std::string_view name, const sched::Policy& policy,
                            const sched::SchedulerConfig& config) {
  SimOptions o;
  const auto* las = dynamic_cast<const sched::LasPolicy*>(&policy);
  const bool minutes = UsesGpuMinuteLimits(config);
  if (name == "fifo" || name == "backfill") {
    // The factory's submit order (policy_factory.h): no preemption, no fair share.
    o.policy_may_preempt = false;
    o.track_usage = minutes;
    o.window = {.enabled = true,
                .strict = name == "fifo",
                .reservations = name == "backfill" ? 1u : 0u,  // EASY
                .static_order = true};
  } else if (name == "default") {
    o.policy_may_preempt = EngineMayPreempt(config);
    o.track_usage = minutes || config.priority.weight_fairshare > 0;
    o.window = {.enabled = !o.policy_may_preempt,
                .reservations = config.backfill.enabled ? config.backfill.reservations : 0};
  } else if (name == "sjf") {
    o.policy_may_preempt = false;
    o.track_usage = minutes;
    o.static_priority = [](const sched::PendingJobView& v) { return sched::SjfPriority(v, {}); };
    o.window = {.enabled = true, .static_order = true};
  } else if (las != nullptr) {
    o.track_usage = minutes;
    o.static_priority = [las](const sched::PendingJobView& v) {
      return -static_cast<double>(las->Level(ToSecondsF(v.attained_service)));
    };
    o.may_preempt = [las](const sched::ClusterSnapshot& s, Timestamp now) {
      return las->MayPreempt(s, now);
    };
    o.wakeup = [las](const sched::ClusterSnapshot& s, Timestamp now) {
      return las->NextLevelChange(s, now);
    };
    o.window = {.enabled = true, .static_order = true};
  } else if (name == "first_fit") {
    o.policy_may_preempt = false;
    o.track_usage = minutes;
  }
  return o;
}

}  // namespace corral::sim
