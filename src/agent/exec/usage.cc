#include "agent/exec/usage.h"

#include <algorithm>

namespace corral::agent {

void UsageTracker::Start(JobRun run, GpuSet gpus, MonoTime now) {
  Entry e;
  e.gpus = gpus;
  e.start = now;
  e.last = now;
  jobs_[run] = std::move(e);
}

void UsageTracker::Observe(const std::vector<GpuSample>& samples, MonoTime now) {
  std::map<uint32_t, const GpuSample*> by_index;
  for (const auto& s : samples) by_index[s.index] = &s;
  for (auto& [run, e] : jobs_) {
    if (e.gpus.empty()) continue;
    double dt = std::max(0.0, ToSecondsF(now - e.last));
    e.last = now;
    double util_sum = 0;
    uint32_t seen = 0;
    for (uint32_t g : e.gpus.ToVector()) {
      auto it = by_index.find(g);
      if (it == by_index.end() || !it->second->present) continue;
      const GpuSample& s = *it->second;
      ++seen;
      util_sum += s.utilization;
      e.util_max = std::max(e.util_max, s.utilization);
      e.mem_max_mb = std::max(e.mem_max_mb, s.memory_used_mb);
      auto [last, fresh] = e.energy_last.try_emplace(g, s.energy_joules);
      // A counter that went back (driver reload) restarts the baseline.
      if (!fresh && s.energy_joules >= last->second)
        e.energy_joules += s.energy_joules - last->second;
      last->second = s.energy_joules;
    }
    if (seen > 0 && dt > 0) {
      e.util_integral += util_sum * dt;
      e.sampled_seconds += dt * seen;
    }
  }
}

JobUsage UsageTracker::Finish(JobRun run, MonoTime now) {
  JobUsage u;
  auto it = jobs_.find(run);
  if (it == jobs_.end()) return u;
  const Entry& e = it->second;
  u.gpu_seconds = std::max(0.0, ToSecondsF(now - e.start)) * e.gpus.size();
  u.gpu_util_mean = e.sampled_seconds > 0 ? e.util_integral / e.sampled_seconds : 0;
  u.gpu_util_max = e.util_max;
  u.gpu_mem_max_mb = e.mem_max_mb;
  u.energy_joules = e.energy_joules;
  jobs_.erase(it);
  return u;
}

}  // namespace corral::agent
