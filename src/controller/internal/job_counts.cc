#include "controller/internal/job_counts.h"

namespace corral::controller::internal {

uint64_t ActiveJobCounts::GpusOf(const Job& job) {
  if (job.state == JobState::kPending) return TotalGpus(job.spec.resources);
  uint64_t gpus = 0;
  for (const NodeAllocation& a : job.allocation.nodes) gpus += a.gpus.size();
  return gpus;
}

void ActiveJobCounts::Remove(Handle& handle) {
  if (handle.key) {
    JobMap::iterator it = *handle.key;
    it->second.jobs -= 1;
    it->second.gpus -= handle.gpus;
    if (it->second.jobs == 0) jobs_.erase(it);
    handle.key.reset();
    handle.gpus = 0;
  }
  if (handle.reason) {
    ReasonMap::iterator it = *handle.reason;
    if (--it->second == 0) reasons_.erase(it);
    handle.reason.reset();
  }
}

void ActiveJobCounts::Update(const Job& job, Handle& handle) {
  bool active = job.state == JobState::kPending || job.state == JobState::kRunning;
  bool pending = job.state == JobState::kPending;
  uint64_t gpus = active ? GpusOf(job) : 0;
  // Most updates change nothing that is counted (a running job's record, a pass that keeps a
  // pending job's reason): compare before touching the maps.
  if (active && handle.key && handle.gpus == gpus) {
    const metrics::JobKey& k = (*handle.key)->first;
    bool same_key = k.state == job.state && k.partition == job.partition &&
                    k.account == job.spec.account && k.user == job.spec.user;
    bool same_reason = pending ? handle.reason && (*handle.reason)->first.first == job.partition &&
                                     (*handle.reason)->first.second == job.reason
                               : !handle.reason;
    if (same_key && same_reason) return;
  }
  Remove(handle);
  if (!active) return;
  auto [it, added] = jobs_.try_emplace(
      metrics::JobKey{job.state, job.partition, job.spec.account, job.spec.user});
  it->second.jobs += 1;
  it->second.gpus += gpus;
  handle.key = it;
  handle.gpus = gpus;
  if (pending) {
    auto [r, added_reason] = reasons_.try_emplace({job.partition, job.reason}, 0);
    r->second += 1;
    handle.reason = r;
  }
}

}  // namespace corral::controller::internal
