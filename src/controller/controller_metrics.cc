// Controller::CollectMetrics: the snapshot behind /metrics and /metrics/targets (controller.h;
// controller/metrics/cluster_metrics.h). Runs on the state thread, so it only copies plain
// rows (short strings and numbers) and the job counts the job table keeps; counting GPUs and
// the software-drift comparison run on the scraping request's thread (metrics/counts.cc).
#include <map>
#include <set>

#include "controller/controller.h"
#include "controller/internal/controller_state.h"

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

metrics::NodeRow CopyNode(ControllerState& s, const std::string& name, const NodeEntry& n) {
  const NodeInventory& inv = n.node.inventory;
  metrics::NodeRow row{.name = name,
                       .address = inv.address,
                       .state = DeriveNodeState(n.node, n.usage),
                       .partitions = PartitionsOf(s, name),
                       .gpu_backend = inv.gpu_backend,
                       .driver_version = inv.driver_version,
                       .cuda_version = inv.cuda_version,
                       .agent_version = inv.agent_version,
                       .drain = n.node.drain,
                       .connected = n.node.registered && n.node.responding,
                       .gpu_count = static_cast<uint32_t>(inv.gpus.size())};
  for (uint32_t k = 0; k < inv.gpus.size() && k < kMaxGpusPerNode; ++k) {
    const GpuInfo& g = inv.gpus[k];
    if (n.usage.gpus.contains(g.index)) row.allocated_gpus.insert(k);
    if (n.node.failed_gpus.contains(g.index)) row.failed_gpus.insert(k);
    if (g.model != inv.gpus[0].model && row.gpu_models.empty()) {
      for (const GpuInfo& each : inv.gpus) row.gpu_models.push_back(each.model);
    }
  }
  if (row.gpu_models.empty() && !inv.gpus.empty()) row.gpu_model = inv.gpus[0].model;
  return row;
}

}  // namespace

metrics::ClusterMetrics Controller::CollectMetrics() {
  ControllerState& s = *s_;
  metrics::ClusterMetrics out;
  out.now = s.clock.Now();
  out.jobs = s.jobs.counts().jobs();
  out.pending_reasons = s.jobs.counts().pending_reasons();
  out.jobs_submitted_total = s.jobs.next_id().value - 1;

  out.nodes.reserve(s.nodes.size());
  for (const auto& [name, n] : s.nodes.all()) out.nodes.push_back(CopyNode(s, name, n));
  for (const Partition& p : s.partitions.all()) out.partitions.push_back(p.name);

  for (const sched::AssociationUsage& u : s.usage.ledger().Entries()) {
    out.usage.push_back(
        {u.account, {.decayed_usage = u.decayed_usage, .period_gpu_seconds = u.period_gpu_seconds}});
  }
  for (const auto& [id, note] : s.gpu_stats.Flagged()) {
    const JobEntry* e = s.jobs.Find(id);
    if (e == nullptr || e->job.state != JobState::kRunning) continue;
    const Job& j = e->job;
    out.waste.push_back({.job = id,
                         .user = j.spec.user,
                         .account = j.spec.account,
                         .partition = j.partition,
                         .action = s.config.gpu_waste.For(j.partition, j.spec.qos).action});
  }
  out.waste_actions = s.metrics.waste_actions;
  s.budgets.Refresh(out.now);
  out.budgets = s.budgets.Status(out.now);
  out.budget_warnings = s.metrics.budget_warnings;
  out.sched = s.metrics.sched;
  return out;
}

api::DiagInfo Controller::CollectDiag() {
  ControllerState& s = *s_;
  const metrics::SchedStats& p = s.metrics.sched;
  const internal::JobTable::Transitions& t = s.jobs.transitions();
  return api::DiagInfo{.now = s.clock.Now(),
                       .since = s.metrics.since,
                       .jobs_submitted = t.submitted,
                       .jobs_started = t.started,
                       .jobs_completed = t.completed,
                       .jobs_canceled = t.cancelled,
                       .jobs_failed = t.failed,
                       .jobs_pending = s.jobs.pending().size(),
                       .jobs_running = s.jobs.running().size(),
                       .cycles = p.cycle.count(),
                       .last_cycle_seconds = p.last_cycle_seconds,
                       .max_cycle_seconds = p.max_cycle_seconds,
                       .total_cycle_seconds = p.cycle.sum,
                       .examined_total = p.examined_total,
                       .last_queue_length = p.last.queue_length,
                       .last_examined = p.last.examined,
                       .backfilled_total = p.backfilled_total,
                       .last_backfilled = p.last.backfilled,
                       .last_reservations = p.last.reservations,
                       .last_pass_time = p.last_pass_time};
}

}  // namespace corral::controller
