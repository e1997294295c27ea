// StateMetrics: what the controller's state keeps for /metrics besides its tables: the
// scheduler's figures (`SchedStats`), the jobs the GPU-waste policy acted on, and each node's
// partitions (static configuration, looked up once per node rather than at every scrape).
//
// Not thread-safe; state thread only.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "controller/metrics/cluster_metrics.h"
#include "controller/metrics/sched_stats.h"

namespace corral::controller::metrics {

struct StateMetrics {
  SchedStats sched;
  Timestamp since{};  // when the controller recovered its state (`sdiag`'s "Data since")
  WasteActions waste_actions{};
  uint64_t budget_warnings = 0;  // budget warnings raised since the start
  std::unordered_map<std::string, std::vector<std::string>> node_partitions;
};

}  // namespace corral::controller::metrics
