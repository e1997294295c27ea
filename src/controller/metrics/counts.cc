// CountClusterMetrics (cluster_metrics.h): the grouping behind /metrics, on the scraping
// request's thread.
#include <string_view>

#include "controller/metrics/cluster_metrics.h"
#include "core/software_drift.h"

namespace corral::controller::metrics {
namespace {

void CountGpus(const NodeRow& n, ClusterCounts* out) {
  bool down = n.state == NodeState::kDown || n.state == NodeState::kUnknown ||
              n.state == NodeState::kPoweredDown;
  for (const std::string& p : n.partitions) {
    // Nodes are mostly of one model: look the key up again only when the model changes.
    GpuCounts* c = nullptr;
    std::string_view model;
    for (uint32_t k = 0; k < n.gpu_count && k < kMaxGpusPerNode; ++k) {
      const std::string& m = n.gpu_models.empty() ? n.gpu_model : n.gpu_models[k];
      if (c == nullptr || m != model) {
        c = &out->gpus[{p, m}];
        model = m;
      }
      ++c->total;
      if (down) {
        ++c->down;
      } else if (n.allocated_gpus.contains(k)) {
        ++c->allocated;
      } else if (n.drain || n.failed_gpus.contains(k)) {
        ++c->drained;
      } else {
        ++c->idle;
      }
    }
  }
}

}  // namespace

ClusterCounts CountClusterMetrics(const ClusterMetrics& m) {
  ClusterCounts out;
  out.jobs = m.jobs;
  out.pending_reasons = m.pending_reasons;
  std::vector<NodeSoftware> software;
  software.reserve(m.nodes.size());
  for (const NodeRow& n : m.nodes) {
    CountGpus(n, &out);
    if (n.connected) ++out.agents_connected;
    software.push_back({.node = n.name,
                        .partitions = n.partitions,
                        .driver_version = n.driver_version,
                        .cuda_version = n.cuda_version,
                        .nccl_version = {}});
  }
  out.drift = FindSoftwareDrift(software);
  for (const auto& [account, u] : m.usage) {
    AccountUsage& a = out.accounts[account];
    a.decayed_usage += u.decayed_usage;
    a.period_gpu_seconds += u.period_gpu_seconds;
  }
  return out;
}

}  // namespace corral::controller::metrics
