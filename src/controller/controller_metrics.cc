// Controller::CollectMetrics: the counts behind /metrics and /metrics/targets (controller.h;
// controller/metrics/cluster_metrics.h). Runs on the state thread: it counts, keyed by views
// of the tables' strings, and copies only the aggregates.
#include <map>
#include <string_view>
#include <tuple>

#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "core/software_drift.h"

namespace corral::controller {
namespace {

using internal::ControllerState;
using internal::JobEntry;
using internal::NodeEntry;

const std::vector<std::string>& PartitionsOf(ControllerState& s, const std::string& node) {
  auto [it, added] = s.metrics.node_partitions.try_emplace(node);
  if (added) it->second = s.partitions.Of(node);
  return it->second;
}

void CountGpus(const NodeEntry& n, const std::vector<std::string>& partitions, NodeState state,
               metrics::ClusterMetrics* out) {
  bool down =
      state == NodeState::kDown || state == NodeState::kUnknown || state == NodeState::kPoweredDown;
  for (const GpuInfo& g : n.node.inventory.gpus) {
    for (const std::string& p : partitions) {
      metrics::GpuCounts& c = out->gpus[{p, g.model}];
      ++c.total;
      if (down) {
        ++c.down;
      } else if (n.usage.gpus.contains(g.index)) {
        ++c.allocated;
      } else if (n.node.drain || n.node.failed_gpus.contains(g.index)) {
        ++c.drained;
      } else {
        ++c.idle;
      }
    }
  }
}

}  // namespace

metrics::ClusterMetrics Controller::CollectMetrics() {
  ControllerState& s = *s_;
  metrics::ClusterMetrics out;
  out.now = s.clock.Now();

  // Jobs: keyed by views into the job table while counting, copied once per key.
  using Key = std::tuple<JobState, std::string_view, std::string_view, std::string_view>;
  std::map<Key, metrics::JobCounts> jobs;
  std::map<std::pair<std::string_view, std::string_view>, uint64_t> reasons;
  auto count = [&](const std::set<JobId>& ids) {
    for (JobId id : ids) {
      const JobEntry* e = s.jobs.Find(id);
      if (e == nullptr) continue;
      const Job& j = e->job;
      metrics::JobCounts& c = jobs[{j.state, j.partition, j.spec.account, j.spec.user}];
      ++c.jobs;
      if (j.state == JobState::kPending) {
        c.gpus += TotalGpus(j.spec.resources);
        ++reasons[{j.partition, j.reason}];
      } else {
        for (const NodeAllocation& a : j.allocation.nodes) c.gpus += a.gpus.size();
      }
    }
  };
  count(s.jobs.pending());
  count(s.jobs.running());
  for (const auto& [k, c] : jobs) {
    out.jobs.emplace(metrics::JobKey{std::get<0>(k), std::string(std::get<1>(k)),
                                     std::string(std::get<2>(k)), std::string(std::get<3>(k))},
                     c);
  }
  for (const auto& [k, n] : reasons) {
    out.pending_reasons.emplace(std::pair{std::string(k.first), std::string(k.second)}, n);
  }
  out.jobs_submitted_total = s.jobs.next_id().value - 1;

  // Nodes and their GPUs.
  std::vector<NodeSoftware> software;
  out.nodes.reserve(s.nodes.size());
  for (const auto& [name, n] : s.nodes.all()) {
    const std::vector<std::string>& partitions = PartitionsOf(s, name);
    NodeState state = DeriveNodeState(n.node, n.usage);
    const NodeInventory& inv = n.node.inventory;
    out.nodes.push_back({.name = name,
                         .address = inv.address,
                         .state = state,
                         .partitions = partitions,
                         .gpu_backend = inv.gpu_backend,
                         .driver_version = inv.driver_version,
                         .cuda_version = inv.cuda_version,
                         .agent_version = inv.agent_version,
                         .drift_partitions = {},
                         .gpus = static_cast<uint32_t>(inv.gpus.size()),
                         .alloc_gpus = n.usage.gpus.size()});
    software.push_back({.node = name,
                        .partitions = partitions,
                        .driver_version = inv.driver_version,
                        .cuda_version = inv.cuda_version,
                        .nccl_version = {}});
    CountGpus(n, partitions, state, &out);
    if (n.node.registered && n.node.responding) ++out.agents_connected;
  }
  auto drift = FindSoftwareDrift(software);
  for (metrics::NodeRow& row : out.nodes) {
    if (auto it = drift.find(row.name); it != drift.end()) row.drift_partitions = it->second;
  }
  for (const Partition& p : s.partitions.all()) out.partitions.push_back(p.name);

  for (const sched::AssociationUsage& u : s.usage.ledger().Entries()) {
    metrics::AccountUsage& a = out.accounts[u.account];
    a.decayed_usage += u.decayed_usage;
    a.period_gpu_seconds += u.period_gpu_seconds;
  }
  out.sched = s.metrics.sched;
  return out;
}

}  // namespace corral::controller
