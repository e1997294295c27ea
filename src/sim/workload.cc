#include "sim/workload.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/duration.h"
#include "sched/scheduler.h"

namespace corral::sim {
namespace {

Duration RoundUp(Duration d, Duration step) { return ((d + step - Duration(1)) / step) * step; }

struct PartitionNodes {
  std::vector<const sched::NodeView*> nodes;
};

uint32_t GpusOfType(const sched::NodeView& n, const std::string& type) {
  if (type.empty()) return n.usable_gpus.size();
  uint32_t c = 0;
  for (const GpuInfo& g : n.gpus) {
    if (g.model == type && n.usable_gpus.contains(g.index)) ++c;
  }
  return c;
}

}  // namespace

Duration DeriveTimeLimit(Duration duration, double factor, bool round) {
  if (factor <= 0) return kUnlimited;
  double us = std::ceil(static_cast<double>(duration.count()) * factor);
  if (us >= 9e18) return kUnlimited;
  Duration d(static_cast<int64_t>(us));
  d = std::max(d, Minutes(1));
  if (!round) return d;
  if (d <= Minutes(120)) return RoundUp(d, Minutes(15));
  if (d <= Minutes(48 * 60)) return RoundUp(d, Minutes(60));
  return RoundUp(d, Minutes(24 * 60));
}

Result<Workload> BuildWorkload(const Trace& trace, const std::vector<sched::NodeView>& nodes,
                               const sched::SchedulerConfig& config,
                               const WorkloadOptions& options) {
  CORRAL_RETURN_IF_ERROR(sched::ValidateSchedulerConfig(config));
  const Partition* def = sched::DefaultPartition(config);
  if (def == nullptr) return InvalidArgument("the scheduler configuration has no partition");
  CORRAL_ASSIGN_OR_RETURN(auto validator, sched::Scheduler::Create(config));
  sched::ClusterSnapshot idle;
  idle.nodes = nodes;
  idle.partitions = config.partitions;

  // Nodes of each partition (empty node list = every node).
  std::map<std::string, PartitionNodes> part_nodes;
  for (const Partition& p : config.partitions) {
    PartitionNodes& pn = part_nodes[p.name];
    for (const sched::NodeView& n : nodes) {
      if (p.nodes.empty() || std::find(p.nodes.begin(), p.nodes.end(), n.name) != p.nodes.end()) {
        pn.nodes.push_back(&n);
      }
    }
  }
  std::map<std::string, bool> known_account;
  for (const auto& a : config.accounts) known_account[a.name] = true;

  Workload w;
  w.jobs.reserve(trace.jobs.size());
  std::map<std::tuple<std::vector<std::string>, std::string, uint32_t, uint32_t>, uint32_t>
      shape_ids;
  std::map<std::tuple<std::string, std::vector<std::string>, std::string, uint64_t, int32_t>,
           uint32_t>
      class_ids;
  // ValidateSubmission indexes every node on each call: remember its answer per distinct request.
  std::map<std::tuple<std::string, uint64_t, int64_t>, std::string> verdicts;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& t = trace.jobs[i];
    SimJob j;
    j.id = JobId(i + 1);
    j.trace_id = t.job_id;
    j.submit = t.submit;
    j.duration = t.duration;
    j.gpus = t.num_gpus;
    j.user = t.user;
    j.queue = t.queue;
    sched::PendingJobView& v = j.view;
    v.id = j.id;
    v.user = t.user;
    v.account = t.account.empty() ? t.queue : t.account;
    v.qos = sched::DefaultQos(config, v.account);  // resolved, as the controller resolves it
    v.name = "job";  // the controller's name for a job submitted without one
    const Partition* part = def;
    for (const Partition& p : config.partitions) {
      if (p.name == t.queue) part = &p;
    }
    v.partitions = {part->name};

    // Shape.
    const std::vector<const sched::NodeView*>& members = part_nodes[part->name].nodes;
    uint32_t largest = 0;
    for (const sched::NodeView* n : members)
      largest = std::max(largest, GpusOfType(*n, t.gpu_type));
    uint32_t n_nodes = t.num_nodes;
    if (n_nodes == 0) {
      n_nodes = 1;
      if (largest > 0 && t.num_gpus > largest) {
        n_nodes = (t.num_gpus + largest - 1) / largest;
        while (t.num_gpus % n_nodes != 0) ++n_nodes;
      }
    }
    ResourceRequest& r = v.resources;
    r.nodes = n_nodes;
    r.ntasks = n_nodes;
    r.cpus_per_task = 1;
    r.gpus_per_node = t.num_gpus / n_nodes;
    r.gpu_type = t.gpu_type;

    // Time limit.
    if (t.time_limit) {
      v.time_limit = *t.time_limit;
    } else {
      v.time_limit = DeriveTimeLimit(t.duration, options.limit_factor, options.round_limits);
      if (v.time_limit > part->max_time) v.time_limit = part->max_time;
    }
    v.known_duration = t.duration;

    if (!config.accounts.empty() && !known_account.count(v.account)) {
      j.refused = "no such account \"" + v.account + "\"";
    } else {
      // The verdict depends on the account, user, partition, shape and limit.
      auto vkey = std::make_tuple(
          v.account + '\x1f' + v.user + '\x1f' + part->name + '\x1f' + t.gpu_type,
          static_cast<uint64_t>(n_nodes) << 32 | r.gpus_per_node, v.time_limit.count());
      auto [it, fresh] = verdicts.emplace(vkey, std::string());
      if (fresh) {
        auto s = validator->ValidateSubmission(v, idle);
        if (!s) {
          std::string m = s.error().message;
          // Drop the "job N: " prefix: the verdict is shared by every job of this kind.
          if (auto colon = m.find(": "); m.rfind("job ", 0) == 0 && colon != std::string::npos)
            m = m.substr(colon + 2);
          it->second = m.empty() ? "refused" : m;
        }
      }
      j.refused = it->second;
    }
    if (!j.refused.empty()) ++w.refused;
    auto skey = std::make_tuple(v.partitions, r.gpu_type, r.nodes, r.gpus_per_node);
    auto [sit, sfresh] = shape_ids.emplace(skey, static_cast<uint32_t>(w.shapes.size()));
    if (sfresh) w.shapes.push_back({v.partitions, r.gpu_type, r.nodes, r.gpus_per_node});
    j.shape = sit->second;
    auto ckey =
        std::make_tuple(v.account + '\x1f' + v.user + '\x1f' + v.qos, v.partitions, r.gpu_type,
                        static_cast<uint64_t>(r.nodes) << 32 | r.gpus_per_node, v.nice);
    auto [cit, cfresh] = class_ids.emplace(ckey, w.classes);
    if (cfresh) ++w.classes;
    j.klass = cit->second;
    w.jobs.push_back(std::move(j));
  }
  return w;
}

}  // namespace corral::sim
