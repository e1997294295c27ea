#include "sim/from_store.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "store/store.h"

namespace corral::sim {

Result<StoreHistory> LoadHistoryFromStore(const std::string& url, const StoreQuery& query) {
  CORRAL_ASSIGN_OR_RETURN(auto store, store::OpenStore(url));
  store::JobQuery q;
  q.states = {JobState::kCompleted, JobState::kFailed,   JobState::kCancelled,
              JobState::kTimeout,   JobState::kNodeFail, JobState::kOutOfMemory,
              JobState::kPreempted};
  q.end_before = query.until;
  CORRAL_ASSIGN_OR_RETURN(std::vector<Job> jobs, store->QueryJobs(q));
  std::vector<const Job*> ran;
  for (const Job& j : jobs) {
    if (j.start_time == Timestamp{} || j.end_time <= j.start_time || j.allocation.nodes.empty())
      continue;
    if (query.since != Timestamp{} && j.submit_time < query.since) continue;
    uint32_t gpus = 0;
    for (const NodeAllocation& na : j.allocation.nodes) gpus += na.gpus.size();
    if (gpus == 0) continue;  // CPU-only jobs do not take part in a GPU replay
    ran.push_back(&j);
  }
  if (ran.empty())
    return NotFound("store " + url + ": no job with GPUs ran to an end in that window");
  StoreHistory h;
  h.origin = Timestamp::max();
  for (const Job* j : ran) h.origin = std::min(h.origin, j->submit_time);
  std::vector<std::pair<TraceJob, std::pair<Timestamp, Timestamp>>> rows;
  for (const Job* j : ran) {
    TraceJob t;
    t.job_id = j->id.value;
    t.submit = j->submit_time - h.origin;
    t.duration = j->end_time - j->start_time;
    for (const NodeAllocation& na : j->allocation.nodes) t.num_gpus += na.gpus.size();
    t.num_nodes = static_cast<uint32_t>(j->allocation.nodes.size());
    if (t.num_gpus % t.num_nodes != 0) t.num_nodes = 0;  // uneven spread: let the replay choose
    t.user = j->spec.user.empty() ? "unknown" : j->spec.user;
    t.queue = j->partition.empty() ? "default" : j->partition;
    t.account = j->spec.account;
    if (j->time_limit.count() > 0 && j->time_limit != kUnlimited) t.time_limit = j->time_limit;
    t.gpu_type = j->spec.resources.gpu_type;
    rows.push_back({std::move(t), {j->start_time, j->end_time}});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.first.submit != b.first.submit) return a.first.submit < b.first.submit;
    return a.first.job_id < b.first.job_id;
  });
  for (auto& [t, when] : rows) {
    h.trace.jobs.push_back(std::move(t));
    h.recorded.push_back(when);
  }
  CORRAL_ASSIGN_OR_RETURN(store::StoredState state, store->Load());
  for (const Node& n : state.nodes) {
    if (!n.registered) continue;
    sched::NodeView v;
    v.id = n.id;
    v.name = n.inventory.name;
    v.cpus = n.inventory.cpus;
    v.mem_mb = n.inventory.memory_mb;
    v.gpus = n.inventory.gpus;
    for (const GpuInfo& g : v.gpus) v.usable_gpus.insert(g.index);
    v.features = n.inventory.features;
    std::sort(v.features.begin(), v.features.end());
    v.schedulable = true;
    h.nodes.push_back(std::move(v));
  }
  return h;
}

SimResult RecordedRun(const Workload& workload, const StoreHistory& history,
                      uint32_t capacity_gpus) {
  SimResult r;
  r.capacity_gpus = capacity_gpus;
  r.start = history.origin;
  r.end = history.origin;
  std::map<Timestamp, int64_t> delta_gpus, delta_running, delta_pending;
  for (size_t i = 0; i < workload.jobs.size(); ++i) {
    const SimJob& j = workload.jobs[i];
    JobOutcome o;
    o.id = j.id;
    o.submit = history.origin + j.submit;
    if (!j.refused.empty()) {
      o.end_kind = JobEnd::kRefused;
      r.outcomes.push_back(o);
      continue;
    }
    auto [start, end] = history.recorded[i];
    o.first_start = start;
    o.end = end;
    o.end_kind = JobEnd::kCompleted;
    o.gpu_seconds = j.gpus * ToSecondsF(end - start);
    r.allocated_gpu_seconds += o.gpu_seconds;
    r.end = std::max(r.end, end);
    delta_gpus[start] += j.gpus;
    delta_gpus[end] -= j.gpus;
    delta_running[start] += 1;
    delta_running[end] -= 1;
    delta_pending[o.submit] += 1;
    delta_pending[start] -= 1;
    r.outcomes.push_back(o);
  }
  std::map<Timestamp, bool> times;
  for (const auto& m : {&delta_gpus, &delta_running, &delta_pending}) {
    for (const auto& [t, d] : *m) times[t] = true;
  }
  int64_t gpus = 0, running = 0, pending = 0;
  for (const auto& [t, unused] : times) {
    gpus += delta_gpus.count(t) ? delta_gpus[t] : 0;
    running += delta_running.count(t) ? delta_running[t] : 0;
    pending += delta_pending.count(t) ? delta_pending[t] : 0;
    r.timeline.push_back({t, static_cast<uint32_t>(std::max<int64_t>(0, gpus)),
                          static_cast<uint32_t>(std::max<int64_t>(0, pending)),
                          static_cast<uint32_t>(std::max<int64_t>(0, running))});
  }
  return r;
}

}  // namespace corral::sim
