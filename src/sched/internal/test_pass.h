// Test-only: the indexed state of a scheduling pass over a hand-built snapshot, built in the
// order `Pass` builds it (nodes, shapes, jobs, use), so that a unit test can run one mechanism
// on it without the rest of the pass.
//
// Header-only; not thread-safe.
#pragma once

#include <cstdint>
#include <utility>

#include "core/time.h"
#include "sched/config.h"
#include "sched/internal/config_index.h"
#include "sched/internal/job_table.h"
#include "sched/internal/limits.h"
#include "sched/internal/node_cache.h"
#include "sched/internal/node_state.h"
#include "sched/internal/shapes.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

// The `now` of the tests' passes.
inline const Timestamp kNow = FromMicros(int64_t{1'700'000'000} * 1'000'000);

// What a test builds before its pass: a config (the default one to start with) and a snapshot.
struct TestWorld {
  SchedulerConfig config = DefaultSchedulerConfig();
  ClusterSnapshot snapshot;
};

struct TestPass {
  TestPass(SchedulerConfig c, ClusterSnapshot s, Timestamp t)
      : config(std::move(c)),
        snapshot(std::move(s)),
        now(t),
        index(config),
        nodes(config, index, snapshot, cache),
        jobs(config, index, snapshot, now, nodes, shapes),
        limits(index, jobs, nodes.jobs(), snapshot, now) {
    shapes.Reset(snapshot.partitions.size());
  }
  TestPass(const TestPass&) = delete;
  TestPass& operator=(const TestPass&) = delete;

  // The pending job `id` (the table is in JobId order).
  JobInfo& Job(uint64_t id) {
    for (JobInfo& j : jobs.pending()) {
      if (j.view->id == JobId(id)) return j;
    }
    return jobs.pending().at(jobs.pending().size());  // throws: no such job
  }

  const SchedulerConfig config;
  const ClusterSnapshot snapshot;
  const Timestamp now;
  const ConfigIndex index;
  NodeCache cache;
  NodeState nodes;
  ShapeMemo shapes;
  JobTable jobs;
  UseLimits limits;
};

}  // namespace corral::sched::internal
