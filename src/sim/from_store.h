// `corral sim --from-store URL`: a controller's history as a trace, so that a site can replay
// it under another configuration or cluster and compare with what really happened.
//
// The only part of `sim` that links the store library (DESIGN.md: sim never uses the daemons;
// the store is a library they share).
//
// Thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "sched/snapshot.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/workload.h"

namespace corral::sim {

struct StoreHistory {
  Trace trace;       // the jobs that ran to an end, as a trace (time 0 = the first submit)
  Timestamp origin;  // the wall time of trace time 0
  // Per trace job, in trace order: when it really started (its last run) and ended.
  std::vector<std::pair<Timestamp, Timestamp>> recorded;
  std::vector<sched::NodeView> nodes;  // the registered nodes, idle and schedulable
};

struct StoreQuery {
  Timestamp since{};  // jobs submitted at or after; epoch = from the first
  Timestamp until{};  // jobs submitted before; epoch = to the last
};

// Reads the jobs of the store at `url` (store::OpenStore's URL forms) that started and reached a
// terminal state, in the query's window. Each becomes a trace job: job_id = the controller's
// id, submit = submit time, duration = end - start of its last run, num_gpus and num_nodes =
// its allocation's, user, queue = the partition it ran in, account, time_limit_s = its limit
// (unless unlimited), gpu_type = its request's.
// Returns the store's error when it cannot be opened or read, and kNotFound when no job ran.
Result<StoreHistory> LoadHistoryFromStore(const std::string& url, const StoreQuery& query);

// What really happened, as a run of `workload` (built from `history.trace`): first start = the
// recorded start of the last run, end = the recorded end, on `capacity_gpus` GPUs. Refused jobs
// of the workload stay refused.
SimResult RecordedRun(const Workload& workload, const StoreHistory& history,
                      uint32_t capacity_gpus);

}  // namespace corral::sim
