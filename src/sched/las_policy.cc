#include "sched/las_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace corral::sched {
namespace {

constexpr uint32_t kNoLevel = std::numeric_limits<uint32_t>::max();

uint32_t GpusOf(const RunningJobView& r) {
  uint32_t g = 0;
  for (const NodeAllocation& n : r.allocation.nodes) g += n.gpus.size();
  return g;
}

const PendingJobView* FindPending(const ClusterSnapshot& s, JobId id) {
  auto it = std::lower_bound(s.pending.begin(), s.pending.end(), id,
                             [](const PendingJobView& p, JobId x) { return p.id < x; });
  if (it != s.pending.end() && it->id == id) return &*it;
  // `pending` should be sorted by JobId; stay correct if a caller did not sort it.
  for (const PendingJobView& p : s.pending) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

}  // namespace

LasPolicy::LasPolicy(SchedulerConfig config, LasOptions options, std::unique_ptr<Scheduler> engine)
    : config_(std::move(config)), options_(std::move(options)), engine_(std::move(engine)) {}

Result<std::unique_ptr<LasPolicy>> LasPolicy::Create(const SchedulerConfig& config,
                                                     LasOptions options) {
  const std::vector<double>& t = options.thresholds_gpu_seconds;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!(t[i] > 0) || !std::isfinite(t[i]) || (i > 0 && !(t[i] > t[i - 1]))) {
      return InvalidArgument("las: queue thresholds must be positive and strictly increasing");
    }
  }
  SchedulerConfig c = config;
  c.backfill.enabled = false;
  c.preemption.enabled = false;  // the engine's QOS preemption; LAS preempts by itself (step 3)
  std::vector<double> thresholds = t;
  auto level = [thresholds](double gpu_seconds) {
    return static_cast<uint32_t>(
        std::upper_bound(thresholds.begin(), thresholds.end(), gpu_seconds) - thresholds.begin());
  };
  SchedulerOptions engine_options;
  engine_options.priority = [level](const PendingJobView& job, Timestamp) {
    return -static_cast<double>(level(ToSecondsF(job.attained_service)));
  };
  CORRAL_ASSIGN_OR_RETURN(auto engine, Scheduler::Create(std::move(c), std::move(engine_options)));
  return std::unique_ptr<LasPolicy>(new LasPolicy(config, std::move(options), std::move(engine)));
}

uint32_t LasPolicy::Level(double gpu_seconds) const {
  const std::vector<double>& t = options_.thresholds_gpu_seconds;
  return static_cast<uint32_t>(std::upper_bound(t.begin(), t.end(), gpu_seconds) - t.begin());
}

uint32_t LasPolicy::RunningLevel(const RunningJobView& job, Timestamp now) const {
  if (now <= job.start_time) return 0;
  return Level(GpusOf(job) * ToSecondsF(now - job.start_time));
}

bool LasPolicy::MayPreempt(const ClusterSnapshot& snapshot, Timestamp now) const {
  if (!config_.preemption.enabled || snapshot.pending.empty()) return false;
  uint32_t max_running = 0;
  bool any = false;
  std::vector<JobId> inflight;
  for (const RunningJobView& r : snapshot.running) {
    if (r.preempt_deadline != Timestamp{}) {
      inflight.push_back(r.preempted_for);
      continue;
    }
    max_running = std::max(max_running, RunningLevel(r, now));
    any = true;
  }
  if (!any || max_running == 0) return false;
  std::sort(inflight.begin(), inflight.end());
  for (const PendingJobView& p : snapshot.pending) {
    if (Level(ToSecondsF(p.attained_service)) >= max_running) continue;
    if (!std::binary_search(inflight.begin(), inflight.end(), p.id)) return true;
  }
  return false;
}

std::optional<Timestamp> LasPolicy::NextLevelChange(const ClusterSnapshot& snapshot,
                                                    Timestamp now) const {
  if (!config_.preemption.enabled || snapshot.pending.empty()) return std::nullopt;
  std::vector<JobId> inflight;
  for (const RunningJobView& r : snapshot.running) {
    if (r.preempt_deadline != Timestamp{}) inflight.push_back(r.preempted_for);
  }
  std::sort(inflight.begin(), inflight.end());
  uint32_t best = kNoLevel;
  for (const PendingJobView& p : snapshot.pending) {
    if (std::binary_search(inflight.begin(), inflight.end(), p.id)) continue;
    best = std::min(best, Level(ToSecondsF(p.attained_service)));
  }
  const std::vector<double>& t = options_.thresholds_gpu_seconds;
  if (best == kNoLevel || best >= t.size()) return std::nullopt;
  std::optional<Timestamp> next;
  for (const RunningJobView& r : snapshot.running) {
    if (r.preempt_deadline != Timestamp{} || RunningLevel(r, now) > best) continue;
    uint32_t gpus = GpusOf(r);
    if (gpus == 0) continue;
    // The first microsecond at which gpus x (time - start) reaches the threshold.
    Timestamp at = r.start_time + Duration(static_cast<int64_t>(std::ceil(t[best] / gpus * 1e6)));
    if (at <= now) continue;
    if (!next || at < *next) next = at;
  }
  return next;
}

Plan LasPolicy::Decide(const ClusterSnapshot& s, Timestamp now) {
  Plan plan = engine_->Decide(s, now);
  if (!config_.preemption.enabled || s.running.empty()) return plan;
  // Only a job waiting for resources (or behind a reservation) may preempt: without one, the
  // search below changes nothing, so skip building its per-node index.
  if (config_.preemption.max_preemptors_per_pass == 0 ||
      std::none_of(plan.pending.begin(), plan.pending.end(), [](const PendingReason& r) {
        return r.examined && (r.code == "Resources" || r.code == "Priority");
      })) {
    return plan;
  }

  // Nodes: free GPUs after this pass's starts. `nodes` is sorted by NodeId.
  const size_t n_nodes = s.nodes.size();
  auto node_index = [&](NodeId id) -> int64_t {
    auto it = std::lower_bound(s.nodes.begin(), s.nodes.end(), id,
                               [](const NodeView& n, NodeId x) { return n.id < x; });
    if (it == s.nodes.end() || it->id != id) return -1;
    return it - s.nodes.begin();
  };
  std::vector<GpuSet> free(n_nodes);
  for (uint32_t n = 0; n < n_nodes; ++n) free[n] = s.nodes[n].usable_gpus - s.nodes[n].used_gpus;
  for (const Placement& p : plan.starts) {
    for (const NodeAllocation& na : p.nodes) {
      if (int64_t n = node_index(na.node); n >= 0) free[n] = free[n] - na.gpus;
    }
  }
  std::unordered_map<std::string_view, uint32_t> node_by_name;  // built when first needed

  // Running jobs that may be victims, per node, most served first.
  struct Victim {
    uint32_t running;  // index into s.running
    uint32_t level;
    double lost;  // GPU-seconds since the last checkpoint or start
  };
  std::vector<Victim> victims;
  std::vector<std::vector<uint32_t>> on_node(n_nodes);  // indices into `victims`
  std::vector<JobId> inflight;
  for (uint32_t i = 0; i < s.running.size(); ++i) {
    const RunningJobView& r = s.running[i];
    if (r.preempt_deadline != Timestamp{}) {
      inflight.push_back(r.preempted_for);
      continue;
    }
    Timestamp since = std::max(r.start_time, r.last_checkpoint);
    double lost = now > since ? GpusOf(r) * ToSecondsF(now - since) : 0.0;
    victims.push_back({i, RunningLevel(r, now), lost});
    for (const NodeAllocation& na : r.allocation.nodes) {
      if (int64_t n = node_index(na.node); n >= 0)
        on_node[n].push_back(static_cast<uint32_t>(victims.size() - 1));
    }
  }
  if (victims.empty()) return plan;
  std::sort(inflight.begin(), inflight.end());
  for (auto& list : on_node) {
    std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      const Victim& x = victims[a];
      const Victim& y = victims[b];
      if (x.level != y.level) return x.level > y.level;
      const RunningJobView& rx = s.running[x.running];
      const RunningJobView& ry = s.running[y.running];
      if (rx.start_time != ry.start_time) return rx.start_time > ry.start_time;
      return rx.id > ry.id;
    });
  }
  std::vector<bool> taken(victims.size(), false);
  std::vector<bool> claimed(n_nodes, false);

  uint32_t max_victim_level = 0;
  for (const Victim& v : victims) max_victim_level = std::max(max_victim_level, v.level);
  // (partition, GPU type, GPUs per node, nodes, level) searched in vain in this pass: a later
  // job asking the same finds no more (victims and free GPUs only shrink as the pass goes on).
  std::vector<std::tuple<const Partition*, std::string, uint32_t, uint32_t, uint32_t>> failed;

  uint32_t preemptors = 0;
  for (const PendingReason& reason : plan.pending) {
    if (preemptors >= config_.preemption.max_preemptors_per_pass) break;
    if (!reason.examined) continue;  // beyond `max_jobs_per_pass`: not looked at in this pass
    if (reason.code != "Resources" && reason.code != "Priority") continue;
    if (std::binary_search(inflight.begin(), inflight.end(), reason.job)) continue;
    const PendingJobView* job = FindPending(s, reason.job);
    if (job == nullptr || job->partitions.empty()) continue;
    const uint32_t level = Level(ToSecondsF(job->attained_service));
    if (level >= max_victim_level) continue;
    const Partition* part = nullptr;
    for (const std::string& name : job->partitions) {
      for (const Partition& p : s.partitions) {
        if (p.name == name && p.up) part = &p;
      }
      if (part != nullptr) break;
    }
    if (part == nullptr) continue;
    const PerNodeDemand demand = ComputePerNodeDemand(job->resources, part->def_mem_per_cpu_mb);
    const uint32_t want_nodes = std::max<uint32_t>(1, job->resources.nodes);
    if (demand.gpus == 0) continue;
    auto key = std::make_tuple(part, demand.gpu_type, demand.gpus, want_nodes, level);
    if (std::find(failed.begin(), failed.end(), key) != failed.end()) continue;

    struct Candidate {
      uint32_t node;
      double cost;
      uint32_t freed;
      std::vector<uint32_t> victims;
    };
    std::vector<Candidate> candidates;
    auto consider = [&](uint32_t n) {
      const NodeView& v = s.nodes[n];
      if (!v.schedulable || claimed[n] || v.exclusive) return;
      GpuSet mask;
      for (const GpuInfo& g : v.gpus) {
        if (demand.gpu_type.empty() || g.model == demand.gpu_type) mask.insert(g.index);
      }
      mask = mask & v.usable_gpus;
      if (mask.size() < demand.gpus) return;
      uint32_t have = (free[n] & mask).size();
      Candidate c{n, 0.0, 0, {}};
      for (uint32_t vi : on_node[n]) {
        if (have + c.freed >= demand.gpus) break;
        const Victim& victim = victims[vi];
        if (victim.level <= level) break;  // sorted by level, descending
        if (taken[vi]) continue;
        for (const NodeAllocation& na : s.running[victim.running].allocation.nodes) {
          if (na.node == v.id) c.freed += (na.gpus & mask).size();
        }
        c.cost += victim.lost;
        c.victims.push_back(vi);
      }
      if (have + c.freed >= demand.gpus) candidates.push_back(std::move(c));
    };
    if (part->nodes.empty()) {
      for (uint32_t n = 0; n < n_nodes; ++n) consider(n);
    } else {
      if (node_by_name.empty()) {
        node_by_name.reserve(n_nodes * 2);
        for (uint32_t n = 0; n < n_nodes; ++n) node_by_name.emplace(s.nodes[n].name, n);
      }
      for (const std::string& name : part->nodes) {
        auto it = node_by_name.find(name);
        if (it != node_by_name.end()) consider(it->second);
      }
    }
    if (candidates.size() < want_nodes) {
      failed.push_back(std::move(key));
      continue;
    }
    std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
      if (a.cost != b.cost) return a.cost < b.cost;
      if (a.freed != b.freed) return a.freed < b.freed;
      return s.nodes[a.node].id < s.nodes[b.node].id;
    });
    candidates.resize(want_nodes);
    bool needs_victims = false;
    for (const Candidate& c : candidates) needs_victims |= !c.victims.empty();
    if (!needs_victims) continue;  // it fits already: something else holds it back
    ++preemptors;
    for (const Candidate& c : candidates) {
      claimed[c.node] = true;
      for (uint32_t vi : c.victims) {
        if (taken[vi]) continue;
        taken[vi] = true;
        const RunningJobView& r = s.running[victims[vi].running];
        PreemptionOrder order;
        order.job = r.id;
        order.preemptor = job->id;
        order.mode = r.requeue_allowed ? PreemptMode::kRequeue : PreemptMode::kCancel;
        order.grace_time = config_.preemption.grace_time;
        order.reason = "las: job " + job->id.ToString() + " (queue " + std::to_string(level) +
                       ") preempts queue " + std::to_string(victims[vi].level);
        plan.preemptions.push_back(r.id);
        plan.preemption_orders.push_back(std::move(order));
      }
    }
  }
  return plan;
}

Result<std::unique_ptr<Policy>> MakeLasPolicy(const SchedulerConfig& config) {
  CORRAL_ASSIGN_OR_RETURN(auto p, LasPolicy::Create(config));
  return std::unique_ptr<Policy>(std::move(p));
}

}  // namespace corral::sched
